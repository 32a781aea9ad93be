"""Combination parsing and the default rows."""

from __future__ import annotations

import pytest

from octomem.benchmarks.combos import GREP, Combo, default_combos, parse_combo
from octomem.benchmarks.command import bench_registry, resolve_combos
from octomem.engine.errors import OctomemError
from octomem.engine.manager import ArmRegistry
from octomem.engine.settings import Settings, load_settings


@pytest.fixture(scope="module")
def registry() -> ArmRegistry:
    return bench_registry()


@pytest.fixture
def settings() -> Settings:
    return load_settings(read_user_config=False).settings


def test_named_hybrid(registry: ArmRegistry, settings: Settings) -> None:
    combo = parse_combo("hybrid=fts5+sqlite-vec", registry, settings)
    assert (combo.name, combo.keyword, combo.semantic, combo.embedder) == (
        "hybrid",
        "fts5",
        "sqlite-vec",
        "fastembed",
    )
    assert combo.fusion is None and combo.dedup is None and combo.reranker is None
    assert combo.chunker == "fastembed" and not combo.single_arm
    assert combo.settings_overrides()["pipeline"] == {
        "keyword": "fts5",
        "semantic": "sqlite-vec",
        "embedder": "fastembed",
        "reranker": None,
        "dedup": None,
    }


def test_unnamed_spec_is_its_own_name(registry: ArmRegistry, settings: Settings) -> None:
    combo = parse_combo("rank-bm25", registry, settings)
    assert combo.name == "rank-bm25" and combo.keyword == "rank-bm25" and combo.single_arm
    assert combo.embedder is None and combo.chunker == settings.pipeline.embedder


def test_fusion_dedup_embedder_and_overrides(registry: ArmRegistry, settings: Settings) -> None:
    combo = parse_combo(
        "w=fts5+sqlite-vec+hashing+cosine+weighted+retrieval.weights.fts5=2+arms.fts5.stopwords=false",
        registry,
        settings,
    )
    assert combo.embedder == "hashing" and combo.chunker == "hashing"
    assert combo.dedup == "cosine" and combo.fusion == "weighted"
    overrides = combo.settings_overrides()
    assert overrides["retrieval"] == {"weights": {"fts5": 2}, "fusion": "weighted"}
    assert overrides["arms"] == {"fts5": {"stopwords": False}}
    assert "retrieval.weights.fts5=2" in combo.spec()


def test_unnamed_spec_with_an_override(registry: ArmRegistry, settings: Settings) -> None:
    combo = parse_combo("fts5+retrieval.rrf_k=20", registry, settings)
    assert combo.name == "fts5+retrieval.rrf_k=20" and combo.overrides == {
        "retrieval": {"rrf_k": 20}
    }


def test_kind_qualified_name(registry: ArmRegistry, settings: Settings) -> None:
    assert parse_combo("x=keyword:fts5", registry, settings).keyword == "fts5"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=nope", "no arm named 'nope'"),
        ("x=fts5+rank-bm25", "two keyword arms"),
        ("x=cosine", "names no keyword or semantic arm"),
        ("x=fts5++sqlite-vec", "empty part"),
        ("x=", "expected NAME=arm"),
        ("x=storage:sqlite", "not an arm kind"),
    ],
)
def test_bad_combos(registry: ArmRegistry, settings: Settings, text: str, message: str) -> None:
    with pytest.raises(OctomemError, match=message):
        parse_combo(text, registry, settings)


def test_semantic_needs_an_embedder(registry: ArmRegistry) -> None:
    settings = load_settings(
        overrides={"pipeline": {"embedder": None}}, read_user_config=False
    ).settings
    with pytest.raises(OctomemError, match="needs an embedder"):
        parse_combo("s=sqlite-vec", registry, settings)


def test_default_rows(registry: ArmRegistry, settings: Settings) -> None:
    rows = {c.name: c for c in default_combos(registry, settings)}
    assert list(rows)[0] == GREP
    assert {
        "fts5",
        "rank-bm25",
        "sqlite-vec",
        "hybrid-rrf",
        "hybrid-weighted",
        "hybrid-rrf+cosine",
    } <= set(rows)
    assert rows["hybrid-weighted"].fusion == "weighted"
    assert rows["hybrid-rrf+cosine"].dedup == "cosine"
    # the configured reranker (the default `conversation`) gets one row of its own; every
    # other row runs without a reranker
    assert rows["hybrid-rrf+conversation"].reranker == "conversation"
    assert not any(c.reranker for name, c in rows.items() if name != "hybrid-rrf+conversation")
    assert not rows[GREP].single_arm and rows["fts5"].single_arm


def test_reranker_row_when_one_is_configured(registry: ArmRegistry) -> None:
    settings = load_settings(
        overrides={"pipeline": {"reranker": "cross-encoder"}}, read_user_config=False
    ).settings
    rows = {c.name: c for c in default_combos(registry, settings)}
    assert rows["hybrid-rrf+cross-encoder"].reranker == "cross-encoder"


def test_row_names_must_be_unique(registry: ArmRegistry) -> None:
    loaded = load_settings(read_user_config=False)
    with pytest.raises(OctomemError, match="unique"):
        resolve_combos(["a=fts5", "a=rank-bm25"], registry, loaded)


def test_combo_single_arm_excludes_grep() -> None:
    assert not Combo("g", keyword=GREP).single_arm
    assert Combo("s", semantic="sqlite-vec", embedder="hashing").single_arm


def test_defaults_value_expands_to_the_default_rows(registry: ArmRegistry) -> None:
    loaded = load_settings(read_user_config=False)
    rows = resolve_combos(["defaults", "k5=fts5+sqlite-vec+retrieval.rrf_k=5"], registry, loaded)
    names = [c.name for c in rows]
    assert names[:-1] == [c.name for c in default_combos(registry, loaded.settings)]
    assert names[-1] == "k5" and rows[-1].overrides == {"retrieval": {"rrf_k": 5}}
    assert [c.name for c in resolve_combos(None, registry, loaded)] == names[:-1]


def test_default_rows_skip_keyword_arms_for_another_storage(settings: Settings) -> None:
    from octomem.benchmarks import baseline
    from octomem.engine.arms import ArmSpec
    from octomem.engine.hookspecs import hookimpl
    from octomem.engine.manager import load_registry

    class OtherStorageArm:
        @hookimpl
        def octomem_register_keyword_arms(self) -> list[ArmSpec]:
            return [ArmSpec(kind="keyword", name="elsewhere", factory=lambda o, c: None,
                            requires_storage=frozenset({"elsewhere-db"}))]

    registry = load_registry(extra_plugins=[baseline, OtherStorageArm()])
    assert "elsewhere" not in {c.keyword for c in default_combos(registry, settings)}
