"""Reranker ``conversation``: structure-aware ranking of conversation turns.

- :mod:`.features` — what a turn is (:class:`~.features.Turn`, from its metadata) and its
  features for one query, from the arms' runs only.
- :mod:`.cues` — what a question says about whose turn answers it (the assistant's
  earlier words, or neither speaker's life).
- :mod:`.expansion` — the ``expansion`` column: a turn's words that mean the question's.
- :mod:`.word_table` — the vectors of the tokenizer's whole words, built once per machine.
- :mod:`.own_match` — whether a turn matches the query itself; the reranker's lifts never
  put a turn that does not above one that does.
- :mod:`.options` — :class:`~.options.ConversationOptions` (``[arms.conversation]``).
- :mod:`.ranker` — :class:`~.ranker.ConversationReranker`, its weights (``weights.json``,
  fitted by ``benchmarks/fit_conversation.py`` on tune splits) and its registration.
"""

from __future__ import annotations

from .ranker import octomem_register_rerankers

__all__ = ["octomem_register_rerankers"]
