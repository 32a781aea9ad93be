"""Chat transcripts as turns: octomem's chat JSON Lines format and Claude Code sessions.

Both are read whole before anything is stored: a malformed line is an error naming the
file and the line, and nothing of that file is stored; only an unfinished last line (no
newline at its end, not valid JSON: still being written) is left out with a note. See
docs/conversations.md.

**Chat JSON Lines** (``--format chat``), one turn a line, in the order they were said::

    {"conversation": "trip", "session": "day 1", "speaker": "Ana", "text": "Shall we fly?",
     "time": "2024-05-01T10:00:00Z"}

``text`` and one of ``speaker`` / ``role`` are required; ``conversation`` defaults to
the file name without its suffix (with its folders in front when another file's turns
hold those ids: :func:`~.own_turns.check_own_turns`), ``session`` to the conversation,
``role`` to the speaker's name when that is ``user`` or ``assistant``; ``id`` (a turn's
own stable id, default ``<conversation>:<position>``), ``title`` and ``metadata`` (an
object of extra fields) are optional. Any other field is an error, so a misspelt one is not lost.
A line whose ``text`` is empty, blank or ``null`` (a tool-only message) is left out and
counted (:func:`read_chat`).

**Claude Code sessions** (``--format claude-code``, ``~/.claude/projects/<project>/
<session>.jsonl``): the user's typed text and the assistant's text replies, each with
its timestamp; consecutive records of one speaker form one turn (the tool calls between
an assistant's texts are left out, so its reply reads as one turn). Dropped: tool calls
and results, thinking, images, sub-agent (sidechain) and meta records, compaction
summaries, slash-command records and every non-message record (summaries, snapshots,
progress, system). A turn's id is ``claude:<uuid of its first record>``, so a resumed
session that repeats earlier records stores them once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from ..errors import OctomemError
from ..turns import (
    TURN_KIND,
    epoch,
    parse_turn_time,
    role_of,
    spoken_date,
    spoken_text,
    turn_id,
    turn_metadata,
)
from ..types import Document
from .readable import check_readable
from .times import in_range

TranscriptFormat = Literal["chat", "claude-code"]
#: Fields of a chat JSON Lines turn.
CHAT_FIELDS = frozenset({"conversation", "session", "speaker", "role", "text", "time", "id",
                         "title", "metadata"})
#: Record types of Claude Code transcripts (any record with a ``sessionId`` also counts).
CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot",
                          "queue-operation", "progress", "permission-mode", "custom-title",
                          "last-prompt", "mode"})
#: User texts Claude Code writes itself for slash commands and their output.
CLAUDE_COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<local-command-stdout>",
                           "<local-command-stderr>", "<local-command-caveat>",
                           "[Request interrupted by user")


#: Why a file given as one format (``--format``) is not: what that format expected, and
#: what the file's first record looks like instead (:func:`sniff`).
FORMAT_MISMATCH: dict[str, str] = {
    "claude-code": ("not a Claude Code session (its first record has no 'sessionId' and no "
                    "Claude Code 'type'); it reads as a chat transcript: leave out --format "
                    "or give --format chat"),
    "chat": ("not a chat transcript (lines with 'text' and 'speaker' or 'role'); it reads as "
             "a Claude Code session: leave out --format or give --format claude-code"),
}


class TranscriptError(OctomemError):
    """A transcript line that cannot be read; the message names the file and line."""


#: How many bad lines of one transcript an error names (then "and N more").
MAX_BAD_LINES = 20


def bad_lines(path: Path, bad: list[str]) -> TranscriptError:
    """Return one error naming every bad line of ``path`` (``FILE:LINE: why`` each, up to
    :data:`MAX_BAD_LINES`, then how many more)."""
    shown = "; ".join(bad[:MAX_BAD_LINES])
    more = f"; and {len(bad) - MAX_BAD_LINES} more bad lines" if len(bad) > MAX_BAD_LINES else ""
    return TranscriptError(shown + more)


def _lines(path: Path, notes: list[str] | None = None, bad: list[str] | None = None,
           ) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSON Lines file (a
    leading UTF-8 byte-order mark dropped).

    The last line, when it has no newline at its end and is not valid JSON, is being
    written (Claude Code appends to the session it is in): it is left out with a note
    appended to ``notes`` (with ``notes`` given), and read on the next ingest.

    :param bad: when given, a line that is not JSON or not an object is appended here as
        ``FILE:LINE: why`` and passed over, instead of raised.
    :raises TranscriptError: a line is not JSON, or not a JSON object (no ``bad``); a byte
        is not UTF-8.
    """
    try:
        with path.open(encoding="utf-8-sig") as fh:  # a leading byte-order mark is dropped
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line.rstrip("\r\n"))  # columns count within the line
                except json.JSONDecodeError as exc:
                    if notes is not None and not line.endswith("\n"):  # only the last can
                        notes.append(f"{path}:{lineno}: left out: the last line is not "
                                     "complete JSON yet (no newline at its end); it is read "
                                     "on the next ingest")
                        return
                    why = f"{exc.msg.removesuffix(' at')} at column {exc.colno}"
                    message = f"{path}:{lineno}: not valid JSON: {why}"
                else:
                    if isinstance(row, dict):
                        yield lineno, row
                        continue
                    message = f"{path}:{lineno}: expected a JSON object, got " \
                        f"{type(row).__name__}"
                if bad is None:
                    raise TranscriptError(message)
                bad.append(message)
    except UnicodeDecodeError as exc:
        raise TranscriptError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") \
            from None


