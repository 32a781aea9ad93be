"""Trial 16 F23, the ingest items: progress lines in logs, a BEIR corpus with a duplicate
``_id``, Markdown front matter, and ``--tag``."""

from __future__ import annotations

import io

from rich.console import Console

from octomem.engine.cli.progress import LineProgress


def test_piped_progress_says_nothing_of_a_step_that_starts_and_ends_quickly() -> None:
    out = io.StringIO()
    bar = LineProgress(Console(file=out, width=80), ends=False)  # every_s: 10 s
    task = bar.add_task("indexing 3 files", total=3)
    bar.advance(task, 3)
    bar.update(task, completed=3)
    assert out.getvalue() == ""
    slow = LineProgress(Console(file=out, width=80), every_s=0.0, ends=False)
    task = slow.add_task("embedding chunks", total=4)  # a long step: a line as it runs
    slow.advance(task, 2)
    assert out.getvalue().startswith("embedding chunks: 2/4 (50%), 00:00:00")
    logged = LineProgress(Console(file=io.StringIO(), width=80))  # bench: start and end
    logged.add_task("querying fts5", total=1)
    assert logged.console.file.getvalue().startswith("querying fts5: 0/1 (0%)")
