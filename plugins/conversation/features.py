"""What the ``conversation`` reranker knows about a turn, and its features for one query.

Every feature comes from what the retrieval arms already returned (their runs) and the
turns' own metadata: no second search, no extra read. A turn's neighbours and session
mates count only when they are among the candidates too (a turn the keyword arm did not
return has no keyword score to share).

The features of all candidates are computed at once as numpy columns (one sort finds
every turn's neighbours, one pass per session its mates): ~0.1 ms for 200 candidates,
where a loop per candidate took ~18 ms at load 8 (issue 12's latency target).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

# the words a question names the assistant by (shared with relevance)
from octomem.engine.relevance import ADDRESSED_AS, content_words

# what a question says about whose turn answers it: this module's API too
from .cues import IRREGULAR_PAST, impersonal, recalls_assistant  # noqa: F401
from .cues import WORD as _WORD

if TYPE_CHECKING:  # numpy is imported where arrays are made: building the arm stays light
    import numpy as np

#: Feature columns of :func:`turn_features`, in order.
FEATURES = ("kw", "cos", "win_kw", "win_cos", "session_kw", "session_max", "speaker",
            "length", "prev_kw", "win_cov", "prev_question", "session_cov", "expansion",
            "soft_cov", "soft_win_cov", "soft_session_cov")
#: Metadata keys of a conversation turn (written by transcript ingest).
CONVERSATION, SESSION, POSITION, SPEAKER, ROLE = (
    "conversation", "session", "position", "speaker", "role")
#: Speaker kinds, in the order of :attr:`TurnColumns.kind` codes.
KINDS = ("peer", "user", "assistant")
#: Largest ``|position|`` of a turn: positions are compared as int64 (a transcript's
#: turns are numbered from 0; a larger number is not a position).
MAX_POSITION = 2**62

#: Least IDF weight of a query term among the candidates (a term every candidate holds
#: still counts a little): the 0.01 floor of the LoCoMo tune fits.
IDF_MIN = 0.01


@dataclass(frozen=True, slots=True)
class Turn:
    """Where one turn sits and who said it.

    :param position: 0-based index of the turn in its conversation.
    :param role: ``"user"`` or ``"assistant"`` in user–assistant chats, ``None`` between
        named people.
    :param words: the turn's length in words (letters and digits runs).
    """

    conversation: str
    session: str
    position: int
    speaker: str | None
    role: str | None
    words: int


@lru_cache(maxsize=65_536)
def word_count(text: str) -> int:
    """Return the number of words (letters and digits runs) in ``text`` (cached: a
    turn's text is read again for every query it is a candidate of)."""
    return len(_WORD.findall(text))


def turn_of(metadata: Mapping[str, Any], text: str) -> Turn | None:
    """Return the :class:`Turn` a chunk's metadata describes, or ``None`` for a chunk that
    is not a conversation turn (no ``conversation``, or no integer ``position`` within
    :data:`MAX_POSITION`)."""
    conversation, position = metadata.get(CONVERSATION), metadata.get(POSITION)
    if conversation is None or isinstance(position, bool) or not isinstance(position, int):
        return None
    if abs(position) >= MAX_POSITION:
        return None
    role = metadata.get(ROLE)
    speaker = metadata.get(SPEAKER)
    return Turn(
        str(conversation), str(metadata.get(SESSION, "")), position,
        str(speaker) if speaker is not None else None,
        role if role in ("user", "assistant") else None, word_count(text) if text else 0,
    )


def folded_words(text: str) -> set[str]:
    """Return the case-folded words of ``text`` (for matching speaker names)."""
    return {w.casefold() for w in _WORD.findall(text)}


@dataclass(frozen=True, slots=True)
class TurnColumns:
    """``n`` candidate turns as columns.

    :param group: ``(n,)`` int64, one code per (conversation, session): same code, same
        session.
    :param position: ``(n,)`` int64 positions.
    :param speaker: ``(n,)`` int64 index into ``speakers``.
    :param speakers: each distinct speaker name, case-folded (``""``: none).
    :param kind: ``(n,)`` int64 index into :data:`KINDS` (the turn's role, else ``peer``).
    :param length: ``(n,)`` float64 ``log(1 + words)``.
    :param sessions: each distinct ``(conversation, session)``, in ``group`` code order.
    """

    group: np.ndarray
    position: np.ndarray
    speaker: np.ndarray
    speakers: tuple[str, ...]
    kind: np.ndarray
    length: np.ndarray
    sessions: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, turns: Sequence[Turn]) -> TurnColumns:
        """Return the columns of ``turns`` (codes in order of first appearance)."""
        return cls.of_rows([turn_row(t) for t in turns])

    @classmethod
    def of_rows(cls, rows: Sequence[TurnRow]) -> TurnColumns:
        """Return the columns of turns given as :func:`turn_row` tuples (a reranker keeps
        each chunk's row, so a query only numbers the sessions and speakers it sees)."""
        import numpy as np

        if not rows:
            empty = np.zeros(0, dtype=np.int64)
            return cls(empty, empty, empty, (), empty, np.zeros(0), ())
        group_keys, positions, names, kinds, words = zip(*rows, strict=True)
        # codes in order of first appearance: each distinct key numbered once, then
        # every row's code looked up in C (map), no Python call per row
        groups = {g: i for i, g in enumerate(dict.fromkeys(group_keys))}
        speakers = {n: i for i, n in enumerate(dict.fromkeys(names))}
        table = np.array([list(map(groups.__getitem__, group_keys)), positions,
                          list(map(speakers.__getitem__, names)), kinds, words],
                         dtype=np.int64)
        return cls(table[0], table[1], table[2], tuple(speakers), table[3],
                   np.log1p(table[4].astype(np.float64)), tuple(groups))


