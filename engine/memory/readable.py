"""Whether a path found for ``ingest`` can be read at all, and how to name it in a message.

Two kinds of path are refused before anything opens them (trial 9):

- a name that is not UTF-8 (a Latin-1 ``café.md`` on a UTF-8 system): every path
  octomem stores (a document's id and URI), prints or answers over MCP is UTF-8 text, so
  such a file is named with its bad bytes escaped (``caf\\xe9.md``) and left out;
- anything but a regular file or folder (a FIFO, socket or device): reading a FIFO blocks
  until a writer comes, ``/dev/zero`` never ends.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import OctomemError


def shown(path: Path | str) -> str:
    """Return ``path`` as printable UTF-8: bytes of a name that is not UTF-8 are escaped
    (``b"caf\\xe9"`` -> ``"caf\\\\xe9"``); any other path is returned as it is."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def is_special(path: Path) -> bool:
    """Return whether ``path`` exists (following symlinks) and is neither a regular file
    nor a folder: a FIFO, socket or device."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False  # missing or dangling: said where it is read
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_readable(path: Path) -> None:
    """Refuse a file whose name is not UTF-8 or that is not a regular file.

    :raises OctomemError: naming the file (escaped: :func:`shown`) and what to do.
    """
    try:
        os.fsencode(path).decode("utf-8")
    except UnicodeDecodeError:
        raise OctomemError(f"{shown(path)}: its name is not UTF-8; rename the file to "
                           "ingest it") from None
    if is_special(path):
        raise OctomemError(f"{path}: not a regular file (a FIFO, socket or device); "
                           "nothing is read from it")
