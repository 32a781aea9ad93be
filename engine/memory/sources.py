"""Reading documents from disk: text/Markdown files, transcripts and folders of them, and
BEIR corpora (whose rows may be conversation turns)."""

from __future__ import annotations

import codecs
import hashlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from ..controls import blank
from ..errors import OctomemError, UsageValueError
from ..turns import TURN_KIND, beir_turn, epoch
from ..types import Document
from .ignore import walk
from .json_line import LineNotJSON, parse_line
from .limits import check_length
from .readable import check_readable, is_special, shown
from .times import in_range
from .transcripts import TranscriptFormat, not_a_transcript, sniff

#: File suffixes ``octomem ingest`` reads as text.
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ".text"})
#: Suffix of transcripts (chat JSON Lines, Claude Code sessions).
TRANSCRIPT_SUFFIX = ".jsonl"
#: What a folder ``ingest`` finds nothing to read in lacks (the CLI and the MCP tool say it).
NOTHING_TO_READ = "no text file (.md, .txt, .rst) or transcript (.jsonl)"
#: What ``ingest`` reads: ``auto`` text files and the ``.jsonl`` files that are
#: transcripts (sniffed); ``text`` text files only; ``chat`` / ``claude-code`` every
#: ``.jsonl`` file as that transcript format.
IngestFormat = Literal["auto", "text", "chat", "claude-code"]
INGEST_FORMATS: tuple[str, ...] = ("auto", "text", "chat", "claude-code")


def _transcript_format(path: Path, fmt: IngestFormat, named: bool) -> TranscriptFormat | None:
    """Return how to read a ``.jsonl`` file, or ``None`` to leave it alone.

    :raises OctomemError: a file named on its own is no transcript (``auto``).
    """
    if fmt in ("chat", "claude-code"):
        return fmt  # type: ignore[return-value]
    if fmt == "text":
        if named:
            raise OctomemError(f"{path}: a .jsonl file is read as a transcript; drop --format "
                               "text, or give --format chat or claude-code")
        return None
    found = sniff(path)
    if found is None and named:
        raise not_a_transcript(path)
    return found


def find_sources(
    paths: list[Path], fmt: IngestFormat = "auto", passed_over: list[Path] | None = None,
    refused: list[tuple[Path, str]] | None = None, honour_ignores: bool = True,
    left_out: list[tuple[Path, str]] | None = None,
    unreadable: list[tuple[Path, str]] | None = None,
) -> tuple[list[Path], list[tuple[Path, TranscriptFormat]]]:
    """Expand files and folders into the text files and transcripts under them, sorted,
    hidden files and folders skipped, and those the ignore rules leave out (:mod:`.ignore`:
    tool folders such as ``node_modules/``, ``.gitignore``, ``.octomemignore``) unless
    ``honour_ignores`` is false. A file named itself is always read.

    In a folder, ``auto`` takes the text files and the ``.jsonl`` files that sniff as a
    transcript (other ``.jsonl`` files are left alone, like any other suffix);
    ``chat`` / ``claude-code`` take every ``.jsonl`` file as that format and no text
    file; ``text`` takes text files only.

    :param passed_over: if given, receives the files in folders that were left alone
        (another suffix, or a ``.jsonl`` file that is not a transcript).
    :param left_out: if given, receives ``(path, why)`` for each folder and file in the
        folders that an ignore rule left out (``why``: the ignore file, or the kind of folder).
    :param unreadable: if given, receives ``(folder, why)`` for each folder inside a named
        folder that cannot be listed (nothing under it read; without it, left out unsaid).
    :param refused: if given, receives ``(path, why)`` for each named path that cannot
        be read (missing, unreadable: ``PATH: cannot be read (Permission denied)``, neither
        text nor a transcript) instead of raising: the caller stores the others, then
        fails naming each; nothing under such a path is returned.
    :returns: ``(text files, [(transcript file, its format)])``.
    :raises UsageValueError: ``fmt`` is unknown (a usage error: status 2 on the command
        line); the message lists the formats.
    :raises OctomemError: a path does not exist or cannot be read, a named file is
        neither a text file nor a transcript.
    """
    if fmt not in INGEST_FORMATS:
        raise UsageValueError(f"--format: must be one of {', '.join(INGEST_FORMATS)}, got {fmt!r}")
    texts: list[Path] = []
    transcripts: list[tuple[Path, TranscriptFormat]] = []
    for path in paths:
        its_texts: list[Path] = []  # a path that fails adds nothing, not a part of it
        its_transcripts: list[tuple[Path, TranscriptFormat]] = []
        try:
            try:
                _expand(path, fmt, its_texts, its_transcripts, passed_over, honour_ignores,
                        left_out, unreadable)
            except OSError as exc:  # Permission denied, I/O error: named, never a traceback
                slash = "/" if path.is_dir() else ""
                raise OctomemError(f"{shown(path)}{slash}: cannot be read "
                                   f"({exc.strerror or type(exc).__name__})") from exc
        except OctomemError as exc:
            if refused is None:
                raise
            refused.append((path, str(exc)))
            continue
        texts += its_texts
        transcripts += its_transcripts
    return _once(texts), transcripts


