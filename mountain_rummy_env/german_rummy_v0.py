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
| Observation Shape  | (6417,) flat, or (104, 108) with `observation_layout="planes"`    |
| Observation Values | [-1, 1] (binary features 0/1)                                     |
| State Shape        | (7281,)                                                           |

German Rummy (docs/german_rummy.md) for 2-6 players with two decks and four jokers, on the
same core, adapters and observation encoding as `mountain_rummy_v0`: a turn is `draw stock`
or `take <top>`, then melds (`meld 5H 6H XX=7H`), layoffs (`layoff 9H m3`) and joker
exchanges (`swap 7H m3`) once the seat has opened with 40 points from its own hand, then
`discard 3C`; a seat that empties its hand goes out. Observations list the seats relative
to the observer (me, next, ...) padded to six (docs/observation.md), so one policy can sit at
any table size.

`env(render_mode=None, reward="margin", observation_layout="flat", obs_dtype="float32",
**config)` with
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

from .envs.game_module import game_module

raw_env, SingleAgentEnv, env, parallel_env, vector_env, ENV_ID = game_module("german")
__all__ = ["ENV_ID", "SingleAgentEnv", "env", "parallel_env", "raw_env", "vector_env"]
