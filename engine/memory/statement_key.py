"""When two statement texts are the same statement: equal once Unicode-normalised.

Texts that render alike are one statement (trial 13 F7): the same words in Unicode
normalisation form C or D (macOS file names, some input methods and copy-paste give
NFD, ``e`` + U+0301 for ``é``), or with an invisible character that changes nothing
shown (zero-width space U+200B, word joiner U+2060, zero-width no-break space /
byte-order mark U+FEFF, soft hyphen U+00AD). ``remember`` stores such a text once and
``forget`` by text finds it in any of these forms (:func:`scan_same` when the stored
form holds an invisible character the given one lacks). The stored text stays as it was
written (only stripped of surrounding whitespace, as before).

Not folded, because they change what is shown or meant: compatibility forms (NFKC would
turn ``x²`` into ``x2``), case, zero-width (non-)joiners (U+200C, U+200D: emoji
sequences, Persian), and direction marks and overrides (U+200E/F, U+202A-E, U+2066-9).

Storages match texts exactly (``find_documents``); :func:`lookup_forms` gives the few
exact forms to ask for, and :func:`statement_key` decides among what they return.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from ..types import Document

__all__ = ["INVISIBLE", "find_same", "lookup_forms", "same_statement", "scan_same",
           "statement_key"]

#: Characters left out of the key: they change nothing shown.
INVISIBLE = frozenset("\u200b\u2060\ufeff\u00ad")
_DROP = dict.fromkeys(map(ord, INVISIBLE))


def statement_key(text: str) -> str:
    """Return ``text`` in NFC, without :data:`INVISIBLE` characters and surrounding
    whitespace: equal keys mean the same statement."""
    return unicodedata.normalize("NFC", text.translate(_DROP)).strip()


def same_statement(one: str, other: str) -> bool:
    """Return whether two texts are the same statement (equal :func:`statement_key`)."""
    return one == other or statement_key(one) == statement_key(other)


def lookup_forms(text: str) -> list[str]:
    """Return the exact texts to look up for ``text``: itself, its key (NFC) and the key
    in NFD, without repeats. A statement stored in any of these forms is found; one
    stored with an invisible character is found by the same text, or by
    ``remember``'s near-duplicate check (:mod:`.duplicates`)."""
    key = statement_key(text)
    return list(dict.fromkeys((text, key, unicodedata.normalize("NFD", key))))


def scan_same(storage: Any, text: str) -> list[Document]:
    """Return every document of ``storage`` (superseded ones too, oldest first) that is the
    same statement as ``text``, read whole: what :func:`find_same` misses when the stored
    text holds an invisible character the given one lacks (``forget`` of ``Zoë likes
    juice`` stored as ``Zoë likes juice\u200b``; trial 16 F2). One pass over the
    documents' texts, so for a fallback only: a storage without ``iter_documents`` (no
    history) gives ``[]``."""
    if not hasattr(storage, "iter_documents"):
        return []
    key = statement_key(text)
    found = [d for d in storage.iter_documents(include_superseded=True)
             if statement_key(d.text) == key]
    return found[::-1]


def find_same(storage: Any, text: str) -> list[Document]:
    """Return the documents of ``storage`` that are the same statement as ``text``
    (:func:`same_statement`), oldest first as ``find_documents`` gives them, each once."""
    found: dict[str, Document] = {}
    for form in lookup_forms(text):
        for doc in storage.find_documents(form):
            if doc.id not in found and same_statement(doc.text, text):
                found[doc.id] = doc
    return sorted(found.values(), key=lambda d: d.created_at)
