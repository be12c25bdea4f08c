"""The search-distilled trainer (``experiments/distill_search.py``): labels, fit, threshold, policy."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("torch")

from agents import make_agent  # noqa: E402
from agents.ppo import HINTS, masked_logits  # noqa: E402
from experiments import distill_search as ds  # noqa: E402

TINY = ["--hands", "4", "--chunk", "2", "--playouts", "3", "--workers", "1", "--epochs", "2",
        "--net-arch", "16", "--eval-deals", "1", "--curve", "0.5,1", "--eval-opponents", "rules",
        "--no-progress"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    path = tmp_path_factory.mktemp("distill") / "run"
    summary = ds.main(TINY + ["--run-dir", str(path)])
    return path, summary


@pytest.mark.parametrize("judge", ["replay", "playouts"])
def test_labels_are_advantages_over_the_rules_move_of_distinct_shortlisted_moves(judge):
    data = ds.label_chunk({"index": 3, "seed": 5, "hands": 2, "pool": [("rules", 1.0)],
                           "playouts": 3, "judge": judge})
    n = len(data["adv"])
    assert n > 5 and data["obs"].shape[0] == data["ids"].shape[0] == data["cands"].shape[0] == n
    assert (data["cands"][:, 0] == data["ids"][:, 0]).all()            # candidate 0: the rules move
    assert (data["adv"][:, 0] == 0).all()
    assert (np.isnan(data["adv"]) == (data["cands"] < 0)).all()
    assert (data["cands"][:, 1] >= 0).all()                             # a real choice each time
    for row in data["cands"]:
        real = row[row >= 0].tolist()
        assert len(set(real)) == len(real)
    for ids, row in zip(data["ids"], data["cands"]):    # the shortlist: the rules move and the slots
        assert set(row[row >= 0].tolist()) == {int(a) for a in ids if a >= 0}
    assert np.abs(data["adv"][:, 1:][~np.isnan(data["adv"][:, 1:])]).max() > 0


def test_labels_replay_identically_from_their_seed():
    job = {"index": 1, "seed": 2, "hands": 1, "pool": [("greedy", 1.0)], "playouts": 2, "judge": "replay"}
    a, b = ds.label_chunk(job), ds.label_chunk(job)
    assert all(np.array_equal(a[k], b[k], equal_nan=True) for k in ("obs", "ids", "cands", "adv"))


class _KeepOrder:
    """An rng whose permutation leaves the stock as dealt."""

    @staticmethod
    def permutation(x):
        return np.array(x, copy=True)


@pytest.mark.parametrize("opponent", ["rules", "greedy"])
def test_replaying_the_rules_move_on_the_true_stock_reproduces_the_hand(opponent):
    """The replay judge finishes the hand with copies of the players themselves: with the
    stock left in its true order, the rules move's replay scores what the hand really
    scored, from every decision of the rules player's seat."""
    from mountain_rummy_env import Game, mountain_variant, player_view
    from mountain_rummy_env.core.state import EVENT_NONE

    game = Game(mountain_variant(), 1)
    game.reset(seed=21)
    players = {0: make_agent("search", seed=1, variant="mountain"), 1: make_agent(opponent, seed=2, variant="mountain")}
    for p in players.values():
        p.reset()
    replays = []
    while True:
        p = game.current_player(0)
        view = player_view(game, 0, p)
        if p == 0:
            a = players[0].choose(view, game.masks[0])
            if len(replays) < 12:
                replays.append(ds.replay_values(game, players, 0, [(a,)], 1, _KeepOrder())[0, 0])
            players[0].remember(view, a)
        else:
            a = players[1].act(view, game.masks[0])
        if game.step_one(0, a) != EVENT_NONE:
            break
    pts = game.summary(0).hand_points
    assert len(replays) >= 3 and set(replays) == {pts[0] - pts[1]}


