"""The view's two writes, POST only: remember (new, or replacing a statement) and forget.

Both are refused unless the server was started with ``--allow-writes``, and unless the
form carries this server's form token (a page of another site cannot post one; a page
from before a restart must be reloaded). A form about an existing statement also carries
the version it showed (:func:`~octomem.engine.memory.versions.document_version`); the memory
re-reads the statement inside its write transaction and refuses with 409 when an agent
changed it after the page was read, so a person never overwrites or forgets a newer
write. A successful write redirects (303) to a page that says what was done.
"""

from __future__ import annotations

import hmac
from typing import Any
from urllib.parse import quote, urlencode

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from octomem.engine.errors import InvalidQueryError, OctomemError

from .guard import split_host
from .pages import ctx, error_page, render
from .views import words


def _refused(request: Request, message: str) -> Response:
    return render(request, "error.html", 403, error=message)


def _same_origin(request: Request) -> bool:
    """Return True unless an ``Origin`` header names another host than ``Host``."""
    origin = request.headers.get("origin")
    if origin is None or origin == "null":
        return origin is None
    host = origin.split("://", 1)[-1]
    return split_host(host) == split_host(request.headers.get("host", ""))


async def _checked_form(request: Request) -> tuple[dict[str, str] | None, Response | None]:
    """Return the posted fields, or the refusal to send instead."""
    ui = ctx(request)
    if not ui.allow_writes:
        return None, _refused(request, "writes are off in this view; start it with "
                              "--allow-writes to remember and forget from the page")
    if not _same_origin(request):
        return None, _refused(request, "this form was posted from another site")
    form = await request.form()
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    given = fields.get("form_token", "")
    if not hmac.compare_digest(given.encode(), ui.guard.form_token.encode()):
        return None, _refused(request, "this form is not from this server, or the server "
                              "restarted since the page was read: reload the page")
    return fields, None


def _required(fields: dict[str, str], name: str) -> str:
    value = fields.get(name, "").strip()
    if not value:
        raise InvalidQueryError(f"{name}: empty; fill it in")
    return value


def _done(key: str, doc_id: str) -> Response:
    target = f"/item/{quote(doc_id, safe='')}?{urlencode({'done': key, 'id': doc_id})}"
    return RedirectResponse(target, status_code=303)


async def _write(request: Request, work: Any) -> Any:
    loader = ctx(request).loader

    def call() -> Any:
        memory = loader.memory(warm=True)
        with loader.write_lock:
            return work(memory)
    return await run_in_threadpool(call)


async def remember(request: Request) -> Response:
    """``POST /remember``: store a statement; with ``supersedes`` and ``version``, replace
    that statement unless it changed since the page showed it."""
    fields, refusal = await _checked_form(request)
    if refusal is not None or fields is None:
        return refusal  # type: ignore[return-value]
    supersedes = fields.get("supersedes", "").strip() or None
    version = fields.get("version", "").strip() or None
    try:
        text = _required(fields, "text")
        if supersedes and not version:
            raise InvalidQueryError("version: missing; reload the statement's page")
        out = await _write(request, lambda m: m.remember(
            text, fields.get("scope") or None, fields.get("kind", "").strip() or None,
            words(fields.get("tags", "")), fields.get("event_time", "").strip() or None,
            supersedes, expect_version=version))
    except OctomemError as exc:
        return error_page(request, exc, back=f"/item/{quote(supersedes, safe='')}"
                          if supersedes else "/")
    ctx(request).loader.warm_new_scopes()
    return _done("replaced" if supersedes else "remembered", out.document.id)


async def forget(request: Request) -> Response:
    """``POST /forget``: forget the statement ``id`` unless it changed since ``version``."""
    fields, refusal = await _checked_form(request)
    if refusal is not None or fields is None:
        return refusal  # type: ignore[return-value]
    doc_id = fields.get("id", "").strip()
    try:
        doc_id = _required(fields, "id")
        version = _required(fields, "version")
        reason = fields.get("reason", "").strip() or None
        out = await _write(request, lambda m: m.forget(doc_id, None, reason,
                                                       expect_version=version))
    except OctomemError as exc:
        return error_page(request, exc, back=f"/item/{quote(doc_id, safe='')}")
    if out.forgotten is None:  # an id matches one statement; kept for safety
        return error_page(request, InvalidQueryError(f"id: {doc_id!r} matched several"))
    return RedirectResponse(f"/?{urlencode({'done': 'forgot', 'id': doc_id})}", status_code=303)
