"""More shortcuts of a recall give exactly what the longer paths give (issue 12, latency):

- the recency bonus with its checks hoisted and each ``valid_from`` computed once equals
  the formula;
- documents ordered apart from turns: a list of turns only is returned as it is, and a
  document among turns still moves as :func:`reorder_places` moves it;
- a reranker's groups: one label for every hit is one group of all scored places, as
  the general split gives;
- the reranker's term matrix built as one flat list equals the row-by-row one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from octomem.engine.fusion import arm_bounds, order_documents, reorder_places, weighted_score
from octomem.engine.memory.recency import (
    MAX_WEIGHT,
    SECONDS_PER_DAY,
    bonus_of,
    recency_bonus,
)
from octomem.engine.rerank import _groups
from octomem.engine.types import Chunk, FusedHit, Hit
from octomem.plugins.conversation.features import Turn, held_terms

NOW = 1_800_000_000.0


@settings(max_examples=200, deadline=None)
@given(ages=st.lists(st.floats(-40 * SECONDS_PER_DAY, 400 * SECONDS_PER_DAY), min_size=1,
                     max_size=12),
       weight=st.floats(-0.5, 0.5), half_life=st.floats(0.01, 365.0))
def test_the_bonus_of_each_time_is_the_formula(ages: list[float], weight: float,
                                               half_life: float) -> None:
    bonus = bonus_of(NOW, weight, half_life)
    w = min(max(weight, 0.0), MAX_WEIGHT)
    for age in ages + ages:  # asked twice: the second answer is the remembered one
        valid_from = NOW - age
        expected = w * math.pow(2.0, -(max(NOW - valid_from, 0.0) / SECONDS_PER_DAY) / half_life)
        assert bonus(valid_from) == expected == recency_bonus(valid_from, NOW, weight, half_life)


def test_a_half_life_not_positive_is_refused_before_any_time() -> None:
    with pytest.raises(ValueError, match="half_life_days"):
        bonus_of(NOW, 0.01, 0.0)


def _hit(cid: int, turn: bool, kw: float, vec: float) -> FusedHit:
    meta = {"conversation": "c", "position": cid} if turn else {}
    chunk = Chunk(document_id=f"d{cid}", ordinal=0, text=f"t{cid}", id=cid, metadata=meta)
    return FusedHit(chunk, 1.0 / cid, cid, {"kw": Hit(cid, kw, cid, "kw"),
                                            "vec": Hit(cid, vec, cid, "vec")})


def test_turns_only_are_returned_as_they_are() -> None:
    hits = [_hit(i, True, 10.0 - i, 0.1 * i) for i in range(1, 8)]
    assert order_documents(hits, hits, "rrf", "weighted") is hits


def test_a_document_among_turns_still_moves_by_weighted_fusion() -> None:
    hits = [_hit(1, False, 1.0, 0.1), _hit(2, True, 5.0, 0.5), _hit(3, False, 9.0, 0.9),
            _hit(4, True, 3.0, 0.2)]
    bounds = arm_bounds(hits)
    expected = reorder_places(hits, lambda h: not h.chunk.metadata,
                              lambda h: (-weighted_score(h.contributions, bounds), h.chunk.id))
    got = order_documents(hits, hits, "rrf", "weighted")
    assert [h.chunk.id for h in got] == [h.chunk.id for h in expected] == [3, 2, 1, 4]


class _Labelled:
    name = "labelled"

    def __init__(self, labels: list[object]) -> None:
        self.labels = labels

    def groups(self, hits: list[object]) -> list[object]:
        return self.labels


def _split_by_hand(labels: list[object], scored: np.ndarray) -> list[list[int]]:
    places: dict[object, list[int]] = {}
    for i in scored.tolist():
        places.setdefault(labels[i], []).append(i)
    return list(places.values())


@settings(max_examples=200, deadline=None)
@given(labels=st.lists(st.sampled_from([("s", "a"), ("s", "b"), ("s", None)]), min_size=1,
                       max_size=30),
       data=st.data())
def test_groups_split_as_by_hand(labels: list[object], data: st.DataObject) -> None:
    if data.draw(st.booleans()):  # often: one conversation
        labels = [labels[0]] * len(labels)
    chosen = data.draw(st.lists(st.booleans(), min_size=len(labels), max_size=len(labels)))
    scored = np.flatnonzero(np.array(chosen, dtype=bool))
    got = [g.tolist() for g in _groups(_Labelled(labels).groups(list(labels)), scored)]
    expected = _split_by_hand(labels, scored)
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(terms=st.lists(st.sampled_from(["heron", "river", "stone", "lamp"]), max_size=4,
                      unique=True),
       words=st.lists(st.frozensets(st.sampled_from(["heron", "river", "stone", "moss"])),
                      max_size=12))
def test_the_term_matrix_is_the_row_by_row_one(terms: list[str],
                                               words: list[frozenset[str]]) -> None:
    rows = np.array([[t in held for t in terms] for held in words],
                    dtype=bool).reshape(len(words), len(terms))
    got = held_terms(terms, words)
    assert got.dtype == bool and got.shape == rows.shape and np.array_equal(got, rows)


@pytest.mark.parametrize("order", ["F", "C"])
def test_a_matrix_gives_each_chunks_stored_vector_in_either_layout(order: str) -> None:
    from octomem.plugins.sqlite_vec.matrix import VectorMatrix

    vectors = np.random.default_rng(3).standard_normal((40, 16)).astype(np.float32)
    matrix = VectorMatrix("t", 16)
    matrix._append(np.arange(1, 41, dtype=np.int64), vectors)
    matrix.matrix = np.asarray(matrix.matrix, order=order)
    asked = [7, 99, 1, 40, 7, 0]  # 99 and 0 have no vector: zero rows
    got = matrix.vectors(asked)
    want = np.stack([vectors[i - 1] if 1 <= i <= 40 else np.zeros(16, np.float32)
                     for i in asked])
    assert got.dtype == np.float32 and got.flags.c_contiguous and np.array_equal(got, want)


def test_the_last_logged_change_is_read_in_one_statement(tmp_path: object) -> None:
    import apsw

    from octomem.plugins.sqlite import changelog

    conn = apsw.Connection(str(tmp_path / "log.sqlite3"))  # type: ignore[operator]
    assert changelog.last_seq(conn) == 0  # no log table yet
    with conn:
        changelog.record(conn, "vec", [5, 6, 7])
    assert changelog.last_seq(conn) == 3
    conn.execute(f"ALTER TABLE {changelog.TABLE} RENAME COLUMN seq TO s")
    with pytest.raises(apsw.SQLError):  # a log that is there but unreadable is an error
        changelog.last_seq(conn)


_runs = st.lists(st.tuples(st.integers(1, 30), st.sampled_from([0.1, 0.5, 0.5, 0.9, 2.0])),
                 max_size=20)


@settings(max_examples=300, deadline=None)
@given(vec=_runs, kw=_runs, k=st.integers(1, 25), data=st.data())
def test_one_scopes_runs_merge_as_the_sorting_merge(vec: list[tuple[int, float]],
                                                   kw: list[tuple[int, float]], k: int,
                                                   data: st.DataObject) -> None:
    """Runs sorted as the merge sorts are taken as they are; any other run (shuffled,
    repeated ids) goes through the sort; either way the merged runs are the sort's."""
    from octomem.engine.memory.scoped_fusion import ScopedRuns

    def run(arm: str, scored: list[tuple[int, float]]) -> list[Hit]:
        if data.draw(st.booleans()):
            scored = sorted(scored, key=lambda t: (-t[1], t[0]))
        return [Hit(cid, s, r, arm) for r, (cid, s) in enumerate(scored, start=1)]

    class Sorting(ScopedRuns):
        def _one_scope(self, k: int) -> None:
            return None  # always the sorting merge

    runs_of = [run("vec", vec), run("kw", kw)]
    quick, slow = ScopedRuns(by_score=frozenset({"vec"})), Sorting(by_score=frozenset({"vec"}))
    for r in runs_of:
        quick.add("global", 1, r)
        slow.add("global", 1, r)
    assert quick.merged(k) == slow.merged(k)


