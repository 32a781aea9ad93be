"""The realistic scale corpus: base texts, perturbation, the written folder, recall vs exact."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from realistic_sources import ABSTRACTS, TURNS, write_sources
from typer.testing import CliRunner

from octomem.benchmarks import realistic_data, synthetic
from octomem.benchmarks.exact import exact_top_k, recall_at_k
from octomem.benchmarks.realistic_texts import (
    LOCOMO,
    SCIFACT,
    group_sentences,
    read_base_texts,
    split_sentences,
)
from octomem.engine.errors import OctomemError
from octomem.plugins.hashing.embedder import HashingEmbedder

NO_PROGRESS = lambda label, total: lambda n: None  # noqa: E731


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting its ``embed_documents`` calls."""

    calls = 0

    def embed_documents(self, texts):  # type: ignore[no-untyped-def]
        CountingEmbedder.calls += 1
        return super().embed_documents(texts)


@pytest.fixture
def sources(tmp_path: Path) -> Path:
    return write_sources(tmp_path / "data")


@pytest.fixture
def base(sources: Path):  # type: ignore[no-untyped-def]
    emb = HashingEmbedder()
    return read_base_texts(sources, emb.count_tokens, emb.max_tokens, seed=1)


def test_split_sentences_keeps_abbreviations_and_numbers() -> None:
    text = "Mice, e.g. rats, were used (p < 0.05). In 2010 it stopped! Why? (Yes.)"
    assert split_sentences(text) == [
        "Mice, e.g. rats, were used (p < 0.05).",
        "In 2010 it stopped!",
        "Why?",
        "(Yes.)",
    ]


def test_group_sentences_sizes_and_token_limit() -> None:
    rng = np.random.default_rng(0)
    tokens = [3, 4, 9, 2, 2, 20, 1]
    groups, skipped = group_sentences(["s"] * 7, tokens, limit=10, rng=rng)
    assert skipped == 1  # the 20-token sentence alone exceeds the limit
    covered = [i for a, b in groups for i in range(a, b)]
    assert covered == [0, 1, 2, 3, 4, 6]
    assert all(1 <= b - a <= 3 and sum(tokens[a:b]) <= 10 for a, b in groups)


def test_base_texts_from_both_sources(base) -> None:  # type: ignore[no-untyped-def]
    n_sci = base.sources.count(SCIFACT)
    assert base.sources.count(LOCOMO) == len(TURNS) and base.texts[n_sci:] == TURNS
    # every SciFact sentence is in exactly one chunk, in order
    assert " ".join(base.texts[:n_sci]) == " ".join(ABSTRACTS.values())
    assert set(base.queries) == {"q1", "q2"}  # q3's abstract is not in the corpus
    assert " ".join(base.texts[i] for i in base.qrels["q2"]) == ABSTRACTS["30"]
    assert base.tokens == HashingEmbedder().count_tokens(base.texts)


def test_sigma_gives_the_target_cosine_and_unit_norm() -> None:
    sigma = realistic_data.sigma_for(0.93, 384)
    assert sigma == pytest.approx(0.020175, abs=1e-5)
    rng = np.random.default_rng(3)
    v = rng.standard_normal((4000, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    p = realistic_data.perturb(v, sigma, rng)
    assert p.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(p, axis=1), 1.0, atol=1e-5)
    cos = np.sum(v * p, axis=1)
    assert 0.90 < cos.min() and cos.max() < 0.95
    assert cos.mean() == pytest.approx(0.93, abs=0.003)
    with pytest.raises(ValueError, match="cosine"):
        realistic_data.sigma_for(1.0, 384)


def test_base_vectors_are_cached_by_model_and_texts(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    CountingEmbedder.calls = 0
    emb = CountingEmbedder()
    first, record = realistic_data.base_vectors(base.texts, emb, tmp_path, NO_PROGRESS)
    assert first.shape == (len(base.texts), 384) and first.dtype == np.float32
    np.testing.assert_allclose(first, emb.embed_documents(base.texts), atol=1e-6)
    calls = CountingEmbedder.calls
    again, _ = realistic_data.base_vectors(base.texts, emb, tmp_path, NO_PROGRESS)
    assert CountingEmbedder.calls == calls and np.array_equal(first, again)
    assert record["model_id"] == "hashing-v1-dim384" and record["texts"] == len(base.texts)
    realistic_data.base_vectors(base.texts[:-1], emb, tmp_path, NO_PROGRESS)
    assert CountingEmbedder.calls > calls  # other texts: a new cache file


def _write(base, vectors, folder: Path, n: int, seed: int = 7) -> Path:  # type: ignore[no-untyped-def]
    return realistic_data.write_corpus(folder, n, 100, base, vectors, NO_PROGRESS, seed=seed)


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "corpus.jsonl").open()]


