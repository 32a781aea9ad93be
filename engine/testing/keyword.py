"""Contract of the :class:`~octomem.engine.arms.KeywordArm` Protocol."""

from __future__ import annotations

from typing import Any

import pytest

from ..arms import KeywordArm
from ..types import Chunk, Document, Filters, Hit
from .base import ArmBuilder, ArmContract
from .storage import Boom


def index_text(storage: Any, arm: Any, text: str, **fields: Any) -> Chunk:
    """Store a one-chunk document and index it, in one transaction; return the chunk."""
    doc = Document(text=text, **fields)
    with storage.transaction() as tx:
        chunks = storage.add_document(tx, doc, [Chunk(document_id=doc.id, ordinal=0, text=text)])
        arm.index(tx, chunks)
    return chunks[0]


def assert_well_formed(run: list[Hit], arm_name: str, k: int) -> None:
    """At most ``k`` distinct hits, ranks 1..n, scores descending, named by the arm."""
    assert len(run) <= k
    assert [h.rank for h in run] == list(range(1, len(run) + 1))
    scores = [h.score for h in run]
    assert scores == sorted(scores, reverse=True)
    assert all(isinstance(h.chunk_id, int) and h.arm == arm_name for h in run)
    assert len({h.chunk_id for h in run}) == len(run)


#: The best match lacks the filtered property; 6 weaker matches have it.
SELECTIVE = {
    "kinds": Filters(kinds=("NOTE",)),
    "tags": Filters(tags=("rare", "keep")),
    "created": Filters(created_after=1000.0, created_before=2000.0),
    "metadata": Filters(metadata={"conv": "c9"}),
    "all": Filters(kinds=("NOTE",), tags=("rare",), created_after=1000.0, metadata={"conv": "c9"}),
}

#: Any text is a valid query: ``(text, whether "state of the art results" is found)``.
ANY_TEXT = [
    ("", False),
    ("   ", False),
    ('state-of-the-art "unclosed', True),
    ("a:b NEAR( C++ * AND OR NOT", False),
    ("\x00\U0001f600", False),
    ("(RESULTS)*:^", True),
]


class KeywordContract(ArmContract):
    """Every keyword arm over a storage it accepts: index, search, remove, rollback, filters
    before ranking, any text a valid query. Name them with ``ARM`` and ``STORAGE``."""

    @pytest.fixture
    def setup(self, octomem_build: ArmBuilder, arm_name: str, storage_name: str) -> tuple[Any, Any]:
        """``(storage, keyword arm)``, both fresh."""
        storage = octomem_build.build("storage", storage_name)
        return storage, octomem_build.build("keyword", arm_name, storage=storage)

    def test_implements_protocol(self, setup: tuple[Any, Any], arm_name: str) -> None:
        assert isinstance(setup[1], KeywordArm)
        assert setup[1].name == arm_name

    def test_index_search_remove(self, setup: tuple[Any, Any], arm_name: str) -> None:
        storage, arm = setup
        zebra = index_text(storage, arm, "zebras graze on the savanna grass")
        index_text(storage, arm, "lions sleep most of the day")
        run = arm.search("zebras", Filters(), 10)
        assert [h.chunk_id for h in run] == [zebra.id]
        assert run[0].score > 0
        assert_well_formed(run, arm_name, 10)
        with storage.transaction() as tx:
            arm.remove(tx, [zebra.id])
        assert arm.search("zebras", Filters(), 10) == []

    def test_ranking_is_well_formed_and_respects_k(
        self, setup: tuple[Any, Any], arm_name: str
    ) -> None:
        storage, arm = setup
        for i in range(12):
            index_text(storage, arm, " ".join(["kiwi"] * (i + 1) + ["filler"] * (12 - i)))
        index_text(storage, arm, "nothing relevant here")
        for k in (1, 5, 20):
            run = arm.search("kiwi", Filters(), k)
            assert len(run) == min(k, 12)
            assert_well_formed(run, arm_name, k)
        assert arm.search("unrelatedword", Filters(), 5) == []

    def test_rollback_leaves_nothing_indexed(self, setup: tuple[Any, Any]) -> None:
        storage, arm = setup
        doc = Document(text="ephemeral quokka")
        with pytest.raises(Boom), storage.transaction() as tx:
            chunk = Chunk(document_id=doc.id, ordinal=0, text=doc.text)
            chunks = storage.add_document(tx, doc, [chunk])
            arm.index(tx, chunks)
            raise Boom
        assert arm.search("quokka", Filters(), 5) == []

    @pytest.mark.parametrize("which", sorted(SELECTIVE))
    def test_filters_apply_before_ranking(
        self, setup: tuple[Any, Any], arm_name: str, which: str
    ) -> None:
        storage, arm = setup
        best = index_text(storage, arm, "mango mango mango mango", created_at=5000.0)
        for i in range(30):
            index_text(storage, arm, f"mango mango smoothie number {i}", created_at=3000.0 + i)
        targets = {
            index_text(storage, arm, f"a mango among many other words in target {i} of the set",
                       kind="NOTE", tags=("rare", "keep"), created_at=1000.0 + i,
                       metadata={"conv": "c9"}).id
            for i in range(6)
        }
        index_text(storage, arm, "no fruit at all", kind="NOTE", tags=("rare", "keep"),
                   created_at=1500.0, metadata={"conv": "c9"})
        unfiltered = arm.search("mango", Filters(), 31)
        assert unfiltered[0].chunk_id == best.id
        assert not targets & {h.chunk_id for h in unfiltered}  # post-filtering a top-31 finds none
        run = arm.search("mango", SELECTIVE[which], 5)
        assert len(run) == 5
        assert {h.chunk_id for h in run} <= targets
        assert_well_formed(run, arm_name, 5)
        assert {h.chunk_id for h in arm.search("mango", SELECTIVE[which], 50)} == targets

    @pytest.mark.parametrize(("text", "found"), ANY_TEXT)
    def test_any_text_is_a_valid_query(
        self, setup: tuple[Any, Any], text: str, found: bool
    ) -> None:
        storage, arm = setup
        doc = index_text(storage, arm, "state of the art results")
        assert [h.chunk_id for h in arm.search(text, Filters(), 5)] == ([doc.id] if found else [])
