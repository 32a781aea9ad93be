"""The ``fts5`` keyword arm: BM25 over an SQLite FTS5 index inside the ``sqlite`` storage.

Ranking is Okapi BM25 (Robertson & Zaragoza, "The Probabilistic Relevance Framework:
BM25 and Beyond", Foundations and Trends in IR 3(4), 2009) as computed by FTS5's
``bm25()`` with its fixed constants k1 = 1.2 and b = 0.75. FTS5 returns the score
negated (more negative is better), so this arm reports ``-bm25()``: higher is better.

Title and text are indexed together as one field, as BEIR's BM25 baselines do
(Thakur et al., NeurIPS 2021 Datasets and Benchmarks), with FTS5's
``porter unicode61`` tokenizer (Unicode case folding, diacritics removed, Porter stemmer).

User text never reaches ``MATCH`` as FTS5 syntax: it is split into words by FTS5's own
``unicode61`` tokenizer (case-folded, diacritics removed, as the index holds them), English
stopwords are dropped, and each remaining term is double-quoted and OR-ed, so any
string is a valid query and a document matching more terms ranks higher
(:mod:`octomem.plugins.fts5.query`).

Once a long-running process has warmed it (``in_ram``), the arm ranks from an in-RAM
copy of the postings (:mod:`octomem.plugins.fts5.postings`), with FTS5's hits and
``bm25()`` scores bit for bit: p50 28.6 -> 2.3 ms at 100k chunks of the realistic scale
corpus, k = 10; filters are checked on its best rows, and when too few pass, FTS5
ranks joined to ``chunks``. Without the copy, ranking happens inside FTS5 before
``chunks`` is joined for the filters (:mod:`octomem.plugins.fts5.ranking`),
and for small k on large indexes only rows whose BM25 bound can still reach the top k
are ranked (:mod:`octomem.plugins.fts5.pruning`): the same hits and bit-identical
scores as one ``MATCH ... JOIN chunks ... ORDER BY bm25()`` statement; p50 28.9 ->
9.5 ms at 100k SciFact chunks, k = 10 (12.8 ms at k = 100).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Literal

import apsw
from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.hookspecs import hookimpl
from octomem.engine.types import Chunk, Filters, Hit, Run
from octomem.plugins.fts5.pruning import pruned_top
from octomem.plugins.fts5.query import (  # noqa: F401 (the query's terms: this module's API too)
    ENGLISH_STOPWORDS,
    QUESTION_WORDS,
    Clitics,
    is_question,
    match_expression,
    phrases,
    query_terms,
)
from octomem.plugins.fts5.ranking import Fts5Ranker
from octomem.plugins.sqlite import changelog as vector_log
from octomem.plugins.sqlite.storage import SqliteStorage, require_sqlite

if TYPE_CHECKING:  # numpy-backed: imported when first used, so `octomem status` stays light
    from octomem.plugins.fts5.postings import PostingIndex

NAME = "fts5"
TABLE = "fts5_chunks"


class Fts5Options(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``fts5`` keyword arm (settings table ``[arms.fts5]``)."""

    stopwords: bool = Field(
        default=True, description="drop Lucene's English stop words from queries",
        json_schema_extra={"group": "retrieval"},
    )
    question_words: bool = Field(
        default=True, json_schema_extra={"group": "retrieval"},
        description="drop question scaffolding (what, when, did, does, ...; "
        "QUESTION_WORDS) from queries shaped as questions (ending in '?' or opening with "
        "one of these words). LoCoMo tune (conv-26/30/41/42/43) BM25 nDCG@10 0.469 -> "
        "0.505; no SciFact query is question-shaped",
    )
    clitics: Clitics = Field(
        default="s", json_schema_extra={"group": "retrieval"},
        description="clitics taken off a query's words before they are split: 'none', "
        "'s' (the possessive or contracted \"'s\": \"the user's job\" asks for user and "
        "job, not for an \"s\" that every possessive matches) or 'all' (also 't, 'd, 'll, "
        "'m, 're, 've). Chosen on the tune splits against 'none': LoCoMo tune "
        "(conv-26/30/41/42/43) nDCG@10 0.6736 -> 0.6741, LongMemEval tune and SciFact train "
        "unchanged; 'all' cost LongMemEval tune own kept 0.966 -> 0.931",
    )
    max_terms: int = Field(
        default=256, ge=1, le=10_000, description="distinct query terms kept (the first ones)",
        json_schema_extra={"group": "retrieval"},
    )
    pruning: bool = Field(
        default=True,
        description="skip rows whose BM25 bound cannot reach the top k (same hits and "
        "scores): in FTS5's own ranking and in the in-RAM postings (MaxScore)",
        json_schema_extra={"group": "runtime"},
    )
    in_ram: Literal["warm", "always", "off"] = Field(
        default="warm",
        description="rank from an in-RAM copy of the postings (same hits and scores): "
        "'warm' once a long-running process (MCP server, bench) has loaded it, "
        "'always' loading it on the first search, 'off' never",
        json_schema_extra={"group": "runtime"},
    )


