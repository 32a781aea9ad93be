"""Word expansion (fit.md, "Word expansion"): the variants measured before the column shipped.

``python benchmarks/results/conversations/word-expansion/levers.py collect CACHE_ENTRY
DATASET OUT.pkl [--only G,...] [--split S] [--group-by metadata.F]`` runs
``fit_ranking collect`` (LoCoMo's tune half: ``--only conv-26,conv-30,conv-41,conv-42,conv-43``)
and keeps, beside each question's candidates, their chunk ids, every candidate's text and
the vector of every word of them and of the questions, each embedded alone by the
cache's embedder. ``grid OUT.pkl`` prints leave-one-group-out refits (LoCoMo: one
conversation per fold; more groups: 5 folds) with the first 12 columns, then with each
variant of the column added: threshold tau, ``max`` (best matching word over all question
words) or ``sumq`` (best per question word, summed), the match weighted by nothing, the
word's IDF over the collected texts (``store``) or among the candidates (``cand``).
``folds OUT.pkl TAU HOW IDF`` prints one variant per conversation and dataset category
with a paired t-test; ``show OUT.pkl TAU QUESTION...`` prints each question word's
expansions. ``NOMORPH=1`` also drops words sharing a long prefix with a question word.
"""

from __future__ import annotations

import json
import os
import pickle
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

import octomem.benchmarks.fit_ranking as fr
from octomem.benchmarks.fit_ranking import Asked, logistic, ndcg10  # noqa: F401 (unpickling)
from octomem.engine.words import FUNCTION_WORDS, fold

WORD = re.compile(r"[^\W_]+")
QUERIES = Path("/work/shared/data/locomo/queries.jsonl")
_ask = fr.ask


def _ask_keeping_ids(pipeline: Any, text: str, field: str, group: str, *args: Any,
                     **kw: Any) -> Any:
    a = _ask(pipeline, text, field, group, *args, **kw)
    if a is not None:  # the same fused list again, for its chunk ids
        from octomem.engine.fusion import reciprocal_rank_fusion
        from octomem.engine.types import Filters
        arms, filters = pipeline.arms, Filters(metadata={field: group})
        runs = [arms.keyword.search(text, filters, fr.DEPTH),
                arms.semantic.search(arms.embedder.embed_query(text), filters, fr.DEPTH)]
        fused = reciprocal_rank_fusion(runs, pipeline.settings.retrieval.rrf_k)
        a.ids = [c.id for c in arms.storage.get_chunks([f.chunk_id for f in fused])]
        a.text = text
        assert len(a.ids) == len(a.y)
    return a


def _words(text: str) -> set[str]:
    return {w for w in (x.casefold() for x in WORD.findall(text))
            if len(w) >= 3 and not w.isdigit() and w not in FUNCTION_WORDS}


def collect(entry: str, dataset: str, out: str, options: dict[str, str]) -> None:
    """Collect the candidates, their texts and the words' vectors into ``out``."""
    from octomem.engine.manager import load_registry
    from octomem.engine.pipeline import Pipeline
    from octomem.engine.settings import load_settings

    fr.ask = _ask_keeping_ids
    only = {g for g in options.get("--only", "").split(",") if g}
    asked = fr.collect(Path(entry), Path(dataset), options.get("--split", "test"),
                       options.get("--group-by", "metadata.conv_id"), only, True)
    needed = {i for a in asked for i in a.ids}
    loaded = load_settings(overrides={"pipeline": {"reranker": None}}, read_user_config=False)
    pipeline = Pipeline(loaded, load_registry(), Path(entry))
    try:
        pipeline.warm()
        texts, names = {}, set()
        for c in pipeline.arms.storage.iter_chunks():
            if c.metadata.get("speaker"):
                names.add(str(c.metadata["speaker"]).casefold())
            if c.id in needed:
                texts[c.id] = c.text
        df: Counter[str] = Counter()
        for t in texts.values():
            df.update(_words(t))
        words = sorted(set(df) | {w for a in asked for w in _words(a.text)})
        wall, cpu = time.perf_counter(), time.process_time()
        vec = np.vstack([pipeline.arms.embedder.embed_documents(words[s:s + 256])
                         for s in range(0, len(words), 256)]).astype(np.float32)
        print(f"{len(words)} words embedded: {time.perf_counter() - wall:.1f} s wall, "
              f"{time.process_time() - cpu:.1f} s CPU")
    finally:
        pipeline.close()
    Path(out).write_bytes(pickle.dumps({"asked": asked, "texts": texts, "words": words,
                                        "vec": vec, "df": df, "names": names}))


