"""Private files: what octomem writes is readable by its user only.

Memory holds what a user told an agent; on a shared machine the umask (often 022) would
make it readable by everyone. So every folder octomem creates is made ``0700`` and every
file it creates ``0600`` — the SQLite database (its WAL and SHM files take the
database's mode: SQLite opens them with the same permissions), caches and exports. A
folder or file that already exists is left as it is (the user may share it on purpose);
:func:`exposure` tells ``status`` when one is readable by others.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import TextIO

from .errors import UsageValueError

#: Modes of what octomem creates: owner only.
DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """Create ``path`` and any missing parents as ``0700`` folders; existing ones are kept.

    :returns: ``path``.
    :raises FileNotFoundError: a folder on the way is a symbolic link to nothing (a
        ``.octomem`` linked to a disk not mounted; trial 15 F14), naming the link and where
        it points.
    :raises OSError: a folder cannot be created.
    """
    missing: list[Path] = []
    current = Path(path)
    while not current.exists():
        if current.is_symlink():
            raise FileNotFoundError(
                errno.ENOENT, f"a link to {os.readlink(current)}, which does not exist: "
                "create that folder, or remove the link", str(current))
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=DIR_MODE)
        except FileExistsError:  # made meanwhile by another process: theirs, keep it
            continue
        os.chmod(folder, DIR_MODE)  # the umask may have taken bits away, never adds any
    return Path(path)


#: The ``.gitignore`` octomem writes into a store folder it creates: a project's
#: ``.octomem/`` sits inside the repository it describes, and ``git add -A`` would
#: otherwise commit (and push) everything the memory holds (trial 17 G4). ``*`` keeps the
#: folder out of git, as ``python -m venv`` and pytest's cache do; a user who wants to
#: share the memory on purpose deletes the file.
STORE_GITIGNORE = ("# Written by octomem: keeps this memory out of version control.\n"
                   "# Delete this file to commit the memory on purpose.\n*\n")


def store_dir(path: Path) -> Path:
    """Create a store's folder as :func:`private_dir` does; a folder this creates also
    gets a ``.gitignore`` holding ``*`` (:data:`STORE_GITIGNORE`). An existing folder is
    left as it is (a deleted ``.gitignore`` stays deleted).

    :returns: ``path``.
    :raises FileNotFoundError: as :func:`private_dir`.
    :raises OSError: the folder cannot be created. A ``.gitignore`` that cannot be
        written is skipped: it must not stop a store from opening.
    """
    folder = Path(path)
    if folder.exists():
        return folder
    private_dir(folder)
    write_gitignore(folder)
    return folder


def write_gitignore(folder: Path) -> bool:
    """Write :data:`STORE_GITIGNORE` as ``folder/.gitignore`` unless that file exists.

    :returns: whether it was written (``False``: it exists, or cannot be written, which
        must not stop a store from opening).
    """
    try:
        with open_private(Path(folder) / ".gitignore", "x") as out:
            out.write(STORE_GITIGNORE)
    except OSError:
        return False
    return True


def remove_store_dir(folder: Path, also: tuple[str, ...] = ()) -> None:
    """Remove a store's folder that :func:`store_dir` made, once its store is deleted:
    the ``.gitignore`` it wrote (if unchanged), the files named in ``also`` (e.g. the
    empty embedding lock), then the folder itself if nothing else is left in it (else it
    stays, with what someone put there). Errors are ignored: what cannot go stays."""
    folder = Path(folder)
    with contextlib.suppress(OSError):
        if (folder / ".gitignore").read_text(encoding="utf-8") == STORE_GITIGNORE:
            (folder / ".gitignore").unlink()
    for name in also:
        with contextlib.suppress(OSError):
            (folder / name).unlink()
    with contextlib.suppress(OSError):  # not empty: something else lives there
        folder.rmdir()


def private_file(path: Path) -> Path:
    """Create ``path`` empty as a ``0600`` file unless it exists (then it is left alone).

    SQLite gives a database's ``-wal`` and ``-shm`` files the database file's mode, so a
    database created through this stays private with them.

    :returns: ``path``.
    :raises OSError: the file cannot be created.
    """
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
    except FileExistsError:
        return Path(path)
    os.close(fd)
    os.chmod(path, FILE_MODE)
    return Path(path)


def open_private(path: Path, mode: str = "w", encoding: str = "utf-8") -> TextIO:
    """Open ``path`` for writing text; a new file is created ``0600``.

    :param mode: ``"w"`` (truncate), ``"a"`` (append) or ``"x"`` (create; fails if it
        exists).
    :raises FileExistsError: ``mode`` is ``"x"`` and the file exists.
    :raises OSError: the file cannot be opened.
    """
    flags = os.O_WRONLY | os.O_CREAT | {"a": os.O_APPEND, "x": os.O_EXCL}.get(mode, os.O_TRUNC)
    return os.fdopen(os.open(path, flags, FILE_MODE), "a" if mode == "a" else "w",
                     encoding=encoding)


def exposed(folder: Path) -> str | None:
    """Say which of ``folder`` and the files directly in it other users can read, if any.

    :returns: one line (the first such path and its mode, and how many more), or ``None``.
    """
    try:
        paths = [Path(folder), *sorted(Path(folder).iterdir())]
    except OSError:
        return None
    found = [why for p in paths if (why := exposure(p)) is not None]
    if not found:
        return None
    return found[0] + (f"; {len(found) - 1} more in it" if len(found) > 1 else "")


def exposure(path: Path) -> str | None:
    """Say so when ``path`` (a folder or file) can be read by other users.

    :returns: e.g. ``"/home/me/.octomem is 0755: readable by other users (chmod 700 to
        make it private)"``, or ``None`` when it is private or missing.
    """
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        return None
    if not mode & 0o077:
        return None
    wanted = "700" if Path(path).is_dir() else "600"
    return (f"{path} is {mode:04o}: readable by other users (octomem leaves an existing "
            f"folder or file as it is; chmod {wanted} makes it private)")


def check_project_root(project_root: Path | str, served: bool = False) -> Path:
    """Return ``project_root`` resolved when it is an existing directory: a typo must not
    start a new, empty project's memory (nor a file be taken for one).

    A leading ``~`` is the home directory, as a shell would expand it (MCP clients' JSON
    configs pass it unexpanded); a relative path is taken from the working directory. The
    refusal says which of the two applied and the path it looked at (trial 20 L9: a bare
    "no such directory" for ``docproj`` and ``~/proj`` in a client config).

    :param served: the MCP server's root, whose working directory and environment the
        client chose (often ``/``): the refusal asks for an absolute path in its config.
    :raises UsageValueError: it is missing or not a directory (``--project-root PATH: no
        such directory (looked at ...)`` / ``not a directory``).
    """
    given = str(project_root)
    project = Path(project_root).expanduser().resolve()
    if not project.is_dir():
        why = "not a directory" if project.exists() else "no such directory"
        raise UsageValueError(f"--project-root {given}: {why}{_looked_at(given, project, served)}")
    return project


def _looked_at(given: str, project: Path, served: bool) -> str:
    """Return how ``given`` became ``project`` when it was not an absolute path."""
    expanded = Path(given).expanduser()
    if given.startswith("~") and expanded.is_absolute():
        whose = "of the environment the client started the server with" if served else "(HOME)"
        return (f" (looked at {project}: a leading ~ is expanded as a shell would, to the home "
                f"directory {whose}; give the absolute path if the project is elsewhere)")
    if expanded.is_absolute():
        return ""
    try:
        here = os.getcwd()
    except OSError:  # the working directory was deleted
        here = "a folder that no longer exists"
    hint = "; an MCP client chooses it, so give its configuration an absolute path" if served \
        else ""
    return (f" (looked at {project}: a relative path is taken from the working directory, "
            f"{here}{hint})")
