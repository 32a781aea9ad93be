"""The hooks a plugin implements to offer arms (pluggy project name ``octomem``).

Each hook is collecting: every registered plugin's results are concatenated. Hooks
take no arguments and are called once, when plugins load; arms are then chosen by
name from the settings, so nothing depends on plugin load order.
"""

from __future__ import annotations

import pluggy

from .arms import ArmSpec

PROJECT = "octomem"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def octomem_register_storages() -> list[ArmSpec]:
    """Offer storages: where documents, chunks and metadata live.

    The storage named by ``pipeline.storage`` is built first, with
    ``ArmContext(root=<scope directory>)``.

    :returns: specs of kind ``"storage"`` whose factory builds a
        :class:`~octomem.engine.arms.Storage`.
    """


@hookspec
def octomem_register_keyword_arms() -> list[ArmSpec]:
    """Offer keyword arms that rank chunks lexically (e.g. BM25).

    The arm named by ``pipeline.keyword`` is built with the assembled storage in its context.

    :returns: specs of kind ``"keyword"``; the built arm has higher-is-better scores.
    """


@hookspec
def octomem_register_embedders() -> list[ArmSpec]:
    """Offer embedders that turn text into float32, L2-normalised vectors.

    :returns: specs of kind ``"embedder"``; the built embedder loads its model lazily.
    """


@hookspec
def octomem_register_semantic_arms() -> list[ArmSpec]:
    """Offer semantic arms: a vector index with cosine KNN search and filters inside it.

    :returns: specs of kind ``"semantic"``; scores are cosine similarities.
    """


@hookspec
def octomem_register_rerankers() -> list[ArmSpec]:
    """Offer rerankers that re-score the fused top-N (query, passage) pairs.

    :returns: specs of kind ``"reranker"``; higher scores are better.
    """


@hookspec
def octomem_register_dedups() -> list[ArmSpec]:
    """Offer dedup arms that collapse repetitions in an answer or diversify it.

    :returns: specs of kind ``"dedup"``.
    """


#: Hook name per arm kind, in the order ``octomem plugins`` lists them.
HOOK_BY_KIND = {
    "storage": "octomem_register_storages",
    "keyword": "octomem_register_keyword_arms",
    "embedder": "octomem_register_embedders",
    "semantic": "octomem_register_semantic_arms",
    "reranker": "octomem_register_rerankers",
    "dedup": "octomem_register_dedups",
}
