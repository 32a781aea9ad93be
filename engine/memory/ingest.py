"""What ``ingest`` turns into documents: files, transcripts, a folder, or a text.

A document's id decides what re-ingesting it means. A file's id comes from its absolute
path (:func:`~.sources.file_document`); a text's from its ``uri``, else its ``title``,
else its content; a transcript turn's from its conversation and position, or the
transcript's own id for it (:mod:`.transcripts`). So re-ingesting the same path, uri,
title or turn with identical content is a no-op (a transcript that grew adds only its
new turns), and with changed content it becomes the document's next revision.

Transcripts are read whole before anything is stored, so a malformed line stores
nothing; each transcript is then stored in one transaction.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..errors import InvalidQueryError, OctomemError
from ..pipeline import AddReport
from ..types import Document
from .limits import check_length, confined
from .own_turns import TurnOwner, check_own_turns
from .sources import (
    NOTHING_TO_READ,
    TEXT_SUFFIXES,
    IngestFormat,
    find_sources,
    read_text_file,
)
from .transcripts import TranscriptFormat, read_transcript

#: Kind of ingested documents (statements use ITEM, FACT, ...).
DOC_KIND = "DOC"
#: Longest string still tried as a path (longer ones are text).
_MAX_PATH = 4096


def _as_path(value: str, project_root: Path) -> Path | None:
    """Return ``value`` as an existing path (relative to the project), or ``None``."""
    if "\n" in value or len(value) > _MAX_PATH:
        return None
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = project_root / path
    try:
        return path if path.exists() else None
    except OSError:  # e.g. a name too long for the file system
        return None


def _named_path(value: str, project_root: Path) -> Path | None:
    """Return the path ``value`` names if it exists or looks like a path, else ``None``."""
    if "\n" in value or len(value) > _MAX_PATH:
        return None
    path = Path(value).expanduser()
    path = path if path.is_absolute() else project_root / path
    try:
        return path if path.exists() or _looks_like_a_path(value) else None
    except OSError:
        return None


def _checked(files: Sequence[Path], roots: Sequence[Path] | None,
             max_bytes: int | None) -> None:
    """Refuse a file outside ``roots`` (links resolved) or larger than ``max_bytes``."""
    for file in files:
        if roots is not None:
            confined(file, roots)
        if max_bytes is not None:
            check_length(file.stat().st_size, max_bytes, f"path_or_text ({file})",
                         "limits.file_bytes", "bytes", "; split it")


def _inside(items: Sequence, roots: Sequence[Path], bad: list[tuple[Path, str]]) -> list:
    """Return the files (or ``(file, format)`` pairs) of a folder that lie inside ``roots``
    (links resolved); each other one is appended to ``bad`` with why (nothing of it read)."""
    kept = []
    for item in items:
        file = item[0] if isinstance(item, tuple) else item
        try:
            confined(file, roots)
        except InvalidQueryError as exc:
            bad.append((file, str(exc).removeprefix("path_or_text: ")))
            continue
        kept.append(item)
    return kept


def _looks_like_a_path(value: str) -> bool:
    """Return True for one whitespace-free token that starts like a path, holds a path
    separator or ends in a text-file suffix (``/x``, ``./x``, ``~/x``, ``notes/kestrl/``,
    ``notes.md``; not a URL such as ``https://x``): a mistyped path must not be stored as
    a memory."""
    if not value or any(c.isspace() for c in value) or "://" in value:
        return False
    return (value.startswith(("/", "./", "../", "~/")) or "/" in value or "\\" in value
            or Path(value).suffix.lower() in TEXT_SUFFIXES)


def _broken_link(value: str, project_root: Path) -> Path | None:
    """Return the link ``value`` names when it exists but its target cannot be reached (a
    loop, a missing target), else ``None``."""
    if "\n" in value or len(value) > _MAX_PATH:
        return None
    path = Path(value).expanduser()
    path = path if path.is_absolute() else project_root / path
    try:
        return path if path.is_symlink() and not path.exists() else None
    except OSError:  # a loop on some systems
        return path


def text_document_id(text: str, uri: str | None) -> str:
    """Return the id of an ingested text: from its ``uri``, else its content.

    A title is a label, not an identity: texts an agent saves under one title ("Standup
    notes", one a day) are documents of their own (trial 18 H4: the second superseded the
    first, which dropped out of recall). The same ``uri`` with changed content revises the
    text."""
    basis = f"uri\x00{uri}" if uri else f"text\x00{text}"
    return "text:" + hashlib.sha256(basis.encode("utf-8", "surrogatepass")).hexdigest()[:24]


def ingest_documents(
    path_or_text: str, project_root: Path, title: str | None = None, uri: str | None = None,
    tags: tuple[str, ...] = (), fmt: IngestFormat = "auto",
) -> list[Document]:
    """Return the documents ``ingest`` stores for ``path_or_text``, in order (see
    :func:`ingest_groups`; no path or size limit)."""
    return [doc for group in ingest_groups(path_or_text, project_root, title, uri, tags, fmt)
            for doc in group]


def ingest_groups(
    path_or_text: str, project_root: Path, title: str | None = None, uri: str | None = None,
    tags: tuple[str, ...] = (), fmt: IngestFormat = "auto",
    roots: Sequence[Path] | None = None, max_bytes: int | None = None,
    skipped: list[tuple[Path, str]] | None = None, owner: TurnOwner | None = None,
    notes: list[str] | None = None, empty: list[str] | None = None, limits: Any = None,
    omitted: list[str] | None = None,
) -> list[list[Document]]:
    """Return the documents ``ingest`` stores for ``path_or_text``: the text documents as
    one group, then each transcript's turns as a group of its own (stored in one
    transaction each).

    An existing file or folder (absolute, or relative to ``project_root``) gives one
    document per text file (``title`` and ``uri`` apply to a single file only) and one
    per turn of each transcript (``fmt``: see :data:`~.sources.IngestFormat`); any other
    string is the text of one document.

    :param roots: the folders paths must lie in (links resolved); ``None``: any path
        (the CLI). A path outside is refused whether or not it exists.
    :param max_bytes: the largest file or text read (``limits.file_bytes``).
    :param skipped: when given, a file inside a folder that cannot be read (too large,
        empty, not UTF-8, a malformed transcript line) is appended as ``(file, why)`` and left
        out, and the rest of the folder is returned; without it (or for a file named
        itself) that is an error.
    :param owner: where the target scope's stored turns came from; a chat transcript
        whose turn ids another file's turns hold (stored, or read earlier in this call)
        cannot be read (:func:`~.own_turns.check_own_turns`). ``None``: not checked.
    :param empty: where a note per chat transcript counting its lines with no text (left
        out) goes (:func:`~.transcripts.read_chat`).
    :param notes: when given, a transcript's unfinished last line (no newline, not JSON)
        is left out and noted here instead of failing the file.
    :param omitted: where a note per transcript counting messages left out on purpose goes
        (a chat's instructions, a Claude Code branch the user rewound away from;
        :func:`~.transcripts.read_transcript`; default: ``notes``).
    :param limits: the ``limits`` settings a Markdown file's front matter tags are checked
        against (:mod:`.front_matter`; ``None``: their defaults).
    :raises InvalidQueryError: ``path_or_text`` is empty, outside ``roots`` or too large,
        or a folder holds no text file or transcript.
    :raises OctomemError: a named file is not a UTF-8 text file or a transcript; a
        transcript has a malformed line (naming the file and line); no file of a folder
        could be read (the first reasons named).
    """
    if not isinstance(path_or_text, str) or not path_or_text.strip():
        raise InvalidQueryError("path_or_text: empty; give a file, a folder or a text")
    named = _named_path(path_or_text.strip(), project_root) if roots is not None else None
    if named is not None:
        confined(named, roots or ())
    path = _as_path(path_or_text.strip(), project_root)
    link = _broken_link(path_or_text.strip(), project_root) if path is None else None
    if link is not None:
        raise InvalidQueryError(
            f"path_or_text: {link} is a link whose target cannot be read (a loop or a "
            "missing target); nothing was stored")
    if path is None and _looks_like_a_path(path_or_text.strip()):
        raise InvalidQueryError(
            f"path_or_text: {path_or_text.strip()!r} looks like a file path but no such file or "
            f"folder exists (relative paths start at {project_root}); to store it as text, "
            "add some words around it"
        )
    if path is None and fmt in ("chat", "claude-code"):  # trial 15 F19: stored as a DOC
        raise InvalidQueryError(
            f"format: {fmt!r} reads a transcript file or folder, and path_or_text names "
            "none (it is read as text); save the transcript as a .jsonl file and give its "
            "path, or leave format out to store the text as a document; nothing was stored")
    if path is None:
        text = path_or_text.strip()
        if max_bytes is not None:
            check_length(len(text.encode("utf-8", "surrogatepass")), max_bytes, "path_or_text",
                         "limits.file_bytes", "bytes")
        return [[Document(text=text, id=text_document_id(text, uri), title=title,
                          uri=uri, kind=DOC_KIND, tags=tags, created_at=time.time())]]
    unlisted: list[tuple[Path, str]] = []  # folders inside that cannot be listed
    files, transcripts = find_sources([path], fmt, unreadable=unlisted)
    if not files and not transcripts:
        cannot = "".join(f"; {d}/ cannot be read ({why})" for d, why in unlisted[:3])
        raise InvalidQueryError(f"path_or_text: {NOTHING_TO_READ} in {path}{cannot}")
    bad: list[tuple[Path, str]] | None = [] if skipped is not None and path.is_dir() else None
    if bad is not None:
        bad += [(d, f"{d}/: cannot be read ({why})") for d, why in unlisted]
    if bad is not None and roots is not None:  # a folder's link to outside: left out, named
        files, transcripts = _inside(files, roots, bad), _inside(transcripts, roots, bad)
    _checked([*files, *(f for f, _ in transcripts)], roots, None)  # outside: always refused
    documents = [with_tags(d, tags) for f in files
                 for d in _read(f, None, max_bytes, bad, limits=limits)]
    seen: dict[str, tuple[Path, str]] = {}
    turns = [[with_tags(d, tags)
              for d in _read(f, how, max_bytes, bad, owner, seen, notes, empty,
                             omitted=omitted)]
             for f, how in transcripts]
    if bad and skipped is not None:
        if not documents and not any(turns):
            raise OctomemError(f"path_or_text: no file in {path} could be ingested: "
                               + "; ".join(why for _, why in bad[:3]))
        skipped.extend(bad)
    if len(documents) == 1 and (title or uri):
        documents[0] = replace(documents[0], title=title or documents[0].title,
                               uri=uri or documents[0].uri)
    return [group for group in (documents, *turns) if group]


def with_tags(doc: Document, tags: tuple[str, ...]) -> Document:
    """Return ``doc`` carrying ``tags`` too, after its own (a Markdown file's front matter
    tags: :mod:`.front_matter`), each once."""
    if not tags:
        return doc
    return replace(doc, tags=tuple(dict.fromkeys((*doc.tags, *tags))))


def _read(file: Path, how: TranscriptFormat | None, max_bytes: int | None,
          skipped: list[tuple[Path, str]] | None, owner: TurnOwner | None = None,
          seen: dict[str, tuple[Path, str]] | None = None, notes: list[str] | None = None,
          empty: list[str] | None = None, limits: Any = None,
          omitted: list[str] | None = None) -> list[Document]:
    """Return a text file's document (``how`` None) or a transcript's turns; a file that
    cannot be read raises, or with ``skipped`` given is appended to it and gives none.

    :raises OctomemError: too large, empty, not UTF-8, a malformed transcript, or one
        whose turn ids another file's turns hold (no ``skipped``).
    """
    try:
        if how is None:
            return [read_text_file(file, max_bytes, f"path_or_text ({file})", limits)]
        _checked([file], None, max_bytes)
        turns = read_transcript(file, how, notes, empty, omitted)
        if owner is not None:
            turns = check_own_turns(file, turns, owner, {} if seen is None else seen)
        return turns
    except OctomemError as exc:
        if skipped is None:
            raise
        skipped.append((file, str(exc)))
        return []


def merge_reports(into: AddReport, other: AddReport) -> AddReport:
    """Add what ``other`` did to ``into`` (ids, counts, times; the last semantic error)."""
    into.added += other.added
    into.unchanged += other.unchanged
    into.replaced += other.replaced
    into.chunks += other.chunks
    into.embedded += other.embedded
    into.seconds_indexing += other.seconds_indexing
    into.seconds_embedding += other.seconds_embedding
    into.semantic_error = other.semantic_error or into.semantic_error
    into.chunk_ids += other.chunk_ids
    into.resumed += other.resumed
    into.stopped_unembedded += other.stopped_unembedded
    into.moved += other.moved
    return into
