"""The assembled pipeline: write path (chunk, store, index, embed) and read path
(arms, fusion, rerank, dedup, top_k)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .arms import TokenCeilings, VersionedStorage
from .assembly import Arms, build_arms
from .chunking import CountTokens, split_text, word_count
from .concurrency import run_timed, start_timed
from .errors import (
    AmbiguousMatchError,
    EmbedderMismatchError,
    EmbedderUnavailableError,
    InvalidQueryError,
    NotFoundError,
)
from .fusion import Fused, order_documents, reciprocal_rank_fusion, weighted_score_fusion
from .manager import ArmRegistry
from .model_load import load_model
from .relevance import JUDGED_HITS, HitJudge
from .rerank import more_wanted, rerank_depth, rerank_stage, similarities
from .settings import LoadedSettings
from .token_counts import BatchCounts, Ceilings, title_budget
from .types import Answer, Chunk, Document, FusedHit, Query, Run
from .writes import DOCS_PER_TRANSACTION as DOCS_PER_TRANSACTION  # where callers import it
from .writes import TEXT_PER_TRANSACTION as TEXT_PER_TRANSACTION
from .writes import ramped, transactions, write_batch

if TYPE_CHECKING:  # imported where used: the MCP server lists tools before numpy loads
    import numpy as np

Progress = Callable[[int], None]


def content_hash(document: Document) -> str:
    """Return the sha256 hex digest of a document's title and text (change detection)."""
    return hashlib.sha256(f"{document.title or ''}\x00{document.text}".encode()).hexdigest()


def embedding_text(chunk: Chunk) -> str:
    """Return the text a chunk is embedded as: its title (if any) and its text."""
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


@dataclass(slots=True)
class AddReport:
    """What an ingest did.

    :param seconds_indexing: wall time of storage + keyword index writes (seconds).
    :param seconds_embedding: wall time of embedding + vector writes (seconds).
    :param semantic_error: why no vectors were written, or ``None``.
    :param chunk_ids: ids of the chunks this call stored, ascending.
    """

    added: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    chunks: int = 0
    embedded: int = 0
    seconds_indexing: float = 0.0
    seconds_embedding: float = 0.0
    semantic_error: str | None = None
    chunk_ids: list[int] = field(default_factory=list)


