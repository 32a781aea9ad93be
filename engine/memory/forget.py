"""Forgetting: a statement's text leaves the memory for good; why and when it went stays.

A forgotten statement is deleted — its row, its chunks, its keyword index entries and
its vectors — in one write transaction that also appends an entry to the scope's forget
log (id, kind, sha256 of the text, when it was recorded, when it was forgotten, the
reason). Because nothing of its text is left, no recall can return it, ``as_of`` and
``include_superseded`` included; the log answers "was this forgotten, when, and why?".

A statement it had superseded is handed on in the same transaction
(:meth:`~octomem.engine.arms.VersionedStorage.hand_on`): current again when the forgotten
one was current (a correction found wrong and forgotten leaves the fact it replaced as
the answer, not a scope with no current answer that says nothing is stored), else
superseded by the forgotten one's own successor. Its ``as_of`` history then reads as if
the forgotten statement had never been stored, which is what forgetting it asks for.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..arms import Storage, VersionedStorage
from ..errors import AlreadyForgottenError, InvalidQueryError, NotFoundError
from ..pipeline import Pipeline
from ..turns import TURN_KIND
from ..types import Document, ForgetRecord
from .scopes import ScopeName
from .statement_key import find_same, scan_same
from .times import iso
from .versions import check_version


@dataclass(slots=True)
class ForgetOutcome:
    """What ``forget`` did.

    :param forgotten: the statement removed, with its scope; ``None`` when the text
        matched several statements (then none was removed and ``matches`` lists them).
    :param matches: every ``(scope, statement)`` the text matched when it was ambiguous.
    :param handed_on: the statements the forgotten one had superseded, as they are now:
        current again (``is_current``), or superseded by its successor.
    """

    forgotten: tuple[ScopeName, Document] | None
    reason: str | None = None
    matches: list[tuple[ScopeName, Document]] = field(default_factory=list)
    handed_on: list[Document] = field(default_factory=list)


def handed_on_line(doc: Document) -> str:
    """Say what became of a statement the forgotten one had superseded (one line, no
    text): ``"ID is current again (it was superseded by the statement forgotten)"`` or
    ``"ID is now superseded by SUCCESSOR"``."""
    if doc.is_current:
        return f"{doc.id} is current again (it was superseded by the statement forgotten)"
    return f"{doc.id} is now superseded by {doc.superseded_by} (the forgotten one's successor)"


Scoped = Sequence[tuple[ScopeName, Pipeline]]

#: How the reason of an ingest's own forget begins: a file gone from a folder ingested
#: again (:func:`~.folders.reconcile`). Such an entry is history, not a tombstone: the
#: file stored again when it comes back (a branch switch, ``git stash``, a move and back).
GONE_REASON = "file gone: "
#: How the reason of an ingest's own forget of a turn its transcript no longer holds
#: begins (:func:`~.gone_turns.retire`): history too, not a tombstone (the line may
#: come back).
GONE_TURN_REASON = "turn gone: "
#: How the reason of a tombstone lifted by ``ingest --readd`` begins
#: (:func:`~.tombstones.lift`): history, no longer a tombstone.
READDED_REASON = "re-added by ingest --readd "


def is_tombstone(record: ForgetRecord) -> bool:
    """Return True when ``record`` keeps what it forgot from being added again: every
    forget but an ingest's own for a file gone from its folder (reason starting
    :data:`GONE_REASON`) or for a turn gone from its transcript (kind ``TURN``,
    :data:`GONE_TURN_REASON`), and one an ``ingest --readd`` lifted
    (:data:`READDED_REASON`). What a tombstone keeps out: :mod:`.tombstones`."""
    reason = record.reason or ""
    if reason.startswith(READDED_REASON):
        return False
    return not ((record.id.startswith("file:") and reason.startswith(GONE_REASON))
                or (record.kind == TURN_KIND and reason.startswith(GONE_TURN_REASON)))


def was_forgotten(storage: Storage, document_id: str) -> bool:
    """Return True when ``document_id`` was forgotten deliberately: its forget-log entry of
    ``storage`` is a tombstone (:func:`is_tombstone`; a storage without a forget log has
    forgotten nothing). ``import`` and ``ingest`` skip such an id, so a forgotten
    statement or turn never comes back; a file forgotten because it was gone comes back."""
    if not isinstance(storage, VersionedStorage):
        return False
    record = storage.get_forgotten(document_id)
    return record is not None and is_tombstone(record)


def _matches(scoped: Scoped, key: str) -> list[tuple[ScopeName, Pipeline, Document]]:
    """Match ``key`` as an id first; only when no id matches, as the exact full text
    (in NFC or NFD, invisible characters aside: :mod:`.statement_key`)."""
    by_id = [(s, p, d) for s, p in scoped if (d := p.arms.storage.get_document(key)) is not None]
    if by_id:
        return by_id
    exact = [(s, p, d) for s, p in scoped for d in find_same(p.arms.storage, key)]
    return exact or [(s, p, d) for s, p in scoped for d in scan_same(p.arms.storage, key)]


def content_sha256(text: str) -> str:
    """Return the sha256 hex of ``text`` as the forget log keeps it (lone surrogates kept)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _forgotten(storage: Storage, key: str) -> ForgetRecord | None:
    """The forget log's entry for ``key`` as an id, else as a text (by its sha256: the
    log keeps no text; the latest when several), or ``None``."""
    if not isinstance(storage, VersionedStorage):
        return None
    if (record := storage.get_forgotten(key)) is not None:
        return record
    digest = content_sha256(key)
    same = [r for r in storage.iter_forgotten() if r.content_sha256 == digest]
    return max(same, key=lambda r: r.forgotten_at, default=None)


