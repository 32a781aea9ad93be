"""``octomem ui``: the browser view's command (``serve``'s ``--ui-*`` options are in
:mod:`.options`).

The view lives in the server package (``octomem.mcp_server.ui``) and is imported by name
at run time, as ``serve`` imports the server: the engine has no static dependency on it.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated

import typer

from .commands import state
from .lazy import registry
from .options import UI_TOKEN_HELP, Command, port_in_range, ui_options

#: The view's default port (``octomem.mcp_server.ui.options.DEFAULT_PORT``).
DEFAULT_PORT = 8766

ProjectOpt = Annotated[Path | None, typer.Option(
    "--project-root", help="The project whose memory to show (an existing folder); its "
    "`.octomem/` is the local scope (default: the nearest folder from the current one "
    "upward that holds `.octomem/`; with none, the nearest that holds `.git`; else the "
    "current directory).")]
GlobalOpt = Annotated[Path | None, typer.Option(
    "--global-root", help="The global scope's directory (setting `global_root`; default "
    "`data_dir`).")]
PortOpt = Annotated[int, typer.Option("--port", callback=port_in_range, help=(
    "TCP port of the view (0: any free port, printed at start)."))]
HostOpt = Annotated[str, typer.Option(
    "--host", help="Address to listen on: loopback only (`127.0.0.1`, `::1`) unless "
    "`--allow-remote`.")]
WritesOpt = Annotated[bool, typer.Option(
    "--allow-writes", help="Offer remember and forget on the pages (otherwise the view only "
    "reads).")]
RemoteOpt = Annotated[bool, typer.Option(
    "--allow-remote", help=f"Allow a non-loopback `--host`; {UI_TOKEN_HELP}")]


@registry.command("ui", cls=Command)
def ui(
    project_root: ProjectOpt = None, global_root: GlobalOpt = None, port: PortOpt = DEFAULT_PORT,
    host: HostOpt = "127.0.0.1", allow_writes: WritesOpt = False, allow_remote: RemoteOpt = False,
) -> None:
    """Show the memory in a browser: search with the explain table, both scopes, items and
    their history, conversations, status. Read-only unless `--allow-writes`; loopback only
    unless `--allow-remote`. See docs/ui.md."""
    if project_root is not None:  # a typo must not start a new, empty project's memory
        from ..files import check_project_root

        check_project_root(project_root)
    if not allow_remote:  # refused before the server (uvicorn, Starlette) is imported
        importlib.import_module("octomem.mcp_server.ui.guard").check_bind(host, False)
    view = importlib.import_module("octomem.mcp_server.ui.server")
    view.serve_ui(ui_options(host, port, allow_writes, allow_remote), state.config,
                  state.overrides, project_root or state.project_root,
                  global_root or state.global_root)
