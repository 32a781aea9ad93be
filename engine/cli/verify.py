"""``octomem verify [--repair]``: check that every stored row can be shown again."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from ..errors import OctomemError
from .commands import _memory, console
from .lazy import registry
from .options import Command, VerifyScopeOpt


@registry.command(cls=Command)
def verify(
    fix: Annotated[bool, typer.Option("--repair", help=(
        "Fix what is found, as the description above says (each fixed row is listed)."))] = False,
    scope: VerifyScopeOpt = None,
) -> None:
    """Find stored rows that an answer cannot show (times outside the calendar, left by an
    older octomem) or no `--kind` filter can select (`to-do`, `fact`: an older import),
    supersede links that do not hold, and stores that cannot be read; exit status 1 when
    there are any. With `--repair`: a bad `created_at` or `valid_to` becomes now, a bad
    `event_time` or `last_recalled_at` is cleared, a kind becomes one that fits (`TO_DO`,
    `FACT`), and the document is written
    again (its vectors computed again); a statement current although its successor
    supersedes it is superseded again; one superseded by a forgotten statement is
    current again; a link to nothing on a current statement is dropped; a document whose
    id the forget log says was forgotten (an older import) is forgotten. A link that
    needs a decision is listed, not repaired."""
    from ..memory.scopes import SCOPES, check_scope
    from ..memory.verify import Problem, find_problems, repair

    chosen = check_scope(scope, "--scope")
    scopes = (chosen,) if chosen else SCOPES
    left: list[Problem] = []
    memory = _memory()
    try:
        problems = repair(memory, scopes, left) if fix else find_problems(memory, scopes)
        unreadable = memory.scopes.skipped(scopes)
        present = [s for s in scopes if memory.scopes.exists(s)]
    finally:
        memory.close()
    for problem in problems:
        console.print(("repaired " if fix else "") + escape(str(problem)), highlight=False)
    for problem in left:
        console.print("not repaired (needs a decision) " + escape(str(problem)),
                      highlight=False)
    read = [s for s in present if s not in unreadable]
    if not present:  # trial 14 F3: 'verified the local and global scopes' of no store
        console.print(f"nothing to verify: no store yet in the {' or '.join(scopes)} "
                      f"{'scope' if len(scopes) == 1 else 'scopes'} (the first write creates "
                      "one; verify creates none)")
    if not problems and not left and read:
        console.print(f"verified the {' and '.join(read)} "
                      f"{'scope' if len(read) == 1 else 'scopes'}: every row can be shown")
    if unreadable:  # the other scope was verified (and repaired) all the same
        raise OctomemError("; ".join(f"the {name} scope cannot be read: {why}"
                                     for name, why in unreadable.items()))
    if problems and not fix:
        raise OctomemError(f"{len(problems)} problem(s) found; `octomem verify --repair` "
                           "fixes those it can (see `octomem verify --help`)")
    if left:
        raise OctomemError(f"{len(left)} supersede link(s) name a statement that is not "
                           "there or is superseded by another: forget or re-add by hand")
