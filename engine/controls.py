"""Control and invisible characters in stored text, shown as escapes wherever text leaves
octomem as text (a terminal, a Markdown resource, a page title): stored text must never
send a terminal an escape sequence, a bell or a NUL, nor carry one into an agent's
context; nor may it hide what it says (a zero-width space inside a word) or reorder
what is printed after it (a right-to-left override, U+202E, shows ``evil.txt`` as
``txt.live``).

Escaped: control characters (Unicode category Cc: C0, DEL and C1) other than newline
and tab, as ``\\x1b``; format characters (category Cf: bidirectional overrides and
isolates, zero-width space, word joiner, byte-order mark, soft hyphen, tag characters)
and the line and paragraph separators (Zl, Zp: U+2028, U+2029, which some terminals and
editors take as line breaks), as ``\\u202e`` (``\\U000e0001`` above U+FFFF). Kept: the
zero-width non-joiner and joiner (U+200C, U+200D), which Persian and Indic scripts and
emoji sequences need to be spelled right, and which neither reorder nor hide text.

JSON output needs nothing: JSON escapes C0 controls itself, and keeps the text as stored.
"""

from __future__ import annotations

import re
import unicodedata

#: Categories escaped (Unicode: Cc control, Cf format, Zl line separator, Zp paragraph
#: separator).
ESCAPED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})

#: Characters of those categories kept as they are: newline, tab, ZWNJ, ZWJ.
KEPT = frozenset({0x09, 0x0A, 0x200C, 0x200D})


def blank(text: str) -> bool:
    """Return True when ``text`` shows nothing: only whitespace and the characters of
    :data:`ESCAPED_CATEGORIES` (a lone zero-width space, soft hyphen, byte-order mark or
    joiner). Every writer refuses such a text as empty, as it refuses ``"   "``, and a
    query of them as having no word (trial 14 F11, F15). Stops at the first visible
    character, so a long text costs one look at its start; a text that starts with a
    letter or digit (never whitespace nor of those categories) is answered without the
    generator (10k ingest texts: ~0.7 -> ~0.2 us each)."""
    if text[:1].isalnum():
        return False
    category = unicodedata.category
    return all(char.isspace() or category(char) in ESCAPED_CATEGORIES for char in text)


def escape_of(char: str) -> str:
    """Return the visible escape of one character: ``\\x1b`` up to U+00FF, ``\\u202e`` up
    to U+FFFF, ``\\U000e0001`` above."""
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


class _Escapes(dict[int, str]):
    """``str.translate`` table over every code point, filled as characters are met: an
    escaped character maps to its escape, any other to itself."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        shown = escape_of(char) if code not in KEPT and \
            unicodedata.category(char) in ESCAPED_CATEGORIES else char
        self[code] = shown
        return shown


#: The translation table (a ``dict``; filled on first use of each character).
CONTROLS = _Escapes()


def visible(text: str) -> str:
    """Return ``text`` with every control, format and line/paragraph separator character
    except newline, tab, ZWNJ and ZWJ shown as its escape (``"\\x1b"`` for ESC, ``"\\x07"``
    for BEL, ``"\\x00"`` for NUL, ``"\\u202e"`` for the right-to-left override,
    ``"\\u200b"`` for the zero-width space); text without any is returned as it is."""
    if text.isprintable():  # fast path: no Cc, Cf, Zl, Zp at all
        return text
    return text.translate(CONTROLS)


#: Longest query echoed back in a message or a heading, characters (a query is the user's
#: own text: a few words are enough to recognise it; a 4,096-character one must not fill
#: the screen). Not tuned: one 80-column line.
ECHO_CHARS = 80


#: A terminal escape sequence (ECMA-48): a control sequence (``ESC [`` parameters,
#: intermediates, final byte: colours, cursor moves), an operating system command (``ESC ]``
#: to BEL or ``ESC \\``: window titles, hyperlinks) or a two-byte escape.
ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]*[0-~]"
)


def searchable(query: str) -> str:
    """Return ``query`` as it is searched: without terminal escape sequences
    (:data:`ESCAPE_SEQUENCE`), its other control characters (C0, DEL, C1) but newline and
    tab as spaces. A query copied from coloured terminal output (``\x1b[31mERROR
    42\x1b[0m``) searched ``31merror`` and ``0m`` as words (trial 15 F14); an answer still
    echoes the query as it was given. A query without control characters is returned as
    it is."""
    if query.isprintable():  # fast path: no control character at all
        return query
    plain = ESCAPE_SEQUENCE.sub(" ", query)
    return "".join(" " if unicodedata.category(c) == "Cc" and c not in "\t\n" else c
                   for c in plain)


def clipped(query: str, limit: int = ECHO_CHARS) -> str:
    """Return ``query`` with its whitespace runs folded to one space, cut to ``limit``
    characters with ``…`` appended when longer (a page title, a heading)."""
    flat = " ".join(query.split())
    return flat if len(flat) <= limit else flat[:limit].rstrip() + "…"


def echoed(query: str, limit: int = ECHO_CHARS) -> str:
    """Return ``query`` as a message echoes it: :func:`clipped`, quoted as ``repr`` quotes
    it, control and invisible characters escaped (:func:`visible`): ``'xxxx…'``."""
    return visible(repr(clipped(query, limit)))
