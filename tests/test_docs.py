"""Docs stay in step with the code: every hook and every setting is documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

from octomem.engine import hookspecs
from octomem.engine.settings import Settings, setting_group

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_every_hook_has_a_heading_in_the_plugin_guide() -> None:
    headings = set(re.findall(r"^### (\w+)$", (DOCS / "plugins.md").read_text(), re.M))
    hooks = {name for name in dir(hookspecs) if name.startswith("octomem_")}
    assert hooks == set(hookspecs.HOOK_BY_KIND.values())
    assert hooks <= headings, f"undocumented hooks: {hooks - headings}"


def _keys(model: type, prefix: str = "") -> set[str]:
    keys = set()
    for name, field in model.model_fields.items():
        ann = field.annotation
        if isinstance(ann, type) and hasattr(ann, "model_fields"):
            keys |= _keys(ann, f"{prefix}{name}.")
        elif name != "arms":
            keys.add(f"{prefix}{name}")
    return keys


def test_every_setting_is_in_the_settings_reference_with_its_group() -> None:
    text = (DOCS / "settings.md").read_text()
    documented = dict(re.findall(r"^\| `([a-z_.]+)` \| (\w+) \|", text, re.M))
    missing = (_keys(Settings) | {"arms"}) - set(documented)
    assert not missing, f"settings missing from docs/settings.md: {sorted(missing)}"
    wrong = {k: g for k, g in documented.items() if setting_group(k) != g}
    assert not wrong, f"docs/settings.md gives the wrong group for {wrong}"


def test_the_readme_names_no_path_of_this_machine_in_its_commands() -> None:
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```(?:sh)?\n(.*?)^```", readme, re.S | re.M)
    assert blocks and not [b for b in blocks if "../shared" in b or "/work/" in b]
    section = readme.split("### A BEIR dataset", 1)[1].split("\n### ", 1)[0]
    for needed in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv", "SciFact",
                   "snap-research/LoCoMo", "LongMemEval", "path/to/scifact"):
        assert needed in section, needed


def test_every_json_sample_in_the_docs_parses_as_what_its_block_says() -> None:
    """A ```json block is one JSON document; a ```jsonl block is one JSON object a line
    (trial 20 L10: the chat JSON Lines sample sat in a ```json block)."""
    pages = [DOCS.parent / "README.md", *sorted(DOCS.glob("*.md"))]
    seen = 0
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for lang, body in re.findall(r"^```(json|jsonl)\n(.*?)^```", text, re.S | re.M):
            seen += 1
            where = f"{page.name}: a ```{lang} block starting {body[:60]!r}"
            if lang == "json":
                try:
                    json.loads(body)
                except ValueError as exc:
                    raise AssertionError(f"{where} is not one JSON document: {exc}") from exc
            else:
                lines = [line for line in body.splitlines() if line.strip()]
                assert lines and all(isinstance(json.loads(line), dict) for line in lines), where
    assert seen >= 2
