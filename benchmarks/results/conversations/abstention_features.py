"""Answer-level and hit-level terms tried for turns' abstention (issue 12; tune splits
only; benchmarks/results/conversations/fit.md, "Names, intentions and sessions").

``collect`` asks every judged query of a bench cache entry through ``recall`` (top 10,
every floor 0) of its own group and of every other group (as
``octomem.benchmarks.fit_turn_relevance collect``) and keeps, per hit, its text, shipped
relevance, cosine, coverage, unheard count, aside mark, role and judged grade::

    python benchmarks/results/conversations/abstention_features.py collect \\
        CACHE_ENTRY BEIR_FOLDER SPLIT metadata.FIELD OUT.pkl

``evaluate`` reads a LongMemEval tune and a LoCoMo tune collection with their corpora
and, for each term below, adds ``w × term`` to every hit's logit (the shipped unheard
−0.5 and aside −3.0 kept) and reports, at the floor chosen by
``fit_turn_relevance``'s rule (the smallest margin to 95 % own kept / 90 % other empty
over both sets, ties by balanced accuracy), own kept and other empty on each set; then
lists the LongMemEval questions asked of another haystack that pass the shipped floor,
with their best hit::

    python benchmarks/results/conversations/abstention_features.py evaluate \\
        LME.pkl LME_CORPUS.jsonl LOCOMO.pkl LOCOMO_CORPUS.jsonl

Terms: ``names`` — the question's names (capitalised words not starting a sentence, not
"I"; quoted titles; optionally tokens with a digit and month/weekday names) the hit does
not hold, at most 2; ``intent`` — the hit states a plan or a request ("I'm planning",
"I'm looking for", "can you") while the question asks about the past ("did I", "have
I", "… ago"); ``session_miss`` — the question's content words the hit's whole session
lacks; ``names_session`` — its names the session lacks; ``rare_miss`` — the hit lacks
the question's rarest content word in the group (document frequency over the group's
turns).
"""

from __future__ import annotations

import json
import math
import pickle
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from octomem.engine.relevance import content_words

WORD = re.compile(r"[^\W_]+")
STARTS = re.compile(r"[.?!:;]\s+")
QUOTED = re.compile(r"""(?:^|(?<=\s))['"‘“]([^'"‘’“”]+?)['"’”](?=[\s.,?!;:]|$)""")
TIME = frozenset("january february march april may june july august september october "
                 "november december monday tuesday wednesday thursday friday saturday "
                 "sunday".split())
INTENT = re.compile(r"\b(?:i'?m|i am) (?:planning|thinking|looking|trying|going|hoping|"
                    r"considering|about)\b|\bi (?:want|plan|need|hope|would like|'d like)\b|"
                    r"\b(?:can|could|do|would) you\b", re.I)
PAST = re.compile(r"\b(?:did|have|had|was|were)\s+i\b|\bi\s+\w+ed\b|\bago\b", re.I)
FLOORS = np.round(np.arange(0.001, 0.2, 0.001), 3)[::-1]
UNHEARD, ASIDE = -0.5, -3.0


