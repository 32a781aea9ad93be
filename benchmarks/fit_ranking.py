"""Fit the ``conversation`` reranker's weights and the relevance model on tune splits.

``python -m octomem.benchmarks.fit_ranking CACHE_ROOT DATASET [--split tune]
[--group-by metadata.FIELD] [--halves conv-26,...]``: opens a bench cache entry
(``octomem bench`` built it: stored chunks, fts5 index, vectors), asks every tune query
of its own group and of another group (the abstention negatives), and fits by Newton's
method (L2 1.0; logistic regression, Cox 1958):

- the reranker: one logistic over the z-scored turn features per speaker kind
  (``peer`` from a chat between named people, ``user``/``assistant``), pointwise over each
  query's fused candidates;
- relevance: one logistic per hit over (cos, coverage, cos x coverage) of the reranked
  top 10, positives the judged hits, negatives the rest and every hit of a question asked
  of another group's memory; the floor maximises, averaged over the tune sets, the mean
  of the own questions that keep their evidence and the other-group questions that get
  an empty answer (:func:`fit_relevance`).

Writes ``features.npz`` beside ``--out``; ``--write`` puts the weights into the package
(``plugins/conversation/weights.json``, ``engine/relevance.json``; the document weights
there are ``benchmarks/fit_relevance.py``'s and are kept).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from octomem.engine.fusion import reciprocal_rank_fusion
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline, embedding_text
from octomem.engine.relevance import content_words, coverage
from octomem.engine.settings import load_settings
from octomem.engine.types import Filters
from octomem.plugins.conversation.expansion import (
    WordVectors,
    expansion_words,
    word_columns,
)
from octomem.plugins.conversation.features import (
    FEATURES,
    KINDS,
    Turn,
    TurnColumns,
    folded_words,
    query_terms,
    recalls_assistant,
    standardised,
    term_matches,
    turn_features,
    turn_of,
)
from octomem.plugins.conversation.options import ADDRESSED_BONUS
from octomem.plugins.conversation.ranker import addressed_bonus

from .arguments import bench_parser, fit_commands, run_main
from .dataset import load_dataset, parse_group_by

BINARY = tuple(f == "speaker" for f in FEATURES)
DEPTH = 100
#: The features each speaker kind's weights may use (the others stay 0): all of them.
#: The coverage columns (``win_cov``, ``prev_question``, ``session_cov``) lifted LoCoMo's
#: tune half in leave-one-conversation-out fits (nDCG@10 over the candidates 0.640 ->
#: 0.684) and LongMemEval's tune split in leave-one-question-out fits once ``speaker``
#: marks an assistant's turn the query addresses (0.720 -> 0.745; without that mark
#: they lowered it, 0.744 -> 0.729 keyword-only).
KIND_FEATURES = {"peer": FEATURES, "user": FEATURES, "assistant": FEATURES}


@dataclass
class Asked:
    """One question asked of one group: its candidates' features and labels."""

    own: bool
    kinds: np.ndarray      # (n,) index into KINDS
    x: np.ndarray          # (n, F) standardised features
    y: np.ndarray          # (n,) 1 for a judged turn
    cos: np.ndarray        # (n,)
    cov: np.ndarray        # (n,)
    group: str = ""        # the group asked (LoCoMo: the conversation)
    qid: str = ""          # the question's id
    recalls: bool = False  # the question refers to the assistant's words
    session: np.ndarray | None = None  # (n,) int64 session codes (same code, same session)
    position: np.ndarray | None = None  # (n,) int64 turn positions


def _turn(chunk, group: str, order: dict[int, int]) -> Turn | None:  # type: ignore[no-untyped-def]
    """The chunk's turn; for caches built before transcript ingest, from BEIR metadata."""
    turn = turn_of(chunk.metadata, chunk.text)
    if turn is not None:
        return turn
    meta = chunk.metadata
    role = meta.get("speaker") if meta.get("speaker") in ("user", "assistant") else None
    return Turn(group, str(meta.get("session", "")), order[chunk.id],
                meta.get("speaker"), role, len(chunk.text.split()))


_WORDS: dict[int, WordVectors] = {}


def word_vectors(pipeline: Pipeline) -> WordVectors:
    """Return the :class:`WordVectors` of ``pipeline``'s embedder, one per embedder (the
    reranker's ``expansion`` column, as the ``conversation`` reranker computes it)."""
    embedder = pipeline.arms.embedder
    return _WORDS.setdefault(id(embedder), WordVectors(embedder))


