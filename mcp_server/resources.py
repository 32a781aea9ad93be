"""The memory resources: a scope as Markdown, one item with its provenance as JSON.

- ``octomem://memory/{scope}`` (also listed as ``octomem://memory/local`` and
  ``octomem://memory/global``): the scope's current statements, newest first.
- ``octomem://item/{+id}``: one statement or document by id (as ``recall`` gives it,
  ``/`` included; a ``?`` or ``#`` in an id is written ``%3F`` / ``%23``), or one chunk by
  ``local:<chunk_id>`` / ``global:<chunk_id>``; kept within what a client takes in one
  message (:mod:`.item_size`: a long document's text and chunks are cut, ``cut`` says
  what and how to read the rest chunk by chunk).
- ``octomem://session-start``: what an agent should see first, within
  ``session_start.max_bytes`` (:mod:`octomem.engine.memory.session_start`).

An :class:`~octomem.engine.errors.OctomemError` (unknown scope, unknown id) becomes a
:class:`ResourceError` carrying its one-line message.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError
from mcp.server.mcpserver.resources.templates import ResourceSecurity

from octomem.engine.controls import visible
from octomem.engine.errors import OctomemError
from octomem.engine.exhaustion import exhaustion
from octomem.engine.memory.scopes import SCOPES
from octomem.engine.memory.session_start import render as render_session_start
from octomem.engine.memory.view import item, scope_markdown

from . import descriptions as say
from .item_size import bounded_item
from .loader import MemoryLoader, one_line

log = logging.getLogger(__name__)


@contextmanager
def resource_errors(uri: str) -> Iterator[None]:
    """Turn an :class:`OctomemError` into a :class:`ResourceError` with its message, and
    memory or file descriptors running out (whatever raised it) into one naming what ran
    out (:func:`~octomem.engine.exhaustion.exhaustion`), not an internal error.

    :param uri: the resource being read, named in that line.
    """
    try:
        yield
    except Exception as exc:
        why = exhaustion(exc, f"reading {uri}", probe=not isinstance(exc, OctomemError))
        if why is not None:
            log.warning("%s", why)
            raise ResourceError(one_line(why)) from exc
        if isinstance(exc, OctomemError):
            raise ResourceError(one_line(str(exc))) from exc
        raise


def _bound(render: Callable[[str], str], scope: str) -> Callable[[], str]:
    def read() -> str:
        return render(scope)
    return read


def register_resources(server: MCPServer, loader: MemoryLoader) -> None:
    """Add the memory and item resources to ``server``."""

    def memory(scope: str) -> str:
        with resource_errors(f"octomem://memory/{scope}"):
            return visible(scope_markdown(loader.memory(), scope))

    def one_item(id: str) -> str:  # noqa: A002 - the URI template's variable name
        with resource_errors(f"octomem://item/{id}"):
            return bounded_item(item(loader.memory(), id)).model_dump_json(
                indent=2, exclude_none=True)

    def session_start() -> str:
        with resource_errors("octomem://session-start"):
            memory = loader.memory()
            return visible(render_session_start(memory, memory.settings.session_start.max_bytes))

    server.resource("octomem://session-start", name="session-start",
                    title="Start of a session", description=say.SESSION_START_RESOURCE,
                    mime_type="text/markdown")(session_start)
    server.resource("octomem://memory/{scope}", name="memory", title="Memory of a scope",
                    description=say.MEMORY_RESOURCE, mime_type="text/markdown")(memory)
    for scope in SCOPES:
        server.resource(f"octomem://memory/{scope}", name=f"{scope} memory",
                        title=f"{scope.capitalize()} memory", description=say.MEMORY_RESOURCE,
                        mime_type="text/markdown")(_bound(memory, scope))
    # {+id}: RFC 6570 reserved expansion, so an id holding "/" (``2025/trip:0``, which
    # octomem gives a second same-named transcript) matches as it is; the SDK's simple
    # {id} stops at "/" and only the percent-encoded id was found (trial 13 F6)
    server.resource("octomem://item/{+id}", name="item", title="One stored item",
                    description=say.ITEM_RESOURCE, mime_type="application/json",
                    security=ResourceSecurity(exempt_params={"id"}))(one_item)
