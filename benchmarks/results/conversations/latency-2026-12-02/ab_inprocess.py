"""This round's recall shortcuts against the code they replace, in one process, on the same
inputs (issue 12, latency): LoCoMo conv-26 ingested as a transcript (as
``octomem.benchmarks.conversation_latency`` does), each question's vector embedded once
beforehand (the embedding is out of both), then each question recalled twice per pass,
once with the replaced code patched back in ("before") and once without ("after"), the
order alternating question by question; the calling thread's CPU (``time.thread_time``)
of ``Memory.recall(top_k=10, count=False)``, p50 and mean per variant, and each answer's
hits checked equal between the two.

Run from the repository root::

    nice -n 5 python benchmarks/results/conversations/latency-2026-12-02/ab_inprocess.py \\
        /work/shared/data/locomo conv-26 3
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from octomem.benchmarks.conversation_latency import _chat
from octomem.engine import rerank as rerank_module
from octomem.engine.memory import facade as facade_module
from octomem.engine.memory import recall as recall_module
from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.recall import ScopedHit, _by_score
from octomem.engine.memory.recency import bonus_of
from octomem.plugins.conversation import ranker as ranker_module


def held_terms_before(terms: Any, words: Any) -> np.ndarray:
    """The term matrix as built before: np.array over a list of lists."""
    if not terms:
        return np.zeros((len(words), 0), dtype=bool)
    return np.ascontiguousarray(np.array([[t in held for held in words] for t in terms],
                                         dtype=bool).T)


def materialise_before(fused: Any, pipelines: Any, knobs: Any, now: float,
                       before: Any = None) -> list[ScopedHit]:
    """One scope's materialising as before: the chunks mapped by id."""
    (scope, pipeline), = pipelines.items()
    by_id = {c.id: c for c in pipeline.arms.storage.get_chunks([f.key[1] for f in fused])}
    found = [(f, by_id.get(f.key[1])) for f in fused]
    bonus_of_time = bonus_of(now, knobs.recency_weight, knobs.recency_half_life_days)
    hits = list(before or ())
    for f, chunk in found:
        if chunk is None:
            continue
        bonus = bonus_of_time(chunk.valid_from)
        hits.append(ScopedHit(f.key[0], chunk, f.score * (1.0 + bonus), 0, f.score, bonus,
                              f.contributions))
    hits.sort(key=_by_score)
    return hits


def showable_before(answer: Any) -> Any:
    """Every kept hit copied with its rank, as before."""
    answer.hits = [replace(h, rank=i) for i, h in enumerate(answer.hits, start=1)]
    return answer


AFTER = {(rerank_module, "with_contributions"): rerank_module.with_contributions,
         (ranker_module, "held_terms"): ranker_module.held_terms,
         (recall_module, "is_document"): recall_module.is_document,
         (recall_module, "_materialise"): recall_module._materialise,
         (facade_module, "without_unshowable"): facade_module.without_unshowable}
BEFORE = {(rerank_module, "with_contributions"): lambda h, c: replace(h, contributions=c),
          (ranker_module, "held_terms"): held_terms_before,
          (recall_module, "is_document"): lambda hit: True,  # the statistics always made
          (recall_module, "_materialise"): materialise_before,
          (facade_module, "without_unshowable"): lambda a: showable_before(
              AFTER[(facade_module, "without_unshowable")](a))}


def use(code: dict[tuple[Any, str], Any]) -> None:
    for (module, name), value in code.items():
        setattr(module, name, value)


def main(folder: str, conversation: str, passes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        chat = Path(tmp) / f"{conversation}.jsonl"
        _, questions = _chat(folder, conversation, chat)
        memory = open_memory(overrides={"data_dir": str(Path(tmp) / "data")},
                             project_root=Path(tmp))
        memory.ingest(str(chat), scope="global")
        pipeline = memory.scopes.require("global")
        pipeline.warm()
        embedder = pipeline.arms.embedder
        vectors = {q: embedder.embed_query(q) for q in questions}

        class Ready:  # the embedder, each question's vector ready
            def __getattr__(self, name: str) -> Any:
                return getattr(embedder, name)

            def embed_query(self, text: str) -> Any:
                return vectors[text]

        object.__setattr__(pipeline.arms, "embedder", Ready())
        cpu: dict[str, list[float]] = {"before": [], "after": []}
        load = [os.getloadavg()[0]]
        for q in questions[:20]:  # warm-up, both
            for code in (BEFORE, AFTER):
                use(code)
                memory.recall(q, scope="global", top_k=10, count=False)
        for p in range(passes):
            for i, q in enumerate(questions):
                order = (("before", BEFORE), ("after", AFTER))
                seen = []
                for name, code in order if (i + p) % 2 == 0 else order[::-1]:
                    use(code)
                    start = time.thread_time()
                    answer = memory.recall(q, scope="global", top_k=10, count=False)
                    cpu[name].append((time.thread_time() - start) * 1e3)
                    seen.append([(h.chunk.id, h.score, h.rank, h.relevance,
                                  sorted(h.contributions.items())) for h in answer.hits])
                assert seen[0] == seen[1], q
        load.append(os.getloadavg()[0])
        use(AFTER)
        memory.close()
    b, a = cpu["before"], cpu["after"]
    print(f"{len(b)} recalls each, load {load[0]:.1f} -> {load[1]:.1f}, same hits in every pair")
    for name, values in cpu.items():
        print(f"  {name:6} calling-thread CPU p50 {statistics.median(values):.3f} ms, "
              f"mean {statistics.fmean(values):.3f} ms")
    paired = statistics.median(x / y for x, y in zip(a, b, strict=True))
    print(f"  after / before: p50 {statistics.median(a) / statistics.median(b):.3f}, "
          f"mean {statistics.fmean(a) / statistics.fmean(b):.3f}, "
          f"median of paired ratios {paired:.3f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 3)
