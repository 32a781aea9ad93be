"""Fusing the runs of several scopes into one ranking on one score scale.

Chunk ids are only unique inside one storage, so every hit is keyed by
``(scope, chunk id)``. The runs one arm produced in each scope are first merged into a
single run for that arm, then the merged runs (one per arm) are fused exactly as one
scope's runs are (RRF, k = retrieval.rrf_k, or weighted score fusion), so a hit's fused score means
the same whichever scope it came from.

How an arm's runs are merged depends on whether its scores mean the same in every
scope:

- **by score** for arms whose scores are collection-independent — the semantic arms'
  cosine similarities (one embedder, one scale): the merged run is exactly the run one
  collection holding both scopes would give;
- **by shared evidence** for the others — BM25 depends on each index's collection
  statistics (idf; FTS5 even clamps idf to ~0 in a collection of a few documents, so a
  new project's scores would all be ~1e-6), so its scores cannot be compared across
  scopes, and neither can its ranks: a project with three notes puts a note that shares
  one common word with the query first, level with the global scope's real answer. Each
  scope's run keeps its own order, and between scopes the hit that holds more of the
  query's content words goes first (:func:`~octomem.engine.relevance.coverage`, the
  collection-independent lexical feature the relevance model uses; ``lexical``): the
  runs are merged like sorted lists whose heads are compared by coverage, then by
  their rank in their own scope. Without ``lexical`` (or when one scope alone has
  hits) the heads are compared by rank alone. A single scope's run is unchanged, so
  single-scope benchmarks (SciFact, LoCoMo) rank exactly as before.

Within a scope, and in the merged run, hits with exactly equal keys share a rank
(competition ranking, "1224"), so fusion gives true ties the same share and the recency
bonus, not storage order, decides between them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ..fusion import Fused, FusedRanking, rrf_ranking, weighted_score_fusion
from ..settings import RetrievalSettings
from ..types import Hit, Run

#: A hit's identity across scopes.
Key = tuple[str, int]


def competition_ranks(keys: Sequence[float]) -> list[int]:
    """Return 1-based competition ranks of ``keys`` sorted ascending ("1224" on ties)."""
    ranks: list[int] = []
    for position, key in enumerate(keys, start=1):
        ranks.append(ranks[-1] if ranks and keys[position - 2] == key else position)
    return ranks


@dataclass(slots=True)
class ScopedRuns:
    """Every scope's runs, by arm name, with keys mapped to small integers for fusion.

    :param by_score: names of the arms whose scores are comparable across scopes
        (merged by score); the others are merged by shared evidence (module docstring).
    :param lexical: ``(scope, chunk ids) -> coverage of the query in each chunk`` (0..1),
        deciding between scopes for arms merged by shared evidence.
    :param keys: the key each integer of the fused runs stands for, when more than one
        scope has runs; with one scope the integers are the chunk ids themselves
        (:meth:`key_of`).
    """

    by_score: frozenset[str] = frozenset()
    lexical: Lexical | None = None
    keys: list[Key] = field(default_factory=list)
    _index: dict[Key, int] = field(default_factory=dict)
    _scopes: set[str] = field(default_factory=set)
    _runs: list[tuple[str, int, Run]] = field(default_factory=list)
    _by_arm: dict[str, list[tuple[float, int, str, Hit]]] | None = None

    def add(self, scope: str, scope_order: int, run: Run) -> None:
        """Add one scope's run of one arm (best first)."""
        if run:
            self._scopes.add(scope)
        self._runs.append((scope, scope_order, run))
        self._by_arm = None

    @property
    def by_arm(self) -> dict[str, list[tuple[float, int, str, Hit]]]:
        """Every arm's entries ``(key, scope order, scope, hit)`` of every scope: the key
        is ``-score`` for an arm merged by score, else the hit's competition rank in its
        own run."""
        if self._by_arm is None:
            by_arm: dict[str, list[tuple[float, int, str, Hit]]] = {}
            for scope, scope_order, run in self._runs:
                ranks = competition_ranks([-h.score for h in run])
                for rank, hit in zip(ranks, run, strict=True):
                    key = -hit.score if hit.arm in self.by_score else float(rank)
                    by_arm.setdefault(hit.arm, []).append((key, scope_order, scope, hit))
            self._by_arm = by_arm
        return self._by_arm

    def hits(self, scope: str, arm: str) -> list[Hit]:
        """Return ``arm``'s hits in ``scope``'s runs, in the order of :attr:`by_arm`'s
        entries for them (runs as added, each best first), without building
        :attr:`by_arm` (one scope's fusion never needs it)."""
        return [hit for owner, _, run in self._runs if owner == scope
                for hit in run if hit.arm == arm]

    def scores(self, scope: str, arm: str) -> list[float]:
        """Return the raw scores of :meth:`hits`."""
        return [hit.score for hit in self.hits(scope, arm)]

    @property
    def single(self) -> str | None:
        """The scope, when exactly one scope has runs (fused runs then carry chunk ids)."""
        return next(iter(self._scopes)) if len(self._scopes) == 1 else None

    def uid(self, key: Key) -> int:
        """Return the integer standing for ``key`` in fused runs (stable per object): its
        chunk id when one scope alone has runs, else a number of :attr:`keys`."""
        if self.single is not None:
            return key[1]
        if key not in self._index:
            self._index[key] = len(self.keys)
            self.keys.append(key)
        return self._index[key]

    def key_of(self, uid: int) -> Key:
        """Return the key ``uid`` (a :meth:`uid`) stands for."""
        single = self.single
        return (single, uid) if single is not None else self.keys[uid]

    def merged(self, k: int) -> list[Run]:
        """Return one run per arm, every scope's hits merged (see the module text), top ``k``.

        Hits carry :meth:`uid` values as ``chunk_id`` and their own raw scores.
        """
        single = self.single is not None
        if single:
            quick = self._one_scope(k)
            if quick is not None:
                return quick
        runs: list[Run] = []
        for arm, ordered, ranks in self.ordered(k):
            if single:  # the arm's own hit when it already says the same
                runs.append([hit if hit.rank == rank else Hit(hit.chunk_id, hit.score, rank, arm)
                             for rank, (_, _, _, hit) in zip(ranks, ordered, strict=True)])
                continue
            runs.append([
                Hit(self.uid((scope, hit.chunk_id)), hit.score, rank, arm)
                for rank, (_, _, scope, hit) in zip(ranks, ordered, strict=True)
            ])
        return runs

    def _one_scope(self, k: int) -> list[Run] | None:
        """Return :meth:`merged` of one scope whose runs are one per arm, each sorted as
        the merge sorts (score descending, ties by ascending chunk id): each run's first
        ``k`` hits with their competition ranks, without sorting anything; ``None`` when
        a run is not so (the merge then sorts)."""
        out: list[Run] = []
        arms: set[str] = set()
        for _, _, run in self._runs:
            if not run:
                continue
            arm = run[0].arm
            if arm in arms:
                return None
            arms.add(arm)
            merged: Run = []
            last_score, last_id, rank = run[0].score, run[0].chunk_id, 1
            for position, hit in enumerate(run, start=1):
                score, chunk_id = hit.score, hit.chunk_id
                if hit.arm != arm:
                    return None
                if position > 1:
                    if score == last_score:
                        if chunk_id < last_id:
                            return None
                    elif score < last_score:
                        rank = position
                    else:  # rising, or NaN
                        return None
                last_score, last_id = score, chunk_id
                if position <= k:
                    merged.append(hit if hit.rank == rank else Hit(chunk_id, score, rank, arm))
            out.append(merged)
        return out

    def ordered(self, k: int) -> Iterator[tuple[str, list[tuple[float, int, str, Hit]],
                                                 list[int]]]:
        """Yield ``(arm, its top k entries across scopes, their merged ranks)`` for each
        arm, merged as the module text says (entries: ``(key, scope order, scope, hit)``)."""
        for arm, hits in self.by_arm.items():
            if arm not in self.by_score and len({t[1] for t in hits}) > 1:
                ordered, keys = self._interleaved(hits, k)
            else:
                ordered = sorted(hits, key=lambda t: (t[0], t[1], t[3].chunk_id))[:k]
                keys = [t[0] for t in ordered]
            yield arm, ordered, competition_ranks(keys)

    def _interleaved(self, hits: list[tuple[float, int, str, Hit]], k: int
                     ) -> tuple[list[tuple[float, int, str, Hit]], list[tuple[float, float]]]:
        """Merge one arm's per-scope runs keeping each scope's order; between scopes the
        head with the higher coverage goes first, then the better rank in its own scope,
        then the scope searched first. Returns the top ``k`` and their tie keys (equal
        keys share a rank)."""
        queues: dict[int, list[tuple[float, int, str, Hit]]] = {}
        for entry in sorted(hits, key=lambda t: (t[1], t[0], t[3].chunk_id)):
            queues.setdefault(entry[1], []).append(entry)
        share: dict[tuple[int, int], float] = {}
        if self.lexical is not None:
            for queue in queues.values():
                scope, ids = queue[0][2], [t[3].chunk_id for t in queue[:k]]
                for cid, value in zip(ids, self.lexical(scope, ids), strict=True):
                    share[(queue[0][1], cid)] = float(value)
        heads = {order: 0 for order in queues}
        ordered, keys = [], []
        while heads and len(ordered) < k:
            def rank_of(order: int) -> tuple[float, float, int]:
                key, _, _, hit = queues[order][heads[order]]
                return (-share.get((order, hit.chunk_id), 0.0), key, order)

            best = min(heads, key=rank_of)
            coverage, key, _ = rank_of(best)
            ordered.append(queues[best][heads[best]])
            keys.append((coverage, key))
            heads[best] += 1
            if heads[best] == len(queues[best]):
                del heads[best]
        return ordered, keys


