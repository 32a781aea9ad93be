"""The ``postgres-fts`` keyword arm: PostgreSQL full-text search (``ts_rank``, ``ts_rank_cd``).

Each chunk's title and text (one field, as the ``fts5`` arm and BEIR's BM25 baselines
index them) become a ``tsvector`` with a text search configuration (default
``english``: the Snowball English stemmer and PostgreSQL's English stop words), kept in
the table ``fts_<config>`` beside the chunks with a GIN index. A query's words are OR-ed
(``to_tsquery(config, 'w1 | w2 | ...')``), so a chunk matching more words ranks higher
and any string is a valid query (only letters and digits reach ``to_tsquery``).

Ranking (option ``ranking``) is one of PostgreSQL's two built-in functions:
``ts_rank_cd``, cover density ranking (Clarke, Cormack & Tudhope, "Relevance ranking for
one to three term queries", IPM 36(2), 2000), which scores how close together the query's
words occur; or ``ts_rank`` (the default), which scores how often they occur. Neither is
**BM25**: there is no inverse document frequency, so a very common word weighs as much
as a rare one, and no length normalisation unless ``normalization`` asks for it. And the
rank is computed for *every* matching chunk before the top ``k`` are taken (the GIN index
finds matches; it cannot rank them), so a query containing a very common word gets
slower as the corpus grows. On SciFact (plugin README) ``ts_rank`` reaches nDCG@10 0.58
and ``ts_rank_cd`` 0.42, against 0.69 for ``fts5``'s BM25; ``ts_rank`` is also faster,
hence the default.

Filters are part of the same statement (a join with ``chunks``), so they apply before
``ORDER BY``/``LIMIT``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext
from octomem.engine.types import Chunk, Filters, Hit, Run

from .storage import PostgresStorage, filter_sql, require_postgres

NAME = "postgres-fts"

# Runs of Unicode letters and digits; everything else (tsquery syntax included) separates words.
_WORD = re.compile(r"[^\W_]+")


class PostgresFtsOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``postgres-fts`` keyword arm (settings table ``[arms.postgres-fts]``)."""

    config: str = Field(
        default="english", pattern=r"^[a-z][a-z0-9_]{0,40}$",
        description="text search configuration (stemmer and stop words), e.g. english, simple",
    )
    ranking: Literal["ts_rank", "ts_rank_cd"] = Field(
        default="ts_rank",
        description="ranking function: ts_rank (word frequency) or ts_rank_cd (cover density); "
        "neither is BM25", json_schema_extra={"group": "retrieval"},
    )
    normalization: int = Field(
        default=0, ge=0, le=63,
        description="rank normalization bit mask (0: none; 1: divide by 1 + log(length); "
        "2: by length; 4: by mean harmonic distance between extents; 8: by unique words; "
        "16: by 1 + log(unique words); 32: rank / (rank + 1))",
        json_schema_extra={"group": "retrieval"},
    )
    max_terms: int = Field(
        default=256, ge=1, le=10_000, description="distinct query words kept (the first ones)",
        json_schema_extra={"group": "retrieval"},
    )


def query_words(text: str, max_terms: int = 256) -> list[str]:
    """Return the distinct lowercase words of ``text`` (letters and digits only), in order."""
    words: dict[str, None] = {}
    for match in _WORD.finditer(text.casefold()):
        words[match.group()] = None
        if len(words) >= max_terms:
            break
    return list(words)


def _body_sql(alias: str) -> str:
    """SQL of the indexed text of a chunk row: title, newline, text (text alone without title)."""
    return (f"CASE WHEN coalesce({alias}.title, '') = '' THEN {alias}.text "
            f"ELSE {alias}.title || E'\\n' || {alias}.text END")


