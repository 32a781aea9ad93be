"""Memory semantics with the bundled all-MiniLM-L6-v2 (the default embedder, no download)."""

from __future__ import annotations

from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory

pytestmark = pytest.mark.slow


def test_paraphrases_are_found_and_near_copies_reported(tmp_path: Path) -> None:
    # retrieval by meaning, not abstention: relevance (cosine and shared words) puts these
    # paraphrases below the default floor, so the floor is off here
    memory = open_memory(overrides={"retrieval": {"relevance_floor": 0}},
                         project_root=tmp_path / "project", global_root=tmp_path / "global")
    try:
        pref = memory.remember("The user prefers dark mode in every editor", scope="global",
                               kind="PREFERENCE")
        assert pref.embedded and pref.semantic_error is None
        copy = memory.remember("Note: the user prefers dark mode in every editor.",
                               scope="global")
        assert [n.document.id for n in copy.near_duplicates] == [pref.document.id]
        assert 0.85 <= copy.near_duplicates[0].similarity < 1.0
        fact = memory.remember("The CI pipeline takes about twelve minutes", kind="FACT")
        assert fact.scope == "local" and fact.near_duplicates == []
        answer = memory.recall("which colour theme does the user like?", top_k=3)
        assert answer.semantic_available and answer.arms_unavailable == {}
        assert answer.hits[0].scope == "global"
        assert answer.hits[0].chunk.document_id in {pref.document.id, copy.document.id}
        slow = memory.recall("how long does continuous integration run", top_k=1)
        assert slow.hits[0].chunk.document_id == fact.document.id
    finally:
        memory.close()
