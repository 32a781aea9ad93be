"""An empty answer says why when nothing passed the filters (trial 10, finding 6): a
``--since``/``--until`` window no current statement became true in (superseded ones
counted), in the CLI's text and ``--json``, over MCP (``nothing_to_rank``), and an
abstained answer under such a window names it; the browser view says it too."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from cli_run import octomem
from mcp_stdio import stdio_client
from ui_support import running_view

OLD = "The API rate limit is 100 requests per minute"
NEW = "The API rate limit is 500 requests per minute"


def superseded_limit(project: Path) -> tuple[str, str]:
    """Store OLD (true from 2024-01-01), superseded by NEW (from 2024-07-01); their ids."""
    old = octomem(project, "add", OLD, "--kind", "FACT", "--event-time", "2024-01-01",
                  "--json").json()["id"]
    new = octomem(project, "add", NEW, "--kind", "FACT", "--event-time", "2024-07-01",
                  "--supersedes", old, "--json").json()["id"]
    return old, new


def test_a_window_holding_only_a_superseded_statement_says_so(tmp_path: Path) -> None:
    old, _ = superseded_limit(tmp_path)
    ran = octomem(tmp_path, "search", "rate limit", "--until", "2024-03-01")
    assert ran.out.splitlines()[0] == (
        "no hits for 'rate limit': no current statement became true before "
        "2024-03-02T00:00:00Z; 1 superseded one did (include superseded ones to see it)")
    as_json = octomem(tmp_path, "search", "rate limit", "--until", "2024-03-01",
                      "--json").json()
    assert as_json["hits"] == [] and as_json.get("abstained") is None
    assert as_json["nothing_to_rank"].startswith("no current statement became true before")
    history = octomem(tmp_path, "search", "rate limit", "--until", "2024-03-01",
                      "--include-superseded", "--json").json()
    assert [h["id"] for h in history["hits"]] == [old]
    assert history["nothing_to_rank"] is None


def test_a_window_no_statement_is_in_names_the_span_stored(tmp_path: Path) -> None:
    superseded_limit(tmp_path)
    octomem(tmp_path, "add", "Deploys need two approvals", "--kind", "RULE",
            "--event-time", "2024-09-15")
    later = octomem(tmp_path, "search", "rate limit", "--since", "2030-01-01")
    assert later.out.splitlines()[0] == (
        "no hits for 'rate limit': no stored statement became true from "
        "2030-01-01T00:00:00Z on (they span 2024-07-01 to 2024-09-15)")
    between = octomem(tmp_path, "search", "rate limit", "--since", "2024-08-01",
                      "--until", "2024-08-31")
    assert between.out.splitlines()[0] == (
        "no hits for 'rate limit': no stored statement became true from "
        "2024-08-01T00:00:00Z on and before 2024-09-01T00:00:00Z (they span 2024-07-01 to "
        "2024-09-15)")
    # a window something is in: ranked as usual, no reason invented
    found = octomem(tmp_path, "search", "rate limit", "--since", "2024-06-01", "--json").json()
    assert [h["text"] for h in found["hits"]][:1] == [NEW]
    assert found["nothing_to_rank"] is None


@pytest.mark.slow
def test_an_abstained_answer_under_a_window_names_the_window(tmp_path: Path) -> None:
    # the bundled MiniLM: relevance needs real cosines
    octomem(tmp_path, "add", "We use PostgreSQL 16 for the main database", "--kind", "FACT",
            "--event-time", "2024-01-10", hashing=False)
    octomem(tmp_path, "add", "The office plants are watered on Mondays", "--kind", "FACT",
            "--event-time", "2024-03-01", hashing=False)
    ran = octomem(tmp_path, "search", "quarterly tax filing deadline", "--since",
                  "2024-02-01", "--json", hashing=False).json()
    assert ran["hits"] == [] and ran["nothing_to_rank"] is None
    assert ran["abstained"].endswith(
        "; only what became true or was said from 2024-02-01T00:00:00Z on was searched")


@pytest.mark.slow
def test_the_mcp_recall_tool_says_why_nothing_was_ranked(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as client:
        old = client.ok("remember", text=OLD, kind="FACT", event_time="2024-01-01")["id"]
        client.ok("remember", text=NEW, kind="FACT", event_time="2024-07-01", supersedes=old)
        answer = client.ok("recall", query="rate limit", until="2024-03-01")
        assert answer["hits"] == [] and answer.get("abstained") is None
        assert answer["nothing_to_rank"] == (
            "no current statement became true before 2024-03-02T00:00:00Z; 1 superseded one "
            "did (include superseded ones to see it)")
        assert client.ok("recall", query="rate limit", kinds=["RULE"])["nothing_to_rank"] == (
            "no stored document has kind RULE (stored kinds: FACT)")
        kept = client.ok("recall", query="rate limit")
        assert kept["hits"][0]["text"] == NEW and kept.get("nothing_to_rank") is None


def test_the_browser_view_says_why_nothing_was_ranked(tmp_path: Path) -> None:
    with running_view(tmp_path) as view:
        agent = view.agent()
        try:
            old = agent.remember(OLD, kind="FACT", event_time="2024-01-01").document.id
            agent.remember(NEW, kind="FACT", event_time="2024-07-01", supersedes=old)
        finally:
            agent.close()
        page = httpx.get(view.url, params={"q": "rate limit", "until": "2024-03-01"}).text
        assert ('<p class="warn" id="nothing-to-rank">Nothing to rank: no current statement '
                "became true before 2024-03-02T00:00:00Z; 1 superseded one did") in page
        assert 'id="nothing-to-rank"' not in httpx.get(view.url,
                                                      params={"q": "rate limit"}).text
