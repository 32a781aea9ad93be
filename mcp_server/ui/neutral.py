"""Stored text on the view's pages: control and invisible characters shown as escapes.

Every ``{{ expression }}`` of every template passes through :func:`finalize` (the Jinja
environment's ``finalize``, before autoescaping), so stored text (a statement, a title, a
tag, a speaker, a transcript's name, the rendered Markdown of the memory page) shows a
right-to-left override as ``\\u202e``, ESC as ``\\x1b``, a zero-width space as ``\\u200b``
(:func:`octomem.engine.controls.visible`, as the CLI and the Markdown resources show
them): a statement cannot reorder what the page shows (``invoice<U+202E>fdp.exe`` read
as ``invoiceexe.pdf``) nor hide words. Newlines, tabs, ZWNJ and ZWJ are kept.

What a form sends back must be the stored text exactly (a hidden id, the search box's
own query, the replace form's text to edit, the Markdown the copy button copies): those
expressions use the ``exact`` filter (:func:`exact`), which escapes HTML only.
"""

from __future__ import annotations

from typing import Any

from markupsafe import Markup, escape

from octomem.engine.controls import visible


class Exact(Markup):
    """HTML-escaped text that :func:`finalize` leaves as it is."""

    __slots__ = ()


def exact(value: Any) -> Exact:
    """Return ``value`` HTML-escaped, its control characters kept (filter ``exact``)."""
    return Exact(escape(value))


def finalize(value: Any) -> Any:
    """Return ``value`` as a page shows it: strings (markup too: control characters are
    never HTML syntax) with control and invisible characters escaped; an :class:`Exact`
    value, and anything that is not text, unchanged."""
    if isinstance(value, Exact) or not isinstance(value, str):
        return value
    shown = visible(value)
    return Markup(shown) if isinstance(value, Markup) else shown