def collect(root: Path, folder: Path, split: str, group_by: str, out: Path) -> None:
    """Ask every judged query of its own group and of every other one; pickle the hits."""
    from octomem.benchmarks.dataset import load_dataset, parse_group_by
    from octomem.engine.manager import load_registry
    from octomem.engine.memory.recall import RecallRequest, recall_scopes
    from octomem.engine.memory.scopes import memory_knobs
    from octomem.engine.pipeline import Pipeline, embedding_text
    from octomem.engine.relevance import JUDGED_HITS
    from octomem.engine.settings import load_settings
    from octomem.engine.types import Filters

    field = parse_group_by(group_by)
    dataset = load_dataset(folder, split)
    floors = {"relevance_floor": 0.0, "document_relevance_floor": 0.0, "relative_floor": 0.0}
    pipeline = Pipeline(load_settings(overrides={"retrieval": floors}, read_user_config=False),
                        load_registry(), root)
    rows: list[dict[str, Any]] = []
    try:
        pipeline.warm()
        keyword = pipeline.arms.keyword
        groups = sorted({str(dataset.query_metadata[q][field]) for q in dataset.queries})
        for qid, text in dataset.queries.items():
            own = str(dataset.query_metadata[qid][field])
            for group in groups:
                answer = recall_scopes(
                    [("local", pipeline)],
                    RecallRequest(text, JUDGED_HITS, Filters(metadata={field: group}),
                                  "chunk", False), memory_knobs(pipeline.settings))
                judged = dataset.qrels[qid] if group == own else {}
                hits = [dict(doc=h.chunk.document_id, text=embedding_text(h.chunk),
                             p=h.relevance.probability, cos=h.relevance.cos,
                             cov=h.relevance.coverage, unheard=h.relevance.unheard,
                             aside=h.relevance.aside,
                             role=(h.chunk.metadata or {}).get("role"),
                             rel=judged.get(h.chunk.document_id, 0),
                             kw=(h.contributions.get(keyword.name).score
                                 if keyword.name in h.contributions else None))
                        for h in answer.hits[:JUDGED_HITS]]
                rows.append(dict(qid=qid, query=text, group=group, own=group == own,
                                 hits=hits))
    finally:
        pipeline.close()
    out.write_bytes(pickle.dumps(rows))
    print(f"{len(rows)} answers -> {out}")


def names(query: str, digits: bool, time: bool) -> frozenset[str]:
    """The folded content words of ``query``'s names (see the module docstring)."""
    starts = {0} | {m.end() for m in STARTS.finditer(query)}
    out = []
    for m in WORD.finditer(query):
        w = m.group(0)
        if any(c.isdigit() for c in w):
            if digits:
                out.append(w)
        elif (m.start() not in starts and w[0].isupper() and w.casefold() != "i"
              and (time or w.casefold() not in TIME)):
            out.append(w)
    for m in QUOTED.finditer(query):
        out.extend(WORD.findall(m.group(1)))
    return content_words(" ".join(out))


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


class Sets:
    """One collection with its corpus: sessions' words and per-group document counts."""

    def __init__(self, pkl: Path, corpus: Path, group_field: str) -> None:
        self.answers = pickle.loads(pkl.read_bytes())
        sessions: dict[tuple[str, str], list[str]] = defaultdict(list)
        self.session_of: dict[str, tuple[str, str]] = {}
        for line in corpus.open(encoding="utf-8"):
            doc = json.loads(line)
            key = (str(doc["metadata"][group_field]), str(doc["metadata"]["session"]))
            sessions[key].append(doc["text"])
            self.session_of[doc["_id"]] = key
        self.session_words = {k: content_words(" ".join(v)) for k, v in sessions.items()}
        self.df: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for (group, _), texts in sessions.items():
            for t in texts:
                for w in content_words(t):
                    self.df[group][w] += 1

    def term(self, name: str, a: dict[str, Any], h: dict[str, Any]) -> float:
        """The value of term ``name`` for hit ``h`` of answer ``a``."""
        q, held = a["query"], content_words(h["text"])
        session = self.session_words.get(self.session_of.get(h["doc"], ("", "")), frozenset())
        if name.startswith("names"):
            digits, time = "digits" in name, "time" in name
            pool = session if "session" in name else held
            return min(len(names(q, digits, time) - pool), 2)
        if name == "intent":
            return float(bool(PAST.search(q)) and bool(INTENT.search(h["text"])))
        if name == "session_miss":
            return len(content_words(q) - session)
        if name == "rare_miss":
            words = content_words(q)
            if not words:
                return 0.0
            df = self.df[a["group"]]
            return float(min(words, key=lambda w: df.get(w, 0)) not in held)
        raise ValueError(name)

    def arrays(self, name: str | None) -> tuple[np.ndarray, ...]:
        """Per answer: best logit without the terms' weight, as (logits, term) rows."""
        rows = []
        for a in self.answers:
            hs = [h for h in a["hits"] if h["cos"] is not None] or a["hits"]
            base = np.array([_logit(h["p"]) - UNHEARD * min(h["unheard"], 2)
                             - (ASIDE if h["aside"] else 0.0) for h in hs] or [-50.0])
            aside = np.array([1.0 if h["aside"] else 0.0 for h in hs] or [0.0])
            term = np.array([self.term(name, a, h) if name else 0.0 for h in hs] or [0.0])
            unheard = max([min(h["unheard"], 2) for h in hs] or [0])
            own_ev = a["own"] and any(h["rel"] > 0 for h in a["hits"])
            rows.append((a["own"], own_ev, base + ASIDE * aside + UNHEARD * unheard, term))
        return tuple(rows)  # type: ignore[return-value]


