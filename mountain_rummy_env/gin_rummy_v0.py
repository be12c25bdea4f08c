# noqa: D212, D415
"""
# Gin Rummy

| Import             | `from mountain_rummy_env import gin_rummy_v0`                    |
|--------------------|------------------------------------------------------------------|
| Actions            | Discrete                                                         |
| Parallel API       | Yes (`turn_based_aec_to_parallel`)                               |
| Manual Control     | No                                                               |
| Agents             | `agents= ['player_0', 'player_1']`                               |
| Agents             | 2                                                                |
| Action Shape       | Discrete(539)                                                    |
| Action Values      | Discrete(539)                                                    |
| Observation Shape  | (1119,) flat, or (48, 52) with `observation_layout="planes"`     |
| Observation Values | [-1, 1] (binary features 0/1)                                    |

Gin Rummy (docs/gin_rummy.md) on the same core, adapters and observation encoding as
`mountain_rummy_v0`: the first up-card is offered to the non-dealer, then the dealer
(`take 7H` / `pass`); a turn is `draw stock` or `take <top>`, then `discard c` or
`knock c`; after a knock the knocker lays down melds (`meld ...`, then `pass`) and the
defender lays off (`layoff 9H`, `pass`, not after gin) and melds (`meld ...`, `pass`).
Actions, phases and the OpenSpiel mapping: `docs/gin_rummy.md`.

`env(render_mode=None, reward="margin", observation_layout="flat", **config)` with
`config` for `gin_variant` (`knock_card`, `gin_bonus`, `undercut_bonus`, `tie_is_undercut`,
`openspiel_compatible`, `max_turns`, `episode`, `target_score`). `reward="margin"` is the
zero-sum hand result (OpenSpiel's returns with `openspiel_compatible=True`). Reward modes,
`illegal_action` and its penalty as in `mountain_rummy_v0` (`docs/rewards.md`; Gin's margin
penalty is -125 with the default bonuses). `reset(seed, options={...})` takes the same
position (`deck`, `dealer`, `scores`, `hand_no`, `next_decks`) as in `mountain_rummy_v0`.

Also `SingleAgentEnv` (Gymnasium id `GinRummy-v0`) and `vector_env(num_envs, ...)`.

### Version History

* v0: Initial release (mountain-rummy-env 0.1.0).
"""

from __future__ import annotations

import gymnasium

from .envs.aec import env_functions
from .envs.aec import raw_env as _mountain_raw_env
from .envs.single_agent import SingleAgentEnv as _MountainSingleAgentEnv
from .envs.vector import vector_env_factory
from .variants.gin import gin_variant


class raw_env(_mountain_raw_env):
    """The Gin Rummy AEC env (:class:`mountain_rummy_env.envs.aec.raw_env` with the Gin variant)."""

    metadata = dict(_mountain_raw_env.metadata, name="gin_rummy_v0")
    variant_factory = staticmethod(gin_variant)


class SingleAgentEnv(_MountainSingleAgentEnv):
    """Gymnasium single-agent Gin Rummy (see :mod:`mountain_rummy_env.envs.single_agent`)."""

    variant_factory = staticmethod(gin_variant)


env, parallel_env = env_functions(raw_env)
vector_env = vector_env_factory(gin_variant)

ENV_ID = "GinRummy-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="mountain_rummy_env.gin_rummy_v0:SingleAgentEnv")

__all__ = ["ENV_ID", "SingleAgentEnv", "env", "parallel_env", "raw_env", "vector_env"]
