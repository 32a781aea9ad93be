"""A filter decides which hits an answer shows, never how relevant a hit is (trial 20 L7).

A document's hit is judged against the query's runs over its store
(:func:`octomem.engine.memory.scoped_search.background_runs`). Those runs were the
answer's own, taken under its filters: a filter that left more than
``retrieval.candidate_k`` documents judged them with the document weights against their
runs, a narrower one (fewer than ``candidate_k``: no background) with the turn weights, so
the same note answered "nothing stored answers this" under ``kinds: DOC`` and ``high``
under ``kinds: DOC, tags: 日本`` (182 templated notes of 2,852 documents).

Statements and chat turns too (trial 21): their relevance counted the question's words no
memory mentions *under the filters*, and the runs' reach and keyword strength were the
filtered ones, so ``--since`` or ``--tag`` moved a statement from 0.37 to 0.26 and a chat
turn shown unfiltered abstained under a time window holding it. Every hit is now judged
under :func:`~octomem.engine.memory.scoped_search.judging_filters`: kinds, tags and time
windows choose hits; metadata (one conversation, the benchmarks' ``--group-by``) chooses
the memory asked."""

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


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "kestrel"
#: Chat turns 6 and 7 of the example's chat, and the statements below, fall in these.
WINDOW = ("--since", "2025-06-07T20:09:00Z", "--until", "2025-06-07T20:10:30Z")
STATEMENTS = (("We chose Postgres for the billing service", "DECISION", "2024-03-01", True),
              ("The billing service deploys with Helm", "FACT", "2024-05-01", False),
              ("Billing alerts go to the #billing-oncall channel", "FACT", "2024-07-01", True),
              ("The billing database is backed up hourly", "FACT", "2024-09-01", True))


def _hits(root: Path, question: str, *filters: str) -> dict[str, float]:
    data = octomem(root, *NO_FLOORS, "search", question, "-k", "20", "--json", *filters,
                   hashing=False).json()
    return {h["id"]: h["relevance"] for h in data["hits"]}


def test_statements_and_turns_keep_their_relevance_under_tags_and_windows(
        tmp_path: Path) -> None:
    """The shipped model (its relevance weights are fitted for it, the hashing embedder's
    are not), on the README's example and four statements: trial 21's cases."""
    for text, kind, when, billing in STATEMENTS:
        octomem(tmp_path, "add", text, "--kind", kind, "--event-time", when,
                *(("--tag", "billing") if billing else ()), hashing=False)
    octomem(tmp_path, "ingest", str(EXAMPLE), hashing=False)
    cases = (("how is billing deployed?", ("--since", "2024-06-01")),
             ("how is billing deployed?", ("--tag", "billing")),
             ("how is billing deployed?", ("--kind", "FACT")),
             ("why did the uploads fail in Porto?", WINDOW),
             ("how big are the upload parts?", WINDOW))
    for question, filters in cases:
        everything, chosen = _hits(tmp_path, question), _hits(tmp_path, question, *filters)
        both = everything.keys() & chosen.keys()
        assert both, (question, filters)
        assert {i: everything[i] for i in both} == {i: chosen[i] for i in both}, \
            (question, filters)
    # with the floors: the turn the unfiltered answer shows, the window shows too
    porto = "why did the uploads fail in Porto?"
    unfiltered = octomem(tmp_path, "search", porto, "-k", "20", "--json", hashing=False).json()
    windowed = octomem(tmp_path, "search", porto, *WINDOW, "--json", hashing=False).json()
    in_window = set(_hits(tmp_path, porto, *WINDOW))
    shown = {h["id"] for h in unfiltered["hits"]} & in_window
    assert shown, unfiltered["hits"]  # trial 21: porto-uploads:7, 0.0605
    assert windowed["abstained"] is None, windowed["abstained"]
    assert {h["id"] for h in windowed["hits"]} == shown
