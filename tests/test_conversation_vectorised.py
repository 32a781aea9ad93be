"""The vectorised ``conversation`` reranker ranks exactly as the scalar one it replaced.

The reference below is the per-candidate loop the reranker shipped with (commit 1817ca7),
kept here only as the oracle, with the coverage columns added later (``win_cov``,
``prev_question``, ``session_cov``) written the same way. Real parts: transcripts
ingested through ``Memory.ingest`` into a real SQLite file, the fts5 and sqlite-vec arms,
the hashing embedder.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.relevance import content_words
from octomem.plugins.conversation.features import (
    FEATURES,
    Turn,
    folded_words,
    impersonal,
    query_terms,
    recalls_assistant,
    term_matches,
    turn_features,
)
from octomem.plugins.conversation.ranker import ConversationReranker

_WORD = re.compile(r"[^\W_]+")


# ---- the scalar reference (the implementation before vectorisation) ----------------------

def _ref_turn_of(metadata: dict[str, Any], text: str) -> Turn | None:
    conversation, position = metadata.get("conversation"), metadata.get("position")
    if conversation is None or isinstance(position, bool) or not isinstance(position, int):
        return None
    role, speaker = metadata.get("role"), metadata.get("speaker")
    return Turn(str(conversation), str(metadata.get("session", "")), position,
                str(speaker) if speaker is not None else None,
                role if role in ("user", "assistant") else None, len(_WORD.findall(text)))


def _ref_features(words: set[str], turns: list[Turn], kw: np.ndarray,
                  cos: np.ndarray, terms: tuple[str, ...] = (),
                  texts: list[str] | None = None) -> np.ndarray:
    n = len(turns)
    out = np.zeros((n, len(FEATURES)))
    kw, cos = np.asarray(kw, dtype=np.float64), np.asarray(cos, dtype=np.float64)
    known = np.isfinite(cos)
    low = float(cos[known].min()) if known.any() else 0.0
    cos = np.where(known, cos, low)
    top = float(kw.max()) if kw.max() > 0 else 1.0
    share = kw / top
    at = {(t.conversation, t.session, t.position): i for i, t in enumerate(turns)}
    sessions: dict[tuple[str, str], list[int]] = {}
    for i, t in enumerate(turns):
        sessions.setdefault((t.conversation, t.session), []).append(i)
    for i, t in enumerate(turns):
        prev = at.get((t.conversation, t.session, t.position - 1))
        nxt = at.get((t.conversation, t.session, t.position + 1))
        near = [j for j in (prev, nxt) if j is not None]
        mates = [j for j in sessions[(t.conversation, t.session)] if j != i]
        # expansion, the last column, stays 0: with the hashing embedder the reranker has
        # no word vectors to compare (tests/test_conversation_expansion.py)
        out[i, :12] = (share[i], cos[i], sum(share[j] for j in near),
                  max([cos[j] for j in near], default=low),
                  math.log1p(sum(share[j] for j in mates)),
                  max([share[j] for j in mates], default=0.0),
                  1.0 if (t.speaker and t.speaker.casefold() in words) or (
                      t.role == "assistant" and words & {"you", "your", "yours"}) else 0.0,
                  math.log1p(t.words), share[prev] if prev is not None else 0.0,
                  *_ref_coverage(i, prev, nxt, sessions[(t.conversation, t.session)],
                                 terms, texts))
    return out


def _ref_coverage(i: int, prev: int | None, nxt: int | None, session: list[int],
                  terms: tuple[str, ...], texts: list[str] | None) -> tuple[float, ...]:
    if texts is None or not terms:
        return 0.0, 0.0, 0.0
    held = [[t in content_words(x) for t in terms] for x in texts]
    n = len(texts)
    idf = [max(math.log((n - d + 0.5) / (d + 0.5)), 0.01)
           for d in (sum(h[j] for h in held) for j in range(len(terms)))]

    def share(rows: list[int]) -> float:
        return sum(w for j, w in enumerate(idf) if any(held[r][j] for r in rows)) / sum(idf)

    asks = prev is not None and "?" in texts[prev].split("\n")[-1]
    return (share([r for r in (i, prev, nxt) if r is not None]),
            share([prev]) if asks and prev is not None else 0.0, share(session))


def _ref_standardised(features: np.ndarray, binary: tuple[bool, ...]) -> np.ndarray:
    out = features.copy()
    for j, is_binary in enumerate(binary):
        if not is_binary:
            col = out[:, j]
            sd = float(col.std())
            out[:, j] = (col - col.mean()) / sd if sd > 0 else 0.0
    return out


def _ref_scores(reranker: ConversationReranker, query: str, hits: Any,
                similarity: np.ndarray | None, keyword: str | None) -> np.ndarray:
    scores = np.full(len(hits), np.nan)
    found = [(i, _ref_turn_of(h.chunk.metadata, h.chunk.text)) for i, h in enumerate(hits)]
    found = [(i, t) for i, t in found if t is not None]
    if not found:
        return scores
    index = np.array([i for i, _ in found])
    kw = np.array([float(hits[i].contributions[keyword].score)
                   if keyword in hits[i].contributions else 0.0 for i in index])
    cos = similarity[index] if similarity is not None else np.full(len(index), np.nan)
    texts = [f"{c.title}\n{c.text}" if c.title else c.text
             for c in (hits[i].chunk for i in index)]
    raw = _ref_features(folded_words(query), [t for _, t in found], kw, cos,
                        query_terms(query), texts)
    x = _ref_standardised(raw, reranker.model.binary)
    recalls = recalls_assistant(query)  # "what did you ...": the assistant's words
    alike = reranker.options.impersonal_as_peer and impersonal(query)  # no I/me/my/you
    for row, (i, turn) in zip(x, found, strict=True):
        w = reranker.model.weights["peer" if alike else turn.role or "peer"]
        scores[i] = float(row @ w[:-1] + w[-1])
        if recalls and turn.role == "assistant":
            scores[i] += reranker.options.addressed
    return _ref_floor(scores, index, raw, set(query_terms(query)), texts)


def _ref_floor(scores: np.ndarray, index: np.ndarray, raw: np.ndarray, terms: set[str],
               texts: list[str]) -> np.ndarray:
    """The own-match floor turn by turn: a turn holding no query term, no expansion word
    and no reply to a question holding one goes 1 below the lowest turn that does."""
    expansion, prev_question = FEATURES.index("expansion"), FEATURES.index("prev_question")
    matched = [bool(terms & content_words(text)) or raw[k, expansion] > 0
               or raw[k, prev_question] > 0 for k, text in enumerate(texts)]
    mine = [float(scores[i]) for i in index]
    yes = [v for v, m in zip(mine, matched, strict=True) if m]
    no = [v for v, m in zip(mine, matched, strict=True) if not m]
    if yes and no and max(no) >= min(yes):
        for i, m in zip(index, matched, strict=True):
            if not m:
                scores[i] -= max(no) - min(yes) + 1.0
    return scores


def _order(scores: np.ndarray) -> list[int]:
    scored = [i for i in range(len(scores)) if not math.isnan(scores[i])]
    return sorted(scored, key=lambda i: (-scores[i], i))


# ---- a transcript of realistic shape ----------------------------------------------------

TOPICS = {
    "trip": "Lisbon guesthouse castle tram pastries ferry beach sunset museum",
    "garden": "tomatoes basil compost seedlings greenhouse watering pests harvest",
    "work": "deadline quarterly report manager promotion meeting spreadsheet budget",
    "music": "guitar concert band rehearsal vinyl festival drums chorus",
    "pets": "puppy vet walk leash kibble training shelter adoption",
}
GLUE = "I we you it that really think maybe yesterday tomorrow so and the a of with".split()


def _chat(path: Path, turns: int, people: tuple[str, str], roles: bool, seed: int) -> None:
    rng = random.Random(seed)
    topics = list(TOPICS)
    rows = []
    for i in range(turns):
        session = i // 23  # sessions of 23 turns
        topic = topics[(session + rng.randrange(2)) % len(topics)]
        vocab = TOPICS[topic].split()
        length = rng.randrange(4, 14) if not roles or i % 2 == 0 else rng.randrange(20, 60)
        words = [rng.choice(vocab if rng.random() < 0.4 else GLUE) for _ in range(length)]
        if rng.random() < 0.1:
            words.append(people[(i + 1) % 2])
        who = {"role": ("user", "assistant")[i % 2]} if roles else {"speaker": people[i % 2]}
        rows.append({**who, "session": f"s{session}", "text": " ".join(words).capitalize() + ".",
                     "time": f"2024-0{1 + session % 9}-1{i % 10}T10:00:00"})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


QUERIES = [
    "When did Caroline go to the Lisbon museum?", "What did Melanie plant in the greenhouse?",
    "Did Caroline get the promotion after the quarterly meeting?",
    "What band played at the festival?", "Where did they adopt the puppy from the shelter?",
    "What does Melanie think about the ferry to the beach?", "pastries tram castle",
    "How is the compost and the harvest going?", "guitar rehearsal drums",
    "What did the vet say about training with a leash?", "budget spreadsheet deadline",
    "sunset", "What did you do yesterday?", "Who likes vinyl?",
]


@pytest.fixture
def memory(tmp_path: Path) -> Iterator[Memory]:
    opened = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    (tmp_path / "project").mkdir()
    _chat(tmp_path / "friends.jsonl", 230, ("Caroline", "Melanie"), False, 7)
    _chat(tmp_path / "assistant.jsonl", 180, ("user", "assistant"), True, 11)
    opened.ingest(str(tmp_path / "friends.jsonl"), scope="global")
    opened.ingest(str(tmp_path / "assistant.jsonl"), scope="global")
    yield opened
    opened.close()


def test_recall_ranks_as_the_scalar_reference_on_ingested_transcripts(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    real = ConversationReranker.rerank_grouped  # what the rerank stage calls

    def recorded(self: ConversationReranker, query: str, hits: Any, similarity: Any,
                 keyword: Any) -> tuple[np.ndarray, Any]:
        scores, labels = real(self, query, hits, similarity, keyword)
        # None: one group, as the groups of every scored hit say
        groups = self.groups(hits)
        scored = [groups[i] for i in np.flatnonzero(~np.isnan(scores))]
        assert labels == groups if labels is not None else len(set(scored)) == 1
        seen.append((scores, _ref_scores(self, query, hits, similarity, keyword)))
        return scores, labels

    monkeypatch.setattr(ConversationReranker, "rerank_grouped", recorded)
    fast = [[h.chunk.id for h in memory.recall(q, scope="global", count=False).hits]
            for q in QUERIES]
    assert len(seen) == len(QUERIES)
    for scores, reference in seen:
        assert np.count_nonzero(~np.isnan(reference)) >= 100  # a full run at least
        assert np.array_equal(np.isnan(scores), np.isnan(reference))
        np.testing.assert_allclose(scores, reference, rtol=1e-9, atol=1e-9)
        assert _order(scores) == _order(reference)

    def reference(self: ConversationReranker, query: str, hits: Any, similarity: Any,
                  keyword: Any) -> tuple[np.ndarray, Any]:
        return _ref_scores(self, query, hits, similarity, keyword), self.groups(hits)

    monkeypatch.setattr(ConversationReranker, "rerank_grouped", reference)
    slow = [[h.chunk.id for h in memory.recall(q, scope="global", count=False).hits]
            for q in QUERIES]
    assert fast == slow
    assert any(fast)


def test_features_match_the_reference_on_edge_cases() -> None:
    turns = [
        Turn("c", "1", 0, "Ana", None, 5), Turn("c", "1", 1, "Ben", None, 9),
        Turn("c", "1", 1, "Ben", None, 3),   # a second candidate at the same place
        Turn("c", "2", 2, "Ana", None, 0),   # next position, other session: no neighbour
        Turn("d", "1", 0, "ana", "user", 12), Turn("d", "1", 2, "", "assistant", 40),
        Turn("e", "x", 7, None, None, 1),    # alone in its session
    ]
    words = folded_words("what did ana say")
    kw = np.array([2.0, 0.0, 1.5, 3.0, 0.0, 3.0, 0.5])
    cos = np.array([0.3, np.nan, 0.1, 0.9, np.nan, -0.2, 0.4])
    np.testing.assert_allclose(turn_features(words, turns, kw, cos),
                               _ref_features(words, turns, kw, cos), rtol=0, atol=1e-12)
    none = np.zeros(len(turns))
    unknown = np.full(len(turns), np.nan)
    np.testing.assert_allclose(turn_features(words, turns, none, unknown),
                               _ref_features(words, turns, none, unknown), atol=1e-12)
    assert turn_features(words, [], np.zeros(0), np.zeros(0)).shape == (0, len(FEATURES))
    texts = ["Ana: the ferry to Lisbon?", "Ben: we took the ferry at dawn", "Ben: dawn",
             "Ana: Lisbon", "ana: castle", "assistant: the ferry and the castle", "x"]
    terms = query_terms("what did ana say about the ferry to the castle")
    matches = term_matches(terms, texts)
    asks = np.array(["?" in t for t in texts])
    got = turn_features(words, turns, kw, cos, matches, asks)
    want = _ref_features(words, turns, kw, cos, terms, texts)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    assert got[2, FEATURES.index("prev_question")] > 0  # "the ferry to Lisbon?" before it
    assert got[0, FEATURES.index("prev_question")] == 0
