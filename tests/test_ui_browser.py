"""The browser view in a real headless Chromium (Debian's chromium + chromium-driver):
search and its explain table, an item page, remember and forget, a stale form refused."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_support import View, browser_session, chromium_or_skip, running_view

from octomem.engine.memory.view import item

STATEMENTS = [
    ("The deploy runs on Fridays only after the billing tests pass", "DECISION", ["ci"]),
    ("Billing invoices are rendered with the PDF service on port 7000", "FACT", ["billing"]),
    ("Prefer small commits whose message says why", "PREFERENCE", []),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium, driver = chromium_or_skip()
    with browser_session(chromium, driver) as session:
        yield session


def seeded(view: View) -> list[str]:
    """Store the statements through a second memory (an agent); return their ids."""
    agent = view.agent()
    try:
        return [agent.remember(text, kind=kind, tags=tags).document.id
                for text, kind, tags in STATEMENTS]
    finally:
        agent.close()


def by_id(browser: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By
    return browser.find_element(By.ID, element_id)


def follow(browser: Any, element: Any) -> None:
    """Click a link or submit button and wait until the next page has replaced this one."""
    from selenium.webdriver.support.ui import WebDriverWait

    element.click()
    WebDriverWait(browser, 60).until(lambda _: replaced(element))
    WebDriverWait(browser, 60).until(
        lambda b: b.execute_script("return document.readyState") == "complete")


def replaced(element: Any) -> bool:
    """Return True once ``element``'s page is gone: selenium says it is stale, or Chromium,
    caught mid-navigation, says its node belongs to no document (CI failure, stop 19)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" not in str(exc):
            raise
        return True
    return False


