"""Conversations in: chat JSON Lines, Claude Code sessions and BEIR turns become turns that
know their conversation, session, position, speaker and time."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from octomem.engine.errors import OctomemError
from octomem.engine.memory.facade import Memory
from octomem.engine.memory.sources import beir_documents
from octomem.engine.memory.transcripts import read_claude_code, sniff
from octomem.engine.turns import TURN_KIND

CLAUDE = Path(__file__).parent / "data" / "claude-code"
SESSION = "5f0c2a9e-1b7d-4c3e-9a61-0d2b7e4f8c13"
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo"
LOCOMO = LOCOMO if LOCOMO.is_dir() else Path("/work/shared/data/locomo")

TRIP = [
    {"conversation": "trip", "session": "1", "speaker": "Ana",
     "text": "Where should we stay in Lisbon?", "time": "2024-05-01T10:00:00Z"},
    {"conversation": "trip", "session": "1", "speaker": "Ben",
     "text": "In Alfama, near the castle; the hotel has a roof terrace.",
     "time": "2024-05-01T10:01:00Z"},
    {"conversation": "trip", "session": "2", "speaker": "Ana",
     "text": "Did you book the train to Porto?", "time": "2024-05-03T18:30:00Z"},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def stored_turns(memory: Memory) -> dict[str, tuple[str, dict]]:
    storage = memory.scopes.require("local").arms.storage
    return {c.document_id: (c.text, dict(c.metadata)) for c in storage.iter_chunks()}


def test_claude_code_keeps_typed_text_and_replies_and_drops_the_rest() -> None:
    path = CLAUDE / f"{SESSION}.jsonl"
    assert sniff(path) == "claude-code"
    turns = read_claude_code(path)
    assert [(d.id, d.text) for d in turns] == [
        ("claude:u-0001", "user: Which database should the billing service use for invoices?"),
        ("claude:a-0005", "assistant: PostgreSQL 16, the one already in docker-compose.yml: "
         "invoices need row-level security and exact numeric amounts.\n\nKeep money in "
         "numeric(12,2) columns, never floats."),
        ("claude:u-0010", "user: Good. Schedule the migration for Friday after the release."),
        ("claude:a-0012", "assistant: Noted: the invoice table migration runs on Friday, after "
         "the release is tagged."),
    ]
    first = turns[0]
    assert first.kind == TURN_KIND and first.title == "4 March 2025, 09:12 UTC"  # a Z time
    assert dict(first.metadata) == {
        "conversation": SESSION, "session": SESSION, "position": 0, "speaker": "user",
        "role": "user", "time": "2025-03-04T09:12:00+00:00", "source": "claude-code",
        "project": "/home/dev/billing-service"}
    assert first.event_time == 1741079520.0
    assert [d.metadata["position"] for d in turns] == [0, 1, 2, 3]
    everything = " ".join(d.text for d in turns)
    for dropped in ("look at the compose file", "image: postgres", "Sub-agent", "/cost",
                    "Total cost", "Caveat"):
        assert dropped not in everything


def test_chat_transcript_grows_without_duplicates(memory: Memory, tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "trip.jsonl", TRIP[:2])
    _, first = memory.ingest(str(path))
    assert first.added == ["trip:0", "trip:1"]
    turns = stored_turns(memory)
    assert turns["trip:1"] == ("Ben: In Alfama, near the castle; the hotel has a roof terrace.", {
        "conversation": "trip", "session": "1", "position": 1, "speaker": "Ben",
        "time": "2024-05-01T10:01:00+00:00"})
    write_jsonl(path, TRIP)
    _, second = memory.ingest(str(path))
    assert second.added == ["trip:2"] and second.unchanged == ["trip:0", "trip:1"]
    assert len(stored_turns(memory)) == 3
    hits = memory.recall("train to Porto", kinds=[TURN_KIND]).hits
    assert hits[0].chunk.document_id == "trip:2" and hits[0].chunk.metadata["session"] == "2"


def test_chat_defaults_role_and_conversation_from_the_file(tmp_path: Path) -> None:
    from octomem.engine.memory.transcripts import read_chat

    path = write_jsonl(tmp_path / "support.jsonl", [
        {"role": "user", "text": "My export fails"},
        {"speaker": "assistant", "text": "Which version?"},
        {"speaker": "Dana", "text": "2.3", "metadata": {"ticket": 42}}])
    docs = read_chat(path)
    assert [d.id for d in docs] == ["support:0", "support:1", "support:2"]
    assert [d.metadata.get("role") for d in docs] == ["user", "assistant", None]
    assert [d.metadata["speaker"] for d in docs] == ["user", "assistant", "Dana"]
    assert docs[2].metadata["ticket"] == 42 and docs[2].metadata["session"] == "support"
    assert docs[0].title is None and docs[0].event_time is None


@pytest.mark.parametrize(("line", "message"), [
    ("{not json", "not valid JSON"),
    ('["a list"]', "expected a JSON object"),
    ('{"speaker": "Ana"}', "no 'text'"),
    ('{"text": "hi"}', "give 'speaker' or 'role'"),
    ('{"text": "hi", "speaker": "Ana", "spaeker": "x"}', "unknown field 'spaeker'"),
    ('{"text": "hi", "speaker": "Ana", "time": "yesterday"}', "not an ISO-8601 time"),
    ('{"text": "hi", "role": "bot"}', "role must be 'user' or 'assistant'"),
])
def test_a_malformed_line_names_file_and_line_and_stores_nothing_of_it(
    memory: Memory, tmp_path: Path, line: str, message: str
) -> None:
    folder = tmp_path / "chats"
    folder.mkdir()
    write_jsonl(folder / "a-good.jsonl", TRIP)
    bad = folder / "b-bad.jsonl"
    bad.write_text(json.dumps(TRIP[0]) + "\n\n" + line + "\n", encoding="utf-8")
    (folder / "notes.md").write_text("# Notes\nThe castle opens at nine.\n")
    with pytest.raises(OctomemError, match=rf"b-bad\.jsonl:3: .*{message}"):
        memory.ingest(str(bad), fmt="chat")  # named on its own: an error
    assert memory.scopes.get("local") is None or not stored_turns(memory)
    _, report = memory.ingest(str(folder), fmt="chat")  # in a folder: skipped, named
    assert [(path.name, why.split(": ", 1)[0]) for path, why in report.skipped] == [
        ("b-bad.jsonl", f"{bad}:3")]
    assert message in report.skipped[0][1]
    assert sorted(stored_turns(memory)) == ["trip:0", "trip:1", "trip:2"]  # a-good's only


def test_folders_sniff_transcripts_and_leave_other_jsonl_alone(
    memory: Memory, tmp_path: Path
) -> None:
    folder = tmp_path / "project-folder"
    shutil.copytree(CLAUDE, folder)
    write_jsonl(folder / "trip.jsonl", TRIP)
    write_jsonl(folder / "data.jsonl", [{"_id": "x", "value": 3}])
    (folder / "README.md").write_text("# Readme\nThe billing service.\n")
    _, report = memory.ingest(str(folder))
    kinds = {d: memory.find(d)[0][1].kind for d in report.added}
    assert sorted(kinds.values()).count(TURN_KIND) == 7 and len(kinds) == 8
    with pytest.raises(OctomemError, match="data.jsonl: neither a chat transcript"):
        memory.ingest(str(folder / "data.jsonl"))
    (folder / "script.py").write_text("print(1)\n")
    with pytest.raises(OctomemError, match="not a text file or transcript"):
        memory.ingest(str(folder / "script.py"))


def test_claude_code_folder_ingest_is_idempotent(memory: Memory) -> None:
    _, first = memory.ingest(str(CLAUDE), fmt="claude-code")
    assert first.added == ["claude:u-0001", "claude:a-0005", "claude:u-0010", "claude:a-0012"]
    _, again = memory.ingest(str(CLAUDE), fmt="claude-code")
    assert again.added == [] and len(again.unchanged) == 4


def test_beir_rows_naming_conversation_and_speaker_are_turns(tmp_path: Path) -> None:
    rows = [
        {"_id": "c1_D1:1", "title": "1:56 pm on 8 May, 2023", "text": "Ana: I adopted a cat.",
         "metadata": {"conv_id": "c1", "session": 1, "speaker": "Ana",
                      "date_time": "1:56 pm on 8 May, 2023"}},
        {"_id": "q7|s1|0", "title": "2023/05/20 (Sat) 00:43", "text": "user: Tips for a lens?",
         "metadata": {"qid": "q7", "session": "s1", "speaker": "user",
                      "date_time": "2023/05/20 (Sat) 00:43", "turn": 0}},
        {"_id": "c1_D1:2", "title": "1:56 pm on 8 May, 2023", "text": "Ben: What is its name?",
         "metadata": {"conv_id": "c1", "session": 1, "speaker": "Ben",
                      "date_time": "1:56 pm on 8 May, 2023"}},
        {"_id": "doc-1", "title": "Cats", "text": "Cats sleep a lot.", "metadata": {"year": 2020}},
    ]
    write_jsonl(tmp_path / "corpus.jsonl", rows)
    docs = {d.id: d for d in beir_documents(tmp_path)}
    ben, lens, plain = docs["c1_D1:2"], docs["q7|s1|0"], docs["doc-1"]
    assert ben.kind == lens.kind == TURN_KIND and plain.kind == "DOC"
    assert dict(ben.metadata) == {
        "conv_id": "c1", "session": "1", "speaker": "Ben", "date_time": "1:56 pm on 8 May, 2023",
        "conversation": "c1", "position": 1, "time": "2023-05-08T13:56:00"}
    assert lens.metadata["role"] == "user" and lens.metadata["conversation"] == "q7"
    assert lens.metadata["position"] == 0 and lens.metadata["time"] == "2023-05-20T00:43:00"
    assert ben.title == "1:56 pm on 8 May, 2023" and ben.event_time == 1683554160.0
    assert dict(plain.metadata) == {"year": 2020}


@pytest.mark.skipif(not LOCOMO.is_dir(), reason="LoCoMo data not present")
def test_locomo_corpus_becomes_ordered_turns() -> None:
    positions: dict[str, list[int]] = {}
    for doc in beir_documents(LOCOMO):
        meta = doc.metadata
        assert doc.kind == TURN_KIND and doc.title and meta["speaker"] in doc.text
        assert "role" not in meta and meta["time"].startswith("20")
        positions.setdefault(meta["conversation"], []).append(meta["position"])
    assert len(positions) == 10
    assert all(p == list(range(len(p))) for p in positions.values())


def test_a_claude_code_reply_still_being_written_becomes_its_next_revision(
    memory: Memory, tmp_path: Path
) -> None:
    lines = (CLAUDE / f"{SESSION}.jsonl").read_text().splitlines()
    path = tmp_path / f"{SESSION}.jsonl"
    cut = next(i for i, line in enumerate(lines) if '"uuid": "a-0006"' in line)
    path.write_text("\n".join(lines[:cut]) + "\n")  # the reply's second record not yet written
    _, first = memory.ingest(str(path))
    assert first.added == ["claude:u-0001", "claude:a-0005"]
    assert memory.find("claude:a-0005")[0][1].text.endswith("exact numeric amounts.")
    path.write_text("\n".join(lines) + "\n")
    _, grown = memory.ingest(str(path))
    assert grown.replaced == ["claude:a-0005"] and grown.unchanged == ["claude:u-0001"]
    assert grown.added == ["claude:u-0010", "claude:a-0012"]
    reply = memory.find("claude:a-0005")[0][1]
    assert reply.text.endswith("never floats.") and reply.revision == 2


@pytest.mark.parametrize(("record", "message"), [
    ("{oops", "not valid JSON"),
    ('{"type": "user", "sessionId": "s", "uuid": "x"}', "without a 'message' object"),
    ('{"type": "assistant", "sessionId": "s", "message": {"content": 7}}',
     "message.content must be a string or a list"),
    ('{"type": "user", "sessionId": "s", "timestamp": "noon", "message": {"content": "hi"}}',
     "'timestamp': 'noon' is not an ISO-8601 time"),
])
def test_a_malformed_claude_code_record_names_its_line(
    memory: Memory, tmp_path: Path, record: str, message: str
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text((CLAUDE / f"{SESSION}.jsonl").read_text() + record + "\n")
    with pytest.raises(OctomemError, match=rf"session\.jsonl:16: .*{message}"):
        memory.ingest(str(path), fmt="claude-code")
    assert memory.scopes.get("local") is None or not stored_turns(memory)