def _has_index(conn: apsw.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (TABLE,)).fetchone()
    return row is not None


def _indexed(tx: apsw.Connection, rowids: list[int]) -> list[int]:
    """Return which of ``rowids`` the index holds, read from FTS5's ``<table>_docsize``
    shadow table (one row per indexed rowid; all of them when it is missing). One query: a
    ``DELETE`` per new chunk, which held nothing, was ~20 % of indexing 10k new chunks."""
    try:
        rows = tx.execute(f"SELECT id FROM {TABLE}_docsize WHERE id IN "
                          "(SELECT value FROM json_each(?))", (json.dumps(rowids),))
        return [r[0] for r in rows]
    except apsw.SQLError:  # no such table (an index built with columnsize=0)
        return rowids


#: The body FTS5 indexes for a ``chunks`` row: title and text as one field, as
#: :meth:`Fts5KeywordArm.index` joins them (``f"{title}\n{text}"``, the text alone
#: without a title).
_BODY = "CASE WHEN coalesce(title, '') = '' THEN text ELSE title || char(10) || text END"
#: Fewest chunks indexed by one ``INSERT ... SELECT`` over their id range (fewer take the
#: row path, whose statements cost no more: not tuned; bulk ingest's runs are ~1,000).
RANGE_MIN = 16


def _index_range(tx: apsw.Connection, ids: list[int]) -> bool:
    """Index stored chunks of consecutive ascending ids (as bulk ingest stores a run:
    :func:`~octomem.plugins.sqlite.bulk.insert_chunks`) by one statement reading their
    bodies from ``chunks``, ids the index held deleted first, and return True; else
    (other ids, fewer than :data:`RANGE_MIN`, a row missing) write nothing, return False.
    """
    if len(ids) < RANGE_MIN or ids != list(range(ids[0], ids[0] + len(ids))):
        return False
    first, last = ids[0], ids[-1]
    if tx.execute("SELECT count(*) FROM chunks WHERE id BETWEEN ? AND ?", (first, last)).get \
            != len(ids):
        return False
    try:
        old = [(r[0],) for r in tx.execute(
            f"SELECT id FROM {TABLE}_docsize WHERE id BETWEEN ? AND ?", (first, last))]
    except apsw.SQLError:  # no such table (an index built with columnsize=0)
        old = [(i,) for i in ids]
    if old:
        tx.executemany(f"DELETE FROM {TABLE} WHERE rowid = ?", old)
    tx.execute(f"INSERT INTO {TABLE} (rowid, body) SELECT id, {_BODY} FROM chunks "
               "WHERE id BETWEEN ? AND ? ORDER BY id", (first, last))
    return True


def _create_index(tx: apsw.Connection) -> None:
    """Create the FTS5 table and index the chunks already stored (title + text as one field)."""
    tx.execute(
        f"CREATE VIRTUAL TABLE {TABLE} USING fts5("
        "body, content='', contentless_delete=1, tokenize='porter unicode61')"
    )
    tx.execute(
        f"INSERT INTO {TABLE} (rowid, body) SELECT id, {_BODY} FROM chunks")


def merge(tx: apsw.Connection) -> None:
    """Merge the index's segments into one (FTS5's ``'optimize'``), which drops the terms
    of deleted rows from the file (:mod:`octomem.plugins.sqlite.purge`). Cost: the whole
    index rewritten, ~0.08 s at 10k chunks and ~0.8 s at 100k chunks of ~65 tokens
    (2 cores, load 5-7); run once per transaction that removed rows, not per row."""
    tx.execute(f"INSERT INTO {TABLE} ({TABLE}) VALUES ('optimize')")


