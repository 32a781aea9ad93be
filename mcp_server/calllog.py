"""The opt-in call log: each tool call, summarised, in the scope's own storage.

With setting ``call_log`` on (``OCTOMEM_CALL_LOG=1``) every finished tool call is kept as
a :class:`~octomem.engine.types.CallRecord` in the storage of the scope it addressed
(:func:`~octomem.engine.memory.calls.call_scope`), if that storage keeps a call log
(:class:`~octomem.engine.arms.CallLogStorage`; the ``sqlite`` storage does, in a
``call_log`` table of the scope's own file). ``octomem log tail`` prints it.

What is kept is a **summary**, never the stored or returned text: the tool, outcome,
latency, hits, and the arguments passed through :data:`ALLOWED` (per tool, the
arguments whose values are kept when they have their argument's form; any other string
argument is kept as its length in characters, ``<name>_chars``, and a list as its
length, ``<name>_count``), an id argument only as the id the call resolved, plus the ids
the result names. Error messages are not kept (they may quote an argument).

Records are written by one background thread (:class:`CallLogWriter`), in one
transaction per batch, under the server's write lock: a tool call only appends to a
queue.
"""

from __future__ import annotations

import logging
import queue
import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from octomem.engine.memory.calls import append_calls, call_scope
from octomem.engine.memory.facade import Memory
from octomem.engine.memory.remember import KIND_INPUT_PATTERN
from octomem.engine.types import CallRecord

from .observe import CallSample

log = logging.getLogger(__name__)

#: Per tool, the arguments whose values the call log may keep (scopes, kinds, numbers,
#: flags, dates, ids: never free text); each is kept only when its value has the form
#: :func:`_keepable` asks for that argument, else as its size.
ALLOWED: dict[str, frozenset[str]] = {
    "recall": frozenset({"scope", "top_k", "kinds", "since", "until", "as_of",
                         "include_superseded", "per", "explain", "context", "max_tokens"}),
    "remember": frozenset({"scope", "kind", "event_time"}),
    "forget": frozenset({"scope"}),
    "ingest": frozenset({"scope"}),
    "status": frozenset(),
}
#: Ids of a result kept per call (the first ones; a recall's hits in rank order).
MAX_IDS = 10
#: Longest the writer waits before writing what has queued (seconds).
FLUSH_S = 0.5
_ID = re.compile(r"^[0-9a-f]{32}$")
_KIND = re.compile(KIND_INPUT_PATTERN)
#: An ISO-8601 date or time: digits and its separators only (no word fits).
_TIME = re.compile(r"^[0-9][0-9:.+\-TZtz ]{0,39}$")
_WORDS = {"scope": frozenset({"local", "global"}), "per": frozenset({"chunk", "document"})}
_TIMES = frozenset({"since", "until", "as_of", "event_time"})
#: Per tool, the argument naming an id, and where the result names the id it resolved.
_RESOLVED = {"forget": ("text_or_id", "forgotten"), "remember": ("supersedes", "superseded")}


