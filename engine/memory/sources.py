"""Reading documents from disk: text/Markdown files and folders, and BEIR corpora."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

from ..errors import OctomemError
from ..types import Document

#: File suffixes ``octomem ingest`` reads as text.
TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".rst", ".text"})


def find_text_files(paths: list[Path]) -> list[Path]:
    """Expand files and folders into the text files under them, sorted, hidden dirs skipped.

    :raises OctomemError: a path does not exist, or a named file is not a text file.
    """
    found: list[Path] = []
    for path in paths:
        if not path.exists():
            raise OctomemError(f"{path}: no such file or folder")
        if path.is_file():
            if path.suffix.lower() not in TEXT_SUFFIXES:
                raise OctomemError(
                    f"{path}: not a text file (reads {', '.join(sorted(TEXT_SUFFIXES))})"
                )
            found.append(path)
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
            found.extend(
                Path(dirpath) / f for f in sorted(filenames)
                if Path(f).suffix.lower() in TEXT_SUFFIXES and not f.startswith(".")
            )
    return found


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


def file_document(path: Path) -> Document:
    """Read one text file as a document; its id is derived from the absolute path, so
    ingesting the same file again updates it instead of adding a copy.

    :raises OctomemError: the file is not UTF-8 text.
    """
    resolved = path.resolve()
    try:
        text = resolved.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise OctomemError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    doc_id = "file:" + hashlib.sha256(str(resolved).encode()).hexdigest()[:24]
    return Document(
        text=text, id=doc_id, title=_title(path, text), uri=resolved.as_uri(), kind="DOC",
        created_at=resolved.stat().st_mtime,
    )


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield json.loads(line)
            except json.JSONDecodeError as exc:
                raise OctomemError(f"{path}:{lineno}: not valid JSON: {exc.msg}") from exc


def beir_corpus_path(folder: Path) -> Path:
    """Return ``folder/corpus.jsonl``.

    :raises OctomemError: the folder has no ``corpus.jsonl`` (not in BEIR layout).
    """
    corpus = folder / "corpus.jsonl"
    if not corpus.is_file():
        raise OctomemError(
            f"{folder}: no corpus.jsonl; a BEIR folder holds corpus.jsonl, queries.jsonl "
            "and qrels/<split>.tsv"
        )
    return corpus


def count_lines(path: Path) -> int:
    """Return the number of non-empty lines of a file (for progress bars)."""
    with path.open("rb") as fh:
        return sum(1 for line in fh if line.strip())


def beir_documents(folder: Path) -> Iterator[Document]:
    """Yield the documents of a BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``,
    optional ``metadata``), kind ``DOC``, in file order.

    :raises OctomemError: no corpus.jsonl, a malformed line, or a row without ``_id``.
    """
    corpus = beir_corpus_path(folder)
    for row in _jsonl(corpus):
        if "_id" not in row:
            raise OctomemError(f"{corpus}: a row has no '_id' field")
        text = row.get("text") or ""
        title = row.get("title") or None
        if not text.strip():
            text = title or ""
        if not text.strip():
            continue
        yield Document(
            text=text, id=str(row["_id"]), title=title, kind="DOC",
            metadata={str(k): v for k, v in (row.get("metadata") or {}).items()},
        )
