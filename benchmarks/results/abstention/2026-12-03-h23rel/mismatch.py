"""A hit-level 'modifier mismatch' term measured on tune answers (trial 17 G6; not shipped).

A query's two adjacent content words (a modifier and its head, "shipping module") whose
first the hit lacks while the hit holds the head right after a content word the query
lacks ("tax calculation module"). ``--unheard``: only when the missing modifier is in no
chunk of the store asked (G6's "shipping" is in none of the 18 statements). Each answer's
best hit logit gains ``w`` per hit that has the pattern (at most 1), and the shares at
``retrieval.relevance_floor`` 0.033 are printed per set and weight::

    python mismatch.py [--unheard CORPUS FIELD] ANSWERS.pkl ...

``ANSWERS.pkl``: ``collect.py``'s answers (every hit's text and shipped probability).
"""
from __future__ import annotations

import collections
import json
import math
import pickle
import sys
from pathlib import Path

from octomem.engine.words import FOLDED, WORD, root, roots, without_clitics

FLOOR = math.log(0.033 / 0.967)  # retrieval.relevance_floor as a logit
WEIGHTS = (0.0, -0.5, -1.0, -2.0, -3.0)


def logit(p: float) -> float:
    p = min(max(p, 1e-12), 1 - 1e-12)
    return math.log(p / (1 - p))


def seq(text: str) -> list[str]:
    """The text's words in order: a content word's root, "" for a function word."""
    return [root(FOLDED[w]) if FOLDED[w] else "" for w in WORD.findall(text)]


def mismatch(query: str, text: str, heard: set[str] | None = None) -> int:
    """1 when the hit holds one of the query's heads after another modifier (docstring)."""
    q, h = seq(without_clitics(query)), seq(text)
    qset, hset = {x for x in q if x}, {x for x in h if x}
    for a, b in zip(q, q[1:], strict=False):
        if a and b and a not in hset and b in hset and (heard is None or a not in heard):
            if any(h[i - 1] and h[i - 1] not in qset for i in range(1, len(h)) if h[i] == b):
                return 1
    return 0


def vocab(corpus: str, field: str) -> dict[tuple[str, ...], set[str]]:
    """Each group's and each (group, session)'s word roots, from a BEIR corpus."""
    v: dict[tuple[str, ...], set[str]] = collections.defaultdict(set)
    for line in open(corpus, encoding="utf-8"):
        row = json.loads(line)
        md = row.get("metadata") or {}
        words = roots(row.get("title", "") + " " + row["text"])
        v[(str(md[field]),)] |= words
        v[(str(md[field]), str(md.get("session")))] |= words
    return v


def shares(rows: list[dict], w: float, v: dict | None, field: str) -> tuple[int, int, int, int]:
    """Own answers with evidence kept, of them; foreign answers empty, of them."""
    own_n = own_k = oth_n = oth_e = 0
    for r in rows:
        heard = None if v is None else v[tuple(str(r["filters"][k]) for k in (field, "session")
                                               if k in r["filters"])]
        best = max((logit(h["prob"]) + (w * mismatch(r["query"], h["text"], heard) if w else 0)
                    for h in r["hits"] if h["prob"] is not None), default=-50.0)
        if r["own"]:
            own_n += r["evidence"]
            own_k += r["evidence"] and best >= FLOOR
        else:
            oth_n += 1
            oth_e += best < FLOOR
    return own_k, own_n, oth_e, oth_n


if __name__ == "__main__":
    args = sys.argv[1:]
    v, field = None, ""
    if args[0] == "--unheard":
        v, field, args = vocab(args[1], args[2]), args[2], args[3:]
    sets = {Path(p).stem: pickle.loads(Path(p).read_bytes()) for p in args}
    print("| w | " + " | ".join(f"{n}: own kept / other empty" for n in sets) + " |")
    print("|---" * (len(sets) + 1) + "|")
    for w in WEIGHTS:
        cells = []
        for rows in sets.values():
            k, n, e, m = shares(rows, w, v, field)
            cells.append(f"{k}/{n} {k / max(n, 1):.3f} / {e}/{m} {e / max(m, 1):.3f}")
        print(f"| {w} | " + " | ".join(cells) + " |")
