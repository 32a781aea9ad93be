"""The ``expansion`` column's cost in a fresh process, with and without the word table.

For each tune question, in the dataset's order, in one fresh process: its candidates are
the 200 turns of its own haystack (LongMemEval tune: ``metadata.qid``; LoCoMo tune: the
conversation) sharing the most content words with it (a stand-in for the fused top 200
the ``conversation`` reranker re-scores); the column is computed once with the table and
once by a second ``WordVectors`` embedding every word live, in alternation. Prints the
CPU and wall ms per question for each, and the largest difference between the columns.

    python cold_columns.py DATASET_DIR {qid|conv_id} [tune split filter]
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from octomem.engine.words import content_words
from octomem.plugins.conversation.expansion import WordVectors, expansion_column, expansion_words
from octomem.plugins.conversation.word_table import open_table, public_words, table_folder
from octomem.plugins.fastembed.embedder import FastembedEmbedder

LOCOMO_TUNE = {"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"}


def load(folder: Path, field: str) -> tuple[list[tuple[str, str]], dict[str, list[str]]]:
    queries = [json.loads(line) for line in (folder / "queries.jsonl").open()]
    if field == "qid":
        queries = [q for q in queries if q["metadata"].get("split") == "tune"]
    else:
        queries = [q for q in queries if q["metadata"].get(field) in LOCOMO_TUNE]
    groups = {q["metadata"][field] for q in queries}
    turns: dict[str, list[str]] = defaultdict(list)
    for line in (folder / "corpus.jsonl").open():
        row = json.loads(line)
        if row["metadata"].get(field) in groups:
            turns[row["metadata"][field]].append(row["text"])
    return [(q["text"], q["metadata"][field]) for q in queries], turns


def timed(fn, *args):  # -> (fn(*args), cpu ms, wall ms)
    c, w = time.process_time(), time.perf_counter()
    out = fn(*args)
    return out, 1e3 * (time.process_time() - c), 1e3 * (time.perf_counter() - w)


def main() -> None:
    folder, field = Path(sys.argv[1]), sys.argv[2]
    queries, turns = load(folder, field)
    embedder = FastembedEmbedder()
    embedder.load()
    embedder.embed_documents(["warm"])
    table, open_cpu, open_wall = timed(lambda: open_table(
        table_folder(), embedder.model_id, embedder.dim, public_words(embedder.vocabulary())))
    assert table is not None, "build the table first (octomem ingest, serve or bench)"
    with_table, live = WordVectors(embedder, table=table), WordVectors(embedder)
    words = {g: [expansion_words(t) for t in ts] for g, ts in turns.items()}
    folded = {g: [content_words(t) for t in ts] for g, ts in turns.items()}
    rows, diff = [], 0.0
    for text, group in queries:
        asked = content_words(text)
        order = sorted(range(len(turns[group])), key=lambda i: -len(asked & folded[group][i]))
        cand = [words[group][i] for i in order[:200]]
        question = expansion_words(text)
        a, cpu_t, wall_t = timed(expansion_column, question, [], cand, with_table)
        b, cpu_l, wall_l = timed(expansion_column, question, [], cand, live)
        diff = max(diff, float(np.abs(a - b).max()) if len(a) else 0.0)
        rows.append((cpu_t, wall_t, cpu_l, wall_l))
    r = np.array(rows)
    load_avg = os.getloadavg()[0]
    print(f"{folder.name} ({field}), {len(r)} questions, load {load_avg:.1f}; table opened in "
          f"{open_cpu:.0f} ms CPU / {open_wall:.0f} ms wall; max |column difference| {diff:.2e}")
    for name, col in (("table", 0), ("live", 2)):
        cpu, wall = r[:, col], r[:, col + 1]
        print(f"  {name:5s} first {cpu[0]:7.1f} ms CPU ({wall[0]:7.1f} wall); p50 "
              f"{np.percentile(cpu, 50):6.1f} / p95 {np.percentile(cpu, 95):6.1f} ms CPU; "
              f"total {cpu.sum() / 1e3:6.2f} s CPU ({wall.sum() / 1e3:6.2f} s wall)")


if __name__ == "__main__":
    main()
