"""Quality of runs, computed by ranx (Bassani, ECIR 2022), never by hand.

Metrics are BEIR's: nDCG@10, recall@10, recall@100 and MRR@10 over the split's qrels
(a qrels score >= 1 is relevant; gains are the graded scores). Every row is compared
with the best single arm by a two-sided paired Student's t-test over per-query scores,
ranx's ``compare(stat_test="student")``; Smucker, Allan & Carterette (CIKM 2007) found
it agrees with the randomization test on IR metrics.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import ranx
from numba.core.errors import NumbaTypeSafetyWarning
from ranx import Qrels, Run, compare

# numba warns while compiling ranx's own code ("unsafe cast from uint64 to int64"): about
# ranx's internals, nothing a bench user can act on, so it never reaches the console.
warnings.filterwarnings("ignore", category=NumbaTypeSafetyWarning)

METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")
#: Significance test passed to ``ranx.compare``.
STAT_TEST = "student"
#: p-value under which a difference is called significant in the reports.
ALPHA = 0.05
#: Placeholder document of a query with no hit: ranx needs every query to hold one
#: document; this id can never be relevant, so it scores 0 on every metric.
NO_HIT = "\x00no-hit"

#: query id -> {document id -> score, higher is better}
RunDict = dict[str, dict[str, float]]


@dataclass(slots=True)
class Evaluation:
    """Scores of every run, and p-values against the baseline run.

    :param scores: run name -> metric -> mean over queries.
    :param p_values: run name -> metric -> p-value of the paired test against
        ``baseline`` (absent for the baseline itself).
    :param pairwise: run name -> other run name -> metric -> p-value (every pair).
    """

    baseline: str | None
    scores: dict[str, dict[str, float]] = field(default_factory=dict)
    p_values: dict[str, dict[str, float]] = field(default_factory=dict)
    pairwise: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)


#: ranx functions whose numba cache, once written, shows ranx was compiled here before
#: (``@njit(cache=True)`` writes ``NAME-LINE.pyXY.nbi`` beside the module).
COMPILED_MARKERS = (("data_structures", "common.create_and_sort-"),
                    ("metrics", "ndcg._ndcg_parallel-"))


def ranx_compiled(package: Path | None = None) -> bool:
    """Return whether ranx's numba code looks compiled and cached on this machine: on
    first use numba compiles it, which takes minutes on a loaded machine (4 min at load
    6-7 on 2 cores, 12 min at load 11-13, for a 5-query smoke run of SciFact), once.

    Looks where numba will read the cache: ``NUMBA_CACHE_DIR`` when set (numba then reads
    and writes there only: a cache beside ranx is not used), else ranx's own
    ``__pycache__`` folders.

    :param package: ranx's folder (default: the installed one).
    """
    package = package or Path(ranx.__file__).parent
    elsewhere = os.environ.get("NUMBA_CACHE_DIR")
    for sub, prefix in COMPILED_MARKERS:
        if not any(Path(elsewhere).rglob(f"{prefix}*.nbi") if elsewhere
                   else (package / sub / "__pycache__").glob(f"{prefix}*.nbi")):
            return False
    return True


def ranx_run(run: Mapping[str, Mapping[str, float]], queries: list[str], name: str) -> Run:
    """Return a ranx :class:`Run` holding every query in ``queries`` (see :data:`NO_HIT`)."""
    data = {q: dict(run.get(q) or {NO_HIT: 0.0}) for q in queries}
    return Run(data, name=name)


def evaluate_runs(
    qrels: Mapping[str, Mapping[str, int]], runs: Mapping[str, RunDict], baseline: str | None
) -> Evaluation:
    """Evaluate ``runs`` on ``qrels`` with ranx; test each against ``baseline``.

    :param runs: run name -> run; at least one.
    :param baseline: the run every other is tested against, or ``None`` for no test.
    :returns: mean scores of :data:`METRICS` and p-values (:data:`STAT_TEST`).
    """
    queries = sorted(qrels)
    judged = Qrels({q: dict(d) for q, d in qrels.items()})
    ranx_runs = [ranx_run(run, queries, name) for name, run in runs.items()]
    if len(ranx_runs) == 1:  # compare needs two runs; a copy gives the same means
        ranx_runs.append(ranx_run(next(iter(runs.values())), queries, "\x00copy"))
    report = compare(judged, ranx_runs, list(METRICS), stat_test=STAT_TEST, max_p=ALPHA)
    table = report.to_dict()
    out = Evaluation(baseline)
    for name in runs:
        out.scores[name] = {m: float(table[name]["scores"][m]) for m in METRICS}
        out.pairwise[name] = {
            other: {m: float(p[m]) for m in METRICS}
            for other, p in table[name]["comparisons"].items()
            if other in runs
        }
        if baseline is not None and name != baseline:
            out.p_values[name] = out.pairwise[name][baseline]
    return out


def best_of(
    scores: Mapping[str, Mapping[str, float]], names: list[str], metric: str = "ndcg@10"
) -> str | None:
    """Return the name among ``names`` with the highest ``metric`` (first on ties)."""
    best = None
    for name in names:
        if best is None or scores[name][metric] > scores[best][metric]:
            best = name
    return best
