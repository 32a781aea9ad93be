"""A scope keeps one current handoff. A store with its own current handoff that imported
an export holding another one had two current handoffs, and session start showed the
one recorded last here, whichever was written last. Now an import keeps the newest (by
when each was written) and supersedes the other with it, as ``remember`` would have,
and says so; session start shows the newest in a store an older import left with two.
Real SQLite stores, the CLI."""

from __future__ import annotations

import time
from pathlib import Path

from cli_run import octomem

from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.session_start import sections
from octomem.engine.types import HANDOFF_KIND, Document

LAPTOP = "Laptop: was fixing the invoice export; next: its tests"
DESKTOP = "Desktop: finished the PDF renderer; next: deploy it"


def _machines(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    return a, b, {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}


def _handoff(root: Path, text: str, env: dict[str, str]) -> str:
    done = octomem(root, "add", text, "--kind", "HANDOFF", "--json", **env).json()["id"]
    time.sleep(0.05)  # the next one is written later
    return str(done)


def _current_handoffs(root: Path, env: dict[str, str]) -> list[str]:
    lines = octomem(root, "export", "-", **env).out.splitlines()
    return [line for line in lines if '"HANDOFF"' in line and '"valid_to": null' in line]


def test_the_stored_newer_handoff_stays_current_and_supersedes_the_imported(
        tmp_path: Path) -> None:
    a, b, env = _machines(tmp_path)
    laptop = _handoff(a, LAPTOP, env)
    desktop = _handoff(b, DESKTOP, env)  # written after the laptop's
    octomem(a, "export", str(a / "laptop.jsonl"), **env)
    said = " ".join(octomem(b, "import", str(a / "laptop.jsonl"), **env).out.split())
    assert "1 added" in said and f"1 handoff superseded by the newer {desktop} (a scope " \
        f"keeps one current handoff, the newest by when it was written): {laptop}" in said, said
    [current] = _current_handoffs(b, env)
    assert desktop in current
    start = octomem(b, "session-start", **env).out
    assert DESKTOP in start and LAPTOP not in start, start
    assert "every row can be shown" in octomem(b, "verify", **env).out
    # imported again: the laptop's is older here (superseded), nothing more to do
    again = " ".join(octomem(b, "import", str(a / "laptop.jsonl"), **env).out.split())
    assert "handoff superseded" not in again and "1 older than what is stored" in again
    # and the desktop's export brings the laptop the newer handoff
    octomem(b, "export", str(b / "desktop.jsonl"), **env)
    back = " ".join(octomem(a, "import", str(b / "desktop.jsonl"), **env).out.split())
    assert "1 added, 1 replaced" in back and "handoff superseded" not in back, back
    [current] = _current_handoffs(a, env)
    assert desktop in current


def test_an_imported_newer_handoff_supersedes_the_stored_one(tmp_path: Path) -> None:
    a, b, env = _machines(tmp_path)
    desktop = _handoff(b, DESKTOP, env)
    laptop = _handoff(a, LAPTOP, env)  # written after the desktop's
    octomem(a, "export", str(a / "laptop.jsonl"), **env)
    said = " ".join(octomem(b, "import", str(a / "laptop.jsonl"), **env).out.split())
    assert f"1 handoff superseded by the newer {laptop}" in said and \
        said.endswith(f": {desktop}"), said
    [current] = _current_handoffs(b, env)
    assert laptop in current
    start = octomem(b, "session-start", **env).out
    assert LAPTOP in start and DESKTOP not in start, start
    status = octomem(b, "status", "--json", **env).json()["scopes"]["local"]
    assert status["current"] == 1 and status["superseded"] == 1, status


def test_session_start_shows_the_newest_of_two_current_handoffs(tmp_path: Path) -> None:
    """A store an older octomem's import left with two current handoffs: the one written
    last (its event time) is shown, though the other was recorded here later."""
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}},
                         project_root=tmp_path, global_root=tmp_path / "global")
    now = time.time()
    try:
        pipeline = memory.scopes.require("local", create=True)
        pipeline.add([Document(DESKTOP, id="desktop", kind=HANDOFF_KIND, created_at=now - 60,
                               event_time=now - 30),
                      Document(LAPTOP, id="laptop", kind=HANDOFF_KIND, created_at=now,
                               event_time=now - 3600)], embed=False)
        [handoff] = [s for s in sections(memory) if s.title == "Handoff"]
    finally:
        memory.close()
    assert [(scope, d.id) for scope, d in handoff.entries] == [("local", "desktop")]
