"""Storage ``sqlite``: documents, chunks and metadata in one SQLite file per scope.

- :mod:`.storage` — the :class:`~.storage.SqliteStorage` arm (apsw, WAL, one connection
  per thread) and its registration;
- :mod:`.schema` — the schema and its migrations, one version at a time;
- :mod:`.rows` — rows to and from :class:`~octomem.engine.types.Document` /
  :class:`~octomem.engine.types.Chunk`;
- :mod:`.filters` — :class:`~octomem.engine.types.Filters` as SQL (SQLite dialect of
  :mod:`octomem.engine.sql`), used inside the ``fts5`` and ``sqlite-vec`` searches;
- :mod:`.history` — supersede chains, usage counters and the forget log;
- :mod:`.calls` — the opt-in log of MCP tool calls (setting ``call_log``);
- :mod:`.changelog` — the change log that keeps in-RAM copies (postings, vectors) in step.
"""

from __future__ import annotations

from .storage import octomem_register_storages

__all__ = ["octomem_register_storages"]
