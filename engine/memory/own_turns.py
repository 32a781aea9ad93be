"""Whose turns a chat transcript's default ids would name: two files named alike
(``2024/trip.jsonl``, ``2025/trip.jsonl``) get conversations of their own (trial 11,
finding 8); see :func:`check_own_turns` and docs/conversations.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from ..arms import Storage
from ..turns import TURN_KIND, turn_id
from ..types import Document
from .transcripts import TranscriptError, read_chat

#: A stored document by id: ``(its file's uri, its text, its kind)``, ``None`` when none
#: holds the id.
TurnOwner = Callable[[str], "tuple[str | None, str, str] | None"]


def turn_owner(storage: Storage | None) -> TurnOwner:
    """Return a :data:`TurnOwner` reading ``storage`` (``None``: a scope not created yet)."""
    def owner(document_id: str) -> tuple[str | None, str, str] | None:
        doc = storage.get_document(document_id) if storage is not None else None
        return (doc.uri, doc.text, doc.kind) if doc is not None else None
    return owner


def apart_from_other_kinds(path: Path, turns: list[Document], owner: TurnOwner
                           ) -> list[Document]:
    """Return ``turns``, each whose id a stored document of another kind holds (a
    statement, a BEIR row, a file) renamed ``<id>@<file name>``: a chat line's own ``id``
    (``"2"``, as chat exports number messages) replaced whatever the store held under it,
    a user's rule included (trial 18 H6)."""
    return [turn if (held := owner(turn.id)) is None or held[2] == TURN_KIND
            else replace(turn, id=f"{turn.id}@{path.stem}") for turn in turns]


def check_own_turns(path: Path, turns: list[Document], owner: TurnOwner,
                    seen: dict[str, tuple[Path, str]]) -> list[Document]:
    """Return a chat transcript's turns under ids no other file's turns hold: ``turns``,
    or the file read again under another default conversation name.

    A chat turn's default id is ``<conversation>:<position>`` and the conversation
    defaults to the file name, so ``2024/trip.jsonl`` and ``2025/trip.jsonl`` would
    replace each other's turns. An id clashes when a turn from another file that still
    exists holds it with another text (stored: ``owner``; or read earlier in the same
    ingest: ``seen``, filled in with the turns returned). The names tried for lines that
    name no conversation are the file's name, then it with its folder in front
    (``2025/trip``), then more of its path (:func:`default_names`); a name this file's
    turns were stored under before comes first, so a transcript ingested again keeps its
    ids whatever happened to other files meanwhile. A file that moved (its old path is
    gone) or a copy with the same turns overwrites nothing and keeps its name. Claude Code
    turns keep their ids (a resumed session repeats its earlier records in a new file,
    stored once), except a turn another existing file holds with another text: it is
    stored apart as ``<id>@<this file's name>``, so two files never rewrite one turn in
    turn on every ingest (trial 18 H1).

    :raises TranscriptError: every name clashes (lines that name their own conversation or
        ``id`` held by another file's turns), naming both files.
    """
    owner = _asked_once(owner)  # each id is looked up by both checks (and for every name)
    turns = apart_from_other_kinds(path, turns, owner)
    if not turns or turns[0].metadata.get("source") == "claude-code":
        turns = [doc if _clash(path, [doc], owner, seen) is None
                 else replace(doc, id=f"{doc.id}@{path.stem}") for doc in turns]
        seen.update((doc.id, (path, doc.text)) for doc in turns)
        return turns
    names = default_names(path)
    here = path.resolve().as_uri()
    own = [n for n in names if (held := owner(turn_id(n, 0))) is not None and held[0] == here]
    first: TranscriptError | None = None
    for name in dict.fromkeys([*own, *names]):
        named = turns if name == names[0] else \
            apart_from_other_kinds(path, read_chat(path, [], name), owner)
        clash = _clash(path, named, owner, seen)
        if clash is None:
            seen.update((doc.id, (path, doc.text)) for doc in named)
            return named
        first = first or clash
    assert first is not None
    raise first


def _asked_once(owner: TurnOwner) -> TurnOwner:
    """Return ``owner`` answering each id from the store once: the store does not change
    while one file's turns are checked (nothing is written until every file is read)."""
    held: dict[str, tuple[str | None, str, str] | None] = {}

    def once(document_id: str) -> tuple[str | None, str, str] | None:
        if document_id not in held:
            held[document_id] = owner(document_id)
        return held[document_id]
    return once


def default_names(path: Path) -> list[str]:
    """Return the conversation names a chat transcript's lines that name none may take, in
    order: the file's name without its suffix, then with one more of its folders in front
    each (``trip``, ``2025/trip``, ``chats/2025/trip``, ... up to its whole path)."""
    parts = [p for p in path.absolute().with_suffix("").parts if p not in ("/", "\\")]
    return ["/".join(parts[-k:]) for k in range(1, len(parts) + 1)] or [path.stem]


def _clash(path: Path, turns: list[Document], owner: TurnOwner,
           seen: dict[str, tuple[Path, str]]) -> TranscriptError | None:
    """Return the error for the first of ``turns`` whose id another existing file's turn
    holds with another text (:func:`check_own_turns`), else ``None``."""
    here = path.resolve()
    for doc in turns:
        other, text = seen.get(doc.id) or _stored(owner(doc.id)) or (None, doc.text)
        if other is not None and text != doc.text and other.resolve() != here \
                and other.exists():
            return TranscriptError(
                f"{path}: turn id {doc.id!r} is already held by a turn from {other}; two "
                "transcripts would overwrite each other: give this file's lines their own "
                "\"conversation\" name (or \"id\"), see docs/conversations.md")
    return None


def _stored(held: tuple[str | None, str, str] | None) -> tuple[Path, str] | None:
    """Return ``(file, text)`` of a stored turn read from a file, else ``None``."""
    if held is None or not held[0] or not held[0].startswith("file:"):
        return None
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(held[0]).path)), held[1]
