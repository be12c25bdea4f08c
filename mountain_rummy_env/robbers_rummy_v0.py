# noqa: D212, D415
"""
# Robber's Rummy

| Import             | `from mountain_rummy_env import robbers_rummy_v0`                 |
|--------------------|-------------------------------------------------------------------|
| Actions            | Discrete                                                          |
| Parallel API       | Yes (`turn_based_aec_to_parallel`)                                |
| Manual Control     | No                                                                |
| Agents             | `agents= ['player_0', ..., 'player_{n-1}']` (`num_players`, 2-6)  |
| Agents             | 4 by default                                                      |
| Action Shape       | Discrete(N): `len(env.variant.layout)` families, see below        |
| Observation Shape  | flat, or planes with `observation_layout="planes"`                |
| Observation Values | [-1, 1] (binary features 0/1)                                     |

Robber's Rummy (docs/robbers_rummy.md) for 2-6 players with two decks and jokers and no
discard pile, on the same core, adapters and observation encoding as `mountain_rummy_v0`.
A turn is plays and at most one `draw stock`: a play is edits of the table -- `meld 5H 6H
7H` from the hand, `layoff 9H m3` (or `layoff XX m3`, a joker), `lift 9H m3` then `put m4`
-- closed by `commit` (every meld valid, a hand card placed, an opening worth 40) or
`reset`; a seat that did not play draws and its turn ends, one that played may draw and
play again, then `end turn`; `pass` when the stock is empty. The first seat to empty its
hand wins; the others lose their hand values.

`env(render_mode=None, reward="margin", observation_layout="flat", obs_dtype="float32",
**config)` with
`config` for `robbers_variant` (`num_players`, `num_jokers`, `around_the_corner`,
`max_edits`, `max_turns`, `episode`); rewards as for `german_rummy_v0` (docs/rewards.md).

Also `SingleAgentEnv` (Gymnasium id `RobbersRummy-v0`) and `vector_env(num_envs, ...)`.

### Version History

* v0: Initial release (mountain-rummy-env 0.1.0).
"""

from .envs.game_module import game_module

raw_env, SingleAgentEnv, env, parallel_env, vector_env, ENV_ID = game_module("robbers")
__all__ = ["ENV_ID", "SingleAgentEnv", "env", "parallel_env", "raw_env", "vector_env"]