def sniff(path: Path) -> TranscriptFormat | None:
    """Return the transcript format of a JSON Lines file from its first record (a JSON
    object; up to :data:`MAX_BAD_LINES` bad lines before it are passed over, so that
    reading the file then names them all), or ``None`` when it is neither (or empty, or
    not JSON, or not UTF-8)."""
    seen = 0
    try:
        with path.open(encoding="utf-8-sig") as fh:
            for line in fh:
                if not line.strip():
                    continue
                try:
                    row = json.loads(line)
                except json.JSONDecodeError:
                    row = None
                if isinstance(row, dict):
                    return _format_of(row)
                seen += 1
                if seen > MAX_BAD_LINES:
                    return None
    except UnicodeDecodeError:
        return None
    return None


def _format_of(row: dict[str, Any]) -> TranscriptFormat | None:
    """Return the format a transcript's first record says, else ``None``."""
    if "sessionId" in row or row.get("type") in CLAUDE_TYPES:
        return "claude-code"
    if "text" in row and ("speaker" in row or "role" in row):
        return "chat"
    return None


def _string(row: dict[str, Any], key: str, where: str, default: str | None = None) -> str | None:
    value = row.get(key, default)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise TranscriptError(f"{where}: {key!r} must be a non-empty string, got {value!r}")
    return value.strip()


def _time(value: Any, where: str, key: str) -> datetime | None:
    """Return a line's time; one written without a zone is UTC (``2025-03-03 09:00`` is
    stored ``2025-03-03T09:00:00+00:00``, as every other time octomem stores).

    :raises TranscriptError: not a time, or outside the times octomem keeps.
    """
    try:
        moment = parse_turn_time(value)
    except ValueError as exc:
        raise TranscriptError(f"{where}: {key!r}: {exc}") from None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    if moment is not None and not in_range(epoch(moment) or 0.0):
        raise TranscriptError(f"{where}: {key!r}: {value!r} is outside the times octomem "
                              "keeps (0001-01-02T00:00Z up to 9999-12-31T00:00Z)")
    return moment


def _no_words(row: dict[str, Any]) -> bool:
    """Return True for a line whose ``text`` is there but says nothing (``""``, blanks or
    ``null``: a message that was only a tool call, an attachment, a deleted message)."""
    value = row.get("text", 0)
    return value is None or (isinstance(value, str) and not value.strip())


