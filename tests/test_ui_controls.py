"""Trial 13 M11: the browser view shows control and invisible characters of stored text
as escapes, in real Chromium.

Before, a statement holding a right-to-left override (U+202E) was shown raw: the page
read ``invoice<U+202E>fdp.exe`` as ``invoiceexe.pdf`` (text direction spoofing); ESC and a
zero-width space went through too. Now every page shows them as ``\\u202e``, ``\\x1b``,
``\\u200b``, as the CLI and the Markdown resources do; what a form sends back (the
search box's query, the replace form's text, hidden ids) stays exact.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import browser_session, chromium_or_skip, running_view

SPOOF = "Pay invoice\u202efdp.exe now\u200b, \x1b[31mred\x1b[0m and \u2066isolated\u2069"
SHOWN = "Pay invoice\\u202efdp.exe now\\u200b, \\x1b[31mred\\x1b[0m and \\u2066isolated\\u2069"
RAW = ("\u202e", "\u200b", "\x1b", "\u2066", "\u2069")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, driver = chromium_or_skip()
    with browser_session(chromium, driver) as session:
        yield session


def _page_text(browser: Any, url: str) -> str:
    from selenium.webdriver.common.by import By

    browser.get(url)
    return str(browser.find_element(By.TAG_NAME, "body").get_attribute("textContent"))


def test_pages_show_bidi_overrides_and_controls_escaped(tmp_path: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By

    with running_view(tmp_path, allow_writes=True) as view:
        agent = view.agent()
        try:
            doc = agent.remember(SPOOF, kind="FACT").document
        finally:
            agent.close()
        base = view.url.rstrip("/")
        for path in ("/?q=invoice", "/memory", f"/item/{doc.id}"):
            text = _page_text(browser, base + path)
            assert SHOWN in text, (path, ascii(text[:2000]))
            assert not any(char in text.replace(SPOOF, "") for char in RAW), \
                (path, ascii(text[:2000]))
        assert "\u202e" not in browser.title
        # the replace form edits the stored text itself, not its escapes
        box = browser.find_element(By.ID, "replace-text")
        assert box.get_attribute("value") == SPOOF
        browser.get(f"{base}/?q=invoice%E2%80%AEfdp")  # the user's own query, kept
        assert browser.find_element(By.ID, "q").get_attribute("value") == "invoice\u202efdp"