def shares(rows: Any, weight: float, floors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Own kept and other empty at each floor."""
    own = np.array([r[0] for r in rows])
    ev = np.array([r[1] for r in rows])
    p = 1 / (1 + np.exp(-np.array([(r[2] + weight * r[3]).max() for r in rows])))
    return (p[ev, None] >= floors[None, :]).mean(0), (p[~own, None] < floors[None, :]).mean(0)


def choose(sets: list[Any], weight: float) -> tuple[float, list[tuple[float, float]]]:
    """The floor by fit_turn_relevance's rule, and each set's figures there."""
    got = [shares(s, weight, FLOORS) for s in sets]
    margin = np.min([np.minimum(k - 0.95, e - 0.90) for k, e in got], 0).round(9)
    balance = np.mean([(k + e) / 2 for k, e in got], 0).round(9)
    i = max(range(len(FLOORS)), key=lambda j: (margin[j], balance[j], -j))
    return float(FLOORS[i]), [(round(float(k[i]), 3), round(float(e[i]), 3)) for k, e in got]


def evaluate(lme: Sets, locomo: Sets) -> None:
    """Print each term's figures, then LongMemEval's foreign answers passing 0.033."""
    base = [lme.arrays(None), locomo.arrays(None)]
    fixed = [shares(s, 0.0, np.array([0.033])) for s in base]
    print("shipped, floor 0.033:", [(round(float(k[0]), 3), round(float(e[0]), 3))
                                    for k, e in fixed])
    print("shipped, rule's floor:", choose(base, 0.0))
    for name in ("names_digits_time", "names_digits", "names_time", "names",
                 "names_session", "intent", "session_miss", "rare_miss"):
        sets = [lme.arrays(name), locomo.arrays(name)]
        for w in (-0.25, -0.5, -1.0, -2.0):
            print(name, w, *choose(sets, w), "| at 0.033:",
                  [(round(float(k[0]), 3), round(float(e[0]), 3))
                   for k, e in (shares(s, w, np.array([0.033])) for s in sets)])
    passing = 0
    for a, row in zip(lme.answers, base[0], strict=True):
        if a["own"] or 1 / (1 + math.exp(-row[2].max())) < 0.033:
            continue
        passing += 1
        hs = [h for h in a["hits"] if h["cos"] is not None] or a["hits"]
        h = hs[int(np.argmax(row[2]))]
        print(f"{1 / (1 + math.exp(-row[2].max())):.3f} cos {h['cos']:.2f} cov {h['cov']:.2f}"
              f" {h['role']} | {a['query'][:60]} || {h['text'][:100]!r}")
    print(passing, "of", sum(not a["own"] for a in lme.answers), "pass")


def main(argv: list[str]) -> None:
    """``collect`` or ``evaluate`` (module docstring)."""
    if argv[:1] == ["collect"]:
        collect(Path(argv[1]), Path(argv[2]), argv[3], argv[4], Path(argv[5]))
    elif argv[:1] == ["evaluate"]:
        evaluate(Sets(Path(argv[1]), Path(argv[2]), "qid"),
                 Sets(Path(argv[3]), Path(argv[4]), "conv_id"))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
