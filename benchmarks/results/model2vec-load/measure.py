"""Time loading the default model2vec model (PyPI tokenlearn-static-model) two ways, each
in a fresh process, alternated: model2vec 0.10's ``StaticModel.from_pretrained`` (how the
plugin loaded it before) and the plugin's own reader (``octomem_model2vec.static.load``:
tokenizers and safetensors directly). Each process embeds the same texts after loading
and prints the vectors' sha256, so the two readers are checked bit-identical on every
round. Writes ``report.md`` beside this file with the load average before and after.

Run: ``python benchmarks/results/model2vec-load/measure.py [--rounds N]`` (needs the
plugin and model2vec installed: ``pip install "./plugins/contrib/octomem-model2vec[test]"``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

#: What one process runs: import, load (timed apart), embed, print JSON.
CHILD = r"""
import hashlib, json, sys, time
t0 = time.perf_counter()
import numpy as np
from octomem_model2vec import default_model_folder
how = sys.argv[1]
folder, _ = default_model_folder()
if how == "model2vec":
    from model2vec import StaticModel
else:
    from octomem_model2vec.static import load
t1 = time.perf_counter()
if how == "model2vec":
    model = StaticModel.from_pretrained(str(folder), max_length=256)
    encode = lambda texts: model.encode(texts, use_multiprocessing=False, show_progress_bar=False)
else:
    model = load(folder, 256)
    encode = model.encode
t2 = time.perf_counter()
texts = json.loads(sys.argv[2])
vectors = np.ascontiguousarray(encode(texts), dtype=np.float32)
print(json.dumps({"imports_s": t1 - t0, "load_s": t2 - t1,
                  "sha256": hashlib.sha256(vectors.tobytes()).hexdigest()}))
"""
TEXTS = ["Which database should the billing service use?",
         "PostgreSQL 16, because invoices need row-level security.",
         "Nightly backups go to the cold-storage bucket in Frankfurt.", "", "naïve café ü",
         "word " * 600]
WAYS = ("model2vec", "direct")


def run(way: str) -> dict[str, float | str]:
    """Run one fresh process loading the model ``way``; returns its timings and digest."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, way, json.dumps(TEXTS)],
                          capture_output=True, text=True, check=True)
    result = json.loads(done.stdout)
    result["process_s"] = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="processes per way (default 5)")
    args = parser.parse_args()
    before = os.getloadavg()
    rows: dict[str, list[dict]] = {w: [] for w in WAYS}
    for n in range(args.rounds):
        for way in WAYS if n % 2 == 0 else WAYS[::-1]:  # alternated, each first half the time
            rows[way].append(run(way))
    after = os.getloadavg()
    digests = {r["sha256"] for way in WAYS for r in rows[way]}
    med = {w: {k: statistics.median(r[k] for r in rows[w])
               for k in ("imports_s", "load_s", "process_s")} for w in WAYS}
    lines = [
        "# Loading the default model2vec model: model2vec's loader vs the plugin's own",
        "",
        f"{args.rounds} fresh processes per way, alternated; `python measure.py --rounds "
        f"{args.rounds}`; load average {before[0]:.1f} / {before[1]:.1f} before, "
        f"{after[0]:.1f} / {after[1]:.1f} after (1 / 5 min), 2 cores shared.",
        "",
        "| way | load (median s) | each round (s) | library imports (median s) | "
        "whole process (median s) |",
        "|---|---|---|---|---|",
    ]
    for way, label in zip(WAYS, ("model2vec `StaticModel.from_pretrained`",
                                  "`octomem_model2vec.static.load`"), strict=True):
        each = ", ".join(f"{r['load_s']:.2f}" for r in rows[way])
        lines.append(f"| {label} | {med[way]['load_s']:.2f} | {each} | "
                     f"{med[way]['imports_s']:.2f} | {med[way]['process_s']:.2f} |")
    ratio = med["model2vec"]["load_s"] / med["direct"]["load_s"]
    lines += ["", f"Load {ratio:.1f}x faster (ratio of medians). Vectors of the "
              f"{len(TEXTS)} texts: {len(digests)} distinct sha256 over all "
              f"{2 * args.rounds} processes "
              f"({'bit-identical' if len(digests) == 1 else 'DIFFER'}).",
              "", "The plugin's reader imports tokenizers and safetensors inside `load` (so in "
              "its load column); `from model2vec import StaticModel` (tokenizers, joblib, "
              "tqdm, ...) is in model2vec's library imports.", ""]
    out = Path(__file__).with_name("report.md")
    out.write_text("\n".join(lines), encoding="utf-8")
    print(out.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
