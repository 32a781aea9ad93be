"""A recall answer as people read it, at any width and when piped: one line per hit.

Each hit is one line — rank, relevance (or, without one, the fused score), scope, then
the hit itself (its title, then its text on one line) cut to the width that is left with
"…". ``--explain`` adds, before the hit, each arm's own rank and raw score
(``rank (score)``, ``–`` where that arm did not find the hit) and the recency bonus,
under a header: a compact table, one row per hit, the hit's text on up to
:data:`SNIPPET_LINES` lines beside its row when at least :data:`EXPLAIN_INLINE_MIN`
columns are left for it, else under its row (at 80 columns three arms leave ~18: too few
to read). Either way the text uses the width there is: a wider terminal never shows less
of a hit than 80 columns do. A conversation hit asked with ``--context N`` has its
neighbouring turns on dim lines under it (:mod:`.turn_context`: ``↑1`` the turn just
before, ``↓1`` after; a turn shown elsewhere in the answer is ``see #N``), and a blank
line parts it from the next hit. Widths are terminal cells (a CJK character or an
emoji takes two: :func:`~.layout.folded`). When stdout is not a terminal, Rich uses ``COLUMNS`` or
80 columns, so piped output has the same shape; dedup's ``collapsed`` lines break only
between entries, and what ``--max-tokens`` left out is one line per hit, named as a hit
line names it (rank before the cut, tokens, scope, snippet).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..controls import echoed
from ..memory.recall import RecallAnswer
from ..titles import without_title
from ..turns import TURN_KIND
from .layout import cut, emit, folded, visible
from .layout import wrapped as paragraph
from .snippets import best_part
from .turn_context import ContextLines

#: Fewest characters a hit keeps for its text however narrow the terminal; below that,
#: the line wraps instead (a hit cut to nothing says nothing).
MIN_HIT_WIDTH = 24
#: Space between columns.
GAP = "  "
#: Lines a hit's text may take with ``--explain``, beside or under its row (the last cut
#: with "…").
SNIPPET_LINES = 2
#: Lines a hit's text may take in the default (compact) list, beside its row and under
#: itself (the last cut with "…"): enough for a document's title and the sentence that
#: answers. Not tuned.
COMPACT_LINES = 3
#: Indent of a hit's text under its ``--explain`` row (past the rank column).
SNIPPET_INDENT = 5
#: Fewest columns a hit's text needs beside the ``--explain`` columns; with fewer, it goes
#: on lines of its own under its row. It is what the text has under its row at 80
#: columns, so a wider terminal never shows less of a hit than 80 columns do (at 80,
#: three arms and the recency bonus leave only ~18 beside the row).
EXPLAIN_INLINE_MIN = 80 - SNIPPET_INDENT


def one_line(text: str) -> str:
    """Return ``text`` with every run of whitespace (newlines included) as one space,
    other control characters shown as escapes (:func:`~.layout.visible`)."""
    return visible(" ".join(text.split()))


def hit_text(chunk: Any, query: str = "") -> str:
    """Return what a hit shows: ``title — text``, the text without a leading heading that
    repeats the title (a Markdown file's ``# Title``), all on one line. A conversation
    turn's title is its time: the turn's words come first (``text (time)``), so a cut line
    still shows what was said. With ``query``, the text starts at its sentence that best
    matches the query (:func:`~.snippets.best_part`: rarer query words weigh more)."""
    title = one_line(chunk.title or "")
    raw = without_title(chunk.text.strip(), chunk.title)
    text = one_line(best_part(raw, query) if query else raw)
    if not title:
        return text
    if getattr(chunk, "kind", None) == TURN_KIND:
        return f"{text} ({title})"
    return f"{title} — {text}" if text else title


def _relevance(hit: Any) -> float | None:
    value = getattr(hit, "relevance", None)
    value = getattr(value, "probability", value)  # a Relevance, or a bare number
    return None if value is None else float(value)


def _arm_cell(contribution: Any) -> str:
    return "–" if contribution is None else f"{contribution.rank} ({raw_score(contribution.score)})"


def raw_score(score: float) -> str:
    """Return an arm's raw score with two decimals, or two significant digits when it is
    smaller than 0.01 (FTS5's BM25 gives a word found in every document of a scope an idf
    of 1e-6: ``0.00`` read as a bug where ``1e-06`` says what happened)."""
    return f"{score:.2f}" if score == 0 or abs(score) >= 0.005 else f"{score:.2g}"


def superseded(chunk: Any, as_of: float | None = None) -> bool:
    """Return whether a hit is marked ``(superseded)``: replaced by now, or with
    ``as_of`` (epoch seconds), replaced by then (one current then is not, though it was
    replaced later)."""
    valid_to = getattr(chunk, "valid_to", None)
    return valid_to is not None and (as_of is None or valid_to <= as_of)


def hit_lines(ans: RecallAnswer, explain: bool, width: int,
              as_of: float | None = None, query: str = "") -> list[Text]:
    """Return the answer's hits as lines of at most ``width`` terminal cells (with
    ``explain``, a header line and a rule first). Each hit's text starts at the part
    that matches ``query``, with ``explain`` as without (trial 16 F18: the mode for
    understanding a hit showed the chunk's first words instead); it takes up to
    :data:`COMPACT_LINES` lines, :data:`SNIPPET_LINES` with ``explain``.

    :param width: the console's width in cells.
    :param as_of: the instant the search asked about (``--as-of``), epoch seconds.
    """
    relevance = any(_relevance(h) is not None for h in ans.hits)
    headers = ["#", "rel" if relevance else "score", "scope"]
    right = [True, True, False]
    rows = [[str(h.rank), f"{_relevance(h) if relevance else h.score:.2f}", h.scope]
            for h in ans.hits]
    if explain:
        _explain_cells(ans, headers, right, rows)
    widths = [max([len(headers[i]) if explain else 0] + [len(r[i]) for r in rows])
              for i in range(len(headers))]
    dropped = _fit_columns(headers, right, rows, widths, width) if explain else []
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
        if dropped:
            lines += [Text(line, style="dim") for line in paragraph(
                f"no room for {', '.join(dropped)} at {width} columns; --json has every "
                "column",
                width)]
    context = getattr(ans, "context", {})
    grouped = any(context.get((h.scope, h.chunk.id)) for h in ans.hits)
    indent = SNIPPET_INDENT if below else fixed
    room = max(width - indent, MIN_HIT_WIDTH) if below else left
    turns = ContextLines(ans.hits)
    for row, hit in zip(rows, ans.hits, strict=True):
        if grouped and hit is not ans.hits[0]:
            lines.append(Text(""))  # a hit and its turns stand apart from the next hit's
        mark = "(superseded) " if superseded(hit.chunk, as_of) else ""
        text = mark + hit_text(hit.chunk, query)
        if below:  # the row, then the text on lines of its own
            lines.append(Text(columns(row).rstrip()))
            parts = [" " * indent + p for p in wrapped(text, room, SNIPPET_LINES)]
        else:  # the text beside its row, going on under itself
            parts = wrapped(text, room, SNIPPET_LINES if explain else COMPACT_LINES)
            parts = [columns(row) + parts[0]] + [" " * indent + p for p in parts[1:]]
        lines += [_marked(part, indent, mark) for part in parts]
        lines += turns.lines(hit, context.get((hit.scope, hit.chunk.id), []), indent, room)
    return lines


def _fit_columns(headers: list[str], right: list[bool], rows: list[list[str]],
                 widths: list[int], width: int) -> list[str]:
    """Leave out ``--explain``'s last columns, in place, while the row is wider than
    ``width`` (the rank, relevance and scope stay); return the headers left out."""
    dropped: list[str] = []
    while len(headers) > 3 and sum(widths) + len(GAP) * (len(widths) - 1) > width:
        dropped.insert(0, headers.pop())
        right.pop()
        widths.pop()
        for row in rows:
            row.pop()
    return dropped


def made_lines(made: str, width: int) -> list[str]:
    """Return the ``scopes: … · arms: … · N ms`` line in lines of at most ``width``
    columns, broken at its `` · `` first, never ending in a space."""
    lines: list[str] = []
    for part in made.split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= width:
            lines[-1] += " · " + part
        else:
            lines += paragraph(part, width, "  ", first="  " if lines else "")
    return lines


def _explain_cells(ans: RecallAnswer, headers: list[str], right: list[bool],
                   rows: list[list[str]]) -> None:
    """Add ``--explain``'s columns (each arm's ``rank (score)``, the recency bonus) to
    ``headers``, ``right`` (right-aligned) and each hit's row, in place."""
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


