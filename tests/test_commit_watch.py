"""A search skips its change-log read only while nothing can have been committed
(:mod:`octomem.plugins.sqlite.commit_watch`): every commit, by this connection, another
one or another process, is seen by the next search; a connection inside a transaction,
another connection and a file without a WAL index are never trusted."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import apsw
import numpy as np

from octomem.engine.types import Filters
from octomem.plugins.sqlite.commit_watch import CommitWatch, _open_map
from tests.test_vector_shortcuts import DIM, _arm, _store


def _wal(path: Path) -> apsw.Connection:
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA journal_mode=WAL").fetchall()
    conn.execute("CREATE TABLE IF NOT EXISTS t (x INTEGER)")
    return conn


def _armed(watch: CommitWatch, conn: apsw.Connection) -> None:
    """Mark ``watch`` as a search does: the header read before each log read, the third
    search's mark the first that counts (the first names the connection, the second maps)."""
    for _ in range(3):
        header = watch.header_now(conn)
        conn.execute("SELECT count(*) FROM t").fetchall()  # the log read
        watch.mark(header, 7)


def test_every_commit_moves_the_header(tmp_path: Path) -> None:
    mine, other = _wal(tmp_path / "f.db"), _wal(tmp_path / "f.db")
    watch = CommitWatch()
    assert not watch.unchanged(mine, 7)
    _armed(watch, mine)
    assert watch.unchanged(mine, 7) and watch.unchanged(mine, 7)
    assert not watch.unchanged(mine, 8)  # another state of the copies
    assert not watch.unchanged(other, 7)  # only the connection that marked
    with other:
        other.execute("INSERT INTO t VALUES (1)")
    assert not watch.unchanged(mine, 7)
    _armed(watch, mine)
    with mine:
        mine.execute("INSERT INTO t VALUES (2)")
    assert not watch.unchanged(mine, 7)
    _armed(watch, mine)
    mine.execute("BEGIN")
    try:  # inside a transaction the connection's own writes are not in the header yet
        assert not watch.unchanged(mine, 7)
    finally:
        mine.execute("ROLLBACK")
    assert watch.unchanged(mine, 7)
    other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()  # a checkpoint commits nothing
    with other:  # and the write after it restarts the WAL: new salts
        other.execute("INSERT INTO t VALUES (3)")
    assert not watch.unchanged(mine, 7)
    watch.forget()
    assert not watch.unchanged(mine, 7)


def test_no_map_without_a_wal_index(tmp_path: Path) -> None:
    rollback = apsw.Connection(str(tmp_path / "r.db"))
    rollback.execute("CREATE TABLE t (x INTEGER)")
    assert _open_map(rollback) is None
    watch = CommitWatch()
    for _ in range(4):
        watch.mark(watch.header_now(rollback), 7)
        assert not watch.unchanged(rollback, 7)
    memory = apsw.Connection(":memory:")
    assert _open_map(memory) is None


def test_a_kept_filter_sees_another_process_commit(tmp_path: Path) -> None:
    """The vector arm's kept-filter search, armed (several searches, nothing written),
    sees vectors another process deletes and chunks it moves into the filter."""
    path = tmp_path / "s.sqlite3"
    storage, _ = _store(path, 600)
    arm = _arm(storage, 64.0)
    f = Filters(metadata={"group": "g3"})
    q = np.random.default_rng(5).standard_normal(DIM).astype(np.float32)
    first = arm.search(q, f, 20)
    for _ in range(4):
        assert arm.search(q, f, 20) == first
    cache = arm._subsets[arm.bound.table]  # type: ignore[union-attr]
    assert cache.watch.header is not None  # armed: the next search reads no log
    gone = first[0].chunk_id
    script = textwrap.dedent(f"""
        from octomem.plugins.sqlite.storage import SqliteStorage
        from octomem.plugins.sqlite_vec.arm import SqliteVecSemanticArm, SqliteVecOptions
        st = SqliteStorage({str(path)!r})
        arm = SqliteVecSemanticArm(st, SqliteVecOptions(scan="vec0"))
        with st.transaction() as tx:
            arm.bind(tx, "m", {DIM})
            arm.remove(tx, [{gone}])
        with st.transaction() as tx:
            tx.execute("UPDATE chunks SET metadata = '{{\\"group\\": \\"g3\\"}}' WHERE id % 10 = 5")
    """)
    subprocess.run([sys.executable, "-c", script], check=True)
    got = arm.search(q, f, 20)
    assert got == _arm(storage, 0.0).search(q, f, 20)
    assert gone not in {h.chunk_id for h in got} and {h.chunk_id % 10 for h in got} <= {4, 5}
    for _ in range(3):  # armed again: the same answers
        assert arm.search(q, f, 20) == got
