"""onnxruntime's telemetry off, before onnxruntime is imported.

onnxruntime (1.32 on Linux) starts Microsoft's 1DS telemetry when it is *imported*: it
writes a device id and an event queue (``onnxruntime.db``) under
``~/.cache/Microsoft/DeveloperTools/.onnxruntime/`` and a long-running process looks up
the collector's host (``mobile.events.data.microsoft.com``). Its Python switch,
``onnxruntime.disable_telemetry_events()``, comes too late for that (the queue is already
written, as measured); the environment variable ``ORT_DISABLE_TELEMETRY=1``, read at
import, stops all of it. So this package sets it before anything imports onnxruntime, and
calls the Python switch too when onnxruntime was imported by someone else first.
huggingface_hub's telemetry (sent only with downloads) is turned off the same way.
"""

from __future__ import annotations

import os
import sys

#: The variables set: onnxruntime's (read when it is imported) and huggingface_hub's.
TELEMETRY_OFF = {"ORT_DISABLE_TELEMETRY": "1", "HF_HUB_DISABLE_TELEMETRY": "1"}


def disable_telemetry() -> bool:
    """Turn onnxruntime's and huggingface_hub's telemetry off for this process.

    :returns: True when onnxruntime was not imported yet (nothing was ever queued);
        False when it was, in which case only its Python switch could be turned.
    """
    os.environ.update(TELEMETRY_OFF)
    ort = sys.modules.get("onnxruntime")
    if ort is None:
        return True
    switch = getattr(ort, "disable_telemetry_events", None)
    if callable(switch):
        switch()
    return False
