"""A conversation hit's neighbouring turns (``search --context N``) as lines under it.

Each turn is one dim line under its own hit's text, indented :data:`CONTEXT_INDENT` past
it and marked with its place relative to the hit: ``↑1`` the turn just before, ``↓2`` the
second after. A turn is printed once per answer: a turn that is itself a hit of the
answer, or was already shown around an earlier hit, is a reference instead —
``↓1 Ben: see #3`` (it is hit #3) or ``↑1 Ben: see #2 ↓1`` (shown under hit #2, just
after it) — so two neighbouring hits do not print the same words twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text

from ..turns import SPEAKER
from .layout import cut, visible

#: Columns a context line is indented past its hit's text, so it reads as the hit's.
CONTEXT_INDENT = 2

Key = tuple[str, str]


def _key(scope: str, chunk: Any) -> Key:
    """A turn's identity in an answer: its scope and document (a turn is one document)."""
    return scope, str(chunk.document_id)


def _one_line(text: str) -> str:
    return visible(" ".join(text.split()))


class ContextLines:
    """Lines of every hit's context turns in one answer, each turn printed once.

    :param hits: the answer's hits, best first (each is already shown as itself).
    """

    def __init__(self, hits: Sequence[Any]) -> None:
        self.shown: dict[Key, str] = {_key(h.scope, h.chunk): f"#{h.rank}" for h in hits}

    def lines(self, hit: Any, turns: Sequence[Any], indent: int, room: int) -> list[Text]:
        """Return ``hit``'s context ``turns`` (in conversation order) as dim lines.

        :param indent: the column the hit's text starts at.
        :param room: the columns the hit's text has; each line fits in ``indent + room``.
        """
        lead = " " * (indent + CONTEXT_INDENT)
        width = max(room - CONTEXT_INDENT, 12)
        out: list[Text] = []
        for turn in sorted(turns, key=lambda t: t.offset):
            mark = f"{'↑' if turn.offset < 0 else '↓'}{abs(turn.offset)}"
            key = _key(hit.scope, turn.chunk)
            where = self.shown.get(key)
            if where is None:
                self.shown[key] = f"#{hit.rank} {mark}"
                said = _one_line(turn.chunk.text)
            else:
                speaker = turn.chunk.metadata.get(SPEAKER) or "turn"
                said = f"{_one_line(str(speaker))}: see {where}"
            line = Text(lead, style="dim")
            line.append(mark + " ", style="bold dim")
            line.append(cut(said, width - len(mark) - 1), style="dim")
            out.append(line)
        return out