def ask(pipeline: Pipeline, text: str, field: str, group: str, judged: dict[str, int],
        order: dict[int, int], own: bool, semantic: bool = True, qid: str = "") -> Asked | None:
    """Run both arms (the keyword arm alone without ``semantic``) for ``text`` inside
    ``group`` and return the candidates' features (cosines NaN without ``semantic``)."""
    arms = pipeline.arms
    filters = Filters(metadata={field: group})
    runs = [arms.keyword.search(text, filters, DEPTH)]
    if semantic:
        vector = arms.embedder.embed_query(text)
        runs.append(arms.semantic.search(vector, filters, DEPTH))
    fused = reciprocal_rank_fusion(runs, pipeline.settings.retrieval.rrf_k)
    chunks = arms.storage.get_chunks([f.chunk_id for f in fused])
    if not chunks:
        return None
    cos = (arms.semantic.vectors([c.id for c in chunks]) @ vector if semantic
           else np.full(len(chunks), np.nan))
    kw = {h.chunk_id: h.score for h in runs[0]}
    turns = [_turn(c, group, order) for c in chunks]
    texts = [embedding_text(c) for c in chunks]
    columns = TurnColumns.of(turns)
    expansion, soft = (word_columns(expansion_words(text), columns.speakers,
                                    [expansion_words(t) for t in texts], word_vectors(pipeline),
                                    text_words=[expansion_words(c.text) for c in chunks])
                       if semantic else (None, None))
    raw = turn_features(folded_words(text), turns, np.array([kw.get(c.id, 0.0) for c in chunks]),
                        cos, term_matches(query_terms(text), texts),
                        np.array(["?" in c.text for c in chunks], dtype=bool), expansion, soft)
    words = content_words(text)
    return Asked(
        own, np.array([KINDS.index(t.role or "peer") for t in turns]),
        standardised(raw, BINARY),
        np.array([1.0 if judged.get(c.document_id, 0) > 0 else 0.0 for c in chunks]),
        cos.astype(np.float64),
        np.array([coverage(words, embedding_text(c)) for c in chunks]), group, qid,
        recalls_assistant(text), columns.group, columns.position)


def logistic(
    x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None, l2: float = 1.0
) -> np.ndarray:
    """Fit ``P(y=1) = σ(x·β)`` by Newton's method with an L2 penalty (the last column, a
    bias when it is all ones, is penalised too, lightly)."""
    w = np.ones(len(y)) if w is None else w
    beta = np.zeros(x.shape[1])
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-(x @ beta)))
        grad = x.T @ (w * (p - y)) + l2 * beta
        hess = (x * (w * p * (1 - p))[:, None]).T @ x + l2 * np.eye(len(beta))
        step = np.linalg.solve(hess, grad)
        beta -= step
        if np.abs(step).max() < 1e-9:
            break
    return beta


def shipped_weights(kinds: set[str]) -> dict[str, list[float]]:
    """Return the package's weights of ``kinds``, each column the file lacks at 0
    (``fit --kinds``: the kinds not refitted keep their weights, new columns unused)."""
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    named = data["features"]
    out = {}
    for kind in kinds:
        old = data["weights"][kind]
        out[kind] = [float(old[named.index(f)]) if f in named else 0.0 for f in FEATURES]
        out[kind].append(float(old[-1]))
    return out


def fit_reranker(asked: list[Asked], kinds: set[str] | None = None) -> dict[str, list[float]]:
    """Per speaker kind, logistic weights over the z-scored features (+ bias); a kind not
    in ``kinds`` (when given) keeps the package's weights (:func:`shipped_weights`)."""
    out = shipped_weights(set(KINDS) - kinds) if kinds is not None else {}
    for k, kind in enumerate(KINDS):
        if kind in out:
            continue
        used = [FEATURES.index(f) for f in KIND_FEATURES[kind]]
        xs, ys = [], []
        for a in asked:
            if a.own and a.y.any():
                sel = a.kinds == k
                xs.append(np.hstack([a.x[sel][:, used], np.ones((sel.sum(), 1))]))
                ys.append(a.y[sel])
        if not xs or not np.concatenate(ys).any():
            out[kind] = []
            continue
        beta = logistic(np.vstack(xs), np.concatenate(ys))
        full = np.zeros(len(FEATURES) + 1)
        full[used], full[-1] = beta[:-1], beta[-1]
        out[kind] = [round(float(v), 4) for v in full]
    return out


