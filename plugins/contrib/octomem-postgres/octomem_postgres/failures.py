"""What the ``postgres`` storage says when the server fails it: one line naming the setting.

A server that stops or restarts under a running storage ends each open connection with
``psycopg.errors.AdminShutdown`` (or a dropped socket) on its next statement; a write that
waits for the scope's lock past ``lock_timeout_ms`` gets ``LockNotAvailable``. Both are
:class:`psycopg.OperationalError`, which escaped as unexpected exceptions: a bare "Error
executing tool remember" over MCP, a 500 in the browser view, a traceback on each metrics
scrape (trial 12). :func:`cursor_class` makes the connection's cursors turn them into
:func:`failure`'s error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from octomem.engine.errors import OctomemError, StoreBusyError, StoreUnavailableError

if TYPE_CHECKING:
    import psycopg

#: ``on_error(exc, connection)`` returns the error to raise instead of ``exc``.
OnError = Callable[["psycopg.OperationalError", "psycopg.Connection"], OctomemError]


def display_uri(uri: str) -> str:
    """Return ``uri`` without its password, for messages."""
    import psycopg

    try:
        params = psycopg.conninfo.conninfo_to_dict(uri)
    except psycopg.ProgrammingError:
        return "<unparsable URI>"
    params.pop("password", None)
    host, port = params.get("host", "localhost"), params.get("port", "5432")
    return f"{params.get('user', '')}@{host}:{port}/{params.get('dbname', '')}".lstrip("@")


def reason(exc: Exception) -> str:
    """The first line of a psycopg error (its primary message, without DETAIL/HINT lines)."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def failure(exc: psycopg.OperationalError, uri: str, schema: str, lock_timeout_ms: int,
            closed: bool) -> OctomemError:
    """Return the one-line error for ``exc``.

    :param uri: the setting ``arms.postgres.uri`` (shown without its password).
    :param schema: the scope's schema, named for a lock wait.
    :param lock_timeout_ms: the setting ``arms.postgres.lock_timeout_ms``.
    :param closed: the connection ``exc`` came from is closed (the server went away).
    :returns: :class:`StoreBusyError` for a lock wait past ``lock_timeout_ms``, else
        :class:`StoreUnavailableError` naming ``arms.postgres.uri``.
    """
    import psycopg

    where = display_uri(uri)
    if isinstance(exc, psycopg.errors.LockNotAvailable):
        return StoreBusyError(
            f"PostgreSQL at {where}: another writer held the {schema} scope's write lock for "
            f"longer than {lock_timeout_ms} ms (setting arms.postgres.lock_timeout_ms); "
            "nothing of this write was stored, try again")
    if closed:
        return StoreUnavailableError(
            f"the PostgreSQL server at {where} closed the connection (setting "
            f"arms.postgres.uri): {reason(exc)}; the next call connects again")
    return StoreUnavailableError(f"PostgreSQL at {where} (setting arms.postgres.uri): "
                                 f"{reason(exc)}")


def cursor_class(on_error: OnError) -> type:
    """Return a :class:`psycopg.Cursor` whose ``execute`` and ``executemany`` raise
    ``on_error(exc, connection)`` instead of a :class:`psycopg.OperationalError` ``exc``
    (chained ``from`` it); for a connection's ``cursor_factory``."""
    import psycopg

    class StorageCursor(psycopg.Cursor):  # type: ignore[type-arg]
        def execute(self, *args: Any, **kwargs: Any) -> Any:
            try:
                return super().execute(*args, **kwargs)
            except psycopg.OperationalError as exc:
                raise on_error(exc, self.connection) from exc

        def executemany(self, *args: Any, **kwargs: Any) -> None:
            try:
                super().executemany(*args, **kwargs)
            except psycopg.OperationalError as exc:
                raise on_error(exc, self.connection) from exc

    return StorageCursor
