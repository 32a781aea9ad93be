"""Fixtures: an isolated home, and a tiny model2vec folder whose vectors can be checked by hand."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

#: Token -> vector of the tiny model ("[UNK]" is the unknown token, dropped when embedding).
TINY_VECTORS = {
    "[UNK]": [0.0, 0.0, 0.0],
    "red": [1.0, 0.0, 0.0],
    "green": [0.0, 1.0, 0.0],
    "blue": [0.0, 0.0, 1.0],
    "dark": [3.0, 4.0, 0.0],
}


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Keep every test away from the real home, config and data directories and the hub."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd-project"))  # its local scope: empty
    for key in list(os.environ):
        if key.startswith("OCTOMEM_"):
            monkeypatch.delenv(key)


def write_tiny_model(folder: Path) -> Path:
    """Write a 3-d model2vec model over a 5-word vocabulary (word-level, lowercased)."""
    from safetensors.numpy import save_file
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordLevel

    folder.mkdir(parents=True, exist_ok=True)
    vocab = {token: i for i, token in enumerate(TINY_VECTORS)}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.save(str(folder / "tokenizer.json"))
    embeddings = np.array(list(TINY_VECTORS.values()), dtype=np.float32)
    save_file({"embeddings": embeddings}, str(folder / "model.safetensors"))
    (folder / "config.json").write_text(json.dumps({"normalize": True}))
    return folder


@pytest.fixture
def tiny_model(tmp_path: Path) -> Path:
    """A fresh tiny model folder named ``tiny-m2v``."""
    return write_tiny_model(tmp_path / "tiny-m2v")
