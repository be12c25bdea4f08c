"""The batched Gymnasium VectorEnv and its SB3 adapter (``mountain_rummy_env.envs.vector``).

The equivalence tests replay every game of a vector env in the single-game path (the AEC env
and ``Game(variant, 1)``) with the same seeds and actions and compare observations, masks and
rewards step by step.
"""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from mountain_rummy_env import Game, IllegalActionError, mountain_variant
from mountain_rummy_env.envs import observation as O
from mountain_rummy_env.envs.observation import encode_observations, observation_size
from mountain_rummy_env.envs.vector import RummyVectorEnv, sample_masked, seed_rng

VARIANT = mountain_variant()


def learner_policy(seed, n):
    """Deterministic per-env choice among the legal actions."""
    gens = [np.random.default_rng(seed + i) for i in range(n)]

    def choose(masks):
        return np.array([g.choice(np.flatnonzero(m)) for g, m in zip(gens, masks)], np.int64)

    return choose


def lowest_legal(obs, mask):
    """A deterministic callable opponent: the highest legal id (ends turns quickly)."""
    return mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)


def test_spaces_reset_and_masks():
    env = RummyVectorEnv(VARIANT, 8, seed=3)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset()
    assert obs.shape == (8, observation_size(VARIANT)) and obs.dtype == np.float32
    assert env.observation_space.shape == obs.shape
    assert env.single_action_space.n == VARIANT.num_actions
    assert info["action_mask"].shape == (8, VARIANT.num_actions)
    assert (env.action_masks() == info["action_mask"].astype(bool)).all()
    st = env.game.states
    assert (st["current"] == info["learner_seat"]).all()      # the learner is to move everywhere
    assert set(info["learner_seat"].tolist()) == {0, 1}        # rotation spreads the seats
    assert all(env.single_observation_space.contains(o) for o in obs)


def test_random_play_invariants_and_autoreset():
    env = RummyVectorEnv(VARIANT, 16, seed=11)
    obs, info = env.reset()
    rng = seed_rng(99, 16)
    acts = np.zeros(16, np.int64)
    ended = 0
    seats_seen = {b: set() for b in range(16)}
    for _ in range(400):
        sample_masked(info["action_mask"], rng, acts)
        obs, rew, term, trunc, info = env.step(acts)
        assert not trunc.any()
        assert (info["action_mask"].sum(1) > 0).all()
        assert (env.game.states["current"] == info["learner_seat"]).all()
        assert (rew[~info["hand_over"]] == 0).all()
        for b in np.flatnonzero(term):
            ended += 1
            fi = info["final_info"]
            assert info["_final_obs"][b] and info["final_obs"][b].shape == obs[b].shape
            s = fi["summary"][b]
            seat = fi["learner_seat"][b]
            seats_seen[b].add(int(seat))
            other = 1 - seat
            assert rew[b] == s["hand_points"][seat] - s["hand_points"][other]
            assert fi["episode_return"][b] == rew[b]
            # the final observation is the learner's view of the finished hand
            assert obs[b].shape == info["final_obs"][b].shape
    assert ended > 10
    assert any(len(v) == 2 for v in seats_seen.values())


def test_illegal_action_raises_without_change():
    env = RummyVectorEnv(VARIANT, 4, seed=0)
    env.reset()
    before = env.game.states.copy()
    bad = np.flatnonzero(env.game.masks[2] == 0)[0]
    acts = np.array([np.flatnonzero(m)[0] for m in env.game.masks])
    acts[2] = bad
    with pytest.raises(IllegalActionError):
        env.step(acts)
    assert (env.game.states == before).all()


def test_illegal_action_terminates_that_game_with_the_penalty():
    """illegal_action="terminate": the game with an illegal action ends with the default
    penalty (docs/rewards.md), is re-dealt like any ended episode and has no hand summary;
    the other games step as usual."""
    env = RummyVectorEnv(VARIANT, 4, seed=0, illegal_action="terminate")
    env.reset()
    seats, deck = env._learner.copy(), env.game.states["deck"][2].copy()
    acts = np.array([np.flatnonzero(m)[0] for m in env.game.masks])
    acts[2] = np.flatnonzero(env.game.masks[2] == 0)[0]
    _, rew, term, trunc, info = env.step(acts)
    assert rew[2] == VARIANT.lowest_hand_margin() == -506 and term[2] and not trunc.any()
    fi = info["final_info"]
    assert fi["illegal_action"][2] and fi["summary"][2] is None and fi["episode_return"][2] == -506
    assert fi["learner_seat"][2] == seats[2] and not fi["illegal_action"][[0, 1, 3]].any()
    assert info["action_mask"][2].any() and (env.game.states["deck"][2] != deck).any()  # re-dealt
    with pytest.raises(Exception, match="illegal_reward must be a number <= -506"):
        RummyVectorEnv(VARIANT, 1, illegal_action="terminate", illegal_reward=0)


