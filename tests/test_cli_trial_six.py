"""What the sixth fresh-user trial found, run as a user runs it (the console entry point
or the installed script, a real SQLite store): stored text never sends the terminal
control characters; ``--set`` mistakes are usage errors; ``forget`` advice when one id is
in both scopes; summaries with thousands separators."""

from __future__ import annotations

from pathlib import Path

from cli_run import octomem

#: Retitles the terminal (OSC 0 ... BEL), clears the screen (CSI 2J), a NUL and a C1 CSI.
HOSTILE = "titlehack \x1b]0;PWNED\x07 \x1b[2J cleared \x00 nul \x9b31m c1"
SHOWN = r"titlehack \x1b]0;PWNED\x07 \x1b[2J cleared \x00 nul \x9b31m c1"


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
