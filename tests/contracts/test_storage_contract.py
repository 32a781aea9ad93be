"""Contract of the ``Storage`` Protocol (the conformance kit's
:class:`~octomem.engine.testing.StorageContract`), run over every registered storage."""

from __future__ import annotations

import pytest

from octomem.engine.testing import StorageContract, registered_names


@pytest.mark.parametrize("storage_name", registered_names("storage", runnable=True))
class TestStorageContract(StorageContract):
    """Every installed storage that needs no options (the others run in their own suites)."""
