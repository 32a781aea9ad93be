"""A document read from a file that moved: same content, another path.

A transcript's turns keep their ids when the file moves (a Claude Code turn's id comes
from its record, a chat turn's from its conversation and position), so ingesting the
moved file found them unchanged and they kept the old path as their ``uri``: search and
``octomem://item`` named a file that no longer exists. :func:`moved_away` tells the write
path (:meth:`~.pipeline.Pipeline._write`) to store such a document again under its new
path (its next revision). A turn that another file still holds (a resumed Claude Code
session repeats its earlier records in a new file) is not moved: its first file keeps it.
A text file's id comes from its path, so a moved file is a new document; the one stored
from the old path is forgotten by :func:`octomem.engine.memory.moved.forget_moved`.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from .types import Document


def uri_path(uri: str | None) -> Path | None:
    """Return the local path a ``file:`` uri names, else ``None``."""
    if not uri or not uri.startswith("file:"):
        return None
    return Path(unquote(urlparse(uri).path))


def gone(uri: str | None) -> bool:
    """True when ``uri`` names a local file that does not exist (any more)."""
    path = uri_path(uri)
    try:
        return path is not None and not path.exists()
    except OSError:  # a name the file system refuses: not a file that is there
        return True


def moved_away(old: Document, new: Document) -> bool:
    """True when ``new`` is ``old`` read from another file and ``old``'s file is gone.

    :param old: the stored document.
    :param new: the same id, as read now.
    """
    return (old.uri != new.uri and uri_path(new.uri) is not None and gone(old.uri))
