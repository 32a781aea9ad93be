"""The conformance kit: the contract test suites an arm implementation must pass.

One pytest test class per arm Protocol. The built-in arms pass them (``tests/contracts/``
runs them over every installed arm); a plugin runs the same classes over its own arms by
subclassing them in its tests and naming the arm under test::

    # tests/test_conformance.py of a plugin distribution
    from octomem.engine.testing import EmbedderContract, KeywordSuite, StorageSuite

    class TestMyEmbedder(EmbedderContract):
        ARM = "my-embedder"

    class TestMyStorage(StorageSuite):          # Storage + VersionedStorage contracts
        STORAGE = "my-storage"

    class TestMyKeyword(KeywordSuite):          # KeywordArm + validity contracts
        ARM, STORAGE = "my-keyword", "my-storage"

Arms are built from their registered specs (the plugin must be installed, e.g.
``pip install -e .``), in a fresh scope directory per test, with default options. Arms
that need options get them from a fixture named ``octomem_arm_options`` returning
``{arm name: {option: value}}`` (define it in ``conftest.py``; it may use other
fixtures, e.g. a server's URI), or from the class attribute ``OPTIONS``; an arm with a
required option that nobody gave is skipped with that reason. A fixture named
``octomem_registry`` replaces the installed registry (e.g.
``load_registry(extra_plugins=[module])`` for a plugin that is not installed).

Suites (each a class to subclass; nothing here is collected by itself):

========================= =================================================================
``StorageContract``        round trips, transactions, filters agreeing with ``Filters.matches``
``HistoryContract``        supersede, revisions, recall counters, forget log (VersionedStorage)
``KeywordContract``        index/search/remove, rollback, filters before ranking, any text
``SemanticContract``       cosine scores, missing vectors, filters inside the KNN, model sets
``ValidityContract``       current-only by default, ``as_of``, ``since``/``until`` (``KIND``)
``EmbedderContract``       shapes, dtype, unit norm, determinism, token counts
``RerankerContract``       one float32 score per passage, in input order, deterministic
``DedupContract``          partition of the input, first hit first, repeats collapsed
``StorageSuite``           ``StorageContract`` + ``HistoryContract``
``KeywordSuite``           ``KeywordContract`` + keyword ``ValidityContract``
``SemanticSuite``          ``SemanticContract`` + semantic ``ValidityContract``
========================= =================================================================

Needs pytest (octomem's ``dev`` extra); the engine itself never imports this package.
"""

from __future__ import annotations

from .base import ArmBuilder, ArmContract, arm_pairs, registered_names, required_options
from .dedup import DedupContract
from .embedder import EmbedderContract
from .keyword import KeywordContract
from .reranker import RerankerContract
from .semantic import SemanticContract
from .storage import HistoryContract, StorageContract
from .validity import KeywordValidityContract, SemanticValidityContract, ValidityContract


class StorageSuite(StorageContract, HistoryContract):
    """Everything a storage must pass: :class:`StorageContract` and :class:`HistoryContract`
    (skipped for a storage without statement history). Set ``STORAGE``."""


class KeywordSuite(KeywordContract, KeywordValidityContract):
    """Everything a keyword arm must pass: :class:`KeywordContract` and the keyword
    :class:`ValidityContract`. Set ``ARM`` and ``STORAGE``."""


class SemanticSuite(SemanticContract, SemanticValidityContract):
    """Everything a semantic arm must pass: :class:`SemanticContract` and the semantic
    :class:`ValidityContract`. Set ``ARM`` and ``STORAGE``."""


__all__ = [
    "ArmBuilder",
    "ArmContract",
    "DedupContract",
    "EmbedderContract",
    "HistoryContract",
    "KeywordContract",
    "KeywordSuite",
    "KeywordValidityContract",
    "RerankerContract",
    "SemanticContract",
    "SemanticSuite",
    "SemanticValidityContract",
    "StorageContract",
    "StorageSuite",
    "ValidityContract",
    "arm_pairs",
    "registered_names",
    "required_options",
]
