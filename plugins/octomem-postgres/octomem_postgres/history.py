"""Statement history, usage counters and the forget log of the ``postgres`` storage.

Mixed into :class:`~octomem_postgres.storage.PostgresStorage`; these are the optional
methods of :class:`~octomem.engine.arms.VersionedStorage`, with the same semantics as
the ``sqlite`` storage's. Every write takes the caller's transaction ``tx``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from octomem.engine.types import Chunk, Document, ForgetRecord

from .rows import CHUNK_COLUMNS, DOC_COLUMNS, chunk_of, document_of

_BATCH = 500
_FORGOT_COLUMNS = "id, kind, content_hash, created_at, forgotten_at, reason"


class PostgresHistory:
    """Supersede links, validity, recall counters and the forget log."""

    def connection(self) -> Any:  # provided by PostgresStorage
        raise NotImplementedError

    def supersede(
        self, tx: Any, document_id: str, superseded_by: str, valid_to: float
    ) -> list[int]:
        """Mark a document superseded by ``superseded_by`` from ``valid_to`` on, inside ``tx``.

        Its current chunks get the same ``valid_to`` (never earlier than their own
        ``valid_from``); chunks of earlier revisions keep theirs.

        :param valid_to: epoch seconds; the new statement's ``valid_from``.
        :returns: ids of the chunks whose validity changed, ascending.
        """
        rows = tx.execute(
            "UPDATE chunks SET valid_to = greatest(%s, valid_from) WHERE document_id = %s "
            "AND valid_to IS NULL RETURNING id", (float(valid_to), document_id)).fetchall()
        tx.execute(
            "UPDATE documents SET superseded_by = %s, valid_to = greatest(%s, coalesce(event_time, "
            "created_at)) WHERE id = %s", (superseded_by, float(valid_to), document_id))
        return sorted(r[0] for r in rows)

    def document_chunks(self, document_id: str) -> list[Chunk]:
        """Return every chunk of a document, all revisions, by revision then ordinal."""
        rows = self.connection().execute(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE document_id = %s "
            "ORDER BY revision, ordinal, id", (document_id,)).fetchall()
        return [chunk_of(r) for r in rows]

    def noncurrent_chunk_ids(self, limit: int | None = None) -> list[int]:
        """Return ids of chunks that are not current (superseded or of an old revision).

        Uses a partial index, so it costs next to nothing while nothing was superseded.

        :param limit: at most this many ids (ascending); ``None`` for all.
        """
        return [r[0] for r in self.connection().execute(
            "SELECT id FROM chunks WHERE valid_to IS NOT NULL ORDER BY id LIMIT %s",
            (None if limit is None else max(int(limit), 0),))]

    def iter_documents(
        self, kinds: Sequence[str] = (), include_superseded: bool = False
    ) -> Iterator[Document]:
        """Yield stored documents, newest ``created_at`` first (ties: last stored first).

        :param kinds: only these kinds (empty: every kind).
        :param include_superseded: also superseded documents (default: current only).
        """
        where = ["TRUE"]
        params: list[Any] = []
        if kinds:
            where.append("kind = ANY(%s)")
            params.append(list(kinds))
        if not include_superseded:
            where.append("valid_to IS NULL")
        last: tuple[Any, Any] | None = None
        while True:
            page = "" if last is None else " AND (created_at, seq) < (%s, %s)"
            rows = self.connection().execute(
                f"SELECT {DOC_COLUMNS}, seq FROM documents WHERE {' AND '.join(where)}{page} "
                f"ORDER BY created_at DESC, seq DESC LIMIT {_BATCH}",
                [*params, *(last or ())]).fetchall()
            yield from (document_of(r[:-1]) for r in rows)
            if len(rows) < _BATCH:
                return
            last = (rows[-1][6], rows[-1][-1])

    def record_recalls(self, tx: Any, document_ids: Sequence[str], at: float) -> None:
        """Add one to ``recalls`` and set ``last_recalled_at = at`` on each document, in ``tx``.

        :param at: epoch seconds.
        """
        tx.execute(
            "UPDATE documents SET recalls = recalls + 1, last_recalled_at = %s WHERE id = ANY(%s)",
            (float(at), list(dict.fromkeys(document_ids))))

    def record_forgotten(self, tx: Any, record: ForgetRecord) -> None:
        """Log that a statement was forgotten (replacing an older entry for the same id)."""
        tx.execute(
            f"INSERT INTO forgotten ({_FORGOT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, "
            "content_hash = EXCLUDED.content_hash, created_at = EXCLUDED.created_at, "
            "forgotten_at = EXCLUDED.forgotten_at, reason = EXCLUDED.reason",
            (record.id, record.kind, record.content_sha256, float(record.created_at),
             float(record.forgotten_at), record.reason))

    def get_forgotten(self, document_id: str) -> ForgetRecord | None:
        """Return the forget-log entry of ``document_id``, or ``None``."""
        row = self.connection().execute(
            f"SELECT {_FORGOT_COLUMNS} FROM forgotten WHERE id = %s", (document_id,)).fetchone()
        return None if row is None else ForgetRecord(*row)

    def iter_forgotten(self) -> Iterator[ForgetRecord]:
        """Yield every forget-log entry, oldest first."""
        rows = self.connection().execute(
            f"SELECT {_FORGOT_COLUMNS} FROM forgotten ORDER BY forgotten_at, id").fetchall()
        yield from (ForgetRecord(*r) for r in rows)

    def history_counts(self) -> dict[str, int]:
        """Return ``{"current": n, "superseded": n, "forgotten": n}`` documents."""
        row: Any = self.connection().execute(
            "SELECT count(*) FILTER (WHERE valid_to IS NULL), "
            "count(*) FILTER (WHERE valid_to IS NOT NULL), "
            "(SELECT count(*) FROM forgotten) FROM documents").fetchone()
        return {"current": int(row[0]), "superseded": int(row[1]), "forgotten": int(row[2])}
