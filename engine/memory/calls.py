"""The opt-in call log over both scopes: where a call is logged, and reading it back.

A call is logged in the scope it addressed: the scope it named (``scope`` argument), else
the scope its result names (where ``remember`` or ``ingest`` wrote), else the local scope
when the project has one, else the global scope (:func:`call_scope`). Each scope's
storage keeps its own log if it can (:class:`~octomem.engine.arms.CallLogStorage`; the
``sqlite`` storage does, in the scope's own file).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..arms import CallLogStorage
from ..types import CallRecord
from .facade import Memory
from .scopes import SCOPES, ScopeName


def call_scope(memory: Memory, named: object, result_scope: object) -> ScopeName:
    """Return the scope a call is logged in (see the module docstring).

    :param named: the call's ``scope`` argument (anything; only ``local``/``global`` count).
    :param result_scope: the scope its result names, if any.
    """
    for scope in (named, result_scope):
        if scope in SCOPES and (scope == "global" or memory.scopes.exists("local")):
            return scope  # type: ignore[return-value]
    return "local" if memory.scopes.exists("local") else "global"


def append_calls(memory: Memory, scope: ScopeName, records: Sequence[CallRecord]) -> bool:
    """Append ``records`` to ``scope``'s call log in one transaction.

    :returns: False (nothing written) when the scope's storage keeps no call log.
    :raises OctomemError: the scope cannot be opened or written.
    """
    storage = memory.scopes.require(scope, create=True).arms.storage  # the log is a write
    if not isinstance(storage, CallLogStorage):
        return False
    with storage.transaction() as tx:
        storage.append_calls(tx, records)
    return True


def recent_calls(memory: Memory, limit: int = 20,
                 scopes: Sequence[ScopeName] = SCOPES) -> list[tuple[ScopeName, CallRecord]]:
    """Return the last ``limit`` logged calls of ``scopes`` (those that exist and keep a
    log), merged by time, oldest first."""
    merged: list[tuple[ScopeName, CallRecord]] = []
    for scope, pipeline in memory.scopes.existing(tuple(scopes)):
        storage = pipeline.arms.storage
        if isinstance(storage, CallLogStorage):
            merged.extend((scope, record) for record in storage.recent_calls(limit))
    merged.sort(key=lambda pair: pair[1].at)
    return merged[-limit:] if limit > 0 else []


def keeps_call_log(memory: Memory) -> Mapping[ScopeName, bool]:
    """Return, per existing scope, whether its storage keeps a call log."""
    return {scope: isinstance(p.arms.storage, CallLogStorage)
            for scope, p in memory.scopes.existing()}
