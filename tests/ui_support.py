"""The browser view under test: a real memory (hashing embedder), the real HTTP server on a
free loopback port, a second memory standing in for an agent, and Debian's Chromium."""

from __future__ import annotations

import os
import shutil
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from octomem.engine.memory.facade import Memory, open_memory
from octomem.mcp_server.loader import MemoryLoader
from octomem.mcp_server.ui.options import UiOptions
from octomem.mcp_server.ui.server import UiServer, prepare_ui

#: Debian's browser and its driver (packages ``chromium`` and ``chromium-driver``).
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Flags that keep Chromium off the network and working as root in a container.
CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
                  "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
                  "--disable-extensions", "--window-size=1400,1000")


@dataclass
class View:
    """A running view and what stands around it."""

    server: UiServer
    loader: MemoryLoader
    overrides: dict[str, Any]
    project: Path
    global_root: Path

    @property
    def url(self) -> str:
        return self.server.url.split("?")[0]

    def agent(self) -> Memory:
        """Open the same memory a second time, as another process (an agent) would."""
        return open_memory(None, self.overrides, self.project, self.global_root)


def fetch(url: str) -> tuple[int, str]:
    """GET ``url``; return its HTTP status and body text (an error status too, 60 s at
    most)."""
    try:
        with urllib.request.urlopen(url, timeout=60) as page:
            return page.status, page.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@contextmanager
def running_view(root: Path, **options: Any) -> Iterator[View]:
    """Start the view over a fresh project memory under ``root``; stop it afterwards."""
    project, global_root = root / "project", root / "global"
    project.mkdir(parents=True, exist_ok=True)
    overrides = {"data_dir": str(root / "data"), "pipeline": {"embedder": "hashing"}}
    loader = MemoryLoader(partial(open_memory, None, overrides, project, global_root))
    server = prepare_ui(loader, UiOptions(port=0, **options)).start()
    loader.start()
    try:
        yield View(server, loader, overrides, project, global_root)
    finally:
        server.stop()
        loader.close(10.0)


def chromium_or_skip() -> tuple[str, str]:
    """Return Chromium's and chromedriver's paths; skip without them, but fail under CI
    (``.ci/run`` installs both, so a missing browser there is a broken CI)."""
    chromium = shutil.which("chromium") or (CHROMIUM if Path(CHROMIUM).exists() else None)
    driver = shutil.which("chromedriver") or (CHROMEDRIVER if Path(CHROMEDRIVER).exists()
                                              else None)
    try:
        import selenium  # noqa: F401
    except ImportError:
        driver = None
    if chromium and driver:
        return chromium, driver
    message = "Debian's chromium and chromium-driver (and selenium) are needed for browser tests"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"CI: {message}; .ci/run installs them")
    pytest.skip(message)


@contextmanager
def browser_session(chromium: str, driver: str) -> Iterator[Any]:
    """Run headless Chromium through chromedriver (no download, no network) with a fresh
    profile; quit it and remove the profile afterwards."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="octomem-ui-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield browser
    finally:
        browser.quit()
        shutil.rmtree(profile, ignore_errors=True)