#: ``(scope, chunk ids) -> coverage (0..1) of the query's content words in each chunk``.
Lexical = Callable[[str, Sequence[int]], Sequence[float]]


@dataclass(slots=True)
class ScopedFused:
    """One fused hit across scopes: its key, fused score and each arm's own (merged) hit."""

    key: Key
    score: float
    contributions: dict[str, Hit]


def fuse_scopes(runs: ScopedRuns, k: int, retrieval: RetrievalSettings) -> list[ScopedFused]:
    """Merge each arm's runs across scopes, then fuse the arms (settings' fusion).

    :param k: candidates per merged run (``candidate_k``).
    :returns: hits best first; contributions carry real chunk ids and merged ranks.
    :raises ValueError: ``retrieval.rrf_k < 1``.
    """
    merged = runs.merged(k)
    fused: Sequence[Fused]
    if retrieval.fusion == "weighted":
        fused = weighted_score_fusion(merged, retrieval.weights)
    else:  # the ranking itself: its entries are read once, below
        fused = rrf_ranking(merged, retrieval.rrf_k, retrieval.weights)
    single = runs.single
    if single is not None:  # the fused runs already carry chunk ids, sorted as _order sorts
        if isinstance(fused, FusedRanking):
            ids, scores, contributions = fused.columns()
            return [ScopedFused((single, c), s, h)
                    for c, s, h in zip(ids, scores, contributions, strict=True)]
        return [ScopedFused((single, e.chunk_id), e.score, e.contributions) for e in fused]
    else:
        out = []
        for entry in fused:
            key = runs.keys[entry.chunk_id]
            out.append(ScopedFused(key, entry.score, _real_ids(entry.contributions, key[1])))
    out.sort(key=_order)
    return out


def _order(fused: ScopedFused) -> tuple[float, bool, int]:
    """Best score first; on a tie the local scope's hit, then the lower chunk id."""
    return -fused.score, fused.key[0] != "local", fused.key[1]


def _real_ids(contributions: Mapping[str, Hit], chunk_id: int) -> dict[str, Hit]:
    return {arm: Hit(chunk_id, h.score, h.rank, h.arm) for arm, h in contributions.items()}
