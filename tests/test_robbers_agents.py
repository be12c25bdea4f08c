"""Robber's Rummy plays from the solver (``mountain_rummy_env.robbers_play``) and the agent
built on them (``agents.robbers``): the actions of a solver play are legal and place what
the solver says (RR-5 opening, RR-6 robbery, W2), at every position of real hands; greedy
and its screening variants play whole hands legally at 2-6 seats, deterministically,
without reading hidden cards; greedy beats random on fresh deals; a person gets the
solver's hint. The search agent's face-count playouts (``agents.robbers_playout``) replay
greedy's hands, and the search plays legally from what its seat may know."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from experiments.ladder import compare
from experiments.play import play_hand
from mountain_rummy_env import Game, player_view
from mountain_rummy_env.core.state import LOC_TABLE, PHASE_PLAY, check_invariants
from mountain_rummy_env.robbers_play import best_play, hand_counts, slot_faces

from german_helpers import robbers, robbers_start
from helpers import legal_texts, play
from robbers_reference import check_table
from test_fair_agents import redeal_hidden


def texts(g: Game, actions) -> list[str]:
    return [g.variant.action_text(a) for a in actions]


def run(g: Game, actions) -> None:
    for a in actions:
        g.step_one(0, int(a))


def test_rr5_the_opening_is_new_melds_from_the_hand_worth_40():
    """RR-5 / W1: before opening the play is new melds from the hand alone, the most points
    (9C 9D 9S and 5H-8H: 53), and it commits; a hand that cannot reach 40 has no play."""
    g = robbers_start(["9C 9D 9S 5H 6H 7H 8H AC 2D 3H 4S", "2C 3C 4C 5D 6S 7D 8S 9H TC JD QS",
                       ""], "")
    p = best_play(g)
    assert texts(g, p.actions) == ["meld 9C 9D 9S", "meld 5H 6H 7H 8H", "commit"]
    assert (p.cards, p.points) == (7, 53)
    run(g, p.actions)
    assert g.states[0]["placed_before"][0] == 1
    play(g, "end turn")
    assert best_play(g) is None                       # 2C 3C 4C is 9 points: no opening


def test_rr6_w2_the_solver_robs_the_table_and_goes_out():
    """RR-6 / W2: seat 1 holds 5C 5D after its opening; the best play lifts 5H out of seat
    0's run into a new set with them, every table card stays, and seat 1 goes out."""
    g = robbers_start(["9C 9D 9S 5H 6H 7H 8H", "KC KD KS 2S 3S 4S 5S 6S 7S 5C 5D", ""], "")
    run(g, best_play(g).actions)
    play(g, "end turn")
    run(g, best_play(g).actions)
    play(g, "end turn", "draw stock", "draw stock")
    p = best_play(g)
    assert p.cards == 2 and texts(g, p.actions)[:2] == ["lift 5H m1", "put m5"]
    before = slot_faces(g.variant, g.states[0])
    run(g, p.actions)
    assert g.summary().end == "went out" and g.states[0]["h_winner"] == 1
    after = slot_faces(g.variant, g.states[0])
    assert sum(sum(c.values()) for c in after.values()) == sum(
        sum(c.values()) for c in before.values()) + 2


def greedy_positions(seats: int, seed: int, hands: int = 4):
    """(game, seat) at the start of every turn of ``hands`` hands of greedy agents."""
    g = Game(robbers(num_players=seats), 1)
    agents = [make_agent("greedy", seed=q, variant="robbers") for q in range(seats)]
    for hand in range(hands):
        g.reset(seed=seed + hand)
        while g.states[0]["phase"] == PHASE_PLAY:
            s = g.states[0]
            p = int(s["current"])
            if not s["editing"] and not s["placed_this_turn"] and not s["drew"]:
                yield g.clone(), p
            g.step_one(0, int(agents[p].act(player_view(g, 0, p), g.masks[0])))


@pytest.mark.parametrize("seats", [2, 4])
def test_every_solver_play_is_legal_and_places_what_the_solver_says(seats):
    """At positions of real hands the plan's actions are legal one by one, end in a valid
    table (RR-3, every table card still on it, RR-6), and take exactly the solver's cards
    from the hand; the game the plan was made on is not changed."""
    checked = 0
    for g, p in greedy_positions(seats, seed=60 + seats):
        snap = g.states.tobytes()
        play_ = best_play(g)
        assert g.states.tobytes() == snap
        if play_ is None:
            continue
        hand = hand_counts(g.variant, g.states[0], p)
        on_table = (g.states[0]["loc"] == LOC_TABLE).sum()
        run(g, play_.actions)
        s = g.states[0]
        check_invariants(s, seats)
        check_table(g.variant, s)
        placed = hand - hand_counts(g.variant, s, p)
        assert placed.sum() == play_.cards and (placed >= 0).all()
        assert (placed[:52] == play_.rearrangement.used[:52]).all()
        assert (s["loc"] == LOC_TABLE).sum() == on_table + play_.cards
        checked += 1
    assert checked >= 20


