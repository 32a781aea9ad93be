"""Compare two ``same_answers.py`` files exactly: ``python compare_answers.py A.json B.json``
(or ``A.json A.json warm``: each answer's cold against its warm copy). Exit status 1 on
any difference, which is printed.

Every field must be equal, except: ``recency`` and ``score`` (``fused × (1 + recency)``)
to 1e-9 relative, as the recency bonus is measured from the wall clock of the recall
(~1e-15 of the score here); ``created_at`` and ``uri``, when and from which temporary
file each run ingested.
"""

from __future__ import annotations

import json
import math
import sys
from typing import Any

LOOSE = {"recency", "score"}
IGNORED = {"created_at", "uri"}


def differences(x: Any, y: Any, path: str, out: list[tuple[str, str]]) -> None:
    """Append each difference between ``x`` and ``y`` (below ``path``) to ``out``."""
    if type(x) is not type(y):
        out.append((path, "type"))
    elif isinstance(x, dict):
        if set(x) != set(y):
            out.append((path, "keys"))
            return
        for key in x:
            differences(x[key], y[key], f"{path}/{key}", out)
    elif isinstance(x, list):
        if len(x) != len(y):
            out.append((path, f"len {len(x)} {len(y)}"))
            return
        for i, (u, v) in enumerate(zip(x, y, strict=True)):
            differences(u, v, f"{path}/{i}", out)
    elif x != y:
        leaf = path.rsplit("/", 1)[-1]
        if leaf in IGNORED or (leaf in LOOSE and math.isclose(
                float(x), float(y), rel_tol=1e-9, abs_tol=1e-12)):
            return
        out.append((path, f"{x!r:.60} != {y!r:.60}"))


def main(argv: list[str]) -> int:
    """Compare; return the exit status."""
    first = json.load(open(argv[0]))
    if len(argv) > 2:  # cold against warm within one file
        second = first
        pairs = [(k + "|0", k + "|1") for k in sorted({k.rsplit("|", 1)[0] for k in first})]
    else:
        second = json.load(open(argv[1]))
        if set(first) != set(second):
            print("different questions")
            return 1
        pairs = [(k, k) for k in first]
    found: list[tuple[str, str]] = []
    for a, b in pairs:
        differences(first[a], second[b], a, found)
    print(len(pairs), "answers compared;", len(found), "differences")
    for item in found[:20]:
        print(item)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
