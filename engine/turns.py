"""Conversation turns as documents: the metadata every turn carries, and its time.

A transcript is a conversation of sessions of turns. Each turn is stored as one
document of kind :data:`TURN_KIND` (one chunk, or several for a very long turn) whose
metadata, copied onto its chunks, names where it sits:

============== ======= ===========================================================
key            type    meaning
============== ======= ===========================================================
conversation   str     the conversation it belongs to
session        str     the session within the conversation
position       int     0-based index of the turn in its conversation, in order
speaker        str     who spoke, as written ("Caroline", "user")
role           str     ``"user"`` or ``"assistant"`` in user-assistant chats;
                       ``None`` (absent) in chats between people
time           str     when it was said, ISO-8601, when known
============== ======= ===========================================================

Its text is ``"<speaker>: <what was said>"`` and its title the date it was said, as
the LoCoMo BEIR corpus stores turns (its session date is the title): a question about
*when* finds the date in the indexed text. A time with a zone is titled in UTC and says
so (:func:`spoken_date`); ``time`` keeps it as written, offset included.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

#: Kind of a conversation turn (statements are ITEM, FACT, ...; ingested files DOC).
TURN_KIND = "TURN"
#: Metadata keys of a turn (see the module docstring).
CONVERSATION, SESSION, POSITION, SPEAKER, ROLE, TIME = (
    "conversation", "session", "position", "speaker", "role", "time")
TURN_KEYS = (CONVERSATION, SESSION, POSITION, SPEAKER, ROLE, TIME)
#: The roles of a user-assistant chat.
ROLES = ("user", "assistant")

#: Date formats of transcripts in the wild, tried in order after ISO-8601: LoCoMo's
#: "1:56 pm on 8 May, 2023" and LongMemEval's "2023/05/20 (Sat) 00:43".
#: A number from this on is read as epoch milliseconds, below it as epoch seconds:
#: 10^11 s would be the year 5138, 10^11 ms is 1973-03-03, so no chat of a computer is
#: read in the wrong unit (JavaScript's ``Date.now()`` writes milliseconds).
EPOCH_MS_FROM = 10**11
_FORMATS = ("%I:%M %p on %d %B, %Y", "%Y/%m/%d (%a) %H:%M", "%Y/%m/%d %H:%M", "%Y/%m/%d")


def parse_turn_time(value: Any) -> datetime | None:
    """Return a transcript's time as a datetime (naive when the text names no zone).

    Accepts ISO-8601 (``2024-05-01``, ``2024-05-01T10:00:00Z``), a number (epoch
    seconds; from :data:`EPOCH_MS_FROM` on, epoch milliseconds), and the formats in
    :data:`_FORMATS`; ``None`` or an empty string is ``None``.

    :raises ValueError: any other text, or a number no time octomem keeps.
    """
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _from_number(value)
    if not isinstance(value, str):
        try:  # as the user wrote it: ``true``, ``["x"]`` (trial 14 F7)
            shown = json.dumps(value, ensure_ascii=False)[:80]
        except (TypeError, ValueError):
            shown = type(value).__name__
        raise ValueError(f"a time is an ISO-8601 string or an epoch number (seconds; "
                         f"milliseconds from 10^11 on), got {shown}")
    return _parse_text(value.strip())


def _from_number(value: float) -> datetime:
    """Return a number as a time: epoch seconds, or epoch milliseconds from
    :data:`EPOCH_MS_FROM` on (the two units chat exports write).

    :raises ValueError: not finite, or outside the years 1-9999, naming the rule.
    """
    ms = abs(value) >= EPOCH_MS_FROM
    try:
        return datetime.fromtimestamp(float(value) / (1000 if ms else 1), UTC)
    except (ValueError, OverflowError, OSError):
        raise ValueError(
            f"{value} is no time octomem keeps: a number is epoch seconds, or epoch "
            f"milliseconds from 10^11 on; or give an ISO-8601 time") from None


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> datetime:
    """Parse one time text (cached: every turn of a session repeats its date)."""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    for fmt in _FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    raise ValueError(f"{text!r} is not an ISO-8601 time (e.g. 2024-05-01T10:00:00Z)")


def iso_time(moment: datetime | None) -> str | None:
    """Format a turn's time as ISO-8601 to the second (no zone when none was given)."""
    return None if moment is None else moment.isoformat(timespec="seconds")


def written_with_zone(value: Any) -> bool:
    """Return whether a transcript's time ``value`` names its zone: an offset or ``Z``,
    or a number (epoch seconds are UTC); ``False`` for no time or one that does not parse."""
    try:
        moment = parse_turn_time(value)
    except ValueError:
        return False
    return moment is not None and moment.tzinfo is not None


