"""The shortcuts of a recall on one scope give exactly what the general paths give.

- fusing one scope's runs with chunk ids as they are equals fusing them renumbered (the
  general cross-scope path: RRF and weighted fusion over :meth:`ScopedRuns.merged`);
- the ``conversation`` reranker's facts kept per chunk object are the facts of that
  chunk, read again for a new object of the same id;
- cosine dedup's prefilter (one product of all rows) decides as the per-hit products.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from octomem.engine.fusion import reciprocal_rank_fusion, weighted_score_fusion
from octomem.engine.memory.scoped_fusion import ScopedRuns, competition_ranks, fuse_scopes
from octomem.engine.settings import RetrievalSettings
from octomem.engine.types import Chunk, FusedHit, Hit
from octomem.plugins.conversation import ranker as conversation
from octomem.plugins.conversation.ranker import ConversationReranker, known_of
from octomem.plugins.dedup import cosine
from octomem.plugins.dedup.cosine import CosineDedup, CosineDedupOptions

_scores = st.lists(st.tuples(st.integers(1, 40), st.sampled_from([0.1, 0.5, 0.5, 0.9, 2.0])),
                   max_size=25, unique_by=lambda t: t[0])


def _run(arm: str, scored: list[tuple[int, float]]) -> list[Hit]:
    ordered = sorted(scored, key=lambda t: (-t[1], t[0]))
    return [Hit(cid, s, r, arm) for r, (cid, s) in enumerate(ordered, start=1)]


def _renumbered(runs: list[list[Hit]], k: int) -> tuple[list[list[Hit]], list[int]]:
    """The general path by hand: each run sorted, competition ranks, ids renumbered."""
    ids: dict[int, int] = {}
    out = []
    for run in runs:
        key = (lambda h: -h.score) if run and run[0].arm == "vec" else (lambda h: h.rank)
        ranked = sorted(run, key=lambda h: (key(h), h.chunk_id))[:k]
        keys = [-h.score if h.arm == "vec" else float(r) for h, r in zip(
            ranked, competition_ranks([-h.score for h in ranked]), strict=True)]
        out.append([Hit(ids.setdefault(h.chunk_id, len(ids)), h.score, rank, h.arm)
                    for h, rank in zip(ranked, competition_ranks(keys), strict=True)])
    return out, list(ids)


@settings(max_examples=150, deadline=None)
@given(vec=_scores, kw=_scores, fusion=st.sampled_from(["rrf", "weighted"]))
def test_one_scope_fuses_as_renumbered_runs(vec: list[tuple[int, float]],
                                            kw: list[tuple[int, float]], fusion: str) -> None:
    runs = ScopedRuns(by_score=frozenset({"vec"}))
    runs.add("global", 1, _run("vec", vec))
    runs.add("global", 1, _run("kw", kw))
    retrieval = RetrievalSettings(rrf_k=2, fusion=fusion)
    got = fuse_scopes(runs, 20, retrieval)
    merged, real = _renumbered([_run("vec", vec), _run("kw", kw)], 20)
    fused = (reciprocal_rank_fusion(merged, 2) if fusion == "rrf"
             else weighted_score_fusion(merged))
    want = sorted(((-f.score, real[f.chunk_id]), f) for f in fused)
    assert [(f.key, f.score) for f in got] == [(("global", real[f.chunk_id]), f.score)
                                               for _, f in want]
    for g, (_, w) in zip(got, want, strict=True):
        assert {a: (h.chunk_id, h.score, h.rank) for a, h in g.contributions.items()} == {
            a: (real[h.chunk_id], h.score, h.rank) for a, h in w.contributions.items()}


def _turn(chunk_id: int, text: str, **metadata: object) -> Chunk:
    return Chunk("d", chunk_id, text, id=chunk_id, metadata=metadata)


def test_known_facts_follow_the_chunk_object() -> None:
    reranker = ConversationReranker()
    turn = _turn(1, "Did you see the castle?", conversation="c", session="1", position=4,
                 speaker="Ana")
    first = reranker.known(turn)
    assert first == known_of(turn) and first.asks and first.turn is not None
    assert first.turn.position == 4 and "castle" in first.words
    assert reranker.known(turn) is first  # kept for the same object
    moved = replace(turn, text="The tram.", metadata={**turn.metadata, "position": 9})
    again = reranker.known(moved)  # same id, another object: read anew
    assert again.turn is not None and again.turn.position == 9 and not again.asks
    assert reranker.known(_turn(2, "a note")).turn is None


def test_known_facts_stay_bounded(monkeypatch: object) -> None:
    monkeypatch.setattr(conversation, "KNOWN_CAPACITY", 3)  # type: ignore[attr-defined]
    reranker = ConversationReranker()
    chunks = [_turn(i, f"turn {i}", conversation="c", position=i) for i in range(5)]
    for chunk in chunks:
        reranker.known(chunk)
    assert len(reranker._known) == 3
    assert [c.id for c, _ in reranker._known.values()] == [2, 3, 4]


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31), n=st.integers(0, 40), copies=st.integers(0, 12))
def test_cosine_dedup_prefilter_decides_as_the_per_hit_product(
    seed: int, n: int, copies: int) -> None:
    """Near-copies around the threshold (cosines 0.985-0.995): the one product of all rows
    only skips pairs far below it, so kept hits and reasons equal deciding every pair."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(max(n, 1), 32)).astype(np.float32)
    rows = list(base[:n])
    for _ in range(copies if n else 0):
        src = rows[int(rng.integers(len(rows)))]
        noise = rng.normal(size=32).astype(np.float32)
        rows.append(src + noise * np.float32(rng.uniform(0.05, 0.2)) * np.linalg.norm(src) / 6)
    vectors = np.array(rows, dtype=np.float32).reshape(len(rows), 32)
    if len(vectors):
        vectors[rng.random(len(vectors)) < 0.1] = 0.0  # some chunks without a vector
    hits = [FusedHit(Chunk("d", i, f"text {i % 7 if rng.random() < 0.2 else i}", id=i + 1),
                     1.0 / (i + 1), i + 1) for i in range(len(vectors))]
    dedup = CosineDedup(CosineDedupOptions(threshold=0.99))
    fast = dedup.dedup(hits, vectors)
    slack = cosine.PREFILTER_SLACK
    cosine.PREFILTER_SLACK = 2.0  # every pair decided by the per-hit product
    try:
        exact = dedup.dedup(hits, vectors)
    finally:
        cosine.PREFILTER_SLACK = slack
    assert [(h.chunk.id, h.rank) for h in fast[0]] == [(h.chunk.id, h.rank) for h in exact[0]]
    assert fast[1] == exact[1]
