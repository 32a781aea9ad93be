"""What the server does, counted: Prometheus metrics, one log line per tool call, recent calls.

:class:`Observer` owns one :class:`prometheus_client.CollectorRegistry` (one per server,
so two servers in one process never share counters) and is installed as an ``mcp`` SDK
server middleware: the SDK calls it around every inbound request, on every transport
(stdio, streamable HTTP, in-process). For ``tools/call`` it reads the tool's name, the
wire result the tool produced (``isError``, ``structuredContent``) and the wall time:

- the call and its latency, by tool and outcome;
- for ``recall``: hits returned, empty and degraded answers, each arm's search time and
  the query's embedding time, all read from the answer's own ``timings_ms`` and
  ``arms_unavailable`` (the engine's query path has nothing to add);
- for ``remember``, ``forget`` and ``ingest``: what was written, by tool and kind;
- one log line (logger ``octomem.calls``), the call in a small in-memory ring for the
  browser view (:meth:`Observer.recent`, :meth:`Observer.latency`), and the call handed
  to the opt-in call log (:mod:`.calllog`) when one is on.

The metric names are listed in ``docs/observability.md``; the middleware's own cost per
call is measured by ``python -m octomem.benchmarks.observability_overhead``.
"""

from __future__ import annotations

import logging
import math
import platform
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Histogram, Info
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from octomem.engine.errors import OctomemError

log = logging.getLogger("octomem.calls")
#: The running ``tools/call``'s verdict, set by the middleware before the tool runs: a
#: one-item list the argument check (:func:`refuse`) marks when the request is refused.
#: A list, not a value: the SDK may run the tool in a copied context, which shares it.
_VERDICT: ContextVar[list[str] | None] = ContextVar("octomem_call_verdict", default=None)


def refuse() -> None:
    """Count the running tool call as ``invalid`` (an argument was refused: an unknown
    argument, a value of the wrong type, out of range, empty or malformed), not as a tool
    ``error``."""
    verdict = _VERDICT.get()
    if verdict is not None:
        verdict[:] = ["invalid"]

#: Latency buckets of tool calls, arm searches and embeddings (seconds): 1 ms to 10 s,
#: roughly x2.5 apart, so a p50 of a few ms and a cold-model wait both land in a bucket.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                   10.0, math.inf)
#: Buckets of hits per recall answer (``top_k`` is 1..1000, default 10).
HITS_BUCKETS = (0, 1, 2, 3, 5, 10, 20, 50, 100, 1000, math.inf)
#: Recent calls kept in memory for the browser view's chart (oldest dropped first).
RECENT_CALLS = 1000
#: Distinct statement kinds given their own ``kind`` label; later ones count as ``OTHER``
#: (kinds are free words an agent picks: a bound keeps the number of series bounded).
MAX_KIND_LABELS = 50
#: Outcomes of a tool call: the tool answered; it answered with a tool error about what
#: it met (an unknown id, several matches, a file); the caller got an argument wrong (an
#: unknown tool or argument, a wrong type, a value refused: :func:`refuse`); the caller
#: cancelled it.
OUTCOMES = ("ok", "error", "invalid", "cancelled")


@dataclass(frozen=True, slots=True)
class CallSample:
    """One finished tool call.

    :param at: when it finished, seconds since the Unix epoch (UTC).
    :param tool: the tool's name (``unknown`` for a name the server does not have).
    :param outcome: one of :data:`OUTCOMES`.
    :param latency_ms: wall time inside the server, from the request's arrival at the SDK's
        middleware to the tool's answer, milliseconds.
    :param hits: hits returned (``recall`` only; ``None`` otherwise).
    :param arguments: the tool's arguments as sent (never stored or logged as such: the call
        log keeps only :func:`~.calllog.summarise`'s allowlisted summary).
    :param result: the ``structuredContent`` the tool answered with (empty on error).
    """

    at: float
    tool: str
    outcome: str
    latency_ms: float
    hits: int | None
    arguments: Mapping[str, Any]
    result: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolLatency:
    """One tool's latency histogram and calls, as the browser view charts them.

    :param tool: the tool's name.
    :param buckets: ``(upper bound in seconds, calls at or under it)``, cumulative, in
        increasing order, the last bound ``inf`` (Prometheus ``le`` buckets).
    :param count: calls observed (every outcome).
    :param sum_seconds: their total latency, seconds.
    :param outcomes: calls by outcome (:data:`OUTCOMES`).
    """

    tool: str
    buckets: list[tuple[float, float]]
    count: float
    sum_seconds: float
    outcomes: dict[str, float]


