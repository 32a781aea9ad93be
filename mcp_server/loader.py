"""Open the memory (both scopes' pipelines) and warm its embedder on a background thread.

The MCP server must answer ``initialize`` and ``tools/list`` at once, but assembling
the pipelines imports every installed plugin (fastembed, onnxruntime, ...) and the
embedder's first use loads an ONNX model. :class:`MemoryLoader` does both on one
daemon thread, started when the server starts; tool calls wait for what they need:

- ``forget``, ``status`` and the resources wait for the assembly only (no model involved);
- ``remember``, ``recall`` and ``ingest`` also wait for the embedder's warm-up (and the
  semantic arms' ``warm()``, which loads e.g. ``sqlite-vec``'s in-RAM vectors), so an
  answer is never silently keyword-only because it arrived a second too early;
- the keyword arms' ``warm()`` (``fts5``'s in-RAM postings, ~3 s per 100k chunks)
  runs after that and blocks nothing: until it is done, ``fts5`` ranks with its
  on-disk index, with the same hits and scores, only slower (and calls are slower
  still while it loads: both hold the interpreter's lock in turn);
- the reranker's ``warm()`` runs last and blocks nothing either: the ``conversation``
  reranker's word table, built once per machine (~30 s of CPU) and then only opened;
  until it is there, the ``expansion`` feature embeds its words live.

A warm-up that fails is logged and remembered, never raised here: recall then reports
the semantic arm under ``arms_unavailable`` with the embedder's own reason.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from octomem.engine.errors import OctomemError, StoreUnreadableError
from octomem.engine.memory.facade import Memory

log = logging.getLogger(__name__)

#: Longest a tool call waits for the pipeline or the embedding model (seconds).
READY_TIMEOUT_S = 120.0
#: Longest shutdown waits for a model load in progress (seconds): a native library torn
#: down under a loading thread at interpreter exit aborts the process.
SHUTDOWN_WAIT_S = 10.0
#: Embedded once right after the model loads, so that the first real query does not pay
#: the session's first-run costs (its memory arena growing, first touches of the packed
#: weights). A question of ~15 tokens, longer than most (LoCoMo's p50 is 12): chosen by
#: the first of 8 LoCoMo questions in 6 fresh processes each way, bundled MiniLM, 2 cores,
#: load 7.6: p50 39.5 -> 26.4 ms wall, 9.8 -> 7.3 ms CPU (benchmarks/results/embedding/
#: first_query.py, query.md).
WARM_UP_QUERY = "what did we decide about the deploy script and the database migration?"

ModelState = Literal["starting", "loading", "ready", "failed", "not-configured"]


class ServerNotReadyError(OctomemError):
    """The pipeline or its embedding model is still loading after the wait limit."""


@dataclass
class _Run:
    """One assembly of the pipeline, from start to close (events set by the loader thread)."""

    assembled: threading.Event = field(default_factory=threading.Event)
    warmed: threading.Event = field(default_factory=threading.Event)
    memory: Memory | None = None
    error: OctomemError | None = None
    model_state: ModelState = "starting"
    model_error: str | None = None
    model_seconds: float | None = None
    closed: bool = False
    done: bool = False  # the loader thread has finished (keyword warm-up included)
    thread: threading.Thread | None = None
    warmed_pipelines: set[int] = field(default_factory=set)  # id() of each warmed Pipeline
    warmers: int = 0  # threads of warm_new_scopes running: the last one out closes


class MemoryLoader:
    """Own one lazily opened :class:`Memory` and its embedder warm-up.

    :param opener: opens the memory (e.g. ``open_memory`` with the server's settings and
        project); called once per :meth:`start`, on the loader thread.
    :param timeout_s: how long :meth:`memory` waits before giving up, in seconds.
    """

    def __init__(self, opener: Callable[[], Memory], timeout_s: float = READY_TIMEOUT_S) -> None:
        self._opener = opener
        self._timeout_s = timeout_s
        self._lock = threading.Lock()
        self._run: _Run | None = None
        #: Held by each short write for its whole call (``remember``, ``forget``, the
        #: browser view's writes, the call-log writer): one at a time in this process.
        #: An ``ingest`` holds it only while it creates the scope's store (:attr:`ingest_lock`).
        self.write_lock = threading.Lock()
        #: Held by each ``ingest`` for its whole run, so ingests take turns (a scope's
        #: embedding claim, :meth:`~octomem.engine.pipeline.Pipeline.embedding`, is one per
        #: pipeline). It does not keep the short writes out: each of the ingest's
        #: transactions is short (its embedding runs outside them) and SQLite takes them
        #: one at a time (``BEGIN IMMEDIATE``), as with an ingest run by another process;
        #: so another session's ``remember`` waits for one batch, not the whole folder
        #: (trial 21 F1: 29-40 s behind a 600-file ingest).
        self.ingest_lock = threading.Lock()

    # ---- lifecycle ----------------------------------------------------------------

    def start(self) -> None:
        """Start assembling on a daemon thread; a no-op while a run is active."""
        with self._lock:
            if self._run is not None:
                return
            run = self._run = _Run()
            run.thread = threading.Thread(
                target=self._load, args=(run,), name="octomem-loader", daemon=True
            )
        run.thread.start()

    def close(self, wait_s: float = 0.0) -> None:
        """Close the memory, or have the loader thread close it when it is done.

        A later :meth:`start` (or tool call) opens a fresh one.

        :param wait_s: wait up to this many seconds for a load in progress to finish.
        """
        with self._lock:
            run, self._run = self._run, None
            if run is None:
                return
            run.closed = True  # a load or warm-up running closes it when it ends
            memory = run.memory if run.done and not run.warmers else None
        if memory is not None:
            _close_quietly(memory)
        elif run.thread is not None and wait_s > 0:
            run.thread.join(wait_s)

    def _load(self, run: _Run) -> None:
        start = time.perf_counter()
        try:
            memory = self._opener()
            memory.scopes.existing()  # assemble now: settings and arms fail here; a scope
            for why in memory.scopes.unreadable.values():  # not created stays so (F12)
                log.warning("%s", one_line(why))  # served without it: reads name it
        except OctomemError as exc:
            log.error("memory pipeline could not be assembled: %s", one_line(str(exc)))
            _fail(run, exc)
            return
        except Exception as exc:  # a plugin's bug: traceback to the log, one line to tools
            log.exception("memory pipeline could not be assembled")
            _fail(run, OctomemError(f"the memory pipeline could not be assembled: "
                                    f"{type(exc).__name__}: {exc}"))
            return
        log.info("memory opened in %.2f s (project %s, global %s)", time.perf_counter() - start,
                 memory.roots.project, memory.roots.global_)
        run.memory = memory
        run.assembled.set()
        _warm(run, memory)
        run.warmed_pipelines.update(id(p) for _, p in memory.scopes.existing())
        _warm_pipelines(memory.scopes.existing(), ("semantic",))
        with self._lock:
            run.warmed.set()
            close_now = run.closed
        if not close_now:  # searches use FTS5's own index until this is done
            _warm_pipelines(memory.scopes.existing(), ("keyword", "storage"))
        with self._lock:
            close_now = run.closed
        if not close_now:  # the word table: live word vectors until it is built
            _warm_pipelines(memory.scopes.existing(), ("reranker",))
        with self._lock:
            close_now = run.closed
            run.done = True
        if close_now:
            _close_quietly(memory)

    def warm_new_scopes(self) -> threading.Thread | None:
        """Warm, on a background thread, the arms of scopes opened after start-up (e.g. a
        local scope that ``remember`` or ``ingest`` just created), as start-up warmed the
        others; until then they search their on-disk indexes.

        :returns: the thread started, or None when every open scope is warm already (or
            the start-up warm-up has not finished: it warms what is open then).
        """
        with self._lock:
            run = self._run
            if run is None or not run.done or run.closed or run.memory is None:
                return None
            fresh = [(scope, pipeline) for scope, pipeline in run.memory.scopes.existing()
                     if id(pipeline) not in run.warmed_pipelines]
            if not fresh:
                return None
            run.warmed_pipelines.update(id(p) for _, p in fresh)
            run.warmers += 1
        thread = threading.Thread(target=self._warm_fresh, args=(run, fresh), daemon=True,
                                  name="octomem-warm-scope")
        thread.start()
        return thread

    def _warm_fresh(self, run: _Run, fresh: list[tuple[str, Any]]) -> None:
        """Warm ``fresh`` scopes one by one until the memory is closed; the last warm-up
        to end after a :meth:`close` closes the memory (a store closed under a warm-up
        made it fail with a traceback: trial 17 G7)."""
        try:
            for one in fresh:
                with self._lock:
                    if run.closed:
                        break
                _warm_pipelines([one])
        finally:
            with self._lock:
                run.warmers -= 1
                close_now = run.closed and not run.warmers
            if close_now and run.memory is not None:
                _close_quietly(run.memory)

    # ---- access -------------------------------------------------------------------

    def _current(self) -> _Run:
        self.start()
        with self._lock:
            run = self._run
        if run is None:  # closed between start() and here
            raise ServerNotReadyError("the memory server is shutting down")
        return run

    def memory(self, *, warm: bool = False) -> Memory:
        """Return the opened memory, waiting for it (and for the model when ``warm``).

        :param warm: also wait until the embedder's warm-up has finished (or failed).
        :raises OctomemError: the pipeline could not be assembled (the engine's message).
        :raises ServerNotReadyError: still loading after ``timeout_s`` seconds.
        """
        run = self._current()
        if not run.assembled.wait(self._timeout_s):
            raise ServerNotReadyError(
                f"the memory pipeline is still being assembled after {self._timeout_s:.0f} s; "
                "try again shortly or see the server log"
            )
        if run.error is not None:
            raise run.error
        if warm and not run.warmed.wait(self._timeout_s):
            raise ServerNotReadyError(
                f"the embedding model is still loading after {self._timeout_s:.0f} s; "
                "try again shortly or see the server log"
            )
        assert run.memory is not None
        return run.memory

    def opened(self) -> Memory | None:
        """Return the memory if it is open and usable now, else ``None`` (never waits,
        never starts a load: for readers such as a metrics scrape)."""
        with self._lock:
            run = self._run
        if run is None or run.closed or not run.assembled.is_set() or run.error is not None:
            return None
        return run.memory

    def warmup_state(self) -> dict[str, str]:
        """Return how far the warm-up is: ``{"semantic arms": ..., "keyword arms": ...}``,
        each ``waiting``, ``running`` or ``done``."""
        run = self._current()
        semantic = "done" if run.warmed.is_set() else "running"
        keyword = "done" if run.done else ("running" if run.warmed.is_set() else "waiting")
        return {"semantic arms": semantic, "keyword arms": keyword}

    def model_state(self) -> tuple[ModelState, str | None, float | None]:
        """Return the embedder's warm-up state, its error and its load time in seconds."""
        run = self._current()
        return run.model_state, run.model_error, run.model_seconds


def _warm(run: _Run, memory: Memory) -> None:
    """Load the embedder's model now (if it has a ``load`` method) and embed
    :data:`WARM_UP_QUERY` once; record the outcome."""
    try:
        embedder = memory.scopes.shared_arm("embedder")
    except StoreUnreadableError as exc:  # no readable scope to load it from
        run.model_state, run.model_error = "failed", one_line(str(exc))
        return
    load = getattr(embedder, "load", None)
    if embedder is None:
        run.model_state = "not-configured"
        return
    if not callable(load):
        run.model_state = "ready"  # it loads on first use; nothing to warm
        return
    run.model_state = "loading"
    start = time.perf_counter()
    try:
        load()
        embedder.embed_query(WARM_UP_QUERY)
    except OctomemError as exc:  # the pipeline reports it as arms_unavailable
        run.model_state, run.model_error = "failed", one_line(str(exc))
        log.warning("embedder %r could not load its model: %s", embedder.name, run.model_error)
        return
    except Exception as exc:  # an embedder's bug: same outcome, plus the traceback
        log.exception("embedder %r crashed while loading its model", embedder.name)
        run.model_state, run.model_error = "failed", one_line(f"{type(exc).__name__}: {exc}")
        return
    run.model_seconds = round(time.perf_counter() - start, 3)
    run.model_state = "ready"
    log.info("embedder %r loaded its model in %.2f s", embedder.name, run.model_seconds)


def _warm_pipelines(
    pipelines: list[tuple[str, Any]],
    kinds: tuple[str, ...] = ("semantic", "keyword", "storage"),
) -> None:
    """Let each ``(scope, pipeline)``'s arms of ``kinds`` load what their first search
    would (``Pipeline.warm``: ``sqlite-vec``'s in-RAM vectors, ``fts5``'s in-RAM
    postings, the storage's chunk pages); failures are logged only (the first search
    meets and reports them)."""
    for scope, pipeline in pipelines:
        start = time.perf_counter()
        try:
            warmed = pipeline.warm(kinds)
        except Exception:
            log.exception("the %s scope's arms could not warm up", scope)
            continue
        if warmed:
            log.info("%s scope: %s warmed in %.2f s", scope, ", ".join(warmed),
                     time.perf_counter() - start)


def _fail(run: _Run, error: OctomemError) -> None:
    """Record an assembly failure and release every waiting tool call."""
    run.error, run.model_state = error, "failed"
    run.done = True
    run.assembled.set()
    run.warmed.set()


def _close_quietly(memory: Memory) -> None:
    try:
        memory.close()
    except Exception:  # shutting down: log, never raise
        log.exception("closing the memory failed")


#: Longest tool error or log line (characters): a message quoting a caller's value never
#: echoes all of a long input.
MAX_LINE = 500


def one_line(message: str) -> str:
    """Return ``message`` on one line of at most :data:`MAX_LINE` characters (tool errors
    and log lines are single lines; a longer one is cut in the middle with "…")."""
    line = " ".join(part.strip() for part in message.splitlines() if part.strip())
    if len(line) <= MAX_LINE:
        return line
    half = (MAX_LINE - 1) // 2
    return line[:half] + "…" + line[-half:]
