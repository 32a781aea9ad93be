"""Cost of the donor lookup when nothing is reusable: 300 new notes added to a store that
holds 300 others with vectors; ``reusable()`` over the new chunks in batches of 64 vs
embedding them, one run (SciFact corpus abstracts 1-600 from /work/shared/data).

Usage: ``python lookup_cost.py SCRATCH_DIR`` (the folder is emptied first; the notes are
written as :mod:`moved_bench` writes them).
"""

import os
import sys
import time
from pathlib import Path

from moved_bench import abstracts, write_notes  # beside this file

from octomem.engine.chunking import embedding_text
from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.sources import file_document
from octomem.engine.vector_reuse import reusable


def main(root: Path) -> None:
    docs = abstracts(600, root)
    project = root / "p"
    for name, part in (("a", docs[:300]), ("b", docs[300:])):
        write_notes(project / name, part)
    memory = open_memory(project_root=project, global_root=root / "g")
    memory.ingest(str(project / "a"))
    pipe = memory.scopes.get("local")
    assert pipe is not None
    report = pipe.add([file_document(f) for f in sorted((project / "b").iterdir())],
                      embed=False)
    storage, semantic = pipe.arms.storage, pipe.arms.semantic
    chunks = storage.get_chunks(report.chunk_ids)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    for k in range(0, len(chunks), 64):
        ids, _ = reusable(storage, semantic, chunks[k:k + 64])
        assert ids == []
    lookup = time.perf_counter() - start
    start = time.perf_counter()
    for k in range(0, len(chunks), 64):
        pipe.arms.embedder.embed_documents([embedding_text(c) for c in chunks[k:k + 64]])
    embed = time.perf_counter() - start
    print({"chunks": len(chunks), "lookup_s": round(lookup, 3), "embed_s": round(embed, 2),
           "ratio": round(lookup / embed, 4), "load": load})
    memory.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]))