def _once(files: list[Path]) -> list[Path]:
    """Return ``files`` without a second path to a file already listed (a symlink beside
    its target, a folder named twice): a text file's document id is its resolved path,
    so the second was read as the first's document "unchanged" (trial 10)."""
    seen: set[Path] = set()
    out = []
    for file in files:
        try:
            real = file.resolve()
        except (OSError, RuntimeError):  # a symlink loop: read (and refused) as it is
            out.append(file)
            continue
        if real not in seen:
            seen.add(real)
            out.append(file)
    return out


def _expand(path: Path, fmt: IngestFormat, texts: list[Path],
            transcripts: list[tuple[Path, TranscriptFormat]],
            passed_over: list[Path] | None, honour_ignores: bool = True,
            left_out: list[tuple[Path, str]] | None = None,
            unreadable: list[tuple[Path, str]] | None = None) -> None:
    """Add what ``path`` (a named file or folder) holds to ``texts`` and ``transcripts``.

    :raises OctomemError: it does not exist, or a named file is neither text nor a
        transcript; nothing of it was added.
    """
    if not path.exists():
        raise OctomemError(f"{shown(path)}: no such file or folder"
                           + (" (a symlink to a missing target)" if path.is_symlink() else ""))
    named = not path.is_dir()
    if named:
        check_readable(path)
    for file in [path] if named else walk(path, honour_ignores, left_out, unreadable):
        if not named and is_special(file):
            if passed_over is not None:
                passed_over.append(file)
            continue
        suffix = file.suffix.lower()
        if suffix == TRANSCRIPT_SUFFIX:
            how = _transcript_format(file, fmt, named)
            if how is not None:
                transcripts.append((file, how))
            elif passed_over is not None:
                passed_over.append(file)
        elif suffix in TEXT_SUFFIXES and fmt in ("auto", "text"):
            texts.append(file)
        elif named and suffix in TEXT_SUFFIXES:  # --format chat or claude-code
            raise OctomemError(f"{file}: --format {fmt} reads only {TRANSCRIPT_SUFFIX} "
                               "transcripts; leave out --format to ingest it as text")
        elif named:
            wanted = ", ".join(sorted(TEXT_SUFFIXES | {TRANSCRIPT_SUFFIX}))
            raise OctomemError(f"{file}: not a text file or transcript (reads {wanted})")
        elif passed_over is not None:
            passed_over.append(file)


#: Longest title taken from a ``# `` heading (characters): the title is repeated in every
#: chunk's row, index entry and embedded text, so a paragraph-long "heading" would
#: multiply the store (a 12 KB heading made 401 chunks of one sentence).
TITLE_MAX_CHARS = 200


def _title(path: Path, text: str) -> str:
    """The first ``# `` heading in the first 20 lines, cut at a word before
    :data:`TITLE_MAX_CHARS` (with "…"), else the file name without suffix."""
    for line in text.splitlines()[:20]:
        if line.startswith("# "):
            title = line[2:].strip()
            if len(title) > TITLE_MAX_CHARS:
                cut = title[:TITLE_MAX_CHARS].rsplit(" ", 1)[0] or title[:TITLE_MAX_CHARS]
                title = cut.rstrip() + "…"
            return title
    return path.stem


def _recorded_at(mtime: float) -> float:
    """A file's modification time, or now when it is outside the times octomem keeps (a
    file can carry any mtime, e.g. ``touch -d 10000-01-01``)."""
    return mtime if in_range(mtime) else time.time()


