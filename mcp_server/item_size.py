"""``octomem://item/{id}`` kept within what an MCP client receives in one message.

An item carries the document's whole text and every chunk of every revision, so a
1.5 MB ingested note read as a resource was 3 MB of JSON, and the SDK's streamable-HTTP
client refused it (``Server-sent event exceeded the 1048576 byte limit``). Like a recall
answer (:mod:`.answer_size`), an item is kept within
:data:`~.answer_size.MAX_ANSWER_BYTES`, measured as it is sent (its JSON text inside the
JSON-RPC message). When it is over, in this order until it fits:

1. each chunk's text is cut to :data:`CHUNK_PREVIEW` characters (the chunk asked for with
   ``scope:chunk_id`` is kept whole);
2. the document's text is cut: to the longest start that fits, or, when one chunk was
   asked for, to :data:`TEXT_PREVIEW` characters (the chunk is what was asked);
3. chunks are left out from the end of the list;
4. the chunk asked for is cut (a chunk stored before chunks were bounded in characters).

What was cut is said in ``cut`` (counts and a ``message``), with how to read the rest:
``octomem://item/<scope>:<chunk_id>`` for each chunk listed, in ``ordinal`` order.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from pydantic import BaseModel, Field

from octomem.engine.memory.results import ChunkItem, ItemResult

from .answer_size import MAX_ANSWER_BYTES

#: Characters of each chunk's text kept when chunk texts are cut: enough to tell the
#: chunks apart (a heading, a first sentence), about 20 tokens.
CHUNK_PREVIEW = 80
#: Characters of the document's text kept when one of its chunks was asked for (the
#: Markdown resource's snippet length, :data:`~octomem.engine.memory.markdown.SNIPPET`).
TEXT_PREVIEW = 600


class ItemCut(BaseModel):
    """What was left out of an item to keep it within the bound, and how to read it."""

    max_bytes: int = Field(description="the bound, UTF-8 bytes of the item as sent")
    text_chars: int = Field(description="characters of the whole text")
    text_shown: int = Field(description="characters of the text shown (its start)")
    chunk_texts_cut: int = Field(0, description=f"chunks whose text is cut to "
                                 f"{CHUNK_PREVIEW} characters")
    chunks_left_out: int = Field(0, description="chunks not listed (the last ones)")
    chunk_cut: bool = Field(False, description="the chunk asked for is cut too")
    message: str


class BoundedItem(ItemResult):
    """An item as the resource sends it: ``cut`` says what was left out, if anything."""

    cut: ItemCut | None = None


def item_bytes(result: ItemResult) -> int:
    """Return the UTF-8 bytes ``result`` takes as the resource's text inside a JSON-RPC
    message: its JSON with 2-space indents, as a JSON string."""
    text = result.model_dump_json(indent=2, exclude_none=True)
    return len(json.dumps(text, ensure_ascii=False).encode())


def _longest(fits: Callable[[int], bool], high: int) -> int:
    """Return the largest ``n`` in ``0..high`` for which ``fits(n)`` holds (``fits`` is
    monotone: true up to some ``n``), or -1 when not even ``fits(0)`` does."""
    if not fits(0):
        return -1
    low = 0
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low


def _preview(chunk: ChunkItem) -> ChunkItem:
    if len(chunk.text) <= CHUNK_PREVIEW:
        return chunk
    return chunk.model_copy(update={"text": chunk.text[:CHUNK_PREVIEW]})


def bounded_item(result: ItemResult, max_bytes: int = MAX_ANSWER_BYTES) -> ItemResult:
    """Return ``result`` as it is when it fits in ``max_bytes``, else a :class:`BoundedItem`
    cut as the module docstring says, with ``cut`` saying what was left out.

    :param max_bytes: the bound, UTF-8 bytes as sent (:func:`item_bytes`).
    """
    if item_bytes(result) <= max_bytes:
        return result
    base = BoundedItem(**result.model_dump())
    previews = [_preview(c) for c in result.chunks]
    asked = result.chunk
    text_limit = TEXT_PREVIEW if asked is not None else len(result.text)

    def shaped(text: int, listed: int = len(previews), chunk: int | None = None) -> BoundedItem:
        cut_chunk = asked if asked is None or chunk is None else \
            asked.model_copy(update={"text": asked.text[:chunk]})
        return base.model_copy(update={"text": result.text[:text], "chunks": previews[:listed],
                                       "chunk": cut_chunk})

    def fits(item: BoundedItem) -> bool:
        return item_bytes(item) + _CUT_ROOM <= max_bytes

    text = _longest(lambda n: fits(shaped(n)), min(text_limit, len(result.text)))
    listed, chunk = len(previews), None
    if text < 0:
        text = 0
        listed = max(0, _longest(lambda n: fits(shaped(0, n)), len(previews)))
        if listed == 0 and not fits(shaped(0, 0)) and asked is not None:
            chunk = max(0, _longest(lambda n: fits(shaped(0, 0, n)), len(asked.text)))
    cut = ItemCut(max_bytes=max_bytes, text_chars=len(result.text), text_shown=text,
                  chunk_texts_cut=sum(p is not c for p, c in zip(previews, result.chunks,
                                                                 strict=True)),
                  chunks_left_out=len(previews) - listed, chunk_cut=chunk is not None,
                  message="")
    cut.message = _message(result, cut)
    return shaped(text, listed, chunk).model_copy(update={"cut": cut})


#: Bytes kept free for ``cut`` (its counts and message, under 800) while the rest is
#: fitted: it is written last.
_CUT_ROOM = 1024


def _message(result: ItemResult, cut: ItemCut) -> str:
    """Say what was cut from ``result`` and how to read the rest."""
    said = [f"its text is cut after {cut.text_shown:,} of {cut.text_chars:,} characters"
            if cut.text_shown < cut.text_chars else ""]
    if cut.chunk_texts_cut:
        said.append(f"{cut.chunk_texts_cut:,} of its {len(result.chunks):,} chunks are shown "
                    f"by their first {CHUNK_PREVIEW} characters")
    if cut.chunks_left_out:
        said.append(f"the last {cut.chunks_left_out:,} chunks are not listed")
    if cut.chunk_cut:
        said.append("the chunk asked for is cut too")
    where = (f"read the rest one chunk at a time: octomem://item/{result.scope}:<chunk_id> "
             "for each chunk listed under chunks, in ordinal order (the current ones have no "
             "valid_to)")
    if result.chunk is not None:
        where = ("the chunk asked for is under chunk; " + where) if not cut.chunk_cut else \
            "this chunk is longer than one message holds: `octomem export` writes it whole"
    return (f"this item is more than the {cut.max_bytes:,} bytes an MCP client takes in one "
            f"message, so {'; '.join(p for p in said if p)}: {where}")
