"""The model loads on a worker thread while the calling thread imports numpy for the arms
(a fresh ``octomem search``): numpy must be wholly imported before onnxruntime's
extension is, or the two threads' imports can deadlock Python's module locks and fail
with ``ImportError: cannot load module more than once per process`` (seen in a fresh
search at 100k chunks, issue 15; reproduced in 2 of 16 fresh processes importing
onnxruntime on a thread and numpy on the main thread 3-5 ms later).

Checked in a fresh interpreter (this one has numpy already): a meta-path hook records,
when onnxruntime's extension module is looked up, whether numpy is in ``sys.modules``
and done initialising.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

PROBE = """
import json, sys, threading
seen = []
class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "onnxruntime.capi.onnxruntime_pybind11_state":
            numpy = sys.modules.get("numpy")
            spec = getattr(numpy, "__spec__", None)
            seen.append(numpy is not None and not getattr(spec, "_initializing", False))
        return None
sys.meta_path.insert(0, Watch())
from octomem.plugins.fastembed.embedder import FastembedEmbedder, FastembedOptions
before = "numpy" in sys.modules
embedder = FastembedEmbedder(FastembedOptions())
worker = threading.Thread(target=embedder.load)
worker.start()
worker.join()
print(json.dumps({"numpy_before": before, "seen": seen, "loaded": embedder.loaded}))
"""


@pytest.mark.slow
def test_numpy_is_imported_before_onnxruntime_extension_on_the_loading_thread() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=300, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["numpy_before"] is False  # building the embedder does not import it
    assert report["loaded"] is True
    assert report["seen"] == [True]  # looked up once, numpy whole by then
