"""Contract: keyword and semantic arms apply statement validity inside their searches.

Each arm is paired with a storage that keeps history
(:class:`~octomem.engine.arms.VersionedStorage`; skipped otherwise). By default only
current chunks are candidates; ``as_of``, ``include_superseded`` and ``since``/``until``
(``valid_after``/``valid_before``) restrict or widen that *before* ranking, so ``k``
hits come back whenever they exist.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import pytest

from ..arms import VersionedStorage
from ..types import Chunk, Document, Filters, Hit
from .base import ArmBuilder, ArmContract

DIM = 8
QUERY = np.eye(DIM, dtype=np.float32)[0]


class Corpus:
    """Stores statements through a storage and one arm; searches them by one query."""

    def __init__(self, storage: Any, arm: Any, kind: str) -> None:
        self.storage, self.arm, self.kind = storage, arm, kind
        if kind == "semantic":
            with storage.transaction() as tx:
                arm.bind(tx, "test/validity", DIM)

    def add(self, closeness: float, **fields: Any) -> tuple[str, int]:
        """Store one statement that matches the query with ``closeness`` in (0, 1]."""
        words = " ".join(["mango"] * max(1, round(closeness * 8)) + ["filler"] * 8)
        doc = Document(text=f"{words} {fields.get('id', '')}", **fields)
        with self.storage.transaction() as tx:
            (chunk,) = self.storage.add_document(
                tx, doc, [Chunk(document_id=doc.id, ordinal=0, text=doc.text)])
            if self.kind == "keyword":
                self.arm.index(tx, [chunk])
            else:
                vector = np.full(DIM, np.sqrt(max(1e-6, 1 - closeness**2) / (DIM - 1)), np.float32)
                vector[0] = closeness
                self.arm.add(tx, [chunk.id], (vector / np.linalg.norm(vector))[None, :])
        return doc.id, chunk.id

    def supersede(self, doc_id: str, by: str, at: float) -> None:
        with self.storage.transaction() as tx:
            self.storage.supersede(tx, doc_id, by, at)

    def search(self, filters: Filters, k: int) -> list[Hit]:
        if self.kind == "keyword":
            return self.arm.search("mango", filters, k)
        return self.arm.search(QUERY, filters, k)


def _ids(run: list[Hit]) -> list[int]:
    return [h.chunk_id for h in run]


class ValidityContract(ArmContract):
    """Validity rules inside a keyword or semantic arm's search. Set ``KIND``
    (``"keyword"`` or ``"semantic"``, or parametrize ``arm_kind``), ``ARM`` and ``STORAGE``."""

    KIND: ClassVar[str | None] = None

    @pytest.fixture
    def arm_kind(self) -> str:
        """``"keyword"`` or ``"semantic"`` (class attribute ``KIND``)."""
        if self.KIND not in ("keyword", "semantic"):
            pytest.fail(f"{type(self).__name__}: set KIND = 'keyword' or 'semantic'")
        return str(self.KIND)

    @pytest.fixture
    def corpus(self, octomem_build: ArmBuilder, arm_kind: str, arm_name: str,
               storage_name: str) -> Corpus:
        """A fresh storage and arm (skipped when the storage keeps no history)."""
        storage = octomem_build.build("storage", storage_name)
        if not isinstance(storage, VersionedStorage):
            pytest.skip(f"storage {storage_name!r} keeps no statement history")
        arm = octomem_build.build(arm_kind, arm_name, storage=storage)  # type: ignore[arg-type]
        return Corpus(storage, arm, arm_kind)

    def test_superseded_chunks_are_no_candidates_by_default(self, corpus: Corpus) -> None:
        # 6 strong statements, each superseded by a weak one: a top-5 must be the weak ones
        weak = []
        for i in range(6):
            strong_id, strong_chunk = corpus.add(1.0, created_at=100.0 + i)
            new_id, new_chunk = corpus.add(0.3, created_at=200.0 + i)
            corpus.supersede(strong_id, new_id, 200.0 + i)
            weak.append(new_chunk)
        corpus.add(0.2, kind="NOTE", created_at=50.0)  # a current, weaker, other kind
        run = corpus.search(Filters(), 5)
        assert len(run) == 5 and set(_ids(run)) <= set(weak)
        assert set(_ids(corpus.search(Filters(kinds=("ITEM",)), 50))) == set(weak)
        every = corpus.search(Filters(include_superseded=True), 50)
        assert len(every) == 13 and _ids(every)[0] not in weak

    def test_as_of_returns_what_was_current_then(self, corpus: Corpus) -> None:
        old_id, old_chunk = corpus.add(0.9, created_at=1000.0)
        new_id, new_chunk = corpus.add(0.8, created_at=2000.0)
        corpus.supersede(old_id, new_id, 2000.0)
        _, later = corpus.add(1.0, created_at=3000.0)
        assert _ids(corpus.search(Filters(as_of=500.0), 5)) == []
        assert _ids(corpus.search(Filters(as_of=1500.0), 5)) == [old_chunk]
        assert _ids(corpus.search(Filters(as_of=2000.0), 5)) == [new_chunk]
        assert set(_ids(corpus.search(Filters(as_of=3500.0), 5))) == {new_chunk, later}
        assert set(_ids(corpus.search(Filters(), 5))) == {new_chunk, later}

    def test_since_and_until_bound_valid_from(self, corpus: Corpus) -> None:
        _, by_event = corpus.add(0.5, created_at=9000.0, event_time=1500.0)
        _, recorded = corpus.add(0.9, created_at=2500.0)
        _, early = corpus.add(1.0, created_at=500.0)
        window = Filters(valid_after=1000.0, valid_before=3000.0)
        assert set(_ids(corpus.search(window, 5))) == {by_event, recorded}
        assert _ids(corpus.search(Filters(valid_before=1000.0), 5)) == [early]
        later = Filters(valid_after=2000.0, valid_before=3000.0)
        assert _ids(corpus.search(later, 5)) == [recorded]


class KeywordValidityContract(ValidityContract):
    """:class:`ValidityContract` for a keyword arm."""

    KIND = "keyword"


class SemanticValidityContract(ValidityContract):
    """:class:`ValidityContract` for a semantic arm."""

    KIND = "semantic"
