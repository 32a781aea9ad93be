"""Round 15: where the writer's time goes, per part (``time.perf_counter`` around the module
functions named), the harness's 10k documents' batches all prepared first (no worker
thread), then the vectors as the harness writes them (transactions of 256). ``PRAGMA=...``
runs a statement on the connection first. Run: ``PEERS_OUT=DIR python writer_parts.py``.
"""
# ruff: noqa
import sys, os, shutil, time, collections, statistics
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import octomem.engine.writes as W, octomem.engine.pipeline as P
import octomem.plugins.sqlite.changelog as CL, octomem.plugins.sqlite.bulk as B, octomem.plugins.fts5.arm as F
import octomem.plugins.sqlite.transactions as TR
from octomem.engine.manager import load_registry
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
n=10000
texts=H.texts_for(n)
docs=[Document(t,id=f"d{i}",metadata={"group":f"g{i%10}"}) for i,t in enumerate(texts)]
root=H.OUT / f"wp{os.getpid()}"; shutil.rmtree(root,ignore_errors=True)
p=P.Pipeline(load_settings(None,{}),load_registry(),root)
preps=[W.prepare(p,docs[s:s+1024]) for s in range(0,n,1024)]
acc=collections.defaultdict(list)
def wrap(mod, name, label=None):
    f=getattr(mod,name)
    def g(*a,**k):
        t=time.perf_counter()
        try: return f(*a,**k)
        finally: acc[label or name].append(time.perf_counter()-t)
    setattr(mod,name,g)
wrap(CL,"record"); wrap(B,"insert_rows"); wrap(B,"insert_chunks"); wrap(F,"_index_range"); wrap(B,"existing_ids")
for mod, name in ((W, "_index_ids"), (B, "write_text_rows")):  # since round 15
    if hasattr(mod, name): wrap(mod, name)
conn=p.arms.storage.connection()
if os.environ.get("PRAGMA"): conn.execute(os.environ["PRAGMA"])
rep=P.AddReport(); tb=[]
for r in preps:
    t=time.perf_counter()
    with p.arms.storage.transaction() as tx:
        t1=time.perf_counter()
        W.write_batch(p,tx,r.batch,rep,r.count,r.chunks,r.rows,r.texts)
        t2=time.perf_counter()
    t3=time.perf_counter(); acc["begin"].append(t1-t); acc["commit(+seal)"].append(t3-t2); tb.append(t3-t)
print(f"load {os.getloadavg()[0]:.1f} writer batches ms: {[round(x*1e3,1) for x in tb]}")
for k,v in acc.items(): print(f"  {k:15s} n={len(v):3d} total {sum(v)*1e3:6.1f} ms  median {statistics.median(v)*1e3:.3f}")
acc.clear()
vec=H.vectors_for(2*n); ids=rep.chunk_ids; vec=vec[:len(ids)]; sem=p.arms.semantic; st=p.arms.storage
import octomem.plugins.sqlite_vec.arm as A, octomem.plugins.sqlite_vec.vec0_writer as VW
wrap(A,"chunk_fields"); wrap(A,"insert_new")
t=time.perf_counter()
for s in range(0,len(ids),256):
    t0=time.perf_counter()
    with st.transaction() as tx:
        t1=time.perf_counter(); sem.add(tx, ids[s:s+256], vec[s:s+256]); t2=time.perf_counter()
    t3=time.perf_counter(); acc["begin"].append(t1-t0); acc["add"].append(t2-t1); acc["commit(+seal)"].append(t3-t2)
print(f"vectors {time.perf_counter()-t:.3f}")
for k,v in acc.items(): print(f"  {k:15s} n={len(v):3d} total {sum(v)*1e3:6.1f} ms  median {statistics.median(v)*1e3:.3f}")
shutil.rmtree(root,ignore_errors=True)
