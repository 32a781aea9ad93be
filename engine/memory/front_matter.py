"""A Markdown file's front matter: the YAML block between ``---`` lines at its top, as
Jekyll, Hugo and Obsidian write it (trial 16 F23: it was indexed as body text, and its
title and tags were not used).

::

    ---
    title: Incident 42 postmortem
    tags: [incident, db]
    date: 2026-10-02
    ---
    # body ...

Of its keys, octomem reads ``title`` (the document's title, instead of the first ``#``
heading or the file name), ``tags`` (a list, or one string of labels parted by commas or
spaces; a leading ``#``, as Obsidian writes tags in text, is dropped; each checked as
every tag is: :func:`~.limits.check_tags`) and ``date`` (the document's event time,
when what it tells happened; an ISO-8601 date or time). The block is not part of the
stored text: it is neither indexed nor shown. Other keys are left out. A block whose YAML
is not a mapping, or none of whose keys is one word (``Note under a rule: ...`` between
two ``---`` rules is prose), is no front matter: the file is read whole as text, as before.
A block that is not YAML at all but opens a line with a one-word key (``title: "A
"quoted" word"``, a common typo) is broken front matter, refused with the file and line
as a bad tag is (trial 19 K2: it was stored as the text, its title, tags and date lost
without a word).

The YAML is read with PyYAML's ``safe_load`` (plain data only: no tags that build
objects).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import InvalidQueryError
from ..types import Document
from .limits import check_tags
from .times import parse_time

#: The opening line and, up to the first closing ``---`` or ``...`` line, the block.
_BLOCK = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.S)
#: A line that opens with a one-word key: what makes a block that is not YAML front matter.
_KEY_LINE = re.compile(r"^[A-Za-z_][\w.-]*:(?:[ \t]|$)", re.M)


def split_front_matter(text: str, where: str) -> tuple[dict[str, Any] | None, str]:
    """Return ``(front matter, the rest of text)``; ``(None, text)`` when ``text`` does not
    begin with a front matter block (or its YAML is not a mapping).

    :param text: a file's text, its line ends already ``\\n``.
    :param where: what names the file in an error (``notes/pm.md``).
    :raises InvalidQueryError: the block is not YAML but holds ``key:`` lines (broken
        front matter), naming ``where``, the line in the file and PyYAML's problem.
    """
    found = _BLOCK.match(text)
    if found is None:
        return None, text
    import yaml  # only for a file that starts with "---"

    block = found.group(1) or ""
    try:
        matter = yaml.load(block, Loader=_loader(yaml))
    except yaml.YAMLError as exc:
        if not _KEY_LINE.search(block):
            return None, text  # not YAML, and no key in sight: text under a rule
        mark = getattr(exc, "problem_mark", None)
        line = f":{mark.line + 2}" if mark is not None else ""  # the block starts on line 2
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InvalidQueryError(
            f"{where}{line}: front matter is not valid YAML ({problem}); fix the block "
            "between the --- lines (quote a value holding quotes or a colon with the "
            "other kind of quote), or remove it") from None
    if matter is None:
        matter = {}  # an empty block ("---\n---") is front matter with nothing in it
    if not isinstance(matter, dict) or (matter and not any(
            isinstance(k, str) and k and not any(c.isspace() for c in k) for k in matter)):
        return None, text  # "---\nNote under a rule: ...\n---" is prose, not keys
    return {str(k): v for k, v in matter.items()}, text[found.end():]


@cache
def _loader(yaml: Any) -> type:
    """Return PyYAML's safe loader (its C one when built) reading timestamps as text.

    PyYAML builds a ``date`` of every ``YYYY-MM-DD`` scalar and raises ``ValueError``
    (no ``YAMLError``) for an impossible one (``date: 2024-02-30``): one note's typo ended
    a whole folder's ingest with a traceback (trial 18 H5). As text, a date is checked by
    :func:`front_matter_time`, whose error names the file.
    """
    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = type("FrontMatterLoader", (base,), {})
    loader.add_constructor("tag:yaml.org,2002:timestamp",
                           lambda self, node: self.construct_scalar(node))
    return loader


def front_matter_title(matter: dict[str, Any]) -> str | None:
    """Return the front matter's ``title`` as one line, or ``None`` when it has none."""
    title = matter.get("title")
    if title is None or isinstance(title, dict | list):
        return None
    line = " ".join(str(title).split())
    return line or None


def front_matter_tags(matter: dict[str, Any], limits: Any, where: str) -> tuple[str, ...]:
    """Return the front matter's ``tags`` checked as every tag is.

    :param limits: the ``limits`` settings (``limits.tags``, ``limits.tag_chars``).
    :param where: what names the file in an error (``notes/pm.md``).
    :raises InvalidQueryError: a tag that is no label (a space inside, too long, too
        many), naming ``where``.
    """
    raw = matter.get("tags")
    if raw is None:
        return ()
    if isinstance(raw, str):
        raw = [t for t in re.split(r"[,\s]+", raw) if t]
    elif not isinstance(raw, list):
        raw = [raw]
    labels = [str(t).strip().removeprefix("#") for t in raw if t is not None]
    return check_tags([t for t in labels if t], limits, f"{where}: front matter tags")


def front_matter_time(matter: dict[str, Any], where: str) -> float | None:
    """Return the front matter's ``date`` as epoch seconds (a date alone: its first moment,
    UTC), or ``None`` when it has none.

    :raises InvalidQueryError: a date that is no ISO-8601 date or time, naming ``where``.
    """
    value = matter.get("date")
    if value is None:
        return None
    if isinstance(value, datetime):
        value = value if value.tzinfo else value.replace(tzinfo=UTC)
        value = value.isoformat()
    elif isinstance(value, date):
        value = value.isoformat()
    elif not isinstance(value, str):
        raise InvalidQueryError(f"{where}: front matter date: {value!r:.80} is not an ISO-8601 "
                                "date or time; use e.g. 2025-03-01")
    return parse_time(value, f"{where}: front matter date")


def with_front_matter(doc: Document, path: Path, title_of: Callable[[str], str],
                      limits: Any = None) -> Document:
    """Return ``doc`` (a Markdown file's) with its front matter read into title, tags and
    event time and left out of its text; ``doc`` itself when the file has none.

    :param title_of: the title of a text without one in its front matter (its first
        ``#`` heading, else the file's name).
    :param limits: the ``limits`` settings the tags are checked against (defaults: the
        settings' defaults).
    :raises InvalidQueryError: a tag that is no label, a date that is no ISO-8601 date,
        or a block that is not YAML, naming ``path``.
    """
    matter, body = split_front_matter(doc.text, str(path))
    if matter is None:
        return doc
    if limits is None:
        from ..settings_schema import LimitsSettings

        limits = LimitsSettings()
    return replace(doc, text=body, title=front_matter_title(matter) or title_of(body),
                   tags=front_matter_tags(matter, limits, str(path)),
                   event_time=front_matter_time(matter, str(path)))
