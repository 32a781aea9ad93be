"""Forgetting by path: everything ingested from a file, a transcript or a folder.

``forget PATH`` (the CLI, the MCP ``forget`` tool) finds the stored documents by the path
they were read from, as recorded in each document's ``uri`` — nothing is read from disk,
so a file or a folder renamed or deleted since its ingest is forgotten the same way
(trial 17 G9: a renamed folder left its documents current for good, as duplicates of
the new folder's). A file's path finds its document, or a transcript's every turn; a
folder's path finds every file document and every turn read from below it.

A Claude Code session file that exists also finds the turns it holds that were stored
from another file: a resumed session repeats the earlier session's records (the same
uuids, so the same turn ids), and whichever file was ingested first is the one a turn
records (trial 18 H7: ``forget A.jsonl``, the session where a password was pasted, found
nothing when its resumed copy had been read first). Its turns are found by id: the
turn's own, and the ones another file read it as (``claude:<uuid>@<file>``).

Each document is forgotten as ``forget ID`` would forget it (the same forget-log entry,
so a later ingest keeps it out until ``--readd``), all in one transaction: a storage
that removes a forgotten text's traces from its files on commit does it once.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..arms import VersionedStorage
from ..errors import AlreadyForgottenError, NotFoundError, OctomemError
from ..pipeline import Pipeline
from ..turns import TURN_KIND
from ..types import Document, ForgetRecord
from .folders import FILE_KIND
from .forget import Scoped, content_sha256, remove
from .readable import shown
from .scopes import ScopeName
from .tombstones import claude_record_id
from .transcripts import TranscriptError, read_transcript


def _read_from(doc: Document) -> Path | None:
    """The local path ``doc`` was read from (its ``file:`` uri), else ``None``."""
    if not doc.uri or not doc.uri.startswith("file:"):
        return None
    return Path(unquote(urlparse(doc.uri).path))


def path_named(key: str, base: Path) -> Path | None:
    """Return ``key`` as an absolute path (``~`` expanded; relative to ``base``), resolved,
    or ``None`` when it cannot be a path (a newline, a NUL byte, an unknown ``~user``).
    Nothing is read: the path need not exist."""
    if "\n" in key:
        return None
    try:
        path = Path(key).expanduser()
        return (path if path.is_absolute() else base / path).resolve()
    except (ValueError, OSError, RuntimeError):  # a NUL byte, ~user unknown: no path
        return None


def path_like(key: str, base: Path) -> Path | None:
    """Return :func:`path_named` of ``key`` when it looks like a path: it holds a ``/``,
    or no white space, or ends in a file suffix such as ``.jsonl``, or names something
    that exists; else (a statement's text) ``None``."""
    path = path_named(key, base)
    if path is None:
        return None
    if "/" in key or not re.search(r"\s", key) or re.search(r"\.\w{1,8}$", key) \
            or path.exists():
        return path
    return None


def not_from_path(missing: NotFoundError, path: Path) -> NotFoundError:
    """Return the error for a forget whose key matched nothing, not even as a path: the
    first error itself when it says the key was forgotten before (when and why), else it
    with the path looked up."""
    if isinstance(missing, AlreadyForgottenError):
        return missing
    return NotFoundError(f"{missing}, and nothing stored was ingested from {path}")


@dataclass(slots=True)
class FromPath:
    """What one scope holds read from a path (:func:`stored_from`).

    :param ids: the documents to forget, oldest first.
    :param kept: per transcript below a folder that no longer exists there, how many of
        its turns were left alone: a turn's id is its conversation's (``trip:5``), so a
        transcript moved with its folder and ingested again holds the same turns, still
        recorded as read from the old place; forgetting them would forget the moved
        copy's. Named by its own path, a transcript's turns are forgotten.
    """

    scope: ScopeName
    pipeline: Pipeline
    ids: list[str] = field(default_factory=list)
    kept: dict[Path, int] = field(default_factory=dict)


def stored_from(scoped: Scoped, path: Path) -> list[FromPath]:
    """Return, per scope of ``scoped`` that holds any, what was read from ``path`` (an
    absolute path: a file, a transcript, or a folder: everything below it; it need not
    exist any more): every current file document, and the turns of the transcript named
    or of each transcript below the folder that still exists (:attr:`FromPath.kept`)."""
    root = path.resolve()
    held = _claude_turns_in(root)
    found = []
    for scope, pipeline in scoped:
        storage = pipeline.arms.storage
        if not isinstance(storage, VersionedStorage):  # keeps no uri history to look in
            continue
        here = FromPath(scope, pipeline)
        for doc in storage.iter_documents(kinds=(FILE_KIND, TURN_KIND)):
            if held and claude_record_id(doc) in held:
                here.ids.append(doc.id)
                continue
            read = _read_from(doc)
            if read is None or not (read == root or read.is_relative_to(root)):
                continue
            if doc.kind == TURN_KIND and read != root and not read.exists():
                here.kept[read] = here.kept.get(read, 0) + 1
            else:
                here.ids.append(doc.id)
        if here.ids or here.kept:
            here.ids.reverse()  # stored order: oldest first
            found.append(here)
    return found


def _claude_turns_in(path: Path) -> set[str]:
    """Return the ids (``claude:<uuid>``) of the turns of the Claude Code session file at
    ``path``, read now; empty for anything else (a folder, a file gone or unreadable, a
    chat transcript, whose turns are found by the path they were read from)."""
    try:
        if path.suffix != ".jsonl" or not path.is_file():  # a name too long: OSError
            return set()
        turns = read_transcript(path)
    except (TranscriptError, OctomemError, OSError):
        return set()
    return {own for doc in turns if (own := claude_record_id(doc)) is not None}


def forget_documents(pipeline: Pipeline, ids: Sequence[str],
                     reason: str | None = None) -> list[Document]:
    """Forget every document of ``ids`` in one transaction, each exactly as ``forget`` of
    its id would (its tombstone keeps its text out of a later ingest: :mod:`.tombstones`).

    :returns: the documents forgotten, in the order given (an id gone meanwhile is left
        out).
    """
    storage = pipeline.arms.storage
    done: list[Document] = []
    with storage.transaction() as tx:
        now = time.time()
        for doc_id in ids:
            doc = storage.get_document(doc_id)
            if doc is None:
                continue
            remove(pipeline, tx, doc, ForgetRecord(doc.id, doc.kind, content_sha256(doc.text),
                                                   doc.created_at, now, reason))
            done.append(doc)
    return done


def forgot_path_line(path: str, where: Path, scope: str, docs: list[Document]) -> str:
    """Say what ``forget PATH`` did, without ids: ``"forgot the 300 turns of chat.jsonl
    from the local scope"`` for one transcript, else ``"forgot 33 files and 300 turns
    (2 transcripts) ingested from docs from the local scope"``.

    :param path: the path as given; ``where``: it resolved (absolute).
    """
    turns = [d for d in docs if d.kind == TURN_KIND]
    sources = {d.uri for d in turns}
    files = len(docs) - len(turns)
    said = [f"{files} file{'s' * (files != 1)}"] if files else []
    if turns:
        said.append(f"{len(turns)} turn{'s' * (len(turns) != 1)} ({len(sources)} "
                    f"transcript{'s' * (len(sources) != 1)})")
    line = (f"forgot the {len(turns)} turns of {path} from the {scope} scope"
            if turns and len(turns) == len(docs) and sources == {where.as_uri()} else
            f"forgot {' and '.join(said) or 'nothing'} ingested from {path} from the {scope} "
            "scope")
    return line


def kept_turns_line(where: Path, kept: dict[Path, int]) -> str:
    """Say which turns ``forget PATH`` of a folder left alone (``""``: none): those of
    transcripts no longer in it (:attr:`.forget_path.FromPath.kept`)."""
    if not kept:
        return ""
    names = ", ".join(shown(p.relative_to(where)) for p in list(kept)[:3])
    more = ", ..." if len(kept) > 3 else ""
    return (f"; kept {sum(kept.values())} turns of {len(kept)} transcript"
            f"{'s' * (len(kept) != 1)} no longer there ({names}{more}): a transcript moved "
            "and ingested again holds the same turns; forget one by its own path to drop "
            "them")
