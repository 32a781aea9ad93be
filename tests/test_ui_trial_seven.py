"""What the seventh fresh-user trial found in the browser view and the MCP resources, with
the real parts: an unknown route is the view's styled 404 page (real HTTP, real
Chromium); control characters never reach a page's ``<title>`` or a Markdown resource
(a real stdio MCP server)."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_stdio import stdio_client
from ui_support import browser_session, chromium_or_skip, running_view

HOSTILE = "Escape test \x1b[31mRED\x1b[0m soh \x01 bell \x07 c1 \x9b end"  # a NUL is refused


def _no_controls(text: str) -> None:
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
    assert not bad, [hex(ord(c)) for c in bad]


def fetch(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as page:
            return page.status, page.headers["content-type"], page.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["content-type"], exc.read().decode()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, driver = chromium_or_skip()
    with browser_session(chromium, driver) as session:
        yield session


def test_unknown_routes_and_titles(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    with running_view(tmp_path) as view:
        base = view.url.rstrip("/")
        code, kind, body = fetch(f"{base}/nothere")
        assert (code, kind.split(";")[0]) == (404, "text/html")
        assert "no page at /nothere; the view has search (/)" in body
        assert "<title>error · octomem</title>" in body
        for query, shown in (("%00%ff", "\\x00\ufffd"), ("%1b%5b31mX", "\\x1b[31mX")):
            code, _, body = fetch(f"{base}/?q={query}")
            assert code == 200
            title = body[body.index("<title>"):body.index("</title>")]
            _no_controls(title)
            assert shown in title, title
        browser.get(f"{base}/nothere")
        assert browser.title == "error · octomem"
        assert browser.find_element(By.ID, "error").text.startswith("no page at /nothere")
        browser.get(f"{base}/?q=%1b%5b31mX")
        assert browser.title == "\\x1b[31mX · octomem"


def test_markdown_resources_escape_control_characters(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as client:
        client.ok("remember", text=HOSTILE, kind="PREFERENCE")
        for uri in ("octomem://session-start", "octomem://memory/local"):
            text = client.read(uri)
            _no_controls(text)
            assert "Escape test \\x1b[31mRED\\x1b[0m soh \\x01 bell \\x07 c1 \\x9b end" in text
