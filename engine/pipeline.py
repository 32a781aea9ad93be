"""The assembled pipeline: write path (chunk, store, index; embedding the stored chunks:
:mod:`.embed_path`) and read path (arms, fusion, rerank, dedup, top_k: :mod:`.read_path`)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .arms import TokenCeilings, VersionedStorage
from .assembly import Arms, build_arms
from .chunking import CountTokens, split_text, word_count
from .chunking import embedding_text as embedding_text  # where callers import it
from .embed_path import EmbedPath, Progress
from .embedding_lock import EmbeddingLock
from .errors import (
    AmbiguousMatchError,
    EmbedderMismatchError,
    EmbedderUnavailableError,
    NotFoundError,
)
from .manager import ArmRegistry
from .read_path import ReadPath
from .relocation import moved_away
from .settings import LoadedSettings
from .stopping import StopRequest
from .token_counts import BatchCounts, Ceilings, title_budget
from .types import Chunk, Document, new_chunk
from .writes import DOCS_PER_TRANSACTION as DOCS_PER_TRANSACTION  # where callers import it
from .writes import TEXT_PER_TRANSACTION as TEXT_PER_TRANSACTION
from .writes import prepared, transactions, write_batch

if TYPE_CHECKING:  # imported where used: the MCP server lists tools before numpy loads
    pass



def content_hash(document: Document) -> str:
    """Return the sha256 hex digest of a document's title and text, and of its tags and
    event time when it has them (change detection: a Markdown file whose front matter
    changed only its tags or date is stored again, its front matter being no part of its
    text; one without either hashes as before they counted)."""
    basis = f"{document.title or ''}\x00{document.text}"
    if document.tags:
        basis += "\x00tags:" + "\x1f".join(document.tags)
    if document.event_time is not None:
        basis += f"\x00event_time:{document.event_time!r}"
    return hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(slots=True)
class AddReport:
    """What an ingest did.

    :param seconds_indexing: wall time of storage + keyword index writes (seconds).
    :param seconds_embedding: wall time of embedding + vector writes (seconds).
    :param semantic_error: why no vectors were written, or ``None``.
    :param chunk_ids: ids of the chunks this call stored, ascending.
    :param resumed: ids of chunks of documents found unchanged that had no vector (an
        earlier add was killed, or its embedder failed, before embedding them): embedded
        with this call's own (:meth:`Pipeline.to_embed`).
    :param stopped_unembedded: chunks this call set out to embed and left without a
        vector because a stop was requested (:mod:`.stopping`); 0 when none was.
    :param moved: ids of documents read unchanged from a file other than the one they
        were stored from, which is gone (:mod:`.relocation`): stored again (also in
        ``replaced``), so that they name the file they are in now.
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
    resumed: list[int] = field(default_factory=list)
    stopped_unembedded: int = 0
    moved: list[str] = field(default_factory=list)


