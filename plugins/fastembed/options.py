"""Options of the ``fastembed`` embedder (settings table ``[arms.fastembed]``) and the
shipped model's constants."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

BUNDLED_MODEL = "bundled:all-MiniLM-L6-v2-int8"
#: all-MiniLM-L6-v2 was trained at 256 tokens; minus [CLS] and [SEP].
MINILM_MAX_TOKENS = 254
MINILM_DIM = 384


class FastembedOptions(BaseModel, extra="forbid", defer_build=True, allow_inf_nan=False):
    """Options of the ``fastembed`` embedder (settings table ``[arms.fastembed]``)."""

    model: str = Field(
        default=BUNDLED_MODEL,
        description=f"{BUNDLED_MODEL!r} (shipped, no network) or a fastembed/hub model name",
    )
    model_path: Path | None = Field(
        default=None, description="local folder with an ONNX model and its tokenizer files"
    )
    model_file: str | None = Field(
        default=None, description="ONNX file inside model_path or the hub repo (default: found)"
    )
    dim: int | None = Field(default=None, ge=1, le=65_536, description="vector size (custom)")
    pooling: Literal["mean", "cls"] = Field(default="mean", description="pooling (custom)")
    threads: int | None = Field(
        default=None, ge=1, description="onnxruntime threads (all cores)",
        json_schema_extra={"group": "runtime"},
    )
    query_threads: int | None = Field(
        default=1, ge=1, json_schema_extra={"group": "runtime"},
        description="onnxruntime threads for one query's embedding (bundled model: the "
        "session opened at load; documents get a session of threads at their first use when "
        "the two differ, ~30 MB; empty: threads). 1: a question of "
        "~12 tokens gains nothing from a second thread and the recall's keyword arm runs on "
        "the other core meanwhile (chosen on LoCoMo conv-26's 199 questions, 2 cores, load "
        "6: p50 8.3 ms with 1 thread against 9.9 ms with 2, p10 5.8 against 6.7 ms)",
    )
    spin: bool = Field(
        default=False, json_schema_extra={"group": "runtime"},
        description="onnxruntime's worker threads spin-wait for work between operators. Off: "
        "a query's embedding leaves no worker burning a core while the rest of the recall "
        "runs (chosen by timing one embedding plus 10 ms of Python per LoCoMo conv-26 "
        "question, 2 threads, load 7: 34 -> 17 ms process CPU, 68 -> 34 ms wall)",
    )
    max_tokens: int = Field(
        default=MINILM_MAX_TOKENS, ge=1, description="longest chunk in tokens, no specials"
    )
    batch_size: int = Field(
        default=32, ge=1, le=4096, description="texts per onnxruntime call",
        json_schema_extra={"group": "runtime"},
    )
    cache_dir: Path | None = Field(
        default=None,
        description="download cache (hub models), re-quantized model and its optimised graph, "
        "the token counter's compact copy of the tokenizer's vocabulary",
        json_schema_extra={"group": "runtime"},
    )
    requantize: bool = Field(
        default=True,
        description="bundled model only: re-quantize it once per machine (per-channel int8) "
        "for ~2x faster embedding; its vectors get their own model id",
    )

    @model_validator(mode="after")
    def _check_source(self) -> FastembedOptions:
        if self.model_path is not None:
            if self.model != BUNDLED_MODEL:
                raise ValueError("give either model or model_path, not both")
            if self.dim is None:
                raise ValueError("model_path needs dim (the model's vector dimension)")
        elif self.model != BUNDLED_MODEL and self.dim is None and (
            self.model_file or not _catalogue_entry(self.model)
        ):
            raise ValueError(
                f"model {self.model!r} is not in fastembed's list (or model_file is set): "
                "give dim (and pooling) to load it as an ONNX repo from the hub"
            )
        return self


def _catalogue_entry(name: str) -> dict[str, Any] | None:
    """Return fastembed's own description of model ``name`` (no network), or ``None``."""
    from fastembed import TextEmbedding

    for description in TextEmbedding.list_supported_models():
        if description["model"].lower() == name.lower():
            return description
    return None
