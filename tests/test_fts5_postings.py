"""The ``fts5`` arm's in-RAM postings: FTS5's hits and bit-identical scores, in step with writes."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.fts5 import postings as fts5_postings
from octomem.plugins.fts5.arm import Fts5KeywordArm, Fts5Options
from octomem.plugins.fts5.ranking import Fts5Ranker
from octomem.plugins.sqlite import changelog as vector_log
from octomem.plugins.sqlite.storage import SqliteStorage

# "run"/"running"/"runs" share the Porter stem "run": three phrases, one token.
WORDS = ["cell", "protein", "run", "running", "runs", "kinase", "zebrafish", "prion", "filler"]
QUERIES = ["cell", "kinase cell", "running runs run", "zebrafish prion protein filler",
           "absent words only", "cell protein run kinase zebrafish prion"]
FILTERS = [Filters(), Filters(include_superseded=True), Filters(as_of=1.5),
           Filters(kinds=("fact",))]


def _add(storage: SqliteStorage, arm: Fts5KeywordArm, texts: list[str]) -> list[int]:
    """Store and index one single-chunk document per text (every fourth of kind ``fact``)."""
    ids = []
    with storage.transaction() as tx:
        for i, text in enumerate(texts):
            doc = Document(text=text, kind="fact" if i % 4 == 0 else "note")
            chunk = Chunk(document_id=doc.id, ordinal=0, text=text)
            stored = storage.add_document(tx, doc, [chunk])
            arm.index(tx, stored)
            ids.append(stored[0].id)
    return ids


def _pair(storage: SqliteStorage) -> tuple[Fts5KeywordArm, Fts5KeywordArm]:
    """The same index read from RAM (loaded on first search) and by FTS5 alone."""
    return (Fts5KeywordArm(storage, Fts5Options(in_ram="always")),
            Fts5KeywordArm(storage, Fts5Options(in_ram="off")))


def _run(arm: Fts5KeywordArm, text: str, filters: Filters, k: int) -> list[tuple[int, float]]:
    return [(h.chunk_id, h.score) for h in arm.search(text, filters, k)]


def _same(ram: Fts5KeywordArm, fts5: Fts5KeywordArm, k: int = 50) -> None:
    for text in QUERIES:
        for filters in FILTERS:
            assert _run(ram, text, filters, k) == _run(fts5, text, filters, k), (text, filters)
    assert ram.postings.exact  # ranked from RAM, not by the FTS5 fallback


def test_scores_are_fts5s_bm25_to_the_last_bit(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    ram, fts5 = _pair(storage)
    _add(storage, fts5, ["kinase cell cell", "cell", "protein", "kinase", "filler words here"])
    n_rows, avgdl = 5, 9 / 5
    idf = math.log((n_rows - 2 + 0.5) / (2 + 0.5))
    got = _run(ram, "kinase cell", Filters(), 10)
    assert got == _run(fts5, "kinase cell", Filters(), 10)
    assert [cid for cid, _ in got] == [1, 2, 4]
    top = idf * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 3 / avgdl)) \
        + idf * 4.4 / (2 + 1.2 * (0.25 + 0.75 * 3 / avgdl))
    assert got[0][1] == pytest.approx(top, rel=1e-12)
    assert ram.postings.loaded and ram.postings.live_rows == 5 and ram.postings.total_tokens == 9
    storage.close()


OPS = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.lists(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=10).map(" ".join),
            min_size=1, max_size=6)),
        st.tuples(st.just("remove"), st.lists(st.integers(0, 40), min_size=1, max_size=4)),
        st.tuples(st.just("reindex"), st.lists(st.integers(0, 40), min_size=1, max_size=3)),
        st.tuples(st.just("supersede"), st.lists(st.integers(0, 40), min_size=1, max_size=2)),
    ),
    min_size=1, max_size=8,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=OPS, rebuild_min=st.sampled_from([0, 3, 10_000]), k=st.integers(1, 30))
def test_same_hits_and_scores_as_fts5_after_any_writes(
    ops: list[tuple[str, list]], rebuild_min: int, k: int
) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(fts5_postings, "REBUILD_MIN", rebuild_min)  # 0: rebuild on every write
        storage = SqliteStorage(Path(folder) / "db.sqlite3")
        ram, fts5 = _pair(storage)
        ids = _add(storage, fts5, ["cell protein", "kinase run", "prion prion cell filler"])
        _same(ram, fts5, k)  # loaded here; every later write is followed through the log
        for op, arg in ops:
            if op == "add":
                ids += _add(storage, fts5, arg)
            elif ids:
                chosen = sorted({ids[i % len(ids)] for i in arg})
                with storage.transaction() as tx:
                    if op == "remove":
                        fts5.remove(tx, chosen)
                    elif op == "reindex":  # a chunk id indexed again replaces its entry
                        fts5.index(tx, [c for c in storage.get_chunks(chosen)])
                    else:
                        tx.execute("UPDATE chunks SET valid_to = 1.0 WHERE id IN "
                                   f"({','.join('?' * len(chosen))})", chosen)
            _same(ram, fts5, k)
        storage.close()


def test_writes_of_another_connection_are_seen_and_rollbacks_never(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    storage = SqliteStorage(path)
    reader, fts5 = _pair(storage)
    ids = _add(storage, fts5, ["cell kinase", "cell", "protein run"])
    assert [c for c, _ in _run(reader, "kinase", Filters(), 5)] == [ids[0]]
    other = SqliteStorage(path)  # another process would see the same file
    writer = Fts5KeywordArm(other, Fts5Options(in_ram="off"))
    new = _add(other, writer, ["kinase kinase zebrafish"])
    with other.transaction() as tx:
        writer.remove(tx, [ids[0]])
    assert [c for c, _ in _run(reader, "kinase", Filters(), 5)] == new
    with pytest.raises(RuntimeError), other.transaction() as tx:
        writer.remove(tx, new)
        raise RuntimeError("abort")
    assert [c for c, _ in _run(reader, "kinase", Filters(), 5)] == new
    _same(reader, fts5)
    other.close()
    storage.close()


def test_a_reader_behind_the_pruned_log_reloads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vector_log, "KEEP", 2)
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    ram, fts5 = _pair(storage)
    ids = _add(storage, fts5, ["cell"] * 6)
    assert len(_run(ram, "cell", Filters(), 10)) == 6
    with storage.transaction() as tx:
        fts5.remove(tx, ids[:4])  # four log rows, two kept: the reader cannot replay them
    assert [c for c, _ in _run(ram, "cell", Filters(), 10)] == ids[4:]
    assert ram.postings.built == 2  # reloaded from chunks, not patched
    storage.close()


def test_warm_mode_ranks_with_fts5_until_warmed(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    arm = Fts5KeywordArm(storage)  # in_ram = "warm", the default
    _add(storage, arm, ["cell kinase", "cell", "protein run"])
    before = _run(arm, "cell kinase", Filters(), 5)
    assert not arm.postings.loaded
    arm.warm()
    assert arm.postings.loaded and arm.postings.live_rows == 3
    calls: list[tuple[int, bool]] = []
    original = arm.postings.ranked

    def spy(tokens: list[str], limit: int, allowed: object = None,
            prune: bool = True) -> list[tuple[int, float]]:
        calls.append((limit, allowed is None))
        return original(tokens, limit, allowed, prune)  # type: ignore[arg-type]

    arm.postings.ranked = spy  # type: ignore[method-assign]
    assert _run(arm, "cell kinase", Filters(), 5) == before
    assert calls == [(5, True)]  # ranked in RAM, k rows: nothing to filter
    facts = Filters(kinds=("fact",))
    off = Fts5KeywordArm(storage, Fts5Options(in_ram="off"))
    assert _run(arm, "cell kinase", facts, 5) == _run(off, "cell kinase", facts, 5)
    assert calls == [(5, True), (5, False)]  # ranked in RAM under the filters' mask
    storage.close()


def test_off_never_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    arm = Fts5KeywordArm(storage, Fts5Options(in_ram="off"))
    _add(storage, arm, ["cell"])
    arm.warm()
    assert _run(arm, "cell", Filters(), 5)[0][0] == 1 and not arm.postings.loaded
    storage.close()


def test_ranked_rows_come_from_the_ranker_given_first(tmp_path: Path) -> None:
    """``Fts5Ranker.top`` filters whatever ``first`` ranked: here a made-up ranking."""
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    arm = Fts5KeywordArm(storage, Fts5Options(in_ram="off"))
    ids = _add(storage, arm, ["cell", "cell", "cell"])
    with storage.transaction() as tx:
        tx.execute("UPDATE chunks SET valid_to = 1.0 WHERE id = ?", (ids[1],))
    ranker = Fts5Ranker(storage.connection(), "fts5_chunks")
    made_up = [(ids[2], 3.0), (ids[1], 2.0), (ids[0], 1.0)]
    assert ranker.top('"cell"', Filters(), 2, first=lambda limit: made_up[:limit]) == [
        (ids[2], 3.0), (ids[0], 1.0)]
    storage.close()


def test_tokens_past_fts5s_size_cap_and_huge_counts_score_as_in_fts5(tmp_path: Path) -> None:
    """FTS5 keeps a token's first 32,768 bytes and counts past 65,535 in one chunk."""
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    ram, fts5 = _pair(storage)
    long = "a" * 40_000
    _add(storage, fts5, [f"note {long}b", "glorp→" * 70_000, "glorp cell", "cell é" + "é" * 20_000])
    for query in [long + "c", "glorp", "cell", "é" * 20_001]:
        for k in (1, 5):
            assert _run(ram, query, Filters(), k) == _run(fts5, query, Filters(), k), query
    assert _run(ram, long + "c", Filters(), 5)[0][0] == 1  # cut to the same 32,768 bytes
    assert ram.postings.exact and ram.postings.post_tfs.dtype == np.uint32
    storage.close()


