"""Measure where ingest time goes: chunking, storage, FTS5 indexing, embedding, vectors.

``python -m octomem.benchmarks.ingest_overhead --beir ../shared/data/scifact --docs 500
--out benchmarks/results/ingest`` ingests the first ``--docs`` documents of a BEIR corpus
into a fresh data directory with the configured (default) arms, exactly as
``octomem ingest --beir`` does — :meth:`Pipeline.add` with ``embed=False`` (rows and
keyword index, one transaction per 64 documents), then :meth:`Pipeline.embed_pending`
(embedding outside any transaction, one short transaction per batch for the vectors) —
``--runs`` times, with the arms' methods wrapped in timers. The embedder's model is
loaded before the clock starts (its load time is reported on its own).

Parts (seconds, summed over the run):

- ``chunking``: :meth:`Pipeline._chunk` (token counting and splitting);
- ``storage``: the rest of the write phase — document rows, lookups, transactions, commits;
- ``keyword``: the keyword arm's ``index`` calls (FTS5 by default);
- ``embedding``: the embedder's ``embed_documents`` calls;
- ``vectors``: the rest of the embedding phase — reading the chunks back, the semantic
  arm's ``add`` (``vectors_add``), commits.

The overhead ratio is ``(storage + keyword + vectors) / embedding`` (issue 6's target:
<= 0.10); ``with_chunking`` adds ``chunking`` to the numerator.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import islice
from pathlib import Path
from typing import Any

from octomem.engine.manager import load_registry
from octomem.engine.memory.sources import beir_documents
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings

from .arguments import at_least, beir_folder, bench_parser, run_main
from .command import machine

#: The issue's target for (storage + keyword + vectors) / embedding (issue 6).
OVERHEAD_TARGET = 0.10
PARTS = ("chunking", "storage", "keyword", "embedding", "vectors", "vectors_add")


class Clock:
    """Sum the wall time spent in wrapped methods, per part name (seconds)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    def wrap(self, owner: Any, method: str, part: str) -> None:
        """Replace ``owner.method`` by a timed call of the original (on the instance)."""
        original = getattr(owner, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - start

        setattr(owner, method, timed)

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        yield
        self.seconds[name] += time.perf_counter() - start


def instrument(pipeline: Pipeline) -> Clock:
    """Wrap the pipeline's chunker and its arms' write-path methods in a :class:`Clock`."""
    clock = Clock()
    clock.wrap(pipeline, "_chunk", "chunking")
    if pipeline.arms.keyword is not None:
        clock.wrap(pipeline.arms.keyword, "index", "keyword")
    if pipeline.arms.embedder is not None:
        clock.wrap(pipeline.arms.embedder, "embed_documents", "embedding")
    if pipeline.arms.semantic is not None:
        clock.wrap(pipeline.arms.semantic, "add", "vectors_add")
    return clock


def parts_of(clock: Clock) -> dict[str, float]:
    """Return the :data:`PARTS` from a run's clock (``write`` and ``embed`` are phases)."""
    s = clock.seconds
    return {
        "chunking": s["chunking"],
        "storage": s["write"] - s["chunking"] - s["keyword"],
        "keyword": s["keyword"],
        "embedding": s["embedding"],
        "vectors": s["embed"] - s["embedding"],
        "vectors_add": s["vectors_add"],
    }


def ingest_once(
    corpus: Path, docs: int, root: Path, open_pipeline: Callable[[Path], Pipeline]
) -> dict[str, Any]:
    """Ingest the first ``docs`` documents into a new scope at ``root``; return the timings.

    :returns: ``{"documents", "chunks", "model_load_s", "total_s", "parts": {part: s}}``.
    """
    pipeline = open_pipeline(root)
    try:
        embedder = pipeline.arms.embedder
        start = time.perf_counter()
        if embedder is not None and callable(getattr(embedder, "load", None)):
            embedder.load()
        if embedder is not None:
            embedder.count_tokens(["warm-up"])  # the tokenizer loads on first use too
        model_load = time.perf_counter() - start
        documents = list(islice(beir_documents(corpus), docs))
        clock = instrument(pipeline)
        with clock.phase("write"):
            report = pipeline.add(documents, embed=False)
        with clock.phase("embed"):
            embedded = pipeline.embed_pending(chunk_ids=report.chunk_ids)
    finally:
        pipeline.close()
    parts = parts_of(clock)
    return {"documents": len(documents), "chunks": report.chunks, "embedded": embedded,
            "model_load_s": model_load, "total_s": clock.seconds["write"] + clock.seconds["embed"],
            "parts": parts}


def overhead(parts: dict[str, float], with_chunking: bool = False) -> float:
    """Return ``(storage + keyword + vectors [+ chunking]) / embedding``."""
    extra = parts["storage"] + parts["keyword"] + parts["vectors"]
    if with_chunking:
        extra += parts["chunking"]
    return extra / parts["embedding"] if parts["embedding"] else float("inf")


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Return medians over runs: parts (s), docs/s, chunks/s and both overhead ratios."""
    med = statistics.median
    return {
        "runs": len(runs),
        "documents": runs[0]["documents"],
        "chunks": runs[0]["chunks"],
        "parts_s": {p: round(med(r["parts"][p] for r in runs), 4) for p in PARTS},
        "total_s": round(med(r["total_s"] for r in runs), 3),
        "docs_per_s": round(med(r["documents"] / r["total_s"] for r in runs), 1),
        "chunks_per_s": round(med(r["chunks"] / r["total_s"] for r in runs), 1),
        "overhead": round(med(overhead(r["parts"]) for r in runs), 4),
        "overhead_with_chunking": round(med(overhead(r["parts"], True) for r in runs), 4),
        "model_load_s": round(med(r["model_load_s"] for r in runs), 3),
    }


def to_markdown(data: dict[str, Any]) -> str:
    """Render the report: one row per part (median seconds, share of embedding)."""
    s, m, load = data["summary"], data["machine"], data["load_1m"]
    emb = s["parts_s"]["embedding"]
    lines = [
        "# Ingest: storage and indexing vs embedding",
        "",
        f"{data['label'] + '; ' if data['label'] else ''}{data['date']}; {m['cpus']} CPUs, "
        f"{m['platform']}, Python {m['python']}; 1-minute load average {load['start']} before, "
        f"{load['end']} after (shared machine).",
        "",
        f"{s['documents']} documents of `{data['corpus']}` ({s['chunks']} chunks), arms "
        f"{data['arms']}; median of {s['runs']} runs, each into a fresh data directory. "
        "Rerun: `python -m octomem.benchmarks.ingest_overhead --beir DIR --docs "
        f"{s['documents']} --out benchmarks/results/ingest`.",
        "",
        "| part | seconds | / embedding |",
        "|---|---|---|",
    ]
    for part in PARTS:
        value = s["parts_s"][part]
        lines.append(f"| {part} | {value:.3f} | {value / emb:.1%} |" if emb else
                     f"| {part} | {value:.3f} | — |")
    verdict = "met" if s["overhead"] <= OVERHEAD_TARGET else "NOT met"
    lines += [
        "",
        f"**{s['docs_per_s']} docs/s** ({s['chunks_per_s']} chunks/s; model load before the "
        f"clock, {s['model_load_s']} s). Overhead (storage + keyword + vectors) / embedding "
        f"= **{s['overhead']:.1%}** (target <= {OVERHEAD_TARGET:.0%}: {verdict}); with "
        f"chunking {s['overhead_with_chunking']:.1%}. `vectors_add` is the part of "
        "`vectors` spent in the semantic arm's `add`.",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Measure and write ``report.md`` and ``report.json`` under ``--out``."""
    parser = bench_parser("ingest_overhead", __doc__)
    parser.add_argument("--beir", type=beir_folder, required=True, help="a BEIR folder")
    parser.add_argument("--docs", type=at_least(1), default=500)
    parser.add_argument("--runs", type=at_least(1), default=3)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/results/ingest"))
    parser.add_argument("--label", default="")
    args = parser.parse_args(argv)
    registry = load_registry()
    load_start = os.getloadavg()[0]
    runs = []
    with tempfile.TemporaryDirectory(prefix="octomem-ingest-") as tmp:
        def open_pipeline(root: Path) -> Pipeline:
            return Pipeline(load_settings(overrides={"data_dir": str(root)}), registry, root)

        for i in range(args.runs):
            runs.append(ingest_once(args.beir, args.docs, Path(tmp) / f"run{i}", open_pipeline))
            print(json.dumps(runs[-1]["parts"]), file=sys.stderr)
    pipeline = load_settings().settings.pipeline
    data = {
        "label": args.label,
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "machine": machine(),
        "load_1m": {"start": round(load_start, 2), "end": round(os.getloadavg()[0], 2)},
        "corpus": args.beir.name,
        "arms": "+".join(str(a) for a in (pipeline.storage, pipeline.keyword,
                                          pipeline.embedder, pipeline.semantic) if a),
        "target_overhead": OVERHEAD_TARGET,
        "summary": summarise(runs),
        "runs": runs,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(data, indent=2) + "\n")
    (args.out / "report.md").write_text(to_markdown(data))
    print(to_markdown(data))
    return 0


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.ingest_overhead")
