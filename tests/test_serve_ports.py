"""``serve``'s ports (trial 9): a port outside 0..65535 and two servers given one port are
usage errors (status 2, one line), refused before anything loads or listens."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem


@pytest.mark.parametrize(("args", "said"), [
    (["ui", "--port", "70000"], "error: invalid value for '--port': Input should be less "
     "than or equal to 65535; see `octomem ui --help`"),
    (["ui", "--port", "-1"], "error: invalid value for '--port': Input should be greater "
     "than or equal to 0; see `octomem ui --help`"),
    (["serve", "--ui-port", "70000"], "error: invalid value for '--ui-port': Input should be "
     "less than or equal to 65535; see `octomem serve --help`"),
    (["serve", "--http", "127.0.0.1:18805", "--ui-port", "18805"], "error: --ui-port 18805 is "
     "also --http's port: each server (MCP over HTTP, metrics, browser view) needs its own; "
     "see `octomem serve --help`"),
    (["serve", "--http", "127.0.0.1:18806", "--metrics-addr", "127.0.0.1:18806"],
     "error: --metrics-addr 18806 is also --http's port: each server (MCP over HTTP, "
     "metrics, browser view) needs its own; see `octomem serve --help`"),
    (["serve", "--metrics-addr", "127.0.0.1:18807", "--ui-port", "18807"], "error: --ui-port "
     "18807 is also --metrics-addr's port: each server (MCP over HTTP, metrics, browser "
     "view) needs its own; see `octomem serve --help`"),
])
def test_bad_ports_are_usage_errors(tmp_path: Path, args: list[str], said: str) -> None:
    ran = octomem(tmp_path, *args, ok=False)
    assert (ran.code, ran.out, ran.err) == (2, "", said + "\n")
    assert not (tmp_path / ".octomem").exists()
