"""Text files that moved: the document stored from the old path gives way to the new one.

A text file's document id comes from its absolute path (:func:`~.sources.file_document`),
so a file moved or renamed (``docs/laptop.md`` to ``handbook/laptop.md``) is a new
document when the new path is ingested; the one stored from the old path stayed current
beside it, the same text twice, unless the old folder was ingested again (trial 17: a
moved folder's documents were duplicates until forgotten one by one). After an ingest
adds file documents, :func:`forget_moved` forgets each stored file document that holds
the same text and whose file is gone: one document for the text, naming the path it is
at now. It runs after the ingested folder's gone files are reconciled
(:func:`.folders.reconcile`), so a folder that moved with its project is said once, by
that. The forget is a "file gone" one (no tombstone: the old path ingested again later is
stored again). A file whose old path still exists is a copy and keeps both.
Transcripts keep their turn ids when moved; their new path is taken by the write path
(:mod:`octomem.engine.relocation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..pipeline import Pipeline
from ..relocation import gone, uri_path
from ..types import Document
from .folders import FILE_KIND
from .forget import GONE_REASON, forget
from .scopes import ScopeName


def forget_moved(scope: ScopeName, pipeline: Pipeline, read: Sequence[Document],
                 added: Sequence[str]) -> list[tuple[Path, Path]]:
    """Forget the stored file documents whose file is gone and whose text a file document
    the ingest added holds, in one transaction.

    :param read: the documents the ingest read (those not added are passed over).
    :param added: the ids it added.
    :returns: ``(old path, new path)`` of each document forgotten, in ``read``'s order.
    """
    storage = pipeline.arms.storage
    fresh = set(added)
    files = [d for d in read if d.id in fresh and d.id.startswith("file:")
             and uri_path(d.uri) is not None]
    counts = getattr(storage, "kind_counts", None)
    if not files or (callable(counts) and dict(counts()).get(FILE_KIND, 0) <= len(files)):
        return []  # no file document older than this ingest's: nothing to have moved
    new_ids = {d.id for d in files}
    pairs = [(old.id, uri_path(old.uri), uri_path(new.uri)) for new in files
             for old in storage.find_documents(new.text)
             if old.id.startswith("file:") and old.id not in new_ids and old.kind == FILE_KIND
             and old.valid_to is None and gone(old.uri)]
    if not pairs:
        return []
    moved: list[tuple[Path, Path]] = []
    with storage.transaction():
        for old_id, old, new in dict((p[0], p) for p in pairs).values():
            assert old is not None and new is not None
            forget([(scope, pipeline)], old_id, f"{GONE_REASON}{old} moved to {new} (the "
                   "same text, ingested from there)")
            moved.append((old, new))
    return moved
