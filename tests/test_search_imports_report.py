"""The import report's grouping (``benchmarks/search_imports.py``): each module's own
time counts to its library, a standard-library module to its nearest importer that is
not one, octomem's modules together."""

from __future__ import annotations

from octomem.benchmarks.search_imports import groups

#: ``-X importtime`` output (children printed before their parent, deeper indented).
REPORT = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |   _io
import time:       200 |        300 | io
import time:        50 |         50 |       asyncio.events
import time:       400 |        450 |     asyncio
import time:      1000 |       1450 |   pydantic_settings.main
import time:        30 |       1480 | pydantic_settings
import time:        70 |         70 |     decimal
import time:       500 |        570 |   pydantic_core
import time:       600 |       1170 | pydantic
import time:         5 |          5 |     json
import time:       800 |        805 |   octomem.engine.settings
import time:        20 |        825 | octomem.engine
"""


def test_times_count_to_the_library_that_imported_them() -> None:
    sums = groups(REPORT)
    assert sums == {
        "stdlib (interpreter start)": 300,  # io, _io: imported by nothing else
        "pydantic_settings": 1000 + 30 + 400 + 50,  # asyncio counts to its importer
        "pydantic": 600 + 500 + 70,  # pydantic_core is pydantic's; decimal its import
        "octomem (own modules)": 800 + 20 + 5,
    }
