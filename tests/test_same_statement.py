"""Trial 13 F7: texts that render alike are one statement.

Before, ``add`` stored "The café opens at nine" in NFC and again in NFD (only a
"nearly the same (1.000)" note) and again with a zero-width space; a search then showed
the zero-width variant. Now the second and third are ``already stored``, ``forget`` by
the text in either form finds it, and the stored text stays as first written.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.statement_key import lookup_forms, statement_key
from octomem.engine.types import Document

NFC = "The café opens at nine"
NFD = unicodedata.normalize("NFD", NFC)
ZWSP = "The\u200b café opens at nine"


def _texts(project: Path) -> list[str]:
    with sqlite3.connect(project / ".octomem" / "octomem.sqlite3") as db:
        return [row[0] for row in db.execute(  # a statement's text is its chunk's
            "SELECT c.text FROM chunks c JOIN documents d ON d.id = c.document_id "
            "ORDER BY d.created_at")]


def test_the_key_folds_only_what_changes_nothing_shown() -> None:
    assert NFD != NFC and statement_key(NFD) == statement_key(ZWSP) == NFC
    assert statement_key(" a\u00adb\ufeff ") == "ab"
    assert statement_key("x²") == "x²" and statement_key("Café") != statement_key("café")
    assert statement_key("invoice\u202efdp.exe") != statement_key("invoicefdp.exe")
    assert statement_key("👨\u200d👩") != statement_key("👨👩")  # a joiner changes the emoji
    assert lookup_forms(ZWSP) == [ZWSP, NFC, NFD]


def test_add_stores_a_canonically_equal_text_once(tmp_path: Path) -> None:
    first = octomem(tmp_path, "add", NFC, "--json").json()
    for same in (NFD, NFC + " ", ZWSP):
        again = octomem(tmp_path, "add", same, "--json").json()
        assert again["already_stored"] is True and again["id"] == first["id"], again
    assert _texts(tmp_path) == [NFC]  # as first written
    hits = octomem(tmp_path, "search", "café opens at nine", "--json").json()["hits"]
    assert [h["text"] for h in hits] == [NFC]
    gone = octomem(tmp_path, "forget", NFD).out  # forget by the other form finds it
    assert f"forgot {first['id']}" in gone and _texts(tmp_path) == []


def test_a_text_stored_with_an_invisible_character_is_found_by_the_plain_one(
        tmp_path: Path) -> None:
    """The lookup by text cannot find ``ZWSP`` from ``NFC``; the near-duplicate check
    (cosine 1.0) does, and compares the texts' keys."""
    first = octomem(tmp_path, "add", ZWSP, "--json").json()
    again = octomem(tmp_path, "add", NFC, "--json").json()
    assert again["already_stored"] is True and again["id"] == first["id"], again
    assert _texts(tmp_path) == [ZWSP]
    assert octomem(tmp_path, "add", "The café opens at ten", "--json").json()[
        "already_stored"] is False  # close is not the same


def test_duplicates_an_older_octomem_stored_are_kept_and_named(tmp_path: Path) -> None:
    """A store holding both forms (written before this rule): nothing is merged or lost;
    a new write finds the older one, forget by text names both and removes neither."""
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}}, project_root=tmp_path)
    try:
        pipeline = memory.scopes.require("local", create=True)
        pipeline.add([Document(NFC, kind="ITEM", created_at=100.0)])
        pipeline.add([Document(NFD, kind="ITEM", created_at=200.0)])
    finally:
        memory.close()
    again = octomem(tmp_path, "add", NFC, "--json").json()
    assert again["already_stored"] is True and again["text"] == NFC
    ran = octomem(tmp_path, "forget", NFC, ok=False)
    assert ran.code == 1 and "2 statements have this text; none was removed" in ran.out, ran
    assert sorted(_texts(tmp_path)) == sorted([NFC, NFD])


def test_remember_over_mcp_answers_already_stored(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    with stdio_client(tmp_path, project) as client:
        first = client.ok("remember", text=NFC)
        again = client.ok("remember", text=NFD)
        assert again["already_stored"] is True and again["id"] == first["id"], again
    assert _texts(project) == [NFC]
