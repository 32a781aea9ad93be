"""Tags have limits like every other input (trial 12 F14): at most ``limits.tags`` per
statement or document, ``limits.tag_chars`` characters each, no space or control
character, and at most ``limits.filter_values`` kinds or tags in a recall filter; each
refusal is one line naming the argument and the setting, nothing stored. Messages naming
many tags stay short, ``max_tokens`` counts tags, and a store written before the limits
still reads. Through a real MCP client over stdio, the CLI and the browser view."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from cli_run import octomem
from mcp_stdio import stdio_client
from ui_support import running_view

from octomem.engine.memory.context import estimate_tokens, reading
from octomem.engine.memory.limits import some
from octomem.engine.types import Chunk

pytestmark = pytest.mark.slow


def _one_line(message: str, *parts: str) -> str:
    assert "\n" not in message and len(message) < 800, message
    for part in parts:
        assert part in message, message
    return message


def test_mcp_refuses_too_many_too_long_or_unlabel_like_tags(tmp_path: Path,
                                                            project: Path) -> None:
    many = [f"t{i}" for i in range(20_000)]
    with stdio_client(tmp_path, project) as mcp:
        _one_line(mcp.error("remember", text="tag flood statement", tags=many),
                  "tags: 20,000 tags, more than limits.tags (32)", "nothing was stored")
        _one_line(mcp.error("remember", text="tag giant statement", tags=["g" * 200_000]),
                  "200,000 characters, more than limits.tag_chars (100)", "nothing was stored")
        for bad, why in (("a\nb", "U+000A"), ("x y", "a space"), ("rlo\u202e", "U+202E")):
            _one_line(mcp.error("remember", text="odd tag statement", tags=[bad]),
                      "tags: tag", why, "without spaces or control characters")
        _one_line(mcp.error("ingest", path_or_text="An ingested text", tags=many),
                  "limits.tags (32)")
        hits = mcp.ok("recall", query="tag flood giant odd statement ingested")["hits"]
        assert hits == [], hits  # nothing of the refused calls was stored
        # filters: count and length, one line, no 20,000-tag message
        _one_line(mcp.error("recall", query="kiwi", tags=many),
                  "tags: 20,000 values, more than limits.filter_values (100)")
        _one_line(mcp.error("recall", query="kiwi", kinds=["K"] * 101),
                  "kinds: 101 values, more than limits.filter_values (100)")
        _one_line(mcp.error("recall", query="kiwi", tags=["x" * 10_000]),
                  "limits.tag_chars (100)")
        # 32 tags of 100 characters are fine, and max_tokens counts them
        labels = [f"{i:02d}" + "l" * 98 for i in range(32)]
        assert mcp.ok("remember", text="Kiwi harvest is in May", tags=labels)["id"]
        answer = mcp.ok("recall", query="kiwi harvest", max_tokens=100)
        [hit] = answer["hits"]
        assert len(hit["tags"]) == 32
        assert answer["budget"]["tokens"] > 32 * 100 // 4, answer["budget"]
        # a filter naming many missing tags says so in one short line
        why = mcp.ok("recall", query="kiwi", tags=[f"m{i}" for i in range(100)])
        _one_line(why["nothing_to_rank"], "m0 or m1 or m2 or m3 or m4 and 95 more")


def test_cli_add_and_search_refuse_past_the_tag_limits(tmp_path: Path) -> None:
    ran = octomem(tmp_path, "add", "Kiwi harvest is in May", "--tag", "x y", ok=False)
    assert ran.code == 2 and ran.err.count("\n") == 1, ran.err
    assert ran.err.startswith("error: --tag: tag 'x y' holds a space"), ran.err
    assert ran.err.endswith("see `octomem add --help`\n"), ran.err
    many = [a for i in range(33) for a in ("--tag", f"t{i}")]
    ran = octomem(tmp_path, "add", "Kiwi harvest is in May", *many, ok=False)
    assert "--tag: 33 tags, more than limits.tags (32); nothing was stored" in ran.err, ran.err
    assert not (tmp_path / ".octomem").exists()
    # the setting raises the limit, as for every other limit
    octomem(tmp_path, "--set", "limits.tags=40", "add", "Kiwi harvest is in May", *many)
    filters = [a for i in range(101) for a in ("--tag", f"t{i}")]
    ran = octomem(tmp_path, "search", "kiwi", *filters, ok=False)
    assert "--tag: 101 values, more than limits.filter_values (100)" in ran.err, ran.err
    ran = octomem(tmp_path, "search", "kiwi", "--tag", "t1", "--tag", "t2")
    assert "Kiwi harvest" in ran.out


def test_a_store_with_tags_past_the_limits_still_reads(tmp_path: Path) -> None:
    old = ["o0", "l" * 500, *(f"o{i}" for i in range(1, 60))]
    flags = [a for t in old for a in ("--tag", t)]
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    octomem(first, "--set", "limits.tags=100", "--set", "limits.tag_chars=1000", "add",
            "Kiwi vines need a frost-free spring", *flags)
    octomem(first, "export", "--scope", "local", str(tmp_path / "out.jsonl"))
    exported = (tmp_path / "out.jsonl").read_text().replace('"o0"', '"with space"')
    (tmp_path / "old.jsonl").write_text(exported)
    octomem(second, "import", str(tmp_path / "old.jsonl"))  # an old store's records
    hit = octomem(second, "search", "kiwi vines", "--json").json()["hits"][0]
    assert hit["tags"] == ["with space", *old[1:]]
    assert "Kiwi vines" in octomem(second, "search", "kiwi", "--tag", "with space").out


def test_helpers_count_tags_and_keep_messages_short() -> None:
    assert some([f"t{i}" for i in range(20_000)], " or ") == \
        "t0 or t1 or t2 or t3 or t4 and 19,995 more"
    assert some(["g" * 500]) == "g" * 39 + "…"
    chunk = Chunk(document_id="d", ordinal=0, text="short", tags=("a" * 400,))
    assert estimate_tokens(reading(chunk)) > 100


def test_the_browser_view_refuses_past_the_tag_limits(tmp_path: Path) -> None:
    """The view's remember form and search filter go through the same checks: 400, one
    line naming the argument and the setting."""
    with running_view(tmp_path, allow_writes=True) as view:
        with httpx.Client(base_url=view.url, timeout=30) as http:
            token = re.search(r'name="form_token" value="([^"]+)"', http.get("/").text)
            assert token is not None
            many = " ".join(f"t{i}" for i in range(40))
            page = http.post("/remember", data={"text": "Kiwi harvest is in May",
                                                "tags": many, "form_token": token.group(1)})
            assert page.status_code == 400
            assert "tags: 40 tags, more than limits.tags (32); nothing was stored" in page.text
            filters = ",".join(f"t{i}" for i in range(101))
            page = http.get("/", params={"q": "kiwi", "tags": filters})
            assert page.status_code == 400
            assert "tags: 101 values, more than limits.filter_values (100)" in page.text
