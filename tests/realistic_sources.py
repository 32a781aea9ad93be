"""Tiny SciFact-like and LoCoMo-like BEIR folders for the realistic scale corpus tests."""

from __future__ import annotations

import json
from pathlib import Path

ABSTRACTS = {
    "10": "Cats sleep a lot. They purr when content. Purring lowers stress in owners. "
    "Kittens learn to purr early.",
    "20": "Dogs bark at strangers. Barking is a warning. Some breeds bark more than others.",
    "30": "Water boils at 100 C at sea level. At altitude it boils lower. Pressure matters.",
}
TURNS = [
    "Ann: I adopted a kitten last week!",
    "Bob: Nice, what is its name?",
    "Ann: Her name is Pixel, she purrs all day.",
    "Bob: My dog barks at every cat he sees.",
]
QUERIES = {"q1": "Purring reduces stress.", "q2": "Water boils lower at altitude.", "q3": "x"}
QRELS = [("q1", "10"), ("q2", "30"), ("q3", "99")]  # q3: its abstract is not in the corpus


def write_sources(folder: Path) -> Path:
    """Write ``folder/scifact`` and ``folder/locomo`` in BEIR layout and return ``folder``."""
    sci, loc = folder / "scifact", folder / "locomo"
    (sci / "qrels").mkdir(parents=True)
    loc.mkdir(parents=True)
    with (sci / "corpus.jsonl").open("w") as fh:
        for _id, text in ABSTRACTS.items():
            fh.write(json.dumps({"_id": _id, "title": f"T{_id}", "text": text}) + "\n")
    with (sci / "queries.jsonl").open("w") as fh:
        for _id, text in QUERIES.items():
            fh.write(json.dumps({"_id": _id, "text": text}) + "\n")
    with (sci / "qrels" / "test.tsv").open("w") as fh:
        fh.write("query-id\tcorpus-id\tscore\n")
        fh.writelines(f"{q}\t{d}\t1\n" for q, d in QRELS)
    with (loc / "corpus.jsonl").open("w") as fh:
        for i, text in enumerate(TURNS):
            fh.write(json.dumps({"_id": f"c_D1:{i}", "title": "", "text": text}) + "\n")
    return folder
