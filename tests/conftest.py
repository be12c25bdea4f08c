"""Shared pytest setup for the rules tests: makes ``tests/helpers.py`` importable and
registers a hypothesis profile with no deadline (numba compiles on first use). Under CI the
examples are derandomized, the same on every run, so that a CI run is reproducible: a
failure shows up again on a rerun of the same commit, and a pass does not depend on the
draw; developers' runs still draw fresh examples, which is where new counterexamples come
from."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("rules", deadline=None, derandomize=bool(os.environ.get("CI")),
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("rules")
except ImportError:  # pragma: no cover
    pass
