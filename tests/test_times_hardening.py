"""Times are checked at the door and a stored row that cannot be shown never breaks an
answer (issue 13, item 1): remember/import/as_of/since/until refuse out-of-range times
naming the argument and store nothing; recall and export skip an unrenderable row with a
warning; ``octomem verify [--repair]`` finds and fixes it."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

pytestmark = pytest.mark.slow

OUT_OF_RANGE = ("9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00", "10000-01-01",
                "-0001-01-01", "2025-13-01")


def test_mcp_refuses_out_of_range_times_and_stores_nothing(tmp_path: Path,
                                                          project: Path) -> None:
    with stdio_client(tmp_path, project) as mcp:
        for value in OUT_OF_RANGE:
            message = mcp.error("remember", text="The gamma release ships", event_time=value)
            assert message.count("\n") == 0 and "event_time" in message, message
        assert mcp.ok("status")["documents"] == 0
        kept = mcp.ok("remember", text="The gamma release ships", event_time="9999-12-30")
        for argument in ("since", "until", "as_of"):
            for value in ("9999-12-31T12:00", "0001-01-01T00:00", "10000-01-01"):
                message = mcp.error("recall", query="gamma release", **{argument: value})
                assert argument in message and "\n" not in message, message
        hits = mcp.ok("recall", query="gamma release")["hits"]
        assert [h["id"] for h in hits] == [kept["id"]]
        assert hits[0]["event_time"] == "9999-12-30T00:00:00+00:00"


def _export_line(**fields: object) -> str:
    header = {"type": "octomem-export", "format": 1, "scope": "local"}
    doc = {"type": "document", "id": "imported-1", "text": "The delta service moved",
           "kind": "FACT", "created_at": 1_700_000_000.0, **fields}
    return json.dumps(header) + "\n" + json.dumps(doc) + "\n"


@pytest.mark.parametrize("field,value", [
    ("created_at", 1e300), ("created_at", "yesterday"), ("event_time", -1e20),
    ("valid_to", float("nan")), ("last_recalled_at", 1e300), ("created_at", None),
])
def test_import_refuses_a_bad_time_naming_line_and_field(project: Path, field: str,
                                                         value: object) -> None:
    path = project / "in.jsonl"
    path.write_text(_export_line(**{field: value}))
    failed = octomem(project, "import", str(path), ok=False)
    assert failed.code == 1 and f"{path}:2" in failed.err and field in failed.err
    listed = octomem(project, "search", "delta service", "--json").json()
    assert listed["hits"] == []


def _plant_bad_time(store: Path, doc_id: str) -> None:
    """What an older octomem could store: an event time no calendar can show."""
    conn = apsw.Connection(str(store))
    conn.execute("UPDATE documents SET event_time = 1e300 WHERE id = ?", (doc_id,))
    conn.execute("UPDATE chunks SET valid_from = 1e300 WHERE document_id = ?", (doc_id,))
    conn.close()


def test_an_unrenderable_row_is_skipped_with_a_warning_and_verify_repairs_it(
        tmp_path: Path, project: Path) -> None:
    bad = octomem(project, "add", "The epsilon cache is warmed nightly", "--json").json()
    good = octomem(project, "add", "The epsilon queue is drained hourly", "--json").json()
    _plant_bad_time(project / ".octomem" / "octomem.sqlite3", bad["id"])

    answer = octomem(project, "search", "epsilon", "--json").json()
    assert [h["id"] for h in answer["hits"]] == [good["id"]]
    assert any(bad["id"] in w and "octomem verify --repair" in w for w in answer["warnings"])
    table = octomem(project, "search", "epsilon")
    assert bad["id"] in table.err and "epsilon queue" in table.out
    md = octomem(project, "export", "--format", "md", "-")
    assert "epsilon queue" in md.out and bad["id"] in md.err
    with stdio_client(tmp_path, project) as mcp:
        hits = mcp.ok("recall", query="epsilon")
        assert [h["id"] for h in hits["hits"]] == [good["id"]] and hits["warnings"]
        assert "epsilon queue" in mcp.read("octomem://memory/local")

    found = octomem(project, "verify", ok=False)
    assert found.code == 1 and bad["id"] in found.out and "event_time" in found.out
    octomem(project, "verify", "--repair")
    assert octomem(project, "verify").code == 0
    answer = octomem(project, "search", "epsilon cache", "--json").json()
    assert answer["hits"][0]["id"] == bad["id"] and not answer.get("warnings")


def test_a_transcript_turn_time_out_of_range_is_refused_naming_file_and_line(
        project: Path) -> None:
    chat = project / "chat.jsonl"
    chat.write_text(
        json.dumps({"conversation": "c", "speaker": "Ana", "text": "We leave on Friday",
                    "time": "2024-05-01T10:00:00Z"}) + "\n"
        + json.dumps({"conversation": "c", "speaker": "Ben", "text": "Friday is fine",
                      "time": "9999-12-31T23:59:59-14:00"}) + "\n")
    failed = octomem(project, "ingest", str(chat), ok=False)
    assert failed.code == 1 and f"{chat}:2" in failed.err and "time" in failed.err
    assert octomem(project, "search", "Friday", "--json").json()["hits"] == []
