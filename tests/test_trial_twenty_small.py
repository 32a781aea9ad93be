"""Trial 20's small findings: ``Memory.recall`` refuses what the tools refuse (L8); a
missing ``--project-root`` says where it looked (L9); ``import`` refuses a kind no filter
could select (L3), and ``verify`` finds and repairs one an older import stored."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client
from served import OCTOMEM_SERVE, server_env

from octomem.engine.errors import InvalidQueryError
from octomem.engine.memory.facade import open_memory

HASHING = {"pipeline": {"embedder": "hashing"}}

REFUSED: list[dict[str, Any]] = [
    {"tags": [""]}, {"tags": ["billing", "  "]}, {"top_k": 0}, {"top_k": -3},
]


def test_the_python_api_refuses_what_the_mcp_tool_refuses_with_its_words(
        tmp_path: Path) -> None:
    """Trial 20 L8: ``tags=[""]`` answered 0 hits and ``top_k=0`` the default 10 through
    ``Memory.recall`` (docs/python.md: it raises what the tools report as errors)."""
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as client:
        client.ok("remember", text="The on-call rotation changes on Mondays", tags=["ops"])
        said = [client.error("recall", query="on call", **case) for case in REFUSED]
    memory = open_memory(overrides=HASHING, project_root=project,
                         global_root=tmp_path / "home-global")
    try:
        assert len(memory.recall("on call", top_k=1).hits) == 1  # the store answers
        for case, tool_error in zip(REFUSED, said, strict=True):
            with pytest.raises(InvalidQueryError) as refused:
                memory.recall("on call", **case)
            assert str(refused.value) in tool_error, (case, tool_error)
    finally:
        memory.close()
    assert [m.split(": ", 1)[-1] for m in said] == [
        "tags: a tag is empty; give short non-empty labels"] * 2 + [
        "top_k: must be at least 1, got 0", "top_k: must be at least 1, got -3"]


@pytest.mark.parametrize("argument", ["kinds", "tags"])
def test_a_filter_given_as_one_string_is_refused_not_split_into_letters(
        tmp_path: Path, argument: str) -> None:
    memory = open_memory(overrides=HASHING, project_root=tmp_path,
                         global_root=tmp_path / "global")
    try:
        with pytest.raises(InvalidQueryError, match=rf"^{argument}: must be a list"):
            memory.recall("on call", **{argument: "FACT"})
    finally:
        memory.close()


def _refusal(tmp_path: Path, cwd: Path, root: str) -> str:
    """Start ``octomem serve --project-root ROOT`` in ``cwd`` as an MCP client would (its
    JSON config: no shell, so no ``~`` expansion) and return what it printed on stderr."""
    ran = subprocess.run([*OCTOMEM_SERVE, "--project-root", root], cwd=cwd,
                         env=server_env(tmp_path), stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=120)
    assert ran.returncode == 2, (ran.returncode, ran.stderr)
    return ran.stderr


def test_a_relative_or_home_project_root_that_is_missing_says_where_it_looked(
        tmp_path: Path) -> None:
    """Trial 20 L9: a client config's ``docproj`` or ``~/proj`` failed with a bare "no
    such directory", not saying relative to what (the server's working directory, which
    the client chooses) nor what ``~`` became."""
    started_in = tmp_path / "client-cwd"
    started_in.mkdir()
    relative = _refusal(tmp_path, started_in, "docproj")
    assert (f"error: --project-root docproj: no such directory (looked at {started_in}/docproj"
            f": a relative path is taken from the working directory, {started_in}; an MCP "
            "client chooses it, so give its configuration an absolute path)") in relative
    home = tmp_path / "home"
    tilde = _refusal(tmp_path, started_in, "~/proj")
    assert (f"error: --project-root ~/proj: no such directory (looked at {home}/proj: a "
            "leading ~ is expanded as a shell would") in tilde
    cli = octomem(started_in, "--project-root", "nope", "status", ok=False)  # a shell's user
    assert cli.code == 2 and cli.err.startswith(
        f"error: --project-root nope: no such directory (looked at {started_in}/nope: a "
        f"relative path is taken from the working directory, {started_in}); see"), cli.err
    assert not list(tmp_path.rglob(".octomem")), "a refused root created a memory"


def test_a_home_project_root_in_a_client_config_is_the_home_folder(tmp_path: Path) -> None:
    """``~`` is expanded as a shell would (a JSON config passes it as written): the real
    MCP client's server opens the project in ``$HOME/proj``."""
    project = tmp_path / "home" / "proj"
    project.mkdir(parents=True)
    with stdio_client(tmp_path, Path("~/proj")) as client:
        client.ok("remember", text="The on-call rotation changes on Mondays")
        assert client.ok("status")["project_root"] == str(project)
    assert (project / ".octomem" / "octomem.sqlite3").is_file()


