"""The index cache: a corpus is stored, indexed and embedded once per embedder.

One cache entry per (corpus, chunking embedder) pair, keyed by the sha256 of
``corpus.jsonl``, the embedder's ``model_id`` and ``max_tokens`` (they decide the chunks)
and the storage's name and options. An entry is a scope directory that every
combination reading it opens with its own settings, plus ``vectors.npy``: the
embedder's vectors of every stored chunk, computed once and copied into each semantic
arm's index. Steps are recorded in ``build.json`` as they finish, so an interrupted or
extended run (a new keyword arm, a new semantic arm) only does what is missing; the
vectors are written batch by batch (:mod:`.partial_vectors`), so an interrupted
embedding resumes where it stopped. A smoke run (``--limit``, :mod:`.smoke`) stores only
its subset of the corpus, in an entry of its own.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import platformdirs

from octomem.engine.arms import ArmContext
from octomem.engine.assembly import arm_options
from octomem.engine.errors import OctomemError
from octomem.engine.manager import ArmRegistry
from octomem.engine.memory.sources import BEIR_READER_VERSION, beir_documents, count_lines
from octomem.engine.pipeline import Pipeline, embedding_text
from octomem.engine.settings import LoadedSettings
from octomem.engine.types import Chunk

from .dataset import BeirDataset
from .partial_vectors import PartialVectors

#: Chunks per keyword-index or vector-index write transaction while building.
WRITE_BATCH = 512
BUILD_FILE = "build.json"
VECTORS_FILE = "vectors.npy"
IDS_FILE = "chunk_ids.npy"

#: ``settings_for(overrides)`` returns the user's settings with nested overrides on top.
SettingsFor = Callable[[dict[str, Any]], LoadedSettings]
#: ``progress(label, total)`` returns ``advance(n)`` for one step of work; a ``total`` of
#: ``None`` is a phase whose work is not counted (the first ``advance`` ends it).
ProgressFor = Callable[[str, int | None], Callable[[int], None]]
#: ``lookup(chunks)`` returns their ``(len(chunks), dim)`` float32 vectors, computed earlier.
VectorsFor = Callable[[Sequence[Chunk]], np.ndarray]


def default_cache_dir() -> Path:
    """Return ``<user cache dir>/octomem/bench``."""
    return platformdirs.user_cache_path("octomem") / "bench"


def no_progress(label: str, total: int | None) -> Callable[[int], None]:
    """A :data:`ProgressFor` that reports nothing."""
    return lambda n: None


@dataclass(slots=True)
class CacheEntry:
    """One built scope directory and what building it cost.

    :param steps: step name (``storage``, ``keyword:<arm>``, ``vectors``,
        ``semantic:<arm>``) -> ``{"seconds": s, "bytes": on-disk growth, ...}``.
    """

    root: Path
    key: dict[str, Any]
    steps: dict[str, dict[str, Any]] = field(default_factory=dict)

    def save(self) -> None:
        """Write ``build.json`` (key and finished steps)."""
        text = json.dumps({"key": self.key, "steps": self.steps}, indent=2, sort_keys=True)
        (self.root / BUILD_FILE).write_text(text + "\n", encoding="utf-8")

    def index_bytes(self, keyword: str | None, semantic: str | None) -> int:
        """Return the on-disk bytes a combination reads: storage plus its arms' indexes."""
        total = int(self.steps.get("storage", {}).get("bytes", 0))
        for step in (
            f"keyword:{keyword}" if keyword else "",
            f"semantic:{semantic}" if semantic else "",
        ):
            total += int(self.steps.get(step, {}).get("bytes", 0))
        return total


def _size(pipeline: Pipeline) -> int:
    return int(pipeline.arms.storage.size_bytes())


def _settled_size(open_bare: Callable[[], Pipeline]) -> int:
    """Return the storage's bytes on disk once no write is pending.

    Opened and closed once first: closing the last connection lets a storage settle
    (SQLite checkpoints its write-ahead log into the file), so the second look counts
    each byte once, not in both the file and a leftover log.
    """
    open_bare().close()
    pipeline = open_bare()
    try:
        return _size(pipeline)
    finally:
        pipeline.close()


def _iter_batches(pipeline: Pipeline, size: int) -> Iterator[list[Chunk]]:
    batch: list[Chunk] = []
    for chunk in pipeline.arms.storage.iter_chunks():
        batch.append(chunk)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