def _chat_turn(path: Path, lineno: int, row: dict[str, Any], positions: dict[str, int],
               uri: str, default: str) -> Document | None:
    """Return one line's turn; ``None`` for a well-formed line with no words
    (:func:`_no_words`), which takes no position.

    :raises TranscriptError: the line is malformed (naming the file and line).
    """
    where = f"{path}:{lineno}"
    unknown = sorted(set(row) - CHAT_FIELDS)
    if unknown:
        raise TranscriptError(f"{where}: unknown field {unknown[0]!r}; a chat turn has "
                              f"{', '.join(sorted(CHAT_FIELDS))}")
    empty = _no_words(row)
    text = "" if empty else _string(row, "text", where)
    if text is None:
        raise TranscriptError(f"{where}: no 'text'")
    speaker, role = _string(row, "speaker", where), _string(row, "role", where)
    if speaker is None and role is None:
        raise TranscriptError(f"{where}: give 'speaker' or 'role'")
    try:
        role = role_of(speaker, role)
    except ValueError as exc:
        raise TranscriptError(f"{where}: {exc}") from None
    speaker = speaker or str(role)
    conversation = _string(row, "conversation", where, default) or default
    session = _string(row, "session", where, conversation) or conversation
    extra = row.get("metadata") or {}
    if not isinstance(extra, dict):
        raise TranscriptError(f"{where}: 'metadata' must be an object")
    moment = _time(row.get("time"), where, "time")
    if empty:
        return None
    position = positions.get(conversation, 0)
    positions[conversation] = position + 1
    return Document(
        text=spoken_text(speaker, text),
        id=_string(row, "id", where) or turn_id(conversation, position),
        title=_string(row, "title", where) or spoken_date(moment), uri=uri, kind=TURN_KIND,
        event_time=epoch(moment),
        metadata=turn_metadata(conversation, session, position, speaker, role, moment, extra),
    )


def read_chat(path: Path, notes: list[str] | None = None,
              conversation: str | None = None, empty: list[str] | None = None,
              ) -> list[Document]:
    """Read a chat JSON Lines file (module docstring) as turn documents, in file order.

    A well-formed line whose ``text`` is empty, blank or ``null`` (a tool-only message,
    say) is no turn: it is left out and takes no position, and one note for the file
    counts such lines (``FILE: 2 lines with no text left out (lines 3, 7)``).

    :param notes: when given, an unfinished last line is left out and noted here
        (:func:`_lines`); otherwise it is an error like any other.
    :param empty: where the note on lines with no text goes (default: ``notes``; with
        neither, they are left out silently).
    :param conversation: the conversation of lines that name none (default: the file's
        name without its suffix; :func:`check_own_turns` picks another when that one is
        another file's).
    :raises TranscriptError: malformed lines, naming the file and each line (up to
        :data:`MAX_BAD_LINES`).
    """
    positions: dict[str, int] = {}
    uri = path.resolve().as_uri()
    turns, bad, silent = [], [], []
    for n, row in _lines(path, notes, bad):
        try:
            turn = _chat_turn(path, n, row, positions, uri, conversation or path.stem)
        except TranscriptError as exc:
            bad.append(str(exc))
            continue
        if turn is None:
            silent.append(n)
        else:
            turns.append(turn)
    if bad:
        raise bad_lines(path, bad)
    told = empty if empty is not None else notes
    if silent and told is not None:
        told.append(no_words_note(path, silent))
    return turns


def no_words_note(path: Path, lines: list[int]) -> str:
    """Return the note on a transcript's lines with no text (the first 10 named)."""
    shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    which = "line" if len(lines) == 1 else "lines"
    return f"{path}: {len(lines)} {which} with no text left out ({which} {shown})"


