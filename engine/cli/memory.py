"""What the memory commands of the CLI print: answers with scopes, writes, status, transfers."""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from ..errors import OctomemError
from ..memory.scopes import check_scope
from ..memory.sources import EmptyFileError, read_text_file
from .hits import print_answer
from .layout import SafeConsole, aligned, emit, fitted, packed, visible, wrapped
from .values import human_size, human_time, plural

if TYPE_CHECKING:  # the JSON results' pydantic models are built when JSON is printed
    from ..memory.folders import IngestReport
    from ..memory.forget import ForgetOutcome
    from ..memory.recall import RecallAnswer
    from ..memory.remember import Remembered
    from ..memory.scopes import ScopeName
    from ..memory.transfer import ImportReport
    from ..types import Document


def _snippet(text: str, width: int, raw: bool = False) -> str:
    """``text`` on one line, cut to ``width`` with "…"; control characters shown as
    escapes unless ``raw`` (for ``repr``, which escapes them itself)."""
    flat = " ".join(text.split())
    flat = flat if raw else visible(flat)
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def check_write_scope(scope: str | None) -> ScopeName:
    """Return ``scope`` checked, ``local`` when not given.

    :raises InvalidQueryError: naming ``--scope``.
    """
    return check_scope(scope, "--scope") or "local"


def print_json(model: Any) -> None:
    """Print a result model as indented JSON on stdout (no Rich markup)."""
    from ..memory.models import as_json

    print(json.dumps(as_json(model), indent=2, ensure_ascii=False))


def show_recall(console: Console, query: str, ans: RecallAnswer, explain: bool,
                json_out: bool, why: str | None = None, as_of: float | None = None) -> None:
    """Print a recall answer as JSON (``json_out``) or as a table; ``why``: why an empty
    answer found nothing (:func:`.empty.why_empty`); ``as_of``: the instant asked about
    (epoch seconds; a hit current then is not marked superseded)."""
    if json_out:
        from ..memory.results import recall_result

        print_json(recall_result(query, ans, explain=True))
    else:
        print_answer(console, query, ans, explain, why, as_of)
    for warning in ans.warnings:
        SafeConsole(stderr=True).print(f"[yellow]warning:[/yellow] {escape(warning)}")


def show_remembered(console: Console, out: Remembered, json_out: bool) -> None:
    """Print what ``remember`` stored, replaced and found near-identical."""
    if json_out:
        from ..memory.results import remember_result

        print_json(remember_result(out))
        return
    if out.already_stored:
        from ..memory.results import other_kind

        emit(console, wrapped(f"already stored: {out.document.id} in the {out.scope} scope "
                              "has this text; nothing new was stored", console.width))
        if (hint := other_kind(out, cli=True)) is not None:
            emit(console, wrapped(hint, console.width))
        return
    console.print(f"stored [bold]{out.document.id}[/bold] in the {out.scope} scope")
    width = console.width
    if out.superseded is not None:
        say(console, fitted(f"superseded {out.superseded.id}: ", visible(out.superseded.text),
                            width))
    for old in out.replaced:
        say(console, fitted(f"replaced handoff {old.id}: ", visible(old.text), width))
    for near in out.near_duplicates:
        label = f"nearly the same ({near.similarity:.3f}):"
        say(console, fitted(f"{label} {near.document.id} ({near.scope}) ",
                            visible(near.document.text), width), len(label))
    if out.semantic_error:
        console.print(f"[yellow]no vector: {escape(out.semantic_error)}[/yellow]")
    from ..memory.results import future_event, held_never

    if (note := future_event(out)) is not None:
        emit(console, wrapped(f"note: {note.replace('`as_of`', '`--as-of`')}", width))
    if (note := held_never(out, cli=True)) is not None:
        emit(console, wrapped(f"note: {note}", width))


def show_forgotten_path(console: Console, path: str, where: Path, scope: str,
                        docs: list[Document], kept: dict[Path, int], reason: str | None,
                        json_out: bool) -> None:
    """Print what ``forget PATH`` did: how many files and turns read from ``path``
    (resolved: ``where``), from which scope, the first few (a turn by its id, a file by
    its path below ``where``), and the turns kept; ``--json``: the MCP ``forget`` tool's
    answer."""
    from ..memory.forget_path import forgot_path_line, kept_turns_line
    from ..memory.results import forget_path_result
    from ..turns import TURN_KIND

    if json_out:  # the MCP tool's answer
        print_json(forget_path_result(path, where, scope, docs, kept, reason))
        return
    names = [d.id if d.kind == TURN_KIND or not d.uri else _below(where, d.uri) for d in docs]
    shown = ", ".join(visible(n) for n in names[:3]) + (", ..." if len(names) > 3 else "")
    line = forgot_path_line(path, where, scope, docs)
    if not docs:  # every turn below it kept: nothing done
        raise OctomemError(f"{line}{kept_turns_line(where, kept)}")
    emit(console, wrapped(
        f"{line} ({shown}); an ingest keeps them out (`ingest --readd` stores them again)"
        f"{kept_turns_line(where, kept)}", console.width))