#: What :class:`TurnColumns` needs of one turn: ``((conversation, session), position,
#: case-folded speaker or "", kind code, words)``.
TurnRow = tuple[tuple[str, str], int, str, int, int]


def turn_row(turn: Turn) -> TurnRow:
    """Return ``turn``'s :data:`TurnRow` (its kind: the index of its role in :data:`KINDS`,
    else ``peer``)."""
    return ((turn.conversation, turn.session), turn.position, (turn.speaker or "").casefold(),
            KINDS.index(turn.role) if turn.role in KINDS else 0, turn.words)


def neighbours(group: np.ndarray, position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return each candidate's previous and next turn among the candidates.

    The previous turn of ``i`` is a candidate of the same group at ``position[i] - 1``
    (the latest such candidate when several share it, e.g. revisions), the next one at
    ``position[i] + 1``. One lexicographic sort by (group, position, index).

    :param group: ``(n,)`` int64 session codes. :param position: ``(n,)`` int64.
    :returns: two ``(n,)`` int64 arrays of candidate indices, -1 where there is none.
    """
    import numpy as np

    n = len(group)
    order = np.lexsort((np.arange(n), position, group))
    g, p = group[order], position[order]
    starts = np.ones(n, dtype=bool)
    starts[1:] = (g[1:] != g[:-1]) | (p[1:] != p[:-1])
    run = np.cumsum(starts) - 1                       # run of equal (group, position)
    last = np.flatnonzero(np.append(starts[1:], True))  # last sorted index of each run
    rep, rg, rp = order[last], g[last], p[last]        # the run's latest candidate
    adjacent = (rg[1:] == rg[:-1]) & (rp[1:] - rp[:-1] == 1)
    prev_of_run = np.full(len(last), -1, dtype=np.int64)
    next_of_run = np.full(len(last), -1, dtype=np.int64)
    prev_of_run[1:][adjacent] = rep[:-1][adjacent]
    next_of_run[:-1][adjacent] = rep[1:][adjacent]
    prev = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    prev[order], nxt[order] = prev_of_run[run], next_of_run[run]
    return prev, nxt


def _mates(group: np.ndarray, share: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return, for each candidate, the sum and the max of ``share`` over the other
    candidates of its group (sum 0 and max 0 without any).

    :returns: two ``(n,)`` float64 arrays.
    """
    import numpy as np

    n = len(group)
    size = np.bincount(group)
    alone = size[group] == 1
    total = np.bincount(group, weights=share)[group] - share
    total[alone] = 0.0
    order = np.lexsort((share, group))               # each group ascending by share
    order_group = group[order]
    ends = np.flatnonzero(np.append(order_group[1:] != order_group[:-1], True))
    best_of = np.empty(len(size), dtype=np.float64)
    second_of = np.zeros(len(size), dtype=np.float64)
    best_of[order_group[ends]] = share[order[ends]]
    two = ends[size[order_group[ends]] > 1]
    second_of[order_group[two]] = share[order[two - 1]]
    top = np.zeros(n, dtype=bool)
    top[order[ends]] = True                           # the one holding its group's max
    best = np.where(top, second_of[group], best_of[group])
    best[alone] = 0.0
    return total, best


def query_terms(query: str) -> tuple[str, ...]:
    """Return the query's content words, sorted (:func:`~octomem.engine.relevance.content_words`:
    stop words and question scaffolding dropped, light suffix folding)."""
    return tuple(sorted(content_words(query)))


def term_matches(terms: Sequence[str], texts: Sequence[str]) -> np.ndarray:
    """Return which candidate holds which query term.

    :param terms: ``T`` content words (:func:`query_terms`).
    :param texts: ``n`` candidates' title and text.
    :returns: ``(n, T)`` bool.
    """
    return held_terms(terms, [content_words(text) for text in texts])


def held_terms(terms: Sequence[str], words: Sequence[frozenset[str]]) -> np.ndarray:
    """Return :func:`term_matches` from the candidates' content words.

    :param words: ``n`` sets, :func:`~octomem.engine.relevance.content_words` of each
        candidate's title and text.
    :returns: ``(n, T)`` bool.
    """
    import numpy as np

    if not terms:
        return np.zeros((len(words), 0), dtype=bool)
    # every test in one flat comprehension, term by term (half the time of one nested
    # over candidates and terms), read as bytes: ~0.7x the time of np.array over a list
    # of lists (LoCoMo conv-26's recalls, 155 candidates, 5 terms)
    tests = bytearray([t in held for t in terms for held in words])
    by_term = np.frombuffer(tests, dtype=bool).reshape(len(terms), len(words))
    return np.ascontiguousarray(by_term.T)


def _coverage(matches: np.ndarray | None, group: np.ndarray, prev: np.ndarray,
              nxt: np.ndarray, asks: np.ndarray | None) -> np.ndarray:
    """Return the ``win_cov``, ``prev_question`` and ``session_cov`` columns (see
    :func:`turn_features`), ``(n, 3)`` float64; zeros without ``matches`` or terms."""
    import numpy as np

    n = len(group)
    out = np.zeros((n, 3))
    if matches is None or matches.shape[1] == 0 or n == 0:
        return out
    held = matches.astype(np.float64)
    df = held.sum(axis=0)
    idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), IDF_MIN)
    idf /= idf.sum()
    has_prev, has_next = prev >= 0, nxt >= 0
    before = np.where(has_prev[:, None], held[prev], 0.0)
    after = np.where(has_next[:, None], held[nxt], 0.0)
    out[:, 0] = np.maximum(held, np.maximum(before, after)) @ idf
    if asks is not None:
        out[:, 1] = np.where(has_prev, np.asarray(asks, dtype=np.float64)[prev], 0.0) * (
            before @ idf)
    session = np.zeros((int(group.max()) + 1, held.shape[1]))
    rows, terms = np.nonzero(matches)  # held is 0 or 1: a session holds a term or not
    session[group[rows], terms] = 1.0  # (the max over its candidates, without ufunc.at)
    out[:, 2] = session[group] @ idf
    return out


