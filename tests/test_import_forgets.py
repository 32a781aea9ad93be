"""Trial 16 F20: importing an export whose forget log holds an id this store still has
left the document current beside its forget-log entry (the README's laptop -> desktop
sync never carried a privacy forget across), and ``verify`` saw nothing. Now the forget
arrives: the document is forgotten here too and the import says so; ``verify`` flags a
document with a tombstone and ``--repair`` forgets it. Real SQLite stores, the CLI."""

from __future__ import annotations

import time
from pathlib import Path

from cli_run import octomem

from octomem.engine.memory.facade import open_memory
from octomem.engine.memory.forget import content_sha256
from octomem.engine.types import ForgetRecord

PIN = "My bank PIN hint is the dog's birthday"


def _machines(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    return a, b, {"OCTOMEM_GLOBAL_ROOT": str(tmp_path / "global")}


def test_a_forget_made_on_another_machine_arrives_with_its_export(tmp_path: Path) -> None:
    a, b, env = _machines(tmp_path)
    pin = octomem(a, "add", PIN, "--kind", "FACT", "--json", **env).json()["id"]
    octomem(a, "add", "The user likes Rust", "--kind", "PREFERENCE", **env)
    octomem(a, "export", str(a / "v1.jsonl"), **env)
    octomem(b, "import", str(a / "v1.jsonl"), **env)
    octomem(a, "forget", PIN, "--reason", "privacy", **env)
    octomem(a, "export", str(a / "v2.jsonl"), **env)
    done = octomem(b, "import", str(a / "v2.jsonl"), **env)
    said = " ".join(done.out.split())
    assert f"1 document forgotten here too (the file's forget log says it was forgotten " \
        f"where it was exported): {pin}" in said, said
    hits = octomem(b, "search", "bank PIN hint", "--json", **env).json()["hits"]
    assert all(PIN not in h["text"] for h in hits), hits
    status = octomem(b, "status", "--json", **env).json()["scopes"]["local"]
    assert status["current"] == 1 and status["forgotten"] == 1, status
    assert "every row can be shown" in octomem(b, "verify", **env).out
    # imported again: already forgotten, nothing more to do
    again = " ".join(octomem(b, "import", str(a / "v2.jsonl"), **env).out.split())
    assert "forgotten here too" not in again and "1 more already here" in again, again


def test_verify_flags_and_repairs_a_document_with_a_tombstone(tmp_path: Path) -> None:
    _, b, env = _machines(tmp_path)
    pin = octomem(b, "add", PIN, "--kind", "FACT", "--json", **env).json()["id"]
    memory = open_memory(overrides={"pipeline": {"embedder": "hashing"}}, project_root=b,
                         global_root=tmp_path / "global")
    try:  # what an older octomem's import left: the forget logged, the document kept
        storage = memory.scopes.require("local").arms.storage
        with storage.transaction() as tx:
            storage.record_forgotten(tx, ForgetRecord(pin, "FACT", content_sha256(PIN),
                                                      time.time() - 60, time.time(), "privacy"))
    finally:
        memory.close()
    found = octomem(b, "verify", ok=False, **env)
    assert found.code == 1 and f"local: {pin}: is stored although the forget log says it " \
        "was forgotten on" in found.out, (found.out, found.err)
    fixed = octomem(b, "verify", "--repair", **env)
    assert f"repaired local: {pin}" in fixed.out, fixed.out
    assert "every row can be shown" in octomem(b, "verify", **env).out
    hits = octomem(b, "search", "bank PIN hint", "--json", **env).json()["hits"]
    assert all(PIN not in h["text"] for h in hits), hits
