"""The status page's small chart: recall latency per call and calls per minute, as SVG.

The calls come from the MCP server's own record of finished tool calls when the view
runs inside ``octomem serve --ui-port`` (the observer's in-process ring, read only when
the page is drawn: nothing is added to a call's path), else from the searches made in
this view (:class:`CallRecord`).
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

#: Calls a :class:`CallRecord` keeps (oldest dropped first).
KEPT_CALLS = 500
#: Minutes shown in the calls-per-minute bars.
MINUTES = 30
#: The chart's size in CSS pixels, and the height of each of its two panels.
WIDTH, PANEL = 640, 110


@dataclass(frozen=True, slots=True)
class Call:
    """One finished call: when (epoch s), which tool, its wall time (ms)."""

    at: float
    tool: str
    latency_ms: float


class CallRecord:
    """A bounded, thread-safe record of calls (the view's own searches)."""

    def __init__(self, keep: int = KEPT_CALLS) -> None:
        self._calls: deque[Call] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def add(self, tool: str, latency_ms: float) -> None:
        """Record one call that finished now."""
        with self._lock:
            self._calls.append(Call(time.time(), tool, latency_ms))

    def calls(self) -> list[Call]:
        """Return the kept calls, oldest first."""
        with self._lock:
            return list(self._calls)


CallSource = Callable[[], Sequence[Call]]


def observer_calls(observer: object) -> CallSource | None:
    """Return a reader of an MCP observer's recent calls, or ``None`` if it has none.

    :param observer: an object with ``recent(tool=None, limit=...)`` returning samples
        with ``at``, ``tool`` and ``latency_ms`` (the server's metrics observer).
    """
    recent = getattr(observer, "recent", None)
    if not callable(recent):
        return None

    def read() -> list[Call]:
        return [Call(float(s.at), str(s.tool), float(s.latency_ms))
                for s in recent(None, KEPT_CALLS)]
    return read


def percentile(values: Sequence[float], q: float) -> float:
    """Return the ``q`` quantile (0..1) by the nearest-rank method; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q * len(ordered)))) - 1]


def _axis_label(x: float, y: float, text: str, anchor: str = "start") -> str:
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="11" text-anchor="{anchor}" '
            f'fill="#555">{escape(text)}</text>')


def _latency_panel(recalls: Sequence[Call], top: float) -> list[str]:
    """Dots of recall latency, one per call, oldest left; a dashed p50 line."""
    out = [_axis_label(4, top + 12, "recall latency per call (ms)")]
    if not recalls:
        return [*out, _axis_label(WIDTH / 2, top + PANEL / 2, "no recall yet", "middle")]
    highest = max(c.latency_ms for c in recalls) or 1.0
    step = (WIDTH - 60) / max(1, len(recalls) - 1)
    base = top + PANEL - 6
    scale = (PANEL - 24) / highest
    points = " ".join(f"{50 + i * step:.1f},{base - c.latency_ms * scale:.1f}"
                      for i, c in enumerate(recalls))
    p50 = percentile([c.latency_ms for c in recalls], 0.5)
    out += [
        f'<polyline points="{points}" fill="none" stroke="#2b6cb0" stroke-width="1.5"/>',
        f'<line x1="50" x2="{WIDTH - 10}" y1="{base - p50 * scale:.1f}" '
        f'y2="{base - p50 * scale:.1f}" stroke="#c05621" stroke-dasharray="4 3"/>',
        _axis_label(46, top + 22, f"{highest:.1f}", "end"), _axis_label(46, base, "0", "end"),
        _axis_label(WIDTH - 10, base - p50 * scale - 4, f"p50 {p50:.1f} ms", "end"),
    ]
    return out


def _calls_panel(calls: Sequence[Call], top: float, now: float) -> list[str]:
    """Bars of calls (every tool) per minute over the last :data:`MINUTES` minutes."""
    per_minute = [0] * MINUTES
    for call in calls:
        age = int((now - call.at) // 60)
        if 0 <= age < MINUTES:
            per_minute[MINUTES - 1 - age] += 1
    highest = max(per_minute) or 1
    width = (WIDTH - 60) / MINUTES
    base = top + PANEL - 6
    out = [_axis_label(4, top + 12, f"calls per minute, last {MINUTES} min")]
    for i, n in enumerate(per_minute):
        height = (PANEL - 24) * n / highest
        out.append(f'<rect x="{50 + i * width:.1f}" y="{base - height:.1f}" '
                   f'width="{width - 2:.1f}" height="{height:.1f}" fill="#48bb78">'
                   f'<title>{n} call{"" if n == 1 else "s"}</title></rect>')
    out += [_axis_label(46, top + 22, str(highest), "end"), _axis_label(46, base, "0", "end")]
    return out


def render_chart(calls: Sequence[Call], now: float | None = None, what: str = "calls") -> str:
    """Return an inline ``<svg>`` of recall latency per call and calls per minute.

    :param calls: finished calls, oldest first; ``recall`` calls make the latency panel.
    :param what: a few words saying where the calls come from (the chart's title).
    """
    now = time.time() if now is None else now
    recalls = [c for c in calls if c.tool == "recall"]
    height = 2 * PANEL + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{WIDTH}" '
             f'height="{height}" viewBox="0 0 {WIDTH} {height}" role="img" '
             f'aria-label="{escape(what)}"><title>{escape(what)}</title>',
             f'<rect width="{WIDTH}" height="{height}" fill="#fafafa" stroke="#ddd"/>']
    parts += _latency_panel(recalls, 0)
    parts += _calls_panel(calls, PANEL + 10, now)
    return "".join(parts) + "</svg>"
