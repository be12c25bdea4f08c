# noqa: D212, D415
"""
# Crazy Rummy

| Import             | `from mountain_rummy_env import crazy_rummy_v0`                   |
|--------------------|-------------------------------------------------------------------|
| Actions            | Discrete                                                          |
| Parallel API       | Yes (`turn_based_aec_to_parallel`)                                |
| Manual Control     | No                                                                |
| Agents             | `agents= ['player_0', ..., 'player_{n-1}']` (`num_players`, 3-6)  |
| Agents             | 4 by default                                                      |
| Action Shape       | Discrete(2203)                                                    |
| Action Values      | Discrete(2203)                                                    |
| Observation Shape  | (2125,) flat, or (85, 52) with `observation_layout="planes"`      |
| Observation Values | [-1, 1] (binary features 0/1)                                     |
| State Shape        | (2541,)                                                           |

Crazy Rummy (docs/crazy_rummy.md) for 3-6 players with one deck and a wild rank that
changes every round (A in round 1 ... K in round 13), on the same core, adapters and
observation encoding as `german_rummy_v0`: a turn is `draw stock` or `take <top>`, then
melds (`meld 5H 6H 7H`, wilds filling the faces not held), layoffs (`layoff 9H m3`) and
swaps (`swap 7H m3`) once the seat has melded, then `discard 3C`; going out takes a final
discard. Observations list the seats relative to the observer (me, next, ...) padded to six
(docs/observation.md), and say the round and its wild rank.

`env(render_mode=None, reward="margin", observation_layout="flat", obs_dtype="float32",
**config)` with
`config` for `crazy_variant` (`num_players`, `episode` "round" or "game", `round` 1-13,
`max_turns`). Hand points are minus the cards left in hand (0 for the seat that went out).
Rewards per seat: `margin` is own points minus the mean of the other seats' (zero-sum),
`points` the points (general-sum), `win` +1 for the seat that went out and -1/(n-1) for the
others (docs/rewards.md). `reset(seed, options={...})` takes the same position (`deck`,
`dealer`, `scores`, `hand_no`, `next_decks`) as `mountain_rummy_v0`.

Also `SingleAgentEnv` (Gymnasium id `CrazyRummy-v0`; the other seats play given policies)
and `vector_env(num_envs, ...)`.

### Version History

* v0: Initial release (mountain-rummy-env 0.1.0).
"""

from .envs.game_module import game_module

raw_env, SingleAgentEnv, env, parallel_env, vector_env, ENV_ID = game_module("crazy")
__all__ = ["ENV_ID", "SingleAgentEnv", "env", "parallel_env", "raw_env", "vector_env"]
