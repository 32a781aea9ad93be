"""Peers in the scale curve: the engines a user would pick instead, fed the same texts and
vectors, timed interleaved with octomem, with and without a 10 % metadata filter.

- ``faiss+bm25s``, the do-it-yourself stack: faiss-cpu ``IndexFlatIP`` (exact inner
  product; the vectors are unit length, so it is cosine) and bm25s (Lù, "BM25S:
  Orders of magnitude faster lexical search via eager sparse scoring", 2024) with its
  English stop words. Filtered: faiss's ``IDSelectorBitmap`` (only passing rows are
  scored) and bm25s's ``weight_mask``; both exact.
- ``lancedb``: one Lance table (id, text, group, vector) with its native full-text
  index and a bitmap index on ``group``; vector search without an ANN index (a flat,
  exact scan), ``where(..., prefilter=True)`` when filtered.

Each peer's hybrid is reciprocal rank fusion of its two top-100 lists with octomem's
``k = 2``, top 10; its query vector comes from the same embedder call octomem's row
pays for (timed inside the hybrid). One query at a time, one thread each (faiss's
OpenMP set to 1, bm25s ``n_threads=1``), the way an agent asks.

Every query is asked of every system in turn (octomem first), so machine noise hits all
alike; the report gives p50s and octomem / best-peer ratios from the same run. The
filter keeps one of :data:`GROUPS` values of the corpus's ``metadata.group`` (query
``i`` asks for group ``i % GROUPS``). The peers are optional bench dependencies
(``pip install 'octomem[peers]'``); a missing one is reported and skipped.
"""

from __future__ import annotations

import importlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.types import Filters, Query

#: The corpus's ``metadata.group`` takes this many values, evenly: one is a 10 % filter.
GROUPS = 10
#: Candidates per arm before fusion (octomem's ``retrieval.candidate_k`` default).
CANDIDATES = 100
#: Reciprocal rank fusion constant (octomem's ``retrieval.rrf_k``, tuned on SciFact train).
RRF_K = 2
TOP_K = 10
#: The peers and the modules each needs.
PEERS = {"faiss+bm25s": ("faiss", "bm25s"), "lancedb": ("lancedb", "pyarrow")}


def group_of(position: int) -> str:
    """Return the ``metadata.group`` of the corpus's ``position``-th document."""
    return f"g{position % GROUPS}"


def missing_peers() -> dict[str, str]:
    """Return peer name -> the reason it cannot run (a module that does not import)."""
    out = {}
    for peer, modules in PEERS.items():
        for module in modules:
            try:
                importlib.import_module(module)
            except ImportError as exc:
                out[peer] = f"{module} not installed ({exc}); pip install 'octomem[peers]'"
                break
    return out


def rrf(runs: Sequence[Sequence[int]], k: int = RRF_K, top: int = TOP_K) -> list[int]:
    """Fuse ranked id lists by reciprocal rank (Cormack, Clarke & Büttcher, SIGIR 2009)."""
    scores: dict[int, float] = {}
    for run in runs:
        for rank, doc in enumerate(run, 1):
            scores[doc] = scores.get(doc, 0.0) + 1.0 / (k + rank)
    return sorted(scores, key=lambda d: (-scores[d], d))[:top]


@dataclass(slots=True)
class PeerCorpus:
    """What every peer indexes: row ``i`` is document ``d{i}``.

    :param vectors: float32 ``(n, dim)``, unit rows (the ones octomem stored).
    :param groups: int ``(n,)``, the group number of each row.
    """

    texts: list[str]
    vectors: np.ndarray
    groups: np.ndarray


def read_corpus(corpus_jsonl: Path, vectors: np.ndarray) -> PeerCorpus:
    """Read the texts (title + text, as octomem indexes them) of a scale-curve corpus."""
    texts = []
    with corpus_jsonl.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            title = row.get("title") or ""
            texts.append(f"{title}\n{row['text']}" if title else row["text"])
    groups = np.arange(len(texts)) % GROUPS
    return PeerCorpus(texts, np.ascontiguousarray(vectors, dtype=np.float32), groups)