class PostgresFtsKeywordArm:
    """Full-text search over a ``tsvector`` column with a GIN index, ranked by ``ts_rank``
    or ``ts_rank_cd``.

    The index table is created (and filled from the chunks already stored) the first time
    an arm with this ``config`` opens the scope; one table per configuration, so changing
    ``config`` builds a new index and leaves the old one as it was.

    :raises IncompatibleArmsError: ``storage`` is not the ``postgres`` storage.
    """

    name = NAME

    def __init__(self, storage: Any, options: PostgresFtsOptions | None = None) -> None:
        self.storage: PostgresStorage = require_postgres(storage, NAME)
        self.options = options or PostgresFtsOptions()
        self.table = f"fts_{self.options.config}"
        with self.storage.transaction() as tx:
            self._create(tx)

    def _create(self, tx: Any) -> None:
        exists = tx.execute("SELECT to_regclass(%s)", (self.table,)).fetchone()[0]
        if exists is not None:
            return
        config = self.options.config
        tx.execute(
            f"CREATE TABLE {self.table} (chunk_id bigint PRIMARY KEY "
            "REFERENCES chunks (id) ON DELETE CASCADE, tsv tsvector NOT NULL)")
        tx.execute(f"INSERT INTO {self.table} (chunk_id, tsv) "
                   f"SELECT c.id, to_tsvector(%s::regconfig, {_body_sql('c')}) FROM chunks AS c",
                   (config,))
        tx.execute(f"CREATE INDEX {self.table}_tsv ON {self.table} USING gin (tsv)")

    def index(self, tx: Any, chunks: Sequence[Chunk]) -> None:
        """Index stored chunks (title and text as one field) inside the storage transaction.

        Re-indexing a chunk id replaces its previous entry.
        """
        rows = [(c.id, f"{c.title}\n{c.text}" if c.title else c.text) for c in chunks]
        if not rows:
            return
        with tx.cursor() as cur:
            cur.executemany(
                f"INSERT INTO {self.table} (chunk_id, tsv) VALUES (%s, to_tsvector(%s::regconfig, "
                "%s)) ON CONFLICT (chunk_id) DO UPDATE SET tsv = EXCLUDED.tsv",
                [(cid, self.options.config, body) for cid, body in rows])

    def remove(self, tx: Any, chunk_ids: Sequence[int]) -> None:
        """Drop these chunk ids from the index inside ``tx``; unknown ids are ignored."""
        if chunk_ids:
            tx.execute(f"DELETE FROM {self.table} WHERE chunk_id = ANY(%s)",
                       ([int(i) for i in chunk_ids],))

    def search(self, text: str, filters: Filters, k: int) -> Run:
        """Rank chunks passing ``filters`` by ``ts_rank`` (or ``ts_rank_cd``) against the words
        of ``text``.

        :param text: any string; its words are OR-ed after stemming and stop-word removal.
        :param k: maximum number of hits, >= 1.
        :returns: hits best first, 1-based ranks, the ranking function's scores (higher is better,
            ties broken by ascending chunk id); empty when no word of ``text`` is indexed.
        """
        words = query_words(text, self.options.max_terms)
        if not words or k < 1:
            return []
        where, params = filter_sql(filters, "c")
        rows = self.storage.connection().execute(
            f"SELECT c.id, {self.options.ranking}(f.tsv, q, %s) AS score "
            f"FROM to_tsquery(%s::regconfig, %s) AS q, {self.table} AS f "
            f"JOIN chunks AS c ON c.id = f.chunk_id "
            f"WHERE f.tsv @@ q AND {where} ORDER BY score DESC, c.id LIMIT %s",
            [self.options.normalization, self.options.config, " | ".join(words), *params,
             int(k)]).fetchall()
        return [Hit(int(cid), float(s), rank, NAME) for rank, (cid, s) in enumerate(rows, 1)]


def build(options: PostgresFtsOptions, context: ArmContext) -> PostgresFtsKeywordArm:
    """Build the arm over ``context.storage``.

    :raises IncompatibleArmsError: the storage is not ``postgres``.
    """
    return PostgresFtsKeywordArm(context.storage, options)
