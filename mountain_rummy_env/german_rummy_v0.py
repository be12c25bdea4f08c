# noqa: D212, D415
"""
# German Rummy (Rommé)

| Import             | `from mountain_rummy_env import german_rummy_v0`                  |
|--------------------|-------------------------------------------------------------------|
| Actions            | Discrete                                                          |
| Parallel API       | Yes (`turn_based_aec_to_parallel`)                                |
| Manual Control     | No                                                                |
| Agents             | `agents= ['player_0', ..., 'player_{n-1}']` (`num_players`, 2-6)  |
| Agents             | 4 by default                                                      |
| Action Shape       | Discrete(4279)                                                    |
| Action Values      | Discrete(4279)                                                    |
| Observation Shape  | (6415,) flat, or (102, 108) with `observation_layout="planes"`    |
| Observation Values | [-1, 1] (binary features 0/1)                                     |
| State Shape        | (7279,)                                                           |

German Rummy (docs/german_rummy.md) for 2-6 players with two decks and four jokers, on the
same core, adapters and observation encoding as `mountain_rummy_v0`: a turn is `draw stock`
or `take <top>`, then melds (`meld 5H 6H XX=7H`), layoffs (`layoff 9H m3`) and joker
exchanges (`swap 7H m3`) once the seat has opened with 40 points from its own hand, then
`discard 3C`; a seat that empties its hand goes out. Observations list the seats relative
to the observer (me, next, ...) padded to six (docs/observation.md), so one policy can sit at
any table size.

`env(render_mode=None, reward="margin", observation_layout="flat", **config)` with
`config` for `german_variant` (`num_players`, `max_turns`, `episode`). Rewards per seat:
`margin` is own hand points minus the mean of the other seats' (zero-sum), `points` the
hand points (general-sum), `win` +1 for the seat that went out and -1/(n-1) for the others
(docs/rewards.md). `reset(seed, options={...})` takes the same position (`deck`, `dealer`,
`scores`, `hand_no`, `next_decks`) as `mountain_rummy_v0`.

Also `SingleAgentEnv` (Gymnasium id `GermanRummy-v0`; the other seats play given policies)
and `vector_env(num_envs, ...)`.

### Version History

* v0: Initial release (mountain-rummy-env 0.1.0).
"""

from __future__ import annotations

import gymnasium

from .envs.aec import env_functions
from .envs.aec import raw_env as _mountain_raw_env
from .envs.single_agent import SingleAgentEnv as _MountainSingleAgentEnv
from .envs.vector import vector_env_factory
from .variants.german import german_variant


class raw_env(_mountain_raw_env):
    """The German Rummy AEC env (:class:`mountain_rummy_env.envs.aec.raw_env` with the German variant)."""

    metadata = dict(_mountain_raw_env.metadata, name="german_rummy_v0")
    variant_factory = staticmethod(german_variant)


class SingleAgentEnv(_MountainSingleAgentEnv):
    """Gymnasium single-agent German Rummy (see :mod:`mountain_rummy_env.envs.single_agent`)."""

    variant_factory = staticmethod(german_variant)


env, parallel_env = env_functions(raw_env)
vector_env = vector_env_factory(german_variant)

ENV_ID = "GermanRummy-v0"
if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="mountain_rummy_env.german_rummy_v0:SingleAgentEnv")

__all__ = ["ENV_ID", "SingleAgentEnv", "env", "parallel_env", "raw_env", "vector_env"]
