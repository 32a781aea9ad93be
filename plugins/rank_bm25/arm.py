"""The ``rank-bm25`` keyword arm: Okapi BM25 from the rank-bm25 package, in memory.

Ranking is ``rank_bm25.BM25Okapi`` (Robertson & Zaragoza, "The Probabilistic Relevance
Framework: BM25 and Beyond", Foundations and Trends in IR 3(4), 2009), idf =
ln((N - n + 0.5) / (n + 0.5)). By default (``idf = "fts5"``) an idf <= 0 is floored at
1e-6 as FTS5's ``bm25()`` does (``fts5_aux.c``), so every matching chunk scores > 0;
``idf = "okapi"`` keeps rank-bm25's own floor, ``epsilon`` x the mean idf, which is <= 0
in a corpus of a few chunks. The defaults k1 = 1.2 and b = 0.75 are FTS5's fixed
constants too, so this arm and ``fts5`` differ only in implementation and can be
compared row by row in ``octomem bench``.

Text is analysed like the ``fts5`` arm's ``porter unicode61`` tokenizer: Unicode
case folding, diacritics removed, runs of letters and digits, Porter stemming (the
original algorithm, Porter 1980, via PyStemmer's Snowball ``porter``); a query's
possessive "'s" (option ``clitics``) and Lucene's English stop words are dropped from
queries only, as ``fts5`` drops them.

It keeps every stored chunk's term counts in Python objects and **scores every chunk in
Python on each query** (``BM25Okapi.get_scores`` walks one dict per chunk per query
term), rebuilt lazily from the storage whenever it changed. Memory and latency grow
linearly with the corpus; ``docs/benchmarks.md`` has the measured limits. Filters are
applied before ranking: only the chunks passing them are scored.
"""

from __future__ import annotations

import math
import re
import threading
import unicodedata
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from octomem.engine.arms import ArmContext, ArmSpec
from octomem.engine.errors import OctomemError
from octomem.engine.hookspecs import hookimpl
from octomem.engine.types import Chunk, Filters, Hit, Run
from octomem.engine.words import CLITIC, CLITICS, without_clitics

if TYPE_CHECKING:  # numpy is imported where arrays are made: registering the plugin stays light
    import numpy as np

NAME = "rank-bm25"
#: Lucene's English stop words (``EnglishAnalyzer.ENGLISH_STOP_WORDS_SET``), as ``fts5``.
ENGLISH_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)
_WORD = re.compile(r"[^\W_]+")
#: Filter results remembered (filters -> allowed chunk positions) between rebuilds.
_FILTER_CACHE = 256


