"""Trial 16 F23, the ingest items: progress lines in logs, a BEIR corpus with a duplicate
``_id``, Markdown front matter, and ``--tag``."""

from __future__ import annotations

import io
import json
from pathlib import Path

from cli_run import octomem
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


def test_a_beir_corpus_with_a_duplicate_id_stores_nothing_and_names_the_lines(
        project: Path) -> None:
    """A second row with the same ``_id`` was stored as a replacement of the first (which
    became history), reported as ``added 1, replaced 2`` for 3 rows of 2 ids. The corpus
    is now read whole first: the error names each repeated id and its lines, nothing of
    the corpus is stored, and no store is created, even when the repeat comes after the
    first batch (1,024 rows) of the corpus."""
    corpus = project / "fakebeir"
    corpus.mkdir()
    rows = [{"_id": str(i), "text": f"abstract {i} about kestrel nesting"} for i in range(1100)]
    rows += [{"_id": "7", "text": "dup id second text"}, {"_id": 7, "text": "numeric id"}]
    (corpus / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    ran = octomem(project, "ingest", "--beir", str(corpus), ok=False)
    where = corpus / "corpus.jsonl"
    assert ran.code == 1
    assert ran.err.strip() == (
        f"error: {where}:1101: _id '7' again (first on line 8); {where}:1102: _id '7' again "
        "(first on line 8); nothing of the corpus was stored")
    assert not (project / ".octomem").exists()
    (corpus / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows[:1100]))
    assert "added 1,100, replaced 0" in octomem(project, "ingest", "--beir", str(corpus)).out
