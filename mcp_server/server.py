"""The octomem MCP server: the configured pipeline behind four memory tools.

The server only assembles the pipeline the settings describe (through
:func:`octomem.engine.app.open_pipeline`, exactly like the CLI) and exposes it as the
tools ``remember``, ``recall``, ``forget`` and ``status`` (see :mod:`.tools`).

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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from octomem.engine.app import open_pipeline
from octomem.engine.settings import load_settings

from .loader import SHUTDOWN_WAIT_S, PipelineLoader
from .tools import register_tools

INSTRUCTIONS = """\
octomem is your long-term memory across sessions, stored locally. `recall` before you \
answer anything that past work, the user's preferences or earlier decisions could inform, \
and before `remember` (to avoid duplicates). `remember` one self-contained, durable \
statement per call. `forget` a memory by id when it is wrong or outdated, then remember the \
correction. `status` explains what is stored and whether semantic search is available."""


def _version() -> str:
    try:
        return md.version("octomem")
    except md.PackageNotFoundError:  # running from a source tree without an install
        return "0+unknown"


def create_server(
    config_file: Path | None = None, overrides: dict[str, Any] | None = None
) -> MCPServer:
    """Build the MCP server for the pipeline the settings describe (assembled lazily).

    :param config_file: the ``--config FILE`` settings layer.
    :param overrides: the ``--set`` layer, nested (``{"retrieval": {"top_k": 5}}``).
    :returns: an unstarted server; ``server.run("stdio")`` serves it.
    :raises ArmConfigError: an unknown key or bad value in any settings layer (checked
        now; arm lookup and plugin loading happen in the background and surface as
        tool errors).
    """
    load_settings(config_file, overrides)
    loader = PipelineLoader(partial(open_pipeline, config_file, overrides))

    @asynccontextmanager
    async def lifespan(_: MCPServer) -> AsyncIterator[PipelineLoader]:
        loader.start()
        try:
            yield loader
        finally:
            await anyio.to_thread.run_sync(partial(loader.close, SHUTDOWN_WAIT_S))

    server: MCPServer = MCPServer(
        name="octomem", title="octomem memory", version=_version(),
        instructions=INSTRUCTIONS, lifespan=lifespan,
    )
    register_tools(server, loader)
    return server
