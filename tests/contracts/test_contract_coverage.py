"""Which installed arms the contract modules here cannot run, and why.

An arm with a required option (octomem-postgres's ``postgres`` storage needs a server's
URI) cannot be built with defaults, so ``tests/contracts`` leaves it out
(``runnable=True``); its own distribution runs the same suites with the options it needs.
This reports them in one place instead of one skip per test.
"""

from __future__ import annotations

import pytest

from octomem.engine.arms import ARM_KINDS
from octomem.engine.manager import load_registry
from octomem.engine.testing import registered_names, required_options


def test_every_installed_arm_is_run_here_or_needs_options() -> None:
    registry = load_registry()
    left_out = {
        f"{kind} {name!r} ({', '.join(required_options(kind, name, registry))}; "
        f"{p.distribution})"
        for kind in ARM_KINDS for p in registry.provided(kind)
        if (name := p.spec.name) not in registered_names(kind, registry, runnable=True)
    }
    assert all(p.distribution != "octomem" for kind in ARM_KINDS
               for p in registry.provided(kind)
               if p.spec.name not in registered_names(kind, registry, runnable=True)), left_out
    if left_out:
        pytest.skip("run by their own distributions' suites, they need options: "
                    + ", ".join(sorted(left_out)))
