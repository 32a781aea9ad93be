"""How far turns' abstention is from its floor, and answer- and hit-level terms tried to
widen it (issue 12; tune splits only; README.md beside this file).

``collect`` asks every judged query of a bench cache entry through ``recall`` (top 10,
every floor 0) of its own group and of every other group (as
``octomem.benchmarks.fit_turn_relevance collect``) and keeps, per hit, its text,
relevance (probability, cosine, coverage, unheard, aside, keyword strength), role,
session, judged grade and each arm's rank and score::

    python margins.py collect CACHE_ENTRY BEIR_FOLDER SPLIT metadata.FIELD ONLY OUT.pkl

(``ONLY``: the groups to ask, comma-separated, or ``''`` for all of the split's.)

``margins OUT.pkl`` prints, at the shipped floor, own kept (answers with evidence in the
top 10 that are not empty) and other empty, and how many answers lie within 0.25, 0.5
and 1 logit of the floor, with the own answers' smallest margins and the foreign
answers' largest.

``evaluate LME.pkl LME_CORPUS LOCOMO.pkl LOCOMO_CORPUS`` computes answer-level features
(coverage of the best hit, IDF-weighted over the group's turns, of the top 10 together,
of the best hit's session, of the group; the best and largest cosine; the keyword
strength; ...) and reports, per feature added to today's best logit by logistic
regression (LongMemEval leave-one-question-out, LoCoMo leave-one-conversation-out), the
AUC and the share of foreign answers empty at fixed own-kept levels; then hit-level terms
``w × term`` added to every hit's logit before the best is taken, for a few ``w``.
"""

from __future__ import annotations

import collections
import json
import math
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

FLOOR = math.log(0.033 / 0.967)  # retrieval.relevance_floor 0.033 as a logit


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def collect(root: str, folder: str, split: str, group_by: str, only: str, out: str) -> None:
    """Ask every judged query of its group and of every other one (module docstring):
    ``fit_turn_relevance``'s questions with this module's :func:`_ask`."""
    from octomem.benchmarks.dataset import load_dataset, parse_group_by
    from octomem.benchmarks.fit_turn_relevance import collect as turn_collect

    wanted = {g for g in only.split(",") if g}
    rows = turn_collect(Path(root), Path(folder), split, group_by, wanted, ask=_ask)
    # the questions in the order they were asked: each of its groups, question by question
    field = parse_group_by(group_by) or ""
    dataset = load_dataset(Path(folder), split)
    groups = sorted(g for g in {str(dataset.query_metadata[q][field]) for q in dataset.queries}
                    if not wanted or g in wanted)
    asked = [qid for qid in dataset.queries
             if str(dataset.query_metadata[qid][field]) in groups for _ in groups]
    for row, qid in zip(rows, asked, strict=True):
        row.update(qid=qid, qmeta=dataset.query_metadata[qid])
    Path(out).write_bytes(pickle.dumps(rows))


def _ask(pipeline: Any, model: Any, text: str, filters: Any, judged: dict[str, int],
         own: bool) -> dict[str, Any]:
    """Ask ``text`` of the memory ``filters`` reaches (top 10, floors 0); keep every hit."""
    from octomem.engine.memory.recall import RecallRequest, recall_scopes
    from octomem.engine.memory.scopes import memory_knobs
    from octomem.engine.pipeline import embedding_text
    from octomem.engine.relevance import JUDGED_HITS

    kw, sem = pipeline.arms.keyword, pipeline.arms.semantic
    answer = recall_scopes([("local", pipeline)],
                           RecallRequest(text, JUDGED_HITS, filters, "chunk", False),
                           memory_knobs(pipeline.settings))
    hits = [_hit(h, judged, kw.name, sem.name if sem is not None else "",
                 embedding_text(h.chunk)) for h in answer.hits[:JUDGED_HITS]]
    return dict(query=text, group=str(next(iter(filters.metadata.values()))), own=own,
                evidence=any(x["judged"] > 0 for x in hits), hits=hits)


def _hit(h: Any, judged: dict[str, int], kw: str, sem: str, text: str) -> dict[str, Any]:
    r, k, s = h.relevance, h.contributions.get(kw), h.contributions.get(sem)
    md = h.chunk.metadata or {}
    return dict(doc=h.chunk.document_id, judged=judged.get(h.chunk.document_id, 0), text=text,
                role=md.get("role"), session=md.get("session"),
                prob=None if r is None else r.probability, cos=None if r is None else r.cos,
                cov=None if r is None else r.coverage, unheard=None if r is None else r.unheard,
                aside=None if r is None else r.aside,
                strength=None if r is None else r.strength,
                kw_rank=None if k is None else k.rank, sem_rank=None if s is None else s.rank)


