"""The variants of the German kernels on every adapter: German Rummy for 2, 3, 4 and 6
seats, Crazy Rummy for 3, 4 and 6: the PettingZoo suites (api, seed, parallel, render),
Gymnasium and SB3 ``check_env``, the vector env, seat-relative observations that never show
hidden cards (GE-1 / CR-1 deals, GE-9 / CR-5 per-seat rewards)."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest

from mountain_rummy_env import ConfigError, Game, make_variant
from mountain_rummy_env.core.state import LOC_FACEDOWN, LOC_HAND, LOC_STOCK, LOC_TABLE
from mountain_rummy_env.envs import observation as O
from mountain_rummy_env.registry import VARIANTS

SEATS = {"german": (2, 3, 4, 6), "crazy": (3, 4, 6), "robbers": (2, 4, 6)}
TABLES = [(name, seats) for name, counts in SEATS.items() for seats in counts]


def module(name: str):
    """The variant's PettingZoo module (``german_rummy_v0``, ``crazy_rummy_v0``)."""
    return VARIANTS[name].import_env_module()


@pytest.mark.parametrize("name, seats", TABLES)
def test_pettingzoo_api_and_parallel(name, seats):
    from pettingzoo.test import api_test, parallel_api_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = module(name).env(num_players=seats)
        api_test(env, num_cycles=200)
        assert env.possible_agents == [f"player_{p}" for p in range(seats)]
        parallel_api_test(module(name).parallel_env(num_players=seats), num_cycles=200)


@pytest.mark.parametrize("name, seats", [("german", 2), ("german", 4), ("crazy", 3), ("crazy", 6),
                                         ("robbers", 2), ("robbers", 6)])
def test_pettingzoo_seed_and_render(name, seats, capsys):
    from pettingzoo.test import render_test, seed_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda **kw: module(name).env(num_players=seats, **kw), num_cycles=200)
        render_test(lambda **kw: module(name).env(num_players=seats, **kw))


@pytest.mark.parametrize("name, seats", TABLES)
def test_gymnasium_and_sb3_check_env(name, seats):
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    single = module(name).SingleAgentEnv
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(single(num_players=seats, illegal_action="terminate"))
        sb3_check_env(single(num_players=seats, illegal_action="terminate", seat="rotate"))
        check_env(gymnasium.make(VARIANTS[name].gym_ids[0], num_players=seats,
                                 illegal_action="terminate").unwrapped)


@pytest.mark.parametrize("name", SEATS)
def test_single_agent_seats_and_opponent_lists(name):
    single = module(name).SingleAgentEnv
    env = single(num_players=4, seat=2)
    env.reset(seed=1)
    assert env.game.current_player(0) == 2
    with pytest.raises(ConfigError, match="0..3"):
        single(num_players=4, seat=4)
    with pytest.raises(ConfigError, match="list of 3"):
        single(num_players=4, opponent=[None, None])
    # each other seat plays its own policy: seat offsets 1, 2, 3 after the agent
    seen = {1: 0, 2: 0, 3: 0}

    def policy(k):
        def act(obs, mask):
            seen[k] += 1
            return int(np.flatnonzero(mask)[0])
        return act

    env = single(num_players=4, seat="rotate", opponent=[policy(1), policy(2), policy(3)])
    for seed in range(3):
        env.reset(seed=seed)
        assert env.seat == seed % 4
        for _ in range(30):
            _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
            if done:
                break
    assert all(n > 0 for n in seen.values())


@pytest.mark.parametrize("name", SEATS)
@pytest.mark.parametrize("mode", ("margin", "points", "win"))
def test_per_seat_rewards_match_the_hand(name, mode):
    """GE-9 / CR-5 results per seat; margin and win are zero-sum for any number of seats."""
    env = module(name).env(num_players=3, reward=mode)
    rng = np.random.default_rng(5)
    env.reset(seed=2)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    last = None
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        last = info.get("hand", last)
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    pts = last["hand_points"]
    values = list(totals.values())
    if mode == "points":
        assert values == [float(p) for p in pts]
    else:
        assert sum(values) == pytest.approx(0.0)
    if mode == "margin":
        assert values[0] == pytest.approx(pts[0] - (pts[1] + pts[2]) / 2)


def _positions(name, seats, count, seed):
    game = Game(make_variant(name, num_players=seats), 1)
    rng = np.random.default_rng(seed)
    game.reset(seed=seed)
    out = []
    while len(out) < count:
        if game.done(0):
            game.reset(seed=int(rng.integers(1 << 30)))
        out.append(game.states.copy())
        game.step_one(0, int(rng.choice(game.legal_actions(0))))
    return game.variant, out


