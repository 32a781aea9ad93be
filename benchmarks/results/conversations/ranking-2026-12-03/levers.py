"""LoCoMo tune half: ranking levers over the `conversation` reranker's candidates (2026-12-03).

``python benchmarks/results/conversations/ranking-2026-12-03/levers.py PICKLE [LEVER...]``
reads what ``word-expansion/levers.py collect`` wrote for LoCoMo's tune half
(conv-26/30/41/42/43; each question's fused candidates with the shipped 13 columns,
their chunk ids, sessions and positions) and prints, for each lever, nDCG@10 and R@10
over the candidates with the weights refitted leave one conversation out, against the
shipped form refitted the same way, with paired t-tests over the questions.
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from octomem.benchmarks.fit_ranking import Asked, logistic, ndcg10  # noqa: F401

Design = Callable[[Any], np.ndarray]


def z(col: np.ndarray) -> np.ndarray:
    sd = col.std()
    return (col - col.mean()) / sd if sd > 0 else np.zeros_like(col)


def neighbour_max(a: Any, col: np.ndarray, low: float) -> np.ndarray:
    """max of ``col`` over the previous and next turn (same session) among the candidates."""
    key = {(int(s), int(p)): i for i, (s, p) in enumerate(zip(a.session, a.position, strict=False))}
    out = np.full(len(col), low)
    for i, (s, p) in enumerate(zip(a.session, a.position, strict=False)):
        for d in (-1, 1):
            j = key.get((int(s), int(p) + d))
            if j is not None:
                out[i] = max(out[i], col[j])
    return out


def session_max(a: Any, col: np.ndarray) -> np.ndarray:
    """max of ``col`` over the other candidates of the turn's session (its min without)."""
    out = np.full(len(col), col.min())
    for s in np.unique(a.session):
        idx = np.flatnonzero(a.session == s)
        if len(idx) < 2:
            continue
        vals = col[idx]
        order = np.argsort(-vals)
        best, second = vals[order[0]], vals[order[1]]
        out[idx] = best
        out[idx[order[0]]] = second
    return out


def ranks(col: np.ndarray) -> np.ndarray:
    r = np.empty(len(col))
    r[np.argsort(-col, kind="stable")] = np.arange(1, len(col) + 1)
    return r


LEVERS: dict[str, Design] = {
    "shipped": lambda a: a.x,
    "win_exp": lambda a: np.column_stack([a.x, z(neighbour_max(a, a.x[:, 12], a.x[:, 12].min()))]),
    "session_exp": lambda a: np.column_stack([a.x, z(session_max(a, a.x[:, 12]))]),
    "exp_both": lambda a: np.column_stack(
        [a.x, z(neighbour_max(a, a.x[:, 12], a.x[:, 12].min())), z(session_max(a, a.x[:, 12]))]
    ),
    "rr_arms": lambda a: np.column_stack(
        [a.x, z(1 / (2 + ranks(a.x[:, 0]))), z(1 / (2 + ranks(a.x[:, 1])))]
    ),
    "fused_rank": lambda a: np.column_stack([a.x, z(np.log(np.arange(1, len(a.y) + 1)))]),
    "kw_cos": lambda a: np.column_stack([a.x, z(a.x[:, 0] * a.x[:, 1])]),
    "exp_speaker": lambda a: np.column_stack([a.x, a.x[:, 12] * a.x[:, 6]]),
    "cos_speaker": lambda a: np.column_stack([a.x, a.x[:, 1] * a.x[:, 6]]),
    "wincov_speaker": lambda a: np.column_stack([a.x, a.x[:, 9] * a.x[:, 6]]),
}


def own_questions(asked: list[Any]) -> list[Any]:
    return [a for a in asked if a.own and a.y.any() and (a.kinds == 0).all()]


