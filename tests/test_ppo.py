"""The PPO trainer (``experiments/train_ppo.py``) and the learned agent (``agents/ppo.py``)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sb3_contrib")

from agents import AgentSpecError, make_agent  # noqa: E402
from agents.ppo import CheckpointError, load_policy, save_policy  # noqa: E402
from agents.ppo_nets import build_actor  # noqa: E402

TINY = ["--total-steps", "1024", "--num-envs", "8", "--n-steps", "64", "--batch-size", "256",
        "--n-epochs", "1", "--net-arch", "32", "--snapshot-every", "512", "--eval-every", "512",
        "--eval-deals", "2", "--checkpoint-every", "512", "--no-progress"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from experiments.train_ppo import main

    run = tmp_path_factory.mktemp("ppo") / "run"
    summary = main(TINY + ["--run-dir", str(run), "--opponents", "random:1,greedy:1,self:1"])
    return run, summary


def test_tiny_training_run_writes_everything(trained):
    run, summary = trained
    assert summary["env_steps"] >= 1024 and summary["steps_per_s"] > 0
    for name in ("policy.pt", "policy.json", "best.pt", "checkpoint.zip", "state.json",
                 "eval.csv", "learning_curve.png", "args.json"):
        assert (run / name).is_file(), name
    assert list((run / "tb").rglob("events.out.tfevents*"))
    assert list((run / "league").glob("snap_*.pt"))
    rows = list(csv.DictReader((run / "eval.csv").open()))
    assert {r["opponent"] for r in rows} == {"random", "greedy"}
    assert all(0.0 <= float(r["win_rate"]) <= 1.0 for r in rows)
    meta = json.loads((run / "policy.json").read_text())
    assert meta["variant"] == "mountain" and meta["net_arch"] == [32]


def test_resume_continues_the_run(trained, tmp_path):
    import shutil

    from experiments.train_ppo import main

    run = tmp_path / "run"
    shutil.copytree(trained[0], run)
    with pytest.raises(SystemExit, match="--resume"):
        main(TINY + ["--run-dir", str(run)])
    summary = main([a if a != "1024" else "1536" for a in TINY] + ["--run-dir", str(run), "--resume"])
    assert summary["env_steps"] >= 1536
    assert json.loads((run / "state.json").read_text())["num_timesteps"] >= 1536


def test_reloaded_policy_plays_a_tournament_deal(trained):
    from experiments.tournament import play_deal

    run, _ = trained
    cfg = {"variant": "mountain", "variant_options": {}, "seed": 0}
    for spec in (f"ppo:path={run / 'policy.pt'}", f"ppo:path={run / 'best.pt'},sample=1"):
        row = play_deal(cfg, spec, "greedy", 3)
        assert row["outcome"] in (0.0, 0.5, 1.0)
        assert all(h["steps"] > 0 for h in row["hands"])


def test_agent_picks_legal_actions_and_matches_the_env_encoding(trained):
    from mountain_rummy_env import Game, mountain_variant
    from mountain_rummy_env.game import player_view

    run, _ = trained
    agent = make_agent(f"ppo:path={run / 'policy.pt'}", seed=0)
    sampler = make_agent(f"ppo:path={run / 'policy.pt'},sample=1", seed=0)
    game = Game(mountain_variant(), 1)
    game.reset(seed=5)
    for _ in range(40):
        if game.done(0):
            break
        view = player_view(game, 0, game.current_player(0))
        mask = game.masks[0]
        a, b = agent.act(view, mask), sampler.act(view, mask)
        assert mask[a] and mask[b]
        p = agent.action_probabilities(view, mask)
        assert np.isclose(p.sum(), 1.0) and p[mask == 0].sum() == 0 and p.argmax() == a
        game.step_one(0, a)


def test_missing_corrupt_and_foreign_checkpoints_fail_clearly(tmp_path):
    with pytest.raises(CheckpointError, match="does not exist"):
        load_policy(tmp_path / "nope.pt")
    bad = tmp_path / "bad.pt"
    bad.write_bytes(b"not a checkpoint at all")
    with pytest.raises(CheckpointError, match="corrupt"):
        load_policy(bad)
    with pytest.raises(AgentSpecError, match="corrupt"):
        make_agent(f"ppo:path={bad}")
    import torch

    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(3)}, other)
    with pytest.raises(CheckpointError, match="not a PPO policy"):
        load_policy(other)
    with pytest.raises(AgentSpecError, match="needs one checkpoint"):
        make_agent("ppo")
    with pytest.raises(AgentSpecError, match="needs one checkpoint"):
        make_agent(f"ppo:policy=mountain,path={bad}")
    with pytest.raises(AgentSpecError, match="no shipped policy 'chess'; shipped: german_solver, gin_expert, mountain"):
        make_agent("ppo:policy=chess")


def test_truncated_checkpoint_fails_clearly(trained, tmp_path):
    data = (trained[0] / "policy.pt").read_bytes()
    cut = tmp_path / "cut.pt"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_policy(cut)


def test_wrong_variant_checkpoint_fails_clearly(tmp_path):
    from mountain_rummy_env import Game, mountain_variant
    from mountain_rummy_env.envs.observation import observation_size
    from mountain_rummy_env.game import player_view
    from mountain_rummy_env.variants.gin import gin_variant

    gin = gin_variant()
    n_obs, n_act = observation_size(gin), gin.num_actions
    path = tmp_path / "gin.pt"
    save_policy(path, build_actor(n_obs, n_act, [8]),
                {"variant": "gin", "variant_options": {}, "observation_size": n_obs,
                 "num_actions": n_act, "net_arch": [8], "activation": "tanh"})
    agent = make_agent(f"ppo:path={path}")
    game = Game(mountain_variant(), 1)
    game.reset(seed=0)
    view = player_view(game, 0, game.current_player(0))
    mask = game.masks[0].copy()
    mask[:] = 1   # force the network path
    with pytest.raises(CheckpointError, match="trained for variant 'gin'"):
        agent.act(view, mask)
    with pytest.raises(AgentSpecError, match="plays 'gin', not 'mountain'"):   # before any play
        make_agent(f"ppo:path={path}", variant="mountain")
    # inconsistent weights for the declared shapes
    blob = torch_load(path)
    blob["num_actions"] = n_act + 1
    import torch

    torch.save(blob, path)
    with pytest.raises(CheckpointError, match="inconsistent"):
        load_policy(path)


@pytest.mark.parametrize("key, value", [("guard", "rules-hold"), ("hint", "rules-slots"),
                                        ("hint", "oracle")])
def test_checkpoint_of_a_removed_route_is_refused_with_the_commit_that_plays_it(tmp_path, key, value):
    """Action guards (--guard) and advisers (--hint) left the repository after cb72a70: a
    checkpoint that names one is refused, saying so and naming that commit; "none" or no
    key at all is a plain policy."""
    from mountain_rummy_env import mountain_variant
    from mountain_rummy_env.envs.observation import observation_size

    from agents.ppo import LAST_ROUTES_COMMIT

    v = mountain_variant()
    meta = {"variant": "mountain", "variant_options": {}, "observation_size": observation_size(v),
            "num_actions": v.num_actions, "net_arch": [8], "activation": "tanh"}
    actor = build_actor(meta["observation_size"], meta["num_actions"], [8])
    plain = tmp_path / "plain.pt"
    save_policy(plain, actor, dict(meta, guard="none", hint="none"))
    assert load_policy(plain)[1]["hint"] == "none"
    path = tmp_path / "removed.pt"
    save_policy(path, actor, dict(meta, **{key: value}))
    assert LAST_ROUTES_COMMIT == "cb72a70"
    with pytest.raises(CheckpointError, match=rf"{value!r} \(train_ppo --{key}\), a route removed "
                                              rf"from this repository; commit cb72a70 is the last"):
        load_policy(path)
    with pytest.raises(AgentSpecError, match="route removed"):
        make_agent(f"ppo:path={path}")


def torch_load(path):
    import torch

    return torch.load(path, weights_only=True)


def test_cli_help():
    out = subprocess.run([sys.executable, "-m", "experiments.train_ppo", "--help"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0
    for flag in ("--variant", "--resume", "--opponents", "--eval-deals", "--learning-rate",
                 "--net-arch", "--reward"):
        assert flag in out.stdout


# -- the shipped policy -----------------------------------------------------------------

SHIPPED = Path(__file__).resolve().parents[1] / "agents" / "policies" / "mountain.pt"


def test_shipped_policy_loads_safely_and_is_small():
    assert SHIPPED.is_file(), "agents/policies/mountain.pt is missing"
    assert SHIPPED.stat().st_size < 5_000_000
    import torch

    blob = torch.load(SHIPPED, weights_only=True)          # plain tensors and values only
    assert blob["variant"] == "mountain"
    meta = json.loads(SHIPPED.with_suffix(".json").read_text())
    assert meta["net_arch"] == blob["net_arch"] and meta["observation_size"] == blob["observation_size"]


def test_shipped_policy_plays_legal_hands_and_beats_random():
    from experiments.tournament import play_deal

    make_agent(f"ppo:path={SHIPPED}")      # a file, as users give their own
    cfg = {"variant": "mountain", "variant_options": {}, "seed": 0}
    row = play_deal(cfg, "ppo:policy=mountain", "greedy", 1)   # play_hand asserts legal moves
    assert all(h["steps"] > 0 for h in row["hands"]) and row["outcome"] in (0.0, 0.5, 1.0)
    margins = [play_deal(cfg, "ppo:policy=mountain", "random", 100 + d)["margin"] for d in range(10)]
    assert np.mean(margins) > 0, margins


def test_int8_training_records_the_dtype_and_plays_on_the_same_encoding(tmp_path):
    """--obs-dtype int8: the env, the rollout buffer and the checkpoint use the int8 encoding,
    and the agent feeds the network what the env gave the learner."""
    from mountain_rummy_env import Game, mountain_variant
    from mountain_rummy_env.envs.observation import encode_observations
    from mountain_rummy_env.game import player_view

    from experiments.train_ppo import main

    run = tmp_path / "int8"
    main(TINY[:1] + ["512"] + TINY[2:] + ["--run-dir", str(run), "--opponents", "random:1,self:1",
                                          "--eval-opponents", "random", "--obs-dtype", "int8"])
    assert json.loads((run / "policy.json").read_text())["obs_dtype"] == "int8"
    agent = make_agent(f"ppo:path={run / 'policy.pt'}", seed=0)
    v = mountain_variant()
    game = Game(v, 1)
    game.reset(seed=2)
    view = player_view(game, 0, game.current_player(0))
    assert game.masks[0][agent.act(view, game.masks[0])]
    env_obs = np.zeros((1, agent._obs.shape[1]), np.int8)
    encode_observations(game.states, v.spec, np.array([view.player]), env_obs)
    assert np.array_equal(agent.observe(view), env_obs.astype(np.float32))
    assert np.abs(env_obs).max() > 1          # scaled features stayed x127
    with pytest.raises(SystemExit):
        main(TINY + ["--run-dir", str(tmp_path / "bad"), "--obs-dtype", "float16"])


def test_a_process_forked_after_the_policy_ran_can_run_it():
    """The luck/skill study probes agents in the parent, then plays in forked workers: the
    parent's torch thread pool does not survive fork, and the child's first parallel op used
    to hang (every ppo job then timed out)."""
    import multiprocessing as mp

    from agents.ppo import masked_logits

    actor, meta = load_policy(SHIPPED)
    obs = np.zeros((64, int(meta["observation_size"])), np.float32)
    masks = np.ones((64, int(meta["num_actions"])), np.int8)
    masked_logits(actor, obs, masks)                      # parallel ops in this process
    ctx = mp.get_context("fork")
    child = ctx.Process(target=masked_logits, args=(actor, obs, masks))
    child.start()
    child.join(60)
    hung = child.is_alive()
    if hung:
        child.kill()
    assert not hung and child.exitcode == 0


def test_the_shipped_german_network_plays_four_seat_hands():
    """``ppo:policy=german_solver`` (issue #23's German player) reads its solver block and
    plays whole 4-seat hands against ``greedy`` (``step_one`` raises on an illegal action)."""
    from agents import make_agent
    from experiments.play import play_hand
    from mountain_rummy_env import Game
    from mountain_rummy_env.registry import make_variant

    game = Game(make_variant("german", num_players=4), 1)
    agents = [make_agent(spec, seed=q, variant="german")
              for q, spec in enumerate(["ppo:policy=german_solver", "greedy"] * 2)]
    assert agents[0].meta["obs_features"] == "solver" and agents[0].meta["variant"] == "german"
    for seed in (1, 2):
        result = play_hand(game, agents, seed=seed)
        assert len(result.hand_points) == 4 and game.done(0)


@pytest.mark.parametrize("name,features", [("mountain_move", "solver_move"),
                                           ("mountain_outs", "solver_move_outs")])
def test_the_shipped_move_block_networks_play_mountain_hands(name, features):
    """``ppo:policy=mountain_outs`` (issue #23's strongest Mountain network; its move block
    discards as ``rules``) and ``mountain_move`` read the solver and move blocks, add the
    move block to their logits, and play whole hands legally."""
    from experiments.tournament import play_deal

    agent = make_agent(f"ppo:policy={name}", variant="mountain")
    assert agent.meta["obs_features"] == features and agent.meta["move_skip"] is True
    assert agent.actor.move_gain.shape == (1845,)
    cfg = {"variant": "mountain", "variant_options": {}, "seed": 0}
    row = play_deal(cfg, f"ppo:policy={name}", "greedy", 2)
    assert all(h["steps"] > 0 for h in row["hands"]) and not row.get("forfeits")


def test_every_shipped_policy_has_a_model_card():
    """Issue #23: each shipped player comes with a model card (``NAME.md`` beside the
    ``.pt``) that names its variant, how it was trained, the compute, its measured strength
    and the commands that reproduce it."""
    from agents.ppo import POLICY_DIR, shipped_policies
    from mountain_rummy_env.registry import variant_info

    for name, meta in shipped_policies().items():
        card = POLICY_DIR / f"{name}.md"
        assert card.is_file(), f"shipped policy {name!r} has no model card {card.name}"
        text = card.read_text()
        assert f"`{name}`" in text.splitlines()[0]
        assert variant_info(meta["variant"]).title in text
        for field in ("| variant |", "| how trained |", "| compute |", "## Strength", "## Reproduce"):
            assert field in text, (name, field)


def test_an_evaluation_with_forfeits_says_so_and_upgrades_old_eval_files(tmp_path):
    """A baseline that crashes forfeits its hands to a random stand-in, which inflates the
    margin (a trainer whose agents' code was edited under it did this: +29.6 a deal where
    the policy scores +6.3): the evaluation counts the forfeits, ``eval.csv`` records them
    (a file of the old columns is rewritten with the new header), the line warns, and the
    trainers keep such an evaluation out of ``best.pt``."""
    from types import SimpleNamespace

    from experiments.train_ppo import EVAL_FIELDS, evaluate, record_evaluation

    args = SimpleNamespace(variant="mountain", variant_options="{}", eval_seed=3)
    policy = Path(__file__).resolve().parents[1] / "agents" / "policies" / "mountain.pt"
    results = evaluate(policy, args, ["test_byo_agents:Raises"], 2)
    assert results[0]["forfeits"] >= 2          # it crashes in every play of both deals
    assert "RuntimeError: lost my place" in results[0]["first_forfeit"]
    clean = evaluate(policy, args, ["greedy"], 1)
    assert clean[0]["forfeits"] == 0 and clean[0]["first_forfeit"] == ""
    csv_path = tmp_path / "eval.csv"
    csv_path.write_text("env_steps,wall_s,opponent,deals,win_rate,margin,margin_se\n"
                        "5,1.0,greedy,2,0.5,0.0,1.0\n")
    line = record_evaluation(csv_path, 10, 2.0, results + clean)
    assert "WARNING: " in line and "not a measurement" in line and "against greedy" not in line
    with csv_path.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == EVAL_FIELDS
    assert [r["env_steps"] for r in rows] == ["5", "10", "10"]
    assert rows[0]["forfeits"] == "" and rows[1]["forfeits"] == str(results[0]["forfeits"])
    assert "WARNING" not in record_evaluation(csv_path, 20, 3.0, clean)
    assert len(csv_path.read_text().splitlines()) == 5
