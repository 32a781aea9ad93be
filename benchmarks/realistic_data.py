"""The realistic corpus for the scale curve: real MiniLM vectors, extended by perturbation.

Recipe (issue 6; rebuilt by ``octomem bench --synthetic SIZES --corpus realistic``):

1. Base texts: SciFact 1-3 sentence chunks and LoCoMo turns, 31,534 texts with MiniLM
   (:mod:`~octomem.benchmarks.realistic_texts`).
2. Base vectors: the configured embedder (``pipeline.embedder``, by default fastembed
   all-MiniLM-L6-v2) embeds every base text once; the ``(n_base, dim)`` float32 array is
   cached in ``<cache>/realistic/base-<sha256[:16]>.npy``, keyed by the model id and the
   texts. On this 2-core machine MiniLM embeds ~170 two-sentence chunks/s and ~280
   turns/s when idle (measured on 512 of each), ~3 min for the base; shared with other
   jobs (load average 4-5) it took 667 s, still under the 15-minute budget.
3. Size ``n`` below the base: a seeded sample of base documents (always holding the
   chunks the chosen queries' qrels point at). Above it: every base document, plus
   ``n - n_base`` extension documents. Extension ``j`` picks a base document ``b``
   uniformly; its vector is ``normalize(v_b + sigma * g)`` with ``g ~ N(0, I_dim)``, its
   text is ``b``'s text followed by another base text of the same source (a
   recombination of real sentences, never longer than one chunk).
4. Sigma: for a unit ``v`` and ``g ~ N(0, I_d)``, ``|sigma g|^2 ~ sigma^2 d`` and
   ``g.v ~ N(0, 1)``, so ``cos(v, v') ~ 1 / sqrt(1 + sigma^2 d)``. We aim at
   :data:`TARGET_COSINE` 0.93, the middle of the 0.90-0.95 band where MiniLM puts close
   paraphrases: a perturbed copy is nearer its source than almost any other real text,
   the way a re-stated memory is, and far enough that the copies of one source
   do not collapse into one point (a graph index or a quantizer must still tell them
   apart). ``sigma = sqrt((1/0.93^2 - 1) / 384) = 0.0202``; measured cosines are
   0.91-0.95 over 5,000 perturbations, mean 0.930 (the report prints its own sample).

Each written folder holds ``doc_vectors.npy`` (row ``i`` is the vector of document
``d{i}``); the runner copies it into the cache entry instead of embedding
(:func:`vectors_for`), while queries are embedded by the real model at search time.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.types import Chunk

from .peers import GROUPS, group_of
from .realistic_texts import SCIFACT, BaseTexts
from .runner import spread

TARGET_COSINE = 0.93
SEED = 20_250_606
#: Base texts per embedder call, sorted by length so a batch pads little.
EMBED_BATCH = 256
#: Documents per written block while extending (bounds RAM at 1M).
BLOCK = 50_000
DOC_VECTORS = "doc_vectors.npy"
#: ``progress(label, total)`` returns ``advance(n)``.
ProgressFor = Callable[[str, int], Callable[[int], None]]


def sigma_for(cosine: float, dim: int) -> float:
    """Return the noise scale whose perturbed unit vectors keep ``cosine`` to their source.

    ``cos ~ 1 / sqrt(1 + sigma^2 dim)`` (module docstring), solved for sigma.

    :raises ValueError: ``cosine`` not in (0, 1).
    """
    if not 0.0 < cosine < 1.0:
        raise ValueError(f"cosine must be in (0, 1), got {cosine}")
    return math.sqrt((1.0 / cosine**2 - 1.0) / dim)


def perturb(vectors: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """Return ``normalize(vectors + sigma * g)``, ``g ~ N(0, I)`` per row.

    :param vectors: ``(n, dim)`` float32 unit rows.
    :returns: ``(n, dim)`` float32 unit rows.
    """
    noisy = vectors + sigma * rng.standard_normal(vectors.shape, dtype=np.float32)
    return (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def texts_key(model_id: str, texts: Sequence[str]) -> str:
    """Return the hex sha256 identifying ``texts`` embedded by ``model_id``."""
    digest = hashlib.sha256(model_id.encode())
    for text in texts:
        digest.update(b"\x1e" + text.encode())
    return digest.hexdigest()


def base_vectors(
    texts: Sequence[str], embedder: Any, cache_dir: Path, progress: ProgressFor
) -> tuple[np.ndarray, dict[str, Any]]:
    """Embed ``texts`` once with ``embedder`` (cached by model id and texts).

    :param embedder: an Embedder arm (``embed_documents``, ``model_id``).
    :returns: ``(len(texts), dim)`` float32 unit rows in ``texts`` order, and the cache
        record (``model_id``, ``texts``, ``seconds`` of embedding, ``path``).
    """
    key = texts_key(embedder.model_id, texts)
    path = cache_dir / "realistic" / f"base-{key[:16]}.npy"
    record_path = path.with_suffix(".json")
    if path.is_file() and record_path.is_file():
        return np.load(path), json.loads(record_path.read_text(encoding="utf-8"))
    path.parent.mkdir(parents=True, exist_ok=True)
    order = np.argsort([len(t) for t in texts], kind="stable")
    advance = progress(f"embedding {len(texts):,} base texts", len(texts))
    rows: np.ndarray | None = None
    start = time.perf_counter()
    for lo in range(0, len(order), EMBED_BATCH):
        idx = order[lo : lo + EMBED_BATCH]
        out = embedder.embed_documents([texts[i] for i in idx])
        if rows is None:
            rows = np.zeros((len(texts), out.shape[1]), dtype=np.float32)
        rows[idx] = out
        advance(len(idx))
    assert rows is not None, "no base texts"
    record = {
        "model_id": embedder.model_id,
        "texts": len(texts),
        "seconds": time.perf_counter() - start,
        "sha256": key,
        "path": str(path),
    }
    np.save(path, rows)
    record_path.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return rows, record


def _pick_base(base: BaseTexts, n_docs: int, qids: list[str], rng: np.random.Generator) -> list:
    """Return sorted base indices for a corpus of ``n_docs <= len(base.texts)``."""
    must = sorted({i for q in qids for i in base.qrels[q]})[:n_docs]
    rest = np.setdiff1d(np.arange(len(base.texts)), must)
    extra = rng.choice(rest, size=n_docs - len(must), replace=False)
    return sorted(must + extra.tolist())


def _partners(base: BaseTexts, src: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Return, per source index, a random other base index of the same source."""
    n_sci = base.sources.count(SCIFACT)
    n = len(base.texts)
    lo = np.where(src < n_sci, 0, n_sci)
    hi = np.where(src < n_sci, n_sci, n)
    return (lo + (rng.random(len(src)) * (hi - lo)).astype(np.int64)).clip(0, n - 1)


