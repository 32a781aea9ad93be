"""The warning after an ingest or a search that chunks have no vector yet (found by their
words only), and how to embed them. Without typer: a plain search prints it too."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from .values import plural

if TYPE_CHECKING:
    from ..memory.facade import Memory
    from ..pipeline import Pipeline


def say_unembedded(err: Console, scoped: Iterable[tuple[str, Pipeline]]) -> None:
    """Warn on ``err``, per scope, how many chunks have no vector of the configured
    embedder (found by their words only, e.g. after an interrupted embedding) and how to
    embed them.

    :param scoped: ``(scope name, its pipeline)`` pairs.
    """
    for scope, pipeline in scoped:
        semantic, embedder = pipeline.arms.semantic, pipeline.arms.embedder
        if semantic is None or embedder is None or pipeline.semantic_error:
            continue
        missing = semantic.missing_count()
        if missing:
            err.print(Text.assemble(
                ("warning: ", "yellow"),
                f"{plural(missing, 'chunk')} of the {scope} scope "
                f"{'has' if missing == 1 else 'have'} no vector yet (found by their words "
                "only): `octomem reindex` embeds them"), highlight=False)


def say_unembedded_in(err: Console, memory: Memory, scope: str | None) -> None:
    """After a search: :func:`say_unembedded` for the scopes it searched (``scope``, or
    both)."""
    from ..memory.scopes import SCOPES

    wanted = SCOPES if scope is None else (scope,)
    say_unembedded(err, memory.scopes.existing(wanted))  # type: ignore[arg-type]
