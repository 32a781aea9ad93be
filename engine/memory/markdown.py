"""A scope as Markdown for people (``octomem export --format md``) and agents (the MCP
resource ``octomem://memory/{scope}``); never read back — JSONL is the lossless format.

Shape: a title and one line saying what is there and in which order; then one ``##``
heading per kind (``DECISION``, ``FACT``, ... alphabetically, conversation ``TURN``\\ s
last); under it, newest first by when each happened (its event time, else when it was
recorded) — conversation turns in the order they were said. A one-paragraph statement
without a title, and each conversation turn, is one paragraph: its text, then its date,
id and links in italics. A
document with a title or several paragraphs gets a ``###`` heading (its title), a line of
date, id and links, and its text with its own paragraphs (a heading inside the text is
escaped, so it cannot break the outline). Superseded statements follow under
``## Superseded``; rows whose stored times cannot be shown are named under ``## Left out``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from ..types import Document
from .times import iso, unshowable_times

#: Longest text shown for one document in the MCP resource (characters); the export
#: shows every text whole.
SNIPPET = 600
#: The kind of conversation turns: listed last, in the order they were said.
TURN = "TURN"
#: The kind of an ingested file's document (not a statement: counted as an entry).
DOC = "DOC"
#: How the Markdown export's first line begins (``import`` tells it from other text).
MARKDOWN_TITLE = "# octomem · "


def _one_line(text: str) -> str:
    return " ".join(text.split())


def when_happened(doc: Document) -> float:
    """Return when what ``doc`` says happened: its event time, else when it was recorded
    (epoch seconds)."""
    return doc.event_time if doc.event_time is not None else doc.created_at


_when = when_happened


def unshowable(doc: Document) -> str | None:
    """Say why ``doc`` cannot be shown (a stored time outside the calendar), else ``None``."""
    bad = unshowable_times(created_at=doc.created_at, event_time=doc.event_time,
                           valid_to=doc.valid_to, last_recalled_at=doc.last_recalled_at)
    if not bad:
        return None
    return (f"left out {doc.id}: its {', '.join(bad)} cannot be shown; "
            "`octomem verify --repair` fixes it")


def forgotten_predecessors(storage: Any, documents: Sequence[Document]) -> set[str]:
    """Return the ids that statements of ``documents`` supersede and that were forgotten
    since (a tombstone says so; a storage without tombstones: none), so a successor does
    not point at a statement no page shows (trial 13 M2)."""
    lookup = getattr(storage, "get_forgotten", None)
    if not callable(lookup):
        return set()
    wanted = {d.supersedes for d in documents if d.supersedes}
    return {i for i in wanted if lookup(i) is not None}


def _about(doc: Document, gone: Collection[str] = ()) -> str:
    """Return the date (a turn's: date and minute, UTC), id and links of ``doc`` (a
    superseded statement in ``gone`` named as forgotten)."""
    when = (iso(_when(doc)) or "").replace("T", " ")
    parts = [when[:16] + " UTC" if doc.kind == TURN else when[:10], f"`{doc.id}`"]
    if doc.tags:
        parts.append("tags: " + ", ".join(doc.tags))
    if doc.uri:
        parts.append(f"source: {doc.uri}")
    if doc.supersedes in gone:
        parts.append(f"supersedes a forgotten statement (`{doc.supersedes}`)")
    elif doc.supersedes:
        parts.append(f"supersedes `{doc.supersedes}`")
    if doc.superseded_by:
        parts.append(f"superseded by `{doc.superseded_by}` on {(iso(doc.valid_to) or '')[:10]}")
    return " · ".join(parts)


def _paragraphs(doc: Document, snippet: int | None) -> list[str]:
    """Return the text's paragraphs, without a first line repeating the title, headings
    inside it escaped, cut to ``snippet`` characters when given."""
    text = doc.text.strip()
    title = _one_line(doc.title or "")
    first, _, rest = text.partition("\n")
    if title and _one_line(first.lstrip("# ")) == title:
        text = rest.strip()
    if snippet is not None and len(text) > snippet:
        text = text[: snippet - 1].rstrip() + "…"
    paragraphs = [p.strip() for p in text.split("\n\n") if p.strip()]
    return ["\n".join(("\\" + line) if line.lstrip().startswith("#") else line
                      for line in p.splitlines()) for p in paragraphs]


def _entry(doc: Document, snippet: int | None, gone: Collection[str] = ()) -> list[str]:
    """Return ``doc`` as Markdown blocks (each followed by a blank line)."""
    paragraphs = _paragraphs(doc, snippet)
    if doc.kind == TURN or (not doc.title and len(paragraphs) <= 1):
        text = paragraphs[0] if paragraphs else ""
        return [f"{text} — *{_about(doc, gone)}*", ""]
    heading = _one_line(doc.title) if doc.title else f"{doc.kind} {(iso(_when(doc)) or '')[:10]}"
    blocks = [f"### {heading}", "", f"*{_about(doc, gone)}*", ""]
    for paragraph in paragraphs:
        blocks += [paragraph, ""]
    return blocks


def _by_kind(docs: Sequence[Document]) -> list[tuple[str, list[Document]]]:
    kinds = sorted({d.kind for d in docs}, key=lambda k: (k == TURN, k))
    grouped = []
    for kind in kinds:
        members = [d for d in docs if d.kind == kind]
        members.sort(key=_when, reverse=kind != TURN)
        grouped.append((kind, members))
    return grouped


def _counted(docs: Sequence[Document]) -> str:
    """Return ``"1 current statement"``, ``"3 current statements"``, or ``"N current
    entries"`` when ingested files or conversation turns are among ``docs`` (trial 20 L10:
    a scope of two ingested files was "2 current statements")."""
    if any(d.kind in (TURN, DOC) for d in docs):
        return f"{len(docs)} current {'entry' if len(docs) == 1 else 'entries'}"
    return f"{len(docs)} current statement{'' if len(docs) == 1 else 's'}"


def render_markdown(scope: str, where: str, documents: Sequence[Document],
                    history: Sequence[Document] = (), warnings: list[str] | None = None,
                    snippet: int | None = SNIPPET, gone: Collection[str] = (),
                    unlisted: str | None = None) -> str:
    """Render a scope's current statements by kind, newest first (and its history).

    :param where: the scope's directory, shown under the title.
    :param history: superseded statements, listed after the current ones.
    :param warnings: receives what was left out (times that cannot be shown).
    :param snippet: longest text shown per document, characters; ``None``: whole.
    :param gone: forgotten ids some of them supersede (:func:`forgotten_predecessors`).
    :param unlisted: a line saying what is stored but not listed, under the title.
    """
    left_out = [why for doc in [*documents, *history] if (why := unshowable(doc))]
    shown = [d for d in documents if unshowable(d) is None]
    old = [d for d in history if unshowable(d) is None]
    lines = [f"{MARKDOWN_TITLE}{scope} memory", "",
             f"`{where}` · {_counted(shown)} by kind, newest first (by when "
             "each happened: its event time, else when it was recorded); conversation turns "
             "in the order they were said.", ""]
    if unlisted:
        lines += [unlisted, ""]
    for kind, docs in _by_kind(shown):
        lines += [f"## {kind} ({len(docs)})", ""]
        for doc in docs:
            lines += _entry(doc, snippet, gone)
    if not shown and not unlisted:
        lines += ["_Nothing is remembered in this scope yet._", ""]
    if old:
        lines += ["## Superseded", ""]
        for doc in sorted(old, key=_when, reverse=True):
            lines += _entry(doc, snippet, gone)
    if left_out:
        lines += ["## Left out", "", *(f"- {why}" for why in left_out), ""]
    if warnings is not None:
        warnings.extend(left_out)
    return "\n".join(lines).rstrip("\n") + "\n"
