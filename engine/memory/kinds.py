"""Statement kinds: an open set, with a few kinds octomem itself gives a meaning.

A kind is any word, stored in capitals (:func:`.remember.check_kind`): agents and people pick their
own (``docs/mcp.md``: "FACT, PREFERENCE, DECISION, RULE, TODO, …"), so an unknown kind is
never refused. A typo (``PREFERNCE``) would still quietly make a kind of its own, which
session start, ``--kind`` filters and the Markdown export then treat apart; so a kind that
is neither built in (:data:`BUILT_IN_KINDS`) nor held by any current document of either
scope is worth a warning, with the closest known kind when there is one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from ..arms import VersionedStorage
from ..turns import TURN_KIND
from ..types import DEFAULT_KIND, HANDOFF_KIND
from .facade import Memory
from .ingest import DOC_KIND
from .session_start import STANDING_KINDS

#: Kinds octomem names itself: the default statement kind, the standing kinds session
#: start lists first, the handoff, the kinds the docs suggest to agents (``FACT``,
#: ``DECISION``, ``TODO``; docs/mcp.md, the ``remember`` tool), and what ``ingest`` stores
#: (files ``DOC``, conversation turns ``TURN``).
BUILT_IN_KINDS: tuple[str, ...] = (
    DEFAULT_KIND, "FACT", *STANDING_KINDS, "DECISION", "TODO", HANDOFF_KIND, DOC_KIND,
    TURN_KIND)
#: Similarity (difflib's ratio, 0..1) from which a known kind is offered as the one meant.
CLOSE_KIND_RATIO = 0.75


def stored_kinds(memory: Memory) -> set[str]:
    """Return the kinds of the current documents in every scope that exists."""
    found: set[str] = set()
    for _, pipeline in memory.scopes.existing():
        storage = pipeline.arms.storage
        counts = getattr(storage, "kind_counts", None)
        if callable(counts):
            found.update(counts())
        elif isinstance(storage, VersionedStorage):
            found.update(d.kind for d in storage.iter_documents())
    return found


def unfamiliar_kind(kind: str, known: Iterable[str]) -> str | None:
    """Return a one-line warning when ``kind`` is neither built in nor in ``known``
    (the stored kinds), naming the closest known kind if one is close; else ``None``.
    ``kind`` is compared in capitals, as it is stored."""
    kind = kind.upper()
    every = set(BUILT_IN_KINDS) | set(known)
    if kind in every:
        return None
    close = difflib.get_close_matches(kind, sorted(every), n=1, cutoff=CLOSE_KIND_RATIO)
    hint = f"; did you mean {close[0]}?" if close else ""
    return (f"kind {kind} is new: no stored statement has it and it is not a built-in kind "
            f"({', '.join(BUILT_IN_KINDS)}){hint}")
