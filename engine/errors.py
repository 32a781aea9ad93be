"""Every error octomem raises on purpose, under one :class:`OctomemError`."""

from __future__ import annotations

from .controls import blank


class OctomemError(Exception):
    """Base class of every error octomem raises on purpose.

    The CLI prints ``str(error)`` as one line; the MCP server returns it as a tool error.
    """


class StoreBusyError(OctomemError):
    """A storage waited its whole busy timeout for another process's write lock; nothing
    of that write was stored. The message names the file and what to do."""


class StoreUnreadableError(OctomemError):
    """A scope's store cannot be read: its file is damaged (truncated, overwritten) or is
    not a store at all. octomem leaves it as it is; the message names the file and what to
    do (restore it from a backup or an export, or move it away to start empty).

    Reads over both scopes skip that scope and say so (``scopes_unavailable``); anything
    aimed at that scope alone, and every write to it, fails with this error."""


class StoreReadOnlyError(OctomemError):
    """A storage cannot be written (a read-only file, an immutable flag, a read-only
    mount); nothing of that write was stored. The message names the file and what to do.
    Reads still work: ``search`` answers and leaves its recall counts unwritten."""


class StoreWriteError(OctomemError):
    """A storage's file could not be written: the disk (or the file's size limit) is full,
    or the operating system reported an I/O error; the transaction was rolled back, so
    nothing of that write was stored. The message names the file and what to do."""


class StoreGoneError(OctomemError):
    """A storage's file was deleted (``rm -rf .octomem``, ``git clean -fdx``) or replaced
    by another file while a process had it open; nothing of that write was stored. The
    memory reopens the scope at its path on its next call (a fresh store when the file is
    gone); the message names the file and says so."""


class PluginLoadError(OctomemError):
    """An entry point in group ``octomem`` failed to import or register.

    :param entry_point: the entry point's name.
    :param distribution: the distribution that declares it (``"?"`` when unknown).
    """

    def __init__(self, entry_point: str, distribution: str, reason: str) -> None:
        self.entry_point = entry_point
        self.distribution = distribution
        super().__init__(
            f"plugin {entry_point!r} from distribution {distribution!r} failed to load: {reason}"
        )


class DuplicateArmError(OctomemError):
    """Two plugins register an arm of the same kind under the same name."""

    def __init__(self, kind: str, name: str, first: str, second: str) -> None:
        self.kind, self.name = kind, name
        super().__init__(
            f"{kind} arm {name!r} is registered twice: by {first!r} and by {second!r}; "
            "uninstall one of them"
        )


class ArmNotFoundError(OctomemError, KeyError):
    """Settings name an arm that no installed plugin registers."""

    def __init__(self, kind: str, name: str, available: list[str]) -> None:
        self.kind, self.name, self.available = kind, name, available
        names = ", ".join(sorted(available)) or "none"
        OctomemError.__init__(
            self, f"no {kind} arm named {name!r}; installed {kind} arms: {names}"
        )

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return str(self.args[0])


class ArmConfigError(OctomemError):
    """An arm's options or a setting failed validation; names the setting and its source."""


class UsageValueError(OctomemError, ValueError):
    """A value the caller gave for an option or argument is malformed or not allowed
    (``--format xml``, ``--http localhost``, a non-loopback ``--host``): the caller's
    mistake, so a usage error on the command line (exit status 2, pointing to ``--help``)
    and an ``invalid`` call in the MCP server's call log. The message starts with the
    option, or names it."""


class OptionValueError(ArmConfigError, UsageValueError):
    """A setting given on the command line (``--set KEY=VALUE``, ``--data-dir``, ...) was
    refused: a usage error (exit status 2), not a broken configuration file."""


class ArmNamedByOptionError(ArmNotFoundError, UsageValueError):
    """Settings name an arm that no installed plugin registers, and a command-line option
    gave that name (``--set pipeline.embedder=x``, ``reindex --embedder x``): a usage error
    (exit status 2). Made by :func:`arm_not_found_in`."""


def arm_not_found_in(exc: ArmNotFoundError, layer: str) -> ArmNotFoundError:
    """Return ``exc`` naming its setting (``pipeline.<kind>``) and the layer that set it; a
    usage error (:class:`ArmNamedByOptionError`) when a command-line option did (not
    ``--config FILE``: a file), as :func:`config_error` decides for any setting."""
    option = layer.startswith("--") and not layer.startswith("--config")
    out = (ArmNamedByOptionError if option else ArmNotFoundError)(
        exc.kind, exc.name, exc.available)
    out.args = (f"setting 'pipeline.{exc.kind}' from {layer}: {exc.args[0]}",)
    return out


def config_error(message: str, layer: str) -> ArmConfigError:
    """Return the error for a setting refused in ``layer`` (where it came from, as
    :meth:`~octomem.engine.settings.LoadedSettings.source_of` names it): an
    :class:`OptionValueError` when a command-line option gave it (``--set``,
    ``--data-dir``; not ``--config (FILE)``, a file), else an :class:`ArmConfigError`."""
    option = layer.startswith("--") and not layer.startswith("--config")
    return (OptionValueError if option else ArmConfigError)(message)


class IncompatibleArmsError(OctomemError):
    """Two configured arms cannot work together (e.g. ``fts5`` without ``sqlite`` storage)."""


class EmbedderMismatchError(OctomemError):
    """Stored vectors were made by a different embedder than the configured one."""


class EmbedderUnavailableError(OctomemError):
    """The embedder's model cannot be loaded (missing files, no hub access, bad path)."""


class InvalidQueryError(OctomemError, ValueError):
    """A query or filter value is unusable; the message names the argument."""


def check_question(text: object, top_k: int) -> None:
    """Refuse a search or recall that cannot be answered: its ``text`` is not a string
    with a word in it, or ``top_k < 1``.

    :raises InvalidQueryError: naming the argument.
    """
    if not isinstance(text, str) or blank(text):
        raise InvalidQueryError("query: empty; give at least one word to search for")
    if top_k < 1:
        raise InvalidQueryError(f"top_k: must be >= 1, got {top_k}")


class NotFoundError(OctomemError, KeyError):
    """No stored item has the given id or text."""

    def __str__(self) -> str:
        return str(self.args[0])


class AlreadyForgottenError(NotFoundError):
    """The id or text asked for was forgotten before; the message says when and why."""


class StaleVersionError(OctomemError):
    """A write named the version of an item it read, and the item has changed since
    (or was forgotten); nothing was written."""


class AmbiguousMatchError(OctomemError):
    """A text matches several stored statements, so none was changed.

    :param matches: the ``(id, text)`` pairs that matched.
    """

    def __init__(self, text: str, matches: list[tuple[str, str]]) -> None:
        self.matches = matches
        listed = "; ".join(f"{i}: {t[:60]!r}" for i, t in matches)
        super().__init__(
            f"{len(matches)} statements match {text[:60]!r}, none was removed; "
            f"forget one by id: {listed}"
        )


class ArmBuildError(OctomemError):
    """An arm's factory failed, or built something that does not implement its Protocol."""

    def __init__(self, kind: str, name: str, reason: str) -> None:
        self.kind, self.name = kind, name
        super().__init__(f"{kind} arm {name!r} could not be built: {reason}")


class StoreUnavailableError(OctomemError):
    """A storage's server cannot be reached, or dropped the connection under a call (a
    database server restarted or stopped); what the call was writing was not stored unless
    its answer said so. The message names the server, the setting that points at it, and
    the server's reason; the next call connects again. A browser view answers 503."""
