"""Quality of saved runs per value of a query metadata field (e.g. LongMemEval's
``question_type``), scored by ranx like the bench's own table.

``python -m octomem.benchmarks.by_field DATASET RUNS_DIR --split tune --field
question_type [--out FILE]``: reads every ``*.trec`` run in ``RUNS_DIR`` (what
``octomem bench --save-runs`` writes, one file per row), scores each judged query of
``split`` with ranx (nDCG@10, R@10) and prints a Markdown table: one line per value of
``metadata.FIELD``, one column pair per run.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from pathlib import Path

from .arguments import beir_folder, bench_parser, existing_dir, run_main
from .dataset import load_dataset
from .metrics import evaluate_runs

#: Metrics per row of the table (ranx names, among the bench's own).
FIELD_METRICS = ("ndcg@10", "recall@10")


def read_trec(path: Path) -> dict[str, dict[str, float]]:
    """Read a TREC run file (``qid Q0 doc rank score name``) into {qid -> {doc -> score}}.

    :raises ValueError: a line without six fields, naming the file and line.
    """
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            raise ValueError(f"{path}:{number}: a TREC run line has 6 fields, not {len(parts)}")
        run[parts[0]][parts[2]] = float(parts[4])
    return dict(run)


def by_field(folder: Path, runs: dict[str, dict[str, dict[str, float]]], split: str,
             field: str) -> dict[str, dict[str, tuple[int, dict[str, float]]]]:
    """Return run name -> field value -> (queries, metric -> mean over them).

    :param runs: run name -> {qid -> {document -> score}}; a judged query the run lacks
        scores 0.
    :raises KeyError: a judged query without ``metadata.field``.
    """
    dataset = load_dataset(folder, split)
    groups: dict[str, list[str]] = defaultdict(list)
    for q in sorted(dataset.qrels):
        groups[str(dataset.query_metadata[q][field])].append(q)
    out: dict[str, dict[str, tuple[int, dict[str, float]]]] = {name: {} for name in runs}
    for v, queries in sorted(groups.items()):  # each value's queries scored alone
        with warnings.catch_warnings():  # the paired test of a 1-query group: NaN, unused
            warnings.simplefilter("ignore", RuntimeWarning)
            evaluation = evaluate_runs({q: dataset.qrels[q] for q in queries},
                                       {name: {q: run[q] for q in queries if q in run}
                                        for name, run in runs.items()}, None)
        for name in runs:
            out[name][v] = (len(queries),
                            {m: evaluation.scores[name][m] for m in FIELD_METRICS})
    return out


def table(result: dict[str, dict[str, tuple[int, dict[str, float]]]], field: str) -> str:
    """Return :func:`by_field`'s result as a Markdown table."""
    names = list(result)
    values = sorted({v for per in result.values() for v in per})
    head = " | ".join(f"{n} {m}" for n in names for m in FIELD_METRICS)
    lines = [f"| {field} | n | {head} |", "|---|---|" + "---|" * (len(names) * 2)]
    for v in values:
        n = next(per[v][0] for per in result.values() if v in per)
        cells = " | ".join(f"{result[name][v][1][m]:.4f}" if v in result[name] else "—"
                           for name in names for m in FIELD_METRICS)
        lines.append(f"| {v} | {n} | {cells} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Command line (see the module docstring)."""
    parser = bench_parser("by_field", __doc__)
    parser.add_argument("dataset", type=beir_folder, help="a BEIR folder")
    parser.add_argument("runs", type=existing_dir, help="a folder of .trec runs (--save-runs)")
    parser.add_argument("--split", default="test")
    parser.add_argument("--field", required=True, help="a key of the queries' metadata")
    parser.add_argument("--out", type=Path, help="write the table here too")
    args = parser.parse_args(argv)
    runs = {p.stem: read_trec(p) for p in sorted(args.runs.glob("*.trec"))}
    if not runs:
        parser.error(f"{args.runs}: no .trec run files")
    text = table(by_field(args.dataset, runs, args.split, args.field), args.field)
    print(text, end="")
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.by_field")
