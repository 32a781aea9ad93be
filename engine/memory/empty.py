"""Why a search found nothing, when the answer itself cannot say: the scopes searched hold
nothing at all, no stored document has a kind or a tag the search was filtered to (tags
are matched exactly, case included), no current statement became true inside the
``since`` / ``until`` window (superseded ones may have: history shows them), or nothing
stored was valid yet at ``as_of``.

An answer that abstained says why already (its best match is below
``retrieval.relevance_floor``); these are the cases where there was nothing to
rank, which the README promises an empty answer says too: :func:`say_why_empty` sets the
answer's ``nothing_to_rank``, which the CLI prints and ``--json`` and the MCP ``recall``
tool return. An answer that abstained under a ``since`` / ``until`` window says so too,
since the answer may lie outside it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..arms import VersionedStorage
from .limits import some

if TYPE_CHECKING:
    from ..pipeline import Pipeline
    from ..types import Filters
    from .facade import Memory
    from .recall import RecallAnswer


def kind_counts(pipeline: Pipeline) -> dict[str, int]:
    """Return the current documents of one scope per kind (empty for a storage that
    cannot list them)."""
    storage = pipeline.arms.storage
    counts = getattr(storage, "kind_counts", None)
    if callable(counts):
        return dict(counts())
    found: dict[str, int] = {}
    if isinstance(storage, VersionedStorage):
        for doc in storage.iter_documents():
            found[doc.kind] = found.get(doc.kind, 0) + 1
    return found


def filtered_out(scoped: Sequence[tuple[str, Pipeline]], filters: Filters) -> bool:
    """Return True when a search filtered to kinds or tags can find nothing, known from
    one query per scope: something current is stored, none of it of those kinds
    (``kind_counts``), or none of it carrying all those tags (``has_tagged``), and the
    search reads current statements only. The search is then not run, so the model is
    not loaded for an answer the filter decided (trial 13 M8: ``search --kind NOPE``
    spent 0.66 s loading it); :func:`why_empty` says why. A storage without those
    queries is searched as before (asking would read every document)."""
    if not (filters.kinds or filters.tags) or filters.include_superseded \
            or filters.as_of is not None:
        return False
    storages = [pipeline.arms.storage for _, pipeline in scoped]
    if filters.kinds:
        counts: dict[str, int] = {}
        for storage in storages:
            count = getattr(storage, "kind_counts", None)
            if not callable(count):
                return False
            for kind, n in count().items():
                counts[kind] = counts.get(kind, 0) + n
        if not any(counts.values()):
            return False  # nothing current: why_empty and the history search say more
        if not any(counts.get(k) for k in filters.kinds):
            return True
    if filters.tags:
        asks = [getattr(storage, "has_tagged", None) for storage in storages]
        return bool(asks) and all(callable(ask) for ask in asks) and \
            not any(ask(filters.tags, filters.kinds) for ask in asks)  # type: ignore[misc]
    return False


def not_together(filters: Filters) -> str:
    """Return why a search that :func:`filtered_out` decided is empty when each of its
    kinds and tags is stored, just not on one document: ``no stored document has all the
    tags ops and net``, ``no stored document of kind FACT has the tag style`` (trial 14
    F8: that search said only ``no hits``)."""
    tags = " and ".join(filters.tags)
    has = f"has the tag {tags}" if len(filters.tags) == 1 else f"has all the tags {tags}"
    if filters.kinds:
        return f"no stored document of kind {' or '.join(filters.kinds)} {has}"
    return f"no stored document {has}"


def _documents(pipeline: Pipeline, history: bool = False) -> list[Any]:
    """Return one scope's documents (current ones unless ``history``), or none for a
    storage that cannot list them; read only when an answer came back empty."""
    storage = pipeline.arms.storage
    if not isinstance(storage, VersionedStorage):
        return []
    return list(storage.iter_documents(include_superseded=history))


def say_why_empty(memory: Memory, scope: str | None, filters: Filters,
                  answer: RecallAnswer) -> None:
    """Say in ``answer`` (which has no hits) why: set its ``nothing_to_rank``
    (:func:`why_empty`), or, when it abstained under a ``since`` / ``until`` window, add
    that window to its ``abstained`` (only what became true or was said in it, statements
    and chat turns, was searched)."""
    window = _window(filters.valid_after, filters.valid_before)
    if answer.abstained:
        if window:
            answer.abstained += f"; only what became true or was said {window} was searched"
        return
    answer.nothing_to_rank = why_empty(
        memory, scope, filters.kinds, filters.tags, filters.as_of, filters.valid_after,
        filters.valid_before, filters.include_superseded, answer.scopes_unavailable)


def say_not_yet_true(answer: RecallAnswer, timeless: RecallAnswer, as_of: float) -> None:
    """When ``answer`` (asked at ``as_of``) abstained and the same search over every time
    (``timeless``) answers with a statement that became true only after ``as_of``, say so
    first in ``answer.abstained``: the date is why, not the relevance of what was true
    then (trial 11: a statement with a 2030 event time, searched as of 2026, was reported
    as "the best match's relevance 0.002 is below ...", the best match being another).
    """
    top = timeless.hits[0] if timeless.hits else None
    if top is None or top.chunk.valid_from <= as_of or not answer.abstained:
        return
    text = " ".join(top.chunk.text.split())
    text = text if len(text) <= 60 else text[:59].rstrip() + "…"
    said = (f"nothing that was true at {_shown(as_of)} answers this: the best match at any "
            f"time, {text!r} ({top.scope}), became true only at {_shown(top.chunk.valid_from)}")
    answer.abstained = f"{said}; of what was true then, {answer.abstained}"


#: Where an empty answer's reason points for why a scope could not be read (the answer's
#: field; the CLI puts the cause in its place: :func:`octomem.engine.cli.hits.in_words`).
SAYS_WHY = "scopes_unavailable says why"
#: How an empty answer points to superseded statements, in the CLI's and the MCP's words.
SEE_SUPERSEDED = "--include-superseded; MCP: include_superseded"
#: How the reason for a scope holding only superseded statements begins.
NO_CURRENT = "no current statement is stored in "


def say_superseded_match(answer: RecallAnswer, history: RecallAnswer) -> None:
    """When ``answer`` (current statements only) is empty and the same search with
    superseded ones (``history``) finds one at its top, say so first in the answer's
    reason: only history matches (trial 13: "nothing is stored" when a superseded
    statement was the one match)."""
    top = history.hits[0] if history.hits else None
    if top is None or top.chunk.valid_to is None:
        return
    text = " ".join(top.chunk.text.split())
    text = text if len(text) <= 60 else text[:59].rstrip() + "…"
    said = (f"only a superseded statement matches: {text!r} ({top.scope}); include "
            f"superseded ones to see it ({SEE_SUPERSEDED})")
    why = answer.nothing_to_rank
    if answer.abstained:
        answer.abstained = f"{said}; of the current ones, {answer.abstained}"
    elif why is None or why.startswith(NO_CURRENT):
        answer.nothing_to_rank = said
    elif answer.scopes_unavailable:
        answer.nothing_to_rank = f"{why}; {said}"
    # else a filter's own reason stands (a window, a kind, a tag: it says more)


def has_superseded(scoped: Sequence[tuple[str, Pipeline]]) -> bool:
    """Return True when a store of ``scoped`` holds a superseded statement (one count
    query each; storages that cannot count say no)."""
    return any(int(counts().get("superseded", 0)) > 0 for _, p in scoped
               if callable(counts := getattr(p.arms.storage, "history_counts", None)))


def why_empty(memory: Memory, scope: str | None, kinds: tuple[str, ...],
              tags: tuple[str, ...] = (), as_of: float | None = None,
              since: float | None = None, until: float | None = None,
              history: bool = False, unavailable: dict[str, str] | None = None,
              ) -> str | None:
    """Return why a search of ``scope`` (``None``: both) filtered to ``kinds`` and ``tags``
    (at ``as_of``; statements that became true in ``[since, until)``; epoch seconds; with
    superseded versions when ``history``) could find nothing, or ``None`` when something
    could have matched.

    :param unavailable: scope -> why it could not be read (not searched).
    :returns: ``nothing is stored in the local and global scopes; ingest or add first``,
        ``the local scope could not be read (scopes_unavailable says why) and the global
        scope holds nothing``, ``no current statement is stored in the local scope; 1
        superseded one is (include superseded ones to see it: ...)``,
        ``no stored document has kind BAR (stored kinds: DOC, FACT)``, ``no stored
        document has tag OPS (stored tags: db, ops)``, ``no current statement became true
        before 2024-03-02T00:00:00Z; 1 superseded one did (include superseded ones to see
        it)``, ``no stored statement became true from 2030-01-01T00:00:00Z on (they span
        2024-01-01 to 2024-07-01)`` or ``nothing stored was valid yet at
        2023-01-01T00:00:00Z (the earliest is from 2025-03-01)``.
    """
    from .scopes import SCOPES

    wanted = SCOPES if scope is None else (scope,)
    counts: dict[str, int] = {}
    for _, pipeline in memory.scopes.existing(wanted):  # type: ignore[arg-type]
        for kind, n in kind_counts(pipeline).items():
            counts[kind] = counts.get(kind, 0) + n
    if not any(counts.values()):
        return _nothing_current(memory, wanted, history, unavailable or {})
    if kinds and not any(counts.get(k) for k in kinds):
        stored = ", ".join(k for k, n in sorted(counts.items()) if n)
        return f"no stored document has kind {' or '.join(kinds)} (stored kinds: {stored})"
    pipelines = [p for _, p in memory.scopes.existing(wanted)]  # type: ignore[arg-type]
    if tags:
        stored_tags = {t for p in pipelines for d in _documents(p) for t in d.tags}
        missing = [t for t in tags if t not in stored_tags]
        if missing:
            return (f"no stored document has tag {some(missing, ' or ')} (stored tags: "
                    f"{some(sorted(stored_tags), few=10) or 'none'}; tags match exactly, "
                    "case included)")
    if (since is not None or until is not None) and as_of is None:
        if (why := _outside_window(pipelines, since, until, history)) is not None:
            return why
    if as_of is not None:
        starts = [d.valid_from for p in pipelines for d in _documents(p, history=True)]
        if starts and min(starts) > as_of:
            return (f"nothing stored was valid yet at {_shown(as_of)} (the earliest is from "
                    f"{_shown(min(starts))})")
        if since is not None or until is not None:
            return _none_then_in_window(pipelines, as_of, since, until, kinds, tags)
    return None


def _none_then_in_window(pipelines: list[Pipeline], as_of: float, since: float | None,
                         until: float | None, kinds: tuple[str, ...],
                         tags: tuple[str, ...]) -> str | None:
    """Return why ``as_of`` with a ``since`` / ``until`` window found nothing: of the
    statements (of those kinds, with those tags) valid at ``as_of``, none became true in
    the window (trial 15 F4: the answer said only "no hits"); ``None`` when one did.
    Epoch seconds."""
    valid = [d for p in pipelines for d in _documents(p, history=True)
             if d.valid_from <= as_of and (d.valid_to is None or d.valid_to > as_of)
             and (not kinds or d.kind in kinds) and all(t in d.tags for t in tags)]
    if not valid or any((since is None or d.valid_from >= since)
                        and (until is None or d.valid_from < until) for d in valid):
        return None
    starts = sorted({_shown(d.valid_from)[:10] for d in valid})
    return (f"no statement valid at {_shown(as_of)} became true {_window(since, until)} "
            f"(those valid then became true on {some(starts)})")


def _nothing_current(memory: Memory, wanted: tuple[str, ...], history: bool,
                     unavailable: dict[str, str]) -> str:
    """Say why scopes whose readable stores hold no current document answered nothing:
    one could not be read, or only superseded statements are stored, or nothing is."""
    unread = [s for s in wanted if s in unavailable]
    read = [s for s in wanted if s not in unavailable]

    def scopes(names: list[str]) -> str:
        return f"the {' and '.join(names)} scope{'s' if len(names) > 1 else ''}"

    old = 0 if history else sum(
        int(p.arms.storage.history_counts().get("superseded", 0))
        for _, p in memory.scopes.existing(read)  # type: ignore[arg-type]
        if callable(getattr(p.arms.storage, "history_counts", None)))
    if old:
        held = (f"{NO_CURRENT}{scopes(read)}; {old} superseded "
                f"{'one is' if old == 1 else 'ones are'} (include superseded ones to see "
                f"{'it' if old == 1 else 'them'}: {SEE_SUPERSEDED})")
    elif read:
        held = f"{scopes(read)} {'holds' if len(read) == 1 else 'hold'} nothing"
    else:
        held = ""
    if unread:
        cannot = f"{scopes(unread)} could not be read ({SAYS_WHY}; nothing of it was searched)"
        return f"{cannot} and {held}" if held else cannot
    if old:
        return held
    return f"nothing is stored in {scopes(read)}; ingest or add first"


def _outside_window(pipelines: list[Pipeline], since: float | None, until: float | None,
                    history: bool) -> str | None:
    """Return why no statement of ``pipelines`` became true in ``[since, until)`` (epoch
    seconds, either open), or ``None`` when one did (current, or any when ``history``)."""
    def inside(ts: float) -> bool:
        return (since is None or ts >= since) and (until is None or ts < until)

    every = [d for p in pipelines for d in _documents(p, history=True)]
    if any(inside(d.valid_from) for d in every if history or d.is_current):
        return None
    window = _window(since, until)
    old = sum(1 for d in every if not d.is_current and inside(d.valid_from))
    if old:
        return (f"no current statement became true {window}; {old} superseded "
                f"{'one' if old == 1 else 'ones'} did (include superseded ones to see "
                f"{'it' if old == 1 else 'them'})")
    starts = [d.valid_from for d in every if history or d.is_current]
    if not starts:
        return None
    first, last = _shown(min(starts))[:10], _shown(max(starts))[:10]
    span = f"they span {first} to {last}" if first != last else f"all are from {first}"
    return f"no stored statement became true {window} ({span})"


def _window(since: float | None, until: float | None) -> str:
    """Return ``from T on``, ``before T``, both joined by ``and``, or ``""`` (epoch seconds
    shown as ISO-8601 UTC)."""
    return " and ".join(part for part in (
        None if since is None else f"from {_shown(since)} on",
        None if until is None else f"before {_shown(until)}") if part)


def _shown(ts: float) -> str:
    """Return epoch seconds as an ISO-8601 UTC time, to the second."""
    from datetime import UTC, datetime

    when = datetime.fromtimestamp(ts, UTC)  # %Y drops a small year's zeros (glibc: 1-01-02)
    return f"{when.year:04d}" + when.strftime("-%m-%dT%H:%M:%SZ")
