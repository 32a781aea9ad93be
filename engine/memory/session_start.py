"""What an agent should see at the start of every session, within a byte budget.

``octomem://session-start`` (MCP resource) and ``octomem session-start`` (CLI) render,
in this order, as Markdown:

1. the standing **rules and preferences** (current statements of kinds ``RULE`` and
   ``PREFERENCE``), global scope first;
2. the current **handoff** (kind ``HANDOFF``) of each scope;
3. the most **recent** other statements;
4. the most **recalled** statements (``recalls``: how many recall answers returned them).

Ingested documents and conversation turns are left out (recall finds them), but the page
counts them per scope, so an agent knows there is something to recall: over a memory
that holds only those in place of the statements (trial 17 G11: "Nothing is remembered
yet" over 200 ingested notes and a Claude Code session), else in one line above them
(``Also stored, not listed here: ...``), which the byte budget always holds. Each
statement is one line, its text cut to :data:`LINE_CHARS`. Lines are added while the
rendering stays within ``session_start.max_bytes`` (UTF-8 bytes, 8 KB by default); what
did not fit is counted at the end, so the agent knows to recall or read
``octomem://memory/{scope}`` for more.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import islice

from ..arms import VersionedStorage
from ..errors import StoreUnreadableError
from ..turns import TURN_KIND
from ..types import HANDOFF_KIND, Document
from .facade import Memory
from .handoffs import newest_handoff
from .ingest import DOC_KIND
from .scopes import ScopeName
from .times import iso

#: Kinds shown as standing rules and preferences.
STANDING_KINDS = ("RULE", "PREFERENCE")
#: Kinds that are not statements (session start leaves them to recall).
NOT_STATEMENTS = frozenset({DOC_KIND, TURN_KIND})
#: Statements listed at most under "recent" and under "most recalled" each.
PER_SECTION = 10
#: Longest statement text shown on one line (characters).
LINE_CHARS = 400
#: Scopes in the order their statements are shown: the user's standing rules first.
ORDER: tuple[ScopeName, ...] = ("global", "local")


@dataclass(slots=True)
class Section:
    """One heading and the statements under it."""

    title: str
    entries: list[tuple[ScopeName, Document]] = field(default_factory=list)


def _line(scope: ScopeName, doc: Document) -> str:
    text = " ".join(doc.text.split())
    if len(text) > LINE_CHARS:
        text = text[: LINE_CHARS - 1] + "…"
    day = (iso(doc.event_time if doc.event_time is not None else doc.created_at) or "")[:10]
    recalled = f", recalled {doc.recalls}×" if doc.recalls else ""
    return f"- **{doc.kind}** {text} _({scope}, {day}{recalled}, `{doc.id}`)_"


def _storages(memory: Memory) -> Iterator[tuple[ScopeName, VersionedStorage]]:
    for scope in ORDER:
        try:
            pipeline = memory.scopes.get(scope)
        except StoreUnreadableError:  # named at the top of the page (render)
            continue
        storage = pipeline.arms.storage if pipeline is not None else None
        if isinstance(storage, VersionedStorage):
            yield scope, storage


def _statement_kinds(storage: VersionedStorage) -> list[str]:
    counts = getattr(storage, "kind_counts", None)
    if callable(counts):
        kinds = list(counts())
    else:
        kinds = sorted({d.kind for d in storage.iter_documents()})
    return [k for k in kinds if k not in NOT_STATEMENTS]


def _most_recalled(storage: VersionedStorage, kinds: list[str]) -> list[Document]:
    top = getattr(storage, "most_recalled", None)
    if callable(top):
        return list(top(kinds, PER_SECTION))
    found = [d for d in storage.iter_documents(kinds=kinds) if d.recalls > 0]
    return sorted(found, key=lambda d: (-d.recalls, -(d.last_recalled_at or 0)))[:PER_SECTION]


def _counted(n: int, what: str) -> str:
    return f"{n:,} {what}{'s' if n != 1 else ''}" if n else ""


def unlisted(memory: Memory) -> str:
    """Return what the session start leaves to recall, per scope ("200 ingested documents
    and 10 conversation turns in the local scope"), or ``""`` when nothing is stored."""
    said = []
    for scope, storage in _storages(memory):
        counts = getattr(storage, "kind_counts", None)
        kinds = dict(counts()) if callable(counts) else {
            k: sum(1 for _ in storage.iter_documents(kinds=(k,))) for k in NOT_STATEMENTS}
        parts = [p for p in (_counted(kinds.get(DOC_KIND, 0), "ingested document"),
                             _counted(kinds.get(TURN_KIND, 0), "conversation turn")) if p]
        if parts:
            said.append(f"{' and '.join(parts)} in the {scope} scope")
    return "; ".join(said)


def sections(memory: Memory) -> list[Section]:
    """Return the four sections' statements, each statement in the first section it
    belongs to."""
    memory.recall_log.flush()
    standing, handoff = Section("Standing rules and preferences"), Section("Handoff")
    recent, recalled = Section("Recent"), Section("Most recalled")
    for scope, storage in _storages(memory):
        kinds = _statement_kinds(storage)
        standing.entries += [(scope, d) for d in storage.iter_documents(kinds=STANDING_KINDS)]
        handoff.entries += [(scope, d) for d in newest_handoff(storage)]
        others = [k for k in kinds if k not in (*STANDING_KINDS, HANDOFF_KIND)]
        if others:
            recent.entries += [(scope, d) for d in islice(
                storage.iter_documents(kinds=others), PER_SECTION)]
        recalled.entries += [(scope, d) for d in _most_recalled(storage, kinds)]
    recent.entries.sort(key=lambda e: -e[1].created_at)
    del recent.entries[PER_SECTION:]
    recalled.entries.sort(key=lambda e: (-e[1].recalls, -(e[1].last_recalled_at or 0)))
    shown: set[tuple[str, str]] = set()
    out = []
    for section in (standing, handoff, recent, recalled):
        section.entries = [(s, d) for s, d in section.entries if (s, d.id) not in shown]
        shown.update((s, d.id) for s, d in section.entries)
        out.append(section)
    return out


def render(memory: Memory, max_bytes: int) -> str:
    """Return the session-start Markdown, at most ``max_bytes`` UTF-8 bytes.

    :param max_bytes: the budget; the first line of a section that would pass it ends
        that section, and what was left out is counted in the last line.
    """
    head = ["# octomem · session start", ""]
    found = sections(memory)
    for scope, why in memory.scopes.skipped().items():
        head += [f"_The {scope} scope was not read: {why}_", ""]
    stored = unlisted(memory)
    if not any(s.entries for s in found):
        head.append(f"_No statements yet; stored for `recall` to search: {stored}. `remember`"
                    if stored else "_Nothing is remembered yet: `remember`")
        head[-1] += (" rules, preferences and decisions as they come up, and a HANDOFF at the "
                     "end of a session._")
        return "\n".join(head) + "\n"
    if stored:  # an agent reading only statements would not know to recall the rest
        head += [f"_Also stored, not listed here: {stored}; `recall` searches them with "
                 "the statements._", ""]
    lines, left = list(head), 0
    reserve = 120  # room for the closing line about what did not fit
    size = len("\n".join(lines).encode())
    budget = max_bytes - reserve
    for section in found:
        entries = [_line(s, d) for s, d in section.entries]
        heading = f"## {section.title}"
        if not entries or size + len(heading.encode()) + len(entries[0].encode()) + 2 > budget:
            left += len(entries)  # a heading is shown only with an entry under it (trial 16)
            continue
        if lines[-1]:  # the section before was cut: a blank line still parts them
            lines.append("")
            size += 1
        lines.append(heading)
        size += len(heading.encode()) + 1
        for i, line in enumerate(entries):
            cost = len(line.encode()) + 1
            if size + cost > budget:
                left += len(entries) - i
                break
            lines.append(line)
            size += cost
        else:
            lines.append("")
            size += 1
    if left:
        lines.append(f"_{left} more statements did not fit in {max_bytes} bytes: `recall` "
                     "them, or read octomem://memory/local and octomem://memory/global._")
    return "\n".join(lines).rstrip() + "\n"