def _best(row: dict[str, Any]) -> float:
    return max((_logit(h["prob"]) for h in row["hits"] if h["prob"] is not None), default=-50.0)


def margins(path: str) -> None:
    """Print the shares at the shipped floor and the answers near it."""
    rows = pickle.loads(Path(path).read_bytes())
    own = np.array([_best(r) - FLOOR for r in rows if r["own"] and r["evidence"]])
    other = np.array([_best(r) - FLOOR for r in rows if not r["own"]])
    print(f"own with evidence {len(own)}, kept {int((own >= 0).sum())} "
          f"({np.mean(own >= 0):.3f}); foreign {len(other)}, empty {int((other < 0).sum())} "
          f"({np.mean(other < 0):.3f})")
    for d in (0.25, 0.5, 1.0):
        print(f"within ±{d} logit of the floor: own {int((abs(own) < d).sum())}, "
              f"foreign {int((abs(other) < d).sum())} "
              f"(passing {int(((other >= 0) & (other < d)).sum())})")
    print("own, smallest margins:", np.round(np.sort(own)[:8], 2).tolist())
    print("foreign, largest margins:", np.round(np.sort(other)[::-1][:12], 2).tolist())


def _corpus(path: str, field: str) -> tuple[dict, dict, dict, collections.Counter]:
    """Each document's (group, session, roots), each session's roots, each group's
    document frequencies and size."""
    from octomem.engine.words import roots
    docs, sess = {}, collections.defaultdict(set)
    df: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    size: collections.Counter = collections.Counter()
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            meta = row.get("metadata") or {}
            group, session = str(meta[field]), str(meta.get("session"))
            held = roots((row.get("title") or "") + "\n" + row["text"])
            docs[row["_id"]] = (group, session, held)
            sess[(group, session)] |= held
            df[group].update(held)
            size[group] += 1
    return docs, sess, df, size


def _features(row: dict[str, Any], corpus: tuple) -> tuple[dict[str, float], dict] | None:
    """Answer-level features and hit-level terms of one answer (None: no judged hit)."""
    from octomem.engine.words import content_words, root
    docs, sess, df, size = corpus
    hits = [h for h in row["hits"] if h["prob"] is not None]
    words = list(dict.fromkeys(root(w) for w in content_words(row["query"])))
    if not hits or not words:
        return None
    group = row["group"]
    idf = {w: math.log((size[group] + 1) / (df[group][w] + 0.5)) for w in words}
    total = sum(idf.values()) or 1.0

    def cov(held: set[str], weighted: bool = False) -> float:
        if weighted:
            return sum(idf[w] for w in words if w in held) / total
        return sum(w in held for w in words) / len(words)

    z = np.array([_logit(h["prob"]) for h in hits])
    cos = np.array([h["cos"] or 0.0 for h in hits])
    held = [docs[h["doc"]][2] for h in hits]
    sessions = [sess[(group, docs[h["doc"]][1])] for h in hits]
    in_group = {w for w in words if df[group][w] > 0}
    b = int(np.argmax(z))
    answer = dict(
        z=z[b], z2=np.sort(z)[-2] if len(z) > 1 else -20.0, npass=float((z >= FLOOR).sum()),
        cov_best=cov(held[b]), idfcov_best=cov(held[b], True),
        idfcov_max=max(cov(x, True) for x in held), union_cov=cov(set().union(*held)),
        idf_union=cov(set().union(*held), True), sess_cov_best=cov(sessions[b]),
        idf_sess_best=cov(sessions[b], True), sess_cov_max=max(cov(x) for x in sessions),
        idf_sess_max=max(cov(x, True) for x in sessions),
        group_cov=cov(in_group), idf_group=cov(in_group, True),
        strength=np.nan if hits[b]["strength"] is None else hits[b]["strength"],
        cos_best=cos[b], cos_max=cos.max(), mean_cos=cos.mean(),
        user_best=float(hits[b]["role"] in ("user", None)), n_words=float(len(words)))
    terms = dict(
        z=z, idfcov=np.array([cov(x, True) for x in held]),
        idfcov_minus_cov=np.array([cov(x, True) - (h["cov"] or 0.0)
                                   for x, h in zip(held, hits, strict=True)]),
        inv_kw_rank=np.array([1 / h["kw_rank"] if h["kw_rank"] else 0.0 for h in hits]),
        inv_sem_rank=np.array([1 / h["sem_rank"] if h["sem_rank"] else 0.0 for h in hits]),
        both_top3=np.array([float((h["kw_rank"] or 999) <= 3 and (h["sem_rank"] or 999) <= 3)
                            for h in hits]),
        sess_cov=np.array([cov(x) for x in sessions]),
        idf_sess_cov=np.array([cov(x, True) for x in sessions]),
        assistant=np.array([float(h["role"] == "assistant") for h in hits]),
        cos_lift10=cos - cos.mean())
    return answer, terms


