"""Small wording fixes from the twelfth fresh-user trial (M1, M2, M3), through a real MCP
client over stdio."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem
from mcp_stdio import stdio_client

pytestmark = pytest.mark.slow


def test_wording_of_status_arguments_early_years_and_kinds(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    with stdio_client(tmp_path, project) as mcp:
        # M1: a tool without arguments says so
        assert mcp.error("status", x=1).endswith(
            "'x': status has no such argument (status takes no arguments)")
        # M2: a year before 1000 keeps its zeros
        mcp.ok("remember", text="The lynx count is done in March")
        answer = mcp.ok("recall", query="lynx", as_of="0001-01-01")
        why = str(answer.get("nothing_to_rank") or answer.get("abstained"))
        assert "valid yet at 0001-01-02T00:00:00Z" in why, why
        # M3: ASCII is meant, and a long kind is told its length
        message = mcp.error("recall", query="lynx", kinds=["ÉCOLE"])
        assert "kinds: must be one word of ASCII letters, digits and _" in message, message
        message = mcp.error("remember", text="x", kind="FACT" * 100)
        assert "kind: 400 characters, more than a kind's 64" in message, message


def test_import_names_the_line_that_is_not_utf8_or_not_json(tmp_path: Path) -> None:
    """M10: the text reader decodes 8 KB ahead, so the bad line was 'near line 1'."""
    octomem(tmp_path, "add", "The otter survey is in June")
    octomem(tmp_path, "export", "--scope", "local", str(tmp_path / "out.jsonl"))
    good = (tmp_path / "out.jsonl").read_bytes().splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([*good, b"", b'{"type": "x\xff"}']) + b"\n")
    ran = octomem(tmp_path, "import", str(bad), ok=False)
    assert ran.err == f"error: {bad}:{len(good) + 2}: not UTF-8 text (invalid start byte)\n"
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"\n".join([*good, b'{"type": "document", "text": "unterminated']))
    ran = octomem(tmp_path, "import", str(cut), ok=False)
    assert ran.err == (f"error: {cut}:{len(good) + 1}: not valid JSON: Unterminated string "
                       "starting at column 30\n"), ran.err


def test_metrics_with_a_bad_address_is_a_usage_error(tmp_path: Path) -> None:
    """M7: 'nonsense' was status 1 with advice to start `serve --metrics-addr nonsense`."""
    for bad in ("nonsense", "127.0.0.1:99999", ":9469"):
        ran = octomem(tmp_path, "metrics", "--addr", bad, ok=False)
        assert ran.code == 2, (bad, ran.err)
        assert ran.err == (f"error: --addr: expected HOST:PORT (e.g. 127.0.0.1:9469), got "
                           f"{bad!r}; see `octomem metrics --help`\n"), ran.err


def test_a_command_option_value_points_to_that_commands_help(tmp_path: Path) -> None:
    """M14: `serve --project-root` is serve's option: its hint is serve's --help."""
    missing = tmp_path / "nonexistent"
    ran = octomem(tmp_path, "serve", "--project-root", str(missing), ok=False)
    assert ran.code == 2
    assert ran.err == (f"error: --project-root {missing}: no such directory; see "
                       "`octomem serve --help`\n"), ran.err
    ran = octomem(tmp_path, "--project-root", str(missing), "status", ok=False)
    assert ran.err.endswith("; see `octomem --help`\n"), ran.err
