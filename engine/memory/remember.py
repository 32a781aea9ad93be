"""Remember: one statement appended to a scope, and what the agent should know about it.

The statement is embedded before its write transaction and its vector stored in a
second short one (the pipeline's rule: no model runs while a scope's write lock is
held). ``HANDOFF`` statements supersede the scope's previous handoff; ``supersedes``
links an older statement to its replacement (both kept); an identical current statement
is not stored twice; near duplicates are reported, never refused (:mod:`.duplicates`).
:meth:`.facade.Memory.remember` is the entry point.
"""

from __future__ import annotations

import contextlib
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..arms import VersionedStorage
from ..controls import blank
from ..embedding_lock import EmbeddingLock
from ..errors import (
    EmbedderMismatchError,
    EmbedderUnavailableError,
    InvalidQueryError,
    StaleVersionError,
    StoreBusyError,
)
from ..pipeline import AddReport, Pipeline, embedding_text
from ..turns import TURN_KIND
from ..types import DEFAULT_KIND, HANDOFF_KIND, Document
from .duplicates import NearDuplicate, has_vectors, identical, repeated
from .ingest import DOC_KIND
from .limits import check_length, check_tags
from .scopes import ScopeName, check_scope
from .times import parse_time
from .versions import check_version

if TYPE_CHECKING:  # numpy arrives with the embedder, not at import (MCP start-up)
    import numpy as np

    from .facade import Memory

#: A kind is one word: a letter, then letters, digits or underscores (64 at most), stored
#: in capitals (``fact`` is stored as ``FACT``).
KIND_INPUT_PATTERN = r"^[A-Za-z][A-Za-z0-9_]{0,63}$"


def check_kind(kind: str, argument: str = "kind") -> str:
    """Return ``kind`` in capitals if it is one word (``fact`` -> ``FACT``).

    :raises InvalidQueryError: naming ``argument``, when ``kind`` is not one word of
        letters, digits and ``_`` starting with a letter (64 at most).
    """
    if (why := kind_refusal(kind, argument)) is not None:
        raise InvalidQueryError(why)
    return kind.upper()


def kind_refusal(kind: object, argument: str = "kind") -> str | None:
    """Return the one line refusing ``kind`` (not one word of ASCII letters, digits and
    ``_`` starting with a letter, or longer than 64 characters), or ``None`` if it is one."""
    if isinstance(kind, str) and re.fullmatch(KIND_INPUT_PATTERN, kind):
        return None
    shown = repr(kind).replace("\n", "\\n")[:80]
    if isinstance(kind, str) and re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", kind):
        return f"{argument}: {len(kind):,} characters, more than a kind's 64; got {shown}"
    return (f"{argument}: must be one word of ASCII letters, digits and _, starting with a "
            f"letter, e.g. FACT; got {shown}")


def kind_within_rule(kind: str) -> str:
    """Return a kind within the kind rule for ``kind`` (``to-do`` -> ``TO_DO``,
    ``Ünïcode_KIND`` -> ``UNICODE_KIND``, ``fact`` -> ``FACT``, ``42`` -> ``K_42``, one with
    no letter or digit -> ``FACT``): what import suggests and ``verify --repair`` stores."""
    ascii_only = unicodedata.normalize("NFKD", kind).encode("ascii", "ignore").decode()
    word = re.sub(r"[^A-Za-z0-9]+", "_", ascii_only).strip("_").upper()[:60]
    return "FACT" if not word else word if word[0].isalpha() else f"K_{word}"


@dataclass(slots=True)
class Remembered:
    """What ``remember`` stored and what the agent should know about it.

    :param replaced: the previous handoffs this ``HANDOFF`` superseded.
    :param superseded: the statement ``supersedes`` named, now marked superseded.
    :param already_stored: ``document`` is an identical current statement of the scope
        stored before (:func:`.duplicates.identical`): nothing new was stored.
    :param asked_kind: the kind ``remember`` was given, ``None`` when none was
        (``document.kind`` is the stored one).
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


def embedding_text_of(document: Document) -> str:
    """Return the text a one-chunk document is embedded as (title, then text)."""
    return f"{document.title}\n{document.text}" if document.title else document.text


def _versioned(pipeline: Pipeline) -> Any:
    storage = pipeline.arms.storage
    if not isinstance(storage, VersionedStorage):
        raise InvalidQueryError(
            f"storage {storage.name!r} keeps no statement history, so supersedes and "
            "HANDOFF cannot be recorded; use a storage such as 'sqlite'"
        )
    return storage


def _embed(pipeline: Pipeline, text: str) -> tuple[np.ndarray | None, str | None]:
    """Embed one statement outside any transaction: ``(vector, why not)``."""
    if pipeline.arms.semantic is None or pipeline.arms.embedder is None:
        return None, None
    if pipeline.semantic_error:
        return None, pipeline.semantic_error
    try:
        return pipeline.arms.embedder.embed_documents([text])[0], None
    except (EmbedderUnavailableError, EmbedderMismatchError) as exc:
        return None, str(exc)


def _target(
    memory: Memory, scope: str | None, supersedes: str | None, expect_version: str | None = None
) -> tuple[ScopeName, Document | None]:
    """Pick the scope to write to and the statement ``supersedes`` names (checked
    against ``expect_version`` first, when given)."""
    chosen = check_scope(scope)
    if supersedes is None:
        return chosen or "local", None
    matches = memory.find(supersedes)
    if expect_version is not None and not matches:
        raise StaleVersionError(
            f"{supersedes!r} was forgotten after it was read; nothing was changed")
    if expect_version is not None:
        check_version(memory.scopes.require(matches[0][0]).arms.storage, supersedes,
                      expect_version)
    if not matches:
        gone = [p.arms.storage.get_forgotten(supersedes) for _, p in memory.scopes.existing()
                if isinstance(p.arms.storage, VersionedStorage)]
        why = " (it was forgotten)" if any(gone) else ""
        raise InvalidQueryError(f"supersedes: no statement has the id {supersedes!r}{why}")
    old_scope, old = matches[0]
    if (why := not_a_statement(old)) is not None:
        raise InvalidQueryError(f"supersedes: {why}; nothing was stored")
    if chosen is not None and chosen != old_scope:
        raise InvalidQueryError(
            f"supersedes: {supersedes!r} is in the {old_scope} scope; a statement supersedes "
            f"one of its own scope, so store it in the {old_scope} scope (or give no scope: "
            "it then goes to the statement's own)"
        )
    if not old.is_current:
        raise InvalidQueryError(
            f"supersedes: {supersedes!r} is already superseded by {old.superseded_by!r}; "
            "supersede the current statement instead"
        )
    return old_scope, old


def not_a_statement(document: Document) -> str | None:
    """Return why ``document`` cannot be superseded by a statement (an ingested file or
    text, or a conversation turn: its next ingest would be born superseded), or ``None``
    for a statement. Their ids are what ``recall`` hands out beside statements' ones."""
    place = _place(document.uri)
    if document.kind == TURN_KIND:
        return (f"{document.id!r} is a conversation turn{place}, not a statement: forget "
                "it, or edit the transcript and ingest it again")
    if document.kind != DOC_KIND:
        return None
    if document.id.startswith("file:"):
        return (f"{document.id!r} is an ingested file{place}, not a statement: forget it, "
                "or edit the file and ingest it again")
    return (f"{document.id!r} is an ingested document{place}, not a statement: forget it, "
            "or ingest its new text")


