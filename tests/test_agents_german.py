"""German Rummy agents (``agents.german``, docs/german_rummy.md): legal whole hands at 2-6
seats, the same play from the same seed, no reading of hidden cards, the strategies'
choices in dealt positions (GE-5 opening, GE-6 jokers, GE-9 hand value), and the strength
ladder random < greedy < rules < search on fresh seeds."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.german import GermanGreedyAgent, GermanRulesAgent, GermanSearchAgent, _Compiled
from agents.german_policy import _should_have_placed, play_out, settle_hands
from mountain_rummy_env.german_player import GREEDY, rules_params
from agents.search import determinise
from experiments.ladder import compare, deal_margins, dealt_states, policy_margins
from experiments.play import play_hand
from mountain_rummy_env import Game, german_variant, make_variant, player_view
from mountain_rummy_env.core.state import LOC_HAND, LOC_TABLE, PHASE_HAND_OVER
from mountain_rummy_env.solver import make_workspace
from helpers import agent_move, agent_turn
from test_fair_agents import positions, redeal_hidden

SPECS = ("random", "greedy", "rules", "search:budget=8")


def deal(hands: list[str], up: str, stock: str = "") -> Game:
    """A game dealing ``hands[q]`` to seat q (dealer: the last seat, so seat 0 plays first),
    then the up-card, then the stock top first (the rest in id order)."""
    v = german_variant(num_players=len(hands))
    d = v.deck
    cards = [d.parse_cards(h) for h in hands]
    assert all(len(h) == 13 for h in cards)
    order = [c for rnd in zip(*cards) for c in rnd] + d.parse_cards(up)
    order += d.parse_cards(stock) if stock else []
    assert len(set(order)) == len(order)
    order += [c for c in range(d.num_cards) if c not in order]
    g = Game(v, 1)
    g.reset(seed=0, deck=order, dealer=len(hands) - 1)
    for q, h in enumerate(cards):
        assert sorted(g.hand(0, q)) == sorted(h)
    return g


def play(g: Game, *texts: str) -> None:
    for t in texts:
        g.step_one(0, t)


# ---------------------------------------------------------------------------------------
# whole hands: legal, deterministic, fair


@pytest.mark.parametrize("seats", [2, 3, 4, 6])
def test_every_agent_plays_whole_hands_legally(seats):
    """Every seat's agent in turn (step_one raises on an illegal action; the compiled
    policies assert legality themselves) through hands that end by GE-7 or GE-8."""
    g = Game(german_variant(num_players=seats), 1)
    for hand in range(2):
        agents = [make_agent(SPECS[(q + hand) % len(SPECS)], seed=q, variant="german")
                  for q in range(seats)]
        result = play_hand(g, agents, seed=700 + 10 * seats + hand)
        assert g.done(0) and result.steps > seats
        assert len(result.hand_points) == seats


def test_greedy_and_rules_play_crazy_rummy_legally():
    """German's greedy and rules, registered for Crazy Rummy (docs/agents.md), play whole
    rounds at four seats (step_one raises on an illegal action)."""
    g = Game(make_variant("crazy", num_players=4), 1)
    for hand in range(4):
        agents = [make_agent(("greedy", "rules")[(q + hand) % 2], seed=q, variant="crazy")
                  for q in range(4)]
        result = play_hand(g, agents, seed=800 + hand)
        assert g.done(0) and len(result.hand_points) == 4


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_compiled_policies_choose_only_legal_moves(seats):
    """The playout loop checks greedy's and rules' every choice against the legal mask."""
    v = german_variant(num_players=seats)
    states = dealt_states(v, range(300, 330))
    c = _Compiled.of(v)
    params = np.array([GREEDY if q % 2 else rules_params() for q in range(seats)])
    out = np.zeros(len(states))
    bad = play_out(states, v.spec, np.full(len(states), -1), params, c.work, c.order, True,
                   np.zeros(v.num_actions, np.int8), out, 0)
    assert bad == -1
    assert (states["phase"] == PHASE_HAND_OVER).all()


def test_agents_play_as_the_compiled_playouts():
    """The greedy and rules agents, stepping a real game, play exactly as the search's
    compiled playouts do from the same deal (the same hand points)."""
    seeds = range(40, 52)
    assert np.array_equal(deal_margins("rules", "greedy", seeds),
                          policy_margins(rules_params(), GREEDY, seeds))


@pytest.mark.parametrize("spec", SPECS)
def test_same_seed_same_play(spec):
    logs = []
    for _ in range(2):
        g, log = Game(german_variant(num_players=3), 1), []
        agents = [make_agent(spec, seed=9, variant="german") for _ in range(3)]
        play_hand(g, agents, seed=77, log=log)
        logs.append(log)
    assert logs[0] == logs[1]


def _positions(seats: int, hands: int, seed: int):
    """(game, player) at every decision with a choice, in hands of greedy and random."""
    players = [make_agent("greedy" if q % 2 else "random", seed=seed + q, variant="german")
               for q in range(seats)]
    return positions(german_variant(num_players=seats), hands, seed, players)


@pytest.mark.parametrize("seats", [2, 4])
def test_agents_ignore_where_the_hidden_cards_really_are(seats):
    """Dealing the cards a seat cannot see anew (other hands' unknown cards, the stock)
    never changes its agent's choice."""
    rng = np.random.default_rng(0)
    checked = 0
    for k, (game, p) in enumerate(_positions(seats, 2, seed=31)):
        if k % 4:
            continue
        other = redeal_hidden(game, p, rng)
        assert (other.states[0]["loc"] != game.states[0]["loc"]).any()
        for spec in SPECS[1:]:
            picks = [make_agent(spec, seed=5, variant="german").act(player_view(g, 0, p),
                                                                    g.masks[0])
                     for g in (game, other)]
            assert picks[0] == picks[1], (spec, k)
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("seats", [3, 6])
def test_public_state_keeps_every_hand_size_and_known_card(seats):
    """The record agents read (hidden cards dealt back in id order) has each seat's hand
    size and the cards known to be in each hand where they are."""
    for game, p in list(_positions(seats, 1, seed=12))[::7]:
        view = player_view(game, 0, p)
        loc = view.public_state()[0]["loc"]
        assert tuple(int((loc == LOC_HAND + q).sum()) for q in range(seats)) == view.hand_sizes
        for q in range(seats):
            assert all(loc[c] == LOC_HAND + q for c in view.known[q])


def test_search_samples_keep_what_the_seat_knows():
    """Each sample keeps every seat's hand size, the cards known to be in a hand, the
    player's own hand and the table; an opened seat that has played holds no meld of
    naturals, an unopened one no opening (GE-5), as the rules player leaves its hand."""
    for game, p in list(_positions(4, 1, seed=8))[20::9]:
        view = player_view(game, 0, p)
        samples = determinise(view, 16, np.random.default_rng(1))
        settle_hands(samples, view.variant.spec, p, 50, 3)
        real = game.states[0]
        first = (int(real["dealer"]) + 1) % 4
        ws = make_workspace(view.variant.table.num_templates)
        for s in samples:
            for q in range(4):
                held = s["loc"] == LOC_HAND + q
                assert held.sum() == view.hand_sizes[q]
                assert set(view.known[q]) <= set(np.flatnonzero(held))
                if q != p and (q - first) % 4 < int(real["turn"]):
                    assert not _should_have_placed(s, view.variant.spec, q, ws)
            assert set(np.flatnonzero(s["loc"] == LOC_HAND + p)) == set(view.hand)
            assert (s["loc"] == LOC_TABLE).sum() == (real["loc"] == LOC_TABLE).sum()


# ---------------------------------------------------------------------------------------
# choices in dealt positions (2 seats; seat 0 plays first)

OPENER = "JH QH KH 5C 5D 5S 2C 7H 9S 4H 8C 3S 6H"     # 30 + 15: an opening of 45 (GE-5)
JUNK = "2D 4C 6S 8H TC QS AD 3H 5H 7C 9D JS KC"        # no two of these in a meld


def test_greedy_opens_with_its_largest_meld_and_discards_outside_partial_melds_ge5():
    g = deal([OPENER, JUNK], up="2H", stock="9C")
    assert agent_turn(GermanGreedyAgent(), g) == [
        "draw stock", "meld JH QH KH", "meld 5C 5D 5S",
        "discard 4H"]        # 9S 9C, 8C 9C, 6H 7H are partial melds; 4H the highest left


def test_greedy_takes_a_discard_that_joins_a_meld_and_draws_otherwise_ge4():
    for thrown in ("QS", "AD"):           # they join nothing in 2C 3S 6H 7H 8C 9C 9S
        g = deal([OPENER, JUNK], up="2H", stock="9C 4S")
        play(g, "draw stock", "meld JH QH KH", "meld 5C 5D 5S", "discard 4H",
             "draw stock", f"discard {thrown}")
        assert agent_move(GermanGreedyAgent(), g) == "draw stock"
    g = deal([OPENER, JUNK.replace("5H", "TH")], up="2H", stock="9C 4S")
    play(g, "draw stock", "meld JH QH KH", "meld 5C 5D 5S", "discard 4H",
         "draw stock", "discard TH")            # TH lays off on J-Q-K of hearts
    assert agent_move(GermanGreedyAgent(), g) == "take TH"


def test_rules_keeps_its_joker_where_greedy_melds_it_ge3_ge6():
    hand = OPENER.replace("6H", "XX")
    v = german_variant(num_players=2)
    g = deal([hand, JUNK], up="TD", stock="9C")
    assert agent_turn(GermanGreedyAgent(), g)[:2] == [
        "draw stock", v.action_text(v.parse_action("meld JH QH KH AH"))]   # 41 with XX=AH
    g = deal([hand, JUNK], up="TD", stock="9C")
    moves = agent_turn(GermanRulesAgent(), g)
    assert moves[:3] == ["draw stock", "meld JH QH KH", "meld 5C 5D 5S"]
    assert moves[3].startswith("discard") and moves[3] != "discard XX"
    assert len(g.hand(0, 0)) == 7 and v.deck.parse_cards("XX")[0] in g.hand(0, 0)


# seat 0: no two cards related (13 ranks, suits apart); seat 1 opens with its spades and
# the kings and queens (GE-5), and holds 4 cards after that turn, 3 with 6S melded too
LOOSE = "AD 2S 3H 4C 5D 6H 7C 8S 9D TC JH QS KC"
OPENS = "3S 4S 5S 6S KD KH KS QC QD QH 9H 8D JC"


def loose_position(*seat1_moves: str) -> Game:
    """Seat 0 draws KC#2 and throws a king, seat 1 plays ``seat1_moves``, seat 0 draws
    9D#2 (a second copy: no partner) and is to discard."""
    g = deal([LOOSE, OPENS], up="9S", stock="KC#2 7D 9D#2")
    play(g, "draw stock", "discard KC", "draw stock", *seat1_moves, "draw stock")
    return g


def test_rules_before_opening_does_not_feed_the_opened_next_seat():
    """Unopened, rules keeps high cards for its 40 and throws its lowest loose card, but
    not 2S, which the opened next seat would take and lay off on 3S-4S-5S."""
    moves = ("meld 3S 4S 5S", "meld KD KH KS", "meld QC QD QH", "discard JC")
    assert len(loose_position(*moves).hand(0, 1)) == 4
    assert agent_move(GermanRulesAgent(feed_layoff=0), loose_position(*moves)) == "discard 2S"
    assert agent_move(GermanRulesAgent(), loose_position(*moves)) == "discard 3H"


def test_rules_dumps_high_cards_when_an_opponent_is_about_to_go_out_ge9():
    """Unopened, rules throws its lowest loose card; once an opponent holds 3 cards or
    fewer it throws its highest, as the hand may end at once (GE-7, GE-9)."""
    assert agent_move(GermanRulesAgent(), loose_position("discard JC")) == "discard 2S"
    g = loose_position("meld 3S 4S 5S 6S", "meld KD KH KS", "meld QC QD QH", "discard JC")
    assert len(g.hand(0, 1)) == 3
    assert agent_move(GermanRulesAgent(), g) == "discard AD"


def test_search_weighs_the_rules_choice_against_other_discards():
    g = deal([OPENER, JUNK], up="2H", stock="9C")
    play(g, "draw stock", "meld JH QH KH", "meld 5C 5D 5S")
    agent = GermanSearchAgent(seed=0, budget=24)
    view = player_view(g, 0, 0)
    rules_first = GermanRulesAgent().act(view, g.masks[0])
    cands = agent.candidates(view, g.masks[0], rules_first)
    assert cands[0] == rules_first and len(cands) >= 3
    assert all(g.variant.action_family(a) == "discard" for a in cands)
    assert agent.act(view, g.masks[0]) in cands
    assert set(agent.last_values) == set(cands)


# ---------------------------------------------------------------------------------------
# strength (duplicate deals, seeds the agents were not tuned on)


def test_greedy_beats_random_and_rules_beats_greedy():
    assert compare("greedy", "random", deals=3, first_seed=200_000).low > 0
    margins = policy_margins(rules_params(), GREEDY, range(200_000, 200_400))
    half = 1.96 * margins.std(ddof=1) / np.sqrt(len(margins))
    assert margins.mean() - half > 0


@pytest.mark.slow
def test_the_ladder_at_four_seats():
    """Each adjacent pair of random < greedy < rules < search, 95% CI above 0 (about 15
    minutes; experiments/ladder.py prints the table: on seeds 100000 on, search
    beat rules by +6.3 (+3.7, +8.9) over 600 deals)."""
    for weaker, stronger, deals in (("random", "greedy", 30), ("greedy", "rules", 600),
                                    ("rules", "search", 400)):
        result = compare(stronger, weaker, deals=deals, first_seed=300_000)
        assert result.low > 0, result
