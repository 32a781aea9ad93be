"""Reranker ``conversation``: conversation turns re-scored by a linear model over their
structure (neighbours, session, speaker, length) and the arms' scores.

Other chunks (documents, statements) are left exactly where fusion put them: only the
slots turns hold in the fused list are re-ordered among turns, so a store without
transcripts ranks as before. A turn that does not match the query itself is scored below
every one that does (:mod:`.own_match`).

The weights are data (``weights.json`` beside this module), one weight vector per kind
of speaker — ``peer`` (chats between named people), ``user`` and ``assistant`` — fitted by
``benchmarks/fit_conversation.py`` on tune splits only (LoCoMo conv-26/30/41/42/43 for
``peer``, LongMemEval ``--split tune`` for ``user``/``assistant``). A speaker's kind is
the turn's own ``role``, never the dataset it came from.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.errors import ArmConfigError, EmbedderUnavailableError
from octomem.engine.hookspecs import hookimpl
from octomem.engine.relevance import content_words
from octomem.engine.relevance_features import CODING_AGENT_SOURCES, about_asker
from octomem.engine.types import Chunk, FusedHit

from .expansion import (
    EXPANSION_EMBEDDER,
    WordVectors,
    expansion_words,
    word_columns,
)
from .features import (
    FEATURES,
    KINDS,
    Turn,
    TurnColumns,
    TurnRow,
    folded_words,
    held_terms,
    impersonal,
    query_terms,
    recalls_assistant,
    standardised,
    turn_features,
    turn_of,
    turn_row,
)
from .options import ConversationOptions
from .own_match import below_unmatched, own_match
from .word_table import (
    Progress,
    WordTable,
    build_table,
    open_table,
    public_words,
    table_folder,
)

if TYPE_CHECKING:  # numpy is imported where arrays are made: building the arm stays light
    import numpy as np

NAME = "conversation"
#: The weights shipped with the package.
WEIGHTS_FILE = Path(__file__).with_name("weights.json")
#: Chunks whose :class:`Known` facts the reranker keeps (first in, first out): the
#: storage's chunk cache (``plugins/sqlite/chunk_cache.py``) holds as many and returns
#: the same chunk objects for as long, so a conversation's turns are read once.
KNOWN_CAPACITY = 8192


@dataclass(frozen=True, slots=True)
class Known:
    """What a chunk brings to every query it is a candidate of, read once per chunk.

    :param turn: its :class:`~.features.Turn`, ``None`` when it is not a turn.
    :param words: the content words of its title and text
        (:func:`~octomem.engine.relevance.content_words`).
    :param asks: whether its text holds ``"?"``.
    :param expansion: its :func:`~.expansion.expansion_words`.
    :param text_words: :func:`~.expansion.expansion_words` of its text alone (no title).
    """

    turn: Turn | None
    words: frozenset[str]
    asks: bool
    row: TurnRow | None = None
    expansion: tuple[str, ...] = ()
    text_words: tuple[str, ...] = ()


def known_of(chunk: Chunk) -> Known:
    """Return what ``chunk`` brings to the features (:class:`Known`; ``row``: the turn's
    :func:`~.features.turn_row`)."""
    turn = turn_of(chunk.metadata, chunk.text)
    if turn is None:
        return Known(None, frozenset(), False)
    passage = _passage(chunk)
    return Known(turn, content_words(passage), "?" in chunk.text, turn_row(turn),
                 expansion_words(passage), expansion_words(chunk.text))


@dataclass(frozen=True, slots=True)
class TurnModel:
    """Linear weights per speaker kind over standardised :data:`FEATURES` (+ bias last).

    :param weights: kind -> ``len(FEATURES) + 1`` floats (made numpy arrays by
        :meth:`matrix`, so reading the file imports no numpy).
    :param binary: which features are 0/1 (kept as they are, not standardised).
    """

    weights: dict[str, tuple[float, ...]]
    binary: tuple[bool, ...]

    @classmethod
    def load(cls, path: Path) -> TurnModel:
        """Read a weights file.

        :raises ArmConfigError: unreadable, or its features are not :data:`FEATURES`.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ArmConfigError(
                f"arms.conversation.weights {path}: cannot be read: {exc}") from exc
        if tuple(data.get("features", ())) != FEATURES:
            raise ArmConfigError(
                f"arms.conversation.weights {path}: features {data.get('features')} are not "
                f"{list(FEATURES)}")
        weights = {k: tuple(float(w) for w in data["weights"][k]) for k in KINDS}
        return cls(weights, tuple(bool(b) for b in data["binary"]))

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """Return the weights as ``(len(FEATURES), len(KINDS))`` coefficients and a
        ``(len(KINDS),)`` bias (columns in :data:`~.features.KINDS` order)."""
        import numpy as np

        stacked = np.array([self.weights[k] for k in KINDS], dtype=np.float64).T
        return stacked[:-1], stacked[-1]


