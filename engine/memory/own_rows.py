"""A BEIR corpus's rows under ids no other source holds (trial 18 H6).

A row's ``_id`` is its document's id, in the one id space of a scope: most BEIR-layout
corpora number their rows (``"0"``, ``"1"``, ...), so a second corpus ingested into the
same scope replaced the first one's documents, and a row whose ``_id`` was a statement's
id turned a user's rule into that row's text. Each row now carries its corpus file as
its ``uri``, and a row whose id a stored document of another source holds (another
kind, or another corpus file) is stored as ``<_id>@<corpus folder name>``; the same
corpus ingested again finds its own rows under the same ids. A store written before rows
carried their corpus has rows without a ``uri``: those count as this corpus's (their
source cannot be told), as they did.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from ..arms import Storage
from ..types import Document


def corpus_rows(storage: Storage | None, rows: Iterable[Document], corpus: Path
                ) -> Iterator[Document]:
    """Yield ``rows`` (a BEIR corpus's documents, :func:`~.sources.beir_documents`) with
    their corpus file as ``uri``, each whose id another source holds in ``storage`` renamed
    ``<id>@<corpus folder name>`` (module docstring).

    :param storage: the scope's storage; ``None``: a scope not created yet (nothing held).
    :param corpus: the corpus file (``corpus.jsonl``).
    """
    uri = corpus.resolve().as_uri()
    name = corpus.resolve().parent.name
    for row in rows:
        held = storage.get_document(row.id) if storage is not None else None
        if held is not None and (held.kind != row.kind or held.uri not in (None, uri)):
            row = replace(row, id=f"{row.id}@{name}")
        yield replace(row, uri=uri)