def test_entries_without_a_chunk_make_fts5_rank(tmp_path: Path) -> None:
    """A chunk deleted while ``fts5`` was not in the pipeline leaves its FTS5 entry, which
    still counts in FTS5's N: a copy loaded from the chunks cannot match that, so FTS5
    ranks."""
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    ram, fts5 = _pair(storage)
    ids = _add(storage, fts5, ["cell kinase", "cell", "protein run", "kinase"])
    with storage.transaction() as tx:  # as a forget by a pipeline without the keyword arm
        tx.execute("DELETE FROM chunks WHERE id = ?", (ids[0],))
    assert _run(ram, "kinase cell", Filters(), 5) == _run(fts5, "kinase cell", Filters(), 5)
    assert ram.postings.loaded and not ram.postings.exact
    with storage.transaction() as tx:  # the keyword arm removes it: counts agree again
        fts5.remove(tx, [ids[0]])
    assert _run(ram, "kinase cell", Filters(), 5) == _run(fts5, "kinase cell", Filters(), 5)
    assert ram.postings.exact
    storage.close()


def test_warm_says_whether_it_loaded_anything(tmp_path: Path) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    assert Fts5KeywordArm(storage).warm() is True
    assert Fts5KeywordArm(storage, Fts5Options(in_ram="off")).warm() is False
    storage.close()
