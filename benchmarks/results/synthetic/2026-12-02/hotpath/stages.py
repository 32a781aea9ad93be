"""CPU time of each stage of the hybrid ``Pipeline.search`` after the arms (fusion, the
chunks' loading, document order, vectors, cosines, dedup, relevance), from a copy of
``ReadPath.search`` with a clock between stages. Serial (``retrieval.parallel_arms``
off: every stage on this thread), caches emptied before each query as in ``ab.py``;
the thread's CPU time (``time.thread_time``), so other processes' load weighs less than
on wall times; the arms' own stages are their wall times from ``timings_ms``. Usage::

    nice -n 5 python stages.py STORE N
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import ab  # noqa: E402

from octomem.engine import read_path as rp  # noqa: E402
from octomem.engine.chunking import embedding_text  # noqa: E402
from octomem.engine.types import Answer, Query  # noqa: E402

TIMES: dict[str, list[float]] = defaultdict(list)


def search(self: ab.Pipeline, query: Query) -> None:
    """``ReadPath.search``'s stages for a hybrid row without reranker (timed)."""
    clock = [time.thread_time()]

    def lap(name: str) -> None:
        now = time.thread_time()
        TIMES[name].append((now - clock[0]) * 1e3)
        clock[0] = now

    answer = Answer(hits=[], arms_ran=[], arms_unavailable={}, semantic_available=False)
    retrieval = self.settings.retrieval
    depth, k = query.top_k * 3, max(retrieval.candidate_k, query.top_k)
    runs, vector, ahead = self._runs(query, k, depth, answer)
    for stage in ("embed_query", "sqlite-vec", "fts5"):
        TIMES[f"{stage} (wall)"].append(answer.timings_ms[stage])
    lap("arms (CPU)")
    fused = self._fuse(runs)
    lap("fusion")
    self._without_vector()
    lap("chunks without vector")
    hits = self._load(fused[:depth], 0, ahead)
    lap("load chunks")
    hits = rp.order_documents(hits, fused, retrieval.fusion, retrieval.document_fusion,
                              retrieval.weights)
    lap("document order")
    vectors = self._vectors(hits)
    lap("hits' vectors")
    cos = dict(zip((h.chunk.id for h in hits), rp.similarities(vectors, vector).tolist(),
                   strict=True))
    vectors.any(axis=1).tolist()
    lap("cosines")
    hits, _ = self.arms.dedup.dedup(hits, vectors)
    lap("dedup")
    judge = rp.HitJudge(retrieval, self.arms, runs, query.filters,
                        [embedding_text(h.chunk) for h in hits[:rp.JUDGED_HITS]])
    [replace(h, rank=i, relevance=judge(query.text, h, embedding_text(h.chunk),
                                        cos.get(h.chunk.id)))
     for i, h in enumerate(hits[:query.top_k], start=1)]
    lap("relevance")


def main() -> None:
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    texts = ab.claims(n)
    registry = ab.load_registry(extra_plugins=[ab.baseline, ab.synthetic_data])
    combo = ab.parse_combo(ab.ROW, registry, ab.load_settings(None, {}).settings)
    overrides = combo.settings_overrides()
    overrides.setdefault("retrieval", {})["parallel_arms"] = False
    pipe = ab.Pipeline(ab.load_settings(None, overrides), registry, root)
    pipe.warm()
    pipe.search(Query(texts[0], top_k=10))
    load = ab.os.getloadavg()
    for text in texts:
        ab.cold(pipe)
        search(pipe, Query(text, top_k=10))
    print(f"{root}: {len(texts)} queries, load {[round(x, 2) for x in load]} -> "
          f"{[round(x, 2) for x in ab.os.getloadavg()]}")
    after = 0.0
    for name, values in TIMES.items():
        p50 = statistics.median(values)
        after += p50 if "(" not in name else 0.0
        print(f"  {name:24} p50 {p50:6.3f} ms")
    print(f"  {'after the arms, sum':24}     {after:6.3f} ms")


if __name__ == "__main__":
    main()
