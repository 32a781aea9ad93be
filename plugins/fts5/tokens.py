"""Chunks as the ``fts5`` arm's index tokenizes them, for its in-RAM postings.

The in-RAM copy (:mod:`.postings`) must hold FTS5's tokens exactly: the same tokenizer
(``porter unicode61``, FTS5's own, called through apsw), the same text (title, a
newline, then the text: what the arm indexes), and FTS5's cut of over-long tokens.
Tokenized chunks are kept as flat int64 arrays, not a Python object per token.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import apsw
import numpy as np

#: FTS5 cuts every token to its first 32,768 bytes, in documents and queries alike
#: (``FTS5_MAX_TOKEN_SIZE`` in ``fts5Int.h``); the copy cuts the same way.
MAX_TOKEN_BYTES = 32_768
#: The arm's tokenizer, as created by ``tokenize='porter unicode61'``.
TOKENIZER = ("porter", ["unicode61"])
#: The text of a chunk the arm indexes (SQL over ``chunks``): its title, a newline, its text.
BODY = "CASE WHEN coalesce(title, '') = '' THEN text ELSE title || char(10) || text END"


@dataclass
class Tokenized:
    """Tokenized chunks as flat int64 arrays (8 bytes per value, not a Python int each):
    per chunk its id, token count and number of distinct tokens; per distinct token of a
    chunk its term id and count in the chunk."""

    ids: array[int] = field(default_factory=lambda: array("q"))
    lengths: array[int] = field(default_factory=lambda: array("q"))
    sizes: array[int] = field(default_factory=lambda: array("q"))
    terms: array[int] = field(default_factory=lambda: array("q"))
    tfs: array[int] = field(default_factory=lambda: array("q"))

    def numpy(self, name: str) -> np.ndarray:
        """Return the int64 array ``name`` as numpy (a view)."""
        return np.frombuffer(getattr(self, name), dtype=np.int64)


def cap_token(token: str) -> str:
    """Cut ``token`` to FTS5's :data:`MAX_TOKEN_BYTES` of UTF-8, as FTS5 stores it (a cut
    inside a character keeps its bytes, as surrogate escapes)."""
    if len(token) <= MAX_TOKEN_BYTES // 4:
        return token
    return token.encode()[:MAX_TOKEN_BYTES].decode("utf-8", "surrogateescape")


def tokenizer(conn: apsw.Connection) -> apsw.FTS5Tokenizer:
    """Return FTS5's ``porter unicode61`` tokenizer on ``conn`` (the arm's index tokenizer)."""
    return conn.fts5_tokenizer(TOKENIZER[0], TOKENIZER[1])


def tokenize_rows(
    conn: apsw.Connection, rows: Iterable[tuple[int, str]], vocab: dict[str, int]
) -> Tokenized:
    """Tokenize ``(chunk id, body)`` rows as FTS5 indexes them.

    :param vocab: token -> term id; a token not in it yet joins it (the next id).
    :returns: the chunks in the order of ``rows``.
    """
    tok = tokenizer(conn)
    reason = apsw.FTS5_TOKENIZE_DOCUMENT
    docs = Tokenized()
    for cid, body in rows:
        tokens = tok(body.encode(), reason, None, include_offsets=False,
                     include_colocated=False)
        if len(body) > MAX_TOKEN_BYTES // 4:  # only then can a token exceed the cap
            tokens = [cap_token(t) for t in tokens]
        counts = Counter(tokens)
        for token in counts:  # (keys() - keys() would walk the whole vocabulary)
            if token not in vocab:
                vocab[token] = len(vocab)
        docs.ids.append(cid)
        docs.lengths.append(len(tokens))
        docs.sizes.append(len(counts))
        docs.terms.extend(map(vocab.__getitem__, counts))
        docs.tfs.extend(counts.values())
    return docs
