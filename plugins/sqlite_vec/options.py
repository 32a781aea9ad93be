"""Options of the ``sqlite-vec`` semantic arm (settings table ``[arms.sqlite-vec]``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

#: Vector sets from this size use the projection (``approximate_above``). Measured on the
#: realistic scale corpus's MiniLM vectors (``benchmarks/realistic_data.py``), SciFact
#: *train* claims as queries (809), 96 dimensions, 1,000 candidates, projected / exact
#: scan p50 in one process (2 shared cores, load ~9): recall@10 vs exact 0.9998 / 0.9991
#: / 0.9986 at 30k / 50k / 100k vectors, time 0.30x / 0.22x / 0.32x (0.9928 at 1M).
#: 50k keeps every store the quality benchmarks build (SciFact 5k, one LoCoMo
#: conversation, a LongMemEval haystack) exact, their results byte-identical. It was
#: 200,000 until 2026-12-02 (where the exact scan first passed 20 ms on a quiet machine).
APPROXIMATE_ABOVE = 50_000
#: The projection's scan (``approximate_scan``). Chosen on the realistic scale corpus's 1M
#: MiniLM vectors with the SciFact *train* claims as queries (809), 96 dimensions, k = 100
#: (``benchmarks/results/synthetic/2026-12-02/int8/sweep.py``, both scans alternated per
#: query, 2 shared cores, load ~8-10): recall@10 vs exact 0.9905 with int8 codes against
#: 0.9904 with the float32 rows (1,000 candidates; 0.9845 / 0.9963 with 500 / 2,000), CPU
#: p50 of the whole stage 18.7 against 34.8 ms (0.54x). The codes' scale (per dimension,
#: 127 over the largest unit-row component) is fixed by the int8 range, not tuned.
APPROXIMATE_SCAN: Literal["int8", "float32"] = "int8"


class SqliteVecOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
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
        description="numpy scan: the most MB kept for filters asked again (the same "
        "filters while nothing was written: a conversation's questions, a tag): their masks, "
        "rows and gathered vectors; such a search skips the mask and the gather, the same "
        "answers. 0: nothing kept (a memory bound, not tuned: ~4 filters keeping 10 % of "
        "100k 384-d vectors)",
        json_schema_extra={"group": "runtime"},
    )
    approximate_above: int = Field(
        default=APPROXIMATE_ABOVE, ge=1,
        description="numpy scan: a vector set with at least this many vectors is searched "
        "without filters in two steps, a projection to approximate_dims picks candidates, "
        "exact cosine ranks them; filtered searches stay exact at any size",
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
    approximate_scan: Literal["int8", "float32"] = Field(
        default=APPROXIMATE_SCAN,
        description="how the projection is scanned to pick the candidates: 'int8' (its "
        "int8 codes, kept and snapshotted beside it, scanned by numkong: a quarter of the "
        "bytes) or 'float32' (its float rows with numpy); the candidates are then scored "
        "exactly either way",
        json_schema_extra={"group": "retrieval"},
    )
