"""What the eighth fresh-user trial found, run as a user runs it (the console entry point
or the installed script, a real SQLite store, a real stdio MCP server, the browser view
over real HTTP): invisible and bidirectional characters shown as escapes."""

from __future__ import annotations

import re
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


def test_a_long_query_is_echoed_cut(tmp_path: Path) -> None:
    long = "x" * 4096
    ran = octomem(tmp_path, "search", long)
    assert ran.out.splitlines()[0] == ("no hits for '" + "x" * 80 + "…': nothing is stored in "
                                       "the local and global scopes; ingest or add first")
    assert "x" * 81 not in ran.out + ran.err
    octomem(tmp_path, "add", "the deploy runbook lives in the wiki")
    hit = octomem(tmp_path, "search", "deploy runbook " + "y" * 500)
    assert hit.out.splitlines()[0] == repr("deploy runbook " + "y" * 65 + "…"), hit.out[:300]
    with running_view(tmp_path / "view") as view:
        query = urllib.parse.quote("z" * 500)
        with urllib.request.urlopen(f"{view.url.rstrip('/')}/?q={query}", timeout=60) as page:
            body = page.read().decode()
        title = body[body.index("<title>"):body.index("</title>")]
        assert title == "<title>" + "z" * 80 + "… · octomem"
        assert body.count("z" * 500) == 1  # only the search field keeps the query whole


def test_a_year_outside_the_calendar_is_out_of_range_not_malformed(tmp_path: Path) -> None:
    for value in ("0000-01-01", "+10000-01-01"):
        ran = octomem(tmp_path, "search", "x", "--since", value, ok=False)
        assert ran.code == 2
        assert ran.err.startswith(f"error: --since: {value!r} is outside the times octomem "
                                  "keeps (0001-01-02T00:00Z up to 9999-12-31T00:00Z)"), ran.err
    ran = octomem(tmp_path, "search", "x", "--since", "2025-13-01", ok=False)
    assert "is not an ISO-8601 date or time" in ran.err


def test_the_browser_remember_form_defaults_to_the_cli_kind(tmp_path: Path) -> None:
    cli_kind = octomem(tmp_path, "add", "a statement of the default kind", "--json").json()["kind"]
    with running_view(tmp_path / "view", allow_writes=True) as view:
        with urllib.request.urlopen(view.url, timeout=60) as page:
            body = page.read().decode()
    form = body[body.index('id="remember-form"'):]
    assert re.search(r'name="kind" value="([^"]*)"', form).group(1) == cli_kind == "ITEM"


def _fits(out: str, width: int) -> list[str]:
    lines = out.splitlines()
    assert all(len(line) <= width for line in lines), [ln for ln in lines if len(ln) > width]
    return lines


def test_one_entry_lines_fit_the_width(tmp_path: Path) -> None:
    """The trial's cases at 80 columns: each near duplicate, superseded statement and gone
    file is one line, its text cut with … rather than wrapped onto the next line."""
    octomem(tmp_path, "add", "during ingest 1")
    added = octomem(tmp_path, "add", "during ingest 1!", COLUMNS="80")
    near = [ln for ln in _fits(added.out, 80) if ln.startswith("nearly the same (")]
    assert len(near) == 1 and near[0].endswith("(local) during ingest…"), added.out
    assert len(near[0]) == 80
    old = octomem(tmp_path, "add", "The billing service uses PostgreSQL 14 on the primary "
                  "cluster in the eu-west region, with a read replica", "--json").json()["id"]
    new = octomem(tmp_path, "add", "The billing service uses PostgreSQL 16",
                  "--supersedes", old, COLUMNS="80")
    line = next(ln for ln in _fits(new.out, 80) if ln.startswith("superseded "))
    assert line.startswith(f"superseded {old}: The billing service uses") and \
        line.endswith("…") and len(line) == 80
    folder = tmp_path / "docs" / ("a-rather-long-folder-name-for-the-deploy-notes" * 2)
    folder.mkdir(parents=True)
    (folder / "deploy.md").write_text("# Deploy\n\nDeploys go through staging first.\n")
    (folder / "keep.md").write_text("# Keep\n\nThis file stays.\n")
    octomem(tmp_path, "ingest", str(tmp_path / "docs"))
    (folder / "deploy.md").unlink()
    again = octomem(tmp_path, "ingest", str(tmp_path / "docs"), COLUMNS="80")
    gone = [ln for ln in _fits(again.out, 80) if ln.startswith("gone: ")]
    assert len(gone) == 1 and gone[0].startswith("gone: …") and "/deploy.md: " in gone[0]
    assert re.search(r": (forgot|kept) its document .*file:[0-9a-f]+$", gone[0]), gone[0]


def test_the_compact_list_shows_the_part_that_answers(tmp_path: Path) -> None:
    """A long document hit shows its title and, under it, its sentence that matches the
    query, wrapped within the width on up to 3 lines (the trial saw only the title)."""
    folder = tmp_path / "notes"
    folder.mkdir()
    filler = " ".join(f"Paragraph {n} is about the weekly planning meeting." for n in range(12))
    (folder / "editor.md").write_text(
        f"# Editor settings for the team\n\n{filler} Indentation uses tabs, displayed four "
        "columns wide, in every language except YAML.\n")
    octomem(tmp_path, "ingest", str(folder))
    ran = octomem(tmp_path, "--set", "retrieval.document_relevance_floor=0", "search",
                  "does the team indent with tabs", "-k", "1", COLUMNS="80")
    lines = _fits(ran.out, 80)
    body = lines[1:-1]
    assert body[0].split()[0] == "1" and "Editor settings for the team — …" in body[0]
    assert 2 <= len(body) <= 3, ran.out
    said = " ".join(" ".join(body).split())
    assert "Indentation uses tabs" in said and "Paragraph 0 " not in said
