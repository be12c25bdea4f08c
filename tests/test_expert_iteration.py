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


def random_net(path, variant, arch=(32,), features="none"):
    """A policy/value file of untrained (seeded) networks for ``variant``."""
    torch.manual_seed(0)
    args = argparse.Namespace(net_arch_list=list(arch), activation="relu", reward_scale=0.01,
                              obs_features=features)
    n_obs = observation_size(variant, features)
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


def test_solver_features_run_trains_on_the_block_and_resumes_only_with_it(tmp_path):
    """--obs-features solver: iteration 0 (the plain search, features=solver) and 1 (the
    network's file decides) record 2081-wide observations; the flag is fixed for the run."""
    from agents.ppo import load_policy

    mountain = make_variant("mountain")
    width = observation_size(mountain, "solver")
    assert (width, observation_size(mountain)) == (2081, 1809)
    run = tmp_path / "run"
    ei.main(tiny(run, "--iterations", "1", "--obs-features", "solver"))
    with pytest.raises(SystemExit, match="--obs-features 'solver', this run has 'none'"):
        ei.main(tiny(run, "--iterations", "2", "--resume"))
    ei.main(tiny(run, "--iterations", "2", "--resume", "--obs-features", "solver"))
    meta = load_policy(run / "policy.pt")[1]
    assert meta["obs_features"] == "solver" and meta["observation_size"] == width
    with np.load(run / "buffer.npz") as z:
        assert z["obs"].shape[1] == width


def test_netsearch_features_without_a_network_and_against_one(tmp_path):
    """features=solver makes the plain search record the solver block; with a network its
    file decides, and a features= other than its own is refused."""
    from agents.base import AgentSpecError

    mountain = make_variant("mountain")
    learner = make_agent("netsearch:features=solver,budget=4", seed=0, variant="mountain")
    learner.recorder = []
    play_hand(Game(mountain, 1), [learner, make_agent("greedy", seed=1, variant="mountain")],
              seed=3)
    assert learner.recorder and {r[0].shape for r in learner.recorder} == {(2081,)}
    plain = random_net(tmp_path / "plain.pt", mountain)
    solver = random_net(tmp_path / "solver.pt", mountain, features="solver")
    assert make_agent(f"netsearch:path={solver},features=solver", seed=0, variant="mountain").path
    for spec, message in ((f"netsearch:path={plain},features=solver", "reads 'none' features"),
                          (f"netsearch:path={solver},features=none", "reads 'solver' features"),
                          ("netsearch:features=most", "obs_features must be one of")):
        with pytest.raises(AgentSpecError, match=message):
            make_agent(spec, seed=0, variant="mountain")


def test_netsearch_with_a_move_block_network_plays_and_records_it(tmp_path):
    """A network on obs_features="solver_move" (built by the trainer with the move skip)
    loads with its gain per action and guides the search: legal moves, records as wide as
    the view with both blocks (1809 + 272 + 1845)."""
    from agents.ppo import load_policy

    mountain = make_variant("mountain")
    path = random_net(tmp_path / "move.pt", mountain, features="solver_move")
    actor, meta = load_policy(path)
    assert meta["move_skip"] is True and actor.move_gain.shape == (1845,)
    learner = Checked(make_agent(f"netsearch:path={path},budget=4", seed=0, variant="mountain"))
    learner.agent.recorder = []
    play_hand(Game(mountain, 1), [learner, make_agent("greedy", seed=1, variant="mountain")],
              seed=3)
    assert learner.moves > 5
    assert {r[0].shape for r in learner.agent.recorder} == {(3926,)}


def test_netsearch_with_a_german_solver_network_plays_and_records_the_block(tmp_path):
    """German at 4 seats: a network of the solver block (6,417 + 439 inputs) guides the
    search, which plays legally and records observations with the German block."""
    opts, others = TABLES["german"]
    german = make_variant("german", **opts)
    width = observation_size(german, "solver")
    assert width == observation_size(german) + 439
    path = random_net(tmp_path / "solver.pt", german, features="solver")
    learner = make_agent(f"netsearch:path={path},budget=4", seed=0, variant="german")
    learner.recorder = []
    seats = [Checked(make_agent(s, seed=k, variant="german")) for k, s in enumerate(others)]
    play_hand(Game(german, 1), [Checked(learner)] + seats, seed=11)
    assert learner.recorder and {r[0].shape for r in learner.recorder} == {(width,)}


