"""Build the word table in the default cache folder; print its wall and CPU seconds.

    python build_table.py
"""

from __future__ import annotations

import os
import time

from octomem.plugins.conversation.word_table import build_table, public_words, table_folder
from octomem.plugins.fastembed.embedder import FastembedEmbedder

embedder = FastembedEmbedder()
embedder.load()
words = public_words(embedder.vocabulary())
print("words", len(words), "load", os.getloadavg())
wall, cpu = time.perf_counter(), time.process_time()
table = build_table(embedder, words, table_folder())
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(f"build: wall {wall:.1f} s, process CPU {cpu:.1f} s, {1e3 * cpu / len(words):.2f} ms CPU "
      f"per word; load {os.getloadavg()}; table {None if table is None else table.vectors.shape}")