def ranked(a: Asked, weights: dict[str, list[float]],
           addressed: float = ADDRESSED_BONUS) -> np.ndarray:
    """Candidate order under ``weights`` (best first), with the reranker's bonus for an
    assistant's turn when the question refers to its words (``arms.conversation.addressed``)."""
    score = np.zeros(len(a.y))
    for k, kind in enumerate(KINDS):
        sel = a.kinds == k
        if sel.any() and weights.get(kind):
            w = np.asarray(weights[kind])
            score[sel] = a.x[sel] @ w[:-1] + w[-1]
    score += addressed_bonus(a.kinds, a.recalls, addressed)
    return np.argsort(-score, kind="stable")


def groups(dataset, field: str) -> Iterator[tuple[str, str, str, dict[str, int]]]:  # type: ignore[no-untyped-def]
    """Yield (query id, text, its group, qrels)."""
    for qid, text in dataset.queries.items():
        yield qid, text, str(dataset.query_metadata[qid][field]), dataset.qrels[qid]


def collect(root: Path, folder: Path, split: str, group_by: str, only: set[str],
            semantic: bool = True) -> list[Asked]:
    """Ask every judged query of ``split`` (groups in ``only`` when given) of its own
    group and of the next group (cyclically, among the same groups)."""
    field = parse_group_by(group_by) or ""
    dataset = load_dataset(folder, split)
    pipe = {"reranker": None} if semantic else {"reranker": None, "semantic": None}
    loaded = load_settings(overrides={"pipeline": pipe}, read_user_config=False)
    pipeline = Pipeline(loaded, load_registry(), root)
    try:
        pipeline.warm()
        order: dict[int, int] = {}
        seen: dict[str, int] = {}
        for chunk in pipeline.arms.storage.iter_chunks():
            group = str(chunk.metadata.get(field))
            order[chunk.id] = seen.get(group, 0)
            seen[group] = order[chunk.id] + 1
        asked_groups = sorted({g for _, _, g, _ in groups(dataset, field)
                               if not only or g in only})
        out = []
        for qid, text, group, judged in groups(dataset, field):
            if group not in asked_groups:
                continue
            other = asked_groups[(asked_groups.index(group) + 1) % len(asked_groups)]
            for target, own in ((group, True), (other, False)):
                a = ask(pipeline, text, field, target, judged if own else {}, order, own,
                        semantic, qid)
                if a is not None:
                    out.append(a)
        return out
    finally:
        pipeline.close()


def ndcg10(y: np.ndarray, order: np.ndarray, judged: int) -> float:
    """nDCG@10 of binary labels ``y`` in ``order`` with ``judged`` relevant in all."""
    gains = y[order[:10]] / np.log2(np.arange(2, 2 + min(10, len(order))))
    ideal = (1 / np.log2(np.arange(2, 2 + min(10, judged)))).sum()
    return float(gains.sum() / ideal) if ideal else 0.0


#: The package's reranker weights (``fit --write`` replaces them).
WEIGHTS = Path(__file__).resolve().parents[1] / "plugins" / "conversation" / "weights.json"
#: The embedder whose cosines the relevance weights are fitted on (the bench caches
#: MiniLM, the default): a model id prefix (:meth:`RelevanceModel.fits`).
EMBEDDER = "fastembed:all-MiniLM-L6-v2-int8"
#: Floors tried when choosing ``retrieval.relevance_floor`` (0.001 steps up to 0.2).
FLOORS = np.round(np.arange(0.001, 0.2, 0.001), 3)


def choose_floor(per_set: dict[str, tuple[list[float], list[float]]]) -> float:
    """Return the floor of :data:`FLOORS` that maximises, averaged over the sets, the
    balanced accuracy ``(share of own >= floor + share of other < floor) / 2``; ties go
    to the higher floor.

    :param per_set: set name -> (best relevance of each own question whose evidence made
        the top 10, best relevance of each question asked of another group).
    :raises ValueError: a set without own or other questions.
    """
    rows = []
    for name, (own, other) in per_set.items():
        if not own or not other:
            raise ValueError(f"{name}: no own or no other-group questions to choose a floor")
        o, n = np.asarray(own), np.asarray(other)
        rows.append([(np.mean(o >= f) + np.mean(n < f)) / 2 for f in FLOORS])
    score = np.mean(rows, axis=0)
    return float(FLOORS[len(score) - 1 - int(np.argmax(score[::-1]))])


