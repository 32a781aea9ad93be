"""Value types that cross arm boundaries: documents, chunks, queries, hits, answers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

DEFAULT_KIND = "ITEM"


def new_document_id() -> str:
    """Return a new random document id (32 lowercase hex characters)."""
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class Document:
    """What a caller adds: text plus metadata. A memory statement is a one-chunk document.

    :param id: stable id; given by the caller or made by :func:`new_document_id`.
    :param created_at: when it was recorded, seconds since the Unix epoch (UTC).
    :param event_time: when what it says happened, seconds since the epoch, or ``None``.
    :param metadata: free JSON-serialisable fields (e.g. ``{"conv_id": "c1"}``),
        usable as equality filters.
    """

    text: str
    id: str = field(default_factory=new_document_id)
    title: str | None = None
    uri: str | None = None
    kind: str = DEFAULT_KIND
    tags: tuple[str, ...] = ()
    created_at: float = field(default_factory=time.time)
    event_time: float | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Chunk:
    """The unit that is indexed and retrieved: one passage of a document.

    :param id: storage-assigned integer id, unique within one storage; ``0`` before storing.
    :param ordinal: 0-based position of the chunk in its document.
    Kind, tags, times and metadata are copied from the document so arms can filter
    without a join.
    """

    document_id: str
    ordinal: int
    text: str
    id: int = 0
    kind: str = DEFAULT_KIND
    tags: tuple[str, ...] = ()
    created_at: float = 0.0
    title: str | None = None
    uri: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions every arm applies *inside* its search, before ranking.

    :param kinds: keep chunks whose kind is one of these (empty: any kind).
    :param tags: keep chunks carrying every one of these tags (empty: no tag filter).
    :param created_after: keep ``created_at >= created_after`` (epoch seconds), or ``None``.
    :param created_before: keep ``created_at < created_before`` (epoch seconds), or ``None``.
    :param metadata: keep chunks whose ``metadata[key] == value`` for every item.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    created_after: float | None = None
    created_before: float | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)

    def is_empty(self) -> bool:
        """Return True when no restriction is set."""
        return not (
            self.kinds
            or self.tags
            or self.metadata
            or self.created_after is not None
            or self.created_before is not None
        )

    def matches(self, chunk: Chunk) -> bool:
        """Return True when ``chunk`` passes every restriction (for arms that filter in Python)."""
        if self.kinds and chunk.kind not in self.kinds:
            return False
        if self.tags and not set(self.tags) <= set(chunk.tags):
            return False
        if self.created_after is not None and chunk.created_at < self.created_after:
            return False
        if self.created_before is not None and chunk.created_at >= self.created_before:
            return False
        return all(str(chunk.metadata.get(k)) == str(v) for k, v in self.metadata.items())


@dataclass(frozen=True, slots=True)
class Query:
    """A search request.

    :param text: the user's words, any string (arms must never raise on syntax).
    :param top_k: number of hits in the final answer, >= 1.
    """

    text: str
    top_k: int = 10
    filters: Filters = field(default_factory=Filters)


@dataclass(frozen=True, slots=True)
class Hit:
    """One arm's opinion of one chunk.

    :param score: the arm's raw score, higher is better (arms convert distances).
    :param rank: 1-based position in the arm's run.
    :param arm: name of the arm that produced it.
    """

    chunk_id: int
    score: float
    rank: int
    arm: str


#: A ranked list of hits from one arm, best first (TREC/BEIR "run").
Run = list[Hit]


@dataclass(frozen=True, slots=True)
class FusedHit:
    """One chunk of a fused answer.

    :param score: fused score (RRF or weighted), higher is better.
    :param rank: 1-based position in the final answer.
    :param contributions: each arm's own :class:`Hit` for this chunk, by arm name.
    """

    chunk: Chunk
    score: float
    rank: int
    contributions: Mapping[str, Hit] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Collapsed:
    """A hit that dedup removed from an answer.

    :param reason: ``"identical text"``, ``"cosine 0.97 >= 0.95"``, ``"mmr"``, ...
    """

    chunk_id: int
    kept_chunk_id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Answer:
    """The result of a search and how it was made.

    :param arms_ran: names of the retrieval arms that produced a run.
    :param arms_unavailable: arm name -> reason it did not run.
    :param semantic_available: whether a semantic arm contributed.
    :param collapsed: what dedup removed, and why.
    :param unembedded_hits: ids of hits whose chunk has no vector yet (found by words only).
    :param timings_ms: stage name -> wall time in milliseconds.
    """

    hits: list[FusedHit]
    arms_ran: list[str]
    arms_unavailable: dict[str, str]
    semantic_available: bool
    collapsed: list[Collapsed] = field(default_factory=list)
    unembedded_hits: list[int] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
