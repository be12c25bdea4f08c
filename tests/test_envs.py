"""Environment adapters: PettingZoo AEC / parallel, Gymnasium single-agent, observation encoder.

Rule IDs named where a test checks one: MR-7 (turn structure, taken cards), MR-10 (response),
MR-12/MR-13 (hand scoring -> rewards), MR-14 (game end).
"""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest

import mountain_rummy_env as mre
from mountain_rummy_env import ConfigError, Game, IllegalActionError, mountain_rummy_v0, mountain_variant
from mountain_rummy_env.core.state import LOC_FACEDOWN, LOC_HAND, LOC_STOCK, PHASE_RESPONSE
from mountain_rummy_env.envs import observation as O
from mountain_rummy_env.envs import SingleAgentEnv

VARIANT = mountain_variant()
C = VARIANT.spec.num_cards
LAYOUT = O.observation_layout(VARIANT)


def _random_aec_games(env, games, seed=0, check=None):
    """Play ``games`` random games through the AEC loop; returns (steps, per-game records)."""
    rng = np.random.default_rng(seed)
    steps = 0
    records = []
    for g in range(games):
        env.reset(seed=seed * 100_000 + g)
        totals = {a: 0.0 for a in env.possible_agents}
        last_info = {}
        for agent in env.agent_iter():
            obs, reward, term, trunc, info = env.last()
            totals[agent] += reward
            if "hand" in info:
                last_info[agent] = info["hand"]
            if term or trunc:
                action = None
            else:
                mask = obs["action_mask"]
                assert mask.any(), "the acting agent has no legal action"
                action = int(rng.choice(np.flatnonzero(mask)))
                if check is not None:
                    check(env, agent, obs)
            env.step(action)
            steps += 1
        records.append((totals, last_info))
    return steps, records


# ---------------------------------------------------------------------------------------
# PettingZoo API


def test_pettingzoo_api():
    from pettingzoo.test import api_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(mountain_rummy_v0.env(), num_cycles=300)
        api_test(mountain_rummy_v0.env(episode="game", target_score=60), num_cycles=300)


def test_pettingzoo_seed():
    from pettingzoo.test import seed_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(mountain_rummy_v0.env, num_cycles=300)


def test_pettingzoo_parallel_api():
    from pettingzoo.test import parallel_api_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parallel_api_test(mountain_rummy_v0.parallel_env(), num_cycles=300)


def test_pettingzoo_render(capsys):
    from pettingzoo.test import render_test
    render_test(mountain_rummy_v0.env)
    e = mountain_rummy_v0.env(render_mode="ansi")
    e.reset(seed=3)
    text = e.render()
    assert "player_0 hand (13)" in text and "Legal moves for" in text and "draw stock" in text
    assert any(sym in text for sym in "\u2663\u2666\u2665\u2660")


def test_metadata_spaces_and_masks():
    e = mountain_rummy_v0.raw_env()
    assert e.metadata["name"] == "mountain_rummy_v0" and e.metadata["is_parallelizable"]
    assert set(e.metadata["render_modes"]) == {"human", "ansi"}
    assert e.observation_space("player_0") is e.observation_space("player_0")
    assert e.action_space("player_1") is e.action_space("player_1")
    e.reset(seed=5)
    acting = e.agent_selection
    other = [a for a in e.agents if a != acting][0]
    obs_a, obs_o = e.observe(acting), e.observe(other)
    assert obs_a["action_mask"].dtype == np.int8 and obs_a["action_mask"].any()
    assert not obs_o["action_mask"].any()
    for a, o in ((acting, obs_a), (other, obs_o)):
        assert o in e.observation_space(a)
        hand = e.game.hand(0, int(a[-1]))
        assert np.flatnonzero(o["observation"][LAYOUT.card_plane(O.P_HAND)]).tolist() == sorted(hand)
    st = e.state()
    assert st in e.state_space and st.shape == (O.state_size(VARIANT),)
    assert e.agent_selection == f"player_{e.game.current_player(0)}"


