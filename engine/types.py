"""Value types that cross arm boundaries: documents, chunks, queries, hits, answers."""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import FrozenInstanceError, dataclass, field
from itertools import repeat
from typing import Any, NamedTuple

DEFAULT_KIND = "ITEM"
#: The reserved kind of a session handoff: recording one supersedes the scope's previous one.
HANDOFF_KIND = "HANDOFF"


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
    :param supersedes: id of the older statement this one replaces, or ``None``.

    History and usage, maintained by the storage (a caller leaves the defaults; an
    import restores them):

    :param superseded_by: id of the statement that replaced this one, or ``None``.
    :param valid_to: when this version stopped being current (epoch seconds), ``None``
        while it is current. It is valid from :attr:`valid_from`.
    :param revision: 1 for the first content of this id, +1 for every changed re-ingest.
    :param recalls: how many recall answers returned it.
    :param last_recalled_at: when a recall last returned it (epoch seconds), or ``None``.
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
    supersedes: str | None = None
    superseded_by: str | None = None
    valid_to: float | None = None
    revision: int = 1
    recalls: int = 0
    last_recalled_at: float | None = None

    @property
    def valid_from(self) -> float:
        """When what it says became true: ``event_time`` if given, else ``created_at``."""
        return self.created_at if self.event_time is None else self.event_time

    @property
    def is_current(self) -> bool:
        """True while no later statement or revision has replaced it."""
        return self.valid_to is None


