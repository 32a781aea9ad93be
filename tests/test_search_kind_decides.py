"""Trial 13 M8: ``octomem search "upload parts" --kind NOPE`` (or ``--tag nope``) answered
"no stored document has kind NOPE" after 683 ms, 661 of them loading the model, for an
answer the filter alone decided. Now one query per scope decides it first (the kind
counts; a look for a document with all the tags): no arm runs, no model loads (the
fastembed embedder's onnxruntime is never imported), and the answer still says why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import IMPORT_PROBE, octomem


def _probe(project: Path, *args: str) -> tuple[int, str, set[str]]:
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE, json.dumps(list(args))],
                          cwd=project, capture_output=True, text=True, timeout=300,
                          check=False)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    return report["code"], done.stdout, set(report["modules"])


@pytest.mark.parametrize(("flag", "value", "why"), [
    ("--kind", "NOPE", "no stored document has kind NOPE (stored kinds: FACT)"),
    ("--tag", "nope", "no stored document has tag nope (stored tags: ops; tags match "
                      "exactly, case included)"),
])
def test_a_kind_or_tag_nothing_has_loads_no_model(tmp_path: Path, flag: str, value: str,
                                                  why: str) -> None:
    # stored without vectors (no semantic arm), searched with the default fastembed model
    octomem(tmp_path, "--set", "pipeline.semantic=", "add", "Uploads go in 8 MiB parts",
            "--kind", "FACT", "--tag", "ops", hashing=False)
    code, out, modules = _probe(tmp_path, "search", "upload parts", flag, value, "--json")
    assert code == 0, out
    answer = json.loads(out)
    assert answer["hits"] == [] and answer["arms_ran"] == []
    assert answer["nothing_to_rank"] == why
    assert "load_model" not in answer["timings_ms"]
    assert not {m for m in modules if m.split(".")[0] in ("onnxruntime", "fastembed")}


def test_a_kind_that_is_stored_is_searched(tmp_path: Path) -> None:
    octomem(tmp_path, "add", "Uploads go in 8 MiB parts", "--kind", "FACT", "--tag", "ops")
    octomem(tmp_path, "add", "Downloads are resumed", "--kind", "FACT", "--tag", "net")
    answer = octomem(tmp_path, "search", "upload parts", "--kind", "FACT", "--json").json()
    assert [h["text"] for h in answer["hits"]] == ["Uploads go in 8 MiB parts"]
    tagged = octomem(tmp_path, "search", "upload parts", "--tag", "ops", "--json").json()
    assert [h["text"] for h in tagged["hits"]] == ["Uploads go in 8 MiB parts"]
    both = octomem(tmp_path, "search", "upload parts", "--tag", "ops", "--tag", "net",
                   "--json").json()
    assert both["hits"] == [] and both["arms_ran"] == []
    assert both["nothing_to_rank"] == "no stored document has all the tags ops and net"
    empty = octomem(tmp_path, "search", "upload parts", "--kind", "NOPE", "--json").json()
    assert empty["hits"] == [] and "no stored document has kind NOPE" in \
        empty["nothing_to_rank"]


def test_a_kind_and_tag_each_stored_but_not_together_say_so(tmp_path: Path) -> None:
    """Trial 14 F8: ``--kind FACT --tag style`` with FACT and style each stored on other
    statements answered a bare ``no hits``; now it says why, and no arm runs."""
    octomem(tmp_path, "add", "Uploads go in 8 MiB parts", "--kind", "FACT", "--tag", "ops")
    octomem(tmp_path, "add", "Tabs for indentation", "--kind", "PREFERENCE", "--tag", "style")
    answer = octomem(tmp_path, "search", "tabs", "--kind", "FACT", "--tag", "style",
                     "--json").json()
    assert answer["hits"] == [] and answer["arms_ran"] == []
    assert answer["nothing_to_rank"] == "no stored document of kind FACT has the tag style"
    shown = octomem(tmp_path, "search", "tabs", "--kind", "FACT", "--tag", "style").out
    assert "no stored document of kind FACT has the tag style" in shown, shown
    found = octomem(tmp_path, "search", "tabs", "--kind", "PREFERENCE", "--tag", "style",
                    "--json").json()
    assert [h["text"] for h in found["hits"]] == ["Tabs for indentation"]
