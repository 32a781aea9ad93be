"""``serve``'s ports (trial 9): a port outside 0..65535 and two servers given one port are
usage errors (status 2, one line), refused before anything loads or listens."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem


@pytest.mark.parametrize(("args", "said"), [
    (["ui", "--port", "70000"], "error: invalid value for '--port': 70000 is not a TCP port "
     "(0..65535; 0: any free port); see `octomem ui --help`"),
    (["ui", "--port", "-1"], "error: invalid value for '--port': -1 is not a TCP port "
     "(0..65535; 0: any free port); see `octomem ui --help`"),
    (["serve", "--ui-port", "70000"], "error: invalid value for '--ui-port': 70000 is not a "
     "TCP port (0..65535; 0: any free port); see `octomem serve --help`"),
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


def test_arguments_and_stdin_that_are_not_utf8_are_usage_errors(tmp_path: Path) -> None:
    """Trial 9: bytes that are not UTF-8 in an argument or in ``add -``'s stdin ended in a
    traceback (UnicodeEncodeError, or a tokenizer's TypeError for ``search``)."""
    import os
    import subprocess
    import sys

    octomem_script = str(Path(sys.executable).with_name("octomem"))
    env = {**os.environ, "HOME": str(tmp_path), "OCTOMEM_PIPELINE__EMBEDDER": "hashing"}
    for command in ("add", "search", "forget"):
        done = subprocess.run([octomem_script.encode(), command.encode(), b"caf\xe9"],
                              cwd=tmp_path, env=env, capture_output=True, timeout=120)
        assert (done.returncode, done.stdout) == (2, b""), done.stderr
        assert done.stderr.decode() == (  # trial 14 F15: no such file, so a terminal's bytes
            "error: argument 'caf\\xe9' is not UTF-8 text (the terminal sent it in another "
            "encoding, e.g. Latin-1: set the terminal or LANG to UTF-8; a file whose name is "
            f"not UTF-8: rename it); see `octomem {command} --help`\n")
    (tmp_path / b"caf\xe9.md".decode("utf-8", "surrogateescape")).write_text("x")
    named = subprocess.run([octomem_script.encode(), b"ingest", b"caf\xe9.md"], cwd=tmp_path,
                           env=env, capture_output=True, timeout=120)
    assert (named.returncode, named.stderr.decode()) == (2, (
        "error: argument 'caf\\xe9.md' is not UTF-8 text (a file whose name is not UTF-8: "
        "rename it); see `octomem ingest --help`\n"))
    piped = subprocess.run([octomem_script, "add", "-"], input=b"\xff\xfe bad", cwd=tmp_path,
                           env=env, capture_output=True, timeout=120)
    assert (piped.returncode, piped.stderr.decode()) == (2, (
        "error: TEXT: stdin is not UTF-8 text (invalid start byte at byte 0); see `octomem "
        "add --help`\n"))
    assert not (tmp_path / ".octomem").exists()
