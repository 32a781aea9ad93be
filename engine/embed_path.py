"""Embedding a store's chunks after they are stored: the scope's embedding lock, the chunks
an ingest should embed (its own and those an earlier one left without a vector), and the
batches that write their vectors (:class:`EmbedPath`, a part of
:class:`~.pipeline.Pipeline`; ``octomem ingest``, ``reindex``, ``import``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .chunking import embedding_text
from .embedding_lock import EmbeddingLock
from .errors import EmbedderMismatchError
from .stopping import StopRequest
from .vector_reuse import any_vector, reusable
from .writes import ramped

if TYPE_CHECKING:
    from .assembly import Arms
    from .pipeline import AddReport

#: Called with how many chunks were just embedded (or stored).
Progress = Callable[[int], None]


class EmbedPath:
    """The embedding half of a :class:`~.pipeline.Pipeline`; the pipeline provides the
    attributes below."""

    arms: Arms
    settings: Any  # LoadedSettings: its ``retrieval.embed_batch_size``
    root: Path  # the scope's folder, where its embedding lock lives
    semantic_error: str | None
    _claim: EmbeddingLock | None  # held by :meth:`embedding`
    #: chunks given a vector stored for the same text instead of being embedded
    #: (:mod:`.vector_reuse`), counted since the pipeline was made
    vectors_reused: int

    @contextmanager
    def embedding(self) -> Iterator[None]:
        """Hold this scope's embedding lock shared (:mod:`.embedding_lock`) while the
        block stores and embeds chunks, so that another process's :meth:`to_embed` does
        not take them for chunks left behind; a no-op when held already or without a
        semantic arm. Enter it before any write transaction (it may wait)."""
        if self._claim is not None or self.arms.semantic is None:
            yield
            return
        lock = self._claim = EmbeddingLock(self.root)
        try:
            lock.share()
            yield
        finally:
            self._claim = None
            lock.release()

    def embed_missing(self, progress: Progress | None = None,
                      waiting: Callable[[], None] | None = None) -> int:
        """Embed every chunk of the scope without a vector (``octomem reindex``, an
        import) once no other process stores or embeds in this scope, as an ingest
        resumes chunks (:meth:`to_embed`): inside :meth:`embedding`, the lock taken
        exclusively first (``waiting`` is called before it waits), the chunks still
        without a vector then are the ones embedded, with the lock shared again, so that
        an ingest started meanwhile stores and embeds its own chunks, and none twice.

        :param progress: called with the number of chunks just embedded.
        :returns: number of chunks embedded.
        :raises EmbedderMismatchError: stored vectors belong to another model.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        with self.embedding():
            pending = None
            if self._claim is not None and self.arms.semantic is not None:
                self._claim.exclusive(waiting)
                pending = self.arms.semantic.missing()
                self._claim.share_again()
            return self.embed_pending(progress, pending)

    def to_embed(self, report: AddReport, waiting: Callable[[], None] | None = None
                 ) -> list[int]:
        """Return the ids of the chunks an add should embed, ascending: those it stored
        (``report.chunk_ids``) and those of the documents it found unchanged that have no
        vector of the configured embedder (an earlier add was killed, or its embedder
        failed, between storing and embedding them), which are set as ``report.resumed``.
        A document this add stored and then found again unchanged (one file reached twice,
        e.g. through a symlink beside it: its id is the resolved path) resumes nothing:
        its chunks are this add's, embedded once. Looks no further than the counts when
        the scope has no chunk without a vector.

        Inside :meth:`embedding`, with chunks to resume, it first waits until no other
        process stores or embeds in this scope (``waiting`` is called before it waits)
        and keeps only the chunks that still have no vector then: another ingest running
        at the same time embeds its own chunks once, and they are not resumed."""
        semantic = self.arms.semantic
        report.resumed = []
        if report.unchanged and semantic is not None and not self.semantic_error \
                and semantic.missing_count():
            missing = set(semantic.missing()).difference(report.chunk_ids)
            storage = self.arms.storage
            report.resumed = list(dict.fromkeys(
                c.id for d in report.unchanged for c in storage.document_chunks(d)
                if c.id in missing))
        if report.resumed and self._claim is not None and semantic is not None:
            self._claim.exclusive(waiting)
            still = set(semantic.missing())
            report.resumed = [c for c in report.resumed if c in still]
            return sorted([c for c in report.chunk_ids if c in still] + report.resumed)
        return sorted(report.chunk_ids + report.resumed)

    def embed_pending(
        self, progress: Progress | None = None, chunk_ids: Sequence[int] | None = None,
        stop: StopRequest | None = None,
    ) -> int:
        """Embed every chunk that has no vector of the configured embedder yet, in batches
        outside write transactions (``octomem reindex``); resumable, as each batch commits.
        A chunk whose embedding text a stored chunk already has a vector of this embedder
        for (the same document's earlier revision, a document of the same text: a file
        or transcript that moved) takes a copy of it, written in its batch's transaction,
        and is not embedded (:mod:`.vector_reuse`; counted in :attr:`vectors_reused`).

        :param progress: called with the number of chunks just embedded.
        :param chunk_ids: embed only these chunks (e.g. those just stored).
        :param stop: checked before each batch: once requested, the rest is left without
            a vector (its ``chunks_left`` says how much is left meanwhile).
        :returns: number of chunks given a vector (embedded or reused).
        :raises EmbedderMismatchError: stored vectors belong to another model.
        :raises EmbedderUnavailableError: the model cannot be loaded.
        """
        semantic = self.arms.semantic
        if semantic is None:
            return 0
        if self.semantic_error:
            raise EmbedderMismatchError(self.semantic_error)
        done = consumed = 0
        pending = semantic.missing() if chunk_ids is None else list(chunk_ids)
        reuse = bool(pending) and any_vector(self.arms.storage, semantic)
        if stop is not None:
            stop.embedding = True
        try:
            for ids in ramped(pending, self.settings.retrieval.embed_batch_size):  # 1st soon
                if stop is not None:
                    stop.chunks_left = len(pending) - consumed
                    if stop.requested:
                        break
                done += self._embed_batch(ids, progress, reuse)
                consumed += len(ids)
        finally:
            if stop is not None:
                stop.embedding, stop.chunks_left = False, 0
        return done

    def _embed_batch(self, ids: list[int], progress: Progress | None, reuse: bool) -> int:
        """Embed the chunks ``ids`` (those still stored) in one batch, ``reuse``: those a
        stored vector of the same text is found for excepted (:func:`.vector_reuse.reusable`),
        and store every vector in one transaction; return how many chunks got one."""
        semantic, embedder = self.arms.semantic, self.arms.embedder
        assert semantic is not None and embedder is not None
        storage = self.arms.storage
        chunks = storage.get_chunks(ids)
        if not chunks:
            return 0
        copied, copies = reusable(storage, semantic, chunks) if reuse else ([], None)
        skip = set(copied)
        rest = [c for c in chunks if c.id not in skip]
        vectors = embedder.embed_documents([embedding_text(c) for c in rest]) if rest else None
        with storage.transaction() as tx:
            if copies is not None:
                semantic.add(tx, copied, copies)
            if vectors is not None:
                semantic.add(tx, [c.id for c in rest], vectors)
        self.vectors_reused += len(copied)
        if progress:
            progress(len(chunks))
        return len(chunks)
