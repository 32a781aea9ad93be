"""Where a scope lives in PostgreSQL (one schema per scope root) and that schema's tables.

Scope separation: every octomem scope directory (``ArmContext.root``: a project's
``.octomem/`` folder, or the global data directory) gets its own PostgreSQL schema in
the database the URI names, so the ``local`` and ``global`` scopes — and every project —
stay apart exactly as their SQLite files do, while one server (and one URI in the
settings) serves them all. The schema name is derived from the root's absolute path
(:func:`schema_name`): readable where it can be, unique by a hash, at most 63 bytes.
The root is recorded in the schema's ``meta`` table (key ``scope_root``), and the schema's
name in the folder itself (:data:`MARKER`), so a project folder moved or renamed keeps its
memory (:func:`scope_schema`), as a moved SQLite file does.

Tables mirror the ``sqlite`` storage: ``documents`` (with supersede links, validity,
revision, recall counters), ``chunks`` (kind, tags, times and validity copied from the
document so arms filter without another join), ``forgotten`` (the forget log, never the
text) and ``meta``. Tags and metadata are ``jsonb``; times are epoch seconds in
``double precision``. ``row_counts`` keeps exact row counts of ``documents``,
``chunks`` and every vector table, maintained by statement-level triggers, so counting
costs one index lookup instead of a scan.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from octomem.engine.errors import OctomemError, StoreUnavailableError

from .failures import display_uri, reason
from .tag_labels import mark_labelled, relabel_stored_tags

SCHEMA_VERSION = 1
#: PostgreSQL's identifier limit (NAMEDATALEN - 1), in bytes.
MAX_IDENTIFIER = 63

TABLES = """
CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS row_counts (name text PRIMARY KEY, n bigint NOT NULL DEFAULT 0);
CREATE OR REPLACE FUNCTION count_rows() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE delta bigint;
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT count(*) INTO delta FROM new_rows;
    ELSE
        SELECT -count(*) INTO delta FROM old_rows;
    END IF;
    IF delta <> 0 THEN
        EXECUTE format('UPDATE %I.row_counts SET n = n + $1 WHERE name = $2', TG_TABLE_SCHEMA)
            USING delta, TG_TABLE_NAME;
    END IF;
    RETURN NULL;
END $fn$;
CREATE TABLE documents (
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,  -- insertion order (ties of created_at)
    id text PRIMARY KEY, text text NOT NULL, title text, uri text, kind text NOT NULL,
    tags jsonb NOT NULL DEFAULT '[]',          -- JSON array of strings
    created_at double precision NOT NULL,      -- seconds since the Unix epoch, UTC
    event_time double precision,
    metadata jsonb NOT NULL DEFAULT '{}',
    content_hash text NOT NULL,                -- sha256 hex of text, for find_documents
    supersedes text, superseded_by text,
    valid_to double precision,                 -- NULL while current
    revision integer NOT NULL DEFAULT 1,
    recalls bigint NOT NULL DEFAULT 0,
    last_recalled_at double precision
);
CREATE INDEX documents_content_hash ON documents (content_hash);
CREATE INDEX documents_created ON documents (created_at DESC, seq DESC);
CREATE TABLE chunks (  -- identity: an id is never reused, so stale index rows stay stale
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    document_id text NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    ordinal integer NOT NULL, text text NOT NULL, kind text NOT NULL,
    tags jsonb NOT NULL DEFAULT '[]', created_at double precision NOT NULL, title text, uri text,
    metadata jsonb NOT NULL DEFAULT '{}',
    valid_from double precision NOT NULL DEFAULT 0,  -- event time if given, else created_at
    valid_to double precision,                       -- NULL while current
    revision integer NOT NULL DEFAULT 1
);
CREATE INDEX chunks_document ON chunks (document_id, ordinal);
CREATE INDEX chunks_kind_created ON chunks (kind, created_at);
CREATE INDEX chunks_created ON chunks (created_at);
CREATE INDEX chunks_noncurrent ON chunks (id) WHERE valid_to IS NOT NULL;
CREATE INDEX chunks_tags ON chunks USING gin (tags jsonb_path_ops);
CREATE TABLE forgotten (  -- what was forgotten, when and why; never the text
    id text PRIMARY KEY, kind text NOT NULL, content_hash text NOT NULL,
    created_at double precision NOT NULL, forgotten_at double precision NOT NULL, reason text
);
"""


def counted_table_sql(table: str) -> str:
    """Return the DDL that keeps ``row_counts`` exact for ``table`` (a plain identifier)."""
    return f"""
