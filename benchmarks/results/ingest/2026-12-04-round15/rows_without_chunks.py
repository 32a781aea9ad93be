"""Round 15: a 1,024-document batch's rows of the harness's 10k documents, as the checkout
on ``PYTHONPATH`` builds them (``bulk_rows_of_texts``; main before round 15 made a ``Chunk``
per stored chunk there) against the same rows without any chunk (as round 15 builds them),
and ``document_params`` alone; medians of 5 passes over the 10 batches, ms.
Run: ``PYTHONPATH=MAIN python rows_without_chunks.py`` (MAIN: an archive of main).
"""
# ruff: noqa
import os, sys, time, statistics
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "peers"))
import harness as H
from octomem.engine.types import Document, new_chunk
from octomem.engine.sql.rows import document_params
import octomem.plugins.sqlite.bulk as B
texts=H.texts_for(10000)
docs=[Document(t,id=f"d{i}",metadata={"group":f"g{i%10}"}) for i,t in enumerate(texts)]
own=[[d.text.strip()] for d in docs]
def nochunk(documents, texts):
    out=[]; rows=[]; append_row=rows.append
    for document, own in zip(documents, texts, strict=True):
        out.append(params := document_params(document, "" if len(own) == 1 and own[0] == document.text else None))
        doc_id, _, title, uri, kind, tags_json, created, _, metadata_json = params[:9]
        valid_to, start, stop = document.valid_to, float(document.valid_from), int(document.revision)
        for i, text in enumerate(own):
            append_row((doc_id, i, text, kind, tags_json, created, title, uri, metadata_json, start, valid_to, stop))
    return out, rows
T=time.perf_counter
r={"with":[], "without":[], "docparams":[]}
for rep in range(5):
    for s in range(0,10000,1024):
        b,o=docs[s:s+1024],own[s:s+1024]
        t=T(); B.bulk_rows_of_texts(b,o); r["with"].append(T()-t)
        t=T(); nochunk(b,o); r["without"].append(T()-t)
        t=T(); [document_params(d) for d in b]; r["docparams"].append(T()-t)
print("load", os.getloadavg()[0], "src", B.__file__, {k:round(statistics.median(v)*1e3,2) for k,v in r.items()})
