"""The console entry point: run the typer app and turn every failure into one line.

- A usage error (unknown option or command, missing argument, bad value) is one line on
  stderr naming what was wrong and pointing to the command's ``--help``, exit status 2
  (click's own status for usage errors), instead of typer's multi-line box.
- An octomem or file-system error is one line, exit status 1 (``--debug``: the traceback).
- Ctrl-C ends with status 130 (128 + SIGINT, the shell's convention); a command that
  can say what it left done says so first (``ingest``); before the command started (its
  modules loading, its command line read), :data:`.NOT_STARTED` says nothing was done
  (never a traceback).
- Output to a pipe whose reader went away (``octomem search x | head -1``) ends quietly
  with status 141 (128 + SIGPIPE, :data:`.layout.PIPE_CLOSED_STATUS`).
- The process ends without the interpreter's teardown (:func:`end_without_teardown`).

Only rich is imported here, typer when the command line is not a plain search's
(:mod:`.quick` reads those without it): the entry point stays light.
"""

from __future__ import annotations

import atexit
import os
import re
import sys
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ..errors import InvalidQueryError, OctomemError, UsageValueError
from . import NOT_STARTED
from .layout import PIPE_CLOSED_STATUS, SafeConsole, flush_stdout, pipe_closed

if TYPE_CHECKING:
    from ..memory.facade import Memory

#: Exit status of a usage error (click's ``UsageError.exit_code``).
USAGE_STATUS = 2
#: Exit status after Ctrl-C in a command (128 + SIGINT; :data:`.options.INTERRUPTED`).
INTERRUPTED_STATUS = 130


def click_exception() -> type[Exception]:
    """Return click's base error, found through typer's public ``BadParameter`` (typer 0.29
    vendors click as ``typer._click``; older typers use click itself)."""
    import typer

    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException")


def not_utf8(args: list[str]) -> str | None:
    """Return the first of ``args`` that holds bytes that are not UTF-8 (Python keeps them
    as lone surrogates, which no text octomem stores or prints may hold), escaped for
    printing (``caf\\xe9``); ``None`` when every one is UTF-8."""
    for arg in args:
        try:
            arg.encode("utf-8")
        except UnicodeEncodeError:
            return os.fsencode(arg).decode("utf-8", "backslashreplace")
    return None


#: Options whose value is a path: an empty one would be the current folder (trial 15 F6:
#: ``--global-root ""`` put the global memory in whatever folder the command ran in).
PATH_OPTIONS = ("--data-dir", "--global-root", "--project-root", "--config")


def empty_path(args: list[str]) -> str | None:
    """Return the first of :data:`PATH_OPTIONS` given an empty or blank value in ``args``
    (``--data-dir ""``, ``--data-dir=``), else ``None``. Arguments after ``--`` are
    values, not options."""
    for i, arg in enumerate(args):
        if arg == "--":
            return None
        name, eq, value = arg.partition("=")
        if name in PATH_OPTIONS:
            given = value if eq else (args[i + 1] if i + 1 < len(args) else None)
            if given is not None and not given.strip():
                return name
    return None


def not_utf8_advice(args: list[str]) -> str:
    """Return what to do about the first argument :func:`not_utf8` finds: a path that
    exists (a file whose name is not UTF-8) is to be renamed; anything else (a query or a
    statement typed in a terminal that sends Latin-1 or another legacy encoding) is to be
    typed in a UTF-8 terminal. Trial 14 F15: a query was told to rename a file."""
    raw = next(a for a in args if not_utf8([a]) is not None)
    if os.path.lexists(raw):  # Python keeps the bytes as surrogates: the same file
        return "a file whose name is not UTF-8: rename it"
    return ("the terminal sent it in another encoding, e.g. Latin-1: set the terminal or "
            "LANG to UTF-8; a file whose name is not UTF-8: rename it")


