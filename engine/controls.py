"""Control characters in stored text, shown as escapes wherever text leaves octomem as
text (a terminal, a Markdown resource, a page title): stored text must never send a
terminal an escape sequence, a bell or a NUL, nor carry one into an agent's context.

JSON output needs nothing: JSON escapes C0 controls itself, and keeps the text as stored.
"""

from __future__ import annotations

#: Control characters (Unicode category Cc: C0, DEL and C1) other than newline and tab,
#: each mapped to its visible escape (``\x1b``).
CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in (9, 10)}


def visible(text: str) -> str:
    """Return ``text`` with every control character except newline and tab shown as its
    escape (``"\\x1b"`` for ESC, ``"\\x07"`` for BEL, ``"\\x00"`` for NUL); text without
    any is returned as it is."""
    return text.translate(CONTROLS)