def file_id(path: Path) -> str:
    """Return the id of the document ingested from ``path``: ``file:`` and the first 24
    hex digits of the sha256 of its resolved path (one file, one id, wherever it is
    ingested from)."""
    return "file:" + hashlib.sha256(str(Path(path).resolve()).encode()).hexdigest()[:24]


def file_document(path: Path, limits: Any = None) -> Document:
    """Read one text file as a document; its id is derived from the absolute path, so
    ingesting the same file again updates it instead of adding a copy. A Markdown file's
    front matter gives its title, tags and event time and is not part of its text
    (:mod:`.front_matter`; its tags checked against ``limits``, the ``limits`` settings,
    their defaults when ``None``). A leading UTF-8
    byte-order mark (some Windows editors write one) is not part of the text, and every
    line ends in LF whatever the file has (CRLF, a lone CR), as Python's text mode reads
    it: a note written on Windows is stored, chunked, shown and exported as the same note
    written elsewhere. (A file stored with CRLF before this becomes its next revision on
    its next ingest, once: its stored text does change.)

    :raises OctomemError: the file is not UTF-8 text, holds a NUL byte (binary), its name
        is not UTF-8, or it is not a regular file (:func:`.readable.check_readable`).
    :raises InvalidQueryError: its front matter has a tag that is no label, or a date
        that is no ISO-8601 date, naming the file.
    """
    check_readable(path)
    resolved = path.resolve()
    data = resolved.read_bytes()
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0  # not text
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        raise OctomemError(
            f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start + bom})") from exc
    nul = data.find(b"\0")
    if nul >= 0:  # valid UTF-8, yet no text file holds NUL (what `grep -I` calls binary)
        raise OctomemError(f"{path}: a binary file, not text (a NUL byte at byte {nul})")
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    doc = Document(
        text=text, id=file_id(resolved), title=_title(path, text), uri=resolved.as_uri(),
        kind="DOC", created_at=_recorded_at(resolved.stat().st_mtime),
    )
    if path.suffix.lower() != ".md":
        return doc
    from .front_matter import with_front_matter

    return with_front_matter(doc, path, lambda body: _title(path, body), limits)


class EmptyFileError(OctomemError):
    """A text file holding only whitespace: nothing to store (in a folder, only noted)."""


def read_text_file(path: Path, max_bytes: int | None, argument: str | None = None,
                   limits: Any = None) -> Document:
    """Read one text file as a document (:func:`file_document`) once its size is checked.

    :param max_bytes: the largest file read, in bytes (setting ``limits.file_bytes``);
        ``None``: any size.
    :param argument: what a too-large file is called in the error (default: its path).
    :param limits: the ``limits`` settings its front matter's tags are checked against.
    :raises InvalidQueryError: the file is larger than ``max_bytes``.
    :raises EmptyFileError: it holds only whitespace.
    :raises OctomemError: it is not UTF-8 text, or cannot be read (naming the file and
        the system's reason).
    """
    try:
        if max_bytes is not None:
            check_length(path.stat().st_size, max_bytes, argument or str(path),
                         "limits.file_bytes", "bytes", "; split it")
        doc = file_document(path, limits)
    except OSError as exc:
        raise OctomemError(f"{path}: cannot be read ({exc.strerror or exc})") from exc
    if blank(doc.text):
        raise EmptyFileError(f"{path}: empty file")
    return doc


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8-sig") as fh:  # a leading byte-order mark is dropped
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = parse_line(line)
            except LineNotJSON as exc:
                raise OctomemError(f"{path}:{lineno}: not valid JSON: {exc.why}") from None
            yield row


def beir_corpus_path(folder: Path) -> Path:
    """Return ``folder/corpus.jsonl``.

    :raises UsageValueError: ``folder`` is a file (``corpus.jsonl`` itself): the message
        says to give the folder that holds it.
    :raises OctomemError: the folder has no ``corpus.jsonl`` (not in BEIR layout).
    """
    if folder.is_file():
        raise UsageValueError(
            f"{folder}: a file; give the BEIR folder that holds it ({folder.parent}), not the "
            "file itself")
    corpus = folder / "corpus.jsonl"
    if not corpus.is_file():
        raise OctomemError(
            f"{folder}: no corpus.jsonl; a BEIR folder holds corpus.jsonl, queries.jsonl "
            "and qrels/<split>.tsv"
        )
    return corpus


#: Most bad rows of a BEIR corpus one error names (as for a transcript's bad lines).
MAX_BAD_ROWS = 20


