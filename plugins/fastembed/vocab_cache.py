"""A compact copy of what the WordPiece counter reads from ``tokenizer.json``, cached once
per tokenizer file, so that a process starts counting without parsing the file's JSON.

:class:`~.wordpiece_count.WordPieceCounter` needs the tokenizer's settings, its vocabulary
(30,522 entries for MiniLM) and, for ceilings, the entries a run of letters and digits can
equal (:func:`~.wordpiece_ceilings.shorter_words`). Made from ``tokenizer.json`` that took
~19 ms of every ingest's first batch, before anything else could overlap it: read and
decode 2 ms, ``json.loads`` 8.5, the run entries 6-9 (``chrt -f 10``, one 2-core Xeon;
``benchmarks/results/ingest/2026-12-03-round10``). The cache holds the same values in
:mod:`marshal`'s format (data only, read by C: ~5 ms with the vocabulary joined into one
string), named by the sha256 of the tokenizer file's bytes, Python's version and
:data:`FORMAT`; a file that does not read back as that is ignored and made again, and
one that cannot be written leaves the values made from the JSON (nothing else changes).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import marshal
import os
import sys
import threading
from pathlib import Path
from typing import Any

from .wordpiece_ceilings import shorter_words

#: Bump when what a cache file holds changes.
FORMAT = 1


def cache_path(tokenizer_bytes: bytes, cache_dir: Path | None = None) -> Path:
    """Return the cache file of the tokenizer file whose bytes are ``tokenizer_bytes``.

    :param cache_dir: the cache folder (default: the user's cache directory).
    """
    import platformdirs

    folder = cache_dir or platformdirs.user_cache_path("octomem")
    digest = hashlib.sha256(tokenizer_bytes).hexdigest()[:32]
    python = f"{sys.version_info[0]}{sys.version_info[1]}"
    return folder / "tokenizers" / f"{digest}.py{python}.v{FORMAT}.marshal"


def _packed(spec: dict[str, Any], shorter: dict[bytes, int]) -> bytes:
    """Return the cache file's bytes: ``spec`` without ``model.vocab``, the vocabulary's
    entries (joined by newlines when none holds one, else as a tuple), ``shorter``."""
    model = dict(spec["model"])
    entries = list(model.pop("vocab"))
    joined = "\n".join(entries)
    vocab: str | tuple[str, ...] = joined if joined.count("\n") == max(len(entries) - 1, 0) \
        else tuple(entries)
    return marshal.dumps((FORMAT, {**spec, "model": model}, vocab, len(entries), shorter))


def _unpacked(data: bytes) -> tuple[dict[str, Any], dict[bytes, int]] | None:
    """Return ``(spec, shorter)`` of a cache file's bytes (``spec``'s ``model.vocab`` the
    entries in order), or ``None`` when they are not what :func:`_packed` writes."""
    try:
        found = marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None
    if not (isinstance(found, tuple) and len(found) == 5 and found[0] == FORMAT):
        return None
    _, spec, vocab, size, shorter = found
    if not (isinstance(spec, dict) and isinstance(spec.get("model"), dict)
            and isinstance(shorter, dict) and isinstance(vocab, str | tuple)):
        return None
    entries = (vocab.split("\n") if vocab or size else []) if isinstance(vocab, str) \
        else list(vocab)
    if len(entries) != size:
        return None
    return {**spec, "model": {**spec["model"], "vocab": entries}}, shorter


def counter_spec(
    path: Path, is_counted: Any, cache_dir: Path | None = None
) -> tuple[dict[str, Any], dict[bytes, int] | None]:
    """Return ``tokenizer.json``'s content at ``path`` (``model.vocab`` as its entries in
    order when read from the cache, else as the file has it) and, for a tokenizer
    ``is_counted(spec)`` accepts, its :func:`~.wordpiece_ceilings.shorter_words`: from
    the cache when it holds them, else parsed and made, then cached.

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
        return spec, None
    shorter = shorter_words(spec["model"]["vocab"])
    # written whole under a name of this thread's, then moved into place: a reader never
    # sees half of it
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        partial.write_bytes(_packed(spec, shorter))
        os.replace(partial, cached)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
    return spec, shorter
