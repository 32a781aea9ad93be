"""Supersede links that do not hold, for ``octomem verify``.

A statement that ``supersedes`` another is that one's ``superseded_by``, and a
``superseded_by`` names a stored statement (``forget`` hands a statement on when its
successor goes: :meth:`~octomem.engine.arms.VersionedStorage.hand_on`). An import of an
older export (trial 11, before import kept the newer state) could leave an older
statement current while its successor still said it superseded it, and a hand-made
record could name a statement that exists nowhere (``import`` now refuses both). Found here:

- ``supersedes 'a', which is current (not superseded by it)``: repaired by superseding
  ``a`` from the newer statement's ``valid_from`` on, as ``remember`` would have;
- ``superseded_by 'b' but current (no valid_to)``: repaired by superseding it from
  ``b``'s ``valid_from`` on when ``b`` is stored, else by dropping the link;
- ``superseded by 'b', which was forgotten``: an octomem before trial 13 left the
  statement a forgotten correction had replaced superseded by nothing, so the scope
  had no current answer; repaired by making it current again, as ``forget`` now does;
- a link to an id that is neither stored nor in the forget log, or to a statement
  superseded by another: reported, not repaired (which one is right needs a person).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any

from ..types import Document

#: Writes a repair inside the caller's transaction; returns the ids of chunks written anew.
Fix = Callable[[Any, Any], list[int]]


@dataclass(frozen=True, slots=True)
class LinkProblem:
    """One statement whose supersede link does not hold, and how to repair it (``None``:
    it needs a person)."""

    document: Document
    what: str
    fix: Fix | None


def _supersedes(storage: Any, doc: Document) -> Iterator[LinkProblem]:
    if doc.supersedes is None:
        return
    old = storage.get_document(doc.supersedes)
    if old is None and storage.get_forgotten(doc.supersedes) is None:
        yield LinkProblem(doc, f"supersedes {doc.supersedes!r}: no such document (nor in "
                          "the forget log)", None)
    elif old is not None and old.is_current:
        def fix(tx: Any, pipeline: Any, old_id: str = old.id) -> list[int]:
            pipeline.arms.storage.supersede(tx, old_id, doc.id, doc.valid_from)
            return []
        yield LinkProblem(doc, f"supersedes {old.id!r}, which is current (not superseded by "
                          "it)", fix)
    elif old is not None and old.superseded_by != doc.id:
        yield LinkProblem(doc, f"supersedes {old.id!r}, which is superseded by "
                          f"{old.superseded_by!r}", None)


def _superseded_by(storage: Any, doc: Document,
                   rewrite: Callable[[Any, Any, Document], list[int]]) -> Iterator[LinkProblem]:
    if doc.superseded_by is None:
        return
    new = storage.get_document(doc.superseded_by)
    if new is None and storage.get_forgotten(doc.superseded_by) is None:
        dropped = replace(doc, superseded_by=None)
        yield LinkProblem(doc, f"superseded_by {doc.superseded_by!r}: no such document (nor "
                          "in the forget log)", (lambda tx, pipeline: rewrite(
                              tx, pipeline, dropped)) if doc.is_current else None)
    elif new is None and not doc.is_current:
        def revive(tx: Any, pipeline: Any, gone: str = doc.superseded_by) -> list[int]:
            pipeline.arms.storage.hand_on(tx, gone, None)
            return []
        yield LinkProblem(doc, f"superseded by {doc.superseded_by!r}, which was forgotten: "
                          "no current statement replaces it", revive)
    elif doc.is_current:
        def fix(tx: Any, pipeline: Any) -> list[int]:
            if new is None:
                return rewrite(tx, pipeline, replace(doc, superseded_by=None))
            pipeline.arms.storage.supersede(tx, doc.id, new.id, new.valid_from)
            return []
        yield LinkProblem(doc, f"superseded_by {doc.superseded_by!r} but current (no "
                          "valid_to)", fix)


def link_problems(storage: Any, rewrite: Callable[[Any, Any, Document], list[int]]
                  ) -> Iterator[LinkProblem]:
    """Yield every stored statement of ``storage`` whose supersede links do not hold.

    :param rewrite: writes a changed document again with its chunks inside a transaction
        (``(tx, pipeline, document) -> chunk ids``), for the repairs that change a row.
    """
    for doc in storage.iter_documents(include_superseded=True):
        yield from _supersedes(storage, doc)
        yield from _superseded_by(storage, doc, rewrite)
