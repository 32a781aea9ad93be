"""The arms-alone peer harness behind docs/benchmarks.md's issue 15 tables (kept as run).

Three scripts in one file, chosen by the first argument, all over the same corpus:
one-chunk documents of SciFact sentences (1-3 per document) and LoCoMo turns, replicated
by joining two at random above the source size; random unit vectors (timing only);
``metadata.group`` = one of 10 (a 10 % filter keeps ``g3``).

- ``build N``: the octomem store (storage and arm APIs directly) at ``OUT/nN.sqlite``.
- ``peers N [--lance] [--before]``: p50 ms of octomem's arms (fts5 in RAM, sqlite-vec numpy
  scan, RRF k=2 hybrid of the two top-100 lists) against faiss IndexFlatIP + bm25s and
  LanceDB, every query asked of every system in turn (in a new seeded random order per
  query, so that no system always follows the same one: rotating one order, as this
  harness did until December 2, kept each system behind the same predecessor but once
  per cycle, and a system run right after a similar one found its data in the caches),
  without and with the filter,
  and the octomem hybrid's two arms as timed inside it; beside each p50 wall time, the p50
  process CPU time per call (all threads: under load it separates work from waiting);
  p50s are printed to the microsecond (two decimals until December 2: 0.15 against 0.17 ms
  was a 13 % step in a ratio);
  ``octomem-vec-newfilter`` asks every filtered query with a filter never asked before
  (``created_after`` that every row passes, so the same rows): the first search of a
  filter, which computes its mask and gathers its rows (nothing kept yet, see
  ``plugins/sqlite_vec/subsets.py``); faiss's ``IDSelectorBitmap`` is built once, outside
  the timed calls;
  ``--before`` adds octomem's vector and hybrid rows as scanned before the row gather
  (``GATHER_SHARE = 0``: the full column-major product, the other rows dropped).
- ``pipeline N [--rounds R]``: end to end, the default pipeline's search with the query
  embedding (see :func:`_pipeline`).
- ``ingest octomem|lance N``: ingest excluding embedding, ``Pipeline.add(embed=False)`` then
  the vectors written through the semantic arm, against LanceDB's table + FTS + bitmap
  index (run with ``PYTHONPATH`` pointing at an older checkout for a before row).
- ``ingest-digest N [--longmemeval]``: ingest N documents (as ``ingest``, or the first N
  LongMemEval sessions, long enough to be split) and print sha256 digests of what
  a reader gets back: every chunk (id, document, ordinal, text, kind, tags, metadata,
  validity), every document as ``get_document`` reads it, the FTS5 top 10 (ids and
  scores) of 300 SciFact queries, and the token count of every text (since round 7 also
  the vectors, written as ``ingest`` writes them, and vec0's top 10 of 50 queries); run
  it with and without an older checkout on ``PYTHONPATH`` to check that both store and
  rank the same.
- ``ingest-rounds N ROUNDS [--before DIR]``: the two above alternated in fresh processes,
  ROUNDS times (LanceDB, then octomem from DIR on ``PYTHONPATH`` when given, then this
  checkout's octomem), load average beside each; medians and ratios at the end. DIR holds
  ``octomem/{engine,plugins,mcp_server,benchmarks}`` of the older checkout.

``peers`` and ``pipeline`` read the store ``build N`` made and refuse, naming that step,
when ``PEERS_OUT`` holds no finished build of N (until December 2 they opened, and so
created, an empty store and printed ratios of nothing).

Run from a checkout with ``pip install -e ".[peers]"``:
``RUST_LOG=error nice -n 5 python benchmarks/results/peers/harness.py peers 100000 --lance``.
"""
# ruff: noqa

import sys as _sys

# ---- corpus (build) ------------------------------------------------------------

import json, os, re, sys, time, random
from pathlib import Path
import numpy as np
from octomem.engine.types import Document, Chunk
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.fts5.arm import Fts5KeywordArm
from octomem.plugins.sqlite_vec.arm import SqliteVecSemanticArm

DATA = Path(os.environ.get("PEERS_DATA", "/work/shared/data"))
OUT = Path(os.environ.get("PEERS_OUT", "/tmp/octomem-peers"))
DIM = 384

