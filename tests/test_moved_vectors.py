"""A folder of notes and a transcript folder that moved, ingested again from their new
place: their chunks take the vectors already stored for the same text instead of being
embedded again (:mod:`octomem.engine.vector_reuse`). Real SQLite stores; the embedder is
the real one (the packaged MiniLM, or the hashing embedder where only the count matters)
wrapped so that every text it is asked to embed is counted."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from cli_run import octomem

from octomem.engine.chunking import embedding_text
from octomem.engine.memory.facade import Memory, open_memory


class CountingEmbedder:
    """The configured embedder itself, noting every text it is asked to embed."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)


def _counting(memory: Memory) -> CountingEmbedder:
    """Wrap the local scope's embedder in a :class:`CountingEmbedder`."""
    pipeline = memory.scopes.get("local")
    assert pipeline is not None
    counting = CountingEmbedder(pipeline.arms.embedder)
    pipeline.arms = dataclasses.replace(pipeline.arms, embedder=counting)
    return counting


def _notes(folder: Path, n: int) -> None:
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"note-{i:03d}.md").write_text(
            f"# Decision {i}\n\nThe team chose option {i % 7} for service {i} because its "
            f"latency was {10 + i} ms under load.\n")
    long = "\n\n".join(f"Paragraph {p}: " + " ".join(f"word{p}x{w}" for w in range(60))
                       for p in range(8))
    (folder / "long.md").write_text(f"# Runbook\n\n{long}\n")
    (folder / "untitled.txt").write_text("No heading here, so the file name is its title.\n")


def _session(path: Path) -> None:
    """A Claude Code session of three exchanges."""
    records = []
    for i in range(3):
        for role, text, uid in (
                ("user", f"Question {i}: where is the config for service {i}?", f"u-{i}"),
                ("assistant", [{"type": "text", "text": f"In conf/{i}.toml, loaded at start."}],
                 f"a-{i}")):
            records.append({"type": role, "uuid": uid, "sessionId": "S", "cwd": "/work",
                            "timestamp": f"2026-11-20T09:0{i}:{len(records):02d}.000Z",
                            "message": {"role": role, "content": text}})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _vectors(memory: Memory) -> dict[str, np.ndarray]:
    """Every current chunk's vector, by its embedding text."""
    pipeline = memory.scopes.get("local")
    assert pipeline is not None
    chunks = list(pipeline.arms.storage.iter_chunks())
    vectors = pipeline.arms.semantic.vectors([c.id for c in chunks])
    return {embedding_text(c): vectors[i] for i, c in enumerate(chunks)}


def _open(project: Path, tmp_path: Path, embedder: str | None) -> Memory:
    project.mkdir(exist_ok=True)
    overrides = {"pipeline": {"embedder": embedder}} if embedder else {}
    return open_memory(overrides=overrides, project_root=project,
                       global_root=tmp_path / "global")


def test_a_moved_folder_and_transcript_are_not_embedded_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _notes(project / "docs", 12)
    _session(project / "sessions" / "s1.jsonl")
    memory = _open(project, tmp_path, None)  # the packaged MiniLM
    try:
        memory.ingest(str(project / "docs"))
        memory.ingest(str(project / "sessions"))
        before = _vectors(memory)
        counting = _counting(memory)
        (project / "docs").rename(project / "handbook")
        (project / "handbook" / "untitled.txt").rename(project / "handbook" / "renamed.txt")
        (project / "archive").mkdir()
        (project / "sessions").rename(project / "archive" / "sessions")
        _, files = memory.ingest(str(project / "handbook"))
        _, turns = memory.ingest(str(project / "archive" / "sessions"))
        after = _vectors(memory)
        status = memory.scopes.get("local").status()  # type: ignore[union-attr]
    finally:
        memory.close()
    assert len(files.moved_files) == 14 and len(turns.replaced) == 6
    # only the renamed file's chunk, whose title is its new name, was embedded
    assert counting.texts == ["renamed\nNo heading here, so the file name is its title."]
    assert status["chunks_without_vector"] == 0
    long = [t for t in after if t.startswith("Runbook\n")]
    assert len(long) > 1  # a note of several chunks
    assert len(after) == len(before) == 13 + len(long) + 6 - 1 + 1
    for text, vector in after.items():
        if text in before:  # the same bytes as the vector stored for the same text
            assert np.array_equal(vector, before[text]), text

    fresh = _open(tmp_path / "fresh", tmp_path, None)  # the moved folders, embedded anew
    try:
        fresh.ingest(str(project / "handbook"))
        fresh.ingest(str(project / "archive" / "sessions"))
        embedded = _vectors(fresh)
    finally:
        fresh.close()
    assert embedded.keys() == after.keys()
    for text, vector in after.items():  # float32 rounding of another batch's padding
        np.testing.assert_allclose(vector, embedded[text], atol=1e-5, err_msg=text)


def test_an_edited_note_embeds_only_its_changed_chunks(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _notes(project / "docs", 2)
    memory = _open(project, tmp_path, "hashing")
    try:
        memory.ingest(str(project / "docs"))
        counting = _counting(memory)
        note = project / "docs" / "long.md"
        text = note.read_text()
        note.write_text(text.replace("word7x59", "an edit at the very end"))
        _, report = memory.ingest(str(project / "docs"))
        after = _vectors(memory)
    finally:
        memory.close()
    assert len(report.replaced) == 1 and not report.added
    assert len(counting.texts) == 1 and "an edit at the very end" in counting.texts[0]
    assert all(np.dot(v, v) > 0.99 for v in after.values())  # every chunk has its vector


def test_the_ingest_summary_says_how_many_vectors_were_reused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    _notes(project / "docs", 4)
    first = octomem(project, "ingest", "docs")
    assert "added 6, replaced 0, unchanged 0 documents; 8 chunks indexed, 8 embedded\n" \
        in first.out
    (project / "docs").rename(project / "handbook")
    ran = octomem(project, "ingest", "handbook")
    # 4 notes, the long note's 3 chunks and the text file: every vector reused
    assert ("added 6, replaced 0, unchanged 0 documents; 8 chunks indexed, 0 embedded, 8 "
            "given the vector stored for the same text\n") in ran.out
    assert ran.out.count("moved: docs/") == 6
