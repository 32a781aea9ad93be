"""Every recall hit's relevance, and abstention when no hit reaches its floor.

A hit's relevance comes from :mod:`octomem.engine.relevance`: turns and statements from
their cosine and coverage, a document's hit (:data:`~octomem.engine.relevance.DOCUMENT_KINDS`)
also from how far it stands above the query's runs over its scope's store
(:class:`~octomem.engine.relevance.RunStats`, taken from the runs this recall made, so no
second search). Each kind has its floor: ``retrieval.relevance_floor`` for turns and
statements, ``retrieval.document_relevance_floor`` for documents. A document's hit in a
scope whose runs are no background (the scope holds fewer reachable chunks than the run
asked for: :attr:`~octomem.engine.relevance.RunStats.background`) is judged as a turn:
turn weights, ``retrieval.relevance_floor``. An answer is empty,
with the reason, when no hit reaches its own floor; otherwise the hits below both their
floor and ``retrieval.relative_floor`` times the best hit's relevance are left out, and
below ``retrieval.weak_answer_floor`` too when the best hit is weak (:func:`tail_floor`).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..fusion import is_turn
from ..pipeline import Pipeline, embedding_text
from ..relevance import (
    DOCUMENT_KINDS,
    JUDGED_HITS,
    MEDIUM,
    RunStats,
    abstain_reason,
    aside,
    indexed_rows,
    keyword_strength,
    relevance_of,
    run_stats,
    shipped_model,
    short_run,
    stored_text,
    unheard_words,
    whole_query_run,
)
from ..turns import CONVERSATION, POSITION
from .scoped_fusion import Key, ScopedRuns

if TYPE_CHECKING:
    from ..settings import RetrievalSettings
    from ..types import Filters
    from .recall import RecallAnswer, ScopedHit

#: The setting naming each kind's floor (``abstained`` names the one that was missed).
TURN_FLOOR, DOCUMENT_FLOOR = "retrieval.relevance_floor", "retrieval.document_relevance_floor"


def scope_stats(runs: ScopedRuns, pipelines: Mapping[str, Pipeline],
                k: int | None = None, text: str = "") -> dict[str, RunStats]:
    """Return each scope's :class:`RunStats`: its semantic run's cosines and its keyword
    run's scores, as this recall's arms returned them (``k`` asked of each: a scope's
    runs are a background when they hold it, :func:`~octomem.engine.relevance.run_stats`,
    and its keyword run is not the matches of the whole query ``text``,
    :func:`~octomem.engine.relevance.whole_query_run`; "": not checked)."""
    out = {}
    for scope, pipeline in pipelines.items():
        arms = pipeline.arms
        sem = arms.semantic.name if arms.semantic is not None else None
        kw = runs.hits(scope, arms.keyword.name) if arms.keyword is not None else []
        cosines = runs.scores(scope, sem) if sem is not None else []
        covered = bool(text) and whole_query_run(text, kw, k, stored_text(arms.storage))
        out[scope] = run_stats(cosines, [h.score for h in kw], k, covered)
    return out


def scope_reach(runs: ScopedRuns, pipelines: Mapping[str, Pipeline], k: int) -> int | None:
    """Return how many chunks the query was compared with, every scope's semantic run
    being shorter than the ``k`` asked (the scopes hold no more reachable vectors): their
    total (:meth:`~octomem.engine.relevance.RelevanceModel.small`); ``None`` when a
    scope's run is full or no semantic arm ran."""
    held = []
    for scope, pipeline in pipelines.items():
        semantic = pipeline.arms.semantic
        if semantic is not None:
            cosines = runs.scores(scope, semantic.name)
            if short_run(len(cosines), k) is None:
                return None
            held.append(len(cosines))
    return sum(held) if any(held) else None


def scope_strength(runs: ScopedRuns, pipelines: Mapping[str, Pipeline],
                   k: int) -> float | None:
    """Return the answer's keyword strength (:func:`~octomem.engine.relevance.
    keyword_strength`): the highest over the scopes whose semantic run is full (holds the
    ``k`` asked) and whose keyword arm is the one the shipped term was fitted on, each
    scope's keyword run's top score over ln of the rows its keyword index holds; ``None`` when no
    scope qualifies or the shipped weights do not use it."""
    model, best = shipped_model(), None
    for scope, pipeline in pipelines.items():
        arms = pipeline.arms
        keyword = arms.keyword.name if arms.keyword is not None else None
        if arms.semantic is None or not model.uses_strength(keyword):
            continue
        cosines = runs.scores(scope, arms.semantic.name)
        if not cosines or short_run(len(cosines), k) is not None:
            continue
        value = keyword_strength(max(runs.scores(scope, str(keyword)), default=None),
                                 indexed_rows(arms))
        if value is not None and (best is None or value > best):
            best = value
    return best


