"""Settings: packaged defaults < user config < ``--config FILE`` < ``OCTOMEM_*`` < ``--set``.

Each later layer wins per key. Every effective value remembers the layer it came
from (:attr:`LoadedSettings.provenance`), and an unknown key is an error naming the
key, the layer and the closest known key.
"""

from __future__ import annotations

import difflib
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs
from pydantic import BaseModel, Field, ValidationError
from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

from .errors import ArmConfigError

ENV_PREFIX = "OCTOMEM_"


class PipelineSettings(BaseModel, extra="forbid"):
    """Which arm of each kind the pipeline is assembled from, by registered name."""

    storage: str = Field("sqlite", description="storage arm (documents, chunks, metadata)")
    keyword: str | None = Field("fts5", description="keyword (BM25) arm; empty for none")
    embedder: str | None = Field("fastembed", description="embedder; empty for keyword-only")
    semantic: str | None = Field("sqlite-vec", description="vector index arm; empty for none")
    reranker: str | None = Field(None, description="reranker arm; off by default")
    dedup: str | None = Field("cosine", description="dedup arm; empty for none")


class RetrievalSettings(BaseModel, extra="forbid"):
    """How runs are fused and cut. Changing these reorders the next answer only."""

    top_k: int = Field(10, ge=1, le=1000, description="hits in an answer")
    candidate_k: int = Field(
        100, ge=1, le=4096,
        description="hits each arm returns before fusion (BEIR's usual depth of 100; "
        "at most 4096, sqlite-vec's largest k)",
    )
    fusion: Literal["rrf", "weighted"] = Field("rrf", description="how runs are combined")
    rrf_k: int = Field(
        60, ge=1, le=10_000,
        description="RRF constant k (Cormack, Clarke & Buettcher, SIGIR 2009)",
    )
    weights: dict[str, float] = Field(
        default_factory=dict,
        description="per-arm weight by arm name for either fusion (default 1.0 each)",
    )
    rerank_top_n: int = Field(20, ge=1, le=1000, description="fused hits the reranker re-scores")
    embed_batch_size: int = Field(64, ge=1, le=4096, description="texts per embedder call")


def _default_data_dir() -> Path:
    return platformdirs.user_data_path("octomem")


class Settings(BaseSettings):
    """Every octomem setting. Nested keys are dotted (``retrieval.rrf_k``) in ``--set`` and
    joined by ``__`` in environment variables (``OCTOMEM_RETRIEVAL__RRF_K=40``).

    ``arms.<name>`` holds the options of the arm of that name (validated by the arm's
    own options model when the pipeline is assembled).
    """

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX, env_nested_delimiter="__", extra="forbid"
    )

    data_dir: Path = Field(default_factory=_default_data_dir, description="where data lives")
    pipeline: PipelineSettings = Field(default_factory=PipelineSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    arms: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @classmethod
    def settings_customise_sources(cls, settings_cls, init_settings, *_: Any, **__: Any):  # type: ignore[no-untyped-def, override]
        """Use only the values :func:`load_settings` merged; it reads every layer itself."""
        return (init_settings,)


@dataclass(frozen=True, slots=True)
class LoadedSettings:
    """Effective settings and the layer each set key came from (dotted key -> layer)."""

    settings: Settings
    provenance: dict[str, str]

    def source_of(self, dotted_key: str) -> str:
        """Return the layer that set ``dotted_key`` (``"default"`` when none did)."""
        parts = dotted_key.split(".")
        for i in range(len(parts), 0, -1):
            layer = self.provenance.get(".".join(parts[:i]))
            if layer:
                return layer
        return "default"


def user_config_path() -> Path:
    """Return ``~/.config/octomem/config.toml`` (the platform's user config dir)."""
    return platformdirs.user_config_path("octomem") / "config.toml"


def _read_toml(path: Path, layer: str) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ArmConfigError(f"{layer} {path}: not valid TOML: {exc}") from exc
    except OSError as exc:
        raise ArmConfigError(f"{layer} {path}: cannot be read: {exc}") from exc


def _parse_value(raw: str) -> Any:
    """Read a ``--set`` value as TOML (numbers, booleans, lists, quoted strings), else a string."""
    try:
        return tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        return raw


def parse_overrides(pairs: list[str]) -> dict[str, Any]:
    """Turn ``["retrieval.rrf_k=40", ...]`` into a nested dict.

    :raises ArmConfigError: an item has no ``=``.
    """
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ArmConfigError(f"--set {pair!r}: expected key=value, e.g. retrieval.top_k=5")
        node = out
        *parents, leaf = key.strip().split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = _parse_value(raw.strip())
    return out


def _check_keys(data: dict[str, Any], model: type[BaseModel], layer: str, prefix: str = "") -> None:
    """Raise naming the key, the layer and the closest known key for any unknown key."""
    fields = model.model_fields
    for key, value in data.items():
        dotted = f"{prefix}{key}"
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1)
            hint = f"; did you mean '{prefix}{close[0]}'?" if close else ""
            raise ArmConfigError(f"unknown setting {dotted!r} in {layer}{hint}")
        annotation = fields[key].annotation
        if isinstance(value, dict) and isinstance(annotation, type) and issubclass(annotation, BaseModel):
            _check_keys(value, annotation, layer, f"{dotted}.")


def _env_layer() -> dict[str, Any]:
    unknown = [
        k for k in os.environ
        if k.startswith(ENV_PREFIX) and k[len(ENV_PREFIX):].split("__")[0].lower() not in Settings.model_fields
    ]
    if unknown:
        raise ArmConfigError(
            f"unknown environment variable {unknown[0]}; known prefixes: "
            + ", ".join(ENV_PREFIX + f.upper() for f in Settings.model_fields)
        )
    return EnvSettingsSource(Settings, case_sensitive=False)()


def _merge(into: dict[str, Any], layer: dict[str, Any], name: str, prov: dict[str, str], prefix: str = "") -> None:
    """Deep-merge ``layer`` into ``into``, recording ``name`` as the source of each leaf."""
    for key, value in layer.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, dict) and key != "weights":
            if not isinstance(into.get(key), dict):
                into[key] = {}
            _merge(into[key], value, name, prov, f"{dotted}.")
        else:
            into[key] = value
            prov[dotted] = name


def load_settings(
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    read_user_config: bool = True,
) -> LoadedSettings:
    """Read every layer and return the effective settings with their provenance.

    :param config_file: the ``--config FILE`` layer.
    :param overrides: the ``--set`` layer, nested (see :func:`parse_overrides`).
    :raises ArmConfigError: an unknown key, a bad value or an unreadable file; the
        message names the key and the layer.
    """
    layers: list[tuple[str, dict[str, Any]]] = []
    user = user_config_path()
    if read_user_config and user.is_file():
        layers.append((f"user config ({user})", _read_toml(user, "user config")))
    if config_file is not None:
        layers.append((f"--config ({config_file})", _read_toml(config_file, "--config")))
    layers.append(("environment", _env_layer()))
    layers.append(("--set", overrides or {}))
    merged: dict[str, Any] = {}
    provenance: dict[str, str] = {}
    for name, data in layers:
        _check_keys(data, Settings, name)
        _merge(merged, data, name, provenance)
    try:
        settings = Settings(**merged)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(p) for p in err["loc"])
        layer = LoadedSettings(Settings.model_construct(), provenance).source_of(key)
        raise ArmConfigError(f"setting {key!r} from {layer}: {err['msg']}") from exc
    return LoadedSettings(settings, provenance)
