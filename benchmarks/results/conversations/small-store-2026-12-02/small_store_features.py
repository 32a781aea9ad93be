"""Answer-level terms tried for small stores' relevance (issue 12; tune splits only;
report.md beside this file).

``collect`` asks every judged query of a bench cache entry through ``recall`` (top 10,
every floor 0) of small stores, each one session of a group (``--speaker``: one speaker's
turns of one session), kept apart by a metadata filter: its first evidence session
(own), ``OTHERS`` sessions of other groups, and ``OWN_NEG`` other sessions of its own
group (no evidence: the same people or user, not the answer; no target in issue 12). It
keeps, per answer, the logits of its first 10 hits without the shipped unheard, aside and
small-store terms, their cosines, the unheard count and every cosine of the store
(its semantic run)::

    python small_store_features.py collect CACHE_ENTRY BEIR_FOLDER SPLIT FIELD \\
        GROUPS OUT.pkl OTHERS OWN_NEG [--speaker]

``evaluate`` adds ``w × term`` to every hit's logit (the shipped unheard −0.5 and aside
−3.0 kept, floor 0.033) and prints, for each term and weight, per collection: own kept,
other empty, own-group other session empty::

    python small_store_features.py evaluate A.pkl B.pkl ...

Terms: ``least`` ln(100 / max(reach, 25)) (shipped, weight 1.05); ``logn`` ln(100 /
reach); ``lift`` the hit's cosine minus the store's
mean cosine; ``z`` that lift over the store's cosines' standard deviation; ``gap`` the
hit's cosine minus the store's second-best cosine (at least 0); ``liftlogn`` lift ×
ln(100 / reach).
"""

from __future__ import annotations

import json
import pickle
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from octomem.benchmarks.dataset import load_dataset
from octomem.engine.manager import load_registry
from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline
from octomem.engine.relevance import JUDGED_HITS, SMALL_STORE, UNHEARD_CAP, shipped_model
from octomem.engine.settings import load_settings
from octomem.engine.small_store import SMALL_STORE_LEAST, small_term
from octomem.engine.types import Filters

FLOOR = 0.033


@dataclass
class Answer:
    own: bool | None     # None: another session of its own group
    evidence: bool
    logits: np.ndarray   # without the unheard, aside and small-store terms
    aside: np.ndarray
    cos: np.ndarray
    unheard: int
    reach: int
    store: np.ndarray    # every cosine of the store, best first


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return float(np.log(p / (1 - p)))


def _stores(folder: Path, field: str, speaker: bool) -> tuple[dict, dict]:
    of_doc, stores = {}, {}
    for line in (folder / "corpus.jsonl").open(encoding="utf-8"):
        row = json.loads(line)
        meta = row["metadata"]
        key = (str(meta[field]), str(meta["session"]),
               *((str(meta["speaker"]),) if speaker else ()))
        of_doc[row["_id"]] = key
        stores.setdefault(key[0], set()).add(key)
    return of_doc, {g: sorted(v) for g, v in stores.items()}


