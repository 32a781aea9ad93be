"""``--json`` of ``status``, ``config`` and ``plugins``: the same facts as the tables, for
programs. Keys are stable (documented in docs/settings.md, "Machine-readable output"):
a key is never dropped because a value is missing (``null`` instead), sizes are bytes and
times are ISO-8601, unlike the human forms the tables print.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..memory.times import iso_or_none

if TYPE_CHECKING:  # status --json stays as light as status: no pipeline, no numpy
    from ..manager import ArmRegistry
    from ..settings import LoadedSettings

#: Every scope of ``status --json`` has these keys (a scope not created yet: zero counts,
#: the arms and model as configured, ``not_created`` saying what creates it), in this order.
SCOPE_KEYS: tuple[str, ...] = (
    "root", "exists", "documents", "current", "superseded", "forgotten", "chunks",
    "chunks_without_vector", "size_bytes", "arms", "embedder_model", "semantic_available",
    "semantic_error", "relevance", "permissions_warning", "unreadable", "not_created")
_COUNTS = frozenset({"documents", "current", "superseded", "forgotten", "chunks",
                     "chunks_without_vector", "size_bytes"})


def dump(data: Any) -> None:
    """Print ``data`` as indented JSON on stdout (UTF-8 text as it is, no Rich markup)."""
    print(json.dumps(data, indent=2, ensure_ascii=False))


def status_json(info: dict[str, Any]) -> dict[str, Any]:
    """Return ``Memory.status()`` as ``{"project_root", "scopes": {"local", "global"}}``,
    each scope with exactly :data:`SCOPE_KEYS` (what a storage adds beyond them, e.g. a
    last-write time, under ``"extra"``).

    :param info: :meth:`octomem.engine.memory.facade.Memory.status`'s answer.
    """
    scopes: dict[str, Any] = {}
    for name, scope in info["scopes"].items():
        out: dict[str, Any] = {}
        for key in SCOPE_KEYS:
            default: Any = 0 if key in _COUNTS else None
            out[key] = scope.get(key, default)
        out["exists"] = bool(scope.get("exists"))
        out["semantic_available"] = bool(scope.get("semantic_available"))
        out["arms"] = dict(scope.get("arms") or {})
        out["extra"] = {k: _time_or_value(k, v) for k, v in scope.items() if k not in SCOPE_KEYS}
        scopes[name] = out
    return {"project_root": info["project_root"], "scopes": scopes}


def _time_or_value(key: str, value: Any) -> Any:
    """Return a time (a ``*_at`` or ``*_time`` number of epoch seconds) as ISO-8601."""
    if key.endswith(("_at", "_time")) and isinstance(value, int | float):
        return iso_or_none(value)
    return value


def config_json(rows: list[tuple[str, Any]], loaded: LoadedSettings,
                arm_specs: dict[str, Any]) -> dict[str, Any]:
    """Return every effective setting as ``{"settings": {key: {"value", "group",
    "layer", "description"}}}``, keys dotted (``retrieval.top_k``), values as JSON (``null``:
    not set).

    :param rows: ``(dotted key, value)`` of every setting, as ``config`` prints them.
    :param arm_specs: arm name -> spec, to group ``arms.*`` keys by arm kind.
    """
    from ..settings import setting_field, setting_group

    settings: dict[str, Any] = {}
    for key, value in rows:
        field = setting_field(key, arm_specs)
        settings[key] = {"value": value, "group": setting_group(key, arm_specs),
                         "layer": loaded.source_of(key),
                         "description": (field.description or "") if field else ""}
    return {"settings": settings}


def plugins_json(registry: ArmRegistry) -> dict[str, Any]:
    """Return installed arms as ``{"arms": [{"kind", "name", "distribution", "version",
    "description"}]}``, by kind (the table's order), then name."""
    from .render import ARM_KIND_ORDER

    arms = [{"kind": kind, "name": p.spec.name, "distribution": p.distribution,
             "version": p.version, "description": " ".join((p.spec.description or "").split())}
            for kind in ARM_KIND_ORDER for p in registry.provided(kind)]  # type: ignore[arg-type]
    return {"arms": arms}
