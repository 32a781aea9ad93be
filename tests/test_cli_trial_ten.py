"""Small command-line findings of fresh-user trial 10, each through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_run import octomem


@pytest.mark.parametrize("blank", ["", "   "])
def test_an_empty_forget_is_a_usage_error_naming_the_argument(tmp_path: Path,
                                                              blank: str) -> None:
    octomem(tmp_path, "add", "Tests run with make check")
    ran = octomem(tmp_path, "forget", blank, ok=False)
    assert (ran.code, ran.out) == (2, "")
    assert ran.err == ("error: ID_OR_TEXT: empty; give a statement's id or its exact text; "
                       "see `octomem forget --help`\n")
    assert "make check" in octomem(tmp_path, "search", "make check").out
