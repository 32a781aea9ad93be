"""Contract: keyword and semantic arms apply statement validity inside their searches (the
conformance kit's :class:`~octomem.engine.testing.ValidityContract`).

Run over every registered keyword and semantic arm, each paired with every storage it
accepts that keeps history (:class:`~octomem.engine.arms.VersionedStorage`).
"""

from __future__ import annotations

import pytest

from octomem.engine.testing import ValidityContract, arm_pairs

ARMS = [("keyword", a, s) for a, s in arm_pairs("keyword", runnable=True)] + [
    ("semantic", a, s) for a, s in arm_pairs("semantic", runnable=True)]


@pytest.mark.parametrize(("arm_kind", "arm_name", "storage_name"), ARMS)
class TestValidityContract(ValidityContract):
    """Every installed keyword and semantic arm over every storage it accepts."""


@pytest.mark.parametrize(("arm_kind", "arm_name", "storage_name"), [
    ("keyword", "fts5", "sqlite"), ("semantic", "sqlite-vec", "sqlite")])
class TestInRamValidityContract(ValidityContract):
    """The default arms ranking from their in-RAM copies from the first search on."""

    OPTIONS = {"fts5": {"in_ram": "always"}, "sqlite-vec": {"scan": "numpy"}}
