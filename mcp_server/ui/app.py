"""Assemble the browser view: routes, templates, static files, the guard.

Routes (every GET reads only; the two POSTs exist only to write, see :mod:`.writes`):

==========================================  ==============================================
``GET /``                                   search with filters, the explain table
``GET /memory``                             both scopes: directory, counts, standing memory
``GET /item/{ref}``                         one item: provenance, chunks, supersede chain
``GET /conversation/{scope}/{name}``        a transcript, ``?hit=<chunk_id>`` marked
``GET /status``                             arms, model, warm-up, pending vectors, chart
``POST /remember``, ``POST /forget``        writes (``--allow-writes`` only)
==========================================  ==============================================
"""

from __future__ import annotations

from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from octomem.engine.controls import clipped, visible
from octomem.engine.titles import without_title
from octomem.engine.types import DEFAULT_KIND

from ..loader import MemoryLoader
from . import pages, writes
from .chart import CallSource
from .guard import Guard, GuardMiddleware
from .neutral import exact, finalize

HERE = Path(__file__).resolve().parent


def create_ui_app(loader: MemoryLoader, guard: Guard, allow_writes: bool = False,
                  calls: CallSource | None = None, chart_what: str | None = None) -> Starlette:
    """Build the view's ASGI app over ``loader``'s memory.

    :param guard: the host, token and form-token checks (:mod:`.guard`).
    :param calls: the MCP server's recent calls for the chart (default: the view's own
        searches).
    :param chart_what: where ``calls`` come from, in a few words.
    """
    templates = Jinja2Templates(directory=str(HERE / "templates"))
    templates.env.finalize = finalize  # control characters in stored text: escaped
    templates.env.filters["exact"] = exact  # ... but in what a form sends back
    templates.env.filters["visible"] = visible  # control characters in the <title>
    templates.env.filters["clipped"] = clipped  # a long query in the title and heading
    templates.env.filters["without_title"] = without_title  # a hit's "# Title" shown once
    templates.env.globals["default_kind"] = DEFAULT_KIND  # as the CLI and MCP default
    routes = [
        Route("/", pages.search_page, methods=["GET"]),
        Route("/memory", pages.memory_page, methods=["GET"]),
        Route("/item/{ref:path}", pages.item_page, methods=["GET"]),
        Route("/conversation/{scope}/{name:path}", pages.conversation_page, methods=["GET"]),
        Route("/status", pages.status_page, methods=["GET"]),
        Route("/remember", writes.remember, methods=["POST"]),
        Route("/forget", writes.forget, methods=["POST"]),
        Mount("/static", StaticFiles(directory=str(HERE / "static")), name="static"),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(GuardMiddleware, guard=guard)],
                    exception_handlers={404: pages.http_error, 405: pages.http_error})
    app.state.ui = pages.UiContext(loader, guard, templates, allow_writes, calls=calls)
    if calls is not None and chart_what:
        app.state.ui.chart_what = chart_what
    return app
