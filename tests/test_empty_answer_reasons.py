"""Trial 13, F5: an empty answer said "nothing is stored in the local and global scopes;
ingest or add first" when the local store could not be read, and when only superseded
statements matched. Now it names the scope that could not be read and says the other
holds nothing, or says that only history matches and how to see it — in the CLI's first
line and in ``nothing_to_rank`` / ``abstained``, which ``--json`` and the MCP ``recall``
tool return."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

SEE = "include superseded ones to see it (--include-superseded; MCP: include_superseded)"


def _run(project: Path, global_root: Path, *args: str, ok: bool = True):  # noqa: ANN202
    return octomem(project, "--global-root", str(global_root), *args, ok=ok)


def test_an_unreadable_local_store_is_named_not_called_empty(tmp_path: Path) -> None:
    project, global_root = tmp_path / "project", tmp_path / "global"
    project.mkdir()
    _run(project, global_root, "add", "Gardening club meets on Tuesdays")
    store = project / ".octomem" / "octomem.sqlite3"
    store.write_bytes(b"this is not a database, just text " * 500)

    answer = _run(project, global_root, "search", "gardening", "--json").json()
    assert answer["hits"] == [] and set(answer["scopes_unavailable"]) == {"local"}
    assert answer["nothing_to_rank"] == (
        "the local scope could not be read (scopes_unavailable says why; nothing of it was "
        "searched) and the global scope holds nothing")
    shown = _run(project, global_root, "search", "gardening").out.splitlines()
    # the cause in words, not the JSON field's name (trial 13: "scopes_unavailable says why")
    assert shown[0] == ("no hits for 'gardening': the local scope could not be read "
                        "(file is not a database; nothing of it was searched) and the "
                        "global scope holds nothing")
    # the reason stays on its label's line (M15), however long the path
    assert any(line.startswith(f"local scope not searched: {store}: file is not a database")
               for line in shown), shown


def test_only_a_superseded_statement_matching_is_said(project: Path) -> None:
    old = octomem(project, "add", "The office is in Lisbon near the river", "--json").json()
    octomem(project, "add", "Nothing about that city any more: we work remotely",
            "--supersedes", old["id"])
    octomem(project, "add", "Quarterly reports go to the finance team")
    answer = octomem(project, "search", "office Lisbon river", "--json").json()
    if answer["hits"]:
        pytest.skip("a current statement answered (hashing embedder)")
    said = answer["abstained"] or answer["nothing_to_rank"]
    assert said.startswith("only a superseded statement matches: 'The office is in Lisbon "
                           f"near the river' (local); {SEE}"), said
    answer = octomem(project, "search", "office Lisbon river", "--include-superseded",
                     "--json").json()
    assert answer["hits"][0]["id"] == old["id"]


def test_a_scope_holding_only_history_says_so(project: Path) -> None:
    """A scope whose every statement is superseded (a correction's target left so by an
    older octomem, say): not "nothing is stored"."""
    from octomem.engine.memory.empty import why_empty
    from octomem.engine.memory.facade import open_memory

    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=project)
    try:
        fact = memory.remember("The wiki moved to Confluence").document
        storage = memory.scopes.require("local").arms.storage
        with storage.transaction() as tx:
            storage.supersede(tx, fact.id, "elsewhere", fact.valid_from + 1)
        assert why_empty(memory, "local", ()) == (
            "no current statement is stored in the local scope; 1 superseded one is "
            "(include superseded ones to see it: --include-superseded; MCP: "
            "include_superseded)")
    finally:
        memory.close()


@pytest.mark.slow
def test_mcp_recall_names_the_unreadable_scope(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as mcp:
        mcp.ok("remember", text="Gardening club meets on Tuesdays")
    store = project / ".octomem" / "octomem.sqlite3"
    store.write_bytes(b"junk, not a database " * 500)
    # A server the client had to kill (2 s grace, under load) leaves its WAL, whose copy of
    # page 1 SQLite reads before the junk: the damage is the whole file set.
    for side in ("-wal", "-shm"):
        Path(f"{store}{side}").unlink(missing_ok=True)
    with stdio_client(tmp_path, project) as mcp:
        answer = mcp.ok("recall", query="gardening")
        assert answer["hits"] == [] and "local" in answer["scopes_unavailable"]
        assert answer["nothing_to_rank"].startswith("the local scope could not be read"), \
            answer


def test_two_unreadable_scopes_with_different_causes_point_below(tmp_path: Path) -> None:
    project, global_root = tmp_path / "project", tmp_path / "global"
    project.mkdir()
    _run(project, global_root, "add", "Gardening club meets on Tuesdays")
    _run(project, global_root, "add", "The user gardens on Sundays", "--scope", "global")
    (project / ".octomem" / "octomem.sqlite3").write_bytes(b"not a database " * 500)
    with (global_root / "octomem.sqlite3").open("r+b") as store:
        store.truncate(20000)
    shown = _run(project, global_root, "search", "gardening").out.splitlines()
    assert "scopes_unavailable" not in shown[0], shown
    causes = [line for line in shown if " scope not searched: " in line]
    assert len(causes) == 2, shown
    assert shown[0].startswith("no hits for 'gardening': the local and global scopes could "
                               "not be read (each reason is said below; "), shown
