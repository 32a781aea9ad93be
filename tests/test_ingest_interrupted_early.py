"""Ctrl-C early in an ingest (trial 16 F4): before anything was stored it says so in one
line, ends with status 130, and leaves no store behind where there was none ("an ingest
that stores nothing creates no store"); a store that was there stays, with what it held.

Ctrl-C is a ``KeyboardInterrupt`` raised where the signal would land: while the first
batch is being written (its rows are in the open transaction, which rolls back), while the
memory is opened, and while the command is read. A real SIGINT at a chosen point cannot be
timed in a subprocess (the first batch commits within ~0.1-1 s depending on the load).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem

import octomem.engine.pipeline as pipeline_module

NOTES = 40


def notes(project: Path) -> Path:
    folder = project / "notes"
    folder.mkdir()
    for i in range(NOTES):
        (folder / f"n{i:02}.md").write_text(f"# Host {i}\nBuild host {i} restarts at {i} h.\n")
    return folder


@pytest.fixture
def interrupted_in_first_batch(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Make the first batch's write raise ``KeyboardInterrupt`` once its rows are written
    (inside its transaction); return the sizes of the batches written."""
    write, sizes = pipeline_module.write_batch, []

    def interrupted(pipeline, tx, batch, *args, **kwargs):  # type: ignore[no-untyped-def]
        write(pipeline, tx, batch, *args, **kwargs)
        sizes.append(len(batch))
        assert tx.execute("SELECT count(*) FROM documents").fetchone()[0] == len(batch)
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline_module, "write_batch", interrupted)
    return sizes


def test_ctrl_c_before_the_first_batch_committed_leaves_no_store(
        project: Path, interrupted_in_first_batch: list[int]) -> None:
    folder = notes(project)
    ran = octomem(project, "ingest", str(folder), ok=False)
    assert interrupted_in_first_batch == [NOTES]  # its rows were written, then rolled back
    assert ran.code == 130
    assert ran.err.strip() == "interrupted before anything was stored"  # piped: no progress
    assert not (project / ".octomem").exists()  # the store it created, and its folder, gone


def test_ctrl_c_before_anything_was_stored_keeps_a_store_that_was_there(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    octomem(project, "add", "Deploys run on Fridays", "--kind", "FACT")
    folder = notes(project)
    write = pipeline_module.write_batch

    def interrupted(pipeline, tx, batch, *args, **kwargs):  # type: ignore[no-untyped-def]
        write(pipeline, tx, batch, *args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline_module, "write_batch", interrupted)
    ran = octomem(project, "ingest", str(folder), ok=False)
    assert (ran.code, ran.err.strip()) == (130, "interrupted before anything was stored")
    monkeypatch.setattr(pipeline_module, "write_batch", write)
    found = octomem(project, "search", "when do deploys run?", "--json").json()
    assert [h["text"] for h in found["hits"]] == ["Deploys run on Fridays"]


def test_ctrl_c_while_the_memory_opens_says_nothing_was_stored(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import octomem.engine.cli.commands as commands

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "_memory", interrupted)
    ran = octomem(project, "ingest", str(notes(project)), ok=False)
    assert (ran.code, ran.err.strip()) == (130, "interrupted before anything was stored")
    assert not (project / ".octomem").exists()


def test_ctrl_c_while_the_command_line_is_read_says_the_command_did_not_start(
        project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from octomem.engine.cli.options import Command

    def interrupted(self, ctx, args):  # type: ignore[no-untyped-def]
        raise KeyboardInterrupt

    monkeypatch.setattr(Command, "parse_args", interrupted)
    for argv in (["ingest", str(notes(project))], ["status"]):
        ran = octomem(project, *argv, ok=False)
        assert (ran.code, ran.err.strip()) == (
            130, "interrupted before the command started: nothing was stored or changed")
    assert not (project / ".octomem").exists()
