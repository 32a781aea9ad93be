"""`add --kind` warns about a kind nobody has used (kinds are an open set), and `status`,
`config` and `plugins` speak JSON with stable keys for programs."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from cli_run import octomem

from octomem.engine.cli.machine import SCOPE_KEYS
from octomem.engine.memory.kinds import BUILT_IN_KINDS, unfamiliar_kind


def kinds_exported(project: Path, scope: str) -> list[str]:
    lines = octomem(project, "export", "--scope", scope, "-").out.splitlines()
    return [json.loads(x)["kind"] for x in lines if '"document"' in x]


def test_a_typo_kind_is_stored_with_a_warning_naming_the_kind_meant(tmp_path: Path) -> None:
    ran = octomem(tmp_path, "add", "The user likes green tea", "--kind", "PREFERNCE")
    assert ran.out.startswith("stored ")
    warning = [line for line in ran.err.splitlines() if line.startswith("warning:")]
    assert len(warning) == 1, ran.err
    assert "kind PREFERNCE is new" in warning[0] and "did you mean PREFERENCE?" in warning[0]
    assert all(k in warning[0] for k in BUILT_IN_KINDS)
    assert kinds_exported(tmp_path, "local") == ["PREFERNCE"]  # stored all the same
    again = octomem(tmp_path, "add", "The user likes black tea", "--kind", "PREFERNCE")
    assert "warning" not in again.err  # stored once, it is a kind in use


def test_built_in_kinds_and_kinds_stored_in_either_scope_pass_quietly(tmp_path: Path) -> None:
    for kind in ("FACT", "DECISION", "ITEM"):
        assert "warning" not in octomem(tmp_path, "add", f"a {kind} note", "--kind", kind).err
    octomem(tmp_path, "add", "Uses a jukebox", "--kind", "GADGET", "--scope", "global")
    ran = octomem(tmp_path, "add", "Uses a kettle", "--kind", "GADGET")  # into local
    assert "warning" not in ran.err
    quiet = octomem(tmp_path, "add", "odd", "--kind", "QWERTY")
    assert "kind QWERTY is new" in quiet.err and "did you mean" not in quiet.err


def test_a_kind_that_is_not_one_word_is_still_refused(tmp_path: Path) -> None:
    ran = octomem(tmp_path, "add", "x", "--kind", "two words", ok=False)
    assert ran.code == 2 and ran.err.startswith("error: --kind: must be one word of ASCII letters")
    assert "warning" not in ran.err and not (tmp_path / ".octomem").exists()  # nothing stored


def test_a_kind_in_lower_case_is_stored_and_filtered_in_capitals(tmp_path: Path) -> None:
    ran = octomem(tmp_path, "add", "The staging database is Postgres 16", "--kind", "fact",
                  "--json")
    assert "warning" not in ran.err and json.loads(ran.out)["kind"] == "FACT"
    found = json.loads(octomem(tmp_path, "recall", "staging database", "--kind", "Fact",
                               "--json").out)
    assert [h["kind"] for h in found["hits"]] == ["FACT"]


def test_unfamiliar_kind_says_nothing_for_a_known_kind() -> None:
    assert unfamiliar_kind("RULE", []) is None
    assert unfamiliar_kind("GADGET", ["GADGET"]) is None
    assert "did you mean GADGET?" in (unfamiliar_kind("GADGTE", ["GADGET"]) or "")


def test_status_json_holds_the_real_counts(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "The build uses make", "--kind", "FACT")
    octomem(tmp_path, "add", "The build uses ninja", "--kind", "FACT")
    status = octomem(tmp_path, "status", "--json").json()
    local = status["scopes"]["local"]
    assert list(local)[:len(SCOPE_KEYS)] == list(SCOPE_KEYS) and "extra" in local
    assert local["exists"] is True and local["documents"] == 2 and local["current"] == 2
    assert local["chunks"] == 2 and local["chunks_without_vector"] == 0
    assert local["size_bytes"] > 0 and local["arms"]["embedder"] == "hashing"
    assert local["embedder_model"].startswith("hashing") and local["semantic_available"]
    assert Path(local["root"]) == (tmp_path / ".octomem").resolve()
    assert Path(status["project_root"]) == tmp_path.resolve()
    added = datetime.fromisoformat(local["extra"]["newest_document_at"])
    assert abs((datetime.now(UTC) - added).total_seconds()) < 600
    human = octomem(tmp_path, "status").out
    assert "2 (2 current, 0 superseded; 0 forgotten)" in human  # the same facts
    assert f"newest document {added:%Y-%m-%d %H:%M} UTC" in " ".join(human.split())


def test_status_json_of_a_scope_not_created_has_every_key(tmp_path: Path) -> None:
    scopes = octomem(tmp_path, "status", "--json").json()["scopes"]
    local = scopes["local"]
    assert set(SCOPE_KEYS) <= set(local) and local["exists"] is False
    assert local["documents"] == 0 and local["size_bytes"] == 0
    # the arms and the model as configured, and what creates the store (F12)
    assert local["arms"]["embedder"] == "hashing" and local["arms"]["storage"] == "sqlite"
    assert local["embedder_model"].startswith("hashing") and local["semantic_available"]
    assert local["not_created"].startswith("no store yet: the first write into this scope")
    assert not (tmp_path / ".octomem").exists()


def test_config_json_gives_value_group_and_layer_of_every_setting(tmp_path: Path) -> None:
    settings = octomem(tmp_path, "--set", "retrieval.top_k=7", "config", "--json").json()[
        "settings"]
    assert settings["retrieval.top_k"] == {
        "value": 7, "group": "retrieval", "layer": "--set",
        "description": settings["retrieval.top_k"]["description"]}
    assert settings["retrieval.top_k"]["description"]
    assert settings["pipeline.embedder"]["value"] == "hashing"
    assert settings["retrieval.rrf_k"]["layer"] == "default"
    assert settings["global_root"]["value"] is None
    assert any(k.startswith("arms.fts5.") for k in settings)  # configured arms' options
    human = octomem(tmp_path, "--set", "retrieval.top_k=7", "config").out
    printed = [line.split(" = ")[0] for line in human.splitlines()[1:] if " = " in line]
    assert printed == list(settings)  # the same keys, in the same order


def test_plugins_json_lists_the_installed_arms(tmp_path: Path) -> None:
    arms = octomem(tmp_path, "plugins", "--json").json()["arms"]
    by = {(a["kind"], a["name"]): a for a in arms}
    assert by[("keyword", "fts5")]["distribution"] == "octomem"
    assert by[("semantic", "sqlite-vec")]["version"]
    assert {("storage", "sqlite"), ("embedder", "fastembed"), ("reranker", "conversation"),
            ("dedup", "cosine")} <= set(by)
    kinds = [a["kind"] for a in arms]
    order = ["storage", "keyword", "embedder", "semantic", "reranker", "dedup"]
    assert kinds == sorted(kinds, key=order.index)
    assert all(set(a) == {"kind", "name", "distribution", "version", "description"}
               for a in arms)
