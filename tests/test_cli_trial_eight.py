"""What the eighth fresh-user trial found, run as a user runs it (the console entry point
or the installed script, a real SQLite store, a real stdio MCP server, the browser view
over real HTTP): invisible and bidirectional characters shown as escapes."""

from __future__ import annotations

import unicodedata
import urllib.parse
import urllib.request
from pathlib import Path

from cli_run import octomem
from mcp_stdio import stdio_client
from ui_support import running_view

#: A right-to-left override (shows "exe.png" as "gnp.exe"), a zero-width space, a line
#: separator, a tag character and a byte-order mark; a ZWJ emoji sequence kept as is.
HIDDEN = ("invoice \u202egnp.exe\u202c zero\u200bwidth line\u2028sep tag\U000e0041 "
          "bom\ufeff family \U0001f468\u200d\U0001f467 end")
SHOWN = ("invoice \\u202egnp.exe\\u202c zero\\u200bwidth line\\u2028sep tag\\U000e0041 "
         "bom\\ufeff family \U0001f468\u200d\U0001f467 end")


def _no_hidden(text: str) -> None:
    bad = [hex(ord(c)) for c in text if c not in "\n\t\u200c\u200d"
           and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")]
    assert not bad, bad


def _shown(out: str) -> bool:
    """SHOWN is in ``out`` (whitespace aside; a one-line rendering may show the separator as
    a space, a Markdown one as a line break)."""
    flat = " ".join(out.split())
    return SHOWN in flat or SHOWN.replace("\\u2028", " ") in flat


def test_format_characters_reach_the_terminal_escaped(tmp_path: Path) -> None:
    added = octomem(tmp_path, "add", HIDDEN)
    _no_hidden(added.out + added.err)
    for args in (["search", "invoice", "-k", "1"],
                 ["search", "invoice", "-k", "1", "--explain"],
                 ["session-start"]):
        ran = octomem(tmp_path, *args, spawn=True)
        _no_hidden(ran.out + ran.err)
        assert _shown(ran.out), (args, ran.out)
    assert octomem(tmp_path, "add", HIDDEN, "--json").json()["text"] == HIDDEN


def test_format_characters_escaped_in_resources_and_page_titles(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as client:
        client.ok("remember", text=HIDDEN, kind="PREFERENCE")
        for uri in ("octomem://session-start", "octomem://memory/local"):
            text = client.read(uri)
            _no_hidden(text)
            assert _shown(text), text
    with running_view(tmp_path / "view") as view:
        query = urllib.parse.quote("a\u202eb\u200bc")
        with urllib.request.urlopen(f"{view.url.rstrip('/')}/?q={query}", timeout=60) as page:
            body = page.read().decode()
        title = body[body.index("<title>"):body.index("</title>")]
        _no_hidden(title)
        assert "a\\u202eb\\u200bc" in title
