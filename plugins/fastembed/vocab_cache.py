"""A compact copy of what the WordPiece counter reads from ``tokenizer.json``, cached once
per tokenizer file, so that a process starts counting without parsing the file's JSON.

:class:`~.wordpiece_count.WordPieceCounter` needs the tokenizer's settings, its vocabulary
(30,522 entries for MiniLM) and, for ceilings, the entries a run of letters and digits can
equal (:func:`~.wordpiece_ceilings.shorter_words`) and their hash table
(:class:`~.ceiling_arrays.VocabularyKeys`). Made from ``tokenizer.json`` that took
~19 ms of every ingest's first batch, before anything else could overlap it: read and
decode 2 ms, ``json.loads`` 8.5, the run entries 6-9 (``chrt -f 10``, one 2-core Xeon;
``benchmarks/results/ingest/2026-12-03-round10``). The cache holds the same values in
:mod:`marshal`'s format (data only, read by C: ~5 ms with the vocabulary joined into one
string), named by the sha256 of the tokenizer file's bytes, Python's version and
:data:`FORMAT`; a file that does not read back as that is ignored and made again, and
one that cannot be written leaves the values made from the JSON (nothing else changes).
Since format 2 it also holds the vocabulary's longest entry's length, the hash table's
arrays as bytes (read in place), and the run entries as marshal bytes of their own,
unpacked only when a ceiling needs them (an ingest's batch ceilings use the table): of
the first batch's fixed ~13 ms, ~6 ms less (``benchmarks/results/ingest/2026-12-04-round15``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .wordpiece_ceilings import shorter_words

#: Bump when what a cache file holds changes, :class:`~.ceiling_arrays.VocabularyKeys`'
#: layout included (its ``BITS``, ``KEY_BYTES`` and hash).
FORMAT = 2


def cache_path(tokenizer_bytes: bytes, cache_dir: Path | None = None) -> Path:
    """Return the cache file of the tokenizer file whose bytes are ``tokenizer_bytes``.

    :param cache_dir: the cache folder (default: the user's cache directory).
    """
    import platformdirs

    folder = cache_dir or platformdirs.user_cache_path("octomem")
    digest = hashlib.sha256(tokenizer_bytes).hexdigest()[:32]
    python = f"{sys.version_info[0]}{sys.version_info[1]}"
    return folder / "tokenizers" / f"{digest}.py{python}.v{FORMAT}.marshal"


@dataclass(frozen=True)
class CounterTables:
    """What :class:`~.wordpiece_count.WordPieceCounter` is made of (its arguments).

    :param spec: ``tokenizer.json``'s content (``model.vocab`` its entries in order when
        read from the cache, else as the file has it).
    :param shorter: :func:`~.wordpiece_ceilings.shorter_words` of the vocabulary, or a
        function returning it (read from the cache when first called), or ``None``
        (another kind of tokenizer).
    :param longest: the longest vocabulary entry's length, when known.
    :param keys: :class:`~.ceiling_arrays.VocabularyKeys` of ``shorter``, when known.
    """

    spec: dict[str, Any]
    shorter: dict[bytes, int] | Callable[[], dict[bytes, int]] | None = None
    longest: int | None = None
    keys: Any = None


def _packed(spec: dict[str, Any], shorter: dict[bytes, int], keys: Any) -> bytes:
    """Return the cache file's bytes: ``spec`` without ``model.vocab``, the vocabulary's
    entries (joined by newlines when none holds one, else as a tuple), their number, the
    longest one's length, ``shorter`` (marshal bytes) and its hash table's (``keys``)
    :meth:`~.ceiling_arrays.VocabularyKeys.tables`."""
    model = dict(spec["model"])
    entries = list(model.pop("vocab"))
    joined = "\n".join(entries)
    vocab: str | tuple[str, ...] = joined if joined.count("\n") == max(len(entries) - 1, 0) \
        else tuple(entries)
    longest = max(map(len, entries), default=1)
    return marshal.dumps((FORMAT, {**spec, "model": model}, vocab, len(entries), longest,
                          marshal.dumps(shorter), keys.tables()))


def _run_entries(data: bytes, vocab: list[str]) -> dict[bytes, int]:
    """Return the run entries of a cache file (:func:`_packed`'s marshal bytes of them),
    or, when the bytes are not such a dict, those made from the vocabulary ``vocab``."""
    try:
        shorter = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        shorter = None
    return shorter if isinstance(shorter, dict) else shorter_words(vocab)


def _unpacked(data: bytes) -> CounterTables | None:
    """Return the tables of a cache file's bytes (``spec``'s ``model.vocab`` the entries
    in order), or ``None`` when they are not what :func:`_packed` writes."""
    from .ceiling_arrays import VocabularyKeys

    try:
        found = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(found, tuple) and len(found) == 7 and found[0] == FORMAT):
        return None
    _, spec, vocab, size, longest, shorter, tables = found
    if not (isinstance(spec, dict) and isinstance(spec.get("model"), dict)
            and isinstance(shorter, bytes) and isinstance(vocab, str | tuple)
            and isinstance(longest, int) and isinstance(tables, tuple) and len(tables) == 3):
        return None
    keys = VocabularyKeys.of_tables(*tables)
    entries = (vocab.split("\n") if vocab or size else []) if isinstance(vocab, str) \
        else list(vocab)
    if len(entries) != size or keys is None:
        return None
    return CounterTables({**spec, "model": {**spec["model"], "vocab": entries}},
                         lambda: _run_entries(shorter, entries), longest, keys)


def counter_spec(path: Path, is_counted: Any, cache_dir: Path | None = None) -> CounterTables:
    """Return what the counter of the tokenizer ``tokenizer.json`` at ``path`` is made of:
    from the cache when it holds it, else parsed and made (for a tokenizer
    ``is_counted(spec)`` accepts, its :func:`~.wordpiece_ceilings.shorter_words`; nothing
    more for others), then cached.

    :param is_counted: tells whether the counter reads this tokenizer
        (:func:`~.wordpiece_count.is_bert_wordpiece`); other tokenizers are not cached.
    :raises OSError: the tokenizer file cannot be read.
    :raises ValueError: it is not UTF-8 JSON.
    """
    data = path.read_bytes()
    cached = cache_path(data, cache_dir)
    try:
        found = _unpacked(cached.read_bytes())
    except OSError:
        found = None
    if found is not None:
        return found
    spec = json.loads(data.decode("utf-8"))
    if not isinstance(spec, dict) or not is_counted(spec):
        return CounterTables(spec)
    from .ceiling_arrays import VocabularyKeys

    shorter = shorter_words(spec["model"]["vocab"])
    keys = VocabularyKeys(shorter)
    # written whole under a name of this thread's, then moved into place: a reader never
    # sees half of it
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(_packed(spec, shorter, keys))
        os.replace(partial, cached)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
    return CounterTables(spec, shorter, None, keys)