def by_css(browser: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By
    return browser.find_elements(By.CSS_SELECTOR, selector)


def test_search_shows_the_explain_table(tmp_path: Path, browser: Any) -> None:
    with running_view(tmp_path) as view:
        ids = seeded(view)
        browser.get(view.url)
        box = by_id(browser, "q")
        box.send_keys("deploy fridays billing tests")
        follow(browser, by_id(browser, "search"))
        table = by_id(browser, "explain")
        heads = [th.text.split("\n")[0] for th in table.find_elements("css selector", "th")]
        assert heads[:3] == ["#", "relevance", "scope"]  # as the CLI's --explain
        assert heads[-3:] == ["fused", "recency", "hit"] and "score" not in heads
        assert "fts5" in heads and "sqlite-vec" in heads
        rows = by_css(browser, "#explain tbody tr")
        assert rows[0].get_attribute("data-id") == ids[0]
        # each arm's rank and score as the memory's own explained answer has them
        answer = view.loader.memory().recall("deploy fridays billing tests", count=False)
        top = answer.hits[0]
        cells = rows[0].find_elements("css selector", "td.arm-cell")
        arms = [h for h in heads if h in ("fts5", "sqlite-vec")]
        for arm, cell in zip(arms, cells, strict=True):
            rank, score = cell.text.split(" · ")
            assert int(rank) == top.contributions[arm].rank
            assert float(score) == pytest.approx(top.contributions[arm].score, rel=1e-3)
        # a GET search is not an agent's recall: nothing counted
        assert view.loader.memory().find(ids[0])[0][1].recalls == 0


def test_an_abstained_search_shows_the_best_match_it_left_out(tmp_path: Path,
                                                              browser: Any) -> None:
    with running_view(tmp_path) as view:
        seeded(view)
        query = "quarterly tax filing deadline of the Norwegian subsidiary"
        browser.get(f"{view.url}?q={query.replace(' ', '+')}")
        assert "retrieval.relevance_floor" in by_id(browser, "abstained").text
        assert by_id(browser, "rejected").text.startswith("The best match, not returned")
        rows = by_css(browser, "#explain tbody tr")
        agent = view.agent()
        try:
            answer = agent.recall(query, count=False)
        finally:
            agent.close()
        best = answer.best_rejected
        assert answer.hits == [] and best is not None and len(rows) == 1
        assert rows[0].get_attribute("data-id") == best.chunk.document_id
        assert rows[0].find_elements("css selector", "td")[1].text == \
            f"{best.relevance.probability:.2f}"


def test_filters_narrow_the_answer(tmp_path: Path, browser: Any) -> None:
    with running_view(tmp_path) as view:
        ids = seeded(view)
        browser.get(f"{view.url}?q=billing&kinds=FACT")
        rows = by_css(browser, "#explain tbody tr")
        assert [r.get_attribute("data-id") for r in rows] == [ids[1]]
        browser.get(f"{view.url}?q=billing&kinds=nope!")
        assert "kinds: must be one word of ASCII letters" in by_id(browser, "error").text


def test_open_an_item_from_the_answer(tmp_path: Path, browser: Any) -> None:
    with running_view(tmp_path) as view:
        ids = seeded(view)
        browser.get(f"{view.url}?q=invoices+PDF")
        follow(browser, by_css(browser, "#explain tbody tr a.open")[0])
        provenance = by_id(browser, "provenance").text
        assert ids[1] in provenance and "scope local · " in provenance
        assert "FACT" in provenance and "billing" in provenance
        assert by_id(browser, "item-text").text == STATEMENTS[1][0]
        chunk_rows = by_css(browser, "#chunks tbody tr")
        assert len(chunk_rows) == 1 and "marked" in chunk_rows[0].get_attribute("class")
        assert by_id(browser, "state").text == "current"
        assert by_css(browser, "#forget-form") == []  # read-only view: no write forms


def test_remember_and_forget_from_the_page(tmp_path: Path, browser: Any) -> None:
    with running_view(tmp_path, allow_writes=True) as view:
        seeded(view)
        browser.get(view.url)
        by_id(browser, "remember-text").send_keys("The staging database is reset every Monday")
        follow(browser, by_id(browser, "remember"))
        assert by_id(browser, "notice").text.startswith("Remembered ")
        new_id = browser.find_element("css selector", "#provenance code").text
        agent = view.agent()
        try:
            assert agent.find(new_id)[0][1].text == "The staging database is reset every Monday"
            by_id(browser, "forget-reason").send_keys("reset schedule changed")
            follow(browser, by_id(browser, "forget"))
            assert by_id(browser, "notice").text.startswith(f"Forgot {new_id}")
            assert agent.find(new_id) == []
            record = agent.scopes.require("local").arms.storage.get_forgotten(new_id)
            assert record is not None and record.reason == "reset schedule changed"
        finally:
            agent.close()


def test_a_stale_form_is_refused(tmp_path: Path, browser: Any) -> None:
    with running_view(tmp_path, allow_writes=True) as view:
        ids = seeded(view)
        browser.get(f"{view.url}item/{ids[2]}")
        agent = view.agent()  # after the page was read, an agent replaces the statement
        try:
            newer = agent.remember("Prefer small commits; the message says why and what",
                                   kind="PREFERENCE", supersedes=ids[2]).document.id
            follow(browser, by_id(browser, "forget"))
            error = by_id(browser, "error").text
            assert f"superseded by {newer!r}" in error and "nothing was changed" in error
            still = item(agent, ids[2])  # not forgotten: superseded, kept as history
            assert still.superseded_by == newer
            # the replace form from before the agent's write is refused too
            browser.back()
            by_id(browser, "replace-text").clear()
            by_id(browser, "replace-text").send_keys("a person's edit of an old read")
            follow(browser, by_id(browser, "replace"))
            assert "changed after it was read" in by_id(browser, "error").text
            texts = [d.text for d in agent.statements("local", include_superseded=True)]
            assert "a person's edit of an old read" not in texts
        finally:
            agent.close()


TURNS = [("Ana", "Where should we stay in Lisbon?"), ("Ben", "In Alfama, near the castle."),
         ("Ana", "Which train do we take to Sintra?"), ("Ben", "The 9:10 from Rossio.")]


def test_a_conversation_reads_as_a_transcript_with_the_hit_marked(tmp_path: Path,
                                                                     browser: Any) -> None:
    with running_view(tmp_path) as view:
        chat = view.project / "trip.jsonl"  # chat JSON Lines, as transcript ingest reads them
        chat.write_text("".join(json.dumps({
            "conversation": "trip", "session": "1", "speaker": who, "text": said,
            "time": f"2024-05-01T10:0{i}:00Z"}) + "\n" for i, (who, said) in enumerate(TURNS)))
        agent = view.agent()
        try:
            agent.ingest(str(chat))
        finally:
            agent.close()
        browser.get(f"{view.url}?q=train+Sintra&kinds=TURN")
        heads = [th.text.split("\n")[0] for th in by_css(browser, "#explain th")]
        assert "conversation" in heads  # the reranker that orders turns has its column
        shown = [(r.get_attribute("data-id"), r.find_elements("css selector", "td")[0].text,
                  r.find_elements("css selector", "td")[1].text)
                 for r in by_css(browser, "#explain tbody tr")]
        agent = view.agent()
        try:  # rows in the answer's order (the reranker's), relevance as the answer has it
            answer = agent.recall("train Sintra", kinds=["TURN"], count=False)
        finally:
            agent.close()
        assert shown == [(h.chunk.document_id, str(h.rank), f"{h.relevance.probability:.2f}")
                         for h in answer.hits]
        follow(browser, by_css(browser, "#explain tbody tr a.open")[0])
        assert by_css(browser, "#transcript .turn.marked")[0].text.endswith(TURNS[2][1])
        follow(browser, by_id(browser, "conversation-link"))
        turns = by_css(browser, "#transcript .turn")
        assert [t.text.split("\n")[-1] for t in turns] == [said for _, said in TURNS]
        marked = by_css(browser, "#transcript .turn.marked")
        assert len(marked) == 1 and marked[0].get_attribute("id") == turns[2].get_attribute("id")
        assert [t.find_element("css selector", ".speaker").text for t in turns] == \
            ["Ana", "Ben", "Ana", "Ben"]
