"""A word only one stored file holds, asked on its own, finds that file (trial 10).

The keyword arm found the one file holding "QY0003", but the keyword run held that one
hit: its z-score within the run had no spread (0), so the document's relevance fell
under ``retrieval.document_relevance_floor`` and the answer abstained; "token QY0003"
(a word every file holds filling the run with zeros) found it. A run shorter than the
``k`` asked of it is the top ``k`` of a store whose other chunks score 0.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from octomem.engine.memory.facade import open_memory
from octomem.engine.relevance import run_stats

WORDS = ("station mountain disk photo river harbour bridge album platform lens battery "
         "cable server backup camera charger ticket").split()


def test_a_short_keyword_run_is_padded_with_the_stores_zero_scores() -> None:
    short = run_stats([0.4] * 4, [7.78], k=4)
    padded = run_stats([0.4] * 4, [7.78, 0.0, 0.0, 0.0], k=4)
    assert short == padded and short.kw_z(7.78) == pytest.approx(3 ** 0.5)
    assert run_stats([0.4], [7.78], k=4).kw_std == 0.0  # no background: nothing padded
    assert run_stats([0.4] * 4, [7.78], k=None).kw_std == 0.0  # k unknown


@pytest.mark.slow
def test_a_unique_marker_asked_alone_finds_its_file(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    rng = random.Random(3)
    for i in range(130):  # more files than candidate_k (100): the runs are a background
        body = " ".join(rng.choice(WORDS) for _ in range(60))
        (notes / f"n{i:04d}.md").write_text(
            f"# N {i}\n\n{body}. Marker token QY{i:04d}.\n", encoding="utf-8")
    (tmp_path / "project").mkdir()
    memory = open_memory(overrides={"data_dir": str(tmp_path / "data")},  # the packaged MiniLM
                         project_root=tmp_path / "project")
    try:
        memory.ingest(str(notes))
        for query, title in (("QY0003", "N 3"), ("qy0003", "N 3"), ("find QY0042", "N 42"),
                             ("token QY0003", "N 3")):
            answer = memory.recall(query)
            assert answer.hits, (query, answer.abstained)
            first = answer.hits[0]
            assert first.chunk.title == title, query
            assert "fts5" in first.contributions
            assert first.relevance.probability >= 0.07
    finally:
        memory.close()
