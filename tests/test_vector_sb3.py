"""The SB3 ``VecEnv`` adapter: a tiny MaskablePPO run on the batched env."""

from __future__ import annotations

import numpy as np
import pytest

from mountain_rummy_env import mountain_variant
from mountain_rummy_env.envs.vector import RummyVectorEnv

sb3_contrib = pytest.importorskip("sb3_contrib")


@pytest.mark.parametrize("obs_dtype", ["float32", "int8"])
def test_sb3_vecenv_api(obs_dtype):
    from mountain_rummy_env.envs.sb3_vec import SB3VecEnv
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    venv = SB3VecEnv(RummyVectorEnv(mountain_variant(), 4, seed=0, obs_dtype=obs_dtype))
    obs = venv.reset()
    assert obs.shape == (4, venv.observation_space.shape[0])
    assert all(o in venv.observation_space for o in obs)
    assert is_masking_supported(venv)
    masks = get_action_masks(venv)
    assert masks.shape == (4, venv.action_space.n) and masks.dtype == bool
    rng = np.random.default_rng(0)
    done_seen = False
    for _ in range(600):
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in venv.action_masks()])
        obs, rew, dones, infos = venv.step(acts)
        for i in np.flatnonzero(dones):
            done_seen = True
            assert infos[i]["terminal_observation"].shape == obs[i].shape
            assert infos[i]["terminal_observation"].dtype == obs.dtype == obs_dtype
            assert infos[i]["episode"]["r"] == rew[i]
    assert done_seen


@pytest.mark.parametrize("obs_dtype", ["float32", "int8"])
def test_maskable_ppo_learns_a_few_steps(obs_dtype):
    from sb3_contrib import MaskablePPO

    from mountain_rummy_env.envs.sb3_vec import SB3VecEnv

    venv = SB3VecEnv(RummyVectorEnv(mountain_variant(), 8, seed=1, obs_dtype=obs_dtype))
    assert venv.observation_space.dtype == np.dtype(obs_dtype) and venv.reset().dtype == obs_dtype
    model = MaskablePPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [32]}, device="cpu")
    model.learn(total_timesteps=512)
    assert model.num_timesteps >= 512
    obs = venv.reset()
    act, _ = model.predict(obs, action_masks=venv.action_masks(), deterministic=True)
    assert venv.action_masks()[np.arange(8), act].all()
