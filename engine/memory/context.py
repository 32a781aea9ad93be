"""Answers sized for an agent: neighbouring turns as context, and a token budget.

``recall(..., context=N)`` gives each conversation hit the ``N`` turns before and after
it in its conversation, so the agent reads an answer where it was said (a reply that
says "yes, the 9:09" needs the question before it). ``recall(..., max_tokens=N)`` keeps
the best hits whose text fits in ``N`` tokens together (each hit's title, tags and text,
and its context turns), and lists the hits it cut. The budget goes first to the hits that
answer (relevance at or above ``retrieval.relevance_floor``), in rank order, then to
the hits below the floor, in rank order, with what is left: a ``low`` hit never takes
the room of one that answers. The kept hits stay in rank order. The first hit that
answers is always kept: when it alone is over the budget its text is shortened to fit,
and the answer says so (its title and tags are kept whole: a store written before the
``limits.tags``/``limits.tag_chars`` limits may hold a hit whose tags alone are over).

Tokens are estimated, not counted with a model's tokenizer: ``ceil(characters / 4)``
(:data:`CHARS_PER_TOKEN`), the usual rule of thumb for English text under the BPE
tokenizers agents' models use; the answer's JSON field names are not counted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import InvalidQueryError
from ..turns import CONVERSATION, POSITION
from ..types import Chunk, Filters
from .recall import RecallAnswer, ScopedHit, is_answer
from .scoped_fusion import Key

#: Characters per token of the estimate (OpenAI's tokenizer guide: "one token generally
#: corresponds to ~4 characters of text for common English text").
CHARS_PER_TOKEN = 4
#: Most turns of context a recall may ask for on each side of a hit.
MAX_CONTEXT = 5
#: Smallest ``max_tokens`` a recall may ask for (a title and a sentence).
MIN_TOKENS = 16


def check_shape(context: int, max_tokens: int | None) -> None:
    """Check ``context`` and ``max_tokens`` of a recall.

    :raises InvalidQueryError: naming the argument out of range.
    """
    if not isinstance(context, int) or not 0 <= context <= MAX_CONTEXT:
        raise InvalidQueryError(f"context: must be 0 to {MAX_CONTEXT} turns, got {context!r}")
    if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < MIN_TOKENS):
        raise InvalidQueryError(f"max_tokens: must be at least {MIN_TOKENS}, got {max_tokens!r}")


def estimate_tokens(text: str) -> int:
    """Return ``ceil(len(text) / CHARS_PER_TOKEN)``: the token estimate of a text."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True, slots=True)
class ContextTurn:
    """A turn next to a hit in its conversation.

    :param offset: its position minus the hit's (``-1``: the turn just before).
    """

    chunk: Chunk
    offset: int


@dataclass(frozen=True, slots=True)
class Cut:
    """A hit left out of an answer to keep within its token budget.

    :param rank: its rank before the cut (1-based).
    :param tokens: its estimated size in tokens, context included.
    """

    scope: str
    chunk: Chunk
    rank: int
    tokens: int


@dataclass(slots=True)
class Budget:
    """What packing into ``max_tokens`` kept and cut.

    :param used: estimated tokens of the kept hits, context included.
    :param truncated: document id of the hit whose text was shortened to fit (only ever
        the first hit, when it alone is over the budget), or ``None``.
    :param context_dropped: document ids of kept hits whose context turns were left out
        to fit, in rank order.
    """

    max_tokens: int
    used: int = 0
    cut: list[Cut] = field(default_factory=list)
    truncated: str | None = None
    context_dropped: list[str] = field(default_factory=list)


@dataclass(slots=True)
class ShapedAnswer(RecallAnswer):
    """A recall answer with each hit's context turns and what its token budget cut.

    :param context: ``(scope, chunk id)`` of a hit -> its neighbouring turns, in order.
    :param budget: what ``max_tokens`` kept and cut, or ``None`` without a budget.
    """

    context: dict[Key, list[ContextTurn]] = field(default_factory=dict)
    budget: Budget | None = None


def turn_place(chunk: Chunk) -> tuple[str, int] | None:
    """Return ``(conversation, position)`` of a turn's chunk, or ``None`` for other chunks."""
    meta = chunk.metadata
    conversation, position = meta.get(CONVERSATION), meta.get(POSITION)
    if conversation is None or not isinstance(position, int) or isinstance(position, bool):
        return None
    return str(conversation), position


