"""The value-screened search (``netsearch:...,value_screen=1``, agents/netsearch.py) and the
afterstate value network's trainer (experiments/value_net.py): the screen's choices, legal
play in Mountain, Gin and German, labels that are each seat's hand margin, a tiny run that
fits, resumes and guides the search, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.netsearch import load_value  # noqa: E402
from experiments import value_net as vn  # noqa: E402
from experiments.play import play_hand  # noqa: E402
from mountain_rummy_env import Game  # noqa: E402
from mountain_rummy_env.envs.observation import observation_size  # noqa: E402
from mountain_rummy_env.registry import make_variant  # noqa: E402
from test_expert_iteration import TABLES, Checked, random_net  # noqa: E402


@pytest.mark.parametrize("name", list(TABLES))
def test_value_screen_plays_legally_and_duels_with_the_whole_budget(tmp_path, name):
    opts, others = TABLES[name]
    variant = make_variant(name, **opts)
    path = random_net(tmp_path / "net.pt", variant)
    learner = make_agent(f"netsearch:path={path},budget=12,top=0,value_screen=1,value_samples=2",
                         seed=1, variant=name)
    screened, duels = [], []
    screen, duel = learner.value_screened, learner.duel

    def counting_screen(view, mask, cands):
        screened.append(len(cands))
        return screen(view, mask, cands)

    def counting_duel(view, mask, first, challenger, n, until):
        duels.append(n)
        return duel(view, mask, first, challenger, n, until)

    learner.value_screened, learner.duel = counting_screen, counting_duel
    game = Game(variant, 1)
    for hand in range(2):
        seats = [Checked(make_agent(s, seed=k, variant=name)) for k, s in enumerate(others)]
        seats.insert(hand % variant.num_players, Checked(learner))
        play_hand(game, seats, seed=600 + hand)
    assert screened, "no decision went through the value screen"
    assert all(n == 6 for n in duels), "a value-screened duel did not get budget // 2 samples"


class Scripted:
    """Stands in for the value network's estimates and counts the playouts asked for."""

    def __init__(self, values, ok=None):
        self.values = np.asarray(values, np.float64)
        self.ok = np.ones(len(values), bool) if ok is None else np.asarray(ok, bool)
        self.rollouts = []


def scripted_agent(tmp_path, values, ok=None):
    variant = make_variant("mountain")
    agent = make_agent(f"netsearch:path={random_net(tmp_path / 'n.pt', variant)},budget=40,"
                       "top=0,value_screen=1", seed=3, variant="mountain")
    script = Scripted(values, ok)
    agent.actor = None               # no priors: the scripted values alone pick
    agent.candidate_values = lambda view, mask, cands: (script.values, script.ok)

    def rollouts(view, mask, cands, n):
        script.rollouts.append((list(cands), n))
        return np.tile(np.arange(len(cands), dtype=np.float64), (n, 1))   # later is better

    agent.rollouts = rollouts
    agent.reset()
    return agent, script


def test_value_screen_keeps_the_heuristic_choice_without_playouts_when_it_values_it_best(tmp_path):
    agent, script = scripted_agent(tmp_path, [5.0, 1.0, 4.0])
    assert agent.search(None, np.ones(1845, np.int8), [11, 12, 13]) == 11
    assert script.rollouts == []


def test_value_screen_duels_its_best_challenger_on_the_whole_budget(tmp_path):
    agent, script = scripted_agent(tmp_path, [1.0, 0.0, 4.0])
    assert agent.search(None, np.ones(1845, np.int8), [11, 12, 13]) == 13
    assert script.rollouts == [([11, 13], 20)]


