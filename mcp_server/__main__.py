"""``python -m octomem.mcp_server [--project-root DIR] [--global-root DIR] [--config FILE]
[--set KEY=VALUE ...] [--http HOST:PORT] [--metrics-addr HOST:PORT] [--log-format text|json]
[--log-level LEVEL]``: serve one project's memory, as ``octomem serve`` does.

Settings come from the usual layers (``OCTOMEM_*`` environment variables included);
logs go to stderr, stdout carries the protocol (stdio).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from octomem.engine.errors import OctomemError
from octomem.engine.settings import parse_overrides

from .logs import LOG_FORMATS, LOG_LEVELS


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m octomem.mcp_server",
        description="Serve one project's octomem memory over MCP (stdio, or streamable HTTP)."
    )
    parser.add_argument(
        "--project-root", type=Path, default=None,
        help="the project this server serves; its .octomem/ is the local scope (default: the "
             "nearest folder from the current one upward holding .octomem/; with none, the "
             "nearest holding .git; else the current one)",
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
    parser.add_argument("--http", metavar="HOST:PORT",
                        help="serve MCP over streamable HTTP at http://HOST:PORT/mcp")
    parser.add_argument("--metrics-addr", metavar="HOST:PORT",
                        help="serve Prometheus metrics at http://HOST:PORT/metrics (loopback)")
    parser.add_argument("--log-format", default="text", choices=LOG_FORMATS,
                        help="stderr log lines: text or json (default text)")
    parser.add_argument("--log-level", default=None, choices=LOG_LEVELS,
                        type=str.upper, help="stderr log level (default INFO; WARNING when "
                        "started at a terminal over stdio)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and serve until stdin closes (stdio) or the process is stopped.

    :returns: the process exit status (2 for bad settings or a refused address).
    """
    args = _parser().parse_args(argv)
    from .serve import ServeOptions, serve  # after parsing: --help stays fast

    options = ServeOptions(args.http, args.metrics_addr, args.log_format, args.log_level)
    try:
        serve(args.config, parse_overrides(args.pairs), args.project_root, args.global_root,
              options)
    except OctomemError as exc:
        print(f"octomem: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
