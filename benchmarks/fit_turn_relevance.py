"""Choose the unheard-word weight of turns' relevance and ``retrieval.relevance_floor``
on tune splits (LoCoMo conv-26/30/41/42/43, LongMemEval ``--split tune``).

``python -m octomem.benchmarks.fit_turn_relevance collect CACHE_ENTRY DATASET
[--split tune] --group-by metadata.FIELD [--only g1,g2,...] --out NAME.pkl`` opens a bench
cache entry (``octomem bench`` built it) and asks every judged query through ``recall``
(top 10, floors 0, as the abstention pass of ``octomem bench --abstention`` asks it) of
its own group and of *every* other group (``--only``: among those groups), so that each
tune set gives many more questions asked of a memory that cannot answer them than the
bench's one other group each (LongMemEval tune: 870 instead of 30). For each answer it
keeps, per hit of the first :data:`~octomem.engine.relevance.JUDGED_HITS`, the hit's
logit under the shipped weights without the unheard term, and the answer's unheard words
(at most :data:`~octomem.engine.relevance.UNHEARD_CAP` of them count)
(:func:`~octomem.engine.relevance.unheard_words`, the keyword arm asked under the same
filters).

``python -m octomem.benchmarks.fit_turn_relevance fit A.pkl B.pkl [--write]`` keeps the
shipped turn weights (``hybrid``, ``keyword``: ``benchmarks/fit_ranking.py``) and chooses,
over :data:`WEIGHTS` x :data:`~octomem.benchmarks.fit_ranking.FLOORS`, the unheard weight
and the floor that come nearest issue 12's targets on every set: they maximise the
smallest margin, over the sets, of ``kept - 0.95`` and ``empty - 0.90`` (``kept``: the
share of own questions with evidence in the top 10 that keep an answer; ``empty``: the
share of questions asked of another group that get none); ties go to the higher mean
balanced accuracy ``(kept + empty) / 2``, then to the weight nearer 0, then to the higher
floor; ``--write`` puts both into ``engine/relevance.json``
(``unheard``, ``floor``; ``retrieval.relevance_floor``'s default is set by hand from it).
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from octomem.engine.manager import load_registry
from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline, embedding_text
from octomem.engine.relevance import (
    JUDGED_HITS,
    UNHEARD_CAP,
    aside,
    shipped_model,
    unheard_words,
)
from octomem.engine.settings import load_settings
from octomem.engine.types import Filters

from .arguments import bench_parser, fit_commands, run_main
from .dataset import load_dataset, parse_group_by
from .fit_ranking import FLOORS

#: Issue 12's abstention targets: own questions whose evidence made the top 10 that keep
#: an answer, and questions asked of another group's memory that get none.
KEPT_TARGET, EMPTY_TARGET = 0.95, 0.90
#: Unheard-word weights tried (logit per unheard word; 0 = not used).
WEIGHTS = np.round(np.arange(0.0, -3.01, -0.25), 2)
#: Assistant-aside weights tried (logit added to an assistant's turn asked about the
#: user's own life, :func:`~octomem.engine.relevance.aside`; 0 = not used).
ASIDE_WEIGHTS = np.round(np.arange(0.0, -6.01, -0.25), 2)


@dataclass
class Answer:
    """One question asked of one group's memory."""

    own: bool            # asked of its own group
    evidence: bool       # own, and a judged turn is among the first JUDGED_HITS hits
    logits: np.ndarray   # (n,) float64: each hit's logit without the unheard/aside terms
    unheard: int         # the answer's unheard query words
    aside: np.ndarray | None = None  # (n,) bool: the hit takes the assistant-aside term


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return float(np.log(p / (1 - p)))


def collect(root: Path, folder: Path, split: str, group_by: str,
            only: set[str]) -> list[Answer]:
    """Ask every judged query of ``split`` of its group and of each other group."""
    field = parse_group_by(group_by) or ""
    dataset = load_dataset(folder, split)
    floors = {"relevance_floor": 0.0, "document_relevance_floor": 0.0, "relative_floor": 0.0}
    loaded = load_settings(overrides={"retrieval": floors}, read_user_config=False)
    pipeline = Pipeline(loaded, load_registry(), root)
    model, out = shipped_model(), []
    try:
        pipeline.warm()
        keyword = pipeline.arms.keyword
        groups = sorted(g for g in {str(dataset.query_metadata[q][field])
                                    for q in dataset.queries} if not only or g in only)
        for qid, text in dataset.queries.items():
            own_group = str(dataset.query_metadata[qid][field])
            if own_group not in groups:
                continue
            for group in groups:
                filters = Filters(metadata={field: group})
                answer = recall_scopes([("local", pipeline)],
                                       RecallRequest(text, JUDGED_HITS, filters, "chunk", False),
                                       memory_knobs(pipeline.settings))
                hits = answer.hits[:JUDGED_HITS]
                judged = dataset.qrels[qid] if group == own_group else {}
                # the shipped unheard and aside terms taken out: cos and coverage alone
                judged_hits = [h for h in hits if h.relevance is not None]
                logits = np.array([
                    _logit(h.relevance.probability)
                    - model.unheard * min(h.relevance.unheard, UNHEARD_CAP)
                    - (model.aside if h.relevance.aside else 0.0) for h in judged_hits])
                asides = np.array([h.relevance.cos is not None
                                   and aside(text, h.chunk.metadata) for h in judged_hits],
                                  dtype=bool)
                missing = unheard_words(text, [embedding_text(h.chunk) for h in hits],
                                        lambda w, f=filters: bool(keyword.search(w, f, 1)))
                evidence = any(judged.get(h.chunk.document_id, 0) > 0 for h in hits)
                out.append(Answer(group == own_group, evidence, logits, missing, asides))
    finally:
        pipeline.close()
    return out


