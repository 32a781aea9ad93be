"""Tool answers kept within what an MCP client receives in one message.

The ``mcp`` SDK's streamable-HTTP client refuses a server-sent event larger than 1 MiB
(its ``DEFAULT_MAX_SSE_EVENT_SIZE``), and a tool answer is sent twice in that one event:
as structured content and as the text content (:mod:`.answer_text`). A ``recall`` the
limits allow (``top_k`` up to ``limits.top_k`` = 1000, or one long chunk) could be 1.5 MB,
and the agent's call then failed with a transport error it could do nothing about. So a
recall answer is kept within :data:`MAX_ANSWER_BYTES`, measured as the SDK sends it: hits
are cut from the end and listed under ``budget.cut`` as ``max_tokens`` lists the hits it
cuts (:mod:`octomem.engine.memory.context`), with a ``warnings`` entry saying how many and
what to ask instead; when the first hit alone is over, its context turns are dropped and
its text is shortened (``budget.truncated``).
"""

from __future__ import annotations

import json

from pydantic import BaseModel

from octomem.engine.memory.context import CHARS_PER_TOKEN, estimate_tokens, truncate
from octomem.engine.memory.recall_results import MemoryHit, MemoryRecallResult
from octomem.engine.memory.turn_results import BudgetResult, CutItem

from .answer_text import answer_text

#: Largest tool answer, UTF-8 bytes of its structured content plus its text content as
#: JSON carries it: half the 1 MiB (1,048,576 bytes) the SDK's HTTP client accepts in one
#: event, leaving room for the JSON-RPC envelope and clients with a smaller limit.
MAX_ANSWER_BYTES = 512 * 1024


def answer_bytes(result: BaseModel) -> int:
    """Return the UTF-8 bytes ``result`` takes in a tool answer as it is sent: its compact
    JSON (structured content) plus its text content (:func:`.answer_text.answer_text`) as a
    JSON string."""
    structured = len(result.model_dump_json().encode())
    text = answer_text(result.model_dump(mode="json", by_alias=True))
    return structured + len(json.dumps(text, ensure_ascii=False).encode())


def hit_tokens(hit: MemoryHit) -> int:
    """Return a hit's estimated tokens as ``max_tokens`` counts them (title, tags, text and
    context turns)."""
    parts = [hit.title or "", ", ".join(hit.tags), hit.text]
    parts += [c.text for c in hit.context or ()]
    return estimate_tokens("\n".join(p for p in parts if p))


def _budget(result: MemoryRecallResult, kept: list[MemoryHit]) -> BudgetResult:
    """Return the answer's budget (a fresh one without ``max_tokens``), its tokens those of
    ``kept``, marked with the byte bound."""
    budget = (result.budget.model_copy(deep=True) if result.budget is not None
              else BudgetResult(max_tokens=None, tokens=0))
    budget.tokens = sum(hit_tokens(h) for h in kept)
    budget.max_bytes = MAX_ANSWER_BYTES
    return budget


def _cut(result: MemoryRecallResult, n: int) -> MemoryRecallResult:
    """Return ``result`` with its first ``n`` hits, the others listed in ``budget.cut`` and
    counted in ``warnings``."""
    kept, cut = result.hits[:n], result.hits[n:]
    budget = _budget(result, kept)
    budget.cut += [CutItem(id=h.id, scope=h.scope, rank=h.rank, tokens=hit_tokens(h))
                   for h in cut]
    said = (f"{len(cut)} of {len(result.hits)} hits left out (the last ones; listed in "
            f"budget.cut) to keep the answer within {MAX_ANSWER_BYTES:,} bytes, what an MCP "
            "client takes in one message: ask with max_tokens (e.g. 4000) or a smaller top_k")
    kept_ids = {h.id for h in kept}
    return result.model_copy(update={
        "hits": kept, "budget": budget, "warnings": [*result.warnings, said],
        "unembedded_hits": [i for i in result.unembedded_hits if i in kept_ids]})


def _shortened(hit: MemoryHit, over: int) -> MemoryHit:
    """Return ``hit`` without its context, its text shortened by about ``over`` bytes (the
    text is sent twice: half as many characters remove at least that many bytes)."""
    keep = max(1, len(hit.text) - over // 2 - 256)
    return hit.model_copy(update={"context": None,
                                  "text": truncate(hit.text, keep // CHARS_PER_TOKEN)})


def _shorten(result: MemoryRecallResult) -> MemoryRecallResult:
    """Shorten the one hit left (and ``best_rejected``) until ``result`` fits."""
    warned = False
    for _ in range(8):
        over = answer_bytes(result) - MAX_ANSWER_BYTES
        if over <= 0:
            break
        update: dict[str, object] = {}
        if result.hits:
            hit = result.hits[0]
            budget = _budget(result, [])
            budget.truncated = hit.id
            if hit.context:
                budget.context_dropped = [*budget.context_dropped, hit.id]
            short = _shortened(hit, over)
            budget.tokens = hit_tokens(short)
            update["hits"], update["budget"] = [short], budget
        if result.best_rejected is not None and (
                not result.hits or len(result.best_rejected.text) > len(result.hits[0].text)):
            update["best_rejected"] = _shortened(result.best_rejected, over)
        if not update:
            break
        if "hits" in update and not warned:
            warned = True
            update["warnings"] = [*result.warnings, (
                f"the first hit's text was shortened to keep the answer within "
                f"{MAX_ANSWER_BYTES:,} bytes: octomem://item/{hit.scope}:{hit.chunk_id} "
                "reads its chunk (as much of it as one message holds)")]
        result = result.model_copy(update=update)
    return result


def bounded_recall(result: MemoryRecallResult) -> MemoryRecallResult:
    """Return ``result`` within :data:`MAX_ANSWER_BYTES`: the most hits that fit, in rank
    order (a binary search over how many), the rest in ``budget.cut``; the first hit's text
    shortened when it alone is over. An answer that fits is returned as it is."""
    if answer_bytes(result) <= MAX_ANSWER_BYTES:
        return result
    low, high = min(1, len(result.hits)), len(result.hits)
    while low < high:
        middle = (low + high + 1) // 2
        if answer_bytes(_cut(result, middle)) <= MAX_ANSWER_BYTES:
            low = middle
        else:
            high = middle - 1
    out = _cut(result, low) if low < len(result.hits) else result
    return _shorten(out)