class ConversationReranker:
    """Re-score conversation turns; leave every other chunk in place.

    :param options: depth and weights file.
    :param embedder: the pipeline's embedder, whose single-word vectors give the
        ``expansion`` feature (:mod:`.expansion`); ``None``: that feature is 0.
    :raises ArmConfigError: the weights file is unreadable or for other features.
    """

    name = NAME

    def __init__(self, options: ConversationOptions | None = None,
                 embedder: Any = None) -> None:

        self.options = options or ConversationOptions()
        self.embedder = embedder
        self._words: WordVectors | None | bool = embedder is not None
        self.model = TurnModel.load(self.options.weights or WEIGHTS_FILE)
        self._matrix: tuple[TurnModel, np.ndarray, np.ndarray] | None = None
        # id(chunk) -> (chunk, its facts): the chunk is held, so its id is not reused
        self._known: dict[int, tuple[Chunk, Known]] = {}
        self._lock = threading.Lock()

    def known(self, chunk: Chunk) -> Known:
        """Return :func:`known_of` ``chunk``, kept for the same chunk object (chunks are
        frozen; a store's chunk cache hands out the same object for the same row)."""
        entry = self._known.get(id(chunk))
        if entry is not None and entry[0] is chunk:
            return entry[1]
        facts = known_of(chunk)
        with self._lock:
            while len(self._known) >= KNOWN_CAPACITY:
                del self._known[next(iter(self._known))]
            self._known[id(chunk)] = (chunk, facts)
        return facts

    def known_all(self, hits: Sequence[Any]) -> list[Known]:
        """Return :meth:`known` of each hit's chunk, in order: the kept facts read in one
        loop (a recall reads ~150 candidates twice: their features and their groups)."""
        cache, known, out = self._known, self.known, []
        for hit in hits:
            chunk = hit.chunk
            entry = cache.get(id(chunk))
            out.append(entry[1] if entry is not None and entry[0] is chunk else known(chunk))
        return out

    def wanted(self, hits: Sequence[FusedHit]) -> int:
        """Return ``depth`` when a conversation turn is among ``hits``, else 0 (documents
        keep their fused order, so nothing more needs loading)."""
        if any(self.known(h.chunk).turn is not None for h in hits):
            return self.options.depth
        return 0

    def neighbour_depth(self, hits: Sequence[FusedHit]) -> int:
        """Return ``neighbours``: how many of the first fused ``hits`` bring their
        previous and next turns as extra candidates (:mod:`octomem.engine.turn_neighbours`),
        0 when no turn is among ``hits``."""
        if not self.options.neighbours:
            return 0
        return self.options.neighbours if self.wanted(hits) else 0

    def rerank(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """Score passages without their structure: the share of the query's words each
        holds (the Reranker protocol; conversation features need :meth:`rerank_hits`).

        :returns: ``(len(texts),)`` float32 in [0, 1].
        """
        import numpy as np

        words = folded_words(query)
        if not words:
            return np.zeros(len(texts), dtype=np.float32)
        return np.array([len(words & folded_words(t)) / len(words) for t in texts],
                        dtype=np.float32)

    def rerank_hits(
        self, query: str, hits: Sequence[FusedHit], similarity: np.ndarray | None,
        keyword: str | None,
    ) -> np.ndarray:
        """Score the conversation turns among fused ``hits``, all at once
        (:func:`~.features.turn_features`, then one product with each kind's weights).

        :param hits: fused hits, best first (their chunks' metadata say what is a turn).
        :param similarity: ``(len(hits),)`` cosine of each hit to the query (NaN unknown),
            or ``None`` without a semantic arm.
        :param keyword: the keyword arm's name in the hits' contributions.
        :returns: ``(len(hits),)`` float64: a score for each turn (higher is better; a
            turn that does not match the query itself below every one that does:
            :func:`~.own_match.below_unmatched`), NaN for every other hit (it keeps its
            fused place).
        """
        return self.rerank_grouped(query, hits, similarity, keyword)[0]

    def rerank_grouped(
        self, query: str, hits: Sequence[Any], similarity: np.ndarray | None,
        keyword: str | None,
    ) -> tuple[np.ndarray, list[tuple[str | None, str | None]] | None]:
        """Return :meth:`rerank_hits` and :meth:`groups` of ``hits`` from one read of
        their kept facts; the groups are ``None`` when every turn among ``hits`` is of
        one conversation in one scope (one group: what the rerank stage does without
        groups, :func:`octomem.engine.rerank.rerank`)."""
        import numpy as np

        scores = np.full(len(hits), np.nan)
        every = self.known_all(hits)
        index = [i for i, f in enumerate(every) if f.turn is not None]
        if not index:
            return scores, None
        facts, turn_hits = every, hits
        if len(index) < len(every):  # documents among the turns: the turns alone
            facts = [every[i] for i in index]
            turn_hits = [hits[i] for i in index]
        at = np.asarray(index, dtype=np.int64)
        cols = TurnColumns.of_rows([f.row for f in facts])  # type: ignore[misc]
        cos = similarity[at] if similarity is not None else np.full(len(at), np.nan)
        if keyword:  # the keyword arm's score of each turn, 0 where it did not return it
            own = [hit.contributions.get(keyword) for hit in turn_hits]
            kw = np.array([0.0 if h is None else h.score for h in own], dtype=np.float64)
        else:
            kw = np.zeros(len(at))
        expansion, soft = self.expansion(query, cols.speakers, facts)
        matches = held_terms(query_terms(query), [f.words for f in facts])
        raw = turn_features(folded_words(query), cols, kw, cos, matches,
                            np.array([f.asks for f in facts], dtype=bool), expansion, soft)
        x = standardised(raw, self.model.binary)
        coef, bias = self._weights()
        kind = cols.kind
        if self.options.impersonal_as_peer and impersonal(query):
            kind = np.zeros_like(kind)  # KINDS[0]: the peer weights, speakers alike
        elif self.options.impersonal_as_peer and about_asker(query):
            # a coding agent's turns: the assistant does the asker's work, so "how did I
            # fix …?" weighs both speakers alike, as a question about the subject does
            # (trial 16 F21: the fix 3rd behind two user turns, one of relevance 0.01)
            coding = np.array([h.chunk.metadata.get("source") in CODING_AGENT_SOURCES
                               for h in turn_hits], dtype=bool)
            kind = np.where(coding, 0, kind)
        turn_scores = (x @ coef + bias)[np.arange(len(at)), kind]
        if self.options.addressed and recalls_assistant(query):
            turn_scores += addressed_bonus(cols.kind, True, self.options.addressed)
        scores[at] = below_unmatched(turn_scores, own_match(matches, raw))
        # one conversation: read from its ~20 sessions, not the ~150 candidates
        one = len({conversation for conversation, _ in cols.sessions}) == 1
        if one and len({getattr(hit, "scope", None) for hit in turn_hits}) == 1:
            return scores, None
        return scores, [(getattr(hit, "scope", None),
                         None if f.turn is None else f.turn.conversation)
                        for hit, f in zip(hits, every, strict=True)]

    def expansion(self, query: str, names: Sequence[str], facts: Sequence[Known],
                  ) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Return the candidates' ``expansion`` column and their question words' best
        matches (:func:`~.expansion.word_columns`; the ``soft_*`` columns), each ``None``
        (its columns are 0) without an embedder, with an embedder other than
        :data:`~.expansion.EXPANSION_EMBEDDER` (the cosines the threshold and weights were
        fitted on), when it cannot load its model; the first also with ``expansion_tau``
        1, the second with ``soft_coverage`` off."""
        tau = self.options.expansion_tau
        soft = self.options.soft_coverage
        words = self._word_vectors() if tau < 1.0 or soft else None
        if words is None:
            return None, None
        texts = [f.text_words for f in facts] if soft else [()] * len(facts)
        try:
            column, best = word_columns(expansion_words(query), names,
                                        [f.expansion for f in facts], words, min(tau, 1.0),
                                        texts)
        except EmbedderUnavailableError:
            return None, None
        return (column if tau < 1.0 else None), (best if soft else None)

    def _word_vectors(self) -> WordVectors | None:
        """Return the :class:`~.expansion.WordVectors` of the embedder, made on first use
        with the word table when one is built (:func:`.word_table.open_table`; reading
        ``model_id`` may hash the model file), or ``None``."""
        if isinstance(self._words, bool):
            fits = self._words and str(getattr(self.embedder, "model_id", "")).startswith(
                EXPANSION_EMBEDDER)
            self._words = WordVectors(self.embedder) if fits else None
            if self._words is not None and self.options.word_table:
                self._words.table = self._table(build=False)
        return self._words

    def _table(self, build: bool, progress: Progress | None = None) -> WordTable | None:
        """Open the embedder's word table (``build``: building it first when it is missing
        or invalid); ``None`` when there is none, or the tokenizer cannot be read."""
        try:
            words = public_words(self.embedder.vocabulary())
            folder = table_folder(self.options.word_table_dir)
            if build:
                return build_table(self.embedder, words, folder, progress)
            return open_table(folder, str(self.embedder.model_id), int(self.embedder.dim), words)
        except (EmbedderUnavailableError, AttributeError):  # no vocabulary() to read
            return None

    def warm(self, progress: Progress | None = None) -> bool:
        """Build the word table of the ``expansion`` feature unless a valid one exists
        (once per machine per model, ~30 s of CPU: :mod:`.word_table`) and use it.

        :param progress: told ``(words done, words)`` while building.
        :returns: whether a table is in use (False: the feature is off, the embedder is
            another, or the table cannot be built; words are then embedded live).
        """
        words = self._word_vectors()
        if words is None or not self.options.word_table or (
                self.options.expansion_tau >= 1 and not self.options.soft_coverage):
            return False
        if words.table is None:
            try:
                words.table = self._table(build=True, progress=progress)
            except EmbedderUnavailableError:
                return False
        return words.table is not None

    def groups(self, hits: Sequence[Any]) -> list[tuple[str | None, str | None]]:
        """Return each hit's ``(scope, conversation)`` (``None`` for what is no turn): the
        turns of one conversation are re-ordered among the places they held, so a turn no
        arm ranked high cannot pass another conversation's turn that both arms ranked
        first — the weights of different speaker kinds (a named person's, a Claude Code
        user's) were fitted on different chat styles and are not comparable."""
        return [(getattr(hit, "scope", None), None if f.turn is None else f.turn.conversation)
                for hit, f in zip(hits, self.known_all(hits), strict=True)]

    def _weights(self) -> tuple[np.ndarray, np.ndarray]:
        """Return :meth:`TurnModel.matrix` of ``self.model``, stacked once per model."""
        cached = self._matrix
        if cached is None or cached[0] is not self.model:
            cached = self._matrix = (self.model, *self.model.matrix())
        return cached[1], cached[2]


def addressed_bonus(kind: np.ndarray, recalls: bool, bonus: float) -> np.ndarray:
    """Return what ``arms.conversation.addressed`` adds to each candidate's score:
    ``bonus`` for an assistant's turn when the question refers to the assistant's own
    words (``recalls``: :func:`~.features.recalls_assistant`), else 0.

    :param kind: ``(n,)`` int64 codes into :data:`~.features.KINDS`.
    :returns: ``(n,)`` float64.
    """
    import numpy as np

    assistant = np.asarray(kind) == KINDS.index("assistant")
    return (bonus if recalls else 0.0) * assistant


def _passage(chunk: Any) -> str:
    return f"{chunk.title}\n{chunk.text}" if chunk.title else chunk.text


def build(options: ConversationOptions, context: ArmContext) -> ConversationReranker:
    """Build the reranker (reads its weights file) on the pipeline's embedder."""
    return ConversationReranker(options, context.embedder)


@hookimpl
def octomem_register_rerankers() -> list[ArmSpec]:
    """Offer the ``conversation`` reranker (model-free; on by default)."""
    return [
        ArmSpec(
            kind="reranker", name=NAME, factory=build, options_model=ConversationOptions,
            description="conversation turns re-scored by neighbours, session, speaker and "
            "length (linear weights fitted on tune splits); other chunks keep their place",
        )
    ]
