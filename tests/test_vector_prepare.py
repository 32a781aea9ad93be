"""sqlite-vec's ``prepare``: a recall restores the vector arm's in-RAM copies from their
snapshots while the query is embedded on a worker (issue 15: a fresh ``octomem search``
at 100k spent 0.2-0.27 s restoring them after the embedding), with the same answers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from test_snapshots import CASES, QUERY, WRITER, Process, _counts, _reference
from test_snapshots import saved as saved  # noqa: F401 (the fixture)

from octomem.engine.types import Filters
from octomem.plugins.sqlite.storage import SqliteStorage
from octomem.plugins.sqlite_vec.arm import SqliteVecOptions, SqliteVecSemanticArm


def test_prepare_restores_the_copies_and_the_search_only_scans(saved: Path) -> None:
    """A fresh process (a one-shot search) prepares: the vectors and the filter index are
    restored from their snapshots, not loaded; the searches after it restore and load
    nothing more, and answer as the tables do."""
    fresh = Process(saved)
    try:
        fresh.semantic.prepare()
        table = fresh.semantic.bound.table  # type: ignore[union-attr]
        restored = {"vectors": fresh.semantic._matrices[table].snapshot.restores,
                    "filters": fresh.storage.fields.snapshot.restores}
        assert restored == {"vectors": 1, "filters": 1}
        got = [fresh.answers(QUERY, "heron river copper", f) for f in CASES]
        assert _counts(fresh) == {"vectors": (1, 0), "postings": (1, 0), "filters": (1, 0)}
    finally:
        fresh.close()
    assert got == _reference(saved)


def test_a_write_between_prepare_and_search_is_followed(saved: Path) -> None:
    """Another process writes after ``prepare``: the search still follows the change log
    (its new chunk is found first, the deleted one is gone), as the tables answer."""
    fresh = Process(saved)
    try:
        fresh.semantic.prepare()
        done = subprocess.run([sys.executable, "-c", WRITER, str(saved), "5"], check=True,
                              capture_output=True, text=True, timeout=120)
        new = int(done.stdout.strip())
        vec = fresh.semantic.search(np.ones(8, dtype=np.float32), Filters(), 80)
        got = [fresh.answers(QUERY, "heron river copper", f) for f in CASES]
    finally:
        fresh.close()
    assert vec[0].chunk_id == new and 5 not in [h.chunk_id for h in vec]
    assert got == _reference(saved)


def test_prepare_with_vec0_scans_or_unbound_does_nothing(saved: Path) -> None:
    """``scan = "vec0"`` searches vec0 itself: nothing is restored; an unbound arm has
    nothing to prepare."""
    storage = SqliteStorage(saved, snapshots=True)
    try:
        vec0 = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="vec0"))
        with storage.transaction() as tx:
            vec0.bind(tx, "model", 8)
        vec0.prepare()
        assert vec0._matrices == {} and storage.fields.snapshot.restores == 0
        unbound = SqliteVecSemanticArm(storage, SqliteVecOptions(scan="warm"))
        unbound.prepare()
        assert unbound._matrices == {}
    finally:
        storage.close()


def _resident_kib(path: Path) -> int:
    """Return how much of ``path``'s memory maps in this process is resident (KiB), from
    ``/proc/self/smaps``."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5:  # a mapping's header line
            inside = fields[-1] == str(path)
        elif inside and fields[:1] == ["Rss:"]:
            total += int(fields[1])
    return total


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="reads /proc/self/smaps")
def test_prefault_maps_a_restored_matrix_and_leaves_it_unchanged(tmp_path: Path) -> None:
    """``prefault`` maps every page of a matrix restored from its snapshot (memory-mapped
    copy-on-write, as :func:`~octomem.plugins.sqlite.snapshots.load` maps it) without
    changing a value; a copy loaded from the tables is left alone."""
    from octomem.plugins.sqlite_vec.matrix import VectorMatrix

    path = tmp_path / "matrix.npy"
    vectors = np.random.default_rng(7).standard_normal((4096, 64)).astype(np.float32)
    np.save(path, np.asfortranarray(vectors))  # 1 MiB, column-major as the scan keeps it
    matrix = VectorMatrix("vec_t", 64, (10**9, 16, 100))
    matrix.matrix = np.load(path, mmap_mode="c").view(np.ndarray)
    matrix.count = 4096
    matrix.snapshot.origin = "tables"
    matrix.prefault()
    assert _resident_kib(path) == 0  # not restored from a snapshot: nothing read
    matrix.snapshot.origin = "snapshot"
    matrix.prefault()
    assert _resident_kib(path) >= 1024  # every page of the 1 MiB of rows
    assert np.array_equal(matrix.matrix, vectors)
