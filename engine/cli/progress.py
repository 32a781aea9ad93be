"""Progress for long work: a live bar at a terminal, plain lines when output is piped or
logged (a bar redrawn in a file is one line written at the very end, so a long run said
nothing for minutes).

:class:`LineProgress` has the part of Rich's :class:`~rich.progress.Progress` the commands
use (``with``, ``add_task``, ``advance``, ``update``) and prints ``label: done/total (pct),
elapsed`` at most every :data:`LINE_EVERY_S` seconds per task, and once when a task
completes. A task without a total is a phase whose work is not counted (warming arms up,
evaluating runs): ``label ...`` when it starts, ``label: done, elapsed`` when
``update(task, completed=...)`` reaches its total.

With ``ends=False`` (``octomem ingest`` and ``reindex`` into a log or pipe, whose summary
line says what was done) a task says nothing when it starts or completes, only every
:data:`LINE_EVERY_S` seconds while it runs: a quick ingest's log holds its summary
alone, a long one's a line every 10 s (trial 16 F23: every step of a small ingest was
logged, and interleaved with the results).
"""

from __future__ import annotations

import time
from typing import Any

from rich.console import Console

#: Least time between two progress lines of one task when not on a terminal (seconds):
#: often enough to see a run is alive, rarely enough to keep a log readable.
LINE_EVERY_S = 10.0


class LineProgress:
    """Progress printed as lines (see the module docstring).

    :param console: where the lines go.
    :param every_s: least seconds between two lines of one task.
    :param ends: say when a task starts and when it completes (else only every
        ``every_s`` while it runs).
    """

    def __init__(self, console: Console, every_s: float = LINE_EVERY_S,
                 ends: bool = True) -> None:
        self.console = console
        self.every_s = every_s
        self.ends = ends
        self._tasks: list[dict[str, Any]] = []

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, total: float | None = None, **_: Any) -> int:
        """Start a task; returns its id for :meth:`advance`."""
        now = time.monotonic()
        self._tasks.append({"label": description, "total": total, "done": 0.0,
                            "start": now, "said": now, "phase": total is None})
        if self.ends:
            self._say(self._tasks[-1], force=True)
        return len(self._tasks) - 1

    def update(self, task_id: int, total: float | None = None,
               completed: float | None = None, **_: Any) -> None:
        """Set task ``task_id``'s ``total`` and work ``completed`` (Rich's ``update``); a
        line says so when that completes it (once: not again for a task already done)."""
        task = self._tasks[task_id]
        said_done = task["total"] is not None and task["done"] >= task["total"]
        if total is not None:
            task["total"] = total
        if completed is not None:
            task["done"] = completed
        if task["total"] is not None and task["done"] >= task["total"] and not (
                said_done and total is None):  # its last line was said already
            self._say(task, force=True)

    def advance(self, task_id: int, advance: float = 1) -> None:
        """Count ``advance`` more units of work done on task ``task_id``."""
        task = self._tasks[task_id]
        task["done"] += advance
        finished = task["total"] is not None and task["done"] >= task["total"]
        if finished or time.monotonic() - task["said"] >= self.every_s:
            self._say(task, force=finished)

    def _say(self, task: dict[str, Any], force: bool) -> None:
        now = time.monotonic()
        if (not force or not self.ends) and now - task["said"] < self.every_s:
            return
        task["said"] = now
        done, total = task["done"], task["total"]
        elapsed = time.strftime("%H:%M:%S", time.gmtime(now - task["start"]))
        if task["phase"]:
            line = f"{task['label']}: done, {elapsed}" if total else f"{task['label']} ..."
        else:
            count = f"{done:,.0f}/{total:,.0f} ({done / total:.0%})" if total else f"{done:,.0f}"
            line = f"{task['label']}: {count}, {elapsed}"
        self.console.print(line, highlight=False, markup=False, soft_wrap=True)  # never cut