def _not_found(scoped: Scoped, key: str) -> NotFoundError:
    for scope, pipeline in scoped:
        record = _forgotten(pipeline.arms.storage, key)
        if record is not None:
            named = repr(key) if record.id == key else \
                f"the statement with this text ({record.id})"
            why = f": {record.reason}" if record.reason else " (no reason given)"
            return AlreadyForgottenError(
                f"{named} was already forgotten from the {scope} scope on "
                f"{iso(record.forgotten_at)}{why}")
    shown = repr(key[:80])
    if not scoped:  # trial 14 F2: 'nothing in the no existing scope ...'
        return NotFoundError(f"nothing is stored yet (no scope has a store), so nothing has "
                             f"the id or exact text {shown}")
    where = " or ".join(s for s, _ in scoped)
    return NotFoundError(f"nothing in the {where} scope has the id or exact text {shown}")


def forget(scoped: Scoped, text_or_id: str, reason: str | None = None,
           expect_version: str | None = None) -> ForgetOutcome:
    """Forget the one statement whose id, else exact full text, is ``text_or_id``.

    :param scoped: the scopes to look in, in order.
    :param reason: kept in the forget log.
    :param expect_version: the version the caller read
        (:func:`~.versions.document_version`); checked inside the write transaction.
    :returns: what was removed and the statements it had superseded, handed on; or, when
        the text matches several statements, none removed and the list of matches.
    :raises InvalidQueryError: ``text_or_id`` is empty.
    :raises NotFoundError: nothing matches (the message says if the id was forgotten
        before, when and why).
    :raises StaleVersionError: ``expect_version`` is not the statement's version now.
    """
    key = text_or_id.strip() if isinstance(text_or_id, str) else ""
    if not key:
        raise InvalidQueryError("text_or_id: empty; give a statement's id or its exact text")
    reason = reason.strip() or None if isinstance(reason, str) else None
    found = _matches(scoped, key)
    if not found:
        raise _not_found(scoped, key)
    if len(found) > 1:
        return ForgetOutcome(None, reason, [(s, d) for s, _, d in found])
    scope, pipeline, document = found[0]
    arms = pipeline.arms
    with arms.storage.transaction() as tx:
        if expect_version is not None:
            document = check_version(arms.storage, document.id, expect_version)
        record = ForgetRecord(document.id, document.kind, content_sha256(document.text),
                              document.created_at, time.time(), reason)
        handed = remove(pipeline, tx, document, record)
    now = [d for i in handed if (d := arms.storage.get_document(i)) is not None]
    return ForgetOutcome((scope, document), reason, handed_on=now)


def remove(pipeline: Pipeline, tx: Any, document: Document, record: ForgetRecord) -> list[str]:
    """Forget ``document`` inside ``tx``: hand on what it superseded, delete its rows, its
    words and vectors, and log ``record`` (a storage with a forget log).

    :returns: ids of the statements it had superseded, handed on.
    """
    arms = pipeline.arms
    handed: list[str] = []
    if isinstance(arms.storage, VersionedStorage):  # before the row goes: its valid_to
        handed = arms.storage.hand_on(tx, document.id, document.superseded_by)
    removed = arms.storage.delete_document(tx, document.id)
    if removed and arms.keyword is not None:
        arms.keyword.remove(tx, removed)
    if removed and arms.semantic is not None:
        arms.semantic.remove(tx, removed)
    if isinstance(arms.storage, VersionedStorage):
        arms.storage.record_forgotten(tx, record)
    return handed

