"""One line of JSON Lines input (a transcript, a BEIR corpus, an export), read so that any
text gives either a value or :class:`LineNotJSON` with a one-line reason.

Python's ``json`` reader recurses once per nested array or object, so a line of a few
thousand ``[`` (a tool's output kept in a Claude Code transcript, a crafted file) raised
``RecursionError`` with a traceback instead of the line's error (trial 17 G3).

A ``\\udcef``-style escape of a lone UTF-16 surrogate is valid JSON (Claude Code writes
one when it logs a file's non-UTF-8 bytes, or when it cuts a tool's output inside an
emoji), but no UTF-8 text can hold it: SQLite refused it with a raw
``UnicodeEncodeError`` and the rest of the folder was not stored (trial 18 H14). Such a
character is read as U+FFFD, the replacement character, in every string and key.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: A lone surrogate's escape (``\ud800``-``\udfff``, either case); a pair that encodes one
#: character is read as that character and is not lone.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


class LineNotJSON(ValueError):
    """A line that is not JSON; :attr:`why` says why in a few words, with the column
    (1-based, within the line) where the reader stopped when it knows one."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


def parse_line(line: str) -> Any:
    """Return the JSON value of ``line`` (a trailing newline is allowed), each lone
    surrogate in its strings replaced by U+FFFD (module docstring).

    :raises LineNotJSON: it is not JSON (``"Expecting ',' delimiter at column 17"``), or
        its arrays and objects are nested more deeply than the reader can follow
        (``"nested too deeply to read"``; Python's recursion limit, ~1,000 levels).
    """
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise LineNotJSON(f"{exc.msg.removesuffix(' at')} at column {exc.colno}") from None
    except RecursionError:
        raise LineNotJSON("arrays or objects nested too deeply to read") from None
    return _no_lone_surrogates(value) if _SURROGATE_ESCAPE.search(line) else value


def _no_lone_surrogates(value: Any) -> Any:
    """Return ``value`` with every lone surrogate in its strings and keys replaced by
    U+FFFD, walked without recursion (a line may nest ~1,000 levels deep)."""
    def fix(item: Any) -> Any:
        return _SURROGATE.sub(REPLACEMENT, item) if isinstance(item, str) else item

    value = fix(value)
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            node[:] = [fix(item) for item in node]
            stack.extend(item for item in node if isinstance(item, (list, dict)))
        elif isinstance(node, dict):
            fixed = {fix(key): fix(item) for key, item in node.items()}
            node.clear()
            node.update(fixed)
            stack.extend(item for item in node.values() if isinstance(item, (list, dict)))
    return value
