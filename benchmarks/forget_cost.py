"""What leaving no trace of forgotten text costs (plugins/sqlite/purge.py): forget latency,
ingest and keyword search speed, with the purge ("new") against SQLite's defaults ("old":
``secure_delete`` off, no FTS5 merge, no WAL truncation, snapshots kept), A/B interleaved
in one process so that the ratios hold on a shared machine.

    python -m benchmarks.forget_cost --chunks 10000 --rounds 3 --out DIR

Documents are one chunk of 65 words drawn from a Zipf vocabulary of 30k made-up words,
384-d random unit vectors, written through the ``sqlite`` storage and the ``fts5`` and
``sqlite-vec`` arms as the pipeline writes them (transactions of 256 documents).
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.fts5 import arm as fts5_arm
from octomem.plugins.fts5.arm import Fts5KeywordArm, Fts5Options
from octomem.plugins.sqlite import connection, purge
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm

from .arguments import at_least, bench_parser, run_main

DIM = 384
BATCH = 256


@contextlib.contextmanager
def old_behaviour() -> Iterator[None]:
    """Run as before the purge: secure_delete off, no merge, no checkpoint/snapshot removal."""
    opened, merge, after = connection.open_connection, fts5_arm.merge, purge.after_commit

    def plain(path: Path, busy_timeout_ms: int):  # type: ignore[no-untyped-def]
        conn = opened(path, busy_timeout_ms)
        conn.execute("PRAGMA secure_delete=OFF")
        return conn

    connection.open_connection = plain  # type: ignore[assignment]
    import octomem.plugins.sqlite.storage as storage_module
    storage_module.open_connection = plain  # type: ignore[assignment]
    fts5_arm.merge = lambda tx: None  # type: ignore[assignment]
    purge.after_commit = lambda conn, db: None  # type: ignore[assignment]
    try:
        yield
    finally:
        connection.open_connection = opened  # type: ignore[assignment]
        storage_module.open_connection = opened  # type: ignore[assignment]
        fts5_arm.merge, purge.after_commit = merge, after  # type: ignore[assignment]


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    vocab = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(3, 9)))
             for _ in range(30_000)]
    weights = [1 / (i + 1) for i in range(len(vocab))]
    return [" ".join(rng.choices(vocab, weights, k=65)) for _ in range(n)]


def build(path: Path, docs: list[str]) -> tuple[float, list[str]]:
    """Ingest ``docs`` into a new store at ``path``; return (seconds, document ids)."""
    rng = np.random.default_rng(0)
    storage = SqliteStorage(path, snapshots=False)
    keyword = Fts5KeywordArm(storage, Fts5Options(in_ram="off"))
    semantic = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    ids: list[str] = []
    start = time.perf_counter()
    with storage.transaction() as tx:
        semantic.bind(tx, "bench", DIM)
    for first in range(0, len(docs), BATCH):
        with storage.transaction() as tx:
            stored = []
            for text in docs[first:first + BATCH]:
                doc = Document(text=text, kind="FACT")
                ids.append(doc.id)
                stored += storage.add_document(tx, doc, [Chunk(doc.id, 0, text)])
            keyword.index(tx, stored)
            vectors = rng.standard_normal((len(stored), DIM)).astype(np.float32)
            vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
            semantic.add(tx, [c.id for c in stored], vectors)
    seconds = time.perf_counter() - start
    storage.close()
    return seconds, ids


def forget_and_search(path: Path, ids: list[str], docs: list[str],
                      forgets: int) -> tuple[list[float], list[float]]:
    """Forget ``forgets`` documents one by one (ms each), then time 50 keyword searches."""
    storage = SqliteStorage(path, snapshots=True)
    keyword = Fts5KeywordArm(storage, Fts5Options(in_ram="off"))
    semantic = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
    with storage.transaction() as tx:
        semantic.bind(tx, "bench", DIM)
    latencies = []
    for doc_id in random.Random(1).sample(ids, forgets):
        start = time.perf_counter()
        with storage.transaction() as tx:
            removed = storage.delete_document(tx, doc_id)
            keyword.remove(tx, removed)
            semantic.remove(tx, removed)
        latencies.append((time.perf_counter() - start) * 1000)
    queries = [" ".join(d.split()[5:9]) for d in random.Random(2).sample(docs, 50)]
    searches = []
    for query in queries:
        start = time.perf_counter()
        keyword.search(query, Filters(), 10)
        searches.append((time.perf_counter() - start) * 1000)
    storage.close()
    return latencies, searches


def main(argv: list[str] | None = None) -> None:
    """Parse arguments, measure old against new forgets in alternated rounds, write the
    summary (``summary.json`` under ``--out``)."""
    parser = bench_parser("forget_cost", __doc__)
    parser.add_argument("--chunks", type=at_least(1), default=10_000,
                        help="statements in each store (default 10,000)")
    parser.add_argument("--rounds", type=at_least(1), default=3,
                        help="alternated old/new rounds (default 3)")
    parser.add_argument("--forgets", type=at_least(1), default=5,
                        help="statements forgotten in each round (default 5)")
    parser.add_argument("--out", type=Path, required=True,
                        help="folder for the stores and summary.json")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    docs = texts(args.chunks, 0)
    rows: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
    for rnd in range(args.rounds):
        for mode in (("old", "new") if rnd % 2 == 0 else ("new", "old")):
            path = args.out / f"{mode}-{rnd}.sqlite3"
            for stale in args.out.glob(path.name + "*"):
                if stale.is_file():
                    stale.unlink()
            with old_behaviour() if mode == "old" else contextlib.nullcontext():
                ingest_s, ids = build(path, docs)
                forgets, searches = forget_and_search(path, ids, docs, args.forgets)
            got = rows[mode]
            got.setdefault("ingest_s", []).append(ingest_s)
            got.setdefault("forget_ms", []).extend(forgets)
            got.setdefault("search_ms", []).extend(searches)
            print(mode, rnd, f"ingest {ingest_s:.2f} s", f"forget p50 "
                  f"{statistics.median(forgets):.1f} ms", f"search p50 "
                  f"{statistics.median(searches):.2f} ms", flush=True)
    summary = {mode: {key: statistics.median(values) for key, values in got.items()}
               for mode, got in rows.items()}
    summary["ratio_new_over_old"] = {key: summary["new"][key] / summary["old"][key]
                                     for key in summary["new"]}
    print(json.dumps(summary, indent=1))
    (args.out / "summary.json").write_text(json.dumps({"chunks": args.chunks, **summary}))


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.forget_cost")
