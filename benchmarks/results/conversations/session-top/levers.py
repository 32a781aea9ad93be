"""The list-question levers of fit.md, "Session top" (LoCoMo tune half only; none shipped).

``python benchmarks/results/conversations/session-top/levers.py dump CACHE_ENTRY OUT.pkl``
asks the 760 tune questions through the default pipeline (top 100, as the bench does) and
keeps each hit's text, session, conversation score and vector; ``reorder OUT.pkl`` prints
nDCG@10 / R@10 of the re-orderings (MMR on MiniLM similarity or on "same session", a
second keyword pass); ``refit COLLECTED.pkl`` (``fit_ranking collect``'s file) prints the
leave-one-conversation-out refits (pointwise as shipped, listwise, list-cue columns).
CACHE_ENTRY: the bench's ``locomo-*/fastembed-*`` folder.
"""

from __future__ import annotations

import collections
import math
import pickle
import re
import sys
from pathlib import Path

import numpy as np

# collect's file pickles its questions as ``__main__.Asked``: unpickled here as ours
from octomem.benchmarks.fit_ranking import Asked  # noqa: F401

TUNE = {"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"}
DATA = Path("/work/shared/data/locomo")
_WORD = re.compile(r"[^\W_]+")
NOT_PLURAL = {"is", "was", "has", "does", "this", "his", "its", "yes", "us", "as", "always",
              "perhaps", "various", "previous", "famous", "serious", "bus", "plus", "less"}


def list_cue(question: str) -> bool:
    """Whether a question asks for several things ("What activities ...", "How many ...")."""
    w = [x.casefold() for x in _WORD.findall(question)]
    if not w or w[0] not in ("what", "which", "where", "how", "who"):
        return False
    if w[:2] == ["how", "many"] or (w[0] == "where" and w[1:2] in (["has"], ["have"])):
        return True
    for x in w[1:5]:
        if x in ("kinds", "types", "ways", "things", "places", "activities", "events"):
            return True
        if x in ("kind", "type", "sort", "of"):
            continue
        if len(x) > 3 and x.endswith("s") and x not in NOT_PLURAL and x[-2:] not in ("ss", "us"):
            return True
        if x in ("has", "have", "did", "does", "do", "is", "are", "was", "were"):
            break
    return False


def dump(entry: Path, out: Path) -> None:
    """Ask the tune questions through the default pipeline; pickle each one's top 100."""
    from octomem.benchmarks.dataset import load_dataset
    from octomem.engine.manager import load_registry
    from octomem.engine.pipeline import Pipeline
    from octomem.engine.settings import load_settings
    from octomem.engine.types import Filters, Query

    ds = load_dataset(DATA, "test")
    pipe = Pipeline(load_settings(read_user_config=False), load_registry(), entry)
    pipe.warm()
    rows = []
    for qid, text in ds.queries.items():
        group = str(ds.query_metadata[qid]["conv_id"])
        if group not in TUNE:
            continue
        answer = pipe.search(Query(text, 100, Filters(metadata={"conv_id": group})))
        hits = [{"doc": h.chunk.document_id, "text": h.chunk.text,
                 "session": h.chunk.metadata.get("session"),
                 "score": h.contributions["conversation"].score} for h in answer.hits]
        rows.append({"text": text, "qrels": ds.qrels[qid], "hits": hits,
                     "vec": pipe.arms.semantic.vectors([h.chunk.id for h in answer.hits])})
    pipe.close()
    out.write_bytes(pickle.dumps(rows))


def metrics(rows: list[dict], orders: list[list[int]]) -> tuple[float, float]:
    """Mean nDCG@10 and R@10 (binary gains) of each row's hits in ``orders``."""
    nd, rc = [], []
    for r, order in zip(rows, orders, strict=True):
        rel = {d for d, v in r["qrels"].items() if v > 0}
        docs = [r["hits"][i]["doc"] for i in order[:10]]
        dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(docs) if d in rel)
        idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(rel))))
        nd.append(dcg / idcg if idcg else 0.0)
        rc.append(len(set(docs) & rel) / len(rel) if rel else 0.0)
    return float(np.mean(nd)), float(np.mean(rc))


def mmr(r: dict, lam: float, gate: bool, by_session: bool, depth: int = 40) -> list[int]:
    """The first 10 by maximal marginal relevance over the top ``depth`` (z-scored scores)."""
    n = len(r["hits"])
    if not n or (gate and not list_cue(r["text"])):
        return list(range(n))
    top = min(depth, n)
    s = np.array([h["score"] for h in r["hits"][:top]])
    s = (s - s.mean()) / (s.std() + 1e-9)
    if by_session:
        sessions = np.array([str(h["session"]) for h in r["hits"][:top]])
        sim = (sessions[:, None] == sessions[None, :]).astype(float)
    else:
        sim = r["vec"][:top] @ r["vec"][:top].T
    chosen, left = [], list(range(top))
    while left and len(chosen) < 10:
        penalty = sim[np.ix_(left, chosen)].max(axis=1) if chosen else np.zeros(len(left))
        j = left[int(np.argmax(s[left] - lam * penalty))]
        chosen.append(j)
        left.remove(j)
    return chosen + [i for i in range(n) if i not in chosen]