class CallSink(Protocol):
    """Receives each finished call (the opt-in call log); must not block."""

    def put(self, sample: CallSample) -> None:
        """Queue ``sample``; never raise, never wait."""


class Observer:
    """The server's metrics, call log line and recent-call ring.

    :param tools: the server's tool names: their series exist from the start, at 0.
    :param version: the octomem version, for ``octomem_build_info``.

    Two attributes connect it to a server (:func:`~.server.create_server` sets them):
    :attr:`scope_status` returns the open memory's :meth:`Memory.status
    <octomem.engine.memory.facade.Memory.status>` (or ``None`` while it is not open), read
    at each scrape for the table counts and pending vectors; :attr:`sink` receives each
    finished call (the opt-in call log), or is ``None``.
    """

    def __init__(self, tools: Iterable[str], version: str) -> None:
        self.tools = frozenset(tools)
        self.scope_status: Callable[[], dict[str, Any] | None] = lambda: None
        self.sink: CallSink | None = None
        self.registry = CollectorRegistry()
        self._recent: deque[CallSample] = deque(maxlen=RECENT_CALLS)
        self._kinds: set[str] = set()
        reg = self.registry
        Info("octomem_build", "octomem version and Python version", registry=reg).info(
            {"version": version, "python": platform.python_version()})
        self.calls = Counter("octomem_tool_calls", "MCP tool calls, by tool and outcome",
                             ["tool", "outcome"], registry=reg)
        self.latency = Histogram("octomem_tool_call_duration_seconds",
                                 "wall time of a tool call inside the server, by tool",
                                 ["tool"], buckets=LATENCY_BUCKETS, registry=reg)
        self.arm_latency = Histogram("octomem_recall_arm_duration_seconds",
                                     "one arm's search time in a recall, by arm and scope",
                                     ["arm", "scope"], buckets=LATENCY_BUCKETS, registry=reg)
        self.embed_latency = Histogram("octomem_embedding_duration_seconds",
                                       "time to embed a recall's query", ["op"],
                                       buckets=LATENCY_BUCKETS, registry=reg)
        self.hits = Histogram("octomem_recall_hits", "hits returned per recall answer",
                              buckets=HITS_BUCKETS, registry=reg)
        self.empty = Counter("octomem_recall_empty", "recall answers without any hit",
                             registry=reg)
        self.degraded = Counter("octomem_recall_degraded",
                                "recall answers an arm could not take part in, by arm",
                                ["arm"], registry=reg)
        self.writes = Counter("octomem_writes", "items written: statements remembered or "
                              "forgotten, documents ingested; by tool and kind",
                              ["tool", "kind"], registry=reg)
        reg.register(ScopeCollector(lambda: self.scope_status()))
        for tool in sorted(self.tools):  # every series exists from the start, at 0
            self.latency.labels(tool)
            for outcome in OUTCOMES:
                self.calls.labels(tool, outcome)

    # ---- the SDK middleware -----------------------------------------------------------

    async def __call__(self, ctx: Any, call_next: Callable[[Any], Any]) -> Any:
        """Time ``tools/call`` requests and record them; pass everything else through
        (an ``mcp`` :class:`~mcp.server.context.ServerMiddleware`)."""
        if ctx.method != "tools/call":
            return await call_next(ctx)
        start = time.perf_counter()
        outcome, result = "invalid", None
        verdict: list[str] = []
        token = _VERDICT.set(verdict)
        try:
            result = await call_next(ctx)
            outcome = "error" if isinstance(result, dict) and result.get("isError") else "ok"
            outcome = verdict[0] if verdict else outcome
            return result
        except BaseException as exc:
            if not isinstance(exc, Exception):
                outcome = "cancelled"
            raise
        finally:
            _VERDICT.reset(token)
            seconds = time.perf_counter() - start
            params = ctx.params if isinstance(ctx.params, Mapping) else {}
            try:
                self.record(params.get("name"), outcome, seconds, params.get("arguments"),
                            result)
            except Exception:  # counting never fails a call: the answer goes out regardless
                logging.getLogger(__name__).exception("a tool call could not be recorded")

    def record(self, name: Any, outcome: str, seconds: float, arguments: Any,
               result: Any) -> CallSample:
        """Count one finished tool call, log it, keep it; return what was kept.

        :param name: the tool name as requested.
        :param outcome: one of :data:`OUTCOMES` (a tool the server does not have is
            counted ``invalid``, under the tool label ``unknown``).
        :param seconds: its wall time in the server, seconds.
        :param arguments: the request's ``arguments`` (any JSON value).
        :param result: the wire result (a dict with ``structuredContent``), or ``None``.
        """
        tool = self._tool(name)
        if tool == "unknown" and outcome in ("ok", "error"):
            outcome = "invalid"
        content = result.get("structuredContent") if isinstance(result, dict) else None
        content = content if isinstance(content, dict) and outcome == "ok" else {}
        hits = self._recall(content) if tool == "recall" and outcome == "ok" else None
        if outcome == "ok" and tool in ("remember", "forget", "ingest"):
            self._writes(tool, content)
        self.calls.labels(tool, outcome).inc()
        self.latency.labels(tool).observe(seconds)
        sample = CallSample(time.time(), tool, outcome, round(seconds * 1e3, 3), hits,
                            arguments if isinstance(arguments, Mapping) else {}, content)
        self._recent.append(sample)
        log.info("%s %s %.1f ms%s", tool, outcome, sample.latency_ms,
                 "" if hits is None else f" {hits} hit{'' if hits == 1 else 's'}",
                 extra={"tool": tool, "outcome": outcome, "latency_ms": sample.latency_ms,
                        "hits": hits})
        if self.sink is not None:
            self.sink.put(sample)
        return sample

    def _recall(self, content: Mapping[str, Any]) -> int:
        hits = content.get("hits")
        count = len(hits) if isinstance(hits, list) else 0
        self.hits.observe(count)
        if count == 0:
            self.empty.inc()
        for key, ms in (content.get("timings_ms") or {}).items():
            if not isinstance(ms, int | float):
                continue
            if key == "embed_query":
                self.embed_latency.labels("query").observe(ms / 1e3)
            elif key.endswith(")") and " (" in key:  # "fts5 (local)"
                arm, _, scope = key[:-1].partition(" (")
                self.arm_latency.labels(arm, scope).observe(ms / 1e3)
        for arm in {key.partition(" (")[0] for key in content.get("arms_unavailable") or {}}:
            self.degraded.labels(arm).inc()
        return count

    def _writes(self, tool: str, content: Mapping[str, Any]) -> None:
        if tool == "remember":
            self.writes.labels(tool, self._kind(content.get("kind"))).inc()
        elif tool == "forget" and isinstance(content.get("forgotten"), dict):
            self.writes.labels(tool, self._kind(content["forgotten"].get("kind"))).inc()
        elif tool == "ingest":
            written = len(content.get("added") or ()) + len(content.get("revised") or ())
            if written:
                self.writes.labels(tool, "DOC").inc(written)

    def _tool(self, name: Any) -> str:
        """The ``tool`` label: the name of one of the server's tools, else ``unknown`` (one
        series for every name a client makes up, so they cannot grow the label set)."""
        return str(name) if name in self.tools else "unknown"

    def _kind(self, kind: Any) -> str:
        kind = kind if isinstance(kind, str) and kind else "ITEM"
        if kind not in self._kinds:
            if len(self._kinds) >= MAX_KIND_LABELS:
                return "OTHER"
            self._kinds.add(kind)
        return kind

    # ---- the in-process API (the browser view's chart) ------------------------------

    def recent(self, tool: str | None = None, limit: int = 200) -> list[CallSample]:
        """Return the last ``limit`` finished calls (of ``tool``, or all), oldest first.

        At most :data:`RECENT_CALLS` are kept; this process's calls only.
        """
        picked = [s for s in self._recent if tool is None or s.tool == tool]
        return picked[-limit:] if limit > 0 else []

    def latency_of(self, tool: str = "recall") -> ToolLatency:
        """Return ``tool``'s latency histogram and its calls by outcome, since start-up.

        :raises KeyError: ``tool`` is not one of the server's tools.
        """
        if tool not in self.tools:
            raise KeyError(f"no tool {tool!r}; tools: {', '.join(sorted(self.tools))}")
        buckets: list[tuple[float, float]] = []
        count = total = 0.0
        for sample in _samples(self.latency, tool):
            if sample.name.endswith("_bucket"):
                buckets.append((float(sample.labels["le"]), sample.value))
            elif sample.name.endswith("_count"):
                count = sample.value
            elif sample.name.endswith("_sum"):
                total = sample.value
        outcomes = {s.labels["outcome"]: s.value for s in _samples(self.calls, tool)
                    if s.name.endswith("_total")}
        return ToolLatency(tool, buckets, count, total, outcomes)


