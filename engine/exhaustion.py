"""Resources a process can run out of, said in one line: memory, open files, disk space.

Out of memory (``MemoryError``, ``ENOMEM``) or out of file descriptors (``EMFILE``: the
process's limit, ``ulimit -n``; ``ENFILE``: the system's table) is nobody's bug: a
caller should learn what ran out and that what is stored is intact, not read a traceback
or a generic "internal error". Every write is one transaction (a failure inside it rolls
it back, an ingest keeps the batches it committed before), so nothing stored is lost.

:func:`exhaustion` finds such a cause anywhere in an exception's chain (``raise ... from``
and the exception being handled) and returns the line; :class:`ResourceExhaustedError`
carries it. :func:`descriptor_shortage` asks the operating system whether the process is
out of descriptors now, for a library that reports only "unable to open" (SQLite).
"""

from __future__ import annotations

import errno
import os

from .errors import OctomemError

#: How many links of ``__cause__`` / ``__context__`` are followed.
MAX_CHAIN = 12
#: What :meth:`threading.Thread.start` raises when the process cannot have one more
#: thread (no memory for its stack, or the limit of processes, ``ulimit -u``).
NO_THREAD = "can't start new thread"
#: ``errno`` values that mean a resource ran out, and what to call it.
RAN_OUT = {
    errno.EMFILE: "open files",
    errno.ENFILE: "open files",
    errno.ENOMEM: "memory",
    errno.ENOSPC: "disk space",
}


class ResourceExhaustedError(OctomemError):
    """The process ran out of memory, open files or disk space during a call; nothing
    stored was lost. The message says which and what to do."""


def _what_ran_out(exc: BaseException) -> tuple[str, str] | None:
    """Return ``(what, detail)`` when ``exc`` itself is a resource running out."""
    if isinstance(exc, MemoryError):
        return "memory", "MemoryError"
    if isinstance(exc, RuntimeError) and str(exc) == NO_THREAD:  # threading's only signal
        return "memory or threads", NO_THREAD
    code = getattr(exc, "errno", None)
    if isinstance(exc, OSError) and code in RAN_OUT:
        where = f" at {exc.filename}" if exc.filename and exc.filename != os.devnull else ""
        return RAN_OUT[code], f"{errno.errorcode.get(code, code)}: {exc.strerror}{where}"
    return None


def _advice(what: str) -> str:
    if what == "open files":
        try:
            import resource

            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            limit = f" (this process may have {soft} open)" if soft >= 0 else ""
        except (ImportError, OSError, ValueError):  # not on this platform
            limit = ""
        return (f"raise the open-file limit{limit}, e.g. `ulimit -n 4096` before starting "
                "octomem, or stop what holds many files open")
    if what == "memory or threads":
        return "free some memory or raise the process limits (`ulimit -v`, `ulimit -u`)"
    if what == "disk space":
        return "free some space on the disk that holds the store"
    return "free some memory (or ask for less: a smaller top_k, max_tokens or file)"


def exhaustion(exc: BaseException, doing: str = "", probe: bool = False) -> str | None:
    """Return one line saying what ran out, if ``exc`` or an exception in its chain is
    a resource running out (see the module docstring); else ``None``.

    :param doing: what was being done, e.g. ``"recall"``; starts the line when given.
    :param probe: when the chain names nothing, ask the operating system whether the
        process is out of descriptors now (:func:`descriptor_shortage`): for an error a
        library raised without its cause (SQLite's "unable to open database file").
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen and len(seen) < MAX_CHAIN:
        seen.add(id(current))
        found = _what_ran_out(current)
        if found is not None:
            what, detail = found
            start = f"{doing}: " if doing else ""
            return (f"{start}the process ran out of {what} ({detail}); nothing stored was "
                    "lost (each write is stored whole or not at all); "
                    f"{_advice(what)}, then try again")
        current = current.__cause__ or current.__context__
    shortage = descriptor_shortage() if probe else None
    return None if shortage is None else exhaustion(shortage, doing)


def descriptor_shortage() -> OSError | None:
    """Return the error of opening one more file now when it is ``EMFILE``/``ENFILE`` (the
    process or system is out of descriptors), else ``None``."""
    try:
        fd = os.open(os.devnull, os.O_RDONLY)
    except OSError as exc:
        return exc if exc.errno in (errno.EMFILE, errno.ENFILE) else None
    os.close(fd)
    return None