def _below(where: Path, uri: str) -> str:
    """The file of ``uri`` (``file:``) as a path below ``where``, else in full."""
    from urllib.parse import unquote, urlparse

    read = Path(unquote(urlparse(uri).path))
    return str(read.relative_to(where)) if read.is_relative_to(where) and read != where \
        else str(read)


def show_forgotten(console: Console, out: ForgetOutcome, json_out: bool,
                   asked: str = "") -> bool:
    """Print what ``forget`` did; return False when the text was ambiguous (none removed).

    :param asked: the id or text ``forget`` was given: when every match has that id (one
        id in both scopes), the advice is ``--scope``, not an id.
    """
    if json_out:
        from ..memory.results import forget_result

        print_json(forget_result(out))
        return out.forgotten is not None
    if out.forgotten is None:
        same_id = all(doc.id == asked for _, doc in out.matches)
        advice = ("forget one with --scope local or --scope global" if same_id
                  else "forget one by id")
        emit(console, wrapped(f"{len(out.matches)} statements have this "
                              f"{'id' if same_id else 'text'}; none was removed; {advice}:",
                              console.width), style="yellow")
        for scope, doc in out.matches:  # one line each, the text cut to what is left
            lead = f"  {doc.id} ({scope}, {doc.kind}) "
            emit(console, [lead + _snippet(doc.text, max(console.width - len(lead), 20))])
        return False
    scope, doc = out.forgotten
    lead = f"forgot {doc.id} from the {scope} scope: "
    room = console.width - len(lead) - 2
    if room >= 30:
        emit(console, [lead + repr(_snippet(doc.text, room, raw=True))])
    else:  # the statement on a line of its own
        emit(console, [lead.rstrip(), "  " + repr(_snippet(doc.text, console.width - 4, raw=True))])
    if out.handed_on:
        from ..memory.forget import handed_on_line
    for older in out.handed_on:
        emit(console, wrapped(handed_on_line(older) + ": " + repr(_snippet(
            older.text, max(console.width - 60, 30), raw=True)), console.width))
    return True


def status(console: Console, info: dict[str, Any], searched_up: bool = False) -> None:
    """Print each scope as a short block of ``key  value`` lines that reads at any width:
    sizes in kB/MB, times as dates, the embedder's model id whole, counts with history; a
    scope whose store cannot be read: its file, what is wrong and what to do.

    :param searched_up: the project was looked for from the current folder upward (no
        ``--project-root``): a project above the current folder is said to be so.
    """
    project = info["project_root"]
    here = Path.cwd().resolve()
    above = searched_up and Path(project) != here and here.is_relative_to(project)
    console.print(f"[bold]project[/bold] {escape(project)}", highlight=False)
    if above:
        from ..project import found_by

        emit(console, wrapped(f"(the nearest folder above the current one, {here}, that holds "
                              f"{found_by(Path(project))})", console.width, "", first=""))
    for name, scope in info["scopes"].items():
        console.print()
        if not scope.get("exists"):
            console.print(f"[bold]{name}[/bold]  {escape(scope['root'])}", highlight=False)
            emit(console, aligned(not_created_rows(scope), console.width))
            continue
        if scope.get("unreadable"):
            console.print(f"[bold]{name}[/bold]  {escape(scope['root'])}", highlight=False)
            emit(console, aligned([("unreadable", scope["unreadable"])], console.width))
            continue
        console.print(f"[bold]{name}[/bold]  {escape(scope['root'])}", highlight=False)
        emit(console, aligned(status_rows(scope), console.width))


#: ``status`` keys shown by :func:`status_rows` in their own words (others as they come).
_SHOWN = {"root", "exists", "documents", "chunks", "chunks_without_vector", "size_bytes",
          "arms", "embedder_model", "semantic_available", "semantic_error", "relevance", "current",
          "superseded", "forgotten", "not_created"}


