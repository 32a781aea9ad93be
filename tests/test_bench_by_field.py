"""``benchmarks/by_field.py``: saved TREC runs scored per query metadata value (ranx)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bench_data import write_beir

from octomem.benchmarks.by_field import by_field, main, read_trec


def _trec(path: Path, rows: list[tuple[str, str, float]]) -> Path:
    ranks: dict[str, int] = {}
    lines = []
    for q, d, s in rows:
        ranks[q] = ranks.get(q, 0) + 1
        lines.append(f"{q} Q0 {d} {ranks[q]} {s} row\n")
    path.write_text("".join(lines), encoding="utf-8")
    return path


def test_each_group_is_scored_on_its_own_queries(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    folder = write_beir(tmp_path / "beir")
    runs = tmp_path / "runs"
    runs.mkdir()
    # g1: q1 finds a1 first (nDCG 1), q4 misses a3 (0); g2: q2 finds b3 second, q3 b2 first
    _trec(runs / "good.trec", [("q1", "a1", 3.0), ("q1", "a2", 2.0), ("q4", "a2", 1.0),
                               ("q2", "b1", 2.0), ("q2", "b3", 1.0), ("q3", "b2", 5.0)])
    result = by_field(folder, {"good": read_trec(runs / "good.trec")}, "test", "grp")
    assert result["good"]["g1"][0] == 2
    assert result["good"]["g1"][1]["ndcg@10"] == pytest.approx(0.5)
    assert result["good"]["g1"][1]["recall@10"] == pytest.approx(0.5)
    # q2: b3 (grade 2) at rank 2, ideal at rank 1; q3: 1.0 (ranx nDCG, linear gains)
    assert result["good"]["g2"][1]["ndcg@10"] == pytest.approx((1 / 1.5849625 + 1) / 2,
                                                               rel=1e-6)
    out = tmp_path / "table.md"
    main([str(folder), str(runs), "--field", "grp", "--out", str(out)])
    printed = capsys.readouterr().out
    assert printed == out.read_text(encoding="utf-8")
    assert printed.splitlines()[2] == "| g1 | 2 | 0.5000 | 0.5000 |"


def test_a_malformed_run_line_names_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.trec"
    bad.write_text("q1 Q0 a1 1 2.0 row\nq1 Q0 a2\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.trec:2: a TREC run line has 6 fields, not 3"):
        read_trec(bad)
