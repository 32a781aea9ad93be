"""Trial 16 F6: a turn whose time has a zone is titled in UTC and says so (José at
10:05+02:00 was titled "10:05", after Ana's 10:00 UTC, though he spoke two hours before
her); a time without one keeps its title as written, so LoCoMo's and LongMemEval's
indexed text is unchanged."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

from octomem.engine.memory.transcripts import read_chat
from octomem.engine.turns import parse_turn_time, spoken_date

TRIP = [
    {"speaker": "Ana", "text": "This year we flew to Madrid on Iberia.",
     "time": "2025-05-01 10:00"},
    {"speaker": "José", "text": "I booked the Airbnb in Lavapiés.",
     "time": "2025-05-01T10:05:00+02:00"},
    {"role": "assistant", "text": "Noted the Madrid plans."},
]


def write_trip(folder: Path) -> Path:
    """Write :data:`TRIP` as ``folder/trip.jsonl``."""
    path = folder / "trip.jsonl"
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in TRIP),
                    encoding="utf-8")
    return path


def test_a_zoned_turn_is_titled_in_utc_and_a_naive_one_as_written(tmp_path: Path) -> None:
    ana, jose, reply = read_chat(write_trip(tmp_path))
    assert ana.title == "1 May 2025, 10:00"  # no zone: as written (taken as UTC)
    assert jose.title == "1 May 2025, 08:05 UTC"  # 10:05+02:00, before Ana
    assert jose.event_time == datetime(2025, 5, 1, 8, 5, tzinfo=UTC).timestamp()
    assert jose.metadata["time"] == "2025-05-01T10:05:00+02:00"  # kept as written
    assert reply.title is None
    assert spoken_date(datetime(2025, 5, 1, 23, 30, tzinfo=timezone(timedelta(hours=-5)))
                       ) == "2 May 2025, 04:30 UTC"  # the day moves with the zone
    assert spoken_date(datetime.fromtimestamp(1714557600, UTC)) == "1 May 2024, 10:00 UTC"


def test_benchmark_titles_without_a_zone_do_not_change() -> None:
    # LoCoMo's and LongMemEval's times, as a chat transcript of them would carry them
    for written, title in (("1:56 pm on 8 May, 2023", "8 May 2023, 13:56"),
                           ("2023/05/20 (Sat) 00:43", "20 May 2023, 00:43")):
        assert spoken_date(parse_turn_time(written)) == title
