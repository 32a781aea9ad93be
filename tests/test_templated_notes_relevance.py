"""Trial 17 G13: a folder of templated tickets, and a question more than ``candidate_k``
of them answer word for word, was answered "nothing stored answers this".

Trial 16 F16's rule (a keyword run whose ``candidate_k`` entries all tie with its best is
no background) needed exactly equal BM25 scores; real templated notes differ by a word
(a follow-up naming the same service again), so the run had two values and the notes
were judged against their twins with the document weights: "who upgraded the redis
cluster?" abstained at 0.067 (floor 0.07) with a note of cosine 0.80 holding every
query word as the best rejected. A keyword run whose ``candidate_k``-th entry holds every
content word of the query is no background now either.

Real SQLite stores, the shipped MiniLM and relevance weights, the CLI as a user runs it.
"""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem

from octomem.engine.memory.facade import open_memory
from octomem.engine.relevance_features import coverage, run_stats, saturated, whole_query_run
from octomem.engine.types import Hit, Query
from octomem.engine.words import content_words, fold, keyword_root

SERVICES = ("redis", "kafka")
VERBS = ("upgraded", "restarted")
PEOPLE = ("ana", "ben", "chen", "dara", "eli")


def tickets(folder: Path, count: int) -> None:
    """Write ``count`` one-paragraph tickets in trial 17's template (its make_notes.py,
    taken in turn instead of at random): one in four says "the redis cluster was upgraded",
    and the follow-up names a service too, the same one in every other of them."""
    folder.mkdir()
    for i in range(count):
        service, verb = SERVICES[i % 2], VERBS[i // 2 % 2]
        (folder / f"n{i:04d}.md").write_text(
            f"# Ticket OPS-{i}\n\nOn day {i % 365} the {service} cluster was {verb} by "
            f"{PEOPLE[i % 5]} after alert {100 + i * 37 % 900}. Follow-up: check "
            f"{SERVICES[i // 4 % 2]} dashboards.\n", encoding="utf-8")


def search(project: Path, query: str) -> dict:
    return octomem(project, "search", query, "--top-k", "10", "--json", "--explain",
                   hashing=False).json()


def test_a_question_many_templated_notes_answer_is_answered(project: Path) -> None:
    """480 tickets, 120 of them "the redis cluster was upgraded by ..." (more than
    ``candidate_k`` = 100), their keyword scores in two values (the follow-up names redis
    again in half of them). The question they answer is answered, by such a note, judged
    as a turn (no ``cos_lift``), by recall and by ``Pipeline.search``; a ticket asked by
    its number keeps the document weights."""
    tickets(project / "notes", 480)
    octomem(project, "ingest", "notes", hashing=False)
    for query in ("who upgraded the redis cluster?", "which redis clusters were upgraded?",
                  "redis upgrade"):  # "upgrade" meets "upgraded" (words.keyword_root)
        answer = search(project, query)
        assert answer["hits"], (query, answer.get("abstained"), answer.get("best_rejected"))
        top = answer["hits"][0]
        assert "the redis cluster was upgraded by" in top["text"], top
        # "redis upgrade": judged as a turn, its coverage 1/2 by words.root ("upgrad" is
        # not "upgrade" there): medium, at a lower relevance than the other two
        least = 0.05 if query == "redis upgrade" else 0.1
        assert top["band"] in ("medium", "high") and top["relevance"] >= least, top
        assert "cos_lift" not in top["relevance_from"]
    numbered = search(project, "what happened in ticket OPS-321?")["hits"][0]
    assert "OPS-321\n" in numbered["text"] and "cos_lift" in numbered["relevance_from"]
    # Pipeline.search (HitJudge) judges the same hit alike
    memory = open_memory(project_root=project, global_root=project.parent / "global")
    try:
        asked = Query("who upgraded the redis cluster?", top_k=10)
        hit = memory.scopes.require("local").search(asked).hits[0]
    finally:
        memory.close()
    assert hit.relevance.cos_lift is None and hit.relevance.probability >= 0.1
    assert "the redis cluster was upgraded by" in hit.chunk.text


def test_the_kth_entry_holds_a_word_in_the_inflection_the_keyword_arm_matched() -> None:
    """Porter's step 5a (a final "e") and 1c ("y" after a consonant): a query's base word
    and what ``words.fold`` leaves of the entry's inflection share a keyword root, so
    "redis upgrade" finds its whole query in "the redis cluster was upgraded"; relevance's
    coverage keeps ``words.root`` (the weights were fitted on it)."""
    pairs = [("upgrade", "upgraded"), ("upgrade", "upgrading"), ("note", "notes"),
             ("price", "prices"), ("store", "stored"), ("agree", "agreed"),
             ("guarantee", "guaranteed"), ("policy", "policies"), ("study", "studied"),
             ("pin", "pinned")]
    assert [(keyword_root(fold(a)), keyword_root(fold(b))) for a, b in pairs] == [
        ("upgrad", "upgrad"), ("upgrad", "upgrad"), ("not", "not"), ("pric", "pric"),
        ("stor", "stor"), ("agr", "agr"), ("guarant", "guarant"), ("polici", "polici"),
        ("studi", "studi"), ("pin", "pin")]
    assert [keyword_root(w) for w in ("the", "use", "play", "key", "sky", "book")] == [
        "the", "use", "play", "key", "sky", "book"]
    texts = {99: "the redis cluster was upgraded by ana"}
    run = hits([3.6] * 17 + [3.1] * 83)
    assert whole_query_run("redis upgrade", run, 100, texts.get)
    assert not whole_query_run("redis upgrade policy", run, 100, texts.get)
    assert coverage(content_words("redis upgrade"), texts[99]) == 0.5  # coverage: root


def hits(scores: list[float]) -> list[Hit]:
    return [Hit(i, s, i + 1, "fts5") for i, s in enumerate(scores)]


def test_a_run_whose_kth_entry_holds_the_whole_query_is_no_background() -> None:
    texts = {99: "the redis cluster was upgraded by ana", 98: "the redis cluster"}
    run = hits([3.6] * 17 + [3.1] * 83 + [1.0] * 20)
    assert whole_query_run("who upgraded the redis cluster?", run, 100, texts.get)
    assert not whole_query_run("who upgraded the redis cluster?", run, 99, texts.get)
    assert not whole_query_run("who upgraded the redis cluster?", run[:99], 100, texts.get)
    assert not whole_query_run("who upgraded the redis cluster?", run, None, texts.get)
    assert not whole_query_run("who?", run, 100, texts.get)  # no content word
    assert not whole_query_run("redis upgraded", run, 100, {}.get)  # text unknown
    scores = [h.score for h in run]
    assert not saturated(scores, 100) and saturated(scores, 100, covered=True)
    cosines = [0.8] * 100
    assert run_stats(cosines, scores, 100).background
    assert not run_stats(cosines, scores, 100, covered=True).background
    assert run_stats(cosines, [0.0] * 100, 100, covered=True).background  # nothing matched
