"""One line of JSON Lines input (a transcript, a BEIR corpus, an export), read so that any
text gives either a value or :class:`LineNotJSON` with a one-line reason.

Python's ``json`` reader recurses once per nested array or object, so a line of a few
thousand ``[`` (a tool's output kept in a Claude Code transcript, a crafted file) raised
``RecursionError`` with a traceback instead of the line's error (trial 17 G3).
"""

from __future__ import annotations

import json
from typing import Any


class LineNotJSON(ValueError):
    """A line that is not JSON; :attr:`why` says why in a few words, with the column
    (1-based, within the line) where the reader stopped when it knows one."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def parse_line(line: str) -> Any:
    """Return the JSON value of ``line`` (a trailing newline is allowed).

    :raises LineNotJSON: it is not JSON (``"Expecting ',' delimiter at column 17"``), or
        its arrays and objects are nested more deeply than the reader can follow
        (``"nested too deeply to read"``; Python's recursion limit, ~1,000 levels).
    """
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise LineNotJSON(f"{exc.msg.removesuffix(' at')} at column {exc.colno}") from None
    except RecursionError:
        raise LineNotJSON("arrays or objects nested too deeply to read") from None
