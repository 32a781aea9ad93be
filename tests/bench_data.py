"""A tiny BEIR folder for the benchmark tests: two groups, words shared across groups."""

from __future__ import annotations

import json
from pathlib import Path

CORPUS = [
    ("a1", "Cats", "the cat sat on the mat and purred", "g1"),
    ("a2", "Dogs", "a dog chased the cat around the garden", "g1"),
    ("a3", "Fish", "goldfish swim in a bowl of water", "g1"),
    ("b1", "Cats again", "my cat likes warm milk and the mat", "g2"),
    ("b2", "Birds", "a parrot can learn words and sing", "g2"),
    ("b3", "Water", "rain water fills the garden pond", "g2"),
]
QUERIES = [
    ("q1", "cat on a mat", "g1"),
    ("q2", "garden water", "g2"),
    ("q3", "parrot words", "g2"),
    ("q4", "zebra stripes", "g1"),  # no document has these words
]
QRELS = [("q1", "a1", 1), ("q2", "b3", 2), ("q2", "b2", 0), ("q3", "b2", 1), ("q4", "a3", 1)]


def write_beir(folder: Path, split: str = "test") -> Path:
    """Write the tiny dataset in BEIR layout into ``folder`` and return it."""
    (folder / "qrels").mkdir(parents=True)
    with (folder / "corpus.jsonl").open("w") as fh:
        for _id, title, text, group in CORPUS:
            fh.write(
                json.dumps({"_id": _id, "title": title, "text": text, "metadata": {"grp": group}})
                + "\n"
            )
    with (folder / "queries.jsonl").open("w") as fh:
        for _id, text, group in QUERIES:
            fh.write(json.dumps({"_id": _id, "text": text, "metadata": {"grp": group}}) + "\n")
    with (folder / "qrels" / f"{split}.tsv").open("w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        fh.writelines(f"{q}\t{d}\t{s}\n" for q, d, s in QRELS)
    return folder
