"""The keyword arm's in-RAM ranking at 1M, MaxScore before / after this folder's change,
interleaved per query in one process: answers compared (ids and scores, exactly) and
the CPU of ``PostingIndex.ranked`` (this thread's). "before" is ``maxscore.py`` as it was
(a copy given on the command line, loaded as its own module); "after" is the installed
one at each ``DENSE_LOOKUP`` given. Usage::

    nice -n 5 python ab.py PROJECT BEFORE.py SPLIT N K DENSE,DENSE,... [SCIFACT_DIR]

``SPLIT``: ``train`` (to choose ``DENSE_LOOKUP``) or ``test`` (to report).
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import sys
import time
from pathlib import Path

from octomem.engine.memory.facade import open_memory
from octomem.plugins.fts5 import maxscore
from octomem.plugins.fts5 import postings as fts5_postings
from octomem.plugins.fts5.arm import query_terms


def main() -> None:
    """Print per configuration: answers identical to before, CPU p50 / mean, ratio."""
    root, before_file, split, n, k = (Path(sys.argv[1]), sys.argv[2], sys.argv[3],
                                      int(sys.argv[4]), int(sys.argv[5]))
    denses = [int(d) for d in sys.argv[6].split(",")]
    data = Path(sys.argv[7] if len(sys.argv) > 7 else "/work/shared/data/scifact")
    spec = importlib.util.spec_from_file_location("maxscore_before", before_file)
    assert spec is not None and spec.loader is not None
    before = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(before)
    qids = {line.split("\t")[0]
            for line in (data / f"qrels/{split}.tsv").read_text().splitlines()[1:]}
    rows = [json.loads(line) for line in (data / "queries.jsonl").read_text().splitlines()]
    memory = open_memory(project_root=root)
    arm = memory.scopes.get("local").arms.keyword
    arm.warm()
    index, conn = arm.postings, arm.storage.connection()
    tokens = [arm._tokens(conn, query_terms(r["text"], True, 256, True))
              for r in rows if r["_id"] in qids]
    tokens = [t for t in tokens if t][:n]
    configs: list[tuple[str, object, int]] = [("before", before, 0)]
    configs += [(f"after DENSE_LOOKUP={d}", maxscore, d) for d in denses]

    def use(config: tuple[str, object, int]) -> None:
        fts5_postings.maxscore = config[1]  # type: ignore[assignment]
        maxscore.DENSE_LOOKUP = config[2]

    for t in tokens[:20]:
        for c in configs:
            use(c)
            index.ranked(t, k)
    cpu: dict[str, list[float]] = {c[0]: [] for c in configs}
    differ = dict.fromkeys(cpu, 0)
    start = os.getloadavg()
    for i, t in enumerate(tokens):
        got = {}
        for c in configs[i % len(configs):] + configs[:i % len(configs)]:
            use(c)
            clock = time.thread_time()
            got[c[0]] = index.ranked(t, k)
            cpu[c[0]].append(time.thread_time() - clock)
        differ = {name: differ[name] + (got[name] != got["before"]) for name in differ}
    print(f"{split} claims {len(tokens)}, k = {k}, chunks {index.live_rows:,}, load "
          f"{[round(x, 2) for x in start]} -> {[round(x, 2) for x in os.getloadavg()]}")
    base = sum(cpu["before"])
    for name, values in cpu.items():
        print(f"{name:24s} CPU p50 {statistics.median(values) * 1e3:6.2f} ms, mean "
              f"{statistics.fmean(values) * 1e3:6.2f} ms, total / before {sum(values) / base:.3f}"
              f", answers differing from before: {differ[name]}")


if __name__ == "__main__":
    main()
