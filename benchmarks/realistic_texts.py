"""The realistic corpus's base texts and queries, read from SciFact and LoCoMo BEIR folders.

Base texts are SciFact abstracts (Wadden et al., "Fact or Fiction: Verifying Scientific
Claims", EMNLP 2020; BEIR layout) split into sentences and regrouped into chunks of 1-3
consecutive sentences (sizes drawn uniformly, seeded), plus every LoCoMo conversation
turn (Maharana et al., "Evaluating Very Long-Term Conversational Memory of LLM Agents",
ACL 2024) as it is: a knowledge-base passage and a chat memory side by side. Every base
text is at most half the embedder's ``max_tokens``, so two of them joined by a space
(an extension document, :mod:`~octomem.benchmarks.realistic_data`) still fit in one
chunk: WordPiece counts of whitespace-joined texts add up exactly.

Queries are SciFact's test claims (natural-language sentences); their qrels point at the
base chunks of the abstracts judged relevant, a sanity check only (the scale curve
measures cost). The datasets are third-party: they are read where they lie and never
copied into the repository.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.errors import OctomemError

from .dataset import read_qrels

SCIFACT, LOCOMO = "scifact", "locomo"
#: Sentences per SciFact chunk, drawn uniformly from this inclusive range.
SENTENCES_MIN, SENTENCES_MAX = 1, 3
#: A sentence ends at ``.``, ``!`` or ``?`` followed by space and an upper-case letter,
#: a digit or an opening bracket (keeps "e.g. the" and "p < 0.05" inside a sentence).
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\[])")


@dataclass(slots=True)
class BaseTexts:
    """The base texts and the queries of the realistic corpus.

    :param texts: base texts, SciFact chunks first, then LoCoMo turns.
    :param sources: ``"scifact"`` or ``"locomo"`` per text.
    :param tokens: the embedder's token count of each text (no special tokens).
    :param queries: query id -> text (SciFact test claims).
    :param qrels: query id -> indices into ``texts`` of the chunks of relevant abstracts.
    :param dropped: base texts left out because one sentence alone exceeds the limit.
    """

    texts: list[str]
    sources: list[str]
    tokens: list[int]
    queries: dict[str, str] = field(default_factory=dict)
    qrels: dict[str, list[int]] = field(default_factory=dict)
    dropped: int = 0


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (rule: :data:`_SENTENCE_END`); blanks are dropped."""
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    if not path.is_file():
        raise OctomemError(
            f"{path}: missing; the realistic corpus reads SciFact and LoCoMo in BEIR layout "
            "from --sources DIR (DIR/scifact, DIR/locomo)"
        )
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


def group_sentences(
    sentences: Sequence[str], tokens: Sequence[int], limit: int, rng: np.random.Generator
) -> tuple[list[tuple[int, int]], int]:
    """Group consecutive sentences into chunks of 1-3, each of at most ``limit`` tokens.

    A drawn group that is too long gives up sentences from its end until it fits; a
    sentence longer than ``limit`` alone is skipped.

    :param tokens: token count per sentence.
    :returns: ``(start, stop)`` sentence slices, and how many sentences were skipped.
    """
    groups: list[tuple[int, int]] = []
    i, skipped = 0, 0
    while i < len(sentences):
        size = int(rng.integers(SENTENCES_MIN, SENTENCES_MAX + 1))
        stop = min(i + size, len(sentences))
        while stop > i and sum(tokens[i:stop]) > limit:
            stop -= 1
        if stop == i:
            skipped += 1
            i += 1
            continue
        groups.append((i, stop))
        i = stop
    return groups, skipped


def _scifact(
    folder: Path, count_tokens: Callable[[Sequence[str]], list[int]], limit: int, seed: int
) -> tuple[list[str], dict[str, list[int]], int]:
    """Return SciFact chunks, abstract id -> chunk indices, and skipped sentences."""
    rng = np.random.default_rng(seed)
    texts: list[str] = []
    by_doc: dict[str, list[int]] = {}
    skipped = 0
    for row in _jsonl(folder / "corpus.jsonl"):
        sentences = split_sentences(str(row.get("text") or ""))
        if not sentences:
            continue
        tokens = count_tokens(sentences)
        groups, lost = group_sentences(sentences, tokens, limit, rng)
        skipped += lost
        for start, stop in groups:
            by_doc.setdefault(str(row["_id"]), []).append(len(texts))
            texts.append(" ".join(sentences[start:stop]))
    return texts, by_doc, skipped


def _queries(
    folder: Path, by_doc: dict[str, list[int]]
) -> tuple[dict[str, str], dict[str, list[int]]]:
    judged = read_qrels(folder / "qrels" / "test.tsv")
    texts = {str(r["_id"]): str(r.get("text") or "") for r in _jsonl(folder / "queries.jsonl")}
    queries: dict[str, str] = {}
    qrels: dict[str, list[int]] = {}
    for qid, docs in judged.items():
        chunks = [i for d, score in docs.items() if score > 0 for i in by_doc.get(d, [])]
        if chunks and texts.get(qid, "").strip():
            queries[qid] = texts[qid]
            qrels[qid] = chunks
    return queries, qrels


def read_base_texts(
    sources: Path,
    count_tokens: Callable[[Sequence[str]], list[int]],
    max_tokens: int,
    seed: int,
) -> BaseTexts:
    """Read SciFact chunks, LoCoMo turns and SciFact test claims from ``sources``.

    :param sources: a folder holding the BEIR folders ``scifact/`` and ``locomo/``.
    :param count_tokens: the embedder's ``count_tokens`` (tokens without specials).
    :param max_tokens: the embedder's chunk limit; each base text gets at most half.
    :param seed: seeds the 1-3 sentence grouping.
    :raises OctomemError: a folder or file is missing.
    """
    limit = max_tokens // 2
    texts, by_doc, skipped = _scifact(sources / SCIFACT, count_tokens, limit, seed)
    queries, qrels = _queries(sources / SCIFACT, by_doc)
    n_scifact = len(texts)
    turns = [str(r.get("text") or "").strip() for r in _jsonl(sources / LOCOMO / "corpus.jsonl")]
    turns = [t for t in turns if t]
    turn_tokens = count_tokens(turns)
    kept = [t for t, n in zip(turns, turn_tokens, strict=True) if n <= limit]
    texts += kept
    tokens = count_tokens(texts)
    return BaseTexts(
        texts=texts,
        sources=[SCIFACT] * n_scifact + [LOCOMO] * len(kept),
        tokens=tokens,
        queries=queries,
        qrels=qrels,
        dropped=skipped + len(turns) - len(kept),
    )
