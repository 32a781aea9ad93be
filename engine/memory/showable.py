"""Answers never fail on a stored row they cannot show: such hits are left out, named."""

from __future__ import annotations

from dataclasses import replace

from .recall import RecallAnswer, ScopedHit
from .times import unshowable_times


def without_unshowable(answer: RecallAnswer) -> RecallAnswer:
    """Drop the hits whose stored times cannot be shown (written before times were
    checked), each named in ``answer.warnings``, so one bad row never fails an answer."""
    kept: list[ScopedHit] = []
    for hit in answer.hits:
        c = hit.chunk
        bad = unshowable_times(created_at=c.created_at, event_time=c.valid_from,
                               valid_to=c.valid_to)
        if bad:
            answer.warnings.append(
                f"skipped {c.document_id} ({hit.scope}): its {', '.join(bad)} cannot be shown; "
                "`octomem verify --repair` fixes it")
            continue
        # ranks are 1..n already: a hit needs a new one only after a skipped hit
        kept.append(hit if hit.rank == len(kept) + 1 else replace(hit, rank=len(kept) + 1))
    answer.hits = kept
    return answer
