"""Where a kept filter's vector search spends its time at 10k, in the peers harness's order.

``PEERS_OUT=DIR python benchmarks/results/peers/stages.py [ROUNDS]`` (after ``harness.py
build 10000``): the harness's systems (octomem's arms and hybrid, bm25s, faiss
IndexFlatIP + IDSelectorBitmap, faiss + bm25s), filtered to the 10 % group, asked in a
new random order per query as ``harness.py peers`` does, so that each search finds the
caches as the other systems left them, plus ``stages``: the same search as
``SqliteVecSemanticArm.search`` of a kept filter (``plugins/sqlite_vec/scan.py``), step by
step with ``perf_counter_ns`` between the steps (its answers are checked equal to the
arm's): the query check, the change-log check (the commit watch, or the log read when it
cannot vouch), the kept subset's lookup, the product, the top 100, the 100 hits, and the
harness's list of their chunk ids; faiss's search and its list alike. Printed: p50 wall
and process CPU per system, p50 and mean per step, the load average.
"""
# ruff: noqa

import os, random, sys, time
import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness as H
from octomem.engine.types import Filters, run_of
from octomem.plugins.fts5.arm import Fts5KeywordArm, Fts5Options
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec import row_gather, scan as S, subsets, top
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm
from octomem.plugins.sqlite_vec.matrix import one_blas_thread

import bm25s, faiss

n, rounds = 10000, int(sys.argv[1]) if len(sys.argv) > 1 else 3
store = H.built(n)
texts, vecs, qs, qv = H.texts_for(n), H.vectors_for(n), H.queries()[:100], H.vectors_for(100, seed=9)
passing = np.arange(n) % 10 == 3
F = Filters(metadata={"group": "g3"})
st = SqliteStorage(store)
fts = Fts5KeywordArm(st, Fts5Options(in_ram="always"))
vec = SqliteVecSemanticArm(st, SqliteVecOptions(scan="numpy"))
with st.transaction() as tx:
    vec.bind(tx, "random", 384)
fts.warm(); vec.warm()
faiss.omp_set_num_threads(1)
index = faiss.IndexFlatIP(384); index.add(vecs)
bm = bm25s.BM25(); bm.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)
bits = np.packbits(passing, bitorder="little")
params = faiss.SearchParameters(sel=faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits)))
wmask = passing.astype(np.float32)
steps = {}
ns = time.perf_counter_ns


def stages(i, f):
    """The arm's kept-filter search (scan.py), timed step by step."""
    t0 = ns()
    bound = vec.bound
    query, norm = S.checked_query(qv[i], bound)
    vec._in_ram(bound)
    t1 = ns()
    conn, matrix, fields = st.connection(), vec._matrix_of(bound), st.fields
    with matrix.lock:
        cache = vec._subsets[bound.table]
        if not cache.watch.unchanged(conn, (matrix.seq, fields.seq)):
            S.follow(conn, matrix, fields, cache.watch)
        t2 = ns()
        subset = subsets.subset_of(cache, matrix, fields, F)
        t3 = ns()
        with one_blas_thread():
            scores = row_gather.scores_of(subset.gathered, len(subset.rows), query / norm)
        scores *= subset.inv_norms
        t4 = ns()
        ids, best = top.select_top(scores, subset.ids, 100)
        t5 = ns()
    hits = run_of(ids.tolist(), best.tolist(), "sqlite-vec")
    t6 = ns()
    out = [h.chunk_id for h in hits]
    t7 = ns()
    for name, a, b in (("query check", t0, t1), ("change-log check", t1, t2), ("kept subset", t2, t3),
                       ("product", t3, t4), ("top 100", t4, t5), ("100 hits", t5, t6),
                       ("chunk ids", t6, t7), ("total", t0, t7)):
        steps.setdefault(name, []).append((b - a) / 1e3)
    return out


def faiss_stages(i, f):
    t0 = ns(); _, ids = index.search(qv[i:i + 1], 100, params=params); t1 = ns(); out = list(ids[0]); t2 = ns()
    steps.setdefault("faiss search", []).append((t1 - t0) / 1e3)
    steps.setdefault("faiss ids", []).append((t2 - t1) / 1e3)
    return out


def rrf(*runs, k=2):
    s = {}
    for run in runs:
        for r, d in enumerate(run, 1):
            s[d] = s.get(d, 0) + 1 / (k + r)
    return sorted(s, key=lambda d: -s[d])[:10]


def o_kw(i, f): return [h.chunk_id for h in fts.search(qs[i], F, 100)]
def o_vec(i, f): return [h.chunk_id for h in vec.search(qv[i], F, 100)]
fresh = iter(range(10**9))
def o_vec_new(i, f):
    return [h.chunk_id for h in vec.search(qv[i], Filters(metadata={"group": "g3"}, created_after=1.0 + next(fresh)), 100)]
def o_hyb(i, f): return rrf(o_kw(i, f), o_vec(i, f))
def p_vec(i, f): return list(index.search(qv[i:i + 1], 100, params=params)[1][0])
def p_kw(i, f):
    res, _ = bm.retrieve(bm25s.tokenize([qs[i]], stopwords="en", show_progress=False), k=100,
                         weight_mask=wmask, show_progress=False, n_threads=1)
    return list(res[0])
def p_hyb(i, f): return rrf(p_kw(i, f), p_vec(i, f))


systems = {"octomem-kw": o_kw, "octomem-vec": o_vec, "octomem-vec-newfilter": o_vec_new,
           "octomem-hyb": o_hyb, "bm25s": p_kw, "faiss": p_vec, "faiss+bm25s": p_hyb,
           "stages": stages, "faiss-stages": faiss_stages}
for i in range(3):
    o_vec(i, True)  # the filter kept, its rows gathered, the watch armed
for i in range(100):
    assert stages(i, True) == o_vec(i, True)
steps.clear()
times = {k: [] for k in systems}
cpu = {k: [] for k in systems}
order, shuffle = list(systems.items()), random.Random(5)
for _ in range(rounds):
    for i in range(100):
        for name, fn in shuffle.sample(order, len(order)):
            t, c = time.perf_counter(), time.process_time()
            fn(i, True)
            times[name].append((time.perf_counter() - t) * 1e6)
            cpu[name].append((time.process_time() - c) * 1e6)
print(f"rounds={rounds} load={os.getloadavg()}")
for k in systems:
    print(f"{k:24} p50 {np.percentile(times[k], 50):7.1f} us, cpu {np.percentile(cpu[k], 50):7.1f} us")
for k, v in steps.items():
    print(f"  {k:22} p50 {np.percentile(v, 50):7.1f} us, mean {np.mean(v):7.1f}")
