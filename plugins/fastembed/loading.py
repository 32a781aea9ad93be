"""Loading ONNX models through fastembed with no surprises: hub probing, files, hashes.

Shared by the ``fastembed`` embedder and the ``cross-encoder`` reranker: whether the
hub may be used (``HF_HUB_OFFLINE``), a bounded probe before fastembed's own retries
(which take ~39 s to fail with no network), finding the ONNX file in a local folder,
content hashes for model identities, and length-sorted batching.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from octomem.engine.errors import EmbedderUnavailableError

if TYPE_CHECKING:
    import numpy as np

HUB_PROBE_TIMEOUT_S = 5.0
_ONNX_CANDIDATES = ("model.onnx", "onnx/model.onnx", "model_optimized.onnx")
_TRUTHY = {"1", "TRUE", "YES", "ON"}
T = TypeVar("T")


def hub_offline() -> bool:
    """Return True when ``HF_HUB_OFFLINE`` forbids hub access."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in _TRUTHY


def probe_hub(repo_id: str, what: str, timeout_s: float = HUB_PROBE_TIMEOUT_S) -> None:
    """Ask the hub about ``repo_id`` once, so an unreachable hub fails in seconds.

    fastembed retries a failed download with sleeps of 3 s and 9 s (~39 s in all); one
    metadata request with a timeout tells the same thing sooner.

    :param timeout_s: request timeout in seconds.
    :raises EmbedderUnavailableError: the hub cannot be reached or has no such repo.
    """
    from huggingface_hub import HfApi

    try:
        HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None).model_info(repo_id, timeout=timeout_s)
    except Exception as exc:  # connection, timeout, 404: all mean "cannot download"
        raise EmbedderUnavailableError(
            f"{what}: not in the local cache and the hub cannot provide {repo_id!r} "
            f"({type(exc).__name__}: {exc}); use a local model_path or the bundled model"
        ) from exc


@contextmanager
def _quiet_fastembed() -> Iterator[None]:
    """Silence fastembed's loguru messages inside the block."""
    from loguru import logger

    logger.disable("fastembed")
    try:
        yield
    finally:
        logger.enable("fastembed")


def load_from_hub(construct: Callable[[bool], T], repo_id: str | None, what: str) -> T:
    """Build a fastembed model from its cache, else from the hub after a quick probe.

    :param construct: ``construct(local_files_only) -> model``.
    :raises EmbedderUnavailableError: not cached and the hub is offline or unreachable.
    """
    try:
        with _quiet_fastembed():  # a cache miss is expected here; fastembed logs it as ERROR
            return construct(True)
    except Exception as exc:  # fastembed raises ValueError, OSError, ...: not usable from cache
        if hub_offline():
            raise EmbedderUnavailableError(
                f"{what}: not in the local cache and HF_HUB_OFFLINE is set "
                f"({type(exc).__name__}: {exc})"
            ) from exc
    if repo_id:
        probe_hub(repo_id, what)
    return construct(False)


def find_onnx_file(folder: Path, model_file: str | None) -> Path:
    """Return the ONNX file of a local model folder.

    :param model_file: path inside ``folder``; ``None`` tries ``model.onnx``,
        ``onnx/model.onnx``, ``model_optimized.onnx``, then the folder's only ``*.onnx``.
    :raises EmbedderUnavailableError: no such file, or several candidates.
    """
    if model_file is not None:
        path = folder / model_file
        if not path.is_file():
            raise EmbedderUnavailableError(f"no ONNX file {str(path)!r}")
        return path.resolve()
    for candidate in _ONNX_CANDIDATES:
        if (folder / candidate).is_file():
            return (folder / candidate).resolve()
    found = sorted(folder.glob("*.onnx")) if folder.is_dir() else []
    if len(found) != 1:
        listed = ", ".join(p.name for p in found) or "none"
        raise EmbedderUnavailableError(
            f"model folder {str(folder)!r}: expected one ONNX file, found {listed}; "
            "set model_file"
        )
    return found[0].resolve()


def custom_model_name(prefix: str, *key: object) -> str:
    """Return a process-unique fastembed model name for a custom model key."""
    return f"octomem/{prefix}-{hashlib.sha1(repr(key).encode()).hexdigest()[:16]}"


def sort_by_length(texts: Sequence[str]) -> np.ndarray:
    """Return indices ordering ``texts`` by length, so batches pad to similar lengths."""
    import numpy as np

    return np.argsort(np.fromiter((len(t) for t in texts), dtype=np.int64), kind="stable")
