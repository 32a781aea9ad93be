"""Embedder ``hashing``: deterministic signed feature hashing, no model, no network.

Signed feature hashing ("the hashing trick", Weinberger, Dasgupta, Langford, Smola &
Attenberg, "Feature Hashing for Large Scale Multitask Learning", ICML 2009): each feature
is hashed to one of ``dim`` buckets and a sign, and its weight is added there; the signs
make the inner product of two hashed vectors an unbiased estimate of the inner product
of the unhashed ones. Features are lowercase words (weight 1.0) and the character 3-,
4- and 5-grams of each word padded as ``<word>`` (weight 0.5 each, the fastText subword
scheme of Bojanowski et al., TACL 2017). Hashes are ``hashlib.blake2b`` (never Python's
salted ``hash()``), so vectors are identical on every machine and run.

It matches words and word pieces, not meaning: use it for plumbing tests and as a
model-free fallback, not for paraphrases.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.hookspecs import hookimpl

if TYPE_CHECKING:  # numpy is imported where arrays are made: registering the plugin stays light
    import numpy as np

VERSION = "v1"
WORD_WEIGHT = 1.0
NGRAM_WEIGHT = 0.5
NGRAM_SIZES = (3, 4, 5)
#: The feature whose (unit, one-hot) vector a text with no word gets; a zero vector would
#: not be unit norm. No real feature can collide with it: they start with "w" or "c".
EMPTY_FEATURE = "empty\x1f"
_WORD = re.compile(r"\w+")
_PERSON = b"octomem-hash-v1"


class HashingOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``hashing`` embedder (settings table ``[arms.hashing]``)."""

    dim: int = Field(
        default=384, ge=8, le=65_536, description="number of hash buckets (vector size)"
    )
    max_tokens: int = Field(default=254, ge=1, description="longest chunk in words")


@lru_cache(maxsize=1 << 17)
def _feature_hash(feature: str) -> int:
    """Return a 64-bit unsigned blake2b hash of ``feature`` (stable across runs)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, person=_PERSON).digest()
    return int.from_bytes(digest, "little")


def _features(text: str) -> list[tuple[str, float]]:
    """Return the weighted features of ``text``: words, then each word's char n-grams."""
    out: list[tuple[str, float]] = []
    for word in _WORD.findall(text.lower()):
        out.append((f"w\x1f{word}", WORD_WEIGHT))
        padded = f"<{word}>"
        for n in NGRAM_SIZES:
            grams = (padded[i:i + n] for i in range(len(padded) - n + 1))
            out.extend((f"c\x1f{gram}", NGRAM_WEIGHT) for gram in grams)
    return out


class HashingEmbedder:
    """Deterministic hashed bag of words and character n-grams, L2-normalised.

    :ivar model_id: ``"hashing-v1-dim<dim>"``; changes with the dimension or the scheme.
    """

    name = "hashing"

    def __init__(self, options: HashingOptions | None = None) -> None:
        self.options = options or HashingOptions()
        self.dim = self.options.dim
        self.max_tokens = self.options.max_tokens
        self.model_id = f"hashing-{VERSION}-dim{self.dim}"

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Return each text's number of word tokens (``\\w+`` runs)."""
        return [len(_WORD.findall(t)) for t in texts]

    def _vector(self, text: str, out: np.ndarray) -> None:
        """Write the unit-norm hashed vector of ``text`` into ``out`` (``(dim,)`` float32)."""
        import numpy as np

        features = _features(text) or [(EMPTY_FEATURE, 1.0)]
        hashes = [_feature_hash(f) for f, _ in features]
        buckets = [h % self.dim for h in hashes]
        signed = [-w if h >> 63 else w for h, (_, w) in zip(hashes, features, strict=True)]
        acc = np.bincount(buckets, weights=signed, minlength=self.dim)
        norm = float(np.linalg.norm(acc))
        if norm == 0.0:  # every feature cancelled out: fall back to the empty-text vector
            h = _feature_hash(EMPTY_FEATURE)
            acc[h % self.dim], norm = (-1.0 if h >> 63 else 1.0), 1.0
        out[:] = acc / norm

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """Embed passages.

        :returns: ``(len(texts), dim)`` float32, rows of unit L2 norm. A text with no word
            (empty, only punctuation) gets the fixed one-hot vector of ``EMPTY_FEATURE``.
        """
        import numpy as np

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            self._vector(text, out[i])
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one query (same function as passages).

        :returns: ``(dim,)`` float32 of unit L2 norm.
        """
        return self.embed_documents([text])[0]


def _factory(options: HashingOptions, context: ArmContext) -> HashingEmbedder:
    return HashingEmbedder(options)


@hookimpl
def octomem_register_embedders() -> list[ArmSpec]:
    """Offer the ``hashing`` embedder (deterministic, model-free)."""
    return [
        ArmSpec(
            kind="embedder",
            name="hashing",
            factory=_factory,
            options_model=HashingOptions,
            description="deterministic signed feature hashing of words and char n-grams "
            "(Weinberger et al. 2009); no model, matches words not meaning",
        )
    ]
