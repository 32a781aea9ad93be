"""``octomem log tail`` (the opt-in call log) and ``octomem metrics`` (a running server's).

``log tail`` reads the call log both scopes keep when the server ran with setting
``call_log`` on; ``metrics`` reads ``GET /metrics`` from a server started with
``serve --metrics-addr`` and summarises it: calls per tool with latency quantiles
estimated from the histograms, recall hits, empty and degraded answers, arm latencies,
writes, and each scope's counts (``--raw`` prints the Prometheus text as served).
"""

from __future__ import annotations

import json
import math
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich import box
from rich.markup import escape
from rich.table import Table

from ..errors import OctomemError, UsageValueError
from .commands import _memory, console
from .layout import emit, packed
from .lazy import registry
from .options import Command, Group, JsonLinesOpt, LogScopeOpt
from .usage import bounded

if TYPE_CHECKING:  # the memory is imported by the command that reads it: --help stays light
    from ..types import CallRecord

#: Where ``octomem metrics`` looks by default (``serve --metrics-addr``'s documented port).
DEFAULT_METRICS_ADDR = "127.0.0.1:9469"
#: Seconds ``octomem metrics`` waits for the server's answer.
SCRAPE_TIMEOUT_S = 10.0
#: A width no table reaches: the call table is measured at it for its natural width.
_UNBOUNDED = 100_000

log_app = typer.Typer(help="The opt-in MCP call log (setting `call_log`, `OCTOMEM_CALL_LOG=1`).",
                      no_args_is_help=True, cls=Group)
registry.add_typer(log_app, name="log")


@log_app.command("tail", cls=Command)
def tail(
    lines: Annotated[int, typer.Option(
        "--lines", "-n", callback=bounded("--lines", 1, 20_000),
        help="How many calls, the most recent (1 to 20,000).")] = 20,
    scope: LogScopeOpt = None,
    as_json: JsonLinesOpt = False,
) -> None:
    """Print the last calls the MCP server logged (both scopes, by time): tool, outcome,
    latency, hits, the arguments' summary and the ids returned (never a text). `--json`:
    one JSON object per line."""
    from ..memory.calls import keeps_call_log, recent_calls
    from ..memory.scopes import SCOPES, check_scope

    chosen = check_scope(scope)
    memory = _memory()
    try:
        calls = recent_calls(memory, lines, (chosen,) if chosen else SCOPES)
        keeps = [k for s, k in keeps_call_log(memory).items() if chosen in (None, s)]
        storage = memory.settings.pipeline.storage
    finally:
        memory.close()
    if as_json:
        for scope_name, record in calls:
            typer.echo(json.dumps(call_json(scope_name, record), ensure_ascii=False))
        return
    if not calls:
        console.print(no_calls(keeps, storage))
        return
    print_calls(calls)


def no_calls(keeps: Sequence[bool], storage: str) -> str:
    """Return why ``log tail`` found no calls: the scopes' storage keeps no call log (all
    of ``keeps``, per existing scope, false), else the log is off or empty."""
    if keeps and not any(keeps):
        return (f"no calls logged: the {storage} storage keeps no call log (the sqlite "
                "storage does; docs/observability.md)")
    return ("no calls logged: the call log is off unless the server runs with "
            "OCTOMEM_CALL_LOG=1 (setting call_log)")


def print_calls(calls: Sequence[tuple[str, CallRecord]]) -> None:
    """Print logged calls as a table when it fits the console's width, else one entry per
    call (:func:`call_lines`): a table cell too narrow for its text would wrap inside a
    time or an argument."""
    table = calls_table(calls)
    unbounded = console.options.update_width(_UNBOUNDED)  # a measure is cut to its width
    if console.measure(table, options=unbounded).maximum <= console.width:
        console.print(table)
    else:
        emit(console, call_lines(calls, console.width))


def call_json(scope: str, record: CallRecord) -> dict[str, Any]:
    """Return one logged call as a JSON object (``at`` as ISO-8601 UTC)."""
    return {"at": _iso(record.at), "scope": scope, "tool": record.tool,
            "outcome": record.outcome, "latency_ms": record.latency_ms, "hits": record.hits,
            "arguments": dict(record.arguments), "ids": list(record.ids)}


