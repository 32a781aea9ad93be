"""BEIR folders as the runner reads them: queries, one split's qrels, the corpus identity.

BEIR layout (Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of
Information Retrieval Models", NeurIPS 2021 Datasets and Benchmarks): ``corpus.jsonl``
(``_id``, ``title``, ``text``, optional ``metadata``), ``queries.jsonl`` (``_id``,
``text``, optional ``metadata``) and ``qrels/<split>.tsv`` (``query-id``, ``corpus-id``,
``score``, with a header line).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from octomem.engine.digests import file_sha256
from octomem.engine.errors import OctomemError
from octomem.engine.memory.sources import beir_corpus_path
from octomem.engine.types import Filters

#: Prefix of a ``--group-by`` value: the field is read from a row's ``metadata`` object.
GROUP_BY_PREFIX = "metadata."


@dataclass(frozen=True, slots=True)
class BeirDataset:
    """One split of a BEIR folder, ready to evaluate.

    :param name: the folder's name (``scifact``), used in reports and cache paths.
    :param queries: query id -> text, only the queries that have qrels in ``split``.
    :param query_metadata: query id -> the row's ``metadata`` object (empty when absent).
    :param qrels: query id -> {document id -> graded relevance}, as in the TSV.
    :param corpus_sha256: hex sha256 of ``corpus.jsonl``'s bytes (the cache key's half).
    """

    folder: Path
    name: str
    split: str
    queries: dict[str, str]
    query_metadata: dict[str, dict[str, Any]]
    qrels: dict[str, dict[str, int]]
    corpus_sha256: str
    corpus_path: Path
    extra: dict[str, Any] = field(default_factory=dict)


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    """Read a BEIR qrels TSV (header line optional) into {query id -> {doc id -> score}}.

    :raises OctomemError: the file is missing or a line does not have three fields with
        an integer score.
    """
    if not path.is_file():
        splits = sorted(p.stem for p in path.parent.glob("*.tsv")) if path.parent.is_dir() else []
        raise OctomemError(
            f"{path}: no such qrels file; splits here: {', '.join(splits) or 'none'}"
        )
    qrels: dict[str, dict[str, int]] = {}
    with path.open(encoding="utf-8", newline="") as fh:
        for lineno, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if not row or not "".join(row).strip():
                continue
            if len(row) < 3:
                raise OctomemError(f"{path}:{lineno}: expected query-id, corpus-id, score")
            try:
                score = int(float(row[2]))
            except ValueError:
                if lineno == 1:
                    continue  # the header
                raise OctomemError(f"{path}:{lineno}: score {row[2]!r} is not a number") from None
            qrels.setdefault(row[0], {})[row[1]] = score
    return qrels


def _read_queries(path: Path) -> tuple[dict[str, str], dict[str, dict[str, Any]]]:
    if not path.is_file():
        raise OctomemError(f"{path.parent}: no queries.jsonl (BEIR layout)")
    texts: dict[str, str] = {}
    metadata: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise OctomemError(f"{path}:{lineno}: not valid JSON: {exc.msg}") from exc
            qid = str(row["_id"])
            texts[qid] = str(row.get("text") or "")
            metadata[qid] = dict(row.get("metadata") or {})
    return texts, metadata


def load_dataset(folder: Path, split: str = "test") -> BeirDataset:
    """Read a BEIR folder's queries and the qrels of ``split``.

    Queries without qrels in ``split`` are left out (BEIR's evaluation does the same);
    qrels rows whose query has no usable text are an error.

    :raises OctomemError: a file is missing or malformed, or a judged query has no text.
    """
    folder = Path(folder)
    corpus = beir_corpus_path(folder)
    qrels = read_qrels(folder / "qrels" / f"{split}.tsv")
    texts, metadata = _read_queries(folder / "queries.jsonl")
    missing = [q for q in qrels if not texts.get(q, "").strip()]
    if missing:
        raise OctomemError(
            f"{folder}: {len(missing)} judged queries of split {split!r} have no text in "
            f"queries.jsonl (first: {missing[0]!r})"
        )
    return BeirDataset(
        folder=folder,
        name=folder.resolve().name,
        split=split,
        queries={q: texts[q] for q in qrels},
        query_metadata={q: metadata[q] for q in qrels},
        qrels=qrels,
        corpus_sha256=file_sha256(corpus),
        corpus_path=corpus,
    )


def parse_group_by(group_by: str | None) -> str | None:
    """Return the metadata field named by ``--group-by metadata.FIELD``, or ``None``.

    :raises OctomemError: the value does not start with ``metadata.``.
    """
    if not group_by:
        return None
    if not group_by.startswith(GROUP_BY_PREFIX) or len(group_by) == len(GROUP_BY_PREFIX):
        raise OctomemError(
            f"--group-by {group_by!r}: expected metadata.FIELD, e.g. metadata.conv_id"
        )
    return group_by[len(GROUP_BY_PREFIX) :]


def query_filters(dataset: BeirDataset, group_by: str | None) -> dict[str, Filters]:
    """Return each query's filters: with ``--group-by metadata.FIELD``, only documents whose
    ``metadata[FIELD]`` equals the query's own ``metadata[FIELD]``.

    :raises OctomemError: bad ``group_by``, or a query without that metadata field.
    """
    field_name = parse_group_by(group_by)
    if field_name is None:
        return {q: Filters() for q in dataset.queries}
    out: dict[str, Filters] = {}
    for qid in dataset.queries:
        meta = dataset.query_metadata.get(qid, {})
        if field_name not in meta:
            raise OctomemError(
                f"--group-by {group_by}: query {qid!r} has no metadata field {field_name!r}"
            )
        out[qid] = Filters(metadata={field_name: str(meta[field_name])})
    return out