def _auc(y: np.ndarray, s: np.ndarray) -> float:
    _, inv, cnt = np.unique(s, return_inverse=True, return_counts=True)
    ranks = np.empty(len(s))
    ranks[np.argsort(s, kind="mergesort")] = np.arange(1, len(s) + 1)
    ranks = (np.bincount(inv, ranks) / cnt)[inv]
    n1 = y.sum()
    return float((ranks[y == 1].sum() - n1 * (n1 + 1) / 2) / (n1 * (len(y) - n1)))


def _logistic(x: np.ndarray, y: np.ndarray, l2: float = 0.1) -> tuple[np.ndarray, ...]:
    """Newton's method for an L2-penalised logistic regression on standardised columns."""
    mu, sd = x.mean(0), x.std(0) + 1e-9
    xs = np.c_[(x - mu) / sd, np.ones(len(x))]
    w = np.zeros(xs.shape[1])
    penalty = np.r_[np.ones(len(w) - 1), 0.0] * l2
    for _ in range(50):
        p = 1 / (1 + np.exp(-xs @ w))
        grad = xs.T @ (p - y) + penalty * w
        hess = (xs * (p * (1 - p))[:, None]).T @ xs + np.diag(penalty) + 1e-9 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return w, mu, sd


def _empty_at(y: np.ndarray, s: np.ndarray, keep: float) -> float:
    own = np.sort(s[y == 1])
    return float(np.mean(s[y == 0] < own[len(own) - math.ceil(keep * len(own))]))


def _cv(feats: list[dict], y: np.ndarray, folds: np.ndarray, cols: list[str]) -> np.ndarray:
    x = np.array([[np.nan_to_num(f[c]) for c in cols] for f in feats])
    out = np.zeros(len(y))
    for fold in np.unique(folds):
        test = folds == fold
        w, mu, sd = _logistic(x[~test], y[~test])
        out[test] = np.c_[(x[test] - mu) / sd, np.ones(test.sum())] @ w
    return out


def evaluate(lme: str, lme_corpus: str, locomo: str, locomo_corpus: str) -> None:
    """Print the answer-level (cross-validated) and hit-level tables (module docstring)."""
    sets = {"LongMemEval": (lme, lme_corpus, "qid", "qid", (0.965, 1.0)),
            "LoCoMo": (locomo, locomo_corpus, "conv_id", "conv_id", (0.97, 0.95))}
    data = {}
    for name, (path, corpus_path, field, fold_key, keeps) in sets.items():
        corpus = _corpus(corpus_path, field)
        rows = [r for r in pickle.loads(Path(path).read_bytes())
                if not r["own"] or r["evidence"]]
        pairs = [(r, _features(r, corpus)) for r in rows]
        pairs = [(r, f) for r, f in pairs if f is not None]
        y = np.array([r["own"] for r, _ in pairs], dtype=int)
        folds = np.array([str(r["qmeta"][fold_key]) for r, _ in pairs])
        data[name] = ([f[0] for _, f in pairs], [f[1] for _, f in pairs], y, folds, keeps)
    names = [k for k in next(iter(data.values()))[0][0] if k != "z"]
    print("answer-level, cross-validated: AUC; other empty at own kept", end="")
    print("".join(f" | {n} @{k[0]}, @{k[1]}" for n, (*_, k) in data.items()))
    for extra in [None, *names]:
        cols = ["z"] if extra is None else ["z", extra]
        cells = []
        for feats, _, y, folds, keeps in data.values():
            s = _cv(feats, y, folds, cols)
            cells.append(f"{_auc(y, s):.3f}; " + ", ".join(
                f"{_empty_at(y, s, k):.3f}" for k in keeps))
        print(f"{'today' if extra is None else '+ ' + extra:18s} | " + " | ".join(cells))
    print("\nhit-level w × term added to every hit's logit: other empty at own kept")
    for term in [t for t in next(iter(data.values()))[1][0] if t != "z"]:
        line = f"{term:18s}"
        for w in (-1.0, -0.5, 0.0, 0.5, 1.0):
            cells = []
            for _, terms, y, _, keeps in data.values():
                s = np.array([(t["z"] + w * t[term]).max() for t in terms])
                cells += [f"{_empty_at(y, s, k):.3f}" for k in keeps]
            line += f" | w {w:+.1f}: " + "/".join(cells)
        print(line)


if __name__ == "__main__":
    commands = {"collect": collect, "margins": margins, "evaluate": evaluate}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
