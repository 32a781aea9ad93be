"""Trial 13, F4: forgetting a correction (a statement that superseded another) left the
older statement superseded by nothing: no current answer, "nothing is stored". Now the
forget hands it on in its own transaction — current again, or superseded by the forgotten
one's successor — and says so; ``verify`` finds (and ``--repair`` revives) what an older
octomem left superseded by a forgotten statement."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.memory.facade import open_memory
from octomem.engine.types import ForgetRecord

OLD, NEW = "The API rate limit is 100 per minute", "The API rate limit is 500 per minute"


def _add(project: Path, text: str, *args: str) -> str:
    return str(octomem(project, "add", text, "--kind", "FACT", *args, "--json").json()["id"])


def test_forgetting_a_correction_makes_the_fact_it_replaced_current_again(
        project: Path) -> None:
    old = _add(project, OLD)
    new = _add(project, NEW, "--supersedes", old)
    ran = octomem(project, "forget", NEW)
    assert ran.out.splitlines()[0].startswith(f"forgot {new} from the local scope: ")
    assert ran.out.splitlines()[1] == (
        f"{old} is current again (it was superseded by the statement forgotten): '{OLD}'")
    hits = octomem(project, "search", "API rate limit", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [old]
    assert "1 current" in octomem(project, "status").out.replace("  ", " ")
    assert octomem(project, "verify").code == 0
    # as_of at any time now answers with the fact: the forgotten one never was
    hits = octomem(project, "search", "API rate limit", "--as-of", "2999-01-01",
                   "--json").json()["hits"]
    assert [h["id"] for h in hits] == [old]


def test_forgetting_the_middle_of_a_chain_links_its_ends(project: Path) -> None:
    first = _add(project, "The build runs on Python 3.10")
    middle = _add(project, "The build runs on Python 3.11", "--supersedes", first)
    last = _add(project, "The build runs on Python 3.12", "--supersedes", middle)
    ran = octomem(project, "forget", middle, "--json").json()
    assert ran["message"] == (f"forgot {middle} from the local scope; {first} is now "
                              f"superseded by {last} (the forgotten one's successor)")
    assert [(d["id"], d["superseded_by"]) for d in ran["handed_on"]] == [(first, last)]
    hits = octomem(project, "search", "build Python", "--include-superseded",
                   "--json").json()["hits"]
    assert {h["id"] for h in hits} == {first, last}
    assert octomem(project, "verify").code == 0  # last.supersedes names first now


def test_verify_finds_and_repairs_what_an_older_octomem_left(tmp_path: Path,
                                                             project: Path) -> None:
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=project, global_root=tmp_path / "global")
    try:
        fact = memory.remember(OLD, kind="FACT").document
        storage = memory.scopes.require("local").arms.storage
        with storage.transaction() as tx:  # what forget did before: superseded by nothing
            storage.supersede(tx, fact.id, "gone", fact.valid_from + 1)
            storage.record_forgotten(tx, ForgetRecord("gone", "FACT", "ab" * 32,
                                                      fact.created_at, time.time(), None))
    finally:
        memory.close()
    # F5: the empty answer no longer claims that nothing is stored
    ran = octomem(project, "search", "API rate limit", "--json").json()
    assert ran["hits"] == []
    assert ran["nothing_to_rank"] == (
        f"only a superseded statement matches: {OLD!r} (local); include superseded ones "
        "to see it (--include-superseded; MCP: include_superseded)"), ran
    ran = octomem(project, "verify", ok=False)
    assert ran.code == 1
    assert (f"local: {fact.id}: superseded by 'gone', which was forgotten: no current "
            "statement replaces it") in ran.out.replace("\n", " ") + ran.err, ran
    octomem(project, "verify", "--repair")
    assert octomem(project, "verify").code == 0
    hits = octomem(project, "search", "API rate limit", "--json").json()["hits"]
    assert [h["id"] for h in hits] == [fact.id]


@pytest.mark.slow
def test_mcp_forget_of_a_correction_answers_with_the_fact(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as mcp:
        old = mcp.ok("remember", text=OLD, kind="FACT")["id"]
        new = mcp.ok("remember", text=NEW, kind="FACT", supersedes=old)["id"]
        out = mcp.ok("forget", text_or_id=new, reason="the correction was wrong")
        assert out["message"] == (f"forgot {new} from the local scope; {old} is current "
                                  "again (it was superseded by the statement forgotten)")
        assert [(d["id"], d["superseded_by"], d["valid_to"]) for d in out["handed_on"]] == [
            (old, None, None)]
        assert [h["id"] for h in mcp.ok("recall", query="API rate limit")["hits"]] == [old]
