"""What the sixth fresh-user trial found, run as a user runs it (the console entry point
or the installed script, a real SQLite store): stored text never sends the terminal
control characters; ``--set`` mistakes are usage errors; ``forget`` advice when one id is
in both scopes; summaries with thousands separators."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem

#: Retitles the terminal (OSC 0 ... BEL), clears the screen (CSI 2J), a SOH and a C1 CSI
#: (a NUL is refused: tests/test_statement_nul.py).
HOSTILE = "titlehack \x1b]0;PWNED\x07 \x1b[2J cleared \x01 soh \x9b31m c1"
SHOWN = r"titlehack \x1b]0;PWNED\x07 \x1b[2J cleared \x01 soh \x9b31m c1"


def _no_controls(text: str) -> None:
    bad = [c for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0]
    assert not bad, [hex(ord(c)) for c in bad]


def test_stored_control_characters_reach_the_terminal_escaped(tmp_path: Path) -> None:
    added = octomem(tmp_path, "add", HOSTILE)  # in process: argv cannot hold a NUL
    _no_controls(added.out + added.err)
    again = octomem(tmp_path, "add", HOSTILE)  # "already stored: ..."
    _no_controls(again.out + again.err)
    for args in (["search", "titlehack", "-k", "1"],
                 ["search", "titlehack", "-k", "1", "--explain"],
                 ["session-start"]):
        ran = octomem(tmp_path, *args, spawn=True)
        _no_controls(ran.out + ran.err)
        assert SHOWN in ran.out, (args, ran.out)
    assert "\\x1b" in octomem(tmp_path, "search", HOSTILE, "-k", "1").out
    forgot = octomem(tmp_path, "forget", HOSTILE)
    _no_controls(forgot.out + forgot.err)
    assert SHOWN in forgot.out
    # JSON output escapes by itself and keeps the text as stored
    assert octomem(tmp_path, "add", HOSTILE, "--json").json()["text"] == HOSTILE


def test_a_bad_set_option_is_a_usage_error(tmp_path: Path) -> None:
    ran = octomem(tmp_path, "--set", "foo", "status", ok=False, hashing=False)
    assert ran.code == 2
    assert ran.err == ("error: --set 'foo': expected key=value, e.g. retrieval.top_k=5; see "
                       "`octomem --help`\n")
    ran = octomem(tmp_path, "--set", "retrieval.top_k=abc", "search", "x", ok=False)
    assert ran.code == 2
    assert ran.err.startswith("error: setting 'retrieval.top_k' from --set: Input should be a "
                              "valid integer")
    assert ran.err.endswith("; see `octomem --help`\n")  # --set is a global option
    ran = octomem(tmp_path, "--set", "nope.x=1", "status", ok=False)
    assert (ran.code, ran.err) == (2, "error: unknown setting 'nope' in --set; see "
                                      "`octomem --help`\n")
    # a bad value in a configuration file is not a usage error: the command line was right
    (tmp_path / "bad.toml").write_text("[retrieval]\ntop_k = \"abc\"\n", encoding="utf-8")
    ran = octomem(tmp_path, "--config", str(tmp_path / "bad.toml"), "status", ok=False)
    assert ran.code == 1 and "from --config" in ran.err and "--help" not in ran.err


def test_forget_an_id_in_both_scopes_advises_scope_and_keeps_entries_whole(
        tmp_path: Path) -> None:
    text = "Deploys go through the staging cluster first, then production after an hour"
    doc_id = octomem(tmp_path, "add", text, "--json").json()["id"]
    octomem(tmp_path, "export", "--scope", "local", str(tmp_path / "x.jsonl"))
    octomem(tmp_path, "import", "--scope", "global", str(tmp_path / "x.jsonl"))
    ran = octomem(tmp_path, "forget", doc_id, ok=False, spawn=True, COLUMNS="80")
    assert ran.code == 1
    lines = ran.out.splitlines()
    assert lines[:2] == ["2 statements have this id; none was removed; forget one with --scope "
                         "local or", "--scope global:"]
    assert [line.split(" (")[0] for line in lines[2:]] == [f"  {doc_id}"] * 2
    assert [line.split(" (")[1].split(")")[0] for line in lines[2:]] == [
        "local, ITEM", "global, ITEM"]
    assert all(len(line) <= 80 and line.endswith("…") for line in lines[2:])
    assert ran.err == "error: the id is in both scopes; none was removed\n"
    assert "forgot" in octomem(tmp_path, "forget", doc_id, "--scope", "global").out
    again = octomem(tmp_path, "add", text, spawn=True, COLUMNS="80")
    assert again.out.splitlines() == [
        f"already stored: {doc_id} in the local scope has this",
        "text; nothing new was stored"]


def test_small_wording_fixes(tmp_path: Path) -> None:
    long = octomem(tmp_path, "search", "a" * 5000, ok=False)
    assert long.code == 2 and long.err == (  # a usage error, named as the usage line does
        "error: QUERY: 5,000 characters, more than limits.query_chars (4,096); "
        "see `octomem search --help`\n")  # a search stores nothing: no "; nothing was stored"
    empty = octomem(tmp_path, "add", "  ", ok=False)
    assert empty.code == 2 and empty.err.startswith("error: TEXT: empty; give the statement")
    added = octomem(tmp_path, "add", "Staging deploys need a ticket", "--json").json()["id"]
    octomem(tmp_path, "add", "Old rule about deploys")
    octomem(tmp_path, "forget", "Old rule about deploys")
    exported = octomem(tmp_path, "export", "--scope", "local", str(tmp_path / "x.jsonl"))
    assert exported.err.startswith("exported 1 document of the local scope")
    imported = octomem(tmp_path, "import", "--scope", "global", str(tmp_path / "x.jsonl"))
    assert ("1 forget-log entry of the file's own scope was not copied into the global scope"
            in " ".join(imported.out.split()))
    assert added


def test_counts_have_thousands_separators() -> None:
    from octomem.engine.cli.memory import status_rows

    rows = dict(status_rows({"documents": 12_345, "current": 12_000, "superseded": 345,
                             "forgotten": 1_200, "chunks": 10_086,
                             "chunks_without_vector": 1_800, "size_bytes": 1 << 20}))
    assert rows["documents"] == "12,345 (12,000 current, 345 superseded; 1,200 forgotten)"
    assert rows["chunks"] == "10,086, 1,800 without a vector"


def test_the_browser_view_takes_top_k_up_to_the_setting() -> None:
    import pytest

    from octomem.engine.errors import InvalidQueryError
    from octomem.mcp_server.ui.views import SearchForm

    assert SearchForm.parse({"q": "x", "top_k": "500"}).top_k == 500  # was capped at 200
    with pytest.raises(InvalidQueryError, match="at least 1, got '0'"):
        SearchForm.parse({"top_k": "0"})
