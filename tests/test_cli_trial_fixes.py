"""What a fresh-user trial found in the CLI: `add -` reads stdin, neighbouring turns are
marked as before/after their own hit, and the time-range error names the real bound."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

OCTOMEM = str(Path(sys.executable).with_name("octomem"))


def run(root: Path, *args: str, stdin: str | None = None,
        ok: bool = True) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update({"HOME": str(root / "home"), "XDG_DATA_HOME": str(root / "data-home"),
                "XDG_CONFIG_HOME": str(root / "config-home"), "COLUMNS": "120"})
    done = subprocess.run([OCTOMEM, "--data-dir", str(root / "data"), "--project-root",
                           str(root), "--set", "pipeline.embedder=hashing", *args], cwd=root,
                          env=env, input=stdin, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr[-2000:]
    assert (done.returncode == 0) == ok, (done.stdout[-2000:], done.stderr[-2000:])
    return done


def test_add_dash_reads_the_statement_from_stdin(tmp_path: Path) -> None:
    text = "The staging database is restored from the Sunday snapshot.\n" * 3
    run(tmp_path, "add", "-", stdin=text)
    exported = run(tmp_path, "export", "--scope", "local", "-").stdout
    texts = [json.loads(line).get("text") for line in exported.splitlines() if line.strip()]
    assert text.strip() in [t.strip() for t in texts if t]
    assert "-" not in texts


def test_a_time_past_the_last_instant_names_the_real_bound(tmp_path: Path) -> None:
    done = run(tmp_path, "add", "late", "--event-time", "9999-12-31T10:00:00Z", ok=False)
    assert "9999-12-31T00:00Z" in done.stderr + done.stdout
    run(tmp_path, "add", "just in", "--event-time", "9999-12-30T23:59:59Z")


def test_context_turns_are_marked_before_and_after_their_own_hit(tmp_path: Path) -> None:
    turns = [("Ana", "Which train should we take to Porto tomorrow?"),
             ("Ben", "The 9:09 from Santa Apolonia, the Alfa Pendular."),
             ("Ana", "And where are we staying once we arrive in Porto?"),
             ("Ben", "A small guesthouse in Ribeira, by the river.")]
    chat = tmp_path / "trip.jsonl"
    chat.write_text("".join(json.dumps({
        "conversation": "trip", "session": "1", "speaker": s, "text": t,
        "time": f"2024-05-01T10:0{i}:00Z"}) + "\n" for i, (s, t) in enumerate(turns)))
    run(tmp_path, "ingest", str(chat))
    out = run(tmp_path, "--set", "retrieval.relevance_floor=0", "search",
              "Porto train staying", "--context", "1", "-k", "2").stdout
    lines = out.splitlines()
    marked = [line.strip() for line in lines if "↑1 " in line or "↓1 " in line]
    assert marked, out
    assert all(m.startswith(("↑1 ", "↓1 ")) for m in marked)
    assert "" in lines[1:-1]  # the two hits' groups stand apart