def _write_queries(folder: Path, base: BaseTexts, qids: list[str], position: dict) -> None:
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (
        (folder / "queries.jsonl").open("w", encoding="utf-8") as fq,
        (folder / "qrels" / "test.tsv").open("w", encoding="utf-8") as fr,
    ):
        fr.write("query-id\tcorpus-id\tscore\n")
        for qid in qids:
            present = [position[i] for i in base.qrels[qid] if i in position]
            if not present:
                continue
            fq.write(json.dumps({"_id": qid, "text": base.queries[qid]}) + "\n")
            fr.writelines(f"{qid}\td{p}\t1\n" for p in present)


def write_corpus(
    folder: Path,
    n_docs: int,
    n_queries: int,
    base: BaseTexts,
    vectors: np.ndarray,
    progress: ProgressFor,
    seed: int = SEED,
    cosine: float = TARGET_COSINE,
) -> Path:
    """Write a BEIR folder of ``n_docs`` documents and their ``doc_vectors.npy``.

    Skips writing when ``folder/DONE`` records the same sizes, seed, cosine and base.

    :param vectors: ``(len(base.texts), dim)`` float32 base vectors.
    :returns: ``folder``.
    """
    marker = folder / "DONE"
    base_key = hashlib.sha256(vectors.tobytes()).hexdigest()[:16]
    stamp = json.dumps(
        {"docs": n_docs, "queries": n_queries, "seed": seed, "cosine": cosine, "base": base_key,
         "groups": GROUPS}
    )
    if marker.is_file() and marker.read_text() == stamp:
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed + n_docs)
    qids = spread(list(base.queries), n_queries)
    n_base, sigma = len(base.texts), sigma_for(cosine, vectors.shape[1])
    picked = _pick_base(base, n_docs, qids, rng) if n_docs <= n_base else list(range(n_base))
    out = np.lib.format.open_memmap(
        folder / DOC_VECTORS, mode="w+", dtype=np.float32, shape=(n_docs, vectors.shape[1])
    )
    advance = progress(f"writing {n_docs:,} realistic documents", n_docs)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for pos, i in enumerate(picked):
            fh.write(_line(pos, base.texts[i]))
        out[: len(picked)] = vectors[picked]
        advance(len(picked))
        for lo in range(len(picked), n_docs, BLOCK):
            src = rng.integers(0, n_base, size=min(BLOCK, n_docs - lo))
            partner = _partners(base, src, rng)
            out[lo : lo + len(src)] = perturb(vectors[src], sigma, rng)
            for j, (s, p) in enumerate(zip(src.tolist(), partner.tolist(), strict=True)):
                fh.write(_line(lo + j, f"{base.texts[s]} {base.texts[p]}"))
            advance(len(src))
    out.flush()
    del out
    _write_queries(folder, base, qids, {i: pos for pos, i in enumerate(picked)})
    marker.write_text(stamp)
    return folder


def _line(position: int, text: str) -> str:
    """One ``corpus.jsonl`` line: document ``d{position}`` in its ``metadata.group``
    (:func:`~octomem.benchmarks.peers.group_of`, what the 10 % filter rows select)."""
    row = {"_id": f"d{position}", "title": "", "text": text,
           "metadata": {"group": group_of(position)}}
    return json.dumps(row) + "\n"


def vectors_for(folder: Path) -> Callable[[Sequence[Chunk]], np.ndarray]:
    """Return ``lookup(chunks) -> (len(chunks), dim)`` float32 rows of ``doc_vectors.npy``,
    row ``i`` for a chunk of document ``d{i}`` (each document is one chunk)."""
    rows = np.load(folder / DOC_VECTORS, mmap_mode="r")

    def lookup(chunks: Sequence[Chunk]) -> np.ndarray:
        return np.asarray(rows[[int(c.document_id[1:]) for c in chunks]], dtype=np.float32)

    return lookup
