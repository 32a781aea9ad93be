"""The Protocol each arm kind implements, and the spec a plugin registers it with.

Scores are always higher-is-better inside the engine. Vectors are numpy ``float32``
arrays of shape ``(n, dim)``, L2-normalised so that a dot product is the cosine
similarity. Plugins need no base class: matching the Protocol is enough.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

from .types import CallRecord, Chunk, Collapsed, Document, Filters, ForgetRecord, FusedHit, Run

if TYPE_CHECKING:  # numpy is imported by the arms that make vectors, not at engine import
    import numpy as np

ArmKind = Literal["storage", "keyword", "embedder", "semantic", "reranker", "dedup"]
ARM_KINDS: tuple[ArmKind, ...] = ("storage", "keyword", "embedder", "semantic", "reranker", "dedup")


class NoOptions(BaseModel, extra="forbid", defer_build=True):
    """Options model of an arm that takes no options."""


@dataclass(frozen=True, slots=True)
class ArmContext:
    """What a factory gets besides its options.

    :param root: directory where this scope's files live (created if missing).
    :param storage: the assembled storage, for keyword and semantic arms; ``None``
        when the storage itself is being built.
    """

    root: Path
    storage: Any = None


@dataclass(frozen=True, slots=True)
class ArmSpec:
    """One arm implementation offered by a plugin.

    :param kind: which Protocol the built arm implements.
    :param name: the name settings use to pick it (unique per kind).
    :param factory: ``factory(options, context) -> arm``.
    :param options_model: pydantic model validating the arm's options
        (settings table ``[arms.<name>]``).
    :param requires_storage: storage names this arm works with; empty means any.
    :param description: one line for ``octomem plugins``.
    """

    kind: ArmKind
    name: str
    factory: Callable[[Any, ArmContext], Any]
    options_model: type[BaseModel] = NoOptions
    requires_storage: frozenset[str] = field(default_factory=frozenset)
    description: str = ""


@runtime_checkable
class Storage(Protocol):
    """Where documents, chunks and metadata live.

    Writes happen inside :meth:`transaction`; the keyword and semantic arms that
    require this storage write their index rows through the same transaction object.
    """

    name: str

    def transaction(self) -> AbstractContextManager[Any]:
        """Open one write transaction: commit on normal exit, roll back on an exception."""
        ...

    def add_document(self, tx: Any, document: Document, chunks: Sequence[Chunk]) -> list[Chunk]:
        """Store a document and its chunks; return the chunks with their new integer ids."""
        ...

    def delete_document(self, tx: Any, document_id: str) -> list[int]:
        """Delete a document and its chunks; return the removed chunk ids (empty if none)."""
        ...

    def get_document(self, document_id: str) -> Document | None:
        """Return the stored document, or ``None``."""
        ...

    def find_documents(self, text: str) -> list[Document]:
        """Return the documents whose text is exactly ``text``, oldest first."""
        ...

    def get_chunks(self, chunk_ids: Sequence[int]) -> list[Chunk]:
        """Return the chunks with these ids, in the given order; unknown ids are skipped."""
        ...

    def iter_chunks(self, filters: Filters | None = None) -> Iterator[Chunk]:
        """Yield every stored chunk passing ``filters``, in id order."""
        ...

    def counts(self) -> dict[str, int]:
        """Return ``{"documents": n, "chunks": n}``."""
        ...

    def get_meta(self, key: str) -> str | None:
        """Read a value from the storage's key-value metadata table."""
        ...

    def set_meta(self, tx: Any, key: str, value: str) -> None:
        """Write a value to the metadata table inside ``tx``."""
        ...

    def size_bytes(self) -> int:
        """Return the storage's size on disk in bytes (0 for in-memory)."""
        ...

    def close(self) -> None:
        """Release connections and files."""
        ...


@runtime_checkable
class BulkStorage(Storage, Protocol):
    """Optional capability of a storage: new documents written in one batch (ingest).

    The pipeline writes runs of new documents with it, otherwise one ``add_document``
    per document; the stored rows and the ids must be the same either way.
    """

    def existing_ids(self, ids: Sequence[str]) -> set[str]:
        """Return which of ``ids`` name a stored document."""
        ...

    def add_documents(
        self, tx: Any, pairs: Sequence[tuple[Document, Sequence[Chunk]]]
    ) -> list[list[Chunk]]:
        """Store new documents (no id stored yet, ids distinct) and their chunks inside
        ``tx``, as ``add_document`` called per pair in order would.

        :returns: per document, its stored chunks with their new ids, in the given order.
        """
        ...


