"""Two clients, one memory: several processes write to the same scope at once, and every
write lands (WAL, busy timeout, short write transactions, embedding outside them)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory
from octomem.plugins.sqlite.storage import SqliteStorage

pytestmark = pytest.mark.slow

WORKERS = 4
WRITES = 25
HANDOFFS = 3

WORKER = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    from octomem.engine.memory.facade import open_memory

    worker, project, global_root, go = sys.argv[1], *map(Path, sys.argv[2:5])
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=project, global_root=global_root)
    memory.scopes.require("global", create=True)  # assembled before the start signal
    while not go.exists():
        time.sleep(0.005)
    ids = []
    for i in range(int(sys.argv[5])):
        out = memory.remember(f"worker {worker} wrote statement number {i} about topic {i % 7}",
                              kind="FACT", tags=[f"w{worker}"])
        ids.append(out.document.id)
        if i % 5 == 0:
            memory.recall(f"statement number {i}", top_k=3)  # readers count recalls, too
    handoffs = [memory.remember(f"Handoff {worker}.{j}", kind="HANDOFF").document.id
                for j in range(int(sys.argv[6]))]
    memory.close()
    print(json.dumps({"ids": ids, "handoffs": handoffs}))
''')


def test_concurrent_writers_all_land(tmp_path: Path) -> None:
    project, global_root, go = tmp_path / "project", tmp_path / "global", tmp_path / "go"
    project.mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(w), str(project), str(global_root), str(go),
             str(WRITES), str(HANDOFFS)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for w in range(WORKERS)
    ]
    time.sleep(0.5)
    go.touch()
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err[-2000:]
        results.append(json.loads(out.strip().splitlines()[-1]))
    written = [i for r in results for i in r["ids"]]
    handoffs = [i for r in results for i in r["handoffs"]]
    assert len(set(written)) == WORKERS * WRITES

    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}}, project_root=project,
                         global_root=global_root)
    try:
        local = memory.status()["scopes"]["local"]
        assert local["documents"] == WORKERS * (WRITES + HANDOFFS)
        assert local["chunks_without_vector"] == 0
        current = {d.id for d in memory.statements("local")}
        assert set(written) <= current
        current_handoffs = current & set(handoffs)
        assert len(current_handoffs) == 1  # every handoff replaced the one before it
        for worker in range(WORKERS):
            answer = memory.recall("statement number", tags=[f"w{worker}"], top_k=WRITES,
                                   count=False)
            assert len(answer.hits) == WRITES
    finally:
        memory.close()


def test_connections_racing_to_create_a_file_all_open(tmp_path: Path) -> None:
    """Several connections opening one brand-new file at once all get it in WAL mode:
    SQLite answers the journal-mode race with "database is locked" without waiting, which
    once failed a server's start while a client created the same scope."""
    failures: list[BaseException] = []

    def open_close(path: Path) -> None:
        try:
            SqliteStorage(path).close()
        except BaseException as exc:  # noqa: BLE001 - collected and asserted below
            failures.append(exc)

    for trial in range(30):
        path = tmp_path / f"{trial}.db"
        threads = [threading.Thread(target=open_close, args=(path,)) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        storage = SqliteStorage(path)
        try:
            assert storage.connection().execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        finally:
            storage.close()
    assert failures == []
