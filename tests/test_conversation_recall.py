"""Answers sized for an agent (context turns, a token budget), session start, and the
recall counter written off the query's path."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from octomem.engine.errors import InvalidQueryError
from octomem.engine.memory.context import estimate_tokens
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.memory.results import recall_result
from octomem.engine.memory.session_start import render
from octomem.engine.turns import TURN_KIND

TRAIN = [
    ("Ana", "Did you book the train to Porto for the trip?"),
    ("Ben", "Yes, the 9:09 on Saturday, seats 41 and 42."),
    ("Ana", "Great. Shall we also see the river cruise?"),
    ("Ben", "The cruise leaves at noon from the Ribeira pier."),
    ("Ana", "Lovely, I will pack sunscreen."),
]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    (tmp_path / "project").mkdir()
    # every hit stays (no cut of far weaker hits): these tests are about context and
    # packing, with the hashing embedder's cosines
    opened = open_memory(overrides={"pipeline": {"embedder": "hashing"},
                                    "retrieval": {"relative_floor": 0}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    yield opened
    opened.close()


@pytest.fixture
def chat(memory: Memory, tmp_path: Path) -> Memory:
    path = tmp_path / "porto.jsonl"
    path.write_text("".join(json.dumps({"speaker": s, "text": t, "session": "1",
                                        "time": f"2024-06-0{i + 1}T10:00:00"}) + "\n"
                            for i, (s, t) in enumerate(TRAIN)))
    memory.ingest(str(path))
    return memory


def test_a_hit_brings_its_neighbouring_turns(chat: Memory) -> None:
    answer = chat.recall("book the train to Porto", kinds=[TURN_KIND], context=1)
    top = answer.hits[0]
    assert top.chunk.document_id == "porto:0"
    around = answer.context[(top.scope, top.chunk.id)]
    assert [(t.chunk.document_id, t.offset) for t in around] == [("porto:1", 1)]
    wide = chat.recall("cruise leaves at noon", kinds=[TURN_KIND], context=2)
    hit = wide.hits[0]
    assert hit.chunk.document_id == "porto:3"
    assert [(t.chunk.document_id, t.offset) for t in wide.context[(hit.scope, hit.chunk.id)]] \
        == [("porto:1", -2), ("porto:2", -1), ("porto:4", 1)]
    model = recall_result("cruise leaves at noon", wide)
    first = model.hits[0]
    assert first.turn is not None and (first.turn.conversation, first.turn.position,
                                       first.turn.speaker) == ("porto", 3, "Ben")
    assert first.turn.time == "2024-06-04T10:00:00+00:00"  # no zone given: UTC (487d9ef)
    assert [(c.id, c.offset) for c in first.context or []] == [
        ("porto:1", -2), ("porto:2", -1), ("porto:4", 1)]
    assert first.context[1].text == "Ana: Great. Shall we also see the river cruise?"


def test_a_grown_conversation_finds_neighbours_stored_later(chat: Memory, tmp_path: Path) -> None:
    chat.remember("An unrelated statement stored in between", kind="FACT")
    path = tmp_path / "porto.jsonl"
    with path.open("a") as fh:
        fh.write(json.dumps({"speaker": "Ben", "text": "Sunscreen and hats, then."}) + "\n")
    chat.ingest(str(path))
    answer = chat.recall("pack sunscreen", kinds=[TURN_KIND], context=1)
    hit = next(h for h in answer.hits if h.chunk.document_id == "porto:4")
    assert [t.chunk.document_id for t in answer.context[(hit.scope, hit.chunk.id)]] == [
        "porto:3", "porto:5"]


def test_max_tokens_keeps_the_best_hits_that_fit_and_lists_the_cut(chat: Memory) -> None:
    full = chat.recall("book the train to Porto", kinds=[TURN_KIND])
    sizes = [estimate_tokens(f"{h.chunk.title}\n{h.chunk.text}") for h in full.hits]
    budget = sizes[0] + sizes[1] + 1
    packed = chat.recall("book the train to Porto", kinds=[TURN_KIND], max_tokens=budget)
    kept = [h.chunk.document_id for h in packed.hits]
    assert kept[:2] == [h.chunk.document_id for h in full.hits[:2]]
    assert packed.budget is not None and packed.budget.used <= budget
    cut = [c.chunk.document_id for c in packed.budget.cut]
    assert sorted(kept + cut) == sorted(h.chunk.document_id for h in full.hits)
    assert [c.rank for c in packed.budget.cut] == sorted(c.rank for c in packed.budget.cut)
    tiny = chat.recall("book the train to Porto", kinds=[TURN_KIND], max_tokens=16)
    assert len(tiny.hits) == 1 and tiny.hits[0].chunk.text.endswith("…") is (
        sizes[0] > 16) and tiny.budget.truncated == (full.hits[0].chunk.document_id
                                                     if sizes[0] > 16 else None)
    model = recall_result("q", packed)
    assert model.budget is not None and model.budget.tokens == packed.budget.used
    assert [c.id for c in model.budget.cut] == cut


def test_context_left_out_to_fit_the_budget_is_said(chat: Memory) -> None:
    """A hit kept without its context turns (they did not fit) is named in
    ``budget.context_dropped``, in the JSON model too; hits that kept theirs are not."""
    query = "book the train to Porto"
    with_context = chat.recall(query, kinds=[TURN_KIND], top_k=1, context=1)
    top = with_context.hits[0]
    around = with_context.context[(top.scope, top.chunk.id)]
    bare = estimate_tokens(f"{top.chunk.title}\n{top.chunk.text}")
    roomy = chat.recall(query, kinds=[TURN_KIND], top_k=1, context=1, max_tokens=400)
    assert roomy.budget.context_dropped == [] and roomy.context
    tight = chat.recall(query, kinds=[TURN_KIND], top_k=1, context=1, max_tokens=max(bare, 16))
    assert around and tight.budget.context_dropped == [top.chunk.document_id]
    assert tight.context == {} and [h.chunk.document_id for h in tight.hits] == ["porto:0"]
    assert recall_result(query, tight).budget.context_dropped == ["porto:0"]


def test_bad_context_and_budget_are_named(chat: Memory) -> None:
    with pytest.raises(InvalidQueryError, match="context: must be 0 to 5"):
        chat.recall("train", context=6)
    with pytest.raises(InvalidQueryError, match="max_tokens: must be at least 16"):
        chat.recall("train", max_tokens=3)


def test_recall_counts_are_written_after_the_answer(memory: Memory) -> None:
    stored = memory.remember("The deploy script lives in tools/ship.sh", kind="FACT")
    for _ in range(3):
        assert memory.recall("deploy script").hits[0].chunk.document_id == stored.document.id
    memory.recall("deploy script", count=False)
    doc = memory.find(stored.document.id)[0][1]  # find() waits for queued counts
    assert doc.recalls == 3 and doc.last_recalled_at is not None


def test_session_start_shows_rules_handoff_recent_and_recalled_within_budget(
    memory: Memory,
) -> None:
    rule = memory.remember("Never push to main without review", kind="RULE", scope="global")
    pref = memory.remember("The user prefers short answers", kind="PREFERENCE", scope="global")
    memory.remember("Handoff: the importer is half done", kind="HANDOFF")
    handoff = memory.remember("Handoff: importer done, write its docs next", kind="HANDOFF")
    popular = memory.remember("The staging server is called kestrel", kind="FACT")
    for i in range(12):
        memory.remember(f"Filler fact number {i} about module m{i}", kind="FACT")
    for _ in range(4):
        assert memory.recall("staging server kestrel", top_k=1).hits[0].chunk.document_id \
            == popular.document.id
    text = render(memory, 8192)
    order = [text.index(h) for h in ("## Standing rules and preferences", "## Handoff",
                                     "## Recent", "## Most recalled")]
    assert order == sorted(order)
    assert rule.document.id in text and pref.document.id in text
    assert "importer done" in text and "half done" not in text and handoff.document.id in text
    recalled = text[text.index("## Most recalled"):]
    assert popular.document.id in recalled and "recalled 4×" in recalled
    assert "Filler fact number 11" in text and "Filler fact number 0 " not in text
    small = render(memory, 700)
    assert len(small.encode()) <= 700 and "Never push to main" in small
    assert "more statements did not fit in 700 bytes" in small


def test_session_start_counts_the_turns_it_leaves_out(chat: Memory) -> None:
    text = render(chat, 8192)
    assert "No statements yet; stored for `recall` to search: 5 conversation turns in the " \
        "local scope." in text, text
    assert "Nothing is remembered yet" not in text and "Cruise" not in text


def test_neighbours_without_a_turn_index_come_from_a_scan(chat: Memory) -> None:
    from octomem.engine.memory.context import neighbour_turns

    storage = chat.scopes.require("local").arms.storage

    class Plain:  # a storage without turn_chunks (e.g. another plugin's)
        iter_chunks = staticmethod(storage.iter_chunks)

    hit = chat.recall("cruise leaves at noon", kinds=[TURN_KIND]).hits[0].chunk
    scanned = [(t.chunk.document_id, t.offset) for t in neighbour_turns(Plain(), hit, 1)]
    indexed = [(t.chunk.document_id, t.offset) for t in neighbour_turns(storage, hit, 1)]
    assert scanned == indexed == [("porto:2", -1), ("porto:4", 1)]


def test_only_hits_that_answer_count_as_recalled(memory: Memory) -> None:
    """A hit below retrieval.relevance_floor (band low) rode along with a better one: it
    is not counted, so session start's "recalled N×" means "answered N queries"."""
    deploy = memory.remember("The deploy script lives in tools/ship.sh", kind="FACT")
    coffee = memory.remember("Coffee beans are in the top cupboard", kind="FACT")
    answer = memory.recall("deploy script")
    bands = {h.chunk.document_id: h.relevance.band for h in answer.hits if h.relevance}
    assert bands[deploy.document.id] == "high" and bands[coffee.document.id] == "low"
    memory.recall("where is the deploy script")
    assert memory.find(deploy.document.id)[0][1].recalls == 2
    assert memory.find(coffee.document.id)[0][1].recalls == 0
    text = render(memory, 8192)
    assert "recalled 2×" in text and "recalled 1×" not in text


