"""A question's word counts as held by a hit in the inflections the keyword arm matches:
"pin" by "pinned", "run" by "running" (Porter's step 1b undoubling; the light fold alone
left "pinn" and "runn"). A tiny chat asked in other inflections than it was told in
abstained: with the model-free hashing embedder the keyword-only weights judge coverage
alone, and 1 of 3 words held is below the floor where 2 of 3 is well above it. The CLI
runs as a user runs it, on a real SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem

from octomem.engine.relevance import content_words, coverage
from octomem.engine.settings import load_settings
from octomem.engine.words import root

CHAT = [
    ("user", "Can you help me set up the CI for our web app?"),
    ("assistant", "Sure. Which CI service do you use?"),
    ("user", "GitHub Actions. We pinned Node 20.11 in .nvmrc for the build."),
    ("assistant", "Good, setup-node reads .nvmrc directly."),
]


def test_root_undoubles_as_porter_step_1b() -> None:
    words = ["pinn", "runn", "stopp", "plann", "miss", "fall", "buzz", "book", "add", "2000"]
    assert [root(w) for w in words] == [
        "pin", "run", "stop", "plan", "miss", "fall", "buzz", "book", "add", "2000"]
    query = content_words("which node version do I pin?")
    assert sorted(query) == ["node", "pin", "version"]
    assert coverage(query, "We pinned Node 20.11 in .nvmrc") == 2 / 3
    assert coverage(content_words("when did she go running?"), "She ran; she runs") == 0.0


def test_a_tiny_chat_answers_in_another_inflection(tmp_path: Path) -> None:
    (tmp_path / "chat.jsonl").write_text("".join(
        json.dumps({"role": role, "text": text}) + "\n" for role, text in CHAT))
    octomem(tmp_path, "ingest", "chat.jsonl")
    answer = octomem(tmp_path, "search", "which node version do I pin?", "--json").json()
    assert answer["abstained"] is None, answer["abstained"]
    best = answer["hits"][0]
    assert "pinned Node 20.11" in best["text"]
    assert best["relevance_from"]["coverage"] == round(2 / 3, 4)
    floor = load_settings().settings.retrieval.relevance_floor
    assert best["relevance"] > 4 * floor and best["band"] == "medium"