def not_created_rows(scope: dict[str, Any]) -> list[tuple[str, str]]:
    """Return a scope without a store as ``(label, text)`` rows: that none exists yet and
    what creates it, then the arms, model and semantic search as configured."""
    rows = [row for row in status_rows(scope)
            if row[0] in ("arms", "model", "semantic", "relevance")]
    why = str(scope.get("not_created") or "").removeprefix("no store yet: ")
    return [("store", "none yet" + (f": {why}" if why else "")),
            *((label, f"{text} (as configured)") if label in ("arms", "model")
              else (label, text) for label, text in rows)]


def status_rows(scope: dict[str, Any]) -> list[tuple[str, str]]:
    """Return one existing scope's status as ``(label, text)`` rows."""
    docs = f"{scope.get('documents', 0):,}"
    if "current" in scope:
        docs += (f" ({scope['current']:,} current, {scope['superseded']:,} superseded; "
                 f"{scope['forgotten']:,} forgotten)")
    missing = scope.get("chunks_without_vector") or 0
    chunks = f"{scope.get('chunks', 0):,}" + (f", {missing:,} without a vector" if missing
                                            else ", every one with a vector"
                                            if scope.get("chunks") else "")
    arms = " · ".join(f"{kind} {arm}" for kind, arm in (scope.get("arms") or {}).items() if arm)
    semantic = ("available" if scope.get("semantic_available") else "unavailable: "
                + (scope.get("semantic_error") or "no semantic arm is configured"))
    rows = [("documents", docs), ("chunks", chunks), ("size", human_size(scope.get("size_bytes"))),
            ("arms", arms), ("model", scope.get("embedder_model") or "(none)"),
            ("semantic", semantic)]
    if scope.get("relevance"):
        rows.append(("relevance", f"from {scope['relevance']}"))
    for key, value in scope.items():  # what another storage or arm adds
        if key in _SHOWN or value is None:
            continue
        if isinstance(value, dict):
            text = ", ".join(f"{k} {v}" for k, v in value.items())
        elif key.endswith(("_at", "_time")) and isinstance(value, int | float):
            text = human_time(value)
            key = key.removesuffix("_at")  # "newest_document_at": "newest document"
        elif key.endswith("_bytes") and isinstance(value, int | float):
            text = human_size(value)
        else:
            text = str(value)
        rows.append((key.replace("_", " "), text))
    return rows


def import_report(console: Console, report: ImportReport) -> None:
    """Print what an import did: counts on short lines that read at any width."""
    emit(console, packed(f"imported into the {report.scope} scope:", [
        f"{len(report.added):,} added", f"{len(report.replaced):,} replaced",
        f"{len(report.unchanged):,} unchanged",
        f"{len(report.skipped_forgotten):,} skipped (forgotten here)",
        plural(report.forgotten_logged, "forget-log entry", "forget-log entries")
        + (f" ({report.forgotten_known:,} more already here)" if report.forgotten_known
           else ""),
        f"{plural(report.embedded, 'chunk')} embedded"], console.width))
    if report.forgotten_left:
        emit(console, wrapped(
            f"{plural(report.forgotten_left, 'forget-log entry', 'forget-log entries')} of "
            f"the file's own scope {'was' if report.forgotten_left == 1 else 'were'} not copied "
            f"into the {report.scope} scope",
            console.width))
    if report.forgotten_here:
        named = ", ".join(visible(i) for i in report.forgotten_here[:NAMED_KEPT])
        more = len(report.forgotten_here) - NAMED_KEPT
        emit(console, wrapped(
            f"{plural(len(report.forgotten_here), 'document')} forgotten here too (the "
            f"file's forget log says {'it was' if len(report.forgotten_here) == 1 else 'they were'}"
            f" forgotten where it was exported): {named}"
            + (f" and {more:,} more" if more > 0 else ""), console.width))
    if report.handoffs_superseded:
        olds = [visible(old) for old, _ in report.handoffs_superseded]
        more = len(olds) - NAMED_KEPT
        emit(console, wrapped(
            f"{plural(len(olds), 'handoff')} superseded by the newer "
            f"{visible(report.handoffs_superseded[0][1])} (a scope keeps one current handoff, "
            f"the newest by when it was written): {', '.join(olds[:NAMED_KEPT])}"
            + (f" and {more:,} more" if more > 0 else ""), console.width))
    _kept(console, report.older, "older than what is stored, kept the stored revision or "
          "supersede (an import never rolls a document back)")
    _kept(console, report.conflicts, "in conflict with what is stored (changed here and in "
          "the file, differently), kept the stored one; the file's is not imported")
    _kept(console, report.refused_tags, ("document" if len(report.refused_tags) == 1 else
                                         "documents") + " stored with tags that `octomem "
          "add` would refuse, kept as the file has them (recall's tags filter matches them "
          "exactly; to change a statement's, add its text again with new tags and "
          "--supersedes its id)")
    _kept(console, report.split_tags, ("document" if len(report.split_tags) == 1 else
                                       "documents") + " stored with a tag holding a comma "
          "split into the tags meant, as `octomem add` takes them (recall's tags filter "
          "refuses a comma)")
    if report.semantic_error:
        console.print(f"[yellow]vectors not written: {escape(report.semantic_error)}[/yellow]")


