"""An answer that abstains still explains itself: ``--explain`` and ``--json`` (and MCP
``explain: true``, tests/test_mcp_stdio.py) show the best match that was left out, with
its relevance and each arm's rank and score (fresh-user trial 3, finding 3)."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem

from octomem.engine.cli.hits import raw_score


def test_explain_shows_the_rejected_best_match(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "The user prefers tabs", "--kind", "PREFERENCE", "--scope",
            "global")
    octomem(tmp_path, "add", "Tests run with make check", "--kind", "FACT")
    plain = octomem(tmp_path, "search", "indentation preference").out.splitlines()
    assert plain[0].startswith("no hits for 'indentation preference': nothing stored")
    assert plain[1] == "--explain shows the best match and why it was left out"
    lines = octomem(tmp_path, "search", "indentation preference", "--explain").out.splitlines()
    at = lines.index("the best match, not returned:")
    header, row = lines[at + 1].split(), lines[at + 3]
    assert header[:5] == ["#", "rel", "scope", "fts5", "sqlite-vec"]
    assert row.split()[:3] == ["1", "0.01", "global"] and "The user prefers tabs" in row
    data = octomem(tmp_path, "search", "indentation preference", "--json").json()
    assert data["hits"] == [] and "retrieval.relevance_floor 0.033" in data["abstained"]
    best = data["best_rejected"]
    assert best["text"] == "The user prefers tabs" and best["scope"] == "global"
    assert best["rank"] == 1 and best["band"] == "low" and 0 < best["relevance"] < 0.033
    assert best["relevance_from"] == {"cos": None, "coverage": 0.0}  # hashing: words only
    arms = best["arms"]
    assert "sqlite-vec" in arms
    cells = [f"{a['rank']} ({raw_score(a['score'])})" if a else "–"
             for a in (arms.get("fts5"), arms["sqlite-vec"])]
    expected = " ".join(cells).split()
    assert row.split("global", 1)[1].split()[: len(expected)] == expected

def test_an_answer_with_hits_has_no_rejected_best(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "The user prefers tabs", "--kind", "PREFERENCE")
    data = octomem(tmp_path, "search", "does the user prefer tabs", "--json").json()
    assert data["hits"][0]["text"] == "The user prefers tabs"
    assert data["abstained"] is None and data["best_rejected"] is None  # unset: null