class Pipeline(ReadPath, EmbedPath):
    """One scope's storage and arms, assembled from settings.

    :param root: the scope's directory (default ``settings.data_dir``).
    :param fresh: the store is being created: when it cannot be set up (a full disk
        refuses the vector set's row) it is deleted again, through the storage's optional
        ``discard_if_empty()`` ("an ingest that stores nothing creates no store", trial 19
        K3); an existing store is only closed.
    :raises OctomemError: unknown arm names, impossible combinations, bad options; the
        store cannot be written.
    """

    def __init__(
        self, loaded: LoadedSettings, registry: ArmRegistry, root: Path | None = None,
        fresh: bool = False,
    ) -> None:
        self.loaded = loaded
        self.settings = loaded.settings
        self.root = root or self.settings.data_dir
        self.arms: Arms = build_arms(loaded, registry, self.root)
        self.semantic_error: str | None = None
        self._claim: EmbeddingLock | None = None  # held by :meth:`embedding`
        self.vectors_reused = 0  # chunks given a stored vector of the same text: .vector_reuse
        self._counter: tuple[CountTokens, int] | None = None
        self._ceilings: Ceilings | None = None
        #: build the next batches' storage rows ahead (:func:`~.writes.prepare`): False
        #: after a batch that held a stored id (a re-ingest would waste them)
        self.rows_ahead = True
        if self.arms.semantic is not None:
            embedder = self.arms.embedder
            try:
                with self.arms.storage.transaction() as tx:
                    self.arms.semantic.bind(tx, embedder.model_id, embedder.dim)
            except EmbedderMismatchError as exc:
                self.semantic_error = str(exc)
            except BaseException:
                discard = getattr(self.arms.storage, "discard_if_empty", None)
                if fresh and callable(discard):
                    discard()  # closes it too
                else:
                    self.arms.storage.close()
                raise

    def warm(self, kinds: Sequence[str] = ("semantic", "keyword", "storage")) -> list[str]:
        """Let these kinds of arms load now what their first search would (their optional
        ``warm()`` method, e.g. ``sqlite-vec``'s in-RAM vectors, ``fts5``'s in-RAM
        postings, the ``sqlite`` storage's chunk pages read into the page cache, the
        ``conversation`` reranker's word table, built once per machine), so that searches
        stop paying for it.

        :param kinds: arm kinds, among ``"semantic"``, ``"keyword"``, ``"storage"`` and
            ``"reranker"`` (not by default: building its table costs ~30 s once), warmed
            in order.
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

    def _chunk_texts(self, document: Document, count: CountTokens | None = None) -> list[str]:
        """Return the texts of ``document``'s chunks, in order (:func:`split_text` within
        the budget its title leaves; a text within budget by ``count``'s ceiling: itself,
        stripped)."""
        if isinstance(count, BatchCounts) and count.fits(document):
            return [document.text.strip()]  # what split_text makes of a text within budget
        counter, budget = self._token_counter()
        count = count or counter
        if document.title:
            budget = title_budget(budget, count([document.title])[0])
        return split_text(document.text, budget, count)

    def _chunk(self, document: Document, count: CountTokens | None = None) -> list[Chunk]:
        return self._chunks_of(document, self._chunk_texts(document, count))

    @staticmethod
    def _chunks_of(document: Document, texts: Sequence[str]) -> list[Chunk]:
        """Return ``document``'s chunks of ``texts`` (ordinal ``i`` holds ``texts[i]``; not
        stored: id and revision 0)."""
        # Chunk(document_id=..., ordinal=i, text=t, kind=..., tags=..., created_at=...,
        # title=..., uri=..., metadata=...), the other fields their defaults (new_chunk:
        # slots set directly)
        doc_id, kind, tags, created = document.id, document.kind, document.tags, \
            document.created_at
        title, uri, metadata = document.title, document.uri, document.metadata
        return [new_chunk(doc_id, i, t, 0, kind, tags, created, title, uri, metadata,
                          0.0, None, 0) for i, t in enumerate(texts)]

    def _write(
        self, tx: Any, document: Document, report: AddReport, count: CountTokens | None = None
    ) -> None:
        storage, keyword = self.arms.storage, self.arms.keyword
        old = storage.get_document(document.id)
        if old is not None and content_hash(old) == content_hash(document):
            if not moved_away(old, document):
                report.unchanged.append(document.id)
                return
            report.moved.append(document.id)  # stored again: under the path it has now
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
        embed: bool = True, per_transaction: int | None = None, stop: StopRequest | None = None,
    ) -> AddReport:
        """Store, index and embed documents.

        Rows and keyword index are written in one transaction per batch of at most
        :data:`~.writes.DOCS_PER_TRANSACTION` documents and
        :data:`~.writes.TEXT_PER_TRANSACTION` characters
        (or ``per_transaction`` documents), the next batch counted and chunked in a worker
        thread meanwhile (:func:`~.writes.prepared`); embedding happens afterwards, outside
        any write transaction, so a chunk is searchable by its words before its vector
        exists. A document whose id exists with the same title and text is left alone;
        with different content it is replaced (on a :class:`VersionedStorage`: stored as
        its next revision, the old chunks kept as superseded so ``as_of`` finds them).

        :param progress: called with the number of documents just written.
        :param embed: embed now the chunks this call stored and those of the documents it
            found unchanged that have no vector (:meth:`to_embed`; otherwise
            :meth:`embed_pending` later); other chunks without a vector are left to
            ``octomem reindex``.
        :param per_transaction: documents written per transaction, whatever their length
            (a transcript is written in one: all its turns or none); ``None``: the
            default batches.
        :param stop: embedding stops before its next batch once this is requested
            (``report.stopped_unembedded`` counts what it left without a vector).
        :raises InvalidQueryError: a document has empty text.
        """
        report = AddReport()
        with self.embedding() if embed else nullcontext():  # other ingests: .embedding_lock
            start = time.perf_counter()
            for ready in prepared(self, transactions(documents, per_transaction)):
                with self.arms.storage.transaction() as tx:
                    write_batch(self, tx, ready.batch, report, ready.count, ready.chunks,
                                ready.rows, ready.texts)
                if progress:
                    progress(len(ready.batch))
            report.seconds_indexing = time.perf_counter() - start
            if embed:
                start = time.perf_counter()
                try:
                    pending = self.to_embed(report)
                    report.embedded = self.embed_pending(chunk_ids=pending, stop=stop)
                    if stop is not None and stop.requested:
                        report.stopped_unembedded = len(pending) - report.embedded
                except (EmbedderUnavailableError, EmbedderMismatchError) as exc:
                    report.semantic_error = str(exc)
                report.seconds_embedding = time.perf_counter() - start
        return report

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
