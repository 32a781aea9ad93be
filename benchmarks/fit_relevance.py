"""Fit the relevance of documents' hits and their floor on SciFact train (tune data only).

``python -m octomem.benchmarks.fit_relevance collect CACHE_ENTRY DATASET --split train
--out scifact_train.pkl`` opens a bench cache entry (``octomem bench`` built it) and asks
every judged query through ``recall`` (top 10, floors 0, as the abstention pass of
``octomem bench --abstention`` asks it): of the whole store (own) and of the store with
the query's relevant documents hidden from every arm (:mod:`.masked`; nothing answers).
For each hit it keeps the features of a document's relevance
(:mod:`octomem.engine.relevance`): cosine, coverage, ``cos_lift`` (cosine minus the mean
of the query's semantic run) and ``kw_z`` (keyword score z-scored within the keyword
run), from the same runs recall made (the arms asked again with the same ``k`` and
filters: the same runs).

``python -m octomem.benchmarks.fit_relevance fit scifact_train.pkl [--write]`` fits, by
Newton's method (logistic regression, Cox 1958; L2 0.1 as the turn relevance,
:func:`.fit_ranking.logistic`), ``σ(w · (cos, coverage, cos·coverage, cos_lift, kw_z) + b)``
(and keyword-only ``σ(w · (coverage, kw_z) + b)``) over every hit of every answer,
positives the judged documents, and chooses ``retrieval.document_relevance_floor``
(:func:`choose_document_floor`); ``--write`` puts both into ``engine/relevance.json``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from octomem.engine.manager import load_registry
from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline
from octomem.engine.relevance import run_stats
from octomem.engine.settings import load_settings
from octomem.engine.types import Filters

from .arguments import bench_parser, collect_command, collected, existing_file, run_main
from .dataset import load_dataset
from .fit_ranking import logistic
from .masked import chunks_by_document, hidden_chunks
from .subsets import ABSTENTION_TOP_K

#: Own questions (evidence in the top 10) that must keep a non-empty answer: the issue's
#: target for "own kept" (issue 12, "Done when": >= 95 %).
KEEP_OWN = 0.95
#: Floors tried (0.001 steps).
FLOORS = np.round(np.arange(0.001, 0.5, 0.001), 3)
#: Columns of one collected hit: label, cos, coverage, cos_lift, kw_z.
COLUMNS = ("label", "cos", "coverage", "cos_lift", "kw_z")


def _answer(pipeline: Pipeline, text: str, judged: dict[str, int]) -> np.ndarray:
    """Ask ``text`` through recall (floors 0); return one row of :data:`COLUMNS` a hit."""
    arms = pipeline.arms
    request = RecallRequest(text, ABSTENTION_TOP_K, Filters(), "chunk", False)
    answer = recall_scopes([("local", pipeline)], request, memory_knobs(pipeline.settings))
    k = max(pipeline.settings.retrieval.candidate_k, ABSTENTION_TOP_K)
    vector = arms.embedder.embed_query(text)
    stats = run_stats([h.score for h in arms.semantic.search(vector, Filters(), k)],
                      [h.score for h in arms.keyword.search(text, Filters(), k)], k)
    rows = []
    for hit in answer.hits:
        rel, kw = hit.relevance, hit.contributions.get(arms.keyword.name)
        cos = float("nan") if rel is None or rel.cos is None else rel.cos
        rows.append((float(judged.get(hit.chunk.document_id, 0) > 0), cos,
                     rel.coverage if rel else 0.0,
                     cos - stats.cos_mean if stats.cos_mean is not None else float("nan"),
                     stats.kw_z(None if kw is None else kw.score)))
    return np.array(rows, dtype=np.float64).reshape(-1, len(COLUMNS))


def collect(root: Path, folder: Path, split: str) -> list[tuple[bool, np.ndarray]]:
    """Return ``(own, hits)`` for every judged query of ``split``, asked of the whole store
    (own) and of the store without its relevant documents."""
    dataset = load_dataset(folder, split)
    loaded = load_settings(overrides={"retrieval": {
        "relevance_floor": 0.0, "document_relevance_floor": 0.0, "relative_floor": 0.0}},
        read_user_config=False)
    pipeline = Pipeline(loaded, load_registry(), root)
    try:
        pipeline.warm()
        chunks = chunks_by_document(pipeline)
        out = []
        for qid, text in dataset.queries.items():
            judged = dataset.qrels[qid]
            out.append((True, _answer(pipeline, text, judged)))
            hidden = frozenset(c for d, g in judged.items() if g > 0 for c in chunks.get(d, ()))
            with hidden_chunks(pipeline, hidden):
                out.append((False, _answer(pipeline, text, {})))
        return out
    finally:
        pipeline.close()


def _design(hits: np.ndarray, hybrid: bool) -> np.ndarray:
    """The model's columns (+ a bias column) of collected hits."""
    _, cos, cov, lift, kw_z = hits.T
    cols = [cos, cov, cos * cov, lift, kw_z] if hybrid else [cov, kw_z]
    return np.stack([*cols, np.ones(len(hits))], axis=1)


