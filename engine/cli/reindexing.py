"""``octomem reindex`` run for a person: which model it embeds for, each scope's progress,
and, after Ctrl-C, what it did in every scope.

Each batch of vectors commits on its own (:meth:`~octomem.engine.pipeline.Pipeline.
embed_pending`), so after Ctrl-C every scope keeps what it embedded: the report says so
per scope (the one being embedded included, the ones not reached too) and how to finish
(run ``octomem reindex`` again). The model id is printed on a line of its own, never cut
or wrapped inside a sentence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console

from ..errors import OctomemError
from .layout import emit
from .values import plural

if TYPE_CHECKING:
    from ..pipeline import Pipeline


def check_configured(pipeline_settings: object) -> None:
    """Refuse a reindex without a semantic arm or embedder in the settings (checked before
    any scope is opened: with no store yet, no pipeline would say it).

    :raises OctomemError: ``pipeline.semantic`` or ``pipeline.embedder`` is empty.
    """
    if not getattr(pipeline_settings, "semantic", None) or \
            not getattr(pipeline_settings, "embedder", None):
        raise OctomemError("no semantic arm is configured (pipeline.semantic or "
                           "pipeline.embedder is empty): there is nothing to embed")


def reindex(console: Console, err: Console, scoped: list[tuple[str, Pipeline]]) -> None:
    """Embed every chunk without a vector of the configured embedder in each scope of
    ``scoped`` (``(name, pipeline)`` pairs), saying what was done per scope.

    :raises OctomemError: no semantic arm is configured, or the stored vectors belong to
        another model.
    :raises KeyboardInterrupt: after Ctrl-C, once each scope's state is said.
    """
    from . import render

    done: dict[str, int] = {}
    said = False
    try:
        for scope, pipeline in scoped:
            semantic, model = pipeline.arms.semantic, pipeline.arms.embedder
            if semantic is None or model is None:
                raise OctomemError("no semantic arm is configured (pipeline.semantic or "
                                   "pipeline.embedder is empty): there is nothing to embed")
            if pipeline.semantic_error:
                raise OctomemError(pipeline.semantic_error)
            if not said:
                emit(console, [f"embedding for {model.model_id}"])
                said = True
            done[scope] = 0
            with render.progress(console) as bar:
                task = bar.add_task(f"{scope}: embedding", total=semantic.missing_count())

                def advance(n: int, scope: str = scope, task: int = task) -> None:
                    done[scope] += n
                    bar.advance(task, n)  # noqa: B023 - used before the loop moves on

                pipeline.embed_missing(advance, lambda: bar.console.print(
                    "note: an ingest is storing or embedding in this scope: waiting until "
                    "it is done", highlight=False))
            emit(console, [f"{scope}: embedded {plural(done[scope], 'chunk')}; "
                           f"{semantic.missing_count():,} without a vector"])
    except KeyboardInterrupt:
        say_interrupted(err, scoped, done)
        raise


def say_interrupted(err: Console, scoped: list[tuple[str, Pipeline]],
                    done: dict[str, int]) -> None:
    """Say on ``err``, per scope, what an interrupted reindex embedded (every batch
    committed is kept) and what is left, then how to finish."""
    for scope, pipeline in scoped:
        semantic = pipeline.arms.semantic
        try:
            left = f"{semantic.missing_count():,}" if semantic is not None else "?"
        except Exception:  # noqa: BLE001 - the store may be mid-write; say what is known
            left = "?"
        if scope in done:
            line = f"{scope}: embedded {plural(done[scope], 'chunk')} before the interrupt"
        else:
            line = f"{scope}: not reached"
        emit(err, [f"{line}; {left} without a vector"])
    emit(err, ["what was embedded is kept: run `octomem reindex` again to embed the rest"])
