"""``harness.py peers N`` run several times, alternating checkouts, with the ratios of each run.

    PEERS_OUT=DIR python benchmarks/results/peers/rounds.py N ROUNDS [--before PKG] [--lance]

Each round runs ``harness.py peers N`` in a fresh process for every checkout in turn:
``before`` (``PYTHONPATH=PKG``, where ``PKG/octomem`` holds an older checkout's
``engine``, ``plugins``, ``mcp_server`` and ``benchmarks``; the first in odd rounds,
the second in even ones, so that neither always runs first) and ``after`` (this
checkout). Printed per run: the 1-minute load average at its start and end, and
octomem / best exact peer for the filtered (10 %) and unfiltered rows, p50 wall
time and, in brackets, p50 process CPU time per call (the harness's columns): vector /
faiss, a filter's first search / faiss, keyword / bm25s, hybrid / faiss + bm25s. Then
per checkout the median and range of each ratio over the rounds. ``--lance`` is passed
on (LanceDB rows; not a ratio here, LanceDB is never the best exact peer at 10k).
"""
# ruff: noqa

import os
import statistics
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).with_name("harness.py")
#: (label, octomem row, peer row) of each ratio printed
RATIOS = (("vector", "octomem-vec", "faiss"), ("vector, new filter", "octomem-vec-newfilter", "faiss"),
          ("keyword", "octomem-kw", "bm25s"), ("hybrid", "octomem-hyb", "faiss+bm25s"))


def run(n, before, lance):
    """One ``peers`` run; returns ({row: (wall none, wall 10 %, cpu none, cpu 10 %)}, loads)."""
    env = dict(os.environ, RUST_LOG="error", LANCE_LOG="error")
    if before:
        env["PYTHONPATH"] = before
    load0 = os.getloadavg()[0]
    done = subprocess.run([sys.executable, str(HARNESS), "peers", str(n), *(["--lance"] if lance else [])],
                          env=env, capture_output=True, text=True)
    if done.returncode:  # e.g. no `harness.py build N` in PEERS_OUT: say so, not a traceback
        sys.exit(f"harness.py peers {n} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    out = done.stdout
    rows = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 5 and not parts[0].startswith("system"):
            try:
                rows[parts[0]] = tuple(float(p) for p in parts[1:])
            except ValueError:
                pass
    return rows, (load0, os.getloadavg()[0])


def ratios(rows):
    """{(label, filtered): (wall ratio, cpu ratio)}."""
    out = {}
    for label, ours, peer in RATIOS:
        if ours in rows and peer in rows:
            o, p = rows[ours], rows[peer]
            out[(label, True)] = (o[1] / p[1], o[3] / p[3])
            out[(label, False)] = (o[0] / p[0], o[2] / p[2])
    return out


def main(argv):
    n, rounds = int(argv[0]), int(argv[1])
    before = argv[argv.index("--before") + 1] if "--before" in argv else None
    lance = "--lance" in argv
    names = ["before", "after"] if before else ["after"]
    got = {name: [] for name in names}
    for r in range(rounds):
        for name in (names if r % 2 == 0 else names[::-1]):
            rows, (l0, l1) = run(n, before if name == "before" else None, lance)
            rat = ratios(rows)
            got[name].append(rat)
            vec = rows.get("octomem-vec"), rows.get("faiss")
            print(f"round {r + 1} {name:6} load {l0:.2f}->{l1:.2f} | 10 %: vector {vec[0][1]:.3f} ms "
                  f"faiss {vec[1][1]:.3f} ms | " + "; ".join(
                      f"{label}{'' if f else ' (none)'} {w:.2f}x ({c:.2f}x)"
                      for (label, f), (w, c) in rat.items()), flush=True)
    for name in names:
        for key in got[name][0]:
            walls = [r[key][0] for r in got[name]]
            cpus = [r[key][1] for r in got[name]]
            label = f"{key[0]}, {'10 %' if key[1] else 'none'}"
            print(f"{name:6} {label:28} median {statistics.median(walls):.2f}x "
                  f"({min(walls):.2f}-{max(walls):.2f}), cpu median {statistics.median(cpus):.2f}x "
                  f"({min(cpus):.2f}-{max(cpus):.2f})")


if __name__ == "__main__":
    main(sys.argv[1:])
