"""Trial 16 F7: ``octomem search --json`` left out null keys (``title``, ``event_time``)
that the MCP ``recall`` answer carries as ``null``; ``add --json`` and ``forget --json``
likewise beside ``remember`` and ``forget``. One shape: every key, null when unknown."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client
from test_turn_title_zone import write_trip


def test_search_json_has_the_keys_recall_has_with_nulls(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    write_trip(project)
    octomem(project, "ingest", "trip.jsonl")
    cli = octomem(project, "search", "Madrid plans Airbnb", "--json").json()
    by_id = {h["id"]: h for h in cli["hits"]}
    reply = by_id["trip:2"]
    assert reply["title"] is None and reply["event_time"] is None  # present, null
    with stdio_client(tmp_path, project) as client:
        mcp = client.ok("recall", query="Madrid plans Airbnb", explain=True)
    assert set(cli) == set(mcp)
    mcp_hits = {h["id"]: h for h in mcp["hits"]}
    assert set(by_id) == set(mcp_hits)
    for id_, hit in by_id.items():
        assert set(hit) == set(mcp_hits[id_]), id_
        assert hit["title"] == mcp_hits[id_]["title"]
    stored = octomem(project, "add", "The team meets on Tuesdays", "--json").json()
    assert "title" in stored and stored["title"] is None
    gone = octomem(project, "forget", stored["id"], "--json").json()
    with stdio_client(tmp_path, project) as client:
        again = client.ok("remember", text="The team meets on Tuesdays")
        forgot = client.ok("forget", text_or_id=again["id"])
    assert set(stored) == set(again) and set(gone) == set(forgot)