def base_texts():
    out = []
    end = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")
    rng = random.Random(0)
    for line in open(DATA / "scifact/corpus.jsonl"):
        sents = end.split(json.loads(line)["text"])
        i = 0
        while i < len(sents):
            n = rng.randint(1, 3)
            out.append(" ".join(sents[i:i + n])); i += n
    for line in open(DATA / "locomo/corpus.jsonl"):
        out.append(json.loads(line)["text"])
    return out

def queries():
    return [json.loads(l)["text"] for l in open(DATA / "scifact/queries.jsonl")][:300]

def texts_for(n):
    base = base_texts()
    rng = np.random.default_rng(1)
    out = []
    for i in range(n):
        if i < len(base):
            out.append(base[i])
        else:
            a, b = rng.integers(0, len(base), 2)
            out.append(base[a] + " " + base[b])
    return out

def vectors_for(n, seed=2):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return v

def build(n):
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"n{n}.sqlite"
    if path.exists():
        return path
    texts = texts_for(n)
    vecs = vectors_for(n)
    st = SqliteStorage(path)
    fts = Fts5KeywordArm(st)
    vec = SqliteVecSemanticArm(st)
    with st.transaction() as tx:
        vec.bind(tx, "random", DIM)
    t0 = time.perf_counter()
    B = 2000
    for s in range(0, n, B):
        with st.transaction() as tx:
            stored = []
            for i in range(s, min(n, s + B)):
                d = Document(text=texts[i], id=f"d{i}", created_at=1.7e9 + i,
                             metadata={"group": f"g{i % 10}"}, kind="ITEM" if i % 3 else "NOTE",
                             tags=("t%d" % (i % 7),))
                stored += st.add_document(tx, d, [Chunk(document_id=d.id, ordinal=0, text=texts[i])])
            fts.index(tx, stored)
            vec.add(tx, [c.id for c in stored], vecs[[c.id - 1 for c in stored]])
        print(s, time.perf_counter() - t0, flush=True)
    np.save(OUT / f"n{n}.vectors.npy", vecs)
    return path


def built(n):
    """Return ``OUT/nN.sqlite`` when ``build N`` finished there (its vectors file is written
    last), else exit with a message naming the missing step: opening a missing file would
    create an empty store, and every ratio measured on it is nonsense (an empty store
    answered ``peers 10000`` at 0.08x faiss on December 2)."""
    path = OUT / f"n{n}.sqlite"
    missing = [p.name for p in (path, OUT / f"n{n}.vectors.npy") if not p.exists()]
    if missing:
        sys.exit(f"{OUT} has no complete build of {n} documents ({', '.join(missing)} missing): "
                 f"run `PEERS_OUT={OUT} python {sys.argv[0]} build {n}` first")
    return path




