"""Trial 16 (a fresh user's break-it pass), how turns rank beside documents:

- F11: "what did you suggest for part timeouts?" lifts the assistant's turns
  (``arms.conversation.addressed``), and the reranker's first pick, a turn of little
  relevance, held every turn behind every document: the reply both arms ranked first came
  5th, behind a release-day note. The places each kind holds are decided before the
  reranker now, which re-orders turns among them only (and, trial 17 G20, never puts a
  turn holding no word of the question above one that does).
- F21: in a Claude Code memory "how did I fix the flaky invoice test?" put the assistant's
  fix below the user's question and unrelated notes: the assistant-aside term (and the
  reranker's user weights) took "I" for a LongMemEval-style user whose facts are in their
  own turns. A coding agent's turns (``source: claude-code``) are exempt.

Real SQLite, the default pipeline with MiniLM.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem

KESTREL = Path(__file__).resolve().parents[1] / "examples" / "kestrel"
ANSWER = "porto-uploads:7"  # "8 MiB is a reasonable start … Give each part a 30 second timeout"


def _hits(project: Path, query: str, *more: str) -> list[dict]:
    return octomem(project, "search", query, "--json", "--explain", *more,
                   hashing=False).json()["hits"]


def test_a_question_addressing_the_assistant_keeps_turns_in_their_places(
        project: Path) -> None:
    """F11: the reply is never behind a document that fusion ranked under it; trial 17
    G20: nor behind "Sounds good ..." (no word of the question), which was first: the
    reply is first with "you" as without."""
    octomem(project, "ingest", str(KESTREL), hashing=False)
    first = _hits(project, "what was suggested for part timeouts?", "-k", "10")
    assert first[0]["id"] == ANSWER, [h["id"] for h in first]
    for query in ("what did you suggest for part timeouts?",
                  "what timeout did you recommend per part?"):
        hits = _hits(project, query, "-k", "10")
        ids = [h["id"] for h in hits]
        assert ids[0] == ANSWER, (query, ids)
        assert hits[0]["arms"]["conversation"]["rank"] == 1  # the reranker's first turn
        top = _hits(project, query, "-k", "1")
        assert [h["id"] for h in top] == [ANSWER], (query, [h["id"] for h in top])


def _record(kind: str, uuid: str, second: int, content: object) -> str:
    return json.dumps({
        "type": kind, "sessionId": "7f3c2a10-5b1e-4c7e-9a1d-2e8f6b0c4d11", "uuid": uuid,
        "cwd": "/home/me/billing-api", "timestamp": f"2026-11-20T09:00:{second:02d}.000Z",
        "message": {"role": kind, "content": content}}) + "\n"


SESSION = "".join([
    _record("user", "u1", 2, "The invoice rounding test test_invoice_totals fails about one "
            "run in ten. Can you find out why?"),
    _record("assistant", "a1", 5, [{"type": "text", "text": "I'll look at the test file first."}]),
    _record("assistant", "a2", 7, [{"type": "text", "text": (
        "The flakiness comes from the test using float arithmetic on currency: the fixture "
        "picks random amounts with random.uniform, and sums like 0.1 + 0.2 round "
        "differently. Switching the Invoice model to decimal.Decimal with ROUND_HALF_EVEN "
        "fixes it; I also seeded the fixture with random.seed(1234).")}]),
    _record("user", "u2", 9, [{"type": "text", "text": (
        "Great. Use Decimal everywhere in billing then, and remember that we round "
        "half-even because finance asked for banker's rounding.")}]),
    _record("user", "u3", 11, "One more thing: the nightly invoice export sometimes runs "
            "late, can you check that test later?"),
])

NOTES = {
    "tags.md": "# Tags\n\nok tag test: the release tag test passes on main.\n",
    "export.md": "# Invoice export\n\nThe nightly invoice export must finish before 02:00 UTC.\n",
    "ci.md": "# CI\n\nTests run with make check; the flaky list is in ci/flaky.txt.\n",
    "billing.md": "# Billing\n\nInvoices are numbered per year; the test fixtures live in "
                  "tests/fixtures.\n",
}


def test_how_did_i_fix_finds_the_coding_agents_fix(project: Path) -> None:
    """F21: in a Claude Code session beside notes, the assistant's fix (first in the
    keyword run) is the first hit of "how did I fix …?", with no assistant-aside term;
    a user–assistant chat without that source keeps the term."""
    sessions = project / "sessions"
    sessions.mkdir()
    (sessions / "7f3c2a10-5b1e-4c7e-9a1d-2e8f6b0c4d11.jsonl").write_text(SESSION,
                                                                        encoding="utf-8")
    for name, text in NOTES.items():
        (project / name).write_text(text, encoding="utf-8")
    octomem(project, "ingest", "--format", "claude-code", "sessions", hashing=False)
    for name in NOTES:
        octomem(project, "ingest", name, hashing=False)
    for query in ("how did I fix the flaky invoice test?",
                  "how did we fix the flaky invoice test?"):
        hits = _hits(project, query, "-k", "5")
        assert hits[0]["text"].startswith("assistant: I'll look at the test file first."), (
            query, [h["text"][:40] for h in hits])
        assert "assistant_aside" not in (hits[0].get("relevance_from") or {}), hits[0]
    chat = project / "chat.jsonl"  # the same words, a plain user–assistant chat
    chat.write_text("".join(json.dumps(row) + "\n" for row in (
        {"role": "user", "text": "My sourdough starter smells of acetone.", "time": "2026-11-01"},
        {"role": "assistant", "text": "Feed your sourdough starter twice a day with equal "
         "flour and water; the acetone smell means it is hungry.", "time": "2026-11-01"},
    )), encoding="utf-8")
    octomem(project, "ingest", "chat.jsonl", hashing=False)
    hits = _hits(project, "how did I fix my sourdough starter?", "-k", "10")
    reply = next(h for h in hits if h["text"].startswith("assistant: Feed your sourdough"))
    assert (reply.get("relevance_from") or {}).get("assistant_aside") == 1.0, reply