def wrapped(text: str, width: int, most: int) -> list[str]:
    """Return ``text`` wrapped to ``width`` terminal cells on at most ``most`` lines, the
    last cut with "…" when the text goes on (:func:`~.layout.folded`, :func:`~.layout.cut`:
    a CJK character or an emoji takes two cells)."""
    parts = folded(text, width)
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


def _rejected(console: Console, ans: RecallAnswer, explain: bool, query: str = "") -> None:
    """Show an abstained answer's best match, which was not returned: with ``explain``
    as a row of the explain table (its rank before abstaining, relevance, each arm's
    rank and score; its text from the part that matches ``query``), else a hint that
    ``--explain`` shows it."""
    best = getattr(ans, "best_rejected", None)
    if best is None:
        return
    if not explain:
        console.print("--explain shows the best match and why it was left out",
                      style="dim", highlight=False)
        return
    console.print("the best match, not returned:", style="dim", highlight=False)
    for line in hit_lines(replace(ans, hits=[best]), True, console.width, query=query):
        console.print(line, no_wrap=True, overflow="ignore", crop=False, highlight=False)


def in_words(why: str, unavailable: dict[str, str]) -> str:
    """Return an empty answer's reason with the cause of an unreadable scope in place of
    the JSON field it names (``scopes_unavailable says why``): the cause from the scope's
    reason (``PATH: database disk image is malformed; octomem cannot read it ...`` ->
    ``database disk image is malformed``), or, for several different ones, that they are
    said below (each scope's whole reason follows on its own line)."""
    from ..memory.empty import SAYS_WHY

    if SAYS_WHY not in why:
        return why
    causes = {reason.split("; ")[0].rpartition(": ")[2].strip() for reason in unavailable.values()}
    cause = causes.pop() if len(causes) == 1 else ""
    return why.replace(SAYS_WHY, cause or "each reason is said below")


