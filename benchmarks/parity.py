"""Why ``fts5`` scores what it scores: BM25 variants re-computed on FTS5's own tokens.

Run as ``python -m octomem.benchmarks.parity DATASET_DIR --out DIR``. Indexes the corpus
one document per chunk (no splitting) through the ``fts5`` arm, reads every token back
from FTS5 (``fts5vocab`` ``instance`` table: the ``porter unicode61`` tokenizer's exact
output), and scores the split's queries with Okapi BM25 in numpy under each variant:

- FTS5's ``bm25()``: k1 = 1.2, b = 0.75, idf = ln((N - n + 0.5) / (n + 0.5)) floored at
  1e-6, document length counts every token (``fts5_aux.c``, SQLite 3.x);
- Lucene's ``BM25Similarity`` as Pyserini runs BEIR (Lin et al., SIGIR 2021): k1 = 0.9,
  b = 0.4, idf = ln(1 + (N - n + 0.5) / (n + 0.5)), stop words removed at index time so
  they do not count in the length.

A row equal to FTS5's own ``bm25()`` run checks the re-computation. Writes ``parity.md``
and ``parity.json``. Needs the ``sqlite`` storage (it reads FTS5's tables directly).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import apsw
import numpy as np
from ranx import Qrels, evaluate

from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Query

from .arguments import beir_folder, bench_parser, run_main
from .cache import IndexCache
from .command import bench_registry, deep_merge
from .dataset import load_dataset
from .metrics import ranx_run

#: Lucene's English stop words, as the ``fts5`` arm drops them from queries.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
#: (label, k1, b, idf kind, stop words counted in document length)
VARIANTS = (
    ("FTS5 bm25(): k1=1.2 b=0.75, FTS5 idf, all tokens", 1.2, 0.75, "fts5", True),
    ("k1=1.2 b=0.75, Lucene idf", 1.2, 0.75, "lucene", True),
    ("k1=0.9 b=0.4, FTS5 idf", 0.9, 0.4, "fts5", True),
    ("k1=0.9 b=0.4, Lucene idf", 0.9, 0.4, "lucene", True),
    ("k1=0.9 b=0.4, Lucene idf, stop words not in length (Pyserini)", 0.9, 0.4, "lucene", False),
)
#: Whole documents: a chunk budget no abstract reaches (words, hashing embedder).
NO_SPLIT = {"pipeline": {"embedder": "hashing"}, "arms": {"hashing": {"max_tokens": 1_000_000}}}


class Fts5Tokens:
    """Term frequencies and lengths of every indexed chunk, read back from FTS5."""

    def __init__(self, path: Path) -> None:
        self.conn = apsw.Connection(str(path))
        self.conn.execute(
            "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts5_chunks, instance)"
        )
        self.conn.execute("CREATE VIRTUAL TABLE temp.q USING fts5(b, tokenize='porter unicode61')")
        self.conn.execute("CREATE VIRTUAL TABLE temp.qv USING fts5vocab(temp, q, instance)")
        doc_of = dict(self.conn.execute("SELECT id, document_id FROM chunks").fetchall())
        self.ids = sorted(doc_of)
        self.docs = [doc_of[i] for i in self.ids]
        pos = {c: i for i, c in enumerate(self.ids)}
        tf: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
        self.length = np.zeros(len(self.ids))
        self.length_no_stop = np.zeros(len(self.ids))
        for term, chunk in self.conn.execute("SELECT term, doc FROM temp.v"):
            i = pos[chunk]
            tf[term][i] += 1
            self.length[i] += 1
            self.length_no_stop[i] += term not in STOPWORDS
        self.postings = {
            t: (np.fromiter(d.keys(), int), np.fromiter(d.values(), float)) for t, d in tf.items()
        }

    def stems(self, text: str) -> list[str]:
        """Return the distinct FTS5 terms of ``text``'s non-stop words, as the arm queries."""
        from octomem.plugins.fts5.arm import query_terms

        out: list[str] = []
        for word in query_terms(text):
            self.conn.execute("DELETE FROM temp.q")
            self.conn.execute("INSERT INTO temp.q(b) VALUES (?)", (word,))
            out += [r[0] for r in self.conn.execute("SELECT term FROM temp.qv ORDER BY offset")]
        return list(dict.fromkeys(out))


