"""A damaged store in one scope leaves the other reachable: the real CLI and a real MCP
client over stdio, on real SQLite files overwritten with junk or damaged inside.

Reads over both scopes answer from the readable scope and name the damaged one (its
file, what SQLite found, what to do); anything aimed at the damaged scope alone, and
every write to it, is that one-line error; the damaged file is never written.
"""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

GLOBAL_FACT = "The deploy key lives in vault path secret/deploy"
ADVICE = ("octomem cannot read it and left it as it is (restore it from a backup or an "
          "`octomem export`, or move it away to start empty)")


def _two_scopes(project: Path, global_root: Path) -> Path:
    """Store one statement in each scope; return the local store's file."""
    octomem(project, "--global-root", str(global_root), "add", "--scope", "global",
            GLOBAL_FACT)
    for i in range(5):
        octomem(project, "--global-root", str(global_root), "add",
                f"Local fact {i}: the build uses make target {i}")
    return project / ".octomem" / "octomem.sqlite3"


def _run(project: Path, global_root: Path, *args: str, ok: bool = True):  # noqa: ANN202
    return octomem(project, "--global-root", str(global_root), *args, ok=ok)


def test_a_junk_local_store_leaves_the_global_scope_reachable(tmp_path: Path) -> None:
    project, global_root = tmp_path / "project", tmp_path / "global"
    project.mkdir()
    store = _two_scopes(project, global_root)
    store.write_bytes(b"this is not a database, just text " * 500)
    junk = store.read_bytes()
    said = f"{store}: file is not a database; {ADVICE}"

    answer = _run(project, global_root, "search", "deploy key vault", "--json").json()
    assert answer["scopes"] == ["global"] and answer["scopes_unavailable"] == {"local": said}
    assert answer["hits"][0]["scope"] == "global" and answer["hits"][0]["text"] == GLOBAL_FACT
    shown = _run(project, global_root, "search", "deploy key vault")
    assert GLOBAL_FACT in shown.out and "local scope not searched: " in shown.out

    status = _run(project, global_root, "status", "--json", ok=False)
    assert status.code == 1
    scopes = status.json()["scopes"]
    assert scopes["local"]["unreadable"] == said and scopes["local"]["exists"] is True
    assert scopes["global"]["unreadable"] is None and scopes["global"]["documents"] == 1
    table = _run(project, global_root, "status", ok=False)
    assert table.code == 1 and "unreadable" in table.out and str(store) in table.out

    verify = _run(project, global_root, "verify", ok=False)
    assert verify.code == 1
    assert verify.out == "verified the global scope: every row can be shown\n"
    assert verify.err == f"error: the local scope cannot be read: {said}\n"

    for args in (("search", "deploy", "--scope", "local"), ("add", "A new local fact"),
                 ("ingest", str(tmp_path / "project")), ("verify", "--scope", "local")):
        ran = _run(project, global_root, *args, ok=False)
        assert (ran.code, ran.err) == (1, f"error: {said}\n"), args
    forget = _run(project, global_root, "forget", GLOBAL_FACT, ok=False)
    assert forget.code == 1 and forget.err == (
        f"error: {said}; forget looks in both scopes, so nothing was forgotten: name the "
        "global scope to forget there only\n")

    start = _run(project, global_root, "session-start")
    assert f"_The local scope was not read: {said}_" in start.out and GLOBAL_FACT in start.out
    assert store.read_bytes() == junk  # never written
    _run(project, global_root, "forget", GLOBAL_FACT, "--scope", "global")  # still works


def _damage_vectors(store: Path) -> bytes:
    """Overwrite the root page of the vector table's chunks (the file still opens)."""
    conn = apsw.Connection(str(store))
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name LIKE 'vec%' AND "
                        "name LIKE '%vector_chunks00'").fetchone()[0]
    conn.close()
    with open(store, "r+b") as f:
        f.seek((root - 1) * page_size)
        f.write(bytes(range(256)) * (page_size // 256))
    return store.read_bytes()


def test_damage_found_only_by_a_read_is_reported_like_a_junk_file(tmp_path: Path) -> None:
    project, global_root = tmp_path / "project", tmp_path / "global"
    project.mkdir()
    store = _two_scopes(project, global_root)
    damaged = _damage_vectors(store)

    answer = _run(project, global_root, "search", "deploy key vault", "--json").json()
    assert answer["scopes"] == ["global"] and answer["hits"][0]["text"] == GLOBAL_FACT
    why = answer["scopes_unavailable"]["local"]
    assert why.startswith(f"{store}: ") and why.endswith(ADVICE) and "\n" not in why
    alone = _run(project, global_root, "search", "make target", "--scope", "local", ok=False)
    assert (alone.code, alone.err) == (1, f"error: {why}\n")
    verify = _run(project, global_root, "verify", ok=False)
    assert verify.code == 1 and verify.err == f"error: the local scope cannot be read: {why}\n"
    assert store.read_bytes() == damaged


@pytest.mark.slow
def test_the_mcp_server_serves_the_global_scope_beside_a_junk_local_store(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    (project / ".octomem").mkdir(parents=True)
    store = project / ".octomem" / "octomem.sqlite3"
    store.write_bytes(b"\x00junk\xff" * 4000)
    said = f"{store}: file is not a database; {ADVICE}"
    with stdio_client(tmp_path, project) as client:
        stored = client.ok("remember", text=GLOBAL_FACT, scope="global")
        assert stored["scope"] == "global"
        answer = client.ok("recall", query="where is the deploy key")
        assert answer["scopes"] == ["global"] and answer["scopes_unavailable"] == {"local": said}
        assert answer["hits"][0]["id"] == stored["id"]
        status = client.ok("status")
        assert status["scopes"]["local"]["unreadable"] == said
        assert status["scopes"]["global"]["documents"] == 1
        assert said in client.error("recall", query="deploy", scope="local")
        assert said in client.error("remember", text="A local fact")
        start = client.read("octomem://session-start")
        assert f"_The local scope was not read: {said}_" in start and GLOBAL_FACT in start
    assert store.read_bytes() == b"\x00junk\xff" * 4000


@pytest.mark.slow
def test_the_mcp_server_serves_the_local_scope_beside_a_junk_global_store(
    tmp_path: Path,
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (tmp_path / "data").mkdir()
    store = tmp_path / "data" / "octomem.sqlite3"  # the global scope: OCTOMEM_DATA_DIR
    store.write_bytes(b"\x00junk\xff" * 4000)
    said = f"{store}: file is not a database; {ADVICE}"
    with stdio_client(tmp_path, project) as client:
        stored = client.ok("remember", text="The build uses make")
        assert stored["scope"] == "local"
        answer = client.ok("recall", query="how is the build run")
        assert answer["scopes"] == ["local"] and answer["scopes_unavailable"] == {"global": said}
        assert answer["hits"][0]["id"] == stored["id"]
        assert client.ok("status")["scopes"]["global"]["unreadable"] == said
        assert said in client.error("remember", text="A global rule", scope="global")
    assert store.read_bytes() == b"\x00junk\xff" * 4000
