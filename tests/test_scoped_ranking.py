"""Ranking across the two scopes compares like with like: a keyword hit of a small local
scope that shares one common word with the query is not ranked level with the global
scope's real answer (each scope's keyword run keeps its order; between scopes the hit
holding more of the query's words goes first), and one scope alone ranks as before."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.memory.scoped_fusion import ScopedRuns, fuse_scopes
from octomem.engine.settings import RetrievalSettings
from octomem.engine.types import Hit

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "kestrel"


def _run(arm: str, *ids: int) -> list[Hit]:
    return [Hit(cid, 10.0 - rank, rank, arm) for rank, cid in enumerate(ids, start=1)]


def _covered(table: dict[tuple[str, int], float]):  # type: ignore[no-untyped-def]
    def lexical(scope: str, ids: Sequence[int]) -> list[float]:
        return [table[(scope, i)] for i in ids]
    return lexical


def test_keyword_runs_of_two_scopes_merge_by_the_query_words_their_hits_hold() -> None:
    cover = {("local", 1): 1 / 3, ("global", 7): 2 / 3, ("global", 8): 2 / 3,
             ("global", 9): 1 / 3, ("global", 4): 0.0}
    runs = ScopedRuns(by_score=frozenset({"sqlite-vec"}), lexical=_covered(cover))
    runs.add("local", 0, _run("fts5", 1))
    runs.add("global", 1, _run("fts5", 7, 8, 9, 4))
    (merged,) = runs.merged(10)
    assert [(runs.keys[h.chunk_id], h.rank) for h in merged] == [
        (("global", 7), 1), (("global", 8), 2), (("local", 1), 3), (("global", 9), 4),
        (("global", 4), 5)]  # equal coverage: the better rank in its own scope first
    fused = fuse_scopes(runs, 10, RetrievalSettings(rrf_k=2))  # RRF reads the same merge
    assert {f.key: f.contributions["fts5"].rank for f in fused} == {
        ("global", 7): 1, ("global", 8): 2, ("local", 1): 3, ("global", 9): 4,
        ("global", 4): 5}
    assert [f.key for f in fused][:3] == [("global", 7), ("global", 8), ("local", 1)]
    by_rank = ScopedRuns(by_score=frozenset({"sqlite-vec"}))  # no lexical: ranks alone
    by_rank.add("local", 0, _run("fts5", 1))
    by_rank.add("global", 1, _run("fts5", 7, 8))
    (merged,) = by_rank.merged(10)
    assert [(by_rank.keys[h.chunk_id], h.rank) for h in merged] == [
        (("local", 1), 1), (("global", 7), 1), (("global", 8), 3)]


def test_one_scope_alone_ranks_as_before() -> None:
    asked: list[str] = []

    def lexical(scope: str, ids: Sequence[int]) -> list[float]:
        asked.append(scope)
        return [1.0] * len(ids)

    runs = ScopedRuns(by_score=frozenset(), lexical=lexical)
    runs.add("global", 1, [Hit(3, 2.0, 1, "fts5"), Hit(5, 2.0, 2, "fts5"),
                           Hit(2, 1.0, 3, "fts5")])
    (merged,) = runs.merged(10)
    assert [(runs.key_of(h.chunk_id)[1], h.rank) for h in merged] == [(3, 1), (5, 1), (2, 3)]
    assert asked == []  # nothing to decide between scopes: no chunk is read


@pytest.mark.slow
def test_an_unrelated_local_note_does_not_outrank_the_global_answer(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    octomem(tmp_path, "--data-dir", data, "ingest", "--scope", "global", str(EXAMPLES),
            hashing=False)
    octomem(tmp_path, "--data-dir", data, "add",
            "The spare parts for the kitchen order arrive on Monday.", hashing=False)
    answer = octomem(tmp_path, "--data-dir", data, "--set", "retrieval.relevance_floor=0",
                     "search", "how big are the upload parts?", "-k", "10", "--json",
                     hashing=False).json()
    assert set(answer["scopes"]) == {"local", "global"}
    hits = answer["hits"]
    assert hits[0]["title"] == "Decision: uploads are sent in 8 MiB parts and resume"
    texts = [h["text"] for h in hits]
    answer_turn = next(i for i, t in enumerate(texts) if "OK: 8 MiB parts" in t)
    note = next((i for i, h in enumerate(hits) if h["scope"] == "local"), len(hits))
    assert note > answer_turn  # the kitchen note ranks below the turn that answers
    if note < len(hits):  # its keyword rank is no longer level with the global best
        assert hits[note]["arms"]["fts5"]["rank"] > 1
