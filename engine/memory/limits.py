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
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from .. import labels
from ..errors import InvalidQueryError

#: Characters of a long input an answer shows (then "…").
PREVIEW_CHARS = 200
#: Items a message naming many (tags, kinds) lists before "and N more".
FEW = 5
#: Characters of each such item a message shows (then "…").
ITEM_CHARS = 40


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


def some(items: Iterable[str], joiner: str = ", ", few: int = FEW) -> str:
    """Return the first ``few`` of ``items`` (each cut to :data:`ITEM_CHARS`), joined, and
    how many more there are: ``"t0, t1, t2, t3, t4 and 19,995 more"``; a message naming
    many tags stays one short line."""
    listed = list(items)
    shown = joiner.join(preview(i, ITEM_CHARS) for i in listed[:few])
    return shown + (f" and {len(listed) - few:,} more" if len(listed) > few else "")


def _unlabel_like(tag: str) -> str | None:
    """Return what makes ``tag`` no label (a space, a control or invisible character), or
    ``None``. Unicode categories Z* and C* (``str.isprintable`` besides the space)."""
    for char in tag:
        if char.isspace():
            return "a space" if char == " " else f"the whitespace U+{ord(char):04X}"
        if not char.isprintable():
            return f"the control or invisible character U+{ord(char):04X}"
    return None


def _one_label(tag: str, argument: str, outcome: str) -> None:
    """Refuse a tag holding a comma: ``--tag billing,api`` meant two tags and was stored
    (or looked up) as the one tag ``billing,api`` (trial 17 G15). Each tag is given on
    its own: the repeatable ``--tag``, or one list item each over MCP.

    :raises InvalidQueryError: naming ``argument``, the tag and how to give two; ends
        with ``outcome``.
    """
    if "," in tag:
        parts = [preview(p.strip(), ITEM_CHARS) for p in tag.split(",") if p.strip()][:3]
        parts = parts if len(parts) > 1 else ["billing", "api"]
        raise InvalidQueryError(
            f"{argument}: tag {preview(tag, ITEM_CHARS)!r} holds a comma; give each tag on "
            f"its own: {' '.join(f'--tag {p}' for p in parts)} (MCP: a list, "
            f"[{', '.join(f'{chr(34)}{p}{chr(34)}' for p in parts)}]); {outcome}")


def tag_labels(tags: Any, argument: str = "tags") -> list[str]:
    """Return ``tags`` as octomem stores and filters them (:func:`label`), without repeats
    (order kept): what ``remember``, ``add``, ``search --tag`` and the MCP tools share.

    :raises InvalidQueryError: naming ``argument``: not a list of strings, or an empty tag.
    """
    if isinstance(tags, str) or not isinstance(tags, Sequence | Iterable):
        raise InvalidQueryError(
            f"{argument}: must be a list of labels, got {preview(repr(tags), 80)}")
    cleaned: dict[str, None] = {}
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidQueryError(
                f"{argument}: a tag must be text, got {preview(repr(tag), 80)}")
        if not tag.strip():
            raise InvalidQueryError(f"{argument}: a tag is empty; give short non-empty labels")
        cleaned[label(tag)] = None
    return list(cleaned)


def label(tag: str) -> str:
    """Return ``tag`` as octomem stores and filters it: stripped, in Unicode NFC, so that a
    label typed composed (``café``) and one sent decomposed (``cafe`` + U+0301, as macOS
    file names and some agents write it) are one tag (trial 14 F10; :mod:`..labels`)."""
    return labels.label(tag)