@pytest.mark.parametrize("seats", [2, 4, 6])
def test_greedy_and_its_variants_play_whole_hands_legally(seats):
    specs = ("greedy", "rules:by=shape,draw_below=2", "greedy:hold_until=6,by=points")
    g = Game(robbers(num_players=seats), 1)
    for hand in range(2):
        agents = [make_agent(specs[(q + hand) % 3], seed=q, variant="robbers")
                  for q in range(seats)]
        result = play_hand(g, agents, seed=400 + 10 * seats + hand)
        assert sum(result.hand_points) == 0


def test_same_seed_same_play():
    logs = []
    for _ in range(2):
        g, log = Game(robbers(num_players=3), 1), []
        play_hand(g, [make_agent("greedy:by=shape", seed=9, variant="robbers") for _ in range(3)],
                  seed=77, log=log)
        logs.append(log)
    assert logs[0] == logs[1]


def test_agents_ignore_where_the_hidden_cards_really_are():
    """Dealing the cards a seat cannot see anew (other hands, the stock) never changes the
    choice of greedy or its variants."""
    rng = np.random.default_rng(0)
    checked = 0
    for game, p in greedy_positions(4, seed=91, hands=2):
        other = redeal_hidden(game, p, rng)
        assert (other.states[0]["loc"] != game.states[0]["loc"]).any()
        for spec in ("greedy", "greedy:hold_until=6,by=shape"):
            picks = [make_agent(spec, seed=5, variant="robbers").act(player_view(g, 0, p),
                                                                     g.masks[0])
                     for g in (game, other)]
            assert picks[0] == picks[1], (spec, p)
        checked += 1
    assert checked >= 10


def test_after_a_play_greedy_draws_unless_told_to_draw_only_with_few_cards():
    """RR-4: a seat that played may draw and play again; greedy draws, with ``draw_below``
    only when it holds at most that many cards."""
    g = robbers_start(["9C 9D 9S 5H 6H 7H 8H AC 2D 3H 4S", "", ""], "")
    run(g, best_play(g).actions)
    view, mask = player_view(g, 0, 0), g.masks[0]
    assert {"draw stock", "end turn"} <= legal_texts(g)
    lay = g.variant.layout
    assert make_agent("greedy", variant="robbers").act(view, mask) == lay.draw
    assert make_agent("greedy:draw_below=3", variant="robbers").act(view, mask) == lay.end
    assert make_agent("greedy:draw_below=4", variant="robbers").act(view, mask) == lay.draw


def test_hold_until_keeps_a_play_while_every_other_seat_holds_many_cards():
    """``hold_until``: a play that does not go out waits (the seat draws) while every other
    seat holds more than that many cards."""
    g = robbers_start(["9C 9D 9S 5H 6H 7H 8H AC 2D 3H 4S", "", ""], "")
    view, mask = player_view(g, 0, 0), g.masks[0]
    lay = g.variant.layout
    assert make_agent("greedy:hold_until=10", variant="robbers").act(view, mask) == lay.draw
    assert make_agent("greedy:hold_until=11", variant="robbers").act(view, mask) != lay.draw


def test_rules_keeps_a_small_opening_while_the_others_hold_many_cards():
    """``rules`` (greedy with ``small_opening=7, others_at_least=6``): the 7-card opening
    9C 9D 9S 5H-8H waits (the seat draws) while both other seats hold 11 cards; with
    ``small_opening=6``, or once a seat is down to fewer than ``others_at_least``, it is
    played."""
    g = robbers_start(["9C 9D 9S 5H 6H 7H 8H AC 2D 3H 4S", "", ""], "")
    view, mask = player_view(g, 0, 0), g.masks[0]
    lay = g.variant.layout
    assert make_agent("rules", variant="robbers").act(view, mask) == lay.draw
    assert make_agent("rules:small_opening=6", variant="robbers").act(view, mask) != lay.draw
    assert make_agent("rules:others_at_least=12", variant="robbers").act(view, mask) != lay.draw
    assert make_agent("greedy", variant="robbers").act(view, mask) != lay.draw


@pytest.mark.parametrize("spec", ["greedy:draw_below=-1", "greedy:by=value",
                                  "greedy:hold_until=-2", "rules:small_opening=-1",
                                  "rules:others_at_least=-3", "search:small_opening=-1"])
def test_bad_parameters_are_refused(spec):
    with pytest.raises(ValueError):
        make_agent(spec, variant="robbers")


def test_greedy_beats_random_on_fresh_deals():
    result = compare("greedy", "random", deals=4, first_seed=210_000, variant="robbers")
    assert result.low > 0, result


@pytest.mark.slow
def test_the_ladder_at_four_seats():
    """random < greedy with its 95% CI above 0 on 30 fresh deals
    (``python -m experiments.ladder --variant robbers`` prints the table)."""
    result = compare("greedy", "random", deals=30, first_seed=310_000, variant="robbers")
    assert result.low > 0, result


