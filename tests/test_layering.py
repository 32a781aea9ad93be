"""The engine imports neither plugins nor the MCP server; plugins and server use only the engine."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def imported_modules(folder: str) -> set[tuple[str, str]]:
    found = set()
    for path in (ROOT / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {(path.name, a.name) for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add((path.name, node.module))
    return found


@pytest.mark.parametrize(
    ("folder", "forbidden"),
    [
        ("engine", ("octomem.plugins", "octomem.mcp_server", "plugins", "mcp_server")),
        ("plugins", ("octomem.mcp_server", "engine", "mcp_server")),
        ("mcp_server", ("octomem.plugins", "engine", "plugins")),
    ],
)
def test_layers(folder: str, forbidden: tuple[str, ...]) -> None:
    bad = [
        (f, m) for f, m in imported_modules(folder)
        if any(m == x or m.startswith(x + ".") for x in forbidden)
    ]
    assert bad == []
