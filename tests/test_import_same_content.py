"""The same content stored at another time is not a conflict (trial 12, F5): a chat
transcript ingested in two stores, then one store's export imported into the other, was
"10 in conflict … revision 1 here has other content than in the file" although only
``created_at`` (the ingest time) differed. Now it is ``unchanged``, and a real conflict
names the fields that differ. Each test drives the CLI on real SQLite files."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem

TURNS = [
    ("user", "2025-06-07T21:02:00+01:00", "None of the videos from my phone reach Kestrel."),
    ("assistant", "2025-06-07T21:02:40+01:00", "What does the app show when a clip fails?"),
    ("user", "2025-06-07T21:04:10+01:00", "It gets to 60 percent and starts again from zero."),
]


def _transcript(path: Path, last: str = TURNS[2][2]) -> Path:
    rows = [{"conversation": "porto-uploads", "session": "2025-06-07-porto", "role": role,
             "time": time, "text": text} for role, time, text in TURNS]
    rows[-1]["text"] = last
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _two_stores(tmp_path: Path, last_in_b: str = TURNS[2][2]) -> tuple[Path, Path, Path]:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    chat = tmp_path / "chat.jsonl"  # e.g. ~/.claude/projects/... on two machines
    octomem(a, "ingest", str(_transcript(chat)))
    octomem(b, "ingest", str(_transcript(chat, last_in_b)))
    export = tmp_path / "a.jsonl"
    octomem(a, "export", "--scope", "local", str(export))
    return a, b, export


def _created(project: Path) -> dict[str, str]:
    out = octomem(project, "export", "--scope", "local", "-").out
    return {r["id"]: r["created_at"] for r in map(json.loads, out.splitlines())
            if r["type"] == "document"}


def test_the_same_transcript_ingested_twice_is_unchanged(tmp_path: Path) -> None:
    a, b, export = _two_stores(tmp_path)
    assert set(_created(a).values()).isdisjoint(_created(b).values())  # stored at other times
    kept = _created(b)
    ran = octomem(b, "import", str(export))
    assert "0 added, 0 replaced, 3 unchanged" in ran.out, ran.out
    assert "conflict" not in ran.out, ran.out
    assert _created(b) == kept  # left as it is


def test_a_real_conflict_names_the_field_that_differs(tmp_path: Path) -> None:
    _, b, export = _two_stores(tmp_path, "It stalls at 60 percent, then restarts.")
    ran = octomem(b, "import", str(export))
    assert "0 added, 0 replaced, 2 unchanged" in ran.out, ran.out
    assert "1 in conflict" in ran.out, ran.out
    assert "porto-uploads:2: revision 1 here differs from the file's in text" in ran.out, ran.out
