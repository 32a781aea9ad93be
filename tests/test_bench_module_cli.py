"""Every benchmark module run as ``python -m octomem.benchmarks.NAME``: a proper ``--help``,
and a bad value refused before anything runs (status 2, one ``error:`` line naming the
argument, no traceback, nothing written)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from octomem.benchmarks.arguments import (
    bench_parser,
    collect_command,
    collected,
    existing_file,
    run_main,
)
from octomem.engine.errors import OctomemError

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
#: Every module of benchmarks/ that runs as a program.
RUNNABLE = sorted(p.stem for p in BENCHMARKS.glob("*.py")
                  if 'if __name__ == "__main__":' in p.read_text(encoding="utf-8"))


def test_the_runnable_modules_are_the_known_ones() -> None:
    """A new runnable module joins BAD_VALUES below (so its usage errors are checked)."""
    assert set(RUNNABLE) == {name.split()[0] for name, _, _ in BAD_VALUES}


@pytest.mark.slow
@pytest.mark.parametrize("name", RUNNABLE)
def test_help_is_a_usage_page(name: str, tmp_path: Path) -> None:
    ran = subprocess.run([sys.executable, "-m", f"octomem.benchmarks.{name}", "--help"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert ran.stderr == ""
    assert ran.stdout.startswith(f"usage: python -m octomem.benchmarks.{name} ")
    assert "options:" in ran.stdout and "Traceback" not in ran.stdout
    assert list(tmp_path.iterdir()) == []  # --help writes nothing


#: (module, arguments with one bad value, what the error line must say after "error: ";
#: a subcommand's parser names the subcommand: "fit_ranking fit").
BAD_VALUES = [
    ("abstention_ceiling cv", ["cv", "{tmp}/sf.pkl"],
     "argument collected: {tmp}/sf.pkl: no such file"),
    ("by_field", ["{tmp}/missing", "runs", "--field", "conv_id"],
     "argument dataset: {tmp}/missing: no such folder"),
    ("cli_search", ["{tmp}", "--rounds", "0"], "argument --rounds: must be at least 1, got 0"),
    ("cli_startup", ["--rounds", "two"], "argument --rounds: must be a whole number, got 'two'"),
    ("conversation_latency", ["{tmp}", "conv-26"],
     "argument dataset: {tmp}: no corpus.jsonl or queries.jsonl; a BEIR folder holds "
     "corpus.jsonl, queries.jsonl and qrels/<split>.tsv"),
    ("fit_bands fit", ["fit", "{tmp}/lme_group.pkl"],
     "argument collected: {tmp}/lme_group.pkl: no such file"),
    ("fit_strength fit", ["fit", "{tmp}/lme_tune.pkl"],
     "argument collected: {tmp}/lme_tune.pkl: no such file"),
    ("fit_ranking fit", ["fit", "{tmp}/missing.pkl"],
     "argument collected: {tmp}/missing.pkl: no such file"),
    ("fit_relevance fit", ["fit", "{tmp}"], "argument collected: {tmp}: a folder, not a file"),
    ("fit_turn_relevance fit", ["fit", "{tmp}/lme_tune.pkl"],
     "argument collected: {tmp}/lme_tune.pkl: no such file"),
    ("forget_cost", ["--chunks", "0", "--out", "{tmp}/out"],
     "argument --chunks: must be at least 1, got 0"),
    ("ingest_overhead", ["--beir", "{tmp}/corpus.jsonl"],
     "argument --beir: {tmp}/corpus.jsonl: no such folder"),
    ("mcp_startup", ["--runs", "0", "--out", "{tmp}/out"],
     "argument --runs: must be at least 1, got 0"),
    ("observability_overhead", ["--out", "{tmp}/out", "--calls", "-5"],
     "argument --calls: must be at least 1, got -5"),
    ("parity", ["{tmp}/missing", "--out", "{tmp}/out"],
     "argument dataset: {tmp}/missing: no such folder"),
    ("search_imports", ["{tmp}/missing"], "argument project: {tmp}/missing: no such folder"),
    ("tune", ["{tmp}/missing", "--out", "{tmp}/out"],
     "argument dataset: {tmp}/missing: no such folder"),
    ("ui_overhead", ["--recalls", "0", "--out", "{tmp}/out"],
     "argument --recalls: must be at least 1, got 0"),
    ("ui_screenshot", ["--chromium", "{tmp}/missing/chromium", "--out", "{tmp}/out.png"],
     "argument --chromium: {tmp}/missing/chromium: no such file"),
]


@pytest.mark.parametrize(("name", "args", "said"), BAD_VALUES, ids=[b[0] for b in BAD_VALUES])
def test_a_bad_value_is_a_usage_error(
    name: str, args: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    module = importlib.import_module(f"octomem.benchmarks.{name.split()[0]}")
    with pytest.raises(SystemExit) as ended:
        module.main([a.replace("{tmp}", str(tmp_path)) for a in args])
    assert ended.value.code == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"usage: python -m octomem.benchmarks.{name} ")
    assert "Traceback" not in err
    last = err.rstrip("\n").splitlines()[-1]
    assert last == (f"python -m octomem.benchmarks.{name}: error: "
                    + said.replace("{tmp}", str(tmp_path)))
    assert list(tmp_path.iterdir()) == []  # nothing measured, nothing written


def test_an_unknown_conversation_lists_those_there_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from octomem.benchmarks import conversation_latency

    rows = [{"_id": f"t{i}", "text": "A: hi", "title": "2023-05-08",
             "metadata": {"conv_id": conv, "session": 1, "speaker": "A"}}
            for i, conv in enumerate(["conv-2", "conv-1", "conv-2"])]
    (tmp_path / "corpus.jsonl").write_text("".join(f"{json.dumps(r)}\n" for r in rows),
                                           encoding="utf-8")
    (tmp_path / "queries.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(SystemExit) as ended:
        conversation_latency.main([str(tmp_path), "conv-9"])
    assert ended.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "python -m octomem.benchmarks.conversation_latency: error: conversation: 'conv-9' is "
        f"not in {tmp_path / 'corpus.jsonl'} (its conversations: conv-1, conv-2)")


def test_an_error_met_while_measuring_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    def broken() -> None:
        raise OctomemError("/data/x.sqlite3: file is not a database; octomem cannot read it")

    with pytest.raises(SystemExit) as ended:
        run_main(broken, "python -m octomem.benchmarks.demo")
    assert ended.value.code == 1
    assert capsys.readouterr().err == ("python -m octomem.benchmarks.demo: error: "
                                       "/data/x.sqlite3: file is not a database; octomem "
                                       "cannot read it\n")


def test_a_measurement_that_finishes_exits_with_its_status() -> None:
    with pytest.raises(SystemExit) as ended:
        run_main(lambda: 3, "p")
    assert ended.value.code == 3
    with pytest.raises(SystemExit) as ended:
        run_main(lambda: None, "p")
    assert ended.value.code == 0


def test_collect_writes_the_file_the_other_command_reads(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``collected``: ``collect`` pickles what it gathered to ``--out`` and says how much; the
    script's other command reads that file back (fit_relevance, abstention_ceiling)."""
    parser = bench_parser("fit_relevance", None)
    sub = parser.add_subparsers(dest="command", required=True)
    collect_command(sub)
    sub.add_parser("fit").add_argument("collected", type=existing_file)
    beir = tmp_path / "sf"
    beir.mkdir()
    for name in ("corpus.jsonl", "queries.jsonl"):
        (beir / name).write_text("", encoding="utf-8")
    asked: list[tuple[Path, Path, str]] = []

    def gather(root: Path, folder: Path, split: str) -> dict[str, list[str]]:
        asked.append((root, folder, split))
        return {"queries": ["q1", "q2", "q3"]}

    out = tmp_path / "sf.pkl"
    args = parser.parse_args(["collect", str(tmp_path / "cache"), str(beir), "--out", str(out)])
    assert collected(args, gather, lambda data: f"{len(data['queries'])} claims") is None
    assert asked == [(tmp_path / "cache", beir, "train")]
    assert capsys.readouterr().out == f"3 claims -> {out}\n"
    again = collected(parser.parse_args(["fit", str(out)]), gather, str)
    assert again == {"queries": ["q1", "q2", "q3"]} and len(asked) == 1
