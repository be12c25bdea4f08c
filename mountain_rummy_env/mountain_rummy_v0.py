"""PettingZoo AEC / parallel Mountain Rummy, version 0 (see :mod:`mountain_rummy_env.envs.aec`).

``env(**config)`` (plays like the classic envs), ``raw_env``, ``parallel_env(**config)``,
``vector_env(num_envs, ...)`` and the Gymnasium single-agent ``SingleAgentEnv`` (id
``MountainRummy-v0``), built from the variant registry (:mod:`mountain_rummy_env.envs.game_module`).
"""

from .envs.aec import __doc__ as _aec_doc
from .envs.game_module import game_module

__doc__ = _aec_doc
raw_env, SingleAgentEnv, env, parallel_env, vector_env, ENV_ID = game_module("mountain")
__all__ = ["ENV_ID", "SingleAgentEnv", "env", "parallel_env", "raw_env", "vector_env"]