def evaluate(a: Any, x: np.ndarray, beta: np.ndarray) -> tuple[float, float]:
    score = x @ beta[:-1] + beta[-1]
    order = np.argsort(-score, kind="stable")
    return ndcg10(a.y, order, int(a.y.sum())), float(a.y[order[:10]].sum() / a.y.sum())


def fit_logistic(
    train: list[tuple[Any, np.ndarray]], l2: float = 1.0, pos_weight: float = 1.0
) -> np.ndarray:
    xs = np.vstack([np.hstack([x, np.ones((len(x), 1))]) for _, x in train])
    ys = np.concatenate([a.y for a, _ in train])
    w = np.where(ys > 0, pos_weight, 1.0)
    return logistic(xs, ys, w, l2)


class Stacked:
    """Questions stacked for fast scoring: one product, per-question top 10."""

    def __init__(self, rows: list[tuple[Any, np.ndarray]]) -> None:
        self.x = np.vstack([x for _, x in rows])
        self.y = np.concatenate([a.y for a, _ in rows])
        self.starts = np.cumsum([0] + [len(a.y) for a, _ in rows])
        self.judged = np.array([a.y.sum() for a, _ in rows])
        self.ideal = np.array(
            [(1 / np.log2(np.arange(2, 2 + min(10, int(j))))).sum() for j in self.judged]
        )
        self.disc = 1 / np.log2(np.arange(2, 12))

    def metric(self, beta: np.ndarray) -> tuple[float, float]:
        s = self.x @ beta[:-1]
        nd, rc = 0.0, 0.0
        for q in range(len(self.judged)):
            lo, hi = self.starts[q], self.starts[q + 1]
            seg = s[lo:hi]
            k = min(10, hi - lo)
            top = np.argpartition(-seg, k - 1)[:k] if hi - lo > k else np.arange(hi - lo)
            top = top[np.argsort(-seg[top], kind="stable")]
            g = self.y[lo:hi][top]
            nd += (g * self.disc[:k]).sum() / self.ideal[q]
            rc += g.sum() / self.judged[q]
        n = len(self.judged)
        return nd / n, rc / n


def coordinate_ascent(
    stacked: Stacked, beta: np.ndarray, rounds: int = 3, mix: float = 0.5
) -> np.ndarray:
    """Metzler & Croft (2007) coordinate ascent on mix*nDCG@10 + (1-mix)*R@10."""

    def target(b: np.ndarray) -> float:
        nd, rc = stacked.metric(b)
        return mix * nd + (1 - mix) * rc

    beta = beta.copy()
    best = target(beta)
    scale = np.abs(beta[:-1]).mean()
    for _ in range(rounds):
        improved = False
        for j in range(len(beta) - 1):
            for step in (0.5, 0.25, 0.1, -0.1, -0.25, -0.5):
                trial = beta.copy()
                trial[j] += step * scale
                t = target(trial)
                if t > best + 1e-6:
                    beta, best, improved = trial, t, True
        if not improved:
            break
    return beta


def loo(own: list[Any], design: Design, fitter: str = "logistic") -> np.ndarray:
    groups = sorted({a.group for a in own})
    out = np.zeros((len(own), 2))
    xs = [design(a) for a in own]
    for g in groups:
        train = [(a, x) for a, x in zip(own, xs, strict=False) if a.group != g]
        if fitter.startswith("pos"):
            beta = fit_logistic(train, pos_weight=float(fitter[3:]))
        else:
            beta = fit_logistic(train)
        if fitter.startswith("ca"):
            mix = float(fitter[2:]) if len(fitter) > 2 else 0.5
            beta = coordinate_ascent(Stacked(train), beta, mix=mix)
        for i, (a, x) in enumerate(zip(own, xs, strict=False)):
            if a.group == g:
                out[i] = evaluate(a, x, beta)
    return out


