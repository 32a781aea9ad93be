"""Vectors already stored for the same text: a chunk about to be embedded whose embedding
text (:func:`~.chunking.embedding_text`) a stored chunk of the same document (an earlier
revision) or of a document with exactly the same text already has a vector for takes a
copy of that vector instead of being embedded again.

Embedding is by far the slowest part of an ingest (~100x the rest); without this a file
or a transcript folder that moved was embedded again although its text had not changed:
a moved text file is a new document (its id comes from its path) whose text the old
path's document holds (:mod:`.memory.moved` forgets that one only after the ingest), and
a moved transcript's turns are stored as their next revision under the new path
(:mod:`.relocation`), the earlier revision's chunks kept. An edited note's chunks before
the edit keep their text, and their vectors, the same way.

The copied vector is the semantic arm's own (``SemanticArm.vectors``): the set bound to
the configured embedder model, so a vector of another model is never reused (a chunk
without a vector in that set reads as a zero row and is embedded). It needs a
:class:`~.storage_protocols.VersionedStorage` (``document_chunks``: every revision of a
document); any other storage embeds every chunk, as before. The ``sqlite`` storage and
the PostgreSQL plugin are both versioned and find the same donors through the same
Protocol methods.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .arms import VersionedStorage
from .chunking import embedding_text
from .types import Chunk

if TYPE_CHECKING:
    import numpy as np

    from .arms import SemanticArm
    from .storage_protocols import Storage


#: Most stored documents of the same text whose chunks are looked at per document: one
#: with a vector is enough, and a short text many turns repeat ("ok") would otherwise read
#: them all for each. Not tuned: any small number finds the moved file's old document.
SAME_TEXT_DOCUMENTS = 4


def any_vector(storage: Storage, semantic: SemanticArm) -> bool:
    """True when some stored chunk has a vector in the bound set: without one nothing can
    be reused, and a first ingest into a new store looks nothing up (two counts)."""
    return storage.counts()["chunks"] > semantic.missing_count()


def donors(storage: VersionedStorage, chunks: Sequence[Chunk]) -> dict[str, list[int]]:
    """Return, per embedding text, the ids of stored chunks other than ``chunks`` that
    hold it: every revision of the documents ``chunks`` belong to, and every revision of
    the stored documents whose text is exactly that of one of them (three indexed reads
    per document; at most :data:`SAME_TEXT_DOCUMENTS` of the same text).

    :param chunks: stored chunks (ids set), e.g. a batch about to be embedded.
    :returns: embedding text -> chunk ids, in the order the storage returned them.
    """
    own = {c.id for c in chunks}
    names: dict[str, None] = {}
    for doc_id in dict.fromkeys(c.document_id for c in chunks):
        names[doc_id] = None
        document = storage.get_document(doc_id)
        if document is not None:
            same = storage.find_documents(document.text)[:SAME_TEXT_DOCUMENTS]
            names.update((d.id, None) for d in same)
    out: dict[str, list[int]] = {}
    for doc_id in names:
        for chunk in storage.document_chunks(doc_id):
            if chunk.id not in own:
                out.setdefault(embedding_text(chunk), []).append(chunk.id)
    return out


def reusable(storage: Storage, semantic: SemanticArm, chunks: Sequence[Chunk]
             ) -> tuple[list[int], np.ndarray | None]:
    """Return the chunks among ``chunks`` that can take a stored vector, and those vectors.

    :param chunks: stored chunks about to be embedded.
    :returns: ``(chunk ids, vectors)``: ids in ``chunks``' order, vectors float32
        ``(len(ids), dim)``, L2-normalised as the semantic arm stored them; ``([], None)``
        when none can (or the storage keeps no revisions).
    """
    if not isinstance(storage, VersionedStorage) or not chunks:
        return [], None
    found = donors(storage, chunks)
    wanted = [c for c in chunks if embedding_text(c) in found]
    if not wanted:
        return [], None
    import numpy as np

    candidates = list(dict.fromkeys(i for c in wanted for i in found[embedding_text(c)]))
    stored = semantic.vectors(candidates)
    if stored.ndim != 2 or stored.shape[1] == 0:  # unbound: no vector of this model
        return [], None
    row = {cid: i for i, cid in enumerate(candidates)
           if float(np.dot(stored[i], stored[i])) > 0.0}  # a zero row: no vector
    ids: list[int] = []
    rows: list[int] = []
    for chunk in wanted:
        first = next((row[i] for i in found[embedding_text(chunk)] if i in row), None)
        if first is not None:
            ids.append(chunk.id)
            rows.append(first)
    if not ids:
        return [], None
    return ids, np.ascontiguousarray(stored[rows], dtype=np.float32)
