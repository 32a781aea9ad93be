"""What the thirteenth fresh-user trial found in the browser view: ``/memory?scope=galactic``
answered 200 and ignored the value (M6; every other bad parameter is a 400 naming it),
an item read "recalled 1 times", and a Markdown document's hit showed its title twice, the
second time as ``# Decision: ...`` (M9). Real HTTP requests to the real view, the pages in
headless Chromium."""

from __future__ import annotations

from pathlib import Path

from ui_support import browser_session, chromium_or_skip, fetch, running_view

DECISION = ("# Decision: uploads are sent in 8 MiB parts and resume\n\n"
            "2025-06-09. The phone app sends uploads in 8 MiB parts, so a dropped "
            "connection resumes from the last part.\n")


def test_the_memory_page_names_a_bad_scope_and_shows_one_scope(tmp_path: Path) -> None:
    with running_view(tmp_path) as view:
        agent = view.agent()
        try:
            agent.remember("Kestrel rota: weekly", scope="global")
        finally:
            agent.close()
        base = view.url.rstrip("/")
        code, body = fetch(f"{base}/memory?scope=galactic")
        assert code == 400, body[:300]
        assert "scope: must be &#39;local&#39; or &#39;global&#39;, got &#39;galactic&#39;" \
            in body
        code, body = fetch(f"{base}/memory?scope=global")
        assert code == 200 and 'id="scope-global"' in body and 'id="scope-local"' not in body
        assert "Kestrel rota" in body
        code, body = fetch(f"{base}/memory")
        assert code == 200 and 'id="scope-global"' in body and 'id="scope-local"' in body


def test_one_recall_is_said_in_the_singular(tmp_path: Path) -> None:
    with running_view(tmp_path) as view:
        agent = view.agent()
        try:
            stored = agent.remember("The kestrel nests in the old barn", scope="local")
            agent.recall("where does the kestrel nest")  # counted: recalled once
        finally:
            agent.close()
        code, body = fetch(f"{view.url.rstrip('/')}/item/{stored.document.id}")
        assert code == 200 and "<th>recalled</th><td>1 time, last " in body, body


def test_a_markdown_hit_shows_its_title_once(tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    chromium, driver = chromium_or_skip()
    notes = tmp_path / "project" / "decisions"
    notes.mkdir(parents=True)
    (notes / "uploads.md").write_text(DECISION)
    with running_view(tmp_path) as view, browser_session(chromium, driver) as browser:
        agent = view.agent()
        try:
            agent.ingest(str(notes / "uploads.md"))
        finally:
            agent.close()
        base = view.url.rstrip("/")
        browser.get(f"{base}/?q=how big are the upload parts?")
        first = browser.find_elements(By.CSS_SELECTOR, "a.open")[0].text
        assert first.startswith("Decision: uploads are sent in 8 MiB parts and resume "
                                "2025-06-09. The phone app"), first
        assert "#" not in first and first.count("Decision:") == 1, first


def test_a_search_of_an_empty_memory_does_not_call_semantic_search_unavailable(
        tmp_path: Path) -> None:
    """Trial 14 F13: on a fresh install (no store) the search page said 'semantic search
    unavailable' beside 'nothing is stored', although no arm ran and the model is fine.
    The warning stays for an answer whose arms ran without the semantic one."""
    with running_view(tmp_path) as view:
        status, body = fetch(view.url + "?q=where+do+we+deploy")
        assert status == 200 and "arms ran: <b>none</b>" in body, body[-2000:]
        assert "semantic search unavailable" not in body
        agent = view.agent()
        try:
            agent.remember("We deploy on Tuesdays only")
        finally:
            agent.close()
        status, body = fetch(view.url + "?q=where+do+we+deploy")
        assert status == 200 and "We deploy on Tuesdays only" in body
        assert "semantic search unavailable" not in body  # the hashing embedder ran


def test_the_memory_page_says_a_superseded_statement_was_forgotten(tmp_path: Path) -> None:
    """Trial 13 M2: after the superseded statement was forgotten, the memory page still
    said "supersedes <id>", whose item page is a 404."""
    with running_view(tmp_path) as view:
        agent = view.agent()
        try:
            old = agent.remember("The database is PostgreSQL 15", scope="global").document.id
            new = agent.remember("The database is PostgreSQL 16", scope="global",
                                 supersedes=old).document.id
            agent.forget(old, scope="global")
        finally:
            agent.close()
        code, body = fetch(f"{view.url.rstrip('/')}/memory?scope=global")
        assert code == 200 and new in body, body[:500]
        assert f"supersedes a forgotten statement (<code>{old}</code>)" in body, body
