"""The bench cache's vectors, written batch by batch so an interrupted build resumes.

While the embedder runs, each batch of vectors is appended to ``vectors.partial`` (raw
float32 rows) and its chunk ids to ``chunk_ids.partial`` (raw int64), then flushed; the
seconds spent so far go to ``vectors.partial.json``. A build that starts again reads
what is there (cut to the rows both files hold whole: a batch cut short by the
interrupt is dropped), skips those chunks, and goes on. When every chunk has a vector,
the rows become ``vectors.npy`` / ``chunk_ids.npy`` and the partial files go.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

VECTORS_PART = "vectors.partial"
IDS_PART = "chunk_ids.partial"
STATE_PART = "vectors.partial.json"


class PartialVectors:
    """Append-only vector rows of one cache entry (see the module docstring).

    :param root: the cache entry's folder.
    :param dim: the embedder's dimension (floats per row).
    """

    def __init__(self, root: Path, dim: int) -> None:
        self.root, self.dim = root, dim
        self.vectors_path, self.ids_path = root / VECTORS_PART, root / IDS_PART
        self.state_path = root / STATE_PART
        rows = 0
        if self.vectors_path.is_file() and self.ids_path.is_file():
            rows = min(self.vectors_path.stat().st_size // (4 * dim),
                       self.ids_path.stat().st_size // 8)
        for path, width in ((self.vectors_path, 4 * dim), (self.ids_path, 8)):
            with path.open("ab") as fh:  # create, or drop a row written only in part
                fh.truncate(rows * width)
        #: Rows already written (by earlier, interrupted runs).
        self.rows = rows
        #: Embedding seconds spent on those rows.
        self.seconds = 0.0
        if rows and self.state_path.is_file():
            self.seconds = float(json.loads(self.state_path.read_text())["seconds"])

    def done_ids(self) -> set[int]:
        """Return the chunk ids that already have a row."""
        return set(np.fromfile(self.ids_path, dtype=np.int64, count=self.rows).tolist())

    def append(self, ids: list[int], rows: np.ndarray, seconds: float) -> None:
        """Write one batch: ``ids`` and their ``(len(ids), dim)`` float32 ``rows``.

        :param seconds: embedding time of this batch.
        """
        with self.vectors_path.open("ab") as fh:
            fh.write(np.ascontiguousarray(rows, dtype=np.float32).tobytes())
            fh.flush()
            os.fsync(fh.fileno())
        with self.ids_path.open("ab") as fh:
            fh.write(np.asarray(ids, dtype=np.int64).tobytes())
            fh.flush()
            os.fsync(fh.fileno())
        self.rows += len(ids)
        self.seconds += seconds
        self.state_path.write_text(json.dumps({"rows": self.rows, "seconds": self.seconds}))

    def finish(self, vectors_file: Path, ids_file: Path) -> int:
        """Save every row as ``.npy`` files, remove the partial files; return the rows."""
        vectors = np.fromfile(self.vectors_path, dtype=np.float32).reshape(-1, self.dim)
        ids = np.fromfile(self.ids_path, dtype=np.int64)
        np.save(vectors_file, vectors)
        np.save(ids_file, ids)
        for path in (self.vectors_path, self.ids_path, self.state_path):
            path.unlink(missing_ok=True)
        return len(ids)