class FaissBm25s:
    """faiss-cpu ``IndexFlatIP`` + bm25s over one corpus (built in the constructor)."""

    name = "faiss+bm25s"

    def __init__(self, corpus: PeerCorpus) -> None:
        import bm25s
        import faiss

        faiss.omp_set_num_threads(1)
        start = time.perf_counter()
        self.index = faiss.IndexFlatIP(corpus.vectors.shape[1])
        self.index.add(corpus.vectors)
        self.bm25 = bm25s.BM25()
        self.bm25.index(bm25s.tokenize(corpus.texts, stopwords="en", show_progress=False),
                        show_progress=False)
        self.build_seconds = time.perf_counter() - start
        self._bm25s, self._faiss, self.n = bm25s, faiss, len(corpus.texts)
        self._selectors: dict[int, Any] = {}
        self._masks: dict[int, np.ndarray] = {}
        self._groups = corpus.groups

    def _filter(self, group: int) -> tuple[Any, np.ndarray]:
        if group not in self._selectors:
            passing = self._groups == group
            bits = np.packbits(passing, bitorder="little")
            sel = self._faiss.IDSelectorBitmap(self.n, self._faiss.swig_ptr(bits))
            self._selectors[group] = (self._faiss.SearchParameters(sel=sel), bits)
            self._masks[group] = passing.astype(np.float32)
        return self._selectors[group][0], self._masks[group]

    def vector(self, query: np.ndarray, group: int | None) -> list[int]:
        """Top :data:`CANDIDATES` rows by inner product (only ``group``'s rows if given)."""
        params = None if group is None else self._filter(group)[0]
        _, rows = self.index.search(query[None, :], CANDIDATES, params=params)
        return [int(r) for r in rows[0] if r >= 0]

    def keyword(self, text: str, group: int | None) -> list[int]:
        """Top :data:`CANDIDATES` rows by BM25 (only ``group``'s rows if given)."""
        mask = None if group is None else self._filter(group)[1]
        tokens = self._bm25s.tokenize([text], stopwords="en", show_progress=False)
        if not tokens.vocab:
            return []
        k = min(CANDIDATES, self.n)
        rows, scores = self.bm25.retrieve(tokens, k=k, weight_mask=mask, show_progress=False,
                                          n_threads=1)
        return [int(r) for r, s in zip(rows[0], scores[0], strict=True) if s > 0]


class Lance:
    """A LanceDB table of the corpus: flat vector scan, native FTS, bitmap on ``group``."""

    name = "lancedb"

    def __init__(self, corpus: PeerCorpus, folder: Path) -> None:
        import lancedb
        import pyarrow as pa
        from lancedb.index import FTS, Bitmap

        start = time.perf_counter()
        db = lancedb.connect(str(folder))
        dim = corpus.vectors.shape[1]
        data = pa.table({
            "id": np.arange(len(corpus.texts)), "text": corpus.texts,
            "group": corpus.groups.astype(np.int32),
            "vector": pa.FixedSizeListArray.from_arrays(pa.array(corpus.vectors.ravel()), dim),
        })
        self.table = db.create_table("corpus", data, mode="overwrite")
        self.table.create_index("text", config=FTS())
        self.table.create_index("group", config=Bitmap())
        self.build_seconds = time.perf_counter() - start

    def _ids(self, query: Any, group: int | None) -> list[int]:
        if group is not None:
            query = query.where(f"group = {int(group)}", prefilter=True)
        return [int(i) for i in query.limit(CANDIDATES).select(["id"]).to_arrow()["id"]]

    def vector(self, query: np.ndarray, group: int | None) -> list[int]:
        """Top :data:`CANDIDATES` rows by dot product (exact: no ANN index)."""
        return self._ids(self.table.search(query).distance_type("dot"), group)

    def keyword(self, text: str, group: int | None) -> list[int]:
        """Top :data:`CANDIDATES` rows by Lance's BM25."""
        return self._ids(self.table.search(text, query_type="fts"), group)


def interleaved(
    systems: dict[str, Callable[[int], object]], n_queries: int
) -> dict[str, list[float]]:
    """Ask query ``i`` of every system in turn, for every ``i``; return wall times (ms).

    One untimed call per system first (lazy loads, caches).
    """
    for ask in systems.values():
        ask(0)
    times: dict[str, list[float]] = {name: [] for name in systems}
    for i in range(n_queries):
        for name, ask in systems.items():
            start = time.perf_counter()
            ask(i)
            times[name].append((time.perf_counter() - start) * 1e3)
    return times


def peer_systems(
    peer: FaissBm25s | Lance, texts: list[str], embed: Callable[[str], np.ndarray],
    filtered: bool,
) -> dict[str, Callable[[int], object]]:
    """Return ``{row name: ask(i)}`` of one peer's keyword, vector and hybrid rows.

    The vector row gets the query vector computed beforehand (its search alone, as
    octomem's ``sqlite-vec`` stage is); the hybrid row embeds the query itself.
    """
    vectors = [embed(t) for t in texts]

    def group(i: int) -> int | None:
        return i % GROUPS if filtered else None

    def hybrid(i: int) -> list[int]:
        query = embed(texts[i])
        return rrf([peer.keyword(texts[i], group(i)), peer.vector(query, group(i))])

    return {
        f"{peer.name} keyword": lambda i: peer.keyword(texts[i], group(i)),
        f"{peer.name} vector": lambda i: peer.vector(vectors[i], group(i)),
        f"{peer.name} hybrid": hybrid,
    }


