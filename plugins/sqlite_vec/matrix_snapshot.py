"""The vector matrix's snapshot beside the SQLite file (:mod:`octomem.plugins.sqlite.snapshots`).

A process that loads a vector set whole writes ``ids``, ``matrix`` and ``inv_norms`` (and,
past the projection threshold, the projection's ``basis``, the projected rows and, with
``approximate_scan = "int8"``, their int8 ``codes`` and ``scale``: :mod:`.quantized`) as
``.npy`` files in a background thread; the next process memory-maps them, follows the
change log from their position, then checks the copy against the table: the row count,
and a sample of :data:`SAMPLE` rows compared byte for byte. Anything that does not match
sends it back to loading the table whole (and saving a new snapshot). A snapshot written
before the codes existed still loads: the first search that needs them codes the
projected rows (~0.3 s at 1M) and saves the snapshot again.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import apsw
import numpy as np

from ..sqlite import snapshots

if TYPE_CHECKING:
    import threading

    from ..sqlite.snapshot_sync import SnapshotState
    from .projection import Projection
    from .quantized import PackedCodes

#: Bytes between the reads with which :meth:`MatrixSnapshots.prefault` maps a restored
#: matrix's pages (4 KiB: the base page size of x86-64 and most arm64 Linux kernels; on a
#: larger page size some reads only repeat).
PAGE_BYTES = 4096

#: Rows compared with the table after a snapshot was restored and brought up to date
#: (each a vec0 point lookup: ~1.7 ms at 100k under load, so a few).
SAMPLE = 8


class MatrixSnapshots:
    """The :class:`~octomem.plugins.sqlite.snapshot_sync.Snapshotted` side of
    :class:`~.matrix.VectorMatrix` (a mixin: it reads and sets the matrix's fields)."""

    table: str
    dim: int
    seq: int
    count: int
    ids: np.ndarray
    matrix: np.ndarray
    inv_norms: np.ndarray
    reduced: np.ndarray
    quantized: bool
    codes: np.ndarray
    scale: np.ndarray | None
    packed: PackedCodes
    lock: threading.RLock
    projection: Projection | None
    snapshot: SnapshotState
    _order: np.ndarray | None

    _pack: Callable[[], None]  # QuantizedRows' (an annotation: a stub would shadow it)

    def _clear(self) -> None: ...

    def snapshot_name(self) -> str:
        """The vec0 table's name (one vector set per table)."""
        return self.table

    def snapshot_about(self) -> dict[str, Any]:
        """The table and the dimension."""
        return {"kind": "vectors", "table": self.table, "dim": self.dim}

    def snapshot_adopt(self, snap: snapshots.Snapshot) -> bool:
        """Take ``ids`` (int64 ``(n,)``), ``matrix`` (float32 ``(n, dim)``, memory-mapped
        copy-on-write) and ``inv_norms`` (float32 ``(n,)``), and the projection and its
        codes (int8 ``(n, dims)``, float32 ``(dims,)`` scale) if saved."""
        from .projection import Projection

        arrays = snap.arrays
        n = len(arrays["ids"]) if "ids" in arrays else -1
        shapes: dict[str, tuple[int | None, ...]] = {
            "ids": (n,), "matrix": (n, self.dim), "inv_norms": (n,)}
        dtypes = {"ids": "int64", "matrix": "float32", "inv_norms": "float32",
                  "basis": "float32", "reduced": "float32", "codes": "int8", "scale": "float32"}
        if "basis" in arrays:
            dims = arrays["basis"].shape[-1]
            shapes.update(basis=(self.dim, dims), reduced=(n, dims))
        if "basis" in arrays and "codes" in arrays:
            coded = arrays["codes"].shape[-1]
            shapes.update(codes=(n, coded), scale=(coded,))
        if n < 0 or not snapshots.check(arrays, shapes, dtypes):
            return False
        self._clear()
        self.ids = np.array(arrays["ids"])
        self.inv_norms = np.array(arrays["inv_norms"])
        self.matrix = arrays["matrix"]
        if "basis" in arrays:
            self.projection = Projection(np.array(arrays["basis"]))
            self.reduced = arrays["reduced"]
        if "basis" in arrays and "codes" in arrays:
            self.codes, self.scale = arrays["codes"], np.array(arrays["scale"])
        self.count, self._order = n, None
        return True

    def snapshot_agrees(self, conn: apsw.Connection) -> bool:
        """True when the copy holds as many rows as the table and a sample of them equals
        the table's, byte for byte."""
        try:
            count = conn.execute(f"SELECT count(*) FROM {self.table}_rowids").fetchone()[0]
        except apsw.SQLError:  # not sqlite-vec's usual shadow table: count through vec0
            count = conn.execute(f"SELECT count(*) FROM {self.table}").fetchone()[0]
        if int(count) != self.count:
            return False
        if not self.count:
            return True
        # the standard library's sampler: numpy.random is a 50-70 ms import of its own
        pos = random.sample(range(self.count), min(SAMPLE, self.count))
        for i, p in zip(self.ids[pos].tolist(), pos, strict=True):
            # point lookups: vec0 scans every row for `chunk_id IN (...)` (~0.2 s at 100k)
            row = conn.execute(f"SELECT embedding FROM {self.table} WHERE chunk_id = ?",
                               (i,)).fetchone()
            if row is None or bytes(row[0]) != np.ascontiguousarray(self.matrix[p]).tobytes():
                return False
        return True

    def prefault(self) -> None:
        """Map the pages an unfiltered scan reads (the projected rows past the projection
        threshold, else the matrix) now, when the copy was restored from its memory-mapped
        snapshot: one read per page, numpy's loop without the GIL; int8 codes are packed
        for numkong instead (which reads them: ~0.15-0.35 s at 1M x 96).

        A one-shot process calls it while the query is embedded on a worker (the vector
        arm's ``prepare``), so the scan after the embedding does not fault them in one
        by one: at 100k x 384 (150 MB) the first scan of a fresh map took ~138 ms against
        40-60 ms for the next ones at load 8 on 2 cores
        (``benchmarks/results/startup/cli-search.md``, fourth round). Scores are
        unchanged: nothing is written.
        """
        if self.snapshot.origin != "snapshot" or not self.count:
            return
        if self.quantized and self.scale is not None and len(self.codes):  # packing reads them
            with self.lock:
                self._pack()
            return
        rows = self.reduced if self.projection is not None else self.matrix
        if rows.flags.c_contiguous or rows.flags.f_contiguous:  # ravel: a view, no copy
            flat = rows.ravel(order="K")
            np.add.reduce(flat[::max(1, PAGE_BYTES // flat.itemsize)])

    def snapshot_export(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """Copies of the rows in use, the matrix in its scanning order (column-major
        below the projection threshold, so the restored map is scanned as fast)."""
        n = self.count
        rows = self.matrix[:n]
        arrays = {"ids": self.ids[:n].copy(), "inv_norms": self.inv_norms[:n].copy(),
                  "matrix": np.array(rows, order="C" if rows.flags.c_contiguous else "F")}
        if self.projection is not None:
            arrays["basis"] = self.projection.basis.copy()
            arrays["reduced"] = np.array(self.reduced[:n], order="F")
        if self.scale is not None:
            arrays["codes"], arrays["scale"] = self.codes[:n].copy(), self.scale.copy()
        return arrays, {}
