"""Query subsets, saved runs and the abstention pass of ``octomem bench``.

- ``--query-filter metadata.FIELD=v1,v2``: evaluate only the queries whose
  ``metadata[FIELD]`` is one of the values (LoCoMo's report half:
  ``metadata.conv_id=conv-44,conv-47,conv-48,conv-49,conv-50``; LongMemEval's:
  ``metadata.split=report``), so each half is its own report.
- ``--save-runs DIR``: each row's run as a TREC run file ``DIR/<row>.trec``
  (``qid Q0 docid rank score row``, trec_eval's format), to compare or pair rows later.
- ``--abstention``: every query is also asked, through ``recall`` as an agent asks it,
  where nothing answers it: with ``--group-by``, of another group's memory (the next
  group value in sorted order: LoCoMo another conversation, LongMemEval another
  question's haystack); without, of the store with the query's relevant documents
  hidden from every arm (:mod:`.masked`; SciFact: the claim's cited abstracts).
  Reported per row: the share of those answers that are empty (``other_empty``), and
  as the query is normally asked: the share answered with no hits (``own_empty``),
  with evidence in the top 10 (``own_evidence_at_10``), and, of the queries whose
  evidence was in the quality pass's top 10, the share whose recall answer still holds
  it (``own_kept``). ``asked_of`` says which of the two ``other`` was. Only groups the
  index holds documents of are asked (a ``--limit`` index holds its queries' groups only):
  ``other_asked`` counts the queries asked, and ``other_empty`` is ``None`` when none was.
- ``--abstention-groups N|all`` (with ``--group-by``): each query is also asked of ``N``
  other groups (the next ``N`` in sorted order) or of every other one, among the groups
  of the queries evaluated (a ``--query-filter`` half is asked of its own half's memories
  only) that the index holds. Reported beside ``other_empty``, which stays the one-group
  figure: ``others_asked`` (query × group asks), ``others_empty`` (the share of them
  with no hits), ``others_groups`` (``N`` or ``"all"``) and ``others_queries_answered``
  (how many queries got hits from at least one other group). A split of 30 queries
  gives ``other_empty`` in steps of 1/30; asked of every other group it gives 30 × 29.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from octomem.engine.errors import OctomemError
from octomem.engine.memory.recall import RecallRequest, recall_scopes
from octomem.engine.memory.scopes import memory_knobs
from octomem.engine.pipeline import Pipeline
from octomem.engine.types import Filters

from .dataset import GROUP_BY_PREFIX, BeirDataset, parse_group_by
from .masked import chunks_by_document, hidden_chunks

#: Hits of an abstention-pass answer (what an agent asks for).
ABSTENTION_TOP_K = 10
#: ``asked_of`` of the two kinds of abstention pass.
ASKED_OF_OTHER_GROUP = "another group's memory"
ASKED_OF_REMOVED = "the store without the query's relevant documents"


def parse_query_filter(spec: str) -> tuple[str, set[str]]:
    """Return ``(field, values)`` of ``metadata.FIELD=v1,v2,...``.

    :raises OctomemError: the value is not of that form.
    """
    name, _, values = spec.partition("=")
    wanted = {v.strip() for v in values.split(",") if v.strip()}
    if not name.startswith(GROUP_BY_PREFIX) or len(name) == len(GROUP_BY_PREFIX) or not wanted:
        raise OctomemError(f"--query-filter {spec!r}: expected metadata.FIELD=VALUE[,VALUE...], "
                           "e.g. metadata.conv_id=conv-44,conv-47")
    return name[len(GROUP_BY_PREFIX):], wanted


def filter_queries(dataset: BeirDataset, spec: str | None) -> BeirDataset:
    """Keep the queries whose metadata field has one of the values of ``spec``.

    :raises OctomemError: a malformed ``spec``, or no query left.
    """
    if not spec:
        return dataset
    name, wanted = parse_query_filter(spec)
    keep = [q for q in dataset.queries
            if str(dataset.query_metadata.get(q, {}).get(name)) in wanted]
    if not keep:
        raise OctomemError(f"--query-filter {spec!r}: no judged query of split "
                           f"{dataset.split!r} has metadata.{name} in {sorted(wanted)}")
    return replace(dataset, queries={q: dataset.queries[q] for q in keep},
                   query_metadata={q: dataset.query_metadata[q] for q in keep},
                   qrels={q: dataset.qrels[q] for q in keep})


def trec_lines(name: str, run: Mapping[str, Mapping[str, float]]) -> list[str]:
    """Return a run as TREC run lines, each query's documents best first."""
    lines = []
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: -kv[1])
        lines += [f"{qid} Q0 {doc} {rank} {score:.6f} {name}"
                  for rank, (doc, score) in enumerate(ranked, start=1)]
    return lines


