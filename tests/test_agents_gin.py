"""Gin Rummy baselines (Gin's strategies in ``agents.greedy`` and ``agents.rules``):
positions from explicit deals (GR-1..GR-5 of docs/gin_rummy.md), legality over many hands,
and a strength check that can fail."""

from __future__ import annotations

import numpy as np
import pytest

from agents.greedy import GinGreedyAgent
from agents.random_agent import RandomAgent
from agents.rules import GinRulesAgent
from experiments.play import play_hand
from mountain_rummy_env import Game, gin_variant, player_view
from mountain_rummy_env.core import gin as K
from helpers import agent_move, agent_turn

VARIANT = gin_variant()


def deal(p0: str, p1: str, up: str, stock: str = "", variant=VARIANT) -> Game:
    """A game (dealer = seat 1, so seat 0 is offered the up-card first, GR-1) dealing p0 and
    p1 these hands, then the up-card, then the stock top first (the rest in id order)."""
    d = variant.deck
    h0, h1 = d.parse_cards(p0), d.parse_cards(p1)
    head = d.parse_cards(up) + (d.parse_cards(stock) if stock else [])
    assert len(h0) == len(h1) == 10
    order = [c for pair in zip(h0, h1) for c in pair] + head
    assert len(set(order)) == len(order)
    order += [c for c in range(52) if c not in order]
    g = Game(variant, 1)
    g.reset(seed=0, deck=order, dealer=1)
    assert sorted(g.hand(0, 0)) == sorted(h0) and sorted(g.hand(0, 1)) == sorted(h1)
    return g


def play(g: Game, *texts: str) -> None:
    for t in texts:
        g.step_one(0, t)


def table_melds(g: Game, founder: int) -> set[tuple[str, ...]]:
    d = g.variant.deck
    return {tuple(d.card_text(c) for c in m["cards"])
            for m in g.melds(0) if m["founder"] == founder}


JUNK = "2C 9D KS 4C JD QC 8S 3D"          # no two of these meld together
OPP = "7C QH KH 2D 4D 5S 6S 9S AD 5C"    # meets none of the cards above
P1 = "7H AS QH KH 2D 4D 5D 5S 6S 9C"
KNOCKER = "AC 2C 3C 7D 7H 7S 9H TH JH KD"
DEFENDER = "7C QH KH 2D 3D 4D 5S 6S 8S 9D"


@pytest.fixture(params=[GinGreedyAgent, GinRulesAgent], ids=["greedy", "rules"])
def agent(request):
    return request.param(seed=0)


# ---------------------------------------------------------------------------------------
# both baselines: taking, discarding, knocking, melding, laying off


def test_takes_an_upcard_that_completes_a_meld_gr1_gr2(agent):
    g = deal("5H 6H " + JUNK, OPP, "7H")
    assert player_view(g, 0, 0).step == K.OFFER
    assert agent_move(agent, g) == "take 7H"
    g.step_one(0, "take 7H")
    text = agent_move(agent, g)                        # GR-2: never the card just taken
    assert text.startswith("discard") and text != "discard 7H"


@pytest.mark.parametrize("up", ["AS", "TS"])
def test_passes_an_upcard_that_melds_nothing_gr1(agent, up):
    # taking AS would lower the deadwood (a king out for it) but it melds nothing
    g = deal("5H 6H " + JUNK, OPP, up)
    assert agent_move(agent, g) == "pass"


@pytest.mark.parametrize("thrown,expect", [("AS", "draw stock"), ("7H", "take 7H")])
def test_draw_step_takes_only_a_melding_discard_gr2(agent, thrown, expect):
    g = deal("5H 6H " + JUNK, P1, "TS", "AH 2H")
    play(g, "pass", "pass", "draw stock", "discard KS", "draw stock", f"discard {thrown}")
    assert player_view(g, 0, 0).step == K.DRAW
    assert agent_move(agent, g) == expect


def test_greedy_discards_its_highest_deadwood_card():
    g = deal("5H 6H 7H 2C 9D 4C 3D 8S AS KS", OPP, "TC", "2S")
    play(g, "pass", "pass", "draw stock")
    assert agent_move(GinGreedyAgent(), g) == "discard KS"


@pytest.mark.parametrize("drawn,dk", [("5D", 5), ("4C", 0)])
def test_knocks_when_legal_and_melds_its_best_arrangement_gr3(agent, drawn, dk):
    g = deal(KNOCKER, DEFENDER, "QC", drawn)
    play(g, "pass", "pass", "draw stock")
    assert agent_move(agent, g) == "knock KD"          # dk 5 (or gin), the least deadwood
    g.step_one(0, "knock KD")
    acts = agent_turn(agent, g)                     # the knocker's melds, then pass
    assert acts[-1] == "pass" and all(a.startswith("meld") for a in acts[:-1])
    runs = {("AC", "2C", "3C", "4C")} if dk == 0 else {("AC", "2C", "3C")}
    assert table_melds(g, 0) == runs | {("7D", "7H", "7S"), ("9H", "TH", "JH")}
    assert sorted(g.hand(0, 0)) == ([] if dk == 0 else g.variant.deck.parse_cards("5D"))
    # GR-3: no layoffs after gin
    assert int(g.states[0]["g_step"]) == (K.DEF_MELD if dk == 0 else K.LAYOFF)


