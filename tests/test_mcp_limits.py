"""Where the MCP ``ingest`` tool may read, and how large an input may be (issue 13, items 5
and 8): paths confined to the project root and ``ingest.allowed_roots``; remember, query,
file and top_k limits refused naming the argument and the setting, nothing stored; answers
echo previews, never whole inputs. Against a real server over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_stdio import stdio_client

pytestmark = pytest.mark.slow


def _one_line(message: str) -> str:
    assert "\n" not in message and "errors.pydantic.dev" not in message, message
    return message


def test_mcp_ingest_is_confined_to_the_project_and_allowed_roots(tmp_path: Path,
                                                                project: Path) -> None:
    secret = tmp_path / "outside" / "secret.md"
    secret.parent.mkdir()
    secret.write_text("The planted secret is zebra-kumquat\n")
    (project / "notes.md").write_text("The project note says tabs are banned\n")
    with stdio_client(tmp_path, project) as mcp:
        for path in (str(secret), "../outside/secret.md", str(secret.parent)):
            message = _one_line(mcp.error("ingest", path_or_text=path))
            assert "ingest.allowed_roots" in message, message
        assert mcp.ok("ingest", path_or_text="notes.md")["added"]
        hits = mcp.ok("recall", query="planted secret zebra-kumquat")["hits"]
        assert all("zebra" not in h["text"] for h in hits)
    # a symlink inside the project pointing outside is outside too
    (project / "link.md").symlink_to(secret)
    with stdio_client(tmp_path, project) as mcp:
        assert "ingest.allowed_roots" in mcp.error("ingest", path_or_text="link.md")
    allowed = json.dumps([str(secret.parent)])
    with stdio_client(tmp_path, project, OCTOMEM_INGEST__ALLOWED_ROOTS=allowed) as mcp:
        assert mcp.ok("ingest", path_or_text=str(secret))["added"]


def test_a_folder_link_to_outside_is_left_out_named_and_the_rest_stored(
        tmp_path: Path, project: Path) -> None:
    secret = tmp_path / "outside" / "hostname"  # no suffix: the allowing line names its folder
    secret.parent.mkdir()
    secret.write_text("The planted secret is zebra-kumquat\n")
    folder = project / "odd"
    folder.mkdir()
    (folder / "ok.md").write_text("The odd folder note says the lemur rota is weekly\n")
    (folder / "outside.md").symlink_to(secret)
    with stdio_client(tmp_path, project) as mcp:
        done = mcp.ok("ingest", path_or_text="odd")
        assert len(done["added"]) == 1, done
        [(where, why)] = [(s["path"], s["why"]) for s in done["skipped"]]
        assert where.endswith("outside.md") and "ingest.allowed_roots" in why, done
        assert json.dumps([str(secret.parent)]) in why, why
        hits = mcp.ok("recall", query="lemur rota zebra-kumquat")["hits"]
        assert hits and all("zebra" not in h["text"] for h in hits)
        assert "lemur" in hits[0]["text"]


def test_a_mistyped_relative_path_or_a_broken_link_is_refused_not_stored(
        tmp_path: Path, project: Path) -> None:
    (project / "notes" / "kestrel").mkdir(parents=True)
    (project / "notes" / "kestrel" / "a.md").write_text("Kestrels hover over the field\n")
    (project / "loop").symlink_to(project / "loop")
    with stdio_client(tmp_path, project) as mcp:
        for typo in ("notes/kestrl/", "docs/architecture", "notes\\kestrl"):
            message = _one_line(mcp.error("ingest", path_or_text=typo))
            assert "looks like a file path" in message and repr(typo) in message, message
        assert "loop" in _one_line(mcp.error("ingest", path_or_text="loop"))
        # a URL and words around a path are text
        assert mcp.ok("ingest", path_or_text="https://example.org/notes")["added"]
        assert mcp.ok("ingest", path_or_text="see notes/kestrl for the birds")["added"]
        assert mcp.ok("status")["documents"] == 2


def test_sizes_past_the_limits_are_refused_and_answers_never_echo_inputs(
        tmp_path: Path, project: Path) -> None:
    with stdio_client(tmp_path, project) as mcp:
        long_text = "word " * 20_000  # 100,000 characters
        message = _one_line(mcp.error("remember", text=long_text))
        assert "text" in message and "limits.remember_chars" in message and "ingest" in message
        assert len(message) < 500
        query = _one_line(mcp.error("recall", query="q " * 10_000))
        assert "query" in query and "limits.query_chars" in query and len(query) < 500
        assert "limits.top_k" in mcp.error("recall", query="anything", top_k=100_000)
        for argument, value in (("kind", "K" * 50_000), ("event_time", "x" * 50_000),
                                ("supersedes", "y" * 50_000)):
            refused = _one_line(mcp.error("remember", text="short", **{argument: value}))
            assert argument in refused and len(refused) < 700, (argument, len(refused))
        assert mcp.ok("status")["documents"] == 0
        near_limit = "sentence number one. " * 400  # 8,400 characters: stored
        stored = mcp.ok("remember", text=near_limit)
        assert len(json.dumps(stored)) < 2_000 and stored["id"]
        answer = mcp.ok("recall", query="sentence number " * 100)
        assert len(answer["query"]) <= 200
    big = project / "big.md"
    big.write_text("x " * 600_000)
    with stdio_client(tmp_path, project, OCTOMEM_LIMITS__FILE_BYTES="1000000") as mcp:
        message = mcp.error("ingest", path_or_text="big.md")
        assert "big.md" in message and "limits.file_bytes" in message


def test_the_cli_reads_any_path_but_skips_a_file_past_the_size_limit(tmp_path: Path,
                                                                     project: Path) -> None:
    from cli_run import octomem

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "small.md").write_text("The lambda notes say the cache is cold on Mondays\n")
    (outside / "big.md").write_text("y " * 5_000)
    ran = octomem(project, "ingest", str(outside), ok=False, OCTOMEM_LIMITS__FILE_BYTES="5000")
    assert "big.md" in ran.err and "limits.file_bytes" in ran.err
    assert ran.code == 1 and "added 1" in ran.out  # the rest stored; the skip is an error
    hits = octomem(project, "search", "lambda cache cold", "--json").json()["hits"]
    assert hits and "Mondays" in hits[0]["text"]
    long_statement = octomem(project, "add", "z " * 15_000, ok=False)
    assert long_statement.code == 2 and "limits.remember_chars" in long_statement.err
