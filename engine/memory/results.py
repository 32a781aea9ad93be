"""JSON-ready models of the memory operations, shared by the MCP tools and ``--json`` output."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ..pipeline import AddReport
from ..relevance import Relevance
from ..types import Chunk, Document
from .duplicates import NearDuplicate
from .forget import ForgetOutcome
from .limits import preview
from .models import ArmContribution, StoredItem
from .readable import shown
from .recall import RecallAnswer, ScopedHit
from .remember import Remembered
from .times import iso_or_none as iso
from .turn_results import (
    BudgetResult,
    ContextItem,
    TurnInfo,
    budget_result,
    context_items,
    turn_info,
)


class ScopedItem(StoredItem):
    """A stored statement or document, its scope, history and usage."""

    scope: str = Field(description="local (this project) or global (every project)")
    event_time: str | None = Field(None, description="when what it says happened, ISO-8601 UTC")
    supersedes: str | None = Field(None, description="id of the statement this one replaced")
    superseded_by: str | None = Field(None, description="id of the statement that replaced it")
    valid_to: str | None = Field(None, description="when it stopped being current (superseded)")
    revision: int = Field(1, description="1, plus one per changed re-ingest")
    recalls: int = Field(0, description="how many recall answers returned it")
    last_recalled_at: str | None = None


def scoped_item(scope: str, doc: Document) -> ScopedItem:
    """Convert a stored document and its scope (a stored time that cannot be shown, left
    by an older octomem, becomes null; ``octomem verify`` finds it)."""
    return ScopedItem(
        id=doc.id, text=doc.text, kind=doc.kind, tags=list(doc.tags), title=doc.title, uri=doc.uri,
        created_at=iso(doc.created_at), scope=scope, event_time=iso(doc.event_time),
        supersedes=doc.supersedes, superseded_by=doc.superseded_by, valid_to=iso(doc.valid_to),
        revision=doc.revision, recalls=doc.recalls, last_recalled_at=iso(doc.last_recalled_at),
    )


class NearDuplicateItem(BaseModel):
    """An existing statement that says nearly the same as the one just stored."""

    id: str
    scope: str
    text: str
    kind: str
    similarity: float = Field(description="cosine similarity of the two statements, up to 1.0")
    created_at: str | None = None


def near_duplicate_item(near: NearDuplicate) -> NearDuplicateItem:
    """Convert a near duplicate."""
    doc = near.document
    return NearDuplicateItem(id=doc.id, scope=near.scope, text=preview(doc.text), kind=doc.kind,
                             similarity=round(near.similarity, 4), created_at=iso(doc.created_at))


class RememberResult(ScopedItem):
    """A statement just stored, what it replaced, and what already says nearly the same."""

    embedded: bool = Field(
        description="its vector was written; when false it is found by its words only")
    semantic_error: str | None = Field(None, description="why no vector was written")
    near_duplicates: list[NearDuplicateItem] = Field(
        default_factory=list,
        description="up to 3 existing statements saying nearly the same; forget or supersede "
        "them if the new one makes them obsolete (the write itself is never refused)")
    replaced: list[ScopedItem] = Field(
        default_factory=list, description="previous handoffs this HANDOFF superseded")
    superseded: ScopedItem | None = Field(
        None, description="the statement `supersedes` named, now superseded (kept as history)")
    already_stored: bool = Field(
        False, description="true: this exact text (same event time, any kind) was already "
        "current in the scope, so nothing new was stored; id and kind are the stored ones")
    message: str | None = Field(
        None, description="when already stored with another kind than asked: how to change "
        "its kind (remember it again with that kind and `supersedes` set to its id)")


def remember_result(out: Remembered) -> RememberResult:
    """Convert what ``remember`` did; its text and the near duplicates' are previews
    (:data:`~.limits.PREVIEW_CHARS`): an answer never echoes a whole long input."""
    stored = out.document
    item = scoped_item(out.scope, stored).model_dump() | {"text": preview(stored.text)}
    return RememberResult(
        **item, embedded=out.embedded,
        semantic_error=out.semantic_error,
        near_duplicates=[near_duplicate_item(n) for n in out.near_duplicates],
        replaced=[scoped_item(out.scope, d) for d in out.replaced],
        superseded=scoped_item(out.scope, out.superseded) if out.superseded else None,
        already_stored=out.already_stored, message=other_kind(out),
    )


def other_kind(out: Remembered, cli: bool = False) -> str | None:
    """Say how to change the kind of a statement ``remember`` found already stored with
    another kind than asked (the MCP arguments, or with ``cli`` the ``octomem add``
    command); ``None`` otherwise."""
    asked, stored, doc_id = out.asked_kind, out.document.kind, out.document.id
    if not out.already_stored or asked is None or asked == stored:
        return None
    how = (f"octomem add TEXT --kind {asked} --supersedes {doc_id}" if cli
           else f"remember it again with kind {asked} and supersedes {doc_id}")
    return f"already stored as {stored}, not {asked}; to make it {asked}: {how}"


class ForgetResult(BaseModel):
    """What ``forget`` removed; or, for an ambiguous text, the statements it matched."""

    forgotten: ScopedItem | None = Field(
        None, description="the statement removed; null when the text matched several")
    reason: str | None = Field(None, description="why, as given; kept in the forget log")
    matches: list[ScopedItem] = Field(
        default_factory=list,
        description="when the text matched several statements: all of them (none was removed; "
        "call forget again with one id)")
    message: str


def forget_result(out: ForgetOutcome) -> ForgetResult:
    """Convert what ``forget`` did."""
    if out.forgotten is None:
        matches = [scoped_item(s, d) for s, d in out.matches]
        listed = ", ".join(f"{m.id} ({m.scope})" for m in matches)
        return ForgetResult(forgotten=None, reason=out.reason, matches=matches, message=(
            f"{len(matches)} statements have this exact text, none was removed; forget one "
            f"by id: {listed}"))
    scope, doc = out.forgotten
    return ForgetResult(forgotten=scoped_item(scope, doc), reason=out.reason,
                        message=f"forgot {doc.id} from the {scope} scope")


class MemoryHit(BaseModel):
    """One hit of a recall answer."""

    id: str = Field(description="document id (to forget, supersede or read octomem://item/{id})")
    scope: str = Field(description="local (this project) or global (every project)")
    chunk_id: int = Field(description="chunk id within its scope")
    rank: int = Field(description="1-based position in the answer")
    score: float = Field(description="fused score x (1 + recency bonus), higher is better")
    relevance: float | None = Field(
        None, description="probability (0..1) that this hit answers the query, comparable "
        "across queries (unlike score)")
    band: str | None = Field(
        None, description="high (>= 0.5), medium (>= retrieval.relevance_floor) or low")
    text: str
    title: str | None = None
    uri: str | None = None
    kind: str
    tags: list[str] = Field(default_factory=list)
    created_at: str | None = Field(None, description="when it was recorded, ISO-8601 UTC")
    event_time: str | None = Field(None, description="when what it says happened")
    current: bool = Field(description="false for a superseded statement or an old revision")
    valid_to: str | None = Field(None, description="when it stopped being current")
    fused_score: float | None = Field(None, description="RRF score before the recency bonus "
                                      "(only with explain)")
    recency_bonus: float | None = Field(None, description="bonus as a fraction of the fused "
                                        "score, at most 0.1 (only with explain)")
    arms: dict[str, ArmContribution] | None = Field(
        None, description="each arm's rank and raw score, scopes merged (only with explain)")
    turn: TurnInfo | None = Field(None, description="for a conversation turn: where it sits")
    context: list[ContextItem] | None = Field(
        None, description="the turns around it in its conversation (recall's context), in order")
    relevance_from: dict[str, float | None] | None = Field(
        None, description="what the relevance was computed from: the hit's cosine to the "
        "query and the share of the query's content words it holds; for a document's hit "
        "also cos_lift (its cosine minus the mean cosine of the query's semantic run) and "
        "kw_z (its keyword score z-scored within the keyword run); for a turn's or "
        "statement's hit, unheard when some of the query's content words are in nothing the "
        "memory holds (each lowers the relevance), assistant_aside 1 for an assistant's "
        "turn asked about the user's own life (lowers it), and reach when the query was "
        "compared with fewer than 100 chunks, a small store (raises it) (only with explain)")


def memory_hit(hit: ScopedHit, explain: bool) -> MemoryHit:
    """Convert one recall hit; with ``explain``, the fused score, bonus and arms."""
    c, rel = hit.chunk, hit.relevance
    arms = ({a: ArmContribution(rank=h.rank, score=h.score) for a, h in hit.contributions.items()}
            if explain else None)
    return MemoryHit(
        id=c.document_id, scope=hit.scope, chunk_id=c.id, rank=hit.rank, score=hit.score,
        text=c.text, title=c.title, uri=c.uri, kind=c.kind, tags=list(c.tags),
        created_at=iso(c.created_at),
        event_time=iso(c.valid_from) if c.valid_from != c.created_at else None,
        current=c.valid_to is None, valid_to=iso(c.valid_to),
        fused_score=hit.fused_score if explain else None,
        recency_bonus=round(hit.recency, 6) if explain else None, arms=arms,
        turn=turn_info(c),
        relevance=round(rel.probability, 4) if rel else None, band=rel.band if rel else None,
        relevance_from=_relevance_from(rel) if explain and rel else None,
    )


def _relevance_from(rel: Relevance) -> dict[str, float | None]:
    """The inputs of ``rel`` (a document's hit adds ``cos_lift`` and ``kw_z``; ``unheard``
    when the query has words the memory never mentions; ``assistant_aside`` for an
    assistant's turn asked about the user's own life; ``reach`` when it was asked of a
    small store)."""
    out: dict[str, float | None] = {"cos": None if rel.cos is None else round(rel.cos, 4),
                                    "coverage": round(rel.coverage, 4)}
    if rel.unheard:
        out["unheard"] = rel.unheard
    if rel.aside:
        out["assistant_aside"] = 1.0
    if rel.reach is not None:
        out["reach"] = rel.reach
    if rel.kw_z is not None:
        out["cos_lift"] = None if rel.cos_lift is None else round(rel.cos_lift, 4)
        out["kw_z"] = round(rel.kw_z, 4)
    return out


class MemoryCollapsed(BaseModel):
    """A hit that dedup removed from the answer, and why."""

    id: str
    scope: str
    kept_id: str
    kept_scope: str
    reason: str = Field(description='"identical text" or "cosine 0.991 >= 0.99"')


class MemoryRecallResult(BaseModel):
    """A recall across scopes and how it was made."""

    query: str
    scopes: list[str] = Field(description="the scopes searched (a missing local scope is skipped)")
    hits: list[MemoryHit]
    arms_ran: list[str]
    arms_unavailable: dict[str, str] = Field(description="arm (scope) -> why it did not run")
    scopes_unavailable: dict[str, str] = Field(
        default_factory=dict, description="scope -> why it was not searched: its store "
        "cannot be read (the file is named; it was left as it is); the hits come from the "
        "other scope")
    semantic_available: bool
    collapsed: list[MemoryCollapsed] = Field(default_factory=list)
    unembedded_hits: list[str] = Field(
        default_factory=list, description="ids of hits found by words only (no vector yet)")
    chunks_without_vector: int = Field(0, description="stored chunks found by words only")
    timings_ms: dict[str, float] = Field(
        default_factory=dict, description="milliseconds by step: load_model (loading the "
        "embedding model, only when this answer loaded it), embed_query (the query's own "
        "embedding), each arm's search by scope, total")
    budget: BudgetResult | None = Field(
        None, description="with max_tokens: tokens used and the hits cut to fit")
    warnings: list[str] = Field(
        default_factory=list, description="hits left out because a stored value cannot be "
        "shown (`octomem verify --repair` fixes them)")
    abstained: str | None = Field(
        None, description="why there are no hits although something was searched: nothing "
        "stored reached retrieval.relevance_floor (the memory holds no answer)")
    nothing_to_rank: str | None = Field(
        None, description="why there are no hits although the memory did not abstain: the "
        "scopes searched hold nothing, or nothing stored passes the filters (a kind or tag "
        "no document has, no current statement from the since/until window, nothing valid "
        "yet at as_of), named")
    weak_left_out: int = Field(
        0, description="hits left out as noise: relevance below retrieval.relevance_floor "
        "and below retrieval.relative_floor times the best hit's")
    best_rejected: MemoryHit | None = Field(
        None, description="when abstained (only with explain): the best match, not "
        "returned because its relevance is below its floor (retrieval.relevance_floor, or "
        "retrieval.document_relevance_floor for a document's hit); its rank is "
        "its place before abstaining, its arms and relevance_from say why it scored low")


def recall_result(query: str, answer: RecallAnswer, explain: bool = False) -> MemoryRecallResult:
    """Convert a :class:`~octomem.engine.memory.recall.RecallAnswer` (a
    :class:`~.context.ShapedAnswer`'s context turns and budget included)."""
    by_key = {(h.scope, h.chunk.id): h.chunk.document_id for h in answer.hits}
    hits = [memory_hit(h, explain) for h in answer.hits]
    around = getattr(answer, "context", {})
    for hit, model in zip(answer.hits, hits, strict=True):
        if (hit.scope, hit.chunk.id) in around:
            model.context = context_items(around[(hit.scope, hit.chunk.id)])
    return MemoryRecallResult(
        query=preview(query), scopes=answer.scopes, hits=hits,
        budget=budget_result(getattr(answer, "budget", None)),
        arms_ran=answer.arms_ran, arms_unavailable=answer.arms_unavailable,
        scopes_unavailable=getattr(answer, "scopes_unavailable", {}),
        semantic_available=answer.semantic_available,
        collapsed=[MemoryCollapsed(id=c.chunk.document_id, scope=c.scope,
                                   kept_id=c.kept_chunk.document_id, kept_scope=c.kept_scope,
                                   reason=c.reason) for c in answer.collapsed],
        unembedded_hits=[by_key[k] for k in answer.unembedded_hits if k in by_key],
        chunks_without_vector=answer.chunks_without_vector,
        timings_ms={k: round(v, 3) for k, v in answer.timings_ms.items()},
        warnings=answer.warnings,
        abstained=answer.abstained,
        nothing_to_rank=answer.nothing_to_rank,
        weak_left_out=answer.weak_left_out,
        best_rejected=(memory_hit(answer.best_rejected, True)
                       if explain and answer.best_rejected is not None else None),
    )


class GoneFileItem(BaseModel):
    """A file an ingested folder no longer holds."""

    id: str = Field(description="its document's id")
    path: str = Field(description="where the file was")


class SkippedFileItem(BaseModel):
    """A file inside an ingested folder that could not be read; nothing of it is stored."""

    path: str
    why: str = Field(description="the error, naming the file (and line)")


class IngestResult(BaseModel):
    """What an ingest did."""

    scope: str
    added: list[str] = Field(default_factory=list, description="ids of new documents")
    revised: list[str] = Field(
        default_factory=list, description="ids whose content changed: stored as a new revision")
    unchanged: list[str] = Field(default_factory=list, description="ids re-ingested identically")
    chunks: int = Field(description="chunks stored by this call")
    embedded: int = Field(description="chunks embedded by this call")
    embedded_earlier: int = Field(
        0, description="of those, chunks of unchanged documents that an earlier ingest "
        "(killed, or its embedder failing) left without a vector")
    semantic_error: str | None = None
    missing: list[GoneFileItem] = Field(
        default_factory=list, description="files the ingested folder held before and no "
        "longer does, and turns an ingested transcript held before and no longer does "
        "(path: the transcript)")
    forgotten: list[GoneFileItem] = Field(
        default_factory=list, description="of those, the ones forgotten (setting "
        "ingest.on_missing, default forget; the forget log keeps the reason)")
    skipped: list[SkippedFileItem] = Field(
        default_factory=list, description="files inside the folder that could not be read "
        "(a malformed transcript line, not UTF-8, too large): left out; the rest was stored")
    forgotten_not_readded: list[str] = Field(
        default_factory=list, description="ids read again that are in the scope's forget "
        "log: not added again (a forgotten document or turn never comes back)")
    unfinished: list[str] = Field(
        default_factory=list, description="transcripts whose last line was still being "
        "written (no newline at its end, not JSON): that line left out, read next time")
    empty_lines: list[str] = Field(
        default_factory=list, description="chat transcripts with lines whose text is empty "
        "or null (a tool-only message): those lines left out, counted and named per file")


def ingest_result(scope: str, report: AddReport) -> IngestResult:
    """Convert an ingest's :class:`~octomem.engine.pipeline.AddReport` (a
    :class:`~.folders.IngestReport`'s missing and forgotten files included)."""
    def gone(name: str) -> list[GoneFileItem]:
        return [GoneFileItem(id=g.id, path=g.path) for g in getattr(report, name, ())]

    return IngestResult(scope=scope, added=report.added, revised=report.replaced,
                        unchanged=report.unchanged, chunks=report.chunks,
                        embedded=report.embedded,
                        embedded_earlier=len(report.resumed) if report.embedded else 0,
                        semantic_error=report.semantic_error,
                        missing=gone("missing"), forgotten=gone("forgotten"),
                        skipped=[SkippedFileItem(path=shown(path), why=why)
                                 for path, why in getattr(report, "skipped", ())],
                        forgotten_not_readded=list(getattr(report, "skipped_forgotten", ())),
                        unfinished=list(getattr(report, "unfinished", ())),
                        empty_lines=list(getattr(report, "empty_lines", ())))


class ChunkItem(BaseModel):
    """One stored chunk of a document, with its validity."""

    chunk_id: int
    ordinal: int
    revision: int
    text: str
    valid_from: str | None = None
    valid_to: str | None = Field(None, description="when this chunk stopped being current")


def chunk_item(chunk: Chunk) -> ChunkItem:
    """Convert a chunk."""
    return ChunkItem(chunk_id=chunk.id, ordinal=chunk.ordinal, revision=chunk.revision,
                     text=chunk.text, valid_from=iso(chunk.valid_from),
                     valid_to=iso(chunk.valid_to))


class ItemResult(ScopedItem):
    """One stored statement or document with its provenance and chunks."""

    store: str = Field(description="the scope directory that holds it")
    chunks: list[ChunkItem] = Field(
        default_factory=list, description="its chunks, every revision, in order")
    chunk: ChunkItem | None = Field(None, description="the chunk that was asked for, if one was")
    version: str | None = Field(
        None, description="fingerprint of its content and history state; a write that names "
        "it is refused once the item has changed")