def test_defender_lays_off_fitting_cards_then_melds_gr3_gr4(agent):
    g = deal(KNOCKER, DEFENDER, "QC", "5D")
    play(g, "pass", "pass", "draw stock", "knock KD",
         "meld AC 2C 3C", "meld 7D 7H 7S", "meld 9H TH JH", "pass")
    acts = agent_turn(agent, g)
    assert acts[0] in ("layoff QH", "layoff 7C")
    assert {"layoff QH", "layoff KH", "layoff 7C", "meld 2D 3D 4D"} <= set(acts)
    sm = g.summary(0)
    assert sm.deadwood == (5, 28)                    # 5S 6S 8S 9D are left
    assert sm.winner == 0 and sm.hand_points == (23, 0)


# ---------------------------------------------------------------------------------------
# rules: opponent model, knock policy, exact layoffs


FEED_P0 = "3C 4D 5S KC KS JH QH 3H 4S 5D"      # the opponent (seat 0)
FEED_P1 = "TD JD QD 6H 7H 8H 2C 2S 9C 8C"      # rules (seat 1, the dealer)


def test_rules_does_not_feed_the_cards_the_opponent_took():
    # seat 0 takes the up-card 7C and then 8C from the pile: 9C would complete its run
    g = deal(FEED_P0, FEED_P1, "7C", "9S AH")
    play(g, "take 7C", "discard KC", "draw stock", "discard 8C", "take 8C", "discard KS",
         "draw stock")
    view = player_view(g, 0, 1)
    assert set(view.opponent_known) == set(g.variant.deck.parse_cards("7C 8C"))
    assert agent_move(GinGreedyAgent(), g) == "discard 9C"   # greedy: a 9 (the first of two)
    assert agent_move(GinRulesAgent(seed=0), g) == "discard 9S"


def test_rules_prefers_a_discard_next_to_what_the_opponent_threw():
    # seat 0 throws TS: JS is then the safer of the two jacks (greedy takes the first, JH)
    g = deal("TS 2H 4C 9D 8S QC KD 3H 5C 7S", "5D 6D 7D 4H 5H 6H AH AS JH JS", "9C", "2C 3S")
    play(g, "pass", "pass", "draw stock", "discard TS", "draw stock")
    assert agent_move(GinGreedyAgent(), g) == "discard JH"
    assert agent_move(GinRulesAgent(seed=0), g) == "discard JS"


def test_rules_does_not_knock_with_high_deadwood_late_in_the_hand_gr3_gr4():
    # both players draw and throw back the stock card for 13 turns; then seat 1 can knock
    # with 8 (8D) -- early on both knock, late in the hand rules holds on (undercut risk)
    d = VARIANT.deck
    p0, p1, up = "2D 4D 6D 8C TC QC 2S 4S 6S 8S", "AC 2C 3C 7D 7H 7S 9H TH JH 8D", "KC"
    used = set(d.parse_cards(" ".join([p0, p1, up, "KS"])))
    filler = [c for c in range(52) if c not in used and d.card_text(c)[0] in "9TJQK"][:13]
    assert len(filler) == 13
    stock = " ".join(d.card_text(c) for c in filler) + " KS"
    for turns, rules_knocks in ((1, True), (13, False)):
        g = deal(p0, p1, up, stock)
        play(g, "pass", "pass")
        for k in range(turns):
            play(g, "draw stock", f"discard {d.card_text(filler[k])}")
        play(g, "draw stock")
        assert g.current_player(0) == 1 and int(g.states[0]["turn"]) == turns
        drawn = d.card_text(filler[turns]) if turns < 13 else "KS"
        assert agent_move(GinGreedyAgent(), g) == f"knock {drawn}"
        text = agent_move(GinRulesAgent(seed=0), g)
        assert text.startswith("knock" if rules_knocks else "discard"), text


def test_rules_defender_finds_the_chain_layoff_that_lowers_its_deadwood_gr3():
    # the knocker melds 5H 6H 7H; laying off 8H (its set of four stays a set) lets 9H go too
    knocker = "AC 2C 3C 5H 6H 7H TD TS TC KD"
    defender = "8H 8C 8D 8S 9H KS QS JS 2H 3S"
    script = ("pass", "pass", "draw stock", "knock KD", "meld AC 2C 3C", "meld 5H 6H 7H",
              "meld TC TD TS", "pass")
    g = deal(knocker, defender, "4D", "2D")
    play(g, *script)
    acts = agent_turn(GinGreedyAgent(), g)         # greedy: 8H alone lowers nothing
    assert not [a for a in acts if a.startswith("layoff")]
    assert g.summary(0).deadwood == (2, 14)
    g = deal(knocker, defender, "4D", "2D")
    play(g, *script)
    acts = agent_turn(GinRulesAgent(seed=0), g)
    assert acts[:2] == ["layoff 8H", "layoff 9H"]
    assert g.summary(0).deadwood == (2, 5)


