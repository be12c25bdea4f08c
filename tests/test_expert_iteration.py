"""Network-guided search (agents/netsearch.py) and its expert-iteration trainer
(experiments/expert_iteration.py): legal moves in Mountain, Gin and German at 4 seats, search
targets over legal actions only, a tiny run that trains, resumes and plays, clear errors."""

from __future__ import annotations

import argparse
import csv
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.netsearch import softmax_targets  # noqa: E402
from experiments import expert_iteration as ei  # noqa: E402
from experiments.play import play_hand  # noqa: E402
from mountain_rummy_env import Game  # noqa: E402
from mountain_rummy_env.envs.observation import observation_size  # noqa: E402
from mountain_rummy_env.registry import make_variant  # noqa: E402

TABLES = {"mountain": ({}, ["greedy"]), "gin": ({}, ["rules"]),
          "german": ({"num_players": 4}, ["greedy", "rules", "greedy"])}


def random_net(path, variant, arch=(32,)):
    """A policy/value file of untrained (seeded) networks for ``variant``."""
    torch.manual_seed(0)
    args = argparse.Namespace(net_arch_list=list(arch), activation="relu", reward_scale=0.01)
    n_obs = observation_size(variant)
    actor, value = ei.build_nets(n_obs, variant.num_actions, args)
    ei.save_net(path, actor, value, ei.net_meta(variant, n_obs, args, 0, 0))
    return path


class Checked:
    """Wraps an agent: every action it plays must be legal."""

    def __init__(self, agent):
        self.agent, self.moves = agent, 0

    def reset(self):
        self.agent.reset()

    def act(self, view, mask):
        a = self.agent.act(view, mask)
        assert mask[a], f"{self.agent.name} played illegal action {a}"
        self.moves += 1
        return a


@pytest.mark.parametrize("name", list(TABLES))
def test_netsearch_plays_legally_and_records_legal_targets(tmp_path, name):
    opts, others = TABLES[name]
    variant = make_variant(name, **opts)
    path = random_net(tmp_path / "net.pt", variant)
    learner = make_agent(f"netsearch:path={path},budget=8,top=3,value_weight=0.5,value_samples=2",
                         seed=1, variant=name)
    learner.recorder = []
    searches = 0
    original = learner.search

    def counting(view, mask, cands):
        nonlocal searches
        searches += 1
        return original(view, mask, cands)

    learner.search = counting
    game = Game(variant, 1)
    for hand in range(2):
        seats = [Checked(make_agent(s, seed=k, variant=name)) for k, s in enumerate(others)]
        seats.insert(hand % variant.num_players, Checked(learner))
        play_hand(game, seats, seed=500 + hand)
    assert searches > 0 and learner.recorder
    n_act = variant.num_actions
    for obs, packed, ids, probs, action in learner.recorder:
        mask = np.unpackbits(packed, count=n_act).astype(bool)
        assert obs.dtype == np.int8 and obs.shape == (observation_size(variant),)
        assert mask[ids].all() and mask[action], "a target names an illegal action"
        assert np.isclose(probs.sum(), 1.0) and (probs >= 0).all()
    assert any(len(r[2]) > 1 for r in learner.recorder), "no searched decision was recorded"


def test_softmax_targets_sum_to_one_and_merge_repeated_actions():
    ids, probs = softmax_targets([7, 3, 7], [10.0, 0.0, 10.0], temperature=5.0)
    assert ids.tolist() == [7, 3]
    assert np.isclose(probs.sum(), 1.0)
    e = np.exp(-2.0)
    assert np.allclose(probs, [2 / (2 + e), e / (2 + e)])


def tiny(run_dir, *extra):
    return ["--variant", "mountain", "--run-dir", str(run_dir), "--hands", "2", "--budget", "8",
            "--net-arch", "16", "--epochs", "1", "--minibatch-size", "32",
            "--opponents", "greedy:1,self:1", "--no-progress", "--seed", "2", *extra]


def test_tiny_run_trains_resumes_and_plays(tmp_path):
    from experiments.tournament import play_deal

    run = tmp_path / "run"
    first = ei.main(tiny(run, "--iterations", "1"))
    assert first["iterations"] == 1 and first["hands"] == 2 and first["buffer"] > 0
    second = ei.main(tiny(run, "--iterations", "2", "--resume"))
    assert second["iterations"] == 2 and second["hands"] == 4 and second["buffer"] > first["buffer"]
    rows = list(csv.DictReader((run / "iterations.csv").open()))
    assert [int(r["iteration"]) for r in rows] == [1, 2]
    cfg = {"variant": "mountain", "variant_options": {}, "seed": 0}
    for spec in (f"ppo:path={run / 'checkpoint.pt'}", f"ppo:path={run / 'policy.pt'}",
                 f"netsearch:path={run / 'policy.pt'},budget=8"):
        row = play_deal(cfg, spec, "greedy", 900_001)
        assert len(row["hands"]) == 2 and not row.get("forfeits")