@runtime_checkable
class VersionedStorage(Storage, Protocol):
    """Optional capability of a storage: statement history, recall counters, forget log.

    Memory semantics (supersede, ``as_of``, revisions, ``recalls``, ``forget`` with a
    reason) need it; a storage without it still serves plain search. Stored chunks carry
    ``valid_from``/``valid_to`` so that keyword and semantic arms apply
    :class:`~octomem.engine.types.Filters` validity rules inside their searches (by
    default only chunks with ``valid_to is None`` pass).
    """

    def supersede(
        self, tx: Any, document_id: str, superseded_by: str, valid_to: float
    ) -> list[int]:
        """Mark a document (and its current chunks) superseded from ``valid_to`` (epoch s) on.

        :returns: ids of the chunks whose validity changed.
        """
        ...

    def revise_document(
        self, tx: Any, document: Document, chunks: Sequence[Chunk]
    ) -> tuple[list[Chunk], list[int]]:
        """Store changed content of an existing document as its next revision.

        :returns: ``(new chunks with ids, ids of the chunks retired, kept with valid_to)``.
        """
        ...

    def iter_documents(
        self, kinds: Sequence[str] = (), include_superseded: bool = False
    ) -> Iterator[Document]:
        """Yield documents newest ``created_at`` first (current ones unless asked)."""
        ...

    def document_chunks(self, document_id: str) -> list[Chunk]:
        """Return every chunk of a document, every revision, by revision then ordinal."""
        ...

    def noncurrent_chunk_ids(self, limit: int | None = None) -> list[int]:
        """Return ids of chunks whose ``valid_to`` is set, ascending (at most ``limit``)."""
        ...

    def record_recalls(self, tx: Any, document_ids: Sequence[str], at: float) -> None:
        """Add one to each document's ``recalls`` and set ``last_recalled_at = at``."""
        ...

    def record_forgotten(self, tx: Any, record: ForgetRecord) -> None:
        """Log a forgotten statement (id, kind, hash, times, reason; never the text)."""
        ...

    def get_forgotten(self, document_id: str) -> ForgetRecord | None:
        """Return the forget-log entry of ``document_id``, or ``None``."""
        ...

    def iter_forgotten(self) -> Iterator[ForgetRecord]:
        """Yield every forget-log entry, oldest first."""
        ...


@runtime_checkable
class CallLogStorage(Protocol):
    """Optional capability of a storage: the opt-in log of MCP tool calls (setting
    ``call_log``), kept in the scope's own store; a storage without it keeps none."""

    def append_calls(self, tx: Any, records: Sequence[CallRecord]) -> None:
        """Append ``records`` in ``tx``, dropping the oldest beyond the storage's bound."""
        ...

    def recent_calls(self, limit: int) -> list[CallRecord]:
        """Return the last ``limit`` records, oldest first."""
        ...


@runtime_checkable
class KeywordArm(Protocol):
    """Lexical retrieval, e.g. BM25.

    Any string is a valid query: syntax characters of the backend never raise.
    """

    name: str

    def index(self, tx: Any, chunks: Sequence[Chunk]) -> None:
        """Index stored chunks inside the storage transaction ``tx``."""
        ...

    def remove(self, tx: Any, chunk_ids: Sequence[int]) -> None:
        """Drop chunks from the index inside ``tx``."""
        ...

    def search(self, text: str, filters: Filters, k: int) -> Run:
        """Return at most ``k`` hits passing ``filters``, best first.

        :param k: number of candidates, >= 1.
        :returns: hits with 1-based ranks and higher-is-better scores (BM25 scores
            for BM25 arms); empty when no term of ``text`` occurs.
        """
        ...


