"""Import direction: core <- memory <- cli / mcp_server; plugins -> core only.

The engine core (every module of ``engine/`` outside ``engine/memory/`` and
``engine/cli/``) imports neither the memory domain, the CLI, the plugins nor the MCP
server; the memory domain imports neither the CLI nor the front ends; plugins use only
the engine core; the MCP server uses only the engine (core and memory). Relative imports
are resolved, so ``from ..memory import x`` counts as importing the memory domain.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = {"engine": "octomem.engine", "plugins": "octomem.plugins", "mcp_server": "octomem.mcp_server"}
CORE_FORBIDDEN = (
    "octomem.engine.memory", "octomem.engine.cli", "octomem.plugins", "octomem.mcp_server",
)


def module_name(path: Path) -> tuple[str, bool]:
    """Return the dotted name of ``path`` and whether it is a package ``__init__``."""
    rel = path.relative_to(ROOT)
    parts = [TOP[rel.parts[0]], *rel.with_suffix("").parts[1:]]
    is_package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_package else parts), is_package


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved to absolute names."""
    name, is_package = module_name(path)
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                base = node.module or ""
            else:
                base = ".".join(package[: len(package) - node.level + 1] + (
                    [node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    return found


def violations(files: list[Path], forbidden: tuple[str, ...]) -> list[tuple[str, str]]:
    return sorted(
        (str(f.relative_to(ROOT)), m) for f in files for m in imports_of(f)
        if any(m == x or m.startswith(x + ".") for x in forbidden)
    )


def core_files() -> list[Path]:
    engine = ROOT / "engine"
    return [p for p in engine.rglob("*.py")
            if p.relative_to(engine).parts[0] not in {"memory", "cli"}]


@pytest.mark.parametrize(
    ("files", "forbidden"),
    [
        (core_files, CORE_FORBIDDEN),
        (lambda: list((ROOT / "engine" / "memory").rglob("*.py")),
         ("octomem.engine.cli", "octomem.plugins", "octomem.mcp_server")),
        (lambda: list((ROOT / "plugins").rglob("*.py")),
         ("octomem.engine.memory", "octomem.engine.cli", "octomem.mcp_server")),
        (lambda: list((ROOT / "mcp_server").rglob("*.py")),
         ("octomem.engine.cli", "octomem.plugins")),
    ],
    ids=["core", "memory", "plugins", "mcp_server"],
)
def test_layers(files, forbidden: tuple[str, ...]) -> None:
    found = [f for f in files() if "contrib" not in f.parts]
    assert found, "no modules found: the layout moved?"
    assert violations(found, forbidden) == []


def test_core_violation_is_caught(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check resolves relative imports: a core module reaching into memory is flagged."""
    bad = ROOT / "engine" / "_layering_probe.py"
    bad.write_text("from .memory.scopes import SCOPES\nimport octomem.engine.cli\n")
    try:
        assert violations([bad], CORE_FORBIDDEN) == [
            ("engine/_layering_probe.py", "octomem.engine.cli"),
            ("engine/_layering_probe.py", "octomem.engine.memory.scopes"),
            ("engine/_layering_probe.py", "octomem.engine.memory.scopes.SCOPES"),
        ]
    finally:
        bad.unlink()


def test_modules_stay_small() -> None:
    """No module of the engine, the default plugins or the server is over 450 lines."""
    long = {
        str(p.relative_to(ROOT)): n
        for folder in ("engine", "plugins", "mcp_server")
        for p in (ROOT / folder).rglob("*.py")
        if "contrib" not in p.parts and (n := len(p.read_text().splitlines())) > 450
    }
    assert long == {}
