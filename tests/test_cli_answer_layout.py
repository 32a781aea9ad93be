"""What a third fresh-user trial found in `octomem search`'s output: `--explain`'s columns
explained where a user looks, a wide terminal showing no less of a hit than 80 columns,
and `--context` turns that belong visibly to their hit and are printed once."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from octomem.engine.cli import app

pytestmark = pytest.mark.slow

OCTOMEM = str(Path(sys.executable).with_name("octomem"))
ROOT = Path(__file__).resolve().parent.parent
CLAUSES = ["the old backups are pruned after ninety days", "the restore drill runs monthly",
           "the keys live in the hardware token", "the offsite copy is encrypted twice",
           "the checksum list is signed", "the weekly report goes to the team channel",
           "every restore is timed and written down", "nobody deletes a snapshot by hand"]


def note(i: int) -> str:
    """Return a long note (~600 characters), different for each ``i``."""
    said = "; ".join(CLAUSES[i:] + CLAUSES[:i])
    return (f"# Backup policy {i}\n\nThe backup policy for site {i} says: {said}. "
            f"Questions about it go to the storage rota of week {i + 3}, who answer "
            f"within a day and keep a log of what they changed and why, with the ticket.")


TURNS = [("Ana", "Which train should we take to Porto tomorrow morning?"),
         ("Ben", "The 9:09 from Santa Apolonia, the fast one."),
         ("Ana", "Which train back to Lisbon on Sunday then?"),
         ("Ben", "The 18:39, it arrives before dinner."),
         ("Ana", "Where are we staying once we arrive?"),
         ("Ben", "A small guesthouse in Ribeira, by the river.")]


def run(root: Path, *args: str, columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update({"HOME": str(root / "home"), "XDG_DATA_HOME": str(root / "data-home"),
                "XDG_CONFIG_HOME": str(root / "config-home")})
    if columns:
        env["COLUMNS"] = columns
    done = subprocess.run([OCTOMEM, "--data-dir", str(root / "data"), "--project-root",
                           str(root), "--set", "pipeline.embedder=hashing", "--set",
                           "retrieval.relevance_floor=0", *args], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]
    return done.stdout


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("layout")
    notes = root / "notes"
    notes.mkdir()
    for i in range(3):
        (notes / f"backup-{i}.md").write_text(note(i), "utf-8")
    chat = root / "trip.jsonl"
    chat.write_text("".join(json.dumps({
        "conversation": "trip", "session": "1", "speaker": s, "text": t,
        "time": f"2024-05-01T10:0{i}:00Z"}) + "\n" for i, (s, t) in enumerate(TURNS)))
    run(root, "ingest", "--scope", "global", str(notes), str(chat), columns=None)
    return root


def flat(text: str) -> str:
    return " ".join(text.split())


def shown_of(block: str, full: str) -> int:
    """Return how many characters of ``full`` (a hit's text on one line) ``block`` shows:
    the longest prefix of it found in the block, lines joined as they were wrapped."""
    joined = flat(block.replace("…", " "))
    low, high = 0, len(full)
    while low < high:  # a longer prefix found implies every shorter one is
        mid = (low + high + 1) // 2
        if flat(full[:mid]) in joined:
            low = mid
        else:
            high = mid - 1
    return low


# ---- 1. every --explain column is explained in --help and the README ----------------

def test_every_explain_column_is_explained_in_help_and_readme(store: Path) -> None:
    out = run(store, "search", "which train back to Lisbon", "-k", "4", "--explain",
              columns="200")
    header = out.splitlines()[1].split()
    assert {"fts5", "sqlite-vec", "conversation", "recency"} <= set(header), header
    helped = CliRunner().invoke(app, ["search", "--help"], env={"COLUMNS": "200"}).output
    helped = flat(re.sub(r"[│╭╮╰╯─]", " ", helped))
    for column in ("fts5", "sqlite-vec", "conversation", "recency"):
        assert re.search(rf"{column}: \w", helped), column
    assert "share of the fused score" in helped and "chat turn" in helped
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Reading `--explain`", 1)[1].split("\n### ", 1)[0]
    explained = set(re.findall(r"^\| `([^`]+)` \|", section, re.M))
    assert set(header) <= explained, set(header) - explained


# ---- 2. a wider terminal shows no less of a hit than 80 columns ----------------------

@pytest.mark.parametrize("explain", [False, True])
def test_a_wider_terminal_shows_more_of_each_hit(store: Path, explain: bool) -> None:
    full = flat(note(0).replace("# Backup policy 0", "Backup policy 0 —", 1))
    shown: dict[str | None, int] = {}
    for columns in (None, "80", "120", "200"):
        out = run(store, "search", "backup policy site 0 restore drill", "-k", "1",
                  *(["--explain"] if explain else []), columns=columns)
        lines = out.splitlines()
        assert all(len(line) <= int(columns or 80) for line in lines), out
        block = "\n".join(lines[1:-1])
        shown[columns] = shown_of(block, full)
    assert shown[None] == shown["80"] >= 50  # piped: 80 columns
    assert shown["80"] <= shown["120"] < shown["200"] <= len(full), shown
    if not explain:
        assert shown["80"] < shown["120"]  # one line per hit, as wide as the terminal


def test_explain_text_beside_its_row_goes_on_under_itself(store: Path) -> None:
    lines = run(store, "search", "backup policy site 0 restore drill", "-k", "1",
                "--explain", columns="200").splitlines()
    assert lines[1].split()[-1] == "hit"
    at = lines[3].index("Backup policy 0")
    assert lines[4][:at].strip() == "" and lines[4][at:at + 1].strip()  # aligned under it
    assert lines[5].startswith("scopes: ")


# ---- 3. --context turns belong to their hit and are printed once ---------------------

def test_context_turns_sit_under_their_hit_and_are_printed_once(store: Path) -> None:
    out = run(store, "search", "which train back to Lisbon on Sunday", "-k", "3",
              "--context", "2", columns="100")
    lines = out.splitlines()
    rows = [i for i, line in enumerate(lines) if re.match(r"^ ?\d+ ", line)]
    assert len(rows) == 3, out
    text_at = lines[rows[0]].index(lines[rows[0]].split()[3])
    for n, i in enumerate(rows):
        end = rows[n + 1] if n + 1 < len(rows) else len(lines) - 1
        group = [line for line in lines[i + 1:end] if line.strip()]
        for line in group:  # every context line: indented past the hit's text, marked
            assert line[:text_at + 2].strip() == "", line
            assert re.match(r"[↑↓][12] \w+: ", line[text_at + 2:]), line
    said = [t for _, t in TURNS]
    for words in said:  # each turn's words printed at most once in the whole answer
        assert out.count(words[:30]) <= 1, (words, out)
    assert re.search(r"[↑↓][12] (Ana|Ben): see #[123]\b", out), out
