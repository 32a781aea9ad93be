"""The browser view's memory page lists what ``octomem://memory/{scope}`` lists: the
scope's statements newest first by when each happened, ingested documents and
conversation turns counted and linked, never in the statements' places (trial 16: the
page showed the newest 200 documents of any kind, so an ingested folder hid every
statement). Real headless Chromium, a real SQLite store."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import browser_session, chromium_or_skip, running_view

from octomem.engine.memory.view import scope_markdown
from octomem.mcp_server.ui import views


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, driver = chromium_or_skip()
    with browser_session(chromium, driver) as session:
        yield session


def css(browser: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By
    return browser.find_elements(By.CSS_SELECTOR, selector)


def open_link(browser: Any, link: Any) -> None:
    """Open ``link``'s address and wait for the page (a link in a scrolled box may be
    hidden from a click)."""
    browser.get(link.get_attribute("href"))


def test_statements_come_first_files_and_turns_are_counted_and_linked(
        tmp_path: Path, browser: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views, "SHOWN_STATEMENTS", 3)
    with running_view(tmp_path) as view:
        docs = view.project / "docs"
        docs.mkdir()
        for i in range(25):
            (docs / f"n{i:02}.md").write_text(f"# Rota {i}\n\nNote {i} about the lighthouse\n")
        (view.project / "ferry.jsonl").write_text("".join(
            json.dumps({"speaker": "Ana", "text": f"Turn {i} about the ferry"}) + "\n"
            for i in range(4)), encoding="utf-8")
        agent = view.agent()
        try:
            dated = agent.remember("Production database is PostgreSQL 16.3", kind="FACT",
                                   event_time="2026-12-25").document.id  # recorded first
            agent.ingest(str(docs))
            agent.ingest(str(view.project / "ferry.jsonl"))
            facts = [agent.remember(f"Fact {i}: the ferry leaves at {9 + i}", kind="FACT",
                                    event_time=f"2025-01-0{i + 1}").document.id
                     for i in range(3)]
            decision = agent.remember("Releases go out on Thursdays",
                                      kind="DECISION").document.id
            resource = scope_markdown(agent, "local")
        finally:
            agent.close()
        browser.get(f"{view.url}memory?scope=local")
        rendered = css(browser, "#scope-local .rendered")[0].get_attribute("textContent")
        # the statements, newest by when each happened: 2026-12-25, today, 2025-01-03
        assert "PostgreSQL 16.3" in rendered and "Thursdays" in rendered, rendered
        assert [n for n in range(3) if f"Fact {n}:" in rendered] == [2]
        assert rendered.index("PostgreSQL 16.3") < rendered.index("Fact 2:")
        assert "lighthouse" not in rendered and "Turn 0" not in rendered
        assert ("Not listed here: 25 ingested documents (recall finds them) and 4 "
                "conversation turns (recall finds them) and 2 older statements") in rendered
        # the resource's statements (it lists up to 500), cut to the newest three
        linked = {a.text for a in css(browser, "#scope-local .rendered a")}
        assert linked == {dated, decision, facts[2]}
        assert all(f"`{i}`" in resource for i in [dated, decision, *facts])
        files = css(browser, "#files-local li a")
        assert len(files) == views.SHOWN_SOURCES == 20
        assert "(25; the newest 20 here" in css(browser, "#files-local h3")[0].text
        assert {f.text for f in files} <= {f"Rota {i}" for i in range(25)}
        talks = css(browser, "#conversations-local li a")
        assert [t.text for t in talks] == ["ferry"]
        assert "(4 turns)" in css(browser, "#conversations-local h3")[0].text
        # every link leads somewhere: a statement's item, a file's item, the transcript
        statement = [a for a in css(browser, "#scope-local .rendered a") if a.text == dated]
        assert statement, "the dated statement's id links to its item"
        open_link(browser, statement[0])
        assert css(browser, "#item-text")[0].text == "Production database is PostgreSQL 16.3"
        browser.get(f"{view.url}memory?scope=local")
        open_link(browser, css(browser, "#files-local li a")[0])
        assert "lighthouse" in css(browser, "#item-text")[0].text
        browser.get(f"{view.url}memory?scope=local")
        open_link(browser, css(browser, "#conversations-local li a")[0])
        assert [t.text.split("\n")[-1] for t in css(browser, "#transcript .turn")] == \
            [f"Turn {i} about the ferry" for i in range(4)]


def test_a_scope_of_statements_only_shows_no_source_lists(tmp_path: Path,
                                                          browser: Any) -> None:
    with running_view(tmp_path) as view:
        agent = view.agent()
        try:
            agent.remember("Prefer small commits whose message says why", kind="PREFERENCE")
        finally:
            agent.close()
        browser.get(f"{view.url}memory")
        local = css(browser, "#scope-local")[0].get_attribute("textContent")
        assert "small commits" in local and "Not listed here" not in local
        assert css(browser, "#files-local") == [] and css(browser, "#conversations-local") == []
        assert "Nothing is remembered in this scope yet" in \
            css(browser, "#scope-global")[0].get_attribute("textContent")