def soft_coverage(best: np.ndarray | None, group: np.ndarray, prev: np.ndarray,
                  nxt: np.ndarray) -> np.ndarray:
    """Return the ``soft_cov``, ``soft_win_cov`` and ``soft_session_cov`` columns (see
    :func:`turn_features`), ``(n, 3)`` float64; zeros without ``best`` or words.

    :param best: ``(n, Q)`` each question word's best match in each candidate, 1 for the
        word itself (:func:`~.expansion.word_columns`).
    :param group: ``(n,)`` session codes. :param prev: :param nxt: :func:`neighbours`.
    """
    import numpy as np

    n = len(group)
    out = np.zeros((n, 3))
    if best is None or best.ndim != 2 or best.shape[1] == 0 or n == 0:
        return out
    df = (best >= 1.0).sum(axis=0)  # the candidates holding the word itself
    idf = np.maximum(np.log((n - df + 0.5) / (df + 0.5)), IDF_MIN)
    idf /= idf.sum()
    window = np.maximum(best, np.maximum(np.where((prev >= 0)[:, None], best[prev], 0.0),
                                         np.where((nxt >= 0)[:, None], best[nxt], 0.0)))
    order = np.argsort(group, kind="stable")
    starts = np.flatnonzero(np.diff(group[order], prepend=-1))
    session = np.zeros((int(group.max()) + 1, best.shape[1]))
    session[group[order][starts]] = np.maximum.reduceat(best[order], starts, axis=0)
    out[:, 0], out[:, 1], out[:, 2] = best @ idf, window @ idf, session[group] @ idf
    return out