@runtime_checkable
class Embedder(Protocol):
    """Text to vectors. Loads its model lazily; never blocks construction.

    :ivar model_id: identity stored beside the vectors it produces.
    :ivar dim: vector dimension.
    :ivar max_tokens: longest chunk in tokens (special tokens excluded) the model was trained on.
    """

    name: str
    model_id: str
    dim: int
    max_tokens: int

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Return each text's length in model tokens (special tokens excluded).

        Ingest calls it (and ``token_ceilings``) from a worker thread while the caller's
        thread writes the batch before (:func:`octomem.engine.writes.prepared`).
        """
        ...

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages.

        :returns: ``(len(texts), dim)`` float32, each row of unit L2 norm.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query.

        :returns: ``(dim,)`` float32 of unit L2 norm.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        ...


@runtime_checkable
class TokenCeilings(Protocol):
    """Optional capability of an embedder: for each text, a number of tokens its
    ``count_tokens`` can never exceed, found without counting (a text whose ceiling is
    within the budget is stored as one chunk without being counted).
    """

    def token_ceilings(self, texts: Sequence[str]) -> list[int | None]:
        """Return, per text, an upper bound of ``count_tokens([text])[0]`` (``None``: none
        known cheaply; the text is counted)."""
        ...


@runtime_checkable
class SemanticArm(Protocol):
    """A vector index with k-nearest-neighbour search by cosine similarity."""

    name: str

    def bind(self, tx: Any, model_id: str, dim: int) -> None:
        """Select the vectors of the embedder ``(model_id, dim)``; create their set on first use.

        Vectors of several embedders may live side by side, keyed by model id and
        dimension; after ``bind`` every other method reads and writes the bound
        embedder's vectors only, so vectors of two models are never compared.

        :raises EmbedderMismatchError: an index that can hold one model only holds
            vectors of another model or dimension.
        """
        ...

    def add(self, tx: Any, chunk_ids: Sequence[int], vectors: np.ndarray) -> None:
        """Store vectors, row ``i`` for ``chunk_ids[i]``; ``vectors`` is ``(n, dim)`` float32."""
        ...

    def remove(self, tx: Any, chunk_ids: Sequence[int]) -> None:
        """Drop the vectors of these chunks inside ``tx``."""
        ...

    def missing(self, limit: int | None = None) -> list[int]:
        """Return ids of stored chunks that have no vector of the bound embedder, ascending."""
        ...

    def missing_count(self) -> int:
        """Return how many stored chunks have no vector of the bound embedder.

        Cheap (the pipeline calls it on every search to say how complete the vectors are).
        """
        ...

    def vectors(self, chunk_ids: Sequence[int]) -> np.ndarray:
        """Return ``(len(chunk_ids), dim)`` float32; a zero row where a chunk has no vector."""
        ...

    def search(self, vector: np.ndarray, filters: Filters, k: int) -> Run:
        """Return at most ``k`` hits passing ``filters`` (applied inside the KNN), best first.

        :param vector: ``(dim,)`` float32 unit-norm query vector.
        :returns: hits whose score is the cosine similarity in [-1, 1].
        """
        ...


@runtime_checkable
class Reranker(Protocol):
    """Re-scores (query, passage) pairs, e.g. with a cross-encoder."""

    name: str

    def rerank(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Return ``(len(texts),)`` float32 relevance scores, higher is better."""
        ...


@runtime_checkable
class HitReranker(Reranker, Protocol):
    """Optional capability of a reranker: re-score fused hits knowing their chunks
    (metadata such as a conversation turn's session and position), every arm's
    contribution and their cosine to the query, e.g. the ``conversation`` reranker.

    It may also define ``groups(hits) -> Sequence[Hashable]`` (one label per hit): then
    the hits it scores are re-ordered only among the places hits of their own label held
    (the ``conversation`` reranker: one conversation in one scope), so its scores need
    not be comparable between labels (:mod:`octomem.engine.rerank`). And it may define
    ``rerank_grouped(query, hits, similarity, keyword) -> (scores, labels or None)``:
    both at once (``None``: every scored hit in one group), which the rerank stage then
    calls instead of the two.
    """

    def wanted(self, hits: Sequence[FusedHit]) -> int:
        """Return how many fused hits it wants to see, given the first ones (their chunks
        loaded): e.g. all candidates when a conversation turn is among them (a turn's
        neighbours count only when they are candidates too), 0 when it has nothing to do.
        """
        ...

    def rerank_hits(
        self, query: str, hits: Sequence[FusedHit], similarity: np.ndarray | None,
        keyword: str | None,
    ) -> np.ndarray:
        """Score ``hits`` (fused, best first).

        :param similarity: ``(len(hits),)`` float64 cosine of each hit to the query, NaN
            where a chunk has no vector; ``None`` without a semantic arm.
        :param keyword: the keyword arm's name in ``hit.contributions`` (``None``: none).
        :returns: ``(len(hits),)`` float64, higher is better; NaN for a hit it leaves
            where fusion put it.
        """
        ...


@runtime_checkable
class Dedup(Protocol):
    """Collapses repetitions in an answer (or diversifies it)."""

    name: str

    def dedup(
        self, hits: Sequence[FusedHit], vectors: np.ndarray | None
    ) -> tuple[list[FusedHit], list[Collapsed]]:
        """Return the hits to keep, best first with ranks renumbered 1..n, and what went.

        A collapsing dedup keeps the input order; a diversifying one (e.g. MMR) may
        reorder the hits, but the first hit stays first. Every removed hit is reported.

        :param hits: fused hits, best first.
        :param vectors: ``(len(hits), dim)`` float32 unit-norm rows for ``hits``, zero
            rows where a chunk has no vector; ``None`` when no semantic arm is available.
        """
        ...


PROTOCOLS: dict[ArmKind, type] = {
    "storage": Storage,
    "keyword": KeywordArm,
    "embedder": Embedder,
    "semantic": SemanticArm,
    "reranker": Reranker,
    "dedup": Dedup,
}
