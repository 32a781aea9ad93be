"""Trial 13, F8: a chat line's ``text`` or ``speaker`` that is a number was stored as its
digits (``"text": 5`` became the turn ``c: 5``), though docs/conversations.md promises "a
`text` that is not a string ... is an error naming the file and the line, and nothing of
that file is stored". Now it is, and the value is shown as JSON writes it (M7)."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem


def _lines(path: Path, *rows: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_number_as_text_or_speaker_is_refused_naming_file_and_line(project: Path) -> None:
    nums = _lines(project / "nums.jsonl", {"speaker": "c", "text": 5},
                  {"speaker": 7, "text": "num speaker"}, {"speaker": "d", "text": True},
                  {"role": 3, "text": "a role number"},
                  {"speaker": "e", "text": "fine", "conversation": 12, "id": 99})
    ran = octomem(project, "ingest", str(nums), ok=False)
    assert ran.code == 1
    assert f"{nums}:1: 'text' must be a non-empty string, got 5" in ran.err, ran.err
    assert f"{nums}:2: 'speaker' must be a non-empty string, got 7" in ran.err
    assert f"{nums}:3: 'text' must be a non-empty string, got true" in ran.err
    assert f"{nums}:4: 'role' must be a non-empty string, got 3" in ran.err
    assert f"{nums}:5" not in ran.err  # a numeric conversation or id is read as its digits
    assert not (project / ".octomem").exists()  # nothing of the file is stored

    fine = _lines(project / "fine.jsonl",
                  {"speaker": "e", "text": "The ferry leaves at 7", "conversation": 12,
                   "id": 99})
    octomem(project, "ingest", str(fine))
    hits = octomem(project, "search", "ferry leaves", "--json").json()["hits"]
    assert hits[0]["id"] == "99"
