"""A recall answer as people read it, at any width and when piped: one line per hit.

Each hit is one line — rank, relevance (or, without one, the fused score), scope, then
the hit itself (its title, then its text on one line) cut to the width that is left with
"…". ``--explain`` adds, before the hit, each arm's own rank and raw score
(``rank (score)``, ``–`` where that arm did not find the hit) and the recency bonus,
under a header: a compact table, one row per hit, the hit's text beside its row when at
least :data:`EXPLAIN_INLINE_MIN` columns are left for it, else on up to
:data:`SNIPPET_LINES` lines under its row (at 80 columns three arms leave ~26: too few to
read). A conversation hit asked with ``--context N`` has its neighbouring turns on dim
lines above (``↑1`` the turn just before) and below (``↓1``) it, and a blank line parts it
from the next hit. When stdout is not a terminal, Rich uses ``COLUMNS`` or 80 columns, so
piped output has the same shape; the ``--max-tokens`` list of what was cut and dedup's
``collapsed`` lines break only between entries.
"""

from __future__ import annotations

import textwrap
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..memory.recall import RecallAnswer
from ..turns import TURN_KIND
from .layout import packed

#: Fewest characters a hit keeps for its text however narrow the terminal; below that,
#: the line wraps instead (a hit cut to nothing says nothing).
MIN_HIT_WIDTH = 24
#: Space between columns.
GAP = "  "
#: Fewest characters a hit's text keeps beside the ``--explain`` columns; with less room
#: (at 80 columns, three arms and the recency bonus leave ~26), the text goes on lines of
#: its own under its row instead, so it can be read.
EXPLAIN_INLINE_MIN = 48
#: Lines a hit's text may take under its ``--explain`` row (the last cut with "…").
SNIPPET_LINES = 2
#: Indent of a hit's text under its ``--explain`` row (past the rank column).
SNIPPET_INDENT = 5


def one_line(text: str) -> str:
    """Return ``text`` with every run of whitespace (newlines included) as one space."""
    return " ".join(text.split())


