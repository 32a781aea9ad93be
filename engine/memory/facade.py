"""The memory facade: remember, recall, forget and ingest over the ``local`` and ``global`` scopes.

Every front end (MCP server, CLI) opens one :class:`Memory` and calls it; it holds one
pipeline per scope (:mod:`.scopes`). Writes go to one scope (``local`` unless told
otherwise); recall searches both by default (:mod:`.recall`); forget looks in both.

Writes follow the pipeline's rule: the embedding is computed before the write
transaction and stored in a second short one, so a model never runs while a scope's
write lock is held.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..arms import VersionedStorage
from ..errors import (
    EmbedderMismatchError,
    EmbedderUnavailableError,
    InvalidQueryError,
    StaleVersionError,
    StoreBusyError,
)
from ..files import exposed
from ..manager import ArmRegistry, load_registry
from ..pipeline import AddReport, Pipeline, embedding_text
from ..settings import LimitsSettings, LoadedSettings, load_settings
from ..turns import TURN_KIND
from ..types import DEFAULT_KIND, HANDOFF_KIND, Document, Filters
from .context import ShapedAnswer, check_shape, shape
from .duplicates import NearDuplicate, has_vectors, identical, near_duplicates
from .folders import IngestReport, folder_named, reconcile
from .forget import ForgetOutcome, drop_forgotten, forget
from .health import model_error
from .ingest import ingest_groups, merge_reports
from .limits import check_length
from .recall import Per, RecallRequest, is_answer, recall_scopes
from .recall_log import RecallLog
from .scopes import SCOPES, ScopeName, ScopeSet, check_scope, memory_knobs, scope_roots
from .showable import without_unshowable
from .sources import IngestFormat
from .times import as_of_instant, parse_time
from .transcripts import turn_owner
from .versions import check_version

if TYPE_CHECKING:  # numpy arrives with the embedder, not at import (MCP start-up)
    import numpy as np

__all__ = ["ForgetOutcome", "Memory", "NearDuplicate", "Remembered"]

#: A kind is one word: a letter, then letters, digits or underscores (64 at most), stored
#: in capitals (``fact`` is stored as ``FACT``).
KIND_INPUT_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"


def check_kind(kind: str, argument: str = "kind") -> str:
    """Return ``kind`` in capitals if it is one word (``fact`` -> ``FACT``).

    :raises InvalidQueryError: naming ``argument``, when ``kind`` is not one word of
        letters, digits and ``_`` starting with a letter (64 at most).
    """
    if not isinstance(kind, str) or not re.fullmatch(KIND_INPUT_PATTERN, kind):
        raise InvalidQueryError(
            f"{argument}: must be one word (letters, digits, _), e.g. FACT; "
            f"got {kind!r:.80}"
        )
    return kind.upper()


@dataclass(slots=True)
class Remembered:
    """What ``remember`` stored and what the agent should know about it.

    :param replaced: the previous handoffs this ``HANDOFF`` superseded.
    :param superseded: the statement ``supersedes`` named, now marked superseded.
    :param already_stored: ``document`` is an identical current statement of the scope
        stored before (:func:`.duplicates.identical`): nothing new was stored.
    :param asked_kind: the kind ``remember`` was given (``document.kind`` is the stored one).
    """

    scope: ScopeName
    document: Document
    embedded: bool
    semantic_error: str | None = None
    near_duplicates: list[NearDuplicate] = field(default_factory=list)
    replaced: list[Document] = field(default_factory=list)
    superseded: Document | None = None
    already_stored: bool = False
    asked_kind: str | None = None


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

    def _versioned(self, pipeline: Pipeline) -> Any:
        storage = pipeline.arms.storage
        if not isinstance(storage, VersionedStorage):
            raise InvalidQueryError(
                f"storage {storage.name!r} keeps no statement history, so supersedes and "
                "HANDOFF cannot be recorded; use a storage such as 'sqlite'"
            )
        return storage

    def _embed(self, pipeline: Pipeline, text: str) -> tuple[np.ndarray | None, str | None]:
        """Embed one statement outside any transaction: ``(vector, why not)``."""
        if pipeline.arms.semantic is None or pipeline.arms.embedder is None:
            return None, None
        if pipeline.semantic_error:
            return None, pipeline.semantic_error
        try:
            return pipeline.arms.embedder.embed_documents([text])[0], None
        except (EmbedderUnavailableError, EmbedderMismatchError) as exc:
            return None, str(exc)

    def near_duplicates(self, text: str, vector: np.ndarray | None,
                        exclude: Sequence[str] = ()) -> list[NearDuplicate]:
        """Return up to :data:`~.duplicates.MAX_NEAR_DUPLICATES` current statements of
        both scopes saying nearly ``text`` (see :func:`.duplicates.near_duplicates`)."""
        return near_duplicates(self.scopes.existing(), text, vector,
                               self.knobs.duplicate_threshold, exclude)

    def _target(
        self, scope: str | None, supersedes: str | None, expect_version: str | None = None
    ) -> tuple[ScopeName, Document | None]:
        """Pick the scope to write to and the statement ``supersedes`` names (checked
        against ``expect_version`` first, when given)."""
        chosen = check_scope(scope)
        if supersedes is None:
            return chosen or "local", None
        matches = self.find(supersedes)
        if expect_version is not None and not matches:
            raise StaleVersionError(
                f"{supersedes!r} was forgotten after it was read; nothing was changed")
        if expect_version is not None:
            check_version(self.scopes.require(matches[0][0]).arms.storage, supersedes,
                          expect_version)
        if not matches:
            gone = [p.arms.storage.get_forgotten(supersedes) for _, p in self.scopes.existing()
                    if isinstance(p.arms.storage, VersionedStorage)]
            why = " (it was forgotten)" if any(gone) else ""
            raise InvalidQueryError(f"supersedes: no statement has the id {supersedes!r}{why}")
        old_scope, old = matches[0]
        if chosen is not None and chosen != old_scope:
            raise InvalidQueryError(
                f"supersedes: {supersedes!r} is in the {old_scope} scope; a statement supersedes "
                f"one of its own scope, so remember it with scope={old_scope!r}"
            )
        if not old.is_current:
            raise InvalidQueryError(
                f"supersedes: {supersedes!r} is already superseded by {old.superseded_by!r}; "
                "supersede the current statement instead"
            )
        return old_scope, old

    # ---- remember -----------------------------------------------------------------

    def remember(
        self, text: str, scope: str | None = None, kind: str = DEFAULT_KIND,
        tags: Sequence[str] = (), event_time: str | float | None = None,
        supersedes: str | None = None, expect_version: str | None = None,
    ) -> Remembered:
        """Append one statement to a scope (``local`` by default) and embed it.

        ``HANDOFF`` statements supersede the scope's previous handoff. ``supersedes``
        marks an older statement superseded (kept, linked both ways); the new statement
        goes to that statement's scope unless ``scope`` says otherwise (then: error).
        A text identical to a current statement of the target scope (same event time, any
        kind) is not stored again: the answer is that statement, with
        ``already_stored`` (unless ``supersedes`` is given). The write is never refused
        for a near duplicate; those are reported.

        :param event_time: when what it says happened (ISO-8601 date or time).
        :param expect_version: the version of ``supersedes`` the caller read; checked
            inside the write transaction.
        :raises InvalidQueryError: empty text, a bad kind, time or scope, or an unknown,
            other-scope or already superseded ``supersedes`` id; the message names it.
        :raises StaleVersionError: ``supersedes`` changed since the caller read it.
        """
        if not isinstance(text, str) or not text.strip():
            raise InvalidQueryError("text: empty; give the statement to remember")
        text = text.strip()
        check_length(len(text), self.limits.remember_chars, "text", "limits.remember_chars",
                     hint="; a text this long is a document: ingest it")
        kind = check_kind(kind)
        target, old = self._target(scope, supersedes, expect_version)
        tags = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))
        document = Document(text=text, kind=kind, tags=tags,
                            event_time=parse_time(event_time, "event_time"), supersedes=supersedes)
        pipeline = self.scopes.require(target, create=True)
        if old is None and (same := identical(pipeline.arms.storage, document)) is not None:
            return Remembered(target, same, has_vectors(pipeline, same), already_stored=True,
                              asked_kind=kind)
        vector, semantic_error = self._embed(pipeline, embedding_text_of(document))
        near = [] if kind == HANDOFF_KIND else self.near_duplicates(
            text, vector, exclude=(supersedes,) if supersedes else ())
        out = Remembered(target, document, False, semantic_error, near, asked_kind=kind)
        report = self._write(pipeline, document, old, out, expect_version)
        out.embedded = self._store_vector(pipeline, report, vector, out)
        return out

    def _write(self, pipeline: Pipeline, document: Document, old: Document | None,
               out: Remembered, expect_version: str | None = None) -> AddReport:
        """Supersede, replace the handoff and append, in one write transaction."""
        storage = pipeline.arms.storage
        needs_history = old is not None or document.kind == HANDOFF_KIND
        versioned = self._versioned(pipeline) if needs_history else storage
        with storage.transaction() as tx:
            if old is None and (same := identical(storage, document)) is not None:
                out.document, out.already_stored, out.near_duplicates = same, True, []
                return AddReport()  # stored meanwhile by another writer
            if old is not None:
                if expect_version is not None:
                    check_version(storage, old.id, expect_version)
                current = storage.get_document(old.id)  # re-read under the write lock
                if current is None or not current.is_current:
                    raise InvalidQueryError(
                        f"supersedes: {old.id!r} was superseded or forgotten meanwhile")
                versioned.supersede(tx, old.id, document.id, document.valid_from)
                out.superseded = storage.get_document(old.id)
            if document.kind == HANDOFF_KIND:
                for previous in list(versioned.iter_documents(kinds=(HANDOFF_KIND,))):
                    versioned.supersede(tx, previous.id, document.id, document.valid_from)
                    out.replaced.append(storage.get_document(previous.id) or previous)
            return pipeline.add([document], embed=False)

    def _store_vector(self, pipeline: Pipeline, report: AddReport, vector: np.ndarray | None,
                      out: Remembered) -> bool:
        """Write the statement's vector in its own short transaction; True when written."""
        semantic = pipeline.arms.semantic
        if semantic is None or not report.chunk_ids or pipeline.semantic_error:
            return False
        chunks = pipeline.arms.storage.get_chunks(report.chunk_ids)
        try:
            if vector is not None and len(chunks) == 1 and \
                    embedding_text(chunks[0]) == embedding_text_of(out.document):
                with pipeline.arms.storage.transaction() as tx:
                    semantic.add(tx, [chunks[0].id], vector[None, :])
                return True
            if out.semantic_error is None:  # a long statement: chunked, embed each chunk
                return pipeline.embed_pending(chunk_ids=report.chunk_ids) > 0
        except (EmbedderUnavailableError, EmbedderMismatchError) as exc:
            out.semantic_error = str(exc)
        except StoreBusyError:  # the statement is stored (its own transaction committed)
            out.semantic_error = (
                "another process held the store's write lock when the vector was to be "
                "written; the statement is found by its words until `octomem reindex` "
                "embeds it")
        return False

    # ---- recall, forget, ingest -----------------------------------------------------

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
        :raises InvalidQueryError: a bad argument, named (``until`` not after ``since`` too).
        """
        check_length(len(query), self.limits.query_chars, "query", "limits.query_chars",
                     write=False)
        if top_k is not None and top_k > self.limits.top_k:
            raise InvalidQueryError(f"top_k: {top_k:,} is more than limits.top_k "
                                    f"({self.limits.top_k:,})")
        if per not in ("chunk", "document"):
            raise InvalidQueryError(f"per: must be 'chunk' or 'document', got {per!r}")
        check_shape(context, max_tokens)
        after, before = parse_time(since, "since"), parse_time(until, "until", "end")
        if after is not None and before is not None and before <= after:
            raise InvalidQueryError(f"until: {until!r} ends before since ({since!r}) starts: "
                                    "no time is in both")
        filters = Filters(
            kinds=tuple(check_kind(k, "kinds") for k in kinds), tags=tuple(tags),
            valid_after=after, valid_before=before,
            as_of=as_of_instant(as_of), include_superseded=include_superseded,
        )
        request = RecallRequest(query, top_k or self.settings.retrieval.top_k, filters, per, False)
        scoped = self.scopes.existing(self._scopes(scope))
        answer = shape(without_unshowable(recall_scopes(scoped, request, self.knobs)),
                       {s: p.arms.storage for s, p in scoped}, context, max_tokens)
        if count:
            for name in answer.scopes:
                self.recall_log.record(name, [h.chunk.document_id for h in answer.hits
                                              if h.scope == name and is_answer(h)])
        return answer

    def forget(self, text_or_id: str, scope: str | None = None, reason: str | None = None,
               expect_version: str | None = None) -> ForgetOutcome:
        """Forget one statement by id or exact text; see :func:`.forget.forget`."""
        return forget(self.scopes.existing(self._scopes(scope)), text_or_id, reason,
                      expect_version)

    def ingest(
        self, path_or_text: str, scope: str | None = None, title: str | None = None,
        uri: str | None = None, tags: Sequence[str] = (), fmt: IngestFormat = "auto",
        confine: bool = False,
    ) -> tuple[ScopeName, IngestReport]:
        """Ingest files, transcripts, a folder or a text into a scope (``local`` by default).

        Identical content is a no-op; changed content becomes the document's next revision
        (the old chunks stay, superseded). A folder ingested again reports the files it no
        longer holds and forgets them unless ``ingest.on_missing = "keep"``
        (:mod:`.folders`). Every file is read before anything is stored;
        each transcript is stored in one transaction. An id in the scope's forget log
        is not added again (``report.skipped_forgotten``). See :mod:`.ingest`.

        :param fmt: how ``.jsonl`` files are read (:data:`~.sources.IngestFormat`).
        :param confine: read only paths inside the project root and the setting
            ``ingest.allowed_roots`` (the MCP tool; the CLI reads any path).
        :raises OctomemError: an unreadable path, a malformed transcript line or empty
            text, named (in a folder such a file is skipped: ``report.skipped``).
        """
        target = check_scope(scope) or "local"
        allowed = getattr(self.settings, "ingest", None)
        roots = [self.roots.project, *(allowed.allowed_roots if allowed else ())] \
            if confine else None
        report = IngestReport()  # a folder's unreadable files: report.skipped
        groups = ingest_groups(path_or_text, self.roots.project, title, uri, tuple(tags), fmt,
                               roots, self.limits.file_bytes, report.skipped,
                               turn_owner(self._storage_of(target)), report.unfinished)
        pipeline = self.scopes.require(target, create=True)
        for group in groups:  # a transcript's turns: one transaction
            whole = len(group) if group[0].kind == TURN_KIND else None
            kept = drop_forgotten(pipeline.arms.storage, group, report.skipped_forgotten)
            merge_reports(report, pipeline.add(kept, per_transaction=whole))
        folder = folder_named(path_or_text, self.roots.project)
        if folder is not None:  # files it held before and no longer does
            reconcile(target, pipeline, folder, self.on_missing, report)
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

    def status(self, load_model: bool = False) -> dict[str, Any]:
        """Return each scope's root and counts (``exists`` false for a scope not created:
        asking creates none), and ``permissions_warning`` when readable by others.

        :param load_model: load the embedding model, so ``semantic_available`` says whether
            it loads (not only whether one is configured).
        """
        scopes: dict[str, Any] = {}
        for scope in SCOPES:
            pipeline = self.scopes.get(scope) if self.scopes.created(scope) else None
            if pipeline is None:  # not created by asking: the first write creates it
                scopes[scope] = {"root": str(self.roots.of(scope)), "exists": False}
                continue
            info = {"exists": True, **pipeline.status()}
            history = getattr(pipeline.arms.storage, "history_counts", None)
            if callable(history):
                info.update(history())
            info["permissions_warning"] = exposed(self.roots.of(scope))
            if load_model and (why := model_error(pipeline)) is not None:
                info.update(semantic_available=False, semantic_error=why)
            scopes[scope] = info
        return {"project_root": str(self.roots.project), "scopes": scopes}

    def close(self) -> None:
        """Write the queued recall counts, then close both scopes."""
        self.recall_log.close()
        self.scopes.close()


def embedding_text_of(document: Document) -> str:
    """Return the text a one-chunk document is embedded as (title, then text)."""
    return f"{document.title}\n{document.text}" if document.title else document.text


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