def save_runs(folder: Path, runs: Mapping[str, Mapping[str, Mapping[str, float]]]) -> list[Path]:
    """Write each row's run to ``folder/<row>.trec``; return the paths."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, run in runs.items():
        path = folder / f"{name.replace('/', '_')}.trec"
        path.write_text("\n".join(trec_lines(name, run)) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def other_group_filters(dataset: BeirDataset, group_by: str | None,
                        every: BeirDataset | None = None,
                        held: set[str] | None = None) -> dict[str, Filters]:
    """Return, per query, the filter of another group: the next value in sorted order
    that the index holds documents of.

    :param every: the dataset whose queries' groups count (default ``dataset``; the
        split before ``--query-filter``, so one half still has other groups to ask).
    :param held: the group values the index holds documents of (``None``: every group;
        a ``--limit`` index holds its queries' groups only). A query no other such group
        is left for is not in the answer: asking a group of no documents is empty
        whatever the arms do (trial 11: "other empty 1.000" on every row).
    :raises OctomemError: no ``group_by``, or fewer than two groups among the queries.
    """
    field_name = parse_group_by(group_by)
    if field_name is None:
        raise OctomemError("--abstention asks each query of another group's memory: give "
                           "--group-by metadata.FIELD (LoCoMo: metadata.conv_id)")
    every = every or dataset
    own = {q: str(dataset.query_metadata.get(q, {}).get(field_name)) for q in dataset.queries}
    groups = sorted({str(every.query_metadata.get(q, {}).get(field_name))
                     for q in every.queries} | set(own.values()))
    if len(groups) < 2:
        raise OctomemError(f"--abstention: the queries have one {group_by} value only; "
                           "another group's memory is needed")
    def after(group: str) -> str | None:
        later = [g for g in groups[groups.index(group) + 1:] + groups[:groups.index(group)]
                 if held is None or g in held]
        return later[0] if later else None

    return {q: Filters(metadata={field_name: other}) for q, g in own.items()
            if (other := after(g)) is not None}


#: ``--abstention-groups``'s value that asks every other group.
ALL_GROUPS = "all"


def parse_abstention_groups(spec: str | None) -> int | None:
    """Return how many other groups ``--abstention-groups`` asks each query of: ``None``
    for ``all`` (every other one), else the positive count.

    :raises OctomemError: neither ``all`` nor an integer >= 1.
    """
    if spec is None or spec.strip().lower() == ALL_GROUPS:
        return None
    try:
        count = int(spec)
    except ValueError:
        count = 0
    if count < 1:
        raise OctomemError(f"--abstention-groups {spec!r}: expected {ALL_GROUPS!r} (every other "
                           "group) or a number of other groups >= 1, e.g. 5")
    return count


def other_groups_filters(dataset: BeirDataset, group_by: str | None, count: int | None,
                         held: set[str] | None = None) -> dict[str, list[Filters]]:
    """Return, per query, the filters of ``count`` other groups (``None``: every other
    one): the next ones in sorted order among the queries' own groups that the index
    holds documents of (``held``; ``None``: every group).

    :raises OctomemError: no ``group_by``, or fewer than two groups among the queries.
    """
    field_name = parse_group_by(group_by)
    if field_name is None:
        raise OctomemError("--abstention-groups asks each query of other groups' memories: "
                           "give --group-by metadata.FIELD (LoCoMo: metadata.conv_id)")
    own = {q: str(dataset.query_metadata.get(q, {}).get(field_name)) for q in dataset.queries}
    groups = sorted(g for g in set(own.values()) if held is None or g in held)
    if len(groups) < 2:
        raise OctomemError(f"--abstention-groups: the queries asked have {len(groups)} "
                           f"{group_by} value(s) whose documents the index holds; other groups "
                           "among them are needed (widen --query-filter, drop --limit)")
    out = {}
    for qid, group in own.items():
        at = groups.index(group) if group in groups else len(groups)
        later = [g for g in groups[at + 1:] + groups[:at] if g != group]
        out[qid] = [Filters(metadata={field_name: g}) for g in later[:count]]
    return out


def _others(pipeline: Pipeline, dataset: BeirDataset,
            others: Mapping[str, Sequence[Filters]], count: int | None) -> dict[str, Any]:
    """Ask every query of each of its other groups (:func:`other_groups_filters`)."""
    asked = empty = answered = 0
    for qid, text in dataset.queries.items():
        passed = [bool(_ids(pipeline, text, f)) for f in others.get(qid, ())]
        asked, empty = asked + len(passed), empty + passed.count(False)
        answered += any(passed)
    return {"others_groups": ALL_GROUPS if count is None else count,
            "others_asked": asked, "others_empty": empty / asked if asked else None,
            "others_queries_answered": answered}


def _ids(pipeline: Pipeline, text: str, filters: Filters) -> list[str]:
    request = RecallRequest(text, ABSTENTION_TOP_K, filters, "chunk", False)
    answer = recall_scopes([("local", pipeline)], request, memory_knobs(pipeline.settings))
    return list(dict.fromkeys(h.chunk.document_id for h in answer.hits))


def abstention(pipeline: Pipeline, dataset: BeirDataset, own: Mapping[str, Filters],
               other: Mapping[str, Filters] | None, run: Mapping[str, Mapping[str, float]],
               others: Mapping[str, Sequence[Filters]] | None = None,
               others_count: int | None = None) -> dict[str, Any]:
    """Ask every query through ``recall`` as it is asked normally and where nothing
    answers it: of another group (``other``, a filter per query) or, when ``other`` is
    ``None``, of the store with the query's relevant documents hidden from the arms
    (:func:`.masked.hidden_chunks`); with ``others`` (:func:`other_groups_filters`, made
    for ``others_count`` groups, ``None``: all), also of each of those groups. See the
    module docstring for what is reported."""
    chunks = chunks_by_document(pipeline) if other is None else {}
    empty_other = empty_own = evidence = before = kept = 0
    asked = 0  # queries asked where nothing answers them
    for qid, text in dataset.queries.items():
        relevant = {d for d, g in dataset.qrels[qid].items() if g > 0}
        if other is not None:  # a query no other group is held for is not asked
            if qid in other:
                asked += 1
                empty_other += not _ids(pipeline, text, other[qid])
        else:
            hidden = frozenset(c for d in relevant for c in chunks.get(d, ()))
            with hidden_chunks(pipeline, hidden):
                asked += 1
                empty_other += not _ids(pipeline, text, own[qid])
        answer = _ids(pipeline, text, own[qid])
        empty_own += not answer
        evidence += bool(relevant & set(answer))
        top = sorted(run.get(qid, {}).items(), key=lambda kv: -kv[1])[:ABSTENTION_TOP_K]
        if relevant & {d for d, _ in top}:
            before += 1
            kept += bool(relevant & set(answer))
    n = len(dataset.queries)
    wider = {} if others is None else _others(pipeline, dataset, others, others_count)
    return {**wider, "queries": n, "top_k": ABSTENTION_TOP_K,
            "asked_of": ASKED_OF_OTHER_GROUP if other is not None else ASKED_OF_REMOVED,
            "other_asked": asked, "other_empty": empty_other / asked if asked else None,
            "own_empty": empty_own / n, "own_evidence_at_10": evidence / n,
            "own_evidence_before": before, "own_kept": kept / before if before else None}