def _peers(argv):
    _sys.argv = [_sys.argv[0], *argv]

    import sys, time, json
    from pathlib import Path
    import numpy as np
    from octomem.engine.types import Filters
    from octomem.plugins.sqlite.storage import SqliteStorage
    from octomem.plugins.fts5.arm import Fts5KeywordArm, Fts5Options
    from octomem.plugins.sqlite_vec.arm import SqliteVecSemanticArm, SqliteVecOptions

    n = int(sys.argv[1]); lance = "--lance" in sys.argv
    store = built(n)  # before anything opens (and so creates) the file
    texts = texts_for(n); vecs = vectors_for(n)
    qs = queries()[:100]
    qv = vectors_for(len(qs), seed=9)
    group = np.array([i % 10 for i in range(n)])
    F = Filters(metadata={"group": "g3"})
    st = SqliteStorage(store)
    fts = Fts5KeywordArm(st, Fts5Options(in_ram="always"))
    vec = SqliteVecSemanticArm(st, SqliteVecOptions(scan="numpy"))
    with st.transaction() as tx:
        vec.bind(tx, "random", 384)
    t = time.perf_counter(); fts.warm(); vec.warm(); print("octomem warm", time.perf_counter() - t)

    import faiss, bm25s
    faiss.omp_set_num_threads(1)
    t = time.perf_counter()
    index = faiss.IndexFlatIP(384); index.add(vecs)
    tok = bm25s.tokenize(texts, stopwords="en", show_progress=False)
    bm = bm25s.BM25(); bm.index(tok, show_progress=False)
    print("faiss+bm25s build", time.perf_counter() - t)
    passing = (group == 3)
    bits = np.packbits(passing, bitorder="little")
    sel = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bits))
    params = faiss.SearchParameters(sel=sel)
    wmask = passing.astype(np.float32)

    def rrf(*runs, k=2):
        s = {}
        for run in runs:
            for r, d in enumerate(run, 1):
                s[d] = s.get(d, 0) + 1 / (k + r)
        return sorted(s, key=lambda d: -s[d])[:10]

    def o_kw(i, f): return [h.chunk_id for h in fts.search(qs[i], F if f else Filters(), 100)]
    def o_vec(i, f): return [h.chunk_id for h in vec.search(qv[i], F if f else Filters(), 100)]
    fresh = iter(range(10**9))  # a filter never asked before: the same rows, another key
    def o_vec_new(i, f):
        g = Filters(metadata={"group": "g3"}, created_after=1.0 + next(fresh)) if f else Filters()
        return [h.chunk_id for h in vec.search(qv[i], g, 100)]
    parts = {}  # each octomem hybrid's own arms, timed inside it
    running = [""]  # the system being timed

    def o_hyb(i, f):
        t0 = time.perf_counter(); kw = o_kw(i, f); t1 = time.perf_counter(); ve = o_vec(i, f)
        t2 = time.perf_counter(); fused = rrf(kw, ve)
        for name, t in (("keyword", t1 - t0), ("vector", t2 - t1),
                        ("rrf", time.perf_counter() - t2)):
            parts.setdefault((f"{running[0]}: {name}", f), []).append(t * 1e3)
        return fused
    def p_vec(i, f):
        D, I = index.search(qv[i:i+1], 100, params=params if f else None); return list(I[0])
    def p_kw(i, f):
        qt = bm25s.tokenize([qs[i]], stopwords="en", show_progress=False)
        res, sc = bm.retrieve(qt, k=100, weight_mask=wmask if f else None, show_progress=False, n_threads=1)
        return list(res[0])
    def p_hyb(i, f): return rrf(p_kw(i, f), p_vec(i, f))
    systems = {"octomem-kw": o_kw, "octomem-vec": o_vec, "octomem-vec-newfilter": o_vec_new,
               "octomem-hyb": o_hyb,
               "bm25s": p_kw, "faiss": p_vec, "faiss+bm25s": p_hyb}
    if "--before" in sys.argv:  # the scan before the row gather: the full product, drop
        from octomem.plugins.sqlite_vec import matrix as M
        share = M.GATHER_SHARE

        def before(fn):
            def run(i, f):
                M.GATHER_SHARE = 0.0
                try:
                    return fn(i, f)
                finally:
                    M.GATHER_SHARE = share
            return run
        systems.update({"octomem-vec-before": before(o_vec), "octomem-hyb-before": before(o_hyb)})
    if lance:
        import lancedb, pyarrow as pa, shutil
        d = OUT / f"lance{n}"
        t = time.perf_counter()
        db = lancedb.connect(str(d))
        if "t" in db.table_names():
            tbl = db.open_table("t")
        else:
            data = pa.table({"id": np.arange(n), "text": texts, "group": [f"g{g}" for g in group],
                             "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), 384)})
            tbl = db.create_table("t", data)
            tbl.create_fts_index("text", use_tantivy=False)
            tbl.create_scalar_index("group", index_type="BITMAP")
        print("lance build/open", time.perf_counter() - t)
        def l_vec(i, f):
            q = tbl.search(qv[i]).metric("dot").limit(100).select(["id"])
            if f: q = q.where("group = 'g3'", prefilter=True)
            return q.to_arrow()["id"].to_pylist()
        def l_kw(i, f):
            q = tbl.search(qs[i], query_type="fts").limit(100).select(["id"])
            if f: q = q.where("group = 'g3'", prefilter=True)
            return q.to_arrow()["id"].to_pylist()
        def l_hyb(i, f): return rrf(l_kw(i, f), l_vec(i, f))
        systems.update({"lance-vec": l_vec, "lance-kw": l_kw, "lance-hyb": l_hyb})

    import os
    res, cpu = {}, {}  # p50 wall ms; process CPU ms per call (every thread of the process)
    for f in (False, True):
        for name, fn in systems.items():
            fn(0, f); fn(1, f)
        times = {name: [] for name in systems}
        parts.clear()
        order = list(systems.items())
        shuffle = random.Random(5)
        for i in range(len(qs)):  # every system in turn, a new random order per query
            for name, fn in shuffle.sample(order, len(order)):
                running[0] = name
                t, c = time.perf_counter(), time.process_time()
                fn(i, f)
                times[name].append((time.perf_counter() - t) * 1e3)
                cpu.setdefault((name, f), []).append((time.process_time() - c) * 1e3)
        for name, ts in times.items():
            res[(name, f)] = np.percentile(ts, 50)
        for (name, _), ts in parts.items():
            res[(name, f)] = np.percentile(ts, 50)
    print(f"n={n} load={os.getloadavg()}")
    print(f"{'system':26} {'p50 unfilt':>10} {'p50 10%':>10} {'cpu unfilt':>10} {'cpu 10%':>10}")
    for name in [*systems, *sorted({name for name, _ in parts})]:
        line = f"{name:26} {res[(name, False)]:10.3f} {res[(name, True)]:10.3f}"
        if (name, True) in cpu:
            line += (f" {np.percentile(cpu[(name, False)], 50):10.3f}"
                     f" {np.percentile(cpu[(name, True)], 50):10.3f}")
        print(line)


def _ingest(argv):
    _sys.argv = [_sys.argv[0], *argv]

    import sys, time, shutil, os
    from pathlib import Path
    import numpy as np
    which, n = sys.argv[1], int(sys.argv[2])
    texts = texts_for(n); vecs = vectors_for(n)
    root = OUT / f"ingest-{which}{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    if which == "lance":
        import lancedb, pyarrow as pa
        t, cpu = time.perf_counter(), time.process_time()
        db = lancedb.connect(str(root))
        data = pa.table({"id": np.arange(n), "text": texts, "group": [f"g{i % 10}" for i in range(n)],
                         "vector": pa.FixedSizeListArray.from_arrays(pa.array(vecs.ravel()), 384)})
        tbl = db.create_table("t", data)
        tbl.create_fts_index("text", use_tantivy=False)
        tbl.create_scalar_index("group", index_type="BITMAP")
        total = time.perf_counter() - t
        print(f"lance total {total:.3f} cpu {time.process_time() - cpu:.3f} "
              f"disk {sum(f.stat().st_size for f in root.rglob('*') if f.is_file())}")
    else:
        from octomem.engine.manager import load_registry
        from octomem.engine.pipeline import Pipeline
        from octomem.engine.settings import load_settings
        from octomem.engine.types import Document
        import octomem.engine.pipeline as P
        docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(texts)]
        p = Pipeline(load_settings(None, {}), load_registry(), root)
        spare = vectors_for(2 * n)  # before the clock (inside it until Dec 2: ~0.15 s CPU); its first m rows are vectors_for(m)
        t, cpu = time.perf_counter(), time.process_time()
        rep = p.add(docs, embed=False)
        rows = time.perf_counter() - t
        sem, st = p.arms.semantic, p.arms.storage
        t = time.perf_counter(); ids = rep.chunk_ids; vecs = spare[:len(ids)]
        for s in range(0, len(ids), 256):
            with st.transaction() as tx:
                sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
        vec = time.perf_counter() - t
        cpu = time.process_time() - cpu
        paused = getattr(getattr(st, "checkpoints", None), "paused", None)  # since round 11
        with paused() if paused else __import__("contextlib").nullcontext():  # not "busy"
            st.connection().execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # for the size
        print(f"{which} rows+fts {rows:.3f} vectors {vec:.3f} total {rows + vec:.3f} cpu {cpu:.3f} "
              f"disk {st.size_bytes()} chunks {rep.chunks} src {P.__file__}")
    shutil.rmtree(root, ignore_errors=True)


def _pipeline(argv):
    """``pipeline N [--rounds R]``: end to end, what a user's search costs: the default
    pipeline's ``Pipeline.search`` (query embedding by the configured MiniLM included; top
    10) over the ``build N`` store, its vector set labelled as that model's (random vectors:
    timing only), warmed; 100 SciFact claims without and with the 10 % filter, in turn,
    R rounds; p50/p95 ms, p50 process CPU ms, each stage's p50, and recall@10 of the semantic arm against an
    exact float64 scan of the stored vectors."""
    import shutil, statistics
    import apsw
    from octomem.engine.memory.facade import open_memory
    from octomem.engine.types import Filters, Query
    from octomem.plugins.fastembed.embedder import FastembedEmbedder

    n = int(argv[0])
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else 1
    source = built(n)
    project = OUT / f"project{n}"
    target = project / ".octomem" / "octomem.sqlite3"
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        conn = apsw.Connection(str(target))
        with conn:
            conn.execute("UPDATE vector_sets SET model_id = ?", (FastembedEmbedder().model_id,))
        conn.close()
    memory = open_memory(project_root=project)
    pipeline = memory.scopes.get("local")
    t = time.perf_counter(); pipeline.arms.embedder.load(); pipeline.warm()
    print("load + warm", round(time.perf_counter() - t, 2), "s")
    qs = queries()[:100]
    tenth = Filters(metadata={"group": "g3"})
    vecs = np.load(OUT / f"n{n}.vectors.npy").astype(np.float64)
    found = []
    for text in qs:  # recall@10 of the semantic arm vs exact (random vectors: ids 1..n)
        qv = pipeline.arms.embedder.embed_query(text)
        exact = set((np.argsort(-(vecs @ qv.astype(np.float64)), kind="stable")[:10] + 1).tolist())
        got = {h.chunk_id for h in pipeline.arms.semantic.search(qv, Filters(), 10)}
        found.append(len(got & exact) / 10)
    for f in (None, tenth):
        pipeline.search(Query(qs[0], 10, f or Filters()))
    times = {None: [], "10 %": []}
    cpus = {None: [], "10 %": []}  # process CPU ms per search (every thread)
    stages = {None: {}, "10 %": {}}
    for _ in range(rounds):
        for text in qs:
            for name, f in ((None, Filters()), ("10 %", tenth)):
                start, cpu0 = time.perf_counter(), time.process_time()
                answer = pipeline.search(Query(text, 10, f))
                times[name].append((time.perf_counter() - start) * 1e3)
                cpus[name].append((time.process_time() - cpu0) * 1e3)
                for stage, ms in answer.timings_ms.items():
                    stages[name].setdefault(stage, []).append(ms)
    print(f"n={n} rounds={rounds} load={os.getloadavg()} recall@10 vs exact={np.mean(found):.3f}")
    for name in times:
        ts = times[name]
        per = "; ".join(f"{k} {statistics.median(v):.2f}" for k, v in stages[name].items())
        print(f"{'no filter' if name is None else name:10} p50 {np.percentile(ts, 50):.2f} "
              f"p95 {np.percentile(ts, 95):.2f} cpu p50 {np.percentile(cpus[name], 50):.2f} "
              f"| {per}")
    memory.close()


def _ingest_digest(argv):
    import hashlib, shutil, os
    from octomem.engine.manager import load_registry
    from octomem.engine.pipeline import Pipeline
    from octomem.engine.settings import load_settings
    from octomem.engine.types import Document, Filters
    n = int(argv[0])
    texts = texts_for(n)
    if "--longmemeval" in argv:  # long sessions: documents split into several chunks
        with open(DATA / "longmemeval/corpus.jsonl") as rows:
            texts = [json.loads(next(rows))["text"] for _ in range(n)]
    docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}, created_at=1.7e9 + i)
            for i, t in enumerate(texts)]
    root = OUT / f"digest{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
    p = Pipeline(load_settings(None, {}), load_registry(), root)
    p.add(docs, embed=False)
    st, kw = p.arms.storage, p.arms.keyword
    def digest(rows):
        return hashlib.sha256(repr(list(rows)).encode()).hexdigest()[:16]
    chunks = digest((c.id, c.document_id, c.ordinal, c.text, c.kind, c.tags, sorted(c.metadata.items()),
                     c.created_at, c.valid_from, c.valid_to, c.revision) for c in st.iter_chunks(None))
    documents = digest((d.id, d.text, d.kind, d.tags, sorted(d.metadata.items()), d.revision)
                       for d in (st.get_document(f"d{i}") for i in range(n)))
    ranked = digest([(h.chunk_id, h.score) for h in kw.search(q, Filters(), 10)] for q in queries())
    counts = digest(p.arms.embedder.count_tokens(texts))
    # since Dec 3 (round 7): the vectors as ``ingest`` writes them (transactions of 256), read
    # back through vec0 (every row, and the top 10 of 50 random queries with a kind filter)
    ids, sem = sorted(c.id for c in st.iter_chunks(None)), p.arms.semantic
    vecs = vectors_for(len(ids))
    for s in range(0, len(ids), 256):
        with st.transaction() as tx:
            sem.add(tx, ids[s:s + 256], vecs[s:s + 256])
    conn, table = st.connection(), sem.bound.table
    rows = conn.execute(f"SELECT chunk_id, embedding, kind, created_at FROM {table} ORDER BY chunk_id")
    knn = [conn.execute(f"SELECT chunk_id, distance FROM {table} WHERE embedding MATCH ? AND k = 10 "
                        "AND kind = 'ITEM' ORDER BY distance", (q.tobytes(),)).fetchall()
           for q in vectors_for(50, seed=3)]
    print(f"chunks {chunks} documents {documents} fts5-top10 {ranked} token-counts {counts} "
          f"vectors {digest(rows)} vec0-top10 {digest(knn)}")
    p.close()
    shutil.rmtree(root, ignore_errors=True)