class ScopeCollector(Collector):
    """Table counts and pending vectors of each open scope, read at scrape time.

    :param scope_status: returns :meth:`Memory.status <octomem.engine.memory.Memory.status>`
        or ``None`` while the memory is not open (then nothing is reported).
    """

    #: status key -> (metric name, help)
    GAUGES = {
        "documents": ("octomem_documents", "documents stored in a scope"),
        "chunks": ("octomem_chunks", "chunks (indexed passages) stored in a scope"),
        "current": ("octomem_documents_current", "documents that are current"),
        "superseded": ("octomem_documents_superseded", "documents kept as history"),
        "forgotten": ("octomem_forgotten", "entries in a scope's forget log"),
        "chunks_without_vector": ("octomem_pending_vectors",
                                  "chunks not embedded yet (found by their words only)"),
        "size_bytes": ("octomem_storage_bytes", "a scope's storage size on disk, bytes"),
    }

    def __init__(self, scope_status: Callable[[], dict[str, Any] | None]) -> None:
        self._status = scope_status

    def describe(self) -> list[GaugeMetricFamily]:
        """Name the metrics without reading the memory (registration calls this)."""
        return [GaugeMetricFamily(name, text, labels=["scope"])
                for name, text in self.GAUGES.values()]

    def collect(self) -> Iterable[GaugeMetricFamily]:
        """Read each open scope's counts now."""
        try:
            status = self._status()
        except OctomemError as exc:  # e.g. the storage's server is down: its one line
            logging.getLogger(__name__).warning("scope counts could not be read: %s",
                                                " ".join(str(exc).split()))
            status = None
        except Exception:  # a scrape never fails because the memory could not answer
            logging.getLogger(__name__).exception("scope counts could not be read")
            status = None
        families = {key: GaugeMetricFamily(name, text, labels=["scope"])
                    for key, (name, text) in self.GAUGES.items()}
        for scope, info in ((status or {}).get("scopes") or {}).items():
            if not info.get("exists"):
                continue
            for key, family in families.items():
                if isinstance(info.get(key), int | float):
                    family.add_metric([scope], float(info[key]))
        return list(families.values())


def _samples(metric: Any, tool: str) -> list[Any]:
    return [s for family in metric.collect() for s in family.samples
            if s.labels.get("tool") == tool]
