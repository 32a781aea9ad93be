"""`octomem search` and `recall` lay hits out by display width, not by characters (trial 18
H12): a CJK character or an emoji takes two terminal cells, so a line of them wrapped by
character count was about twice as wide as the terminal (~60 cells at ``COLUMNS=40``).

Real stores and the installed console script at a fixed width; every line's width is
counted independently of the code under test, with :func:`unicodedata.east_asian_width`
(wide and fullwidth characters take two cells, combining marks none).
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from cli_run import octomem

pytestmark = pytest.mark.slow

DEPLOY = ("部署流程：每周四下午在发布分支上发布，需要两位审批人。🚀🚀 emoji "
          "上线前先跑冒烟测试，再通知值班同事。")
CACHE = "缓存策略：热点数据保存在本地内存，过期时间十分钟，🔥 命中率低于九成时报警。"
TURNS = ["明天早上我们坐哪一班火车去波尔图？", "坐九点零九分的快车，从圣阿波罗尼亚站出发。🚆",
         "星期天回里斯本坐哪一班？", "坐十八点三十九分的，晚饭前就到了。"]


def cells(line: str) -> int:
    """Return the cells ``line`` takes in a terminal (East Asian Width: W and F take 2)."""
    return sum(0 if unicodedata.combining(c) else
               2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in line)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    (root / "notes" / "deploy.md").write_text(DEPLOY + "\n", encoding="utf-8")
    (root / "notes" / "cache.md").write_text(CACHE + "\n", encoding="utf-8")
    (root / "trip.jsonl").write_text("".join(json.dumps(
        {"conversation": "trip", "session": "1", "speaker": "Ana" if i % 2 == 0 else "Ben",
         "text": text, "time": f"2024-05-01T10:0{i}:00Z"}, ensure_ascii=False) + "\n"
        for i, text in enumerate(TURNS)), encoding="utf-8")
    octomem(root, "ingest", "notes", "trip.jsonl")
    return root


@pytest.mark.parametrize("columns", ["40", "57"])
@pytest.mark.parametrize("args", [
    ["search", "部署流程 发布 🚀", "-k", "2"],
    ["search", "部署流程 发布", "--explain", "-k", "2"],
    ["search", "坐哪一班火车", "--context", "1", "-k", "1"],
    ["recall", "缓存策略 过期时间"],
])
def test_every_line_fits_the_terminal(project: Path, args: list[str], columns: str) -> None:
    out = octomem(project, "--set", "retrieval.relevance_floor=0", *args, spawn=True,
                  COLUMNS=columns).out
    lines = out.splitlines()
    assert [line for line in lines if cells(line) > int(columns)] == [], out
    assert any(cells(line) > int(columns) - 8 for line in lines), out  # the width is used


def test_a_wrapped_hit_keeps_its_words_in_order(project: Path) -> None:
    """The hit's title, then its text folded across the lines (a CJK sentence has no space
    to break at), cut with "…" on the last one."""
    out = octomem(project, "--set", "retrieval.relevance_floor=0", "search", "部署流程 发布 🚀",
                  "-k", "1", spawn=True, COLUMNS="40").out
    hit = out.splitlines()[1:4]
    assert hit[0].startswith("1  ") and hit[0].endswith("deploy —"), out
    indent = len(hit[0]) - len("deploy —")
    assert all(line[:indent].isspace() for line in hit[1:]), out
    shown = "".join(line[indent:] for line in hit[1:])
    assert shown.endswith("…") and DEPLOY.startswith(shown[:-1]), out
    # folded at the last cell; the "…" takes one, so a wide character may leave one free
    assert cells(hit[1]) == 40 and cells(hit[2]) in (39, 40), out