# ---------------------------------------------------------------------------------------
# legality over many hands, and strength


@pytest.mark.parametrize("variant", [VARIANT, gin_variant(openspiel_compatible=True)],
                         ids=["default", "openspiel"])
def test_every_action_is_legal_over_many_hands(variant):
    g = Game(variant, 1)
    steps_seen = set()
    pairs = [(GinGreedyAgent(seed=1), GinRulesAgent(seed=2)),
             (GinRulesAgent(seed=3), RandomAgent(seed=4)),
             (RandomAgent(seed=5), GinGreedyAgent(seed=6))]
    n = 50 if variant is VARIANT else 20
    for k in range(n):
        a, b = pairs[k % len(pairs)]
        agents = (a, b) if k % 2 == 0 else (b, a)
        log = []
        r = play_hand(g, agents, seed=1000 + k, log=log)   # step_one raises on an illegal action
        assert g.done(0) and r.steps == len(log)
        steps_seen.add(r.end)
    assert "knock" in steps_seen


def _mean_margin(a_cls, b_cls, hands=100):
    g = Game(VARIANT, 1)
    margins = []
    for seed in range(hands):
        a, b = a_cls(seed=seed), b_cls(seed=seed + 1)
        seat = seed % 2                              # a's seat alternates
        agents = (a, b) if seat == 0 else (b, a)
        r = play_hand(g, agents, seed=seed)
        margins.append(r.hand_points[seat] - r.hand_points[1 - seat])
    return float(np.mean(margins))


def test_strength_greedy_beats_random_and_rules_at_least_matches_greedy():
    assert _mean_margin(GinGreedyAgent, RandomAgent) > 10
    assert _mean_margin(GinRulesAgent, GinGreedyAgent) >= 0


def test_gin_playout_policy_knocks_by_the_rules_players_falling_limit():
    """The search's Gin playouts knock as ``rules`` does (GR-3 knock, limit falling with the
    turn): deadwood 2 is knocked early, but late in the hand only gin is knocked."""
    from numba import njit

    from agents.fastpolicy import gin_action, rollout_tables

    @njit
    def playout_action(states, spec, mask, tables):
        return gin_action(states[0], spec, mask, tables)

    g = deal("AS 2S 3S 4H 5H 6H 7C 7D 7H 2C", "KS QS JH TD 9C 8C 6D 4D 3C 5S", up="KD",
             stock="9D")
    play(g, "pass", "pass", "draw")
    assert sorted(g.variant.action_text(a) for a in g.legal_actions(0)
                  if g.variant.action_family(a) == "knock") == ["knock 2C", "knock 9D"]
    tables = rollout_tables(VARIANT)

    def choice(turn):
        states = g.states.copy()
        states[0]["turn"] = turn
        return VARIANT.action_text(playout_action(states, VARIANT.spec, g.masks[0].copy(), tables))

    assert choice(0) == "knock 9D"          # early: any legal knock
    assert choice(12) == "discard 9D"       # limit 10 - 2 x 8 < 0: gin only


def test_player_view_shows_the_public_gin_step():
    """Agents read Gin's step within the turn from the view, not from the state record."""
    from mountain_rummy_env import mountain_variant

    g = deal("AS 2S 3S 4H 5H 6H 7C 7D 7H 2C", "KS QS JH TD 9C 8C 6D 4D 3C 5S", up="KD")
    assert player_view(g, 0, 0).step == K.OFFER
    play(g, "pass", "pass", "draw")
    assert player_view(g, 0, 0).step == K.DISCARD
    m = Game(mountain_variant(), 1)
    m.reset(seed=0)
    assert player_view(m, 0, 0).step == -1


def test_gin_playout_knock_constants_are_the_rules_players_defaults():
    """The compiled playouts copy the rules player's knock parameters (numba's cache would not
    see a change made in ``agents.rules``): the copies must match its defaults."""
    import inspect

    from agents import fastpolicy as fp

    d = {k: p.default for k, p in inspect.signature(GinRulesAgent.__init__).parameters.items()}
    assert (fp.GIN_EARLY_TURNS, fp.GIN_LATE_KNOCK, fp.GIN_KNOCK_SLOPE, fp.GIN_OPP_KNOWN,
            fp.GIN_WALL_KNOCK) == (d["early_turns"], d["late_knock"], d["knock_slope"],
                                   d["opp_known_knock"], d["wall_knock"])
    assert d["min_knock"] == 0   # the playouts' limit floors at gin only
