"""Embedding stored chunks reports progress early: batches of 8, 16, 32, ... up to
``retrieval.embed_batch_size``, each committed, so a bar moves after a few chunks rather
than after the first full batch (seventh user trial: ``0/1,054`` for 80 s under load)."""

from __future__ import annotations

from pathlib import Path

from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document
from octomem.engine.writes import ramped


def test_ramped_batches_keep_every_item_in_order() -> None:
    items = list(range(300))
    sizes = [len(b) for b in ramped(items, 64)]
    assert sizes == [8, 16, 32, 64, 64, 64, 52]
    assert [i for b in ramped(items, 64) for i in b] == items
    assert [len(b) for b in ramped(items[:5], 64)] == [5]
    assert [len(b) for b in ramped(items[:20], 4)] == [4] * 5  # never above the setting


def test_embed_pending_reports_after_the_first_few_chunks(tmp_path: Path) -> None:
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"},
                                    "retrieval": {"embed_batch_size": 64}})
    pipeline = Pipeline(settings, load_registry(), tmp_path / "store")
    try:
        pipeline.add([Document(f"note {i} about server {i}", id=f"n{i}") for i in range(100)],
                     embed=False)
        semantic = pipeline.arms.semantic
        assert semantic is not None and semantic.missing_count() == 100
        steps: list[int] = []
        embedded = pipeline.embed_pending(steps.append)
        assert (embedded, steps) == (100, [8, 16, 32, 44])
        assert semantic.missing_count() == 0
    finally:
        pipeline.close()
