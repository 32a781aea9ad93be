"""Contract of the ``KeywordArm`` Protocol, run over every registered keyword arm.

Each arm is paired with every registered storage it accepts (``requires_storage``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from octomem.engine.arms import KeywordArm
from octomem.engine.manager import load_registry
from octomem.engine.types import Chunk, Document, Filters, Hit

_REGISTRY = load_registry()
PAIRS = [
    (arm, storage)
    for arm in _REGISTRY.names("keyword")
    for storage in _REGISTRY.names("storage")
    if not _REGISTRY.get("keyword", arm).requires_storage
    or storage in _REGISTRY.get("keyword", arm).requires_storage
]
pytestmark = pytest.mark.parametrize(("arm_name", "storage_name"), PAIRS)


class Boom(Exception):
    """Raised inside a transaction to force a rollback."""


@pytest.fixture
def setup(build_arm: Callable[..., Any], arm_name: str, storage_name: str) -> tuple[Any, Any]:
    storage = build_arm("storage", storage_name)
    return storage, build_arm("keyword", arm_name, storage=storage)


def _add(storage: Any, arm: Any, text: str, **fields: Any) -> Chunk:
    doc = Document(text=text, **fields)
    with storage.transaction() as tx:
        chunks = storage.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0, text=text)])
        arm.index(tx, chunks)
    return chunks[0]


def _assert_well_formed(run: list[Hit], arm_name: str, k: int) -> None:
    assert len(run) <= k
    assert [h.rank for h in run] == list(range(1, len(run) + 1))
    scores = [h.score for h in run]
    assert scores == sorted(scores, reverse=True)
    assert all(isinstance(h.chunk_id, int) and h.arm == arm_name for h in run)
    assert len({h.chunk_id for h in run}) == len(run)


def test_implements_protocol(setup: tuple[Any, Any], arm_name: str) -> None:
    assert isinstance(setup[1], KeywordArm)
    assert setup[1].name == arm_name


def test_index_search_remove(setup: tuple[Any, Any], arm_name: str) -> None:
    storage, arm = setup
    zebra = _add(storage, arm, "zebras graze on the savanna grass")
    _add(storage, arm, "lions sleep most of the day")
    run = arm.search("zebras", Filters(), 10)
    assert [h.chunk_id for h in run] == [zebra.id]
    assert run[0].score > 0
    _assert_well_formed(run, arm_name, 10)
    with storage.transaction() as tx:
        arm.remove(tx, [zebra.id])
    assert arm.search("zebras", Filters(), 10) == []


def test_ranking_is_well_formed_and_respects_k(setup: tuple[Any, Any], arm_name: str) -> None:
    storage, arm = setup
    for i in range(12):
        _add(storage, arm, " ".join(["kiwi"] * (i + 1) + ["filler"] * (12 - i)))
    _add(storage, arm, "nothing relevant here")
    for k in (1, 5, 20):
        run = arm.search("kiwi", Filters(), k)
        assert len(run) == min(k, 12)
        _assert_well_formed(run, arm_name, k)
    assert arm.search("unrelatedword", Filters(), 5) == []


def test_rollback_leaves_nothing_indexed(setup: tuple[Any, Any]) -> None:
    storage, arm = setup
    doc = Document(text="ephemeral quokka")
    with pytest.raises(Boom), storage.transaction() as tx:
        chunk = Chunk(document_id=doc.id, ordinal=0, text=doc.text)
        chunks = storage.add_document(tx, doc, [chunk])
        arm.index(tx, chunks)
        raise Boom
    assert arm.search("quokka", Filters(), 5) == []


# The best BM25 match lacks the filtered property; 6 weaker matches have it.
SELECTIVE = {
    "kinds": Filters(kinds=("NOTE",)),
    "tags": Filters(tags=("rare", "keep")),
    "created": Filters(created_after=1000.0, created_before=2000.0),
    "metadata": Filters(metadata={"conv": "c9"}),
    "all": Filters(kinds=("NOTE",), tags=("rare",), created_after=1000.0, metadata={"conv": "c9"}),
}


@pytest.mark.parametrize("which", sorted(SELECTIVE))
def test_filters_apply_before_ranking(setup: tuple[Any, Any], arm_name: str, which: str) -> None:
    storage, arm = setup
    best = _add(storage, arm, "mango mango mango mango", created_at=5000.0)
    for i in range(30):
        _add(storage, arm, f"mango mango smoothie number {i}", created_at=3000.0 + i)
    targets = {
        _add(storage, arm, f"a mango among many other words in target {i} of the set",
             kind="NOTE", tags=("rare", "keep"), created_at=1000.0 + i, metadata={"conv": "c9"}).id
        for i in range(6)
    }
    _add(storage, arm, "no fruit at all", kind="NOTE", tags=("rare", "keep"),
         created_at=1500.0, metadata={"conv": "c9"})
    unfiltered = arm.search("mango", Filters(), 31)
    assert unfiltered[0].chunk_id == best.id
    assert not targets & {h.chunk_id for h in unfiltered}  # post-filtering a top-31 finds none
    run = arm.search("mango", SELECTIVE[which], 5)
    assert len(run) == 5
    assert {h.chunk_id for h in run} <= targets
    _assert_well_formed(run, arm_name, 5)
    assert {h.chunk_id for h in arm.search("mango", SELECTIVE[which], 50)} == targets


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("", False),
        ("   ", False),
        ('state-of-the-art "unclosed', True),
        ("a:b NEAR( C++ * AND OR NOT", False),
        ("\x00\U0001f600", False),
        ("(RESULTS)*:^", True),
    ],
)
def test_any_text_is_a_valid_query(setup: tuple[Any, Any], text: str, found: bool) -> None:
    storage, arm = setup
    doc = _add(storage, arm, "state of the art results")
    assert [h.chunk_id for h in arm.search(text, Filters(), 5)] == ([doc.id] if found else [])