class IndexCache:
    """Builds and reuses cache entries for one dataset.

    :param cache_dir: where entries live (default :func:`default_cache_dir`).
    :param settings_for: turns nested overrides into loaded settings (user layers below).
    :param progress: progress reporter for long steps.
    """

    def __init__(
        self,
        dataset: BeirDataset,
        registry: ArmRegistry,
        settings_for: SettingsFor,
        cache_dir: Path | None = None,
        progress: ProgressFor | None = None,
    ) -> None:
        self.dataset = dataset
        self.registry = registry
        self.settings_for = settings_for
        self.cache_dir = Path(cache_dir or default_cache_dir())
        self.progress = progress or no_progress
        #: number of ``embed_documents`` calls made by this object (tests check reuse).
        self.embed_calls = 0

    def _open(self, root: Path, **pipeline: str | None) -> Pipeline:
        arms = {
            "keyword": None,
            "embedder": None,
            "semantic": None,
            "reranker": None,
            "dedup": None,
            **pipeline,
        }
        loaded = self.settings_for({"pipeline": arms})
        return Pipeline(loaded, self.registry, root)

    def key(self, chunker: str | None) -> dict[str, Any]:
        """Return the identity of the entry for ``chunker`` (an embedder name or ``None``)."""
        loaded = self.settings_for({})
        storage = loaded.settings.pipeline.storage
        key: dict[str, Any] = {
            "dataset": self.dataset.name,
            "corpus_sha256": self.dataset.corpus_sha256,
            "reader": BEIR_READER_VERSION,
            "storage": storage,
            "storage_options": loaded.settings.arms.get(storage, {}),
            "embedder": None,
            "model_id": None,
            "max_tokens": None,
        }
        subset = self.dataset.extra.get("subset")
        if subset is not None:  # a smoke run's index (benchmarks.smoke): its own entry
            key["subset_sha256"] = subset["sha256"]
        if chunker:
            spec = self.registry.get("embedder", chunker)
            embedder = spec.factory(arm_options(spec, loaded), ArmContext(root=self.cache_dir))
            key.update(embedder=chunker, model_id=embedder.model_id, max_tokens=embedder.max_tokens)
        return key

    def entry(self, chunker: str | None) -> CacheEntry:
        """Return the entry for ``chunker``, stored and chunked, building it if needed."""
        key = self.key(chunker)
        digest = _digest(key)
        root = (
            self.cache_dir
            / f"{self.dataset.name}-{self.dataset.corpus_sha256[:12]}"
            / (f"{chunker or 'words'}-{digest[:12]}")
        )
        build = root / BUILD_FILE
        if build.is_file():
            data = json.loads(build.read_text(encoding="utf-8"))
            if data.get("key") == key and "storage" in data.get("steps", {}):
                return CacheEntry(root, key, data["steps"])
        if root.exists():
            shutil.rmtree(root)  # an interrupted build: start again
        root.mkdir(parents=True)
        entry = CacheEntry(root, key)
        self._store(entry, chunker)
        return entry

    def _store(self, entry: CacheEntry, chunker: str | None) -> None:
        subset = self.dataset.extra.get("subset")
        wanted = set(subset["ids"]) if subset is not None else None
        total = len(wanted) if wanted is not None else count_lines(self.dataset.corpus_path)
        how = f"chunks sized for the {chunker} tokenizer" if chunker else "chunks of words"
        advance = self.progress(f"storing {self.dataset.name} ({how})", total)
        pipeline = self._open(entry.root, embedder=chunker)
        documents = beir_documents(self.dataset.folder)
        if wanted is not None:
            documents = (d for d in documents if d.id in wanted)
        try:
            report = pipeline.add(documents, advance, embed=False)
            counts = pipeline.arms.storage.counts()
        finally:
            pipeline.close()
        size = _settled_size(lambda: self._open(entry.root))
        entry.steps["storage"] = {
            "seconds": report.seconds_indexing,
            "bytes": size,
            "documents": counts["documents"],
            "chunks": counts["chunks"],
        }
        entry.save()

    def document_ids(self, entry: CacheEntry, chunk_ids: Sequence[int]) -> dict[int, str]:
        """Return chunk id -> id of its document, for the stored chunks among ``chunk_ids``."""
        pipeline = self._open(entry.root)
        try:
            chunks = pipeline.arms.storage.get_chunks(sorted({int(i) for i in chunk_ids}))
        finally:
            pipeline.close()
        return {c.id: c.document_id for c in chunks}

    def ensure_keyword(self, entry: CacheEntry, keyword: str) -> None:
        """Index every stored chunk through keyword arm ``keyword`` once (timed)."""
        step = f"keyword:{keyword}"
        if step in entry.steps:
            return
        before = _settled_size(lambda: self._open(entry.root))
        pipeline = self._open(entry.root, keyword=keyword)
        try:
            arm, storage = pipeline.arms.keyword, pipeline.arms.storage
            advance = self.progress(f"indexing {keyword}", storage.counts()["chunks"])
            start = time.perf_counter()
            for batch in _iter_batches(pipeline, WRITE_BATCH):
                with storage.transaction() as tx:
                    arm.index(tx, batch)
                advance(len(batch))
            seconds = time.perf_counter() - start
        finally:
            pipeline.close()
        grown = _settled_size(lambda: self._open(entry.root)) - before
        entry.steps[step] = {"seconds": seconds, "bytes": max(grown, 0)}
        entry.save()

    def _embed(
        self, entry: CacheEntry, embedder: str, precomputed: VectorsFor | None = None
    ) -> None:
        if "vectors" in entry.steps and (entry.root / VECTORS_FILE).is_file():
            return
        pipeline = self._open(entry.root, embedder=embedder)
        try:
            emb = pipeline.arms.embedder
            batch_size = pipeline.settings.retrieval.embed_batch_size
            n = pipeline.arms.storage.counts()["chunks"]
            label = "copying precomputed vectors" if precomputed else f"embedding with {embedder}"
            part = PartialVectors(entry.root, emb.dim)  # rows an interrupted run wrote
            done_before = part.done_ids()
            advance = self.progress(label, n)
            advance(len(done_before))
            for batch in _iter_batches(pipeline, WRITE_BATCH if precomputed else batch_size):
                batch = [c for c in batch if c.id not in done_before]
                if not batch:
                    continue
                start = time.perf_counter()
                if precomputed:
                    rows = precomputed(batch)
                else:
                    rows = emb.embed_documents([embedding_text(c) for c in batch])
                    self.embed_calls += 1
                part.append([c.id for c in batch], rows, time.perf_counter() - start)
                advance(len(batch))
        finally:
            pipeline.close()
        seconds = part.seconds
        done = part.finish(entry.root / VECTORS_FILE, entry.root / IDS_FILE)
        entry.steps["vectors"] = {
            "seconds": seconds,
            "chunks": done,
            "model_id": entry.key["model_id"],
            **({"precomputed": True} if precomputed else {}),
        }
        entry.save()

    def ensure_semantic(
        self,
        entry: CacheEntry,
        semantic: str,
        embedder: str,
        precomputed: VectorsFor | None = None,
    ) -> None:
        """Embed the stored chunks once (``vectors.npy``), then load them into ``semantic``.

        :param precomputed: ``lookup(chunks) -> (n, dim)`` float32 unit rows to store
            instead of calling the embedder (the realistic scale corpus); queries are
            still embedded by ``embedder``.
        """
        if embedder != entry.key["embedder"]:
            raise OctomemError(
                f"cache entry {entry.root} was chunked by {entry.key['embedder']!r}, "
                f"not {embedder!r}"
            )
        self._embed(entry, embedder, precomputed)
        step = f"semantic:{semantic}"
        if step in entry.steps:
            return
        vectors = np.load(entry.root / VECTORS_FILE)
        ids = np.load(entry.root / IDS_FILE)
        before = _settled_size(lambda: self._open(entry.root))
        pipeline = self._open(entry.root, embedder=embedder, semantic=semantic)
        try:
            if pipeline.semantic_error:
                raise OctomemError(pipeline.semantic_error)
            arm, storage = pipeline.arms.semantic, pipeline.arms.storage
            advance = self.progress(f"loading vectors into {semantic}", len(ids))
            start = time.perf_counter()
            for lo in range(0, len(ids), WRITE_BATCH):
                with storage.transaction() as tx:
                    arm.add(tx, ids[lo : lo + WRITE_BATCH].tolist(), vectors[lo : lo + WRITE_BATCH])
                advance(len(ids[lo : lo + WRITE_BATCH]))
            seconds = time.perf_counter() - start
        finally:
            pipeline.close()
        grown = _settled_size(lambda: self._open(entry.root)) - before
        entry.steps[step] = {"seconds": seconds, "bytes": max(grown, 0)}
        entry.save()


def _digest(key: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
