"""The ingest-overhead benchmark: the split of a real ingest, the ratio, the report table."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from octomem.benchmarks.ingest_overhead import (
    PARTS,
    ingest_once,
    overhead,
    summarise,
    to_markdown,
)
from octomem.engine.manager import ArmRegistry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings

ROWS = [
    {"_id": "d1", "title": "Vitamin D", "text": "Vitamin D supports bone density in adults."},
    {"_id": "d2", "title": "", "text": "Statins lower LDL cholesterol. " * 200},  # 2+ chunks
    {"_id": "d3", "title": "Sleep", "text": "Short sleep raises blood pressure."},
]


def parts(chunking: float, storage: float, keyword: float, embedding: float,
          vectors: float) -> dict[str, float]:
    return {"chunking": chunking, "storage": storage, "keyword": keyword,
            "embedding": embedding, "vectors": vectors, "vectors_add": vectors / 2}


def test_overhead_ratio_is_storage_keyword_vectors_over_embedding() -> None:
    p = parts(1.0, 0.5, 0.25, 10.0, 0.25)
    assert overhead(p) == pytest.approx(0.1)
    assert overhead(p, with_chunking=True) == pytest.approx(0.2)


def test_summary_and_table_use_medians(tmp_path: Path) -> None:
    runs: list[dict[str, Any]] = [
        {"documents": 500, "chunks": 900, "model_load_s": 0.3, "total_s": t,
         "parts": parts(1.0, 0.1, 0.02, e, 0.08)}
        for t, e in ((50.0, 48.0), (100.0, 98.0), (60.0, 58.0))
    ]
    summary = summarise(runs)
    assert summary["parts_s"]["embedding"] == 58.0 and summary["docs_per_s"] == 8.3
    assert summary["chunks_per_s"] == 15.0
    assert summary["overhead"] == pytest.approx(0.2 / 58.0, abs=1e-4)
    data = {"label": "", "date": "2026-01-01 00:00 UTC", "corpus": "scifact",
            "arms": "sqlite+fts5+fastembed+sqlite-vec", "summary": summary,
            "machine": {"cpus": 2, "platform": "Linux", "python": "3.11.7"},
            "load_1m": {"start": 1.0, "end": 2.0}}
    markdown = to_markdown(data)
    assert "| embedding | 58.000 | 100.0% |" in markdown
    assert "| chunking | 1.000 | 1.7% |" in markdown
    assert "**8.3 docs/s**" in markdown and "**0.3%** (target <= 10%: met)" in markdown


def test_a_real_ingest_is_split_into_parts_that_add_up(
    tmp_path: Path, registry: ArmRegistry
) -> None:
    corpus = tmp_path / "beir"
    corpus.mkdir()
    (corpus / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))

    def open_pipeline(root: Path) -> Pipeline:
        overrides = {"data_dir": str(root), "pipeline": {"embedder": "hashing"}}
        return Pipeline(load_settings(overrides=overrides), registry, root)

    run = ingest_once(corpus, 2, tmp_path / "scope", open_pipeline)
    assert run["documents"] == 2 and run["chunks"] >= 3 and run["embedded"] == run["chunks"]
    assert set(run["parts"]) == set(PARTS)
    assert all(v >= 0 for v in run["parts"].values())
    assert run["parts"]["embedding"] > 0 and run["parts"]["keyword"] > 0
    split = sum(run["parts"][p] for p in PARTS if p != "vectors_add")
    assert split == pytest.approx(run["total_s"])
    assert run["parts"]["vectors_add"] <= run["parts"]["vectors"]
