"""The octomem MCP server: one project's memory (local and global scopes) behind five tools.

The server only opens the memory the settings describe (through
:func:`octomem.engine.memory.facade.open_memory`, exactly like the CLI), bound to one project
(``--project-root``, default the nearest folder from the current one upward holding
``.octomem/``, else the current one), and exposes it as the tools
``remember``, ``recall``, ``forget``, ``ingest`` and ``status`` (see :mod:`.tools`) and
the resources ``octomem://memory/{scope}`` and ``octomem://item/{+id}``
(:mod:`.resources`). Several server processes may serve the same scopes at once (two
clients, one memory): every write is one short SQLite transaction.

Start-up and the embedding model
--------------------------------
``initialize`` and ``tools/list`` never wait for the pipeline: the tool list is static,
and the pipeline is assembled on a background thread when the server starts (its
lifespan), after which the same thread warms the embedder (``embedder.load()``, when the
embedder has one). Bad settings are the exception: they are checked in
:func:`create_server`, so ``octomem serve --set retrieval.top_k=0`` fails at once with
the key and its layer.

A ``recall`` or ``remember`` that arrives while the model is still loading **waits for
it** (at most :data:`~.loader.READY_TIMEOUT_S` seconds, then a tool error saying so),
rather than answering keyword-only: the bundled model loads in about a second, and an
answer whose ranking silently depends on how early it was asked would be worse than a
short wait. ``forget`` and ``status`` wait only for the assembly; ``status`` reports
the model's ``model_state`` (``loading``, ``ready``, ``failed``). A model that cannot
be loaded at all is not a server failure: recall answers with the keyword arm and names
the semantic arm and the reason under ``arms_unavailable``.

Logs go to stderr only; stdout carries the protocol.
"""

from __future__ import annotations

import importlib.metadata as md
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from octomem.engine.files import check_project_root
from octomem.engine.memory.facade import open_memory
from octomem.engine.project import find_project_root
from octomem.engine.settings import load_settings

from .arguments import StrictServer
from .calllog import CallLogWriter
from .descriptions import INSTRUCTIONS
from .loader import SHUTDOWN_WAIT_S, MemoryLoader
from .observe import Observer
from .resources import register_resources
from .tools import register_tools
from .ui.options import UiOptions, with_token


def prepare_view(loader: MemoryLoader, options: UiOptions, observer: Observer | None) -> Any:
    """Bind the browser view over ``loader`` (its modules imported only when asked for);
    its status chart draws the tool calls ``observer`` keeps.

    :raises OctomemError: the address is refused or in use (one line, before serving).
    """
    from .ui.chart import observer_calls
    from .ui.server import prepare_ui

    calls = observer_calls(observer) if observer is not None else None
    return prepare_ui(loader, options, calls, "the MCP tool calls this server answered")


def _version() -> str:
    try:
        return md.version("octomem")
    except md.PackageNotFoundError:  # running from a source tree without an install
        return "0+unknown"


def create_server(
    config_file: Path | None = None, overrides: dict[str, Any] | None = None,
    project_root: Path | None = None, global_root: Path | None = None,
    observer: Observer | None = None, ui: UiOptions | None = None,
    shutdown_wait_s: float = SHUTDOWN_WAIT_S,
) -> MCPServer:
    """Build the MCP server for one project's memory (opened lazily).

    :param config_file: the ``--config FILE`` settings layer.
    :param overrides: the ``--set`` layer, nested (``{"retrieval": {"top_k": 5}}``).
    :param project_root: the project whose ``.octomem/`` is the local scope (default: the
        nearest folder from the current one upward holding ``.octomem/``, or with none
        ``.git``, else the current one: :func:`~octomem.engine.project.find_project_root`); its
        ``.octomem/config.toml`` is a settings layer.
    :param global_root: the global scope's directory (default: setting ``global_root``,
        else ``data_dir``).
    :param observer: count, log and keep every tool call (:mod:`.observe`; ``serve``
        always passes one); with setting ``call_log`` on, its calls also go to the call
        log (:mod:`.calllog`). ``None``: no observation at all.
    :param shutdown_wait_s: how long closing waits for a model load in progress, seconds
        (0 when the process ends through :func:`.process.exit_now`, which tears nothing
        down).
    :param ui: serve the browser view beside MCP (:mod:`.ui`), started and stopped with
        the server, over the same memory; its status chart draws ``observer``'s calls.
    :returns: an unstarted server; ``server.run("stdio")`` serves it.
    :raises OctomemError: the view's address is refused or in use.
    :raises ArmConfigError: an unknown key or bad value in any settings layer (checked
        now; arm lookup and plugin loading happen in the background and surface as
        tool errors).
    :raises UsageValueError: ``project_root`` is not an existing directory.
    """
    project = (Path(project_root).expanduser().resolve() if project_root is not None
               else find_project_root())
    if project_root is not None:  # a typo must not start a new, empty project's memory
        check_project_root(project_root, served=True)
    elif project == Path(project.anchor):  # a client that starts servers in / (trial 16 F15)
        print(f"octomem: warning: the project is {project} (the server was started there, "
              "and no folder above holds .octomem/ or .git), so the local scope would be "
              f"{project / '.octomem'}; give the server --project-root YOUR_PROJECT in the "
              "client's configuration", file=sys.stderr, flush=True)
    loaded = load_settings(config_file, overrides, project_root=project)
    loader = MemoryLoader(partial(open_memory, config_file, overrides, project, global_root))
    writer = _observe(observer, loader, loaded.settings.call_log)
    view = (prepare_view(loader, with_token(ui, loaded.settings), observer)
            if ui is not None else None)

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[MemoryLoader]:
        if view is not None:
            await anyio.to_thread.run_sync(view.start)
            print(f"octomem: browser view on {view.url}", file=sys.stderr, flush=True)
        loader.start()
        try:
            yield loader
        finally:
            if view is not None:
                await anyio.to_thread.run_sync(view.stop)
            if writer is not None:  # what is queued is written before the memory closes
                await anyio.to_thread.run_sync(writer.close)
            await anyio.to_thread.run_sync(partial(loader.close, shutdown_wait_s))

    server: MCPServer = StrictServer(
        name="octomem", title="octomem memory", version=_version(),
        instructions=INSTRUCTIONS, lifespan=lifespan,
        middleware=[observer] if observer is not None else None,
    )
    register_tools(server, loader, server.running)
    register_resources(server, loader)
    return server


def new_observer() -> Observer:
    """Return an :class:`Observer` for this server's tools and version."""
    return Observer(("remember", "recall", "forget", "ingest", "status"), _version())


def _observe(observer: Observer | None, loader: MemoryLoader,
             call_log: bool) -> CallLogWriter | None:
    """Connect ``observer`` to the memory: scope counts at scrape time, and the call log
    writer when ``call_log`` is on (returned, to be closed with the server)."""
    if observer is None:
        return None

    def scope_status() -> dict[str, Any] | None:
        memory = loader.opened()
        return memory.status() if memory is not None else None

    observer.scope_status = scope_status
    if not call_log:
        return None
    writer = CallLogWriter(loader.memory, loader.write_lock)
    observer.sink = writer
    return writer