def octomem_filters(i: int, filtered: bool) -> Filters:
    """The filters of query ``i``: its group when ``filtered``, else none."""
    return Filters(metadata={"group": group_of(i)}) if filtered else Filters()


#: octomem's rows: name -> how one answer gives its time (wall ms, the answer's stages).
OCTOMEM_ROWS: dict[str, Callable[[float, dict[str, float]], float]] = {
    "octomem keyword": lambda wall, stages: stages.get("fts5", float("nan")),
    "octomem vector": lambda wall, stages: stages.get("sqlite-vec", float("nan")),
    "octomem hybrid": lambda wall, stages: wall,
}


def run_peers(
    pipeline: Any, corpus: PeerCorpus, queries: list[str], lance_dir: Path,
    skip: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Build every available peer, then time octomem's warmed ``pipeline`` (the hybrid
    row: both arms, RRF, dedup) and the peers, interleaved, unfiltered then filtered.

    :param queries: the query texts, asked in order (query ``i`` filters group ``i % 10``).
    :param lance_dir: an empty folder for the Lance table (written, then left there).
    :returns: ``{"build_seconds": {peer: s}, "skipped": {peer: reason},
        "p50_ms": {"unfiltered"|"filtered": {row: ms}}, "ratios": {...}}``.
    """
    skipped = dict(skip if skip is not None else missing_peers())
    peers: list[FaissBm25s | Lance] = []
    if "faiss+bm25s" not in skipped:
        peers.append(FaissBm25s(corpus))
    if "lancedb" not in skipped:
        peers.append(Lance(corpus, lance_dir))
    embedder = pipeline.arms.embedder
    out: dict[str, Any] = {"build_seconds": {p.name: p.build_seconds for p in peers},
                           "skipped": skipped, "p50_ms": {}, "ratios": {}}
    for mode in ("unfiltered", "filtered"):
        filtered = mode == "filtered"
        stages: list[tuple[float, dict[str, float]]] = []

        def ask_octomem(
            i: int, filtered: bool = filtered,
            stages: list[tuple[float, dict[str, float]]] = stages,
        ) -> None:
            start = time.perf_counter()
            answer = pipeline.search(Query(queries[i], top_k=TOP_K,
                                           filters=octomem_filters(i, filtered)))
            stages.append(((time.perf_counter() - start) * 1e3, dict(answer.timings_ms)))

        systems: dict[str, Callable[[int], object]] = {"octomem": ask_octomem}
        for peer in peers:
            systems.update(peer_systems(peer, queries, embedder.embed_query, filtered))
        times = interleaved(systems, len(queries))
        del times["octomem"], stages[0]  # the untimed first call
        for row, of in OCTOMEM_ROWS.items():
            times[row] = [of(wall, st) for wall, st in stages]
        out["p50_ms"][mode] = {row: float(np.percentile(t, 50)) for row, t in times.items()}
        out["ratios"][mode] = ratios(out["p50_ms"][mode])
    return out


def ratios(p50: dict[str, float]) -> dict[str, dict[str, Any]]:
    """Return per row kind (keyword, vector, hybrid) octomem's p50 over the best peer's."""
    out = {}
    for kind in ("keyword", "vector", "hybrid"):
        peers = {r: ms for r, ms in p50.items() if r.endswith(f" {kind}") and
                 not r.startswith("octomem")}
        mine = p50.get(f"octomem {kind}")
        if peers and mine is not None:
            best = min(peers, key=peers.__getitem__)
            out[kind] = {"best_peer": best.rsplit(" ", 1)[0], "ratio": mine / peers[best]}
    return out


def peers_markdown(sizes: list[dict[str, Any]]) -> list[str]:
    """Return the report's peer table lines: p50 per row and size, and the ratios."""
    ran = [s for s in sizes if s.get("peers")]
    if not ran:
        return []
    lines = ["| docs | filter | row | " + " | ".join(
        ["octomem", "faiss+bm25s", "lancedb", "octomem / best peer"]) + " |",
        "|---|---|---|---|---|---|---|"]
    for size in ran:
        peers = size["peers"]
        for mode in ("unfiltered", "filtered"):
            p50 = peers["p50_ms"][mode]
            for kind in ("keyword", "vector", "hybrid"):
                cells = [_ms(p50.get(f"{name} {kind}")) for name in
                         ("octomem", "faiss+bm25s", "lancedb")]
                ratio = peers["ratios"][mode].get(kind)
                rtext = f"**{ratio['ratio']:.2f}x** ({ratio['best_peer']})" if ratio else ""
                label = "10 %" if mode == "filtered" else "none"
                lines.append(f"| {size['docs']:,} | {label} | {kind} | "
                             + " | ".join(cells) + f" | {rtext} |")
    return lines


def _ms(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"