def test_a_person_asks_for_the_solvers_hint_and_builds_the_play_step_by_step():
    """``human``: ``hint`` prints the solver's best play (undoing a play in progress first);
    the person then types it move by move, and a lifted card is shown as lifted."""
    import io

    g = robbers_start(["9C 9D 9S 5H 6H 7H 8H", "KC KD KS 2S 3S 4S 5S 6S 7S 5C 5D", ""], "")
    run(g, best_play(g).actions)
    play(g, "end turn")
    run(g, best_play(g).actions)
    play(g, "end turn", "draw stock", "draw stock")
    out = io.StringIO()
    human = make_agent("human", stdin=io.StringIO("hint\nlift 5H m1\n"), stdout=out,
                       variant="robbers")
    g.step_one(0, human.act(player_view(g, 0, 1), g.masks[0]))
    assert "hint: lift 5H m1; put m5; layoff 5C m5; layoff 5D m5; commit (places 2 card(s)" \
        in out.getvalue()
    out = io.StringIO()
    human = make_agent("human", stdin=io.StringIO("hint\nput m5\n"), stdout=out,
                       variant="robbers")
    g.step_one(0, human.act(player_view(g, 0, 1), g.masks[0]))
    assert "you lifted 5H: put it in a meld" in out.getvalue()
    assert "hint: reset; lift 5H m1; put m5" in out.getvalue()


def face_count_start(g: Game):
    """The face-count arrays of game 0 (every card known: a test looks at the truth)."""
    from mountain_rummy_env.core.state import LOC_HAND

    v, s = g.variant, g.states[0]
    face = v.spec.card_face.astype(np.int64)
    P = v.spec.num_players
    table = np.bincount(face[s["loc"] == LOC_TABLE], minlength=53).astype(np.int64)
    hands = np.stack([np.bincount(face[s["loc"] == LOC_HAND + p], minlength=53)
                      for p in range(P)]).astype(np.int64)
    stock = face[s["stock"][s["stock_ptr"]:s["stock_len"]]].astype(np.int64)
    return table, hands, s["placed_before"][:P].astype(np.bool_), stock


@pytest.mark.parametrize("seats", [2, 4])
def test_a_face_count_playout_replays_greedys_hand(seats):
    """From the deal, a playout (every seat greedy's turn on face counts) ends with the
    points greedy agents reach in the engine, on at least 9 of 10 deals (the playout's
    solver stops at a node limit and ignores the edit cap; both rarely matter)."""
    from agents import robbers_playout as po
    from agents.robbers_playout import playout_start

    g = Game(robbers(num_players=seats), 1)
    agents = [make_agent("greedy", seed=q, variant="robbers") for q in range(seats)]
    same = 0
    for seed in range(500, 510):
        g.reset(seed=seed)
        start = playout_start(player_view(g, 0, g.current_player(0)), g.states[0])
        table, hands, opened, stock = face_count_start(g)
        points = po.playout(table, hands, opened, stock, 0, g.current_player(0), 0, 0,
                            start.max_turns, po.GREEDY,
                            np.zeros(seats, np.int64), start.weights, start.open_weights,
                            start.values, *start.solver_args())
        same += np.array_equal(points, play_hand(g, agents, seed=seed).hand_points)
    assert same >= 9


def test_search_re_deals_only_what_its_seat_cannot_see():
    """The search's start holds the seat's hand and the table exactly, and each re-deal
    gives every other seat its hand size and the stock its size, from the hidden faces."""
    from agents.robbers_playout import playout_start

    for game, p in greedy_positions(4, seed=33, hands=1):
        view = player_view(game, 0, p)
        start = playout_start(view, view.public_state()[0])
        table, hands, opened, stock = face_count_start(game)
        assert np.array_equal(start.table, table) and np.array_equal(start.hands[p], hands[p])
        tables, dealt, stocks = start.deal(3, np.random.default_rng(0))
        for k in range(3):
            assert np.array_equal(dealt[k].sum(axis=1), hands.sum(axis=1))
            assert np.array_equal(dealt[k][p], hands[p]) and len(stocks[k]) == len(stock)
            pool = dealt[k].sum(axis=0) - hands[p] + np.bincount(stocks[k], minlength=53)
            assert np.array_equal(pool, hands.sum(axis=0) - hands[p]
                                  + np.bincount(stock, minlength=53))


@pytest.mark.parametrize("seats", [2, 4])
def test_search_plays_whole_hands_legally_and_the_same_way_twice(seats):
    logs = []
    for _ in range(2):
        g, log = Game(robbers(num_players=seats), 1), []
        agents = [make_agent("search:budget=8" if q % 2 == 0 else "greedy", seed=q,
                             variant="robbers") for q in range(seats)]
        result = play_hand(g, agents, seed=40 + seats, log=log)
        assert sum(result.hand_points) == 0
        logs.append(log)
    assert logs[0] == logs[1]


def test_search_ignores_where_the_hidden_cards_really_are():
    rng = np.random.default_rng(1)
    checked = 0
    for game, p in greedy_positions(4, seed=95, hands=1):
        other = redeal_hidden(game, p, rng)
        picks = [make_agent("search:budget=8", seed=5, variant="robbers").act(
            player_view(g, 0, p), g.masks[0]) for g in (game, other)]
        assert picks[0] == picks[1]
        checked += 1
    assert checked >= 10
