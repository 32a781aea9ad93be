"""Ingest stores a batch of new documents without a ``Chunk`` per stored chunk: the keyword
arm indexes them by id (``StoredKeywordIndex``: FTS5 reads their bodies from ``chunks``),
or, when it cannot, is given the chunks read back inside the transaction; either way the
same index and change log."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine import writes
from octomem.engine.arms import StoredKeywordIndex
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Chunk, Document, Query
from octomem.plugins.sqlite import changelog


def _pipeline(root: Path) -> Pipeline:
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "arms": {"hashing": {"max_tokens": 12}}})
    return Pipeline(settings, load_registry(), root)


def _documents() -> list[Document]:
    docs = [Document(f"note {i} about {'cats' if i % 2 else 'dogs'}", id=f"n{i}",
                     title="Pets" if i % 5 == 0 else None) for i in range(50)]
    docs.insert(20, Document(" ".join(f"word{i}" for i in range(40)), id="long"))  # split
    return docs


def _index(pipeline: Pipeline) -> dict[str, list[tuple[object, ...]]]:
    conn = pipeline.arms.storage.connection()
    return {
        "docsize": conn.execute("SELECT * FROM fts5_chunks_docsize ORDER BY id").fetchall(),
        "log": conn.execute("SELECT seq, table_name, chunk_id FROM vector_log "
                            "WHERE table_name != 'txn' ORDER BY seq").fetchall(),
    }


def test_chunks_indexed_by_id_match_chunks_given_to_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "DOCS_PER_TRANSACTION", 16)  # 4 batches
    by_id, given = _pipeline(tmp_path / "by-id"), _pipeline(tmp_path / "given")
    keyword = given.arms.keyword
    assert isinstance(keyword, StoredKeywordIndex)
    indexed: list[list[Chunk]] = []
    index = keyword.index

    def index_spy(tx: object, chunks: list[Chunk]) -> None:
        indexed.append(list(chunks))
        index(tx, chunks)

    monkeypatch.setattr(keyword, "index_stored", lambda tx, ids: False)  # cannot: fall back
    monkeypatch.setattr(keyword, "index", index_spy)
    reports = [p.add(_documents(), embed=False) for p in (by_id, given)]
    assert reports[0].chunk_ids == reports[1].chunk_ids == list(range(1, 55))  # "long": 4
    assert reports[0].chunks == reports[1].chunks == 54
    assert [[c.id for c in chunks] for chunks in indexed] == [
        list(range(1, 17)), list(range(17, 36)), list(range(36, 52)), list(range(52, 55))]
    assert indexed[0][0] == given.arms.storage.get_chunks([1])[0]  # the stored chunk
    assert indexed[0][0].title == "Pets" and indexed[0][0].text == "note 0 about dogs"
    assert _index(by_id) == _index(given) and len(_index(by_id)["docsize"]) == 54
    for q in ("cats", "pets", "word7"):
        assert ([(h.chunk.id, h.score) for h in by_id.search(Query(q)).hits]
                == [(h.chunk.id, h.score) for h in given.search(Query(q)).hits]) != []
    by_id.close()
    given.close()


def test_fts5_indexes_by_id_only_a_stored_run(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path / "store")
    pipeline.add(_documents()[:20], embed=False, per_transaction=20)
    keyword, storage = pipeline.arms.keyword, pipeline.arms.storage
    assert isinstance(keyword, StoredKeywordIndex)
    with storage.transaction() as tx:
        tx.execute("DELETE FROM fts5_chunks")  # empty the index, rows kept
        before = _index(pipeline)["log"]
        assert not keyword.index_stored(tx, [1, 2, 4, *range(5, 20)])  # not a run
        assert not keyword.index_stored(tx, list(range(1, 10)))  # a run shorter than 16
        assert not keyword.index_stored(tx, list(range(10, 30)))  # rows 21-29 not stored
        assert _index(pipeline) == {"docsize": [], "log": before}  # nothing written
        assert keyword.index_stored(tx, list(range(1, 21)))
        assert [r[0] for r in _index(pipeline)["docsize"]] == list(range(1, 21))
        assert [r[1:] for r in _index(pipeline)["log"][len(before):]] == [
            ("fts5_chunks", i) for i in range(1, 21)]
    pipeline.close()


def test_a_run_of_stored_ids_is_logged_as_a_json_array_of_them_is(tmp_path: Path) -> None:
    pipeline = _pipeline(tmp_path / "store")
    pipeline.add(_documents()[:20], embed=False, per_transaction=20)  # chunk ids 1-20
    storage = pipeline.arms.storage
    logged = []
    for ids, stored in (([3, 4, 5, 6], True), ([3, 4, 5, 6], False), ([6, 5, 4, 3], True),
                        ([3, 5, 4, 6], True), ([30, 31], False)):
        with storage.transaction() as tx:
            first = changelog.last_seq(tx)
            changelog.record(tx, "t", ids, stored=stored)
            logged.append(tx.execute("SELECT chunk_id FROM vector_log WHERE seq > ? AND "
                                     "table_name = 't' ORDER BY seq", (first,)).fetchall())
    assert [[r[0] for r in rows] for rows in logged] == [
        [3, 4, 5, 6], [3, 4, 5, 6], [6, 5, 4, 3], [3, 5, 4, 6], [30, 31]]  # in the given order
    pipeline.close()
