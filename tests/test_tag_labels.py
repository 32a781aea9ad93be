"""Stored tags and filter tags meet (trial 20 L12): a tag an export brings decomposed
(``cafe`` + U+0301) or holding a comma (``billing,api``), or one an older octomem stored
so, is kept as a label (NFC, split at commas) and every tags filter reaches it — the CLI's
``--tag``, MCP ``recall``'s ``tags`` — where before no filter could (query tags are made
NFC, a comma refused). Real SQLite stores, the CLI in process, MCP over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
from cli_run import octomem
from mcp_stdio import stdio_client

from octomem.plugins.sqlite.tag_labels import LABELLED_KEY, relabel_stored_tags

NFD, NFC = "cafe\u0301", "caf\u00e9"


def _ids(ran: object) -> list[str]:
    return [h["id"] for h in ran.json()["hits"]]  # type: ignore[attr-defined]


def _two(project: Path, env: dict[str, str]) -> tuple[str, str]:
    espresso = octomem(project, "add", "The espresso machine is descaled every Friday",
                       "--kind", "FACT", "--tag", "kitchen", "--json", **env).json()["id"]
    refunds = octomem(project, "add", "Refund API calls are deduplicated by request id",
                      "--kind", "FACT", "--tag", "payments", "--json", **env).json()["id"]
    return espresso, refunds


def _search(project: Path, query: str, *tags: str, **env: str) -> list[str]:
    args = [a for tag in tags for a in ("--tag", tag)]
    return _ids(octomem(project, "search", query, *args, "--json", **env))


def test_import_makes_decomposed_and_comma_tags_labels_and_says_so(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    env = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    espresso, refunds = _two(a, env)
    records = [json.loads(line) for line in octomem(a, "export", "-", **env).out.splitlines()]
    for record in records:  # as an older octomem exported them
        if record.get("id") == espresso:
            record["tags"] = [NFD, "kitchen"]
        if record.get("id") == refunds:
            record["tags"] = ["billing,api", " payments "]
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    said = " ".join(octomem(b, "import", str(tmp_path / "old.jsonl"), **env).out.split())
    assert "2 added" in said and "1 document stored with a tag holding a comma split into " \
        "the tags meant" in said, said
    assert f"{refunds}: 'billing,api' split into billing, api" in said, said
    assert espresso not in said, said  # NFC reads the same: nothing to say about it
    for tag in (NFC, NFD):
        assert _search(b, "espresso descaled", tag, **env) == [espresso]
    assert _search(b, "refund duplicates", "billing", "api", "payments", **env) == [refunds]
    with stdio_client(tmp_path, b) as mcp:
        answer = mcp.ok("recall", query="espresso descaled", tags=[NFC])
        assert [h["id"] for h in answer["hits"]] == [espresso]
        answer = mcp.ok("recall", query="refund duplicates", tags=["api"])
        assert [h["id"] for h in answer["hits"]] == [refunds]
    kept = {r["id"]: r["tags"] for r in (json.loads(line) for line in
            octomem(b, "export", "-", **env).out.splitlines()) if r.get("type") == "document"}
    assert kept == {espresso: [NFC, "kitchen"], refunds: ["billing", "api", "payments"]}
    again = " ".join(octomem(b, "import", str(tmp_path / "old.jsonl"), **env).out.split())
    assert "2 unchanged" in again and "split" not in again, again


def _store(project: Path) -> Path:
    return project / ".octomem" / "octomem.sqlite3"


def _as_older_octomem_stored(path: Path, doc_id: str, tags: list[str]) -> None:
    """Write ``tags`` into the document and its chunks as given (no label rule), and
    unmark the file, as a store an older octomem wrote."""
    conn = apsw.Connection(str(path))
    with conn:
        raw = json.dumps(tags, ensure_ascii=False)
        conn.execute("UPDATE documents SET tags = ? WHERE id = ?", (raw, doc_id))
        conn.execute("UPDATE chunks SET tags = ? WHERE document_id = ?", (raw, doc_id))
        conn.execute("DELETE FROM meta WHERE key = ?", (LABELLED_KEY,))
    conn.close()


def _relabel(path: Path) -> dict[str, int]:
    conn = apsw.Connection(str(path))
    with conn:
        changed = relabel_stored_tags(conn, lambda key, value: conn.execute(
            "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value)))
    conn.close()
    return changed


def test_stored_tags_of_an_older_octomem_are_relabelled_once(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    env = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    espresso, refunds = _two(project, env)
    path = _store(project)
    with stdio_client(tmp_path, project) as mcp:  # a server whose filter index is warm
        assert mcp.ok("recall", query="espresso descaled", tags=["kitchen"])["hits"]
        _as_older_octomem_stored(path, espresso, [NFD])  # under the running server
        _as_older_octomem_stored(path, refunds, ["billing,api", "payments"])
        # the bug, as found: "no stored document has tag café (stored tags: café; …)"
        assert mcp.ok("recall", query="espresso descaled", tags=[NFC]).get("hits", []) == []
        assert _relabel(path) == {"documents": 2, "chunks": 2}
        answer = mcp.ok("recall", query="espresso descaled", tags=[NFC])  # follows the log
        assert [h["id"] for h in answer["hits"]] == [espresso]
        answer = mcp.ok("recall", query="refund duplicates", tags=["billing", "api"])
        assert [h["id"] for h in answer["hits"]] == [refunds]
    for tag in (NFC, NFD):
        assert _search(project, "espresso descaled", tag, **env) == [espresso]
    assert _search(project, "refund duplicates", "api", "payments", **env) == [refunds]
    conn = apsw.Connection(str(path))
    rows = dict(conn.execute("SELECT document_id, tags FROM chunks").fetchall())
    assert rows == {espresso: json.dumps([NFC], ensure_ascii=False),
                    refunds: json.dumps(["billing", "api", "payments"])}
    conn.close()
    assert _relabel(path) == {}  # marked: later opens read one meta row


def test_an_older_store_has_its_tags_relabelled_when_this_version_opens_it(
        tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    env = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    espresso, refunds = _two(project, env)
    _as_older_octomem_stored(_store(project), espresso, [NFD])
    _as_older_octomem_stored(_store(project), refunds, ["billing,api"])
    assert _search(project, "espresso descaled", NFC, **env) == [espresso]  # opened: relabelled
    assert _search(project, "refund duplicates", "billing", "api", **env) == [refunds]
    said = octomem(project, "search", "espresso", "--tag", "nope", **env).out
    assert NFC in said and NFD not in said, said  # "stored tags: …" names what filters find
    assert _relabel(_store(project)) == {}  # marked by that open