class Expander:
    """The column's variants over one collected file."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.index = {w: i for i, w in enumerate(data["words"])}
        self.vec, self.names = data["vec"], data["names"]
        self.turn_words = {i: sorted(_words(t)) for i, t in data["texts"].items()}
        self.vocab = sorted({w for ws in self.turn_words.values() for w in ws})
        self.pos = {w: j for j, w in enumerate(self.vocab)}
        self.vv = self.vec[[self.index[w] for w in self.vocab]]
        n, df = len(data["texts"]), data["df"]
        self.idf = np.array([max(np.log((n - df[w] + 0.5) / (df[w] + 0.5)), 0.0)
                             for w in self.vocab])
        self._sims: dict[str, tuple[list[str], np.ndarray]] = {}

    def sims(self, text: str) -> tuple[list[str], np.ndarray]:
        """The question's words (names out) and their ``(Q, V)`` cosines, own words 0."""
        if text not in self._sims:
            q = sorted(_words(text) - self.names)
            s = self.vec[[self.index[w] for w in q]] @ self.vv.T if q else np.zeros((0, 0))
            own = set(q) | {fold(w) for w in q}

            def same(w: str) -> bool:
                if fold(w) in own or w in own:
                    return True
                cuts = [(x, max(4, min(len(w), len(x)) - 3)) for x in q]
                return bool(os.environ.get("NOMORPH")) and any(
                    len(w) >= 4 and len(x) >= 4 and w[:c] == x[:c] for x, c in cuts)
            if q:
                s[:, np.array([same(w) for w in self.vocab])] = 0.0
            self._sims[text] = (q, s)
        return self._sims[text]

    def column(self, a: Any, tau: float, how: str, idf: str) -> np.ndarray:
        """The column of one question's candidates, ``(n,)``."""
        q, s = self.sims(a.text)
        n, out = len(a.ids), np.zeros(len(a.ids))
        flat, starts = [], []
        for cid in a.ids:
            starts.append(len(flat))
            flat.extend(self.pos[w] for w in self.turn_words.get(cid, []))
        if not q or not flat:
            return out
        at, first = np.array(flat), np.array(starts)
        g = np.where(s >= tau, s, 0.0)[:, at]
        if idf == "store":
            g = g * self.idf[at][None, :]
        elif idf == "cand":
            df = np.bincount(at, minlength=len(self.vocab))[at].astype(float)
            g = g * np.maximum(np.log((n - df + 0.5) / (df + 0.5)), 0.01)[None, :]
        holds = np.diff(np.append(first, len(flat))) > 0
        per_q = np.maximum.reduceat(g, first[holds], axis=1)
        out[holds] = per_q.max(axis=0) if how == "max" else per_q.sum(axis=0)
        return out


def z(col: np.ndarray) -> np.ndarray:
    sd = col.std()
    return (col - col.mean()) / sd if sd > 0 else np.zeros_like(col)