def _arrays(answers: list[Answer]) -> tuple[np.ndarray, ...]:
    """Per answer: the best logit of its hits without the aside term and of its aside
    hits alone (-inf without any), its unheard words (capped), own-with-evidence and
    other-group masks."""
    plain, asides = [], []
    for a in answers:
        marks = a.aside if a.aside is not None else np.zeros(len(a.logits), dtype=bool)
        plain.append(a.logits[~marks].max() if (~marks).any() else -np.inf)
        asides.append(a.logits[marks].max() if marks.any() else -np.inf)
    unheard = np.array([min(a.unheard, UNHEARD_CAP) for a in answers], dtype=np.float64)
    own = np.array([a.own and a.evidence for a in answers])
    return (np.array(plain), np.array(asides), unheard, own,
            np.array([not a.own for a in answers]))


def shares(answers: list[Answer], weight: float, floor: float,
           aside_weight: float = 0.0) -> tuple[float, float]:
    """Return (own questions with evidence that keep an answer, other-group questions
    that get none) at the unheard ``weight``, ``floor`` and ``aside_weight``."""
    return _shares(_arrays(answers), weight, floor, aside_weight)


def _shares(arrays: tuple[np.ndarray, ...], weight: float, floor: float,
            aside_weight: float = 0.0) -> tuple[float, float]:
    plain, asides, unheard, own, other = arrays
    best = np.maximum(plain, asides + aside_weight)
    p = 1 / (1 + np.exp(-(best + weight * unheard)))
    return float(np.mean(p[own] >= floor)), float(np.mean(p[other] < floor))


def fit(sets: dict[str, list[Answer]]) -> dict[str, object]:
    """Choose the unheard weight, the assistant-aside weight and the floor (see the module
    docstring; ties keep the unheard weight nearer 0, then the aside weight nearer 0,
    then the higher floor).

    :raises ValueError: a set has no own question with evidence or no other-group one.
    """
    arrays = {}
    for name, answers in sets.items():
        arrays[name] = _arrays(answers)
        if not arrays[name][3].any() or not arrays[name][4].any():
            raise ValueError(f"{name}: no own or no other-group questions to choose from")
    best: tuple[tuple[float, float], float, float, float] | None = None
    for weight in WEIGHTS:  # from 0 down: ties keep the weight nearer 0
        for aside_weight in ASIDE_WEIGHTS:
            for floor in FLOORS[::-1]:  # ties keep the higher floor
                got = [_shares(a, weight, floor, aside_weight) for a in arrays.values()]
                score = (round(min(min(k - KEPT_TARGET, e - EMPTY_TARGET) for k, e in got), 9),
                         round(float(np.mean([(k + e) / 2 for k, e in got])), 9))
                if best is None or score > best[0]:
                    best = (score, float(weight), float(aside_weight), float(floor))
    assert best is not None
    _, weight, aside_weight, floor = best
    per_set = {}
    for name, answers in sets.items():
        kept, empty = shares(answers, weight, floor, aside_weight)
        per_set[name] = {"kept_own": round(kept, 4), "abstained_other": round(empty, 4),
                         "own_questions": int(arrays[name][3].sum()),
                         "other_questions": int(arrays[name][4].sum())}
    return {"unheard": weight, "assistant_aside": aside_weight, "floor": floor,
            "per_set": per_set}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``collect`` one tune set's answers, or ``fit`` several."""
    parser = bench_parser("fit_turn_relevance", __doc__)
    fit_commands(parser, "write engine/relevance.json")
    args = parser.parse_args(argv)
    if args.command == "collect":
        only = {g for g in args.only.split(",") if g}
        answers = collect(args.cache_root, args.dataset, args.split, args.group_by, only)
        args.out.write_bytes(pickle.dumps(answers))
        print(f"{len(answers)} answers -> {args.out}")
        return
    result = fit({p.stem: pickle.loads(p.read_bytes()) for p in args.collected})
    print(json.dumps(result, indent=1))
    if args.write:
        path = Path(__file__).resolve().parents[1] / "engine" / "relevance.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        data.update({"unheard": result["unheard"], "floor": result["floor"],
                     "assistant_aside": result["assistant_aside"]})
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.fit_turn_relevance")
