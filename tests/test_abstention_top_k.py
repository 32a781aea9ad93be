"""Whether an answer abstains, and the best match it names, do not depend on ``top_k``
(fresh-user trial 6): the first :data:`~octomem.engine.memory.judge.JUDGED_HITS` hits
decide, the cut keeps the hits that reach their floor, and in a store holding both
documents and conversation turns the two kinds are ordered by their relevance.

The store: 40 notes full of "refund" and "window" (documents) and one chat whose turns
state the refund policy. The notes rank above the turns by fused score (the semantic
arm's cosines of the notes are higher), but their relevance is below the document
floor, the turns' above the turn floor. The arms are asked for the store's 42 chunks
(``retrieval.candidate_k``, :data:`RUNS`), so their runs are full and the notes are
judged with the document weights, as this test was written with (a store smaller than
the runs asked for judges its files as turns: ``tests/test_small_store_relevance.py``)."""

from __future__ import annotations

import json
import random
from pathlib import Path

from cli_run import octomem

from octomem.engine.memory.judge import JUDGED_HITS

WORDS = "invoice deploy shard gamma customer delta cache schema webhook stripe alpha retry"
QUESTION = "refund window policy"
#: Runs as long as the store (42 chunks): full, so the document weights apply.
RUNS = ("--set", "retrieval.candidate_k=42")


def _mixed_store(root: Path) -> None:
    rng = random.Random(6)
    notes = root / "notes"
    notes.mkdir()
    for i in range(40):
        words = ([rng.choice(WORDS.split()) for _ in range(30)]
                 + ["refund"] * rng.randint(8, 14) + ["window"] * rng.randint(8, 14))
        rng.shuffle(words)
        (notes / f"n{i:03d}.md").write_text(f"# Note {i}\n\n{' '.join(words)}\n", "utf-8")
    turns = [("user", "Remember the refund policy: returns are accepted for 14 days after "
                      "purchase."),
             ("assistant", "Noted: the refund policy allows returns up to 14 days after "
                           "purchase.")]
    (root / "chat.jsonl").write_text("".join(
        json.dumps({"session": "s1", "role": r, "text": t, "time": "2025-09-01T09:05:00Z"})
        + "\n" for r, t in turns), "utf-8")
    octomem(root, "ingest", "notes")
    octomem(root, "ingest", "chat.jsonl")


def _is_note(hit: dict) -> bool:
    return hit["kind"] == "DOC"


def test_a_small_top_k_keeps_the_answer_of_a_mixed_store(tmp_path: Path) -> None:
    _mixed_store(tmp_path)
    answers = {k: octomem(tmp_path, *RUNS, "search", QUESTION, "-k", str(k), "--json").json()
               for k in (1, 3, 12)}
    for k, data in answers.items():
        assert data["abstained"] is None, (k, data["abstained"])
        assert len(data["hits"]) == k
        first = data["hits"][0]  # either turn: both state the policy
        assert not _is_note(first) and "refund policy" in first["text"], k
    hits = answers[12]["hits"]
    turns, notes = [h for h in hits if not _is_note(h)], [h for h in hits if _is_note(h)]
    # the turns (medium band) come before every note (low band), whatever the fused score
    assert [h["rank"] for h in turns] == [1, 2] and len(notes) == 10
    assert all(h["band"] == "medium" for h in turns) and all(h["band"] == "low" for h in notes)
    assert min(h["relevance"] for h in turns) > max(h["relevance"] for h in notes)
    def shown(data: dict) -> list:
        return [(h["id"], h["rank"], h["relevance"]) for h in data["hits"]]

    assert shown(answers[3]) == shown(answers[12])[:3]
    assert shown(answers[1]) == shown(answers[12])[:1]
    # the notes keep their own order (the fused one: sqlite-vec's, better cosine first)
    cosines = [h["arms"]["sqlite-vec"]["score"] for h in notes]
    assert cosines == sorted(cosines, reverse=True)


def test_abstaining_and_its_best_match_do_not_depend_on_top_k(tmp_path: Path) -> None:
    _mixed_store(tmp_path)
    question = "how long is the refund window?"  # the best is not the first by fused score
    answers = {k: octomem(tmp_path, *RUNS, "search", question, "-k", str(k), "--json",
                          "--explain").json() for k in (1, 2, 5, JUDGED_HITS)}
    reasons = {data.get("abstained") for data in answers.values()}
    bests = {(d["best_rejected"]["text"], d["best_rejected"]["relevance"])
             for d in answers.values()}
    assert len(reasons) == 1 and None not in reasons, answers
    assert len(bests) == 1, bests
    (_, relevance), = bests
    assert f"relevance {relevance:.3f} is below" in reasons.pop()
    for data in answers.values():
        assert data["hits"] == [] and data["best_rejected"]["rank"] == 1
    lines = octomem(tmp_path, *RUNS, "search", question, "-k", "1",
                    "--explain").out.splitlines()
    row = lines[lines.index("the best match, not returned:") + 3]
    assert row.split()[:2] == ["1", f"{relevance:.2f}"]
