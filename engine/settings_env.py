"""The ``OCTOMEM_*`` environment layer of the settings (:func:`env_layer`).

pydantic-settings reads it (its ``EnvSettingsSource``: names in any case, nested keys
joined by ``__``, JSON for tables and lists). It is imported only when the environment
holds such a variable: with asyncio and dotenv it costs ~0.1 s of a fresh process's
start on a quiet machine, which a one-shot ``octomem search`` without them does not pay
(``benchmarks/results/startup/cli-search.md``).
"""

from __future__ import annotations

import json
import os
import re
import types
import typing
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

    from pydantic_settings import SettingsError

    try:
        return EnvSettingsSource(FromEnvironment, case_sensitive=False)()
    except SettingsError as exc:  # a list or table whose value is not JSON
        raise ArmConfigError(_not_json(settings_model, prefix, exc)) from None


def variable_of(dotted_key: str, prefix: str) -> str | None:
    """Return the environment variable (as spelt in the environment) that sets
    ``dotted_key`` or a key above it (``OCTOMEM_RETRIEVAL__TOP_K`` for ``retrieval.top_k``,
    ``OCTOMEM_INGEST__ALLOWED_ROOTS`` for ``ingest.allowed_roots.0``); ``None`` when no
    variable does. Names match in any case, as pydantic-settings reads them."""
    names = {name.upper(): name for name in os.environ}
    parts = dotted_key.split(".")
    for i in range(len(parts), 0, -1):
        name = names.get((prefix + "__".join(parts[:i])).upper())
        if name is not None:
            return name
    return None


def _not_json(settings_model: type[BaseModel], prefix: str, exc: Exception) -> str:
    """Return the one-line error for a variable of a list or table setting whose value is
    not JSON (pydantic-settings decodes those fields as JSON), naming the variable and
    the form its value takes."""
    for name, value in sorted(os.environ.items()):
        if not name.upper().startswith(prefix.upper()):
            continue
        shape = _complex_shape(settings_model, name[len(prefix):].lower().split("__"))
        if shape is None:
            continue
        try:
            json.loads(value)
        except ValueError:
            example = '\'["/data/docs"]\'' if shape is list else '\'{"key": 1}\''
            return (f"environment variable {name}: {value[:60]!r} is not JSON; a "
                    f"{'list' if shape is list else 'table'} setting is written as JSON, "
                    f"e.g. {name}={example}")
    field = re.search(r'field "([^"]+)"', str(exc))
    return (f"environment variable of setting '{field.group(1) if field else '?'}' cannot "
            "be read: lists and tables are written as JSON")


def _complex_shape(model: type[BaseModel], path: list[str]) -> type | None:
    """Return ``list`` or ``dict`` when ``path`` (lower-case keys) names a list- or
    table-valued setting of ``model``, else ``None``."""
    annotation: Any = model
    for key in path:
        fields = getattr(annotation, "model_fields", None)
        if fields is None or key not in fields:
            return None
        annotation = fields[key].annotation
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if typing.get_origin(annotation) in (typing.Union, types.UnionType) and args:
            annotation = args[0]  # Optional[X] -> X
    origin = typing.get_origin(annotation) or annotation
    if origin in (list, tuple, set, frozenset):
        return list
    if origin is dict:
        return dict
    return None