def is_document(hit: Any) -> bool:
    """Return whether ``hit`` (anything with a ``chunk``) is scored as a document's hit:
    its kind is a document kind and the shipped weights have document weights."""
    return hit.chunk.kind in DOCUMENT_KINDS and shipped_model().document is not None


def unheard(text: str, hits: list[ScopedHit], pipelines: Mapping[str, Pipeline],
            filters: Filters | None) -> int:
    """Return how many of ``text``'s content words no scope's memory mentions
    (:func:`~octomem.engine.relevance.unheard_words`: not in the first
    :data:`JUDGED_HITS` hits, and no scope's keyword arm finds them under ``filters``);
    0 when the shipped weights do not use it, without ``filters`` or without a keyword
    arm."""
    arms = [p.arms.keyword for p in pipelines.values() if p.arms.keyword is not None]
    if filters is None or not arms or not shipped_model().unheard:
        return 0
    return unheard_words(text, [embedding_text(h.chunk) for h in hits[:JUDGED_HITS]],
                         lambda word: any(arm.search(word, filters, 1) for arm in arms))


def _relevance(hits: list[ScopedHit], text: str, cos: dict[Key, float],
               retrieval: RetrievalSettings, embedder: str | None,
               stats: Mapping[str, RunStats], pipelines: Mapping[str, Pipeline],
               filters: Filters | None = None, reach: int | None = None,
               strength: float | None = None) -> list[tuple[float, str]]:
    """Give every hit its relevance; return each hit's ``(floor, floor setting)``."""
    background = RunStats()
    weighted = [is_document(h) and stats.get(h.scope, background).background for h in hits]
    floors = []
    missing = unheard(text, hits, pipelines, filters) if not all(weighted) else 0
    for hit, doc in zip(hits, weighted, strict=True):
        floor = retrieval.document_relevance_floor if doc else retrieval.relevance_floor
        keyword = pipelines[hit.scope].arms.keyword
        kw_hit = hit.contributions.get(keyword.name) if keyword is not None else None
        hit.relevance = relevance_of(
            text, embedding_text(hit.chunk), cos.get((hit.scope, hit.chunk.id)), floor,
            embedder=embedder, stats=stats.get(hit.scope) if doc else None,
            keyword_score=None if kw_hit is None else kw_hit.score,
            unheard=0 if doc else missing,
            aside=not doc and retrieval.assistant_aside and aside(text, hit.chunk.metadata),
            reach=None if doc else reach, strength=None if doc else strength)
        floors.append((floor, DOCUMENT_FLOOR if doc else TURN_FLOOR))
    return floors


def _probability(hit: ScopedHit) -> float:
    return hit.relevance.probability if hit.relevance is not None else 0.0


def across_kinds(hits: list[ScopedHit], floors: list[tuple[float, str]],
                 fused: Mapping[Key, int] | None = None,
                 ) -> tuple[list[ScopedHit], list[tuple[float, str]]]:
    """Merge the hits of the two content kinds (documents, :func:`is_document`; turns and
    statements) into one order: each kind keeps its own order (the fused one, which the
    benchmarks measure per kind; turns the ``conversation`` reranker's), and of the two
    kinds' next hits *in fused order* the one with the higher relevance takes the next
    place (the calibrated probability is the one score the two kinds share; fused scores
    are ranks of runs dominated by whichever kind has more matching words); ties: the
    earlier fused place first. The places each kind holds are so decided before any
    reranker, and a reranker re-orders its kind's hits among them only, as it does in the
    fused list: a turn the reranker put first with little relevance no longer holds back
    every turn after it (trial 16 F11: "what did you suggest for part timeouts?" lifts the
    assistant's turns, and its first pick "Sounds good. Until then …", relevance 0.004,
    put every document before every turn, the reply both arms ranked first, 0.17, 5th
    behind a release-day note of 0.005). With one kind present, ``hits`` is returned as
    it is.

    :param fused: each hit's place in the fused list, before the reranker (by ``(scope,
        chunk id)``); ``None``: the hits are in fused order.
    """
    kinds = [is_document(h) for h in hits]
    if len(set(kinds)) < 2:
        return hits, floors
    ranked = {k: [i for i, d in enumerate(kinds) if d == k] for k in (False, True)}
    last = len(hits)
    place = list(range(last)) if fused is None else [
        fused.get((h.scope, h.chunk.id), last + i) for i, h in enumerate(hits)]
    queues = {k: deque(sorted(at, key=place.__getitem__)) for k, at in ranked.items()}
    places = []
    while queues[False] or queues[True]:
        heads = [k for k in (False, True) if queues[k]]
        # ties: the earlier fused place first
        kind = max(heads, key=lambda k: (_probability(hits[queues[k][0]]),
                                         -place[queues[k][0]]))
        queues[kind].popleft()
        places.append(kind)
    take = {k: iter(at) for k, at in ranked.items()}
    order = [next(take[kind]) for kind in places]
    return [hits[i] for i in order], [floors[i] for i in order]


