"""Keyword arm ``fts5``: BM25 over an SQLite FTS5 index inside the ``sqlite`` storage.

- :mod:`.arm` — :class:`~.arm.Fts5KeywordArm` (index, remove, search) and its registration;
- :mod:`.query` — a query's text as search terms (stop words, question words, quoting);
- :mod:`.ranking` — the top-k statements that rank inside FTS5, then check the filters;
- :mod:`.postings` — the in-RAM copy of the postings, ranked with ``bm25()``'s own
  arithmetic (FTS5's scores bit for bit), kept in step through the change log;
  :mod:`.postings_snapshot` its snapshot beside the file; :mod:`.maxscore` its exact
  MaxScore pruning (common terms looked up for the candidates, not scanned);
  :mod:`.tokens` the chunks as FTS5 tokenizes them (its tokenizer, its token cut);
- :mod:`.bounds` and :mod:`.pruning` — exact MaxScore/WAND-style pruning of FTS5's OR-queries.
"""

from __future__ import annotations

from .arm import octomem_register_keyword_arms

__all__ = ["octomem_register_keyword_arms"]