def test_max_tokens_spends_the_budget_on_answers_before_low_hits(memory: Memory) -> None:
    """A low hit ranked above answering ones never takes their room: answers are packed
    first (rank order), low hits with what is left; the kept hits stay in rank order."""
    from octomem.engine.memory.context import reading

    memory.remember("Kestrel is the staging host.", kind="FACT")
    for i in range(6):
        memory.remember(f"The parser handles outage report number {i} in module m{i}.",
                        kind="FACT")
    query = "kestrel parser outage module"  # the kestrel fact holds 1 of 4 words: low
    full = memory.recall(query, count=False)
    bands = [h.relevance.band for h in full.hits]
    low = bands.index("low")
    assert bands.count("low") == 1 and "medium" in bands[low + 1:]  # a low hit above answers
    follower = bands.index("medium", low + 1)
    wanted = [h for h in full.hits[: follower + 1] if h.relevance.band != "low"]
    budget = sum(estimate_tokens(reading(h.chunk)) for h in wanted)
    packed = memory.recall(query, max_tokens=budget, count=False)
    assert [h.chunk.document_id for h in packed.hits] == [h.chunk.document_id for h in wanted]
    assert [h.rank for h in packed.hits] == list(range(1, len(wanted) + 1))
    assert packed.budget is not None and packed.budget.used == budget
    cut = [(c.chunk.document_id, c.rank) for c in packed.budget.cut]
    assert cut[0] == (full.hits[low].chunk.document_id, low + 1)
    assert [r for _, r in cut] == sorted(r for _, r in cut)
