"""A document's text without the heading that repeats its title.

A Markdown file ``# Decision: ...`` is stored with that heading as its title and as its
text's first line; a hit shows the title, then the text, so the text leaves the heading
out (the CLI's hit lines and the browser view's search results alike).
"""

from __future__ import annotations

__all__ = ["without_title"]


def without_title(text: str, title: str | None) -> str:
    """Return ``text`` without a lead that repeats ``title``: a first line ``# title`` or
    ``title``, or the words ``# title`` / ``title`` followed by a separator or a space
    ("Kestrel: ..." under the title "Kestrel", not "Kestrels ..."). Whitespace is compared
    folded (runs as one space); a text whose lead is cut comes back folded too."""
    title = " ".join((title or "").split())
    if not title:
        return text
    first, _, rest = text.partition("\n")
    if " ".join(first.split()) in (f"# {title}", title):  # a heading line: dropped
        return rest
    folded = " ".join(text.split())
    for lead in (f"# {title}", title):
        after = folded[len(lead):]
        if folded.startswith(lead) and not after[:1].isalnum():
            return after.lstrip(" :—-")
    return text
