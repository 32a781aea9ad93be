"""Contract of the ``SemanticArm`` Protocol (the conformance kit's
:class:`~octomem.engine.testing.SemanticContract`), run over every registered semantic arm,
each paired with every registered storage it accepts (``requires_storage``)."""

from __future__ import annotations

import pytest

from octomem.engine.testing import SemanticContract, arm_pairs


@pytest.mark.parametrize(("arm_name", "storage_name"), arm_pairs("semantic", runnable=True))
class TestSemanticContract(SemanticContract):
    """Every installed semantic arm over every storage it accepts."""


@pytest.mark.parametrize(("arm_name", "storage_name"), [("sqlite-vec", "sqlite")])
class TestSqliteVecInRamContract(SemanticContract):
    """``sqlite-vec`` scanning its in-RAM copy from the first search on (the default
    ``scan = "warm"`` uses vec0's KNN until a long-running process warms it)."""

    OPTIONS = {"sqlite-vec": {"scan": "numpy"}}