def calls_table(calls: Sequence[tuple[str, CallRecord]]) -> Table:
    """Return logged calls as a table, oldest first."""
    table = Table(box=box.SIMPLE_HEAD)
    for name, justify in (("time (UTC)", "left"), ("scope", "left"), ("tool", "left"),
                          ("outcome", "left"), ("ms", "right"), ("hits", "right"),
                          ("arguments", "left"), ("ids", "left")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for scope, r in calls:
        table.add_row(_iso(r.at), scope, r.tool, r.outcome, f"{r.latency_ms:.1f}",
                      "" if r.hits is None else str(r.hits), escape(" ".join(_arguments(r))),
                      " ".join(_ids(r)))
    return table


def call_lines(calls: Sequence[tuple[str, CallRecord]], width: int) -> list[str]:
    """Return logged calls, oldest first, as plain lines for a console narrower than the
    table: per call ``TIME  SCOPE  TOOL  OUTCOME  MS ms[  N hits]``, then its arguments
    and ids indented, broken into lines of ``width`` columns only between two of them."""
    lines: list[str] = []
    for scope, r in calls:
        hits = "" if r.hits is None else f"  {r.hits} hit{'' if r.hits == 1 else 's'}"
        lines.append(f"{_iso(r.at)}  {scope}  {r.tool}  {r.outcome}  "
                     f"{r.latency_ms:.1f} ms{hits}")
        for label, words in (("arguments:", _arguments(r)), ("ids:", _ids(r))):
            if words:
                lines += packed(f"  {label} ", words, width, indent="    ", sep="")
    return lines


def _arguments(record: CallRecord) -> list[str]:
    """``name=value`` per argument, the value as compact JSON (no space inside)."""
    return [f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}"
            for k, v in record.arguments.items()]


def _ids(record: CallRecord) -> list[str]:
    """The first three ids' first 8 characters (``...`` when there are more)."""
    return [i[:8] for i in record.ids[:3]] + (["..."] if len(record.ids) > 3 else [])


def _iso(at: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(at)) + f".{int(at % 1 * 1000):03d}Z"


@registry.command(cls=Command)
def metrics(
    addr: Annotated[str, typer.Option(
        "--addr", metavar="HOST:PORT", help="The server's `--metrics-addr`.")
    ] = DEFAULT_METRICS_ADDR,
    raw: Annotated[bool, typer.Option(
        "--raw", help="Print the Prometheus text as served.")] = False,
) -> None:
    """Print a running server's metrics (`octomem serve --metrics-addr HOST:PORT`): calls
    per tool with p50/p95 latency, recall hits, empty and degraded answers, arm latency,
    writes, and each scope's counts."""
    text = scrape(checked_addr(addr))
    if raw:
        console.print(text, end="", markup=False, highlight=False)
        return
    for table in summary_tables(text):
        console.print(table)


def checked_addr(addr: str) -> str:
    """Return ``addr`` if it reads as ``HOST:PORT`` (port 1 to 65535; ``[::1]:9469`` too).

    :raises UsageValueError: naming ``--addr`` (a usage error, status 2, as ``serve
        --metrics-addr``'s).
    """
    host, sep, port = addr.rpartition(":")
    if not sep or not host or not (port.isascii() and port.isdigit()) \
            or not 0 < int(port) < 65536:
        raise UsageValueError(
            f"--addr: expected HOST:PORT (e.g. {DEFAULT_METRICS_ADDR}), got {addr!r}")
    return addr


def scrape(addr: str) -> str:
    """Return ``GET http://ADDR/metrics``'s body.

    :raises OctomemError: nothing answers there, or it answers with an error status.
    """
    import urllib.error
    import urllib.request

    url = f"http://{addr}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=SCRAPE_TIMEOUT_S) as answer:
            return str(answer.read().decode())
    except urllib.error.HTTPError as exc:
        raise OctomemError(f"{url} answered {exc.code} {exc.reason}") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise OctomemError(f"no metrics at {url} ({reason}); start the server with "
                           f"`octomem serve --metrics-addr {addr}`") from exc


def bucket_quantile(buckets: Iterable[tuple[float, float]], q: float) -> float:
    """Estimate the ``q`` quantile (0..1) from cumulative histogram buckets, interpolating
    linearly inside the bucket it falls in (Prometheus' ``histogram_quantile``); a value in
    the ``+Inf`` bucket is reported as the highest finite bound.

    :param buckets: ``(upper bound, cumulative count)``, any order.
    :returns: the estimate in the buckets' unit; ``nan`` when nothing was observed.
    """
    ordered = sorted(buckets)
    if not ordered or ordered[-1][1] <= 0:
        return math.nan
    rank = q * ordered[-1][1]
    lower, below = 0.0, 0.0
    for bound, count in ordered:
        if count >= rank:
            if math.isinf(bound):
                return lower
            share = (rank - below) / (count - below) if count > below else 1.0
            return lower + (bound - lower) * share
        lower, below = bound, count
    return lower


Labels = tuple[tuple[str, str], ...]