def usage_line(exc: Any) -> str:
    """Return a click error as one line: ``error: MESSAGE; see `octomem CMD --help```.

    :param exc: the error click raised while parsing the command line.
    """
    message = " ".join(exc.format_message().split()).rstrip(".")
    if message[1:2].islower():  # click's "No such option: -x", as octomem's own lowercase
        message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    if ctx is not None and type(exc).__name__ == "NoSuchOption" and any(
            type(p).__name__ == "TyperArgument" or p.param_type_name == "argument"
            for p in ctx.command.params):  # `search "-rollback"` (trial 16 F23)
        import shlex

        given = next((a for a in sys.argv[1:] if a.startswith(exc.option_name)),
                     exc.option_name)
        message += (f"; text that starts with '-' goes after `--` (`{ctx.command_path} -- "
                    f"{shlex.quote(given)}`)")
    if ctx is not None and ctx.command.get_help_option(ctx) is not None:
        joint = " See" if message.endswith("?") else "; see"  # "Did you mean 'search'?"
        return f"error: {message}{joint} `{ctx.command_path} --help`"
    return f"error: {message}"


#: The engine names a bad argument by its field (the MCP tools' argument names); on the
#: command line the same value came from an option, or from an argument (named as in the
#: usage line: ``octomem search [OPTIONS] QUERY``).
OPTION_OF_FIELD = {"top_k": "--top-k", "scope": "--scope", "as_of": "--as-of",
                   "since": "--since", "until": "--until", "kinds": "--kind", "kind": "--kind",
                   "tags": "--tag", "max_tokens": "--max-tokens", "context": "--context",
                   "per": "--per", "event_time": "--event-time", "supersedes": "--supersedes",
                   "query": "QUERY", "text": "TEXT", "text_or_id": "ID_OR_TEXT"}


def as_option(message: str) -> str:
    """Rename a leading ``field:`` of an engine error to the option or argument the value
    came from (``top_k: 5,000 is more than ...`` -> ``--top-k: 5,000 is more than ...``)."""
    field, sep, rest = message.partition(": ")
    return f"{OPTION_OF_FIELD[field]}: {rest}" if sep and field in OPTION_OF_FIELD else message


def names_a_usage(message: str) -> bool:
    """Whether a message from :func:`as_option` names an option or argument (a usage
    error, status 2) rather than something the command met (status 1)."""
    return message.partition(": ")[0] in OPTION_OF_FIELD.values()


#: The status :func:`end_without_teardown` ends the process with: 1 until :func:`main`
#: knows better (an exception escaping with ``--debug`` is a failure, as Python's own).
exit_status = 1


def end_without_teardown() -> None:
    """Flush the output and the log handlers, then end the process with :data:`exit_status`,
    skipping the interpreter's teardown.

    Registered with :mod:`atexit` before the command runs (when the console script owns
    the process: :func:`owns_the_process`), so it runs after the
    interpreter has joined every non-daemon thread (a snapshot being written finishes)
    and after every exit handler registered later. What it skips is the collection of
    every object and module: after a search at 100k chunks (the model, the in-RAM
    copies) that took 0.6-1.7 s of wall time at load 5-6 on 2 cores
    (``benchmarks/results/startup/cli-search.md``), the same teardown the MCP server
    skips (``octomem.mcp_server.process``). Nothing is lost: every write is its own
    committed SQLite transaction, and the memory is closed by the command.
    """
    if "logging" in sys.modules:  # flush its handlers, as the interpreter's exit would
        sys.modules["logging"].shutdown()
    status = exit_status
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away before the output's end
            if stream is sys.stdout and status == 0:  # cut short: no success (trial 16 F13)
                status = PIPE_CLOSED_STATUS
        except (OSError, ValueError):  # a closed pipe: nothing left to say
            pass
    os._exit(status)


#: Set by :func:`main` when the process ends without teardown; what :func:`keep_until_exit`
#: was given is then referenced until :func:`end_without_teardown` ends the process.
ends_without_teardown = False
_kept: list[object] = []


