"""Environment adapters over the batched core: observation encoders, the PettingZoo AEC /
parallel env and the Gymnasium single-agent env (Mountain Rummy's here; every registered
variant's in its root module, :mod:`.game_module`). Importing this registers every variant's
Gymnasium ids (``MountainRummy-v0``, ``GinRummy-v0``, ...)."""

from __future__ import annotations

from ..registry import VARIANTS
from .aec import env, parallel_env, raw_env
from .game_module import register_gymnasium_ids
from .observation import (
    clairvoyant_size, encode_clairvoyant, encode_observations, encode_state, observation_layout,
    observation_size, planes_shape, state_size, to_planes,
)
from .single_agent import SingleAgentEnv

ENV_ID = VARIANTS["mountain"].gym_ids[0]   # the id of Mountain Rummy, whose env classes are here
register_gymnasium_ids()

__all__ = [
    "ENV_ID", "SingleAgentEnv", "clairvoyant_size", "encode_clairvoyant", "encode_observations",
    "encode_state", "env", "observation_layout", "observation_size", "parallel_env",
    "planes_shape", "raw_env", "state_size", "to_planes",
]
