"""The command line of every benchmark module run as ``python -m octomem.benchmarks.NAME``.

One parser shape for all of them: ``usage: python -m octomem.benchmarks.NAME ...`` (what
the user typed, not the file's name), the module docstring's first paragraph as the
description, and argument types that refuse a bad value before anything is measured or
written (``--rounds 0``, a dataset folder that does not exist): argparse prints
``usage`` and one ``error:`` line naming the argument and exits with status 2. An error
met while measuring (a store octomem cannot read, a file that vanished) is one line
on stderr and status 1 (:func:`run_main`), never a traceback.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["at_least", "beir_folder", "existing_dir", "existing_file", "bench_parser",
           "collect_command", "collected", "fit_commands", "run_main"]


def bench_parser(module: str, doc: str | None, **kwargs: Any) -> argparse.ArgumentParser:
    """Return the parser of ``octomem.benchmarks.<module>``.

    :param module: the module's ``__name__`` (``octomem.benchmarks.cli_search``), or its
        last part.
    :param doc: the module's docstring; its first paragraph is the description.
    """
    name = module.rsplit(".", 1)[-1]
    description = (doc or "").strip().split("\n\n", 1)[0].replace("\n", " ")
    kwargs.setdefault("description", description or None)
    return argparse.ArgumentParser(prog=f"python -m octomem.benchmarks.{name}", **kwargs)


def at_least(minimum: int) -> Callable[[str], int]:
    """Return an argparse type: an integer ``>= minimum``.

    :raises argparse.ArgumentTypeError: (from the returned callable) not an integer, or
        smaller than ``minimum``; argparse names the argument.
    """
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"integer >= {minimum}"
    return parse


def existing_dir(text: str) -> Path:
    """Argparse type: a folder that exists.

    :raises argparse.ArgumentTypeError: it does not exist or is not a folder.
    """
    path = Path(text).expanduser()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(
            f"{path}: {'not a folder' if path.exists() else 'no such folder'}")
    return path


def existing_file(text: str) -> Path:
    """Argparse type: a file that exists.

    :raises argparse.ArgumentTypeError: it does not exist or is a folder.
    """
    path = Path(text).expanduser()
    if not path.is_file():
        raise argparse.ArgumentTypeError(
            f"{path}: {'a folder, not a file' if path.is_dir() else 'no such file'}")
    return path


def beir_folder(text: str) -> Path:
    """Argparse type: a BEIR folder (``corpus.jsonl`` and ``queries.jsonl`` in it).

    :raises argparse.ArgumentTypeError: the folder or one of the two files is missing.
    """
    path = existing_dir(text)
    missing = [f for f in ("corpus.jsonl", "queries.jsonl") if not (path / f).is_file()]
    if missing:
        raise argparse.ArgumentTypeError(
            f"{path}: no {' or '.join(missing)}; a BEIR folder holds corpus.jsonl, "
            "queries.jsonl and qrels/<split>.tsv")
    return path


def collect_command(sub: Any, split: str = "train") -> argparse.ArgumentParser:
    """Add the ``collect CACHE_ROOT DATASET [--split S] --out FILE`` command of the scripts
    that ask a document set's queries (``benchmarks/fit_relevance.py``,
    ``benchmarks/abstention_ceiling.py``) to ``sub`` (``add_subparsers()``'s result).

    :param split: the default ``--split``.
    :returns: the sub-parser.
    """
    collect = sub.add_parser("collect")
    collect.add_argument("cache_root", type=Path)
    collect.add_argument("dataset", type=beir_folder, help="a BEIR folder")
    collect.add_argument("--split", default=split)
    collect.add_argument("--out", type=Path, required=True)
    return collect


def collected(args: argparse.Namespace, collect: Callable[[Path, Path, str], Any],
              count: Callable[[Any], str]) -> Any | None:
    """Run the ``collect`` command of :func:`collect_command` or read what it wrote.

    For ``collect``: call ``collect(cache_root, dataset, split)``, pickle its result to
    ``--out``, print ``<count(result)> -> <out>`` and return ``None``. For the script's
    other command: return the unpickled file given as ``args.collected``.
    """
    if args.command == "collect":
        data = collect(args.cache_root, args.dataset, args.split)
        args.out.write_bytes(pickle.dumps(data))
        print(f"{count(data)} -> {args.out}")
        return None
    return pickle.loads(args.collected.read_bytes())


def fit_commands(
    parser: argparse.ArgumentParser, write_help: str,
) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """Add the ``collect`` and ``fit`` commands the fitting scripts share
    (``benchmarks/fit_ranking.py``, ``benchmarks/fit_turn_relevance.py``).

    ``collect CACHE_ROOT DATASET --group-by FIELD --out FILE [--split S] [--only G,...]``
    asks one tune set's questions; ``fit COLLECTED... [--write]`` fits on what
    ``collect`` wrote.

    :param write_help: what ``fit --write`` writes.
    :returns: the two sub-parsers, for a script's own extra options.
    """
    sub = parser.add_subparsers(dest="command", required=True)
    collect = sub.add_parser("collect")
    collect.add_argument("cache_root", type=Path)
    collect.add_argument("dataset", type=beir_folder, help="a BEIR folder")
    collect.add_argument("--split", default="test")
    collect.add_argument("--group-by", required=True)
    collect.add_argument("--only", default="",
                         help="comma-separated groups (LoCoMo's tune half)")
    collect.add_argument("--out", type=Path, required=True)
    fit = sub.add_parser("fit")
    fit.add_argument("collected", type=existing_file, nargs="+",
                     help="the files `collect` wrote, one per tune set")
    fit.add_argument("--write", action="store_true", help=write_help)
    return collect, fit


def run_main(main: Callable[[], Any], prog: str) -> None:
    """Call ``main`` and exit with its status; an error it meets is one line, status 1.

    :param main: the module's ``main`` (parses ``sys.argv`` itself).
    :param prog: the name the error line starts with (the parser's ``prog``).
    """
    from octomem.engine.errors import OctomemError

    try:
        status = main()
    except (OctomemError, OSError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        sys.exit(130)
    sys.exit(status if isinstance(status, int) else 0)
