"""Variant B (measured, not landed): the conversation reranker's features over one row
per turn — its first fused chunk, with the best keyword score and cosine of its chunks —
every other chunk of the turn scored as that row (``one_place_per_turn`` then puts them
after every turn's first chunk)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any


def install() -> None:
    """Wrap ``ConversationReranker.rerank_grouped`` (class-wide, for this process)."""
    import numpy as np

    from octomem.plugins.conversation.ranker import ConversationReranker

    plain = ConversationReranker.rerank_grouped

    def grouped(self: Any, query: str, hits: Any, similarity: Any, keyword: Any) -> Any:
        every = self.known_all(hits)
        first: dict[Any, int] = {}
        owner = list(range(len(hits)))
        for i, (h, f) in enumerate(zip(hits, every, strict=True)):
            if f.turn is not None:
                key = (getattr(h, "scope", None), h.chunk.document_id, h.chunk.revision)
                owner[i] = first.setdefault(key, i)
        keep = [i for i in range(len(hits)) if owner[i] == i]
        if len(keep) == len(hits):
            return plain(self, query, hits, similarity, keyword)
        at = {i: n for n, i in enumerate(keep)}
        sim = None if similarity is None else similarity[keep].copy()
        best_kw: dict[int, Any] = {}
        for i, o in enumerate(owner):
            own = hits[i].contributions.get(keyword) if keyword else None
            if own is not None and (o not in best_kw or own.score > best_kw[o].score):
                best_kw[o] = own
            if sim is not None and o != i and not np.isnan(similarity[i]):
                n = at[o]
                sim[n] = similarity[i] if np.isnan(sim[n]) else max(sim[n], similarity[i])
        rows = []
        for i in keep:
            contributions = dict(hits[i].contributions)
            if keyword and i in best_kw:
                contributions[keyword] = best_kw[i]
            rows.append(SimpleNamespace(chunk=hits[i].chunk, contributions=contributions,
                                        scope=getattr(hits[i], "scope", None)))
        scores, labels = plain(self, query, rows, sim, keyword)
        out = np.array([scores[at[o]] for o in owner], dtype=float)
        return out, None if labels is None else [labels[at[o]] for o in owner]

    ConversationReranker.rerank_grouped = grouped
