"""Claude Code sessions as turns (``--format claude-code``).

``~/.claude/projects/<project>/<session>.jsonl``: the user's typed text and the
assistant's text replies, each with its timestamp. Each user record is a turn of its own;
consecutive assistant records form one turn (the tool calls between an assistant's texts
are left out, so its reply reads as one turn). Dropped: tool calls and results, thinking,
images, sub-agent (sidechain) and meta records, compaction summaries, slash-command
records, API error records and the "No response requested." placeholder, every
non-message record (summaries, snapshots, progress, system), and the blocks Claude Code
and its IDE and hooks put into a user's text (:data:`CLAUDE_INJECTED_TAGS`: a
``CLAUDE.md`` as context, todo nudges, a file the agent read, the editor's selection, a
``!`` shell command and its output, a background task's notice); a user record left with
no text by that is dropped too. A turn's id is ``claude:<uuid of its first record>``, so a
resumed session that repeats earlier records stores them once; a user turn is one record,
so its text is the same in every file that repeats it (trial 18 H1: a session that ended
on a user message the user interrupted, resumed in a new file, used to merge that message
with the resumed session's first one, and the two files then rewrote the turn in turn on
every ingest). A session the user rewound (Esc Esc, then an edited message) is read
along the branch it ended on, the abandoned branch left out (:mod:`.claude_branches`).
Read whole, as a chat transcript is (:mod:`.transcripts`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from ..turns import TURN_KIND, epoch, spoken_date, spoken_text, turn_metadata
from ..types import Document
from .claude_branches import abandoned_records
from .transcript_lines import (
    TranscriptError,
    bad_lines,
    read_lines,
    string_field,
    time_field,
)

#: Record types of Claude Code transcripts (any record with a ``sessionId`` also counts).
CLAUDE_TYPES = frozenset({"user", "assistant", "system", "summary", "file-history-snapshot",
                          "queue-operation", "progress", "permission-mode", "custom-title",
                          "last-prompt", "mode"})
#: User texts Claude Code writes itself for slash commands and their output.
CLAUDE_COMMAND_PREFIXES = ("<command-name>", "<command-message>", "<local-command-stdout>",
                           "<local-command-stderr>", "<local-command-caveat>",
                           "[Request interrupted by user")
#: Blocks Claude Code, its IDE extensions and hooks add to the user's text, which the user
#: did not type (trial 17 G8: a session's first record carried the project's whole
#: ``CLAUDE.md`` inside ``<system-reminder>``, stored as the user's words). Each is removed
#: from the opening tag to its closing tag; an opening tag never closed is kept as text.
CLAUDE_INJECTED_TAGS = ("system-reminder", "ide_opened_file", "ide_selection",
                        "ide_diagnostics", "user-prompt-submit-hook",
                        # trial 18 H2: a `!` shell command typed at the prompt and its
                        # whole output, and a background task's completion notice
                        "bash-input", "bash-stdout", "bash-stderr", "task-notification")
#: What Claude Code writes as an assistant record when no reply was made (trial 18 H2).
CLAUDE_NO_REPLY = "No response requested."
_INJECTED = re.compile(rf"<({'|'.join(map(re.escape, CLAUDE_INJECTED_TAGS))})>.*?</\1>",
                       re.DOTALL)
_BLANK_LINES = re.compile(r"\n\s*\n\s*\n")  # what a removed block leaves: one break


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
            or row.get("isCompactSummary") or row.get("isApiErrorMessage"):
        return None
    message = row.get("message")
    if not isinstance(message, dict):
        article = "an" if kind == "assistant" else "a"
        raise TranscriptError(f"{where}: {article} {kind} record without a 'message' object")
    texts = [t.strip() for t in _claude_texts(message.get("content"), where) if t.strip()]
    if kind == "user":
        texts = [typed for t in texts if not t.startswith(CLAUDE_COMMAND_PREFIXES)
                 if (typed := _BLANK_LINES.sub("\n\n", _INJECTED.sub("", t)).strip())]
    else:
        texts = [t for t in texts if t != CLAUDE_NO_REPLY]
    return (kind, texts) if texts else None


def _speaks(row: dict[str, Any], path: Path) -> bool:
    """Whether ``row`` is a user message or an assistant reply whose text is kept."""
    try:
        return _claude_record(row, str(path)) is not None
    except TranscriptError:
        return False


def _claude_turn(path: Path, lineno: int, row: dict[str, Any], turns: list[_Pending]) -> None:
    """Add a Claude Code record's kept text to ``turns``: to the last turn when the
    assistant goes on, else as a new turn (a user record is always a turn of its own).

    :raises TranscriptError: the record is malformed (naming the file and line).
    """
    where = f"{path}:{lineno}"
    kept = _claude_record(row, where)
    if kept is None:
        return
    role, texts = kept
    if turns and turns[-1].role == role == "assistant":
        turns[-1].texts += texts
        return
    uuid = string_field(row, "uuid", where) or f"{path.stem}:{lineno}"
    session = string_field(row, "sessionId", where, path.stem) or path.stem
    extra = {"source": "claude-code"}
    if isinstance(row.get("cwd"), str):
        extra["project"] = row["cwd"]
    turns.append(_Pending(role, uuid, session, time_field(row.get("timestamp"), where, "timestamp"),
                          texts, extra))


def read_claude_code(path: Path, notes: list[str] | None = None,
                     omitted: list[str] | None = None) -> list[Document]:
    """Read a Claude Code session transcript (module docstring) as turn documents
    (``notes``: as :func:`~.transcripts.read_chat`; ``omitted``, default ``notes``: a
    note counting the messages of branches the user rewound away from, left out:
    :mod:`.claude_branches`).

    :raises TranscriptError: lines that are not a JSON object, user or assistant records
        without a message, or timestamps that are not ISO-8601; naming the file and each
        line (up to :data:`~.transcript_lines.MAX_BAD_LINES`).
    """
    turns: list[_Pending] = []
    bad: list[str] = []
    lines = list(read_lines(path, notes, bad))
    rows = [row for _, row in lines]
    abandoned = abandoned_records(rows, lambda row: _speaks(row, path))
    for i, (lineno, row) in enumerate(lines):
        if i in abandoned:
            continue
        try:
            _claude_turn(path, lineno, row, turns)
        except TranscriptError as exc:
            bad.append(str(exc))
    if bad:  # in line order: the lines that are not JSON were named as they were read
        line = len(f"{path}:")
        raise bad_lines(path, sorted(bad, key=lambda why: int(n) if (
            n := why[line:].partition(":")[0]).isdigit() else 0))
    said = sum(_speaks(rows[i], path) for i in abandoned)
    omitted = omitted if omitted is not None else notes
    if said and omitted is not None:
        omitted.append(f"{path}: left out {said} message{'s' * (said != 1)} of a branch "
                       "the user rewound away from (Esc Esc and an edited message); the "
                       "session goes on from the edited one")
    uri = path.resolve().as_uri()
    return [
        Document(
            text=spoken_text(t.role, "\n\n".join(t.texts)), id=f"claude:{t.uuid}",
            title=spoken_date(t.moment), uri=uri, kind=TURN_KIND, event_time=epoch(t.moment),
            metadata=turn_metadata(t.session, t.session, i, t.role, t.role, t.moment, t.extra),
        )
        for i, t in enumerate(turns)
    ]
