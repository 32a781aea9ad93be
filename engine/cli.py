"""The ``octomem`` command line: ingest, add, search, forget, plugins, status, config, serve, bench."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from . import cli_render as render
from .app import open_pipeline
from .assembly import arm_options, check_compatible
from .errors import OctomemError
from .manager import load_registry
from .pipeline import Pipeline
from .settings import load_settings, parse_overrides
from .sources import beir_corpus_path, beir_documents, count_lines, file_document, find_text_files
from .types import Document, Filters, Query

app = typer.Typer(
    name="octomem",
    help="Local-first retrieval for AI agents' memory: BM25 + embeddings, fused, over MCP.\n\n"
    "Quick start: `octomem ingest docs/` then `octomem search \"how does fusion work\" --explain`.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",
)
console = Console()
err = Console(stderr=True, soft_wrap=True)

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="TOML settings file (a layer above the user config).")]
SetOpt = Annotated[list[str] | None, typer.Option("--set", help="Override a setting: `key=value`, e.g. `retrieval.top_k=5`. Repeatable.")]


class _State:
    config: Path | None = None
    overrides: dict[str, Any] = {}
    debug: bool = False


state = _State()


@app.callback()
def _main(
    config: ConfigOpt = None,
    set_: SetOpt = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Where the data lives (setting `data_dir`).")] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """Read the global options every command shares."""
    state.config = config
    state.overrides = parse_overrides(set_ or [])
    if data_dir is not None:
        state.overrides["data_dir"] = str(data_dir)
    state.debug = debug


def _pipeline() -> Pipeline:
    return open_pipeline(state.config, state.overrides)


def _ingest(pipeline: Pipeline, docs: Any, total: int, label: str) -> None:
    with render.progress(console) as bar:
        task = bar.add_task(f"indexing {label}", total=total)
        report = pipeline.add(docs, lambda n: bar.advance(task, n), embed=False)
        missing = len(pipeline.arms.semantic.missing()) if pipeline.arms.semantic else 0
        embedded = 0
        if missing and not pipeline.semantic_error:
            task2 = bar.add_task("embedding chunks", total=missing)
            try:
                embedded = pipeline.embed_pending(lambda n: bar.advance(task2, n))
            except OctomemError as exc:
                report.semantic_error = str(exc)
    render.ingest_report(console, report, embedded, pipeline.semantic_error)


@app.command()
def ingest(
    paths: Annotated[list[Path] | None, typer.Argument(help="Text/Markdown files or folders.")] = None,
    beir: Annotated[Path | None, typer.Option("--beir", help="A BEIR folder: loads its corpus.jsonl.")] = None,
) -> None:
    """Ingest files and folders (.md, .txt, .rst), or a BEIR corpus with `--beir DIR`.

    Re-ingesting an unchanged file does nothing; a changed one replaces its old chunks.
    """
    if not paths and beir is None:
        raise OctomemError("give files or folders to ingest, or --beir DIR")
    pipeline = _pipeline()
    try:
        if beir is not None:
            total = count_lines(beir_corpus_path(beir))
            _ingest(pipeline, beir_documents(beir), total, f"{beir.name} corpus")
        if paths:
            files = find_text_files(paths)
            _ingest(pipeline, (file_document(f) for f in files), len(files), f"{len(files)} files")
    finally:
        pipeline.close()


@app.command()
def add(
    text: Annotated[str, typer.Argument(help="The statement to store.")],
    kind: Annotated[str, typer.Option(help="One word in capitals, e.g. PREFERENCE.")] = "ITEM",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag; repeatable.")] = None,
) -> None:
    """Store one statement (a one-chunk document) and print its id."""
    pipeline = _pipeline()
    try:
        doc = Document(text=text, kind=kind, tags=tuple(tag or ()))
        report = pipeline.add([doc])
        console.print(f"stored [bold]{doc.id}[/bold]")
        if report.semantic_error:
            err.print(f"[yellow]no vector: {report.semantic_error}[/yellow]")
    finally:
        pipeline.close()


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="Any text; no query syntax to learn.")],
    top_k: Annotated[int, typer.Option("--top-k", "-k", help="Number of hits.")] = 10,
    explain: Annotated[bool, typer.Option(help="Show each arm's rank and score, and the fused score.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the answer as JSON.")] = False,
    kind: Annotated[list[str] | None, typer.Option("--kind", help="Only these kinds; repeatable.")] = None,
    tag: Annotated[list[str] | None, typer.Option("--tag", help="Only hits with every tag; repeatable.")] = None,
) -> None:
    """Search: keyword and semantic arms, fused by reciprocal rank, deduplicated."""
    from .results import as_json as dump
    from .results import recall_result

    pipeline = _pipeline()
    try:
        filters = Filters(kinds=tuple(kind or ()), tags=tuple(tag or ()))
        answer = pipeline.search(Query(query, top_k=top_k, filters=filters))
        if as_json:
            print(json.dumps(dump(recall_result(query, answer, explain=True)), indent=2))
        else:
            render.answer(console, query, answer, explain)
    finally:
        pipeline.close()


@app.command()
def forget(id_or_text: Annotated[str, typer.Argument(help="A document id, or a statement's exact text.")]) -> None:
    """Delete one document by id or exact text (a text matching several deletes none)."""
    pipeline = _pipeline()
    try:
        doc = pipeline.forget(id_or_text)
        console.print(f"forgot [bold]{doc.id}[/bold]: {doc.text[:80]!r}")
    finally:
        pipeline.close()


@app.command()
def plugins() -> None:
    """List installed arms by kind: name, providing distribution, version."""
    render.plugins(console, load_registry())


@app.command()
def status() -> None:
    """Show counts, the configured arms, the embedder model and semantic availability."""
    pipeline = _pipeline()
    try:
        render.status(console, pipeline.status())
    finally:
        pipeline.close()


@app.command()
def config() -> None:
    """Print every effective setting (configured arms' options included), its cost group
    (identity: needs re-indexing; runtime; retrieval: reorders answers) and its layer."""
    loaded = load_settings(state.config, state.overrides)
    registry = load_registry()
    specs = check_compatible(loaded.settings.pipeline, registry)
    options = {spec.name: arm_options(spec, loaded).model_dump(mode="json") for spec in specs.values()}
    render.settings(console, loaded, options, {spec.name: spec for spec in specs.values()})


@app.command()
def serve() -> None:
    """Serve the MCP tools over stdio (for Claude Code, Claude Desktop, Cursor, ...)."""
    # Imported by name at run time: the engine has no static dependency on the server.
    server = importlib.import_module("octomem.mcp_server.server")
    server.create_server(state.config, state.overrides).run("stdio")


@app.command()
def bench(
    dataset: Annotated[Path | None, typer.Argument(help="A BEIR folder (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).")] = None,
    combo: Annotated[list[str] | None, typer.Option("--combo", help="`NAME=arm+arm+...` (e.g. `hybrid=fts5+sqlite-vec`); repeatable. Default: every installed arm alone and the hybrids.")] = None,
    split: Annotated[str, typer.Option(help="Which qrels/<split>.tsv to evaluate on.")] = "test",
    group_by: Annotated[str | None, typer.Option("--group-by", help="`metadata.FIELD`: a query only sees documents with its own value (LoCoMo: metadata.conv_id).")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Report folder (default ./octomem-bench/<dataset>).")] = None,
    top_k: Annotated[int, typer.Option("--top-k", help="Hits per query (100: recall@100 needs it).")] = 100,
    cache_dir: Annotated[Path | None, typer.Option("--cache-dir", help="Where built indexes and vectors are kept for reuse.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="Only the first N judged queries (a smoke run).")] = None,
    synthetic: Annotated[str | None, typer.Option("--synthetic", help="Scale curve instead of a dataset: sizes, e.g. `10k,100k,1M`.")] = None,
) -> None:
    """Measure arm combinations on a BEIR folder: quality (ranx) and cost, side by side.

    Writes report.md, report.json and PNG plots to --out. Needs `pip install 'octomem[bench]'`.
    """
    try:
        entry = importlib.import_module("octomem.benchmarks.entry")
    except ImportError as exc:  # ranx, matplotlib, rank-bm25 come with the bench extra
        raise OctomemError(f"octomem bench needs the bench extra ({exc}): pip install 'octomem[bench]'") from exc
    entry.main(
        dataset=dataset, combos=combo, split=split, group_by=group_by, out=out, top_k=top_k,
        cache_dir=cache_dir, limit=limit, synthetic=synthetic, config_file=state.config,
        overrides=state.overrides, console=console,
    )


def main() -> None:
    """Console entry point: run the app, printing octomem errors as one line."""
    try:
        app(standalone_mode=False)
    except OctomemError as exc:
        if state.debug:
            raise
        err.print(Text.assemble(("error: ", "red"), str(exc)), highlight=False)
        sys.exit(1)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # click's usage errors and the like
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Abort):
            sys.exit(1)
        raise
