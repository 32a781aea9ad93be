"""Statement history, usage counters and the forget log of the ``sqlite`` storage.

Mixed into :class:`~octomem.plugins.sqlite_storage.SqliteStorage`; these are the
optional methods of :class:`~octomem.engine.arms.VersionedStorage`. Every write takes
the caller's transaction ``tx``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import apsw

from octomem.engine.types import Chunk, Document, ForgetRecord

from .sqlite_rows import CHUNK_COLUMNS, DOC_COLUMNS, chunk_of, document_of

_BATCH = 500
_FORGOT_COLUMNS = "id, kind, content_hash, created_at, forgotten_at, reason"


class SqliteHistory:
    """Supersede links, validity, recall counters and the forget log."""

    def connection(self) -> apsw.Connection:  # provided by SqliteStorage
        raise NotImplementedError

    def supersede(
        self, tx: apsw.Connection, document_id: str, superseded_by: str, valid_to: float
    ) -> list[int]:
        """Mark a document superseded by ``superseded_by`` from ``valid_to`` on, inside ``tx``.

        Its current chunks get the same ``valid_to`` (never earlier than their own
        ``valid_from``); chunks of earlier revisions keep theirs.

        :param valid_to: epoch seconds; the new statement's ``valid_from``.
        :returns: ids of the chunks whose validity changed, ascending.
        """
        ids = [r[0] for r in tx.execute(
            "SELECT id FROM chunks WHERE document_id = ? AND valid_to IS NULL ORDER BY id",
            (document_id,))]
        tx.execute(
            "UPDATE documents SET superseded_by = ?, valid_to = max(?, coalesce(event_time, "
            "created_at)) WHERE id = ?", (superseded_by, float(valid_to), document_id))
        tx.execute(
            "UPDATE chunks SET valid_to = max(?, valid_from) WHERE document_id = ? "
            "AND valid_to IS NULL", (float(valid_to), document_id))
        return ids

    def document_chunks(self, document_id: str) -> list[Chunk]:
        """Return every chunk of a document, all revisions, by revision then ordinal."""
        rows = self.connection().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE document_id = ? "
            "ORDER BY revision, ordinal, id", (document_id,)).fetchall()
        return [chunk_of(r) for r in rows]

    def noncurrent_chunk_ids(self, limit: int | None = None) -> list[int]:
        """Return ids of chunks that are not current (superseded or of an old revision).

        Uses a partial index, so it costs next to nothing while nothing was superseded.

        :param limit: at most this many ids (ascending); ``None`` for all.
        """
        lim = -1 if limit is None else max(int(limit), 0)
        return [r[0] for r in self.connection().execute(
            "SELECT id FROM chunks WHERE valid_to IS NOT NULL ORDER BY id LIMIT ?", (lim,))]

    def iter_documents(
        self, kinds: Sequence[str] = (), include_superseded: bool = False
    ) -> Iterator[Document]:
        """Yield stored documents, newest ``created_at`` first.

        :param kinds: only these kinds (empty: every kind).
        :param include_superseded: also superseded documents (default: current only).
        """
        where = ["1"]
        params: list[Any] = []
        if kinds:
            where.append(f"kind IN ({', '.join('?' * len(kinds))})")
            params.extend(kinds)
        if not include_superseded:
            where.append("valid_to IS NULL")
        last: tuple[Any, Any] | None = None
        while True:
            page = "" if last is None else " AND (created_at, rowid) < (?, ?)"
            rows = self.connection().execute(
                f"SELECT {DOC_COLUMNS}, rowid FROM documents WHERE {' AND '.join(where)}{page} "
                f"ORDER BY created_at DESC, rowid DESC LIMIT {_BATCH}",
                [*params, *(last or ())]).fetchall()
            yield from (document_of(r[:-1]) for r in rows)
            if len(rows) < _BATCH:
                return
            last = (rows[-1][6], rows[-1][-1])

    def record_recalls(self, tx: apsw.Connection, document_ids: Sequence[str], at: float) -> None:
        """Add one to ``recalls`` and set ``last_recalled_at = at`` on each document, in ``tx``.

        :param at: epoch seconds.
        """
        tx.execute(
            "UPDATE documents SET recalls = recalls + 1, last_recalled_at = ? "
            "WHERE id IN (SELECT value FROM json_each(?))",
            (float(at), json.dumps(list(dict.fromkeys(document_ids)))))

    def record_forgotten(self, tx: apsw.Connection, record: ForgetRecord) -> None:
        """Log that a statement was forgotten (replacing an older entry for the same id)."""
        tx.execute(
            f"INSERT OR REPLACE INTO forgotten ({_FORGOT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (record.id, record.kind, record.content_sha256, float(record.created_at),
             float(record.forgotten_at), record.reason))

    def get_forgotten(self, document_id: str) -> ForgetRecord | None:
        """Return the forget-log entry of ``document_id``, or ``None``."""
        row = self.connection().execute(
            f"SELECT {_FORGOT_COLUMNS} FROM forgotten WHERE id = ?", (document_id,)).fetchone()
        return None if row is None else ForgetRecord(*row)

    def iter_forgotten(self) -> Iterator[ForgetRecord]:
        """Yield every forget-log entry, oldest first."""
        rows = self.connection().execute(
            f"SELECT {_FORGOT_COLUMNS} FROM forgotten ORDER BY forgotten_at, id").fetchall()
        yield from (ForgetRecord(*r) for r in rows)

    def history_counts(self) -> dict[str, int]:
        """Return ``{"current": n, "superseded": n, "forgotten": n}`` documents."""
        conn = self.connection()
        row: Any = conn.execute(
            "SELECT count(*) FILTER (WHERE valid_to IS NULL), "
            "count(*) FILTER (WHERE valid_to IS NOT NULL), "
            "(SELECT count(*) FROM forgotten) FROM documents").fetchone()
        return {"current": int(row[0]), "superseded": int(row[1]), "forgotten": int(row[2])}
