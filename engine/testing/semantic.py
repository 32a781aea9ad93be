"""Contract of the :class:`~octomem.engine.arms.SemanticArm` Protocol.

Vectors are deterministic unit vectors, so expected cosines are computed with numpy.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ..arms import SemanticArm
from ..types import Chunk, Document, Filters, Hit
from .base import ArmBuilder, ArmContract
from .storage import Boom

DIM = 8
MODEL = "test/model-a"


def unit(rows: Any) -> np.ndarray:
    """Return ``rows`` as float32, each row scaled to unit L2 norm."""
    rows = np.asarray(rows, dtype=np.float32)
    return (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(np.float32)


def store(storage: Any, n: int, **fields: Any) -> list[int]:
    """Store ``n`` one-chunk documents in one transaction; return their chunk ids."""
    ids = []
    with storage.transaction() as tx:
        for i in range(n):
            doc = Document(text=f"chunk {i} {fields}", **fields)
            chunk = Chunk(document_id=doc.id, ordinal=0, text=doc.text)
            ids.append(storage.add_document(tx, doc, [chunk])[0].id)
    return ids


def add_vectors(storage: Any, arm: Any, ids: list[int], vectors: np.ndarray) -> None:
    """Add ``vectors`` for ``ids`` in one transaction."""
    with storage.transaction() as tx:
        arm.add(tx, ids, vectors)


def bind(storage: Any, arm: Any, model: str, dim: int = DIM) -> None:
    """Bind ``arm`` to the vectors of ``(model, dim)`` in one transaction."""
    with storage.transaction() as tx:
        arm.bind(tx, model, dim)


def assert_well_formed(run: list[Hit], arm_name: str, k: int) -> None:
    """At most ``k`` hits, ranks 1..n, cosine scores descending in [-1, 1], named by the arm."""
    assert len(run) <= k
    assert [h.rank for h in run] == list(range(1, len(run) + 1))
    scores = [h.score for h in run]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 - 1e-5 <= s <= 1.0 + 1e-5 for s in scores)
    assert all(h.arm == arm_name for h in run)


SELECTIVE = {
    "kinds": Filters(kinds=("NOTE",)),
    "tags": Filters(tags=("rare", "keep")),
    "created": Filters(created_after=1000.0, created_before=2000.0),
    "metadata": Filters(metadata={"conv": "c9"}),
    "all": Filters(kinds=("NOTE",), tags=("rare",), created_after=1000.0, metadata={"conv": "c9"}),
}


class SemanticContract(ArmContract):
    """Every semantic arm over a storage it accepts: cosine scores, missing vectors,
    replace, rollback, filters inside the KNN, several models side by side. Name them
    with ``ARM`` and ``STORAGE``."""

    @pytest.fixture
    def setup(self, octomem_build: ArmBuilder, arm_name: str, storage_name: str) -> tuple[Any, Any]:
        """``(storage, semantic arm bound to test/model-a at 8 dimensions)``, both fresh."""
        storage = octomem_build.build("storage", storage_name)
        arm = octomem_build.build("semantic", arm_name, storage=storage)
        bind(storage, arm, MODEL)
        return storage, arm

    def test_implements_protocol(self, setup: tuple[Any, Any], arm_name: str) -> None:
        assert isinstance(setup[1], SemanticArm)
        assert setup[1].name == arm_name

    def test_search_scores_are_cosine_similarities(
        self, setup: tuple[Any, Any], arm_name: str
    ) -> None:
        storage, arm = setup
        vecs = unit(np.random.default_rng(7).normal(size=(40, DIM)))
        ids = store(storage, 40)
        add_vectors(storage, arm, ids, vecs)
        query = vecs[13]
        run = arm.search(query, Filters(), 10)
        assert_well_formed(run, arm_name, 10)
        assert run[0].chunk_id == ids[13]
        assert run[0].score == pytest.approx(1.0, abs=1e-5)
        cosines = vecs @ query
        expected = [ids[i] for i in np.argsort(-cosines)[:10]]
        assert [h.chunk_id for h in run] == expected
        by_id = dict(zip(ids, cosines.tolist(), strict=True))
        for hit in run:
            assert hit.score == pytest.approx(by_id[hit.chunk_id], abs=1e-5)
        assert len(arm.search(query, Filters(), 100)) == 40

    def test_missing_vectors_and_remove(self, setup: tuple[Any, Any]) -> None:
        storage, arm = setup
        ids = store(storage, 6)
        assert arm.missing() == ids and arm.missing_count() == 6
        assert arm.missing(limit=2) == ids[:2]
        vecs = unit(np.eye(DIM, dtype=np.float32)[:3] + 0.1)
        add_vectors(storage, arm, [ids[4], ids[1], ids[2]], vecs)
        assert arm.missing() == [ids[0], ids[3], ids[5]] and arm.missing_count() == 3
        got = arm.vectors([ids[1], ids[0], ids[4]])
        assert got.shape == (3, DIM) and got.dtype == np.float32
        np.testing.assert_allclose(got[0], vecs[1], atol=1e-6)
        np.testing.assert_array_equal(got[1], np.zeros(DIM, dtype=np.float32))
        np.testing.assert_allclose(got[2], vecs[0], atol=1e-6)
        with storage.transaction() as tx:
            arm.remove(tx, [ids[1]])
        assert arm.missing() == [ids[0], ids[1], ids[3], ids[5]] and arm.missing_count() == 4
        assert ids[1] not in {h.chunk_id for h in arm.search(vecs[1], Filters(), 10)}

    def test_add_replaces_an_existing_vector(self, setup: tuple[Any, Any]) -> None:
        storage, arm = setup
        (cid,) = store(storage, 1)
        first, second = unit(np.eye(DIM, dtype=np.float32)[:2])
        add_vectors(storage, arm, [cid], first[None, :])
        add_vectors(storage, arm, [cid], second[None, :])
        np.testing.assert_allclose(arm.vectors([cid])[0], second, atol=1e-6)
        assert len(arm.search(second, Filters(), 5)) == 1

    def test_rollback_leaves_no_vector(self, setup: tuple[Any, Any]) -> None:
        storage, arm = setup
        (cid,) = store(storage, 1)
        with pytest.raises(Boom), storage.transaction() as tx:
            arm.add(tx, [cid], unit(np.ones((1, DIM))))
            raise Boom
        assert arm.missing() == [cid] and arm.missing_count() == 1
        assert arm.search(unit(np.ones(DIM)), Filters(), 5) == []

    @pytest.mark.parametrize("which", sorted(SELECTIVE))
    def test_filters_apply_inside_the_knn(
        self, setup: tuple[Any, Any], arm_name: str, which: str
    ) -> None:
        storage, arm = setup
        rng = np.random.default_rng(3)
        query = unit(np.eye(DIM)[0])
        # 300 distractors close to the query (the best is the query itself), 7 targets far away.
        distractor_ids = store(storage, 300, created_at=5000.0)
        near = unit(query + 0.2 * rng.normal(size=(300, DIM)))
        near[0] = query
        add_vectors(storage, arm, distractor_ids, near)
        target_ids = store(storage, 7, kind="NOTE", tags=("rare", "keep"), created_at=1500.0,
                           metadata={"conv": "c9"})
        far = unit(-query + 0.5 * rng.normal(size=(7, DIM)))
        add_vectors(storage, arm, target_ids, far)
        unfiltered = arm.search(query, Filters(), 300)
        assert unfiltered[0].chunk_id == distractor_ids[0]
        assert not set(target_ids) & {h.chunk_id for h in unfiltered}  # post-filtering finds none
        run = arm.search(query, SELECTIVE[which], 5)
        assert_well_formed(run, arm_name, 5)
        cosines = far @ query
        assert [h.chunk_id for h in run] == [target_ids[i] for i in np.argsort(-cosines)[:5]]
        assert {h.chunk_id for h in arm.search(query, SELECTIVE[which], 50)} == set(target_ids)
        assert arm.search(query, Filters(tags=("absent",)), 5) == []

    def test_models_live_side_by_side_and_are_never_compared(
        self, setup: tuple[Any, Any]
    ) -> None:
        storage, arm = setup
        bind(storage, arm, MODEL)  # the same model again: fine, nothing changes
        ids = store(storage, 4)
        eye = np.eye(DIM, dtype=np.float32)
        add_vectors(storage, arm, ids, eye[:4])  # model a: chunk i points along axis i
        bind(storage, arm, "test/model-b")
        assert arm.missing() == ids and arm.missing_count() == 4
        assert arm.search(eye[0], Filters(), 10) == []  # model a's vectors are not candidates
        np.testing.assert_array_equal(arm.vectors(ids[:1]), np.zeros((1, DIM), np.float32))
        add_vectors(storage, arm, ids[:2], eye[[5, 4]])  # model b: chunk 0 along 5, chunk 1 along 4
        assert [h.chunk_id for h in arm.search(eye[5], Filters(), 10)][0] == ids[0]
        assert arm.missing() == ids[2:] and arm.missing_count() == 2
        bind(storage, arm, MODEL)  # switching back: model a's vectors are where they were
        assert arm.missing() == [] and arm.missing_count() == 0
        run = arm.search(eye[2], Filters(), 10)
        assert run[0].chunk_id == ids[2] and run[0].score == pytest.approx(1.0, abs=1e-5)
        np.testing.assert_allclose(arm.vectors([ids[0]])[0], eye[0], atol=1e-6)
        bind(storage, arm, MODEL, DIM * 2)  # the same model id at another dimension: another set
        assert arm.missing_count() == 4 and arm.search(np.ones(DIM * 2), Filters(), 5) == []

    def test_remove_drops_a_chunk_from_every_model(self, setup: tuple[Any, Any]) -> None:
        storage, arm = setup
        ids = store(storage, 3)
        vecs = unit(np.eye(DIM, dtype=np.float32)[:3] + 0.1)
        add_vectors(storage, arm, ids, vecs)
        bind(storage, arm, "test/model-b")
        add_vectors(storage, arm, ids, vecs[::-1])
        with storage.transaction() as tx:
            arm.remove(tx, [ids[1]])
        assert arm.missing() == [ids[1]] and arm.missing_count() == 1
        bind(storage, arm, MODEL)
        assert arm.missing() == [ids[1]] and arm.missing_count() == 1
        assert ids[1] not in {h.chunk_id for h in arm.search(vecs[1], Filters(), 10)}

    def test_a_new_arm_instance_reads_the_model_it_binds(
        self, octomem_build: ArmBuilder, arm_name: str, setup: tuple[Any, Any]
    ) -> None:
        storage, arm = setup
        ids = store(storage, 2)
        vecs = unit(np.eye(DIM, dtype=np.float32)[:2])
        add_vectors(storage, arm, ids, vecs)
        fresh = octomem_build.build("semantic", arm_name, storage=storage)
        bind(storage, fresh, "another/model")
        assert fresh.search(vecs[0], Filters(), 5) == [] and fresh.missing() == ids
        bind(storage, fresh, MODEL)
        assert [h.chunk_id for h in fresh.search(vecs[0], Filters(), 5)] == ids
