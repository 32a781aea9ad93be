"""What a new statement repeats: an identical current statement of its scope (not stored
again), and near duplicates in either scope (reported, never refused).

``remember`` of a text identical to a current statement of the same scope and event
time stores nothing, whatever kind either has (the same text: equal once
Unicode-normalised, :mod:`.statement_key`): the answer is the existing statement,
marked as already stored (as ``ingest`` says "unchanged"), so forgetting by the exact
text stays unambiguous; to change a statement's kind, supersede it. A ``HANDOFF`` only
repeats a current handoff (it replaces the previous one; a statement is not a handoff).
Near duplicates — identical text in the other scope, or a cosine at least
``dedup.duplicate_threshold`` — are stored and listed, for the caller to forget or
supersede.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..types import HANDOFF_KIND, Document, Filters
from .scopes import ScopeName
from .statement_key import find_same, same_statement

if TYPE_CHECKING:
    import numpy as np

#: Most near duplicates a ``remember`` answer lists.
MAX_NEAR_DUPLICATES = 3


@dataclass(frozen=True, slots=True)
class NearDuplicate:
    """An existing current statement that says nearly what a new one says.

    :param similarity: cosine similarity of the two texts' embeddings (1.0 for identical
        text found without a model).
    """

    scope: ScopeName
    document: Document
    similarity: float


def identical(storage: Any, document: Document) -> Document | None:
    """Return the oldest current document of ``storage`` that ``document`` would repeat:
    the same text (:mod:`.statement_key`: NFC or NFD, invisible characters aside), title
    and event time, of any kind but a handoff for a handoff (tags
    and kind are not compared: the same words with another label are still the same
    statement; the answer tells its stored kind), or ``None``."""
    handoff = document.kind == HANDOFF_KIND
    for doc in find_same(storage, document.text):
        if doc.is_current and (doc.kind == HANDOFF_KIND) == handoff \
                and doc.title == document.title and doc.event_time == document.event_time:
            return doc
    return None


def near_duplicates(scoped: Iterable[tuple[ScopeName, Any]], text: str,
                    vector: np.ndarray | None, threshold: float,
                    exclude: Sequence[str] = ()) -> list[NearDuplicate]:
    """Return up to :data:`MAX_NEAR_DUPLICATES` current statements of the ``(scope,
    pipeline)`` pairs whose cosine to ``vector`` is >= ``threshold``, most similar first;
    handoffs and the ids in ``exclude`` are left out. Statements with identical text
    always count (similarity 1.0), with or without a vector.

    :param vector: ``(dim,)`` float32, unit norm, or ``None`` (identical text only).
    """
    found: dict[tuple[str, str], NearDuplicate] = {}
    for scope, pipeline in scoped:
        storage, semantic = pipeline.arms.storage, pipeline.arms.semantic
        pairs: list[tuple[str, float]] = [(d.id, 1.0) for d in find_same(storage, text)]
        if vector is not None and semantic is not None and not pipeline.semantic_error:
            run = semantic.search(vector, Filters(), MAX_NEAR_DUPLICATES * 4)
            close = [h for h in run if h.score >= threshold]
            chunks = {c.id: c for c in storage.get_chunks([h.chunk_id for h in close])}
            pairs += [(chunks[h.chunk_id].document_id, h.score) for h in close
                      if h.chunk_id in chunks]
        for doc_id, similarity in pairs:
            doc = storage.get_document(doc_id)
            if doc is None or not doc.is_current or doc.kind == HANDOFF_KIND \
                    or doc_id in exclude:
                continue
            old = found.get((scope, doc_id))
            if old is None or old.similarity < similarity:
                found[(scope, doc_id)] = NearDuplicate(scope, doc, min(similarity, 1.0))
    ranked = sorted(found.values(), key=lambda n: (-n.similarity, -n.document.created_at))
    return ranked[:MAX_NEAR_DUPLICATES]


def repeated(near: Sequence[NearDuplicate], scope: ScopeName,
             document: Document) -> Document | None:
    """Return the near duplicate of ``scope`` that is the same statement as ``document``
    (same text as :func:`identical` compares it, title and event time), or ``None``:
    one stored with an invisible character the lookup by text cannot find."""
    for found in near:
        doc = found.document
        if found.scope == scope and doc.is_current and same_statement(doc.text, document.text) \
                and doc.title == document.title and doc.event_time == document.event_time:
            return doc
    return None


def has_vectors(pipeline: Any, document: Document) -> bool:
    """Return whether every current chunk of a stored ``document`` has a vector of the
    pipeline's semantic arm (``False`` without one, or when it cannot run)."""
    semantic, storage = pipeline.arms.semantic, pipeline.arms.storage
    chunks = getattr(storage, "document_chunks", None)
    if semantic is None or pipeline.semantic_error or not callable(chunks):
        return False
    ids = [c.id for c in chunks(document.id) if c.valid_to is None]
    rows = semantic.vectors(ids) if ids else None
    return rows is not None and rows.ndim == 2 and rows.shape[1] > 0 \
        and bool(rows.any(axis=1).all())
