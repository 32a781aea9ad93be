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

**Claude Code sessions** (``--format claude-code``): :mod:`.claude_code`. Which format
a file is (:func:`sniff`) and reading it as that one (:func:`read_transcript`) are here;
the lines both formats are read from, :mod:`.transcript_lines`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ..controls import blank
from ..turns import (
    TURN_KIND,
    epoch,
    role_of,
    spoken_date,
    spoken_text,
    turn_id,
    turn_metadata,
    written_with_zone,
)
from ..types import Document
from .claude_code import CLAUDE_COMMAND_PREFIXES, CLAUDE_TYPES, read_claude_code  # noqa: F401
from .json_line import LineNotJSON, parse_line
from .readable import check_readable
from .transcript_lines import (  # noqa: F401 (TranscriptError: this module's API)
    MAX_BAD_LINES,
    TranscriptError,
    bad_lines,
    read_lines,
    string_field,
    time_field,
)

TranscriptFormat = Literal["chat", "claude-code"]
#: Fields of a chat JSON Lines turn.
CHAT_FIELDS = frozenset({"conversation", "session", "speaker", "role", "text", "time", "id",
                         "title", "metadata"})

#: Roles of OpenAI-style chat exports that are no one's words in the conversation: the
#: system prompt, a developer's instructions, a tool's output. Such a line is left out
#: with a note, as a line with no text is (trial 18 H12: it failed the whole file).
INSTRUCTION_ROLES = frozenset({"system", "developer", "tool"})

#: Why a file given as one format (``--format``) is not: what that format expected, and
#: what the file's first record looks like instead (:func:`sniff`).
FORMAT_MISMATCH: dict[str, str] = {
    "claude-code": ("not a Claude Code session (its first record has no 'sessionId' and no "
                    "Claude Code 'type'); it reads as a chat transcript: leave out --format "
                    "or give --format chat"),
    "chat": ("not a chat transcript (lines with 'text' and 'speaker' or 'role'); it reads as "
             "a Claude Code session: leave out --format or give --format claude-code"),
}


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
                    row = parse_line(line)
                except LineNotJSON:
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


def _no_words(row: dict[str, Any]) -> bool:
    """Return True for a line whose ``text`` is there but says nothing (``""``, blanks or
    ``null``: a message that was only a tool call, an attachment, a deleted message)."""
    value = row.get("text", 0)
    return value is None or (isinstance(value, str) and blank(value))


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
    text = "" if empty else string_field(row, "text", where, numbers=False)
    if text is None:
        raise TranscriptError(f"{where}: no 'text'")
    speaker = string_field(row, "speaker", where, numbers=False)
    role = string_field(row, "role", where, numbers=False)
    if speaker is None and role is None:
        raise TranscriptError(f"{where}: give 'speaker' or 'role'")
    try:
        role = role_of(speaker, role)
    except ValueError as exc:
        raise TranscriptError(f"{where}: {exc}") from None
    speaker = speaker or str(role)
    conversation = string_field(row, "conversation", where, default) or default
    session = string_field(row, "session", where, conversation) or conversation
    extra = row.get("metadata") or {}
    if not isinstance(extra, dict):
        raise TranscriptError(f"{where}: 'metadata' must be an object")
    moment = time_field(row.get("time"), where, "time")
    if empty:
        return None
    position = positions.get(conversation, 0)
    positions[conversation] = position + 1
    return Document(
        text=spoken_text(speaker, text),
        id=string_field(row, "id", where) or turn_id(conversation, position),
        title=(string_field(row, "title", where)
               or spoken_date(moment, written_with_zone(row.get("time")))),
        uri=uri, kind=TURN_KIND,
        event_time=epoch(moment),
        metadata=turn_metadata(conversation, session, position, speaker, role, moment, extra),
    )


def read_chat(path: Path, notes: list[str] | None = None,
              conversation: str | None = None, empty: list[str] | None = None,
              omitted: list[str] | None = None) -> list[Document]:
    """Read a chat JSON Lines file (module docstring) as turn documents, in file order.

    A well-formed line whose ``text`` is empty, blank or ``null`` (a tool-only message,
    say) is no turn: it is left out and takes no position, and one note for the file
    counts such lines (``FILE: 2 lines with no text left out (lines 3, 7)``). So is a line
    of role ``system``, ``developer`` or ``tool`` (:data:`INSTRUCTION_ROLES`), noted in
    ``omitted``.

    :param notes: when given, an unfinished last line is left out and noted here
        (:func:`~.transcript_lines.read_lines`); otherwise it is an error like any other.
    :param empty: where the note on lines with no text goes (default: ``notes``; with
        neither, they are left out silently).
    :param omitted: where the note on messages left out on purpose (instructions) goes
        (default: ``notes``; with neither, they are left out silently).
    :param conversation: the conversation of lines that name none (default: the file's
        name without its suffix; :func:`check_own_turns` picks another when that one is
        another file's).
    :raises TranscriptError: malformed lines, naming the file and each line (up to
        :data:`MAX_BAD_LINES`).
    """
    positions: dict[str, int] = {}
    uri = path.resolve().as_uri()
    turns, bad, silent, instructions = [], [], [], []
    for n, row in read_lines(path, notes, bad):
        if row.get("role") in INSTRUCTION_ROLES:
            instructions.append(n)
            continue
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
    omitted = omitted if omitted is not None else notes
    if instructions and omitted is not None:
        which = "line" if len(instructions) == 1 else "lines"
        omitted.append(f"{path}: {len(instructions)} {which} of the system's instructions "
                       f"left out (role system, developer or tool: {which} "
                       f"{', '.join(map(str, instructions[:10]))})")
    return turns


def no_words_note(path: Path, lines: list[int]) -> str:
    """Return the note on a transcript's lines with no text (the first 10 named)."""
    shown = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    which = "line" if len(lines) == 1 else "lines"
    return f"{path}: {len(lines)} {which} with no text left out ({which} {shown})"


def read_transcript(path: Path, fmt: TranscriptFormat | None = None,
                    notes: list[str] | None = None, empty: list[str] | None = None,
                    omitted: list[str] | None = None) -> list[Document]:
    """Read one transcript file as turns; ``fmt=None`` sniffs the format; ``notes``,
    ``empty`` and ``omitted``: as :func:`read_chat` (an unfinished last line, chat lines
    with no text, messages left out on purpose: a chat's instructions, a Claude Code
    branch the user rewound away from; each left out and noted).

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
        return read_chat(path, notes, empty=empty, omitted=omitted)
    if chosen == "claude-code":
        return read_claude_code(path, notes, omitted)
    raise not_a_transcript(path)


def not_a_transcript(path: Path) -> TranscriptError:
    """Return the error for a ``.jsonl`` file :func:`sniff` found no format in: empty (or
    blank lines only), its only line still being written (no newline at its end, not
    JSON yet), or neither format."""
    notes: list[str] = []
    try:
        if next(read_lines(path, notes), None) is None:
            if not notes:  # no line at all, or blank lines only
                return TranscriptError(f"{path}: empty file")
            return TranscriptError(f"{path}:1: its only line is not complete JSON yet (no "
                                   "newline at its end): nothing to read until it is written")
    except TranscriptError as exc:
        return exc
    return TranscriptError(
        f"{path}: neither a chat transcript (lines with 'text' and 'speaker' or 'role') nor "
        "a Claude Code session (lines with 'type' and 'sessionId'); see docs/conversations.md")
