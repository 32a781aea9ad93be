"""What the twelfth fresh-user trial found in the browser view (F2): numbers in a query
string or an address are ASCII digits only. A superscript ``²`` was an HTTP 500 with a
traceback (``str.isdigit`` is true for it, ``int`` refuses it), ``٣`` and ``３`` were read
as 3, and ``top_k=1000000000`` was told it must be "at least 1". Real HTTP requests to
the real view, and the error page in headless Chromium."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from ui_support import browser_session, chromium_or_skip, fetch, running_view

WHOLE = "top_k: must be a whole number of at least 1, got "


def alert(body: str) -> str:
    """The error page's one line (``<p id="error" role="alert">...``)."""
    start = body.index('role="alert">') + len('role="alert">')
    return body[start:body.index("<", start)]


@pytest.mark.parametrize(("top_k", "message"), [
    ("²", WHOLE + "&#39;²&#39;"),
    ("٣", WHOLE + "&#39;٣&#39;"),
    ("３", WHOLE + "&#39;３&#39;"),
    ("-3", WHOLE + "&#39;-3&#39;"),
    ("0", WHOLE + "&#39;0&#39;"),
    ("1001", "top_k: 1,001 is more than limits.top_k (1,000)"),
    ("1000000000", "top_k: 1,000,000,000 is more than limits.top_k (1,000)"),
    ("9" * 5000, "top_k: a number of 5,000 digits is more than limits.top_k"),
])
def test_top_k_is_ascii_digits_within_the_limit(tmp_path: Path, top_k: str,
                                                message: str) -> None:
    with running_view(tmp_path) as view:
        base = view.url.rstrip("/")
        code, body = fetch(f"{base}/?q=kestrel&top_k={urllib.parse.quote(top_k)}")
        assert code == 400, body[:300]
        assert alert(body) == message
        code, body = fetch(f"{base}/?q=kestrel&top_k=0003")  # leading zeros: still 3
        assert code == 200, alert(body)


def test_other_numbers_in_addresses(tmp_path: Path) -> None:
    """``?hit=`` of a conversation and ``scope:chunk_id`` of an item: not ASCII digits (or
    too many of them) is no hit and no such chunk, never a 500."""
    with running_view(tmp_path) as view:
        agent = view.agent()
        try:
            agent.remember("Kestrel rota: weekly", scope="global")
        finally:
            agent.close()
        base = view.url.rstrip("/")
        for hit in ("²", "٣", "9" * 5000):
            code, body = fetch(f"{base}/conversation/global/none?hit={urllib.parse.quote(hit)}")
            assert code == 404, body[:300]
            assert alert(body) == "no conversation &#39;none&#39; in the global scope"
        assert fetch(f"{base}/item/global:1")[0] == 200
        for ref in ("global:%D9%A1", "global:%EF%BC%91", "global:" + "9" * 30):
            code, body = fetch(f"{base}/item/{ref}")
            assert code == 404, body[:300]


def test_the_browser_shows_the_one_line(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    chromium, driver = chromium_or_skip()
    with running_view(tmp_path) as view, browser_session(chromium, driver) as browser:
        browser.get(f"{view.url.rstrip('/')}/?q=kestrel&top_k=%C2%B2")
        assert browser.find_element(By.ID, "error").text == WHOLE + "'²'"