def check_beir_corpus(folder: Path, notes: list[str] | None = None) -> int:
    """Read ``folder``'s ``corpus.jsonl`` whole before anything of it is stored, so that a
    bad row stores none of it (as a malformed transcript line does): every line valid
    JSON, every row with an ``_id``, no ``_id`` twice (``1`` and ``"1"`` are one id: ids
    are stored as text). A duplicate is stored as a new revision of the first row, which
    becomes history; that happened without a word (trial 16 F23).

    :param notes: when given, a duplicate ``_id`` is not an error but appended here as
        ``FILE:LINE: ...`` (LongMemEval's corpus repeats 8 session turns at a second date:
        refusing it refused the whole corpus).
    :returns: how many rows it holds (for the progress bar).
    :raises UsageValueError: ``folder`` is a file (:func:`beir_corpus_path`).
    :raises OctomemError: no ``corpus.jsonl``, or bad rows: each named with its line (up
        to :data:`MAX_BAD_ROWS`).
    """
    corpus = beir_corpus_path(folder)
    first: dict[str, int] = {}
    bad: list[str] = []
    rows = 0
    with corpus.open(encoding="utf-8-sig") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            rows += 1
            try:
                row = parse_line(line)
            except LineNotJSON as exc:
                bad.append(f"{lineno}: not valid JSON: {exc.why}")
                continue
            if not isinstance(row, dict) or "_id" not in row:
                bad.append(f"{lineno}: the row has no '_id' field")
                continue
            key = str(row["_id"])
            if key not in first:
                first[key] = lineno
            elif notes is None:
                bad.append(f"{lineno}: _id {key!r} again (first on line {first[key]})")
            else:
                notes.append(f"{corpus}:{lineno}: _id {key!r} again (first on line "
                             f"{first[key]}): stored as its new revision, the earlier row "
                             "kept as history")
    if bad:
        more = f"; and {len(bad) - MAX_BAD_ROWS} more" if len(bad) > MAX_BAD_ROWS else ""
        raise OctomemError(f"{corpus}:" + f"; {corpus}:".join(bad[:MAX_BAD_ROWS]) + more
                           + "; nothing of the corpus was stored")
    return rows


def count_lines(path: Path) -> int:
    """Return the number of non-empty lines of a file (for progress bars)."""
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


#: Version of what :func:`beir_documents` makes of a corpus (2: rows naming a
#: conversation and a speaker are turns); caches of stored corpora key on it.
BEIR_READER_VERSION = 2


def beir_documents(folder: Path) -> Iterator[Document]:
    """Yield the documents of a BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``,
    optional ``metadata``), in file order.

    A row whose metadata names a conversation and a speaker (:data:`~..turns.BEIR_NAMES`:
    LoCoMo's ``conv_id``/``speaker``, LongMemEval's ``qid``/``speaker``) is a turn: kind
    ``TURN``, its metadata completed with the turn keys (position: its order among its
    conversation's rows), its event time the turn's time. Other rows are kind ``DOC``.
    The row's ``_id``, title, text and own metadata are kept either way.

    :raises OctomemError: no corpus.jsonl, a malformed line, a row without ``_id``, or
        a turn whose time is in no known format.
    """
    corpus = beir_corpus_path(folder)
    positions: dict[str, int] = {}
    for row in _jsonl(corpus):
        if "_id" not in row:
            raise OctomemError(f"{corpus}: a row has no '_id' field")
        text = row.get("text") or ""
        title = row.get("title") or None
        if not text.strip():
            text = title or ""
        if not text.strip():
            continue
        metadata = {str(k): v for k, v in (row.get("metadata") or {}).items()}
        try:
            turn = beir_turn(metadata, positions)
        except ValueError as exc:
            raise OctomemError(f"{corpus}: row {row['_id']!r}: {exc}") from None
        if turn is None:
            yield Document(text=text, id=str(row["_id"]), title=title, kind="DOC",
                           metadata=metadata)
            continue
        meta, moment = turn
        if moment is not None and not in_range(epoch(moment) or 0.0):
            raise OctomemError(f"{corpus}: row {row['_id']!r}: its time is outside the times "
                               "octomem keeps (0001-01-02T00:00Z up to 9999-12-31T00:00Z)")
        yield Document(text=text, id=str(row["_id"]), title=title, kind=TURN_KIND,
                       metadata=meta, event_time=epoch(moment))
