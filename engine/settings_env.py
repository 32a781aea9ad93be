"""The ``OCTOMEM_*`` environment layer of the settings (:func:`env_layer`).

pydantic-settings reads it (its ``EnvSettingsSource``: names in any case, nested keys
joined by ``__``, JSON for tables and lists). It is imported only when the environment
holds such a variable: with asyncio and dotenv it costs ~0.1 s of a fresh process's
start on a quiet machine, which a one-shot ``octomem search`` without them does not pay
(``benchmarks/results/startup/cli-search.md``).
"""

from __future__ import annotations

import os
from typing import Any

from pydantic import BaseModel

from .errors import ArmConfigError


def env_layer(settings_model: type[BaseModel], prefix: str) -> dict[str, Any]:
    """Return the settings the environment sets, nested as :func:`load_settings`'s layers.

    :param settings_model: the settings model (its fields are the known top-level keys).
    :param prefix: the variables' prefix (``OCTOMEM_``).
    :returns: e.g. ``{"retrieval": {"top_k": "5"}}`` for ``OCTOMEM_RETRIEVAL__TOP_K=5``;
        ``{}`` when no variable's name starts with the prefix, in any case (what
        pydantic-settings' source returns then).
    :raises ArmConfigError: a variable with the prefix names no setting.
    """
    fields = settings_model.model_fields
    unknown = [k for k in os.environ
               if k.startswith(prefix) and k[len(prefix):].split("__")[0].lower() not in fields]
    if unknown:
        raise ArmConfigError(
            f"unknown environment variable {unknown[0]}; known prefixes: "
            + ", ".join(prefix + f.upper() for f in fields)
        )
    if not any(k.lower().startswith(prefix.lower()) for k in os.environ):
        return {}
    from pydantic_settings import BaseSettings, EnvSettingsSource, SettingsConfigDict

    class FromEnvironment(BaseSettings, settings_model):  # type: ignore[misc, valid-type]
        """The settings' fields, read as a ``BaseSettings`` model reads them."""

        model_config = SettingsConfigDict(
            env_prefix=prefix, env_nested_delimiter="__", extra="forbid")

    return EnvSettingsSource(FromEnvironment, case_sensitive=False)()