#: Two order values closer than this share of the larger tie (:func:`broken_ties`): not a
#: tuned constant but a float's noise floor for these scores. The recency bonuses of two
#: notes stored a moment apart differ by a few parts in a billion (trial 10's "N 1350"
#: and "N 3": 1.0099918519 and 1.0099918482, at equal fused scores), far below any
#: difference the fusion itself makes (one rank in a run of 100: > 1e-4).
TIE = 1e-6


def broken_ties(hits: list[ScopedHit], floors: list[tuple[float, str]],
                values: Sequence[float]) -> tuple[list[ScopedHit], list[tuple[float, str]]]:
    """Order each run of adjacent hits that are not turns and tie in ``values`` (the
    value they were ordered by, :func:`~octomem.engine.fusion.order_values`, within
    :data:`TIE`) by their relevance, highest first; every other hit stays put (turns
    keep the ``conversation`` reranker's order). A fresh user's trial (trial 10):
    "Marker token QY0003" put a semantic neighbour (relevance 0.02, first in the
    semantic run only) before the exact match (0.22, first in the keyword run only), at
    an equal fused score, by a recency bonus 4e-9 larger."""
    order = list(range(len(hits)))
    start = 0
    while start < len(hits):
        end = start + 1
        if not is_turn(hits[start].chunk):
            while (end < len(hits) and not is_turn(hits[end].chunk)
                   and math.isclose(values[end], values[start], rel_tol=TIE)):
                end += 1
        if end - start > 1:  # stable: equal relevances keep their order
            order[start:end] = sorted(order[start:end], key=lambda i: -_probability(hits[i]))
        start = end
    return [hits[i] for i in order], [floors[i] for i in order]


def tie_end(hits: Sequence[ScopedHit], n: int, values: Sequence[float]) -> int:
    """Return how many of ``hits`` to judge: ``n``, or more when the hits at places ``n``
    and ``n + 1`` (1-based) tie in ``values`` (:func:`broken_ties`' runs: not turns,
    within :data:`TIE`): to the end of that run, so that it is ordered by relevance whole
    before the first :data:`JUDGED_HITS` decide whether the answer abstains.

    A fresh user's trial (trial 19, K8): in 20,000 notes, the last line of 53 notes
    ("Note N about cache" above "Marker token ...") tied at the keyword run's best score
    with the semantic run's best (relevance 0.32), and the cut to the first 10 before the
    ties were broken kept ten of the 53 (relevance 0.01): ``top_k`` 10 and 50 abstained
    ("nothing stored answers this"), ``top_k`` 100 answered with that hit first.
    """
    end = min(n, len(hits))
    if not values or end == 0 or end == len(hits) or is_turn(hits[end - 1].chunk):
        return end
    last = values[end - 1]
    while (end < len(hits) and not is_turn(hits[end].chunk)
           and math.isclose(values[end], last, rel_tol=TIE)):
        end += 1
    return end


def replies(hits: list[ScopedHit], passes: list[bool]) -> dict[int, int]:
    """Return the places of the hits that are the next turn after a question turn that
    reaches its floor, each with its question's place (its text ends with "?"; the same
    conversation, the next position, in either scope: dedup keeps one copy of a turn
    stored in both): the reply is the
    answer to the question the query matched. A fresh user's trial: "where are we
    staying in Porto" matched "Ben: Where are we staying in
    Porto?" (relevance above the floor) while the reply "Ana: A small guesthouse in
    Ribeira", second, had 0.01 (< ``retrieval.relative_floor`` × the best) and was left
    out. No tuned constant."""
    asked: dict[tuple[Any, Any], int] = {}
    for at, (hit, ok) in enumerate(zip(hits, passes, strict=True)):
        if ok and is_turn(hit.chunk) and hit.chunk.text.rstrip().endswith("?"):
            meta = hit.chunk.metadata
            asked.setdefault((meta[CONVERSATION], meta[POSITION] + 1), at)
    if not asked:
        return {}
    return {i: asked[key] for i, h in enumerate(hits) if is_turn(h.chunk) and (
        key := (h.chunk.metadata[CONVERSATION], h.chunk.metadata[POSITION])) in asked}


