"""A table of single-word vectors for a fixed public word list, one per model and machine.

The ``expansion`` column (:mod:`.expansion`) needs the vector of every distinct word of
the question and of its candidates, each word embedded alone (~1.4 ms of CPU per word,
all-MiniLM-L6-v2 int8 on 2 cores). Kept per process only, a fresh process paid for every
word it met: LongMemEval tune's first question 451 -> 4304 ms, LoCoMo ~1 s per
conversation. This table holds the vectors of a list that depends on the model alone —
the whole words of its own tokenizer vocabulary (:func:`public_words`: alphabetic, 3
letters or more, not a function word; 21,299 words for all-MiniLM-L6-v2) — so it says
nothing about what any scope stores, and lives in octomem's cache folder, never in a
scope's files. Words outside it are still embedded live and kept per process only.

Coverage (tune splits, every candidate turn's distinct words, counted per turn):
LoCoMo conv-26/30/41/42/43 96.8 % of word occurrences (85.3 % of distinct words),
LongMemEval tune 90.6 % (40.6 %: its long tail of rare words stays live).

Built once per machine per model by :func:`build_table`: ~21k words x ~1.4 ms ≈ 30 s of
CPU (measured: ``benchmarks/results/conversations/word-expansion-cold/README.md``), by
the ``conversation`` reranker's ``warm()`` — the MCP server's background warm-up,
``octomem ingest`` and ``octomem bench`` call it — never by a search, which uses the table
when it is there and embeds live otherwise. 21,299 x 384 float32 = 31 MiB, memory-mapped
(``.npy``): a process reads the pages of the words it meets.

Validated on every open (:func:`open_table`): the model id, the list's sha256 and the
table file's sha256 recorded beside it (``.json``) must match; a damaged, truncated or
mismatched file is never read, and the next ``warm()`` builds it again. With the bundled
model each word is embedded alone (one text per onnxruntime call), so a word's vector is
the same bit for bit from the table or live.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from octomem.engine.digests import file_sha256
from octomem.engine.files import private_dir, private_file
from octomem.engine.words import FUNCTION_WORDS

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np

log = logging.getLogger(__name__)
#: Part of the table's file name and its record: bump it when the format changes.
TABLE_VERSION = 1
#: Words per embedder call while building (progress is reported per batch).
BUILD_BATCH = 256
#: ``progress(done, total)``: words embedded so far, of the list's length.
Progress = Callable[[int, int], None]


def public_words(vocabulary: Iterable[str]) -> tuple[str, ...]:
    """Return the whole words among a tokenizer's tokens, sorted: alphabetic (no
    ``##`` pieces, no ``[unused]`` slots), 3 letters or more, written as
    :func:`~.expansion.expansion_words` writes a word (case-folded), not a function word.

    :param vocabulary: the tokenizer's tokens (``tokenizer.json``'s ``model.vocab``).
    """
    return tuple(sorted({w for w in vocabulary if len(w) >= 3 and w.isalpha()
                         and w == w.casefold() and w not in FUNCTION_WORDS}))


def words_digest(words: Sequence[str]) -> str:
    """Return the hex sha256 of ``words`` joined by newlines (the list's identity)."""
    return hashlib.sha256("\n".join(words).encode("utf-8")).hexdigest()


def table_folder(folder: Path | None = None) -> Path:
    """Return where tables live: ``folder``, or ``words/`` in the user's cache folder."""
    import platformdirs

    return folder if folder is not None else platformdirs.user_cache_path("octomem") / "words"


def table_paths(folder: Path, model_id: str, digest: str) -> tuple[Path, Path]:
    """Return the table's ``.npy`` and its ``.json`` record for a model and a list."""
    slug = re.sub(r"[^A-Za-z0-9.-]+", "_", model_id)
    stem = f"words-v{TABLE_VERSION}-{slug}-{digest[:12]}"
    return folder / f"{stem}.npy", folder / f"{stem}.json"


@dataclass(frozen=True)
class WordTable:
    """An opened, validated table: ``index`` word -> row of ``vectors``.

    :ivar vectors: ``(len(index), dim)`` float32 unit rows, memory-mapped read-only.
    """

    index: dict[str, int]
    vectors: np.ndarray


def open_table(folder: Path, model_id: str, dim: int, words: Sequence[str],
               ) -> WordTable | None:
    """Open the table of ``model_id`` for ``words`` when it is there and valid.

    :param words: :func:`public_words` of the model's vocabulary, in order.
    :returns: the table, or ``None`` when it is missing or fails a check (its record
        unreadable, another model, list or dimension, its file's sha256 not the recorded
        one, a shape or dtype that is not ``(len(words), dim)`` float32).
    """
    import numpy as np

    digest = words_digest(words)
    npy, record = table_paths(folder, model_id, digest)
    if not npy.is_file() or not record.is_file():
        return None
    try:
        meta = json.loads(record.read_text(encoding="utf-8"))
        expected = {"version": TABLE_VERSION, "model_id": model_id, "dim": dim,
                    "count": len(words), "words_sha256": digest}
        if any(meta.get(k) != v for k, v in expected.items()):
            raise ValueError("recorded for another model, list or format")
        if file_sha256(npy) != meta.get("table_sha256"):
            raise ValueError("its sha256 is not the recorded one")
        vectors = np.load(npy, mmap_mode="r", allow_pickle=False)
        if vectors.shape != (len(words), dim) or vectors.dtype != np.float32:
            raise ValueError(f"shape {vectors.shape} {vectors.dtype}")
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        log.warning("the word table %s is not used (%s); warm-up builds it again", npy, exc)
        return None
    return WordTable({w: i for i, w in enumerate(words)}, vectors)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (one builder per table on the machine; where
    ``fcntl`` is missing, e.g. Windows, two builders each write a whole file in turn)."""
    private_file(path)
    with path.open("a") as fh:
        try:
            import fcntl
        except ImportError:
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_table(embedder: Any, words: Sequence[str], folder: Path,
                progress: Progress | None = None) -> WordTable | None:
    """Return the table of ``embedder``'s model for ``words``, building it first unless a
    valid one is there (waiting for another process building it).

    Written as ``<name>.<pid>.partial.npy``, hashed, then moved in place before its
    record, so a reader never takes a partial file for a table.

    :param embedder: an :class:`~octomem.engine.arms.Embedder` (``model_id``, ``dim``).
    :param progress: told the words done after each :data:`BUILD_BATCH`.
    :returns: the opened table; ``None`` when the folder cannot be written.
    :raises EmbedderUnavailableError: the embedder cannot load its model.
    """
    import numpy as np

    model_id, dim = str(embedder.model_id), int(embedder.dim)
    digest = words_digest(words)
    npy, record = table_paths(folder, model_id, digest)
    try:
        private_dir(folder)
        with _locked(npy.with_suffix(".lock")):
            table = open_table(folder, model_id, dim, words)
            if table is not None:
                return table
            for stale in folder.glob(f"{npy.stem}.*.partial.npy"):
                stale.unlink(missing_ok=True)  # left by a builder that was killed
            partial = npy.with_name(f"{npy.stem}.{os.getpid()}.partial.npy")
            private_file(partial)
            out = np.lib.format.open_memmap(partial, mode="w+", dtype=np.float32,
                                            shape=(len(words), dim))
            for start in range(0, len(words), BUILD_BATCH):
                end = min(start + BUILD_BATCH, len(words))
                out[start:end] = embedder.embed_documents(list(words[start:end]))
                if progress is not None:
                    progress(end, len(words))
            out.flush()
            del out
            meta = {"version": TABLE_VERSION, "model_id": model_id, "dim": dim,
                    "count": len(words), "words_sha256": digest,
                    "table_sha256": file_sha256(partial)}
            os.replace(partial, npy)
            written = record.with_name(f"{record.stem}.{os.getpid()}.partial.json")
            private_file(written)
            written.write_text(json.dumps(meta, indent=1), encoding="utf-8")
            os.replace(written, record)
    except OSError as exc:
        log.warning("cannot write the word table in %s (%s); words are embedded live",
                    folder, exc)
        return None
    return open_table(folder, model_id, dim, words)
