"""Options of the ``sqlite-vec`` semantic arm (settings table ``[arms.sqlite-vec]``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class SqliteVecOptions(BaseModel, extra="forbid"):
    """Options of the ``sqlite-vec`` semantic arm (settings table ``[arms.sqlite-vec]``)."""

    scan: Literal["warm", "numpy", "vec0"] = Field(
        default="warm",
        description="how a search scans the vectors: 'numpy' (an exact scan of an in-RAM "
        "copy kept in step with the table, loaded by the first search), 'vec0' "
        "(sqlite-vec's KNN query, no RAM copy) or 'warm' (numpy once a long-running "
        "process has loaded the copy, vec0 before); same hits",
        json_schema_extra={"group": "runtime"},
    )
    filter_cache_mb: float = Field(
        default=64.0, ge=0,
        description="numpy scan: the most MB of vectors kept gathered for filters asked "
        "again (the same filters while nothing was written: a conversation's questions, a "
        "tag); such a search scores them without gathering, the same answers. 0: none kept "
        "(a memory bound, not tuned: ~10 filters keeping 10 % of 100k 384-d vectors)",
        json_schema_extra={"group": "runtime"},
    )
    approximate_above: int = Field(
        default=200_000, ge=1,
        description="numpy scan: a vector set with at least this many vectors is searched in "
        "two steps, a projection to approximate_dims picks candidates, exact cosine ranks them",
        json_schema_extra={"group": "retrieval"},
    )
    approximate_dims: int = Field(
        default=96, ge=1, le=4096,
        description="dimensions of the projection (top eigenvectors of the vectors' second "
        "moment)", json_schema_extra={"group": "retrieval"},
    )
    approximate_candidates: int = Field(
        default=1000, ge=1, le=100_000,
        description="rows scored exactly after the projection (plus k)",
        json_schema_extra={"group": "retrieval"},
    )
