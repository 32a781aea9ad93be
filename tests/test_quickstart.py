"""The README's quick start: its sample answers its questions with the right note first
(the bundled MiniLM model, as a new user runs it), and `.ci/run` runs it as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory

ROOT = Path(__file__).resolve().parents[1]
#: Each README question -> how the hit that answers it begins (a note's title, a chat
#: turn's text).
ANSWERS = {
    "what should I do about error KST-417?": "Runbook: error codes",
    "when do we release the phone app?": "Decision: releases go out on Thursday evenings",
    "how big are the upload parts?": "Decision: uploads are sent in 8 MiB parts and resume",
}


def quick_start() -> str:
    """Return the README's first ``sh`` block (the quick start's command)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"^```sh\n(.*?)^```", text, re.S | re.M)
    assert match, "README.md has no sh block"
    return match.group(1)


def test_the_readme_asks_the_questions_this_test_checks() -> None:
    command = quick_start()
    assert re.findall(r'search "([^"]+)" --explain', command) == list(ANSWERS)
    assert re.findall(r"ingest --scope global (\S+)", command) == ["examples/kestrel"]
    assert "README.md" not in command  # the demo must not search the page that asks it


def test_ci_runs_the_readme_quick_start_as_written() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "quick_start" in ci and "README.md" in ci


@pytest.mark.slow
def test_each_question_finds_its_note_first(tmp_path: Path) -> None:
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "demo")
    try:
        scope, report = memory.ingest(str(ROOT / "examples" / "kestrel"), scope="global")
        assert scope == "global" and len(report.added) == 19  # 9 notes, the chat's 10 turns
        for question, start in ANSWERS.items():
            answer = memory.recall(question, top_k=3)
            assert answer.semantic_available and {"fts5", "sqlite-vec"} <= set(answer.arms_ran)
            first = answer.hits[0].chunk
            assert (first.title or "").startswith(start) or first.text.startswith(start), question
            assert set(answer.hits[0].contributions) == {"fts5", "sqlite-vec"}  # both arms
    finally:
        memory.close()


def test_the_quick_start_installs_octomem_alone_and_ci_adds_dev_for_the_tests() -> None:
    command = quick_start()
    assert re.search(r"pip install -e \. ", command) and "[dev]" not in command
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    tests = next(b for b in re.findall(r"^```sh\n(.*?)^```", readme, re.S | re.M)
                 if "pytest" in b)
    assert '-e ".[dev]"' in tests  # contributors: pytest and the bench tools
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    dev, pytest_at = ci.index('-e ".[dev]"'), ci.index("-m pytest")
    assert ci.index("quick_start") < dev < pytest_at