def _replay_single(seed, learner_seat, learner_actions, opponent, n_opp_rng=None):
    """Replay one game in ``Game(variant, 1)``: yields (obs, mask, reward) at each learner turn."""
    g = Game(VARIANT, 1)
    g.reset(seed=seed)
    out = np.zeros((1, observation_size(VARIANT)), np.float32)
    players = np.array([learner_seat], np.int64)
    reward = 0.0

    def play_opponent():
        nonlocal reward
        while g.current_player(0) != learner_seat and not g.done(0):
            if opponent == "random":
                a = np.zeros(1, np.int64)
                sample_masked(g.masks, n_opp_rng, a)
                a = int(a[0])
            else:
                o = np.zeros((1, out.shape[1]), np.float32)
                encode_observations(g.states, VARIANT.spec, g.states["current"].astype(np.int64), o)
                a = int(opponent(o, g.masks)[0])
            if g.step_one(0, a):
                s = g.summary(0)
                reward += s.hand_points[learner_seat] - s.hand_points[1 - learner_seat]

    play_opponent()
    traj = []
    for a in learner_actions:
        encode_observations(g.states, VARIANT.spec, players, out)
        traj.append((out[0].copy(), g.masks[0].copy(), reward))
        reward = 0.0
        if g.step_one(0, int(a)):
            s = g.summary(0)
            reward += s.hand_points[learner_seat] - s.hand_points[1 - learner_seat]
        if not g.done(0):
            play_opponent()
        if g.done(0):
            encode_observations(g.states, VARIANT.spec, players, out)
            traj.append((out[0].copy(), None, reward))
            return traj
    return traj


@pytest.mark.parametrize("opponent", ["random", "callable"])
def test_equivalence_with_single_game(opponent):
    n, seed = 6, 1234
    opp = "random" if opponent == "random" else lowest_legal
    env = RummyVectorEnv(VARIANT, n, seed=seed, opponent=opp)
    obs, info = env.reset()
    choose = learner_policy(7, n)
    seats = info["learner_seat"].copy()
    rec_obs = [[o.copy()] for o in obs]
    rec_mask = [[m.copy()] for m in info["action_mask"]]
    rec_rew = [[0.0] for _ in range(n)]
    acts_by_env = [[] for _ in range(n)]
    finished = np.zeros(n, bool)
    for _ in range(2000):
        acts = choose(info["action_mask"])
        obs, rew, term, trunc, info = env.step(acts)
        for b in range(n):
            if finished[b]:
                continue
            acts_by_env[b].append(int(acts[b]))
            if term[b]:
                finished[b] = True
                rec_obs[b].append(info["final_obs"][b])
                rec_mask[b].append(None)
                assert info["final_info"]["seed"][b] == seed + b
            else:
                rec_obs[b].append(obs[b].copy())
                rec_mask[b].append(info["action_mask"][b].copy())
            rec_rew[b].append(float(rew[b]))
        if finished.all():
            break
    assert finished.all()
    for b in range(n):
        opp_rng = seed_rng(seed, n)[b: b + 1].copy()
        traj = _replay_single(seed + b, int(seats[b]), acts_by_env[b], opp, opp_rng)
        assert len(traj) == len(rec_obs[b])
        for k, (o, m, r) in enumerate(traj):
            np.testing.assert_array_equal(o, rec_obs[b][k], err_msg=f"env {b} step {k}")
            if m is None:
                assert rec_mask[b][k] is None
            else:
                np.testing.assert_array_equal(m, rec_mask[b][k])
            assert r == rec_rew[b][k]


def test_opponent_callable_is_told_its_games():
    """During an opponent call ``env.opponent_games`` names the game of each row: an
    opponent seat is to move there, and the row's mask and observation are that game's."""
    n = 16
    calls = []

    def opponent(obs, mask):
        games = env.opponent_games
        st = env.game.states
        assert len(games) == len(obs) == len(mask)
        assert (st["current"][games] != env._learner[games]).all()
        np.testing.assert_array_equal(mask, env.game.masks[games])
        want = np.zeros_like(obs)
        encode_observations(st[games], VARIANT.spec, st["current"][games].astype(np.int64), want)
        np.testing.assert_array_equal(obs, want)
        calls.append(len(games))
        return lowest_legal(obs, mask)

    env = RummyVectorEnv(VARIANT, n, seed=5, opponent=opponent)
    obs, info = env.reset()
    choose = learner_policy(2, n)
    for _ in range(60):
        obs, *_, info = env.step(choose(info["action_mask"]))
    assert len(calls) > 60 and min(calls) < n     # some calls serve only part of the batch


