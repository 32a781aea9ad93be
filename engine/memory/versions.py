"""Item versions: a reader names the version it read, and a write refuses a newer one.

A page that shows a statement and offers to forget or replace it carries the version it
showed; the write re-reads the statement inside its own write transaction and refuses
when the version differs, so a person never overwrites or forgets what an agent changed
after the page was read (optimistic concurrency control, as HTTP's ``If-Match``).
"""

from __future__ import annotations

import hashlib
from typing import Any

from ..errors import StaleVersionError
from ..types import Document

#: Hex digits of the sha256 fingerprint kept as the version (64 bits).
VERSION_DIGITS = 16


def document_version(doc: Document) -> str:
    """Return a fingerprint of everything a write can change about ``doc``.

    Its text, kind, tags, title, uri, revision and supersede state count; the recall
    counters do not (a recall is not a change).

    :returns: :data:`VERSION_DIGITS` lowercase hex digits.
    """
    parts = (doc.id, str(doc.revision), doc.superseded_by or "", repr(doc.valid_to), doc.kind,
             "\x1f".join(doc.tags), doc.title or "", doc.uri or "", doc.text)
    digest = hashlib.sha256("\x1e".join(parts).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:VERSION_DIGITS]


def _what_changed(old_id: str, now: Document) -> str:
    if now.superseded_by:
        return f"it was superseded by {now.superseded_by!r}"
    return f"it is now revision {now.revision}" if now.revision > 1 else "its content changed"


def check_version(storage: Any, document_id: str, expected: str) -> Document:
    """Re-read ``document_id`` (call inside the write transaction) and compare versions.

    :param storage: the scope's storage, whose write transaction the caller holds.
    :param expected: the version the caller read (:func:`document_version`).
    :returns: the document as it is now.
    :raises StaleVersionError: it was forgotten or changed since; the message says how.
    """
    current = storage.get_document(document_id)
    if current is None:
        raise StaleVersionError(
            f"{document_id!r} was forgotten after it was read; nothing was changed")
    if document_version(current) != expected:
        raise StaleVersionError(
            f"{document_id!r} changed after it was read ({_what_changed(document_id, current)});"
            " nothing was changed: read it again")
    return current
