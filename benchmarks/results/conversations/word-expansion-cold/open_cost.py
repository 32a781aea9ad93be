"""What a fresh process pays to open the word table (reading the vocabulary, the list, its
sha256 and the file's, the index), as a one-shot ``octomem search`` does on its first
question.

    python open_cost.py
"""

from __future__ import annotations

import os
import time

from octomem.plugins.conversation.word_table import open_table, public_words, table_folder
from octomem.plugins.fastembed.embedder import FastembedEmbedder

embedder = FastembedEmbedder()
model_id = embedder.model_id
wall, cpu = time.perf_counter(), time.process_time()
table = open_table(table_folder(), model_id, embedder.dim, public_words(embedder.vocabulary()))
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
print(f"opened: {table is not None}; {1e3 * cpu:.0f} ms CPU, {1e3 * wall:.0f} ms wall; "
      f"load {os.getloadavg()[0]:.1f}")
