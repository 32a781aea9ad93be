"""``octomem config KEY``: one setting (or one section, ``retrieval``) instead of all ~160.

A key names a setting as ``config`` prints it (``retrieval.top_k``, an arm's option
``arms.fastembed.threads``) or a section holding several (``retrieval``, ``arms.fts5``);
an unknown key is a one-line error naming the closest key there is.
"""

from __future__ import annotations

import difflib
from typing import Any

from ..errors import OctomemError

#: Similarity (difflib's ratio, 0..1) from which a key is offered as the one meant.
CLOSE_KEY_RATIO = 0.6


def chosen_rows(rows: list[tuple[str, Any]], key: str | None) -> list[tuple[str, Any]]:
    """Return the rows of ``key``: the setting itself, or every setting under the section
    ``key``; all rows when ``key`` is ``None``.

    :param rows: ``(dotted key, value)`` of every effective setting, in ``config``'s order.
    :raises OctomemError: no setting is or lies under ``key``, naming the closest key.
    """
    if key is None:
        return rows
    wanted = key.strip().strip(".")
    found = [(k, v) for k, v in rows if k == wanted or k.startswith(wanted + ".")]
    if found:
        return found
    keys = [k for k, _ in rows]
    sections = sorted({k.rsplit(".", i)[0] for k in keys for i in (1, 2) if "." in k})
    close = difflib.get_close_matches(wanted, keys + sections, n=1, cutoff=CLOSE_KEY_RATIO)
    hint = f"; did you mean {close[0]!r}?" if close else "; `octomem config` lists them all"
    raise OctomemError(f"unknown setting {wanted!r}{hint}")
