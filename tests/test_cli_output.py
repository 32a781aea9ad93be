"""What `octomem search` prints when piped or at 80 columns: one line per hit, no colour
codes, a compact table with --explain, JSON for machines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

OCTOMEM = str(Path(sys.executable).with_name("octomem"))
STEPS = ["run the migrations", "warm the caches", "switch the load balancer",
         "tell the support team", "rotate the signing keys", "check the backups"]


def checklist(i: int) -> str:
    """Return a long two-paragraph note, different for each ``i`` (dedup keeps them all)."""
    steps = ", ".join(STEPS[i:] + STEPS[:i])
    return (f"# Deploy checklist {i}\n\nThe deployment checklist for region {i}: {steps}, "
            f"then watch the error rate for {i + 1} hours.\n\nIf the rate doubles, roll back "
            f"at once and write down what happened in incident note {i * 7}.")


def run(root: Path, *args: str, columns: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update({"HOME": str(root / "home"), "XDG_DATA_HOME": str(root / "data-home"),
                "XDG_CONFIG_HOME": str(root / "config-home"), "TERM": "xterm-256color"})
    if columns:
        env["COLUMNS"] = columns
    return subprocess.run([OCTOMEM, "--data-dir", str(root / "data"), "--set",
                           "pipeline.embedder=hashing", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120, check=True)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("output")
    notes = root / "notes"
    notes.mkdir()
    for i in range(4):
        (notes / f"deploy-{i}.md").write_text(checklist(i), "utf-8")
    run(root, "ingest", "--scope", "global", str(notes))
    return root


@pytest.mark.parametrize("columns", [None, "80", "120"])
def test_piped_search_prints_each_hit_on_up_to_three_lines(store: Path,
                                                            columns: str | None) -> None:
    out = run(store, "search", "deployment error rate roll back", "-k", "4",
              columns=columns).stdout
    lines = out.splitlines()
    assert "\x1b[" not in out  # no colour codes in a pipe
    assert lines[0] == "'deployment error rate roll back'"
    body = lines[1:-1]
    rows = [i for i, line in enumerate(body) if not line.startswith(" ")]
    hits = [body[i] for i in rows]
    assert [h.split()[0] for h in hits] == ["1", "2", "3", "4"]
    assert all(h.split()[2] == "global" and "Deploy checklist" in h for h in hits)
    assert all(len(line) <= int(columns or 80) for line in body)
    indent = len(hits[0]) - len(hits[0].split("  global  ", 1)[1])
    for start, end in zip(rows, [*rows[1:], len(body)], strict=True):
        assert 1 <= end - start <= 3  # the text wraps under itself, at most 3 lines
        assert all(line[:indent].strip() == "" for line in body[start + 1:end])
    assert lines[-1].startswith("scopes: ")


def test_explain_at_80_columns_puts_each_hit_under_its_row(store: Path) -> None:
    lines = run(store, "search", "deployment error rate", "-k", "3", "--explain",
                columns="80").stdout.splitlines()
    header = lines[1].split()
    assert header[0] == "#" and header[1] in ("rel", "score") and header[2] == "scope"
    assert header[3:5] == ["fts5", "sqlite-vec"] and "hit" not in header
    assert set(lines[2]) == {"─"}
    assert all(len(line) <= 80 and line == line.rstrip() for line in lines)
    body = lines[3:lines.index(next(x for x in lines if x.startswith("scopes: ")))]
    rows = [i for i, line in enumerate(body) if line.split()[0].isdigit()]
    assert [body[i].split()[0] for i in rows] == ["1", "2", "3"]
    for i in rows:  # each arm's own rank and score, then the hit on lines of its own
        cells = body[i].split()
        assert cells[3].isdigit() and cells[4].startswith("(")
        snippet = body[i + 1]
        assert snippet.startswith("     Deploy checklist") and len(snippet.strip()) >= 60
        text = " ".join(x.strip() for x in body[i + 1:(rows + [len(body)])[rows.index(i) + 1]])
        assert "The deployment checklist for region" in text  # a readable snippet


def test_explain_keeps_the_hit_on_its_row_when_there_is_room(store: Path) -> None:
    lines = run(store, "search", "deployment error rate", "-k", "3", "--explain",
                columns="160").stdout.splitlines()
    assert lines[1].split()[-1] == "hit"
    body = lines[3:lines.index(next(x for x in lines if x.startswith("scopes: ")))]
    rows = [r for r in body if r.split()[0].isdigit()]
    assert len(rows) == 3 and all("Deploy checklist" in r for r in rows)
    assert all(len(r) <= 160 for r in body)
    at = rows[0].index("Deploy checklist")  # a long text goes on under itself, not the row
    assert all(r[:at].strip() == "" for r in body if r not in rows)


def test_json_is_for_machines(store: Path) -> None:
    answer = json.loads(run(store, "search", "deployment", "-k", "2", "--json",
                            columns="40").stdout)
    assert [h["rank"] for h in answer["hits"]] == [1, 2]
    assert set(answer["hits"][0]["arms"]) == {"fts5", "sqlite-vec"}
    assert "\n\n" in answer["hits"][0]["text"]  # the text whole, not cut or flattened
