"""Which project a command serves when ``--project-root`` is not given: the nearest folder,
from the current one upward, that holds ``.octomem/``, as git finds its repository; with
none, the nearest that holds ``.git`` (the repository's top folder); else the current one.

Run from ``proj/notes/``, a command uses ``proj/.octomem/`` when it exists, rather than a new,
empty local scope in ``proj/notes/`` (trial 11: a search there answered "nothing stored", and
an ``add`` there would have started a second memory). In a git repository without a memory
yet, the first write from ``repo/src/deep/`` creates ``repo/.octomem/``, where later writes
from the repository's top find it too (trial 17 G5: it created ``repo/src/deep/.octomem/``,
and a write from ``repo/`` then started a second memory). ``.git`` may be a folder or, in a
worktree or submodule, a file. Outside a repository, with no ``.octomem/`` above, the
current folder is the project: its ``.octomem/`` is created by the first write.

The search does not go above the home directory: ``~/.octomem/`` is the local scope of a
command run in ``~`` itself, never of every folder under it (an ``add`` run once in ``~``
would otherwise become the memory of all the user's projects; the account-wide memory is the
global scope), and a home folder kept in git (dotfiles) is not every folder's repository.
Outside the home directory it goes up to the file system's root.
"""

from __future__ import annotations

from pathlib import Path

#: The folder inside a project that holds its local memory and its ``config.toml``.
PROJECT_DIR = ".octomem"
#: What marks a git repository's top folder (a folder, or a file in a worktree/submodule).
GIT_MARKER = ".git"


def _home() -> Path | None:
    try:
        return Path.home().resolve()
    except (RuntimeError, OSError):  # no HOME and no passwd entry
        return None


def find_project_root(start: Path | None = None) -> Path:
    """Return the nearest folder from ``start`` upward that holds a ``.octomem/`` folder,
    else the nearest that holds ``.git``, else ``start`` itself.

    :param start: where to begin (default: the current directory); resolved.
    :returns: an absolute path; ``start`` when neither it nor a folder above it (below the
        home directory, see the module docstring) holds ``.octomem/`` or ``.git``.
    """
    here = Path(start if start is not None else Path.cwd()).expanduser().resolve()
    home = _home()
    repository: Path | None = None
    for folder in (here, *here.parents):
        if folder == home and folder != here:
            break  # ~/.octomem/ is not every home folder's project
        try:
            if (folder / PROJECT_DIR).is_dir():
                return folder
            if repository is None and (folder / GIT_MARKER).exists():
                repository = folder
        except OSError:  # an unreadable folder on the way up: look no further
            break
    return repository or here


def found_by(project: Path) -> str:
    """Return what made ``project`` the project: ``".octomem/"`` or ``".git"`` (what
    :func:`find_project_root` stopped at)."""
    return f"{PROJECT_DIR}/" if (project / PROJECT_DIR).is_dir() else GIT_MARKER


def project_config_path(project_root: Path) -> Path:
    """Return ``<project_root>/.octomem/config.toml``."""
    return project_root / PROJECT_DIR / "config.toml"
