"""Turns a transcript no longer holds: ingesting it again retires them (trial 11, finding 4).

A chat turn's default id is its position (``<conversation>:<position>``), so a line
deleted from the middle of a transcript shifts every later turn down one id: those ids
are stored again as their next revision, and the last position the file no longer has
would stay current, a phantom copy of the turn before it (``--context`` showed it twice).
A turn of a Claude Code session (id ``claude:<uuid>``) whose record was removed would
stay the same way.

So before a transcript is stored again, the current turns read from this file, and those
of its conversations read from a file that no longer exists (the transcript moved), whose
ids the file no longer holds are found (:func:`gone_turns`); once its turns are
stored, they are retired as a folder's gone files are (:func:`retire`): forgotten, with
the reason ``turn gone: FILE ...`` in the forget log, unless ``ingest.on_missing =
"keep"``. Such a forget is no tombstone (:func:`~.forget.is_tombstone`): a line that
comes back is stored again by the next ingest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from ..arms import Storage
from ..pipeline import Pipeline
from ..turns import CONVERSATION, TURN_KIND
from ..types import Chunk, Document, Filters
from .folders import GoneFile
from .forget import GONE_TURN_REASON, forget
from .scopes import ScopeName


def _path(uri: str | None) -> Path | None:
    """Return the file a ``file:`` uri names, else ``None``."""
    if not uri or not uri.startswith("file:"):
        return None
    return Path(unquote(urlparse(uri).path))


def gone_turns(storage: Storage | None, turns: Sequence[Document]) -> list[GoneFile]:
    """Return the stored turns a transcript read again as ``turns`` no longer holds.

    These are the current turns read from the same file (``uri``; also when its lines now
    name another conversation), and those of the conversations ``turns`` belong to read
    from a file that no longer exists, whose ids are not among ``turns``. Turns of other
    existing files and turns not read from a file (a BEIR corpus) are never among them.

    :param storage: the target scope's storage; ``None``: a scope not created yet.
    :returns: each such turn's id and the path of the transcript, in stored order.
    """
    if storage is None or not turns:
        return []
    here = turns[0].uri
    path = _path(here)
    kept = {doc.id for doc in turns}
    found: dict[str, GoneFile] = {}
    for chunk in _candidates(storage, turns):
        if chunk.document_id in kept or chunk.document_id in found:
            continue
        source = _path(chunk.uri)
        if chunk.uri == here or (source is not None and not source.exists()):
            found[chunk.document_id] = GoneFile(chunk.document_id, str(path or here))
    return list(found.values())


def retire(scope: ScopeName, pipeline: Pipeline, gone: Sequence[GoneFile],
           on_missing: str) -> list[GoneFile]:
    """Forget the turns ``gone`` (unless ``on_missing == "keep"``), each with the reason
    ``turn gone: FILE no longer holds it ...`` in the forget log.

    :returns: the turns forgotten (none with ``keep``).
    """
    if on_missing != "forget" or not gone:
        return []
    done = []
    # one transaction: the sqlite storage's purge of forgotten text (index merge, log
    # truncated: plugins/sqlite/purge.py) runs once, not once per turn
    with pipeline.arms.storage.transaction():
        for turn in gone:
            if pipeline.arms.storage.get_document(turn.id) is None:
                continue  # forgotten meanwhile
            forget([(scope, pipeline)], turn.id, f"{GONE_TURN_REASON}{turn.path} no longer "
                   "held it when the transcript was ingested again")
            done.append(turn)
    return done


#: Up to this many conversations in one transcript, each one's turns are looked up by
#: itself (a filtered scan each); past it, every current turn is read once instead
#: (a 20,000-turn store: 100 lookups took 3.0 s, one pass 0.2 s).
FEW_CONVERSATIONS = 4


def _candidates(storage: Storage, turns: Sequence[Document]) -> Iterator[Chunk]:
    """Yield the current turn chunks read from the file ``turns`` were read from (by the
    storage's ``current_turn_chunks(uri)`` when it has one: the ``sqlite`` storage), then
    those of the conversations ``turns`` belong to (whatever file they came from)."""
    here = turns[0].uri or ""
    conversations = dict.fromkeys(str(d.metadata.get(CONVERSATION)) for d in turns)
    every = Filters(kinds=(TURN_KIND,))
    if len(conversations) > FEW_CONVERSATIONS:  # one pass over every current turn
        yield from (c for c in storage.iter_chunks(every)
                    if c.uri == here or str(c.metadata.get(CONVERSATION)) in conversations)
        return
    lookup = getattr(storage, "current_turn_chunks", None)
    if callable(lookup):
        yield from lookup(here)
    else:
        yield from (c for c in storage.iter_chunks(every) if c.uri == here)
    for conversation in conversations:
        yield from storage.iter_chunks(
            Filters(kinds=(TURN_KIND,), metadata={CONVERSATION: conversation}))
