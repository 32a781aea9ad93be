"""The server's log handler writes to ``sys.stderr`` as it is when a record comes: one
bound to the stderr of its set-up time (a test runner's capture, closed since) printed
"--- Logging error ---" with a traceback into every later command's stderr."""

from __future__ import annotations

import io
import logging
import sys

import pytest

from octomem.mcp_server.logs import configure_logging


def test_a_record_after_the_set_up_stream_closed_goes_to_the_current_stderr(
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    first = io.StringIO()
    monkeypatch.setattr(sys, "stderr", first)
    configure_logging("text", "INFO")
    try:
        logging.getLogger("octomem.test").info("one")
        first.close()  # as a CLI runner closes what it captured
        now = io.StringIO()
        monkeypatch.setattr(sys, "stderr", now)
        logging.getLogger("octomem.test").info("two")
        assert "two" in now.getvalue() and "Logging error" not in now.getvalue()
    finally:
        root.handlers[:] = handlers  # as before this test
        root.setLevel(level)
