"""Options of the ``conversation`` reranker (settings table ``[arms.conversation]``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from .expansion import EXPANSION_TAU

#: Chosen on LongMemEval ``--split tune`` alone: its 5 single-session-assistant
#: questions are the only ones the cue fires on, so the other 25 are unchanged; the first
#: evidence's ranks over the candidates go from (2, 2, 1, 1, 8) at 0 to the best seen,
#: (1, 1, 1, 1, 7), for every bonus from 4.0 to 6.0 (0.5 steps; above 6.0 a question
#: whose evidence is the user's own long request falls: 6.5 -> rank 4, 10 -> 73); 5.0 is
#: the middle of that range (benchmarks/results/conversations/fit.md, "Questions about
#: the assistant's words").
ADDRESSED_BONUS = 5.0
#: Default of ``arms.conversation.neighbours``, chosen on LoCoMo's tune half alone
#: (conv-26/30/41/42/43, the shipped weights, each question's candidates widened by the
#: previous and next turn of its first N fused hits): R@10 0.7963 at 0 (no neighbours),
#: 0.8089 at 5, 0.8107 at 10, 0.8047 at 20; nDCG@10 0.6665, 0.6713, 0.6736, 0.6725
#: (benchmarks/results/conversations/h21recall/README.md).
NEIGHBOURS = 10


class ConversationOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``conversation`` reranker (settings table ``[arms.conversation]``)."""

    depth: int = Field(
        default=200, ge=1, le=4096, json_schema_extra={"group": "retrieval"},
        description="fused candidates it re-scores (both arms' runs: 2 x retrieval.candidate_k)",
    )
    neighbours: int = Field(
        default=NEIGHBOURS, ge=0, le=1024, json_schema_extra={"group": "retrieval"},
        description="the first this many fused candidates' previous and next turns (same "
        "session) join the candidates, so a reply that says 'it', or the question a reply "
        "answers, can be ranked with the turn the arms found; chosen on LoCoMo tune "
        "(benchmarks/results/conversations/h21recall); 0: only the arms' candidates",
    )
    weights: Path | None = Field(
        default=None, json_schema_extra={"group": "retrieval"},
        description="a weights JSON file written by benchmarks/fit_conversation.py "
        "(default: the shipped one)",
    )
    addressed: float = Field(
        default=ADDRESSED_BONUS, ge=0.0, le=100.0, json_schema_extra={"group": "retrieval"},
        description="added to an assistant turn's score when the question refers to the "
        "assistant's own earlier words ('what did you suggest?', 'the list you gave me'); "
        "0 leaves the fitted weights alone",
    )
    impersonal_as_peer: bool = Field(
        default=True, json_schema_extra={"group": "retrieval"},
        description="score a user's and an assistant's turns alike, with the weights of "
        "chats between named people, when the question neither speaks of its asker (I, "
        "me, my) nor addresses the assistant (you): the user/assistant weights were "
        "fitted on questions about the user's own life",
    )
    expansion_tau: float = Field(
        default=EXPANSION_TAU, ge=0.0, le=1.0, json_schema_extra={"group": "retrieval"},
        description="least cosine between two words, each embedded alone, for a turn's word "
        "to count as meaning a question's word ('yoga' for 'exercises'; the expansion "
        "feature); chosen on LoCoMo tune (benchmarks/results/conversations/fit.md, 'Word "
        "expansion'); 1 turns the feature off",
    )
    soft_coverage: bool = Field(
        default=True, json_schema_extra={"group": "retrieval"},
        description="the soft_cov, soft_win_cov and soft_session_cov features: each "
        "question word's best match among a turn's words (the word itself 1, else the "
        "cosine of the two words embedded alone, from the expansion feature's word "
        "vectors), IDF-weighted, in the turn, its window and its session; chosen on LoCoMo "
        "tune (benchmarks/results/conversations/ranking-2026-12-03); off: those columns are 0",
    )
    word_table: bool = Field(
        default=True, json_schema_extra={"group": "runtime"},
        description="the expansion feature takes the vectors of its tokenizer's whole words "
        "from a table built once per machine per model by the warm-up (MCP server, ingest, "
        "bench; ~30 s of CPU, 31 MiB in the cache folder; it depends on the model only); "
        "off: every word is embedded live, once per process",
    )
    word_table_dir: Path | None = Field(
        default=None, json_schema_extra={"group": "runtime"},
        description="where the word table lives (default: words/ in the user's cache folder)",
    )