class RankBm25Options(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``rank-bm25`` keyword arm (settings table ``[arms.rank-bm25]``)."""

    k1: float = Field(1.2, ge=0.0, le=10.0, description="term-frequency saturation (FTS5's 1.2)")
    b: float = Field(0.75, ge=0.0, le=1.0, description="length normalisation (FTS5's 0.75)")
    idf: Literal["fts5", "okapi"] = Field(
        "fts5", description="idf <= 0 floored at 1e-6 (FTS5) or at epsilon x mean idf (rank-bm25)"
    )
    epsilon: float = Field(
        0.25, ge=0.0, le=1.0, description="idf floor as a fraction of mean idf (idf = okapi)"
    )
    stemmer: str | None = Field("porter", description="PyStemmer algorithm, or empty for none")
    stopwords: bool = Field(True, description="drop Lucene's English stop words from queries")
    clitics: Literal["none", "s", "all"] = Field(
        "s", description="clitics taken off a query's words, as fts5's option: 'none', 's' "
        "(\"user's\" asks for user, not for an \"s\") or 'all' (also 't, 'd, 'll, 'm, 're, 've)",
    )


def _fold(text: str) -> str:
    """Case-fold and strip diacritics (unicode61's ``remove_diacritics``)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def make_analyzer(stemmer: str | None) -> Callable[[str], list[str]]:
    """Return ``text -> tokens``: folded letter/digit runs, stemmed by ``stemmer``.

    :raises OctomemError: PyStemmer is missing or has no such algorithm.
    """
    if not stemmer:
        return lambda text: _WORD.findall(_fold(text))
    try:
        import Stemmer
    except ImportError as exc:
        raise OctomemError(
            "arm 'rank-bm25' stems with PyStemmer: pip install 'octomem[bench]' "
            "(or set arms.rank-bm25.stemmer to empty)"
        ) from exc
    if stemmer not in Stemmer.algorithms():
        raise OctomemError(f"arms.rank-bm25.stemmer: no algorithm {stemmer!r} in PyStemmer")
    stem = Stemmer.Stemmer(stemmer).stemWords
    return lambda text: stem(_WORD.findall(_fold(text)))


#: FTS5's floor for an idf <= 0 (``fts5_aux.c``: ``if( idf<=0.0 ) idf = 1e-6;``).
FTS5_IDF_FLOOR = 1e-6


def _bm25_class(idf: str) -> Any:
    """Return ``BM25Okapi``, or a subclass whose idf is floored as FTS5's (``idf="fts5"``)."""
    try:
        from rank_bm25 import BM25Okapi
    except ImportError as exc:
        raise OctomemError(
            "arm 'rank-bm25' needs the rank-bm25 package: pip install 'octomem[bench]'"
        ) from exc
    if idf == "okapi":
        return BM25Okapi

    class Fts5IdfBM25Okapi(BM25Okapi):  # type: ignore[misc, valid-type]
        """BM25Okapi with idf <= 0 floored at :data:`FTS5_IDF_FLOOR`."""

        def _calc_idf(self, nd: dict[str, int]) -> None:
            for word, freq in nd.items():
                value = math.log(self.corpus_size - freq + 0.5) - math.log(freq + 0.5)
                self.idf[word] = value if value > 0 else FTS5_IDF_FLOOR
            self.average_idf = sum(self.idf.values()) / max(len(self.idf), 1)

    return Fts5IdfBM25Okapi


class RankBm25KeywordArm:
    """BM25Okapi over every stored chunk, held in memory and rebuilt when storage changes.

    :param storage: any storage; chunks are read with ``iter_chunks``.
    :raises OctomemError: rank-bm25 or PyStemmer is not installed.
    """

    name = NAME

    def __init__(self, storage: Any, options: RankBm25Options | None = None) -> None:
        import numpy as np

        self.storage = storage
        self.options = options or RankBm25Options()
        self._bm25_class = _bm25_class(self.options.idf)
        self._analyze = make_analyzer(self.options.stemmer)
        self._lock = threading.Lock()
        self._model: Any = None
        self._chunks: list[Chunk] = []
        self._ids = np.zeros(0, dtype=np.int64)
        self._signature: tuple[int, int] | None = None
        self._dirty = True
        self._removed: set[int] = set()
        self._allowed: dict[tuple[Any, ...], np.ndarray | None] = {}

    def index(self, tx: Any, chunks: Sequence[Chunk]) -> None:
        """Mark the in-memory index stale; it is rebuilt on the next search."""
        self._removed.difference_update(c.id for c in chunks)
        self._dirty = True

    def remove(self, tx: Any, chunk_ids: Sequence[int]) -> None:
        """Drop chunks from the index (even while the storage still holds them): they are
        left out of every rebuild until indexed again."""
        self._removed.update(int(i) for i in chunk_ids)
        self._dirty = True

    def _refresh(self) -> None:
        """Rebuild from storage when this arm indexed/removed chunks or the counts changed."""
        import numpy as np

        counts = self.storage.counts()
        signature = (counts["documents"], counts["chunks"])
        if not self._dirty and signature == self._signature:
            return
        with self._lock:
            self._dirty = False
            chunks = [c for c in self.storage.iter_chunks() if c.id not in self._removed]
            corpus = [self._analyze(f"{c.title}\n{c.text}" if c.title else c.text) for c in chunks]
            self._model = (
                self._bm25_class(
                    corpus, k1=self.options.k1, b=self.options.b, epsilon=self.options.epsilon
                )
                if corpus
                else None
            )
            self._chunks = chunks
            self._ids = np.fromiter((c.id for c in chunks), dtype=np.int64, count=len(chunks))
            self._allowed = {}
            self._signature = signature

    def query_terms(self, text: str) -> list[str]:
        """Return the analysed terms of ``text`` (stop words dropped when configured)."""
        if self.options.clitics != "none":
            text = without_clitics(text, CLITIC if self.options.clitics == "s" else CLITICS)
        words = _WORD.findall(_fold(text))
        if self.options.stopwords:
            words = [w for w in words if w not in ENGLISH_STOPWORDS]
        return list(dict.fromkeys(self._analyze(" ".join(words)))) if words else []

    def _positions(self, filters: Filters) -> np.ndarray | None:
        """Return the positions of chunks passing ``filters``; ``None`` when every chunk does.

        Every filter goes through :meth:`Filters.matches` (so superseded chunks stay out
        of the default view) once per distinct filter, then is remembered until the next
        rebuild (:data:`_FILTER_CACHE` filters at most).
        """
        import numpy as np

        key = filters.cache_key()
        if key not in self._allowed:
            if len(self._allowed) >= _FILTER_CACHE:
                self._allowed.clear()
            passing = np.fromiter(
                (i for i, c in enumerate(self._chunks) if filters.matches(c)), dtype=np.int64
            )
            self._allowed[key] = None if len(passing) == len(self._chunks) else passing
        return self._allowed[key]

    def _matches(
        self, terms: list[str], scores: np.ndarray, positions: np.ndarray | None
    ) -> np.ndarray:
        """Return a mask of the scored chunks that contain a query term.

        A score is 0 exactly when no term occurs, unless a term's idf is 0 (a term in
        exactly half the chunks: ln(1) = 0); only then are chunks looked at one by one.
        """
        import numpy as np

        mask = scores != 0
        idf = self._model.idf
        zero = [t for t in terms if t in idf and idf[t] == 0]
        if zero:
            freqs = self._model.doc_freqs
            where = positions if positions is not None else range(len(freqs))
            mask |= np.fromiter(
                (any(t in freqs[int(p)] for t in zero) for p in where),
                dtype=bool,
                count=len(scores),
            )
        return mask

    def search(self, text: str, filters: Filters, k: int) -> Run:
        """Rank the chunks passing ``filters`` by BM25Okapi against ``text``.

        :param k: maximum number of hits, >= 1.
        :returns: hits best first (ties by ascending chunk id), 1-based ranks, BM25 scores
            (higher is better; negative where rank-bm25's idf floor is negative, which
            happens in corpora of a few chunks); only chunks containing a query term.
        """
        import numpy as np

        terms = self.query_terms(text)
        if not terms or k < 1:
            return []
        self._refresh()
        if self._model is None:
            return []
        positions = self._positions(filters)
        if positions is None:
            scores = np.asarray(self._model.get_scores(terms), dtype=np.float64)
            ids = self._ids
        elif len(positions) == 0:
            return []
        else:
            scores = np.asarray(
                self._model.get_batch_scores(terms, positions.tolist()), dtype=np.float64
            )
            ids = self._ids[positions]
        keep = np.flatnonzero(self._matches(terms, scores, positions))
        if len(keep) > k:
            keep = keep[np.argpartition(-scores[keep], k - 1)[:k]]
        order = keep[np.lexsort((ids[keep], -scores[keep]))]
        return [
            Hit(chunk_id=int(ids[i]), score=float(scores[i]), rank=r, arm=NAME)
            for r, i in enumerate(order, start=1)
        ]


def build(options: RankBm25Options, context: ArmContext) -> RankBm25KeywordArm:
    """Build the arm over ``context.storage``.

    :raises OctomemError: rank-bm25 or PyStemmer is not installed.
    """
    return RankBm25KeywordArm(context.storage, options)


@hookimpl
def octomem_register_keyword_arms() -> list[ArmSpec]:
    """Offer the ``rank-bm25`` keyword arm (any storage; needs the bench extra)."""
    return [
        ArmSpec(
            kind="keyword",
            name=NAME,
            factory=build,
            options_model=RankBm25Options,
            description="BM25Okapi from rank-bm25, in memory, scores every chunk in Python",
        )
    ]
