"""Trial 19 K9: two plugin distributions whose entry points share a name.

Two authors picking the same natural name (``[project.entry-points.octomem] toy = ...``)
lost one plugin without a word: pluggy's loader skips an entry point whose name is
registered already, so ``octomem plugins`` listed ``toy-b`` only, and
``pipeline.embedder=toy-a`` failed with "no embedder arm named 'toy-a'" although it was
installed. docs/plugins.md promises no silent override. Now both load; arms that clash by
name are the documented error naming both distributions.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from cli_run import octomem

from octomem.engine.errors import DuplicateArmError
from octomem.engine.manager import load_registry

TOY = """
from octomem.engine.arms import ArmSpec
from octomem.engine.hookspecs import hookimpl
from pydantic import BaseModel


class Options(BaseModel, extra="forbid"):
    pass


class Toy:
    def __init__(self, options, context):
        self.dim, self.model_id, self.max_tokens = 4, "{arm}-v1", 10


@hookimpl
def octomem_register_embedders():
    return [ArmSpec("embedder", "{arm}", Toy, Options, description="{arm} by its author")]
"""


def test_two_distributions_with_one_entry_point_name_both_load(
        install_test_plugin: Callable[..., Path], project: Path) -> None:
    install_test_plugin("octomem_toy_a", TOY.replace("{arm}", "toy-a"), entry_point="toy")
    install_test_plugin("octomem_toy_b", TOY.replace("{arm}", "toy-b"), entry_point="toy")
    registry = load_registry()
    by_name = {p.spec.name: p for p in registry.provided("embedder")}
    assert {by_name["toy-a"].distribution, by_name["toy-b"].distribution} == {
        "octomem-toy-a", "octomem-toy-b"}
    assert {by_name["toy-a"].plugin, by_name["toy-b"].plugin} in (
        {"toy", "toy:octomem-toy-b"}, {"toy", "toy:octomem-toy-a"})
    listed = octomem(project, "plugins", "--json", spawn=True).json()["arms"]
    toys = [(a["name"], a["distribution"]) for a in listed if a["name"].startswith("toy")]
    assert toys == [("toy-a", "octomem-toy-a"), ("toy-b", "octomem-toy-b")]


def test_their_arms_of_one_name_are_the_clash_error_naming_both(
        install_test_plugin: Callable[..., Path]) -> None:
    install_test_plugin("octomem_toy_a", TOY.replace("{arm}", "toy"), entry_point="toy")
    install_test_plugin("octomem_toy_b", TOY.replace("{arm}", "toy"), entry_point="toy")
    with pytest.raises(DuplicateArmError) as raised:
        load_registry()
    said = str(raised.value)
    assert said.startswith("embedder arm 'toy' is registered twice: by 'toy")
    assert "(octomem-toy-a)" in said and "(octomem-toy-b)" in said
    assert said.endswith("; uninstall one of them")