def test_shipping_keeps_the_value_network_and_plays_by_name(tmp_path):
    """experiments.ship_policy casts the actor and the value network alike (an expert-iteration
    file holds both), and the shipped Gin network plays by name as netsearch and as ppo."""
    import torch

    from agents.base import AgentSpecError
    from agents.netsearch import load_value
    from agents.ppo import load_policy
    from experiments import ship_policy
    from experiments.tournament import play_deal

    run = tmp_path / "run"
    ei.main(tiny(run, "--iterations", "1"))
    ship_policy.main([str(run / "policy.pt"), str(tmp_path / "net.pt")])
    blob = torch.load(tmp_path / "net.pt", weights_only=True)
    assert {v.dtype for v in blob["value_state_dict"].values()} == {torch.float16}
    assert "value_state_dict" not in json.loads((tmp_path / "net.json").read_text())
    assert load_value(tmp_path / "net.pt", load_policy(tmp_path / "net.pt")[1]) is not None
    cfg = {"variant": "gin", "variant_options": {}, "seed": 0}
    for spec in ("netsearch:policy=gin_expert,budget=8", "ppo:policy=gin_expert"):
        row = play_deal(cfg, spec, "rules", 900_002)
        assert len(row["hands"]) == 2 and not row.get("forfeits")
    with pytest.raises(AgentSpecError, match="not both"):          # a bad spec, named
        make_agent(f"netsearch:policy=gin_expert,path={tmp_path / 'net.pt'}", seed=0,
                   variant="gin")


def test_checkpoint_errors_are_clean(tmp_path):
    run = tmp_path / "run"
    ei.main(tiny(run, "--iterations", "1"))
    with pytest.raises(SystemExit, match="already holds a run"):
        ei.main(tiny(run, "--iterations", "1"))
    with pytest.raises(SystemExit, match="net-arch"):
        ei.main(tiny(run, "--iterations", "2", "--resume", "--net-arch", "8"))
    (run / "buffer.npz").write_bytes(b"junk")
    with pytest.raises(SystemExit, match="replay buffer"):
        ei.main(tiny(run, "--iterations", "2", "--resume"))
    (run / "checkpoint.pt").write_bytes((run / "policy.pt").read_bytes())   # no training state
    with pytest.raises(SystemExit, match="not an expert_iteration checkpoint"):
        ei.main(tiny(run, "--iterations", "2", "--resume"))
    (run / "checkpoint.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(SystemExit, match="corrupt"):
        ei.main(tiny(run, "--iterations", "2", "--resume"))
    with pytest.raises(SystemExit, match="no checkpoint"):
        ei.main(tiny(tmp_path / "empty", "--resume"))


def test_netsearch_refuses_a_network_of_another_variant(tmp_path):
    from agents.ppo import CheckpointError

    path = random_net(tmp_path / "gin.pt", make_variant("gin"))
    agent = make_agent(f"netsearch:path={path},budget=8", seed=0, variant="mountain")
    game = Game(make_variant("mountain"), 1)
    with pytest.raises(CheckpointError, match="trained for 'gin'"):
        play_hand(game, [agent, make_agent("greedy", seed=1, variant="mountain")], seed=3)


@pytest.mark.parametrize("flags, message", [
    (["--variant", "poker"], "invalid choice"),
    (["--opponents", "nosuchagent:1"], "unknown agent"),
    (["--opponents", "greedy:0"], "no opponent with positive weight"),
    (["--opponents", "greedy:2,rules:-1"], "negative"),
    (["--hands", "0"], "positive"),
    (["--net-arch", "64,0"], "--net-arch"),
    (["--temperature", "0"], "positive number"),
    (["--variant-options", "{\"no_such_option\": 1}"], "--variant-options"),
])
def test_bad_flags_are_one_line_usage_errors(flags, message, capsys):
    with pytest.raises(SystemExit) as exc:
        ei.parse_args(flags)
    assert exc.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and err[-1].startswith("usage:") is False


def test_cli_help_names_the_trainer(capsys):
    from experiments import cli

    with pytest.raises(SystemExit) as exc:
        cli.main(["expert-iteration", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "mountain-rummy expert-iteration" in out and "--temperature" in out