def keep_until_exit(obj: object) -> None:
    """Keep ``obj`` referenced until the process ends, when it ends without teardown.

    A command's memory is closed before the process ends (recall counts written,
    connections closed); freeing its pipelines afterwards only returns memory the exit
    returns anyway, and at 100k chunks it is not free: unmapping the vectors (150 MB)
    and dropping the model's session took 114-155 ms of wall time (33-43 ms of CPU) at
    load 8.7 on 2 cores, against 21-30 ms for the close without it
    (``benchmarks/results/startup/cli-search.md``, fourth round). In a process that
    keeps running (a test harness calling :func:`main`), nothing is kept.
    """
    if ends_without_teardown:
        _kept.append(obj)


def close_memory(memory: Memory) -> None:
    """Close a command's ``memory``; its pipelines (in-RAM copies, the model) are kept
    until the process ends (:func:`keep_until_exit`). A store the command created (and
    did not remove again) is named on stderr: ``created /repo/.octomem (the local
    scope)``, so the first write says where the memory now lives (trial 17 G5)."""
    from .context import err

    for scope in memory.scopes.made:
        if memory.scopes.exists(scope):
            err.print(f"created {memory.roots.of(scope)} (the {scope} scope)",
                      highlight=False, markup=False)
    keep_until_exit(memory.scopes.opened())
    memory.close()


def owns_the_process() -> bool:
    """Whether the ``octomem`` console script runs this process (or ``python -c`` code
    that imported and called it): ``__main__``'s ``main`` is the console entry point. A
    program calling :func:`main` inside its own process (a test harness) keeps its own
    exit, status and teardown."""
    from . import main as console_entry

    return getattr(sys.modules.get("__main__"), "main", None) is console_entry


def main() -> None:
    """Console entry point (``octomem``): run the command; usage errors, octomem errors and
    file-system errors as one line on stderr (``--debug`` shows the traceback); end the
    process without the interpreter's teardown. A plain search's command line
    (:func:`.quick.parse_search`) runs without typer, every other through the typer app."""
    global ends_without_teardown
    if owns_the_process():
        atexit.register(end_without_teardown)
        ends_without_teardown = True
    try:
        from .quick import parse_search

        if (empty := empty_path(sys.argv[1:])) is not None:
            said = f"{empty}: the path is empty; leave the option out for its default"
            print(f"error: {said}{help_hint(sys.argv[1:], said)}", file=sys.stderr)
            finish(USAGE_STATUS)
        plain = parse_search(sys.argv[1:])
        status = run() if plain is None else run_quick(plain)
    except SystemExit as exc:  # a command's own exit (``sys.exit(message)`` prints it)
        if exc.code is not None and not isinstance(exc.code, int):
            flush_stdout()  # after what the command printed, on one pipe too
            print(exc.code, file=sys.stderr)
        status = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    except KeyboardInterrupt:  # while the command line was read or its modules loaded
        print(NOT_STARTED, file=sys.stderr, flush=True)
        status = INTERRUPTED_STATUS
    finish(status)


def finish(status: int) -> None:
    """Exit with ``status`` (:func:`end_without_teardown` ends the process with it)."""
    global exit_status
    exit_status = status
    sys.exit(status)


def run() -> int:
    """Run the command line through the typer app; return the exit status (errors printed
    as one line).

    :raises OctomemError: with ``--debug``, the error itself.
    """
    import typer

    from .commands import app, state

    err = SafeConsole(stderr=True, soft_wrap=True, highlight=False)
    if (bad := not_utf8(sys.argv[1:])) is not None:  # bytes the terminal could not decode
        err.print(Text(f"error: argument '{bad}' is not UTF-8 text "
                       f"({not_utf8_advice(sys.argv[1:])})"
                       f"{help_hint(sys.argv[1:])}"))
        return USAGE_STATUS
    try:
        status: Any = app(prog_name="octomem", standalone_mode=False)
    except click_exception() as exc:
        if type(exc).__name__ != "NoArgsIsHelpError":  # that one printed the help
            err.print(Text(usage_line(exc)))
        return int(getattr(exc, "exit_code", USAGE_STATUS))
    except typer.Abort:  # EOF at a prompt
        err.print(Text("aborted"))
        return 1
    except BrokenPipeError:  # `octomem export - | head -1`: the reader went away
        return pipe_closed()
    except (OctomemError, OSError) as exc:
        if state.debug:
            raise
        return failed(exc, err)
    except KeyboardInterrupt:  # outside a command (commands end with status 130 themselves)
        err.print(Text(NOT_STARTED))
        return INTERRUPTED_STATUS
    return status if isinstance(status, int) else 0


