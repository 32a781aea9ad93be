"""The conformance kit's embedder contract, over this plugin's arm: with the default model
(shipped in PyPI tokenlearn-static-model) and with a model folder given by ``model_path``."""

from __future__ import annotations

import pytest

from octomem.engine.testing import EmbedderContract


class TestModel2VecDefaultModel(EmbedderContract):
    """``model2vec`` with default options: the 64-d model from tokenlearn-static-model."""

    ARM = "model2vec"


class TestModel2VecModelPath(EmbedderContract):
    """``model2vec`` over a model2vec folder of the default model's files, copied."""

    ARM = "model2vec"

    @pytest.fixture
    def octomem_arm_options(self, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
        from octomem_model2vec import default_model_folder

        folder = tmp_path_factory.getbasetemp() / "copied-static-model"
        if not folder.exists():
            source, _ = default_model_folder()
            folder.mkdir()
            for name in ("config.json", "model.safetensors", "tokenizer.json"):
                (folder / name).write_bytes((source / name).read_bytes())
        return {"model2vec": {"model_path": str(folder)}}