def selfplay_run(run_dir):
    """A selfplay_ppo run of 2 updates on a 32-wide network (its checkpoint holds the critic)."""
    from experiments import selfplay_ppo

    selfplay_ppo.main(["--variant", "mountain", "--run-dir", str(run_dir), "--num-envs", "16",
                       "--n-steps", "8", "--total-steps", "256", "--minibatch-size", "64",
                       "--net-arch", "32", "--eval-every", "0", "--opponents", "self:1",
                       "--no-progress", "--seed", "3"])
    return run_dir


def test_init_policy_starts_from_a_selfplay_network_and_guides_iteration_0(tmp_path, monkeypatch):
    from agents.ppo import load_policy

    sp = selfplay_run(tmp_path / "selfplay")
    critic = torch.load(sp / "checkpoint.pt", weights_only=True)["training"]["critic"]
    init_actor = load_policy(sp / "checkpoint.pt")[0].state_dict()
    played = []
    play = ei.play_iteration

    def watched(args, variant, game, policy, *rest):
        blob = torch.load(policy, weights_only=True)
        played.append((policy, blob["state_dict"], blob["value_state_dict"]))
        return play(args, variant, game, policy, *rest)

    monkeypatch.setattr(ei, "play_iteration", watched)
    run = tmp_path / "run"
    summary = ei.main(tiny(run, "--iterations", "1", "--net-arch", "32",
                           "--init-policy", str(sp / "checkpoint.pt")))
    (policy, actor, value), = played
    assert policy == run / "policy.pt"              # iteration 0: the guided search
    for got, want in ((actor, init_actor), (value, critic)):
        assert got.keys() == want.keys() and all(torch.equal(got[k], want[k]) for k in got)
    assert summary["init_policy"] == str(sp / "checkpoint.pt")
    assert summary["init_value"].startswith("the critic of")
    assert json.loads((run / "args.json").read_text())["init_policy"] == str(sp / "checkpoint.pt")
    # selfplay's policy.pt has no critic: the value network starts fresh, and says so
    args = ei.parse_args(tiny(run, "--net-arch", "32"))
    mountain = make_variant("mountain")
    nets = ei.build_nets(observation_size(mountain), mountain.num_actions, args)
    assert ei.load_init(str(sp / "policy.pt"), mountain, observation_size(mountain), *nets,
                        args).startswith("fresh:")


def test_init_policy_errors_are_clean(tmp_path):
    mountain = make_variant("mountain")
    (tmp_path / "junk.pt").write_bytes(b"not a policy")
    cases = [(tmp_path / "missing.pt", "does not exist"),
             (tmp_path / "junk.pt", "corrupt"),
             (random_net(tmp_path / "gin.pt", make_variant("gin"), arch=(16,)),
              "--variant 'gin', this run 'mountain'"),
             (random_net(tmp_path / "solver.pt", mountain, arch=(16,), features="solver"),
              "--obs-features 'solver', this run 'none'"),
             (random_net(tmp_path / "wide.pt", mountain, arch=(32,)),
              "--net-arch \\[32\\], this run \\[16\\]")]
    for path, message in cases:
        with pytest.raises(SystemExit, match=message) as exc:
            ei.main(tiny(tmp_path / "run", "--init-policy", str(path)))
        assert str(exc.value).startswith("error: --init-policy")
    with pytest.raises(SystemExit, match="--activation 'relu', this run 'tanh'"):
        ei.main(tiny(tmp_path / "run", "--init-policy", str(path), "--net-arch", "32",
                     "--activation", "tanh"))
    assert not (tmp_path / "run" / "checkpoint.pt").exists()


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
    (["--variant", "gin", "--obs-features", "solver"],
     "--obs-features: obs_features='solver' is not available for variant 'gin'; supported: crazy, german, mountain"),
    (["--init-policy", "x.pt", "--resume"], "--init-policy with --resume"),
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
