"""Share of the tune splits' candidate words that the word table covers: every turn's
distinct :func:`expansion_words`, counted once per turn (occurrences) and once (distinct).

    python coverage.py   # reads /work/shared/data/{locomo,longmemeval}
"""

from __future__ import annotations

import collections
import json
import sys
from collections.abc import Iterable

from octomem.plugins.conversation.expansion import expansion_words
from octomem.plugins.conversation.word_table import public_words
from octomem.plugins.fastembed.embedder import FastembedEmbedder

DATA = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/data"
TABLE = set(public_words(FastembedEmbedder().vocabulary()))


def coverage(groups: Iterable[list[str]], name: str) -> None:
    occurrences = held = 0
    distinct: set[str] = set()
    missing: collections.Counter[str] = collections.Counter()
    for texts in groups:
        for text in texts:
            for word in expansion_words(text):
                occurrences += 1
                distinct.add(word)
                if word in TABLE:
                    held += 1
                else:
                    missing[word] += 1
    inside = len(distinct & TABLE)
    print(f"{name}: occurrences {held}/{occurrences} = {held / occurrences:.3f}; distinct "
          f"{inside}/{len(distinct)} = {inside / len(distinct):.3f}")
    print("  most frequent outside:", ", ".join(w for w, _ in missing.most_common(25)))


def main() -> None:
    print("list", len(TABLE))
    tune = {"conv-26", "conv-30", "conv-41", "conv-42", "conv-43"}
    locomo = collections.defaultdict(list)
    for line in open(f"{DATA}/locomo/corpus.jsonl"):
        row = json.loads(line)
        if row["metadata"].get("conv_id") in tune:
            locomo[row["metadata"]["conv_id"]].append(row["text"])
    coverage(locomo.values(), "LoCoMo tune (every turn)")
    queries = [json.loads(line) for line in open(f"{DATA}/longmemeval/queries.jsonl")]
    qids = {q["metadata"]["qid"] for q in queries if q["metadata"].get("split") == "tune"}
    lme = collections.defaultdict(list)
    for line in open(f"{DATA}/longmemeval/corpus.jsonl"):
        row = json.loads(line)
        if row["metadata"]["qid"] in qids:
            lme[row["metadata"]["qid"]].append(row["text"])
    coverage(lme.values(), "LongMemEval tune (every haystack turn)")


if __name__ == "__main__":
    main()
