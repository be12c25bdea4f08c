"""``SB3VecEnv``: the batched :class:`~mountain_rummy_env.envs.vector.RummyVectorEnv` as a
Stable-Baselines3 ``VecEnv``, with ``action_masks()`` for sb3-contrib's ``MaskablePPO``.

No per-env Python objects: ``step_wait`` forwards one batched step. SB3's conventions are
mapped from Gymnasium's same-step autoreset: ``dones = terminated | truncated``; an ended
episode's last observation is ``infos[i]["terminal_observation"]`` and its hand summary
``infos[i]["summary"]`` (plus ``"episode": {"r", "l"}`` for SB3's episode logging). Illegal
actions follow the wrapped env's ``illegal_action`` (``docs/rewards.md``); an episode it ended
has ``infos[i]["illegal_action"]`` true and no summary.

    from sb3_contrib import MaskablePPO
    venv = SB3VecEnv(mountain_rummy_v0.vector_env(num_envs=64, seed=0))
    MaskablePPO("MlpPolicy", venv).learn(100_000)
"""

from __future__ import annotations

import numpy as np
from stable_baselines3.common.vec_env import VecEnv


class SB3VecEnv(VecEnv):
    def __init__(self, venv):
        self.venv = venv
        self.render_mode = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions = None
        self._lengths = np.zeros(venv.num_envs, np.int64)
        self._seed = None

    # ---- VecEnv API ------------------------------------------------------------------

    def reset(self):
        seed = self._seeds[0] if self._seeds[0] is not None else self._seed
        obs, _ = self.venv.reset(seed=seed)
        self._seeds = [None] * self.num_envs
        self._seed = None
        self._lengths[:] = 0
        return obs

    def seed(self, seed=None):
        self._seed = seed
        return [None if seed is None else seed + i for i in range(self.num_envs)]

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        obs, rewards, term, trunc, info = self.venv.step(self._actions)
        self._lengths += 1
        dones = term | trunc
        infos = [{} for _ in range(self.num_envs)]
        if dones.any():
            final = info["final_info"]
            for i in np.flatnonzero(dones):
                infos[i] = {
                    "terminal_observation": info["final_obs"][i],
                    "TimeLimit.truncated": bool(trunc[i] and not term[i]),
                    "summary": final["summary"][i],
                    "illegal_action": bool(final["illegal_action"][i]),
                    "seed": int(final["seed"][i]),
                    "episode": {"r": float(final["episode_return"][i]), "l": int(self._lengths[i])},
                }
                self._lengths[i] = 0
        return obs, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        return self.venv.action_masks()

    def close(self):
        self.venv.close()

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices

    def get_attr(self, attr_name, indices=None):
        value = getattr(self, attr_name) if attr_name == "action_masks" else getattr(self.venv, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name, value, indices=None):
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name, *args, indices=None, **kwargs):
        if method_name == "action_masks":
            masks = self.action_masks()
            return masks if indices is None else masks[list(self._indices(indices))]
        result = getattr(self.venv, method_name)(*args, **kwargs)
        return [result for _ in self._indices(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]
