"""Round 14: when each batch is prepared and written during ``Pipeline.add`` of the
harness's 10k documents (thread, start and end seconds, thread CPU); ``RAMP=a,b,c`` makes
the first transactions that many documents. Run: ``PEERS_OUT=DIR [RAMP=...] python timeline.py``.
"""
# ruff: noqa
import sys, shutil, time, threading, os
from pathlib import Path
sys.argv=[sys.argv[0]]+sys.argv[1:]
RAMP=[int(x) for x in os.environ.get("RAMP","").split(",") if x]
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import octomem.engine.writes as W, octomem.engine.pipeline as P
from octomem.engine.manager import load_registry
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
log=[]
T0=[0]
def wrap(name, f):
    def g(*a, **k):
        t=time.perf_counter(); c=time.thread_time()
        try: return f(*a, **k)
        finally: log.append((name, threading.current_thread().name[:8], t-T0[0], time.perf_counter()-T0[0], time.thread_time()-c))
    return g
W.prepare=wrap("prep", W.prepare); P.write_batch=wrap("write", P.write_batch)
if RAMP:
    orig=W.transactions
    def ramped(documents, size):
        docs=list(documents); i=0
        for s in RAMP:
            yield docs[i:i+s]; i+=s
        yield from orig(docs[i:], size)
    P.transactions=ramped
n=10000
texts=H.texts_for(n)
docs=[Document(t,id=f"d{i}",metadata={"group":f"g{i%10}"}) for i,t in enumerate(texts)]
root=H.OUT / f"timeline{os.getpid()}"; shutil.rmtree(root,ignore_errors=True)
p=P.Pipeline(load_settings(None,{}),load_registry(),root)
T0[0]=time.perf_counter(); rep=p.add(docs,embed=False); print("add", round(time.perf_counter()-T0[0],3))
for name,th,a,b,c in sorted(log,key=lambda x:x[2]): print(f"{name:5s} {th:8s} {a:.3f} -> {b:.3f} wall {b-a:.3f} cpu {c:.3f}")
