"""A plain ``octomem search`` command line, read without typer.

Importing typer (with its vendored click) and building the ``search`` command from its
signature was ~14 % of the calling thread's CPU in a fresh search at 100k chunks (issue
15; ``benchmarks/results/startup/cli-search.md``). A search's command line is read here
when it is *plain*: global options (``--config``, ``--set``, ``--data-dir``,
``--project-root``, ``--global-root``, ``--debug``), then ``search``, then its options
and one query, each option as ``--name value``, ``--name=value`` or ``-k N``, every value
one typer would take as is. Anything else (``--help``, ``--version``, an unknown or
repeated option, a missing or bad value, a value starting with ``-``, ``--``, a second
query, text that is not UTF-8, shell completion) returns ``None`` and typer reads the
command line, so its messages and statuses stay exactly its own. A plain command line
gives the command the very values typer would.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: The group's options that take a value: option -> (keyword of
#: :func:`.context.apply_globals`, kind of value); ``--set`` repeats.
GLOBAL_VALUES = {"--config": ("config", "path"), "--set": ("set_", "list"),
                 "--data-dir": ("data_dir", "path"), "--project-root": ("project_root", "path"),
                 "--global-root": ("global_root", "path")}
#: The group's flags: option -> keyword.
GLOBAL_FLAGS = {"--debug": "debug"}
#: ``search``'s options that take a value: option -> (keyword of
#: :func:`.searching.run_search`, kind); ``-k`` is ``--top-k``.
SEARCH_VALUES = {"--top-k": ("top_k", "count"), "-k": ("top_k", "count"),
                 "--kind": ("kind", "list"), "--tag": ("tag", "list"),
                 "--scope": ("scope", "text"), "--since": ("since", "text"),
                 "--until": ("until", "text"), "--as-of": ("as_of", "text"),
                 "--per": ("per", "text"), "--context": ("context", "int"),
                 "--max-tokens": ("max_tokens", "int")}
#: ``search``'s flags: option -> keyword.
SEARCH_FLAGS = {"--explain": "explain", "--json": "as_json", "--include-superseded": "history"}
#: ``search``'s defaults (its typer signature's).
SEARCH_DEFAULTS: dict[str, Any] = {
    "top_k": None, "explain": False, "as_json": False, "kind": None, "tag": None,
    "scope": None, "since": None, "until": None, "as_of": None, "history": False,
    "per": "chunk", "context": 0, "max_tokens": None}
GLOBAL_DEFAULTS: dict[str, Any] = {
    "config": None, "set_": None, "data_dir": None, "project_root": None,
    "global_root": None, "debug": False}
#: A whole number as typed (no sign, no spaces, no underscores: typer reads those too,
#: but then typer reads the line).
_DIGITS = re.compile(r"[0-9]+")
#: The environment variable of shell completion (:data:`octomem.engine.cli.COMPLETE_VAR`).
_COMPLETE_VAR = "_OCTOMEM_COMPLETE"


@dataclass(frozen=True, slots=True)
class PlainSearch:
    """A plain search's command line: keywords of :func:`.context.apply_globals` and of
    :func:`.searching.run_search`."""

    group: dict[str, Any]
    search: dict[str, Any]


def parse_search(args: list[str]) -> PlainSearch | None:
    """Read ``args`` (``sys.argv[1:]``) when they are a plain search; ``None`` otherwise
    (typer reads them then)."""
    if _COMPLETE_VAR in os.environ or not _utf8(args):
        return None
    try:
        at = args.index("search")
    except ValueError:
        return None
    found = _options(args[:at], GLOBAL_VALUES, GLOBAL_FLAGS, positional=False)
    if found is None:
        return None
    group, _ = found
    found = _options(args[at + 1:], SEARCH_VALUES, SEARCH_FLAGS, positional=True)
    if found is None:
        return None
    search, query = found
    if len(query) != 1:
        return None
    if search.get("top_k") is not None and search["top_k"] < 1:  # typer's error, then
        return None
    return PlainSearch({**GLOBAL_DEFAULTS, **group},
                       {**SEARCH_DEFAULTS, **search, "query": query[0]})


def _options(args: list[str], values: dict[str, tuple[str, str]], flags: dict[str, str],
             positional: bool) -> tuple[dict[str, Any], list[str]] | None:
    """Read ``args`` as options (and, with ``positional``, bare arguments); ``None`` at
    anything that is not plain."""
    out: dict[str, Any] = {}
    seen: set[str] = set()
    bare: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if not arg.startswith("-"):
            if not positional or not arg:
                return None
            bare.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in flags and not eq:
            key = flags[name]
            if key in seen:
                return None
            seen.add(key)
            out[key] = True
            continue
        if name not in values:
            return None
        if not eq:
            if i == len(args):
                return None
            value = args[i]
            i += 1
        key, kind = values[name]
        read = _value(value, kind)
        if read is None or (key in seen and kind != "list"):
            return None
        seen.add(key)
        out[key] = [*out.get(key, []), read] if kind == "list" else read
    return out, bare


def _value(value: str, kind: str) -> Any:
    """Return ``value`` as the option's typer would pass it; ``None`` when typer should
    read it (empty, starting with ``-``, not a plain whole number)."""
    if not value or value.startswith("-"):
        return None
    if kind in ("count", "int"):
        return int(value) if _DIGITS.fullmatch(value) else None
    return Path(value) if kind == "path" else value


def _utf8(args: list[str]) -> bool:
    """Whether every argument is UTF-8 text (else typer's path says which is not)."""
    try:
        for arg in args:
            arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
