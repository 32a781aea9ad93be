"""Whether the ``fastembed`` embedder's model would load, found without loading it.

``octomem status`` reports ``semantic_available``. Loading the model to know costs
~0.3-0.5 s of imports (onnxruntime, fastembed, tokenizers, numpy) and the ONNX session;
instead the shipped and local models are checked by what loading needs: the packages
importable (``importlib.util.find_spec``, which imports nothing), the ONNX file and the
tokenizer file present and non-empty, and for the re-quantized shipped model either its
cached copy or the ``onnx`` package that builds it. A file that is present but broken
is only found by loading: a broken cached copy is then built again once
(:func:`.graph.open_rebuilding`), so "available" holds for it; a broken shipped file is
reported by the first search. A hub model is loaded for the
answer: whether it is in the local cache is fastembed's to say.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import TYPE_CHECKING

from octomem.engine.errors import EmbedderUnavailableError

from .loading import find_onnx_file
from .requantize import requantized_path

if TYPE_CHECKING:
    from .embedder import FastembedEmbedder

#: The packages loading any fastembed model imports.
PACKAGES = ("fastembed", "onnxruntime", "tokenizers", "numpy")


def _missing_file(path: Path) -> bool:
    try:
        return not path.is_file() or path.stat().st_size == 0
    except OSError:
        return True


def why_unavailable(embedder: FastembedEmbedder) -> str | None:
    """Return why ``embedder.load()`` would fail, or ``None`` when it should succeed.

    :param embedder: an embedder whose model is not loaded yet.
    :returns: one line naming the missing package or file.
    """
    from .embedder import _bundled_onnx

    what = embedder._describe()
    missing = [name for name in PACKAGES if importlib.util.find_spec(name) is None]
    if missing:
        return f"{what}: not installed: {', '.join(missing)}"
    source = embedder._source
    if source.kind == "hub":
        try:
            embedder.load()
        except EmbedderUnavailableError as exc:
            return str(exc)
        return None
    if source.kind == "bundled":
        try:
            onnx_path, sha = _bundled_onnx()
        except ImportError as exc:
            return f"{what}: the model package is not installed ({exc})"
    else:
        assert source.folder is not None
        try:
            onnx_path = find_onnx_file(source.folder, embedder.options.model_file)
        except (OSError, EmbedderUnavailableError) as exc:
            return f"{what}: {exc}"
    if _missing_file(onnx_path):
        return f"{what}: no ONNX file at {str(onnx_path)!r}"
    assert source.folder is not None
    if _missing_file(source.folder / "tokenizer.json"):
        return f"{what}: no tokenizer.json in {str(source.folder)!r}"
    if (source.kind == "bundled" and embedder.options.requantize
            and importlib.util.find_spec("onnx") is None
            and _missing_file(requantized_path(sha, embedder.options.cache_dir))):
        return (f"{what}: re-quantizing the bundled model needs the onnx package; install "
                "it or set arms.fastembed.requantize=false")
    return None