@dataclass(frozen=True, slots=True)
class Chunk:
    """The unit that is indexed and retrieved: one passage of a document.

    :param id: storage-assigned integer id, unique within one storage; ``0`` before storing.
    :param ordinal: 0-based position of the chunk in its document.
    :param valid_from: when it became valid, epoch seconds (the document's
        :attr:`Document.valid_from`).
    :param valid_to: when it stopped being current (superseded, or replaced by a new
        revision), epoch seconds; ``None`` while current.
    :param revision: the document revision this chunk belongs to; ``0`` before storing
        means "the document's current revision".

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
    valid_from: float = 0.0
    valid_to: float | None = None
    revision: int = 0


_SET_CHUNK = tuple(getattr(Chunk, name).__set__ for name in Chunk.__dataclass_fields__)
if tuple(Chunk.__dataclass_fields__) != (
        "document_id", "ordinal", "text", "id", "kind", "tags", "created_at", "title", "uri",
        "metadata", "valid_from", "valid_to", "revision"):
    raise ImportError("new_chunk's fields are not Chunk's")  # pragma: no cover


def new_chunk(
    document_id: str, ordinal: int, text: str, id: int, kind: str, tags: tuple[str, ...],
    created_at: float, title: str | None, uri: str | None, metadata: Mapping[str, Any],
    valid_from: float, valid_to: float | None, revision: int,
) -> Chunk:
    """Return ``Chunk(document_id, ordinal, ..., revision)``, every field given in order, made
    by setting each slot: the frozen dataclass's ``__init__`` calls ``object.__setattr__``
    once per field, ~1.6x this (the write path makes two chunks per stored chunk)."""
    (s_document, s_ordinal, s_text, s_id, s_kind, s_tags, s_created, s_title, s_uri,
     s_metadata, s_from, s_to, s_revision) = _SET_CHUNK
    chunk = _new(Chunk)
    s_document(chunk, document_id)
    s_ordinal(chunk, ordinal)
    s_text(chunk, text)
    s_id(chunk, id)
    s_kind(chunk, kind)
    s_tags(chunk, tags)
    s_created(chunk, created_at)
    s_title(chunk, title)
    s_uri(chunk, uri)
    s_metadata(chunk, metadata)
    s_from(chunk, valid_from)
    s_to(chunk, valid_to)
    s_revision(chunk, revision)
    return chunk


_new = object.__new__


@dataclass(frozen=True, slots=True)
class Filters:
    """Restrictions every arm applies *inside* its search, before ranking.

    :param kinds: keep chunks whose kind is one of these (empty: any kind).
    :param tags: keep chunks carrying every one of these tags (empty: no tag filter).
    :param created_after: keep ``created_at >= created_after`` (epoch seconds), or ``None``.
    :param created_before: keep ``created_at < created_before`` (epoch seconds), or ``None``.
    :param metadata: keep chunks whose ``metadata[key] == value`` for every item.
    :param valid_after: keep ``valid_from >= valid_after`` (epoch seconds; ``since``).
    :param valid_before: keep ``valid_from < valid_before`` (epoch seconds; ``until``).
    :param as_of: keep what was current at this instant (epoch seconds):
        ``valid_from <= as_of`` and (``valid_to`` is ``None`` or ``valid_to > as_of``).
    :param include_superseded: keep superseded chunks and old revisions too.

    Without ``as_of`` and ``include_superseded`` only current chunks pass
    (``valid_to is None``): the default view of a memory is what is true now.
    """

    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    created_after: float | None = None
    created_before: float | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    valid_after: float | None = None
    valid_before: float | None = None
    as_of: float | None = None
    include_superseded: bool = False

    def is_empty(self) -> bool:
        """Return True when nothing is restricted beyond the default current-only view.

        An arm that skips :meth:`matches` when this is True must still leave out chunks
        whose ``valid_to`` is set (or never see them).
        """
        return not (
            self.kinds
            or self.tags
            or self.metadata
            or self.created_after is not None
            or self.created_before is not None
            or self.valid_after is not None
            or self.valid_before is not None
            or self.as_of is not None
        )

    def cache_key(self) -> tuple[Any, ...]:
        """Return a hashable value equal for two filters exactly when they restrict alike."""
        return (
            self.kinds, tuple(sorted(set(self.tags))), self.created_after, self.created_before,
            tuple(sorted((str(k), str(v)) for k, v in self.metadata.items())),
            self.valid_after, self.valid_before, self.as_of, self.include_superseded,
        )

    def matches_validity(self, valid_from: float, valid_to: float | None) -> bool:
        """Return True when a version valid over ``[valid_from, valid_to)`` passes the
        ``since``/``until``, ``as_of`` and current-only rules."""
        if self.valid_after is not None and valid_from < self.valid_after:
            return False
        if self.valid_before is not None and valid_from >= self.valid_before:
            return False
        if self.as_of is not None:
            return valid_from <= self.as_of and (valid_to is None or valid_to > self.as_of)
        return self.include_superseded or valid_to is None

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
        if not self.matches_validity(chunk.valid_from, chunk.valid_to):
            return False
        return all(str(chunk.metadata.get(k)) == str(v) for k, v in self.metadata.items())


@dataclass(frozen=True, slots=True)
class ForgetRecord:
    """What remains of a forgotten statement: never its text.

    :param content_sha256: sha256 hex of the forgotten text (to recognise it, not read it).
    :param created_at: when the statement had been recorded, epoch seconds.
    :param forgotten_at: when it was forgotten, epoch seconds.
    :param reason: why, as the caller gave it (``None`` when no reason was given).
    """

    id: str
    kind: str
    content_sha256: str
    created_at: float
    forgotten_at: float
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class CallRecord:
    """One MCP tool call as the opt-in call log keeps it: never a stored or returned text.

    :param at: when the call finished, epoch seconds (UTC).
    :param tool: the tool's name (``unknown`` for a name the server does not have).
    :param outcome: ``ok``, ``error`` (a tool error), ``invalid`` (the request was
        refused) or ``cancelled``.
    :param latency_ms: its wall time inside the server, milliseconds.
    :param hits: hits returned (``recall``), else ``None``.
    :param arguments: the arguments' summary (allowlisted values, lengths of the rest).
    :param ids: ids the result named (stored, forgotten, ingested, or the first hits).
    """

    at: float
    tool: str
    outcome: str
    latency_ms: float
    hits: int | None = None
    arguments: Mapping[str, Any] = field(default_factory=dict)
    ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Query:
    """A search request.

    :param text: the user's words, any string (arms must never raise on syntax).
    :param top_k: number of hits in the final answer, >= 1.
    """

    text: str
    top_k: int = 10
    filters: Filters = field(default_factory=Filters)


class Hit(NamedTuple):
    """One arm's opinion of one chunk.

    Immutable, equal and hashed by its four fields, printed as ``Hit(chunk_id=..., ...)``,
    as the frozen dataclass it was until December 2 (``dataclasses.replace``, ``fields``
    and ``asdict`` still take it); a tuple underneath (``tuple.__new__``
    builds one in one C call), so an arm's 100 hits cost ~20 instead of ~35 us when the
    caches are cold (:func:`run_of`). Assigning a field raises
    :class:`dataclasses.FrozenInstanceError`, as before.

    :param score: the arm's raw score, higher is better (arms convert distances).
    :param rank: 1-based position in the arm's run.
    :param arm: name of the arm that produced it.
    """

    chunk_id: int
    score: float
    rank: int
    arm: str

    def __setattr__(self, name: str, value: object) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")


@dataclass(frozen=True)
class _HitFields:  # the dataclass Hit was: its fields, for dataclasses' functions
    chunk_id: int
    score: float
    rank: int
    arm: str


# ``dataclasses.replace``, ``fields``, ``asdict`` and ``is_dataclass`` still take a Hit
# (they look for these two attributes; ``replace`` calls ``Hit(**fields)``)
Hit.__dataclass_fields__ = _HitFields.__dataclass_fields__  # type: ignore[attr-defined]
Hit.__dataclass_params__ = _HitFields.__dataclass_params__  # type: ignore[attr-defined]


#: A ranked list of hits from one arm, best first (TREC/BEIR "run").
Run = list[Hit]

_new_tuple = tuple.__new__
_new_object = object.__new__


def run_of(chunk_ids: Sequence[int], scores: Sequence[float], arm: str) -> Run:
    """Return ``[Hit(c, s, r, arm) for r, (c, s) in enumerate(zip(chunk_ids, scores), 1)]``.

    Equal hits (``tests/test_vector_shortcuts.py``), built without a Python call per hit:
    ``tuple.__new__`` mapped over the zipped fields. For an arm's 100 hits in the peers
    harness's interleaved order (caches cold, 2 shared cores, load 6): 21 against 35 us
    for the frozen dataclass's objects with each slot's setter mapped over them (which
    had taken 0.054 against 0.088 ms for a Python function per hit, and 0.13 ms for
    ``__init__``).

    :param chunk_ids: Python ints, best first. :param scores: Python floats, the same length.
    """
    m = len(chunk_ids)
    return list(map(_new_tuple, repeat(Hit, m),
                    zip(chunk_ids, scores, range(1, m + 1), repeat(arm, m), strict=True)))


@dataclass(frozen=True, slots=True)
class FusedHit:
    """One chunk of a fused answer.

    :param score: fused score (RRF or weighted), higher is better.
    :param rank: 1-based position in the final answer.
    :param contributions: each arm's own :class:`Hit` for this chunk, by arm name.
    :param relevance: how likely the hit answers the query, comparable across queries
        (:class:`~octomem.engine.relevance.Relevance`), set on the final hits.
    """

    chunk: Chunk
    score: float
    rank: int
    contributions: Mapping[str, Hit] = field(default_factory=dict)
    relevance: Any = None


_set_fused = (FusedHit.chunk.__set__, FusedHit.score.__set__,  # type: ignore[attr-defined]
              FusedHit.rank.__set__, FusedHit.contributions.__set__,  # type: ignore[attr-defined]
              FusedHit.relevance.__set__)  # type: ignore[attr-defined]


def fused_hit(chunk: Chunk, score: float, rank: int, contributions: Mapping[str, Hit],
              relevance: Any = None) -> FusedHit:
    """Return ``FusedHit(chunk, score, rank, contributions, relevance)``, an equal object
    made without the frozen dataclass's ``__init__`` (five ``object.__setattr__`` calls),
    each slot set by its own setter: ~0.6x the time, and ~0.2x that of
    ``dataclasses.replace`` for a hit's new rank and relevance (a search makes ~60;
    ``tests/test_vector_shortcuts.py``)."""
    hit = _new_object(FusedHit)
    set_chunk, set_score, set_rank, set_contributions, set_relevance = _set_fused
    set_chunk(hit, chunk)
    set_score(hit, score)
    set_rank(hit, rank)
    set_contributions(hit, contributions)
    set_relevance(hit, relevance)
    return hit


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
    :param chunks_without_vector: stored chunks with no vector of the configured embedder
        (e.g. after switching embedders, until ``octomem reindex``): the semantic arm
        searches the vectors that exist, and these chunks are found by keyword only.
    :param timings_ms: stage name -> wall time in milliseconds.
    """

    hits: list[FusedHit]
    arms_ran: list[str]
    arms_unavailable: dict[str, str]
    semantic_available: bool
    collapsed: list[Collapsed] = field(default_factory=list)
    unembedded_hits: list[int] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    chunks_without_vector: int = 0