def test_planes_layout():
    e = mountain_rummy_v0.raw_env(observation_layout="planes")
    e.reset(seed=2)
    o = e.observe(e.agent_selection)
    assert o["observation"].shape == O.planes_shape(VARIANT) == (O.NUM_CARD_PLANES + LAYOUT.max_melds + O.NUM_SCALARS, C)
    assert o in e.observation_space(e.agent_selection)
    flat = mountain_rummy_v0.raw_env()
    flat.reset(seed=2)
    f = flat.observe(flat.agent_selection)["observation"]
    assert np.array_equal(o["observation"], O.to_planes(f[None], VARIANT)[0])


def test_reset_options_deck_and_dealer():
    deck = Game(VARIANT, 1).variant.deck
    order = list(range(C))[::-1]
    e = mountain_rummy_v0.raw_env()
    e.reset(seed=0, options={"deck": order, "dealer": 1})
    assert e.game.states[0]["dealer"] == 1 and e.agent_selection == "player_0"
    # MR-1: 13 cards each, dealt one at a time from the top starting after the dealer
    assert e.game.hand(0, 0) == sorted(order[0:26:2], key=lambda c: (VARIANT.spec.card_face[c], c))
    text = deck.cards_text(order)
    e.reset(seed=0, options={"deck": text, "dealer": 1})
    assert e.game.discard_pile(0) == [order[26]]
    with pytest.raises(ValueError):
        e.reset(options={"deck": order[:-1]})


def test_config_errors_and_options_pass_through():
    with pytest.raises(ConfigError):
        mountain_rummy_v0.raw_env(num_jokers=3)
    with pytest.raises(ConfigError):
        mountain_rummy_v0.raw_env(no_such_option=1)
    with pytest.raises(ConfigError):
        mountain_rummy_v0.raw_env(reward="money")
    with pytest.raises(ConfigError):
        SingleAgentEnv(seat=2)
    e = mountain_rummy_v0.raw_env(max_turns=3, camp_response="respond")
    assert e.variant.spec.max_turns == 3 and e.variant.spec.camp_respond
    _, records = _random_aec_games(e, 3)
    assert all(info["player_0"]["end"] == "exhausted" for _, info in records)