def loo(asked: list[Any], extra: list[np.ndarray] | None) -> dict[int, tuple[float, float]]:
    """Per own question (index): nDCG@10 and R@10 over its candidates, weights refitted
    without its fold (one group per fold up to 5 groups, else 5 folds)."""
    own = [(i, a) for i, a in enumerate(asked) if a.own and a.y.any()]
    groups = sorted({a.group for _, a in own})
    fold_of = {g: k % 5 for k, g in enumerate(groups)}

    def design(i: int, a: Any) -> np.ndarray:
        x = a.x[:, :12] if extra is None else np.hstack([a.x[:, :12], extra[i][:, None]])
        return np.hstack([x, np.ones((len(x), 1))])

    out = {}
    for f in sorted(set(fold_of.values())):
        train = [(i, a) for i, a in own if fold_of[a.group] != f]
        betas = {}
        for k in range(3):
            ys = [a.y[a.kinds == k] for _, a in train]
            if np.concatenate(ys).any():
                xs = [design(i, a)[a.kinds == k] for i, a in train]
                betas[k] = logistic(np.vstack(xs), np.concatenate(ys))
        for i, a in ((i, a) for i, a in own if fold_of[a.group] == f):
            d, score = design(i, a), np.zeros(len(a.y))
            for k, b in betas.items():
                score[a.kinds == k] = d[a.kinds == k] @ b
            score += fr.addressed_bonus(a.kinds, a.recalls, fr.ADDRESSED_BONUS)
            order = np.argsort(-score, kind="stable")
            out[i] = (ndcg10(a.y, order, int(a.y.sum())), a.y[order[:10]].sum() / a.y.sum())
    return out


def mean(per: dict[int, tuple[float, float]], keys: Any = None) -> tuple[float, float]:
    rows = np.array([per[k] for k in (per if keys is None else keys)])
    return round(float(rows[:, 0].mean()), 4), round(float(rows[:, 1].mean()), 4)


def grid(path: str) -> None:
    data = pickle.loads(Path(path).read_bytes())
    asked, ex = data["asked"], Expander(data)
    print(path, "12 columns", *mean(loo(asked, None)), flush=True)
    for tau in (0.35, 0.4, 0.45, 0.5, 0.55):
        for how in ("max", "sumq"):
            for idf in ("none", "store", "cand"):
                extra = [z(ex.column(a, tau, how, idf)) for a in asked]
                print(path, tau, how, idf, *mean(loo(asked, extra)), flush=True)


def folds(path: str, tau: float, how: str, idf: str) -> None:
    from scipy import stats

    data = pickle.loads(Path(path).read_bytes())
    asked, ex = data["asked"], Expander(data)
    base = loo(asked, None)
    new = loo(asked, [z(ex.column(a, tau, how, idf)) for a in asked])
    category = {}
    if QUERIES.exists():
        for line in QUERIES.open(encoding="utf-8"):
            row = json.loads(line)
            category[row["_id"]] = row["metadata"].get("category_name")
    for label, of in (("group", lambda a: a.group), ("category", lambda a: category.get(a.qid))):
        for value in sorted({of(asked[k]) for k in base}, key=str):
            keys = [k for k in base if of(asked[k]) == value]
            print(label, value, len(keys), mean(base, keys), "->", mean(new, keys))
    for j, name in enumerate(("nDCG@10", "R@10")):
        b = np.array([base[k][j] for k in base])
        e = np.array([new[k][j] for k in base])
        print(name, round(b.mean(), 4), "->", round(e.mean(), 4), "better", int((e > b).sum()),
              "worse", int((e < b).sum()), "paired t p", round(stats.ttest_rel(e, b).pvalue, 4))


def show(path: str, tau: float, questions: list[str]) -> None:
    ex = Expander(pickle.loads(Path(path).read_bytes()))
    for text in questions:
        q, s = ex.sims(text)
        print(text)
        for w, row in zip(q, s, strict=True):
            top = [j for j in np.argsort(-row)[:15] if row[j] >= tau]
            print("  ", w, "->", ", ".join(f"{ex.vocab[j]}:{row[j]:.2f}" for j in top))


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "collect":
        collect(args[0], args[1], args[2], dict(zip(args[3::2], args[4::2], strict=True)))
    elif command == "grid":
        grid(args[0])
    elif command == "folds":
        folds(args[0], float(args[1]), args[2], args[3])
    else:
        show(args[0], float(args[1]), args[2:])
