"""Choose the relevance bands (``medium``'s lower bound) and the cut of a weak answer's
tail on tune splits (LoCoMo conv-26/30/41/42/43, LongMemEval ``--split tune``).

``python -m octomem.benchmarks.fit_bands collect CACHE_ENTRY DATASET [--split tune]
--group-by metadata.FIELD [--only g1,g2,...] [--stores group|session] --out NAME.pkl``
asks every judged query through ``recall`` (top 10, the shipped floors,
``retrieval.relative_floor`` 0: every hit an agent would see before that cut) of its own
group and of every other group (``--stores session``: of small stores, one session each,
as ``benchmarks/fit_turn_relevance.py collect --stores session`` asks them), and keeps,
per answer that is not empty, each hit's relevance and whether it is evidence (judged
relevant for that question; never for a question asked of another group).

``python -m octomem.benchmarks.fit_bands fit A.pkl B.pkl ...`` prints, per set, the
reliability of the relevance (Niculescu-Mizil & Caruana, ICML 2005: the share of hits
that are evidence in each relevance bin, hits of all answers an agent is shown, own and
other groups' questions alike) and chooses:

- ``medium``'s lower bound (:data:`~octomem.engine.relevance.MEDIUM`): the lowest
  relevance of :data:`CANDIDATES` above which, on every set, at least
  :data:`MEDIUM_PRECISION` of the hits shown are evidence (a hit labelled ``medium`` is
  then meaningfully likely to answer: one in four or better);
- the weak-answer cut (``retrieval.weak_answer_floor``): the largest of
  :data:`WEAK_CUTS` that, in answers whose best hit is below ``medium``, leaves out no
  evidence hit of any set that the relative cut (``retrieval.relative_floor``) kept.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any

import numpy as np

from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline
from octomem.engine.relevance import JUDGED_HITS, RelevanceModel
from octomem.engine.types import Filters

from .arguments import bench_parser, fit_commands, run_main
from .fit_turn_relevance import OTHER_SESSIONS, collect, collect_small

#: ``medium`` lower bounds tried.
CANDIDATES = np.round(np.arange(0.05, 0.501, 0.01), 2)
#: The least share of the answers whose best hit is at or above ``medium``'s bound (and
#: below ``high``'s, 0.5) that must hold the question's evidence, on every set.
MEDIUM_SHARE = 1 / 3
#: The most evidence the weak-answer cut may leave out, as a share of the evidence hits
#: the relative cut keeps in the weak answers of each set.
WEAK_LOSS = 0.02
#: Absolute cuts tried for the hits below the floor of an answer whose best is weak.
WEAK_CUTS = (0.0, 0.002, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03)
#: Reliability bins (relevance).
BINS = (0.0, 0.01, 0.02, 0.033, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.7, 1.0001)


@dataclass
class Shown:
    """One answer that is not empty: its hits in order."""

    own: bool
    probability: np.ndarray  # (n,) float64: each hit's relevance
    evidence: np.ndarray     # (n,) bool: judged relevant to the question
    passes: np.ndarray       # (n,) bool: at or above its kind's floor
    reach: int | None = None


def _ask(pipeline: Pipeline, model: RelevanceModel, text: str, filters: Filters,
         judged: dict[str, int], own: bool, reach: int | None = None) -> Shown | None:
    """Ask ``text`` of the memory ``filters`` reaches; ``None`` when it abstains."""
    del model
    answer = recall_scopes([("local", pipeline)],
                           RecallRequest(text, JUDGED_HITS, filters, "chunk", False),
                           memory_knobs(pipeline.settings))
    hits = [h for h in answer.hits[:JUDGED_HITS] if h.relevance is not None]
    if not hits:
        return None
    floor = pipeline.settings.retrieval.relevance_floor
    p = np.array([h.relevance.probability for h in hits])
    return Shown(own, p, np.array([judged.get(h.chunk.document_id, 0) > 0 for h in hits]),
                 p >= floor, reach)


def gather(args: Any) -> list[Shown]:
    """Run ``collect`` as the command line asks (the shipped floors, no relative cut)."""
    only = {g for g in args.only.split(",") if g}
    overrides = {"relative_floor": 0.0, "weak_answer_floor": 0.0}
    if args.stores == "group":
        got = collect(args.cache_root, args.dataset, args.split, args.group_by, only, _ask,
                      floors=overrides)
    else:
        got = collect_small(args.cache_root, args.dataset, args.split, args.group_by, only,
                            others=args.other_sessions, ask=_ask, floors=overrides)
    return [a for a in got if a is not None]


def reliability(answers: list[Shown]) -> list[tuple[float, float, int, float]]:
    """Return ``(low, high, hits, share that are evidence)`` per bin of :data:`BINS`."""
    p = np.concatenate([a.probability for a in answers])
    ev = np.concatenate([a.evidence for a in answers])
    out = []
    for low, high in zip(BINS, BINS[1:], strict=False):
        mask = (p >= low) & (p < high)
        out.append((low, high, int(mask.sum()), float(ev[mask].mean()) if mask.any() else
                    float("nan")))
    return out


def answering_from(answers: list[Shown], bound: float, high: float = 0.5
                   ) -> tuple[int, float]:
    """Return the answers whose best hit's relevance is in [``bound``, ``high``) and the
    share of them that hold evidence among their hits (an own question's answer)."""
    best = np.array([a.probability.max() for a in answers])
    held = np.array([bool(a.evidence.any()) for a in answers])
    mask = (best >= bound) & (best < high)
    return int(mask.sum()), float(held[mask].mean()) if mask.any() else float("nan")


def weak_loss(answers: list[Shown], medium: float, cut: float,
              relative: float = 0.04) -> tuple[int, int, float, float]:
    """Return, over the answers whose best hit is below ``medium``: the evidence hits the
    relative cut keeps, those ``cut`` would leave out too (below the floor and ``cut``),
    and the mean hits shown before and after."""
    kept_ev = lost = 0
    before = after = 0.0
    weak = [a for a in answers if a.probability.max() < medium]
    for a in weak:
        best = a.probability.max()
        before_best = np.arange(len(a.probability)) < int(np.argmax(a.probability))
        rel = a.passes | (a.probability >= relative * best) | before_best
        now = rel & (a.passes | (a.probability >= cut) | before_best)
        kept_ev += int((rel & a.evidence).sum())
        lost += int((rel & ~now & a.evidence).sum())
        before += rel.sum()
        after += now.sum()
    n = max(len(weak), 1)
    return kept_ev, lost, before / n, after / n


def fit(sets: dict[str, list[Shown]]) -> dict[str, Any]:
    """Print each set's reliability; return the chosen ``medium`` bound and weak cut."""
    for name, answers in sets.items():
        print(f"## {name}: {len(answers)} answers shown "
              f"({sum(a.own for a in answers)} own, {sum(not a.own for a in answers)} other)")
        for low, high, n, share in reliability(answers):
            print(f"  [{low:.3f}, {high:.3f})  {n:6d} hits  evidence {share:.3f}")
    medium = next((float(b) for b in CANDIDATES
                   if all(answering_from(a, b)[1] >= MEDIUM_SHARE for a in sets.values())),
                  0.5)
    per_set: dict[str, Any] = {}
    for name, answers in sets.items():
        per_set[name] = {"answering": {float(b): answering_from(answers, b)
                                       for b in CANDIDATES[::5]},
                         "medium_answers": answering_from(answers, medium),
                         "weak_answers": sum(a.probability.max() < medium for a in answers),
                         "cuts": {c: weak_loss(answers, medium, c) for c in WEAK_CUTS}}
    cut = max(c for c in WEAK_CUTS
              if all(per_set[n]["cuts"][c][1] <= WEAK_LOSS * per_set[n]["cuts"][c][0]
                     for n in sets))
    return {"medium": medium, "weak_answer_floor": cut, "per_set": per_set}


def main(argv: list[str] | None = None) -> None:
    """Command line: ``collect`` one tune set's shown answers, or ``fit`` several."""
    parser = bench_parser("fit_bands", __doc__)
    collect_parser, _ = fit_commands(parser, "(nothing is written; set by hand)")
    collect_parser.add_argument("--stores", choices=("group", "session"), default="group",
                                help="ask of whole groups (default) or of one session each")
    collect_parser.add_argument("--other-sessions", type=int, default=OTHER_SESSIONS,
                                help="small stores of other groups each query is asked of")
    args = parser.parse_args(argv)
    if args.command == "collect":
        answers = gather(args)
        args.out.write_bytes(pickle.dumps(answers))
        print(f"{len(answers)} answers shown -> {args.out}")
        return
    result = fit({p.stem: pickle.loads(p.read_bytes()) for p in args.collected})
    for name, got in result["per_set"].items():
        print(f"## {name}: answers holding evidence, best in [bound, 0.5): "
              + ", ".join(f"{b:.2f}: {n} {share:.2f}" for b, (n, share)
                          in got["answering"].items()))
        print(f"   at medium: {got['medium_answers']}, weak answers {got['weak_answers']}")
        for cut, (kept, lost, before, after) in got["cuts"].items():
            print(f"  cut {cut:<6} evidence kept by the relative cut {kept}, lost {lost}, "
                  f"hits shown {before:.2f} -> {after:.2f}")
    print(f"medium >= {result['medium']}, weak_answer_floor {result['weak_answer_floor']}")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.fit_bands")
