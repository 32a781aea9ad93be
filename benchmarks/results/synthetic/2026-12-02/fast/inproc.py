"""In one process, the curve's ``hybrid`` row with this branch's shortcuts after the arms
switched on and off per query (rotating order), the caches a configuration fills for a
query emptied before each (relevance's content words, dedup's texts, the storage's
chunks), the same answers checked. The shortcuts: content words from the per-word memo
(:mod:`octomem.engine.words`), fused hits without ``__init__``/``replace``
(``types.fused_hit``), document order's bounds from the runs (``fusion.run_bounds``),
chunks built slot by slot (``sqlite.rows.chunk_of``), fused entries made when read
(``fusion.rrf_ranking``), hit vectors without a read transaction while nothing was
written (``SqliteVecSemanticArm._matrix``), the ``cosine`` dedup's texts normalised in the
keyword half's read-ahead (``CosineDedup.prepare``), hits' vectors gathered from the
row-major copy (``VectorMatrix.vectors``). "off" puts back the code they
replaced (copied below; no ``prepare``). Prints the p50 of the calling thread's CPU
after the arms and of the whole search, per configuration, and the median of the
per-query ratios. Usage::

    nice -n 5 python benchmarks/results/synthetic/2026-12-02/fast/inproc.py STORE N
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from functools import lru_cache
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import common  # noqa: E402

from octomem.engine import read_path, relevance, words  # noqa: E402
from octomem.engine.fusion import Fused  # noqa: E402
from octomem.engine.sql.rows import row_fields  # noqa: E402
from octomem.engine.types import Chunk, FusedHit, Query  # noqa: E402
from octomem.plugins.dedup import cosine  # noqa: E402
from octomem.plugins.sqlite import storage  # noqa: E402
from octomem.plugins.sqlite.rows import CHUNK_COLUMNS  # noqa: E402
from octomem.plugins.sqlite_vec import arm as vec_arm  # noqa: E402
from octomem.plugins.sqlite_vec import matrix as vec_matrix  # noqa: E402


@lru_cache(maxsize=4096)
def old_content_words(text: str) -> frozenset[str]:
    """The content words as before (every word folded again)."""
    return frozenset(words.fold(w) for w in (x.casefold() for x in words.WORD.findall(text))
                     if w not in words.FUNCTION_WORDS)


def old_chunk_of(row: object) -> Chunk:
    """The chunk as before (``row_fields`` and the constructor)."""
    return Chunk(**row_fields(CHUNK_COLUMNS, row))  # type: ignore[arg-type]


def old_rrf(runs: list, k: int = 60, weights: dict | None = None) -> list[Fused]:
    """Reciprocal rank fusion as before (a ``Fused`` per chunk, one sort by (-score, id))."""
    weights = weights or {}
    fused: dict[int, Fused] = {}
    for run in runs:
        for hit in run:
            share = weights.get(hit.arm, 1.0) / (k + hit.rank)
            entry = fused.get(hit.chunk_id)
            if entry is None:
                fused[hit.chunk_id] = Fused(hit.chunk_id, 0.0 + share, {hit.arm: hit})
            elif hit.arm not in entry.contributions:
                entry.contributions[hit.arm] = hit
                entry.score += share
    return sorted(fused.values(), key=lambda f: (-f.score, f.chunk_id))


def old_matrix(self: vec_arm.SqliteVecSemanticArm, bound: object) -> object:
    """The in-RAM copy as before: synced in a read transaction on every call."""
    matrix = self._matrix_of(bound)  # type: ignore[arg-type]
    matrix.sync(self.storage.connection())
    return matrix


def old_vectors(self: vec_matrix.VectorMatrix, chunk_ids: object) -> object:
    """Hits' vectors as before, while no selective filter made the row-major copy: from
    the column-major matrix along each column's run."""
    import numpy as np

    with self.lock:
        pos = self.positions(np.asarray(chunk_ids, dtype=np.int64).reshape(-1))
        out = np.zeros((len(pos), self.dim), dtype=np.float32)
        hit = pos >= 0
        source = self.matrix
        if source.flags.f_contiguous and not source.flags.c_contiguous:
            out[hit] = source.T[:, pos[hit]].T
        else:
            out[hit] = source[pos[hit]]
        return out


