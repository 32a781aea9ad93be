"""The Protocol each arm kind implements, and the spec a plugin registers it with.

The storage kind's Protocols (:class:`Storage` and its optional capabilities) are in
:mod:`.storage_protocols`, and importable from here as every other kind's.

Scores are always higher-is-better inside the engine. Vectors are numpy ``float32``
arrays of shape ``(n, dim)``, L2-normalised so that a dot product is the cosine
similarity. Plugins need no base class: matching the Protocol is enough.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel

# the storage kind's Protocols live in storage_protocols; they are this module's API too
from .storage_protocols import (  # noqa: F401
    BulkStorage,
    CallLogStorage,
    PreparedBulkStorage,
    Storage,
    TextBulkStorage,
    VersionedStorage,
)
from .types import Chunk, Collapsed, Filters, FusedHit, Run

if TYPE_CHECKING:  # numpy is imported by the arms that make vectors, not at engine import
    import numpy as np

ArmKind = Literal["storage", "keyword", "embedder", "semantic", "reranker", "dedup"]
ARM_KINDS: tuple[ArmKind, ...] = ("storage", "keyword", "embedder", "semantic", "reranker", "dedup")


class NoOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options model of an arm that takes no options."""


@dataclass(frozen=True, slots=True)
class ArmContext:
    """What a factory gets besides its options.

    :param root: directory where this scope's files live (created if missing).
    :param storage: the assembled storage, for keyword and semantic arms; ``None``
        when the storage itself is being built.
    :param embedder: the assembled embedder, for the arms built after it (a semantic
        arm, a reranker, a dedup); ``None`` without one, or while it is being built.
    """

    root: Path
    storage: Any = None
    embedder: Any = None


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
    :param store_exists: a storage's ``store_exists(options, root) -> bool``: whether a
        store is at ``root`` already, creating nothing (a read of a scope without one
        answers empty instead of creating it). ``None``: the scope's folder existing
        stands for its store (the folder is created when a store is first opened).
    """

    kind: ArmKind
    name: str
    factory: Callable[[Any, ArmContext], Any]
    options_model: type[BaseModel] = NoOptions
    requires_storage: frozenset[str] = field(default_factory=frozenset)
    description: str = ""
    store_exists: Callable[[Any, Path], bool] | None = None


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
class StoredKeywordIndex(Protocol):
    """Optional capability of a keyword arm: index chunks its storage has just stored
    inside ``tx``, knowing only their ids (it reads their title and text from the
    storage itself, e.g. FTS5 by one ``INSERT ... SELECT`` from ``chunks``), so that an
    ingest need not make a :class:`Chunk` per stored chunk.
    """

    def index_stored(self, tx: Any, chunk_ids: Sequence[int]) -> bool:
        """Index the stored chunks ``chunk_ids`` inside ``tx``, as :meth:`KeywordArm.index`
        of those chunks would, and return True; or index nothing and return False (ids it
        cannot index this way), and the caller then calls :meth:`KeywordArm.index` with
        the chunks."""
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
    calls instead of the two. And ``warm(progress=None) -> bool``: load or build now what
    its first rerank would use (``Pipeline.warm(("reranker",))``; ``octomem ingest`` passes
    ``progress(done, total)``, called only while something is built). And
    ``neighbour_depth(hits) -> int``: the previous and next turns of that many first fused
    hits join the hits it scores, read from the storage with no arm's contribution
    (:mod:`octomem.engine.turn_neighbours`).
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