def summarise(tool: str, arguments: Mapping[str, Any],
              result: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Return what the call log keeps of ``arguments``: allowlisted values of their
    argument's form as given (a scope or ``per`` among its values, kinds within the kind
    rule, dates of ISO-8601's characters only, numbers, flags), an id argument
    (``forget``'s ``text_or_id``, ``remember``'s ``supersedes``) only as the id the call
    resolved it to (``id``, ``supersedes``); any other string as its length
    (``<name>_chars``), any other list as its length (``<name>_count``); nothing else. No
    text a caller typed is kept, so a forget leaves none behind (trial 21: a hex token
    stored and forgotten by its text was kept as an ``id``).

    :param tool: the tool's name (an unknown tool keeps no values).
    :param arguments: the call's arguments as sent.
    :param result: the tool's structured answer (empty when it failed).
    """
    allowed = ALLOWED.get(tool, frozenset())
    out: dict[str, Any] = {}
    for name, value in arguments.items():
        resolved = _resolved_id(tool, name, value, result or {})
        if resolved is not None:
            out["id" if name == "text_or_id" else name] = resolved
        elif name in allowed and _keepable(name, value):
            out[name] = value
        elif isinstance(value, str):
            out[f"{name}_chars"] = len(value)
        elif isinstance(value, list):
            out[f"{name}_count"] = len(value)
    return out


def _resolved_id(tool: str, name: str, value: Any, result: Mapping[str, Any]) -> str | None:
    """The id ``value`` named, if it is the id the call resolved (the statement forgotten
    or superseded); ``None`` otherwise (a text, or an id that named nothing)."""
    argument, field = _RESOLVED.get(tool, ("", ""))
    named = result.get(field) if name == argument else None
    if not isinstance(value, str) or not isinstance(named, Mapping):
        return None
    candidate = value.strip()
    return candidate if _ID.match(candidate) and named.get("id") == candidate else None


def _keepable(name: str, value: Any) -> bool:
    """Whether ``value`` has the form the allowlisted argument ``name`` takes."""
    if value is None or isinstance(value, bool | int | float):
        return True
    if name in ("kind", "kinds"):
        values = value if isinstance(value, list) else [value]
        return all(isinstance(v, str) and _KIND.match(v) for v in values)
    if not isinstance(value, str):
        return False
    if name in _WORDS:
        return value in _WORDS[name]
    return name in _TIMES and bool(_TIME.match(value))


def result_ids(tool: str, result: Mapping[str, Any]) -> list[str]:
    """Return the ids ``result`` names (stored, forgotten, ingested, or hits), at most
    :data:`MAX_IDS`."""
    if tool == "recall":
        ids = [h.get("id") for h in result.get("hits") or () if isinstance(h, dict)]
    elif tool == "forget":
        ids = [(result.get("forgotten") or {}).get("id")]
    elif tool == "ingest":
        ids = [*(result.get("added") or ()), *(result.get("revised") or ())]
    else:
        ids = [result.get("id")]
    return [i for i in ids if isinstance(i, str)][:MAX_IDS]


def record_of(sample: CallSample) -> CallRecord:
    """Return what the call log keeps of ``sample`` (its summary, never a text)."""
    return CallRecord(sample.at, sample.tool, sample.outcome, sample.latency_ms, sample.hits,
                      summarise(sample.tool, sample.arguments, sample.result),
                      tuple(result_ids(sample.tool, sample.result)))


def _result_scope(sample: CallSample) -> object:
    forgotten = sample.result.get("forgotten")
    return forgotten.get("scope") if isinstance(forgotten, dict) else sample.result.get("scope")


class CallLogWriter:
    """Write finished calls to their scope's call log on one background thread.

    :param memory: returns the open memory (waits for it; raises when it cannot open).
    :param write_lock: the lock the server's writes hold (one writer at a time).
    """

    _STOP = object()

    def __init__(self, memory: Callable[[], Memory], write_lock: threading.Lock) -> None:
        self._memory = memory
        self._write_lock = write_lock
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def put(self, sample: CallSample) -> None:
        """Queue one finished call (never blocks; starts the writer on first use)."""
        self._queue.put(sample)
        if self._thread is None:
            with self._lock:
                if self._thread is None:
                    self._thread = threading.Thread(target=self._run, daemon=True,
                                                    name="octomem-call-log")
                    self._thread.start()

    def close(self, wait_s: float = 5.0) -> None:
        """Write what is queued, then stop the thread (waiting up to ``wait_s`` seconds)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(self._STOP)
            thread.join(wait_s)

    def _run(self) -> None:
        stop = False
        while not stop:
            try:
                item = self._queue.get(timeout=FLUSH_S)
            except queue.Empty:
                continue
            batch: list[CallSample] = []
            while True:
                if item is self._STOP:
                    stop = True
                else:
                    batch.append(item)
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
            if batch:
                self.write(batch)

    def write(self, batch: list[CallSample]) -> None:
        """Write ``batch`` now, one transaction per scope (errors are logged, once each)."""
        try:
            memory = self._memory()
            by_scope: dict[str, list[CallRecord]] = {}
            for sample in batch:
                scope = call_scope(memory, sample.arguments.get("scope"), _result_scope(sample))
                by_scope.setdefault(scope, []).append(record_of(sample))
            for scope, records in by_scope.items():
                with self._write_lock:
                    kept = append_calls(memory, scope, records)  # type: ignore[arg-type]
                if not kept:
                    self._warn(f"the {scope} scope's storage keeps no call log")
        except Exception as exc:  # best effort: a tool call never fails for its log line
            self._warn(f"call log not written: {type(exc).__name__}: {exc}")

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            log.warning("%s", message)