def epoch(moment: datetime | None) -> float | None:
    """Return a turn's time as epoch seconds (a time without a zone is UTC)."""
    if moment is None:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def spoken_date(moment: datetime | None, zoned: bool | None = None) -> str | None:
    """Return the title of a turn said at ``moment``: ``"8 May 2023, 13:56"`` as written
    for a time without a zone (LoCoMo's and LongMemEval's, whose titles and indexed text
    stay as they were), ``"8 May 2023, 11:56 UTC"`` for a time with one (an offset, ``Z``,
    or epoch seconds), in UTC as its ``event_time``, so that the turns of people writing
    in different offsets read in the order they were said (trial 16 F6: José's
    ``10:05+02:00`` was titled 10:05, after Ana's 10:00 UTC, though said two hours before).

    :param zoned: whether the time was written with a zone (``None``: ``moment`` has
        one); a transcript line's time written without one is stored as UTC
        (:func:`~octomem.engine.memory.transcript_lines.time_field`) and titled as written.
    """
    if moment is None:
        return None
    if not (moment.tzinfo is not None if zoned is None else zoned):
        return f"{moment.day} {moment:%B %Y, %H:%M}"
    moment = moment.astimezone(UTC)
    return f"{moment.day} {moment:%B %Y, %H:%M} UTC"


def role_of(speaker: str | None, role: str | None = None) -> str | None:
    """Return the turn's role: ``role`` if given, else the speaker's name when it is
    ``user`` or ``assistant`` (any case), else ``None``.

    :raises ValueError: ``role`` is given and is not ``user`` or ``assistant``.
    """
    if role is not None:
        if role not in ROLES:
            raise ValueError(f"role must be 'user' or 'assistant', got {role!r}")
        return role
    folded = (speaker or "").strip().lower()
    return folded if folded in ROLES else None


def spoken_text(speaker: str, text: str) -> str:
    """Return ``"<speaker>: <text>"`` unless the text already starts with it (the name in
    Unicode NFC, as :func:`turn_metadata` keeps it)."""
    text = text.strip()
    prefix = f"{unicodedata.normalize('NFC', speaker)}:"
    return text if text.startswith(prefix) else f"{prefix} {text}"


def turn_metadata(
    conversation: str, session: str, position: int, speaker: str, role: str | None,
    time: datetime | None, extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return a turn's metadata: ``extra`` first, then the :data:`TURN_KEYS` over it
    (``role`` and ``time`` left out when unknown). The speaker's name is kept in Unicode
    NFC: "José" composed and decomposed in one transcript are one speaker (trial 14 F10)."""
    meta: dict[str, Any] = dict(extra or {})
    meta.update({CONVERSATION: conversation, SESSION: session, POSITION: int(position),
                 SPEAKER: unicodedata.normalize("NFC", speaker)})
    meta.pop(ROLE, None)
    meta.pop(TIME, None)
    if role is not None:
        meta[ROLE] = role
    if time is not None:
        meta[TIME] = iso_time(time)
    return meta


_SAFE = re.compile(r"\s+")


def turn_id(conversation: str, position: int) -> str:
    """Return the id of a turn that has none of its own: ``<conversation>:<position>``."""
    return f"{_SAFE.sub(' ', conversation)}:{position}"


#: Metadata names a BEIR corpus may give each turn's fields, tried in order
#: (LoCoMo: conv_id, session, speaker, date_time; LongMemEval: qid — one haystack of
#: chats per question —, session, speaker, date_time).
BEIR_NAMES: dict[str, tuple[str, ...]] = {
    CONVERSATION: (CONVERSATION, "conversation_id", "conv_id", "qid"),
    SESSION: (SESSION, "session_id"),
    SPEAKER: (SPEAKER,),
    ROLE: (ROLE,),
    TIME: (TIME, "date_time", "timestamp", "date"),
}


def _first(meta: Mapping[str, Any], names: tuple[str, ...]) -> Any:
    return next((meta[n] for n in names if meta.get(n) not in (None, "")), None)


def beir_turn(
    meta: Mapping[str, Any], positions: dict[str, int]
) -> tuple[dict[str, Any], datetime | None] | None:
    """Return a BEIR row's metadata as a turn's (its own fields kept, the
    :data:`TURN_KEYS` added) and its time, when it names a conversation and a speaker or
    role (:data:`BEIR_NAMES`); else ``None``.

    :param positions: conversation -> turns seen so far; the row's position is taken
        from it and the count advanced (rows are turns in file order).
    :raises ValueError: a time in none of the known formats, or a bad role.
    """
    conversation = _first(meta, BEIR_NAMES[CONVERSATION])
    speaker = _first(meta, BEIR_NAMES[SPEAKER])
    role_given = _first(meta, BEIR_NAMES[ROLE])
    if conversation is None or (speaker is None and role_given is None):
        return None
    conversation = str(conversation)
    role = role_of(None if speaker is None else str(speaker),
                   None if role_given is None else str(role_given))
    session = _first(meta, BEIR_NAMES[SESSION])
    moment = parse_turn_time(_first(meta, BEIR_NAMES[TIME]))
    position = positions.get(conversation, 0)
    positions[conversation] = position + 1
    speaker_name = str(speaker) if speaker is not None else str(role)
    return turn_metadata(conversation, conversation if session is None else str(session),
                         position, speaker_name, role, moment, meta), moment
