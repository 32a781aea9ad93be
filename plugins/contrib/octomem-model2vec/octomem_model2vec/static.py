"""A model2vec static model read with ``tokenizers`` and ``safetensors`` directly.

model2vec's own loader (``StaticModel.from_pretrained``) spends most of a load on work
this plugin does not need: it deep-copies the tokenizer, sorts the whole vocabulary to
list its tokens, and serialises the tokenizer back to JSON to find a Unigram model's
unknown-token id. For the default model's 276,326-token tokenizer that is 3-4x the time
of reading the tokenizer itself (``benchmarks/results/model2vec-load/``). This module
reads the same files and computes the same vectors bit for bit
(``tests/test_model2vec_direct.py`` compares them with model2vec 0.10's ``encode``):

- the vectors: ``embeddings`` (model2vec layout) or ``embedding.weight``
  (sentence-transformers layouts) from the safetensors file, with the optional
  ``weights`` (one per token) and ``mapping`` (token id -> row, vocabulary-quantized
  models);
- a text: cut to ``max_tokens * median token length`` characters, tokenized without
  special tokens and truncated to ``max_tokens`` tokens, unknown tokens dropped; its
  vector is the mean of its tokens' rows (each times its weight), then L2-normalised
  when the model's config says ``normalize`` (norm + 1e-32, as model2vec does).
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from tokenizers import Tokenizer

#: The folder layouts model2vec reads, in the order it tries them: ``(config, safetensors
#: file, tokenizer, name of the embeddings tensor)``.
LAYOUTS = (
    ("config.json", "model.safetensors", "tokenizer.json", "embeddings"),
    ("config_sentence_transformers.json", "model.safetensors", "tokenizer.json",
     "embedding.weight"),
    ("config_sentence_transformers.json", "0_StaticEmbedding/model.safetensors",
     "0_StaticEmbedding/tokenizer.json", "embedding.weight"),
)
#: Texts embedded per batch (model2vec's ``encode`` default; a batch's texts are
#: embedded alike whatever else is in it, so this changes no vector).
BATCH = 1024
#: A Unigram model's unknown-token id as tokenizer.json writes it: ``"unk_id": N`` (or
#: null). The sequence ``"unk_id":`` can only be an object key in JSON text (a quote
#: inside a string is escaped), and only a Unigram model has that key.
_UNK_ID = re.compile(r'"unk_id"\s*:\s*(-?\d+|null)')


@dataclass
class StaticModel:
    """The parts of a static model that embed a text (see the module docstring).

    :ivar embedding: ``(rows, dim)`` vectors; int8, float16 or float32 as stored.
    :ivar weights: ``(tokens,)`` a weight per token id, or ``None``.
    :ivar mapping: ``(tokens,)`` int64 row of each token id, or ``None`` (row = id).
    :ivar unk_id: the unknown token's id, dropped from every text; ``None``: none.
    :ivar median_token_length: median characters per vocabulary token; a text is cut at
        ``max_tokens`` times this many characters before it is tokenized.
    """

    tokenizer: Tokenizer
    embedding: np.ndarray
    weights: np.ndarray | None
    mapping: np.ndarray | None
    unk_id: int | None
    median_token_length: int
    normalize: bool
    max_tokens: int

    @property
    def dim(self) -> int:
        """Vector size."""
        return int(self.embedding.shape[1])

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Return each text's token ids (no special tokens, the unknown one dropped), cut
        as the tokenizer's truncation is set."""
        encodings = self.tokenizer.encode_batch_fast(list(texts), add_special_tokens=False)
        if self.unk_id is None:
            return [e.ids for e in encodings]
        return [[i for i in e.ids if i != self.unk_id] for e in encodings]

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Embed texts as model2vec's ``StaticModel.encode`` does.

        :returns: ``(len(texts), dim)``, float32 for int8 vectors, else their dtype; a
            row of zeros for a text without a known token.
        """
        import numpy as np

        cut = self.max_tokens * self.median_token_length
        texts = [t[:cut] for t in texts]
        parts = [self._batch(texts[i:i + BATCH]) for i in range(0, len(texts), BATCH)]
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.concatenate(parts, axis=0)

    def _batch(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        ids = self.tokenize(texts)
        dtype = np.dtype(np.float32) if self.embedding.dtype == np.int8 else self.embedding.dtype
        out = np.zeros((len(ids), self.dim), dtype=dtype)
        if self.mapping is None and self.weights is None:  # texts of one length at once
            buckets: dict[int, list[int]] = defaultdict(list)
            for n, row in enumerate(ids):
                if row:
                    buckets[len(row)].append(n)
            for rows in buckets.values():
                out[rows] = self.embedding[np.array([ids[n] for n in rows],
                                                    dtype=np.int64)].mean(axis=1)
        else:
            for n, row in enumerate(ids):
                if row:
                    vectors = self.embedding[row if self.mapping is None else self.mapping[row]]
                    if self.weights is not None:
                        vectors = vectors * self.weights[row][:, None]
                    out[n] = vectors.mean(axis=0)
        if not self.normalize:
            return out
        out32 = out.astype(np.float32)
        norm = np.linalg.norm(out32, axis=1, keepdims=True) + 1e-32
        return (out32 / norm).astype(out.dtype)


def find_layout(folder: Path) -> tuple[Path, Path, Path, str]:
    """Return ``(config, safetensors file, tokenizer, embeddings tensor)`` of the first
    layout whose three files are all in ``folder``.

    :raises FileNotFoundError: no layout is complete there.
    """
    for config, tensors, tokenizer, name in LAYOUTS:
        paths = (folder / config, folder / tensors, folder / tokenizer)
        if all(p.exists() for p in paths):
            return (*paths, name)
    raise FileNotFoundError(f"no model2vec model in {str(folder)!r} (expected config.json, "
                            "model.safetensors and tokenizer.json)")


def load(folder: Path, max_tokens: int) -> StaticModel:
    """Read the static model in ``folder`` (never a download).

    :param max_tokens: longest text in tokens; longer ones are cut there.
    :raises FileNotFoundError: no complete layout in ``folder``.
    :raises ValueError: the files disagree (vectors and vocabulary sizes) or are malformed.
    :raises OSError: a file cannot be read.
    """
    import numpy as np
    from safetensors import safe_open
    from tokenizers import Tokenizer

    config_path, tensors, tokenizer_path, name = find_layout(folder)
    with safe_open(str(tensors), framework="numpy") as fh:
        stored = set(fh.keys())
        embedding = fh.get_tensor(name)
        weights = fh.get_tensor("weights") if "weights" in stored else None
        mapping = fh.get_tensor("mapping") if "mapping" in stored else None
    text = tokenizer_path.read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_str(text)
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_tokens)
    size = tokenizer.get_vocab_size(with_added_tokens=True)
    if mapping is None and len(embedding) != size:
        raise ValueError(f"{tensors}: {len(embedding)} vectors for {size} tokens, and no "
                         "token mapping")
    lengths = [len(t) for t in map(tokenizer.id_to_token, range(size)) if t is not None]
    config: dict[str, Any] = json.loads(config_path.read_text(encoding="utf-8"))
    return StaticModel(tokenizer, embedding, weights, mapping, _unk_id(tokenizer, text),
                       int(np.median(lengths)), bool(config.get("normalize", False)),
                       max_tokens)


def _unk_id(tokenizer: Tokenizer, text: str) -> int | None:
    """Return the unknown token's id: a WordPiece, BPE or WordLevel model names its
    token; a Unigram model keeps the id (``unk_id`` in tokenizer.json)."""
    model = tokenizer.model
    if hasattr(model, "unk_token"):
        return None if model.unk_token is None else tokenizer.token_to_id(model.unk_token)
    found = _UNK_ID.search(text)
    if found is None or found.group(1) == "null":
        return None
    return int(found.group(1))
