"""What a deliberate ``forget`` keeps out of an ingest, and the way to let it back in.

The forget log keeps, for each forgotten document, its id and the sha256 of its text
(:mod:`.forget`). An ingest reading documents again screens them against the log's
tombstones (:func:`~.forget.is_tombstone`: a user's ``forget``, not an ingest's own
"gone" entries) with :func:`screen`:

- **A turn follows its content** (trial 13, finding 1). A chat turn's default id is its
  position (``<conversation>:<position>``), so when a line is deleted the later turns
  shift into other ids. A turn read again stays out when its text as stored
  (``Speaker: text``) hashes to a tombstoned turn's of the same conversation (the entry's
  id is the turn's, or names the same conversation), wherever its line now is; each
  such entry keeps out one line (the one at its own id first, else the first in file
  order), and a turn stored now with the same text is never kept out. A turn that is not
  kept out but whose id is a tombstone (another text now sits at a forgotten position)
  is stored under a fresh id, ``<id>~<first 8 hex digits of its text's sha256>``: no
  stored document ever holds a tombstoned id, so ``import``, ``forget`` and the log's
  answers stay true. The fresh id is the same on every ingest of the same line.
- **A Claude Code turn stays out by its record** (trial 18 H13). Its id names the
  record it starts with (``claude:<uuid>``), not a position, so a turn read again whose
  id, or the id it was read as in another file (``claude:<uuid>@<file>``, ``~<hex>``
  taken off), is a tombstone stays out whatever its text now is: a reply that grew
  since (the session went on), or the same record grouped in a resumed copy. The
  words added since stay out with it; ``readd`` lets them in.
- **Anything else stays out by its id** (a file, a text): a forgotten file edited since
  may still hold what was forgotten, so a changed file at a forgotten path stays out
  too, and the ingest names it (:class:`LeftOut`, ``changed`` says whether its text is
  still the one forgotten).
- **The way back** is ``readd`` (``octomem ingest --readd PATH``, the MCP tool's
  ``readd``): what the ingest reads is stored even when forgotten, and each tombstone
  that kept something out is rewritten, in the transaction that stores it, as an entry
  that no longer is one (its reason starts :data:`~.forget.READDED_REASON` and keeps
  when and why it had been forgotten).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..arms import Storage, VersionedStorage
from ..turns import CONVERSATION, TURN_KIND
from ..types import Document, Filters, ForgetRecord
from .forget import READDED_REASON, content_sha256, is_tombstone
from .times import iso

#: A fresh id's suffix (:func:`fresh_id`), taken off to find the conversation of an entry.
_FRESH = re.compile(r"~[0-9a-f]{8}$")


def fresh_id(doc: Document) -> str:
    """Return the id a turn gets when its own id is a tombstone holding another text."""
    return f"{doc.id}~{content_sha256(doc.text)[:8]}"


def claude_record_id(doc: Document) -> str | None:
    """Return ``claude:<uuid>`` of the record a Claude Code turn starts with (its id with
    a ``@<file>`` and a ``~<hex>`` suffix taken off), else ``None``."""
    if doc.kind != TURN_KIND or doc.metadata.get("source") != "claude-code":
        return None
    return _FRESH.sub("", doc.id).partition("@")[0]


def conversation_of(record_id: str) -> str | None:
    """Return the conversation a positional turn id names (``trip:2``, ``2025/trip:0``,
    ``chat:1~ab12cd34`` -> ``trip``, ``2025/trip``, ``chat``), else ``None`` (an own id)."""
    head, sep, tail = _FRESH.sub("", record_id).rpartition(":")
    return head if sep and tail.isdigit() else None


@dataclass(frozen=True, slots=True)
class LeftOut:
    """A document read again that a tombstone kept out (or, with ``readd``, let back).

    :param id: the id it was read with.
    :param forgotten: the forget-log entry that matched it (its id is the forgotten one's).
    :param source: where it was read from (its uri), else its id.
    :param changed: its text is not the one forgotten (a file edited since; never for a
        turn, which stays out only by its text).
    """

    id: str
    forgotten: ForgetRecord
    source: str
    changed: bool

    def note(self, shown: str | None = None, readded: bool = False) -> str:
        """Return the line that tells it: ``not re-added: notes/meeting.md (forgotten
        2026-12-03T03:40:00+00:00, changed since): octomem ingest --readd PATH stores
        it again``; ``shown``: the source as the user should read it."""
        what = shown or self.source
        turn = self.forgotten.kind == TURN_KIND
        if turn:
            what = f"{what}: turn {self.forgotten.id}" + (
                f" (now read as {self.id})" if self.id != self.forgotten.id else "")
        when = f"forgotten {iso(self.forgotten.forgotten_at)}"
        if readded:
            return f"re-added: {what} ({when})"
        how = ", changed since" if self.changed else ""
        return (f"not re-added: {what} ({when}{how}); --readd stores it again")


def notes(left_out: Sequence[LeftOut], shown: Callable[[LeftOut], str],
          readded: bool = False) -> list[str]:
    """Return the lines that tell ``left_out``: one per file or single turn
    (:meth:`LeftOut.note`), and one per transcript for two or more of its turns:
    ``not re-added: chat.jsonl: 300 forgotten turns (forgotten TIME); --readd stores them
    again`` (trial 17 G16: a forgotten session printed 300 lines on every ingest).

    :param shown: the source of an entry as the user should read it.
    """
    turns: dict[str, list[LeftOut]] = {}
    for one in left_out:
        if one.forgotten.kind == TURN_KIND:
            turns.setdefault(one.source, []).append(one)
    lines: list[str] = []
    for one in left_out:
        group = turns.get(one.source, []) if one.forgotten.kind == TURN_KIND else []
        if len(group) < 2:
            lines.append(one.note(shown(one), readded))
        elif group[0] is one:  # said once, where its first turn is
            times = sorted({iso(o.forgotten.forgotten_at) for o in group})
            when = f"forgotten {times[0]}" + (f" to {times[-1]}" if len(times) > 1 else "")
            what = f"{shown(one)}: {len(group)} forgotten turns"
            lines.append(f"re-added: {what} ({when})" if readded else
                         f"not re-added: {what} ({when}); --readd stores them again")
    return lines


@dataclass(slots=True)
class Screened:
    """What :func:`screen` decided for one group of documents.

    :param kept: the documents to store, in order (turns at a tombstoned id renamed).
    :param left_out: those kept out by a tombstone (with ``readd``: let back, see ``lift``).
    :param renamed: ``(id read, id stored)`` for each turn stored under a fresh id.
    :param lift: tombstones to rewrite as re-added before ``kept`` is stored (``readd``).
    """

    kept: list[Document] = field(default_factory=list)
    left_out: list[LeftOut] = field(default_factory=list)
    renamed: list[tuple[str, str]] = field(default_factory=list)
    lift: list[ForgetRecord] = field(default_factory=list)


def _tombstones(storage: Storage) -> list[ForgetRecord]:
    if not isinstance(storage, VersionedStorage):
        return []
    return [r for r in storage.iter_forgotten() if is_tombstone(r)]


def screen(storage: Storage, docs: Iterable[Document], readd: bool = False) -> Screened:
    """Decide which of ``docs`` (read again by an ingest; read whole) are stored (module
    docstring); :func:`screening` does it lazily.

    :param readd: store what a tombstone would keep out, and list those tombstones in
        ``lift`` (:func:`lift` them in the transaction that stores ``kept``).
    """
    out = Screened()
    out.kept = list(screening(storage, list(docs), out, readd))
    return out


def screening(storage: Storage, docs: Iterable[Document], out: Screened,
              readd: bool = False) -> Iterator[Document]:
    """Yield the documents of ``docs`` to store, noting the rest in ``out`` as they pass.

    Given a list (a transcript's turns), a turn stays out by its text wherever it is in
    the list; given any other iterable (a BEIR corpus, read lazily), a turn stays out only
    at its own id with its own text. Anything else stays out by its id.
    """
    if not isinstance(storage, VersionedStorage):
        yield from docs
        return
    graves = _tombstones(storage)
    by_id = {r.id: r for r in graves}
    turns = [r for r in graves if r.kind == TURN_KIND]
    blocked = _blocked_turns(storage, [d for d in docs if d.kind == TURN_KIND], turns) \
        if isinstance(docs, list) else None
    for doc in docs:
        digest = content_sha256(doc.text)
        record = by_id.get(doc.id)
        own = claude_record_id(doc)
        if own is not None and (record or by_id.get(own)):  # its record, whatever its text
            record = record or by_id.get(own)
        elif doc.kind == TURN_KIND:
            record = blocked.get(doc.id) if blocked is not None else \
                record if record is not None and record.content_sha256 == digest else None
        if record is not None:
            out.left_out.append(LeftOut(doc.id, record, doc.uri or doc.id,
                                        record.content_sha256 != digest))
            if not readd:
                continue
            out.lift.append(record)
            if record.id != doc.id and doc.id in by_id:  # its text moved onto another grave
                doc = replace(doc, id=fresh_id(doc))
        elif doc.kind == TURN_KIND and doc.id in by_id:  # another text at a forgotten id
            new = fresh_id(doc)
            out.renamed.append((doc.id, new))
            doc = replace(doc, id=new)
        yield doc


def _blocked_turns(storage: VersionedStorage, turns: Sequence[Document],
                   graves: Sequence[ForgetRecord]) -> dict[str, ForgetRecord]:
    """Return ``{turn id: tombstone}`` for the turns kept out by their text.

    Per conversation and text: a turn whose id holds that text now is stored, not a
    candidate; as many further lines as the conversation has other current turns with
    that text are kept too (the same words said again, never forgotten); each tombstone
    then keeps out one of the remaining lines, the one at its own id first.
    """
    if not turns or not graves:
        return {}
    wanted: dict[str, list[ForgetRecord]] = {}
    for record in graves:
        wanted.setdefault(record.content_sha256, []).append(record)
    groups: dict[tuple[str, str], list[Document]] = {}
    here: dict[tuple[str, str], int] = {}  # lines whose own id holds their text now
    for doc in turns:
        digest = content_sha256(doc.text)
        if digest not in wanted:
            continue
        key = (str(doc.metadata.get(CONVERSATION)), digest)
        stored = storage.get_document(doc.id)
        if stored is not None and stored.text == doc.text:
            here[key] = here.get(key, 0) + 1
        else:
            groups.setdefault(key, []).append(doc)
    blocked: dict[str, ForgetRecord] = {}
    for (conversation, digest), docs in groups.items():
        spare = _stored_copies(storage, conversation, docs[0].text) - here.get(
            (conversation, digest), 0)
        graves_here = [r for r in sorted(wanted[digest], key=lambda r: r.forgotten_at)
                       if _same_conversation(r, docs[0]) or any(r.id == d.id for d in docs)]
        room = max(0, len(docs) - max(0, spare))
        for record in graves_here[:room]:
            free = [d for d in docs if d.id not in blocked]
            pick = next((d for d in free if d.id == record.id), free[0] if free else None)
            if pick is not None:
                blocked[pick.id] = record
    return blocked


def _stored_copies(storage: VersionedStorage, conversation: str, text: str) -> int:
    """Return how many current turns of ``conversation`` hold ``text``."""
    chunks = storage.iter_chunks(Filters(kinds=(TURN_KIND,),
                                         metadata={CONVERSATION: conversation}))
    ids = {c.document_id for c in chunks}
    return sum(1 for i in ids if (d := storage.get_document(i)) is not None and d.text == text)


def _same_conversation(record: ForgetRecord, doc: Document) -> bool:
    if record.id == doc.id:
        return True
    conversation = conversation_of(record.id)
    return conversation is not None and conversation == str(doc.metadata.get(CONVERSATION))


def lift(storage: Any, tx: Any, records: Iterable[ForgetRecord]) -> None:
    """Rewrite each tombstone of ``records`` as re-added (no longer a tombstone; when and
    why it was forgotten kept in its reason), inside the caller's transaction ``tx``."""
    for record in records:
        why = record.reason or "no reason given"
        storage.record_forgotten(tx, replace(record, reason=(
            f"{READDED_REASON}on {iso(time.time())}; it had been forgotten "
            f"{iso(record.forgotten_at)}: {why}")))


def note_screened(report: Any, screened: Screened, readd: bool) -> None:
    """Add what ``screened`` kept out, let back and renamed to an ingest's ``report``
    (:class:`~.folders.IngestReport`: ``skipped_forgotten`` the forgotten ids kept out,
    ``left_out`` or ``readded`` each one, ``renamed`` the turns given a fresh id)."""
    if readd:
        report.readded += screened.left_out
    else:
        report.left_out += screened.left_out
        report.skipped_forgotten += [one.forgotten.id for one in screened.left_out]
    report.renamed += screened.renamed