def bm25_run(
    tokens: Fts5Tokens,
    queries: dict[str, str],
    k1: float,
    b: float,
    idf_kind: str,
    stop_in_length: bool,
    depth: int = 100,
) -> dict[str, dict[str, float]]:
    """Score every query against every chunk with one BM25 variant; best chunk per document."""
    lengths = tokens.length if stop_in_length else tokens.length_no_stop
    avg, n_docs = lengths.mean(), len(lengths)
    run: dict[str, dict[str, float]] = {}
    for qid, text in queries.items():
        scores = np.zeros(n_docs)
        for term in tokens.stems(text):
            if term not in tokens.postings:
                continue
            ix, f = tokens.postings[term]
            ratio = (n_docs - len(ix) + 0.5) / (len(ix) + 0.5)
            idf = np.log1p(ratio) if idf_kind == "lucene" else max(np.log(ratio), 1e-6)
            scores[ix] += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * lengths[ix] / avg))
        docs: dict[str, float] = {}
        for i in np.argsort(-scores, kind="stable"):
            if scores[i] <= 0 or len(docs) == depth:
                break
            docs.setdefault(tokens.docs[i], float(scores[i]))
        run[qid] = docs
    return run


def _metrics(
    qrels: dict[str, dict[str, int]], run: dict[str, dict[str, float]]
) -> dict[str, float]:
    result = evaluate(
        Qrels({q: dict(d) for q, d in qrels.items()}),
        ranx_run(run, sorted(qrels), "v"),
        ["ndcg@10", "recall@100"],
    )
    return {m: float(v) for m, v in result.items()}


def parity(dataset_dir: Path, split: str, out: Path, cache_dir: Path | None) -> dict[str, Any]:
    """Build the unsplit FTS5 index, score every variant, write ``parity.md``/``.json``."""
    dataset = load_dataset(dataset_dir, split)
    registry = bench_registry()

    def settings_for(extra: dict[str, Any]) -> Any:
        return load_settings(None, deep_merge(NO_SPLIT, extra), read_user_config=False)

    cache = IndexCache(dataset, registry, settings_for, cache_dir)
    entry = cache.entry("hashing")
    cache.ensure_keyword(entry, "fts5")
    pipeline = Pipeline(
        settings_for(
            {"pipeline": {"keyword": "fts5", "embedder": None, "semantic": None, "dedup": None}}
        ),
        registry,
        entry.root,
    )
    try:
        own = {
            q: {
                h.chunk.document_id: float(100 - i)
                for i, h in enumerate(pipeline.search(Query(t, top_k=100)).hits)
            }
            for q, t in dataset.queries.items()
        }
    finally:
        pipeline.close()
    tokens = Fts5Tokens(entry.root / "octomem.sqlite3")
    rows = [
        {
            "variant": "fts5 arm as shipped (FTS5 bm25(), whole documents)",
            **_metrics(dataset.qrels, own),
        }
    ]
    for label, k1, b, idf_kind, stop_in_length in VARIANTS:
        run = bm25_run(tokens, dataset.queries, k1, b, idf_kind, stop_in_length)
        rows.append({"variant": label, **_metrics(dataset.qrels, run)})
    result = {
        "dataset": dataset.name,
        "split": split,
        "queries": len(dataset.queries),
        "rows": rows,
    }
    out.mkdir(parents=True, exist_ok=True)
    (out / "parity.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    lines = [
        f"# BM25 variants on FTS5's tokens: {dataset.name} `{split}` "
        f"({len(dataset.queries)} queries)",
        "",
        "Written by `python -m octomem.benchmarks.parity`; one chunk per document; "
        "metrics by ranx.",
        "",
        "| variant | nDCG@10 | R@100 |",
        "|---|---|---|",
    ]
    lines += [f"| {r['variant']} | {r['ndcg@10']:.4f} | {r['recall@100']:.4f} |" for r in rows]
    (out / "parity.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> None:
    """Command line: ``python -m octomem.benchmarks.parity DATASET_DIR --out DIR``."""
    parser = bench_parser("parity", __doc__, description=__doc__)
    parser.add_argument("dataset", type=beir_folder, help="a BEIR folder")
    parser.add_argument("--split", default="test")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--cache-dir", type=Path, default=None)
    args = parser.parse_args(argv)
    parity(args.dataset, args.split, args.out, args.cache_dir)


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.parity")
