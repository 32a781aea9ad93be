"""numba's cache of ranx's compiled code: beside ranx when that folder can be written (the
usual virtualenv), so ``octomem.benchmarks`` leaves ``NUMBA_CACHE_DIR`` alone there; a
value the user set is kept. (The other branch, a read-only ranx folder, moves the cache
under octomem's bench cache; the tests run as root, for whom every folder is writable.)"""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = ("import os, octomem.benchmarks as b; "
         "print(b._ranx_folder_writable(), os.environ.get('NUMBA_CACHE_DIR'))")


def _probe(**env: str) -> str:
    base = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                          timeout=120, check=True, env={**base, **env})
    return done.stdout.strip()


def test_a_writable_ranx_keeps_its_own_cache_and_a_set_value_is_kept() -> None:
    assert _probe() == "True None"
    assert _probe(NUMBA_CACHE_DIR="/tmp/mine") == "True /tmp/mine"
