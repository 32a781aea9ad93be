"""Trial 13 M12: a chat line's ``time`` given as a number. Epoch seconds were taken
silently (the docs said only ISO-8601), epoch milliseconds (what many chat exports and
JavaScript's ``Date.now()`` write) failed with "'time': year 56302 is out of range". Now
the rule is documented (docs/conversations.md): a number is epoch seconds, from 10^11 on
epoch milliseconds (10^11 s would be the year 5138, 10^11 ms is 1973); any other number
is refused naming the file, the line and the rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.turns import EPOCH_MS_FROM, parse_turn_time


def test_seconds_milliseconds_and_iso_give_the_same_time(tmp_path: Path) -> None:
    lines = [{"speaker": "Ana", "text": "We land at 14:05", "time": 1714557600},
             {"speaker": "Ben", "text": "Dinner in Alfama", "time": 1714557600000},
             {"speaker": "Ana", "text": "See you there", "time": "2024-05-01T10:00:00Z"},
             {"speaker": "Ben", "text": "Half a second later", "time": 1714557600.5}]
    (tmp_path / "chat.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    octomem(tmp_path, "ingest", "chat.jsonl")
    records = [json.loads(x) for x in octomem(tmp_path, "export", "-").out.splitlines()]
    times = {r["text"]: r.get("event_time") for r in records if r.get("kind") == "TURN"}
    assert times == {"Ana: We land at 14:05": "2024-05-01T10:00:00Z",
                     "Ben: Dinner in Alfama": "2024-05-01T10:00:00Z",
                     "Ana: See you there": "2024-05-01T10:00:00Z",
                     "Ben: Half a second later": "2024-05-01T10:00:00.5Z"}, times


@pytest.mark.parametrize("number", ["1e300", "-1e20", "100000000000000000"])
def test_a_number_no_time_is_refused_naming_the_line_and_the_rule(
        tmp_path: Path, number: str) -> None:
    (tmp_path / "bad.jsonl").write_text(
        '{"speaker": "Ana", "text": "fine", "time": 1714557600}\n'
        f'{{"speaker": "Ben", "text": "odd time", "time": {number}}}\n')
    ran = octomem(tmp_path, "ingest", "bad.jsonl", ok=False)
    assert ran.code == 1, ran
    assert "bad.jsonl:2: 'time': " in ran.err and \
        "is no time octomem keeps: a number is epoch seconds, or epoch milliseconds from " \
        "10^11 on; or give an ISO-8601 time" in ran.err, ran.err
    assert not (tmp_path / ".octomem").exists()  # nothing of the file stored


def test_the_unit_switches_at_ten_to_the_eleventh() -> None:
    below, at = parse_turn_time(EPOCH_MS_FROM - 1), parse_turn_time(EPOCH_MS_FROM)
    assert below is not None and below.year == 5138
    assert at is not None and at.isoformat() == "1973-03-03T09:46:40+00:00"