def fit_relevance(sets: dict[str, list[Asked]],
                  weights: dict[str, list[float]]) -> dict[str, object]:
    """Fit relevance on the reranked top 10 of own and other-group questions of every
    set, and choose the floor.

    The floor maximises, averaged over the sets (each chat style counts the same), the
    mean of two shares: own questions whose evidence made the top 10 that keep a
    non-empty answer, and questions asked of another group that get an empty one
    (balanced accuracy); ties go to the higher floor."""
    rows, labels, tops = [], [], []
    asked = [a for s in sets.values() for a in s]
    for a in asked:
        top = ranked(a, weights)[:10]
        tops.append(top)
        rows.append(np.stack([a.cos[top], a.cov[top], a.cos[top] * a.cov[top]], axis=1))
        labels.append(a.y[top])
    x = np.vstack(rows)
    y = np.concatenate(labels)
    known = np.isfinite(x[:, 0])
    hybrid = logistic(np.hstack([x[known], np.ones((known.sum(), 1))]), y[known], l2=0.1)
    keyword = logistic(np.stack([x[:, 1], np.ones(len(x))], axis=1), y, l2=0.1)
    owner = [name for name, s in sets.items() for _ in s]
    per_set: dict[str, tuple[list[float], list[float]]] = {n: ([], []) for n in sets}
    for a, top, r, name in zip(asked, tops, rows, owner, strict=True):
        z = np.where(np.isfinite(r[:, 0]), np.nan_to_num(r) @ hybrid[:-1] + hybrid[-1],
                     r[:, 1] * keyword[0] + keyword[1])
        best = float((1 / (1 + np.exp(-z))).max())
        if a.own and a.y[top].any():
            per_set[name][0].append(best)
        elif not a.own:
            per_set[name][1].append(best)
    floor = choose_floor(per_set)
    return {
        "hybrid": [round(float(v), 4) for v in hybrid],
        "keyword": [round(float(v), 4) for v in keyword],
        "floor": floor,
        "per_set": {name: {"kept_own": round(float(np.mean(np.array(own) >= floor)), 4),
                           "abstained_other": round(float(np.mean(np.array(other) < floor)), 4),
                           "own_questions": len(own), "other_questions": len(other)}
                    for name, (own, other) in per_set.items()},
    }


def main(argv: list[str] | None = None) -> None:
    """Command line: ``collect`` features of one dataset, or ``fit`` collected sets."""
    import pickle

    parser = bench_parser("fit_ranking", __doc__)
    c, f = fit_commands(parser, "write the package's weight files")
    c.add_argument("--keyword-only", action="store_true", help="no semantic arm (no vectors)")
    f.add_argument("--kinds", default="", help="refit only these speaker kinds (comma-"
                   "separated); the others keep the package's weights, new columns 0")
    f.add_argument("--keep-relevance", action="store_true",
                   help="--write leaves engine/relevance.json as it is")
    args = parser.parse_args(argv)
    if args.command == "collect":
        only = {g for g in args.only.split(",") if g}
        asked = collect(args.cache_root, args.dataset, args.split, args.group_by, only,
                        not args.keyword_only)
        args.out.write_bytes(pickle.dumps(asked))
        print(f"{len(asked)} questions asked -> {args.out}")
        return
    sets = {p.stem: pickle.loads(p.read_bytes()) for p in args.collected}
    asked = [a for s in sets.values() for a in s]
    weights = fit_reranker(asked, {k for k in args.kinds.split(",") if k} or None)
    summary: dict[str, object] = {}
    for name, s in sets.items():
        own = [a for a in s if a.own and a.y.any()]
        summary[name] = round(float(np.mean([ndcg10(a.y, ranked(a, weights), int(a.y.sum()))
                                              for a in own])), 4)
    relevance = fit_relevance(sets, weights)
    print(json.dumps({"reranker": weights, "tune_ndcg10_candidates": summary,
                      "relevance": relevance}, indent=1))
    if args.write:
        here = Path(__file__).resolve().parents[1]
        source = "fitted by benchmarks/fit_ranking.py on " + ", ".join(sorted(sets))
        WEIGHTS.write_text(json.dumps({
            "source": source, "features": list(FEATURES), "binary": list(BINARY),
            "weights": {k: weights[k] or [0.0] * (len(FEATURES) + 1) for k in KINDS},
        }, indent=1) + "\n", encoding="utf-8")
        if args.keep_relevance:
            return
        path = here / "engine" / "relevance.json"
        kept = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        kept.update({"source": source, "embedder": EMBEDDER, "hybrid": relevance["hybrid"],
                     "keyword": relevance["keyword"], "floor": relevance["floor"]})
        path.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")  # keeps "document"


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.fit_ranking")