@pytest.mark.slow
def test_fewer_jokers():
    """num_jokers changes the card count (a separate numba compile of the core, ~100 s once)."""
    for jokers in (0, 1):
        e = mountain_rummy_v0.raw_env(num_jokers=jokers)
        assert e.variant.deck.num_cards == 52 + jokers
        assert O.observation_size(e.variant) == (O.NUM_CARD_PLANES + (52 + jokers) // 3) * (52 + jokers) + O.NUM_SCALARS
        _, records = _random_aec_games(e, 20)
        _check_records(records)


def _illegal(env):
    return int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"] == 0)[0])


def test_raw_env_raises_illegal_and_changes_nothing():
    e = mountain_rummy_v0.raw_env()
    e.reset(seed=1)
    before = e.game.states.tobytes(), e.game.masks.copy(), e.agent_selection
    with pytest.raises(IllegalActionError, match="legal:"):
        e.step(_illegal(e))
    assert (e.game.states.tobytes(), e.agent_selection) == (before[0], before[2])
    assert np.array_equal(e.game.masks, before[1]) and not any(e.terminations.values())


@pytest.mark.parametrize("reward,mover_gets,other_gets", [
    ("margin", -506.0, 506.0), ("points", -446.0, 0.0), ("win", -1.0, 1.0)])
def test_wrapped_env_terminates_an_illegal_move_with_the_penalty(reward, mover_gets, other_gets):
    """env() (PettingZoo's classic wrapping) ends the game on an illegal move: the mover gets
    the default penalty of its reward mode, the other seat the zero-sum counterpart (0 for
    points); raw_env(illegal_action="terminate") does the same."""
    for e in (mountain_rummy_v0.env(reward=reward),
              mountain_rummy_v0.raw_env(reward=reward, illegal_action="terminate")):
        e.reset(seed=1)
        mover = e.agent_selection
        other = next(a for a in e.possible_agents if a != mover)
        before = e.unwrapped.game.states.tobytes()
        e.step(_illegal(e))
        assert all(e.terminations.values()) and not any(e.truncations.values())
        assert e.rewards == {mover: mover_gets, other: other_gets}
        assert all(info["illegal_action"] == mover for info in e.infos.values())
        assert e.unwrapped.game.states.tobytes() == before       # the game was not played on
        returns = {}
        for agent in e.agent_iter():
            obs, r, term, trunc, info = e.last()
            assert term and not obs["action_mask"].any()
            returns[agent] = r
            e.step(None)
        assert returns == {mover: mover_gets, other: other_gets}


@pytest.mark.parametrize("make", [mountain_variant, mre.gin_variant,
                                  lambda: mre.gin_variant(openspiel_compatible=True)])
def test_illegal_penalty_is_no_better_than_the_worst_legal_hand(make):
    """The default penalty is <= the variant's bound of the worst hand in every reward mode
    (the bounds derived in docs/rewards.md), and random legal hands stay within the bounds."""
    from mountain_rummy_env.envs.aec import illegal_penalty
    v = make()
    worst = {"margin": v.lowest_hand_margin(), "points": v.lowest_hand_points(), "win": -1}
    for mode, bound in worst.items():
        assert illegal_penalty(v, mode) <= min(bound, -1)
    g = Game(v, 1)
    rng = np.random.default_rng(0)
    for seed in range(60):
        g.reset(seed=seed)
        while not g.done(0):
            g.step_one(0, int(rng.choice(g.legal_actions(0))))
        pts = g.summary(0).hand_points
        assert min(pts) >= worst["points"] and min(pts[0] - pts[1], pts[1] - pts[0]) >= worst["margin"]


def test_illegal_penalty_values_and_options():
    """The bounds as documented: Mountain -506 / -446 (2 jokers), -491 / -431 (1), -476 / -416
    (0); Gin -125 and 0 (so -1). A chosen illegal_reward above the bound is refused."""
    from mountain_rummy_env.envs.aec import illegal_penalty
    for jokers, margin, points in ((2, -506, -446), (1, -491, -431), (0, -476, -416)):
        v = mountain_variant(num_jokers=jokers)
        assert (v.lowest_hand_margin(), v.lowest_hand_points()) == (margin, points)
    gin = mre.gin_variant()
    assert (gin.lowest_hand_margin(), gin.lowest_hand_points()) == (-125, 0)
    assert [illegal_penalty(gin, m) for m in ("margin", "points", "win")] == [-125, -1, -1]
    assert mre.gin_variant(gin_bonus=0, undercut_bonus=200).lowest_hand_margin() == -210
    with pytest.raises(ConfigError, match="illegal_reward must be a number <= -506"):
        mountain_rummy_v0.env(illegal_reward=-1)
    with pytest.raises(ConfigError, match="illegal_action"):
        mountain_rummy_v0.raw_env(illegal_action="ignore")
    e = mountain_rummy_v0.env(illegal_reward=-1000)
    e.reset(seed=1)
    mover = e.agent_selection
    e.step(_illegal(e))
    assert e.rewards[mover] == -1000


def test_reset_options_set_a_position():
    """Both adapters take Game.reset's position as reset options (other keys are ignored)."""
    position = {"scores": [962, 991], "hand_no": 2, "dealer": 0, "next_decks": [list(range(54))],
                "unrelated": 1}
    config = dict(episode="game", max_turns=1)   # one turn: draw and discard end the hand
    for env in (mountain_rummy_v0.raw_env(**config), SingleAgentEnv(seat=1, **config)):
        env.reset(seed=3, options=position)
        s = env.game.states[0]
        assert s["scores"].tolist() == [962, 991] and s["hand_no"] == 2 and s["dealer"] == 0
        drawn = env.game.stock(0)[0]
        for text in ("draw stock", "discard " + VARIANT.deck.card_text(drawn)):
            env.step(VARIANT.parse_action(text))
        assert env.game.states[0]["deck"].tolist() == list(range(54))   # the scripted hand 2
    with pytest.raises(ValueError, match="dealer"):
        env.reset(seed=3, options={"dealer": 5})


def test_order_and_bounds_checks_without_wrappers():
    """env() is the raw class (no wrapper layers) and keeps the checks of PettingZoo's
    OrderEnforcingWrapper and AssertOutOfBoundsWrapper."""
    e = mountain_rummy_v0.env()
    assert type(e) is mountain_rummy_v0.raw_env and e.unwrapped is e
    for name in ("agents", "num_agents", "rewards", "terminations", "infos", "agent_selection"):
        with pytest.raises(AttributeError, match=f"{name} cannot be accessed before reset"):
            getattr(e, name)
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed before reset"):
        e.last()
    for call in (lambda: e.step(0), lambda: e.observe("player_0"), e.state, e.agent_iter, e.render):
        with pytest.raises(AssertionError, match="reset"):
            call()
    e.reset(seed=1)
    with pytest.raises(AssertionError, match="step\\(\\) or reset\\(\\)"):
        for _ in e.agent_iter():
            pass                                    # no step between two agents
    for bad in (10**6, -1, None, 1.5):              # outside Discrete(n): raises in every mode
        for env in (e, mountain_rummy_v0.raw_env()):
            env.reset(seed=1)
            with pytest.raises(IllegalActionError, match="not in the action space"):
                env.step(bad)
            assert not any(env.terminations.values())
    e.step(_illegal(e))                              # in the space but illegal: terminates
    for agent in e.agent_iter():
        e.step(None)
    assert not e.agents
    from pettingzoo.utils.env_logger import EnvLogger
    EnvLogger.flush()
    e.step(None)
    assert EnvLogger.mqueue and "step() called after all agents" in EnvLogger.mqueue[-1]


def test_observations_encoded_once_per_step():
    """observe() encodes on request and returns the same arrays until the next step."""
    e = mountain_rummy_v0.env()
    e.reset(seed=4)
    agent = e.agent_selection
    first = e.observe(agent)
    again, *_ = e.last()
    assert again["observation"] is first["observation"]
    assert again["action_mask"] is first["action_mask"]
    e.step(int(np.flatnonzero(first["action_mask"])[0]))
    after = e.observe(agent)
    assert after["observation"] is not first["observation"]
    assert not np.array_equal(after["observation"], first["observation"])


@pytest.mark.parametrize("bad", ["float16", "uint8", "bool", "int", None, 8])
def test_obs_dtype_bad_values_name_the_allowed_ones(bad):
    from mountain_rummy_env.envs.vector import RummyVectorEnv
    for make in (mountain_rummy_v0.raw_env, mountain_rummy_v0.env, mountain_rummy_v0.parallel_env,
                 SingleAgentEnv, lambda obs_dtype: RummyVectorEnv(VARIANT, 2, obs_dtype=obs_dtype),
                 lambda obs_dtype: mountain_rummy_v0.vector_env(2, obs_dtype=obs_dtype)):
        with pytest.raises(ConfigError, match="obs_dtype must be one of 'float32', 'int8'"):
            make(obs_dtype=bad)


def _quantised(f, layout="flat"):
    """The int8 encoding of float32 observations ``f``: scaled features x 127, rounded."""
    scale = 1 / O.observation_scale(VARIANT, layout)
    return np.floor(f * scale + 0.5).astype(np.int8)


@pytest.mark.parametrize("layout", ["flat", "planes"])
def test_int8_aec_observations_carry_the_float32_information(layout):
    """obs_dtype='int8' gives the float32 observation quantised (binary features equal, scaled
    ones round(127 x)), a quarter of the bytes; observation_scale turns it back."""
    f_env = mountain_rummy_v0.env(observation_layout=layout)
    q_env = mountain_rummy_v0.env(observation_layout=layout, obs_dtype=np.int8)
    scale = O.observation_scale(VARIANT, layout)
    rng = np.random.default_rng(0)
    for env in (f_env, q_env):
        env.reset(seed=6)
    for step in range(300):
        for agent in f_env.agents:
            f, q = f_env.observe(agent), q_env.observe(agent)
            assert q["observation"].dtype == np.int8
            assert q["observation"].nbytes * 4 == f["observation"].nbytes
            assert q in q_env.observation_space(agent)
            assert np.array_equal(q["observation"], _quantised(f["observation"], layout))
            assert np.abs(q["observation"] * scale - f["observation"]).max() <= 0.5 / 127 + 1e-6
            assert np.array_equal(q["action_mask"], f["action_mask"])
        obs, _, term, trunc, _ = f_env.last()
        action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
        for env in (f_env, q_env):
            env.step(action)
        if not f_env.agents:
            break
    assert step > 20
    assert np.array_equal(q_env.state(), f_env.state())


def test_pettingzoo_suites_with_int8_observations():
    from pettingzoo.test import api_test, parallel_api_test, seed_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(mountain_rummy_v0.env(obs_dtype="int8"), num_cycles=200)
        seed_test(lambda **kw: mountain_rummy_v0.env(obs_dtype="int8", **kw), num_cycles=200)
        parallel_api_test(mountain_rummy_v0.parallel_env(obs_dtype="int8"), num_cycles=200)


# ---------------------------------------------------------------------------------------
# rewards (MR-12, MR-13, MR-14)


def _check_records(records, mode="margin"):
    for totals, info in records:
        hand = info["player_0"]
        pts = hand["hand_points"]
        if mode == "margin":
            assert totals["player_0"] == pts[0] - pts[1]
            assert totals["player_1"] == pts[1] - pts[0]
        assert info["player_1"] == hand


def test_random_games_rewards_match_hand_summary():
    e = mountain_rummy_v0.raw_env()
    steps, records = _random_aec_games(e, 300, seed=1)
    _check_records(records)
    assert steps > 300 * 20


@pytest.mark.slow
def test_random_games_rewards_match_hand_summary_many():
    e = mountain_rummy_v0.raw_env()
    _, records = _random_aec_games(e, 5000, seed=2)
    _check_records(records)


@pytest.mark.parametrize("mode", ["points", "win"])
def test_reward_modes(mode):
    e = mountain_rummy_v0.raw_env(reward=mode)
    _, records = _random_aec_games(e, 20, seed=3)
    for totals, info in records:
        hand = info["player_0"]
        if mode == "points":
            assert [totals["player_0"], totals["player_1"]] == hand["hand_points"]
        else:
            expect = [0, 0] if hand["winner"] < 0 else [1 if p == hand["winner"] else -1 for p in (0, 1)]
            assert [totals["player_0"], totals["player_1"]] == expect


def test_game_episode_rewards_sum_to_totals():
    """episode='game': every hand pays its margin; the episode ends at game over (MR-14)."""
    e = mountain_rummy_v0.raw_env(episode="game", target_score=150)
    _, records = _random_aec_games(e, 8, seed=4)
    for totals, info in records:
        hand = info["player_0"]
        assert hand["game_winner"] in (0, 1)
        t = hand["totals"]
        assert hand["totals"][hand["game_winner"]] >= 150
        assert totals["player_0"] == t[0] - t[1] and totals["player_1"] == t[1] - t[0]


# ---------------------------------------------------------------------------------------
# observation: content and no hidden-information leak


def _random_positions(n, seed):
    """Random mid-hand positions (states copied) from random play, incl. response phases."""
    rng = np.random.default_rng(seed)
    g = Game(VARIANT, 1)
    out = []
    while len(out) < n:
        g.reset(seed=int(rng.integers(1 << 30)))
        stop = int(rng.integers(1, 120))
        for _ in range(stop):
            if g.done(0):
                break
            g.step_one(0, int(rng.choice(np.flatnonzero(g.masks[0]))))
            if g.states[0]["phase"] == PHASE_RESPONSE and rng.random() < 0.5:
                break
        if not g.done(0):
            out.append(g.states.copy())
    return out


def _encode(states, player):
    out = np.zeros((1, O.observation_size(VARIANT)), np.float32)
    O.encode_observations(states, VARIANT.spec, np.array([player]), out)
    return out[0]


def _hidden_from(s, player):
    """Card ids hidden from ``player``: opponent's hidden hand, stock, opponent's face-down."""
    opp = 1 - player
    loc = s["loc"]
    hidden = (loc == LOC_STOCK) | ((loc == LOC_HAND + opp) & (s["public"] == 0))
    if s["ender"] != player:
        hidden |= loc == LOC_FACEDOWN
    return np.flatnonzero(hidden)


def _permute(states, cards, perm):
    """Relabel ``cards`` by ``perm`` (card cards[i] takes the place of cards[perm[i]])."""
    new = states.copy()
    s, t = states[0], new[0]
    mapping = np.arange(C)
    mapping[cards] = cards[perm]  # the card now at old card c's place
    for field in ("loc", "meld_of", "shown", "owner", "taken", "public"):
        t[field][mapping] = s[field]
    for field in ("stock", "deck"):
        t[field][:] = mapping[s[field]]
    return new


def test_no_hidden_information_leak():
    rng = np.random.default_rng(7)
    checked = 0
    for states in _random_positions(60, seed=11):
        for player in (0, 1):
            s = states[0]
            base = _encode(states, player)
            hidden = _hidden_from(s, player)
            if len(hidden) < 2:
                continue
            for _ in range(3):
                perm = rng.permutation(len(hidden))
                other = _permute(states, hidden, perm)
                assert np.array_equal(_encode(other, player), base), "observation depends on hidden cards"
                checked += 1
            # a permutation does change what the clairvoyant view / the opponent sees
            cl = np.zeros((2, O.clairvoyant_size(VARIANT)), np.float32)
            swapped = _permute(states, hidden, np.roll(np.arange(len(hidden)), 1))
            O.encode_clairvoyant(np.concatenate([states, swapped]), VARIANT.spec,
                                 np.array([player, player]), cl)
            assert not np.array_equal(cl[0], cl[1])
            # ...and the player's own hand change is visible
            mine = np.flatnonzero(s["loc"] == LOC_HAND + player)
            if len(mine):
                cards = np.array([mine[0], hidden[0]])
                changed = _permute(states, cards, np.array([1, 0]))
                assert not np.array_equal(_encode(changed, player), base)
    assert checked > 100


def test_observation_planes_content():
    """Discard order, table ownership, opponent's known cards, turn constraints (MR-7)."""
    rng = np.random.default_rng(3)
    for states in _random_positions(40, seed=5):
        s = states[0]
        for p in (0, 1):
            o = _encode(states, p)
            plane = lambda k: o[LAYOUT.card_plane(k)]  # noqa: E731
            pile = s["discard"][: s["discard_len"]]
            assert np.flatnonzero(plane(O.P_DISCARD)).tolist() == sorted(pile.tolist())
            depth = plane(O.P_DISCARD_DEPTH)
            assert [round(float(depth[c]) * C) for c in pile] == list(range(C - len(pile) + 1, C + 1))
            assert plane(O.P_DISCARD_TOP).sum() == (1 if len(pile) else 0)
            if len(pile):
                assert plane(O.P_DISCARD_TOP)[pile[-1]] == 1
            on_table = s["loc"] == 2
            assert np.array_equal(plane(O.P_TABLE_MINE) > 0, on_table & (s["owner"] == p))
            assert np.array_equal(plane(O.P_TABLE_OPP) > 0, on_table & (s["owner"] == 1 - p))
            known = (s["loc"] == LOC_HAND + 1 - p) & (s["public"] == 1)
            assert np.array_equal(plane(O.P_OPP_KNOWN) > 0, known)
            if s["current"] == p:
                taken = (s["loc"] == LOC_HAND + p) & (s["taken"] == 1)
                assert np.array_equal(plane(O.P_HAND_TAKEN) > 0, taken)
                assert o[LAYOUT.scalar(O.S_MY_TURN)] == 1
            else:
                assert not plane(O.P_HAND_TAKEN).any()
            assert o[LAYOUT.scalar(O.S_STOCK)] * C == pytest.approx(s["stock_len"] - s["stock_ptr"])
            # each card is in exactly one of the location planes
            planes = [O.P_HAND, O.P_DISCARD, O.P_TABLE_MINE, O.P_TABLE_OPP, O.P_OPP_KNOWN,
                      O.P_MY_FACEDOWN, O.P_UNSEEN]
            assert np.array_equal(sum(plane(k) > 0 for k in planes), np.ones(C, dtype=int))
            # meld-slot rows show each meld's faces (jokers: declared face + the joker column)
            for m in np.flatnonzero(s["m_kind"]):
                row = o[LAYOUT.meld_row(int(m))]
                cards = [c for c in s["m_cards"][m] if c >= 0]
                assert {int(s["shown"][c]) for c in cards} <= set(np.flatnonzero(row).tolist())
    del rng


def test_int8_output_and_batch_equals_single():
    positions = _random_positions(8, seed=9)
    batch = np.concatenate(positions)
    players = np.array([0, 1] * 4)
    f = np.zeros((8, O.observation_size(VARIANT)), np.float32)
    q = np.zeros((8, O.observation_size(VARIANT)), np.int8)
    O.encode_observations(batch, VARIANT.spec, players, f)
    O.encode_observations(batch, VARIANT.spec, players, q)
    scaled = O.scaled_features(VARIANT)
    assert np.abs(q / 127.0 - f)[:, scaled].max() <= 0.5 / 127 + 1e-6
    assert np.array_equal(q[:, ~scaled], f[:, ~scaled].astype(np.int8))
    assert set(np.unique(f[:, ~scaled]).tolist()) <= {0.0, 1.0}
    for b in range(8):
        assert np.array_equal(f[b], _encode(positions[b], int(players[b])))
    st = np.zeros((8, O.state_size(VARIANT)), np.float32)
    O.encode_state(batch, VARIANT.spec, st)
    assert np.array_equal(st[0::2, : LAYOUT.size], f[0::2])


def test_layout_description_covers_everything():
    rows = O.describe_layout(VARIANT)
    covered = np.zeros(LAYOUT.clairvoyant_size, int)
    for _, off, n, _ in rows:
        covered[off: off + n] += 1
    assert (covered == 1).all()


# ---------------------------------------------------------------------------------------
# Gymnasium single-agent env


def test_gymnasium_and_sb3_check_env():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SingleAgentEnv(illegal_action="terminate"))
        check_env(SingleAgentEnv(illegal_action="terminate", seat="rotate", episode="game", target_score=100))
        sb3_check_env(SingleAgentEnv(illegal_action="terminate"))
    # every registered Gymnasium id: tests/test_registry.py


