"""The memory facade: remember, recall, forget and ingest over the ``local`` and ``global`` scopes.

Every front end (MCP server, CLI) opens one :class:`Memory` and calls it; it holds one
pipeline per scope (:mod:`.scopes`). Writes go to one scope (``local`` unless told
otherwise); recall searches both by default (:mod:`.recall`); forget looks in both.

Writes follow the pipeline's rule: the embedding is computed before the write
transaction and stored in a second short one, so a model never runs while a scope's
write lock is held (one statement: :mod:`.remember`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..arms import VersionedStorage
from ..controls import searchable
from ..errors import InvalidQueryError, OctomemError, StoreUnreadableError
from ..files import exposed
from ..manager import ArmRegistry, load_registry
from ..settings import LimitsSettings, LoadedSettings, load_settings
from ..stopping import StopRequest
from ..types import Document, Filters
from .context import ShapedAnswer, check_shape, shape
from .duplicates import NearDuplicate, near_duplicates
from .empty import (
    filtered_out,
    has_superseded,
    not_together,
    say_not_yet_true,
    say_superseded_match,
    say_why_empty,
)
from .folders import IngestReport, folder_named, reconcile
from .forget import ForgetOutcome, forget
from .forget_path import forget_documents, stored_from
from .health import configured, model_error, relevance_basis, words_only_warning
from .ingest import ingest_groups
from .ingest_writes import store_groups
from .limits import check_filter, check_length, check_tags, check_top_k, tag_labels
from .moved import forget_moved
from .own_turns import turn_owner
from .recall import Per, RecallAnswer, RecallRequest, is_answer, recall_scopes
from .recall_log import RecallLog
from .remember import Remembered, check_kind, remember
from .scopes import SCOPES, ScopeName, ScopeSet, check_scope, memory_knobs, scope_roots
from .showable import without_unshowable
from .sources import IngestFormat
from .times import as_of_instant, parse_time

if TYPE_CHECKING:  # numpy arrives with the embedder, not at import (MCP start-up)
    import numpy as np

__all__ = ["ForgetOutcome", "Memory", "NearDuplicate", "Remembered"]


class Memory:
    """Both scopes of one project's memory.

    :param project_root: the project whose ``.octomem/`` is the local scope (default: cwd).
    :param global_root: the global scope's directory (default: setting ``global_root``,
        else ``data_dir``).
    :raises OctomemError: unknown or incompatible arms in the settings.
    """

    def __init__(
        self, loaded: LoadedSettings, registry: ArmRegistry, project_root: Path | None = None,
        global_root: Path | None = None,
    ) -> None:
        self.loaded = loaded
        self.settings = loaded.settings
        self.knobs = memory_knobs(loaded.settings)
        self.limits: LimitsSettings = getattr(loaded.settings, "limits", LimitsSettings())
        self.on_missing = getattr(getattr(loaded.settings, "ingest", None), "on_missing", "forget")
        self.roots = scope_roots(loaded.settings, project_root, global_root)
        self.scopes = ScopeSet(loaded, registry, self.roots)
        self.recall_log = RecallLog(self._storage_of)

    def _storage_of(self, scope: str) -> Any:
        pipeline = self.scopes.get(scope)  # type: ignore[arg-type]
        return None if pipeline is None else pipeline.arms.storage

    # ---- helpers ------------------------------------------------------------------

    def _scopes(self, scope: str | None) -> tuple[ScopeName, ...]:
        chosen = check_scope(scope)
        return SCOPES if chosen is None else (chosen,)

    def find(self, document_id: str, scope: str | None = None) -> list[tuple[ScopeName, Document]]:
        """Return every ``(scope, document)`` with this id (normally one at most)."""
        self.recall_log.flush()  # its recall count as of now
        return [(s, d) for s, p in self.scopes.existing(self._scopes(scope))
                if (d := p.arms.storage.get_document(document_id)) is not None]

    def near_duplicates(self, text: str, vector: np.ndarray | None,
                        exclude: Sequence[str] = ()) -> list[NearDuplicate]:
        """Return up to :data:`~.duplicates.MAX_NEAR_DUPLICATES` current statements of
        both scopes saying nearly ``text`` (see :func:`.duplicates.near_duplicates`)."""
        return near_duplicates(self.scopes.existing(), text, vector,
                               self.knobs.duplicate_threshold, exclude)

    # ---- remember, recall, forget, ingest ------------------------------------------

    def remember(
        self, text: str, scope: str | None = None, kind: str | None = None,
        tags: Sequence[str] = (), event_time: str | float | None = None,
        supersedes: str | None = None, expect_version: str | None = None,
    ) -> Remembered:
        """Append one statement to a scope (``local`` by default) and embed it; see
        :func:`.remember.remember`.

        :raises InvalidQueryError: empty text, a bad kind, time or scope, or an unknown,
            other-scope or already superseded ``supersedes`` id; the message names it.
        :raises StaleVersionError: ``supersedes`` changed since the caller read it.
        """
        return remember(self, text, scope, kind, tags, event_time, supersedes, expect_version)

    def recall(
        self, query: str, scope: str | None = None, top_k: int | None = None,
        kinds: Sequence[str] = (), tags: Sequence[str] = (), since: str | float | None = None,
        until: str | float | None = None, as_of: str | float | None = None,
        include_superseded: bool = False, per: Per = "chunk", count: bool = True,
        context: int = 0, max_tokens: int | None = None,
    ) -> ShapedAnswer:
        """Search both scopes (or one) and rank every hit on one scale; see :mod:`.recall`.

        :param since: keep statements valid from this time on (ISO-8601; a date: its start).
        :param until: keep statements valid from before this time (a date: its end).
        :param as_of: answer with what was current then (a date: at its end); includes
            statements superseded since, never forgotten ones.
        :param count: add one to ``recalls`` of every returned statement that answers
            (relevance at or above the floor; written after the answer, off its path:
            :mod:`.recall_log`).
        :param context: turns on each side a conversation hit brings along, 0 to
            :data:`~.context.MAX_CONTEXT`.
        :param max_tokens: pack the best hits into this many estimated tokens and report
            what was cut (:mod:`.context`); ``None``: no budget.
        :returns: the answer; one with no hits says why, in ``abstained`` (nothing reached
            its floor) or ``nothing_to_rank`` (nothing stored passes the filters:
            :mod:`.empty`).
        :raises InvalidQueryError: a bad argument, named (``until`` not after ``since`` too).
        """
        check_length(len(query), self.limits.query_chars, "query", "limits.query_chars",
                     write=False)
        if isinstance(query, str):  # composed and decomposed forms rank alike (trial 14 F10)
            query = unicodedata.normalize("NFC", searchable(query))
        top_k = check_top_k(top_k, self.limits.top_k)
        if per not in ("chunk", "document"):
            raise InvalidQueryError(f"per: must be 'chunk' or 'document', got {per!r}")
        check_shape(context, max_tokens)
        after, before = parse_time(since, "since"), parse_time(until, "until", "end")
        if after is not None and before is not None and before <= after:
            raise InvalidQueryError(f"until: {until!r} ends before since ({since!r}) starts: "
                                    "no time is in both")
        check_filter(kinds, self.limits, "kinds")
        labels = tuple(tag_labels(tags, "tags"))  # an empty tag refused, as the tools do
        check_filter(labels, self.limits, "tags")
        filters = Filters(
            kinds=tuple(check_kind(k, "kinds") for k in kinds), tags=labels,
            valid_after=after, valid_before=before,
            as_of=as_of_instant(as_of), include_superseded=include_superseded,
        )
        request = RecallRequest(query, self.settings.retrieval.top_k if top_k is None else top_k,
                                filters, per, False)
        wanted = self._scopes(scope)
        scoped = self.scopes.existing(wanted)
        decided = filtered_out(scoped, filters)  # the filter alone: nothing to search
        try:
            found = RecallAnswer(hits=[], scopes=[s for s, _ in scoped]) if decided \
                else recall_scopes(scoped, request, self.knobs)
        except OctomemError:
            raise
        except Exception as exc:  # a store damaged where opening it did not look
            damaged = [e for s, p in scoped if (e := self.scopes.damaged(s, p)) is not None]
            if not damaged:
                raise
            if len(wanted) == 1:
                raise damaged[0] from exc
            scoped = self.scopes.existing(wanted)
            found = recall_scopes(scoped, request, self.knobs)
        found.scopes_unavailable = self.scopes.skipped(wanted)
        answer = shape(without_unshowable(found), {s: p.arms.storage for s, p in scoped},
                       context, max_tokens)
        if not answer.arms_ran:  # nothing was searched (no store, or the filter decides)
            answer.semantic_available = self._semantic_configured(scoped)
        if not answer.hits:
            say_why_empty(self, scope, filters, answer)
            if decided and answer.nothing_to_rank is None:  # each is stored, not together
                answer.nothing_to_rank = not_together(filters)
            if not decided and not filters.include_superseded and filters.as_of is None \
                    and has_superseded(scoped):  # does only history match?
                history = replace(request, filters=replace(filters, include_superseded=True))
                say_superseded_match(answer, recall_scopes(scoped, history, self.knobs))
            if answer.abstained and filters.as_of is not None:  # was it true only later?
                timeless = replace(request, filters=replace(filters, as_of=None))
                say_not_yet_true(answer, recall_scopes(scoped, timeless, self.knobs),
                                 filters.as_of)
        if (words_only := words_only_warning(answer, scoped)) is not None:
            answer.warnings.append(words_only)
        if count:
            for name in answer.scopes:
                self.recall_log.record(name, [h.chunk.document_id for h in answer.hits
                                              if h.scope == name and is_answer(h)])
        return answer

    def forget(self, text_or_id: str, scope: str | None = None, reason: str | None = None,
               expect_version: str | None = None) -> ForgetOutcome:
        """Forget one statement by id or exact text; see :func:`.forget.forget`.

        :raises StoreUnreadableError: a scope it looks in cannot be read (nothing is
            forgotten: the statement could be there too); the message names the other scope.
        """
        wanted = self._scopes(scope)
        scoped = self.scopes.existing(wanted)
        for name, why in self.scopes.skipped(wanted).items():
            other = next(s for s in SCOPES if s != name)
            raise StoreUnreadableError(f"{why}; forget looks in both scopes, so nothing was "
                                       f"forgotten: name the {other} scope to forget there only")
        return forget(scoped, text_or_id, reason, expect_version)

    def forget_path(self, path: Path, scope: str | None = None,
                    reason: str | None = None) -> tuple[ScopeName, list[Document],
                                                        dict[Path, int]] | None:
        """Forget everything ingested from ``path`` (absolute; it need not exist any
        more): a file's document, a transcript's turns, every file and turn below a
        folder (turns of a transcript gone from it are kept and counted: they may be a
        moved copy's); in the one scope that holds them (both unless ``scope``), each as
        ``forget`` of its id would: its tombstone keeps it out of a later ingest (trial 16
        F19, trial 17 G9; :mod:`.forget_path`). One transaction.

        :returns: the scope, the documents forgotten and the turns kept per transcript
            (:attr:`.forget_path.FromPath.kept`), or ``None``: no scope holds any.
        :raises OctomemError: both scopes hold some (name one).
        :raises StoreUnreadableError: a scope it looks in cannot be read.
        """
        wanted = self._scopes(scope)
        if skipped := self.scopes.skipped(wanted):
            raise StoreUnreadableError(f"{next(iter(skipped.values()))}; nothing was forgotten")
        found = stored_from(self.scopes.existing(wanted), path)
        if not found:
            return None
        if len(found) > 1:
            raise OctomemError(f"both the local and the global scope hold documents read from "
                               f"{path}; nothing was forgotten: name one with --scope local or "
                               "--scope global (MCP: scope)")
        one = found[0]
        return one.scope, forget_documents(one.pipeline, one.ids, reason), one.kept

    def ingest(
        self, path_or_text: str, scope: str | None = None, title: str | None = None,
        uri: str | None = None, tags: Sequence[str] = (), fmt: IngestFormat = "auto",
        confine: bool = False, readd: bool = False, stop: StopRequest | None = None,
    ) -> tuple[ScopeName, IngestReport]:
        """Ingest files, transcripts, a folder or a text into a scope (``local`` by default).

        Identical content is a no-op; changed content becomes the document's next revision
        (the old chunks stay, superseded). A folder ingested again reports the files it no
        longer holds and forgets them unless ``ingest.on_missing = "keep"``
        (:mod:`.folders`). Every file is read before anything is stored;
        each transcript is stored in one transaction. What a deliberate ``forget`` keeps
        out (a forgotten file by its id, a forgotten turn by its text: :mod:`.tombstones`)
        is not added again (``report.skipped_forgotten``, ``report.left_out``); with
        ``readd`` it is, and its tombstone lifted. A scope without a store gets
        one only when something is to be stored. See :mod:`.ingest`.

        :param fmt: how ``.jsonl`` files are read (:data:`~.sources.IngestFormat`).
        :param confine: read only paths inside the project root and the setting
            ``ingest.allowed_roots`` (the MCP tool; the CLI reads any path).
        :param stop: once requested, embedding stops before its next batch and no further
            transcript is stored, nor a gone file forgotten (``report.not_stored``).
        :raises OctomemError: an unreadable path, a malformed transcript line or empty
            text, named (in a folder such a file is skipped: ``report.skipped``).
        """
        target = check_scope(scope) or "local"
        allowed = getattr(self.settings, "ingest", None)
        roots = [self.roots.project, *(allowed.allowed_roots if allowed else ())] \
            if confine else None
        report = IngestReport()  # a folder's unreadable files: report.skipped
        tags = check_tags(tags, self.limits)
        groups = ingest_groups(path_or_text, self.roots.project, title, uri, tags, fmt,
                               roots, self.limits.file_bytes, report.skipped,
                               turn_owner(self._storage_of(target)), report.unfinished,
                               report.empty_lines, self.limits, report.messages_left_out)
        made = not self.scopes.created(target)
        if not any(groups) and made:
            return target, report  # nothing to store (a folder's files all skipped): no store
        pipeline = self.scopes.require(target, create=True)
        try:
            files = store_groups(target, pipeline, groups, report, readd, self.on_missing, stop)
        except BaseException:  # e.g. a full disk: a store left holding nothing goes (K3)
            if made:
                self.scopes.discard_if_empty(target)
            raise
        folder = folder_named(path_or_text, self.roots.project)
        if folder is not None and not (stop and stop.requested):  # files it no longer holds
            reconcile(target, pipeline, folder, self.on_missing, report, self.roots.project)
        if files and not (stop and stop.requested):  # files moved here: one document each
            report.moved_files += forget_moved(target, pipeline, *files)
        return target, report

    # ---- reading what is stored -----------------------------------------------------

    def statements(self, scope: str, include_superseded: bool = False) -> list[Document]:
        """Return the scope's statements, newest first (current ones unless asked)."""
        self.recall_log.flush()
        pipeline = self.scopes.get(check_scope(scope) or "local")
        if pipeline is None:
            return []
        storage = pipeline.arms.storage
        if isinstance(storage, VersionedStorage):
            return list(storage.iter_documents(include_superseded=include_superseded))
        docs = {c.document_id for c in storage.iter_chunks()}
        found = [d for d in map(storage.get_document, docs) if d is not None]
        return sorted(found, key=lambda d: -d.created_at)

    def _semantic_configured(self, scoped: Sequence[tuple[str, Any]]) -> bool:
        """Whether semantic search would run, as ``status`` says it (trial 14 F13: an
        answer that searched nothing said ``semantic_available: false`` beside a ready
        model): a scope's pipeline with a semantic arm and no model error, else the
        settings' arms (no store yet, or none readable; nothing is built or loaded)."""
        if scoped:
            return any(p.arms.semantic is not None and not p.semantic_error for _, p in scoped)
        pipeline = self.settings.pipeline
        return bool(pipeline.semantic and pipeline.embedder)

    def status(self, load_model: bool = False) -> dict[str, Any]:
        """Return each scope's root and counts, and ``permissions_warning`` when readable
        by others, and ``relevance``: what a hit's relevance is judged from with the scope's
        embedder (:func:`.health.relevance_basis`). A scope without a store (asking creates
        none) has ``exists`` false, the arms and model as configured and ``not_created``
        saying that the first write creates it (:func:`.health.configured`). A scope whose
        store cannot be read has ``unreadable``: why, naming its file and what to do.

        :param load_model: load the embedding model, so ``semantic_available`` says whether
            it loads (not only whether one is configured).
        """
        scopes: dict[str, Any] = {}
        as_configured: dict[str, Any] | None = None
        for scope in SCOPES:
            pipeline = None
            try:
                pipeline = self.scopes.get(scope) if self.scopes.created(scope) else None
                info = None if pipeline is None else {"exists": True, **pipeline.status()}
                history = getattr(pipeline.arms.storage, "history_counts", None) \
                    if pipeline is not None else None
                if info is not None and callable(history):
                    info.update(history())
            except Exception as exc:  # a store damaged where opening it did not look
                damaged = exc if isinstance(exc, StoreUnreadableError) else \
                    None if pipeline is None else self.scopes.damaged(scope, pipeline)
                if damaged is None:
                    raise
                scopes[scope] = {"root": str(self.roots.of(scope)), "exists": True,
                                 "unreadable": str(damaged)}
                continue
            if pipeline is None or info is None:  # not created by asking: the first write
                as_configured = as_configured or configured(self.scopes, load_model)
                scopes[scope] = {"root": str(self.roots.of(scope)), "exists": False,
                                 **as_configured}
                continue
            info["permissions_warning"] = exposed(self.roots.of(scope))
            if load_model and (why := model_error(pipeline)) is not None:
                info.update(semantic_available=False, semantic_error=why)
            info["relevance"] = relevance_basis(info)
            scopes[scope] = info
        return {"project_root": str(self.roots.project), "scopes": scopes}

    def close(self) -> None:
        """Write the queued recall counts, then close both scopes."""
        self.recall_log.close()
        self.scopes.close()


def open_memory(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    project_root: Path | None = None,
    global_root: Path | None = None,
) -> Memory:
    """Read settings (the project's config layer included), load plugins, open both scopes.

    :param project_root: the project whose ``.octomem/`` is the local scope (default: cwd).
    :param global_root: the global scope's directory (default: setting ``global_root``,
        else ``data_dir``).
    :raises OctomemError: bad settings, missing or incompatible arms, plugin failures.
    """
    loaded = load_settings(config_file, overrides, project_root=project_root)
    return Memory(loaded, load_registry(), project_root, global_root)
