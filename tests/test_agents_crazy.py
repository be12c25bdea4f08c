"""Crazy Rummy agents (``agents.german`` on Crazy's rules, docs/agents.md): legal whole rounds
at 3-6 seats and every wild rank, the agents play as their compiled playouts, wilds are
jokers to them (CR-2), the one-card draw (CR-4), the rules player's meld and swap order
(CR-3), and greedy < rules < search on fresh seeds."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.german import _Compiled
from agents.german_policy import choose, play_out
from mountain_rummy_env.german_player import GREEDY, rules_params
from experiments.ladder import compare, deal_margins, dealt_states, policy_margins
from experiments.play import play_hand
from mountain_rummy_env import Game, make_variant, player_view
from mountain_rummy_env.core.state import PHASE_HAND_OVER
from german_helpers import play_turn
from helpers import agent_turn, legal_texts, play
from test_rules_crazy import start, table_position

CRAZY_RULES = rules_params("crazy")


@pytest.mark.parametrize("seats", [3, 4, 6])
@pytest.mark.parametrize("round_", [1, 7, 13])
def test_compiled_policies_choose_only_legal_moves(seats, round_):
    """The playout loop checks greedy's and Crazy rules' every choice against the legal
    mask, whatever the round's wild rank (CR-1)."""
    v = make_variant("crazy", num_players=seats, round=round_)
    states = dealt_states(v, range(300, 340))
    c = _Compiled.of(v)
    params = np.array([GREEDY if q % 2 else CRAZY_RULES for q in range(seats)])
    bad = play_out(states, v.spec, np.full(len(states), -1), params, c.work, c.order, True,
                   np.zeros(v.num_actions, np.int8), np.zeros(len(states)), 0)
    assert bad == -1
    assert (states["phase"] >= PHASE_HAND_OVER).all()      # round 13 ends the game too


def test_every_agent_plays_whole_rounds_legally():
    """random, greedy, rules and search round the table (step_one raises on an illegal
    action) through rounds of a full game's wild ranks."""
    g = Game(make_variant("crazy", num_players=4, episode="game", round=11), 1)
    specs = ("random", "greedy", "rules", "search:budget=8")
    agents = [make_agent(spec, seed=q, variant="crazy") for q, spec in enumerate(specs)]
    result = play_hand(g, agents, seed=808)
    for _ in range(2):                     # rounds 12 and 13, with the same agents
        result = play_hand(g, agents, new=False)
    assert g.done(0) and len(result.hand_points) == 4


def test_agents_play_as_the_compiled_playouts():
    """The greedy and rules agents, stepping a real game, play exactly as the compiled
    playouts of their parameters (the same points, deal by deal)."""
    seeds = range(60, 72)
    assert np.array_equal(deal_margins("rules", "greedy", seeds, variant="crazy"),
                          policy_margins(CRAZY_RULES, GREEDY, seeds, variant="crazy"))


def test_a_card_of_the_wild_rank_is_a_joker_to_the_players_cr2():
    """Round 13: the king of clubs is a wild (25 if caught, CR-5), not a king worth 10, so
    neither player throws it; both throw the ten, the highest card in no partial meld."""
    for name in ("greedy", "rules"):
        g = start(["KC 2D 4S 6H 8C TD 3C AS", "2H 3H 4H 5H 7H 8H 9H", "2S 3S 5S 6S 7S 8S 9S"])
        assert agent_turn(make_agent(name, variant="crazy"), g) == ["discard TD"]


def test_rules_melds_naturals_swaps_the_wild_back_then_melds_it_cr3():
    """Seat 1 holds TH JH QH, 8D, the wild KD, and 9C for the wild KC on the table. Greedy
    melds the longest meld (the hearts with KD) and swaps last; rules melds the naturals,
    takes KC back for 9C at once and melds both wilds with 8D (any number of wilds, CR-2):
    it keeps the same two cards fewer on the table for one discard."""
    g = table_position()
    assert agent_turn(make_agent("greedy", variant="crazy"), g) == [
        "meld TH JH QH KH", "layoff 4D m0", "layoff 8D m0", "swap 9C m1", "layoff 3D m0",
        "discard 2H"]
    g = table_position()
    assert agent_turn(make_agent("rules", variant="crazy"), g) == [
        "meld TH JH QH", "swap 9C m1", "meld 8C 8D 8H", "layoff 4D m0", "discard 2H"]


def test_the_policy_draws_from_the_stock_holding_one_card_cr4():
    """CR-4 / D7: holding one card, the compiled policy (which the search's playouts run
    without the mask) draws from the stock though the top discard would lay off."""
    g = table_position()
    play(g, "discard 2H")
    play_turn(g)
    assert len(g.hand(0, 0)) == 1 and legal_texts(g) == {"draw stock"}
    v, c = g.variant, _Compiled.of(g.variant)
    public = player_view(g, 0, 0).public_state()
    for params in (GREEDY, CRAZY_RULES):
        assert choose(public, v.spec, params, c.work, c.order) == v.spec.a_draw


def test_rules_parameters_take_the_variants_defaults():
    """Parameters not given come from the variant played; given ones override them."""
    agent = make_agent("rules:cash=2", variant="crazy")
    crazy, german = make_variant("crazy"), make_variant("german")
    assert np.array_equal(agent.params_of(crazy), rules_params("crazy", cash=2))
    assert np.array_equal(agent.params_of(german), rules_params("german", cash=2))
    with pytest.raises(ValueError, match="no parameter 'bogus'"):
        make_agent("rules:bogus=1", variant="crazy")


# ---------------------------------------------------------------------------------------
# strength (duplicate deals, seeds the agents were not tuned on)


def test_greedy_beats_random_and_rules_beats_greedy():
    assert compare("greedy", "random", deals=4, first_seed=200_000, variant="crazy").low > 0
    margins = policy_margins(CRAZY_RULES, GREEDY, range(200_000, 200_600), variant="crazy")
    half = 1.96 * margins.std(ddof=1) / np.sqrt(len(margins))
    assert margins.mean() - half > 0


@pytest.mark.slow
def test_the_ladder_at_four_seats():
    """Each adjacent pair of random < greedy < rules < search, 95% CI above 0, on the
    fresh seeds of docs/agents.md's table (about 35 minutes, nearly all of it the search:
    there search beat rules by +1.9 (+0.9, +2.9) over 180 deals)."""
    for weaker, stronger, deals in (("random", "greedy", 30), ("greedy", "rules", 600),
                                    ("rules", "search", 180)):
        result = compare(stronger, weaker, deals=deals, first_seed=100_000, variant="crazy")
        assert result.low > 0, result
