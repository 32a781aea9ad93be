"""``python -m octomem.mcp_server [--project-root DIR] [--global-root DIR] [--config FILE]
[--set KEY=VALUE ...]``: serve one project's memory over stdio.

Settings come from the usual layers (``OCTOMEM_*`` environment variables included);
logs go to stderr, stdout carries the protocol.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from octomem.engine.errors import OctomemError
from octomem.engine.settings import parse_overrides


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m octomem.mcp_server",
        description="Serve one project's octomem memory over MCP stdio."
    )
    parser.add_argument(
        "--project-root", type=Path, default=None,
        help="the project this server serves; its .octomem/ is the local scope (default: cwd)",
    )
    parser.add_argument(
        "--global-root", type=Path, default=None,
        help="the global scope's directory (default: setting global_root, else data_dir)",
    )
    parser.add_argument("--config", type=Path, help="settings file (the --config layer)")
    parser.add_argument(
        "--set", dest="pairs", action="append", default=[], metavar="KEY=VALUE",
        help="override one setting, e.g. retrieval.top_k=5 (repeatable)",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="stderr log level (default INFO)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, build the server and serve it over stdio until stdin closes.

    :returns: the process exit status (2 for bad settings).
    """
    args = _parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level, stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from .server import create_server  # after logging is set up: the SDK configures it too

    try:
        server = create_server(args.config, parse_overrides(args.pairs), args.project_root,
                               args.global_root)
    except OctomemError as exc:
        print(f"octomem: error: {exc}", file=sys.stderr)
        return 2
    server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