def _ingest_rounds(argv):
    import os, re, statistics, subprocess
    n, rounds = int(argv[0]), int(argv[1])
    before = argv[argv.index("--before") + 1] if "--before" in argv else None
    runs = [("lance", "lance", None)]
    if before:
        runs.append(("before", "octomem", before))
    runs.append(("after", "octomem", None))
    got = {name: [] for name, _, _ in runs}
    cpus = {name: [] for name, _, _ in runs}
    for r in range(rounds):
        for name, which, path in runs:
            env = dict(os.environ, RUST_LOG="error")
            if path:
                env["PYTHONPATH"] = path
            out = subprocess.run([sys.executable, __file__, "ingest", which, str(n)], env=env,
                                 capture_output=True, text=True, check=True).stdout
            total = float(re.search(r"total ([0-9.]+)", out).group(1))
            cpu_s = float(re.search(r"cpu ([0-9.]+)", out).group(1))
            disk = int(re.search(r"disk ([0-9]+)", out).group(1))
            rows = re.search(r"rows\+fts ([0-9.]+) vectors ([0-9.]+)", out)
            load = os.getloadavg()[0]
            got[name].append(total)
            cpus[name].append(cpu_s)
            parts = f" (rows+fts {rows.group(1)}, vectors {rows.group(2)})" if rows else ""
            print(f"round {r + 1} {name}: {total:.2f} s{parts} cpu {cpu_s:.2f} s "
                  f"disk {disk / 1e6:.1f} MB load {load:.1f}", flush=True)
    med = {name: statistics.median(v) for name, v in got.items()}
    for name in got:
        print(f"median {name}: {med[name]:.2f} s, ratio to lance {med[name] / med['lance']:.2f}x; "
              f"per-round ratios {[round(a / b, 2) for a, b in zip(got[name], got['lance'])]}; "
              f"median cpu {statistics.median(cpus[name]):.2f} s")


if __name__ == "__main__":
    what, rest = _sys.argv[1], _sys.argv[2:]
    if what == "ingest-rounds":
        _ingest_rounds(rest)
    elif what == "ingest-digest":
        _ingest_digest(rest)
    elif what == "build":
        print(build(int(rest[0])))
    elif what == "peers":
        _peers(rest)
    elif what == "pipeline":
        _pipeline(rest)
    elif what == "ingest":
        _ingest(rest)
    else:
        _sys.exit(f"unknown command {what!r}: build, peers, pipeline, ingest, ingest-digest or "
                  "ingest-rounds (see this file's docstring)")
