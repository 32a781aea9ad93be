"""The fastembed embedder's tokenizer: token counts and ceilings, and the vocabulary.

A mixin of :class:`~.embedder.FastembedEmbedder`, read from the model's
``tokenizer.json`` alone (no ONNX session) for bundled and local models: counting a text's
WordPiece tokens (:mod:`.wordpiece_count`, the ``tokenizers`` library only for texts that
need it), a ceiling no count exceeds, and the tokens a reranker builds word vectors of.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from octomem.engine.errors import EmbedderUnavailableError

from .bert_text import is_bert_wordpiece
from .vocab_cache import counter_spec
from .wordpiece_count import WordPieceCounter


class TokenizerMixin:
    """Token counting over ``tokenizer.json``; the embedder provides the attributes below."""

    options: Any  # the embedder's options (.options.FastembedOptions): its cache_dir
    _source: Any  # the model's source (.source.ModelSource): its folder, when local
    _model: Any  # the loaded model, for a hub model's tokenizer file
    _tokenizer: Any  # tokenizers.Tokenizer, built on first need
    _counter: WordPieceCounter | None | Literal[False]  # False: not read yet
    max_tokens: int

    def load(self) -> None:  # provided by the embedder
        raise NotImplementedError

    def _describe(self) -> str:  # provided by the embedder
        raise NotImplementedError

    def _tokenizer_file(self) -> Path:
        if self._source.folder is not None:
            return self._source.folder / "tokenizer.json"
        self.load()  # hub models: the tokenizer arrives with the model
        return Path(self._model.model._model_dir) / "tokenizer.json"

    def _read_tokenizer(self, parse: Callable[[str], Any]) -> Any:
        """Return ``parse`` of ``tokenizer.json``'s text.

        :raises EmbedderUnavailableError: the file cannot be read or parsed.
        """
        path = self._tokenizer_file()
        try:
            return parse(path.read_text(encoding="utf-8"))
        except Exception as exc:
            raise EmbedderUnavailableError(
                f"{self._describe()}: cannot read tokenizer {str(path)!r}: {exc}"
            ) from exc

    def _get_tokenizer(self) -> Any:
        if self._tokenizer is None:
            from tokenizers import Tokenizer

            tokenizer = self._read_tokenizer(Tokenizer.from_str)
            tokenizer.no_truncation()
            tokenizer.no_padding()
            self._tokenizer = tokenizer
        return self._tokenizer

    def _get_counter(self) -> WordPieceCounter | None:
        """Return the WordPiece counter of a BERT tokenizer (``None`` for another kind),
        built from ``tokenizer.json``'s content, read from its compact copy in the cache
        folder when there is one (:mod:`.vocab_cache`; else parsed as JSON, and cached):
        the tokenizer itself is built only when a text needs it (building it was ~18 % of
        ingest excluding embedding).

        :raises EmbedderUnavailableError: the file cannot be read or parsed.
        """
        if self._counter is False:
            path = self._tokenizer_file()
            try:
                tables = counter_spec(path, is_bert_wordpiece, self.options.cache_dir)
            except Exception as exc:
                raise EmbedderUnavailableError(
                    f"{self._describe()}: cannot read tokenizer {str(path)!r}: {exc}"
                ) from exc
            self._counter = (WordPieceCounter(spec=tables.spec, load=self._get_tokenizer,
                                              shorter=tables.shorter, longest=tables.longest,
                                              keys=tables.keys)
                             if is_bert_wordpiece(tables.spec) else None)
        return self._counter

    def vocabulary(self) -> list[str]:
        """Return the tokenizer's tokens (``tokenizer.json``'s ``model.vocab``), read without
        loading the model for bundled and local models; the ``conversation`` reranker takes
        its whole words for a table of word vectors.

        :raises EmbedderUnavailableError: the tokenizer cannot be read or has no vocabulary.
        """
        vocab = self._read_tokenizer(json.loads).get("model", {}).get("vocab")
        if isinstance(vocab, dict):
            return list(vocab)
        if isinstance(vocab, list):  # unigram tokenizers: [token, score] pairs
            return [str(v[0]) for v in vocab if isinstance(v, list) and v]
        raise EmbedderUnavailableError(f"{self._describe()}: its tokenizer has no vocabulary")

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Return each text's length in WordPiece tokens, special tokens excluded.

        Reads only ``tokenizer.json`` (no ONNX session) for bundled and local models.

        :raises EmbedderUnavailableError: the tokenizer cannot be read.
        """
        if not texts:
            return []
        counter = self._get_counter()
        if counter is not None:  # BERT WordPiece: plain texts word by word, cached
            return counter.count(texts)
        encodings = self._get_tokenizer().encode_batch(list(texts), add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def token_ceilings(self, texts: Sequence[str]) -> list[int | None]:
        """Return, per text, a count :meth:`count_tokens` cannot exceed, found without
        counting (:meth:`WordPieceCounter.batch_ceilings`: the whole batch by numpy, the
        GIL released, word by word only for texts over :attr:`max_tokens` by their
        characters; ``None`` for a tokenizer other than BERT WordPiece).

        :raises EmbedderUnavailableError: the tokenizer cannot be read.
        """
        counter = self._get_counter()
        if counter is None:
            return [None] * len(texts)
        return counter.batch_ceilings(texts, self.max_tokens)
