"""One builder per cached model file on the machine; the others wait and say so.

The bundled model is re-quantized (:mod:`.requantize`) and its graph optimised
(:mod:`.graph`) once per machine, 10-15 s on a quiet 2-core machine. Before this lock,
processes starting together on a fresh machine (an MCP client starting ``octomem serve``
while the user runs the CLI) each built their own copy, three of them 48 s each instead
of 13.5 s (trial 13 M16), saying nothing meanwhile. Now the first takes an exclusive lock
on ``<file>.lock`` beside the file (``fcntl.flock``; released when the process ends,
however it ends), the others wait for it and then use what it built, and each says once
on stderr what it is doing (a ``WARNING`` log record: the CLI prints it as one line, the
MCP server logs it). Where ``fcntl`` is missing (Windows) each process builds alone, as
before; the rename into place keeps any reader from a half-written file either way.
"""

from __future__ import annotations

import atexit
import logging
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from octomem.engine.errors import EmbedderUnavailableError
from octomem.engine.files import private_dir, private_file

log = logging.getLogger(__name__)

#: Said once per process, before its first build of a cached model file.
PREPARING = ("preparing the embedding model once for this machine (10-60 s; later starts "
             "use the copy cached in {folder})")
#: Said once per process, when another process holds the lock.
WAITING = ("another octomem process is preparing the embedding model for this machine; "
           "waiting for it")
#: Said once per process when the cache folder cannot be written.
UNWRITABLE = ("the model cache {folder} cannot be written ({why}); the embedding model is "
              "prepared for this process alone (seconds to a minute at every start): make "
              "the folder writable, or set arms.fastembed.cache_dir to one that is")
_said: set[str] = set()
#: Files built outside the cache (:func:`built_outside_cache`), by their cache path.
_outside: dict[Path, Path] = {}
_outside_lock = threading.Lock()
_outside_folder: list[Path] = []  # the process's one temporary folder, once made


def _say_once(template: str, **values: object) -> None:
    if template not in _said:
        _said.add(template)
        log.warning("%s", template.format(**values))


def said_elsewhere() -> None:
    """Say no :data:`PREPARING` in this process: its caller said why it builds (a cached
    file that failed to load is "deleted and built again")."""
    _said.add(PREPARING)


@contextmanager
def building(target: Path) -> Iterator[None]:
    """Hold this machine's lock for building ``target`` (a cached model file), waiting
    for another process that holds it; say what is happening once per process. Check
    again for ``target`` inside: the process that held the lock may have built it.

    :raises OSError: the cache folder or the lock file cannot be created.
    """
    private_dir(target.parent)
    lock = private_file(target.with_name(target.name + ".lock"))
    with lock.open("a") as handle:
        try:
            import fcntl
        except ImportError:  # no flock (Windows): build alone, as before
            _say_once(PREPARING, folder=target.parent)
            yield
            return
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _say_once(WAITING)
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            if not target.is_file():
                _say_once(PREPARING, folder=target.parent)
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def built_outside_cache(target: Path, build: Callable[[Path], None], why: OSError) -> Path:
    """Return ``target``'s file built by ``build(path)`` in the ``0700`` temporary folder
    of this process (one for all such files, removed at exit), once per process, when the
    cache folder cannot be written (a read-only home, a sandbox): the same bytes as the
    cached copy, so the model runs as it would from the cache and only its start pays the
    build again. Says
    :data:`UNWRITABLE` once (trial 17 G10: the semantic arm was off everywhere).

    :param why: the error the cache folder gave.
    :raises EmbedderUnavailableError: no temporary folder can be made either.
    :raises Exception: what ``build`` raises.
    """
    with _outside_lock:
        if target in _outside:
            return _outside[target]
        if not _outside_folder:
            try:
                _outside_folder.append(Path(tempfile.mkdtemp(prefix="octomem-model-")))
            except OSError as exc:
                raise EmbedderUnavailableError(
                    f"the model cache {target.parent} cannot be written ({why}), nor a "
                    f"temporary folder ({exc}); set arms.fastembed.cache_dir to a writable "
                    "folder") from exc
            atexit.register(shutil.rmtree, _outside_folder[0], True)
        _say_once(UNWRITABLE, folder=target.parent, why=why)
        built = _outside_folder[0] / target.name
        build(built)
        _outside[target] = built
        return built
