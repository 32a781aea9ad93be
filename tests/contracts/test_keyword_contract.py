"""Contract of the ``KeywordArm`` Protocol (the conformance kit's
:class:`~octomem.engine.testing.KeywordContract`), run over every registered keyword arm,
each paired with every registered storage it accepts (``requires_storage``)."""

from __future__ import annotations

import pytest

from octomem.engine.testing import KeywordContract, arm_pairs


@pytest.mark.parametrize(("arm_name", "storage_name"), arm_pairs("keyword", runnable=True))
class TestKeywordContract(KeywordContract):
    """Every installed keyword arm over every storage it accepts."""


@pytest.mark.parametrize(("arm_name", "storage_name"), [("fts5", "sqlite")])
class TestFts5InRamContract(KeywordContract):
    """``fts5`` ranking from its in-RAM postings from the first search on."""

    OPTIONS = {"fts5": {"in_ram": "always"}}
