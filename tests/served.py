"""A real ``python -m octomem.mcp_server`` process for the HTTP, metrics and log tests:
spawned with every directory inside ``tmp_path``, its stderr read on a thread so a test
can wait for the lines the server prints (``octomem: ... at http://...``)."""

from __future__ import annotations

import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

#: Generous bound for spawn, imports and binding on a loaded 2-core machine.
START_LIMIT_S = 90.0


def server_env(tmp_path: Path, **env: str) -> dict[str, str]:
    """The environment a test server runs with: every directory under ``tmp_path``, the
    hashing embedder (no model), no inherited ``OCTOMEM_*``."""
    home = tmp_path / "home"
    base = {k: v for k, v in os.environ.items() if not k.startswith("OCTOMEM_")}
    return {**base, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"), "HF_HUB_OFFLINE": "1",
            "OCTOMEM_DATA_DIR": str(tmp_path / "data"),
            "OCTOMEM_PIPELINE__EMBEDDER": "hashing", **env}


#: ``octomem serve``, the console script beside this interpreter.
OCTOMEM_SERVE = (str(Path(sys.executable).with_name("octomem")), "serve")


class Served:
    """One server process (``python -m octomem.mcp_server`` unless ``command`` says
    otherwise); :meth:`wait_for` returns the first stderr line matching."""

    def __init__(self, tmp_path: Path, *args: str, stdin: bool = False,
                 command: tuple[str, ...] = (sys.executable, "-m", "octomem.mcp_server"),
                 **env: str) -> None:
        project = tmp_path / "project"
        project.mkdir(exist_ok=True)
        self.process = subprocess.Popen(
            [*command, "--project-root", str(project), *args],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, env=server_env(tmp_path, **env), text=True, bufsize=1,
        )
        self.stderr: list[str] = []
        self._lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(self.process.stderr,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.stderr.append(line)
            self._lines.put(line)

    def wait_for(self, pattern: str, limit_s: float = START_LIMIT_S) -> re.Match[str]:
        """Return the first stderr line (from now on) matching ``pattern``.

        :raises AssertionError: none within ``limit_s`` seconds, or the process ended.
        """
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.2)
            except queue.Empty:
                if self.process.poll() is not None and self._lines.empty():
                    break
                continue
            if found := re.search(pattern, line):
                return found
        raise AssertionError(f"no stderr line matching {pattern!r}:\n{''.join(self.stderr)}")

    def stop(self) -> None:
        """Terminate the server and wait for it."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
