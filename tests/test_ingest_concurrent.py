"""Ingests of one folder running at once (trial 17 G14): the chunks one of them is
embedding are not embedded again by the others, nor called "left without a vector by an
earlier ingest"; a killed ingest's chunks still are (the lock dies with its process).
Real ``octomem ingest`` processes beside a real process embedding through the pipeline,
on a real SQLite file."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.embedding_lock import EmbeddingLock

pytestmark = [pytest.mark.slow]

OCTOMEM = str(Path(sys.executable).with_name("octomem"))
#: Notes in the folder.
NOTES = 40
#: Hang guard on a loaded machine (not a speed target).
LIMIT_S = 300.0


def _notes(folder: Path) -> None:
    folder.mkdir()
    for i in range(NOTES):
        (folder / f"n{i:04d}.md").write_text(
            f"# Ticket OPS-{i}\n\nOn day {i % 365} the cluster {i % 17} was restarted by "
            f"operator {i % 11} after alert {100 + i % 900}.\n", encoding="utf-8")


#: A process that stores and embeds in the project's local scope as an ingest does
#: (Pipeline.embedding around embed_pending), holding the lock until told to go on.
EMBEDDER = """
import sys
from pathlib import Path
from octomem.engine.memory.facade import open_memory
memory = open_memory(None, {"pipeline": {"embedder": "hashing"}}, Path(sys.argv[1]))
pipeline = memory.scopes.require("local")
with pipeline.embedding():
    own = pipeline.arms.semantic.missing()  # the chunks it stored, as an ingest knows them
    print("embedding", flush=True)
    sys.stdin.readline()
    print(pipeline.embed_pending(chunk_ids=own), flush=True)
memory.close()
"""


def test_an_ingest_waits_for_the_one_embedding_and_embeds_nothing_twice(
        tmp_path: Path) -> None:
    _notes(tmp_path / "notes")
    (tmp_path / ".git").mkdir()  # the project's top
    # the state while an ingest embeds: documents stored, their vectors not yet written
    octomem(tmp_path, "--set", "pipeline.semantic=", "ingest", "notes")
    embedder = subprocess.Popen([sys.executable, "-c", EMBEDDER, str(tmp_path)], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert embedder.stdin is not None and embedder.stdout is not None
    try:
        assert embedder.stdout.readline() == "embedding\n"
        second = subprocess.Popen(
            [OCTOMEM, "--set", "pipeline.embedder=hashing", "ingest", "notes"], cwd=tmp_path,
            env={**os.environ, "COLUMNS": "200"}, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE)
        assert second.stderr is not None
        note = second.stderr.readline()  # it waits for the embedding process
        assert note.startswith("note: another ingest is storing or embedding in this "
                               "scope: waiting until it is done"), note
        embedder.stdin.write("go on\n")
        embedder.stdin.flush()
        assert embedder.stdout.readline() == f"{NOTES}\n"  # it embedded every chunk
        out, err = second.communicate(timeout=LIMIT_S)
    finally:
        embedder.kill()
        embedder.wait(LIMIT_S)
    assert second.returncode == 0, err
    assert out.splitlines() == [f"added 0, replaced 0, unchanged {NOTES} documents; "
                                "0 chunks indexed, 0 embedded"]
    assert "left without a vector" not in out + err
    status = octomem(tmp_path, "status", "--json").json()["scopes"]["local"]
    assert (status["chunks"], status["chunks_without_vector"]) == (NOTES, 0)


def _holding(root: Path, exclusive: bool = False) -> subprocess.Popen[str]:
    """Start a process that holds the embedding lock of the scope in ``root`` (shared, or
    exclusively) until it is killed; return it once it holds it."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from octomem.engine.embedding_lock import EmbeddingLock\n"
        "lock = EmbeddingLock(sys.argv[1])\n"
        "lock.share()\n"
        f"{'lock.exclusive()' if exclusive else ''}\n"
        "print('held', flush=True)\n"
        "time.sleep(600)\n"), str(root)], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def test_chunks_of_an_ingest_that_died_are_still_resumed(tmp_path: Path) -> None:
    # a process that holds the lock and dies (killed) releases it: the chunks it left
    # without a vector are embedded by the next ingest, and called so
    (tmp_path / ".git").mkdir()
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("The billing service uses PostgreSQL 16.\n")
    octomem(tmp_path, "--set", "pipeline.semantic=", "ingest", "notes")  # stored, no vector
    holder = _holding(tmp_path / ".octomem")
    try:
        holder.kill()
        holder.wait(LIMIT_S)
    finally:
        if holder.poll() is None:
            holder.kill()
    again = octomem(tmp_path, "ingest", "notes")
    assert again.out.splitlines() == [
        "added 0, replaced 0, unchanged 1 document; 0 chunks indexed, 1 embedded "
        "(1 left without a vector by an earlier ingest)"]
    assert "waiting until it is done" not in again.err


