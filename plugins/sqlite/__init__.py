"""Storage ``sqlite``: documents, chunks and metadata in one SQLite file per scope.

- :mod:`.storage` — the :class:`~.storage.SqliteStorage` arm (apsw, WAL, one connection
  per thread) and its registration;
- :mod:`.schema` — the schema and its migrations, one version at a time;
- :mod:`.reads` — documents, chunks, counts and metadata read (a mixin of the storage);
- :mod:`.rows` — rows to and from :class:`~octomem.engine.types.Document` /
  :class:`~octomem.engine.types.Chunk`;
- :mod:`.filters` — :class:`~octomem.engine.types.Filters` as SQL (SQLite dialect of
  :mod:`octomem.engine.sql`), used inside the ``fts5`` and ``sqlite-vec`` searches;
- :mod:`.chunk_cache` — recently read chunks in RAM, kept exact by the filter index's
  sync (a warmed store only);
- :mod:`.filter_index` — the same filters as numpy masks over an in-RAM copy of the
  chunks' fields, which the in-RAM arms rank under (loaded by their ``warm()``);
- :mod:`.tag_labels` — tags an older octomem stored decomposed or with a comma, made
  labels once (NFC, split), so that tags filters reach them;
- :mod:`.history` — supersede chains, usage counters and the forget log;
- :mod:`.calls` — the opt-in log of MCP tool calls (setting ``call_log``);
- :mod:`.changelog` — the change log that keeps in-RAM copies (postings, vectors,
  filter fields) in step; triggers on ``chunks`` (:data:`.schema.CHUNK_TRIGGERS`) log
  its rows;
- :mod:`.connection` — connections to the file (sqlite-vec loaded, WAL, busy timeout);
- :mod:`.snapshots` — snapshots of the in-RAM copies beside the file (``.npy``, memory
  mapped), trusted only when they match the store's identity and change log;
  :mod:`.snapshot_sync` starts a copy from one and writes them, :mod:`.filter_snapshot`
  is the filter index's;
- :mod:`.purge` — no copy of deleted text left in the files once a deleting transaction
  commits (secure delete, FTS5 merge, write-ahead log truncated, snapshots removed).
"""

from __future__ import annotations

from .storage import octomem_register_storages

__all__ = ["octomem_register_storages"]
