"""The two corpora of the scale curve: ``random`` (the default) and ``realistic``.

``random``: Zipf pseudo-word texts and Gaussian unit vectors from the in-process
``synthetic`` embedder (:mod:`~octomem.benchmarks.synthetic_data`), the worst case for
quantization and graph indexes. ``realistic``: SciFact and LoCoMo texts with real vectors
of the configured embedder, extended by small perturbations
(:mod:`~octomem.benchmarks.realistic_data`); its document vectors are precomputed and
copied into the cache, its queries are embedded by the real model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.arms import ArmContext
from octomem.engine.assembly import arm_options
from octomem.engine.errors import OctomemError
from octomem.engine.manager import ArmRegistry

from . import realistic_data, synthetic_data
from .cache import ProgressFor, SettingsFor, VectorsFor
from .realistic_texts import LOCOMO, SCIFACT, read_base_texts

RANDOM, REALISTIC = "random", "realistic"
CORPORA = (RANDOM, REALISTIC)
#: Perturbations sampled to measure the cosine range reported beside sigma.
COSINE_SAMPLE = 5_000


@dataclass(slots=True)
class ScaleCorpus:
    """How one corpus of the scale curve is written and embedded.

    :param name: ``random`` or ``realistic``; also the report's file suffix.
    :param embedder: the embedder that chunks the corpus and embeds the queries.
    :param write: ``write(size, n_queries) -> folder`` writes (or reuses) a BEIR folder.
    :param precomputed: ``precomputed(folder) -> lookup`` of document vectors, or
        ``None`` when ``embedder`` embeds the documents at build time.
    :param info: facts about the recipe for the report (base size, sigma, ...).
    """

    name: str
    embedder: str
    write: Callable[[int, int], Path]
    precomputed: Callable[[Path], VectorsFor] | None = None
    info: dict[str, Any] = field(default_factory=dict)


def random_corpus(cache_dir: Path) -> ScaleCorpus:
    """Return the random corpus (texts and vectors without meaning)."""
    return ScaleCorpus(
        name=RANDOM,
        embedder="synthetic",
        write=lambda size, nq: synthetic_data.write_corpus(
            cache_dir / "synthetic" / f"n{size}", size, nq
        ),
        info={"recipe": "Zipf pseudo-words, Gaussian unit vectors (benchmarks/synthetic_data.py)"},
    )


def cosine_range(vectors: np.ndarray, cosine: float, n: int = COSINE_SAMPLE) -> dict[str, float]:
    """Perturb ``n`` rows of ``vectors`` as the recipe does and measure cos(v, v').

    :returns: ``{"sigma", "min", "mean", "max"}`` of the cosines.
    """
    rng = np.random.default_rng(realistic_data.SEED)
    sigma = realistic_data.sigma_for(cosine, vectors.shape[1])
    rows = vectors[rng.integers(0, len(vectors), size=n)]
    cos = np.sum(rows * realistic_data.perturb(rows, sigma, rng), axis=1)
    return {
        "sigma": sigma,
        "min": float(cos.min()),
        "mean": float(cos.mean()),
        "max": float(cos.max()),
    }


def realistic_corpus(
    cache_dir: Path,
    sources: Path,
    registry: ArmRegistry,
    settings_for: SettingsFor,
    progress: ProgressFor,
) -> ScaleCorpus:
    """Read the base texts, embed them once (cached) and return the realistic corpus.

    :param sources: folder holding the BEIR folders ``scifact/`` and ``locomo/``.
    :raises OctomemError: ``pipeline.embedder`` is empty, or a source file is missing.
    """
    loaded = settings_for({})
    name = loaded.settings.pipeline.embedder
    if not name:
        raise OctomemError("--corpus realistic needs an embedder: set pipeline.embedder")
    spec = registry.get("embedder", name)
    embedder = spec.factory(arm_options(spec, loaded), ArmContext(root=cache_dir))
    base = read_base_texts(sources, embedder.count_tokens, embedder.max_tokens, realistic_data.SEED)
    vectors, record = realistic_data.base_vectors(base.texts, embedder, cache_dir, progress)
    info = {
        "recipe": "SciFact 1-3 sentence chunks + LoCoMo turns, real vectors, perturbed "
        "copies above the base size (benchmarks/realistic_data.py)",
        "sources": str(sources),
        "embedder": name,
        "model_id": record["model_id"],
        "base_texts": len(base.texts),
        "scifact_chunks": base.sources.count(SCIFACT),
        "locomo_turns": base.sources.count(LOCOMO),
        "dropped_too_long": base.dropped,
        "embedding_seconds": record["seconds"],
        "target_cosine": realistic_data.TARGET_COSINE,
        "cosine": cosine_range(vectors, realistic_data.TARGET_COSINE),
    }
    return ScaleCorpus(
        name=REALISTIC,
        embedder=name,
        write=lambda size, nq: realistic_data.write_corpus(
            cache_dir / "realistic" / f"realistic-n{size}", size, nq, base, vectors, progress
        ),
        precomputed=realistic_data.vectors_for,
        info=info,
    )
