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

``collect ... --stores session`` (or ``speaker``) asks each judged query instead of small
stores, each one session of one group (``speaker``: one speaker's turns of one session),
kept apart by a metadata filter on the group, ``session`` (and ``speaker``): of its first
evidence session (own) and of ``--other-sessions`` (:data:`OTHER_SESSIONS`) sessions of
other groups drawn at random (seeded; LongMemEval's tune split has 30 questions, so it
asks of 20); each answer also keeps its ``reach``, the chunks the query was compared
with (the semantic run's length, below :data:`~octomem.engine.relevance.SMALL_STORE`).

``python -m octomem.benchmarks.fit_turn_relevance fit A.pkl B.pkl [--write]`` keeps the
shipped turn weights (``hybrid``, ``keyword``: ``benchmarks/fit_ranking.py``) and chooses,
over :data:`WEIGHTS` x :data:`~octomem.benchmarks.fit_ranking.FLOORS`, the unheard weight
and the floor that come nearest issue 12's targets on every set: they maximise the
smallest margin, over the sets, of ``kept - 0.95`` and ``empty - 0.90`` (``kept``: the
share of own questions with evidence in the top 10 that keep an answer; ``empty``: the
share of questions asked of another group that get none); ties go to the higher mean
balanced accuracy ``(kept + empty) / 2``, then to the weight nearer 0, then to the higher
floor. Only answers asked of a whole group (full runs) take part in that choice; then,
with those weights and that floor, the small-store weight (``small_store``,
:meth:`~octomem.engine.relevance.RelevanceModel.small`) is chosen over
:data:`SMALL_WEIGHTS` on the small-store answers (the sets that have them): abstention
first, among the weights at which every set's questions asked of another group's store
get no answer at least :data:`EMPTY_TARGET` of the time, the one with the largest
smallest margin as above (then the higher mean balanced accuracy, then the weight nearer
0). The term is 0 in a full run, so it leaves the first choice's figures as they are.
``fit --small-only`` keeps ``engine/relevance.json``'s unheard and aside weights and
floor (the figures of the sets at them) and chooses the small-store weight only.
The least reach (:data:`~octomem.engine.small_store.SMALL_STORE_LEAST`) is chosen with
the small-store weight over :data:`LEAST_REACHES` (ties to the larger). ``--write`` puts
them into ``engine/relevance.json`` (``unheard``, ``assistant_aside``, ``floor``,
``small_store``; ``retrieval.relevance_floor``'s default and ``SMALL_STORE_LEAST`` are
set by hand from the output).
"""

from __future__ import annotations

import json
import pickle
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.manager import load_registry
from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline, embedding_text
from octomem.engine.relevance import (
    JUDGED_HITS,
    UNHEARD_CAP,
    WEIGHTS_FILE,
    RelevanceModel,
    aside,
    shipped_model,
    unheard_words,
)
from octomem.engine.settings import load_settings
from octomem.engine.small_store import SMALL_STORE, SMALL_STORE_LEAST, small_term
from octomem.engine.types import Filters

from .arguments import bench_parser, fit_commands, run_main
from .dataset import BeirDataset, load_dataset, parse_group_by
from .fit_ranking import FLOORS

#: Issue 12's abstention targets: own questions whose evidence made the top 10 that keep
#: an answer, and questions asked of another group's memory that get none.
KEPT_TARGET, EMPTY_TARGET = 0.95, 0.90
#: Unheard-word weights tried (logit per unheard word; 0 = not used).
WEIGHTS = np.round(np.arange(0.0, -3.01, -0.25), 2)
#: Assistant-aside weights tried (logit added to an assistant's turn asked about the
#: user's own life, :func:`~octomem.engine.relevance.aside`; 0 = not used).
ASIDE_WEIGHTS = np.round(np.arange(0.0, -6.01, -0.25), 2)
#: Small-store weights tried (logit per unit of ``ln(SMALL_STORE / reach)``; 0 = not used).
SMALL_WEIGHTS = np.round(np.arange(0.0, 2.001, 0.05), 2)
#: Least reaches tried (below it the small-store term stops growing; 1 = it never stops).
LEAST_REACHES = (1, 2, 5, 10, 15, 20, 25, 30, 40, 50)
#: Sessions of other groups each query is asked of in a small-store collect.
OTHER_SESSIONS = 2
#: The seed of their draw.
SEED = 12


@dataclass
class Answer:
    """One question asked of one group's memory."""

    own: bool            # asked of its own group
    evidence: bool       # own, and a judged turn is among the first JUDGED_HITS hits
    logits: np.ndarray   # (n,) float64: each hit's logit without the unheard/aside terms
    unheard: int         # the answer's unheard query words
    aside: np.ndarray | None = None  # (n,) bool: the hit takes the assistant-aside term
    reach: int | None = None  # a small store's: the chunks the query was compared with


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return float(np.log(p / (1 - p)))


def base_logit(model: RelevanceModel, relevance: Any) -> float:
    """Return a hit's relevance logit with the shipped unheard, aside and small-store
    terms taken out (what a refit of those terms starts from)."""
    return (_logit(relevance.probability)
            - model.unheard * min(relevance.unheard, UNHEARD_CAP)
            - (model.aside if relevance.aside else 0.0)
            - (small_term(model.small_store, relevance.reach) if relevance.cos is not None
               else 0.0))


#: The ``retrieval`` settings a collect asks with by default: every hit judged, none cut.
NO_FLOORS = {"relevance_floor": 0.0, "document_relevance_floor": 0.0, "relative_floor": 0.0}


def collect(root: Path, folder: Path, split: str, group_by: str,
            only: set[str], ask: Callable[..., Any] | None = None,
            floors: dict[str, float] | None = None) -> list[Any]:
    """Ask every judged query of ``split`` of its group and of each other group.

    :param ask: ``ask(pipeline, model, text, filters, judged, own)`` -> one answer's
        record (default :func:`_ask`; ``fit_strength`` and ``fit_bands`` pass their own).
    :param floors: the ``retrieval`` settings asked with (default :data:`NO_FLOORS`).
    """
    ask = ask or _ask
    field = parse_group_by(group_by) or ""
    dataset = load_dataset(folder, split)
    loaded = load_settings(overrides={"retrieval": NO_FLOORS if floors is None else floors},
                           read_user_config=False)
    pipeline = Pipeline(loaded, load_registry(), root)
    model, out = shipped_model(), []
    try:
        pipeline.warm()
        groups = sorted(g for g in {str(dataset.query_metadata[q][field])
                                    for q in dataset.queries} if not only or g in only)
        for qid, text in dataset.queries.items():
            own_group = str(dataset.query_metadata[qid][field])
            if own_group not in groups:
                continue
            for group in groups:
                judged = dataset.qrels[qid] if group == own_group else {}
                out.append(ask(pipeline, model, text, Filters(metadata={field: group}),
                               judged, group == own_group))
    finally:
        pipeline.close()
    return out


def _ask(pipeline: Pipeline, model: RelevanceModel, text: str, filters: Filters,
         judged: dict[str, int], own: bool, reach: int | None = None) -> Answer:
    """Ask ``text`` of the memory ``filters`` reaches (top 10, floors 0)."""
    keyword = pipeline.arms.keyword
    answer = recall_scopes([("local", pipeline)],
                           RecallRequest(text, JUDGED_HITS, filters, "chunk", False),
                           memory_knobs(pipeline.settings))
    hits = answer.hits[:JUDGED_HITS]
    # the shipped unheard, aside and small-store terms taken out: cos and coverage alone
    judged_hits = [h for h in hits if h.relevance is not None]
    logits = np.array([base_logit(model, h.relevance) for h in judged_hits])
    asides = np.array([h.relevance.cos is not None
                       and aside(text, h.chunk.metadata) for h in judged_hits], dtype=bool)
    missing = unheard_words(text, [embedding_text(h.chunk) for h in hits],
                            lambda w: bool(keyword.search(w, filters, 1)))
    evidence = any(judged.get(h.chunk.document_id, 0) > 0 for h in hits)
    return Answer(own, evidence, logits, missing, asides, reach)


def _sessions(dataset: BeirDataset, field: str, speaker: bool
              ) -> tuple[dict[str, tuple[str, ...]], dict[str, list[tuple[str, ...]]]]:
    """Return each document's small store (its group, session and, with ``speaker``, its
    speaker, as strings) and each group's small stores, from ``corpus.jsonl``."""
    of_doc: dict[str, tuple[str, ...]] = {}
    stores: dict[str, set[tuple[str, ...]]] = {}
    with dataset.corpus_path.open(encoding="utf-8") as rows:
        for line in rows:
            row = json.loads(line)
            meta = row.get("metadata") or {}
            key = (str(meta[field]), str(meta["session"]),
                   *((str(meta["speaker"]),) if speaker else ()))
            of_doc[str(row["_id"])] = key
            stores.setdefault(key[0], set()).add(key)
    return of_doc, {g: sorted(keys) for g, keys in stores.items()}


def collect_small(root: Path, folder: Path, split: str, group_by: str, only: set[str],
                  speaker: bool = False, others: int = OTHER_SESSIONS,
                  ask: Callable[..., Any] | None = None,
                  floors: dict[str, float] | None = None) -> list[Any]:
    """Ask every judged query of ``split`` of its first evidence session's store and of
    ``others`` stores of other groups (module docstring).

    :param ask: as :func:`collect`'s, also given ``reach`` (default :func:`_ask`).
    :param floors: as :func:`collect`'s.
    """
    ask = ask or _ask
    field = parse_group_by(group_by) or ""
    dataset = load_dataset(folder, split)
    of_doc, stores = _sessions(dataset, field, speaker)
    loaded = load_settings(overrides={"retrieval": NO_FLOORS if floors is None else floors},
                           read_user_config=False)
    pipeline = Pipeline(loaded, load_registry(), root)
    model, out, draw = shipped_model(), [], random.Random(SEED)
    try:
        pipeline.warm()
        semantic, embedder = pipeline.arms.semantic, pipeline.arms.embedder
        groups = sorted(g for g in stores if not only or g in only)
        for qid, text in dataset.queries.items():
            own_group = str(dataset.query_metadata[qid][field])
            evidence = sorted({of_doc[d] for d, grade in dataset.qrels[qid].items()
                               if grade > 0 and d in of_doc})
            if own_group not in groups or not evidence:
                continue
            elsewhere = [key for g in groups if g != own_group for key in stores[g]]
            asked = [(evidence[0], True),
                     *((key, False) for key in draw.sample(elsewhere, others))]
            vector = embedder.embed_query(text)
            for key, own in asked:
                names = (field, "session", "speaker")[:len(key)]
                filters = Filters(metadata=dict(zip(names, key, strict=True)))
                reach = len(semantic.search(vector, filters, SMALL_STORE))
                out.append(ask(pipeline, model, text, filters,
                               dataset.qrels[qid] if own else {}, own, reach))
    finally:
        pipeline.close()
    return out


def _arrays(answers: list[Answer]) -> tuple[np.ndarray, ...]:
    """Per answer: the best logit of its hits without the aside term and of its aside
    hits alone (-inf without any), its unheard words (capped), own-with-evidence and
    other-group masks, and its reach (:data:`SMALL_STORE` for a full run)."""
    plain, asides = [], []
    for a in answers:
        marks = a.aside if a.aside is not None else np.zeros(len(a.logits), dtype=bool)
        plain.append(a.logits[~marks].max() if (~marks).any() else -np.inf)
        asides.append(a.logits[marks].max() if marks.any() else -np.inf)
    unheard = np.array([min(a.unheard, UNHEARD_CAP) for a in answers], dtype=np.float64)
    own = np.array([a.own and a.evidence for a in answers])
    reach = np.array([SMALL_STORE if a.reach is None else min(a.reach, SMALL_STORE)
                      for a in answers], dtype=np.float64)
    return (np.array(plain), np.array(asides), unheard, own,
            np.array([not a.own for a in answers]), reach)


def shares(answers: list[Answer], weight: float, floor: float, aside_weight: float = 0.0,
           small: float = 0.0, least: int = SMALL_STORE_LEAST) -> tuple[float, float]:
    """Return (own questions with evidence that keep an answer, other-group questions
    that get none) at the unheard ``weight``, ``floor``, ``aside_weight`` and
    small-store weight ``small`` with the least reach ``least``."""
    return _shares(_arrays(answers), weight, floor, aside_weight, small, least)


def _shares(arrays: tuple[np.ndarray, ...], weight: float, floor: float,
            aside_weight: float = 0.0, small: float = 0.0,
            least: int = SMALL_STORE_LEAST) -> tuple[float, float]:
    plain, asides, unheard, own, other, reach = arrays
    best = np.maximum(plain, asides + aside_weight)
    term = small * np.log(SMALL_STORE / np.maximum(reach, max(least, 1)))
    p = 1 / (1 + np.exp(-(best + weight * unheard + np.where(reach < SMALL_STORE, term, 0.0))))
    return float(np.mean(p[own] >= floor)), float(np.mean(p[other] < floor))


def _score(got: list[tuple[float, float]]) -> tuple[float, float]:
    """The smallest margin to the targets over the sets, then the mean balanced accuracy."""
    return (round(min(min(k - KEPT_TARGET, e - EMPTY_TARGET) for k, e in got), 9),
            round(float(np.mean([(k + e) / 2 for k, e in got])), 9))


def fit(sets: dict[str, list[Answer]], keep: dict[str, float] | None = None
        ) -> dict[str, object]:
    """Choose the unheard weight, the assistant-aside weight and the floor on the answers
    asked of whole groups, then the small-store weight on those asked of small stores
    (see the module docstring; ties keep the unheard weight nearer 0, then the aside
    weight nearer 0, then the higher floor; the small-store weight nearer 0).

    :param keep: ``unheard``, ``assistant_aside`` and ``floor`` to keep instead of
        choosing them (``fit --small-only``: the shipped ones); the sets' figures at them.
    :raises ValueError: a set has no own question with evidence or no other-group one.
    """
    full = {n: [a for a in answers if a.reach is None] for n, answers in sets.items()}
    small = {f"{n} (small stores)": [a for a in answers if a.reach is not None]
             for n, answers in sets.items()}
    full = {n: a for n, a in full.items() if a}
    result = _fit_full(full) if keep is None else _kept(keep, full)
    small = {n: a for n, a in small.items() if a}
    if small:
        result.update(_fit_small(small, result))
    return result


def _fit_small(sets: dict[str, list[Answer]], chosen: dict[str, object]
               ) -> dict[str, object]:
    """Choose the small-store weight with the chosen unheard and aside weights and floor."""
    terms = (float(chosen["unheard"]), float(chosen["floor"]),  # type: ignore[arg-type]
             float(chosen["assistant_aside"]))  # type: ignore[arg-type]
    arrays = {n: _checked(n, a) for n, a in sets.items()}
    best: tuple[tuple[float, ...], float, int] | None = None
    for least in LEAST_REACHES[::-1]:  # ties keep the larger least reach (a smaller term)
        for weight in SMALL_WEIGHTS:  # from 0 up: ties keep the weight nearer 0
            got = [_shares(a, *terms, small=weight, least=least) for a in arrays.values()]
            score = (float(all(e >= EMPTY_TARGET for _, e in got)), *_score(got))
            if best is None or score > best[0]:
                best = (score, float(weight), least)
    assert best is not None
    per_set = dict(chosen["per_set"])  # type: ignore[call-overload]
    for name, answers in sets.items():
        before = shares(answers, *terms)
        kept, empty = shares(answers, *terms, small=best[1], least=best[2])
        per_set[name] = {"kept_own": round(kept, 4), "abstained_other": round(empty, 4),
                         "without_small_store": [round(before[0], 4), round(before[1], 4)],
                         "own_questions": int(arrays[name][3].sum()),
                         "other_questions": int(arrays[name][4].sum())}
    return {"small_store": best[1], "small_store_least": best[2], "per_set": per_set}


def _checked(name: str, answers: list[Answer]) -> tuple[np.ndarray, ...]:
    """Return ``answers``' arrays.

    :raises ValueError: no own question with evidence or no other-group one."""
    arrays = _arrays(answers)
    if not arrays[3].any() or not arrays[4].any():
        raise ValueError(f"{name}: no own or no other-group questions to choose from")
    return arrays


def _fit_full(sets: dict[str, list[Answer]]) -> dict[str, object]:
    """Choose the unheard weight, the assistant-aside weight and the floor."""
    arrays = {name: _checked(name, answers) for name, answers in sets.items()}
    best: tuple[tuple[float, float], float, float, float] | None = None
    for weight in WEIGHTS:  # from 0 down: ties keep the weight nearer 0
        for aside_weight in ASIDE_WEIGHTS:
            for floor in FLOORS[::-1]:  # ties keep the higher floor
                score = _score([_shares(a, weight, floor, aside_weight)
                                for a in arrays.values()])
                if best is None or score > best[0]:
                    best = (score, float(weight), float(aside_weight), float(floor))
    assert best is not None
    _, weight, aside_weight, floor = best
    return _kept({"unheard": weight, "assistant_aside": aside_weight, "floor": floor}, sets)


def _kept(chosen: dict[str, float], sets: dict[str, list[Answer]]) -> dict[str, object]:
    """Return ``chosen`` (unheard and aside weights, floor) with each set's figures."""
    per_set = {}
    for name, answers in sets.items():
        arrays = _checked(name, answers)
        kept, empty = _shares(arrays, chosen["unheard"], chosen["floor"],
                              chosen["assistant_aside"])
        per_set[name] = {"kept_own": round(kept, 4), "abstained_other": round(empty, 4),
                         "own_questions": int(arrays[3].sum()),
                         "other_questions": int(arrays[4].sum())}
    return {**chosen, "per_set": per_set}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``collect`` one tune set's answers, or ``fit`` several."""
    parser = bench_parser("fit_turn_relevance", __doc__)
    collect_parser, fit_parser = fit_commands(parser, "write engine/relevance.json")
    fit_parser.add_argument("--small-only", action="store_true",
                            help="keep engine/relevance.json's unheard and aside weights "
                            "and floor; choose the small-store weight only")
    collect_parser.add_argument(
        "--stores", choices=("group", "session", "speaker"), default="group",
        help="ask of whole groups (default), or of small stores: one session of a group, "
        "or one speaker's turns of one session")
    collect_parser.add_argument("--other-sessions", type=int, default=OTHER_SESSIONS,
                                help="small stores of other groups each query is asked of")
    args = parser.parse_args(argv)
    if args.command == "collect":
        only = {g for g in args.only.split(",") if g}
        answers = (collect(args.cache_root, args.dataset, args.split, args.group_by, only)
                   if args.stores == "group" else
                   collect_small(args.cache_root, args.dataset, args.split, args.group_by,
                                 only, args.stores == "speaker", args.other_sessions))
        args.out.write_bytes(pickle.dumps(answers))
        print(f"{len(answers)} answers -> {args.out}")
        return
    keep = None
    if args.small_only:
        model = shipped_model()
        keep = {"unheard": model.unheard, "assistant_aside": model.aside,
                "floor": float(json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))["floor"])}
    result = fit({p.stem: pickle.loads(p.read_bytes()) for p in args.collected}, keep)
    print(json.dumps(result, indent=1))
    if args.write:
        path = WEIGHTS_FILE
        data = json.loads(path.read_text(encoding="utf-8"))
        data.update({key: result[key] for key in ("unheard", "floor", "assistant_aside",
                                                   "small_store") if key in result})
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.fit_turn_relevance")
