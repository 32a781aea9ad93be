"""Which records of a Claude Code session are the conversation it ended on.

Claude Code records form a tree: each record names the one before it in ``parentUuid``.
When the user rewinds (Esc Esc) and edits an earlier message, the edited message is a
new child of the same parent and the abandoned branch stays in the file, before it
(trial 18 H11: the answer the user rewound to get rid of was stored as current, and
ranked above the one kept). The conversation the session ended on is the chain from its
last user or assistant record back to the root, as Claude Code's own resume reads it.

What is left out is only what is provably abandoned: the records under a child of a
record on that chain when the child is not on the chain and is itself a user message or
an assistant reply with text (a rewound prompt, or the reply to it). Everything else is
kept in file order: forks Claude Code makes itself (parallel tool results, progress
records: no text of their own), records in no tree the chain reaches (an earlier part of
a resumed or compacted session whose link is missing), and every record of a file
without ``uuid``/``parentUuid``. A compaction boundary's ``logicalParentUuid`` is
followed where its ``parentUuid`` is empty.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Row = dict[str, Any]


def _parent(row: Row) -> str | None:
    """Return the uuid of the record ``row`` follows, if it names one."""
    for key in ("parentUuid", "logicalParentUuid"):
        value = row.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _live_chain(rows: list[Row], by_uuid: dict[str, Row]) -> set[str]:
    """Return the uuids on the chain from the last non-sidechain user or assistant record
    back to its root (empty when no such record has a uuid)."""
    leaf = next((row for row in reversed(rows) if row.get("type") in ("user", "assistant")
                 and not row.get("isSidechain") and isinstance(row.get("uuid"), str)), None)
    chain: set[str] = set()
    while leaf is not None and leaf["uuid"] not in chain:
        chain.add(leaf["uuid"])
        parent = _parent(leaf)
        leaf = by_uuid.get(parent) if parent else None
    return chain


def abandoned_records(rows: list[Row], speaks: Callable[[Row], bool]) -> set[int]:
    """Return the indexes in ``rows`` (one session's records, in file order) of the
    records on branches the user rewound away from (module docstring).

    :param speaks: whether a record is a user message or an assistant reply whose text
        is kept; only a branch starting with such a record is left out.
    """
    by_uuid = {row["uuid"]: row for row in rows if isinstance(row.get("uuid"), str)}
    chain = _live_chain(rows, by_uuid)
    if not chain:
        return set()
    verdict: dict[str, bool] = dict.fromkeys(chain, False)  # uuid -> abandoned
    for row in rows:
        path: list[Row] = []  # from ``row`` up to a record judged before, or to a root
        walked: set[str] = set()
        node: Row | None = row
        while node is not None and isinstance(node.get("uuid"), str) \
                and node["uuid"] not in verdict and node["uuid"] not in walked:
            path.append(node)
            walked.add(node["uuid"])
            parent = _parent(node)
            node = by_uuid.get(parent) if parent else None
        above = verdict.get(node["uuid"]) if node is not None \
            and isinstance(node.get("uuid"), str) else None  # None: a loop, or no tree
        for step in reversed(path):  # judged downwards; None: in no tree the chain reaches
            if above is not None:
                above = above or (_parent(step) in chain and speaks(step))
            verdict[step["uuid"]] = bool(above)
    return {i for i, row in enumerate(rows)
            if isinstance(row.get("uuid"), str) and verdict.get(row["uuid"], False)}
