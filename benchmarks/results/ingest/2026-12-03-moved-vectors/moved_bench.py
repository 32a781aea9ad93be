"""Re-ingest wall time of a moved folder of 300 notes, vector reuse off vs on, one run.

Notes: the first 300 SciFact corpus abstracts (read from /work/shared/data, written as .md
files under the folder given). Four projects: each ingests its folder, the folder is
moved, and the moved folder is ingested again, alternating reuse off/on. Default embedder.

Usage: ``python moved_bench.py SCRATCH_DIR`` (the folder is emptied first).
"""

import json
import os
import shutil
import sys
import time
from itertools import islice
from pathlib import Path

import octomem.engine.embed_path as embed_path
from octomem.engine.memory.facade import open_memory

CORPUS = "/work/shared/data/scifact/corpus.jsonl"


def abstracts(n: int, root: Path) -> list[dict]:
    """Empty ``root`` and return the first ``n`` SciFact corpus records."""
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    with open(CORPUS, encoding="utf-8") as lines:
        return [json.loads(line) for line in islice(lines, n)]


def write_notes(folder: Path, docs: list[dict]) -> None:
    """Write each record as a Markdown note in ``folder`` (made)."""
    folder.mkdir(parents=True)
    for i, d in enumerate(docs):
        (folder / f"n{i:03d}.md").write_text(f"# {d.get('title') or i}\n\n{d['text']}\n")


def main(root: Path) -> None:
    docs = abstracts(300, root)
    real_any = embed_path.any_vector
    out = []
    for run, reuse in enumerate([False, True, False, True]):
        project = root / f"p{run}"
        folder = project / "notes"
        write_notes(folder, docs)
        memory = open_memory(project_root=project, global_root=root / f"g{run}")
        start = time.perf_counter()
        memory.ingest(str(folder))
        first = time.perf_counter() - start
        folder.rename(project / "moved")
        embed_path.any_vector = real_any if reuse else (lambda *a: False)  # type: ignore
        load = os.getloadavg()[0]
        start = time.perf_counter()
        _, report = memory.ingest(str(project / "moved"))
        again = time.perf_counter() - start
        pipeline = memory.scopes.get("local")
        assert pipeline is not None
        status = pipeline.status()
        memory.close()
        out.append({"reuse": reuse, "first_s": round(first, 2), "moved_s": round(again, 2),
                    "load": round(load, 2), "reused": pipeline.vectors_reused,
                    "moved": len(report.moved_files), "chunks": status["chunks"],
                    "without_vector": status["chunks_without_vector"]})
        print(out[-1], flush=True)
    print(json.dumps(out))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
