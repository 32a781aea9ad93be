"""Shortcuts of a one-scope recall give exactly what the general paths give (issue 12,
latency; each assertion compares the shortcut with the longer path it skips):

- a scope's run statistics read from its runs equal those read through ``by_arm``
  (the merged entries a one-scope fusion no longer builds);
- one scope's hit vectors, taken as the semantic arm returns them, equal the general
  path's zero-filled array filled scope by scope, bit for bit;
- the conversation reranker's facts read in one loop, and its groups, equal the facts
  read chunk by chunk.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.memory.recall import RecallRequest, ScopedHit, _vectors, recall_scopes
from octomem.engine.memory.scoped_fusion import ScopedRuns
from octomem.engine.types import Chunk, FusedHit, Hit
from octomem.plugins.conversation.ranker import ConversationReranker

_scored = st.lists(st.tuples(st.integers(1, 20), st.sampled_from([0.1, 0.5, 0.5, 2.0])),
                   max_size=12)


@settings(max_examples=200, deadline=None)
@given(runs=st.lists(st.tuples(st.sampled_from(["local", "global"]),
                               st.sampled_from(["kw", "vec"]), _scored), max_size=5))
def test_run_scores_of_a_scope_are_those_by_arm_holds(
        runs: list[tuple[str, str, list[tuple[int, float]]]]) -> None:
    scoped = ScopedRuns(by_score=frozenset({"vec"}))
    for scope, arm, scored in runs:
        scoped.add(scope, 0 if scope == "local" else 1,
                   [Hit(cid, s, r, arm) for r, (cid, s) in enumerate(scored, start=1)])
    for scope in ("local", "global"):
        for arm in ("kw", "vec", "none"):
            expected = [e[3].score for e in scoped.by_arm.get(arm, ()) if e[2] == scope]
            assert scoped.scores(scope, arm) == expected


@pytest.fixture
def stored(tmp_path: Path) -> Iterator[Memory]:
    (tmp_path / "project").mkdir()
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    for i in range(12):
        memory.remember(f"the kestrel note {i} says the deploy uses port {8000 + i}",
                        scope="global", kind="FACT")
    yield memory
    memory.close()


def test_one_scopes_vectors_are_the_general_paths(stored: Memory) -> None:
    pipeline = stored.scopes.require("global")
    answer = recall_scopes([("global", pipeline)], RecallRequest("kestrel deploy port", 10),
                           stored.knobs)
    hits = list(answer.hits)
    assert len(hits) >= 5
    ghost = ScopedHit("global", Chunk(document_id="gone", ordinal=0, text="x", id=10**6),
                      0.0, 0, 0.0)  # no vector: a zero row either way
    hits.insert(2, ghost)
    got = _vectors(hits, {"global": pipeline})
    # the general path: a second scope none of the hits is from
    general = _vectors(hits, {"global": pipeline, "local": stored.scopes.require("local", True)})
    assert got is not None and general is not None
    assert got.dtype == general.dtype == np.float32 and got.flags.c_contiguous
    assert got.tobytes() == general.tobytes()
    assert not got[2].any() and got[0].any()
    assert _vectors([], {"global": pipeline}) is None


def _turn(cid: int, conversation: str | None) -> FusedHit:
    meta = {} if conversation is None else {
        "conversation": conversation, "position": cid, "session": "1", "speaker": "Ann"}
    chunk = Chunk(document_id=f"d{cid}", ordinal=0, text=f"Ann: turn {cid} asks?", id=cid,
                  metadata=meta)
    return FusedHit(chunk, 1.0 / cid, cid, {})


def test_the_rerankers_facts_read_in_one_loop_are_those_read_one_by_one() -> None:
    hits = [_turn(i, None if i % 4 == 0 else f"c{i % 2}") for i in range(1, 12)]
    one_by_one = ConversationReranker()
    expected = [one_by_one.known(h.chunk) for h in hits]
    fresh = ConversationReranker()
    assert fresh.known_all(hits) == expected  # read now
    assert fresh.known_all(hits) == expected  # kept
    assert all(a is b for a, b in zip(fresh.known_all(hits), fresh.known_all(hits),
                                      strict=True))
    assert fresh.groups(hits) == [
        (None, None if f.turn is None else f.turn.conversation) for f in expected]
    assert {g for g in fresh.groups(hits)} == {(None, None), (None, "c0"), (None, "c1")}


def test_scores_and_groups_at_once_are_the_two_asked_apart() -> None:
    """``rerank_grouped`` returns the groups :meth:`groups` gives, or ``None`` (one group)
    exactly when every turn it scored is of one conversation in one scope; the rerank
    stage splits the hits the same either way."""
    from octomem.engine.rerank import _groups

    reranker = ConversationReranker()
    two = [_turn(i, None if i % 4 == 0 else f"c{i % 2}") for i in range(1, 12)]
    one = [_turn(i, None if i % 4 == 0 else "c0") for i in range(1, 12)]
    scoped = [ScopedHit("local" if i % 3 else "global", h.chunk, h.score, h.rank, h.score)
              for i, h in enumerate(one)]  # one conversation, two scopes: two groups
    for hits, whole in ((two, False), (one, True), (scoped, False), (one[3:4], True)):
        scores, labels = reranker.rerank_grouped("what did Ann ask", hits, None, None)
        assert (labels is None) == whole
        assert labels is None or labels == reranker.groups(hits)
        scored = np.flatnonzero(~np.isnan(scores))
        assert scored.tolist() == [i for i, h in enumerate(hits) if i % 4 != 3] or whole
        apart = [g.tolist() for g in _groups(reranker.groups(hits), scored) if len(g)]
        assert [g.tolist() for g in _groups(labels, scored) if len(g)] == apart
    no_turns = [_turn(4, None), _turn(8, None)]
    scores, labels = reranker.rerank_grouped("anything", no_turns, None, None)
    assert np.isnan(scores).all() and labels is None
