"""Checksums of a snapshot's array files: damage of the same size is never taken as data.

A snapshot (:mod:`.snapshots`) whose files parse with the expected names, shapes and
types was used as it was: bytes flipped by a bad sector, or a shuffled tags or times
array left by an interrupted copy, gave wrong hits with no sign (trial 20 L5: a filter
let through notes without the tag it asked for, a ``--since`` search found nothing).
:func:`checksums` records each ``.npy`` file's CRC-32 (``zlib.crc32``, ~0.7 GB/s on one
core of the 2-core Xeon at load 3.5) in the snapshot's ``meta.json`` when it is written.
A reader checks the files of at most :data:`CHECK_NOW_BYTES` before it uses the snapshot
(the filter index's columns, the postings of a small store: a few ms); larger ones (the
vector matrix: 150 MB at 100k vectors) are checked by a thread once the copy is in use
(:func:`check_later`), so a start at 1M stays fast. A mismatch found there removes the
snapshot and has the copy loaded from the tables at its next search; the searches before
it used the damaged arrays. A snapshot written before checksums existed has none to check.
"""

from __future__ import annotations

import logging
import shutil
import threading
import zlib
from collections.abc import Callable, Iterable
from pathlib import Path

#: Array files up to this many bytes are checked before a snapshot is used; larger ones
#: by :func:`check_later`.
CHECK_NOW_BYTES = 16 * 2**20
#: Bytes read per step.
_BLOCK = 2**20

log = logging.getLogger(__name__)


def crc32_of(path: Path) -> int:
    """Return the CRC-32 of the file at ``path`` (``zlib.crc32``, an unsigned 32-bit int).

    :raises OSError: the file cannot be read.
    """
    crc = 0
    with open(path, "rb") as f:
        while block := f.read(_BLOCK):
            crc = zlib.crc32(block, crc)
    return crc


def checksums(where: Path, names: Iterable[str]) -> dict[str, int]:
    """Return the CRC-32 of each array file ``<where>/<name>.npy``.

    :raises OSError: a file cannot be read.
    """
    return {name: crc32_of(where / f"{name}.npy") for name in names}


def check_now(where: Path, expected: dict[str, int]) -> tuple[str | None, dict[str, int]]:
    """Check the array files of at most :data:`CHECK_NOW_BYTES` against ``expected``.

    :returns: the name of the first file that does not match (``None``: all match), and
        the checksums of the larger files, left for :func:`check_later`.
    :raises OSError: a file cannot be read.
    """
    later = {}
    for name, crc in expected.items():
        path = where / f"{name}.npy"
        if path.stat().st_size > CHECK_NOW_BYTES:
            later[name] = crc
        elif crc32_of(path) != crc:
            return name, {}
    return None, later


def check_later(db: Path, snapshot: str, where: Path, expected: dict[str, int],
                damaged: Callable[[], None]) -> threading.Thread | None:
    """Check the larger array files in a daemon thread; on a mismatch, log a warning,
    remove the snapshot (its pointer, when it still names ``where``, and its folder) and
    call ``damaged`` (the copy then loads itself from the tables). A file that can no
    longer be read (a newer snapshot replaced this one) is not a mismatch.

    :param snapshot: the snapshot's name (its pointer is ``<name>.json`` beside ``where``).
    :returns: the started thread, or ``None`` when there is nothing to check.
    """
    if not expected:
        return None

    def run() -> None:
        for name, crc in expected.items():
            try:
                found = crc32_of(where / f"{name}.npy")
            except OSError:
                return
            if found != crc:
                log.warning("%s: the %s snapshot's %s.npy does not match its checksum; "
                            "removing the snapshot and loading from the tables",
                            db, snapshot, name)
                pointer = where.parent / f"{snapshot}.json"
                try:
                    if where.name in pointer.read_text():
                        pointer.unlink(missing_ok=True)
                except OSError:
                    pass
                shutil.rmtree(where, ignore_errors=True)
                damaged()
                return

    thread = threading.Thread(target=run, name=f"octomem-snapshot-check-{snapshot}",
                              daemon=True)
    thread.start()
    return thread
