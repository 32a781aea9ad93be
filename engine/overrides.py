"""The command line's setting overrides: the ``--set`` layer, and the options that set a
key for the user (``--data-dir`` sets ``data_dir``), each named as its source.

:class:`Overrides` is a plain nested ``dict`` (what :func:`~.settings.load_settings`
takes as ``overrides``) that also remembers which option set which dotted key, so
``octomem config`` says ``--data-dir``, not ``--set``, for a value ``--data-dir`` gave.
No imports: the CLI builds it before anything heavy is loaded.
"""

from __future__ import annotations

from typing import Any


class Overrides(dict[str, Any]):
    """A nested dict of setting overrides (``{"retrieval": {"top_k": 5}}``).

    :param labels: dotted key -> the option that set it (keys absent here came from
        ``--set``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.labels: dict[str, str] = {}

    def put(self, dotted: str, value: Any, label: str) -> None:
        """Set ``dotted`` (``pipeline.embedder``) to ``value``, set by option ``label``."""
        *parents, leaf = dotted.split(".")
        node: dict[str, Any] = self
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
        self.labels[dotted] = label
