"""What the seventh fresh-user trial found, run as a user runs it (the console entry point
or the installed script, a real SQLite store): ``COLUMNS=0`` prints at 80 columns; a bad
option value is a usage error (status 2, one line, the right ``--help``) and leaves
nothing behind."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import IMPORT_PROBE, octomem


def test_columns_zero_prints_at_the_fallback_width(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "Deploys happen on Tuesdays after the standup meeting")
    for args in (["status"], ["search", "deploys"], ["config", "retrieval.top_k"]):
        zero = octomem(tmp_path, *args, spawn=True, COLUMNS="0")
        eighty = octomem(tmp_path, *args, spawn=True, COLUMNS="80")
        assert zero.out.strip(), args
        if args[0] != "search":  # a search prints its own time
            assert zero.out == eighty.out, args


def _usage(tmp_path: Path, *args: str, spawn: bool = False) -> str:
    ran = octomem(tmp_path, *args, ok=False, spawn=spawn)
    assert ran.code == 2, (args, ran.err)
    assert ran.out == "" and ran.err.count("\n") == 1, (args, ran.err)
    return ran.err


def test_bad_option_values_are_usage_errors(tmp_path: Path) -> None:
    err = _usage(tmp_path, "export", "--format", "xml", "out.x")
    assert err == ("error: --format: must be 'jsonl' or 'md', got 'xml'; see "
                   "`octomem export --help`\n")
    assert not (tmp_path / "out.x").exists()  # refused before the file was created
    for value in ("127.0.0.1:99999", "localhost"):
        err = _usage(tmp_path, "serve", "--http", value)
        assert err.startswith(f"error: --http: expected HOST:PORT (e.g. 127.0.0.1:8765), "
                              f"got '{value}'") and err.endswith("; see `octomem serve --help`\n")
    err = _usage(tmp_path, "serve", "--metrics-addr", "0.0.0.0:19470")
    assert err.startswith("error: --metrics-addr: 0.0.0.0 is not a loopback address")
    assert err.endswith("; see `octomem serve --help`\n")
    err = _usage(tmp_path, "--config", str(tmp_path / "nonexistent.toml"), "status")
    assert err == (f"error: --config {tmp_path / 'nonexistent.toml'}: cannot be read: No such "
                   "file or directory; see `octomem --help`\n")
    assert not (tmp_path / ".octomem").exists()


def test_a_remote_ui_host_is_refused_before_the_server_loads(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE,
                           json.dumps(["ui", "--host", "0.0.0.0"])], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    *said, report = done.stderr.strip().splitlines()
    assert json.loads(report)["code"] == 2
    assert said == ["error: 0.0.0.0: the browser view listens on loopback addresses only "
                    "(127.0.0.1, ::1); to serve other machines add --allow-remote (serve: "
                    "--ui-allow-remote), which then requires a token; see `octomem ui --help`"]
    loaded = set(json.loads(report)["modules"])
    assert not loaded & {"uvicorn", "starlette", "numpy", "octomem.engine.memory",
                         "octomem.mcp_server.ui.server"}, loaded


def test_a_global_option_value_points_to_the_global_help(tmp_path: Path) -> None:
    for args in (["--set", "nosuch=1", "status"], ["--set", "retrieval.top_k=-4", "search", "x"],
                 ["--set", "foo", "search", "x"]):
        err = _usage(tmp_path, *args)
        assert err.endswith("; see `octomem --help`\n"), (args, err)
    # a command's own option still points to the command's help
    assert _usage(tmp_path, "search", "x", "--top-k", "0").endswith(
        "; see `octomem search --help`\n")


def test_an_empty_filtered_search_says_why(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "Deploys happen on Tuesdays", "--tag", "ops", "--tag", "release")
    ran = octomem(tmp_path, "search", "deploys", "--tag", "OPS")
    assert "no stored document has tag OPS (stored tags: ops, release; tags match exactly, " \
           "case included)" in ran.out
    assert "Tuesdays" in octomem(tmp_path, "search", "deploys", "--tag", "ops").out
    ran = octomem(tmp_path, "search", "deploys", "--tag", "", ok=False)
    assert (ran.code, ran.err) == (2, "error: --tag: a tag is empty; give short non-empty "
                                      "labels; see `octomem search --help`\n")
    ran = octomem(tmp_path, "search", "deploys", "--as-of", "2023-01-01")
    assert "nothing stored was valid yet at 2023-01-01T23:59:59Z (the earliest is from 20" \
        in ran.out, ran.out


@pytest.mark.slow
def test_a_search_reports_the_model_load_apart_from_the_query(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "The user prefers tabs for indentation", hashing=False)
    ran = octomem(tmp_path, "search", "indentation preference", "--json", hashing=False,
                  spawn=True)
    timings = ran.json()["timings_ms"]
    assert timings["load_model"] > 0 and timings["embed_query"] > 0
    assert timings["load_model"] + timings["embed_query"] < timings["total"] + 1
    shown = octomem(tmp_path, "search", "indentation preference", hashing=False, spawn=True)
    assert " ms of it loading the model)" in shown.out, shown.out
    # the hashing embedder loads nothing: no load_model step
    assert "load_model" not in octomem(tmp_path, "search", "indentation", "--json").json()[
        "timings_ms"]


def test_explain_shows_a_tiny_bm25_score_with_its_digits(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "runbook.md").write_text("# Runbook\nThe pager rotates every Monday.\n")
    octomem(tmp_path, "ingest", str(notes))
    ran = octomem(tmp_path, "--set", "retrieval.relevance_floor=0", "--set",
                  "retrieval.document_relevance_floor=0", "search", "pager", "--explain",
                  "--scope", "local")
    assert "(0.00)" not in ran.out, ran.out
    assert re.search(r"\b1 \(1e-06\)", ran.out), ran.out  # one document: FTS5's idf floor
