"""Contract of the optional ``VersionedStorage`` methods (the conformance kit's
:class:`~octomem.engine.testing.HistoryContract`), run over every registered storage that
implements them (statement history, revisions, recall counters, forget log)."""

from __future__ import annotations

import pytest

from octomem.engine.testing import HistoryContract, registered_names


@pytest.mark.parametrize("storage_name", registered_names("storage", runnable=True))
class TestHistoryContract(HistoryContract):
    """Every installed storage; one without statement history is skipped."""
