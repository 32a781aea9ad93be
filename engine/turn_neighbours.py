"""A reranker's candidates widened by the turns beside the best fused turns.

An answer often sits in the turn next to the one the arms find: a reply that names its
subject by "it" ("It's a mix of drama and romance!"), or the question a reply answers
("Is that your third one?" before "Yep! It's about loss, identity and connection").
Neither arm returns such a turn, so a reranker that scores turns by their neighbours
(the ``conversation`` reranker's window columns) never sees it. A
:class:`~octomem.engine.arms.HitReranker` that names a ``neighbour_depth(hits)`` gets
the previous and the next turn of each turn among the first that many fused hits as
extra candidates (same conversation and session, positions ±1), with no arm's score;
it scores them with the others, and only those it ranks high reach the answer.

Measured on LoCoMo's tune half (conv-26/30/41/42/43, the shipped weights, the first 10
fused hits' neighbours): R@10 0.7963 -> 0.8107, nDCG@10 0.6665 -> 0.6736
(``benchmarks/results/conversations/h21recall``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .fusion import is_turn
from .turns import CONVERSATION, POSITION, SESSION
from .types import Chunk, Filters


def neighbour_depth(reranker: Any, hits: Sequence[Any]) -> int:
    """Return how many of the first fused ``hits`` ``reranker`` wants the neighbouring
    turns of (its ``neighbour_depth(hits)``; 0 without one, or without a reranker)."""
    wants = getattr(reranker, "neighbour_depth", None)
    if reranker is None or not callable(wants) or not hits:
        return 0
    return max(0, int(wants(hits)))


def neighbour_turns(
    storage: Any, hits: Sequence[Any], depth: int, filters: Filters,
    held: Callable[[Chunk], bool],
) -> list[Chunk]:
    """Return the previous and the next turn of each turn among ``hits[:depth]`` that is
    not ``held`` already, in the hits' order (previous first), each once.

    A neighbour is the current first chunk of the turn one position before or after, in
    the same conversation and session, that passes ``filters`` (what the arms applied
    inside their searches). Read with the storage's ``turn_chunks(conversation,
    positions)`` (one query per conversation); a storage without it gives none.

    :param hits: fused hits, best first (``.chunk``).
    :param held: whether a chunk's turn is among the candidates already.
    :returns: chunks, at most ``2 * depth``.
    """
    lookup = getattr(storage, "turn_chunks", None)
    if depth < 1 or not callable(lookup):
        return []
    wanted: dict[str, list[tuple[Chunk, int]]] = {}
    for hit in hits[:depth]:
        chunk = hit.chunk
        position = chunk.metadata.get(POSITION)
        if not is_turn(chunk) or not isinstance(position, int) or isinstance(position, bool):
            continue
        places = wanted.setdefault(str(chunk.metadata[CONVERSATION]), [])
        places += [(chunk, position - 1), (chunk, position + 1)]
    out: list[Chunk] = []
    seen: set[str] = set()
    for conversation, places in wanted.items():
        found: dict[int, Chunk] = {}
        for c in lookup(conversation, sorted({p for _, p in places if p >= 0})):
            pos = c.metadata.get(POSITION)
            if filters.matches(c) and (pos not in found or c.ordinal < found[pos].ordinal):
                found[pos] = c
        for beside, position in places:
            c = found.get(position)
            if c is None or c.document_id in seen or c.document_id == beside.document_id \
                    or c.metadata.get(SESSION) != beside.metadata.get(SESSION) or held(c):
                continue
            seen.add(c.document_id)
            out.append(c)
    # the same chunk objects as every other read (a storage's chunk cache): a reranker
    # keeps what it derived from each chunk by object, so a neighbour met before costs
    # nothing again (conv-26's recalls, CPU p50 over neighbours off: x1.11 with the rows
    # read here, x1.07 with the cached objects; load 12-15)
    cached = storage.get_chunks([c.id for c in out]) if out else []
    return cached if len(cached) == len(out) else out
