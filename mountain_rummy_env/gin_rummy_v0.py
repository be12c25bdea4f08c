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

`env(render_mode=None, reward="margin", observation_layout="flat", obs_dtype="float32",
**config)` with
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

from .envs.game_module import game_module

raw_env, SingleAgentEnv, env, parallel_env, vector_env, ENV_ID = game_module("gin")
__all__ = ["ENV_ID", "SingleAgentEnv", "env", "parallel_env", "raw_env", "vector_env"]