def _encode(variant, states, seat):
    out = np.zeros((1, O.observation_size(variant)), np.float32)
    O.encode_observations(states, variant.spec, np.array([seat]), out)
    return out[0]


@pytest.mark.parametrize("name", SEATS)
@pytest.mark.parametrize("seats", (3, 6))
def test_no_hidden_cards_in_any_seats_view(name, seats):
    """Every other seat's unknown cards, the stock and face-down cards are one UNSEEN union:
    swapping any two of them leaves a seat's observation unchanged (with three or more seats
    the third seat's hand used to fall through), while its own hand shows."""
    variant, positions = _positions(name, seats, 40, seed=seats)
    lay = O.observation_layout(variant)
    checked = 0
    for states in positions[::4]:
        s = states[0]
        for seat in range(seats):
            loc = s["loc"]
            hidden = np.flatnonzero((loc == LOC_STOCK) | (loc == LOC_FACEDOWN) |
                                    ((loc >= LOC_HAND) & (loc != LOC_HAND + seat) & (s["public"] == 0)))
            base = _encode(variant, states, seat)
            unseen = np.flatnonzero(base[lay.card_plane(O.P_UNSEEN)])
            assert unseen.tolist() == hidden.tolist()
            a = hidden[0]
            elsewhere = hidden[loc[hidden] != loc[a]]     # a hidden card in another place
            if not len(elsewhere):
                continue
            b = elsewhere[-1]
            swapped = states.copy()
            t = swapped[0]
            t["loc"][a], t["loc"][b] = loc[b], loc[a]
            for field in ("stock",):
                arr = t[field]
                ia, ib = np.flatnonzero(arr == a), np.flatnonzero(arr == b)
                arr[ia], arr[ib] = b, a
            assert np.array_equal(_encode(variant, swapped, seat), base)
            checked += 1
    assert checked > 10


@pytest.mark.parametrize("name", SEATS)
def test_seat_relative_blocks(name):
    """The next seat's data sits in the 2-seat places; the seats further on in their own blocks,
    absent seats (padding to six) are zeros."""
    variant, positions = _positions(name, 4, 120, seed=9)
    lay = O.observation_layout(variant)
    assert lay.num_seats == 6
    for states in positions[::10]:
        s = states[0]
        loc = s["loc"]
        for seat in range(4):
            obs = _encode(variant, states, seat)
            for k in range(1, 4):
                other = (seat + k) % 4
                size = int((loc == LOC_HAND + other).sum())
                credited = np.flatnonzero((loc == LOC_TABLE) & (s["owner"] == other))
                if k == 1:
                    assert obs[lay.scalar(O.S_OPP_HAND)] * lay.num_cards == pytest.approx(size)
                    plane = lay.card_plane(O.P_TABLE_OPP)
                else:
                    assert obs[lay.seat_scalar(0, k)] * lay.num_cards == pytest.approx(size)
                    plane = lay.seat_plane(0, k)
                assert np.flatnonzero(obs[plane]).tolist() == credited.tolist()
            for k in (4, 5):   # no such seats at a 4-seat table
                assert not obs[lay.seat_plane(0, k)].any() and not obs[lay.seat_plane(1, k)].any()
                assert obs[lay.seat_scalar(0, k)] == 0


@pytest.mark.parametrize("name", SEATS)
def test_vector_env_plays_all_seats_and_pays_the_margin(name):
    """The learner's reward is its hand points minus the mean of the three other seats'
    (the padded seats 4 and 5 take no part)."""
    short = {"max_turns": 6, "max_edits": 8} if name == "robbers" else {}   # random play is long
    env = module(name).vector_env(4, seed=3, num_players=4, **short)
    obs, info = env.reset(seed=3)
    assert obs.shape == (4, O.observation_size(env.variant))
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terms, truncs, info = env.step(actions)
        for b in np.flatnonzero(terms):
            if info["final_info"]["_summary"][b]:
                pts = info["final_info"]["summary"][b]["hand_points"]
                me = info["final_info"]["learner_seat"][b]
                assert len(pts) == 4
                assert rewards[b] == pytest.approx(pts[me] - (sum(pts) - pts[me]) / 3)
                ended += 1
    assert ended > 0
    assert env.game.states["current"].max() <= 3
