"""``octomem import`` never destroys what is stored (trial 11, findings 1 and 12).

An older export imported into a store that moved on rolled it back: a document's newer
revision was erased with its history, and a superseded statement became current again
while its successor still said it superseded it. A hand-made record could link to a
statement that exists nowhere, and a record without ``text`` leaked a Python
``__init__`` message. Each test drives the CLI on a real SQLite file.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from cli_run import octomem

DEPLOY = "# Deploys\n\nDeploys happen on Tuesdays only, after the 10:00 standup.\n"
ROLLBACK = "# Rollback\n\nTo undo a bad deploy, run `make rollback` within the hour.\n"


def _db(project: Path) -> Path:
    return project / ".octomem" / "octomem.sqlite3"


def _rows(project: Path, sql: str, params: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    with sqlite3.connect(_db(project)) as conn:
        return conn.execute(sql, params).fetchall()


def _records(project: Path) -> dict[str, dict[str, object]]:
    out = octomem(project, "export", "--scope", "local", "-").out
    return {r["id"]: r for r in map(json.loads, out.splitlines()) if r["type"] == "document"}


def _notes_project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "notes").mkdir(parents=True)
    (project / "notes" / "deploy.md").write_text(DEPLOY, encoding="utf-8")
    (project / "notes" / "rollback.md").write_text(ROLLBACK, encoding="utf-8")
    octomem(project, "ingest", "notes")
    return project


def _edit_deploy(project: Path, day: str) -> None:
    note = project / "notes" / "deploy.md"
    note.write_text(DEPLOY.replace("Tuesdays", day), encoding="utf-8")
    assert "1 replaced" in octomem(project, "ingest", "notes").out.replace(
        "replaced 1", "1 replaced")


def _deploy_id(project: Path) -> str:
    return next(i for i, r in _records(project).items() if "Deploys happen" in str(r["text"]))


def test_an_older_export_leaves_a_newer_revision_current(tmp_path: Path) -> None:
    project = _notes_project(tmp_path)
    old = tmp_path / "old.jsonl"
    octomem(project, "export", "--scope", "local", str(old))
    _edit_deploy(project, "Thursdays")
    doc = _deploy_id(project)
    before = _records(project)
    assert before[doc]["revision"] == 2

    ran = octomem(project, "import", str(old))
    assert "0 added, 0 replaced, 1 unchanged" in ran.out, ran.out
    assert "1 older than what is stored" in ran.out and "kept the stored" in ran.out, ran.out
    assert _records(project) == before  # the export after the import is the one before
    hit = octomem(project, "search", "which day do we deploy", "-k", "1", "--json").json()
    assert "Thursdays" in hit["hits"][0]["text"]
    history = octomem(project, "search", "Tuesdays", "--include-superseded", "--json").json()
    assert any("Tuesdays" in h["text"] for h in history["hits"])  # rev 1 is still history


def test_a_newer_export_still_brings_the_new_revision_with_its_history(tmp_path: Path) -> None:
    project = _notes_project(tmp_path)
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    octomem(project, "export", "--scope", "local", str(old))
    _edit_deploy(project, "Thursdays")
    octomem(project, "export", "--scope", "local", str(new))
    other = tmp_path / "other"
    other.mkdir()
    octomem(other, "import", str(old))
    ran = octomem(other, "import", str(new))
    assert "0 added, 1 replaced, 1 unchanged" in ran.out, ran.out
    doc = _deploy_id(project)
    assert _records(other)[doc] == _records(project)[doc]


def test_a_diverged_revision_is_kept_and_reported(tmp_path: Path) -> None:
    project = _notes_project(tmp_path)
    old, new = tmp_path / "old.jsonl", tmp_path / "new.jsonl"
    octomem(project, "export", "--scope", "local", str(old))
    shutil.copytree(project / ".octomem", tmp_path / "store-at-rev-1")
    _edit_deploy(project, "Thursdays")
    octomem(project, "export", "--scope", "local", str(new))
    # the store as it was at the old export (another machine) changes the note its own way
    shutil.rmtree(project / ".octomem")
    shutil.copytree(tmp_path / "store-at-rev-1", project / ".octomem")
    _edit_deploy(project, "Fridays")
    ran = octomem(project, "import", str(new))
    assert "0 replaced" in ran.out and "1 in conflict with what is stored" in ran.out, ran.out
    text = octomem(project, "export", "--scope", "local", "-").out
    assert "Fridays" in text and "Thursdays" not in text


def _statements(tmp_path: Path) -> tuple[Path, str, str, Path]:
    project = tmp_path / "proj"
    project.mkdir()
    vpn1 = octomem(project, "add", "The VPN endpoint is vpn1.example.com", "--kind", "FACT",
                   "--json").json()["id"]
    before = tmp_path / "vpn_before.jsonl"
    octomem(project, "export", "--scope", "local", str(before))
    vpn2 = octomem(project, "add", "The VPN endpoint is vpn2.example.com", "--kind", "FACT",
                   "--supersedes", vpn1, "--json").json()["id"]
    return project, vpn1, vpn2, before


def test_an_older_export_never_undoes_a_later_supersede(tmp_path: Path) -> None:
    project, vpn1, vpn2, before = _statements(tmp_path)
    stored = _records(project)
    ran = octomem(project, "import", str(before))
    assert "0 replaced" in ran.out and "1 older than what is stored" in ran.out, ran.out
    assert _records(project) == stored
    assert _records(project)[vpn1]["superseded_by"] == vpn2
    hits = octomem(project, "search", "VPN endpoint", "--include-superseded", "--json").json()
    current = {h["text"]: h.get("superseded", h.get("valid_to") is not None)
               for h in hits["hits"]}
    assert current == {"The VPN endpoint is vpn2.example.com": False,
                       "The VPN endpoint is vpn1.example.com": True}, hits
    assert "every row can be shown" in octomem(project, "verify").out


def test_a_newer_export_brings_the_supersede(tmp_path: Path) -> None:
    project, vpn1, vpn2, before = _statements(tmp_path)
    after = tmp_path / "vpn_after.jsonl"
    octomem(project, "export", "--scope", "local", str(after))
    other = tmp_path / "other"
    other.mkdir()
    octomem(other, "import", str(before))
    ran = octomem(other, "import", str(after))
    assert "1 added, 1 replaced, 0 unchanged" in ran.out, ran.out
    assert _records(other) == _records(project)


def _write_export(path: Path, *records: dict[str, object]) -> Path:
    header = {"type": "octomem-export", "format": 2, "scope": "local"}
    path.write_text("".join(json.dumps(r) + "\n" for r in (header, *records)),
                    encoding="utf-8")
    return path


def _record(id_: str, text: str, **more: object) -> dict[str, object]:
    return {"type": "document", "id": id_, "text": text, "kind": "FACT",
            "created_at": "2025-01-01T00:00:00Z", **more}


def test_a_dangling_superseded_by_is_refused_naming_file_line_and_field(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    octomem(project, "add", "Something already stored")
    bad = _write_export(tmp_path / "bad.jsonl", _record("a", "The cache is Redis"),
                        _record("b", "The queue is SQS", superseded_by="nonexistent-id",
                                valid_to="2025-02-01T00:00:00Z"))
    ran = octomem(project, "import", str(bad), ok=False)
    assert ran.code == 1
    assert f"{bad}:3: superseded_by: no document has the id 'nonexistent-id'" in ran.err, ran.err
    assert "nothing was imported" in ran.err
    assert _rows(project, "SELECT count(*) FROM documents") == [(1,)]


def test_superseded_by_without_valid_to_and_one_way_supersedes_are_refused(
        tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    current = _write_export(tmp_path / "c.jsonl", _record("a", "Old"), _record(
        "b", "New", superseded_by="a"))
    ran = octomem(project, "import", str(current), ok=False)
    assert f"{current}:3: superseded_by: 'a' is given but valid_to is null" in ran.err, ran.err
    one_way = _write_export(tmp_path / "o.jsonl", _record("a", "Old"),
                            _record("b", "New", supersedes="a"))
    ran = octomem(project, "import", str(one_way), ok=False)
    assert f"{one_way}:3: supersedes: 'a' (line 2) is not superseded by 'b'" in ran.err, ran.err
    nowhere = _write_export(tmp_path / "n.jsonl", _record("b", "New", supersedes="zzz"))
    ran = octomem(project, "import", str(nowhere), ok=False)
    assert f"{nowhere}:2: supersedes: no document has the id 'zzz'" in ran.err, ran.err
    assert not _db(project).exists() or _rows(
        project, "SELECT count(*) FROM documents") == [(0,)]


def test_a_record_without_text_names_the_field_not_python(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    for name, record, field in [
            ("no-text", {"type": "document", "id": "x", "created_at": "2025-01-01T00:00:00Z"},
             "text: missing"),
            ("int-text", _record("x", 5), "text: must be a string, got 5"),
            ("empty-text", _record("x", ""),  # trial 13 F9: stored, every other path refuses
             "text: empty; no octomem writer stores a document without text"),
            ("blank-text", _record("x", " \n "),
             "text: empty; no octomem writer stores a document without text"),
            ("bad-rev", _record("x", "y", revision="two"),
             "revision: must be a whole number from 1 to 9,223,372,036,854,775,807, got 'two'"),
            ("huge-rev", _record("x", "y", revision=10**30),  # trial 15 F15: a traceback
             "revision: must be a whole number from 1 to 9,223,372,036,854,775,807, got a "
             "number of 31 digits"),
            ("huge-recalls", _record("x", "y", recalls=2**63),
             "recalls: must be a whole number from 0 to 9,223,372,036,854,775,807, got "
             "9223372036854775808"),
            ("bad-tags", _record("x", "y", tags="ops"), "tags: must be a list of strings"),
            ("no-id", {"type": "document", "text": "y", "created_at": "2025-01-01T00:00:00Z"},
             "id: missing")]:
        bad = _write_export(tmp_path / f"{name}.jsonl", record)
        ran = octomem(project, "import", str(bad), ok=False)
        assert ran.code == 1 and f"{bad}:2: a malformed document record: {field}" in ran.err, (
            name, ran.err)
        assert "__init__" not in ran.err and "positional argument" not in ran.err
        assert not (project / ".octomem").exists()  # nothing stored, no store created


def test_verify_finds_and_repairs_a_one_way_supersede(tmp_path: Path) -> None:
    project, vpn1, vpn2, _ = _statements(tmp_path)
    # the state the old import left: vpn1 current again, vpn2 still superseding it
    with sqlite3.connect(_db(project)) as conn:
        conn.execute("UPDATE documents SET superseded_by = NULL, valid_to = NULL WHERE id = ?",
                     (vpn1,))
        conn.execute("UPDATE chunks SET valid_to = NULL WHERE document_id = ?", (vpn1,))
    ran = octomem(project, "verify", "--scope", "local", ok=False)
    assert ran.code == 1
    assert f"local: {vpn2}: supersedes {vpn1!r}, which is current (not superseded by it)" \
        in ran.out, ran.out
    fixed = octomem(project, "verify", "--scope", "local", "--repair")
    assert "repaired" in fixed.out
    assert _records(project)[vpn1]["superseded_by"] == vpn2
    assert "every row can be shown" in octomem(project, "verify", "--scope", "local").out


def test_verify_finds_a_dangling_superseded_by(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    doc = octomem(project, "add", "The queue is SQS", "--json").json()["id"]
    with sqlite3.connect(_db(project)) as conn:
        conn.execute("UPDATE documents SET superseded_by = 'nonexistent-id' WHERE id = ?",
                     (doc,))
    ran = octomem(project, "verify", "--scope", "local", ok=False)
    assert ran.code == 1
    assert f"local: {doc}: superseded_by 'nonexistent-id': no such document" in ran.out, ran.out


def test_two_machines_superseding_one_statement_differently_keep_the_stored(
        tmp_path: Path) -> None:
    project, vpn1, vpn2, before = _statements(tmp_path)
    theirs = tmp_path / "theirs.jsonl"
    octomem(project, "export", "--scope", "local", str(theirs))  # vpn1 -> vpn2
    octomem(project, "forget", vpn2)
    with sqlite3.connect(_db(project)) as conn:  # back to before vpn2, on this machine
        conn.execute("DELETE FROM forgotten")
    shutil.rmtree(project / ".octomem")
    octomem(project, "import", str(before))
    vpn3 = octomem(project, "add", "The VPN endpoint is vpn3.example.com", "--kind", "FACT",
                   "--supersedes", vpn1, "--json").json()["id"]
    stored = _records(project)
    ran = octomem(project, "import", str(theirs))
    assert "0 added, 0 replaced" in ran.out and "2 in conflict" in ran.out, ran.out
    assert f"superseded by {vpn3!r} here, by {vpn2!r} in the file" in ran.out
    assert f"it supersedes {vpn1!r}, which is superseded by {vpn3!r} here" in ran.out
    assert _records(project) == stored
    assert "every row can be shown" in octomem(project, "verify", "--scope", "local").out


def test_a_statement_superseding_one_kept_current_is_left_out(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    old = octomem(project, "add", "The cache is Memcached", "--json").json()["id"]
    part = _write_export(tmp_path / "part.jsonl", _record("b", "The cache is Redis",
                                                          supersedes=old))
    ran = octomem(project, "import", str(part))
    assert "0 added" in ran.out and "1 in conflict" in ran.out, ran.out
    assert f"b: it supersedes {old!r}, which is current here" in ran.out
    assert set(_records(project)) == {old}


def test_an_import_that_fails_while_writing_stores_nothing(tmp_path: Path,
                                                          monkeypatch: object) -> None:
    import pytest

    from octomem.engine.memory import transfer
    from octomem.engine.memory.facade import open_memory

    source = tmp_path / "source"
    source.mkdir()
    for i in range(3):
        octomem(source, "add", f"Statement number {i} about the build")
    export = tmp_path / "exp.jsonl"
    octomem(source, "export", "--scope", "local", str(export))
    target = tmp_path / "target"
    target.mkdir()
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=target, global_root=tmp_path / "g")
    real, calls = transfer.write_document, []

    def failing(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) == 3:
            raise OSError("disk full")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    mp = pytest.MonkeyPatch()
    mp.setattr(transfer, "write_document", failing)
    try:
        with pytest.raises(OSError, match="disk full"):
            transfer.import_lines(memory, export.read_text().splitlines(), str(export))
    finally:
        mp.undo()
        memory.close()
    assert _rows(target, "SELECT count(*) FROM documents") == [(0,)]


def test_a_supersede_cycle_is_refused(tmp_path: Path) -> None:
    """Trial 15 F16: two records that supersede each other were imported: both ended
    superseded, nothing of them current, and verify said all was well."""
    project = tmp_path / "proj"
    project.mkdir()
    when = "2025-02-01T00:00:00Z"
    bad = _write_export(
        tmp_path / "cycle.jsonl",
        _record("c1", "c one", supersedes="c2", superseded_by="c2", valid_to=when),
        _record("c2", "c two", supersedes="c1", superseded_by="c1", valid_to=when))
    ran = octomem(project, "import", str(bad), ok=False)
    assert (ran.code, ran.err.strip()) == (1, (
        f"error: {bad}:2: superseded_by: a supersede cycle (c1 -> c2 -> c1): no statement "
        "of it would be current; nothing was imported")), ran.err
    chain = _write_export(  # a chain that ends in a current statement still imports
        tmp_path / "chain.jsonl",
        _record("c1", "c one", superseded_by="c2", valid_to=when),
        _record("c2", "c two", supersedes="c1"))
    octomem(project, "import", str(chain))
    assert {k: r["superseded_by"] for k, r in _records(project).items()} == {
        "c1": "c2", "c2": None}