def test_a_resumer_waits_for_every_storer_and_storers_share(tmp_path: Path) -> None:
    storer, other, resumer = (EmbeddingLock(tmp_path) for _ in range(3))
    storer.share()
    other.share()  # two ingests store and embed at once: neither waits
    waiting, done = threading.Event(), threading.Event()

    def resume() -> None:
        resumer.share()
        resumer.exclusive(waiting.set)
        done.set()

    thread = threading.Thread(target=resume)
    thread.start()
    assert waiting.wait(LIMIT_S)  # it found the storers holding it
    storer.release()
    assert not done.wait(0.5)  # one storer is still at work
    other.release()
    assert done.wait(LIMIT_S)
    thread.join(LIMIT_S)
    resumer.release()


def _embedding_beside(tmp_path: Path) -> subprocess.Popen[str]:
    """Store the notes without vectors, then start :data:`EMBEDDER` on them (it holds the
    lock shared, as an ingest that stored them and is about to embed them)."""
    _notes(tmp_path / "notes")
    (tmp_path / ".git").mkdir()
    octomem(tmp_path, "--set", "pipeline.semantic=", "ingest", "notes")
    embedder = subprocess.Popen([sys.executable, "-c", EMBEDDER, str(tmp_path)], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert embedder.stdout is not None and embedder.stdout.readline() == "embedding\n"
    return embedder


def _go_on(embedder: subprocess.Popen[str]) -> str:
    """Let :data:`EMBEDDER` embed; return what it says it embedded."""
    assert embedder.stdin is not None and embedder.stdout is not None
    embedder.stdin.write("go on\n")
    embedder.stdin.flush()
    return embedder.stdout.readline()


@pytest.mark.parametrize("command", ["reindex", "import"])
def test_reindex_and_import_wait_for_the_one_embedding_and_embed_nothing_twice(
        tmp_path: Path, command: str) -> None:
    """`reindex` and `import` embed every chunk of the scope without a vector; while an
    ingest embeds its own they used to embed those too (all 40 twice)."""
    args = ["reindex"]
    if command == "import":  # one statement exported from another project
        other = tmp_path / "other"
        other.mkdir()
        (other / ".git").mkdir()
        octomem(other, "remember", "The staging cluster runs Kubernetes 1.31.")
        octomem(other, "export", "--scope", "local", str(tmp_path / "export.jsonl"))
        args = ["import", "--scope", "local", str(tmp_path / "export.jsonl")]
    embedder = _embedding_beside(tmp_path)
    try:
        second = subprocess.Popen(
            [OCTOMEM, "--set", "pipeline.embedder=hashing", *args], cwd=tmp_path,
            env={**os.environ, "COLUMNS": "200"}, text=True, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT)
        assert second.stdout is not None
        said: list[str] = []  # what it says until it waits for the embedding
        while not said or not said[-1].startswith("note: an ingest is storing or "
                                                  "embedding in this scope: waiting until "
                                                  "it is done"):
            said.append(second.stdout.readline())
            assert said[-1], said  # it ended without waiting
        assert _go_on(embedder) == f"{NOTES}\n"  # it embedded every chunk it stored
        out, _ = second.communicate(timeout=LIMIT_S)
    finally:
        embedder.kill()
        embedder.wait(LIMIT_S)
    out = "".join(said) + out
    assert second.returncode == 0, out
    if command == "reindex":
        assert "local: embedded 0 chunks; 0 without a vector" in out, out
    else:
        assert "local scope: 1 added, 0 replaced" in out and out.endswith(
            "forget-log entries, 1 chunk embedded\n"), out  # its own chunk only
    status = octomem(tmp_path, "status", "--json").json()["scopes"]["local"]
    assert status["chunks_without_vector"] == 0
    assert status["chunks"] == NOTES + (command == "import")


def test_remember_does_not_wait_behind_an_exclusive_holder(tmp_path: Path) -> None:
    """A process holding the lock exclusively (an ingest resuming a killed one's chunks,
    for minutes) chose its chunks already: remember stores and embeds its statement at
    once instead of waiting."""
    (tmp_path / ".git").mkdir()
    octomem(tmp_path, "remember", "The billing service uses PostgreSQL 16.")  # the scope
    holder = _holding(tmp_path / ".octomem", exclusive=True)
    try:
        done = octomem(tmp_path, "remember", "The search cluster runs OpenSearch 2.17.",
                       spawn=True)
        assert holder.poll() is None  # still holding it
    finally:
        holder.kill()
        holder.wait(LIMIT_S)
    assert done.code == 0
    status = octomem(tmp_path, "status", "--json").json()["scopes"]["local"]
    assert (status["documents"], status["chunks_without_vector"]) == (2, 0)


def test_a_share_that_does_not_wait_and_a_share_again(tmp_path: Path) -> None:
    """remember's hold (shared, never waiting) and reindex's (shared again after the
    exclusive wait)."""
    lock = EmbeddingLock(tmp_path)
    assert lock.share(wait=False)
    other = EmbeddingLock(tmp_path)
    assert other.share(wait=False)  # shared: both hold it
    other.release()
    resumer = EmbeddingLock(tmp_path)
    resumer.share()
    lock.release()
    resumer.exclusive()  # nobody else holds it now
    late = EmbeddingLock(tmp_path)
    assert not late.share(wait=False)  # held exclusively: it does not wait, holds nothing
    resumer.share_again()
    assert late.share(wait=False)  # shared again: others may store and embed meanwhile
    late.release()
    resumer.release()