def _place(uri: str | None) -> str:
    """`` (PATH)`` for a ``file:`` URI, `` (URI)`` for another, ``""`` for none."""
    if not uri:
        return ""
    if uri.startswith("file:"):
        # imported here: urllib.request brings http.client and ssl, which a one-shot
        # `octomem search` does not load (tests/test_cli_search_imports.py)
        from urllib.parse import urlsplit
        from urllib.request import url2pathname

        with contextlib.suppress(ValueError):
            return f" ({Path(url2pathname(urlsplit(uri).path))})"
    return f" ({uri})"


def remember(
    memory: Memory, text: str, scope: str | None = None, kind: str | None = None,
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

    :param kind: its kind (``None``: ``ITEM``, :data:`~octomem.engine.types.DEFAULT_KIND`;
        a statement found already stored keeps its kind, and only a kind given is
        compared with it: ``Remembered.asked_kind``).
    :param event_time: when what it says happened (ISO-8601 date or time).
    :param expect_version: the version of ``supersedes`` the caller read; checked
        inside the write transaction.
    :raises InvalidQueryError: empty text or one holding a NUL character, a bad kind, time
        or scope, or an unknown, other-scope or already superseded ``supersedes`` id, or one
        of an ingested document or turn (:func:`not_a_statement`); the message names it.
    :raises StaleVersionError: ``supersedes`` changed since the caller read it.
    """
    if not isinstance(text, str) or blank(text):
        raise InvalidQueryError("text: empty; give the statement to remember")
    text = text.strip()
    check_length(len(text), memory.limits.remember_chars, "text", "limits.remember_chars",
                 hint="; a text this long is a document: ingest it")
    if (nul := text.find("\0")) >= 0:  # as ingest refuses a file holding one (binary)
        raise InvalidQueryError(f"text: a NUL character at character {nul + 1}; a statement "
                                "is text: remove it; nothing was stored")
    asked = None if kind is None else check_kind(kind)
    kind = asked or DEFAULT_KIND
    target, old = _target(memory, scope, supersedes, expect_version)
    tags = check_tags(tags, memory.limits)
    document = Document(text=text, kind=kind, tags=tags,
                        event_time=parse_time(event_time, "event_time"), supersedes=supersedes)
    pipeline = memory.scopes.require(target, create=True)
    if old is None and (same := identical(pipeline.arms.storage, document)) is not None:
        return Remembered(target, same, has_vectors(pipeline, same), already_stored=True,
                          asked_kind=asked)
    vector, semantic_error = _embed(pipeline, embedding_text_of(document))
    near = [] if kind == HANDOFF_KIND else memory.near_duplicates(
        text, vector, exclude=(supersedes,) if supersedes else ())
    if old is None and (same := repeated(near, target, document)) is not None:
        return Remembered(target, same, has_vectors(pipeline, same), already_stored=True,
                          asked_kind=asked)
    out = Remembered(target, document, False, semantic_error, near, asked_kind=asked)
    lock = EmbeddingLock(pipeline.root)  # an ingest resuming chunks leaves this one alone
    if pipeline.arms.semantic is not None:
        lock.share(wait=False)  # never behind a long embedding (module embedding_lock)
    try:
        report = _write(pipeline, document, old, out, expect_version)
        out.embedded = _store_vector(pipeline, report, vector, out)
    finally:
        lock.release()
    return out

def _write(pipeline: Pipeline, document: Document, old: Document | None,
           out: Remembered, expect_version: str | None = None) -> AddReport:
    """Supersede, replace the handoff and append, in one write transaction."""
    storage = pipeline.arms.storage
    needs_history = old is not None or document.kind == HANDOFF_KIND
    versioned = _versioned(pipeline) if needs_history else storage
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

def _store_vector(pipeline: Pipeline, report: AddReport, vector: np.ndarray | None,
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
