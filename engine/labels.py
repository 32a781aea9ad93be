"""Tags in the one form octomem stores and filters them: labels.

A tag is stored stripped and in Unicode NFC (``café`` typed composed and ``cafe`` +
U+0301 sent decomposed are one tag: trial 14 F10), and holds no comma (``billing,api``
meant the two tags ``billing`` and ``api``: trial 17 G15). A filter's tags are made NFC
and a comma in one is refused, so a stored tag in another form could never be matched
(trial 20 L12). Every way in — ``add``/``remember``, ingest, ``import`` — and the stores
an older octomem wrote (:func:`relabelled` is what the ``sqlite`` storage applies to
them once) keep tags in this form.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence


def label(tag: str) -> str:
    """Return ``tag`` stripped and in Unicode NFC (no other change)."""
    return unicodedata.normalize("NFC", tag.strip())


def relabelled(tags: Sequence[str]) -> tuple[tuple[str, ...], list[str]]:
    """Return ``tags`` as labels, and what changed beyond the invisible.

    Each tag is stripped and made NFC (:func:`label`); one holding a comma is split into
    its non-empty parts; repeats are dropped, first place kept. An empty tag stays as it
    is (a stored one is kept and reported by the import, never dropped silently).

    :returns: ``(tags, notes)``: the labels in order, and one note per tag that was split
        (``"'billing,api' split into billing, api"``); NFC and stripping are not noted
        (the tag reads the same).
    """
    out: dict[str, None] = {}
    notes: list[str] = []
    for tag in tags:
        if "," not in tag:
            out[label(tag) if tag.strip() else tag] = None
            continue
        parts = [label(part) for part in tag.split(",") if part.strip()]
        out.update(dict.fromkeys(parts))
        notes.append(f"{tag!r} split into {', '.join(parts)}" if parts
                     else f"{tag!r} dropped (only commas)")
    return tuple(out), notes