def report(name: str, base: np.ndarray, new: np.ndarray) -> None:
    cells = []
    for j in range(2):
        p = (
            stats.ttest_rel(new[:, j], base[:, j]).pvalue
            if (new[:, j] != base[:, j]).any()
            else 1.0
        )
        up, down = int((new[:, j] > base[:, j]).sum()), int((new[:, j] < base[:, j]).sum())
        cells.append(
            f"{new[:, j].mean():.4f} ({new[:, j].mean() - base[:, j].mean():+.4f}, "
            f"+{up}/-{down}, p {p:.3f})"
        )
    print(f"{name:28s} nDCG@10 {cells[0]}  R@10 {cells[1]}", flush=True)


def main() -> None:
    data = pickle.loads(Path(sys.argv[1]).read_bytes())
    asked = data["asked"] if isinstance(data, dict) else data
    if isinstance(data, dict):
        TEXTS.update(data["texts"])
        _setup_soft(data)
    own = own_questions(asked)
    base = loo(own, LEVERS["shipped"])
    print(f"{len(own)} questions; shipped refit {base[:, 0].mean():.4f} / {base[:, 1].mean():.4f}")
    for spec in sys.argv[2:] or list(LEVERS):
        lever, _, fitter = spec.partition(":")
        report(spec, base, loo(own, LEVERS[lever], fitter or "logistic"))


# --- text features (need the collected texts) ---
import re  # noqa: E402

TEXTS: dict[int, str] = {}
FIRST = re.compile(r"\b(i|i'm|i've|i'd|i'll|my|me|mine|myself|we|our|us)\b", re.I)


def _texts(a: Any) -> list[str]:
    return [TEXTS.get(i, "") for i in a.ids]


def self_asks(a: Any) -> np.ndarray:
    return np.array([float(t.rstrip().endswith("?")) for t in _texts(a)])


def asks_any(a: Any) -> np.ndarray:
    return np.array([float("?" in t) for t in _texts(a)])


def first_person(a: Any) -> np.ndarray:
    return np.array([float(len(FIRST.findall(t.split(":", 1)[-1])) > 0) for t in _texts(a)])


def digits(a: Any) -> np.ndarray:
    return np.array([float(bool(re.search(r"\d", t.split(":", 1)[-1]))) for t in _texts(a)])


LEVERS.update(
    {
        "self_asks": lambda a: np.column_stack([a.x, self_asks(a)]),
        "asks_any": lambda a: np.column_stack([a.x, asks_any(a)]),
        "first_person": lambda a: np.column_stack([a.x, first_person(a)]),
        "digits": lambda a: np.column_stack([a.x, digits(a)]),
        "text3": lambda a: np.column_stack([a.x, asks_any(a), first_person(a), digits(a)]),
    }
)


# --- soft coverage: each query word's best cosine among a turn's words (exact = 1) ---
WORD = re.compile(r"[^\W_]+")
SOFT: dict[str, Any] = {}


def _setup_soft(data: dict[str, Any]) -> None:
    from octomem.engine.words import FUNCTION_WORDS

    def words(t: str) -> list[str]:
        return sorted(
            {
                w
                for w in (x.casefold() for x in WORD.findall(t))
                if len(w) >= 3 and not w.isdigit() and w not in FUNCTION_WORDS
            }
        )

    index = {w: i for i, w in enumerate(data["words"])}
    SOFT.update(
        index=index, vec=data["vec"], names=data["names"], words=words, turn=dict(), cache=dict()
    )


def soft_matrix(a: Any) -> np.ndarray:
    """(n, Q): each query word's best cosine over each candidate's words; IDF-weighted
    later. Names left out of the query words."""
    key = id(a)
    if key in SOFT["cache"]:
        return SOFT["cache"][key]
    idx, vec = SOFT["index"], SOFT["vec"]
    q = [w for w in SOFT["words"](a.text) if w not in SOFT["names"] and w in idx]
    out = np.zeros((len(a.ids), len(q)))
    if q:
        qv = vec[[idx[w] for w in q]]
        for i, cid in enumerate(a.ids):
            tw = SOFT["turn"].get(cid)
            if tw is None:
                tw = SOFT["turn"][cid] = [
                    idx[w] for w in SOFT["words"](TEXTS.get(cid, "")) if w in idx
                ]
            if tw:
                out[i] = (qv @ vec[tw].T).max(axis=1)
    SOFT["cache"][key] = out
    return out