def print_answer(console: Console, query: str, ans: RecallAnswer, explain: bool,
                 why: str | None = None, as_of: float | None = None) -> None:
    """Print a recall answer: the query, one line per hit, then how it was made (scopes,
    arms, time; arms that could not run and scopes that could not be read, and why; how
    many repetitions of the hits shown dedup collapsed, listed under ``explain``).

    :param why: why an answer with no hits found nothing, when it did not abstain.
    :param as_of: the instant asked about (``--as-of``), epoch seconds.
    """
    if ans.hits:
        console.print(Text(echoed(query), style="bold"), highlight=False)
    elif getattr(ans, "abstained", None):
        console.print(Text(f"no hits for {echoed(query)}: {ans.abstained}"), highlight=False,
                      soft_wrap=True)  # one line, folded by the terminal if at all
        _rejected(console, ans, explain, query)
    else:
        why = in_words(why, getattr(ans, "scopes_unavailable", {})) if why else why
        console.print(Text(f"no hits for {echoed(query)}" + (f": {why}" if why else "")),
                      highlight=False, soft_wrap=True)
    for line in hit_lines(ans, explain, console.width, as_of, query):
        console.print(line, no_wrap=True, overflow="ignore", crop=False, highlight=False)
    made = f"scopes: {', '.join(ans.scopes) or 'none'} · arms: {', '.join(ans.arms_ran) or 'none'}"
    if "total" in ans.timings_ms:
        made += f" · {ans.timings_ms['total']:.0f} ms"
        if ans.timings_ms.get("load_model"):  # a fresh process loads the model first
            made += f" ({ans.timings_ms['load_model']:.0f} ms of it loading the model)"
    emit(console, made_lines(made, console.width), style="dim")
    for arm, why in ans.arms_unavailable.items():
        console.print(f"[yellow]{escape(arm)} unavailable:[/yellow] {escape(why)}")
    for name, why in getattr(ans, "scopes_unavailable", {}).items():
        console.print(Text.assemble((f"{name} scope not searched: ", "yellow"), why),
                      highlight=False, soft_wrap=True)  # the reason on its label's line
    shown = {(h.scope, h.chunk.id) for h in ans.hits}
    collapsed = [c for c in ans.collapsed if (c.kept_scope, c.kept_chunk.id) in shown]
    for c in collapsed if explain else ():
        for line in wrapped(f"collapsed {c.chunk.document_id} ({c.scope}) into "
                            f"{c.kept_chunk.document_id} ({c.kept_scope}): {c.reason}",
                            console.width - 2, 99):
            console.print(Text(line if line.startswith("collapsed") else "  " + line),
                          no_wrap=True, overflow="ignore", crop=False, highlight=False)
    if collapsed and not explain:
        n = len(collapsed)
        console.print(f"{n} {'repetition' if n == 1 else 'repetitions'} of these hits "
                      "collapsed (--explain lists them)", style="dim", highlight=False)
    if getattr(ans, "weak_left_out", 0):
        n = ans.weak_left_out
        console.print(f"{n} far weaker {'hit' if n == 1 else 'hits'} left out "
                      "(retrieval.relative_floor, weak_answer_floor)", style="dim", highlight=False)
    if ans.unembedded_hits:
        n = len(ans.unembedded_hits)
        console.print(f"{n} {'hit' if n == 1 else 'hits'} found by words only (no vector yet)")
    budget = getattr(ans, "budget", None)
    if budget is not None:
        emit(console, budget_lines(budget, console.width))


