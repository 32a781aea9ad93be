"""MaxScore pruning of the in-RAM postings: the exhaustive ranking's hits and scores to the bit."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from octomem.engine.types import Chunk, Document, Filters
from octomem.plugins.fts5 import maxscore
from octomem.plugins.fts5 import postings as fts5_postings
from octomem.plugins.fts5.arm import Fts5KeywordArm, Fts5Options
from octomem.plugins.fts5.postings import PostingIndex
from octomem.plugins.sqlite.storage import SqliteStorage

# Skewed frequencies, so that some terms are non-essential: drawn uniformly from this
# list, "cell" is 8x as common as a rare word. Porter leaves every word as it is.
COMMON = ["cell"] * 8 + ["protein"] * 4 + ["gene"] * 2
RARE = ["prion", "kinase", "zebrafish", "yeast", "mitochondria", "insulin"]
VOCAB = COMMON + RARE
TEXTS = st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12).map(" ".join)


def _add(storage: SqliteStorage, arm: Fts5KeywordArm, texts: list[str]) -> list[int]:
    ids = []
    with storage.transaction() as tx:
        for text in texts:
            doc = Document(text=text)
            chunk = Chunk(document_id=doc.id, ordinal=0, text=text)
            stored = storage.add_document(tx, doc, [chunk])
            arm.index(tx, stored)
            ids.append(stored[0].id)
    return ids


def _synced(tmp_path: Path, texts: list[str]
            ) -> tuple[SqliteStorage, Fts5KeywordArm, list[int], PostingIndex]:
    """A store at ``tmp_path`` holding ``texts`` (one chunk each), its keyword arm kept in
    RAM and the arm's postings synced: ``(storage, arm, chunk ids, postings)``."""
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    arm = Fts5KeywordArm(storage, Fts5Options(in_ram="always"))
    ids = _add(storage, arm, texts)
    arm.postings.sync(storage.connection())
    return storage, arm, ids, arm.postings


def _both(index: PostingIndex, tokens: list[str], k: int, allowed: np.ndarray | None,
          patch: pytest.MonkeyPatch) -> tuple[list, list]:
    """Rank with pruning forced on, then with the exhaustive sum."""
    patch.setattr(maxscore, "MIN_POSTINGS", 0)
    pruned = index.ranked(tokens, k, allowed)
    patch.setattr(maxscore, "MIN_POSTINGS", 10**12)
    return pruned, index.ranked(tokens, k, allowed)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    first=st.lists(TEXTS, min_size=1, max_size=60),
    later=st.lists(TEXTS, max_size=15),
    removed=st.lists(st.integers(0, 80), max_size=10),
    reindexed=st.lists(st.integers(0, 80), max_size=5),
    queries=st.lists(st.lists(st.sampled_from(VOCAB + ["absent"]), min_size=1, max_size=7),
                     min_size=1, max_size=4),
    k=st.integers(1, 25),
    mask_seed=st.one_of(st.none(), st.integers(0, 2**16)),
    dense=st.booleans(),
)
def test_pruned_ranking_is_the_exhaustive_one_to_the_last_bit(
    first: list[str], later: list[str], removed: list[int], reindexed: list[int],
    queries: list[list[str]], k: int, mask_seed: int | None, dense: bool,
) -> None:
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(fts5_postings, "REBUILD_MIN", 10**6)  # keep dead and added slots
        # every non-essential term looked up through the dense buffer, or none
        patch.setattr(maxscore, "DENSE_LOOKUP", 10**9 if dense else 0)
        storage = SqliteStorage(Path(folder) / "db.sqlite3")
        arm = Fts5KeywordArm(storage, Fts5Options(in_ram="always"))
        ids = _add(storage, arm, first)
        conn = storage.connection()
        arm.postings.sync(conn)  # built; what follows is dead and added slots
        ids += _add(storage, arm, later)
        with storage.transaction() as tx:
            arm.remove(tx, sorted({ids[i % len(ids)] for i in removed}))
            again = sorted({ids[i % len(ids)] for i in reindexed})
            arm.index(tx, list(storage.get_chunks(again)))
        index = arm.postings
        index.sync(conn)
        allowed = None
        if mask_seed is not None:
            allowed = np.random.default_rng(mask_seed).random(max(ids) + 1) < 0.6
        for words in queries:
            tokens = arm._tokens(conn, words)
            assert tokens is not None
            pruned, exhaustive = _both(index, tokens, k, allowed, patch)
            assert pruned == exhaustive, (words, k)
        storage.close()