def as_answers(hits: list[ScopedHit], answers: Mapping[int, int],
               probability: list[float]) -> None:
    """Give each reply of ``answers`` (:func:`replies`: reply place -> question place) its
    question's relevance and band when they are higher than its own (kept in
    ``reply_own``): the reply is the answer to what the query matched, while its own words
    rarely share any with the query (trial 15 F2: "The 9:09, it arrives at 12:05." was
    band low beside its question's medium, and ``max_tokens`` cut it before an unrelated
    medium turn). The order of the hits does not change."""
    for reply, question in answers.items():
        own, asked = hits[reply].relevance, hits[question].relevance
        if own is None or asked is None or probability[reply] >= probability[question]:
            continue
        hits[reply].relevance = replace(own, probability=asked.probability, band=asked.band,
                                        passes=asked.passes, reply_own=own.probability)


def tail_floor(best: float, retrieval: RetrievalSettings) -> float:
    """Return the least relevance a hit below its floor needs to stay in an answer whose
    best hit has relevance ``best``: ``retrieval.relative_floor`` times ``best``, and at
    least ``retrieval.weak_answer_floor`` when ``best`` is below
    :data:`~octomem.engine.relevance.MEDIUM` (a weak answer: trial 16 F12, a best hit of
    0.055 came with 8 hits of relevance 0.00-0.03)."""
    least = retrieval.relative_floor * best
    return max(least, retrieval.weak_answer_floor) if best < MEDIUM else least


def judged(hits: list[ScopedHit], top_k: int, text: str, cos: dict[Key, float],
           retrieval: RetrievalSettings, embedder: str | None, answer: RecallAnswer,
           stats: Mapping[str, RunStats], pipelines: Mapping[str, Pipeline],
           filters: Filters | None = None, ties: Sequence[float] = (),
           reach: int | None = None, strength: float | None = None,
           fused: Mapping[Key, int] | None = None) -> list[ScopedHit]:
    """Return the answer's hits (at most ``top_k``) from ``hits`` (best first, before any
    cut), each with its relevance.

    Whether the answer abstains, and the best match it names, are decided on the first
    :data:`JUDGED_HITS` hits whatever ``top_k`` is (a small ``top_k`` gets no false
    "nothing stored"): when none reaches its kind's floor, none is returned
    (``answer.abstained`` says why, ``answer.best_rejected`` is the best one, rank 1).
    Else hits below both their floor and :func:`tail_floor` (``retrieval.relative_floor``
    times the best, or ``retrieval.weak_answer_floor`` when the best is weak) are left out
    (counted in ``answer.weak_left_out`` among the first ``top_k``), except the
    reply to a question turn that reaches its floor (:func:`replies`) and a hit ranked
    before the most relevant one (the ranking saw more than relevance does: trial 15 F1,
    "what did you suggest for ...?", the conversation reranker's first hit, the
    assistant's reply, was left out beside the user's request), and the cut to
    ``top_k`` keeps every hit that reaches its floor before those that do not
    (each in its place). In a store holding both documents and turns the two kinds are
    ordered by :func:`across_kinds` first (all hits judged); with one kind only the
    first ``max(JUDGED_HITS, top_k)`` are. ``strength``: the answer's keyword strength
    (:func:`scope_strength`) for turns' and statements' relevance.
    """
    mixed = len({is_document(h) for h in hits}) > 1
    hits = hits if mixed else hits[: tie_end(hits, max(JUDGED_HITS, top_k), ties)]
    ties = ties[: len(hits)]
    floors = _relevance(hits, text, cos, retrieval, embedder, stats, pipelines, filters, reach,
                        strength)
    if ties:
        hits, floors = broken_ties(hits, floors, ties)
    hits, floors = across_kinds(hits, floors, fused)
    probability = [_probability(h) for h in hits]
    passes = [p >= f for p, (f, _) in zip(probability, floors, strict=True)]
    if hits and not any(passes[:JUDGED_HITS]):
        at = max(range(min(len(hits), JUDGED_HITS)), key=probability.__getitem__)
        answer.abstained = abstain_reason(probability[at], *floors[at])
        hits[at].rank = 1  # the best match
        answer.best_rejected = hits[at]
        return []
    best = max(probability, default=0.0)
    answers = replies(hits, passes)
    ahead = probability.index(best) if probability else 0  # ranked before the most relevant
    least = tail_floor(best, retrieval)
    kept = [i for i, (h, p, (f, _)) in enumerate(zip(hits, probability, floors, strict=True))
            if h.relevance is None or p >= min(f, least) or i in answers or i < ahead]
    answer.weak_left_out = min(top_k, len(hits)) - sum(i < top_k for i in kept)
    shown = set([i for i in kept if passes[i]][:top_k])
    shown.update([i for i in kept if i not in shown][: top_k - len(shown)])
    as_answers(hits, {r: q for r, q in answers.items() if r in shown}, probability)
    return [hits[i] for i in sorted(shown)]