@settings(max_examples=300, deadline=None)
@given(runs=st.lists(st.lists(st.integers(1, 12), max_size=15), max_size=4),
       weights=st.dictionaries(st.sampled_from(["a0", "a1", "a2"]),
                               st.sampled_from([0.0, -0.0, 0.5, 1.0, 2.5])),
       k=st.integers(1, 70))
def test_rrf_added_as_it_goes_equals_the_sum_over_contributions(
        runs: list[list[int]], weights: dict[str, float], k: int) -> None:
    """Scores bit for bit as ``sum(w / (k + rank))`` over each chunk's contributions (the
    first hit of each arm, in the order the runs came): repeated ids within a run too."""
    from octomem.engine.fusion import Fused, reciprocal_rank_fusion

    given_runs = [[Hit(cid, 1.0, rank, f"a{i}") for rank, cid in enumerate(ids, start=1)]
                  for i, ids in enumerate(runs)]
    reference: dict[int, Fused] = {}
    for run in given_runs:
        for hit in run:
            entry = reference.setdefault(hit.chunk_id, Fused(hit.chunk_id, 0.0, {}))
            entry.contributions.setdefault(hit.arm, hit)
    for entry in reference.values():
        entry.score = sum([weights.get(arm, 1.0) / (k + h.rank)
                           for arm, h in entry.contributions.items()])
    want = sorted(reference.values(), key=lambda f: (-f.score, f.chunk_id))
    got = reciprocal_rank_fusion(given_runs, k, weights)
    assert [(f.chunk_id, repr(f.score), f.contributions) for f in got] == [
        (f.chunk_id, repr(f.score), f.contributions) for f in want]


_turns = st.lists(st.builds(
    Turn, st.sampled_from(["c1", "c2"]), st.sampled_from(["1", "2", "3"]), st.integers(0, 40),
    st.sampled_from([None, "Ana", "ana", "Ben", ""]),
    st.sampled_from([None, "user", "assistant"]), st.integers(0, 300)), max_size=25)


@settings(max_examples=200, deadline=None)
@given(turns=_turns)
def test_turn_columns_from_kept_rows_are_the_columns_of_the_turns(turns: list[Turn]) -> None:
    """The columns the reranker builds from each chunk's kept row are the ones built
    from the turns (codes in order of first appearance, as before rows were kept)."""
    from octomem.plugins.conversation.features import KINDS, TurnColumns, turn_row

    groups: dict[tuple[str, str], int] = {}
    speakers: dict[str, int] = {}
    rows = [(groups.setdefault((t.conversation, t.session), len(groups)), t.position,
             speakers.setdefault((t.speaker or "").casefold(), len(speakers)),
             KINDS.index(t.role) if t.role in KINDS else 0, t.words) for t in turns]
    table = np.array(rows, dtype=np.int64).reshape(len(rows), 5)
    got = TurnColumns.of_rows([turn_row(t) for t in turns])
    assert got.speakers == tuple(speakers)
    for column, want in [(got.group, table[:, 0]), (got.position, table[:, 1]),
                         (got.speaker, table[:, 2]), (got.kind, table[:, 3])]:
        assert column.dtype == np.int64 and column.tolist() == want.tolist()
    assert got.length.tolist() == np.log1p(table[:, 4].astype(np.float64)).tolist()
