"""The text an agent's model reads from a tool answer: compact JSON of what it can use.

A tool answer carries its result twice: as structured content (the whole object, for
clients and programs that read it) and as text content, which clients such as Claude Code
put into the model's context. The SDK fills the text with the result's JSON indented by 2,
every null field, timings and bookkeeping included: a 2-hit recall was ~2,800 characters
(~700 tokens) for ~250 characters of memory (trial 17 G19). So the text is the same
object, compact (no indentation), without fields that are null, empty, or at their usual
value (``current: true``, ``semantic_available: true``), and without what only a program
needs (:data:`BOOKKEEPING`, :data:`HIT_BOOKKEEPING`); a turn's hit without its ``uri`` (the
transcript's path, the same for every turn of it: its ``turn`` says where it sits) and
what its ``turn`` repeats. The structured content is unchanged and complete.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

#: Fields left out of a recall answer's text: what a program, not the model, reads.
BOOKKEEPING = frozenset({"timings_ms", "arms_ran", "scopes"})
#: Hit fields left out of the text: scores behind ``relevance``, storage ids, recording
#: time (``event_time`` says when it happened).
HIT_BOOKKEEPING = frozenset({"chunk_id", "score", "fused_score", "recency_bonus",
                             "created_at"})
#: Fields left out of the text when they have this value.
USUAL = {"current": True, "semantic_available": True, "weak_left_out": 0,
         "chunks_without_vector": 0}


def _pruned(value: Any, drop: frozenset[str] = frozenset()) -> Any:
    """Return ``value`` (JSON data) without null and empty fields, :data:`USUAL` values and
    the keys in ``drop``; lists keep their order and every item."""
    if isinstance(value, list):
        return [_pruned(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key in drop or item is None or item == [] or item == {} \
                or (key in USUAL and item == USUAL[key]):
            continue
        out[key] = _pruned(item)
    return out


def _hit(hit: dict[str, Any]) -> dict[str, Any]:
    """A hit's text form: without :data:`HIT_BOOKKEEPING`; a turn's also without its
    ``uri`` and, in its ``turn``, without what repeats a value beside it (``session`` the
    same as ``conversation``, ``role`` as ``speaker``, ``time`` as the hit's
    ``event_time``)."""
    turn = hit.get("turn")
    if not turn:
        return _pruned(hit, HIT_BOOKKEEPING)
    out = _pruned(hit, HIT_BOOKKEEPING | {"uri"})
    repeats = {"session": turn.get("conversation"), "role": turn.get("speaker"),
               "time": hit.get("event_time")}
    out["turn"] = {k: v for k, v in out["turn"].items() if repeats.get(k, object()) != v}
    return out


def answer_text(data: dict[str, Any]) -> str:
    """Return the text content for a tool answer's JSON data (``model_dump(mode="json")``):
    compact JSON as the module docstring says; a recall answer (one with ``hits``) also
    without :data:`BOOKKEEPING`, its hits (``hits``, ``best_rejected``) without
    :data:`HIT_BOOKKEEPING`; other answers without ``timings_ms``."""
    if "hits" not in data:
        return json.dumps(_pruned(data, frozenset({"timings_ms"})), ensure_ascii=False,
                          separators=(",", ":"))
    out = _pruned(data, BOOKKEEPING)
    if "hits" in out:
        out["hits"] = [_hit(h) for h in data["hits"]]
    if out.get("best_rejected"):
        out["best_rejected"] = _hit(data["best_rejected"])
    return json.dumps(out, ensure_ascii=False, separators=(",", ":"))


def tool_answer(result: BaseModel) -> CallToolResult:
    """Return ``result`` as a tool answer: its JSON as structured content (whole, as the SDK
    would send it) and :func:`answer_text` as the text content."""
    data = result.model_dump(mode="json", by_alias=True)
    return CallToolResult(content=[TextContent(type="text", text=answer_text(data))],
                          structured_content=data)
