"""Round 15: the steps of the first three batches' preparation (``writes.prepare``'s work) of
the harness's 10k documents in a fresh process, in ms: the empty-text check, the token
counter's load, the batch's counts (ceilings and the exact counts of the texts over them),
the storage-protocol checks, the chunks' texts, the rows. The first batch is prepared before
anything overlaps it. Run: ``PEERS_OUT=DIR python first_batch.py``.
"""
# ruff: noqa
import os, shutil, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
import octomem.engine.pipeline as P
from octomem.engine.arms import PreparedBulkStorage, TextBulkStorage
from octomem.engine.controls import blank
from octomem.engine.manager import load_registry
from octomem.engine.settings import load_settings
from octomem.engine.types import Document

docs = [Document(t, id=f"d{i}", metadata={"group": f"g{i % 10}"}) for i, t in enumerate(H.texts_for(10000))]
root = H.OUT / f"first{os.getpid()}"; shutil.rmtree(root, ignore_errors=True)
p = P.Pipeline(load_settings(None, {}), load_registry(), root)
T = time.perf_counter


def steps(batch):
    t = [T()]
    assert all(isinstance(d.text, str) and not blank(d.text) for d in batch); t.append(T())
    p._token_counter(); t.append(T())
    count = p._counted(batch); t.append(T())
    storage = p.arms.storage
    assert isinstance(storage, PreparedBulkStorage) and isinstance(storage, TextBulkStorage); t.append(T())
    texts = [p._chunk_texts(d, count) for d in batch]; t.append(T())
    storage.bulk_text_rows(batch, texts); t.append(T())
    return [round((b - a) * 1e3, 2) for a, b in zip(t, t[1:])], round((t[-1] - t[0]) * 1e3, 1)


print("ms: check, counter, counted, protocols, chunk texts, rows | total; load", os.getloadavg()[0])
for k in range(3):
    print(["first ", "second", "third "][k], *steps(docs[1024 * k:1024 * (k + 1)]))
shutil.rmtree(root, ignore_errors=True)
