"""Files a folder no longer holds: a re-ingest reports them and, by the setting
``ingest.on_missing``, forgets them.

An ingested file is stored as a document whose id comes from its absolute path and whose
``uri`` is that path (:func:`~.sources.file_document`), so the store itself remembers
which files it holds under a folder. When the folder is ingested again, every current
file document under it whose file no longer exists is *missing*; with ``on_missing =
"forget"`` (the default) it is forgotten with the reason ``file gone: PATH ...`` (kept in
the forget log), with ``"keep"`` it stays and is only reported. Before this, a deleted
file's text stayed current and ranked first for its words.

A folder that moved with its project (``mv ~/src/shop ~/code/shop``: the ``.octomem/``
inside moves along) is the same folder: a gone file document whose path, from the
folder's place in the project on, names a file the folder now holds was *moved*
(:func:`gone_under`); it is reported and forgotten as a gone file is, the file being
stored by this ingest under its new path (trial 18 H3: the old copies stayed current
beside the new ones, and an edited file answered with both versions).

Such a forget is not a tombstone (:func:`~.forget.is_tombstone`): a file that comes back
(a branch switch, ``git stash``, a move and back) is stored again by the next ingest, and
``import`` takes its document. Only a deliberate ``forget`` keeps an id out for good.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from ..arms import VersionedStorage
from ..pipeline import AddReport, Pipeline
from ..types import Document
from .forget import GONE_REASON, forget
from .scopes import ScopeName

if TYPE_CHECKING:
    from .tombstones import LeftOut

#: The kind file documents are stored with (see :mod:`.ingest`).
FILE_KIND = "DOC"


@dataclass(frozen=True, slots=True)
class GoneFile:
    """A file document whose file is gone: its id, the path it was read from, and the
    file the ingested folder now holds in its place when the folder moved (else ``None``)."""

    id: str
    path: str
    moved_to: str | None = None


@dataclass(slots=True)
class IngestReport(AddReport):
    """What an ingest did, and the files gone from the folders it read again.

    :param missing: file documents under an ingested folder whose file no longer exists.
    :param forgotten: those of them forgotten (``ingest.on_missing = "forget"``).
    :param skipped: ``(file, why)`` for each file inside the folder that could not be
        read and was left out (nothing of it stored).
    :param skipped_forgotten: the forgotten ids (forget-log entries) that kept documents
        and turns read again out (:mod:`.tombstones`); ``left_out``: each of those, with
        where it was read; ``readded``: those let back by ``readd`` instead.
    :param renamed: ``(id read, id stored)`` for each turn stored under a fresh id because
        its position's id was forgotten while it holds another text.
    :param unfinished: a note for each transcript whose last line was still being written
        (no newline, not JSON): left out, read on the next ingest.
    :param empty_lines: a note for each chat transcript with lines whose text is empty
        (a tool-only message): left out, counted.
    :param messages_left_out: a note for each transcript with messages left out on
        purpose: a Claude Code session's branch the user rewound away from, a chat's
        system, developer or tool lines; counted.
    :param not_stored: documents read but not stored because a stop was requested
        (:mod:`~octomem.engine.stopping`) before their transcript's turn came.
    :param moved_files: ``(old path, new path)`` of each file stored from a new path whose
        document from the old path (gone) was forgotten (:mod:`.moved`).
    """

    missing: list[GoneFile] = field(default_factory=list)
    forgotten: list[GoneFile] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    skipped_forgotten: list[str] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    readded: list[LeftOut] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    unfinished: list[str] = field(default_factory=list)
    empty_lines: list[str] = field(default_factory=list)
    messages_left_out: list[str] = field(default_factory=list)
    not_stored: int = 0
    moved_files: list[tuple[Path, Path]] = field(default_factory=list)


def _file_path(doc: Document) -> Path | None:
    if not doc.id.startswith("file:") or not doc.uri or not doc.uri.startswith("file:"):
        return None
    from urllib.request import url2pathname  # with http.client and ssl: ~40 ms of a start

    return Path(url2pathname(urlparse(doc.uri).path))


def gone_under(pipeline: Pipeline, folder: Path, project_root: Path | None = None
               ) -> Iterator[tuple[Document, Path, Path | None]]:
    """Yield ``(document, its path, moved to)`` for each current file document whose file
    no longer exists under ``folder`` or under a place ``folder`` moved from.

    ``folder`` moved from a gone folder whose last parts are ``folder``'s from the project
    on (``docs``, ``src/docs``: inside ``project_root``; else ``folder``'s name) when a
    file read from there exists at the same place under ``folder`` (moved to that file);
    the other files gone from that place are gone (moved to ``None``), as those gone from
    ``folder`` itself are."""
    storage = pipeline.arms.storage
    if not isinstance(storage, VersionedStorage):
        return
    root = folder.resolve()
    inside = project_root is not None and root.is_relative_to(project_root.resolve())
    tail = root.relative_to(project_root.resolve()).parts if inside else (root.name,)
    elsewhere: list[tuple[Document, Path, Path | None]] = []  # (doc, path, old folder)
    for doc in storage.iter_documents(kinds=(FILE_KIND,)):
        path = _file_path(doc)
        if path is None or path.exists():
            continue
        if path.is_relative_to(root):
            yield doc, path, None
        elif tail:
            elsewhere.append((doc, path, _old_folder(path, tail)))
    moved_from = {old for doc, path, old in elsewhere if old is not None
                  and not old.exists() and (root / path.relative_to(old)).is_file()}
    for doc, path, old in elsewhere:
        if old in moved_from:
            moved = root / path.relative_to(old)
            yield doc, path, moved if moved.is_file() else None


def _old_folder(path: Path, tail: tuple[str, ...]) -> Path | None:
    """Return the nearest folder above ``path`` whose last parts are ``tail``, else
    ``None``."""
    parts = path.parts[:-1]
    for end in range(len(parts), len(tail), -1):
        if parts[end - len(tail):end] == tail:
            return Path(*parts[:end])
    return None


def reconcile(scope: ScopeName, pipeline: Pipeline, folder: Path, on_missing: str,
              report: IngestReport, project_root: Path | None = None) -> IngestReport:
    """Report (and with ``on_missing == "forget"``, forget) the files gone from ``folder``,
    and those it held before it moved (:func:`gone_under`; ``project_root``: the project's
    folder, which tells how much of ``folder``'s path moved with it).

    The files are forgotten in one transaction: a storage that removes a forgotten text's
    traces from its files once a transaction commits (the ``sqlite`` storage merges its
    keyword index and empties its write-ahead log) does so once, not once per file.

    :returns: ``report``, its ``missing`` and ``forgotten`` filled in.
    """
    gone_files = list(gone_under(pipeline, folder, project_root))
    if not gone_files:
        return report
    writing = on_missing == "forget"
    with pipeline.arms.storage.transaction() if writing else contextlib.nullcontext():
        for doc, path, moved in gone_files:
            gone = GoneFile(doc.id, str(path), None if moved is None else str(moved))
            report.missing.append(gone)
            if writing:
                why = f"moved to {moved}, stored from there" if moved is not None else \
                    f"was not in {folder.resolve()} when the folder was ingested again"
                forget([(scope, pipeline)], doc.id, f"{GONE_REASON}{path} {why}")
                report.forgotten.append(gone)
    return report


def folder_named(value: str, project_root: Path) -> Path | None:
    """Return the folder ``value`` names (absolute, or relative to the project), else
    ``None`` (a file, a text, or nothing)."""
    text = value.strip()
    if not text or "\n" in text or len(text) > 4096:
        return None
    path = Path(text).expanduser()
    path = path if path.is_absolute() else project_root / path
    try:
        return path if path.is_dir() else None
    except OSError:
        return None
