"""Tags ``remember``/``add`` refuse (a space, a control character, too long) in an export
file: refusing them would refuse exports written before the label rule, so ``import``
keeps them as the file has them (JSON Lines is the lossless format), names each document
and why in its summary, and ``recall``'s tags filter still finds them by the exact tag.
Real SQLite stores, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client

ESCAPED = "ops\x1b[31m"


def test_import_keeps_refused_tags_names_them_and_filters_find_them(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    env = {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}
    odd = octomem(a, "add", "The billing API runs on port 7000", "--kind", "FACT", "--tag",
                  "billing", "--json", **env).json()["id"]
    fine = octomem(a, "add", "Invoices are rendered by the PDF service", "--kind", "FACT",
                   "--tag", "pdf", "--json", **env).json()["id"]
    lines = octomem(a, "export", "-", **env).out.splitlines()
    records = [json.loads(line) for line in lines]
    for record in records:  # as an export written before the label rule holds them
        if record.get("id") == odd:
            record["tags"] = ["billing api", ESCAPED]
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    refused = octomem(b, "add", "x", "--tag", "billing api", ok=False, **env)
    assert refused.code != 0 and "holds a space" in refused.err
    said = " ".join(octomem(b, "import", str(tmp_path / "old.jsonl"), **env).out.split())
    assert "2 added" in said and "1 document stored with tags that `octomem add` would " \
        "refuse, kept as the file has them" in said, said
    assert f"{odd}: tag 'billing api' holds a space" in said and fine not in said, said
    found = octomem(b, "search", "billing port", "--tag", "billing api", "--json", **env)
    assert [h["id"] for h in found.json()["hits"]] == [odd]
    found = octomem(b, "search", "billing port", "--tag", ESCAPED, "--json", **env)
    assert [h["id"] for h in found.json()["hits"]] == [odd]
    with stdio_client(tmp_path, b) as mcp:  # an agent's recall filters by it too
        answer = mcp.ok("recall", query="billing port", tags=["billing api"])
    assert [h["id"] for h in answer["hits"]] == [odd]
    assert answer["hits"][0]["tags"] == ["billing api", ESCAPED]
    kept = [json.loads(line) for line in octomem(b, "export", "-", **env).out.splitlines()]
    assert [r["tags"] for r in kept if r.get("id") == odd] == [["billing api", ESCAPED]]
    again = " ".join(octomem(b, "import", str(tmp_path / "old.jsonl"), **env).out.split())
    assert "2 unchanged" in again and "would refuse" not in again, again