def collect(root: Path, folder: Path, split: str, field: str, groups: set[str],
            others: int, own_neg: int, speaker: bool) -> list[Answer]:
    dataset = load_dataset(folder, split)
    of_doc, stores = _stores(folder, field, speaker)
    floors = {"relevance_floor": 0.0, "document_relevance_floor": 0.0, "relative_floor": 0.0}
    pipe = Pipeline(load_settings(overrides={"retrieval": floors}, read_user_config=False),
                    load_registry(), root)
    model, draw, out = shipped_model(), random.Random(12), []
    pipe.warm()
    semantic, embedder = pipe.arms.semantic, pipe.arms.embedder
    for qid, text in dataset.queries.items():
        own_group = str(dataset.query_metadata[qid][field])
        if groups and own_group not in groups:
            continue
        evidence = sorted({of_doc[d] for d, g in dataset.qrels[qid].items() if g > 0})
        elsewhere = [k for g in stores if g != own_group and (not groups or g in groups)
                     for k in stores[g]]
        mine = [k for k in stores[own_group] if k not in evidence]
        asked = [(evidence[0], True), *((k, False) for k in draw.sample(elsewhere, others)),
                 *((k, None) for k in draw.sample(mine, min(own_neg, len(mine))))]
        vector = embedder.embed_query(text)
        for key, own in asked:
            filters = Filters(metadata=dict(zip((field, "session", "speaker")[:len(key)], key,
                                                    strict=True)))
            store = np.array(sorted((h.score for h in semantic.search(vector, filters,
                                                                      SMALL_STORE)),
                                    reverse=True))
            answer = recall_scopes([("local", pipe)],
                                   RecallRequest(text, JUDGED_HITS, filters, "chunk", False),
                                   memory_knobs(pipe.settings))
            hits = [h for h in answer.hits[:JUDGED_HITS] if h.relevance is not None]
            logits = np.array([_logit(h.relevance.probability)
                               - model.unheard * min(h.relevance.unheard, UNHEARD_CAP)
                               - (model.aside if h.relevance.aside else 0.0)
                               - small_term(model.small_store, h.relevance.reach) for h in hits])
            judged = dataset.qrels[qid] if own else {}
            out.append(Answer(
                own, any(judged.get(h.chunk.document_id, 0) > 0 for h in hits), logits,
                np.array([h.relevance.aside for h in hits], dtype=bool),
                np.array([np.nan if h.relevance.cos is None else h.relevance.cos
                          for h in hits]),
                max([h.relevance.unheard for h in hits], default=0), len(store), store))
    pipe.close()
    return out


def _term(a: Answer, name: str) -> np.ndarray:
    mean = a.store.mean()
    std = a.store.std() if len(a.store) > 1 else 0.0
    cos = np.nan_to_num(a.cos, nan=mean)
    logn = np.log(SMALL_STORE / max(a.reach, 1))
    second = a.store[1] if len(a.store) > 1 else 0.0
    least = np.log(SMALL_STORE / max(a.reach, SMALL_STORE_LEAST))
    return {"least": np.full(len(cos), least), "logn": np.full(len(cos), logn),
            "lift": cos - mean,
            "z": (cos - mean) / std if std > 0 else np.zeros(len(cos)),
            "gap": np.maximum(cos - second, 0.0), "liftlogn": (cos - mean) * logn}[name]


def _best(a: Answer, name: str, weight: float) -> float:
    z = a.logits + np.where(a.aside, -3.0, 0.0) + weight * _term(a, name)
    return (z.max() if len(z) else -np.inf) - 0.5 * min(a.unheard, UNHEARD_CAP)


GRIDS = {"least": np.array([0.0, 0.75, 1.05, 1.25]), "logn": np.arange(0, 1.01, 0.25),
         "lift": np.arange(0, 16.1, 2),
         "z": np.arange(0, 1.61, 0.2), "gap": np.arange(0, 30.1, 5),
         "liftlogn": np.arange(0, 6.1, 1)}


def evaluate(sets: dict[str, list[Answer]]) -> None:
    floor = np.log(FLOOR / (1 - FLOOR))
    print("term weight | " + " | ".join(f"{n}: own kept, other empty, own other session "
                                          "empty" for n in sets))
    for name, grid in GRIDS.items():
        for weight in grid:
            cells = []
            for answers in sets.values():
                best = np.array([_best(a, name, weight) for a in answers])
                own = np.array([a.own is True and a.evidence for a in answers])
                other = np.array([a.own is False for a in answers])
                mine = np.array([a.own is None for a in answers])
                cells.append(f"{np.mean(best[own] >= floor):.3f} "
                             f"{np.mean(best[other] < floor):.3f} "
                             f"{np.mean(best[mine] < floor):.3f}")
            print(f"{name} {weight:.2f} | " + " | ".join(cells))


if __name__ == "__main__":
    if sys.argv[1] == "collect":
        root, folder, split, field, groups, out, others, own_neg = sys.argv[2:10]
        answers = collect(Path(root), Path(folder), split, field,
                          {g for g in groups.split(",") if g}, int(others), int(own_neg),
                          "--speaker" in sys.argv[10:])
        Path(out).write_bytes(pickle.dumps(answers))
        print(len(answers), "answers ->", out)
    else:
        evaluate({Path(p).stem: pickle.loads(Path(p).read_bytes()) for p in sys.argv[2:]})
