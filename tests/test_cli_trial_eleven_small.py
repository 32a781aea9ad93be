"""Small CLI findings of fresh-user trial 11 (finding 13), each through the real CLI on a
real SQLite store."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

from cli_run import octomem

from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.sources import file_document


def _usage(tmp_path: Path, *args: str) -> str:
    ran = octomem(tmp_path, *args, ok=False)
    assert ran.code == 2, (args, ran.code, ran.err)
    assert ran.out == "" and ran.err.count("\n") == 1, (args, ran.err)
    return ran.err


def test_add_refuses_an_empty_tag_as_search_does(tmp_path: Path) -> None:
    for blank in ("", "  "):
        err = _usage(tmp_path, "add", "The CI runs on Ubuntu", "--tag", "ci", "--tag", blank)
        assert err == ("error: --tag: a tag is empty; give short non-empty labels; see "
                       "`octomem add --help`\n")
    assert not (tmp_path / ".octomem").exists()  # nothing stored


def test_an_arm_named_on_the_command_line_that_no_plugin_has_is_a_usage_error(
        tmp_path: Path) -> None:
    err = _usage(tmp_path, "--set", "pipeline.embedder=nonexistent", "status")
    assert err.startswith("error: setting 'pipeline.embedder' from --set: no embedder arm "
                          "named 'nonexistent'; installed embedder arms: ")
    assert err.endswith("; see `octomem --help`\n")
    octomem(tmp_path, "add", "Deploys happen on Tuesdays")
    err = _usage(tmp_path, "reindex", "--embedder", "nope")
    assert err.startswith("error: setting 'pipeline.embedder' from --embedder: no embedder "
                          "arm named 'nope'")
    assert err.endswith("; see `octomem reindex --help`\n")
    # the same name from the environment or a file is no usage error: status 1
    ran = octomem(tmp_path, "status", ok=False, OCTOMEM_PIPELINE__EMBEDDER="nope", hashing=False)
    assert ran.code == 1 and "from environment: no embedder arm named 'nope'" in ran.err


def test_beir_given_the_corpus_file_says_to_give_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "mini"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(json.dumps({"_id": "1", "text": "a row"}) + "\n")
    err = _usage(tmp_path, "ingest", "--beir", str(folder / "corpus.jsonl"))
    assert err == (f"error: {folder / 'corpus.jsonl'}: a file; give the BEIR folder that "
                   f"holds it ({folder}), not the file itself; see `octomem ingest --help`\n")


def test_a_supersede_across_scopes_is_told_in_the_clis_words(tmp_path: Path) -> None:
    old = octomem(tmp_path, "add", "The VPN endpoint is vpn1.example.com", "--json").json()["id"]
    ran = octomem(tmp_path, "add", "The VPN endpoint is vpn2.example.com", "--supersedes", old,
                  "--scope", "global", ok=False)
    assert "scope=" not in ran.err, ran.err
    assert "so store it in the local scope (or give no scope" in ran.err


def test_crlf_line_ends_are_stored_as_lf(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_bytes(b"\xef\xbb\xbf# BOM note\r\nThe coffee machine is on floor 2.\r\n\r\n"
                     b"Old Mac line\rends too.\r\n")
    octomem(tmp_path, "ingest", "note.md")
    stored = [json.loads(line) for line in
              octomem(tmp_path, "export", "--scope", "local", "-").out.splitlines()]
    texts = [r["text"] for r in stored if r.get("text")]
    assert texts == ["# BOM note\nThe coffee machine is on floor 2.\n\nOld Mac line\nends too.\n"]
    assert "unchanged 1" in octomem(tmp_path, "ingest", "note.md").out


def test_a_file_stored_with_crlf_before_becomes_its_next_revision_once(tmp_path: Path) -> None:
    note = tmp_path / "note.md"
    note.write_bytes(b"# Note\r\nDeploys happen on Tuesdays.\r\n")
    memory = open_memory(None, {"pipeline": {"embedder": "hashing"}}, tmp_path)
    try:  # as an ingest before line ends were made LF stored it
        old = file_document(note)
        memory.scopes.require("local", create=True).add(
            [replace(old, text=old.text.replace("\n", "\r\n"))])
    finally:
        memory.close()
    assert "replaced 1" in octomem(tmp_path, "ingest", "note.md").out
    assert "unchanged 1" in octomem(tmp_path, "ingest", "note.md").out


def test_an_as_of_miss_says_the_match_was_not_true_yet(tmp_path: Path) -> None:
    lunch = tmp_path / "lunch.md"
    lunch.write_text("# Lunch\nLunch is served at noon in the canteen.\n")
    os.utime(lunch, (1577836800, 1577836800))  # 2020-01-01: true long before the date asked
    octomem(tmp_path, "ingest", "lunch.md")
    octomem(tmp_path, "add", "The office moves to Berlin", "--event-time", "2030-01-01")
    out = octomem(tmp_path, "search", "office Berlin", "--as-of", "2026-06-01").out
    assert out.startswith(
        "no hits for 'office Berlin': nothing that was true at 2026-06-01T23:59:59Z answers "
        "this: the best match at any time, 'The office moves to Berlin' (local), became true "
        "only at 2030-01-01T00:00:00Z; of what was true then, nothing stored answers this "
        "(the best match's relevance "), out
    assert "The office moves to Berlin" in octomem(tmp_path, "search", "office Berlin").out
