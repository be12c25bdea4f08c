"""Each registered variant's env API, built from its registry entry.

A root module such as ``mountain_rummy_env.gin_rummy_v0`` (PettingZoo's import path) is a
docstring and :func:`game_module` for its variant: the AEC env class, the Gymnasium
single-agent class (both playing that variant), ``env``, ``parallel_env`` and ``vector_env``.
:func:`register_gymnasium_ids` registers every entry's Gymnasium ids, pointing at those
modules, so no variant repeats this wiring.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import gymnasium

from ..registry import VARIANTS, variant_info
from . import aec, single_agent
from .vector import vector_env_factory


class GameModule(NamedTuple):
    """What a root ``*_v0`` module exports."""

    raw_env: type
    SingleAgentEnv: type
    env: Callable
    parallel_env: Callable
    vector_env: Callable
    ENV_ID: str


def _module_path(info) -> str:
    return f"{__package__.rpartition('.')[0]}.{info.env_module}"


def game_module(name: str) -> GameModule:
    """The env API of registered variant ``name``; its classes live (for pickling and
    reprs) in the variant's root module, whose name is also PettingZoo's env name."""
    info = variant_info(name)
    where = {"__module__": _module_path(info), "variant_factory": staticmethod(info.make)}
    raw_env = type("raw_env", (aec.raw_env,), {
        **where, "metadata": dict(aec.raw_env.metadata, name=info.env_module),
        "__doc__": f"The {info.title} AEC env (:class:`mountain_rummy_env.envs.aec.raw_env` "
                   "playing this variant)."})
    single = type("SingleAgentEnv", (single_agent.SingleAgentEnv,), {
        **where, "__doc__": f"Gymnasium single-agent {info.title} (see "
                            ":mod:`mountain_rummy_env.envs.single_agent`)."})
    env, parallel_env = aec.env_functions(raw_env)
    return GameModule(raw_env, single, env, parallel_env,
                      vector_env_factory(info.make, info.title), info.gym_ids[0])


def register_gymnasium_ids() -> None:
    """Register every variant's Gymnasium ids (once) to its root module's ``SingleAgentEnv``."""
    for info in VARIANTS.values():
        for env_id in info.gym_ids:
            if env_id not in gymnasium.registry:
                gymnasium.register(id=env_id, entry_point=f"{_module_path(info)}:SingleAgentEnv")
