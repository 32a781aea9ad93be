"""Trial 13 M4: a process out of open files (or memory) tells the MCP client what ran out.

Before, the server's open-file limit reached during a call gave ``Error executing tool
status: cannot open the store ... (unable to open database file); ... must exist and be
writable`` (a wrong cause) and, for a resource, a -32603 internal error; a MemoryError gave
the SDK's bare ``Error executing tool recall``. Now each says, in one line, which resource
ran out and that nothing stored was lost.

The limit is real: a running stdio server's RLIMIT_NOFILE is lowered with ``prlimit`` to
3 (stdin, stdout and stderr hold 0-2), so its next open fails with EMFILE in the kernel.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from mcp_stdio import RawServer

from octomem.engine.exhaustion import exhaustion

RAN_OUT = "the process ran out of open files (EMFILE: Too many open files"


def _prlimit(pid: int, soft: str) -> None:
    subprocess.run([str(shutil.which("prlimit")), f"--pid={pid}", f"--nofile={soft}:"],
                   check=True, capture_output=True)


def _said(reply: dict[str, Any]) -> tuple[bool, str]:
    """Return (failed, text) of a tools/call or resources/read reply."""
    if "error" in reply:
        return True, str(reply["error"]["message"])
    result = reply["result"]
    if "contents" in result:
        return False, str(result["contents"][0]["text"])
    return bool(result.get("isError")), str(result["content"][0]["text"])


def test_running_out_of_open_files_is_said_and_loses_nothing(tmp_path: Path) -> None:
    if shutil.which("prlimit") is None:
        pytest.skip("needs prlimit (util-linux) to lower a running server's open-file limit")
    project = tmp_path / "proj"
    (project / "docs").mkdir(parents=True)
    for i in range(12):
        (project / "docs" / f"n{i}.md").write_text(f"# Note {i}\nThe kestrel {i} nests.\n")
    server = RawServer(tmp_path, project)
    try:
        def call(name: str, **arguments: Any) -> dict[str, Any]:
            return server.request("tools/call", {"name": name, "arguments": arguments})

        assert not _said(call("remember", text="The deploy runs on Fridays"))[0]
        pid = server.proc.pid
        _prlimit(pid, "3")  # a new descriptor must be below 3: stdin, stdout, stderr hold them
        failures = []
        for reply in (call("status"), call("remember", text="The owl sleeps at noon"),
                      call("ingest", path_or_text=str(project / "docs")),
                      call("recall", query="kestrel"),
                      server.request("resources/read", {"uri": "octomem://memory/local"})):
            failed, text = _said(reply)
            if failed:
                failures.append(text)
                assert RAN_OUT in text and "nothing stored was lost" in text, reply
                assert "ulimit -n" in text and "\n" not in text, text
        assert failures, "no call reached the lowered open-file limit"
        _prlimit(pid, "4096")
        answer = _said(call("recall", query="when does the deploy run"))[1]
        assert "The deploy runs on Fridays" in answer, answer
        status = json.loads(_said(call("status"))[1])
        assert status["scopes"]["local"].get("unreadable") is None, status
    finally:
        server.close()


def test_memory_running_out_is_named_through_any_wrapper() -> None:
    """The line is found anywhere in the chain: an arm's error raised ``from`` a
    MemoryError, or SQLite's bare error while the process is out of descriptors."""
    try:
        try:
            raise MemoryError
        except MemoryError as inner:
            raise RuntimeError("the keyword arm failed") from inner
    except RuntimeError as exc:
        line = exhaustion(exc, "recall")
    assert line is not None and line.startswith(
        "recall: the process ran out of memory (MemoryError); nothing stored was lost"), line
    assert exhaustion(ValueError("a bad value")) is None
    assert "memory or threads" in str(exhaustion(RuntimeError("can't start new thread")))
