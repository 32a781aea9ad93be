"""Limits on what a caller sends, and where the MCP ``ingest`` tool may read.

Sizes are settings (``limits.*``, :class:`~octomem.engine.settings.LimitsSettings`); a
call past one is refused with one line naming the argument and the setting, before
anything is stored. Answers echo a short :func:`preview` of a long input, never all of
it. Paths the MCP ``ingest`` tool reads must lie, symbolic links resolved, inside the
project root or a folder of ``ingest.allowed_roots`` (:func:`confined`); the CLI, run by
the user, reads any path.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from ..errors import InvalidQueryError

#: Characters of a long input an answer shows (then "…").
PREVIEW_CHARS = 200


def preview(text: str, limit: int = PREVIEW_CHARS) -> str:
    """Return ``text``, cut to ``limit`` characters with "…" when longer."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_length(size: int, limit: int, argument: str, setting: str, unit: str = "characters",
                 hint: str = "", write: bool = True) -> None:
    """Refuse an input of ``size`` past ``limit``.

    :param setting: the limit's key (``limits.remember_chars``), named in the message.
    :param hint: what to do instead, appended (``"; ingest it as a document"``).
    :param write: the input was to be stored: the message ends ``; nothing was stored``
        (a search's query stores nothing, so it does not).
    :raises InvalidQueryError: ``argument: 100,000 characters, more than
        limits.remember_chars (20,000)...``.
    """
    if size > limit:
        raise InvalidQueryError(
            f"{argument}: {size:,} {unit}, more than {setting} ({limit:,}){hint}"
            + ("; nothing was stored" if write else ""))


def confined(path: Path, roots: Sequence[Path], argument: str = "path_or_text") -> Path:
    """Return ``path`` resolved if it lies inside one of ``roots`` (links resolved).

    :raises InvalidQueryError: naming the path and ``ingest.allowed_roots``.
    """
    resolved = path.resolve()
    for root in roots:
        if resolved.is_relative_to(Path(root).expanduser().resolve()):
            return resolved
    raise InvalidQueryError(
        f"{argument}: {path} is outside the project root and ingest.allowed_roots, so the MCP "
        f"ingest tool does not read it; {how_to_allow(path)}")


def how_to_allow(path: Path) -> str:
    """Return how the user (not the agent) lets the MCP ``ingest`` tool read ``path``: the
    exact line for the settings file under its ``[ingest]`` table (``path``'s folder: a
    file's parent), the environment variable, and the CLI (kept short: a tool error is cut
    at 500 characters)."""
    from ..settings import user_config_path

    resolved = path.expanduser().resolve()  # what must lie inside the allowed folder
    # a file's folder; a path that does not exist is a folder unless it has a suffix
    folder = (resolved if resolved.is_dir() or (not resolved.exists() and not resolved.suffix)
              else resolved.parent)
    value = json.dumps([str(folder)])
    return (f"to allow it, add `allowed_roots = {value}` under `[ingest]` in "
            f"{user_config_path()} (or that list in OCTOMEM_INGEST__ALLOWED_ROOTS) and restart "
            "the MCP server, or run `octomem ingest` on it yourself")