def choose_document_floor(own: list[float], other: list[float]) -> float:
    """Return the highest floor of :data:`FLOORS` at which at least :data:`KEEP_OWN` of
    ``own`` (the best relevance of each own question whose evidence made the top 10)
    reach it: the most questions asked without their documents left empty while the own
    ones keep their answers.

    :raises ValueError: no own questions.
    """
    if not own:
        raise ValueError("no own questions with evidence in the top 10")
    kept = np.array([np.mean(np.asarray(own) >= f) for f in FLOORS])
    ok = np.flatnonzero(kept >= KEEP_OWN)
    return float(FLOORS[ok[-1]]) if len(ok) else float(FLOORS[0])


def fit(asked: list[tuple[bool, np.ndarray]]) -> dict[str, object]:
    """Fit the document weights and choose the floor (module docstring)."""
    hits = np.vstack([h for _, h in asked if len(h)])
    known = np.isfinite(hits[:, 1])
    hybrid = logistic(_design(hits[known], True), hits[known, 0], l2=0.1)
    keyword = logistic(_design(hits, False), hits[:, 0], l2=0.1)
    own, other = [], []
    for is_own, h in asked:
        z = _design(h[np.isfinite(h[:, 1])], True) @ hybrid if len(h) else np.zeros(0)
        best = float((1 / (1 + np.exp(-z))).max()) if len(z) else 0.0
        if is_own and h[:, 0].any():
            own.append(best)
        elif not is_own:
            other.append(best)
    floor = choose_document_floor(own, other)
    return {"hybrid": [round(float(v), 4) for v in hybrid],
            "keyword": [round(float(v), 4) for v in keyword], "floor": floor,
            "kept_own": round(float(np.mean(np.array(own) >= floor)), 4),
            "removed_empty": round(float(np.mean(np.array(other) < floor)), 4),
            "own_questions": len(own), "removed_questions": len(other)}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``collect`` one split's hits, or ``fit`` them."""
    parser = bench_parser("fit_relevance", __doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    collect_command(sub)
    f = sub.add_parser("fit")
    f.add_argument("collected", type=existing_file, help="the file `collect` wrote")
    f.add_argument("--write", action="store_true", help="write engine/relevance.json")
    args = parser.parse_args(argv)
    asked = collected(args, collect, lambda asked: f"{len(asked)} answers")
    if asked is None:
        return
    result = fit(asked)
    print(json.dumps(result, indent=1))
    if args.write:
        path = Path(__file__).resolve().parents[1] / "engine" / "relevance.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data["document"] = {
            "source": f"fitted by benchmarks/fit_relevance.py on {args.collected.stem}",
            "hybrid": result["hybrid"], "keyword": result["keyword"], "floor": result["floor"]}
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.fit_relevance")
