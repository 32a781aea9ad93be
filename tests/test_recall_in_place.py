"""Shortcuts of a recall that skip copies give what the copies gave (issue 12, latency):

- the rerank stage gives a recall's own hits their reranker contribution in place, a
  pipeline's frozen hits a new one, exactly what ``dataclasses.replace`` built;
- an answer whose hits are all showable keeps its hits (ranks already 1..n);
- a recall of turns alone skips its runs' statistics (documents' evidence only): the same
  relevance as with them;
- materialising zips the chunks with their entries when every one was found, and maps
  them by id when one is gone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from octomem.engine.memory import recall as recall_module
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.memory.recall import RecallRequest, ScopedHit, recall_scopes
from octomem.engine.memory.scoped_fusion import ScopedFused
from octomem.engine.memory.showable import without_unshowable
from octomem.engine.rerank import with_contributions
from octomem.engine.types import Chunk, FusedHit, Hit

CHAT = "\n".join([
    '{"session": "1", "speaker": "Ann", "text": "Where did you go hiking last weekend?", '
    '"time": "2024-05-01T10:00:00Z"}',
    '{"session": "1", "speaker": "Bo", "text": "Up the kestrel ridge trail, it was steep.", '
    '"time": "2024-05-01T10:01:00Z"}',
    '{"session": "1", "speaker": "Ann", "text": "Did you take the dog along?", '
    '"time": "2024-05-01T10:02:00Z"}',
    '{"session": "2", "speaker": "Bo", "text": "Yes, Pepper loved the ridge and the lake.", '
    '"time": "2024-05-08T09:00:00Z"}',
    '{"session": "2", "speaker": "Ann", "text": "I bought new boots for the next hike.", '
    '"time": "2024-05-08T09:01:00Z"}',
]) + "\n"


@pytest.fixture
def chat_store(tmp_path: Path) -> Iterator[Memory]:
    (tmp_path / "project").mkdir()
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    chat = tmp_path / "chat.jsonl"
    chat.write_text(CHAT, encoding="utf-8")
    memory.ingest(str(chat), scope="global")
    yield memory
    memory.close()


def _chunk(cid: int) -> Chunk:
    return Chunk(document_id=f"d{cid}", ordinal=0, text=f"text {cid}", id=cid)


def test_a_recall_hit_takes_its_contribution_in_place() -> None:
    own = {"fts5": Hit(1, 2.5, 1, "fts5")}
    hit = ScopedHit("global", _chunk(1), 0.5, 0, 0.4, 0.25, own)
    expected = replace(hit, contributions={**own, "conversation": Hit(1, 0.7, 1, "conversation")})
    got = with_contributions(hit, {**own, "conversation": Hit(1, 0.7, 1, "conversation")})
    assert got is hit and got == expected
    assert own == {"fts5": Hit(1, 2.5, 1, "fts5")}  # the fused entry's dict is not touched


def test_a_frozen_hit_gets_a_new_one() -> None:
    own = {"fts5": Hit(3, 1.5, 2, "fts5")}
    hit = FusedHit(_chunk(3), 0.25, 2, own, None)
    new = {**own, "conversation": Hit(3, -1.0, 1, "conversation")}
    got = with_contributions(hit, new)
    assert got is not hit and got == replace(hit, contributions=new)
    assert hit.contributions == own

    @dataclass(frozen=True)
    class Other:
        chunk: Chunk
        contributions: dict[str, Hit]

    other = Other(_chunk(4), own)
    moved = with_contributions(other, new)
    assert moved is not other and moved == Other(_chunk(4), new)


def test_recall_of_a_chat_matches_the_copying_stage(chat_store: Memory,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = chat_store.scopes.require("global")
    request = RecallRequest("where did Bo go hiking with the dog", 10, count=False)
    fast = recall_scopes([("global", pipeline)], request, chat_store.knobs, now=1.8e9)
    import octomem.engine.rerank as rerank_module

    monkeypatch.setattr(rerank_module, "with_contributions", lambda hit, c: replace(
        hit, contributions=c))
    slow = recall_scopes([("global", pipeline)], request, chat_store.knobs, now=1.8e9)
    assert "conversation" in fast.arms_ran
    assert len(fast.hits) >= 3
    assert [(h.chunk.id, h.score, h.rank, h.contributions, h.relevance) for h in fast.hits] == [
        (h.chunk.id, h.score, h.rank, h.contributions, h.relevance) for h in slow.hits]
    assert any("conversation" in h.contributions for h in fast.hits)


def test_turns_alone_skip_the_run_statistics(chat_store: Memory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    pipeline = chat_store.scopes.require("global")
    request = RecallRequest("did Bo take the dog up the ridge", 10, count=False)
    skipped = recall_scopes([("global", pipeline)], request, chat_store.knobs, now=1.8e9)
    calls: list[int] = []
    real = recall_module.scope_stats

    def counted(runs: object, pipelines: object, k: int | None = None,
                text: str = "") -> object:
        calls.append(1)
        return real(runs, pipelines, k, text)  # type: ignore[arg-type]

    monkeypatch.setattr(recall_module, "is_document", lambda hit: True)  # stats computed
    monkeypatch.setattr(recall_module, "scope_stats", counted)
    full = recall_scopes([("global", pipeline)], request, chat_store.knobs, now=1.8e9)
    assert calls == [1]
    assert skipped.hits and [(h.chunk.id, h.relevance) for h in skipped.hits] == [
        (h.chunk.id, h.relevance) for h in full.hits]


def test_showable_hits_are_kept_as_they_are(chat_store: Memory) -> None:
    pipeline = chat_store.scopes.require("global")
    answer = recall_scopes([("global", pipeline)],
                           RecallRequest("kestrel ridge trail", 10, count=False),
                           chat_store.knobs, now=1.8e9)
    before = list(answer.hits)
    assert [h.rank for h in before] == list(range(1, len(before) + 1))
    kept = without_unshowable(answer).hits
    assert len(kept) == len(before) and all(a is b for a, b in zip(kept, before, strict=True))


def test_materialising_maps_chunks_by_id_when_one_is_gone(chat_store: Memory) -> None:
    pipeline = chat_store.scopes.require("global")
    ids = [c.id for c in pipeline.arms.storage.iter_chunks()][:3]
    fused = [ScopedFused(("global", cid), 1.0 / (i + 1), {}) for i, cid in enumerate(ids)]
    every = recall_module._materialise(fused, {"global": pipeline}, chat_store.knobs, 1.8e9)
    gone = [*fused[:1], ScopedFused(("global", 10**7), 0.9, {}), *fused[1:]]
    some = recall_module._materialise(gone, {"global": pipeline}, chat_store.knobs, 1.8e9)
    assert [(h.chunk.id, h.score) for h in every] == [(h.chunk.id, h.score) for h in some]
    assert sorted(h.chunk.id for h in every) == sorted(ids)