def test_equivalence_with_aec_env():
    """Game i of the vector env (seed s) is the AEC env reset with seed s + i."""
    from mountain_rummy_env import mountain_rummy_v0

    n, seed = 3, 77
    venv = RummyVectorEnv(VARIANT, n, seed=seed, opponent=lowest_legal, learner_seat=0)
    obs, info = venv.reset()
    choose = learner_policy(5, n)
    # step the vector env and mirror every move in AEC envs
    aecs = []
    for b in range(n):
        e = mountain_rummy_v0.raw_env()
        e.reset(seed=seed + b)
        aecs.append(e)

    def aec_opponent(e):
        while e.agent_selection != "player_0" and not e.terminations["player_0"]:
            ob = e.observe(e.agent_selection)
            e.step(int(lowest_legal(ob["observation"][None], ob["action_mask"][None])[0]))

    for e in aecs:
        aec_opponent(e)
    live = np.ones(n, bool)
    for _ in range(3000):
        for b, e in enumerate(aecs):
            if live[b]:
                ob = e.observe("player_0")
                np.testing.assert_array_equal(ob["observation"], obs[b])
                np.testing.assert_array_equal(ob["action_mask"], info["action_mask"][b])
        acts = choose(info["action_mask"])
        obs, rew, term, trunc, info = venv.step(acts)
        for b, e in enumerate(aecs):
            if not live[b]:
                continue
            e.step(int(acts[b]))
            aec_opponent(e)
            if term[b]:
                assert e.terminations["player_0"]
                assert rew[b] == e._cumulative_rewards["player_0"] or rew[b] == e.rewards["player_0"]
                np.testing.assert_array_equal(e.observe("player_0")["observation"], info["final_obs"][b])
                live[b] = False
        if not live.any():
            break
    assert not live.any()


def test_int8_observations_and_seat_options():
    env = RummyVectorEnv(VARIANT, 4, seed=1, obs_dtype="int8", learner_seat=1)
    obs, info = env.reset()
    assert obs.dtype == np.int8 and (info["learner_seat"] == 1).all()
    assert all(env.single_observation_space.contains(o) for o in obs)
    # the same games in float32: int8 is the quantised float32 view (binary features equal)
    ref = RummyVectorEnv(VARIANT, 4, seed=1, learner_seat=1)
    f, _ = ref.reset()
    scale = O.observation_scale(VARIANT)
    rng = seed_rng(2, 4)
    acts = np.zeros(4, np.int64)
    for _ in range(50):
        assert np.array_equal(obs, np.floor(f / scale + 0.5).astype(np.int8))
        assert np.abs(obs * scale - f).max() <= 0.5 / 127 + 1e-6
        sample_masked(info["action_mask"], rng, acts)
        obs, _, term, _, info = env.step(acts)
        f, *_ = ref.step(acts)
        for b in np.flatnonzero(term):
            assert info["final_obs"][b].dtype == np.int8
    assert obs.nbytes * 4 == f.nbytes
    with pytest.raises(ValueError):
        RummyVectorEnv(VARIANT, 4, learner_seat=2)
    with pytest.raises(ValueError):
        RummyVectorEnv(VARIANT, 4, opponent="greedy")


def test_episode_game_rewards_per_hand():
    v = mountain_variant(episode="game", target_score=250)
    env = RummyVectorEnv(v, 8, seed=5)
    obs, info = env.reset()
    rng = seed_rng(3, 8)
    acts = np.zeros(8, np.int64)
    hands = terms = 0
    for _ in range(1500):
        sample_masked(info["action_mask"], rng, acts)
        obs, rew, term, trunc, info = env.step(acts)
        hands += int(info["hand_over"].sum())
        terms += int(term.sum())
        for b in np.flatnonzero(term):
            assert info["final_info"]["summary"][b]["game_winner"] >= 0
    assert hands > terms > 0


def test_sample_masked_uniform_and_legal():
    masks = np.zeros((3, 10), np.int8)
    masks[0, [1, 4, 7]] = 1
    masks[1, 9] = 1
    rng = seed_rng(0, 3)
    out = np.zeros(3, np.int64)
    counts = np.zeros(10)
    for _ in range(3000):
        sample_masked(masks, rng, out)
        counts[out[0]] += 1
        assert out[1] == 9 and out[2] == -1
    assert set(np.flatnonzero(counts)) == {1, 4, 7}
    assert counts[[1, 4, 7]].min() > 850


def test_vector_env_factory():
    from mountain_rummy_env.envs.vector import vector_env_factory

    make = vector_env_factory(mountain_variant)
    env = make(num_envs=2, seed=4, num_jokers=0)
    obs, _ = env.reset()
    assert env.variant.deck.num_jokers == 0 and obs.shape[0] == 2
