"""The rerank stage shared by one scope's search and the recall across scopes.

A plain :class:`~octomem.engine.arms.Reranker` re-scores the fused top-N passages by
their text. A :class:`~octomem.engine.arms.HitReranker` (e.g. ``conversation``) also
sees each hit's chunk (its metadata), every arm's contribution and its cosine to the
query, over its own ``depth``; it may leave hits where fusion put them (a NaN score):
the hits it scores are re-ordered among the places they held, the others keep theirs.
A reranker with a ``groups(hits)`` method re-orders each group (e.g. one conversation's
turns) only among the places that group held: its scores need not be comparable across
groups, and fusion alone decides between them.

A turn split into several chunks (a long pasted log) is ranked as one turn
(:func:`one_place_per_turn`): its best chunk keeps the place the reranker gave it, its
other chunks come after every scored turn's first chunk (trial 15 F18: one 1.1 MB turn's
~1,800 chunks took every place of the answer but the first).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from .arms import HitReranker
from .fusion import is_turn
from .types import FusedHit, Hit

if TYPE_CHECKING:
    import numpy as np

H = TypeVar("H")
#: Whether a reranker class is a :class:`HitReranker`, by class: ``isinstance`` against a
#: runtime-checkable protocol inspects its members on every call (~20 us, three times a
#: recall).
_HIT_RERANKERS: dict[type, bool] = {}


def is_hit_reranker(reranker: Any) -> bool:
    """Return ``isinstance(reranker, HitReranker)``, decided once per class (a reranker's
    methods are its class's)."""
    kind = type(reranker)
    known = _HIT_RERANKERS.get(kind)
    if known is None:
        known = _HIT_RERANKERS[kind] = isinstance(reranker, HitReranker)
    return known


def rerank_depth(reranker: Any, top_n: int) -> int:
    """Return how many fused hits to load for ``reranker`` before it has seen any:
    ``top_n`` (``retrieval.rerank_top_n``) for a plain reranker; 0 for a
    :class:`HitReranker` (it says what it wants from the first hits, :func:`more_wanted`)
    or without one."""
    if reranker is None or is_hit_reranker(reranker):
        return 0
    return top_n


def more_wanted(reranker: Any, hits: Sequence[Any], loaded: int) -> int:
    """Return how many fused hits ``reranker`` wants beyond the ``loaded`` ones, given
    ``hits`` (0 for a plain reranker or none)."""
    if reranker is None or not is_hit_reranker(reranker) or not hits:
        return 0
    return max(0, int(reranker.wanted(hits)) - loaded)


def similarities(vectors: np.ndarray | None, query_vector: np.ndarray | None) -> np.ndarray | None:
    """Return each row's cosine to the query, NaN for a zero row (no vector), or ``None``.

    :param vectors: ``(n, dim)`` float32 unit rows (zero where a chunk has none).
    :param query_vector: ``(dim,)`` float32 unit vector.
    :returns: ``(n,)`` float64.
    """
    if vectors is None or query_vector is None or vectors.shape[1] != query_vector.shape[0]:
        return None
    import numpy as np

    cos = (vectors @ query_vector).astype(np.float64)
    cos[~vectors.any(axis=1)] = np.nan
    return cos


def rerank(
    reranker: Any, text: str, hits: list[H], similarity: np.ndarray | None,
    keyword: str | None, top_n: int, passage: Any, keep: int | None = None,
) -> tuple[list[H], list[int], bool]:
    """Re-order ``hits`` (fused hits or scoped hits: ``.chunk``, ``.contributions``).

    :param passage: ``passage(hit) -> str``, the text a plain reranker reads.
    :param keep: return only the first ``keep`` hits of the new order (``None``: all).
    :returns: the new order; for each new position, the hit's old index (to carry
        per-hit arrays such as vectors along); whether the reranker scored any hit.
    """
    import numpy as np

    grouped = getattr(reranker, "rerank_grouped", None)
    if callable(grouped):  # scores and groups from one pass over the hits
        scores, labels = grouped(text, hits, similarity, keyword)
        scores = np.asarray(scores, dtype=float)
    else:
        if is_hit_reranker(reranker):
            scores = np.asarray(reranker.rerank_hits(text, hits, similarity, keyword),
                                dtype=float)
        else:
            head = min(top_n, len(hits))
            scores = np.full(len(hits), np.nan)
            scores[:head] = reranker.rerank(text, [passage(h) for h in hits[:head]])
        labels = reranker.groups(hits) if callable(getattr(reranker, "groups", None)) else None
    is_scored = ~np.isnan(scores)
    scored = np.flatnonzero(is_scored)
    order = np.arange(len(hits))
    for places in _groups(labels, scored):
        order[places] = places[np.argsort(-scores[places], kind="stable")]  # ties: fused
    order = one_place_per_turn(hits, order, is_scored)
    best = order[is_scored[order]]  # the scored hits, in their new order
    rank = np.zeros(len(hits), dtype=np.int64)
    rank[best] = np.arange(1, len(best) + 1)
    kept = order.tolist()[:keep]
    ranks, values, name = rank.tolist(), scores.tolist(), reranker.name  # type: ignore[attr-defined]
    out = []
    for i in kept:
        hit = hits[i]
        if ranks[i]:
            own = Hit(hit.chunk.id, values[i], ranks[i], name)  # type: ignore[attr-defined]
            hit = with_contributions(hit, {**hit.contributions, name: own})  # type: ignore[attr-defined]
        out.append(hit)
    return out, kept, bool(len(scored))


def one_place_per_turn(hits: Sequence[Any], order: np.ndarray,
                       scored: np.ndarray) -> np.ndarray:
    """Return ``order`` with each turn's chunks after its first one moved behind the first
    chunk of every scored turn: the places the scored turns hold are filled with each
    turn's first chunk, in ``order``, then its other chunks, in ``order``; every other
    place keeps its hit. A turn is a document's revision in a scope (a chunk with
    :func:`~.fusion.is_turn` metadata; its chunks share ``document_id`` and ``revision``).
    Documents' chunks are left alone, as fusion put them (``--per document`` keeps their
    best).

    :param hits: the hits (``.chunk``; a recall's ``.scope``).
    :param order: ``(n,)`` int64, the old index of the hit at each new place.
    :param scored: ``(n,)`` bool by old index, the hits the reranker scored.
    :returns: ``order`` itself when no scored turn has two chunks among ``hits``, else a
        new ``(n,)`` int64 array.
    """
    import numpy as np

    at = np.flatnonzero(scored).tolist()
    if len({hits[i].chunk.document_id for i in at}) == len(at):
        return order  # no two scored hits of one document (nearly every recall)
    places, keys, was_scored = [], [], scored.tolist()
    for place, i in enumerate(order.tolist()):
        if was_scored[i]:
            hit = hits[i]
            chunk = hit.chunk
            if is_turn(chunk):
                places.append(place)
                keys.append((getattr(hit, "scope", None), chunk.document_id, chunk.revision))
    if len(set(keys)) == len(keys):  # one chunk a turn in each scope: nothing moves
        return order
    seen: set[Any] = set()
    first, later = [], []
    for place, key in zip(places, keys, strict=True):
        (later if key in seen else first).append(order[place])
        seen.add(key)
    out = order.copy()
    out[np.asarray(places, dtype=np.int64)] = np.asarray(first + later, dtype=np.int64)
    return out


def with_contributions(hit: H, contributions: dict[str, Hit]) -> H:
    """Return ``hit`` with ``contributions``: a new :class:`~.types.FusedHit` (frozen),
    built directly; any other frozen dataclass through ``dataclasses.replace``; a mutable
    one (a recall's :class:`~.memory.recall.ScopedHit`, made for this answer alone)
    updated in place, which costs ~0.1 us against ~3 us for ``replace`` (30 hits a
    recall)."""
    kind = type(hit)
    if kind is FusedHit:
        return FusedHit(hit.chunk, hit.score, hit.rank, contributions,  # type: ignore[attr-defined]
                        hit.relevance)  # type: ignore[attr-defined, return-value]
    if _frozen(kind):
        return replace(hit, contributions=contributions)  # type: ignore[type-var]
    hit.contributions = contributions  # type: ignore[attr-defined]
    return hit


#: Whether a dataclass is frozen, by class (read once per class).
_FROZEN: dict[type, bool] = {}


def _frozen(kind: type) -> bool:
    known = _FROZEN.get(kind)
    if known is None:
        params = getattr(kind, "__dataclass_params__", None)
        known = _FROZEN[kind] = params is None or bool(params.frozen)
    return known


def rerank_stage(
    reranker: Any, keyword: Any, text: str, hits: list[H], vectors: np.ndarray | None,
    similarity: np.ndarray | None, top_n: int, answer: Any, keep: int | None = None,
) -> tuple[list[H], np.ndarray | None, np.ndarray | None]:
    """Run :func:`rerank` for an answer: carry ``vectors`` and ``similarity`` along, name
    the reranker in ``answer.arms_ran`` when it scored a hit, or in
    ``answer.arms_unavailable`` when its model cannot load (the fused order stays).

    :param keyword: the keyword arm (its name keys the hits' contributions), or ``None``.
    :param keep: return only the first ``keep`` hits and rows: after a reranker saw more
        candidates, dedup and the cut to ``top_k`` need only as many as before (cosine
        dedup is quadratic in the hits it sees).
    """
    from .errors import EmbedderUnavailableError

    try:
        hits, order, ran = rerank(reranker, text, hits, similarity,
                                  keyword.name if keyword is not None else None, top_n,
                                  lambda h: _passage(h), keep)
    except EmbedderUnavailableError as exc:
        answer.arms_unavailable[reranker.name] = str(exc)
        return head(len(hits) if keep is None else keep, hits, vectors, similarity)
    if ran:
        answer.arms_ran.append(reranker.name)
    return hits, take(vectors, order), take(similarity, order)


def _groups(labels: Sequence[Any] | None, scored: np.ndarray) -> list[np.ndarray]:
    """Return the places (indices into the hits, ascending) of each group the reranker
    re-orders apart, given each hit's group label (a reranker's ``groups(hits)``): one
    group of every scored place when ``labels`` is ``None``."""
    import numpy as np

    if labels is None:
        return [scored]
    at = scored.tolist()
    if at and all(labels[i] == labels[at[0]] for i in at):  # one group (one conversation)
        return [scored]
    places: dict[Any, list[int]] = {}
    for i in at:
        places.setdefault(labels[i], []).append(i)
    return [np.asarray(p, dtype=np.int64) for p in places.values()]


def head(depth: int, hits: list[H], *rows: Any) -> tuple[Any, ...]:
    """Return the first ``depth`` hits and rows (``None`` rows stay ``None``): after a
    reranker saw more candidates, dedup and the cut to ``top_k`` need only as many as
    before (cosine dedup is quadratic in the hits it sees)."""
    return (hits[:depth], *(None if r is None else r[:depth] for r in rows))


def _passage(hit: Any) -> str:
    chunk = hit.chunk
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def take(rows: Sequence[Any] | np.ndarray | None, order: Sequence[int]) -> Any:
    """Return ``rows`` re-ordered by ``order`` (``None`` stays ``None``)."""
    if rows is None:
        return None
    import numpy as np

    return rows[np.asarray(order, dtype=np.int64)] if len(order) else rows[:0]
