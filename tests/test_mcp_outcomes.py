"""Every argument value an MCP caller got wrong is counted ``invalid`` in the call log and
the metrics (a wrong type, an unknown argument, a value out of range, an empty text or tag,
a malformed date), whether the SDK's schema, the strict argument check or the engine
refused it; what the tool met (an unknown id) is an ``error``. Over stdio, a real server."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client

#: (tool, arguments, outcome), in the order they are called.
CALLS = [
    ("remember", {"text": "Backups run at 02:00 UTC", "tags": ["ops"]}, "ok"),
    ("remember", {"text": "x", "scope": "nowhere"}, "invalid"),
    ("recall", {"query": "backups", "per": "sentence"}, "invalid"),
    ("recall", {"query": "backups", "top_k": -3}, "invalid"),
    ("recall", {"query": "backups", "context": 9}, "invalid"),
    ("recall", {"query": "backups", "since": "not-a-date"}, "invalid"),
    ("recall", {"query": "backups", "tags": [""]}, "invalid"),
    ("recall", {"query": "   "}, "invalid"),
    ("remember", {"text": ""}, "invalid"),
    ("remember", {"text": "y", "kind": "two words"}, "invalid"),
    ("remember", {"text": "y", "supersedes": "0" * 32}, "invalid"),
    ("recall", {"query": 123}, "invalid"),
    ("forget", {"text_or_id": "no statement says this"}, "error"),
    ("recall", {"query": "backups"}, "ok"),
]


def test_every_wrong_argument_value_is_invalid(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project, OCTOMEM_CALL_LOG="1") as client:
        for tool, arguments, outcome in CALLS:
            result = client.call(tool, arguments)
            assert result.is_error == (outcome != "ok"), (tool, arguments, result.content)
    ran = octomem(project, "--data-dir", str(tmp_path / "data"), "log", "tail", "--json",
                  "-n", "100", HOME=str(tmp_path / "home"))
    logged = [json.loads(line) for line in ran.out.splitlines() if line.strip()]
    assert [(c["tool"], c["outcome"]) for c in logged] == [(t, o) for t, _, o in CALLS]
