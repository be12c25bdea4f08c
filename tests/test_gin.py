"""Gin Rummy (docs/gin_rummy.md): GR-1 ... GR-5 from explicit deals, options, action text,
and the same PettingZoo / Gymnasium / SB3 / vector checks as Mountain Rummy's adapters."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mountain_rummy_env import ConfigError, Game, GinConfig, IllegalActionError, gin_rummy_v0, gin_variant
from mountain_rummy_env.core import gin as K

VARIANT = gin_variant()
OS_VARIANT = gin_variant(openspiel_compatible=True)


def deal_deck(variant, p0: str, p1: str, up: str, stock: str = "") -> list[int]:
    """Deck order (dealer = player 1) giving p0 (non-dealer) and p1 these hands, the up-card,
    then the stock top first (the rest in id order)."""
    d = variant.deck
    h0, h1 = d.parse_cards(p0), d.parse_cards(p1)
    head = d.parse_cards(up) + d.parse_cards(stock)
    deck = [0] * 20
    deck[0::2], deck[1::2] = h0, h1
    deck += head
    deck += [c for c in range(52) if c not in deck]
    return deck


def new_game(variant, p0, p1, up, stock=""):
    g = Game(variant, 1)
    g.reset(seed=1, deck=deal_deck(variant, p0, p1, up, stock), dealer=1)
    return g


def legal_text(g):
    return sorted(g.variant.action_text(a) for a in g.legal_actions(0))


def play(g, *texts):
    for t in texts:
        g.step_one(0, t)


KNOCKER = "AC 2C 3C 7D 7H 7S 9H TH JH KD"
DEFENDER = "7C QH KH 2D 3D 4D 5S 6S 8S 9D"


# ---------------------------------------------------------------------------------------
# GR-1 up-card offer, GR-2 turn


def test_gr1_upcard_offer_then_forced_stock_draw():
    g = new_game(VARIANT, KNOCKER, DEFENDER, "QC", "4C")
    assert g.current_player(0) == 0 and int(g.states[0]["dealer"]) == 1
    assert legal_text(g) == ["pass", "take QC"]
    play(g, "pass")
    assert g.current_player(0) == 1 and legal_text(g) == ["pass", "take QC"]
    play(g, "pass")
    assert g.current_player(0) == 0 and legal_text(g) == ["draw stock"]
    play(g, "draw stock")
    assert 3 in g.hand(0, 0) and g.discard_pile(0) == VARIANT.deck.parse_cards("QC")


def test_gr1_dealer_takes_after_pass_and_gr2_taken_card_not_discarded():
    g = new_game(VARIANT, KNOCKER, DEFENDER, "QC", "4C")
    play(g, "pass", "take QC")
    legal = legal_text(g)
    assert "discard QC" not in legal and "knock QC" not in legal
    assert len([a for a in legal if a.startswith("discard")]) == 10
    with pytest.raises(IllegalActionError):
        g.step_one(0, "discard QC")
    play(g, "discard 9D")
    assert g.current_player(0) == 0
    assert legal_text(g) == ["draw stock", "take 9D"]       # GR-2: stock or discard top
    play(g, "draw stock")                                    # a stock card may be discarded
    assert "discard 4C" in legal_text(g)


def test_gr2_openspiel_mode_allows_discarding_the_taken_card():
    g = new_game(OS_VARIANT, KNOCKER, DEFENDER, "QC", "4C")
    play(g, "take QC")
    assert "discard QC" in legal_text(g)


# ---------------------------------------------------------------------------------------
# GR-3 knock and gin, GR-4 scoring


def _knock_position(variant, defender=DEFENDER):
    g = new_game(variant, KNOCKER, defender, "QC", "4C")
    play(g, "pass", "pass", "draw stock")
    return g


def test_gr3_knock_needs_deadwood_at_most_knock_card():
    g = _knock_position(VARIANT)
    legal = legal_text(g)
    assert "knock 4C" in legal and "knock KD" in legal          # leaves 10 / gin
    assert "knock 7D" not in legal and "knock 9H" not in legal  # leaves 24 / 30
    g2 = _knock_position(gin_variant(knock_card=9))
    assert "knock 4C" not in legal_text(g2) and "knock KD" in legal_text(g2)


def test_gr3_gr4_knock_layoffs_and_knocker_wins_difference():
    g = _knock_position(VARIANT)
    play(g, "knock 4C")
    assert g.current_player(0) == 0 and int(g.states[0]["g_step"]) == K.KNOCK_MELD
    assert "pass" not in legal_text(g)                       # unmelded 58 > 10
    play(g, "meld AC 2C 3C", "meld 7D 7H 7S")
    assert "pass" not in legal_text(g)
    play(g, "meld 9H TH JH")
    assert legal_text(g) == ["pass"]
    play(g, "pass")
    assert g.current_player(0) == 1
    assert legal_text(g) == ["layoff 7C", "layoff QH", "pass"]
    play(g, "layoff QH")
    assert "layoff KH" in legal_text(g)                      # the run grew
    play(g, "layoff KH", "layoff 7C", "pass")
    assert "meld 2D 3D 4D" in legal_text(g)
    play(g, "meld 2D 3D 4D", "pass")
    sm = g.summary(0)
    assert g.done(0) and sm.end == "knock" and sm.deadwood == (10, 28)
    assert sm.winner == 0 and sm.hand_points == (18, 0) and sm.bonus_kinds == ()


def test_gr3_gin_has_no_layoffs_and_gr4_gin_bonus():
    g = _knock_position(VARIANT)
    play(g, "knock KD", "meld AC 2C 3C 4C", "meld 7D 7H 7S", "meld 9H TH JH", "pass")
    assert g.current_player(0) == 1 and int(g.states[0]["g_step"]) == K.DEF_MELD
    assert not [t for t in legal_text(g) if t.startswith("layoff")]
    play(g, "meld 2D 3D 4D", "pass")
    sm = g.summary(0)
    assert sm.deadwood == (0, 55)                 # 7C QH KH 5S 6S 8S 9D
    assert sm.winner == 0 and sm.hand_points == (55 + 25, 0) and sm.bonus_kinds == ("gin",)


@pytest.mark.parametrize("rest,tie_is_undercut,expect", [
    ("AS AH 2S 3H", True, (0, 3 + 25)),    # defender 7 < knocker 10: undercut
    ("AS AH 2S 6H", True, (0, 25)),        # tie with tie_is_undercut: undercut
    ("AS AH 2S 6H", False, (0, 0)),        # tie without: the knocker wins 0
])
def test_gr4_undercut(rest, tie_is_undercut, expect):
    v = gin_variant(tie_is_undercut=tie_is_undercut)
    g = _knock_position(v, defender="7C QH KH 2D 3D 4D " + rest)
    play(g, "knock 4C", "meld AC 2C 3C", "meld 7D 7H 7S", "meld 9H TH JH", "pass",
         "layoff QH", "layoff KH", "layoff 7C", "pass", "meld 2D 3D 4D", "pass")
    sm = g.summary(0)
    assert sm.hand_points == expect
    assert ("undercut" in sm.bonus_kinds) == (expect[1] > 0)


def test_gr4_openspiel_tie_scores_zero_and_undercut_is_zero_sum():
    for rest, expect in (("AS AH 2S 6H", (0, 0)), ("AS AH 2S 3H", (0, 28))):
        g = _knock_position(OS_VARIANT, defender="7C QH KH 2D 3D 4D " + rest)
        play(g, "knock 4C", "meld AC 2C 3C", "meld 7D 7H 7S", "meld 9H TH JH", "pass",
             "layoff QH", "layoff KH", "layoff 7C", "pass", "meld 2D 3D 4D", "pass")
        assert g.summary(0).hand_points == expect


def test_gr3_openspiel_defect_hand_knocks_here():
    """AH 6S 7S 7H 5S 6H AC 5D 5H 7C + 3S (docs/gin_rummy.md): discarding 7C leaves 10."""
    g = new_game(OS_VARIANT, "AH 6S 7S 7H 5S 6H AC 5D 5H 7C", "2C 3C 4C 8D 9D TD JS QS KS 2H", "3S")
    play(g, "take 3S")
    assert "knock 7C" in legal_text(g)


# ---------------------------------------------------------------------------------------
# GR-5 the wall


def _play_to_end(g, rng, knock=False):
    while not g.done(0):
        legal = g.legal_actions(0)
        texts = [g.variant.action_text(a) for a in legal]
        choices = [a for a, t in zip(legal, texts) if knock or not t.startswith(("knock", "take"))]
        if K.WALL == int(g.states[0]["g_step"]):
            return g
        g.step_one(0, int(rng.choice(choices or legal)))
    return g


def test_gr5_two_stock_cards_without_knock_is_a_draw():
    rng = np.random.default_rng(0)
    for seed in range(5):
        g = Game(VARIANT, 1)
        g.reset(seed=seed)
        _play_to_end(g, rng)
        sm = g.summary(0)
        assert sm.end == "exhausted" and sm.winner == -1 and sm.hand_points == (0, 0)
        assert len(g.stock(0)) == 2


def test_gr5_openspiel_wall_take_to_knock_or_pass():
    rng = np.random.default_rng(1)
    g = Game(OS_VARIANT, 1)
    g.reset(seed=3)
    _play_to_end(g, rng)
    assert int(g.states[0]["g_step"]) == K.WALL and len(g.stock(0)) == 2
    assert set(legal_text(g)) <= {"pass", f"take {g.variant.deck.card_text(g.discard_pile(0)[-1])}"}
    play(g, "pass")
    assert g.done(0) and g.summary(0).hand_points == (0, 0)


# ---------------------------------------------------------------------------------------
# options, action text, game episodes, records


def test_config_validation():
    assert gin_variant().config == GinConfig()
    for bad in ({"knock_card": 11}, {"tie_is_undercut": 1}, {"episode": "match"},
                {"openspiel_compatible": "yes"}, {"max_turns": 0}, {"colour": 1}):
        with pytest.raises(ConfigError):
            gin_variant(**bad)


def test_action_text_round_trip_and_layout():
    v = VARIANT
    assert v.num_actions == 539
    for a in range(v.num_actions):
        assert v.parse_action(v.action_text(a)) == a
    assert v.action_text(v.layout.pass_) == "pass" and v.action_family(0) == "draw"
    assert v.action_family(v.parse_action("layoff 9H")) == "layoff"


def test_episode_game_until_target_and_records_replay():
    from mountain_rummy_env.records import Recorder, replay
    v = gin_variant(episode="game", target_score=30)
    rec = Recorder(v, seed=5)
    rng = np.random.default_rng(5)
    g = rec.game
    while not g.done(0):
        legal = g.legal_actions(0)
        knocks = [a for a in legal if v.action_family(a) == "knock"]
        rec.play(int(knocks[0]) if knocks else int(rng.choice(legal)))
    assert max(g.summary(0).totals) >= 30
    replay(rec.record)


def test_position_near_target_over_scripted_hands():
    """The position API on Gin: totals 80 and 95 (target 100), then two scripted hands. The
    knocker (seat 0) wins 18: 98, the game goes on; the dealer alternates (seat 0 deals) and
    seat 1, now the knocker, wins 18: 113, the game is over."""
    knock = ["pass", "pass", "draw stock", "knock 4C", "meld AC 2C 3C", "meld 7D 7H 7S",
             "meld 9H TH JH", "pass", "layoff QH", "layoff KH", "layoff 7C", "pass",
             "meld 2D 3D 4D", "pass"]
    v = gin_variant(episode="game")
    deck = deal_deck(v, KNOCKER, DEFENDER, "QC", "4C")   # the non-dealer gets KNOCKER
    g = Game(v, 1)
    g.reset(seed=1, deck=deck, dealer=1, scores=[80, 95], next_decks=[deck])
    play(g, *knock)
    sm = g.summary(0)
    assert sm.hand_points == (18, 0) and sm.totals == (98, 95) and sm.game_winner == -1
    assert int(g.states[0]["dealer"]) == 0 and g.current_player(0) == 1
    assert sorted(g.hand(0, 1)) == sorted(v.deck.parse_cards(KNOCKER))   # the scripted deal
    play(g, *knock)
    sm = g.summary(0)
    assert sm.hand_points == (0, 18) and sm.totals == (98, 113) and sm.game_winner == 1


def test_random_games_reach_every_step():
    g = Game(VARIANT, 1)
    rng = np.random.default_rng(2)
    seen = set()
    for seed in range(40):
        g.reset(seed=seed)
        while not g.done(0):
            seen.add(int(g.states[0]["g_step"]))
            legal = g.legal_actions(0)
            assert legal
            knocks = [a for a in legal if VARIANT.action_family(a) == "knock"]
            g.step_one(0, int(knocks[0]) if knocks else int(rng.choice(legal)))
    assert {K.OFFER, K.DRAW, K.DISCARD, K.KNOCK_MELD, K.LAYOFF, K.DEF_MELD} <= seen


# ---------------------------------------------------------------------------------------
# adapters: the same checks as Mountain Rummy's


def test_pettingzoo_api_seed_parallel_render():
    from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(gin_rummy_v0.env(), num_cycles=300)
        api_test(gin_rummy_v0.env(episode="game", target_score=30), num_cycles=300)
        seed_test(gin_rummy_v0.env, num_cycles=300)
        parallel_api_test(gin_rummy_v0.parallel_env(), num_cycles=300)
        render_test(gin_rummy_v0.env)
    e = gin_rummy_v0.env(render_mode="ansi")
    e.reset(seed=0)
    assert e.render().startswith("Gin Rummy")
    assert e.unwrapped.metadata["name"] == "gin_rummy_v0"


def test_gymnasium_and_sb3_check_env():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gin_rummy_v0.SingleAgentEnv(illegal_action="terminate"))
        check_env(gin_rummy_v0.SingleAgentEnv(illegal_action="terminate", seat="rotate",
                                              episode="game", target_score=30))
        sb3_check_env(gin_rummy_v0.SingleAgentEnv(illegal_action="terminate"))
    # GinRummy-v0, like every registered Gymnasium id: tests/test_registry.py


def test_vector_env_plays_gin():
    venv = gin_rummy_v0.vector_env(8, seed=0)
    obs, info = venv.reset()
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(400):
        masks = info["action_mask"]
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rew, term, trunc, info = venv.step(actions)
        ends += int(term.sum())
        assert np.all(rew[~term] == 0)
    assert ends > 0 and obs.shape == (8, venv.single_observation_space.shape[0])