def test_single_agent_int8_observations():
    """obs_dtype='int8': the checkers pass, and each observation is the float32 one quantised."""
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SingleAgentEnv(illegal_action="terminate", obs_dtype="int8"))
        sb3_check_env(SingleAgentEnv(illegal_action="terminate", obs_dtype="int8"))
    f_env, q_env = SingleAgentEnv(seat=1), SingleAgentEnv(seat=1, obs_dtype="int8")
    assert q_env.observation_space.dtype == np.int8
    f, _ = f_env.reset(seed=2)
    q, _ = q_env.reset(seed=2)
    for _ in range(100):
        assert q in q_env.observation_space and np.array_equal(q, _quantised(f))
        action = int(np.flatnonzero(f_env.action_masks())[0])
        f, _, done, _, _ = f_env.step(action)
        q, *_ = q_env.step(action)
        if done:
            break


def test_single_agent_registered_and_plays():
    env = gymnasium.make("MountainRummy-v0", seat=1)
    obs, info = env.reset(seed=4)
    assert obs.shape == (O.observation_size(VARIANT),)
    u = env.unwrapped
    assert u.game.current_player(0) == 1
    total, done, steps = 0.0, False, 0
    while not done:
        mask = u.action_masks()
        obs, r, done, trunc, info = env.step(int(u.np_random.choice(np.flatnonzero(mask))))
        total += r
        steps += 1
    pts = info["hand"]["hand_points"]
    assert total == pts[1] - pts[0]


