"""Supersede links, validity, recall counters and the forget log, in SQL both storages share."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..turns import TURN_KIND
from ..types import Chunk, Document, ForgetRecord
from .filters import SqlDialect

_FORGOT_COLUMNS = "id, kind, content_hash, created_at, forgotten_at, reason"
_PAGE = 500


class SqlHistory:
    """Supersede links, validity, recall counters and the forget log, in shared SQL.

    A mixin of a storage whose tables follow octomem's schema: the class provides
    :attr:`dialect`, ``connection()`` and the row converters ``chunk_columns`` /
    ``doc_columns`` / ``chunk_of`` / ``document_of``. These are the optional methods of
    :class:`~octomem.engine.arms.VersionedStorage`; every write takes the caller's
    transaction ``tx``.
    """

    dialect: SqlDialect
    chunk_columns: str
    doc_columns: str

    def connection(self) -> Any:  # provided by the storage
        raise NotImplementedError

    @staticmethod
    def chunk_of(row: Sequence[Any]) -> Chunk:  # provided by the storage
        raise NotImplementedError

    @staticmethod
    def document_of(row: Sequence[Any]) -> Document:  # provided by the storage
        raise NotImplementedError

    def _run(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> Any:
        return conn.execute(self.dialect.q(sql), tuple(params))

    def supersede(
        self, tx: Any, document_id: str, superseded_by: str, valid_to: float
    ) -> list[int]:
        """Mark a document superseded by ``superseded_by`` from ``valid_to`` on, inside ``tx``.

        Its current chunks get the same ``valid_to`` (never earlier than their own
        ``valid_from``); chunks of earlier revisions keep theirs.

        :param valid_to: epoch seconds; the new statement's ``valid_from``.
        :returns: ids of the chunks whose validity changed, ascending.
        """
        most = self.dialect.greatest
        ids = [r[0] for r in self._run(
            tx, "SELECT id FROM chunks WHERE document_id = ? AND valid_to IS NULL ORDER BY id",
            (document_id,)).fetchall()]
        self._run(
            tx, f"UPDATE documents SET superseded_by = ?, valid_to = {most}(?, "
            "coalesce(event_time, created_at)) WHERE id = ?",
            (superseded_by, float(valid_to), document_id))
        self._run(
            tx, f"UPDATE chunks SET valid_to = {most}(?, valid_from) WHERE document_id = ? "
            "AND valid_to IS NULL", (float(valid_to), document_id))
        return ids

    def hand_on(self, tx: Any, document_id: str, successor: str | None) -> list[str]:
        """Hand on what ``document_id`` superseded, before it is forgotten, inside ``tx``.

        Every document superseded by ``document_id`` is superseded by ``successor``
        instead, valid until ``successor`` became true (``document_id``'s ``valid_to``, on it
        and its current revision's chunks, never before their start), so that ``as_of`` a
        moment in the forgotten one's span answers with it, as if the forgotten statement
        had never been stored (trial 15 F3: such a moment answered nothing);
        ``successor``'s ``supersedes`` then names the first of them. When ``successor`` is
        ``None``, each becomes current again: ``superseded_by`` and ``valid_to`` cleared on
        it and on its current revision's chunks (older revisions' chunks keep theirs).

        :param successor: the id ``document_id`` is superseded by, or ``None``.
        :returns: ids of the documents handed on, ascending.
        """
        ids = [r[0] for r in self._run(
            tx, "SELECT id FROM documents WHERE superseded_by = ? ORDER BY id",
            (document_id,)).fetchall()]
        if not ids:
            return []
        if successor is not None:
            until = self._run(tx, "SELECT valid_to FROM documents WHERE id = ?",
                              (document_id,)).fetchone()
            if until is not None and until[0] is not None:
                most = self.dialect.greatest
                self._run(tx, f"UPDATE chunks SET valid_to = {most}(?, valid_from) WHERE "
                          "document_id IN (SELECT id FROM documents WHERE superseded_by = ?) "
                          "AND revision = (SELECT d.revision FROM documents AS d WHERE d.id = "
                          "chunks.document_id)", (float(until[0]), document_id))
                self._run(tx, f"UPDATE documents SET valid_to = {most}(?, coalesce(event_time, "
                          "created_at)) WHERE superseded_by = ?", (float(until[0]), document_id))
            self._run(tx, "UPDATE documents SET superseded_by = ? WHERE superseded_by = ?",
                      (successor, document_id))
            self._run(tx, "UPDATE documents SET supersedes = ? WHERE id = ? AND "
                      "supersedes = ?", (ids[0], successor, document_id))
            return ids
        self._run(tx, "UPDATE chunks SET valid_to = NULL WHERE document_id IN (SELECT id "
                  "FROM documents WHERE superseded_by = ?) AND revision = (SELECT d.revision "
                  "FROM documents AS d WHERE d.id = chunks.document_id)", (document_id,))
        self._run(tx, "UPDATE documents SET superseded_by = NULL, valid_to = NULL WHERE "
                  "superseded_by = ?", (document_id,))
        return ids

    def document_chunks(self, document_id: str) -> list[Chunk]:
        """Return every chunk of a document, all revisions, by revision then ordinal."""
        rows = self._run(
            self.connection(), f"SELECT {self.chunk_columns} FROM chunks WHERE document_id = ? "
            "ORDER BY revision, ordinal, id", (document_id,)).fetchall()
        return [self.chunk_of(r) for r in rows]

    def current_turn_chunks(self, uri: str) -> list[Chunk]:
        """Return the current chunks of turns (kind ``TURN``) read from ``uri`` (a
        transcript file), in id order: those an ingest of the file may find it no longer
        holds (:mod:`octomem.engine.memory.gone_turns`)."""
        rows = self._run(
            self.connection(), f"SELECT {self.chunk_columns} FROM chunks WHERE kind = ? AND "
            "uri = ? AND valid_to IS NULL ORDER BY id", (TURN_KIND, uri)).fetchall()
        return [self.chunk_of(r) for r in rows]

    def noncurrent_chunk_ids(self, limit: int | None = None) -> list[int]:
        """Return ids of chunks that are not current (superseded or of an old revision).

        Uses a partial index, so it costs next to nothing while nothing was superseded.

        :param limit: at most this many ids (ascending); ``None`` for all.
        """
        lim = self.dialect.no_limit if limit is None else max(int(limit), 0)
        return [r[0] for r in self._run(
            self.connection(),
            "SELECT id FROM chunks WHERE valid_to IS NOT NULL ORDER BY id LIMIT ?", (lim,))]

    def iter_documents(
        self, kinds: Sequence[str] = (), include_superseded: bool = False
    ) -> Iterator[Document]:
        """Yield stored documents, newest ``created_at`` first (ties: last stored first).

        :param kinds: only these kinds (empty: every kind).
        :param include_superseded: also superseded documents (default: current only).
        """
        where = [self.dialect.true]
        params: list[Any] = []
        if kinds:
            sql, kind_params = self.dialect.in_list("kind", kinds)
            where.append(sql)
            params.extend(kind_params)
        if not include_superseded:
            where.append("valid_to IS NULL")
        order = self.dialect.insert_order
        last: tuple[Any, Any] | None = None
        while True:
            page = "" if last is None else f" AND (created_at, {order}) < (?, ?)"
            rows = self._run(
                self.connection(),
                f"SELECT {self.doc_columns}, {order} FROM documents WHERE {' AND '.join(where)}"
                f"{page} ORDER BY created_at DESC, {order} DESC LIMIT {_PAGE}",
                [*params, *(last or ())]).fetchall()
            yield from (self.document_of(r[:-1]) for r in rows)
            if len(rows) < _PAGE:
                return
            last = (rows[-1][6], rows[-1][-1])

    def record_recalls(self, tx: Any, document_ids: Sequence[str], at: float) -> None:
        """Add one to ``recalls`` and set ``last_recalled_at = at`` on each document, in ``tx``.

        :param at: epoch seconds.
        """
        ids = list(dict.fromkeys(document_ids))
        if not ids:
            return
        sql, params = self.dialect.in_list("id", ids)
        self._run(tx, f"UPDATE documents SET recalls = recalls + 1, last_recalled_at = ? "
                  f"WHERE {sql}", [float(at), *params])

    def record_forgotten(self, tx: Any, record: ForgetRecord) -> None:
        """Log that a statement was forgotten (replacing an older entry for the same id)."""
        self._run(
            tx, f"INSERT INTO forgotten ({_FORGOT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, "
            "content_hash = EXCLUDED.content_hash, created_at = EXCLUDED.created_at, "
            "forgotten_at = EXCLUDED.forgotten_at, reason = EXCLUDED.reason",
            (record.id, record.kind, record.content_sha256, float(record.created_at),
             float(record.forgotten_at), record.reason))

    def get_forgotten(self, document_id: str) -> ForgetRecord | None:
        """Return the forget-log entry of ``document_id``, or ``None``."""
        row = self._run(
            self.connection(), f"SELECT {_FORGOT_COLUMNS} FROM forgotten WHERE id = ?",
            (document_id,)).fetchone()
        return None if row is None else ForgetRecord(*row)

    def iter_forgotten(self) -> Iterator[ForgetRecord]:
        """Yield every forget-log entry, oldest first."""
        rows = self._run(
            self.connection(),
            f"SELECT {_FORGOT_COLUMNS} FROM forgotten ORDER BY forgotten_at, id").fetchall()
        yield from (ForgetRecord(*r) for r in rows)

    def kind_counts(self) -> dict[str, int]:
        """Return current documents per kind (session start finds the statements' kinds)."""
        rows = self._run(self.connection(), "SELECT kind, count(*) FROM documents WHERE "
                         "valid_to IS NULL GROUP BY kind").fetchall()
        return {str(r[0]): int(r[1]) for r in rows}

    def has_tagged(self, tags: Sequence[str], kinds: Sequence[str] = ()) -> bool:
        """Return whether a current document carries every tag of ``tags``, and is of one
        of ``kinds`` when they are given (what a search filtered to them needs; one
        query, no document read)."""
        clauses, params = self.dialect.tags_sql("d", tags)
        if kinds:
            kind_sql, kind_params = self.dialect.in_list("d.kind", kinds)
            clauses, params = [*clauses, kind_sql], [*params, *kind_params]
        row = self._run(self.connection(), "SELECT 1 FROM documents d WHERE d.valid_to IS "
                        f"NULL AND {' AND '.join(clauses or ['1 = 1'])} LIMIT 1",
                        params).fetchone()
        return row is not None

    def most_recalled(self, kinds: Sequence[str], limit: int) -> list[Document]:
        """Return up to ``limit`` current documents of ``kinds`` that recall answers
        returned, most ``recalls`` first (ties: last recalled first)."""
        if not kinds:
            return []
        sql, params = self.dialect.in_list("kind", kinds)
        rows = self._run(
            self.connection(), f"SELECT {self.doc_columns} FROM documents WHERE {sql} AND "
            "valid_to IS NULL AND recalls > 0 ORDER BY recalls DESC, last_recalled_at DESC "
            f"LIMIT {int(limit)}", params).fetchall()
        return [self.document_of(r) for r in rows]

    def history_counts(self) -> dict[str, Any]:
        """Return ``{"current": n, "superseded": n, "forgotten": n}`` documents and
        ``"newest_document_at"``: the newest document's ``created_at`` (epoch seconds, UTC:
        a file's modification time, a statement's or turn's time of storing), or ``None``
        when none is stored."""
        row: Any = self._run(
            self.connection(),
            "SELECT count(*) FILTER (WHERE valid_to IS NULL), "
            "count(*) FILTER (WHERE valid_to IS NOT NULL), "
            "(SELECT count(*) FROM forgotten), max(created_at) FROM documents").fetchone()
        return {"current": int(row[0]), "superseded": int(row[1]), "forgotten": int(row[2]),
                "newest_document_at": None if row[3] is None else float(row[3])}
