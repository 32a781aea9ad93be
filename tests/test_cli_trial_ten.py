"""Small findings of fresh-user trial 10, each through the real CLI or the real browser
view's HTTP server."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from cli_run import octomem
from ui_support import running_view


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_forget_is_a_usage_error_naming_the_argument(tmp_path: Path,
                                                              blank: str) -> None:
    octomem(tmp_path, "add", "Tests run with make check")
    ran = octomem(tmp_path, "forget", blank, ok=False)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == ("error: ID_OR_TEXT: empty; give a statement's id or its exact text; "
                       "see `octomem forget --help`\n")
    assert "make check" in octomem(tmp_path, "search", "make check").out


def test_a_turn_given_no_time_is_not_shown_as_said_when_ingested(tmp_path: Path) -> None:
    with running_view(tmp_path) as view:
        chat = view.project / "trip.jsonl"
        chat.write_text(json.dumps({"conversation": "trip", "session": "1", "speaker": "Ben",
                                    "text": "Where is the camera charger?",
                                    "time": "2024-05-01T10:00:00Z"}) + "\n" +
                        json.dumps({"conversation": "trip", "speaker": "Ana",
                                    "text": "Yes, it is in the blue bag."}) + "\n")
        agent = view.agent()
        try:
            agent.ingest(str(chat))
        finally:
            agent.close()
        page = httpx.get(f"{view.url.rstrip('/')}/conversation/local/trip").text
        whens = [w.split("</span>")[0] for w in page.split('<span class="when">')[1:]]
        assert sorted(whens) == ["2024-05-01T10:00:00+00:00", "time not given"], whens


def test_the_search_page_counts_the_far_weaker_hits_it_left_out(tmp_path: Path) -> None:
    """Finding 16: the CLI said "N far weaker hits left out", the page said nothing."""
    with running_view(tmp_path) as view:
        agent = view.agent()
        try:
            agent.remember("The deploy key lives in the ops vault under deploy/prod")
            for i in range(12):
                agent.remember(f"Lunch order {i}: soup, bread and tea for the team")
            answer = agent.recall("where does the deploy key live", count=False)
        finally:
            agent.close()
        assert answer.hits and answer.weak_left_out > 0
        page = httpx.get(view.url, params={"q": "where does the deploy key live"}).text
        n = answer.weak_left_out
        assert (f'<p id="weak-left-out">{n} far weaker hit{"" if n == 1 else "s"} left out '
                "(relevance below retrieval.relative_floor times the best hit's, or below "
                "retrieval.weak_answer_floor when the best is low)</p>") in page
