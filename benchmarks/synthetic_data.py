"""Synthetic corpora for the scale curve: ~80-word texts and 384-d random unit vectors.

Words are drawn from a Zipf distribution (exponent 1.07, close to what English text
shows: Zipf 1949; Piantadosi, "Zipf's word frequency law in natural language",
Psychonomic Bulletin & Review 2014) over a fixed vocabulary of pronounceable
pseudo-words, so posting lists have a realistic length spread. Each document has
60-100 words (mean 80). Queries are 3-6 words of one document, whose id is their only
qrel (a known-item sanity check; the curve measures cost, not quality). Vectors come from
the in-process ``synthetic`` embedder: Gaussian rows seeded by the texts' blake2b hash,
L2-normalised; they carry no meaning. Everything is seeded: same sizes, same corpus.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.hookspecs import hookimpl

DIM = 384
VOCABULARY = 50_000
ZIPF_EXPONENT = 1.07
WORDS_MIN, WORDS_MAX = 60, 100
SEED = 20_240_601
_CONSONANTS = "bcdfghjklmnprstvz"
_VOWELS = "aeiou"


def vocabulary(size: int = VOCABULARY, seed: int = SEED) -> list[str]:
    """Return ``size`` distinct pseudo-words of 2-4 consonant-vowel syllables."""
    rng = np.random.default_rng(seed)
    words: dict[str, None] = {}
    while len(words) < size:
        syllables = rng.integers(2, 5)
        words[
            "".join(
                _CONSONANTS[rng.integers(len(_CONSONANTS))] + _VOWELS[rng.integers(len(_VOWELS))]
                for _ in range(syllables)
            )
        ] = None
    return list(words)


def _zipf_probabilities(size: int) -> np.ndarray:
    weights = 1.0 / np.arange(1, size + 1) ** ZIPF_EXPONENT
    return weights / weights.sum()


def write_corpus(folder: Path, n_docs: int, n_queries: int, seed: int = SEED) -> Path:
    """Write a synthetic BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/test.tsv``).

    Skips writing when ``folder/DONE`` records the same size and seed.

    :returns: ``folder``.
    """
    marker = folder / "DONE"
    stamp = json.dumps({"docs": n_docs, "queries": n_queries, "seed": seed})
    if marker.is_file() and marker.read_text() == stamp:
        return folder
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    words = np.array(vocabulary(seed=seed))
    probs = _zipf_probabilities(len(words))
    rng = np.random.default_rng(seed + n_docs)
    picked = rng.choice(n_docs, size=min(n_queries, n_docs), replace=False)
    wanted = {int(i): None for i in picked}
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for lo in range(0, n_docs, 10_000):
            hi = min(lo + 10_000, n_docs)
            lengths = rng.integers(WORDS_MIN, WORDS_MAX + 1, size=hi - lo)
            ids = rng.choice(len(words), size=int(lengths.sum()), p=probs)
            for i, chunk in enumerate(np.split(words[ids], np.cumsum(lengths)[:-1]), start=lo):
                text = " ".join(chunk.tolist())
                fh.write(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n")
                if i in wanted:
                    wanted[i] = text
    with (
        (folder / "queries.jsonl").open("w", encoding="utf-8") as fq,
        (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as fr,
    ):
        fr.write("query-id\tcorpus-id\tscore\n")
        for n, (doc, text) in enumerate(wanted.items()):
            tokens = str(text).split()
            size = int(rng.integers(3, 7))
            start = int(rng.integers(0, max(len(tokens) - size, 1)))
            fq.write(
                json.dumps({"_id": f"q{n}", "text": " ".join(tokens[start : start + size])}) + "\n"
            )
            fr.write(f"q{n}\td{doc}\t1\n")
    marker.write_text(stamp)
    return folder


class SyntheticOptions(BaseModel, extra="forbid"):
    """Options of the ``synthetic`` embedder (benchmark runner only)."""

    dim: int = Field(DIM, ge=8, le=4096, description="vector dimension")


class SyntheticEmbedder:
    """Random unit vectors, deterministic per batch of texts (no meaning, no model).

    :ivar max_tokens: 100,000 words, so a synthetic document is never split.
    """

    name = "synthetic"
    max_tokens = 100_000

    def __init__(self, options: SyntheticOptions | None = None) -> None:
        self.dim = (options or SyntheticOptions()).dim
        self.model_id = f"synthetic-gaussian-v1-dim{self.dim}"

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Return each text's number of whitespace-separated words."""
        return [len(t.split()) for t in texts]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Return ``(len(texts), dim)`` float32 unit rows seeded by the texts' hash."""
        digest = hashlib.blake2b("\x00".join(texts).encode(), digest_size=8).digest()
        rng = np.random.default_rng(int.from_bytes(digest, "little"))
        rows = rng.standard_normal((len(texts), self.dim), dtype=np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def embed_query(self, text: str) -> np.ndarray:
        """Return one ``(dim,)`` float32 unit vector seeded by ``text``."""
        return self.embed_documents([text])[0]


def _factory(options: SyntheticOptions, context: ArmContext) -> SyntheticEmbedder:
    return SyntheticEmbedder(options)


@hookimpl
def octomem_register_embedders() -> list[ArmSpec]:
    """Offer the ``synthetic`` embedder (scale curve only)."""
    return [
        ArmSpec(
            kind="embedder",
            name="synthetic",
            factory=_factory,
            options_model=SyntheticOptions,
            description="random unit vectors for the scale curve (bench only)",
        )
    ]
