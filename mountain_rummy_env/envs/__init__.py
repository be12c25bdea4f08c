"""Environment adapters over the batched core: observation encoders, the PettingZoo AEC /
parallel env (:mod:`mountain_rummy_env.mountain_rummy_v0`) and the Gymnasium single-agent env
(registered as ``MountainRummy-v0``)."""

from __future__ import annotations

import gymnasium

from .aec import env, parallel_env, raw_env
from .observation import (
    clairvoyant_size, encode_clairvoyant, encode_observations, encode_state, observation_layout,
    observation_size, planes_shape, state_size, to_planes,
)
from .single_agent import SingleAgentEnv

ENV_ID = "MountainRummy-v0"

if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="mountain_rummy_env.envs.single_agent:SingleAgentEnv")

__all__ = [
    "ENV_ID", "SingleAgentEnv", "clairvoyant_size", "encode_clairvoyant", "encode_observations",
    "encode_state", "env", "observation_layout", "observation_size", "parallel_env",
    "planes_shape", "raw_env", "state_size", "to_planes",
]
