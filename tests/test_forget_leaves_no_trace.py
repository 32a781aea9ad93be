"""A forgotten statement leaves no readable trace in the store's files (trial 11, finding 2):
not in the SQLite file's free space or FTS5's segments, not in the write-ahead log, not in
the snapshots of the in-RAM copies beside the file, written before or after the forget.

Every file under the scopes' folders is read as bytes and searched for the secret and for
the terms FTS5 indexed of it (Porter stems: "passphrase" is held as "passphras")."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from octomem.engine.memory.facade import Memory, open_memory
from octomem.plugins.sqlite import snapshot_sync, snapshots

SECRET = "The quokka vault passphrase is hunter2xyzzy"
#: The secret's words and the FTS5 terms (porter unicode61) made of them.
TRACES = (b"hunter2xyzz", b"quokka", b"passphras", b"vault")
OTHERS = ("Deploys happen on Tuesdays after the standup",
          "The staging database is reset every Sunday night",
          "Marta approves every release of the billing service")


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def _traces(root: Path) -> dict[str, list[str]]:
    """Each file under ``root`` (relative name) holding any of :data:`TRACES`, with them."""
    found: dict[str, list[str]] = {}
    for path in _files(root):
        data = path.read_bytes()
        hits = [t.decode() for t in TRACES if t in data]
        if hits:
            found[str(path.relative_to(root))] = hits
    return found


@pytest.fixture
def warm_memory(tmp_path: Path) -> Iterator[Memory]:
    """A memory whose local scope is a real SQLite file in ``tmp_path/project/.octomem``,
    with its in-RAM copies loaded (as the MCP server's are) and their snapshots written."""
    (tmp_path / "project").mkdir()
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    yield memory
    memory.close()


def _warm(memory: Memory) -> None:
    pipeline = memory.scopes.require("local")
    pipeline.warm()
    storage = pipeline.arms.storage
    snapshots.wait_for_saves(storage.snapshot_db)


def _copies(memory: Memory) -> list[snapshot_sync.Snapshotted]:
    arms = memory.scopes.require("local").arms
    semantic = arms.semantic
    return [arms.keyword.postings, arms.storage.fields,
            semantic._matrices[semantic.bound.table]]


def test_forget_leaves_no_trace_in_any_file(warm_memory: Memory, tmp_path: Path) -> None:
    memory = warm_memory
    for text in OTHERS:
        memory.remember(text, scope="local")
    secret = memory.remember(SECRET, scope="local", tags=["vaultkeys"]).document
    _warm(memory)
    assert [h.chunk.text for h in memory.recall("quokka passphrase").hits][:1] == [SECRET]
    db = memory.scopes.require("local").arms.storage.path
    folder = snapshots.folder(db)
    assert {p.name for p in folder.glob("*.json")} == {
        "chunks.json", "fts5_chunks.json", f"{_copies(memory)[2].table}.json"}
    before = _traces(tmp_path)
    assert any(".snapshots" in name for name in before), before  # the test can see them
    assert any(name.endswith("octomem.sqlite3") or name.endswith("-wal") for name in before)

    memory.forget(secret.id, reason="pasted by mistake")

    assert _traces(tmp_path) == {}
    assert not list(folder.glob("*.json"))  # every snapshot written before it is gone
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0
    assert memory.recall("quokka passphrase").hits == [] or all(
        h.chunk.text != SECRET for h in memory.recall("quokka passphrase").hits)

    # the process that forgot keeps its in-RAM copies; the snapshots it writes next (a
    # rebuild of the postings, a resave of each copy) hold none of the forgotten words or tags
    postings = _copies(memory)[0]
    with postings.lock:
        postings._rebuild()
    for copy in _copies(memory):
        with copy.lock:
            thread = snapshot_sync.save(copy)
        assert thread is not None
        thread.join()
    assert len(list(folder.glob("*.json"))) == 3
    assert _traces(tmp_path) == {}
    restarted = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                            project_root=tmp_path / "project", global_root=tmp_path / "global")
    try:  # ...and they are the store's: a new process restores them, and they answer
        _warm(restarted)
        states = [c.snapshot for c in _copies(restarted)]
        assert [s.origin for s in states] == ["snapshot"] * 3
        hits = restarted.recall("Marta release billing").hits
        assert hits and hits[0].chunk.text == OTHERS[2]
        assert restarted.recall("quokka vault passphrase hunter2xyzzy").hits == []
        assert restarted.recall("anything", tags=["vaultkeys"]).hits == []
    finally:
        restarted.close()


