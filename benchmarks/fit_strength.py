"""Choose the keyword strength term of turns' relevance on tune splits (LoCoMo
conv-26/30/41/42/43, LongMemEval ``--split tune``).

``python -m octomem.benchmarks.fit_strength collect CACHE_ENTRY DATASET
[--split tune] --group-by metadata.FIELD [--only g1,g2,...] --out NAME.pkl`` opens a bench
cache entry and asks every judged query through ``recall`` (top 10, floors 0, as
``octomem bench --abstention`` asks it) of its own group and of *every* other group
(:func:`octomem.benchmarks.fit_turn_relevance.collect`'s questions). Per answer it keeps
each hit's logit without the unheard, assistant-aside, small-store and keyword strength
terms, the answer's unheard words, the hits' aside marks and the answer's keyword
strength (:func:`~octomem.engine.relevance.keyword_strength`, as ``recall`` computes it
for a whole group, whose semantic run is full: the keyword arm's top BM25 score over ln
of the rows its index holds). Every hit with a relevance takes the term (all the tune
sets' turns have vectors).

``python -m octomem.benchmarks.fit_strength fit A.pkl B.pkl [--write]`` keeps the
shipped turn weights, unheard and aside weights and ``retrieval.relevance_floor``
(``floor`` of ``engine/relevance.json``) and chooses, over :data:`WEIGHTS` x
:data:`CENTRES`, the weight ``w`` and centre ``c`` of ``w · (strength − c)`` (added to
the logit of every hit with a cosine) by :mod:`.fit_turn_relevance`'s rule: the largest
smallest margin over the sets of ``kept − 0.95`` and ``empty − 0.90``, then the higher
mean balanced accuracy, then the weight nearer 0, then the centre nearer 0. The centre
moves instead of the floor: a small store's answers (no strength term: their runs are
short) keep the floor their small-store term was chosen with. ``--write`` puts
``keyword_strength`` (weight, centre, the keyword arm) into ``engine/relevance.json``.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline, embedding_text
from octomem.engine.relevance import (
    JUDGED_HITS,
    WEIGHTS_FILE,
    RelevanceModel,
    aside,
    indexed_rows,
    keyword_strength,
    shipped_model,
    unheard_words,
)
from octomem.engine.types import Filters

from .arguments import bench_parser, fit_commands, run_main
from .fit_turn_relevance import Answer, _arrays, _score, base_logit
from .fit_turn_relevance import collect as turn_collect

#: Keyword strength weights tried (logit per unit of strength; 0 = not used).
WEIGHTS = np.round(np.arange(0.0, 1.501, 0.05), 2)
#: Centres tried (the strength at which the term is 0).
CENTRES = np.round(np.arange(0.0, 3.001, 0.01), 2)


@dataclass
class StrengthAnswer(Answer):
    """An :class:`~.fit_turn_relevance.Answer` with its keyword strength."""

    strength: float | None = None  # None: no hit had the term (no cosine, short runs)
    arm: str = ""  # the keyword arm whose run gave it


def _ask(pipeline: Pipeline, model: RelevanceModel, text: str, filters: Filters,
         judged: dict[str, int], own: bool) -> StrengthAnswer:
    """Ask ``text`` of the memory ``filters`` reaches (top 10, floors 0)."""
    keyword = pipeline.arms.keyword
    answer = recall_scopes([("local", pipeline)],
                           RecallRequest(text, JUDGED_HITS, filters, "chunk", False),
                           memory_knobs(pipeline.settings))
    hits = [h for h in answer.hits[:JUDGED_HITS] if h.relevance is not None]
    # as recall computes it for a whole group (full runs), whatever the shipped weight
    top = keyword.search(text, filters, 1)
    strength = keyword_strength(top[0].score if top else None, indexed_rows(pipeline.arms))
    w, c = model.strength
    logits = np.array([
        base_logit(model, h.relevance)
        - (w * (h.relevance.strength - c) if h.relevance.strength is not None else 0.0)
        for h in hits])
    asides = np.array([h.relevance.cos is not None and aside(text, h.chunk.metadata)
                       for h in hits], dtype=bool)
    missing = unheard_words(text, [embedding_text(h.chunk) for h in answer.hits[:JUDGED_HITS]],
                            lambda word: bool(keyword.search(word, filters, 1)))
    evidence = any(judged.get(h.chunk.document_id, 0) > 0 for h in answer.hits[:JUDGED_HITS])
    return StrengthAnswer(own, evidence, logits, missing, asides, None, strength, keyword.name)


def collect(root: Path, folder: Path, split: str, group_by: str,
            only: set[str]) -> list[StrengthAnswer]:
    """Ask every judged query of ``split`` of its group and of each other group
    (:func:`.fit_turn_relevance.collect` with this module's :func:`_ask`)."""
    return turn_collect(root, folder, split, group_by, only, ask=_ask)


def _shares(arrays: tuple[np.ndarray, ...], strength: np.ndarray, terms: tuple[float, ...],
            weight: float, centre: float) -> tuple[float, float]:
    """Return (own kept, other empty) with the strength term ``weight · (s − centre)``."""
    plain, asides, unheard, own, other, _ = arrays
    unheard_w, aside_w, floor = terms
    z = (np.maximum(plain, asides + aside_w) + unheard_w * unheard
         + np.where(np.isnan(strength), 0.0, weight * (np.nan_to_num(strength) - centre)))
    p = 1 / (1 + np.exp(-z))
    return float(np.mean(p[own] >= floor)), float(np.mean(p[other] < floor))


def fit(sets: dict[str, list[StrengthAnswer]], terms: tuple[float, float, float]
        ) -> dict[str, object]:
    """Choose the weight and centre (module docstring) with ``terms`` = (unheard weight,
    aside weight, floor) kept.

    :raises ValueError: a set has no own question with evidence or no other-group one.
    """
    data = {}
    for name, answers in sets.items():
        arrays = _arrays(answers)
        if not arrays[3].any() or not arrays[4].any():
            raise ValueError(f"{name}: no own or no other-group questions to choose from")
        data[name] = (arrays, np.array([np.nan if a.strength is None else a.strength
                                        for a in answers], dtype=np.float64))
    best: tuple[tuple[float, float], float, float] | None = None
    for weight in WEIGHTS:  # from 0 up: ties keep the weight nearer 0, then the centre
        for centre in CENTRES:
            score = _score([_shares(a, s, terms, weight, centre) for a, s in data.values()])
            if best is None or score > best[0]:
                best = (score, float(weight), float(centre))
            if not weight:
                break  # the centre does nothing without a weight
    assert best is not None
    per_set = {}
    for name, (arrays, strength) in data.items():
        before = _shares(arrays, strength, terms, 0.0, 0.0)
        kept, empty = _shares(arrays, strength, terms, best[1], best[2])
        per_set[name] = {"kept_own": round(kept, 4), "abstained_other": round(empty, 4),
                         "without_strength": [round(before[0], 4), round(before[1], 4)],
                         "own_questions": int(arrays[3].sum()),
                         "other_questions": int(arrays[4].sum())}
    arm = next((a.arm for answers in sets.values() for a in answers if a.arm), "")
    return {"weight": best[1], "centre": best[2], "arm": arm, "per_set": per_set}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``collect`` one tune set's answers, or ``fit`` several."""
    parser = bench_parser("fit_strength", __doc__)
    fit_commands(parser, "write keyword_strength into engine/relevance.json")
    args = parser.parse_args(argv)
    if args.command == "collect":
        only = {g for g in args.only.split(",") if g}
        answers = collect(args.cache_root, args.dataset, args.split, args.group_by, only)
        args.out.write_bytes(pickle.dumps(answers))
        print(f"{len(answers)} answers -> {args.out}")
        return
    data = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    model = shipped_model()
    result = fit({p.stem: pickle.loads(p.read_bytes()) for p in args.collected},
                 (model.unheard, model.aside, float(data["floor"])))
    print(json.dumps(result, indent=1))
    if args.write:
        data["keyword_strength"] = {
            "source": "fitted by benchmarks/fit_strength.py on "
                      + ", ".join(p.stem for p in args.collected),
            "arm": result["arm"], "weight": result["weight"], "centre": result["centre"]}
        WEIGHTS_FILE.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.fit_strength")
