"""Content digests of model and data files: what identifies a model's or a corpus's bytes.

An embedder's id carries its model file's sha256 (a vector set is tied to the exact
weights), and a benchmark's report carries its corpus's; hashing a 90 MB model on every
start would cost ~0.2 s, so digests are cached per process by path, size and mtime.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

#: (path, size in bytes, mtime in ns) -> hex sha256, for this process.
_HASHES: dict[tuple[str, int, int], str] = {}


def file_sha256(path: Path) -> str:
    """Return the hex sha256 (64 characters) of a file's bytes, read in 1 MiB blocks and
    cached by (path, size, mtime): a file rewritten in place is hashed again.

    :raises OSError: the file cannot be read.
    """
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _HASHES:
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        _HASHES[key] = digest.hexdigest()
    return _HASHES[key]
