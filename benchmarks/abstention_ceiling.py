"""How far can a model-free answer-level classifier take a document store's abstention?

Issue 12 asks, on SciFact, that a claim asked of the store *without* its cited abstracts
get no hits in >= 90 % of cases while >= 95 % of the claims whose evidence made the top
10 keep it. The shipped document relevance (:mod:`octomem.engine.relevance`, fitted by
``benchmarks/fit_relevance.py``) reaches 0.28 / 0.92 there. This study asks whether any
model-free feature set could, trained and tested by cross-validation on SciFact *train*
only (``qrels/train.tsv``; the test split is never read).

``python -m octomem.benchmarks.abstention_ceiling collect CACHE_ENTRY DATASET --split train
--out NAME.pkl`` opens a bench cache entry (``octomem bench`` built it) and, per judged
claim, keeps each arm's run over the whole store (``candidate_k`` plus the hidden chunks,
so the run without them is exact, as :mod:`.masked` makes it), the MiniLM vectors of the
first documents of both runs, and the answer ``recall`` gives (top 10, floors 0) with and
without the claim's relevant documents (:func:`.masked.hidden_chunks`).

``python -m octomem.benchmarks.abstention_ceiling cv NAME.pkl [--out REPORT.md]``
computes per answer the :data:`FEATURES` (each arm's normalised best score and its gaps,
the arms' agreement, the answer's first hit's word coverage weighted by idf and by rare
words, the tightness of the first documents' neighbourhood, the shipped relevance), and
for each feature set fits a logistic classifier (Cox, 1958; linear and with every pairwise
product) of "this answer holds the evidence" (positives: the claims asked of the whole
store whose evidence is in the answer's top 10; negatives: every claim asked without its
relevant documents), scored out of fold by :data:`FOLDS`-fold cross-validation grouped by
claim (a claim's two answers are in the same fold). It reports each set's ROC AUC and the
trade-off curve: the share of removed-evidence answers left empty at the floor that keeps
:data:`KEPT_LEVELS` of the own answers, and the share kept at the floor that empties 90 %.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.manager import load_registry
from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline, embedding_text
from octomem.engine.settings import load_settings
from octomem.engine.types import Filters
from octomem.engine.words import content_words, query_words, root

from .arguments import bench_parser, collect_command, collected, existing_file, run_main
from .dataset import load_dataset
from .fit_ranking import logistic
from .masked import chunks_by_document, hidden_chunks
from .subsets import ABSTENTION_TOP_K

#: Entries of each arm's run the features are taken over (``retrieval.candidate_k``'s
#: default, the depth the document weights were fitted at).
RUN_DEPTH = 100
#: Documents of the semantic run whose vectors give the neighbourhood features.
NEIGHBOURHOOD = 10
#: A query word is *rare* when fewer than this share of the store's chunks hold it.
RARE_SHARE = 0.005
#: Cross-validation folds (grouped by claim) and the seed of their draw.
FOLDS, SEED = 10, 12
#: L2 penalty of the logistic fits (on standardised columns).
L2 = 1.0
#: Shares of own answers kept at which the removed-evidence answers left empty are read.
KEPT_LEVELS = (0.80, 0.85, 0.90, 0.95)
#: Issue 12's abstention targets: removed-evidence answers empty, own answers kept.
EMPTY_TARGET, KEPT_TARGET = 0.90, 0.95

#: Every feature of an answer (:func:`answer_features`), by family.
FAMILIES: dict[str, tuple[str, ...]] = {
    "semantic": ("cos_1", "cos_gap_1_2", "cos_gap_1_5", "cos_gap_1_10", "cos_lift", "cos_z"),
    "keyword": ("bm25_strength", "bm25_share", "bm25_gap_1_2", "bm25_z"),
    "agreement": ("same_top", "rr_semantic_top_in_keyword", "rr_keyword_top_in_semantic"),
    "first hit": ("hit_cos", "hit_coverage", "hit_idf_coverage", "hit_rare_coverage",
                  "best_idf_coverage_10"),
    "neighbourhood": ("tightness", "isolation"),
    "shipped": ("shipped_relevance",),
    "query": ("query_words", "rare_words"),
}
FEATURES = tuple(f for family in FAMILIES.values() for f in family)


def collect(root_dir: Path, folder: Path, split: str) -> dict[str, Any]:
    """Ask every judged claim of ``split`` (module docstring); return what the study
    reads: ``df`` (root -> chunks holding it), ``chunks`` (the store's chunk count),
    ``texts`` (chunk id -> (document id, title and text)) and ``queries``."""
    dataset = load_dataset(folder, split)
    loaded = load_settings(overrides={"retrieval": {
        "relevance_floor": 0.0, "document_relevance_floor": 0.0, "relative_floor": 0.0,
        "weak_answer_floor": 0.0}}, read_user_config=False)
    pipeline = Pipeline(loaded, load_registry(), root_dir)
    try:
        pipeline.warm()
        arms = pipeline.arms
        by_doc = chunks_by_document(pipeline)
        texts = {c.id: (c.document_id, embedding_text(c)) for c in arms.storage.iter_chunks()}
        df: Counter[str] = Counter()
        for _, text in texts.values():
            df.update({root(w) for w in content_words(text)})
        queries = {}
        for qid, text in dataset.queries.items():
            relevant = {d for d, g in dataset.qrels[qid].items() if g > 0}
            hidden = frozenset(c for d in relevant for c in by_doc.get(d, ()))
            k = RUN_DEPTH + len(hidden)
            semantic = [(h.chunk_id, h.score) for h in
                        arms.semantic.search(arms.embedder.embed_query(text), Filters(), k)]
            keyword = [(h.chunk_id, h.score) for h in arms.keyword.search(text, Filters(), k)]
            firsts = sorted({c for hid in (frozenset(), hidden) for c, _ in _by_document(
                [e for e in semantic if e[0] not in hid], texts)[:NEIGHBOURHOOD]})
            vectors = dict(zip(firsts, arms.semantic.vectors(firsts), strict=True))
            own = _answer(pipeline, text)
            with hidden_chunks(pipeline, hidden):
                removed = _answer(pipeline, text)
            queries[qid] = {"text": text, "relevant": relevant, "hidden": hidden,
                            "semantic": semantic, "keyword": keyword, "vectors": vectors,
                            "own": own, "removed": removed}
        return {"df": dict(df), "chunks": len(texts), "texts": texts, "queries": queries}
    finally:
        pipeline.close()


def _answer(pipeline: Pipeline, text: str) -> list[tuple[int, str, float | None]]:
    """Return recall's answer (top 10, floors 0) as (chunk id, document id, relevance)."""
    answer = recall_scopes([("local", pipeline)],
                           RecallRequest(text, ABSTENTION_TOP_K, Filters(), "chunk", False),
                           memory_knobs(pipeline.settings))
    return [(h.chunk.id, h.chunk.document_id,
             None if h.relevance is None else h.relevance.probability) for h in answer.hits]


def _by_document(run: Sequence[tuple[int, float]], texts: dict[int, tuple[str, str]]
                 ) -> list[tuple[int, float]]:
    """Keep each document's first chunk of a run (best first)."""
    seen: set[str] = set()
    out = []
    for chunk, score in run:
        if texts[chunk][0] not in seen:
            seen.add(texts[chunk][0])
            out.append((chunk, score))
    return out


def answer_features(data: dict[str, Any], q: dict[str, Any], own: bool) -> dict[str, float]:
    """Return the :data:`FEATURES` of claim ``q`` asked of the whole store (``own``) or
    without its relevant documents. Runs are collapsed to documents (a document's best
    chunk), cut at :data:`RUN_DEPTH`; BM25 runs shorter than that are padded with 0 (the
    other chunks match no word). Scores: cosines in [-1, 1], BM25 higher-is-better."""
    texts, df, n = data["texts"], data["df"], data["chunks"]
    hidden = set() if own else q["hidden"]
    sem = _by_document([e for e in q["semantic"] if e[0] not in hidden][:RUN_DEPTH], texts)
    kw = _by_document([e for e in q["keyword"] if e[0] not in hidden][:RUN_DEPTH], texts)
    cos = np.array([s for _, s in sem])
    bm = np.array([s for _, s in kw] + [0.0] * (RUN_DEPTH - len(kw)))
    words = sorted({root(w) for w in query_words(q["text"])})
    idf = np.array([math.log((n - df.get(w, 0) + 0.5) / (df.get(w, 0) + 0.5) + 1)
                    for w in words])
    rare = np.array([df.get(w, 0) < RARE_SHARE * n for w in words], dtype=bool)

    def held(chunk: int) -> np.ndarray:
        have = {root(w) for w in content_words(texts[chunk][1])}
        return np.array([w in have for w in words], dtype=bool)

    answer = q["own"] if own else q["removed"]
    first = answer[0][0] if answer else sem[0][0]
    h = held(first)
    rank_kw = {c: r for r, (c, _) in enumerate(kw, start=1)}
    rank_sem = {c: r for r, (c, _) in enumerate(sem, start=1)}
    top = [c for c, _ in sem[:NEIGHBOURHOOD]]
    v = np.stack([q["vectors"][c] for c in top])
    gram = v @ v.T
    spread = bm.std()
    return {
        "cos_1": cos[0], "cos_gap_1_2": cos[0] - cos[1], "cos_gap_1_5": cos[0] - cos[4],
        "cos_gap_1_10": cos[0] - cos[9], "cos_lift": cos[0] - cos.mean(),
        "cos_z": (cos[0] - cos.mean()) / cos.std(),
        "bm25_strength": bm[0] / math.log(n), "bm25_share": bm[0] / max(idf.sum(), 1e-9),
        "bm25_gap_1_2": (bm[0] - bm[1]) / bm[0] if bm[0] > 0 else 0.0,
        "bm25_z": (bm[0] - bm.mean()) / spread if spread > 0 else 0.0,
        "same_top": float(bool(kw) and kw[0][0] == sem[0][0]),
        "rr_semantic_top_in_keyword": 1 / rank_kw.get(sem[0][0], math.inf),
        "rr_keyword_top_in_semantic": 1 / rank_sem.get(kw[0][0], math.inf) if kw else 0.0,
        "hit_cos": dict(sem).get(first, cos[-1]),
        "hit_coverage": float(h.mean()) if len(h) else 0.0,
        "hit_idf_coverage": float(idf[h].sum() / idf.sum()) if len(h) else 0.0,
        "hit_rare_coverage": float(h[rare].mean()) if rare.any() else 1.0,
        "best_idf_coverage_10": max((float(idf[held(c)].sum() / idf.sum()) for c in top),
                                    default=0.0) if len(idf) else 0.0,
        "tightness": float((gram.sum() - len(top)) / max(len(top) * (len(top) - 1), 1)),
        "isolation": float(cos[0] - gram[0, 1:].max()),
        "shipped_relevance": max((p for *_, p in answer if p is not None), default=0.0),
        "query_words": float(len(words)), "rare_words": float(rare.sum()),
    }


def feature_table(data: dict[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(X, y, groups)``: ``X`` (n, len(FEATURES)) float64, ``y`` (n,) 1 for an own
    answer holding the evidence in its top 10, 0 for a removed-evidence answer (own
    answers without evidence are left out: the targets do not count them), ``groups`` the
    claim ids."""
    rows, labels, groups = [], [], []
    for qid, q in data["queries"].items():
        if any(doc in q["relevant"] for _, doc, _ in q["own"]):
            rows.append(answer_features(data, q, True))
            labels.append(1)
            groups.append(qid)
        rows.append(answer_features(data, q, False))
        labels.append(0)
        groups.append(qid)
    x = np.array([[r[f] for f in FEATURES] for r in rows], dtype=np.float64)
    return x, np.array(labels), np.array(groups)


def grouped_folds(groups: np.ndarray, folds: int = FOLDS, seed: int = SEED) -> np.ndarray:
    """Return each row's fold (0..folds-1), every row of one group in the same fold."""
    unique = np.random.default_rng(seed).permutation(np.unique(groups))
    fold_of = {g: i % folds for i, g in enumerate(unique)}
    return np.array([fold_of[g] for g in groups])


def out_of_fold(x: np.ndarray, y: np.ndarray, fold: np.ndarray, quadratic: bool = False
                ) -> np.ndarray:
    """Return each row's logit from a logistic fit on the other folds (columns
    standardised on the training folds; ``quadratic``: every pairwise product added)."""
    if quadratic:
        k = x.shape[1]
        x = np.hstack([x] + [x[:, [a]] * x[:, [b]] for a in range(k) for b in range(a, k)])
    scores = np.zeros(len(y))
    for f in np.unique(fold):
        train, test = fold != f, fold == f
        mu, sd = x[train].mean(0), x[train].std(0) + 1e-9
        design = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
        beta = logistic(design[train], y[train].astype(np.float64), l2=L2)
        scores[test] = design[test] @ beta
    return scores


def roc_auc(scores: np.ndarray, y: np.ndarray) -> float:
    """Return the ROC AUC (Mann-Whitney U over the ranks, ties averaged)."""
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    for value in np.unique(scores):  # average tied ranks
        tied = scores == value
        ranks[tied] = ranks[tied].mean()
    pos = int(y.sum())
    return float((ranks[y == 1].sum() - pos * (pos + 1) / 2) / (pos * (len(y) - pos)))


def empty_at_kept(scores: np.ndarray, y: np.ndarray, kept: float) -> float:
    """Return the share of negatives below the highest floor keeping ``kept`` of the
    positives (a positive is kept at or above the floor)."""
    pos = np.sort(scores[y == 1])
    floor = pos[int(math.floor(round((1 - kept) * len(pos), 9)))]  # 0.1 * 10 is 0.999…
    return float(np.mean(scores[y == 0] < floor))


def kept_at_empty(scores: np.ndarray, y: np.ndarray, empty: float = EMPTY_TARGET) -> float:
    """Return the share of positives kept at the lowest floor leaving ``empty`` of the
    negatives below it."""
    neg = np.sort(scores[y == 0])
    floor = neg[int(math.ceil(round(empty * len(neg), 9))) - 1]
    return float(np.mean(scores[y == 1] > floor))


def feature_sets() -> dict[str, tuple[str, ...]]:
    """Return the feature sets studied: each family alone, and all together."""
    sets = {name: cols for name, cols in FAMILIES.items() if name != "query"}
    sets["all"] = FEATURES
    return sets


def study(data: dict[str, Any]) -> str:
    """Return the study's report (Markdown): per feature its AUC, per feature set its
    cross-validated AUC and trade-off curve, linear and quadratic."""
    x, y, groups = feature_table(data)
    fold = grouped_folds(groups)
    lines = [f"{int(y.sum())} own answers with evidence in the top 10 (positives), "
             f"{int((y == 0).sum())} answers without the relevant documents (negatives), "
             f"{len(np.unique(groups))} claims; {FOLDS}-fold cross-validation by claim.", "",
             "| feature | AUC alone |", "|---|---|"]
    lines += [f"| {f} | {roc_auc(x[:, i], y):.3f} |" for i, f in enumerate(FEATURES)]
    head = " | ".join(f"empty @ kept {k:.2f}" for k in KEPT_LEVELS)
    lines += ["", f"| feature set | model | AUC | {head} | kept @ empty 0.90 |",
              "|---|---|---|" + "---|" * len(KEPT_LEVELS) + "---|"]
    for name, cols in feature_sets().items():
        index = [FEATURES.index(c) for c in cols]
        for quadratic in (False, True) if len(index) > 1 else (False,):
            s = out_of_fold(x[:, index], y, fold, quadratic)
            curve = " | ".join(f"{empty_at_kept(s, y, k):.3f}" for k in KEPT_LEVELS)
            lines.append(f"| {name} | {'quadratic' if quadratic else 'linear'} | "
                         f"{roc_auc(s, y):.3f} | {curve} | {kept_at_empty(s, y):.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Command line: ``collect`` the runs, or cross-validate (``cv``) the feature sets."""
    parser = bench_parser("abstention_ceiling", __doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    collect_command(sub)
    s = sub.add_parser("cv", help="cross-validate the feature sets")
    s.add_argument("collected", type=existing_file, help="the file `collect` wrote")
    s.add_argument("--out", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    data = collected(args, collect, lambda data: f"{len(data['queries'])} claims")
    if data is None:
        return
    report = study(data)
    print(report, end="")
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.abstention_ceiling")
