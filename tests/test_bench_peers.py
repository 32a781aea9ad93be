"""The scale curve's peers: faiss + bm25s and LanceDB over the same texts and vectors,
exact, filtered to one group, timed beside octomem's pipeline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from octomem.benchmarks import peers
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import load_settings
from octomem.engine.types import Document

WORDS = ["kinase", "protein", "zebrafish", "prion", "cell", "membrane", "river", "garden"]


def _corpus(n: int = 60) -> peers.PeerCorpus:
    rng = np.random.default_rng(3)
    texts = [" ".join(rng.choice(WORDS, size=5)) + f" doc{i}" for i in range(n)]
    vectors = rng.standard_normal((n, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return peers.PeerCorpus(texts, vectors, np.arange(n) % peers.GROUPS)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[peers.PeerCorpus, list]:
    corpus = _corpus()
    return corpus, [peers.FaissBm25s(corpus),
                    peers.Lance(corpus, tmp_path_factory.mktemp("lance"))]


def test_vector_search_is_exact_and_filters_to_the_group(built: tuple) -> None:
    corpus, systems = built
    query = corpus.vectors[7] + 0.1 * corpus.vectors[8]
    query = (query / np.linalg.norm(query)).astype(np.float32)
    exact = np.argsort(-(corpus.vectors @ query), kind="stable")
    in_group = [int(r) for r in exact if corpus.groups[r] == 3]
    for system in systems:
        assert system.vector(query, None)[:10] == exact[:10].tolist(), system.name
        assert system.vector(query, 3) == in_group, system.name  # 6 rows, all of group 3


def test_keyword_search_finds_the_word_within_the_group(built: tuple) -> None:
    corpus, systems = built
    for system in systems:
        hits = system.keyword("doc13 zebrafish", 3)
        assert hits and hits[0] == 13, system.name
        assert all(corpus.groups[h] == 3 for h in hits), system.name
        assert system.keyword("doc13", None)[0] == 13, system.name


def test_rrf_and_ratios() -> None:
    assert peers.rrf([[1, 2, 3], [3, 1]], k=2) == [1, 3, 2]
    got = peers.ratios({"octomem hybrid": 5.0, "faiss+bm25s hybrid": 10.0,
                        "lancedb hybrid": 4.0, "octomem vector": 1.0})
    assert got == {"hybrid": {"best_peer": "lancedb", "ratio": 1.25}}


def test_run_peers_times_octomem_and_peers_interleaved(tmp_path: Path) -> None:
    corpus = _corpus(40)
    settings = load_settings(None, {"pipeline": {"embedder": "hashing"}})
    pipeline = Pipeline(settings, load_registry(), tmp_path / "store")
    docs = [Document(t, id=f"d{i}", metadata={"group": peers.group_of(i)})
            for i, t in enumerate(corpus.texts)]
    pipeline.add(docs)
    pipeline.warm()
    embed = pipeline.arms.embedder.embed_query
    same = peers.PeerCorpus(corpus.texts, np.stack([embed(t) for t in corpus.texts]),
                            corpus.groups)
    queries = [f"doc{i} kinase" for i in range(12)]
    out = peers.run_peers(pipeline, same, queries, tmp_path / "lance", skip={})
    pipeline.close()
    for mode in ("unfiltered", "filtered"):
        p50 = out["p50_ms"][mode]
        assert set(p50) == {f"{s} {kind}" for s in ("octomem", "faiss+bm25s", "lancedb")
                            for kind in ("keyword", "vector", "hybrid")}
        assert all(ms > 0 for ms in p50.values()), p50
        assert set(out["ratios"][mode]) == {"keyword", "vector", "hybrid"}
    lines = peers.peers_markdown([{"docs": 40, "peers": out}])
    assert len(lines) == 2 + 6 and "10 %" in lines[-1]
