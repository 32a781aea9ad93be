"""The ``sqlite-vec`` arm's in-RAM copies of its vector sets, and when searches use them.

Mixed into :class:`~octomem.plugins.sqlite_vec.arm.SqliteVecSemanticArm`: one
:class:`~octomem.plugins.sqlite_vec.matrix.VectorMatrix` per vector set, made on first
use and brought up to date through the change log before it is read; whether a search
scans it follows option ``scan`` (``"warm"``: once loaded, or restored from snapshots
that match the store; see the arm's module docstring).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..sqlite import changelog as vector_log
from .tables import VectorSet

if TYPE_CHECKING:  # the in-RAM copy imports numpy: only where it is made
    from octomem.plugins.sqlite.storage import SqliteStorage

    from .matrix import VectorMatrix
    from .options import SqliteVecOptions


class InRamCopies:
    """``warm``, ``prepare`` and the in-RAM copy of the bound set (``_in_ram``,
    ``_matrix_of``, ``_matrix``)."""

    storage: SqliteStorage  # provided by SqliteVecSemanticArm
    options: SqliteVecOptions
    bound: VectorSet | None
    _matrices: dict[str, VectorMatrix]

    def warm(self) -> bool:
        """Load the bound set's in-RAM copy now (``scan`` "numpy" or "warm"), so that
        searches scan it without paying for the load (~0.5-1 s per 100k vectors), its
        approximate stage past ``approximate_above`` (projection, int8 codes packed: ~0.2-0.5
        s at 1M), and the storage's in-RAM filter index (~1 s per 100k chunks); a no-op with
        ``scan = "vec0"``.

        :returns: False when there is nothing to load (``scan = "vec0"``, or unbound).
        """
        if self.bound is None or self.options.scan == "vec0":
            return False
        self._matrix(self.bound).ready()
        self.storage.fields.sync(self.storage.connection())
        return True

    def prepare(self) -> None:
        """Restore the in-RAM copies from matching snapshots (as a one-shot process's first
        search would; never a whole load) and map the matrix's pages, while a recall
        embeds the query on a worker (benchmarks/results/startup/cli-search.md)."""
        if self.bound is not None and self._in_ram(self.bound):
            self._matrix_of(self.bound).prefault()

    def _in_ram(self, bound: VectorSet) -> bool:
        """True when searches of ``bound`` scan the in-RAM copy (see ``scan``)."""
        scan = self.options.scan
        if scan != "warm":
            return scan == "numpy"
        matrix = self._matrices.get(bound.table)
        if matrix is not None and matrix.seq >= 0:
            return True
        if self.storage.snapshot_db is None:
            return False
        # not warmed (a one-shot process): the copies count as loaded when both restore
        # from snapshots that match the store (a few ms), never by loading them whole
        conn = self.storage.connection()
        return (self._matrix_of(bound).sync(conn, restore_only=True)
                and self.storage.fields.sync(conn, restore_only=True))

    def _matrix_of(self, bound: VectorSet) -> VectorMatrix:
        """Return the in-RAM copy of ``bound`` as it is (empty until its first sync)."""
        matrix = self._matrices.get(bound.table)
        if matrix is None:
            from .matrix import VectorMatrix

            opts = self.options
            reduce = (opts.approximate_above, opts.approximate_dims, opts.approximate_candidates)
            matrix = self._matrices.setdefault(bound.table, VectorMatrix(
                bound.table, bound.dim, reduce, opts.approximate_scan == "int8"))
            matrix.snapshot.db = self.storage.snapshot_db
        return matrix

    def _matrix(self, bound: VectorSet) -> VectorMatrix:
        """Return the in-RAM copy of ``bound``, brought up to date (loaded on first use;
        while nothing was written, one read of the change log's newest ``seq`` and no read
        transaction, as a search's: ~0.1 ms less for a search's hit vectors)."""
        from ..sqlite.snapshot_sync import current

        matrix = self._matrix_of(bound)
        conn = self.storage.connection()
        if not current(matrix, vector_log.last_seq(conn)):
            matrix.sync(conn)
        return matrix