@dataclass(slots=True)
class _Pending:
    """A Claude Code turn being assembled from consecutive records of one speaker."""

    role: str
    uuid: str
    session: str
    moment: datetime | None
    texts: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def _claude_texts(content: Any, where: str) -> list[str]:
    """Return the text blocks of a Claude Code message's content (a string or blocks)."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        raise TranscriptError(f"{where}: message.content must be a string or a list of blocks")
    return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
            and isinstance(b.get("text"), str)]


def _claude_record(row: dict[str, Any], where: str) -> tuple[str, list[str]] | None:
    """Return ``(role, texts)`` of a record whose text is kept, else ``None``."""
    kind = row.get("type")
    if kind not in ("user", "assistant") or row.get("isSidechain") or row.get("isMeta") \
            or row.get("isCompactSummary"):
        return None
    message = row.get("message")
    if not isinstance(message, dict):
        article = "an" if kind == "assistant" else "a"
        raise TranscriptError(f"{where}: {article} {kind} record without a 'message' object")
    texts = [t.strip() for t in _claude_texts(message.get("content"), where) if t.strip()]
    if kind == "user":
        texts = [t for t in texts if not t.startswith(CLAUDE_COMMAND_PREFIXES)]
    return (kind, texts) if texts else None


def _claude_turn(path: Path, lineno: int, row: dict[str, Any], turns: list[_Pending]) -> None:
    """Add a Claude Code record's kept text to ``turns``: to the last turn when the same
    speaker goes on, else as a new turn.

    :raises TranscriptError: the record is malformed (naming the file and line).
    """
    where = f"{path}:{lineno}"
    kept = _claude_record(row, where)
    if kept is None:
        return
    role, texts = kept
    if turns and turns[-1].role == role:
        turns[-1].texts += texts
        return
    uuid = _string(row, "uuid", where) or f"{path.stem}:{lineno}"
    session = _string(row, "sessionId", where, path.stem) or path.stem
    extra = {"source": "claude-code"}
    if isinstance(row.get("cwd"), str):
        extra["project"] = row["cwd"]
    turns.append(_Pending(role, uuid, session, _time(row.get("timestamp"), where, "timestamp"),
                          texts, extra))


def read_claude_code(path: Path, notes: list[str] | None = None) -> list[Document]:
    """Read a Claude Code session transcript (module docstring) as turn documents
    (``notes``: as :func:`read_chat`).

    :raises TranscriptError: lines that are not a JSON object, user or assistant records
        without a message, or timestamps that are not ISO-8601; naming the file and each
        line (up to :data:`MAX_BAD_LINES`).
    """
    turns: list[_Pending] = []
    bad: list[str] = []
    for lineno, row in _lines(path, notes, bad):
        try:
            _claude_turn(path, lineno, row, turns)
        except TranscriptError as exc:
            bad.append(str(exc))
    if bad:
        raise bad_lines(path, bad)
    uri = path.resolve().as_uri()
    return [
        Document(
            text=spoken_text(t.role, "\n\n".join(t.texts)), id=f"claude:{t.uuid}",
            title=spoken_date(t.moment), uri=uri, kind=TURN_KIND, event_time=epoch(t.moment),
            metadata=turn_metadata(t.session, t.session, i, t.role, t.role, t.moment, t.extra),
        )
        for i, t in enumerate(turns)
    ]


def read_transcript(path: Path, fmt: TranscriptFormat | None = None,
                    notes: list[str] | None = None, empty: list[str] | None = None,
                    ) -> list[Document]:
    """Read one transcript file as turns; ``fmt=None`` sniffs the format; ``notes`` and
    ``empty``: as :func:`read_chat` (an unfinished last line, chat lines with no text:
    left out and noted).

    :raises TranscriptError: the file is neither format, ``fmt`` is given and the file's
        first record is of the other format, or a malformed line.
    :raises OctomemError: its name is not UTF-8, or it is not a regular file
        (:func:`.readable.check_readable`).
    """
    check_readable(path)
    found = sniff(path)
    if fmt is not None and found is not None and found != fmt:
        raise TranscriptError(f"{path}: {FORMAT_MISMATCH[fmt]}")
    chosen = fmt or found
    if chosen == "chat":
        return read_chat(path, notes, empty=empty)
    if chosen == "claude-code":
        return read_claude_code(path, notes)
    raise not_a_transcript(path)


def not_a_transcript(path: Path) -> TranscriptError:
    """Return the error for a ``.jsonl`` file :func:`sniff` found no format in: empty (or
    blank lines only), its only line still being written (no newline at its end, not
    JSON yet), or neither format."""
    notes: list[str] = []
    try:
        if next(_lines(path, notes), None) is None:
            if not notes:  # no line at all, or blank lines only
                return TranscriptError(f"{path}: empty file")
            return TranscriptError(f"{path}:1: its only line is not complete JSON yet (no "
                                   "newline at its end): nothing to read until it is written")
    except TranscriptError as exc:
        return exc
    return TranscriptError(
        f"{path}: neither a chat transcript (lines with 'text' and 'speaker' or 'role') nor "
        "a Claude Code session (lines with 'type' and 'sessionId'); see docs/conversations.md")