def test_value_screen_leaves_a_hand_ending_candidate_to_the_playout_screen(tmp_path):
    agent, script = scripted_agent(tmp_path, [1.0, 0.0, 4.0], ok=[True, False, True])
    agent.search(None, np.ones(1845, np.int8), [11, 12, 13])
    assert script.rollouts[0] == ([11, 12, 13], 40 // 6)      # the playout screen's first


def test_value_screen_needs_a_value_network(tmp_path):
    with pytest.raises(ValueError, match="value_screen=1 needs a network file.*give path="):
        make_agent("netsearch:value_screen=1", seed=0, variant="mountain")
    actor_only = make_variant("mountain")
    path = random_net(tmp_path / "a.pt", actor_only)
    blob = torch.load(path, weights_only=True)
    del blob["value_state_dict"]
    torch.save(blob, path)
    with pytest.raises(ValueError, match="a.pt has none"):
        make_agent(f"netsearch:path={path},value_screen=1", seed=0, variant="mountain")


def test_shard_labels_are_each_seats_hand_margin_and_its_own_view():
    variant = make_variant("mountain")
    shard = vn.generate_shard(variant, "none", 3000, seed=5, games=32, explore=0.2,
                              discard="outs")
    X, y, hand = shard["X"], shard["y"], shard["hand"]
    assert X.dtype == np.int8 and X.shape[1] == observation_size(variant)
    assert len(y) > 1000 and np.isfinite(y).all()
    assert (np.abs(X).sum(axis=1) > 0).all()
    for h in np.unique(hand)[:20]:
        margins = np.unique(y[hand == h])
        # two seats, each labelled with its own points less the other's
        assert len(margins) <= 2 and (len(margins) == 1 or margins[0] == -margins[1])


def tiny(run_dir, actor, *extra):
    return ["--actor", str(actor), "--run-dir", str(run_dir), "--samples", "2400",
            "--shard-size", "1200", "--games", "48", "--epochs", "2", "--minibatch-size", "128",
            "--no-progress", "--seed", "4", *extra]


def test_tiny_run_fits_resumes_and_guides_the_search(tmp_path):
    variant = make_variant("mountain")
    actor = random_net(tmp_path / "actor.pt", variant, arch=(16,))
    run = tmp_path / "run"
    summary = vn.main(tiny(run, actor))
    assert len(summary["epochs"]) == 2 and summary["samples"] > 0
    assert (run / "policy.json").exists() and (run / "checkpoint.pt").exists()
    shards = sorted((run / "data").glob("shard_*.npz"))
    assert len(shards) == 2
    stamps = [p.stat().st_mtime_ns for p in shards]
    from agents.ppo import load_policy

    _, meta = load_policy(run / "policy.pt")
    value = load_value(run / "policy.pt", meta)
    assert value is not None and meta["value_net"]["epochs"] == summary["epochs"]
    # a rerun keeps the shards and the fitted epochs
    again = vn.main(tiny(run, actor))
    assert [p.stat().st_mtime_ns for p in shards] == stamps
    assert again["epochs"] == summary["epochs"]
    learner = Checked(make_agent(f"netsearch:path={run / 'policy.pt'},budget=8,top=0,"
                                 "value_screen=1,value_samples=2", seed=2, variant="mountain"))
    play_hand(Game(variant, 1), [learner, Checked(make_agent("rules", seed=1,
                                                             variant="mountain"))], seed=9)
    assert learner.moves > 0


def test_a_corrupt_shard_is_a_clean_error_naming_it(tmp_path, capsys):
    variant = make_variant("mountain")
    actor = random_net(tmp_path / "actor.pt", variant, arch=(16,))
    run = tmp_path / "run"
    (run / "data").mkdir(parents=True)
    (run / "data" / "shard_0.npz").write_bytes(b"not a shard")
    with pytest.raises(SystemExit) as err:
        vn.main(tiny(run, actor, "--samples", "1200"))
    assert err.value.code == 2
    assert "shard_0.npz" in capsys.readouterr().err


@pytest.mark.parametrize("flags, message", [
    (["--explore", "1.5"], "--explore must be in [0, 1]"),
    (["--holdout", "0"], "--holdout must be in (0, 0.5]"),
    (["--samples", "0"], "--samples"),
])
def test_bad_flags_are_one_line_usage_errors(flags, message, capsys):
    with pytest.raises(SystemExit) as err:
        vn.parse_args(flags)
    assert err.value.code == 2
    assert message in capsys.readouterr().err


def test_a_missing_actor_is_a_clean_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as err:
        vn.main(["--actor", str(tmp_path / "none.pt"), "--run-dir", str(tmp_path / "r"),
                 "--no-progress"])
    assert err.value.code == 2 and "none.pt" in capsys.readouterr().err
