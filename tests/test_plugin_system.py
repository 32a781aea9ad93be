"""Plugin loading, the registry's errors, assembly checks, and a test plugin end to end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from octomem.engine.arms import ARM_KINDS
from octomem.engine.assembly import check_compatible
from octomem.engine.cli import app
from octomem.engine.errors import (
    ArmConfigError,
    ArmNotFoundError,
    DuplicateArmError,
    IncompatibleArmsError,
    PluginLoadError,
)
from octomem.engine.manager import load_registry
from octomem.engine.pipeline import Pipeline
from octomem.engine.settings import PipelineSettings, load_settings
from octomem.engine.types import Document, Query

Install = Callable[[str, str], Path]

UPPER_EMBEDDER = '''
from __future__ import annotations
import hashlib
import numpy as np
from octomem.engine.arms import ArmSpec
from octomem.engine.hookspecs import hookimpl

class Letters:
    """Counts letters: a deterministic toy embedder."""
    name = "letters"
    model_id = "letters-v1"
    dim = 26
    max_tokens = 254
    def count_tokens(self, texts):
        return [len(t.split()) for t in texts]
    def embed_documents(self, texts):
        out = np.zeros((len(texts), 26), np.float32)
        for i, t in enumerate(texts):
            for ch in t.lower():
                if "a" <= ch <= "z":
                    out[i, ord(ch) - 97] += 1
        out[:, 0] += (out.sum(axis=1) == 0)
        return out / np.linalg.norm(out, axis=1, keepdims=True)
    def embed_query(self, text):
        return self.embed_documents([text])[0]

@hookimpl
def octomem_register_embedders():
    return [ArmSpec("embedder", "letters", lambda options, context: Letters(), description="toy")]
'''

STORAGE_ONLY = '''
from octomem.engine.arms import ArmSpec
from octomem.engine.hookspecs import hookimpl

@hookimpl
def octomem_register_storages():
    return [ArmSpec("storage", "paper", lambda o, c: None, description="not a real storage")]
'''

DUPLICATE_FTS5 = '''
from octomem.engine.arms import ArmSpec
from octomem.engine.hookspecs import hookimpl

@hookimpl
def octomem_register_keyword_arms():
    return [ArmSpec("keyword", "fts5", lambda o, c: None)]
'''


def test_every_kind_has_a_default_arm_from_the_octomem_distribution() -> None:
    registry = load_registry()
    for kind in ARM_KINDS:
        provided = registry.provided(kind)
        assert provided, kind
        assert {p.distribution for p in provided} >= {"octomem"}
    # optional plugins (octomem-postgres, ...) may add storages of their own
    assert [p.spec.name for p in registry.provided("storage") if p.distribution == "octomem"] \
        == ["sqlite"]
    assert {"fastembed", "hashing"} <= set(registry.names("embedder"))


def test_unknown_arm_lists_what_exists() -> None:
    with pytest.raises(ArmNotFoundError, match=r"no embedder arm named 'nope'; installed "
                                               r"embedder arms: .*fastembed.*hashing"):
        load_registry().get("embedder", "nope")


def test_test_plugin_shows_in_octomem_plugins_and_is_selectable(install: Install,
                                                                 data_dir: Path) -> None:
    install("octomem_letters", UPPER_EMBEDDER)
    out = CliRunner().invoke(app, ["plugins"], env={"COLUMNS": "200"}).output
    line = next(row for row in out.splitlines() if "letters" in row)
    assert "embedder" in line and "octomem-letters" in line and "0.0.1" in line
    loaded = load_settings(overrides={"data_dir": str(data_dir),
                                      "pipeline": {"embedder": "letters"}})
    pipeline = Pipeline(loaded, load_registry())
    pipeline.add([Document("zebra zoo", id="z"), Document("apple banana", id="a")])
    answer = pipeline.search(Query("zzz", top_k=1))
    assert pipeline.status()["embedder_model"] == "letters-v1"
    assert answer.arms_ran == ["fts5", "sqlite-vec"]
    assert answer.hits[0].chunk.document_id == "z"  # found by letters only: fts5 has no "zzz"
    pipeline.close()


def _open(data_dir: Path, embedder: str) -> Pipeline:
    overrides = {"data_dir": str(data_dir), "pipeline": {"embedder": embedder}}
    return Pipeline(load_settings(overrides=overrides), load_registry())


def test_switching_embedders_keeps_each_models_vectors_and_reindex_fills_the_gap(
    install: Install, data_dir: Path
) -> None:
    install("octomem_letters", UPPER_EMBEDDER)
    p = _open(data_dir, "hashing")
    p.add([Document("vectors from the hashing model", id="h")])
    p.close()
    p = _open(data_dir, "letters")  # no vector of letters-v1 yet: recall says so
    answer = p.search(Query("hashing model"))
    assert answer.semantic_available and answer.arms_ran == ["fts5", "sqlite-vec"]
    assert answer.chunks_without_vector == 1 and answer.unembedded_hits == [1]
    assert [h.chunk.document_id for h in answer.hits] == ["h"]  # found by its words
    assert "sqlite-vec" not in answer.hits[0].contributions  # hashing vectors never compared
    report = p.add([Document("zebra zoo", id="z")])  # new chunks get letters vectors only
    assert report.embedded == 1 and p.status()["chunks_without_vector"] == 1
    assert [h.chunk.document_id for h in p.search(Query("zzz")).hits] == ["z"]  # by letters
    p.close()
    runner = CliRunner()
    out = runner.invoke(app, ["--data-dir", str(data_dir), "reindex", "--embedder", "letters"])
    assert out.exit_code == 0, out.output
    said = " ".join(out.output.split())
    assert "embedding for letters-v1" in said
    assert "global: embedded 1 chunk; 0 without a vector" in said
    p = _open(data_dir, "letters")
    answer = p.search(Query("hashing model"))
    assert answer.chunks_without_vector == 0 and "sqlite-vec" in answer.hits[0].contributions
    p.close()
    p = _open(data_dir, "hashing")  # switching back: the hashing vector of "h" is still there
    answer = p.search(Query("hashing model"))
    assert answer.chunks_without_vector == 1  # "z" came while letters was selected
    assert answer.hits[0].chunk.document_id == "h" and "sqlite-vec" in answer.hits[0].contributions
    p.close()
    out = runner.invoke(app, ["--data-dir", str(data_dir), "--set", "pipeline.embedder=hashing",
                              "reindex"])
    said = " ".join(out.output.split())
    assert "embedding for hashing-v1-dim384" in said
    assert "global: embedded 1 chunk; 0 without a vector" in said


def test_reindex_without_a_semantic_arm_says_there_is_nothing_to_embed(data_dir: Path) -> None:
    out = CliRunner().invoke(app, ["--data-dir", str(data_dir), "--set", "pipeline.semantic=",
                                   "reindex", "--embedder", "hashing"])
    assert out.exit_code != 0
    assert "no semantic arm is configured" in str(out.exception)


def test_fts5_needs_sqlite_storage_and_says_so(install: Install) -> None:
    install("octomem_paper", STORAGE_ONLY)
    with pytest.raises(IncompatibleArmsError, match=r"keyword arm 'fts5' needs storage "
                                                    r"'sqlite', but pipeline.storage is 'paper'"):
        check_compatible(PipelineSettings(storage="paper", semantic=None), load_registry())


def test_semantic_without_embedder_names_both() -> None:
    with pytest.raises(IncompatibleArmsError, match=r"semantic arm 'sqlite-vec' needs an embedder"):
        check_compatible(PipelineSettings(embedder=None), load_registry())


def test_duplicate_arm_names_name_both_providers(install: Install) -> None:
    install("octomem_dup", DUPLICATE_FTS5)
    with pytest.raises(DuplicateArmError, match=r"keyword arm 'fts5' is registered twice") as info:
        load_registry()
    assert "'fts5 (octomem)'" in str(info.value)
    assert "'octomem_dup (octomem-dup)'" in str(info.value)


def test_a_plugin_that_fails_to_import_is_named(install: Install) -> None:
    install("octomem_broken", "raise RuntimeError('boom at import')\n")
    with pytest.raises(PluginLoadError, match=r"plugin 'octomem_broken' from distribution "
                       r"'octomem-broken' failed to load: RuntimeError: boom at import") as info:
        load_registry()
    assert isinstance(info.value.__cause__, RuntimeError)


def test_bad_arm_option_names_setting_and_closest_key(data_dir: Path) -> None:
    loaded = load_settings(overrides={"data_dir": str(data_dir),
                                      "arms": {"cosine": {"treshold": 0.5}}})
    with pytest.raises(ArmConfigError, match=r"unknown setting 'arms.cosine.treshold' in "
                                              r"--set; did you mean 'arms.cosine.threshold'"):
        Pipeline(loaded, load_registry())


def test_cli_errors_are_one_line(data_dir: Path) -> None:
    result = CliRunner().invoke(app, ["--data-dir", str(data_dir), "--set",
                                      "pipeline.keyword=bm99", "status"])
    # CliRunner bypasses main(); check the exception is ours and its message is one line
    assert isinstance(result.exception, ArmNotFoundError)
    assert "\n" not in str(result.exception)


@pytest.fixture
def install(install_test_plugin: Install) -> Install:
    return install_test_plugin
