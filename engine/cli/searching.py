"""What ``octomem search`` does once its command line is read, without typer: recall over
both scopes, print the answer, say what was left unembedded.

Called by the typer command (:func:`.commands.search`) and by the quick path
(:mod:`.quick`), which reads a plain search's command line without typer.
"""

from __future__ import annotations

from .context import command_memory, console, err
from .entry import close_memory


def run_search(query: str, top_k: int | None, explain: bool, as_json: bool,
               kind: list[str] | None, tag: list[str] | None, scope: str | None,
               since: str | None, until: str | None, as_of: str | None, history: bool,
               per: str, context: int, max_tokens: int | None) -> None:
    """Recall ``query`` with the command's options and print the answer (the options are
    those of ``octomem search``, as typed: see its ``--help``).

    :raises InvalidQueryError: a bad kind, an empty tag, or a value the recall refuses.
    :raises OctomemError: the memory cannot be opened or searched.
    """
    from ..memory.limits import tag_labels
    from ..memory.remember import check_kind
    from ..memory.times import as_of_instant
    from . import memory as show

    memory = command_memory()
    try:
        kinds, tags = tuple(check_kind(k, "--kind") for k in kind or ()), tuple(tag or ())
        tag_labels(tags, "tags")  # an empty tag, as the MCP tools refuse it
        answer = memory.recall(query, scope, top_k, kinds, tags, since,  # type: ignore[arg-type]
                               until, as_of, history, per,  # type: ignore[arg-type]
                               context=context, max_tokens=max_tokens)
        show.show_recall(console, query, answer, explain, as_json, answer.nothing_to_rank,
                         as_of_instant(as_of))
        from .unembedded import say_unembedded_in

        say_unembedded_in(err, memory, scope)  # type: ignore[arg-type]
    finally:
        close_memory(memory)
