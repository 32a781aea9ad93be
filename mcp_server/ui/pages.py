"""The view's pages (all GET, all read-only): search, memory, item, conversation, status."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from octomem.engine.controls import visible
from octomem.engine.errors import (
    InvalidQueryError,
    NotFoundError,
    OctomemError,
    StaleVersionError,
    StoreUnavailableError,
)
from octomem.engine.memory.scopes import SCOPES, check_scope

from ..loader import MemoryLoader, ServerNotReadyError, one_line
from ..models import status_result
from . import views
from .chart import CallRecord, CallSource, render_chart
from .guard import Guard

#: Notices a write's redirect may ask a page to show (``?done=<key>&id=<id>``).
NOTICES = {
    "remembered": "Remembered {id}.",
    "replaced": "Stored {id}; the statement it replaces is kept as history.",
    "forgot": "Forgot {id}: its text is gone, the forget log keeps why and when.",
}


@dataclass
class UiContext:
    """Everything the pages share, fixed when the server starts.

    :param calls: the calls the status chart draws (the server's, or the view's own).
    :param chart_what: where those calls come from, in a few words.
    """

    loader: MemoryLoader
    guard: Guard
    templates: Jinja2Templates
    allow_writes: bool = False
    own_calls: CallRecord = field(default_factory=CallRecord)
    calls: CallSource | None = None
    chart_what: str = "searches made in this view"

    def chart_calls(self) -> CallSource:
        """Return the calls the chart draws."""
        return self.calls or self.own_calls.calls


def ctx(request: Request) -> UiContext:
    """Return the view's :class:`UiContext` (kept on the app's state)."""
    return request.app.state.ui  # type: ignore[no-any-return]


def status_code(exc: OctomemError) -> int:
    """Map an error to its HTTP status: 400 bad input, 404 unknown id, 409 stale, 503
    loading or the storage's server unreachable."""
    if isinstance(exc, StaleVersionError):
        return 409
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, ServerNotReadyError | StoreUnavailableError):
        return 503
    return 400 if isinstance(exc, InvalidQueryError) else 500


def render(request: Request, template: str, code: int = 200, **values: Any) -> Response:
    """Render ``template`` with the shared values (writes on?, form token, notice)."""
    ui = ctx(request)
    done = request.query_params.get("done", "")
    notice = NOTICES[done].format(id=request.query_params.get("id", "")) if done in NOTICES \
        else None
    return ui.templates.TemplateResponse(request, template, {
        "allow_writes": ui.allow_writes, "form_token": ui.guard.form_token, "notice": notice,
        **values}, status_code=code)


def error_page(request: Request, exc: OctomemError, **values: Any) -> Response:
    """Render the error page: the error's one-line message and its status."""
    return render(request, "error.html", status_code(exc), error=one_line(str(exc)), **values)


async def http_error(request: Request, exc: Exception) -> Response:
    """Render Starlette's own HTTP errors (an unknown route: 404; a method a route does not
    take: 405) as the styled error page, as every other error of the view is."""
    code, path = int(getattr(exc, "status_code", 500)), visible(request.url.path)
    if code == 404:
        message = (f"no page at {path}; the view has search (/), memory, status, item and "
                   "conversation pages")
    else:  # Starlette's detail is the status phrase ("Method Not Allowed")
        message = f"{request.method} {path}: {str(getattr(exc, 'detail', '')).lower()}"
    response = render(request, "error.html", code, error=message)
    response.headers.update(getattr(exc, "headers", None) or {})
    return response


async def read(request: Request, work: Callable[..., Any], *args: Any, warm: bool = False) -> Any:
    """Run ``work(memory, *args)`` on a worker thread, once the memory is open."""
    loader = ctx(request).loader

    def call() -> Any:
        return work(loader.memory(warm=warm), *args)
    return await run_in_threadpool(call)


async def search_page(request: Request) -> Response:
    """``GET /``: the search form and, with ``q``, the explained answer."""
    try:
        form = views.SearchForm.parse(request.query_params)
    except OctomemError as exc:
        return error_page(request, exc, form=views.SearchForm())
    try:
        start = time.perf_counter()
        view = await read(request, views.search, form, warm=True)
        if form.q:
            ctx(request).own_calls.add("recall", (time.perf_counter() - start) * 1e3)
    except OctomemError as exc:
        return error_page(request, exc, form=form)
    return render(request, "search.html", view=view, form=form)


async def memory_page(request: Request) -> Response:
    """``GET /memory``: both scopes as blocks (directory, counts, standing memory);
    ``?scope=local`` or ``global``: that one only (another value: 400 naming it)."""
    try:
        scope = check_scope(request.query_params.get("scope", "").strip() or None)
        blocks = await read(request, views.scope_blocks, (scope,) if scope else SCOPES)
    except OctomemError as exc:
        return error_page(request, exc)
    return render(request, "memory.html", blocks=blocks)


async def item_page(request: Request) -> Response:
    """``GET /item/{ref}``: one statement, document or ``scope:chunk_id``, with history."""
    try:
        page = await read(request, views.item_page, request.path_params["ref"])
    except OctomemError as exc:
        return error_page(request, exc)
    return render(request, "item.html", **page)


async def conversation_page(request: Request) -> Response:
    """``GET /conversation/{scope}/{name}?hit=<chunk_id>``: a transcript, the hit marked."""
    scope, name = request.path_params["scope"], request.path_params["name"]
    hit = request.query_params.get("hit", "")
    chunk_id = views.whole_number(hit)  # none marked for anything but ASCII digits
    try:
        turns = await read(request, views.conversation, scope, name)
    except OctomemError as exc:
        return error_page(request, exc)
    if not turns:
        return error_page(request, NotFoundError(f"no conversation {name!r} in the {scope} scope"))
    shown, before, after = views.around(turns, chunk_id)
    return render(request, "conversation.html", scope=scope, name=name, turns=shown, hit=chunk_id,
                  before=before, after=after, total=len(turns))


def _status(loader: MemoryLoader) -> dict[str, Any]:
    status = status_result(loader.memory().status(), *loader.model_state())
    return {"status": status, "warmup": loader.warmup_state()}


async def status_page(request: Request) -> Response:
    """``GET /status``: arms, model, warm-up, pending vectors, the latency/calls chart."""
    ui = ctx(request)
    try:
        values = await run_in_threadpool(_status, ui.loader)
    except OctomemError as exc:
        return error_page(request, exc)
    chart = render_chart(ui.chart_calls()(), what=ui.chart_what)
    return render(request, "status.html", chart=chart, chart_what=ui.chart_what, **values)