def neighbour_turns(storage: Any, chunk: Chunk, n: int) -> list[ContextTurn]:
    """Return the current turns within ``n`` positions of ``chunk``'s turn, in order.

    Uses the storage's ``turn_chunks(conversation, positions)`` when it has one (the
    ``sqlite`` storage answers from an index), else scans the conversation's chunks.
    A turn split into several chunks is given by its first current chunk.
    """
    place = turn_place(chunk)
    if place is None or n < 1:
        return []
    conversation, position = place
    wanted = [p for p in range(position - n, position + n + 1) if p >= 0 and p != position]
    lookup = getattr(storage, "turn_chunks", None)
    if callable(lookup):
        found = list(lookup(conversation, wanted))
    else:
        found = list(storage.iter_chunks(Filters(metadata={CONVERSATION: conversation})))
    best: dict[int, Chunk] = {}
    for c in found:
        pos = c.metadata.get(POSITION)
        if c.valid_to is None and pos in wanted and c.document_id != chunk.document_id \
                and (pos not in best or c.ordinal < best[pos].ordinal):
            best[pos] = c
    return [ContextTurn(best[p], p - position) for p in sorted(best)]


def reading(chunk: Chunk, context: Sequence[ContextTurn] = ()) -> str:
    """Return what an agent reads of a hit: its title, tags and text, and its context
    turns'."""
    parts = []
    for c in [*(t.chunk for t in context if t.offset < 0), chunk,
              *(t.chunk for t in context if t.offset > 0)]:
        parts += [c.title or "", ", ".join(c.tags), c.text]
    return "\n".join(p for p in parts if p)


def truncate(text: str, tokens: int) -> str:
    """Return ``text`` cut at a word to at most ``tokens`` estimated tokens, "…" added."""
    limit = max(1, tokens * CHARS_PER_TOKEN - 1)
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0] or text[:limit]
    return cut.rstrip() + "…"


def pack(hits: list[ScopedHit], context: dict[Key, list[ContextTurn]],
         max_tokens: int) -> tuple[list[ScopedHit], Budget]:
    """Keep the hits that fit in ``max_tokens`` with their context: those that answer
    (:func:`~.recall.is_answer`) first, in rank order, then the others in rank order.

    A hit that does not fit with its context is tried without it; one that does not fit
    at all is cut, and later (shorter) hits may still fit. The first hit packed is always
    kept, shortened to the budget when it alone is over it (its context dropped).

    :returns: the kept hits in rank order, re-ranked from 1, and what was used and cut
        (in rank order).
    """
    budget = Budget(max_tokens)
    kept: list[ScopedHit] = []
    for hit in [h for h in hits if is_answer(h)] + [h for h in hits if not is_answer(h)]:
        key = (hit.scope, hit.chunk.id)
        around = context.get(key, [])
        full, bare = estimate_tokens(reading(hit.chunk, around)), estimate_tokens(
            reading(hit.chunk))
        if budget.used + full <= max_tokens:
            budget.used += full
        elif budget.used + bare <= max_tokens:
            budget.context_dropped += [hit.chunk.document_id] if context.pop(key, None) else []
            budget.used += bare
        elif not kept:
            budget.context_dropped += [hit.chunk.document_id] if context.pop(key, None) else []
            title = estimate_tokens(reading(replace(hit.chunk, text=""))) + 1
            text = truncate(hit.chunk.text, max(1, max_tokens - title))
            hit = replace(hit, chunk=replace(hit.chunk, text=text))
            budget.used += estimate_tokens(reading(hit.chunk))
            budget.truncated = hit.chunk.document_id
        else:
            context.pop(key, None)
            budget.cut.append(Cut(hit.scope, hit.chunk, hit.rank, full))
            continue
        kept.append(hit)
    kept.sort(key=lambda h: h.rank)  # the rank the answer gave, before packing
    budget.cut.sort(key=lambda c: c.rank)
    order = {h.chunk.document_id: h.rank for h in kept}
    budget.context_dropped.sort(key=order.__getitem__)
    for rank, hit in enumerate(kept, start=1):
        hit.rank = rank
    return kept, budget


def shape(answer: RecallAnswer, storages: dict[str, Any], context: int = 0,
          max_tokens: int | None = None) -> ShapedAnswer:
    """Add each conversation hit's ``context`` turns on each side, then pack the hits into
    ``max_tokens`` (``None``: no budget).

    :param storages: scope -> its storage (to read the neighbouring turns).
    """
    shaped = ShapedAnswer(**{f.name: getattr(answer, f.name) for f in fields(RecallAnswer)})
    if context > 0:
        for hit in shaped.hits:
            turns = neighbour_turns(storages[hit.scope], hit.chunk, context)
            if turns:
                shaped.context[(hit.scope, hit.chunk.id)] = turns
    if max_tokens is not None:
        shaped.hits, shaped.budget = pack(shaped.hits, shaped.context, max_tokens)
    return shaped
