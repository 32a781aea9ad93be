"""The query embedding with and without AMX: run this twice, the second time with
``LD_PRELOAD=noamx.so`` (``noamx.c``: onnxruntime's request for the AMX tile state is
refused, so MLAS runs its AVX-512 VNNI int8 kernels), alternating; prints the calling
thread's CPU and wall p50 of ``embed_query`` over the 300 first SciFact claims (after 20
warm-up calls) and a digest of the vectors (the same digest: the same bits).

    python benchmarks/results/synthetic/2026-12-02/spr/amx.py [ROUNDS]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time

import numpy as np

from octomem.plugins.fastembed.embedder import FastembedEmbedder


def main() -> None:
    with open("/work/shared/data/scifact/queries.jsonl", encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh][:300]
    embedder = FastembedEmbedder()
    embedder.load()
    for text in texts[:20]:
        embedder.embed_query(text)
    cpu, wall, digest = [], [], hashlib.sha256()
    for r in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2):
        for text in texts:
            c, w = time.thread_time_ns(), time.perf_counter_ns()
            vector = embedder.embed_query(text)
            cpu.append(time.thread_time_ns() - c)
            wall.append(time.perf_counter_ns() - w)
            if r == 0:
                digest.update(vector.tobytes())
    mode = "no AMX (LD_PRELOAD)" if "noamx" in os.environ.get("LD_PRELOAD", "") else "AMX"
    print(f"{mode:20s} CPU p50 {np.median(cpu) / 1e6:.3f} ms, wall p50 {np.median(wall) / 1e6:.3f}"
          f" ms; vectors {digest.hexdigest()[:16]}; load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
