"""Schema of the ``sqlite`` storage and its migrations, one version at a time.

Version 2 (memory semantics) adds the history of a statement — ``supersedes``,
``superseded_by``, ``valid_to``, ``revision`` — and its usage — ``recalls``,
``last_recalled_at`` — to ``documents``; ``valid_from``, ``valid_to`` and ``revision``
to ``chunks`` (copied from the document, so arms filter on them without a join); and
the ``forgotten`` log, which keeps why and when a statement was forgotten but never
its text.

Version 3 (one copy of the text) changes no table: a document stored as one chunk holding
exactly its text keeps that text in ``chunks`` only, and ``documents.text`` is ``''``
(:mod:`.rows`: ``DOC_SELECT`` reads it back; 10k one-chunk documents: 3.0 of 28.9 MB). A
version-2 file opens as it is (its rows keep the text twice and read the same; documents
written from then on keep it once) and is marked version 3, so that an older octomem, which
would read ``''``, refuses it instead.

The content-hash index is on the hash's first :data:`HASH_PREFIX` hex digits
(:data:`HASH_INDEX`), not on all 64: an index, not a schema change, swapped in any file
that has the old one, in the opening transaction (an older octomem finds documents by text
the same, by reading the table).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import apsw

from octomem.engine.errors import OctomemError
from octomem.engine.turns import CONVERSATION, POSITION, TURN_KIND

from . import changelog

SCHEMA_VERSION = 3
#: The ``meta`` key saying the file's free space holds no old text: set in a file created
#: by a version that zeroes deleted content (``secure_delete``), or once :mod:`.purge` has
#: rewritten an older file (``VACUUM``).
ZEROED_KEY = "free_space_zeroed"

SCHEMA = """
CREATE TABLE documents (
    id TEXT PRIMARY KEY, text TEXT NOT NULL, title TEXT, uri TEXT, kind TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',      -- JSON array of strings
    created_at REAL NOT NULL,             -- seconds since the Unix epoch, UTC
    event_time REAL,
    metadata TEXT NOT NULL DEFAULT '{}',  -- JSON object
    content_hash TEXT NOT NULL,           -- sha256 hex of text, for find_documents
    supersedes TEXT,                      -- id of the statement this one replaced
    superseded_by TEXT,                   -- id of the statement that replaced this one
    valid_to REAL,                        -- when it stopped being current; NULL: current
    revision INTEGER NOT NULL DEFAULT 1,  -- +1 per changed re-ingest
    recalls INTEGER NOT NULL DEFAULT 0,   -- recall answers that returned it
    last_recalled_at REAL
);
CREATE INDEX documents_kind_created ON documents(kind, created_at);
CREATE TABLE chunks (  -- AUTOINCREMENT: an id is never reused, so stale index rows stay stale
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    document_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    ordinal INTEGER NOT NULL, text TEXT NOT NULL, kind TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]', created_at REAL NOT NULL, title TEXT, uri TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    valid_from REAL NOT NULL DEFAULT 0,   -- event time if given, else created_at
    valid_to REAL,                        -- NULL while current
    revision INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX chunks_document ON chunks(document_id, ordinal);
CREATE INDEX chunks_kind_created ON chunks(kind, created_at);
CREATE INDEX chunks_created ON chunks(created_at);
CREATE INDEX chunks_noncurrent ON chunks(id) WHERE valid_to IS NOT NULL;
"""

FORGOTTEN = """
CREATE TABLE IF NOT EXISTS forgotten (  -- what was forgotten, when and why; never the text
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, content_hash TEXT NOT NULL,
    created_at REAL NOT NULL, forgotten_at REAL NOT NULL, reason TEXT
);
"""
#: The opt-in MCP call log (:mod:`.calls`); created in every file, old or new, when it is
#: opened (no schema version: nothing reads it but the call log itself).
CALL_LOG = """
CREATE TABLE IF NOT EXISTS call_log (  -- one MCP tool call; never a stored or returned text
    id INTEGER PRIMARY KEY, at REAL NOT NULL, tool TEXT NOT NULL, outcome TEXT NOT NULL,
    latency_ms REAL NOT NULL, hits INTEGER,
    arguments TEXT NOT NULL DEFAULT '{}',  -- JSON: allowlisted values, lengths of the rest
    ids TEXT NOT NULL DEFAULT '[]'         -- JSON: ids the result named
);
"""

_V1_TO_V2 = """
ALTER TABLE documents ADD COLUMN supersedes TEXT;
ALTER TABLE documents ADD COLUMN superseded_by TEXT;
ALTER TABLE documents ADD COLUMN valid_to REAL;
ALTER TABLE documents ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
ALTER TABLE documents ADD COLUMN recalls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE documents ADD COLUMN last_recalled_at REAL;
CREATE INDEX IF NOT EXISTS documents_kind_created ON documents(kind, created_at);
ALTER TABLE chunks ADD COLUMN valid_from REAL NOT NULL DEFAULT 0;
ALTER TABLE chunks ADD COLUMN valid_to REAL;
ALTER TABLE chunks ADD COLUMN revision INTEGER NOT NULL DEFAULT 1;
CREATE INDEX IF NOT EXISTS chunks_noncurrent ON chunks(id) WHERE valid_to IS NOT NULL;
UPDATE chunks SET valid_from = coalesce((
    SELECT coalesce(d.event_time, d.created_at) FROM documents AS d
    WHERE d.id = chunks.document_id), created_at);
