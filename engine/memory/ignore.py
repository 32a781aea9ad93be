"""Which files a folder ingest leaves out, the way git and ripgrep do.

Inside a folder given to ``ingest`` (never a file named itself):

- hidden files and folders (``.git/``, ``.venv/``, ``.env``) are never read;
- the folders tools fill with other people's files, :data:`TOOL_FOLDERS` (``node_modules/``,
  ``__pycache__/``, ...), and any folder holding ``pyvenv.cfg`` (a Python virtual
  environment, whatever its name) are left out;
- a Claude Code session's companion folder, ``<session id>/`` beside
  ``<session id>.jsonl`` when that file is a Claude Code session: Claude Code keeps the
  session's saved tool outputs (``tool-results/*.txt``) and sub-agents' sessions there,
  which are not the conversation (trial 18 H9: 3,000 log lines of one tool output were
  stored as 453 chunks that outranked the conversation);
- what the ``.gitignore`` and ``.octomemignore`` files say (gitignore syntax, read with the
  ``pathspec`` library's :class:`pathspec.GitIgnoreSpec`) is left out: those in the folder
  and below it, and those above it up to the nearest folder holding ``.git`` or
  ``.octomem`` (the top of the repository or project). A deeper file wins over a shallower
  one and ``.octomemignore`` over the ``.gitignore`` beside it, so ``!node_modules/`` in
  ``.octomemignore`` reads a tool folder after all. Git's global excludes file and
  ``.git/info/exclude`` are not read.

``ingest --include-ignored`` reads what the last three leave out (not hidden files). Before this,
``ingest .`` in a JavaScript project stored every vendored README under ``node_modules/``
(trial 11).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..exhaustion import RAN_OUT
from .transcripts import sniff

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

#: Folders left out wherever they are: packages and caches that tools write.
TOOL_FOLDERS = ("node_modules", "bower_components", "__pycache__", "site-packages")
#: The files whose gitignore-style patterns a folder ingest honours, lowest precedence first.
IGNORE_FILES = (".gitignore", ".octomemignore")
#: Folders that mark the top of a repository or project: ignore files above it do not apply.
TOP_MARKERS = (".git", ".octomem")


@dataclass(frozen=True, slots=True)
class Rules:
    """One ignore file: the walked folder its patterns are matched under, where that folder
    lies below the ignore file's own (``Path(".")``: the same), the file and its patterns."""

    folder: Path
    offset: Path
    source: str
    spec: GitIgnoreSpec

    def verdict(self, path: Path, is_dir: bool) -> bool | None:
        """Return True (left out), False (read: a ``!`` pattern) or None (not named)."""
        rel = (self.offset / path.relative_to(self.folder)).as_posix()
        return self.spec.check_file(rel + ("/" if is_dir else "")).include


def _read_rules(folder: Path, walked: Path | None = None) -> list[Rules]:
    """Read ``folder``'s ignore files; their patterns are matched under ``walked`` (default:
    ``folder``), a folder below it, as the walk names it."""
    found = []
    for name in IGNORE_FILES:
        file = folder / name
        try:
            if not file.is_file():
                continue
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:  # unreadable: as if it were not there
            continue
        from pathspec import GitIgnoreSpec  # only for a folder that has such a file

        offset = Path(".") if walked is None else walked.resolve().relative_to(folder)
        found.append(Rules(walked or folder, offset, str(file), GitIgnoreSpec.from_lines(lines)))
    return found


def _above(folder: Path) -> list[Rules]:
    """The ignore files of the folders above ``folder`` up to the top of its repository or
    project (shallowest first); none when no folder above is such a top."""
    def top(path: Path) -> bool:
        return any((path / m).is_dir() for m in TOP_MARKERS)

    if top(folder):
        return []
    chain: list[Path] = []
    for parent in folder.resolve().parents:
        chain.append(parent)
        if top(parent):
            return [r for p in reversed(chain) for r in _read_rules(p, folder)]
    return []


def _why_left_out(path: Path, is_dir: bool, rules: list[Rules]) -> str | None:
    """Return why ``path`` is left out (the rule's source), or ``None`` to read it."""
    why: str | None = None
    if is_dir and (path.name in TOOL_FOLDERS or _is_file(path / "pyvenv.cfg")):
        why = "a tool's folder" if path.name in TOOL_FOLDERS else "a virtual environment"
    elif is_dir and _claude_companion(path):
        why = f"Claude Code's folder of {path.name}.jsonl (saved tool outputs, sub-agents)"
    for rule in rules:  # shallowest first: the deepest file that names it wins
        verdict = rule.verdict(path, is_dir)
        if verdict is not None:
            why = rule.source if verdict else None
    return why


def _claude_companion(folder: Path) -> bool:
    """Whether ``folder`` is the companion folder of a Claude Code session beside it."""
    session = folder.with_name(folder.name + ".jsonl")
    try:
        return _is_file(session) and sniff(session) == "claude-code"
    except OSError:  # the session cannot be read: its folder is read as any other
        return False


def _is_file(path: Path) -> bool:
    """``path.is_file()``, False when its folder cannot be searched (Python 3.11 raises)."""
    try:
        return path.is_file()
    except OSError:
        return False


def walk(folder: Path, honour: bool = True,
         left_out: list[tuple[Path, str]] | None = None,
         unreadable: list[tuple[Path, str]] | None = None) -> Iterator[Path]:
    """Yield the files under ``folder`` that an ingest reads, sorted, folders first
    pruned (see the module docstring).

    :param honour: apply the tool folders and the ignore files (``False``: ``--include-ignored``);
        hidden files and folders are skipped either way.
    :param left_out: when given, receives ``(path, why)`` for each folder and file left out
        by a rule (not the hidden ones, not what is inside a folder left out).
    :param unreadable: when given, receives ``(folder, why)`` for each folder that cannot
        be listed (``Permission denied``): nothing under it is read, the rest is.
    """
    root = Path(folder)
    rules_of: dict[Path, list[Rules]] = {root: (_above(root) + _read_rules(root)) if honour
                                         else []}
    def cannot_list(exc: OSError) -> None:
        if exc.errno in RAN_OUT:  # out of descriptors or memory: the call fails, said so
            raise exc
        if unreadable is not None:
            unreadable.append((Path(exc.filename), exc.strerror or str(exc)))

    for dirpath, dirnames, filenames in os.walk(root, onerror=cannot_list):
        here = Path(dirpath)
        rules = rules_of.pop(here, [])
        kept = []
        for name in sorted(d for d in dirnames if not d.startswith(".")):
            why = _why_left_out(here / name, True, rules) if honour else None
            if why is None:
                kept.append(name)
                rules_of[here / name] = rules + _read_rules(here / name) if honour else []
            elif left_out is not None:
                left_out.append((here / name, why))
        dirnames[:] = kept
        for name in sorted(f for f in filenames if not f.startswith(".")):
            why = _why_left_out(here / name, False, rules) if honour and rules else None
            if why is None:
                yield here / name
            elif left_out is not None:
                left_out.append((here / name, why))
