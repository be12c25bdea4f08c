"""Shared pytest setup for the rules tests: makes ``tests/helpers.py`` importable and
registers a hypothesis profile with no deadline (numba compiles on first use). Under CI the
examples are derandomized (the same every run): a rare Mountain position makes the mask search
explode (a 25-card pile taken onto a one-card hand, see the speed issue), and CI must not
meet it by chance; developers' runs still draw fresh examples."""

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