class Pipeline:
    """One scope's storage and arms, assembled from settings.

    :param root: the scope's directory (default ``settings.data_dir``).
    :raises OctomemError: unknown arm names, impossible combinations, bad options.
    """

    def __init__(
        self, loaded: LoadedSettings, registry: ArmRegistry, root: Path | None = None
    ) -> None:
        self.loaded = loaded
        self.settings = loaded.settings
        self.root = root or self.settings.data_dir
        self.arms: Arms = build_arms(loaded, registry, self.root)
        self.semantic_error: str | None = None
        self._counter: tuple[CountTokens, int] | None = None
        self._ceilings: Ceilings | None = None
        if self.arms.semantic is not None:
            embedder = self.arms.embedder
            try:
                with self.arms.storage.transaction() as tx:
                    self.arms.semantic.bind(tx, embedder.model_id, embedder.dim)
            except EmbedderMismatchError as exc:
                self.semantic_error = str(exc)

    def warm(self, kinds: Sequence[str] = ("semantic", "keyword")) -> list[str]:
        """Let these kinds of arms load now what their first search would (their optional
        ``warm()`` method, e.g. ``sqlite-vec``'s in-RAM vectors or ``fts5``'s in-RAM
        postings), so that searches stop paying for it.

        :param kinds: arm kinds, among ``"semantic"`` and ``"keyword"``, warmed in order.
        :returns: the names of the arms that loaded something (an arm's ``warm()`` may
            return False for "nothing to load").
        :raises Exception: whatever an arm's ``warm()`` raises (its first search would too).
        """
        warmed = []
        for kind in kinds:
            arm = getattr(self.arms, kind)
            warm = getattr(arm, "warm", None)
            if not callable(warm) or (kind == "semantic" and self.semantic_error):
                continue
            if warm() is not False:
                warmed.append(str(arm.name))
        return warmed

    # ---- write path -------------------------------------------------------------

    def _token_counter(self) -> tuple[CountTokens, int]:
        """Return the embedder's token counter and budget, or a word estimate without one."""
        if self._counter is None:
            embedder = self.arms.embedder
            if embedder is None:
                self._counter = (word_count, 254)
            else:
                try:
                    embedder.count_tokens(["probe"])
                    self._counter = (embedder.count_tokens, embedder.max_tokens)
                    if isinstance(embedder, TokenCeilings):
                        self._ceilings = embedder.token_ceilings
                except EmbedderUnavailableError:  # e.g. a hub model whose tokenizer isn't cached
                    self._counter = (word_count, embedder.max_tokens)
        return self._counter

    def _counted(self, documents: Sequence[Document]) -> BatchCounts:
        """Return the token counter of a batch: titles and the texts that may not fit
        counted in one call (one pass over a transaction's batch instead of one per
        document), texts within budget by the embedder's ceiling not at all
        (:mod:`.token_counts`)."""
        count, budget = self._token_counter()
        return BatchCounts(count, budget, self._ceilings, documents)

    def _chunk(self, document: Document, count: CountTokens | None = None) -> list[Chunk]:
        counter, budget = self._token_counter()
        if isinstance(count, BatchCounts) and count.fits(document):
            texts = [document.text.strip()]  # what split_text makes of a text within budget
        else:
            count = count or counter
            if document.title:
                budget = title_budget(budget, count([document.title])[0])
            texts = split_text(document.text, budget, count)
        return [
            Chunk(
                document_id=document.id, ordinal=i, text=t, kind=document.kind,
                tags=document.tags, created_at=document.created_at, title=document.title,
                uri=document.uri, metadata=document.metadata,
            )
            for i, t in enumerate(texts)
        ]

    def _write(
        self, tx: Any, document: Document, report: AddReport, count: CountTokens | None = None
    ) -> None:
        storage, keyword = self.arms.storage, self.arms.keyword
        old = storage.get_document(document.id)
        if old is not None and content_hash(old) == content_hash(document):
            report.unchanged.append(document.id)
            return
        if old is not None and isinstance(storage, VersionedStorage):
            # a new revision: the old chunks stay, superseded, so as_of still finds them
            stored, _ = storage.revise_document(tx, document, self._chunk(document, count))
            report.replaced.append(document.id)
        else:
            if old is not None:
                self._delete(tx, document.id)
                report.replaced.append(document.id)
            else:
                report.added.append(document.id)
            stored = storage.add_document(tx, document, self._chunk(document, count))
        if keyword is not None:
            keyword.index(tx, stored)
        report.chunks += len(stored)
        report.chunk_ids.extend(c.id for c in stored)

    def add(
        self, documents: Iterable[Document], progress: Progress | None = None, *,
        embed: bool = True, per_transaction: int | None = None,
    ) -> AddReport:
        """Store, index and embed documents.

        Rows and keyword index are written in one transaction per batch of at most
        :data:`~.writes.DOCS_PER_TRANSACTION` documents and
        :data:`~.writes.TEXT_PER_TRANSACTION` characters
        (or ``per_transaction`` documents); embedding happens afterwards, outside
        any write transaction, so a chunk is searchable by its words before its vector
        exists. A document whose id exists with the same title and text is left alone;
        with different content it is replaced (on a :class:`VersionedStorage`: stored as
        its next revision, the old chunks kept as superseded so ``as_of`` finds them).

        :param progress: called with the number of documents just written.
        :param embed: embed the chunks this call stored now (otherwise :meth:`embed_pending`
            later); older chunks without a vector are left to ``octomem reindex``.
        :param per_transaction: documents written per transaction, whatever their length
            (a transcript is written in one: all its turns or none); ``None``: the
            default batches.
        :raises InvalidQueryError: a document has empty text.
        """
        report = AddReport()
        start = time.perf_counter()
        for batch in transactions(documents, per_transaction):
            for doc in batch:
                if not isinstance(doc.text, str) or not doc.text.strip():
                    raise InvalidQueryError(f"document {doc.id!r}: text is empty")
            count = self._counted(batch)
            with self.arms.storage.transaction() as tx:
                write_batch(self, tx, batch, report, count)
            if progress:
                progress(len(batch))
        report.seconds_indexing = time.perf_counter() - start
        if embed:
            start = time.perf_counter()
            try:
                report.embedded = self.embed_pending(chunk_ids=report.chunk_ids)
            except (EmbedderUnavailableError, EmbedderMismatchError) as exc:
                report.semantic_error = str(exc)
            report.seconds_embedding = time.perf_counter() - start
        return report

    def embed_pending(
        self, progress: Progress | None = None, chunk_ids: Sequence[int] | None = None
    ) -> int:
        """Embed every chunk that has no vector of the configured embedder yet, in batches
        outside write transactions (``octomem reindex``); resumable, as each batch commits.

        :param progress: called with the number of chunks just embedded.
        :param chunk_ids: embed only these chunks (e.g. those just stored).
        :returns: number of chunks embedded.
        :raises EmbedderMismatchError: stored vectors belong to another model.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        semantic, embedder = self.arms.semantic, self.arms.embedder
        if semantic is None:
            return 0
        if self.semantic_error:
            raise EmbedderMismatchError(self.semantic_error)
        done = 0
        pending = semantic.missing() if chunk_ids is None else list(chunk_ids)
        for ids in ramped(pending, self.settings.retrieval.embed_batch_size):  # first soon
            chunks = self.arms.storage.get_chunks(ids)
            if not chunks:
                continue
            vectors = embedder.embed_documents([embedding_text(c) for c in chunks])
            with self.arms.storage.transaction() as tx:
                semantic.add(tx, [c.id for c in chunks], vectors)
            done += len(chunks)
            if progress:
                progress(len(chunks))
        return done

    def _delete(self, tx: Any, document_id: str) -> list[int]:
        removed = self.arms.storage.delete_document(tx, document_id)
        if removed and self.arms.keyword is not None:
            self.arms.keyword.remove(tx, removed)
        if removed and self.arms.semantic is not None:
            self.arms.semantic.remove(tx, removed)
        return removed

    def forget(self, id_or_text: str) -> Document:
        """Delete one document, found by id or else by its exact text.

        :returns: the deleted document.
        :raises NotFoundError: no document has that id or text.
        :raises AmbiguousMatchError: the text matches several documents; none is deleted.
        """
        storage = self.arms.storage
        doc = storage.get_document(id_or_text)
        if doc is None:
            matches = storage.find_documents(id_or_text)
            if not matches:
                raise NotFoundError(f"nothing stored has the id or exact text {id_or_text[:80]!r}")
            if len(matches) > 1:
                raise AmbiguousMatchError(id_or_text, [(d.id, d.text) for d in matches])
            doc = matches[0]
        with storage.transaction() as tx:
            self._delete(tx, doc.id)
        return doc

    # ---- read path --------------------------------------------------------------

    def _runs(self, query: Query, k: int, answer: Answer) -> tuple[list[Run], Any]:
        """Run the keyword arm (on a worker thread while the semantic half runs, when
        ``retrieval.parallel_arms``) and the semantic arm; keyword run first.

        :returns: the runs and the query's vector (``None`` when no semantic arm ran)."""
        keyword, semantic = self.arms.keyword, self.arms.semantic
        if keyword is None:
            return self._semantic_runs(query, k, answer)
        parallel = semantic is not None and not self.semantic_error
        start = start_timed if parallel and self.settings.retrieval.parallel_arms else run_timed
        pending = start(keyword.search, query.text, query.filters, k)
        answer.arms_ran.append(keyword.name)
        runs, vector = self._semantic_runs(query, k, answer)
        run, answer.timings_ms[keyword.name] = pending.result()
        return [run, *runs], vector

    def _single_arm(self) -> bool:
        """True when at most one retrieval arm can run (keyword only, or semantic only)."""
        semantic = self.arms.semantic is not None and not self.semantic_error
        return (self.arms.keyword is None) or not semantic

    def _semantic_runs(self, query: Query, k: int, answer: Answer) -> tuple[list[Run], Any]:
        semantic = self.arms.semantic
        if semantic is None:
            return [], None
        if self.semantic_error:
            answer.arms_unavailable[semantic.name] = self.semantic_error
            return [], None
        try:
            loading = load_model(self.arms.embedder)
            start = time.perf_counter()
            vector = self.arms.embedder.embed_query(query.text)
        except EmbedderUnavailableError as exc:
            answer.arms_unavailable[semantic.name] = str(exc)
            return [], None
        if loading:
            answer.timings_ms["load_model"] = loading
        answer.timings_ms["embed_query"] = (time.perf_counter() - start) * 1e3
        start = time.perf_counter()
        run = semantic.search(vector, query.filters, k)
        answer.timings_ms[semantic.name] = (time.perf_counter() - start) * 1e3
        answer.arms_ran.append(semantic.name)
        return [run], vector

    def _fuse(self, runs: list[Run]) -> list[Fused]:
        retrieval = self.settings.retrieval
        if retrieval.fusion == "weighted":
            return weighted_score_fusion(runs, retrieval.weights)
        return reciprocal_rank_fusion(runs, retrieval.rrf_k, retrieval.weights)

    def search(self, query: Query) -> Answer:
        """Answer a query: every retrieval arm (filters inside each), fusion, optional
        rerank of the fused top-N, dedup, then ``top_k``.

        :returns: an :class:`Answer` whose hits are best first, with each arm's rank and
            raw score in ``contributions`` and what did not run in ``arms_unavailable``.
        :raises InvalidQueryError: empty query text or ``top_k < 1``.
        """
        if not isinstance(query.text, str) or not query.text.strip():
            raise InvalidQueryError("query: empty; give at least one word to search for")
        if query.top_k < 1:
            raise InvalidQueryError(f"top_k: must be >= 1, got {query.top_k}")
        total = time.perf_counter()
        answer = Answer(hits=[], arms_ran=[], arms_unavailable={}, semantic_available=False)
        retrieval, reranker = self.settings.retrieval, self.arms.reranker
        depth = max(query.top_k * 3, rerank_depth(reranker, retrieval.rerank_top_n))
        k = max(self.settings.retrieval.candidate_k, query.top_k)
        if self._single_arm() and self.settings.retrieval.fusion == "rrf":
            k = min(k, depth)  # RRF of one run keeps its order: hits past depth go unused
        runs, query_vector = self._runs(query, k, answer)
        fused = self._fuse(runs)
        answer = replace(answer, semantic_available=self.arms.semantic is not None
                         and self.arms.semantic.name in answer.arms_ran,
                         chunks_without_vector=self._without_vector())
        hits = self._load(fused[:depth])
        extra = more_wanted(reranker, hits, depth)
        if extra:
            hits += self._load(fused[depth:depth + extra], len(hits))
        hits = order_documents(hits, fused, retrieval.fusion, retrieval.document_fusion,
                               retrieval.weights)
        vectors = self._vectors(hits)
        similarity = similarities(vectors, query_vector)
        if reranker is not None and hits:
            hits, vectors, similarity = rerank_stage(
                reranker, self.arms.keyword, query.text, hits, vectors, similarity,
                retrieval.rerank_top_n, answer, keep=depth)
        cos = {} if similarity is None else {
            h.chunk.id: float(c) for h, c in zip(hits, similarity, strict=True)}
        if vectors is not None:
            embedded = vectors.any(axis=1).tolist()  # one call, not one per hit
            answer.unembedded_hits.extend(
                h.chunk.id for h, v in zip(hits, embedded, strict=True) if not v
            )
        if self.arms.dedup is not None and hits:
            hits, collapsed = self.arms.dedup.dedup(hits, vectors)
            answer.collapsed.extend(collapsed)
        judge = HitJudge(self.settings.retrieval, self.arms, runs, query.filters,
                         [embedding_text(h.chunk) for h in hits[:JUDGED_HITS]])
        hits = [replace(h, rank=i, relevance=judge(
            query.text, h, embedding_text(h.chunk), cos.get(h.chunk.id)))
                for i, h in enumerate(hits[: query.top_k], start=1)]
        kept = {h.chunk.id for h in hits}
        answer.unembedded_hits[:] = [i for i in answer.unembedded_hits if i in kept]
        answer.timings_ms["total"] = (time.perf_counter() - total) * 1e3
        return replace(answer, hits=hits)

    def _load(self, fused: Sequence[Fused], before: int = 0) -> list[FusedHit]:
        """Load the chunks of ``fused`` as hits ranked from ``before + 1`` (a chunk deleted
        meanwhile is skipped)."""
        chunks = {c.id: c for c in self.arms.storage.get_chunks([f.chunk_id for f in fused])}
        return [
            FusedHit(chunks[f.chunk_id], f.score, rank, dict(f.contributions))
            for rank, f in enumerate((f for f in fused if f.chunk_id in chunks), before + 1)
        ]

    def _without_vector(self) -> int:
        """Return how many chunks the semantic arm cannot see (no vector of this embedder)."""
        if self.arms.semantic is None or self.semantic_error:
            return 0
        return int(self.arms.semantic.missing_count())

    def _vectors(self, hits: Sequence[FusedHit]) -> np.ndarray | None:
        if self.arms.semantic is None or self.semantic_error or not hits:
            return None
        return self.arms.semantic.vectors([h.chunk.id for h in hits])

    # ---- status -----------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Return counts, configured arms, the embedder's identity and semantic availability."""
        arms = self.arms
        counts = arms.storage.counts()
        missing = arms.semantic.missing_count() if arms.semantic is not None else counts["chunks"]
        return {
            "root": str(self.root),
            "documents": counts["documents"],
            "chunks": counts["chunks"],
            "chunks_without_vector": missing,
            "size_bytes": arms.storage.size_bytes(),
            "arms": {
                kind: getattr(arms, kind).name if getattr(arms, kind) is not None else None
                for kind in ("storage", "keyword", "embedder", "semantic", "reranker", "dedup")
            },
            "embedder_model": arms.embedder.model_id if arms.embedder is not None else None,
            "semantic_available": arms.semantic is not None and self.semantic_error is None,
            "semantic_error": self.semantic_error,
        }

    def close(self) -> None:
        """Close the storage."""
        self.arms.storage.close()
