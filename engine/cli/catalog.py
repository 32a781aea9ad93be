"""What ``octomem --help`` lists, known without importing any command: each command's
name, the module that defines it and its one-paragraph summary; the group's help and
global options.

The ``octomem`` group (:class:`.options.Group`) lists its commands from here and imports a
command's module, and has typer read that command's signature, only when the command runs
or its own ``--help`` is asked; ``octomem --help`` is drawn from this table alone, without
typer (:func:`top_page`). ``tests/test_cli_catalog.py`` ties this table to the commands
themselves: the same names, in order, with the same summaries and the same options as
their own help (a drift is a failing test, never a silent difference).

Imports nothing but :mod:`.helppage` (and so :mod:`re`): not even :mod:`typing`.
"""

from __future__ import annotations

from .helppage import HelpPage, ParamRow


class Entry:
    """One command of ``octomem``.

    :param name: as typed (``session-start``).
    :param module: the module under ``octomem.engine.cli`` that registers it.
    :param summary: its help's first paragraph (Markdown; what the command list shows).
    """

    __slots__ = ("module", "name", "summary")

    def __init__(self, name: str, module: str, summary: str) -> None:
        self.name, self.module, self.summary = name, module, summary


#: The group's help (``octomem --help``, above the panels).
APP_HELP = (
    "Local-first retrieval for AI agents' memory: BM25 + embeddings, fused, over MCP.\n\n"
    "Quick start (from a clone, as in the README): "
    "`octomem --data-dir .octomem-demo ingest --scope global examples/kestrel`, then "
    "`octomem --data-dir .octomem-demo search \"how big are the upload parts?\" --explain`.")

#: The group's options: ``(name, metavar, help)``; the callback in :mod:`.commands` takes
#: its help texts from here.
GLOBAL_OPTIONS = (
    ("--config", "FILE", "TOML settings file (a layer above the user config)."),
    ("--set", "KEY=VALUE", "Override a setting: `key=value`, e.g. `retrieval.top_k=5`. "
     "Repeatable."),
    ("--data-dir", "DIR", "Where the data lives (setting `data_dir`), and the global scope: "
     "on the command line it beats a `global_root` from the environment "
     "(`OCTOMEM_GLOBAL_ROOT`) or a config file; `--global-root` beats it."),
    ("--project-root", "DIR", "The project whose `.octomem/` is the local scope (default: the "
     "nearest folder from the current one upward that holds `.octomem/`, as git finds its "
     "repository; with none, the nearest that holds `.git`; else the current directory); an "
     "existing folder."),
    ("--global-root", "DIR", "The global scope's directory (setting `global_root`; default "
     "`data_dir`)."),
    ("--debug", "", "Show tracebacks on errors."),
    ("--version", "", "Print octomem's version and exit."),
    # typer's own (shell completion) and click's --help:
    ("--install-completion", "", "Install completion for the current shell."),
    ("--show-completion", "", "Show completion for the current shell, to copy it or "
     "customize the installation."),
    ("--help", "", "Show this message and exit."),
)