def test_single_agent_illegal_action_raises():
    env = SingleAgentEnv()
    env.reset(seed=0)
    before = env.game.states.tobytes()
    bad = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError, match="action_masks"):
        env.step(bad)
    with pytest.raises(IllegalActionError):
        env.step(10**6)
    assert env.game.states.tobytes() == before


@pytest.mark.parametrize("reward,penalty", [("margin", -506.0), ("points", -446.0), ("win", -1.0)])
def test_single_agent_illegal_action_terminates_with_the_penalty(reward, penalty):
    env = SingleAgentEnv(illegal_action="terminate", reward=reward)
    env.reset(seed=0)
    bad = int(np.flatnonzero(~env.action_masks())[0])
    _, r, term, trunc, info = env.step(bad)
    assert (r, term, trunc, info) == (penalty, True, False, {"illegal_action": True})
    assert not env.action_masks().any()


def test_single_agent_opponents():
    calls = {"callable": 0, "act": 0}

    def first_legal(observation, mask):
        calls["callable"] += 1
        assert observation.shape == (O.observation_size(VARIANT),)
        return int(np.flatnonzero(mask)[0])

    class ViewAgent:
        def act(self, view, mask):
            calls["act"] += 1
            assert isinstance(view, mre.PlayerView) and view.player == view.current
            return int(np.flatnonzero(mask)[-1])

    for opp in (first_legal, ViewAgent()):
        env = SingleAgentEnv(opponent=opp, seat=1)
        env.reset(seed=1)
        done = False
        while not done:
            _, _, done, _, _ = env.step(int(np.flatnonzero(env.action_masks())[0]))
    assert calls["callable"] > 0 and calls["act"] > 0


def test_single_agent_seeded_reset_is_deterministic():
    a, b = SingleAgentEnv(seat="rotate"), SingleAgentEnv(seat="rotate")
    for env in (a, b):
        env.reset(seed=9)
    for _ in range(40):
        ma, mb = a.action_masks(), b.action_masks()
        assert np.array_equal(ma, mb)
        act = int(np.flatnonzero(ma)[0])
        ra, rb = a.step(act), b.step(act)
        assert np.array_equal(ra[0], rb[0]) and ra[1:3] == rb[1:3]
        if ra[2]:
            break


@pytest.mark.parametrize("obs_dtype", ["float32", "int8"])
def test_maskable_ppo_smoke(obs_dtype):
    torch = pytest.importorskip("torch")
    from sb3_contrib import MaskablePPO
    torch.set_num_threads(1)
    env = SingleAgentEnv(seat="rotate", obs_dtype=obs_dtype)
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [64]}, verbose=0)
    model.learn(total_timesteps=256)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]