#: Most documents an import summary names for each reason; the rest are counted.
NAMED_KEPT = 10


def _kept(console: Console, kept: list[tuple[str, str]], what: str) -> None:
    """Print how many documents an import left as stored for one reason, and (up to
    :data:`NAMED_KEPT`) which and why."""
    if not kept:
        return
    emit(console, wrapped(f"{len(kept):,} {what}:", console.width))
    for doc_id, why in kept[:NAMED_KEPT]:
        emit(console, wrapped(f"{visible(doc_id)}: {why}", console.width, "    ", "  "))
    if len(kept) > NAMED_KEPT:
        emit(console, [f"  and {len(kept) - NAMED_KEPT:,} more"])


def gone_files(console: Console, report: IngestReport, kept_because: str | None = None) -> None:
    """Print the files an ingested folder no longer holds, and which were forgotten.

    :param kept_because: why none was forgotten, when not by ``ingest.on_missing = keep``.
    """
    forgotten = {g.id for g in report.forgotten}
    kept = f"kept {{}} ({kept_because or 'ingest.on_missing = keep'})"
    moved = [g for g in report.missing if g.moved_to is not None]
    if moved:  # its folder moved with the project: one line, however many files
        old = os.path.commonpath([str(Path(g.path).parent) for g in moved])
        new = os.path.commonpath([str(Path(g.moved_to or "").parent) for g in moved])
        what = "the documents read from the old place"
        done = f"forgot {what}" if all(g.id in forgotten for g in moved) else kept.format(what)
        say(console, f"moved: {plural(len(moved), 'file')} from {visible(old)} to "
            f"{visible(named_here(new))}: {done} (the files are stored from the new one)",
            len("moved:"))
    for gone in report.missing:
        if gone.moved_to is not None:
            continue
        done = "forgot its document" if gone.id in forgotten else kept.format("its document")
        say(console, fitted("gone: ", visible(named_here(gone.path)), console.width,
                            f": {done} {gone.id}", cut_start=True), len("gone:"))


def named_here(path: str | Path) -> str:
    """Return ``path`` as the user names it from the current folder, as ``skipped:`` lines
    do: relative when it is inside (``notes/deploy.md``), else as it is."""
    from ..memory.readable import shown

    here, where = Path.cwd().resolve(), Path(path)
    return shown(where.relative_to(here) if where.is_relative_to(here) else where)


def say(console: Console, line: str, yellow: int = 0) -> None:
    """Print one entry's ``line`` as it is, never wrapped by Rich (:func:`fitted` made it
    fit), its first ``yellow`` characters (a label) in yellow."""
    console.print(Text.assemble((line[:yellow], "yellow"), line[yellow:]), no_wrap=True,
                  overflow="ignore", crop=False, highlight=False)


def file_documents(err: Console, files: list[Path], limits: Any,
                   named: Collection[Path] = (),
                   refused: list[tuple[Path, str]] | None = None,
                   skipped: list[tuple[Path, str]] | None = None) -> Iterator[Document]:
    """Read files as documents, skipping empty, non-UTF-8 ones, those larger than
    ``limits.file_bytes`` and those whose front matter holds a bad tag or date: a note on
    ``err`` for a file found in a folder (and, unless it is only empty, an entry in
    ``skipped``), an entry in ``refused`` for a file in ``named`` (named on the command
    line).

    :param limits: the ``limits`` settings.
    """
    for path in files:
        try:
            doc = read_text_file(path, limits.file_bytes, limits=limits)
        except OctomemError as exc:
            why, error = str(exc), not isinstance(exc, EmptyFileError)
        else:
            yield doc
            continue
        if refused is not None and path in named:
            refused.append((path, why))
        else:
            err.print(Text.assemble(("skipped: ", "yellow"), why), highlight=False)
            if error and skipped is not None:
                skipped.append((path, why))
