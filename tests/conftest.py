"""Shared pytest setup for the rules tests: makes ``tests/helpers.py`` importable and
registers a hypothesis profile with no deadline (numba compiles on first use). Under CI the
examples are derandomized, the same on every run, so that a CI run is reproducible: a
failure shows up again on a rerun of the same commit, and a pass does not depend on the
draw; developers' runs still draw fresh examples, which is where new counterexamples come
from. Stable-Baselines3's default logger makes a fresh ``SB3-<time>`` folder in the system
temp directory at every ``learn()``; the tests send it to one pytest temp folder instead."""

from __future__ import annotations

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile("rules", deadline=None, derandomize=bool(os.environ.get("CI")),
                              suppress_health_check=[HealthCheck.too_slow])
    settings.load_profile("rules")
except ImportError:  # pragma: no cover
    pass


@pytest.fixture(autouse=True, scope="session")
def _sb3_logs_in_a_test_folder(tmp_path_factory):
    """Point SB3's default log folder (``SB3_LOGDIR``) into pytest's temp tree."""
    previous = os.environ.get("SB3_LOGDIR")
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3_logs"))
    yield
    if previous is None:
        os.environ.pop("SB3_LOGDIR", None)
    else:
        os.environ["SB3_LOGDIR"] = previous
