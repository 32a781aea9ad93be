"""The memory domain: statements and documents over the ``local`` and ``global`` scopes.

Built on the engine core (pipeline, arms, settings); the CLI and the MCP server call it.

- :mod:`.facade` — :class:`~.facade.Memory` (remember, recall, forget, ingest) and
  :func:`~.facade.open_memory`, the one call every front end makes first;
- :mod:`.remember` — one statement in: supersedes, handoffs, identical and near duplicates;
- :mod:`.scopes` — the two scopes, one pipeline each, and where they live;
- :mod:`.recall`, :mod:`.scoped_search`, :mod:`.scoped_fusion`, :mod:`.recency` — the read
  path over both scopes;
- :mod:`.forget`, :mod:`.ingest`, :mod:`.sources` — forgetting, and files/BEIR rows in;
- :mod:`.times` — parsing and rendering event times, ``as_of``;
- :mod:`.transfer`, :mod:`.view` — export/import, and the Markdown/item views;
- :mod:`.versions` — item versions, so a write made on a stale read is refused;
- :mod:`.models`, :mod:`.results` — the JSON-ready answers the CLI and MCP tools return.
"""
