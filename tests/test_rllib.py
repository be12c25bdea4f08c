"""The Ray RLlib example (``experiments/rllib_selfplay.py``): masking, a tiny run, resume, errors.

A tiny run trains on local Ray with 2 CPUs, sampling in the driver (0 env runners), a few
hundred env steps per iteration; the env is strict (``illegal_action="raise"``), so a move
the mask does not allow would stop the run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

if os.environ.get("CI"):
    import ray.rllib  # noqa: F401  -- CI installs the [ray] extra: never skip there
else:
    pytest.importorskip("ray.rllib", reason='Ray RLlib is not installed; pip install -e ".[ray]"')

import ray  # noqa: E402

from experiments import rllib_selfplay as R  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TINY = ["--num-cpus", "2", "--train-batch-size", "256", "--minibatch-size", "128",
        "--num-epochs", "1", "--hidden", "64", "--checkpoint-every", "1", "--eval-deals", "1"]


@pytest.fixture(scope="module")
def local_ray():
    started = not ray.is_initialized()
    if started:
        ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="ERROR")
    yield
    if started:
        ray.shutdown()


def script(*argv, timeout=120):
    return subprocess.run([sys.executable, "-m", "experiments.rllib_selfplay", *argv], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


def test_module_samples_only_legal_actions():
    """RLlib's masking module, fed through our key-renaming wrapper, samples legal moves only
    (an unmasked policy over ~1,800 actions with a handful legal would not)."""
    env = R.RummyMultiAgentEnv({"variant": "mountain"})
    args = R.parse_args(["--hidden", "32"])
    spec = R.module_spec(args)
    spec.observation_space = env.observation_spaces["player_0"]
    spec.action_space = env.action_spaces["player_0"]
    module = spec.build()
    rng = np.random.default_rng(0)
    positions = sampled = 0
    for deal in range(3):
        obs, _ = env.reset(seed=deal)
        while True:
            (agent, o), = obs.items()
            mask = o["action_mask"]
            assert set(o) == {"observations", "action_mask"} and mask.dtype == np.float32
            for _ in range(5):
                a = R.module_action(module, o, explore=True)
                assert mask[a] == 1, f"sampled illegal action {a}"
                sampled += 1
            assert mask[R.module_action(module, o)] == 1
            positions += 1
            # move on by a random legal action (the module's own would be fine too)
            obs, _, term, trunc, _ = env.step({agent: int(rng.choice(np.flatnonzero(mask)))})
            if term["__all__"] or trunc["__all__"]:
                break
    assert positions > 100 and sampled == 5 * positions


def test_env_pays_both_seats_zero_sum():
    env = R.RummyMultiAgentEnv({"variant": "mountain", "reward_scale": 0.01})
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    totals = {}
    while True:
        (agent, o), = obs.items()
        obs, rew, term, _, _ = env.step({agent: int(rng.choice(np.flatnonzero(o["action_mask"])))})
        for a, r in rew.items():
            totals[a] = totals.get(a, 0.0) + r
        if term["__all__"]:
            break
    assert set(obs) == {"player_0", "player_1"}
    assert totals["player_0"] == pytest.approx(-totals["player_1"]) and totals["player_0"] != 0


def test_tiny_run_checkpoints_and_resumes(local_ray, tmp_path, capsys):
    out = tmp_path / "run"
    report = R.main([*TINY, "--iterations", "2", "--out", str(out)])
    assert report["iteration"] == 2
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2]
    assert all(r["iter_env_steps"] >= 256 and r["env_steps_per_s"] > 0 for r in rows)
    assert sorted(p.name for p in (out / "checkpoints").iterdir()) == ["iter_00001", "iter_00002"]
    ev = report["eval"]
    assert ev["moves"] > 0 and ev["legal_moves"] == ev["moves"] and ev["hands"] == 2

    report = R.main([*TINY, "--iterations", "3", "--out", str(out), "--resume", "--eval-deals", "0"])
    printed = capsys.readouterr().out
    assert "resumed from" in printed and "(iteration 2)" in printed
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    assert rows[2]["env_steps"] > rows[1]["env_steps"]
    assert (out / "checkpoints" / "iter_00003").is_dir()


def test_refuses_an_existing_run_or_a_missing_checkpoint(tmp_path):
    (tmp_path / "metrics.jsonl").write_text("")
    with pytest.raises(SystemExit, match="already holds a run"):
        R.main(["--out", str(tmp_path)])
    with pytest.raises(SystemExit, match="no checkpoint"):
        R.main(["--out", str(tmp_path / "empty"), "--resume"])
    with pytest.raises(SystemExit, match="--eval-opponent: unknown agent 'nobody'"):
        R.main(["--out", str(tmp_path / "new"), "--eval-opponent", "nobody"])
    assert not (tmp_path / "new").exists()


def test_corrupt_checkpoint_is_a_clear_error(local_ray, tmp_path):
    bad = tmp_path / "checkpoints" / "iter_00001"
    bad.mkdir(parents=True)
    (bad / "algorithm_state.pkl").write_bytes(b"not a pickle")
    with pytest.raises(SystemExit, match="cannot resume from"):
        R.main([*TINY, "--out", str(tmp_path), "--resume"])


def test_help_exits_0():
    r = script("--help")
    assert r.returncode == 0 and "--address" in r.stdout and "--resume" in r.stdout


def test_unreachable_address_is_one_line(tmp_path):
    r = script("--address", "127.0.0.1:1", "--out", str(tmp_path / "run"))
    assert r.returncode != 0
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("rllib_selfplay: no Ray cluster answers at 127.0.0.1:1")
    assert "Traceback" not in r.stderr


def test_training_stops_on_an_illegal_move(local_ray, tmp_path, monkeypatch):
    """The env trains strict (``illegal_action="raise"``): with the masking switched off the
    first illegal sample stops the run instead of being quietly penalised."""
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    monkeypatch.setattr(ActionMaskingTorchRLModule, "_mask_action_logits", lambda self, batch, mask: batch)
    with pytest.raises(Exception) as err:
        R.main([*TINY, "--iterations", "1", "--out", str(tmp_path), "--eval-deals", "0"])
    chain, e = [], err.value
    while e is not None:
        chain.append(type(e).__name__)
        e = e.__cause__ or e.__context__
    assert "IllegalActionError" in chain


def test_the_package_never_imports_ray():
    code = ("import sys, mountain_rummy_env, agents, experiments.cli, experiments.train_ppo; "
            "from mountain_rummy_env import mountain_rummy_v0, gin_rummy_v0; "
            "print(sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "[]"