def run_quick(plain: Any) -> int:
    """Run a plain search read by :func:`.quick.parse_search` (what :func:`run` would do
    with it, without typer); return the exit status (errors printed as one line).

    :raises OctomemError: with ``--debug``, the error itself.
    """
    from .context import apply_globals, state
    from .searching import run_search

    err = SafeConsole(stderr=True, soft_wrap=True, highlight=False)
    try:
        apply_globals(**plain.group)
    except (OctomemError, OSError) as exc:
        if state.debug:
            raise
        return failed(exc, err)
    except KeyboardInterrupt:  # outside the command, as :func:`run` says it
        err.print(Text(NOT_STARTED))
        return INTERRUPTED_STATUS
    try:
        run_search(**plain.search)
    except BrokenPipeError:  # `octomem search x --json | head -1`: the reader went away
        return pipe_closed()
    except (OctomemError, OSError) as exc:
        if state.debug:
            raise
        return failed(exc, err)
    except KeyboardInterrupt:  # inside the command, as :class:`.options.Command` says it
        print("interrupted", file=sys.stderr, flush=True)
        return INTERRUPTED_STATUS
    return 0


def failed(exc: OctomemError | OSError, err: SafeConsole) -> int:
    """Print an octomem or file-system error as one line on ``err``; return the exit status
    (2 for a bad value of an option or argument, else 1)."""
    message = as_option(str(exc)) if isinstance(exc, OctomemError) else os_error(exc)
    if isinstance(exc, UsageValueError) or (
            isinstance(exc, InvalidQueryError) and names_a_usage(message)):
        err.print(Text(f"error: {message}{help_hint(sys.argv[1:], message)}"))  # a bad value
        return USAGE_STATUS
    err.print(Text.assemble(("error: ", "red"), message))
    return 1


#: The options every command shares (``octomem --help`` documents them, not a command's).
GLOBAL_OPTIONS = ("--config", "--set", "--data-dir", "--project-root", "--global-root")
#: The option a refused value came from, as engine errors name it: ``--set 'x': ...``,
#: ``unknown setting 'x' in --set``, ``setting 'x' from --data-dir: ...``.
_NAMED_OPTION = re.compile(r"(?:^|\bin |\bfrom )(--[a-z][a-z-]*)")


def help_hint(args: list[str], message: str = "") -> str:
    """Return ``; see `octomem CMD --help``` for the command named in ``args`` (the first
    argument that is a command), or nothing when none is: an option value the engine
    refused (``--as-of: 'x' is not an ISO-8601 date``) is a usage error like those click
    finds (:func:`usage_line`). A value of a global option (``message`` names one:
    ``--set``, ``--config``, ...) points to ``octomem --help``, where they are documented,
    unless it was given after the command (``serve --project-root``, a command's own
    option documented in its ``--help``).
    """
    from .catalog import BY_NAME

    named = _NAMED_OPTION.search(message)
    at = next((i for i, arg in enumerate(args) if arg in BY_NAME), None)
    command = None if at is None else args[at]
    if named and named.group(1) in GLOBAL_OPTIONS:
        given = named.group(1)  # after the command (serve --project-root): that command's
        after = at is not None and any(a.split("=")[0] == given for a in args[at + 1:])
        return f"; see `octomem {command} --help`" if after else "; see `octomem --help`"
    return f"; see `octomem {command} --help`" if command else ""


def os_error(exc: OSError) -> str:
    """Describe a file-system error in one line, naming the path."""
    where = f"{exc.filename}: " if exc.filename else ""
    return f"{where}{exc.strerror or exc}"
