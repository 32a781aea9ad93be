"""One query's embedding with the bundled MiniLM on this machine, taken apart: the calling
thread's CPU (1-thread session: onnxruntime runs on the calling thread, so CPU time is
what other load inflates least) of the tokenizer, ``session.run``, the pooling and the
embedder's check, over the 300 first SciFact claims; ``session.run`` against the input's
length in tokens; and session-option variants interleaved call by call, each checked for
the same output bits.

    python benchmarks/results/synthetic/2026-12-02/spr/embed.py [ROUNDS]
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import onnxruntime as ort

from octomem.plugins.fastembed.embedder import FastembedEmbedder
from octomem.plugins.fastembed.query import session_options

CLAIMS = "/work/shared/data/scifact/queries.jsonl"


def cpu_p50(calls: list[Callable[[], Any]], rounds: int) -> float:
    """Median calling-thread CPU of each call, ms."""
    times = []
    for _ in range(rounds):
        for call in calls:
            start = time.thread_time_ns()
            call()
            times.append(time.thread_time_ns() - start)
    return float(np.median(times)) / 1e6


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with open(CLAIMS, encoding="utf-8") as fh:
        texts = [json.loads(line)["text"] for line in fh][:300]
    embedder = FastembedEmbedder()
    embedder.load()
    query = embedder._query
    assert query is not None
    tok, session = query.tokenizer, query.session
    feeds = []
    for text in texts:
        ids = np.array([tok.encode(text).ids], dtype=np.int64)
        feeds.append({"input_ids": ids, "token_type_ids": np.zeros_like(ids)})
    lengths = [f["input_ids"].shape[1] for f in feeds]
    out = session.run(None, feeds[0])[0]
    pool = query.prepared([texts[0]])
    print(f"{embedder.model_id}, graph {embedder._bundled_path.name}; tokens p50 "
          f"{np.median(lengths):.0f} (p90 {np.percentile(lengths, 90):.0f}); "
          f"load {os.getloadavg()[0]:.2f}")
    parts = {
        "embed_query (whole)": [lambda t=t: embedder.embed_query(t) for t in texts],
        "tokenize (encode_batch of 1)": [lambda t=t: tok.encode_batch([t]) for t in texts],
        "tokenize (encode)": [lambda t=t: tok.encode(t) for t in texts],
        "session.run": [lambda f=f: session.run(None, f) for f in feeds],
        "run + pooling (prepared)": [pool],
        "embedder._checked": [lambda: embedder._checked(out.mean(axis=1))],
    }
    for name, calls in parts.items():
        print(f"  {name:30s} CPU p50 {cpu_p50(calls, rounds):.3f} ms")
    print("session.run against the input's length (repeated token), CPU p50 ms:")
    for length in (3, 8, 16, 24, 32, 48, 64, 128):
        ids = np.full((1, length), 2000, dtype=np.int64)
        ids[0, 0], ids[0, -1] = 101, 102
        feed = {"input_ids": ids, "token_type_ids": np.zeros_like(ids)}
        print(f"  {length:4d} tokens {cpu_p50([lambda f=feed: session.run(None, f)] * 50, 3):.3f}")
    variants: dict[str, Any] = {"shipped (1 thread, no spin)": session}
    for name, threads, spin, entries, level in (
        ("2 threads", 2, False, (), None),
        ("2 threads, spinning", 2, True, (), None),
        ("ORT_ENABLE_ALL at start", 1, False, (), ort.GraphOptimizationLevel.ORT_ENABLE_ALL),
        ("set_denormal_as_zero", 1, False, (("session.set_denormal_as_zero", "1"),), None),
        ("x64quantprecision", 1, False, (("session.x64quantprecision", "1"),), None),
        ("disable_prepacking", 1, False, (("session.disable_prepacking", "1"),), None),
    ):
        options = session_options(threads, spin, False)
        if level is not None:
            options.graph_optimization_level = level
        for key, value in entries:
            options.add_session_config_entry(key, value)
        variants[name] = ort.InferenceSession(str(embedder._bundled_path), options,
                                              providers=["CPUExecutionProvider"])
    reference = [session.run(None, f)[0] for f in feeds]
    times: dict[str, list[int]] = {name: [] for name in variants}
    names = list(variants)
    for _ in range(rounds):
        for i, feed in enumerate(feeds):
            for name in names[i % len(names):] + names[:i % len(names)]:
                wall = time.perf_counter_ns()
                variants[name].run(None, feed)
                times[name].append(time.perf_counter_ns() - wall)
    base = np.array(times[names[0]], float)
    print(f"session variants, wall per call interleaved (2 threads use a second core, so "
          f"wall, not CPU); load {os.getloadavg()[0]:.2f}:")
    for name, sess in variants.items():
        same = all(np.array_equal(sess.run(None, f)[0], r)
                   for f, r in zip(feeds, reference, strict=True))
        v = np.array(times[name], float)
        print(f"  {name:30s} same bits {same}; wall p50 {np.median(v) / 1e6:.3f} ms, p10 "
              f"{np.percentile(v, 10) / 1e6:.3f}; median ratio {np.median(v / base):.3f}")


if __name__ == "__main__":
    main()