def test_extension_is_deterministic_and_close_to_real_vectors(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    vectors = HashingEmbedder().embed_documents(base.texts)
    n = 10 * len(base.texts)
    a, b = _write(base, vectors, tmp_path / "a", n), _write(base, vectors, tmp_path / "b", n)
    assert (a / "corpus.jsonl").read_bytes() == (b / "corpus.jsonl").read_bytes()
    va, vb = np.load(a / realistic_data.DOC_VECTORS), np.load(b / realistic_data.DOC_VECTORS)
    assert va.shape == (n, 384) and np.array_equal(va, vb)
    other = np.load(_write(base, vectors, tmp_path / "c", n, seed=8) / realistic_data.DOC_VECTORS)
    assert not np.array_equal(va, other)
    rows = _rows(a)
    assert [r["_id"] for r in rows] == [f"d{i}" for i in range(n)]
    n_base = len(base.texts)
    assert [r["text"] for r in rows[:n_base]] == base.texts and np.array_equal(va[:n_base], vectors)
    ext = va[n_base:]
    np.testing.assert_allclose(np.linalg.norm(ext, axis=1), 1.0, atol=1e-5)
    nearest = (ext @ vectors.T).max(axis=1)  # each copy is ~0.93 from its source
    assert 0.90 < nearest.min() and nearest.max() < 0.96
    n_sci = base.sources.count(SCIFACT)
    for row in rows[n_base:]:  # two base texts of one source, joined by a space
        pairs = [(s, t) for s in base.texts for t in base.texts if f"{s} {t}" == row["text"]]
        assert any((base.texts.index(s) < n_sci) == (base.texts.index(t) < n_sci) for s, t in pairs)


def test_small_sizes_sample_the_base_and_keep_judged_chunks(base, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    vectors = HashingEmbedder().embed_documents(base.texts)
    folder = _write(base, vectors, tmp_path / "s", 5)
    rows = _rows(folder)
    assert len(rows) == 5 and len(set(r["text"] for r in rows)) == 5
    judged = {base.texts[i] for q in ("q1", "q2") for i in base.qrels[q]}
    assert judged <= {r["text"] for r in rows}
    qrels = (folder / "qrels" / "test.tsv").read_text().splitlines()[1:]
    by_id = {r["_id"]: r["text"] for r in rows}
    assert {by_id[line.split("\t")[1]] for line in qrels} == judged
    lookup = realistic_data.vectors_for(folder)
    position = {t: i for i, t in enumerate(base.texts)}

    class C:
        def __init__(self, doc: str) -> None:
            self.document_id = doc

    got = lookup([C("d4"), C("d0")])
    assert np.array_equal(got, vectors[[position[by_id["d4"]], position[by_id["d0"]]]])


def test_exact_top_k_and_recall_by_hand() -> None:
    vectors = np.array([[1, 0], [0.8, 0.6], [0, 1], [-1, 0], [0.8, 0.6]], dtype=np.float32)
    queries = np.array([[1, 0], [0, 1]], dtype=np.float32)
    # scores q0: 1, .8, 0, -1, .8 -> 0, then the tie 1 and 4 (lower index first)
    assert exact_top_k(vectors, queries, 3).tolist() == [[0, 1, 4], [2, 1, 4]]
    assert exact_top_k(vectors, queries, 9).shape == (2, 5)
    exact = {"a": ["d0", "d1", "d4"], "b": ["d2", "d1", "d4"]}
    found = {"a": ["d0", "d4", "d3"], "b": ["d9"]}
    assert recall_at_k(found, exact, 3) == pytest.approx((2 / 3 + 0) / 2)
    assert recall_at_k(found, exact, 1) == pytest.approx(0.5)
    assert recall_at_k({}, exact, 3) == 0.0


def test_realistic_scale_curve_end_to_end(
    sources: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bandwidth = {"sum": 1e10, "sgemv": 1e10, "best": 1e10}
    monkeypatch.setattr(synthetic, "measure_bandwidth", lambda: dict(bandwidth))
    out = tmp_path / "out"
    result = synthetic.run_scale_curve(
        "6,40",
        out,
        None,
        {"pipeline": {"embedder": "hashing"}},
        None,
        cache_dir=tmp_path / "cache",
        corpus="realistic",
        sources=sources,
        rows=("fts5=fts5", "sqlite-vec=sqlite-vec", "hybrid=fts5+sqlite-vec+rrf"),
    )
    assert (
        result["corpus_info"]["base_texts"] == len(TURNS) + result["corpus_info"]["scifact_chunks"]
    )
    for size in result["sizes"]:
        rows = size["rows"]
        assert size["build"]["vectors"]["precomputed"] is True
        assert rows["sqlite-vec"]["recall_at_10_vs_exact"] == 1.0  # sqlite-vec KNN is exact
        assert "recall_at_10_vs_exact" not in rows["hybrid"]
        p50 = rows["sqlite-vec"]["latency"]["sqlite-vec"]["p50_ms"]
        assert rows["sqlite-vec"]["floor_ratio"] == pytest.approx(p50 / size["floor_ms"])
        assert size["floor_ms"] == pytest.approx(size["docs"] * 384 * 4 / 1e10 * 1e3)
    assert (out / "scale-realistic.md").is_file() and not (out / "scale.md").exists()
    text = (out / "scale-realistic.md").read_text()
    assert "recall@10 vs exact" in text and "| 40 | sqlite-vec |" in text


def test_cli_rejects_corpus_without_synthetic(tmp_path: Path) -> None:
    from octomem.engine.cli import app

    result = CliRunner().invoke(app, ["bench", str(tmp_path), "--corpus", "realistic"])
    assert result.exit_code != 0
    assert "--synthetic" in str(result.exception) + result.output


def test_unknown_corpus_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(OctomemError, match="--corpus 'nope'"):
        synthetic.run_scale_curve("10", tmp_path, None, {}, None, corpus="nope")


def test_random_corpus_keeps_its_report_and_gets_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(
        synthetic, "measure_bandwidth", lambda: {"sum": 1.0, "sgemv": 1.0, "best": 1e10}
    )
    out = tmp_path / "out"
    result = synthetic.run_scale_curve(
        "30", out, None, {}, None, cache_dir=tmp_path / "cache",
        rows=("fts5=fts5", "sqlite-vec=sqlite-vec"),
    )  # fmt: skip
    row = result["sizes"][0]["rows"]["sqlite-vec"]
    assert result["corpus"] == "random" and row["semantic"] == "sqlite-vec"
    assert row["recall_at_10_vs_exact"] == 1.0
    assert result["sizes"][0]["build"]["vectors"]["model_id"] == "synthetic-gaussian-v1-dim384"
    assert (out / "scale.md").is_file() and "random corpus" in (out / "scale.md").read_text()