def test_a_snapshot_written_of_a_state_before_a_forget_is_removed_by_its_writer(
        warm_memory: Memory) -> None:
    """Another process saving a snapshot while the forget commits: the forget removed the
    snapshots before this one was written, so its writer removes it (it predates the
    deletion's change-log position)."""
    from octomem.plugins.sqlite import purge

    memory = warm_memory
    memory.remember(OTHERS[0], scope="local")
    secret = memory.remember(SECRET, scope="local").document
    _warm(memory)
    storage = memory.scopes.require("local").arms.storage
    fields = storage.fields
    with fields.lock:
        arrays, extra = fields.snapshot_export()  # the state holding the secret's chunk
        seq = fields.seq
    memory.forget(secret.id)
    assert purge.purged_seq(storage.connection()) > seq
    folder = snapshots.folder(storage.path)
    assert not list(folder.iterdir())
    snapshots.save_in_background(storage.path, "chunks", seq, arrays, fields.snapshot_about(),
                                 extra).join()
    assert not list(folder.iterdir())
    snapshots.save_in_background(  # a snapshot of a state after the forget stays
        storage.path, "chunks", purge.purged_seq(storage.connection()), arrays,
        fields.snapshot_about(), extra).join()
    assert json.loads((folder / "chunks.json").read_text())["folder"]


def test_a_folder_ingest_forgetting_gone_files_leaves_no_trace_of_them(
        warm_memory: Memory, tmp_path: Path) -> None:
    """Two files gone from a folder ingested again are forgotten in one transaction (one
    merge of the keyword index), and neither leaves a trace (their paths stay in the
    forget log's reasons: hence names without the secret's words)."""
    memory = warm_memory
    notes = tmp_path / "project" / "notes"
    notes.mkdir()
    (notes / "a.md").write_text(OTHERS[0] + "\n")
    (notes / "b.md").write_text(SECRET + "\n")
    (notes / "c.md").write_text("Quokka passphrases are rotated monthly.\n")
    memory.ingest(str(notes))
    _warm(memory)
    assert memory.recall("quokka vault passphrase").hits
    assert _traces(tmp_path / "project" / ".octomem")
    (notes / "b.md").unlink()
    (notes / "c.md").unlink()
    _, report = memory.ingest(str(notes))
    assert len(report.forgotten) == 2
    assert _traces(tmp_path) == {}


def test_a_file_an_older_version_wrote_is_rewritten_once_at_the_first_forget(
        warm_memory: Memory, tmp_path: Path) -> None:
    """A file written without secure_delete keeps text deleted earlier in its free space;
    the first forget rewrites it (VACUUM) and marks it, later forgets do not again."""
    import apsw

    from octomem.plugins.sqlite.schema import ZEROED_KEY

    memory = warm_memory
    memory.remember(OTHERS[0], scope="local")
    storage = memory.scopes.require("local").arms.storage
    older = apsw.Connection(str(storage.path))  # as an octomem before secure_delete wrote
    older.execute("PRAGMA secure_delete=OFF")
    with older:
        older.execute("DELETE FROM meta WHERE key = ?", (ZEROED_KEY,))
        older.execute("CREATE TABLE scratch (t TEXT)")
        older.execute("INSERT INTO scratch VALUES (?)", (SECRET * 50,))
    with older:
        older.execute("DROP TABLE scratch")
    older.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    older.close()
    assert _traces(tmp_path)  # the dropped table's text is still in the file
    memory.forget(memory.remember(OTHERS[1], scope="local").document.id)
    assert _traces(tmp_path) == {}
    assert storage.get_meta(ZEROED_KEY) == "1"


def test_a_deletion_by_a_writer_that_does_not_purge_is_purged_when_the_store_opens(
        tmp_path: Path) -> None:
    """Trial 20 L6: during an upgrade an older octomem, still running beside this one,
    forgets a statement; it neither zeroes freed pages nor merges FTS5 nor removes the
    snapshots this version wrote. The next open by this version purges all of it."""
    import apsw

    def opened() -> Memory:
        return open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                           project_root=tmp_path / "project", global_root=tmp_path / "global")

    (tmp_path / "project").mkdir()
    memory = opened()
    for text in OTHERS:
        memory.remember(text, scope="local")
    secret = memory.remember(SECRET, scope="local").document
    _warm(memory)
    db = memory.scopes.require("local").arms.storage.path
    memory.close()
    older = apsw.Connection(str(db))  # as an octomem that knows nothing of purging deletes
    older.execute("PRAGMA secure_delete=OFF")
    with older:
        ids = [r[0] for r in older.execute("SELECT id FROM chunks WHERE document_id = ?",
                                           (secret.id,))]
        for chunk_id in ids:
            older.execute("DELETE FROM fts5_chunks WHERE rowid = ?", (chunk_id,))
        older.execute("DELETE FROM chunks WHERE document_id = ?", (secret.id,))
        older.execute("DELETE FROM documents WHERE id = ?", (secret.id,))
    older.close()
    left = _traces(tmp_path)
    assert any(".snapshots" in name for name in left), left
    assert any(name.endswith("octomem.sqlite3") for name in left), left

    reopened = opened()
    try:
        reopened.scopes.require("local")  # opening the store purges
        assert _traces(tmp_path) == {}
        hits = reopened.recall("Marta release billing").hits
        assert hits and hits[0].chunk.text == OTHERS[2]
        storage = reopened.scopes.require("local").arms.storage
        assert storage.get_meta("unpurged_delete") is None
        reopened.forget(reopened.remember("A note to forget", scope="local").document.id)
        assert storage.get_meta("unpurged_delete") is None  # this octomem's own: purged
    finally:
        reopened.close()