"""


#: Finds a conversation's turns by position (the neighbours a recall shows as context).
#: An index, not a schema change: created in any file that lacks it, older octomems
#: ignore it.
TURN_INDEX = f"""
CREATE INDEX IF NOT EXISTS chunks_turn ON chunks(
    json_extract(metadata, '$.{CONVERSATION}'), json_extract(metadata, '$.{POSITION}'))
    WHERE kind = '{TURN_KIND}';
"""

#: Hex digits of ``content_hash`` that :data:`HASH_INDEX` keeps (32 bits: at a million
#: documents ~100 pairs share a prefix; the full hash is compared after).
HASH_PREFIX = 8
#: The expression :data:`HASH_INDEX` indexes; a query finds it by this exact text.
HASH_KEY = f"substr(content_hash, 1, {HASH_PREFIX})"
#: Finds the documents of one text (:meth:`~.reads.SqliteReads.find_documents`) by the
#: prefix of its hash, replacing the index on the whole 64-digit hash (until Dec 3): its
#: entries are ~1/3 the size, so a bulk ingest writes fewer index pages. Ingest of 10k
#: documents, rows built before the clock, thread CPU (``sql_parts.py``, round 11, load
#: 9.2-9.6): the SQL 0.156-0.165 -> 0.147-0.153 s, pages written 4,100 -> 3,230.
HASH_INDEX = f"""
DROP INDEX IF EXISTS documents_content_hash;
CREATE INDEX IF NOT EXISTS documents_content_prefix ON documents({HASH_KEY});
"""

#: Triggers writing every updated and deleted ``chunks`` row to the change log (name
#: ``chunks``) in the writing transaction, for the in-RAM filter index
#: (:mod:`.filter_index`): any writer keeps it exact, another process or an older octomem
#: included. Inserted rows are logged by the storage's two inserts themselves, a batch by
#: one statement (:func:`log_inserted`): an insert trigger ran per row, ~10 ms of the
#: ~0.2 s that storing 10k chunks takes (``benchmarks/results/ingest/2026-12-04-round14``).
CHUNK_TRIGGERS = "".join(
    f"CREATE TRIGGER IF NOT EXISTS chunks_log_{event.lower()} AFTER {event} ON chunks BEGIN "
    f"INSERT INTO {changelog.TABLE} (table_name, chunk_id) VALUES ('chunks', {row}.id); END;"
    for event, row in (("UPDATE", "NEW"), ("DELETE", "OLD")))
#: The per-row insert trigger of stores written before December 4 (dropped on open,
#: :func:`update_triggers`; an older octomem that opens the store again creates it again,
#: and then logs its own inserts through it).
_OLD_INSERT_TRIGGER = "DROP TRIGGER IF EXISTS chunks_log_insert;"
#: The change log's name of ``chunks`` rows (:data:`.filter_index.LOG_NAME`).
CHUNKS_LOG = "chunks"


def log_inserted(tx: apsw.Connection, chunk_ids: Sequence[int]) -> None:
    """Log ``chunks`` rows just inserted inside ``tx`` (one statement: :func:`.changelog.record`),
    as :data:`CHUNK_TRIGGERS` logs updated and deleted ones.

    :param chunk_ids: the new rows' ids, in insert order.
    """
    changelog.record(tx, CHUNKS_LOG, chunk_ids, stored=True)


def migrate(tx: apsw.Connection, path: Path, set_meta: Callable[[str, str], None]) -> None:
    """Create the schema in a new file, or bring an older one up to :data:`SCHEMA_VERSION`.

    Runs inside the caller's write transaction, so a failed migration leaves the file
    as it was.

    The version is read from the tables themselves (:func:`tables_version`) whenever the
    ``meta`` row is missing, not a number, or says another version than the tables do
    (it is then rewritten): a missing row with tables present once made the migration
    fail with "table documents already exists", an older number "duplicate column name:
    supersedes".

    :param set_meta: writes one ``meta`` key inside the same transaction.
    :raises OctomemError: the file's schema is newer than this octomem, or its tables
        are of no version octomem knows (naming the file).
    """
    tx.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    tx.execute(CALL_LOG)
    row = tx.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    stated = int(row[0]) if row is not None and str(row[0]).strip().isdigit() else None
    if stated is not None and stated > SCHEMA_VERSION:
        raise OctomemError(
            f"{path} has schema version {stated}, newer than the {SCHEMA_VERSION} "
            "this octomem supports; upgrade octomem"
        )
    found = tables_version(tx, path)
    if found is None:
        tx.execute(SCHEMA)
        tx.execute(FORGOTTEN)
        tx.execute(TURN_INDEX)
        tx.execute(HASH_INDEX)
        set_meta("schema_version", str(SCHEMA_VERSION))
        set_meta(ZEROED_KEY, "1")  # written with secure_delete from the start (.purge)
        _log_chunks(tx)
        update_triggers(tx)
        return
    version = stated if found == 2 and stated == 3 else found  # 3 has 2's tables
    if stated != version:
        set_meta("schema_version", str(version))
    if version < 2:
        tx.execute(_V1_TO_V2)
        tx.execute(FORGOTTEN)
    tx.execute(TURN_INDEX)
    tx.execute(HASH_INDEX)
    if version < SCHEMA_VERSION:
        set_meta("schema_version", str(SCHEMA_VERSION))
    _log_chunks(tx)


def tables_version(tx: apsw.Connection, path: Path) -> int | None:
    """Return the schema version the tables show (``None``: no ``documents`` table yet;
    2 for version 3 too, whose tables are version 2's).

    :raises OctomemError: the tables are of no version octomem knows.
    """
    columns = {row[1] for row in tx.execute("PRAGMA table_info(documents)")}
    if not columns:
        return None
    chunk_columns = {row[1] for row in tx.execute("PRAGMA table_info(chunks)")}
    v1 = {"id", "text", "kind", "created_at", "content_hash"}
    v2 = {"supersedes", "superseded_by", "valid_to", "revision", "recalls", "last_recalled_at"}
    if v1 <= columns and v2 <= columns and {"valid_from", "valid_to"} <= chunk_columns:
        return 2
    if v1 <= columns and not columns & v2 and "id" in chunk_columns:
        return 1
    raise OctomemError(
        f"{path}: its tables match no schema_version octomem knows (documents has "
        f"{', '.join(sorted(columns))}); restore it from a backup or an `octomem export`, "
        "or move it away to start empty")


#: The ``meta`` key a deleted ``documents`` row sets (:data:`UNPURGED_TRIGGER`) and this
#: octomem's purge clears in the same transaction (:func:`.purge.mark`): when a store
#: opens with it set, a writer that does not purge (an older octomem, still running
#: beside this one during an upgrade) deleted text, and :func:`.purge.catch_up` purges.
UNPURGED_KEY = "unpurged_delete"
#: Sets :data:`UNPURGED_KEY` for any writer's deletion, an older octomem's included (the
#: trigger is in the file).
UNPURGED_TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS documents_unpurged AFTER DELETE ON documents BEGIN "
    f"INSERT INTO meta (key, value) VALUES ('{UNPURGED_KEY}', OLD.id) "
    "ON CONFLICT(key) DO UPDATE SET value = excluded.value; END;")


def _log_chunks(tx: apsw.Connection) -> None:
    """Create the change log and the triggers logging ``chunks`` rows (idempotent)."""
    changelog.create(tx)
    tx.execute(CHUNK_TRIGGERS)


def triggers_due(conn: apsw.Connection) -> bool:
    """Return whether the file still has the per-row insert trigger of before December 4
    or lacks :data:`UNPURGED_TRIGGER` (:func:`update_triggers` would write)."""
    names = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = "
                                        "'trigger'")}
    return "chunks_log_insert" in names or "documents_unpurged" not in names


def update_triggers(tx: apsw.Connection) -> None:
    """Drop the old insert trigger and create :data:`UNPURGED_TRIGGER`, inside ``tx``.

    Apart from :func:`migrate`, in a transaction of its own: a file that cannot be written
    (read-only) still opens for reading without them (it takes no writes to log or purge).
    """
    tx.execute(_OLD_INSERT_TRIGGER + UNPURGED_TRIGGER)
