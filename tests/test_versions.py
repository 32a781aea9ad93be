"""Item versions: a write that names the version it read is refused once the item changed
(two memories on the same files, as a page and an agent in two processes)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from octomem.engine.errors import InvalidQueryError, StaleVersionError
from octomem.engine.memory.facade import Memory, open_memory
from octomem.engine.memory.versions import document_version
from octomem.engine.memory.view import item

HASHING = {"pipeline": {"embedder": "hashing"}}


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[Memory, Memory]]:
    """The same project's memory opened twice: ``(page, agent)``."""
    (tmp_path / "p").mkdir()
    opened = [open_memory(overrides=HASHING, project_root=tmp_path / "p",
                          global_root=tmp_path / "g") for _ in range(2)]
    yield opened[0], opened[1]
    for memory in opened:
        memory.close()


def test_a_recall_is_not_a_change(pair: tuple[Memory, Memory]) -> None:
    page, agent = pair
    stored = agent.remember("The build cache lives on the NFS share").document
    read = item(page, stored.id).version
    assert read == document_version(stored)
    assert agent.recall("build cache NFS").hits  # counts a recall on it
    assert agent.find(stored.id)[0][1].recalls == 1
    assert item(page, stored.id).version == read
    page.forget(stored.id, expect_version=read)
    assert agent.find(stored.id) == []


def test_forget_refuses_a_superseded_read(pair: tuple[Memory, Memory]) -> None:
    page, agent = pair
    old = agent.remember("Releases are cut on Mondays").document
    read = item(page, old.id).version
    newer = agent.remember("Releases are cut on Tuesdays", supersedes=old.id).document
    with pytest.raises(StaleVersionError, match=f"superseded by {newer.id!r}.*nothing was"):
        page.forget(old.id, expect_version=read)
    assert agent.find(old.id)[0][1].superseded_by == newer.id  # kept as history
    agent.forget(newer.id)
    with pytest.raises(StaleVersionError, match="forgotten after it was read"):
        page.remember("Releases are cut on Fridays", supersedes=newer.id,
                      expect_version=document_version(newer))


def test_supersede_refuses_a_changed_read(pair: tuple[Memory, Memory], tmp_path: Path) -> None:
    page, agent = pair
    note = tmp_path / "p" / "deploy.md"
    note.write_text("# Deploy\n\nDeploys need two approvals.\n")
    scope, _ = agent.ingest(str(note))
    doc_id = agent.statements(scope)[0].id
    read = item(page, doc_id).version
    note.write_text("# Deploy\n\nDeploys need one approval.\n")
    agent.ingest(str(note))  # a new revision: the page's read is stale
    with pytest.raises(StaleVersionError, match="now revision 2"):
        page.remember("Deploys need three approvals", supersedes=doc_id, expect_version=read)
    texts = [d.text for d in agent.statements(scope, include_superseded=True)]
    assert "Deploys need three approvals" not in texts
    fresh = item(page, doc_id).version
    with pytest.raises(InvalidQueryError, match="is an ingested file"):  # trial 13 F2
        page.remember("Deploys need three approvals", supersedes=doc_id, expect_version=fresh)
    fact = agent.remember("Deploys need two approvals").document.id
    read = item(page, fact).version
    agent.remember("Deploys need one approval", supersedes=fact)  # the page's read is stale
    with pytest.raises(StaleVersionError, match="superseded by"):
        page.remember("Deploys need three approvals", supersedes=fact, expect_version=read)