NEW = {
    (relevance, "content_words"): relevance.content_words,
    (read_path, "content_words"): read_path.content_words,
    (read_path, "fused_hit"): read_path.fused_hit,
    (cosine, "fused_hit"): cosine.fused_hit,
    (read_path, "run_bounds"): read_path.run_bounds,
    (storage, "chunk_of"): storage.chunk_of,
    (read_path, "rrf_ranking"): read_path.rrf_ranking,
    (vec_arm.SqliteVecSemanticArm, "_matrix"): vec_arm.SqliteVecSemanticArm._matrix,
    (cosine.CosineDedup, "prepare"): cosine.CosineDedup.prepare,
    (vec_matrix.VectorMatrix, "vectors"): vec_matrix.VectorMatrix.vectors,
}
OLD = {
    (relevance, "content_words"): old_content_words,
    (read_path, "content_words"): old_content_words,
    (read_path, "fused_hit"): FusedHit,
    (cosine, "fused_hit"): FusedHit,
    (read_path, "run_bounds"): lambda runs: None,
    (storage, "chunk_of"): old_chunk_of,
    (read_path, "rrf_ranking"): old_rrf,
    (vec_arm.SqliteVecSemanticArm, "_matrix"): old_matrix,
    (cosine.CosineDedup, "prepare"): None,
    (vec_matrix.VectorMatrix, "vectors"): old_vectors,
}
ARMS_DONE: list[int] = []
_runs = read_path.ReadPath._runs


def timed_runs(self: read_path.ReadPath, *args: object) -> object:
    """``ReadPath._runs``, noting the calling thread's CPU clock when it returns."""
    out = _runs(self, *args)  # type: ignore[arg-type]
    ARMS_DONE.append(time.thread_time_ns())
    return out


def use(config: str, pipe: object) -> None:
    """Switch to ``config`` ("on"/"off") and empty the caches."""
    for (module, name), value in (NEW if config == "on" else OLD).items():
        setattr(module, name, value)
    relevance.content_words.cache_clear()
    old_content_words.cache_clear()
    cosine.normalise_text.cache_clear()
    pipe.arms.storage._cache.changed(None)  # type: ignore[attr-defined]


def main() -> None:
    """Print the p50s and ratios."""
    root, n = Path(sys.argv[1]), int(sys.argv[2])
    texts = common.claims(n)
    pipe = common.pipeline(root)
    read_path.ReadPath._runs = timed_runs  # type: ignore[method-assign,assignment]
    post: dict[str, list[float]] = {"on": [], "off": []}
    total: dict[str, list[float]] = {"on": [], "off": []}
    same = True
    load = os.getloadavg()[0]
    for i, text in enumerate(texts):
        answers = {}
        for config in (("on", "off") if i % 2 else ("off", "on")):
            use(config, pipe)
            start = time.thread_time_ns()
            answer = pipe.search(Query(text, top_k=10))
            end = time.thread_time_ns()
            post[config].append((end - ARMS_DONE[-1]) / 1e6)
            total[config].append((end - start) / 1e6)
            answers[config] = [(h.chunk.id, h.score, h.relevance, h.contributions)
                               for h in answer.hits]
        same &= answers["on"] == answers["off"]
    use("on", pipe)
    print(f"{root}: {len(texts)} queries, load {load:.2f} -> {os.getloadavg()[0]:.2f}, "
          f"same answers: {same}")
    for name, values in (("after the arms", post), ("whole search", total)):
        ratio = statistics.median(a / b for a, b in zip(values["on"], values["off"], strict=True))
        print(f"  {name}: calling thread's CPU p50 on {statistics.median(values['on']):.3f} ms, "
              f"off {statistics.median(values['off']):.3f} ms; median per-query ratio "
              f"on/off {ratio:.3f}")


if __name__ == "__main__":
    main()