def cut(text: str, width: int) -> str:
    """Return ``text`` cut to at most ``width`` characters, ending in "…" when cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def hit_text(chunk: Any) -> str:
    """Return what a hit shows: ``title — text``, the text without a leading heading that
    repeats the title (a Markdown file's ``# Title``), all on one line. A conversation
    turn's title is its time: the turn's words come first (``text (time)``), so a cut line
    still shows what was said."""
    text = one_line(chunk.text)
    title = one_line(chunk.title or "")
    if not title:
        return text
    if getattr(chunk, "kind", None) == TURN_KIND:
        return f"{text} ({title})"
    for lead in (f"# {title}", title):
        if text.startswith(lead):
            text = text[len(lead):].lstrip(" :—-")
            break
    return f"{title} — {text}" if text else title


def _relevance(hit: Any) -> float | None:
    value = getattr(hit, "relevance", None)
    value = getattr(value, "probability", value)  # a Relevance, or a bare number
    return None if value is None else float(value)


def _arm_cell(contribution: Any) -> str:
    return "–" if contribution is None else f"{contribution.rank} ({contribution.score:.2f})"


def hit_lines(ans: RecallAnswer, explain: bool, width: int) -> list[Text]:
    """Return the answer's hits as lines of at most ``width`` characters (with
    ``explain``, a header line and a rule first).

    :param width: the console's width in characters.
    """
    relevance = any(_relevance(h) is not None for h in ans.hits)
    headers = ["#", "rel" if relevance else "score", "scope"]
    right = [True, True, False]
    rows = [[str(h.rank), f"{_relevance(h) if relevance else h.score:.2f}", h.scope]
            for h in ans.hits]
    if explain:
        arms = list(ans.arms_ran)
        headers += arms
        right += [True] * len(arms)
        for row, hit in zip(rows, ans.hits, strict=True):
            row += [_arm_cell(hit.contributions.get(arm)) for arm in arms]
        if any(h.recency for h in ans.hits):
            headers.append("recency")
            right.append(True)
            for row, hit in zip(rows, ans.hits, strict=True):
                row.append(f"+{hit.recency:.1%}" if hit.recency else "")
    widths = [max([len(headers[i]) if explain else 0] + [len(r[i]) for r in rows])
              for i in range(len(headers))]
    fixed = sum(widths) + len(GAP) * len(widths)
    left = max(width - fixed, MIN_HIT_WIDTH)

    def columns(cells: list[str]) -> str:
        return GAP.join(c.rjust(w) if r else c.ljust(w)
                        for c, w, r in zip(cells, widths, right, strict=True)) + GAP

    below = explain and width - fixed < EXPLAIN_INLINE_MIN  # the hit gets its own lines
    lines: list[Text] = []
    if explain and ans.hits:
        lines.append(Text((columns(headers) + ("" if below else "hit")).rstrip(), style="bold"))
        lines.append(Text("─" * min(width, fixed + (0 if below else left)), style="dim"))
    context = getattr(ans, "context", {})
    grouped = any(context.get((h.scope, h.chunk.id)) for h in ans.hits)
    indent = SNIPPET_INDENT if below else fixed
    room = max(width - indent, MIN_HIT_WIDTH) if below else left
    for row, hit in zip(rows, ans.hits, strict=True):
        around = context.get((hit.scope, hit.chunk.id), [])
        if grouped and hit is not ans.hits[0]:
            lines.append(Text(""))  # a hit and its turns stand apart from the next hit's
        if below:
            lines.append(Text(columns(row).rstrip()))
        lines += [_context_line(indent, room, t) for t in around if t.offset < 0]
        mark = "(superseded) " if hit.chunk.valid_to is not None else ""
        if below:
            text = wrapped(mark + hit_text(hit.chunk), room, SNIPPET_LINES)
            lines += [_marked(" " * indent + part, indent, mark) for part in text]
        else:
            line = Text(columns(row))
            line.append(Text(mark, style="yellow"))
            line.append(cut(hit_text(hit.chunk), room - len(mark)))
            lines.append(line)
        lines += [_context_line(indent, room, t) for t in around if t.offset > 0]
    return lines


def wrapped(text: str, width: int, most: int) -> list[str]:
    """Return ``text`` wrapped to ``width`` columns on at most ``most`` lines, the last
    cut with "…" when the text goes on."""
    parts = textwrap.wrap(text, width, break_on_hyphens=False) or [""]
    if len(parts) > most:
        rest = " ".join(parts[most - 1:])
        parts = parts[: most - 1] + [cut(rest, width)]
    return parts


def _marked(line: str, indent: int, mark: str) -> Text:
    """A snippet line, its leading ``(superseded)`` mark (if any) in yellow."""
    text = Text(line)
    if mark and line[indent:].startswith(mark):
        text.stylize("yellow", indent, indent + len(mark))
    return text


def _context_line(indent: int, room: int, turn: Any) -> Text:
    """A neighbouring turn of a hit: indented under the hit's text, marked ``↑`` when it
    came before the hit and ``↓`` after, with its offset in turns (``↑1``: the turn
    just before)."""
    mark = f"{'↑' if turn.offset < 0 else '↓'}{abs(turn.offset)} "
    return Text(" " * indent + mark + cut(one_line(turn.chunk.text), room - len(mark)),
                style="dim")


def print_answer(console: Console, query: str, ans: RecallAnswer, explain: bool) -> None:
    """Print a recall answer: the query, one line per hit, then how it was made (scopes,
    arms, time; arms that could not run and why; what dedup collapsed)."""
    if ans.hits:
        console.print(Text(repr(query), style="bold"), highlight=False)
    elif getattr(ans, "abstained", None):
        console.print(Text(f"no hits for {query!r}: {ans.abstained}"), highlight=False,
                      soft_wrap=True)  # one line, folded by the terminal if at all
    else:
        console.print(Text(f"no hits for {query!r}"), highlight=False, soft_wrap=True)
    for line in hit_lines(ans, explain, console.width):
        console.print(line, no_wrap=True, overflow="ignore", crop=False, highlight=False)
    made = f"scopes: {', '.join(ans.scopes) or 'none'} · arms: {', '.join(ans.arms_ran) or 'none'}"
    if "total" in ans.timings_ms:
        made += f" · {ans.timings_ms['total']:.0f} ms"
    console.print(made, style="dim", highlight=False)
    for arm, why in ans.arms_unavailable.items():
        console.print(f"[yellow]{escape(arm)} unavailable:[/yellow] {escape(why)}")
    for c in ans.collapsed:
        for line in wrapped(f"collapsed {c.chunk.document_id} ({c.scope}) into "
                            f"{c.kept_chunk.document_id} ({c.kept_scope}): {c.reason}",
                            console.width - 2, 99):
            console.print(Text(line if line.startswith("collapsed") else "  " + line),
                          no_wrap=True, overflow="ignore", crop=False, highlight=False)
    if ans.unembedded_hits:
        n = len(ans.unembedded_hits)
        console.print(f"{n} {'hit' if n == 1 else 'hits'} found by words only (no vector yet)")
    budget = getattr(ans, "budget", None)
    if budget is not None:
        lead = f"about {budget.used} of {budget.max_tokens} tokens" + (
            f"; shortened {budget.truncated}" if budget.truncated else "")
        dropped = [f"#{c.rank} {c.chunk.document_id} ({c.tokens})" for c in budget.cut]
        for line in packed(lead + ("; cut:" if dropped else ""), dropped, console.width):
            console.print(Text(line), no_wrap=True, overflow="ignore", crop=False,
                          highlight=False)