def test_tiny_run_writes_labels_policies_curve_and_summary(run):
    path, summary = run
    assert len(list((path / "labels").glob("chunk_*.npz"))) == 2
    for name in ("policy.pt", "policy.json", "policy_0.5.pt", "eval.csv", "learning_curve.png",
                 "summary.json", "args.json"):
        assert (path / name).is_file(), name
    meta = json.loads((path / "policy.json").read_text())
    assert meta["hint"] == "rules-slots" and meta["net_arch"] == [16] and meta["env_steps"] > 0
    assert [p["share"] for p in summary["points"]] == [0.5, 1.0]
    assert summary["decisions"] > summary["heldout_decisions"] > 0
    assert summary["label_files_timed"] == summary["label_files"] == 2
    assert summary["label_worker_seconds"] > 0
    rows = (path / "eval.csv").read_text().splitlines()
    assert len(rows) == 1 + 2                       # header, one opponent at two curve points


def test_policy_departs_exactly_where_the_threshold_table_says(run):
    """The saved hint weight is the chosen margin: the agent's argmax over the shortlist
    departs from the rules move where, and only where, a candidate is predicted to beat it
    by more than the margin (the rule the held-out table scores)."""
    import torch

    from agents.ppo import load_policy

    path, summary = run
    actor, meta = load_policy(path / "policy.pt")
    chunks = ds.load_labels(path, 2)
    data = ds.stack(chunks)
    margin = meta["departure_margin"]
    table = ds.threshold_table(actor, data, 10.0, margins=[margin])
    with torch.no_grad():
        pred = ds.predicted_advantage(actor, data, np.arange(len(data["adv"])), 10.0).numpy()
    x = np.concatenate([data["obs"], data["ids"]], axis=1).astype(np.float32)
    masks = np.zeros((len(x), meta["num_actions"]), np.int8)
    for i, row in enumerate(data["cands"]):
        masks[i, row[row >= 0]] = 1
    played = masked_logits(actor, x, masks).argmax(axis=1)
    departs = played != data["cands"][:, 0]
    pred[np.isnan(data["adv"])] = -np.inf
    assert (departs == (pred[:, 1:].max(axis=1) > margin)).all()
    assert departs.mean() == pytest.approx(table[0]["departs"])


def test_threshold_table_at_a_huge_margin_is_the_rules_player(run):
    from agents.ppo import load_policy

    path, _ = run
    actor, _ = load_policy(path / "policy.pt")
    row = ds.threshold_table(actor, ds.stack(ds.load_labels(path, 2)), 10.0, margins=[1e9])[0]
    assert row["departs"] == 0 and row["gain"] == 0


def test_distilled_policy_plays_as_a_ppo_agent_with_its_adviser(run):
    from experiments.tournament import play_deal

    path, _ = run
    row = play_deal({"variant": "mountain", "variant_options": {}, "seed": 0},
                    f"ppo:path={path / 'policy.pt'}", "greedy", 4)
    assert len(row["hands"]) == 2 and row["outcome"] in (0.0, 0.5, 1.0)
    agent = make_agent(f"ppo:path={path / 'policy.pt'}")
    assert agent.hint == HINTS["rules-slots"]


def test_resume_keeps_label_files_and_a_damaged_one_fails_clearly(run, tmp_path):
    import shutil

    path, _ = run
    copy = tmp_path / "run"
    shutil.copytree(path, copy)
    stamps = {p.name: p.stat().st_mtime_ns for p in (copy / "labels").iterdir()}
    ds.main(TINY + ["--run-dir", str(copy), "--eval-deals", "0", "--curve", "1"])
    assert {p.name: p.stat().st_mtime_ns for p in (copy / "labels").iterdir()} == stamps
    (copy / "labels" / "chunk_00001.npz").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="chunk_00001.npz.*relabel"):
        ds.main(TINY + ["--run-dir", str(copy), "--eval-deals", "0"])


def test_bad_arguments_are_refused(capsys):
    for bad in (["--playouts", "0"], ["--judge", "oracle"], ["--curve", "0.5"], ["--holdout", "1"], ["--hands", "0"],
                ["--opponents", "rules:x"], ["--net-arch", "a,b"]):
        with pytest.raises(SystemExit):
            ds.parse_args(bad)
        assert "error" in capsys.readouterr().err


def test_cli_help():
    out = subprocess.run([sys.executable, "-m", "experiments.distill_search", "--help"],
                         capture_output=True, text=True, check=True).stdout
    assert "--playouts" in out and "--holdout" in out
