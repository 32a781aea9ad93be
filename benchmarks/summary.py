"""The table ``octomem bench`` prints when it is done: one row per combination, as plain
lines that read at any width and when piped.

A row's name is never cut: when it is wider than the name column can be at this width
(the numbers keep :data:`NUMBERS_WIDTH` columns), it stands on a line of its own — folded
over several if it is wider than the whole line — and its numbers follow on the next
line, under their headers (the layout of ``search --explain`` at 80 columns).
"""

from __future__ import annotations

import math
from typing import Any

#: Column headers after the row's name, and their widths (the widest value each holds).
HEADERS = ("nDCG@10", "R@100", "MRR@10", "p vs best", "p50 ms", "p95 ms")
#: Space between columns.
GAP = "  "
#: Fewest columns the name column keeps beside the numbers.
MIN_NAME_WIDTH = 8


def _p_value(evaluation: Any, name: str) -> str:
    if name == evaluation.baseline:
        return "baseline"
    p = (evaluation.p_values.get(name) or {}).get("ndcg@10")
    if p is None or math.isnan(p):
        return "—"  # no baseline, or the same score on every query (no test)
    return f"{p:.2g}"


def cells(result: Any) -> list[tuple[str, list[str]]]:
    """Return ``(row name, the row's cells)`` of a :class:`~.command.BenchResult`, in the
    order the rows ran."""
    ev = result.evaluation
    rows = []
    for r in result.combos:
        name = r.combo.name
        scores = ev.scores[name]
        rows.append((name, [f"{scores['ndcg@10']:.4f}", f"{scores['recall@100']:.4f}",
                            f"{scores['mrr@10']:.4f}", _p_value(ev, name),
                            f"{r.percentile('total', 50):.2f}",
                            f"{r.percentile('total', 95):.2f}"]))
    return rows


def fold(text: str, width: int) -> list[str]:
    """Return ``text`` in pieces of at most ``width`` characters (a name has no spaces to
    wrap at, so it is folded where the line ends)."""
    width = max(width, 1)
    return [text[i:i + width] for i in range(0, len(text), width)] or [""]


def table_lines(title: str, rows: list[tuple[str, list[str]]], width: int) -> list[str]:
    """Return the title, a header line and each row as lines of at most ``width``
    characters (a folded name's pieces may each fill a line), never cutting a name.

    :param rows: ``(name, cells)`` with one cell per :data:`HEADERS` entry.
    :param width: the console's width in characters.
    """
    widths = [max([len(h)] + [len(c[i]) for _, c in rows]) for i, h in enumerate(HEADERS)]
    numbers = sum(len(GAP) + w for w in widths)
    longest = max([len("row")] + [len(name) for name, _ in rows])
    column = max(min(longest, width - numbers), MIN_NAME_WIDTH)

    def line(name: str, values: list[str] | tuple[str, ...]) -> str:
        return (name.ljust(column) + "".join(GAP + v.rjust(w)
                                             for v, w in zip(values, widths, strict=True)))

    lines = [title, line("row", HEADERS), "─" * min(width, column + numbers)]
    for name, values in rows:
        if len(name) <= column:
            lines.append(line(name, values))
        else:  # the name on its own line(s), its numbers under the headers
            lines += fold(name, width)
            lines.append(line("", values))
    return [x.rstrip() for x in lines]
