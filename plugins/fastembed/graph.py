"""The bundled MiniLM's graph, optimised once per machine and saved, run as saved.

Opening a session with all graph optimisations costs ~0.2 s per session on 2 cores
(onnxruntime rewrites the graph every time). :func:`prepared` lets onnxruntime optimise
the graph once (``ORT_ENABLE_EXTENDED``: its fusions, e.g. ``DynamicQuantizeMatMul``,
``MatMulIntegerToFloat``, ``SkipLayerNormalization``; not the hardware-specific layout
passes of ``ORT_ENABLE_ALL``, which change nothing in this graph), takes out steps that
compute nothing (:func:`simplify`), and caches the result beside the re-quantized model;
sessions then open it with no optimisation. The vectors stay the same bit for bit
(``tests/test_fastembed_query.py`` compares them with fastembed's own session of the
original file, queries and padded document batches).

What :func:`simplify` takes out, per attention layer of the exported graph (measured on
LoCoMo questions, 1 thread: 264 -> 192 operators, 8.5 % less CPU per query; see
``benchmarks/results/embedding/query.md``):

- the key's transpose done as Transpose, Reshape, Transpose, Reshape (and the Shape,
  Gather, Slice and Concat nodes computing the reshapes' shapes) becomes one Transpose
  with the same result: a pure data move, the same numbers in the same layout;
- ``Where(IsNaN(softmax), 0, softmax)`` becomes the softmax: the attention mask adds a
  finite minimum (``-3.4e38``), not ``-inf``, so a softmax row is never NaN;
- only for a model that runs one text per call (``unpadded``: the re-quantized one, see
  ``FastembedEmbedder._batch_size``): the attention mask's input and everything computed
  from it (192 -> 164 operators, 3.6 % less CPU per query): with no padding the mask is
  all ones and adds 0.0 to every score, which changes no bit of the softmax.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.files import FILE_MODE

from .build_lock import building, built_outside_cache, said_elsewhere

log = logging.getLogger(__name__)
#: Part of the saved graph's file name: bump it when :func:`simplify` changes.
GRAPH_VERSION = "run2"
_LOCK = threading.Lock()
T = TypeVar("T")


def prepared_path(stem: str, cache_dir: Path | None = None, unpadded: bool = False) -> Path:
    """Return where the prepared copy of a model is cached.

    :param stem: a name for the source file's content and onnxruntime's version (the
        re-quantized model's file name has both).
    :param cache_dir: the cache folder (default: the user's cache directory).
    :param unpadded: the copy without the attention mask (:func:`simplify`).
    """
    import platformdirs

    folder = cache_dir or platformdirs.user_cache_path("octomem")
    kind = "-unpadded" if unpadded else ""
    return folder / "models" / f"{stem}.{GRAPH_VERSION}{kind}.onnx"


def bundled_file(source: Path, sha256: str, requantized: bool, cache_dir: Path | None,
                 unpadded: bool = False) -> tuple[Path, bool]:
    """Return the bundled model's file to run and whether its sessions should optimise it.

    :param source: the shipped ONNX file; ``sha256``: its digest.
    :param requantized: run the re-quantized copy (:func:`.requantize.requantize`).
    :param unpadded: every call runs one text: the copy may drop the attention mask.
    :returns: the prepared copy and ``False``, or (when it cannot be saved) the file it
        would be made from and ``True``.
    :raises EmbedderUnavailableError: re-quantizing failed.
    """
    from .requantize import onnxruntime_version, requantize

    if requantized:
        source = requantize(source, sha256, cache_dir)
        stem = source.stem
    else:
        stem = f"minilm-int8-{sha256[:12]}-ort{onnxruntime_version()}"
    ready = prepared(source, prepared_path(stem, cache_dir, unpadded), unpadded)
    return (source, True) if ready is None else (ready, False)


def cached_copies(sha256: str, requantized: bool, cache_dir: Path | None,
                  unpadded: bool = False) -> list[Path]:
    """Return the cache files :func:`bundled_file` makes of the bundled model whose sha256
    is ``sha256`` (its prepared copy, and the re-quantized file it is made from), whether
    they exist or not; their names are read from metadata: nothing is imported."""
    from .requantize import onnxruntime_version, requantized_path

    if requantized:
        source = requantized_path(sha256, cache_dir)
        return [prepared_path(source.stem, cache_dir, unpadded), source]
    stem = f"minilm-int8-{sha256[:12]}-ort{onnxruntime_version()}"
    return [prepared_path(stem, cache_dir, unpadded)]


def open_rebuilding(prepare: Callable[[], tuple[Path, bool]],
                    open_file: Callable[[Path, bool], T], cached: Sequence[Path],
                    ) -> tuple[Path, bool, T]:
    """Prepare the model file (``prepare``: :func:`bundled_file`) and open it; when a
    cached copy fails to load (damaged by a disk error or a bad copy: onnxruntime's
    ``INVALID_PROTOBUF``), delete the cached copies and do both once more, as if the cache
    had been deleted (the README: safe to delete, rebuilt on next use).

    :param open_file: ``open_file(path, optimize)`` opens a session of the file.
    :param cached: the cache files (:func:`cached_copies`).
    :returns: ``(path, optimize, what open_file returned)``.
    :raises EmbedderUnavailableError: the rebuilt copy fails to load too; names it.
    :raises Exception: what ``open_file`` raised for a file outside the cache.
    :raises ImportError: onnxruntime could not be imported; nothing is deleted.
    """
    path, optimize = prepare()
    try:
        return path, optimize, open_file(path, optimize)
    except ImportError:  # onnxruntime itself did not import (a Ctrl-C inside its import
        raise            # leaves "initialization failed"): the file is not at fault (trial 15)
    except Exception as exc:  # onnxruntime raises its own exception types
        if path not in cached:
            raise
        log.warning("the cached model file %s cannot be loaded (%s: %s); it is deleted and "
                    "built again", path, type(exc).__name__, exc)
        for copy in cached:
            copy.unlink(missing_ok=True)
        said_elsewhere()  # the warning says it is built again: no second note
    path, optimize = prepare()
    try:
        return path, optimize, open_file(path, optimize)
    except Exception as exc:
        raise EmbedderUnavailableError(
            f"cannot load the model file {path} ({type(exc).__name__}: {exc}), built again "
            "after its cached copy failed to load; set arms.fastembed.requantize=false to "
            "run the shipped file") from exc


def prepared(source: Path, name: Path, unpadded: bool = False) -> Path | None:
    """Return the optimised, simplified copy of ``source`` at ``name``, building it first
    if needed (in a temporary folder of the process when the cache folder cannot be
    written: :func:`.build_lock.built_outside_cache`); ``None`` when it cannot be built
    (the ``onnx`` package missing, or any failure: the caller then opens ``source`` with
    all optimisations, as before).

    :param source: the ONNX file to run.
    :param name: where the copy is cached (:func:`prepared_path`).
    :param unpadded: drop the attention mask (:func:`simplify`).
    """
    if name.is_file():
        return name
    with _LOCK:
        try:
            try:
                with building(name):  # one builder on the machine; the others wait
                    if name.is_file():
                        return name
                    _build(source, name, unpadded)
            except OSError as exc:  # the cache folder cannot be written
                return built_outside_cache(name, lambda path: _build(source, path, unpadded),
                                           exc)
        except Exception as exc:  # onnx missing, onnxruntime's own errors: run unprepared
            log.warning("could not save an optimised copy of %s (%s: %s); its sessions "
                        "optimise it at every start", source, type(exc).__name__, exc)
            return None
    return name


def _build(source: Path, target: Path, unpadded: bool = False) -> None:
    from .requantize import save_optimised
    from .runtime import import_onnxruntime

    ort = import_onnxruntime()
    import onnx

    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        optimized = Path(tmp) / "optimized.onnx"
        save_optimised(source, optimized, ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED)
        model = onnx.load(str(optimized))
        simplify(model.graph, unpadded)
        simplified = Path(tmp) / "simplified.onnx"
        onnx.save(model, str(simplified))
        os.chmod(simplified, FILE_MODE)
        os.replace(simplified, target)


def simplify(graph: Any, unpadded: bool = False) -> int:
    """Take out, in place, the steps of ``graph`` (an ``onnx.GraphProto``) that compute
    nothing (module docstring); return how many nodes were removed. A pattern that does
    not match exactly is left alone.

    :param unpadded: also drop the ``attention_mask`` input and what it computes (only
        for a graph that is never given padded batches).
    """
    from onnx import helper

    nodes = list(graph.node)
    producer = {out: node for node in nodes for out in node.output}
    users: dict[str, list[Any]] = {}
    for node in nodes:
        for name in node.input:
            users.setdefault(name, []).append(node)
    dropped: set[int] = set()
    replaced: dict[int, Any] = {}

    def perm(node: Any) -> list[int]:
        return next((list(a.ints) for a in node.attribute if a.name == "perm"), [])

    for node in nodes:
        if node.op_type == "IsNaN":  # Where(IsNaN(x), 0, x) -> x
            where = users.get(node.output[0], [])
            if len(where) != 1 or where[0].op_type != "Where" or where[0].input[2] != node.input[0]:
                continue
            for user in users.get(where[0].output[0], []):
                for k, name in enumerate(user.input):
                    if name == where[0].output[0]:
                        user.input[k] = node.input[0]
            dropped |= {id(node), id(where[0])}
        elif node.op_type == "Reshape":  # Transpose 0213, Reshape, Transpose 021, Reshape
            inner = producer.get(node.input[0])
            if inner is None or inner.op_type != "Transpose" or perm(inner) != [0, 2, 1]:
                continue
            middle = producer.get(inner.input[0])
            first = producer.get(middle.input[0]) if middle is not None else None
            if (middle is None or middle.op_type != "Reshape" or first is None
                    or first.op_type != "Transpose" or perm(first) != [0, 2, 1, 3]
                    or len(users[inner.output[0]]) != 1 or len(users[middle.output[0]]) != 1):
                continue
            replaced[id(node)] = helper.make_node("Transpose", [first.input[0]],
                                                  [node.output[0]], perm=[0, 2, 3, 1],
                                                  name=f"{node.name}/octomem_transpose")
            dropped |= {id(inner), id(middle)}
    if unpadded:
        dropped |= _mask_additions(nodes, users)
    kept = [replaced.get(id(n), n) for n in nodes if id(n) not in dropped]
    live = {out.name for out in graph.output}
    alive = []
    for node in reversed(kept):  # drop what no output depends on any more
        if any(out in live for out in node.output):
            alive.append(node)
            live.update(node.input)
    alive.reverse()
    used = {name for node in alive for name in node.input}
    initializers = [i for i in graph.initializer if i.name in used]
    del graph.node[:]
    graph.node.extend(alive)
    del graph.initializer[:]
    graph.initializer.extend(initializers)
    inputs = [i for i in graph.input if i.name in used]
    del graph.input[:]
    graph.input.extend(inputs)
    return len(nodes) - len(alive)


def _mask_additions(nodes: list[Any], users: dict[str, list[Any]]) -> set[int]:
    """Bypass each ``Add(scores, mask)`` whose second input is computed from the
    ``attention_mask`` input and whose first is not; return the bypassed nodes' ids.
    What a bypassed Add computes no longer counts as computed from the mask."""
    from_mask = {"attention_mask"}
    bypassed = set()
    for node in nodes:  # nodes are in topological order
        if not any(name in from_mask for name in node.input):
            continue
        if node.op_type == "Add" and node.input[1] in from_mask and node.input[0] not in from_mask:
            for user in users.get(node.output[0], []):
                for k, name in enumerate(user.input):
                    if name == node.output[0]:
                        user.input[k] = node.input[0]
            bypassed.add(id(node))
        else:
            from_mask.update(node.output)
    return bypassed