def turn_features(
    words: set[str], turns: Sequence[Turn] | TurnColumns, kw: np.ndarray, cos: np.ndarray,
    matches: np.ndarray | None = None, asks: np.ndarray | None = None,
    expansion: np.ndarray | None = None, soft: np.ndarray | None = None,
) -> np.ndarray:
    """Return the raw features of ``n`` candidate turns for one query.

    Columns (:data:`FEATURES`): the turn's keyword score over the best keyword score
    among the candidates (``kw``); its cosine to the query (``cos``); the previous plus
    the next turn's keyword share (``win_kw``) and the better of their cosines
    (``win_cos``), counted when in the same session; ``log(1 + Σ)`` of the other turns of
    its session's keyword shares (``session_kw``) and the best of them (``session_max``);
    1 when the query names the turn's speaker, or for an assistant's turn when the query
    addresses it (:data:`ADDRESSED_AS`, ``speaker``); ``log(1 + words)``
    (``length``); the previous turn's keyword share alone (``prev_kw``: an answer often
    replies to the turn before it).

    Coverage columns, each term weighted by its IDF among the candidates
    (``max(log((n - df + 0.5) / (df + 0.5)), IDF_MIN)``, BM25's IDF, Robertson & Zaragoza
    2009, over the ``n`` candidates; weights sum to 1): the share of the query's terms
    held by the turn or its previous or next turn (``win_cov``: an answer and the question
    it replies to read as one); when the previous turn asks something (holds "?"), the
    share it holds (``prev_question``: "how did they react?" -> "awestruck"); the share
    held anywhere in its session's candidates (``session_cov``). Chosen by
    leave-one-conversation-out fits on LoCoMo's tune half (conv-26/30/41/42/43:
    nDCG@10 0.620 -> 0.649 over the nine columns before them). ``expansion``: words of
    the turn that mean the question's words (:mod:`.expansion`), 0 when not given.

    Soft coverage columns (:func:`soft_coverage`), 0 when ``soft`` is not given: each
    question word's best match in the turn (1 for the word itself, else the largest
    cosine of the two words each embedded alone, no threshold), weighted by the word's
    IDF among the candidates (its document frequency: the candidates holding it itself),
    summed (``soft_cov``); the same over the turn and its previous and next turn
    (``soft_win_cov``) and over its session's candidates (``soft_session_cov``): a turn
    near the question in meaning word by word, not only in its whole-text cosine. Chosen
    by leave-one-conversation-out fits on LoCoMo's tune half
    (``benchmarks/results/conversations/ranking-2026-12-03``).

    :param words: the query's case-folded words (:func:`folded_words`).
    :param turns: the candidates' turns, or their :class:`TurnColumns`.
    :param kw: ``(n,)`` keyword-arm scores, higher is better, 0 where it did not return
        the turn.
    :param cos: ``(n,)`` cosine similarities to the query; NaN where unknown (they count
        as the lowest known one).
    :param matches: ``(n, T)`` bool, :func:`term_matches` of the query's terms; ``None``:
        the coverage columns are 0.
    :param asks: ``(n,)`` bool, whether each candidate asks something (holds "?").
    :param expansion: ``(n,)`` :func:`~.expansion.expansion_column`.
    :param soft: ``(n, Q)`` best matches (:func:`~.expansion.word_columns`).
    :returns: ``(n, len(FEATURES))`` float64.
    """
    import numpy as np

    cols = turns if isinstance(turns, TurnColumns) else TurnColumns.of(turns)
    n = len(cols.group)
    out = np.zeros((n, len(FEATURES)))
    if n == 0:
        return out
    kw = np.asarray(kw, dtype=np.float64)
    cos = np.asarray(cos, dtype=np.float64)
    known = np.isfinite(cos)
    low = float(cos[known].min()) if known.any() else 0.0
    cos = np.where(known, cos, low)
    top = float(kw.max()) if kw.max() > 0 else 1.0
    share = kw / top
    prev, nxt = neighbours(cols.group, cols.position)
    has_prev, has_next = prev >= 0, nxt >= 0
    share_prev = np.where(has_prev, share[prev], 0.0)
    share_next = np.where(has_next, share[nxt], 0.0)
    cos_prev = np.where(has_prev, cos[prev], -np.inf)
    cos_next = np.where(has_next, cos[nxt], -np.inf)
    session_sum, session_max = _mates(cols.group, share)
    named = np.array([bool(s) and s in words for s in cols.speakers], dtype=np.float64)
    out[:, 0], out[:, 1] = share, cos
    out[:, 2] = share_prev + share_next
    out[:, 3] = np.where(has_prev | has_next, np.maximum(cos_prev, cos_next), low)
    out[:, 4] = np.log1p(session_sum)
    out[:, 5] = session_max
    addressed = float(bool(words & ADDRESSED_AS))
    out[:, 6] = np.maximum(named[cols.speaker],
                           (cols.kind == KINDS.index("assistant")) * addressed)
    out[:, 7] = cols.length
    out[:, 8] = share_prev
    out[:, 9:12] = _coverage(matches, cols.group, prev, nxt, asks)
    if expansion is not None:
        out[:, 12] = expansion
    out[:, 13:16] = soft_coverage(soft, cols.group, prev, nxt)
    return out


def standardised(features: np.ndarray, binary: Sequence[bool]) -> np.ndarray:
    """Return ``features`` with each non-binary column as a z-score over the candidates
    (a constant column becomes 0), so weights mean the same whatever a store's scale.

    :param features: ``(n, F)`` float64. :param binary: ``F`` flags, True: kept as is.
    :returns: ``(n, F)`` float64, a new array.
    """
    import numpy as np

    out = features.copy()
    scaled = ~np.asarray(binary, dtype=bool)
    if not len(out) or not scaled.any():
        return out
    cols = out[:, scaled]
    sd = cols.std(axis=0)
    z = np.divide(cols - cols.mean(axis=0), sd, out=np.zeros_like(cols), where=sd > 0)
    out[:, scaled] = z
    return out