def budget_lines(budget: Any, width: int) -> list[str]:
    """Return what ``--max-tokens`` kept and cut: the tokens used, then one line per hit
    left out, named as a hit line names it (its rank before the cut, its size in tokens,
    its scope and a snippet of its text), each at most ``width`` columns.

    :param budget: the answer's :class:`~octomem.engine.memory.context.Budget`.
    """
    dropped = len(budget.context_dropped)
    lead = f"about {budget.used} of {budget.max_tokens} tokens" + (
        "; the first hit's text shortened to fit" if budget.truncated else "") + (
        f"; the context turns of {'1 hit' if dropped == 1 else f'{dropped} hits'} left out to "
        "fit" if dropped else "")
    if not budget.cut:
        return paragraph(lead, width, "  ", first="")
    lines = paragraph(f"{lead}; left out {'this hit' if len(budget.cut) == 1 else 'these'} "
                      "(rank before the cut, tokens):", width, "  ", first="")
    ranks = max(len(f"#{c.rank}") for c in budget.cut)
    sizes = max(len(f"{c.tokens}") for c in budget.cut)
    for c in budget.cut:
        row = f"  {f'#{c.rank}'.rjust(ranks)}{GAP}{str(c.tokens).rjust(sizes)}{GAP}{c.scope}{GAP}"
        lines.append(row + cut(hit_text(c.chunk), max(width - len(row), MIN_HIT_WIDTH)))
    return lines
