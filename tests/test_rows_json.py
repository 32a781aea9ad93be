"""The JSON of tags and metadata (``engine.sql.rows.dumps``) is ``json.dumps``'s, errors too."""

from __future__ import annotations

import json
from typing import Any

import pytest

from octomem.engine.errors import OctomemError
from octomem.engine.sql.rows import dumps


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


@pytest.mark.parametrize("value", [
    {}, [], {"group": "g3"}, ["a", "b"],
    {"b": 1, "a": [1.5, float("inf"), -0.0, 1e300, True, None]},
    {"text": "é\u2028\x00\ud800 \"q\" \\"}, [1, "x", {"z": 1, "y": 2}], {"n": {1: 2, 3.5: 4}},
    {"k": (1, 2)}, {True: 1}, {None: 1}, [float("nan")], {"z": {"y": {"x": [[[]]]}}},
])
def test_dumps_is_json_dumps_with_sorted_keys(value: Any) -> None:
    assert dumps(value, "metadata") == _json(value)


def _circular() -> dict[str, Any]:
    value: dict[str, Any] = {}
    value["self"] = value
    return value


@pytest.mark.parametrize("value", [
    _circular(), {"x": object()}, {"x": {1, 2}}, {1: "a", "b": 2}, {(1,): 2},
    {None: 1, True: 2}, [[_circular()]],
])
def test_dumps_refuses_what_json_dumps_refuses_with_its_message(value: Any) -> None:
    with pytest.raises((TypeError, ValueError)) as expected:
        _json(value)
    with pytest.raises(OctomemError) as got:
        dumps(value, "metadata of document 'd1'")
    assert str(got.value) == f"metadata of document 'd1' is not JSON-serialisable: {expected.value}"
