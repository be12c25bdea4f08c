"""The fast self-play PPO trainer (experiments/selfplay_ppo.py): tiny runs on Mountain, Gin
and German, legal moves on both sides, resumable and playable checkpoints, clear errors, and
the batched playout opponent of every variant that has one."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from experiments import selfplay_ppo as sp  # noqa: E402
from mountain_rummy_env.envs.vector import RummyVectorEnv  # noqa: E402


def tiny(run_dir, variant="mountain", *extra):
    """Flags of a run of 2 updates of 128 steps on a 32-wide network."""
    return ["--variant", variant, "--run-dir", str(run_dir), "--num-envs", "16", "--n-steps", "8",
            "--total-steps", "256", "--minibatch-size", "64", "--net-arch", "32",
            "--snapshot-every", "128", "--checkpoint-every", "128", "--eval-every", "0",
            "--opponents", "self:1,league:1,random:1,playout:1",
            "--no-progress", "--seed", "3", *extra]


@pytest.fixture
def legality(monkeypatch):
    """Counts the learner's and the opponents' moves, failing on any the mask forbids."""
    seen = {"learner": 0, "opponent": 0}
    step, call = RummyVectorEnv.step, sp.Opponents.__call__

    def checked_step(self, actions):
        acts = np.asarray(actions)
        assert self.game.masks[np.arange(self.num_envs), acts].all(), "learner played an illegal move"
        seen["learner"] += len(acts)
        return step(self, actions)

    def checked_call(self, obs, masks):
        acts = call(self, obs, masks)
        assert masks[np.arange(len(acts)), acts].all(), "opponent played an illegal move"
        seen["opponent"] += len(acts)
        return acts

    monkeypatch.setattr(RummyVectorEnv, "step", checked_step)
    monkeypatch.setattr(sp.Opponents, "__call__", checked_call)
    return seen


@pytest.mark.parametrize("variant, obs_dtype, precision", [("mountain", "int8", "fp32"),
                                                           ("gin", "float32", "bf16")])
def test_tiny_run_trains_legally_resumes_and_plays(tmp_path, variant, obs_dtype, precision, legality):
    from experiments.tournament import play_deal

    run = tmp_path / "run"
    flags = ["--obs-dtype", obs_dtype, "--precision", precision, "--eval-every", "128",
             "--eval-deals", "1", "--eval-opponents", "random"]
    first = sp.main(tiny(run, variant, *flags))
    assert first["precision"] == precision
    assert first["env_steps"] == 256 and first["updates"] == 2
    assert all(math.isfinite(v) for v in first["last_update"].values())
    assert legality["learner"] == 256 and legality["opponent"] > 0
    # every kind of the pool played; the league only after the snapshot at step 128
    assert all(first["opponent_moves"][k] > 0 for k in sp.KINDS), first["opponent_moves"]
    blob = torch.load(run / "checkpoint.pt", weights_only=True)["training"]
    assert blob["counters"]["global_step"] == 256 and len(blob["league"]) == 2

    same = sp.main(tiny(run, variant, *flags, "--resume"))          # nothing left to do: same count
    assert same["env_steps"] == 256 and same["updates"] == 2
    more = sp.main(tiny(run, variant, *flags, "--resume", "--total-steps", "512"))
    assert more["env_steps"] == 512 and more["updates"] == 4
    assert more["league"] == 4      # the 2 restored snapshots and 2 new ones

    evals = [r.split(",") for r in (run / "eval.csv").read_text().splitlines()[1:]]
    assert [(r[0], r[2]) for r in evals] == [(str(n), "random") for n in (128, 256, 384, 512)]
    assert (run / "best.pt").is_file()
    meta = json.loads((run / "policy.json").read_text())
    assert meta["variant"] == variant and meta["env_steps"] == 512 and meta["obs_dtype"] == obs_dtype
    cfg = {"variant": variant, "variant_options": {}, "seed": 0}
    for saved in ("policy.pt", "checkpoint.pt"):        # the checkpoint plays as its policy
        row = play_deal(cfg, f"ppo:path={run / saved}", "random", 0)
        assert row["outcome"] in (0, 0.5, 1)
    from agents.ppo import load_policy

    played, meta = load_policy(run / "checkpoint.pt")
    assert "training" not in meta and meta["env_steps"] == 512
    for k, v in played.state_dict().items():
        assert torch.equal(v, torch.load(run / "policy.pt", weights_only=True)["state_dict"][k])


def test_masked_sample_matches_the_full_masked_softmax():
    """Sampling over the padded legal ids gives legal moves with the log-probability of the
    softmax over all actions with the illegal ones masked out."""
    from agents.ppo_nets import build_actor

    torch.manual_seed(0)
    actor = build_actor(8, 50, [16], "relu")
    x = torch.randn(64, 8)
    mask = torch.rand(64, 50) < 0.1
    mask[torch.arange(64), torch.randint(50, (64,))] = True      # at least one legal move
    mask[0] = True                                                # a row with all legal
    with torch.no_grad():
        action, logp = sp.masked_sample(actor, x, mask.numpy(), torch.Generator().manual_seed(1))
        ref = torch.log_softmax(actor(x).masked_fill(~mask, float("-inf")), dim=1)
    assert mask[torch.arange(64), action].all()
    assert torch.allclose(logp, ref[torch.arange(64), action], atol=1e-5)


@pytest.mark.parametrize("move_skip", [False, True])
def test_legal_logits_are_the_full_heads_at_the_legal_actions(move_skip):
    """The head computed at the legal ids only gives the full forward's logits there, the
    padding at -1e9, and the same gradients for every parameter (the update's loss)."""
    from agents.ppo_nets import build_actor, legal_logits

    torch.manual_seed(0)
    actor = build_actor(60, 50, [16, 12], "tanh", move_skip=move_skip)
    x = torch.randn(64, 60)
    mask = torch.rand(64, 50) < 0.1
    mask[torch.arange(64), torch.randint(50, (64,))] = True
    ids, valid = sp.legal_ids(mask.numpy())
    weights = torch.randn(ids.shape) * valid
    grads = []
    for fast in (True, False):
        actor.zero_grad()
        if fast:
            out = legal_logits(actor, x, ids, valid)
        else:
            out = actor(x).gather(1, ids).masked_fill(~valid, -1e9)
        (out * weights).sum().backward()
        grads.append([p.grad.clone() for p in actor.parameters()])
        if fast:
            fast_out = out.detach()
    assert torch.allclose(fast_out, out.detach(), atol=1e-5)
    assert (fast_out[~valid] == -1e9).all()
    with torch.inference_mode():      # the compiled head (agents.sparse_layers.legal_head)
        assert torch.allclose(legal_logits(actor, x, ids, valid), fast_out, atol=1e-5)
    for mine, full in zip(*grads):
        assert torch.allclose(mine, full, atol=1e-5)


def test_corrupt_or_mismatched_checkpoint_errors_cleanly(tmp_path):
    run = tmp_path / "run"
    sp.main(tiny(run, "mountain", "--total-steps", "128", "--opponents", "random:1"))
    with pytest.raises(SystemExit, match="net-arch"):
        sp.main(tiny(run, "mountain", "--resume", "--net-arch", "16", "--opponents", "random:1"))
    with pytest.raises(SystemExit, match="already holds a run"):
        sp.main(tiny(run, "mountain", "--opponents", "random:1"))
    (run / "checkpoint.pt").write_bytes((run / "policy.pt").read_bytes())   # a policy, no training state
    with pytest.raises(SystemExit, match="not a selfplay_ppo checkpoint"):
        sp.main(tiny(run, "mountain", "--resume", "--opponents", "random:1"))
    (run / "checkpoint.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(SystemExit, match="corrupt"):
        sp.main(tiny(run, "mountain", "--resume", "--opponents", "random:1"))
    with pytest.raises(SystemExit, match="no checkpoint"):
        sp.main(tiny(tmp_path / "empty", "mountain", "--resume"))


def test_tiny_run_with_solver_features_trains_resumes_and_plays(tmp_path, legality):
    """--obs-features solver: the network reads the view with the solver block (recorded in
    the policy), a resume must keep it, and policy.pt plays legal hands as ppo:path=..."""
    from experiments.tournament import play_deal
    from mountain_rummy_env import make_variant
    from mountain_rummy_env.envs.observation import observation_size

    run = tmp_path / "run"
    flags = ["--obs-features", "solver", "--precision", "fp32", "--kickstart-coef", "1"]
    first = sp.main(tiny(run, "mountain", *flags))
    assert first["env_steps"] == 256 and all(math.isfinite(v) for v in first["last_update"].values())
    assert legality["learner"] == 256 and legality["opponent"] > 0
    meta = json.loads((run / "policy.json").read_text())
    assert meta["obs_features"] == "solver"
    assert meta["observation_size"] == observation_size(make_variant("mountain"), "solver") > 1809
    more = sp.main(tiny(run, "mountain", *flags, "--resume", "--total-steps", "384"))
    assert more["env_steps"] == 384
    with pytest.raises(SystemExit, match="--obs-features 'solver', this run has 'none'"):
        sp.main(tiny(run, "mountain", "--precision", "fp32", "--resume", "--total-steps", "512"))
    cfg = {"variant": "mountain", "variant_options": {}, "seed": 0}
    row = play_deal(cfg, f"ppo:path={run / 'policy.pt'}", "greedy", 0)
    assert row["outcome"] in (0, 0.5, 1)


def test_tiny_run_with_the_move_block_starts_as_the_playout_policy(tmp_path, legality):
    """--obs-features solver_move: the actor adds the move block to its logits (move_skip in
    the policy, move_gain in its weights), so after 256 steps the argmax still plays the
    playout policy's move wherever it is to choose; a file whose move_skip lacks the move
    block is refused."""
    import torch

    from agents import make_agent
    from agents.fastpolicy import act_batch, rollout_tables
    from agents.ppo import CheckpointError, load_policy
    from mountain_rummy_env import Game, make_variant, player_view

    run = tmp_path / "run"
    sp.main(tiny(run, "mountain", "--obs-features", "solver_move", "--precision", "fp32"))
    meta = json.loads((run / "policy.json").read_text())
    assert meta["obs_features"] == "solver_move" and meta["move_skip"] is True
    actor, _ = load_policy(run / "policy.pt")
    assert actor.move_gain.shape == (1845,)
    v = make_variant("mountain")
    agent = make_agent(f"ppo:path={run / 'policy.pt'}", seed=0, variant="mountain")
    tables, move = rollout_tables(v), np.zeros(1, np.int64)
    g, chosen = Game(v, 1), 0
    for seed in range(3):
        g.reset(seed=seed)
        while not g.done(0):
            act_batch(g.states, v.spec_ref, g.masks[:1], np.zeros(1, np.int64), tables, move)
            if g.masks[0].sum() > 1:
                assert agent.act(player_view(g, 0, g.current_player(0)), g.masks[0]) == move[0]
                chosen += 1
            g.step_one(0, int(move[0]))
    assert chosen > 20
    blob = torch.load(run / "policy.pt", weights_only=True)
    blob["obs_features"] = "solver"
    torch.save(blob, tmp_path / "bad.pt")
    with pytest.raises(CheckpointError, match="move_skip needs obs_features with the move block"):
        load_policy(tmp_path / "bad.pt")


def test_tiny_german_run_with_solver_features_trains_and_its_policy_plays(tmp_path, legality):
    """German Rummy at 4 seats, --obs-features solver: the network reads the padded view
    with the German block (6,417 + 439 values, recorded in the policy), and policy.pt plays
    a tournament deal (every seat order) against greedy as ppo:path=..."""
    from experiments.tournament import play_table
    from mountain_rummy_env import make_variant
    from mountain_rummy_env.envs.observation import observation_size

    run = tmp_path / "run"
    flags = ["--obs-features", "solver", "--precision", "fp32", "--kickstart-coef", "1"]
    first = sp.main(tiny(run, "german", *flags))
    assert first["env_steps"] == 256 and all(math.isfinite(v) for v in first["last_update"].values())
    assert legality["learner"] == 256 and legality["opponent"] > 0
    meta = json.loads((run / "policy.json").read_text())
    assert meta["obs_features"] == "solver"
    assert meta["observation_size"] == observation_size(make_variant("german"), "solver") > 6417
    cfg = {"variant": "german", "variant_options": {}, "seed": 0}
    row = play_table(cfg, (f"ppo:path={run / 'policy.pt'}", "greedy", "greedy", "greedy"), 0)
    assert len(row["hands"]) == 4 and not row.get("forfeits")


def test_old_checkpoints_resume_without_obs_features(tmp_path):
    """A checkpoint written before --obs-features existed (no such flag recorded) resumes as
    'none', and a policy file without the key plays the plain view."""
    import torch

    run = tmp_path / "run"
    sp.main(tiny(run, "mountain", "--total-steps", "128", "--opponents", "random:1"))
    blob = torch.load(run / "checkpoint.pt", weights_only=True)
    del blob["training"]["flags"]["obs_features"], blob["obs_features"]
    torch.save(blob, run / "checkpoint.pt")
    again = sp.main(tiny(run, "mountain", "--resume", "--opponents", "random:1"))
    assert again["env_steps"] == 256
    from agents.ppo import PPOAgent, load_policy

    actor, meta = load_policy(run / "checkpoint.pt")
    assert "obs_features" in meta     # written again by the resumed run
    meta.pop("obs_features")
    agent = PPOAgent(actor=actor, meta=meta)
    from mountain_rummy_env import Game, make_variant
    from mountain_rummy_env.game import player_view

    g = Game(make_variant("mountain"), 1)
    g.reset(seed=1)
    assert agent.observe(player_view(g, 0, g.current_player(0))).shape == (1, 1809)


@pytest.mark.parametrize("flags, message", [
    (["--variant", "poker"], "invalid choice"),
    (["--opponents", "greedy:1"], "no batched form"),
    (["--opponents", "self:0"], "no opponent with positive weight"),
    (["--opponents", "self:2,random:-1"], "negative"),
    (["--num-envs", "0"], "positive"),
    (["--n-steps", "-4"], "positive"),
    (["--net-arch", "64,0"], "--net-arch"),
    (["--gamma", "1.5"], "in [0, 1]"),
    (["--learning-rate", "0"], "positive number"),
    (["--variant-options", "{\"no_such_option\": 1}"], "--variant-options"),
    (["--variant", "robbers", "--opponents", "playout:1"], "no playout policy"),
    (["--kickstart-coef", "-1"], "expected a number >= 0"),
    (["--obs-features", "magic"], "invalid choice"),
    (["--variant", "gin", "--obs-features", "solver"], "not available for variant 'gin'; supported: crazy, german, mountain"),
    (["--variant", "robbers", "--opponents", "self:1", "--kickstart-coef", "1"],
     "--kickstart-teacher playout: "),
    (["--kickstart-coef", "1", "--kickstart-teacher", "no_such_agent"], "--kickstart-teacher 'no_such_agent'"),
    (["--kickstart-coef", "1", "--kickstart-teacher", "simple_gin"], "--kickstart-teacher 'simple_gin'"),
])
def test_bad_flags_are_usage_errors(flags, message, capsys):
    with pytest.raises(SystemExit) as exc:
        sp.parse_args(flags)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("variant", ["mountain", "gin", "german", "crazy"])
def test_playout_batch_kernel_acts_per_game(variant):
    """``fastpolicy.act_batch`` on a shuffled subset of games gives each row the move the
    playout policy makes in that row's game alone, and every move is legal there; the spec
    goes by reference (``spec_ref``) or as the record alike."""
    from agents.fastpolicy import act_batch, rollout_tables
    from mountain_rummy_env import make_variant

    v = make_variant(variant)
    env = RummyVectorEnv(v, 24, seed=4)
    obs, info = env.reset()
    rng = np.random.default_rng(0)
    for _ in range(7):      # positions of every phase
        obs, *_, info = env.step([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
    tables, states, masks = rollout_tables(v), env.game.states, env.game.masks
    games = rng.permutation(24)[:16]
    together = np.empty(16, np.int64)
    act_batch(states, v.spec_ref, masks[games], games, tables, together)
    alone = np.empty(1, np.int64)
    for k, b in enumerate(games):
        act_batch(states, v.spec, masks[[b]], np.array([b]), tables, alone)
        assert together[k] == alone[0] and masks[b, alone[0]]
    assert len(set(together.tolist())) > 1


@pytest.mark.parametrize("variant", ["german", "crazy"])
def test_german_playout_opponent_is_the_search_playout_policy(variant):
    """German and Crazy at 4 seats: the batched playout opponent plays, in every game of a
    vector env played at random for many steps, the compiled rules player's move
    (``german_action`` through ``german_policy.choose``) under the parameters the ``search``
    agent plays its playouts with, and the move is legal; draws, takes, melds and discards
    all occur."""
    from agents.fastpolicy import act_batch, rollout_tables
    from agents.german import GermanSearchAgent
    from agents.german_policy import choose
    from mountain_rummy_env.german_player import credit_order, rules_params
    from mountain_rummy_env import make_variant
    from mountain_rummy_env.core.rules import SCRATCH_RECORDS

    v = make_variant(variant, num_players=4)
    tables = rollout_tables(v)
    params = GermanSearchAgent().params_of(v)
    assert np.array_equal(tables[0], params) and np.array_equal(params, rules_params(variant))
    n = 32
    env = RummyVectorEnv(v, n, seed=5)
    _, info = env.reset()
    rng = np.random.default_rng(1)
    work, order, games = np.zeros(SCRATCH_RECORDS, v.dtype), credit_order(v), np.arange(n)
    lay = v.layout
    starts = np.array([lay.draw, lay.take, lay.meld, lay.layoff, lay.swap, lay.discard])
    families, acts = set(), np.empty(n, np.int64)
    for _ in range(80):
        states, masks = env.game.states, env.game.masks
        act_batch(states, v.spec_ref, masks, games, tables, acts)
        for b in games:
            assert masks[b, acts[b]], (b, acts[b])
            assert acts[b] == choose(states[b:b + 1], v.spec_ref, params, work, order)
        families.update(np.searchsorted(starts, acts, side="right").tolist())
        _, *_, info = env.step([rng.choice(np.flatnonzero(m)) for m in info["action_mask"]])
    assert {1, 2, 3, 6} <= families, families      # draw, take, meld, discard


def test_tiny_german_run_plays_the_playout_opponent(tmp_path, legality):
    """A tiny German run at 4 seats against ``playout:1,self:1`` trains with legal moves on
    both sides, and the rules player made some of the opponents' moves."""
    run = sp.main(tiny(tmp_path / "run", "german", "--variant-options", '{"num_players": 4}',
                       "--opponents", "playout:1,self:1", "--eval-every", "256",
                       "--eval-deals", "2", "--eval-opponents", "greedy"))
    assert run["env_steps"] == 256 and run["updates"] == 2
    # the evaluation seats the policy and greedy alternately round the 4-seat table
    evals = list(csv.DictReader((tmp_path / "run" / "eval.csv").open()))
    assert [(r["opponent"], r["deals"]) for r in evals] == [("greedy", "2")]
    assert 0 <= float(evals[0]["win_rate"]) <= 1
    assert legality["learner"] == 256
    moves = run["opponent_moves"]
    assert moves["playout"] > 0 and moves["self"] > 0 and moves["random"] == moves["league"] == 0
    assert legality["opponent"] == sum(moves.values())


def test_same_seed_same_run(tmp_path):
    """The seed fixes the initial weights, the deals, the opponents and every sample: two
    runs of the same flags end with the same losses and weights."""
    runs = [sp.main(tiny(tmp_path / str(k), "mountain", "--precision", "fp32")) for k in range(2)]
    assert runs[0]["last_update"] == runs[1]["last_update"]
    a, b = (torch.load(tmp_path / str(k) / "policy.pt", weights_only=True)["state_dict"] for k in range(2))
    assert all(torch.equal(a[k], b[k]) for k in a)
    other = sp.main(tiny(tmp_path / "other", "mountain", "--precision", "fp32", "--seed", "4"))
    assert other["last_update"] != runs[0]["last_update"]


def test_table_margin_of_a_many_seat_row():
    """The evaluation's margin at N seats: mean points per hand of the policy's positions
    less the baseline's (4 plays here), and a two-seat row's own margin."""
    from experiments.train_ppo import table_margin

    hands = [{"positions": [0, 1, 2, 3], "points": p} for p in ([40, -20, 0, -20], *[[0] * 4] * 3)]
    row = {"table": ["A", "B", "A", "B"], "points": [40, -20, 0, -20], "hands": hands}
    assert table_margin(row, "A") == pytest.approx((20 - -20) / 4)
    two = {"a": "A", "b": "B", "margin": -3.5, "hands": [{"points": [0, 7]}, {"points": [0, 0]}]}
    assert table_margin(two, "A") == -3.5


def teacher_agreement(policy_path, variant_name, n=64, steps=40, seed=11):
    """Share of a fresh vector env's learner decisions with two or more legal moves where
    the policy's argmax is the playout policy's move (the games played by that policy)."""
    from agents.fastpolicy import act_batch, rollout_tables
    from agents.ppo import load_policy, masked_logits, pick
    from mountain_rummy_env import make_variant

    actor, _ = load_policy(policy_path)
    v = make_variant(variant_name)
    env = RummyVectorEnv(v, n, seed=seed)
    obs, info = env.reset()
    tables, games, teacher = rollout_tables(v), np.arange(n), np.empty(n, np.int64)
    agree = seen = 0
    for _ in range(steps):
        mask = info["action_mask"]
        act_batch(env.game.states, v.spec_ref, mask, games, tables, teacher)
        mine = pick(masked_logits(actor, obs, mask))
        choice = mask.sum(1) > 1
        agree += int((mine == teacher)[choice].sum())
        seen += int(choice.sum())
        obs, *_, info = env.step(teacher)
    return agree / seen


def test_kickstart_weight_decays_linearly_to_zero():
    args = sp.parse_args(["--kickstart-coef", "2", "--kickstart-steps", "1000"])
    assert [sp.kickstart_weight(args, s) for s in (0, 250, 1000, 5000)] == [2.0, 1.5, 0.0, 0.0]
    args = sp.parse_args(["--kickstart-coef", "0.5"])
    assert sp.kickstart_weight(args, 10 ** 9) == 0.5


def test_kickstarting_teaches_the_playout_policy(tmp_path):
    """With ``--kickstart-coef`` the learner is pulled toward the playout policy's moves at
    its own decisions: on fresh positions its argmax agrees with that teacher far more often
    than the same run's without kickstarting, and the update reports the loss and agreement."""
    flags = ["--total-steps", "4096", "--learning-rate", "3e-3", "--n-epochs", "4",
             "--net-arch", "64", "--opponents", "playout:1", "--precision", "fp32"]
    kicked = sp.main(tiny(tmp_path / "kick", "mountain", *flags, "--kickstart-coef", "5"))
    plain = sp.main(tiny(tmp_path / "plain", "mountain", *flags))
    assert {"kickstart_loss", "teacher_agreement"} <= set(kicked["last_update"])
    assert "kickstart_loss" not in plain["last_update"]
    with_teacher = teacher_agreement(tmp_path / "kick" / "policy.pt", "mountain")
    without = teacher_agreement(tmp_path / "plain" / "policy.pt", "mountain")
    # the plain run agrees 0.13-0.27 by chance (seeds 3-5; float rounding alone moves it
    # within that range), kickstarted runs 0.35-0.36
    assert with_teacher > max(0.30, without + 0.05), (with_teacher, without)


def test_agent_teacher_follows_the_learner_seat_through_each_hand():
    """``--kickstart-teacher SPEC``: one agent per game, reset once per hand, asked on the
    learner's view (a memoryless ``greedy`` labels exactly what it plays on that view) and
    told the learner's move (``rules`` remembers the card the learner discarded)."""
    from agents import make_agent
    from mountain_rummy_env import make_variant
    from mountain_rummy_env.game import player_view

    resets = []
    v = make_variant("mountain")
    env = RummyVectorEnv(v, 6, seed=5)
    _, info = env.reset()
    rules = sp.AgentTeacher("rules", env, seed=0)
    greedy = sp.AgentTeacher("greedy", env, seed=0)
    for g, agent in enumerate(rules.agents):
        agent.reset = (lambda g=g, reset=agent.reset: (resets.append(g), reset())[1])
    rng = np.random.default_rng(0)
    labels, greedy_labels = np.empty(6, np.int64), np.empty(6, np.int64)
    hands = set()
    lay = v.layout
    for _ in range(300):
        mask = info["action_mask"]
        hands |= {(g, *k) for g, k in enumerate(sp.hand_keys(env, np.arange(6)).tolist())}
        rules.label(mask, labels)
        greedy.label(mask, greedy_labels)
        assert mask[np.arange(6), labels].all() and mask[np.arange(6), greedy_labels].all()
        for g in range(6):
            view = player_view(env.game, g, int(env.game.states[g]["current"]))
            assert greedy_labels[g] == make_agent("greedy").act(view, mask[g])
        played = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        rules.played(played)
        for g, a in enumerate(played):
            if lay.discard <= a < lay.knock:
                card = rules.agents[g].my_discard
                assert v.spec.card_face[card] == a - lay.discard
        _, _, _, _, info = env.step(played)
    assert sorted(resets) == sorted(g for g, *_ in hands)
    assert len(hands) > 6          # hands ended and new ones were dealt


def test_a_tiny_run_kickstarts_from_a_make_agent_teacher(tmp_path):
    out = sp.main(tiny(tmp_path / "run", "mountain", "--kickstart-coef", "1",
                       "--kickstart-teacher", "rules", "--precision", "fp32"))
    assert {"kickstart_loss", "teacher_agreement"} <= set(out["last_update"])
    assert out["seconds"]["teacher"] > 0