def soft_cols(a: Any, tau: float = 0.0, df_at: float = 0.7, weigh: str = "idf") -> np.ndarray:
    m = soft_matrix(a)
    n = len(a.ids)
    if m.shape[1] == 0:
        return np.zeros((n, 3))
    m = np.where(m >= tau, m, 0.0)
    # IDF of each query word among the candidates: df = candidates whose best match >= df_at
    df = (m >= df_at).sum(axis=0)
    idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), 0.01)
    if weigh == "none":
        idf = np.ones_like(idf)
    idf = idf / idf.sum()
    key = {(int(s), int(p)): i for i, (s, p) in enumerate(zip(a.session, a.position, strict=False))}
    win = m.copy()
    for i, (s, p) in enumerate(zip(a.session, a.position, strict=False)):
        for d in (-1, 1):
            j = key.get((int(s), int(p) + d))
            if j is not None:
                win[i] = np.maximum(win[i], m[j])
    ses = np.zeros_like(m)
    for g in np.unique(a.session):
        sel = a.session == g
        ses[sel] = m[sel].max(axis=0)
    return np.column_stack([m @ idf, win @ idf, ses @ idf])


def _zcols(c: np.ndarray) -> np.ndarray:
    return np.column_stack([z(c[:, j]) for j in range(c.shape[1])])


LEVERS.update(
    {
        "soft": lambda a: np.column_stack([a.x, z(soft_cols(a)[:, 0])]),
        "soft_win": lambda a: np.column_stack([a.x, z(soft_cols(a)[:, 1])]),
        "soft_ses": lambda a: np.column_stack([a.x, z(soft_cols(a)[:, 2])]),
        "soft3": lambda a: np.column_stack([a.x, _zcols(soft_cols(a))]),
        "soft3_t5": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.5))]),
        "soft3_t3": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.3))]),
        "soft3_t4": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.4))]),
        "soft3_df9": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.0, 0.9))]),
        "soft3_df6": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.0, 0.6))]),
        "soft3_noidf": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.0, 0.7, "none"))]),
        "soft2": lambda a: np.column_stack([a.x, _zcols(soft_cols(a)[:, :2])]),
        "soft3_df1": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.0, 0.999))]),
        "soft3_df9_asks": lambda a: np.column_stack(
            [a.x, _zcols(soft_cols(a, 0.0, 0.9)), asks_any(a)]
        ),
        "soft3_df9_text3": lambda a: np.column_stack(
            [a.x, _zcols(soft_cols(a, 0.0, 0.9)), asks_any(a), first_person(a), digits(a)]
        ),
        "soft3_df9_digits": lambda a: np.column_stack(
            [a.x, _zcols(soft_cols(a, 0.0, 0.9)), digits(a)]
        ),
        "s1_asks": lambda a: np.column_stack([a.x, _zcols(soft_cols(a, 0.0, 0.999)), asks_any(a)]),
        "s1_asks_digits": lambda a: np.column_stack(
            [a.x, _zcols(soft_cols(a, 0.0, 0.999)), asks_any(a), digits(a)]
        ),
        "s1_text3": lambda a: np.column_stack(
            [a.x, _zcols(soft_cols(a, 0.0, 0.999)), asks_any(a), first_person(a), digits(a)]
        ),
        "s1_first": lambda a: np.column_stack(
            [a.x, _zcols(soft_cols(a, 0.0, 0.999)), first_person(a)]
        ),
        "soft3_text3": lambda a: np.column_stack(
            [a.x, _zcols(soft_cols(a)), asks_any(a), first_person(a), digits(a)]
        ),
    }
)


if __name__ == "__main__":
    main()
