"""What the ``conversation`` reranker knows about a turn, and its features for one query.

Every feature comes from what the retrieval arms already returned (their runs) and the
turns' own metadata: no second search, no extra read. A turn's neighbours and session
mates count only when they are among the candidates too (a turn the keyword arm did not
return has no keyword score to share).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Feature columns of :func:`turn_features`, in order.
FEATURES = ("kw", "cos", "win_kw", "win_cos", "session_kw", "session_max", "speaker",
            "length", "prev_kw")
#: Metadata keys of a conversation turn (written by transcript ingest).
CONVERSATION, SESSION, POSITION, SPEAKER, ROLE = (
    "conversation", "session", "position", "speaker", "role")
_WORD = re.compile(r"[^\W_]+")


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


def turn_of(metadata: Mapping[str, Any], text: str) -> Turn | None:
    """Return the :class:`Turn` a chunk's metadata describes, or ``None`` for a chunk that
    is not a conversation turn (no ``conversation`` or no integer ``position``)."""
    conversation, position = metadata.get(CONVERSATION), metadata.get(POSITION)
    if conversation is None or isinstance(position, bool) or not isinstance(position, int):
        return None
    role = metadata.get(ROLE)
    speaker = metadata.get(SPEAKER)
    return Turn(
        str(conversation), str(metadata.get(SESSION, "")), position,
        str(speaker) if speaker is not None else None,
        role if role in ("user", "assistant") else None, len(_WORD.findall(text)),
    )


def folded_words(text: str) -> set[str]:
    """Return the case-folded words of ``text`` (for matching speaker names)."""
    return {w.casefold() for w in _WORD.findall(text)}


def turn_features(
    words: set[str], turns: Sequence[Turn], kw: np.ndarray, cos: np.ndarray
) -> np.ndarray:
    """Return the raw features of ``n`` candidate turns for one query.

    Columns (:data:`FEATURES`): the turn's keyword score over the best keyword score
    among the candidates (``kw``); its cosine to the query (``cos``); the previous plus
    the next turn's keyword share (``win_kw``) and the better of their cosines
    (``win_cos``), counted when in the same session; ``log(1 + Σ)`` of the other turns of
    its session's keyword shares (``session_kw``) and the best of them (``session_max``);
    1 when the query names the turn's speaker (``speaker``); ``log(1 + words)``
    (``length``); the previous turn's keyword share alone (``prev_kw``: an answer often
    replies to the turn before it).

    :param words: the query's case-folded words (:func:`folded_words`).
    :param kw: ``(n,)`` keyword-arm scores, higher is better, 0 where it did not return
        the turn.
    :param cos: ``(n,)`` cosine similarities to the query; NaN where unknown (they count
        as the lowest known one).
    :returns: ``(n, len(FEATURES))`` float64.
    """
    n = len(turns)
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
    at = {(t.conversation, t.session, t.position): i for i, t in enumerate(turns)}
    sessions: dict[tuple[str, str], list[int]] = {}
    for i, t in enumerate(turns):
        sessions.setdefault((t.conversation, t.session), []).append(i)
    for i, t in enumerate(turns):
        prev = at.get((t.conversation, t.session, t.position - 1))
        nxt = at.get((t.conversation, t.session, t.position + 1))
        near = [j for j in (prev, nxt) if j is not None]
        mates = [j for j in sessions[(t.conversation, t.session)] if j != i]
        out[i] = (
            share[i], cos[i], sum(share[j] for j in near),
            max([cos[j] for j in near], default=low),
            math.log1p(sum(share[j] for j in mates)),
            max([share[j] for j in mates], default=0.0),
            1.0 if t.speaker and t.speaker.casefold() in words else 0.0,
            math.log1p(t.words), share[prev] if prev is not None else 0.0,
        )
    return out


def standardised(features: np.ndarray, binary: Sequence[bool]) -> np.ndarray:
    """Return ``features`` with each non-binary column as a z-score over the candidates
    (a constant column becomes 0), so weights mean the same whatever a store's scale."""
    out = features.copy()
    for j, is_binary in enumerate(binary):
        if is_binary:
            continue
        col = out[:, j]
        sd = float(col.std())
        out[:, j] = (col - col.mean()) / sd if sd > 0 else 0.0
    return out