def second_pass(r: dict, lam: float, seeds: int, gate: bool, terms: int = 10) -> list[int]:
    """Add ``lam`` x the share of the first ``seeds`` hits' distinctive words a hit holds."""
    from octomem.engine.relevance import content_words

    n = len(r["hits"])
    if not n or (gate and not list_cue(r["text"])):
        return list(range(n))
    s = np.array([h["score"] for h in r["hits"]])
    words = [content_words(h["text"]) for h in r["hits"]]
    df = collections.Counter(w for ws in words for w in ws)
    asked = content_words(r["text"])
    tf = collections.Counter(w for ws in words[:seeds] for w in ws if w not in asked)
    idf = {w: math.log((n - df[w] + 0.5) / (df[w] + 0.5) + 1) for w in tf}
    weight = {w: idf[w] for w in sorted(tf, key=lambda w: -tf[w] * idf[w])[:terms]}
    total = sum(weight.values()) or 1.0
    fb = np.array([sum(weight.get(w, 0.0) for w in ws) / total for ws in words])
    fb[:seeds] = 0.0
    return list(np.argsort(-(s + lam * fb * (s.std() + 1e-9)), kind="stable"))


def reorder(path: Path) -> None:
    """Print the re-orderings' nDCG@10 / R@10 over the dumped top 100s."""
    rows = pickle.loads(path.read_bytes())
    print("main", metrics(rows, [list(range(len(r["hits"]))) for r in rows]))
    for by_session in (False, True):
        for gate in (True, False):
            for lam in (0.25, 0.5, 1.0, 2.0):
                got = metrics(rows, [mmr(r, lam, gate, by_session) for r in rows])
                print("mmr", "session" if by_session else "vector", gate, lam, got)
    for gate in (False, True):
        for seeds in (1, 3):
            for lam in (0.25, 0.5, 1.0):
                print("second pass", gate, seeds, lam,
                      metrics(rows, [second_pass(r, lam, seeds, gate) for r in rows]))


def refit(path: Path) -> None:
    """Print leave-one-conversation-out refits over ``fit_ranking collect``'s candidates."""
    import json

    from scipy.optimize import minimize

    from octomem.benchmarks.fit_ranking import logistic, ndcg10

    texts = {json.loads(x)["_id"]: json.loads(x)["text"]
             for x in open(DATA / "queries.jsonl", encoding="utf-8")}
    asked = [a for a in pickle.loads(path.read_bytes()) if a.own and a.y.any()]

    def design(a: object, cue_cols: list[int] | None) -> np.ndarray:
        x = a.x  # type: ignore[attr-defined]
        if cue_cols is not None:
            x = np.hstack([x, float(list_cue(texts[a.qid])) * x[:, cue_cols]])  # type: ignore[attr-defined]
        return np.hstack([x, np.ones((len(x), 1))])

    def listwise(xs: list[np.ndarray], ys: list[np.ndarray], l2: float) -> np.ndarray:
        def loss(b: np.ndarray) -> tuple[float, np.ndarray]:
            total, grad = 0.0, np.zeros(len(b))
            for x, y in zip(xs, ys, strict=True):
                s = x @ b
                p = np.exp(s - s.max())
                z = p.sum()
                t = y / y.sum()
                total -= float((t * (s - s.max() - np.log(z))).sum())
                grad += x.T @ (p / z - t)
            return total + 0.5 * l2 * b[:-1] @ b[:-1], grad + l2 * np.append(b[:-1], 0.0)
        return minimize(loss, np.zeros(xs[0].shape[1]), jac=True, method="L-BFGS-B").x

    for cue_cols in (None, list(range(12)), [1, 3], [4, 5, 11], [6], [0]):
        for how in ("pointwise", "listwise"):
            nd, rc = [], []
            for held in sorted(TUNE):
                train = [a for a in asked if a.group != held]
                xs, ys = [design(a, cue_cols) for a in train], [a.y for a in train]
                b = (logistic(np.vstack(xs), np.concatenate(ys)) if how == "pointwise"
                     else listwise(xs, ys, 1.0))
                for a in (a for a in asked if a.group == held):
                    order = np.argsort(-(design(a, cue_cols) @ b), kind="stable")
                    nd.append(ndcg10(a.y, order, int(a.y.sum())))
                    rc.append(a.y[order[:10]].sum() / a.y.sum())
            print("refit", cue_cols, how, round(float(np.mean(nd)), 4),
                  round(float(np.mean(rc)), 4))


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    if command == "dump":
        dump(Path(args[0]), Path(args[1]))
    elif command == "reorder":
        reorder(Path(args[0]))
    else:
        refit(Path(args[0]))