#: Every command, in the order ``octomem --help`` lists them.
COMMANDS = (
    Entry("ingest", "commands", "Ingest files and folders (.md, .txt, .rst), chat transcripts "
          "and Claude Code sessions (.jsonl; see docs/conversations.md), or a BEIR corpus with "
          "`--beir DIR`, into a scope (default: local, this project's `.octomem/`)."),
    Entry("add", "commands", "Remember one statement (local scope by default) and print its "
          "id, what it replaced and existing statements that say nearly the same."),
    Entry("search", "commands", "Recall: both scopes, keyword and semantic arms fused by "
          "reciprocal rank, a bounded recency bonus, deduplicated; each hit names its scope."),
    Entry("forget", "commands", "Forget one statement by id or exact text, or what was "
          "ingested from a path (a file; a transcript: every turn of it; a folder: every file "
          "and turn below it; the path need not exist any more), in both scopes unless "
          "`--scope`; a text matching several removes none and lists them (exit status 1)."),
    Entry("reindex", "commands", "Embed every chunk that has no vector of the selected "
          "embedder, in both scopes unless `--scope` (resumable)."),
    Entry("plugins", "inspecting", "List installed arms by kind: name, providing distribution, "
          "version."),
    Entry("status", "inspecting", "Show both scopes: where they live, counts, arms, the embedder "
          "model, semantic availability; exit status 1 when a scope's store cannot be read "
          "(its file is named)."),
    Entry("config", "inspecting", "Print every effective setting (configured arms' options "
          "included), or the one named, with its cost group (identity: needs re-indexing; "
          "runtime; retrieval: reorders answers), the layer it came from and what it means."),
    Entry("serve", "commands", "Serve one project's memory over MCP: stdio (for Claude Code, "
          "Claude Desktop, Cursor, ...) or streamable HTTP (`--http`); logs on stderr, metrics "
          "on request."),
    Entry("export", "exchange", "Export a scope: JSON Lines round-trips losslessly through "
          "`octomem import` (ids, kinds, tags, times, supersede links, recall counts); Markdown "
          "is for reading."),
    Entry("import", "exchange", "Import a JSONL export: documents keep their ids, history and "
          "recall counts; statements this scope has forgotten are skipped; a record older "
          "than the stored document (a lower revision, or not yet superseded) never replaces "
          "it; the file is stored whole or not at all; vectors are computed again."),
    Entry("session-start", "commands", "Print what an agent should see at the start of a "
          "session (the MCP resource octomem://session-start): standing rules and "
          "preferences, the current handoff, the most recent and most recalled statements, "
          "within a byte budget."),
    Entry("remember", "commands", "Same as `add` (the MCP tool's name)."),
    Entry("recall", "commands", "Same as `search` (the MCP tool's name). Each hit shows up "
          "to 3 lines; the whole texts: `--json`; each arm's rank and score: `--explain`."),
    Entry("bench", "bench", "Measure arm combinations on a BEIR folder: quality (ranx) and "
          "cost, side by side."),
    Entry("metrics", "observe", "Print a running server's metrics (`octomem serve "
          "--metrics-addr HOST:PORT`): calls per tool with p50/p95 latency, recall hits, empty "
          "and degraded answers, arm latency, writes, and each scope's counts."),
    Entry("verify", "verify", "Find stored rows that an answer cannot show (times outside the "
          "calendar, left by an older octomem) or no `--kind` filter can select (`to-do`, "
          "`fact`: an older import), supersede links that do not hold, and stores that cannot "
          "be read; exit status 1 when there are any. With `--repair`: a bad `created_at` or "
          "`valid_to` becomes now, a bad `event_time` or `last_recalled_at` is cleared, a "
          "kind becomes one that fits (`TO_DO`, `FACT`), and the document is written again "
          "(its vectors computed again); a "
          "statement current although its successor supersedes it is superseded again; one "
          "superseded by a forgotten statement is current again; a link to nothing on a "
          "current statement is dropped; a document whose id the forget log says was "
          "forgotten (an older import) is forgotten. A link that needs a decision "
          "is listed, not repaired."),
    Entry("ui", "view", "Show the memory in a browser: search with the explain table, both "
          "scopes, items and their history, conversations, status. Read-only unless "
          "`--allow-writes`; loopback only unless `--allow-remote`. See docs/ui.md."),
    Entry("log", "observe", "The opt-in MCP call log (setting `call_log`, "
          "`OCTOMEM_CALL_LOG=1`)."),
)

BY_NAME = {entry.name: entry for entry in COMMANDS}

#: ``octomem --help``'s usage line (click's, for a group with options and commands).
USAGE = "Usage: octomem [OPTIONS] COMMAND [ARGS]..."


def option_help(name: str) -> str:
    """Return the help text of the global option ``name`` (``--config``).

    :raises KeyError: no such global option.
    """
    return next(text for option, _, text in GLOBAL_OPTIONS if option == name)


def command_rows() -> list[tuple[str, str]]:
    """Return ``(name, summary)`` of every command, in order."""
    return [(entry.name, entry.summary) for entry in COMMANDS]


def top_page() -> HelpPage:
    """Return the page ``octomem --help`` prints, built from this table alone."""
    options = [ParamRow(name, "", metavar, text) for name, metavar, text in GLOBAL_OPTIONS]
    return HelpPage(USAGE, APP_HELP, {}, {"Options": options}, {"Commands": command_rows()})
