"""Shared pytest setup for the rules tests: makes ``tests/helpers.py`` importable and
registers a hypothesis profile with no deadline (numba compiles on first use)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("rules", deadline=None,
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("rules")
except ImportError:  # pragma: no cover
    pass