def _histograms(text: str) -> tuple[dict[str, dict[Labels, Any]], dict[str, float]]:
    """Split a scrape into histograms (name -> labels without ``le`` -> buckets, count,
    sum) and plain samples (``name{labels}`` -> value)."""
    from prometheus_client.parser import text_string_to_metric_families

    hist: dict[str, dict[Labels, Any]] = defaultdict(dict)
    plain: dict[str, float] = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            labels = tuple(sorted((k, v) for k, v in s.labels.items() if k != "le"))
            if family.type == "histogram":
                entry = hist[family.name].setdefault(labels, {"buckets": [], "count": 0.0,
                                                              "sum": 0.0})
                if s.name.endswith("_bucket"):
                    entry["buckets"].append((float(s.labels["le"]), s.value))
                elif s.name.endswith("_count"):
                    entry["count"] = s.value
                elif s.name.endswith("_sum"):
                    entry["sum"] = s.value
            else:
                plain[s.name + "".join(f"[{v}]" for _, v in labels)] = s.value
    return hist, plain


#: A tool call's outcomes as the server counts them (``mcp_server.observe.OUTCOMES``,
#: not imported: this module loads without the server's libraries), each a column of
#: ``octomem metrics`` (trial 18 H12: ``cancelled`` had none).
CALL_OUTCOMES = ("ok", "error", "invalid", "cancelled")


def summary_tables(text: str) -> list[Table]:
    """Return the ``octomem metrics`` tables for one scrape."""
    hist, plain = _histograms(text)
    calls = Table(title="tool calls", box=box.SIMPLE_HEAD,
                  caption="p50 and p95 are estimated inside latency buckets (as Prometheus' "
                  "histogram_quantile does); one call's are its own time; mean is exact")
    for name in ("tool", *CALL_OUTCOMES, "p50 ms", "p95 ms", "mean ms"):
        calls.add_column(name, justify="left" if name == "tool" else "right")
    for labels, entry in sorted(hist.get("octomem_tool_call_duration_seconds", {}).items()):
        tool = dict(labels)["tool"]
        counts = [plain.get(f"octomem_tool_calls_total[{o}][{tool}]", 0.0)
                  for o in CALL_OUTCOMES]
        calls.add_row(tool, *(f"{c:.0f}" for c in counts), *_latency(entry))
    arms = Table(title="recall: arms and embedding", box=box.SIMPLE_HEAD)
    for name in ("arm", "scope", "searches", "p50 ms", "p95 ms", "mean ms"):
        arms.add_column(name, justify="left" if name in ("arm", "scope") else "right")
    for labels, entry in sorted(hist.get("octomem_recall_arm_duration_seconds", {}).items()):
        arms.add_row(dict(labels)["arm"], dict(labels)["scope"], f"{entry['count']:.0f}",
                     *_latency(entry))
    for labels, entry in sorted(hist.get("octomem_embedding_duration_seconds", {}).items()):
        arms.add_row(f"embed {dict(labels)['op']}", "", f"{entry['count']:.0f}", *_latency(entry))
    hits = hist.get("octomem_recall_hits", {}).get((), {"count": 0.0, "sum": 0.0})
    answers = Table(title="recall answers, writes, scopes", box=box.SIMPLE_HEAD)
    answers.add_column("what")
    answers.add_column("value", justify="right")
    answers.add_row("answers", f"{hits['count']:.0f}")
    answers.add_row("mean hits", f"{hits['sum'] / hits['count']:.1f}" if hits["count"] else "-")
    answers.add_row("empty answers", f"{plain.get('octomem_recall_empty_total', 0.0):.0f}")
    for key, value in sorted(plain.items()):
        for prefix, label in (("octomem_recall_degraded_total", "degraded, arm "),
                              ("octomem_writes_total", "written, "),
                              ("octomem_documents", "documents, "),
                              ("octomem_pending_vectors", "pending vectors, ")):
            if key.startswith(prefix + "[") and value:
                answers.add_row(label + key[len(prefix):].replace("][", " ").strip("[]"),
                                f"{value:.0f}")
    return [calls, arms, answers]


def _latency(entry: dict[str, Any]) -> list[str]:
    """Return one histogram's p50, p95 and mean in ms, as shown: the quantiles estimated
    inside their buckets (:func:`bucket_quantile`), except that one observation is its own
    p50 and p95 (the sum is that one value), and no quantile is shown above the largest
    possible value, the sum."""
    if not entry["count"]:
        return ["-", "-", "-"]
    mean = entry["sum"] / entry["count"]
    if entry["count"] == 1:
        quantiles = [entry["sum"], entry["sum"]]
    else:
        quantiles = [min(bucket_quantile(entry["buckets"], q), entry["sum"]) for q in (0.5, 0.95)]
    return [f"{v * 1e3:.1f}" for v in (*quantiles, mean)]
