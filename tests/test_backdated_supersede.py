"""A supersede whose ``event_time`` is before the superseded statement's own start says
that statement now holds at no time (trial 21: "The office is in Leeds", from 2024-09-01,
superseded by "… York" dated 2024-01-01, was found by no ``as_of`` any more, silently),
in the CLI's ``note:`` line and in the MCP answer's ``message``."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client

LEEDS = "The office is in Leeds"
YORK = "The office is in York"


def _said(text: str) -> str:
    return " ".join(text.split())


def test_the_cli_says_the_superseded_statement_holds_at_no_time(project: Path) -> None:
    leeds = octomem(project, "add", LEEDS, "--kind", "FACT", "--event-time", "2024-09-01",
                    "--json").json()["id"]
    ran = octomem(project, "add", YORK, "--kind", "FACT", "--event-time", "2024-01-01",
                  "--supersedes", leeds)
    york = ran.out.split()[1]
    assert _said(ran.out).endswith(
        f"note: the superseded statement {leeds} held from 2024-09-01T00:00:00+00:00, after "
        "this one's event_time 2024-01-01T00:00:00+00:00: it now holds at no time, so no "
        "--as-of returns it (--include-superseded still lists it). That is right if it was "
        f"never true; if it held until this change, `octomem forget {york}` (that makes "
        f"{leeds} current again) and add it again with an --event-time after "
        "2024-09-01T00:00:00+00:00")
    for as_of in ("2024-03-01", "2024-10-01"):  # what the note says: Leeds at no time
        hits = octomem(project, "search", "where is the office", "--as-of", as_of,
                       "--json").json()["hits"]
        assert [h["text"] for h in hits] == [YORK]
    # the way back the note gives: forget York, Leeds is current again, add York later
    octomem(project, "forget", york)
    later = octomem(project, "add", YORK, "--kind", "FACT", "--event-time", "2025-01-01",
                    "--supersedes", leeds)
    assert "note:" not in later.out
    hits = octomem(project, "search", "where is the office", "--as-of", "2024-10-01",
                   "--json").json()["hits"]
    assert [h["text"] for h in hits] == [LEEDS]


def test_the_mcp_answer_says_it_in_message(tmp_path: Path, project: Path) -> None:
    with stdio_client(tmp_path, project) as mcp:
        leeds = mcp.ok("remember", text=LEEDS, kind="FACT", event_time="2024-09-01")["id"]
        york = mcp.ok("remember", text=YORK, kind="FACT", event_time="2024-01-01",
                      supersedes=leeds)
        same_day = mcp.ok("remember", text="The office is in Hull", event_time="2024-01-01",
                          supersedes=york["id"])
        undated = mcp.ok("remember", text="Deploys run on Fridays")
        dated = mcp.ok("remember", text="Deploys run on Mondays", event_time="2023-05-01",
                       supersedes=undated["id"])
    assert york["superseded"]["id"] == leeds
    assert york["message"] == (
        f"the superseded statement {leeds} held from 2024-09-01T00:00:00+00:00, after this "
        "one's event_time 2024-01-01T00:00:00+00:00: it now holds at no time, so no `as_of` "
        "returns it (`include_superseded` still lists it). That is right if it was never "
        f"true; if it held until this change, forget {york['id']} (that makes {leeds} current "
        "again) and remember it again with an event_time after 2024-09-01T00:00:00+00:00")
    assert same_day["message"] is None  # a correction from the same moment: nothing to say
    # a statement stored without an event_time holds from when it was stored
    assert dated["message"].startswith(f"the superseded statement {undated['id']} held from "
                                       f"{undated['created_at']}, after this one's event_time "
                                       "2023-05-01T00:00:00+00:00: it now holds at no time")
