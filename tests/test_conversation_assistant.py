"""Whose turn answers: questions about the assistant's own words (``recalls_assistant``
and the ``conversation`` reranker's ``addressed`` bonus), and questions about the subject
matter (``impersonal``: both speakers scored alike). Real SQLite store, real fts5 arm;
the demo's chat with the bundled MiniLM."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import Document, Query
from octomem.plugins.conversation.features import impersonal, recalls_assistant

ROOT = Path(__file__).resolve().parents[1]

FILLER = [
    "I baked bread this morning and it came out great.",
    "The weather has been rainy all week here.",
    "My cousin started a new job at the hospital.",
    "We watched a documentary about whales last night.",
    "I am thinking of repainting the kitchen blue.",
    "The dog chewed my running shoes again.",
]
#: (role, text): the user's short request repeats the question's words; the assistant's
#: long reply holds the answer ("ten minutes").
CHAT = [
    ("user", "What are some natural remedies for puffy eyes in the morning?"),
    ("assistant", "Here are a few things that often help: place chilled cucumber slices on "
                  "your eyelids for ten minutes, press cool tea bags on them afterwards, "
                  "sleep with your head slightly raised, drink more water during the day, "
                  "and cut down on salty food in the evening."),
    *[(("user", "assistant")[i % 2], t) for i, t in enumerate(FILLER)],
]
QUESTION = ("You suggested natural remedies for puffy eyes. How long did you say the "
            "cucumber stays on?")


@pytest.mark.parametrize(("query", "expected"), [
    ("You suggested natural remedies for puffy eyes.", True),
    ("what did you say about the cucumber?", True),
    ("Remind me of the list you provided", True),
    ("you just told me the ratio", True),
    ("the script you wrote for the movie", True),
    ("Can you recommend a good book for the train?", False),
    ("Could you remind me what I said about my dog?", False),
    ("How many youtube videos have I watched?", False),
    ("What did Ana say about Lisbon?", False),
])
def test_a_question_recalls_the_assistant_when_you_is_followed_by_a_past_verb(
    query: str, expected: bool,
) -> None:
    assert recalls_assistant(query) is expected


def _top(data_dir: Path, addressed: float | None, query: str,
         impersonal_as_peer: bool = True) -> list[str]:
    options: dict[str, object] = {"impersonal_as_peer": impersonal_as_peer}
    if addressed is not None:
        options["addressed"] = addressed
    arms = {"conversation": options}
    memory = open_memory(overrides={
        "data_dir": str(data_dir), "arms": arms,
        "pipeline": {"embedder": None, "semantic": None, "reranker": "conversation"}})
    try:
        pipeline = memory.scopes.require("global", create=True)
        if not pipeline.search(Query("bread", top_k=1)).hits:
            pipeline.add([
                Document(text=f"{role}: {text}", id=f"chat-{i}", kind="TURN",
                         metadata={"conversation": "chat", "session": "1", "position": i,
                                   "speaker": role, "role": role})
                for i, (role, text) in enumerate(CHAT)])
        return [h.chunk.document_id for h in pipeline.search(Query(query, top_k=3)).hits]
    finally:
        memory.close()


def test_the_assistants_reply_comes_first_when_the_question_recalls_its_words(
    data_dir: Path,
) -> None:
    fitted_only = _top(data_dir, 0.0, QUESTION)
    default = _top(data_dir, None, QUESTION)
    assert fitted_only[0] == "chat-0"  # the user's request repeats the question's words
    assert default[0] == "chat-1"      # the reply holding "ten minutes"
    # a request to the assistant is no recall of its words: the bonus stays off
    request = "Can you list natural remedies for puffy eyes with cucumber?"
    assert _top(data_dir, None, request) == _top(data_dir, 0.0, request)


@pytest.mark.parametrize(("query", "expected"), [
    ("why did the video uploads fail on hotel wifi?", True),
    ("How long does the cucumber stay on the eyelids?", True),
    ("What did Ana say about Lisbon?", True),
    ("How long did I wait for the decision on my asylum application?", False),
    ("Where is my passport?", False),
    ("what did you say about the cucumber?", False),
    ("Can you recommend a good book for the train?", False),
])
def test_a_question_is_impersonal_without_i_me_my_or_you(query: str, expected: bool) -> None:
    assert impersonal(query) is expected


def test_an_impersonal_question_is_answered_by_either_speakers_turn(data_dir: Path) -> None:
    query = "How long do cucumber slices stay on the eyelids for puffy eyes?"
    role_weights = _top(data_dir, None, query, impersonal_as_peer=False)
    default = _top(data_dir, None, query)
    assert role_weights[0] == "chat-0"  # the user's weights: the short request first
    assert default[0] == "chat-1"       # the reply that holds "ten minutes"
    # a question about the asker's own words keeps the user/assistant weights
    mine = "How long did I keep cucumber slices on my puffy eyes?"
    assert _top(data_dir, None, mine) == _top(data_dir, None, mine, impersonal_as_peer=False)


@pytest.mark.slow
@pytest.mark.parametrize(("impersonal_as_peer", "first"), [(True, 1), (False, 6)])
def test_the_demo_chat_answers_why_the_uploads_failed_first(
    tmp_path: Path, impersonal_as_peer: bool, first: int,
) -> None:
    memory = open_memory(project_root=tmp_path / "project", global_root=tmp_path / "demo",
                         overrides={"arms": {"conversation": {
                             "impersonal_as_peer": impersonal_as_peer}}})
    try:
        memory.ingest(str(ROOT / "examples" / "kestrel"), scope="global")
        hits = memory.recall("why did the video uploads fail on hotel wifi?", top_k=10).hits
        texts = [h.chunk.text for h in hits]
        answer = next(i for i, t in enumerate(texts, 1) if "That explains it" in t)
        # both arms rank it first; the LME role weights put it 6th (4th of the 5 hits
        # asked for before the small-store term passed the floor for the 2 documents
        # the merge by relevance puts ahead of it, engine/small_store.py)
        assert answer == first
    finally:
        memory.close()
