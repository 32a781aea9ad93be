"""The browser view over plain HTTP (httpx against the real server): the Host check, the
loopback rule and the remote token, no change on GET, the write guards."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from ui_support import View, running_view

from octomem.engine.memory.versions import document_version
from octomem.mcp_server.ui.guard import Guard, UiAccessError, check_bind, split_host


def snapshot(view: View) -> dict[str, Any]:
    """Everything a GET must leave alone: each document's version and recall counters,
    the forget log, the counts, and whether the local scope exists."""
    agent = view.agent()
    try:
        out: dict[str, Any] = {"local exists": (view.project / ".octomem").exists()}
        for scope, pipeline in agent.scopes.existing():
            storage = pipeline.arms.storage
            out[scope] = (
                sorted((d.id, document_version(d), d.recalls, d.last_recalled_at)
                       for d in storage.iter_documents(include_superseded=True)),
                [r.id for r in storage.iter_forgotten()], storage.counts())
        return out
    finally:
        agent.close()


def seed(view: View, scope: str = "global") -> str:
    agent = view.agent()
    try:
        first = agent.remember("Invoices are rendered by the PDF service", scope=scope).document
        agent.remember("Invoices are rendered by the new PDF service on port 7000",
                       supersedes=first.id)
        return first.id
    finally:
        agent.close()


def form_token(html: str) -> str:
    match = re.search(r'name="form_token" value="([^"]+)"', html)
    assert match, "the page carries no form token"
    return match.group(1)


def test_no_get_changes_anything(tmp_path: Path) -> None:
    with running_view(tmp_path, allow_writes=True) as view:
        old = seed(view)
        before = snapshot(view)
        assert before["local exists"] is False  # everything went to the global scope
        with httpx.Client(base_url=view.url, timeout=30) as http:
            pages = ["/", "/?q=invoices+PDF", "/?q=invoices&superseded=1&as_of=2020-01-01",
                     "/memory", f"/item/{old}", "/item/global:1", "/status",
                     "/conversation/global/none", "/item/nothing-here", "/static/ui.js"]
            codes = {page: http.get(page).status_code for page in pages}
            assert codes == {**dict.fromkeys(pages, 200), "/conversation/global/none": 404,
                             "/item/nothing-here": 404}
            assert "PDF service" in http.get("/?q=invoices+PDF").text
            for page in ("/remember", "/forget"):
                assert http.get(page).status_code == 405
                assert http.head(page).status_code == 405
            assert http.get(f"/forget?id={old}&reason=x").status_code == 405
        assert snapshot(view) == before


def test_writes_need_the_flag_and_the_form_token(tmp_path: Path) -> None:
    with running_view(tmp_path) as view:  # read-only
        old = seed(view)
        with httpx.Client(base_url=view.url, timeout=30) as http:
            page = http.get(f"/item/{old}").text
            assert "forget-form" not in page and "remember-form" not in page
            refused = http.post("/forget", data={"id": old, "version": "x", "form_token": "x"})
            assert refused.status_code == 403 and "--allow-writes" in refused.text
    with running_view(tmp_path / "w", allow_writes=True) as view:
        old = seed(view)
        before = snapshot(view)
        with httpx.Client(base_url=view.url, timeout=30) as http:
            page = http.get("/").text
            token = form_token(page)
            wrong = http.post("/remember", data={"text": "x", "form_token": token + "x"})
            assert wrong.status_code == 403 and "reload the page" in wrong.text
            foreign = http.post("/remember", data={"text": "x", "form_token": token},
                                headers={"Origin": "http://evil.example"})
            assert foreign.status_code == 403
            stale = http.post("/forget", data={"id": old, "version": "0" * 16,
                                               "form_token": token})
            assert stale.status_code == 409 and "nothing was changed" in stale.text
            empty = http.post("/remember", data={"text": "  ", "form_token": token})
            assert empty.status_code == 400 and "text: empty" in empty.text
        assert snapshot(view) == before


def test_the_host_header_is_checked(tmp_path: Path) -> None:
    with running_view(tmp_path) as view:
        port = view.server.port
        with httpx.Client(timeout=30) as http:
            def status(host: str) -> int:
                return http.get(view.url, headers={"Host": host}).status_code
            assert status(f"127.0.0.1:{port}") == 200
            assert status(f"localhost:{port}") == 200
            assert status(f"evil.example:{port}") == 421  # DNS rebinding
            assert status(f"127.0.0.1:{port + 1}") == 421
            assert status("127.0.0.1") == 421
    assert split_host("[::1]:8766") == ("::1", "8766")
    assert Guard("::1", 8766).host_allowed("[::1]:8766")
    assert not Guard("::1", 8766).host_allowed("[::2]:8766")


def test_a_remote_address_is_refused_without_allow_remote(tmp_path: Path) -> None:
    for host in ("0.0.0.0", "192.0.2.7", "::"):
        with pytest.raises(UiAccessError, match="--allow-remote"):
            check_bind(host, allow_remote=False)
    assert check_bind("127.0.0.1", False) is None and check_bind("::1", False) is None
    with pytest.raises(UiAccessError, match="at least 16"):
        check_bind("0.0.0.0", True, "short")


def test_a_remote_view_needs_its_token(tmp_path: Path) -> None:
    token = "t" * 24
    with running_view(tmp_path, host="0.0.0.0", allow_remote=True, token=token) as view:
        url = f"http://127.0.0.1:{view.server.port}/"
        assert view.server.url.endswith(f"?token={token}")
        with httpx.Client(timeout=30) as http:
            assert http.get(url).status_code == 401
            assert http.get(url, headers={"Authorization": "Bearer wrong"}).status_code == 401
            assert http.get(url, headers={"Authorization": f"Bearer {token}"}).status_code == 200
            login = http.get(f"{url}status?token={token}")
            assert login.status_code == 303 and login.headers["location"] == "/status"
            assert "HttpOnly" in login.headers["set-cookie"]
            assert http.get(f"{url}status").status_code == 200  # the cookie now
