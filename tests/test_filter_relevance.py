"""A filter decides which hits an answer shows, never how relevant a hit is (trial 20 L7).

A document's hit is judged against the query's runs over its store
(:func:`octomem.engine.memory.scoped_search.background_runs`). Those runs were the
answer's own, taken under its filters: a filter that left more than
``retrieval.candidate_k`` documents judged them with the document weights against their
runs, a narrower one (fewer than ``candidate_k``: no background) with the turn weights, so
the same note answered "nothing stored answers this" under ``kinds: DOC`` and ``high``
under ``kinds: DOC, tags: 日本`` (182 templated notes of 2,852 documents)."""

from __future__ import annotations

import random
from pathlib import Path

from cli_run import octomem

QUESTION = "night train vienna sleeper"
#: Runs shorter than the store (60 notes) and longer than the tagged ones (10).
K = ("--set", "retrieval.candidate_k=42")
#: Nothing cut: every note's relevance is shown.
NO_FLOORS = ("--set", "retrieval.document_relevance_floor=0", "--set",
             "retrieval.relevance_floor=0", "--set", "retrieval.relative_floor=0",
             "--set", "retrieval.weak_answer_floor=0")
FILLER = "ticket booking seat window platform coffee delay station".split()


def _notes(root: Path) -> None:
    rng = random.Random(20)
    notes = root / "notes"
    notes.mkdir()
    for i in range(60):
        tags = "tags: [日本]\n" if i % 6 == 0 else ""
        words = [rng.choice(FILLER) for _ in range(rng.randint(5, 25))]
        (notes / f"n{i:03d}.md").write_text(
            f"---\n{tags}---\nThe night train to vienna is preferred on 2024-09-{i % 28 + 1:02d}. "
            f"{' '.join(words)}\n", "utf-8")
    octomem(root, "ingest", "notes")


def _relevance(root: Path, *filters: str) -> dict[str, float]:
    data = octomem(root, *K, *NO_FLOORS, "search", QUESTION, "-k", "60", "--json",
                   *filters).json()
    assert data["abstained"] is None, data["abstained"]
    return {h["id"]: h["relevance"] for h in data["hits"]}


def test_a_narrower_filter_gives_a_hit_the_same_relevance(tmp_path: Path) -> None:
    _notes(tmp_path)
    broad = _relevance(tmp_path, "--kind", "DOC")
    narrow = _relevance(tmp_path, "--kind", "DOC", "--tag", "日本")
    unfiltered = _relevance(tmp_path)
    assert len(broad) == 60 and len(narrow) == 10
    assert {i: broad[i] for i in narrow} == narrow  # the tag chose the hits, not their scores
    assert {i: unfiltered[i] for i in broad} == broad


def test_abstaining_does_not_depend_on_a_narrower_filter(tmp_path: Path) -> None:
    _notes(tmp_path)
    answers = [octomem(tmp_path, *K, "search", QUESTION, "--json", *f).json()
               for f in (("--kind", "DOC"), ("--kind", "DOC", "--tag", "日本"))]
    assert [a["abstained"] is None for a in answers] in ([True, True], [False, False])
    best = [a["hits"][0]["relevance"] if a["hits"] else a["best_rejected"]["relevance"]
            for a in answers]
    assert best[1] <= best[0]  # the narrower answer's best is one of the broader's hits
