"""The opt-in log of MCP tool calls (setting ``call_log``) in the scope's own SQLite file.

Mixed into :class:`~octomem.plugins.sqlite.storage.SqliteStorage`; these are the methods
of :class:`~octomem.engine.arms.CallLogStorage`. One row per call in table ``call_log``
(created with the schema, :data:`~.schema.CALL_LOG`): time, tool, outcome, latency,
hits, and two JSON columns, the arguments' summary and the ids the result named (never
a stored or returned text: the server summarises before it writes). At most
:data:`KEEP_CALLS` rows are kept; older ones are deleted in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw

from octomem.engine.types import CallRecord

#: Rows the call log keeps per scope, newest (about 1-2 MiB at this size; a bound, not a
#: tuned value: enough for a few days of an agent's calls).
KEEP_CALLS = 20_000


class SqliteCallLog:
    """``append_calls`` / ``recent_calls`` over table ``call_log``."""

    def connection(self) -> apsw.Connection:  # provided by SqliteStorage
        raise NotImplementedError

    def append_calls(self, tx: apsw.Connection, records: Sequence[CallRecord]) -> None:
        """Append ``records`` in ``tx``; drop rows beyond the newest :data:`KEEP_CALLS`."""
        tx.executemany(
            "INSERT INTO call_log (at, tool, outcome, latency_ms, hits, arguments, ids) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(r.at, r.tool, r.outcome, r.latency_ms, r.hits,
              json.dumps(dict(r.arguments), ensure_ascii=False, sort_keys=True),
              json.dumps(list(r.ids))) for r in records],
        )
        tx.execute("DELETE FROM call_log WHERE id <= (SELECT max(id) FROM call_log) - ?",
                   (KEEP_CALLS,))

    def recent_calls(self, limit: int) -> list[CallRecord]:
        """Return the last ``limit`` calls, oldest first."""
        rows: list[Any] = self.connection().execute(
            "SELECT at, tool, outcome, latency_ms, hits, arguments, ids FROM call_log "
            "ORDER BY id DESC LIMIT ?", (max(0, limit),)).fetchall()
        return [CallRecord(at, tool, outcome, latency_ms, hits, json.loads(arguments),
                           tuple(json.loads(ids)))
                for at, tool, outcome, latency_ms, hits, arguments, ids in reversed(rows)]