def _exported_with_kinds(tmp_path: Path, kinds: list[str]) -> tuple[Path, list[str]]:
    """Export a real store of three statements and give its records ``kinds`` (as a script
    converting another tool's notes would); return the file and the lines."""
    source = tmp_path / "source"
    source.mkdir()
    for text in ("The café closes at nine on Sundays", "Renew the TLS certificate in March",
                 "The printer is on floor two"):
        octomem(source, "add", text)
    exported = tmp_path / "memory.jsonl"
    octomem(source, "export", str(exported))
    lines = exported.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines[1:]]
    assert [r["type"] for r in records] == ["document"] * 3
    for record, kind in zip(records, kinds, strict=True):
        record["kind"] = kind
    text = [lines[0], *(json.dumps(r, ensure_ascii=False) for r in records)]
    exported.write_text("\n".join(text) + "\n", encoding="utf-8")
    return exported, text


def test_import_refuses_a_kind_no_filter_can_select_and_stores_nothing(
        tmp_path: Path) -> None:
    """Trial 20 L3: ``to-do`` and ``Ünïcode_KIND`` were imported silently, and no
    ``--kind``/``kinds`` filter (CLI, MCP, API) can ever name them."""
    exported, lines = _exported_with_kinds(tmp_path, ["FACT", "to-do", "Ünïcode_KIND"])
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "add", "Deploys go out on Tuesdays")
    before = octomem(project, "export", "-").out.splitlines()[1:]
    ran = octomem(project, "import", str(exported), ok=False)
    assert ran.code == 1, ran.err
    line = 1 + next(i for i, text in enumerate(lines) if '"to-do"' in text)
    assert (f"{exported}:{line}: a malformed document record: kind: must be one word of ASCII "
            "letters, digits and _, starting with a letter, e.g. FACT; got 'to-do' (octomem "
            "add and every kinds filter refuse such a kind, so no filter could ever select "
            "this record; give it one that fits, e.g. TO_DO); nothing was imported") in ran.err
    assert octomem(project, "export", "-").out.splitlines()[1:] == before  # nothing lost
    fixed = "\n".join(lines).replace('"to-do"', '"TO_DO"')
    exported.write_text(fixed + "\n", encoding="utf-8")
    ran = octomem(project, "import", str(exported), ok=False)
    assert "got 'Ünïcode_KIND'" in ran.err and "e.g. UNICODE_KIND" in ran.err, ran.err


def test_import_stores_a_lower_case_kind_in_capitals_as_add_does(tmp_path: Path) -> None:
    exported, _ = _exported_with_kinds(tmp_path, ["fact", "todo", "Decision"])
    project = tmp_path / "project"
    project.mkdir()
    octomem(project, "import", str(exported))
    stored = [json.loads(line)["kind"] for line in
              octomem(project, "export", "-").out.splitlines()[1:]]
    assert sorted(stored) == ["DECISION", "FACT", "TODO"]
    hits = octomem(project, "search", "TLS certificate", "--kind", "todo", "--json").json()
    assert [h["text"] for h in hits["hits"]] == ["Renew the TLS certificate in March"]


def test_verify_finds_and_repairs_a_kind_an_older_import_stored(project: Path) -> None:
    """L3's leftover: a store that already holds ``to-do`` or ``fact`` (an older import
    stored them as given) had them unreachable by every kinds filter, and verify said
    "every row can be shown"."""
    import apsw

    todo = octomem(project, "add", "Renew the TLS certificate before March", "--kind", "TODO",
                   "--json").json()["id"]
    fact = octomem(project, "add", "The TLS certificate is issued by Let's Encrypt",
                   "--json").json()["id"]
    conn = apsw.Connection(str(project / ".octomem" / "octomem.sqlite3"))
    for doc_id, kind in ((todo, "to-do"), (fact, "fact")):
        conn.execute("UPDATE documents SET kind = ? WHERE id = ?", (kind, doc_id))
        conn.execute("UPDATE chunks SET kind = ? WHERE document_id = ?", (kind, doc_id))
    conn.close()
    assert octomem(project, "search", "TLS certificate", "--kind", "fact",
                   "--json").json()["hits"] == []

    found = octomem(project, "verify", ok=False)
    assert found.code == 1, found.out
    said = " ".join(found.out.split())
    assert (f"local: {todo}: kind 'to-do' cannot be selected by any kinds filter (repair "
            "stores TO_DO)") in said, said
    assert (f"local: {fact}: kind 'fact' cannot be selected by any kinds filter (repair "
            "stores FACT)") in said, said
    octomem(project, "verify", "--repair")
    assert octomem(project, "verify").code == 0
    for kind, doc_id in (("to_do", todo), ("fact", fact)):
        hits = octomem(project, "search", "TLS certificate", "--kind", kind, "--json").json()
        assert [h["id"] for h in hits["hits"]] == [doc_id]
        assert hits["hits"][0]["kind"] == kind.upper()