def test_a_common_term_is_looked_up_not_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 chunks hold "cell", six hold "prion" or "kinase": for k = 3 the rare terms'
    scores outrun every chunk holding only "cell", so its 2,000 postings are never read
    whole, and the answer is still the exhaustive one."""
    texts = ["cell filler words"] * 1994 + ["cell prion", "prion kinase cell", "kinase",
                                             "prion prion", "cell kinase", "kinase cell cell"]
    storage, arm, ids, index = _synced(tmp_path, texts)
    read: list[int] = []
    original = index.live_postings

    def spy(term: int) -> tuple[np.ndarray, np.ndarray]:
        read.append(term)
        return original(term)

    monkeypatch.setattr(index, "live_postings", spy)
    tokens = arm._tokens(storage.connection(), ["prion", "kinase", "cell"])
    assert tokens == ["prion", "kinas", "cell"]
    pruned, exhaustive = _both(index, tokens, 3, None, monkeypatch)
    assert pruned == exhaustive
    assert [cid for cid, _ in pruned] == [ids[1995], ids[1997], ids[1996]]
    cell = index.vocab["cell"]
    assert read.count(cell) == 1  # the exhaustive pass only
    storage.close()


def test_duplicate_tokens_and_absent_ones_score_as_exhaustively(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage, arm, _, index = _synced(
        tmp_path, ["cell prion"] * 30 + ["cell"] * 300 + ["prion kinase"] * 3)
    matching = {("prion", "cell", "prion"): 333, ("absent", "kinase", "cell"): 333,
                ("kinase", "prion"): 33}
    for tokens, n in matching.items():
        for k in (1, 4, 40, 500):
            stemmed = arm._tokens(storage.connection(), tokens)  # "kinase" -> "kinas"
            assert stemmed is not None
            pruned, exhaustive = _both(index, stemmed, k, None, monkeypatch)
            assert pruned == exhaustive and len(pruned) == min(k, n), (tokens, k)
    storage.close()


def test_the_pruning_option_turns_it_off_with_the_same_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    storage = SqliteStorage(tmp_path / "db.sqlite3")
    on = Fts5KeywordArm(storage, Fts5Options(in_ram="always"))
    off = Fts5KeywordArm(storage, Fts5Options(in_ram="always", pruning=False))
    _add(storage, on, ["cell filler"] * 200 + ["cell prion", "prion kinase", "kinase"])
    monkeypatch.setattr(maxscore, "MIN_POSTINGS", 0)
    calls: list[int] = []
    original = maxscore.pruned_top
    monkeypatch.setattr(maxscore, "pruned_top", lambda *a: calls.append(1) or original(*a))
    for k in (1, 3, 50):
        got = [(h.chunk_id, h.score) for h in off.search("prion kinase cell", Filters(), k)]
        assert calls == []
        assert got == [(h.chunk_id, h.score) for h in on.search("prion kinase cell", Filters(), k)]
        assert calls == [1]  # the default pruned
        calls.clear()
    storage.close()


def test_dense_lookup_finds_what_the_binary_search_finds(tmp_path: Path) -> None:
    """A term's built part and its added part, looked up for slots in and out of both."""
    rng = np.random.default_rng(7)
    built = np.sort(rng.choice(5000, 900, replace=False)).astype(np.int32)
    added = np.arange(5000, 5300, 3, dtype=np.int32)
    parts = [(built, rng.integers(1, 70000, len(built)).astype(np.uint32)),
             (added, rng.integers(1, 9, len(added)).astype(np.uint32))]
    slots = rng.permutation(5400)[:2000].astype(np.int64)
    buffer = np.zeros(5400, dtype=np.float64)
    found, tf = maxscore.lookup_dense(parts, slots, buffer)
    want_found, want_tf = maxscore.lookup(parts, slots)
    assert found.tolist() == want_found.tolist() and tf.tolist() == want_tf.tolist()
    assert 0 < found.sum() < len(slots)
    assert not buffer.any()  # zero again for the caller's scores


@pytest.mark.parametrize("dense", [0, 10**9])
def test_pruned_ranking_on_thousands_of_chunks_at_large_k(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dense: int
) -> None:
    """3,000 chunks of Zipf-like words, k up to 200: many essential terms, theta kept from
    the pool of the best k and each term's postings, every answer the exhaustive one."""
    rng = np.random.default_rng(11)
    words = [f"w{i}x" for i in range(60)]
    weights = 1.0 / np.arange(1, 61)
    texts = [" ".join(rng.choice(words, rng.integers(3, 25), p=weights / weights.sum()))
             for _ in range(3000)]
    storage, arm, _, index = _synced(tmp_path, texts)
    monkeypatch.setattr(maxscore, "DENSE_LOOKUP", dense)
    conn = storage.connection()
    for i in range(25):
        query = list(rng.choice(words, rng.integers(2, 9)))
        tokens = arm._tokens(conn, query)
        assert tokens is not None
        for k in (1, 10, 100, 200):
            pruned, exhaustive = _both(index, tokens, k, None, monkeypatch)
            assert pruned == exhaustive and len(pruned) == min(k, len(exhaustive)), (i, k)
    storage.close()
