"""A recall with the bundled MiniLM, once loaded, tokenizes its query on the calling
thread, starts the keyword arm on a worker and runs the model on the calling thread
meanwhile (``retrieval.parallel_arms``; issue 12, latency): the same vectors bit for bit,
the same answer as the sequential recall, the threads as said (a model not loaded yet
loads on a worker while the keyword arm searches), and an embedder's failure still
reported, not raised."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.memory.facade import open_memory
from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions
from octomem.plugins.fts5.arm import Fts5KeywordArm

QUESTIONS = ["When did Caroline go to the LGBTQ support group?",
             "what did you suggest for the uploads that kept failing",
             "naïve café — ünïcödé and a much longer question about the trip to the lake"]
TURNS = ["Where did you go hiking last weekend?", "Up the kestrel ridge trail, it was steep.",
         "Did you take the dog along?", "Yes, Pepper loved the ridge and the lake.",
         "I bought new boots for the next hike.", "The invoice archive keeps PDFs for years."]
CHAT = "".join(json.dumps({"session": str(i // 3 + 1), "speaker": ("Ann", "Bo")[i % 2],
                           "text": text, "time": f"2024-05-0{i // 3 + 1}T10:00:00Z"}) + "\n"
               for i, text in enumerate(TURNS))


def test_a_query_job_gives_embed_querys_vector_bit_for_bit() -> None:
    embedder = FastembedEmbedder(FastembedOptions())
    for text in QUESTIONS:
        job = embedder.query_job(text)
        assert job is not None
        got, want = job(), embedder.embed_query(text)
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape == (384,)
        assert got.tobytes() == want.tobytes()


def _recorded(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    seen: dict[str, list[str]] = {"keyword": [], "model": []}
    search = Fts5KeywordArm.search

    def keyword(self: Any, *args: Any) -> Any:
        seen["keyword"].append(threading.current_thread().name)
        return search(self, *args)

    job = FastembedEmbedder.query_job

    def model(self: Any, text: str) -> Callable[[], Any] | None:
        run = job(self, text)
        if run is None:
            return None

        def traced() -> Any:
            seen["model"].append(threading.current_thread().name)
            return run()

        return traced

    monkeypatch.setattr(Fts5KeywordArm, "search", keyword)
    monkeypatch.setattr(FastembedEmbedder, "query_job", model)
    return seen


def test_parallel_recall_runs_the_model_here_and_answers_as_the_sequential_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chat = tmp_path / "chat.jsonl"
    chat.write_text(CHAT, encoding="utf-8")
    seen = _recorded(monkeypatch)
    answers = {}
    for parallel in (False, True):
        memory = open_memory(overrides={"data_dir": str(tmp_path / "data"),
                                        "retrieval": {"parallel_arms": parallel}},
                             project_root=tmp_path)
        if not answers:
            memory.ingest(str(chat), scope="global")
        embedder = memory.scopes.require("global").arms.embedder
        if parallel:  # not loaded yet: loaded on a worker, the keyword arm searching here
            assert not embedder.loaded
            first = memory.recall("the invoice archive", scope="global", count=False)
            assert seen["model"] == [] and seen["keyword"][-1] == "MainThread"
            assert first.hits and "load_model" in first.timings_ms
        got = memory.recall("did Bo take the dog up the ridge", scope="global", top_k=5,
                            count=False, as_of="2030-01-01")
        answers[parallel] = [(h.chunk.id, h.score, h.relevance) for h in got.hits]
        assert {"fts5", "sqlite-vec", "conversation"} <= set(got.arms_ran)
        assert got.timings_ms["embed_query"] > 0
        memory.close()
    assert answers[True] == answers[False] and len(answers[True]) >= 2
    # sequential: no job, keyword here; parallel: the model here, the keyword arm on a worker
    assert seen["model"] == ["MainThread"]
    assert seen["keyword"][0] == "MainThread" and seen["keyword"][-1].startswith("octomem-arm")


@pytest.mark.parametrize("when", ["load", "run"])
def test_an_embedders_failure_is_reported_not_raised(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    memory = open_memory(overrides={"data_dir": str(tmp_path / "data")}, project_root=tmp_path)
    memory.remember("the kestrel ridge trail is steep", scope="global")

    def failing(self: Any, text: str) -> Callable[[], Any]:
        if when == "load":
            raise EmbedderUnavailableError("fastembed: cannot load: broken")

        def run() -> Any:
            raise EmbedderUnavailableError("fastembed: model gives vectors of shape (3,)")

        return run

    monkeypatch.setattr(FastembedEmbedder, "query_job", failing)
    got = memory.recall("kestrel ridge", scope="global", count=False)
    memory.close()
    assert [h.chunk.text for h in got.hits] == ["the kestrel ridge trail is steep"]
    assert "fts5" in got.arms_ran and "sqlite-vec" not in got.arms_ran
    assert any("fastembed" in why for why in got.arms_unavailable.values())