class Fts5KeywordArm:
    """BM25 keyword search over an FTS5 index kept in the ``sqlite`` storage's file.

    The index is contentless (``content=''``, ``contentless_delete=1``): it stores terms
    only, keyed by chunk id; text is read from the ``chunks`` table. When the index is
    first created, chunks already in the storage are indexed.

    :param storage: the ``sqlite`` storage whose transactions the index writes through.
    :raises IncompatibleArmsError: ``storage`` is not the ``sqlite`` storage.
    """

    name = NAME

    def __init__(self, storage: Any, options: Fts5Options | None = None) -> None:
        self.storage: SqliteStorage = require_sqlite(storage, NAME)
        self.options = options or Fts5Options()
        self._postings: PostingIndex | None = None
        self._postings_lock = threading.Lock()
        if not _has_index(self.storage.connection()):
            with self.storage.transaction() as tx:
                if not _has_index(tx):  # another process may have created it meanwhile
                    _create_index(tx)

    @property
    def postings(self) -> PostingIndex:
        """The in-RAM copy of the postings (:mod:`.postings`), created on first use: its
        module imports numpy, which building the arm (``octomem status``) does not need."""
        if self._postings is None:
            with self._postings_lock:
                if self._postings is None:
                    from octomem.plugins.fts5.postings import PostingIndex

                    postings = PostingIndex(TABLE)
                    postings.snapshot.db = self.storage.snapshot_db
                    self._postings = postings
        return self._postings

    def index(self, tx: apsw.Connection, chunks: Sequence[Chunk]) -> None:
        """Index stored chunks (title and text as one field) inside the storage transaction.

        Re-indexing a chunk id replaces its previous entry. The change log
        (:mod:`~octomem.plugins.sqlite.changelog`) records the ids for the in-RAM copies.
        """
        ids = [chunk.id for chunk in chunks]
        if _index_range(tx, ids):
            vector_log.record(tx, TABLE, ids, stored=True)
            return
        bodies = {c.id: f"{c.title}\n{c.text}" if c.title else c.text for c in chunks}
        if bodies:  # one statement each for the batch (a repeated id: its last body)
            old = _indexed(tx, list(bodies))
            if old:
                tx.executemany(f"DELETE FROM {TABLE} WHERE rowid = ?", [(i,) for i in old])
            tx.executemany(f"INSERT INTO {TABLE} (rowid, body) VALUES (?, ?)", bodies.items())
        vector_log.record(tx, TABLE, ids)

    def index_stored(self, tx: apsw.Connection, chunk_ids: Sequence[int]) -> bool:
        """Index stored chunks of consecutive ascending ids, as bulk ingest stores a run,
        by one statement reading their bodies from ``chunks`` (:func:`_index_range`) and
        return True; False (nothing written) for other ids: :meth:`index` them then.
        (:class:`~octomem.engine.arms.StoredKeywordIndex`: no chunk made per stored chunk.)
        """
        ids = list(chunk_ids)
        if not _index_range(tx, ids):
            return False
        vector_log.record(tx, TABLE, ids, stored=True)  # _index_range read every one
        return True

    def remove(self, tx: apsw.Connection, chunk_ids: Sequence[int]) -> None:
        """Drop these chunk ids from the index inside ``tx``; unknown ids are ignored.

        Their terms leave the file too: a contentless FTS5 table only marks a deleted row
        (a tombstone) and keeps its terms in the segment until a merge, so when any id was
        indexed the whole index is merged (:func:`merge`) once before ``tx`` commits.
        """
        held = _indexed(tx, [int(c) for c in chunk_ids]) if chunk_ids else []
        for chunk_id in held:
            tx.execute(f"DELETE FROM {TABLE} WHERE rowid = ?", (int(chunk_id),))
        if held:
            self.storage.before_commit(tx, f"{TABLE}-merge", merge)
        vector_log.record(tx, TABLE, chunk_ids)

    def warm(self) -> bool:
        """Load the in-RAM copy of the postings now (``in_ram`` "warm" or "always"):
        ~3 s per 100k chunks of ~65 tokens on 2 cores (~45 s at 1M), and the storage's
        in-RAM filter index (:mod:`octomem.plugins.sqlite.filter_index`, ~1 s per 100k).

        :returns: False when there is nothing to load (``in_ram = "off"``).
        """
        if self.options.in_ram == "off":
            return False
        self.postings.sync(self.storage.connection())
        self.storage.fields.sync(self.storage.connection())
        return True

    def _tokens(self, conn: apsw.Connection, terms: Sequence[str]) -> list[str] | None:
        """Return each term's FTS5 token, or ``None`` when one is not exactly one token
        (its phrase would need positions; FTS5 ranks that query)."""
        from octomem.plugins.fts5.tokens import cap_token, tokenizer

        tok = tokenizer(conn)
        tokens = []
        for term in terms:
            found = tok(term.encode(), apsw.FTS5_TOKENIZE_QUERY, None, include_offsets=False,
                        include_colocated=False)
            if len(found) != 1:
                return None
            tokens.append(cap_token(found[0]))
        return tokens

    def _in_ram(self, terms: Sequence[str], filters: Filters, k: int) -> list[Any] | None:
        """Rank from the in-RAM postings when they apply, else return ``None``.

        They apply when loaded (or ``in_ram`` is "always", or a process that did not
        warm them restores them from a snapshot that matches the store),
        :attr:`PostingIndex.exact`, and every term is one token. With the storage's filter
        index loaded, the filters become a mask and only postings of passing chunks are
        scored (exact);
        without it, their best ``2k`` rows are checked against the filters in SQL, and
        when fewer than ``k`` pass, FTS5 joined to ``chunks`` ranks instead
        (:meth:`Fts5Ranker.top`). The copies' syncs and any filter reads share one read
        transaction.
        """
        mode = self.options.in_ram
        if mode == "off":
            return None
        conn = self.storage.connection()
        if mode == "warm" and not self.postings.loaded and not (
                self.storage.snapshot_db is not None
                and self.postings.sync(conn, restore_only=True)):
            return None  # not warmed, and no snapshot to start from (a one-shot process)
        tokens = self._tokens(conn, terms)
        if tokens is None:
            return None
        fields, prune = self.storage.fields, self.options.pruning
        with self.postings.lock, conn:
            self.postings.sync(conn)
            if not self.postings.exact:
                return None
            if (fields.loaded or mode == "always"  # the filters as a mask: rank under it
                    or fields.sync(conn, restore_only=True)):
                fields.sync(conn)
                return self.postings.ranked(tokens, k, fields.mask(filters), prune)
            first = partial(self.postings.ranked, tokens, prune=prune)
            return Fts5Ranker(conn, TABLE).top(match_expression(terms), filters, k, first=first)

    def row_count(self) -> int:
        """Return the rows of the index as ``bm25()`` counts them for its idf (FTS5's
        ``xRowCount``, one read of its totals record): the relevance's keyword strength
        (:func:`octomem.engine.relevance.keyword_strength`) divides the top score by its
        log."""
        return Fts5Ranker(self.storage.connection(), TABLE).row_count()

    def search(self, text: str, filters: Filters, k: int) -> Run:
        """Rank chunks passing ``filters`` by BM25 against the terms of ``text``.

        Filters apply before the top ``k`` is cut: ``k`` matching chunks come back
        whenever they exist (see :meth:`Fts5Ranker.top`).

        :param text: any string; its word tokens minus stopwords are OR-ed.
        :param filters: kind, tag, time and metadata restrictions.
        :param k: maximum number of hits, >= 1.
        :returns: hits best first, 1-based ranks, scores ``-bm25()`` (higher is better,
            ties broken by ascending chunk id); empty when ``text`` has no usable term.
        """
        terms = query_terms(text, self.options.stopwords, self.options.max_terms,
                            self.options.question_words, self.options.clitics)
        if not terms or k < 1:
            return []
        rows = self._in_ram(terms, filters, int(k))
        if rows is not None:
            return [Hit(cid, float(s), rank, NAME) for rank, (cid, s) in enumerate(rows, 1)]
        ranker = Fts5Ranker(self.storage.connection(), TABLE)
        if self.options.pruning:
            rows = pruned_top(ranker, phrases(terms), filters, int(k))
        else:
            rows = ranker.top(match_expression(terms), filters, int(k))
        return [Hit(cid, float(s), rank, NAME) for rank, (cid, s) in enumerate(rows, 1)]


def build(options: Fts5Options, context: ArmContext) -> Fts5KeywordArm:
    """Build the arm over ``context.storage``.

    :raises IncompatibleArmsError: the storage is not ``sqlite``.
    """
    return Fts5KeywordArm(context.storage, options)


@hookimpl
def octomem_register_keyword_arms() -> list[ArmSpec]:
    """Offer the ``fts5`` keyword arm (requires the ``sqlite`` storage)."""
    return [
        ArmSpec(
            kind="keyword", name=NAME, factory=build, options_model=Fts5Options,
            requires_storage=frozenset({"sqlite"}),
            description="BM25 over SQLite FTS5 (porter unicode61, k1=1.2, b=0.75)",
        )
    ]
