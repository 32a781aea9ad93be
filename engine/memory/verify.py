"""``octomem verify [--repair]``: find, and fix, stored rows an answer cannot show.

Times are checked at the door (:mod:`.times`), but a store written by an older octomem
may hold a time outside the calendar (an ``event_time`` of ``9999-12-31T23:59:59-14:00``
is year 10000 in UTC; an import could store ``1e300``). Answers skip such rows with a
warning; this finds them and, asked to, repairs them:

- ``created_at`` that cannot be shown becomes the time of the repair;
- ``event_time`` and ``last_recalled_at`` are cleared (the statement then counts from
  when it was recorded; it was never recalled);
- ``valid_to`` of a superseded statement or old chunk becomes the time of the repair (it
  stays history);
- a chunk's ``valid_from`` becomes its document's;
- a kind no ``kinds`` filter can select (``to-do``, ``fact``: an import by an older octomem
  stored it as given) becomes one that fits (``TO_DO``, ``FACT``: what import suggests);
- a document whose id the forget log says was forgotten (an import by an older octomem
  copied another machine's forget without forgetting it) is forgotten, as logged.

The repaired document is written again with its chunks in one transaction (rows, keyword
index; vectors are computed again afterwards), as an import would write it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..arms import VersionedStorage
from ..errors import EmbedderMismatchError, EmbedderUnavailableError, StoreUnreadableError
from ..pipeline import Pipeline
from ..types import Chunk, Document, ForgetRecord
from .facade import Memory
from .forget import is_tombstone, remove
from .remember import KIND_INPUT_PATTERN, kind_within_rule
from .scopes import ScopeName
from .times import in_range, iso, unshowable_times
from .transfer import write_document
from .verify_links import LinkProblem, link_problems

#: A kind as every octomem writer stores it: :data:`~.remember.KIND_INPUT_PATTERN` in capitals.
STORED_KIND_PATTERN = KIND_INPUT_PATTERN.replace("A-Za-z", "A-Z")


@dataclass(frozen=True, slots=True)
class Problem:
    """One stored document with a value no answer can show, or a supersede link that
    does not hold (:mod:`.verify_links`).

    :param what: e.g. ``"event_time 1e+300 cannot be shown"``, every bad field of it
        and its chunks.
    """

    scope: ScopeName
    document_id: str
    what: str

    def __str__(self) -> str:
        return f"{self.scope}: {self.document_id}: {self.what}"


def _chunk_problems(chunks: list[Chunk]) -> list[str]:
    return [f"chunk {c.ordinal} (revision {c.revision}) {bad}" for c in chunks
            for bad in unshowable_times(created_at=c.created_at, valid_from=c.valid_from,
                                        valid_to=c.valid_to)]


def _unselectable_kind(kind: str) -> str | None:
    """Say why no ``kinds`` filter selects a stored ``kind`` (an import by an older octomem
    stored ``to-do`` or ``fact`` as given; filters ask one word in capitals), or ``None``."""
    if re.fullmatch(STORED_KIND_PATTERN, kind):
        return None
    return (f"kind {kind!r} cannot be selected by any kinds filter (repair stores "
            f"{kind_within_rule(kind)})")


def _scan(scope: ScopeName, pipeline: Pipeline) -> Iterator[tuple[Problem, Document, list[Chunk]]]:
    storage = pipeline.arms.storage
    if not isinstance(storage, VersionedStorage):
        return
    for doc in storage.iter_documents(include_superseded=True):
        chunks = storage.document_chunks(doc.id)
        bad = unshowable_times(created_at=doc.created_at, event_time=doc.event_time,
                               valid_to=doc.valid_to, last_recalled_at=doc.last_recalled_at)
        bad += _chunk_problems(chunks)
        said = [f"{', '.join(bad)} cannot be shown"] if bad else []
        if (kind := _unselectable_kind(doc.kind)) is not None:
            said.append(kind)
        if said:
            yield Problem(scope, doc.id, "; ".join(said)), doc, chunks


def sound(memory: Memory, scopes: tuple[ScopeName, ...]) -> list[tuple[ScopeName, Pipeline]]:
    """Return ``(scope, pipeline)`` of each of ``scopes`` whose store is sound: it opens
    and its storage's ``damage()`` check (SQLite: ``PRAGMA quick_check``) finds nothing.
    The others are left out and named in ``memory.scopes.unreadable``.

    :raises StoreUnreadableError: ``scopes`` is one scope, and its store cannot be read.
    """
    out = [(s, p) for s, p in memory.scopes.existing(scopes)
           if memory.scopes.damaged(s, p) is None]
    if len(scopes) == 1 and not out and scopes[0] in memory.scopes.unreadable:
        raise StoreUnreadableError(memory.scopes.unreadable[scopes[0]])
    return out


def _links(pipeline: Pipeline) -> Iterator[LinkProblem]:
    if isinstance(pipeline.arms.storage, VersionedStorage):
        yield from link_problems(pipeline.arms.storage, _rewrite)


def _rewrite(tx: object, pipeline: Pipeline, doc: Document) -> list[int]:
    """Write ``doc`` again with its stored chunks (every revision) inside ``tx``."""
    chunks = [replace(c, id=0) for c in pipeline.arms.storage.document_chunks(doc.id)]
    return [c.id for c in write_document(pipeline, tx, doc, chunks, replace=True)]


def _tombstoned(scope: ScopeName,
                pipeline: Pipeline) -> Iterator[tuple[Problem, Document, ForgetRecord]]:
    """Yield each stored document whose id the scope's forget log says was forgotten
    deliberately (:func:`~.forget.is_tombstone`): an import by an older octomem copied a
    forget made elsewhere without forgetting the document (trial 16 F20)."""
    storage = pipeline.arms.storage
    if not isinstance(storage, VersionedStorage):
        return
    for record in storage.iter_forgotten():
        if is_tombstone(record) and (doc := storage.get_document(record.id)) is not None:
            yield Problem(scope, doc.id, "is stored although the forget log says it was "
                          f"forgotten on {(iso(record.forgotten_at) or '')[:10]}"), doc, record


def find_problems(memory: Memory, scopes: tuple[ScopeName, ...]) -> list[Problem]:
    """Return every stored document of ``scopes`` that holds a time no answer can show,
    a supersede link that does not hold, or an id the forget log says was forgotten (a
    scope whose store cannot be read is named in ``memory.scopes.unreadable``)."""
    return [problem for scope, pipeline in sound(memory, scopes)
            for problem in [*(p for p, _, _ in _scan(scope, pipeline)),
                            *(Problem(scope, link.document.id, link.what)
                              for link in _links(pipeline)),
                            *(p for p, _, _ in _tombstoned(scope, pipeline))]]


def repaired(doc: Document, chunks: list[Chunk], now: float) -> tuple[Document, list[Chunk]]:
    """Return ``doc`` and its chunks with every time that cannot be shown fixed (see the
    module docstring); the rest unchanged."""
    def fix(ts: float | None, fallback: float | None) -> float | None:
        return ts if ts is None or in_range(ts) else fallback

    kind = doc.kind if _unselectable_kind(doc.kind) is None else kind_within_rule(doc.kind)
    doc = replace(doc, kind=kind, created_at=fix(doc.created_at, now),
                  event_time=fix(doc.event_time, None),
                  valid_to=fix(doc.valid_to, now),
                  last_recalled_at=fix(doc.last_recalled_at, None))
    return doc, [replace(c, id=0, kind=kind, created_at=doc.created_at,
                         valid_from=fix(c.valid_from, doc.valid_from),
                         valid_to=fix(c.valid_to, now)) for c in chunks]


def repair(memory: Memory, scopes: tuple[ScopeName, ...],
           left: list[Problem] | None = None) -> list[Problem]:
    """Repair every problem :func:`find_problems` would report that can be repaired
    without a person's decision; return what was repaired.

    Each document is rewritten in its own transaction; the vectors of its chunks are
    computed again afterwards (when the embedder can load).

    :param left: receives the problems not repaired (links that need a decision).
    """
    fixed: list[Problem] = []
    now = time.time()
    for scope, pipeline in sound(memory, scopes):
        for problem, doc, record in list(_tombstoned(scope, pipeline)):
            with pipeline.arms.storage.transaction() as tx:  # forgotten, as it was logged
                remove(pipeline, tx, doc, record)
            fixed.append(problem)
        stored: list[int] = []
        for problem, doc, chunks in list(_scan(scope, pipeline)):
            new_doc, new_chunks = repaired(doc, chunks, now)
            with pipeline.arms.storage.transaction() as tx:
                stored += [c.id for c in write_document(pipeline, tx, new_doc, new_chunks,
                                                        replace=True)]
            fixed.append(problem)
        stored += _repair_links(scope, pipeline, fixed, left)
        if stored and pipeline.arms.semantic is not None and not pipeline.semantic_error:
            try:
                pipeline.embed_pending(chunk_ids=stored)
            except (EmbedderUnavailableError, EmbedderMismatchError):
                pass  # found by their words until `octomem reindex` can embed them
    return fixed


def _repair_links(scope: ScopeName, pipeline: Pipeline, fixed: list[Problem],
                  left: list[Problem] | None) -> list[int]:
    """Repair the scope's supersede links one at a time, looking again after each (one
    repair can settle another's problem); return the chunk ids written anew."""
    stored: list[int] = []
    for _ in range(len(list(_links(pipeline))) + 1):
        links = list(_links(pipeline))
        link = next((p for p in links if p.fix is not None), None)
        if link is None or link.fix is None:
            if left is not None:
                left += [Problem(scope, p.document.id, p.what) for p in links]
            break
        with pipeline.arms.storage.transaction() as tx:
            stored += link.fix(tx, pipeline)
        fixed.append(Problem(scope, link.document.id, link.what))
    return stored