def check_tags(tags: Any, limits: Any, argument: str = "tags") -> tuple[str, ...]:
    """Return the tags a statement or document is to carry: stripped, without repeats.

    A tag is a label: one word or a few joined by ``-``/``_``/``.`` (no space, no comma,
    no control or invisible character, so it reads the same on every screen and splits the same in
    the browser view's comma- or space-separated filter), at most ``limits.tag_chars``
    characters, at most ``limits.tags`` of them. Only new input is checked: stored tags
    of any size still read and filter.

    :param limits: the ``limits`` settings (:class:`~octomem.engine.settings.LimitsSettings`).
    :raises InvalidQueryError: naming ``argument`` and the setting; ends ``nothing was
        stored``.
    """
    cleaned = tag_labels(tags, argument)
    check_length(len(cleaned), limits.tags, argument, "limits.tags", unit="tags")
    for tag in cleaned:
        named = f"{argument}: tag {preview(tag, ITEM_CHARS)!r}"
        check_length(len(tag), limits.tag_chars, named, "limits.tag_chars")
        _one_label(tag, argument, "nothing was stored")
        if (why := _unlabel_like(tag)) is not None:
            raise InvalidQueryError(
                f"{argument}: tag {preview(tag, ITEM_CHARS)!r} holds {why}; a tag is one label "
                "without spaces or control characters, e.g. billing-api; nothing was stored")
    return tuple(cleaned)


def refused_tags(tags: Sequence[str], limits: Any) -> str | None:
    """Say why :func:`check_tags` would refuse ``tags`` (the first reason), else ``None``:
    for a stored document's tags, which are kept as they are (an import of an export
    written before the label rule; trial 16)."""
    if len(tags) > limits.tags:
        return f"{len(tags):,} tags, more than limits.tags ({limits.tags:,})"
    for tag in tags:
        if not tag.strip():
            return "an empty tag"
        if len(tag) > limits.tag_chars:
            return (f"tag {preview(tag, ITEM_CHARS)!r} has {len(tag):,} characters, more "
                    f"than limits.tag_chars ({limits.tag_chars:,})")
        if (why := _unlabel_like(tag)) is not None:
            return f"tag {preview(tag, ITEM_CHARS)!r} holds {why}"
    return None


def check_filter(values: Sequence[str], limits: Any, argument: str) -> None:
    """Refuse a recall filter (``kinds`` or ``tags``) given as one string rather than a
    list, listing more than ``limits.filter_values`` values, a tag longer than
    ``limits.tag_chars`` (none stored since that limit can match it), or a tag holding a
    comma (two tags meant: :func:`_one_label`). Other characters are not checked: a tag
    stored before the label rule still filters.

    :raises InvalidQueryError: naming ``argument`` and the setting.
    """
    if isinstance(values, str):  # "FACT" would be read as the kinds F, A, C and T
        raise InvalidQueryError(f"{argument}: must be a list, got the string "
                                f"{preview(values, ITEM_CHARS)!r}; give [{values[:20]!r}]")
    check_length(len(values), limits.filter_values, argument, "limits.filter_values",
                 unit="values", write=False)
    if argument != "kinds":
        for tag in values:
            named = f"{argument}: tag {preview(tag, ITEM_CHARS)!r}"
            check_length(len(tag), limits.tag_chars, named, "limits.tag_chars", write=False)
            _one_label(tag, argument, "nothing was searched")


def check_top_k(top_k: Any, most: int | None = None) -> int | None:
    """Return ``top_k``, hits wanted in an answer (``None``: the configured
    ``retrieval.top_k``), as the CLI, the MCP ``recall`` tool and ``Memory.recall`` check it.

    :param most: the ceiling, ``limits.top_k``; ``None``: not checked here.
    :raises InvalidQueryError: naming ``top_k``: not a whole number, below 1 (0 is not
        "the default": trial 20 L8), or above ``most``.
    """
    if top_k is None:
        return None
    if isinstance(top_k, bool) or not isinstance(top_k, int):
        raise InvalidQueryError(f"top_k: must be a whole number, got {preview(repr(top_k), 40)}")
    if top_k < 1:
        raise InvalidQueryError(f"top_k: must be at least 1, got {top_k}")
    if most is not None and top_k > most:
        raise InvalidQueryError(f"top_k: {top_k:,} is more than limits.top_k ({most:,})")
    return top_k


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