INSERT INTO row_counts (name, n) VALUES ('{table}', 0) ON CONFLICT (name) DO NOTHING;
CREATE TRIGGER {table}_count_insert AFTER INSERT ON {table}
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION count_rows();
CREATE TRIGGER {table}_count_delete AFTER DELETE ON {table}
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION count_rows();
"""


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def schema_name(root: Path, prefix: str = "octomem") -> str:
    """Return the schema of the scope whose directory is ``root``.

    ``<prefix>_<last two path parts>_<12 hex digits of sha256(absolute path)>``, e.g.
    ``octomem_myproject_octomem_3fa1b2c3d4e5`` for ``/home/me/myproject/.octomem``:
    the same directory always maps to the same schema, two directories never share one.

    :param prefix: lowercase letters, digits and ``_``, starting with a letter.
    """
    resolved = Path(root).expanduser().resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogatepass")).hexdigest()[:12]
    room = MAX_IDENTIFIER - len(prefix) - len(digest) - 2
    slug = _slug("_".join(resolved.parts[-2:]))[:room].strip("_")
    return f"{prefix}_{slug}_{digest}" if slug else f"{prefix}_{digest}"


#: The file in a scope's folder that names its schema: written when the storage opens the
#: schema, moved along with the folder (trial 17 G12: a renamed project read as empty, and
#: its next write started a second schema).
MARKER = "postgres-schema"
_IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,62}")


def scope_schema(root: Path, prefix: str = "octomem") -> str:
    """Return the schema of the scope whose folder is ``root``: the one its :data:`MARKER`
    names (a moved or renamed folder keeps it), else :func:`schema_name` of the path. A
    marker that cannot be read or is no schema name of ours is passed over."""
    try:
        named = (Path(root) / MARKER).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return schema_name(root, prefix)
    return named if _IDENTIFIER.fullmatch(named) else schema_name(root, prefix)


def mark(root: Path, schema: str) -> None:
    """Write ``schema`` into ``root``'s :data:`MARKER` (``0600``) unless it says so already;
    a folder that cannot be written keeps no marker (the path still finds the schema)."""
    from octomem.engine.files import open_private

    path = Path(root) / MARKER
    try:
        if path.is_file() and path.read_text(encoding="utf-8").strip() == schema:
            return
        with open_private(path) as out:
            out.write(schema + "\n")
    except (OSError, UnicodeDecodeError):
        pass


def lock_key(name: str) -> int:
    """Return a signed 64-bit advisory-lock key for ``name`` (stable across processes)."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big", signed=True)


#: Advisory lock taken while any process creates or migrates a schema.
MIGRATION_LOCK = lock_key("octomem-postgres:migrate")


def migrate(tx: Any, schema: str, root: Path) -> None:
    """Create ``schema`` and its tables, or check an existing one's version (and make the
    tags an older octomem stored labels, once: :mod:`.tag_labels`).

    Runs inside the caller's transaction under an advisory lock, so two processes
    opening the same new scope at once do not race.

    :raises OctomemError: the schema was written by a newer octomem-postgres.
    """
    tx.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
    tx.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
    tx.execute("CREATE TABLE IF NOT EXISTS meta (key text PRIMARY KEY, value text NOT NULL)")
    row = tx.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        tx.execute(TABLES)
        tx.execute(counted_table_sql("documents"))
        tx.execute(counted_table_sql("chunks"))
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', %s), ('scope_root', %s)",
            (str(SCHEMA_VERSION), str(Path(root).expanduser().resolve())))
        mark_labelled(tx)
        return
    if int(row[0]) > SCHEMA_VERSION:
        raise OctomemError(
            f"schema {schema!r} has version {row[0]}, newer than the {SCHEMA_VERSION} this "
            "octomem-postgres supports; upgrade octomem-postgres")
    here = str(Path(root).expanduser().resolve())  # a folder moved with its marker
    tx.execute("UPDATE meta SET value = %s WHERE key = 'scope_root' AND value <> %s",
               (here, here))
    relabel_stored_tags(tx)  # an older octomem's tags, once


def store_exists(options: Any, root: Path) -> bool:
    """Return whether the scope whose folder is ``root`` has its schema, creating nothing.

    The folder is created with the schema (the engine makes it before the storage), so a
    missing folder answers without a connection; an existing one (it may hold only the
    project's ``config.toml``) is checked with one short connection.

    :raises StoreUnavailableError: the server cannot be reached (names the setting).
    """
    if not Path(root).is_dir():
        return False
    import psycopg

    schema = scope_schema(Path(root), options.schema_prefix)
    try:
        with psycopg.connect(options.uri, autocommit=True, application_name="octomem",
                             connect_timeout=options.connect_timeout_s) as conn:
            row = conn.execute("SELECT to_regclass(%s) IS NOT NULL",
                               (f'"{schema}".meta',)).fetchone()
    except psycopg.Error as exc:
        raise StoreUnavailableError(
            f"cannot connect to PostgreSQL at {display_uri(options.uri)} (setting "
            f"arms.postgres.uri): {reason(exc)}") from exc
    return bool(row and row[0])
