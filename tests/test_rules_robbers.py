"""One or more tests per rule RR-1 ... RR-7 of docs/robbers_rummy.md (Robber's Rummy) and per
decision D1 ... D14 of that page (``test_rd8_...`` for D8), each played as a scripted table position
(``german_helpers.robbers_start``); then random games of 4 seats (2 and 6 too under ``-m
slow``: about 2 minutes each) whose mask is compared with a slow reference written here from
the rules page, at every position, with every card in exactly one place and every committed
table valid.

Seat p is the page's P(p+1); unless a test says otherwise there are three seats, the last
deals, so seat 0 plays first.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from mountain_rummy_env import ActionError, ConfigError, Game, make_variant
from mountain_rummy_env.cards import JOKER_FACE, NUM_RANKS
from mountain_rummy_env.core.state import (
    EVENT_HAND_OVER, LOC_HAND, LOC_STOCK, LOC_TABLE, MELD_WORK, PHASE_GAME_OVER,
    PHASE_HAND_OVER, PHASE_PLAY, check_invariants,
)
from mountain_rummy_env.game import IllegalActionError
from mountain_rummy_env.records import Recorder, replay

from german_helpers import JOKER_HAND_VALUE, RANK_VALUE, robbers, robbers_start
from helpers import legal_texts, play
from robbers_reference import check_table, reference_legal

JOKER = JOKER_FACE


def start(hands, stock: str = "", **options) -> Game:
    return robbers_start(hands, stock, **options)


def family(g, name: str) -> set[str]:
    return {t for t in legal_texts(g) if t.split()[0] == name}


def table_texts(g) -> list[list[str]]:
    return [m["text"] for m in g.melds()]


def hand_value(g, seat: int) -> int:
    """GE-2 hand value recounted here (A 11, pictures 10, joker 20)."""
    faces = [int(g.spec.card_face[c]) for c in g.hand(0, seat)]
    return sum(JOKER_HAND_VALUE if f == JOKER else RANK_VALUE[f % NUM_RANKS] for f in faces)


def open_seat_0(g) -> None:
    """Seat 0 opens with 9C 9D 9S and 5H 6H 7H 8H (27 + 26 = 53 points) and ends its turn."""
    play(g, "meld 9C 9D 9S", "meld 5H 6H 7H 8H", "commit", "end turn")


def draws(g, turns: int) -> None:
    """``turns`` turns of seats that only draw (RR-4: a draw ends a turn without a play)."""
    for _ in range(turns):
        play(g, "draw stock")


OPENER = ["9C 9D 9S 5H 6H 7H 8H", "", ""]


# ---------------------------------------------------------------------------------- RR-1

@pytest.mark.parametrize("players", [2, 3, 4, 6])
def test_rr1_two_decks_four_jokers_eleven_each_no_discard_pile(players):
    """RR-1: two 52-card decks and 4 jokers (108 cards); 11 each; the rest is the stock;
    no discard pile: no up-card, no take or discard action anywhere; the seat after the
    dealer plays first."""
    g = Game(robbers(num_players=players), 1)
    g.reset(seed=players)
    s = g.states[0]
    faces = Counter(g.spec.card_face.tolist())
    assert g.variant.deck.num_cards == 108 and faces[JOKER] == 4
    assert all(faces[f] == 2 for f in range(52))
    assert [len(g.hand(0, p)) for p in range(players)] == [11] * players
    assert g.discard_pile() == [] and len(g.stock()) == 108 - 11 * players
    assert g.current_player() == (int(s["dealer"]) + 1) % players and s["phase"] == PHASE_PLAY
    assert not {"take", "discard", "knock"} & set(g.variant.layout._fields)
    check_invariants(s, players)


@pytest.mark.parametrize("jokers", [0, 2, 4])
def test_rr1_num_jokers(jokers):
    g = Game(robbers(num_players=2, num_jokers=jokers), 1)
    g.reset(seed=1)
    assert g.variant.deck.num_cards == 104 + jokers
    assert Counter(g.spec.card_face.tolist())[JOKER] == jokers


def test_rr1_deal_one_at_a_time_from_the_dealers_left_rest_is_the_stock():
    order = np.random.default_rng(7).permutation(108).tolist()
    g = Game(robbers(num_players=4), 1)
    g.reset(seed=3, deck=order, dealer=1)
    for k in range(4):
        assert sorted(g.hand(0, (1 + 1 + k) % 4)) == sorted(order[k:44:4])
    assert g.stock() == order[44:]


@pytest.mark.parametrize("options,words", [
    ({"num_players": 1}, r"num_players must be .*2\.\.6"),
    ({"num_players": 7}, r"num_players must be .*2\.\.6"),
    ({"num_jokers": 5}, r"num_jokers must be an integer in 0\.\.4"),
    ({"max_edits": 0}, r"max_edits must be an integer in 1\.\.1000"),
    ({"around_the_corner": "yes"}, r"around_the_corner must be one of"),
    ({"episode": "round"}, r"episode must be one of 'hand', 'game'"),
])
def test_rr1_bad_options_name_the_range(options, words):
    with pytest.raises(ConfigError, match=words):
        make_variant("robbers", **options)


# ---------------------------------------------------------------------------------- RR-2

@pytest.mark.parametrize("hand,melds,legal", [
    ("9C 9D 9S 5H 6H 7H 8H", ["meld 9C 9D 9S", "meld 5H 6H 7H 8H"], True),    # 27 + 26
    ("AC AD AS 2H 3H 4H", ["meld AC AD AS", "meld 2H 3H 4H"], True),          # 33 + 9 = 42
    ("AH 2H 3H TC TD TS", ["meld AH 2H 3H", "meld TC TD TS"], False),         # 6 + 30 = 36
    ("QH KH AH 3C 3D 3S", ["meld QH KH AH", "meld 3C 3D 3S"], True),          # 31 + 9 = 40
    ("QH KH AH 2C 3D 3S", ["meld QH KH AH"], False),                          # 31
    ("KH AH XX 4C 4D 4S", ["meld QH KH AH", "meld 4C 4D 4S"], True),          # joker as QH: 31 + 12
])
def test_rr2_opening_values_are_germans(hand, melds, legal):
    """RR-2 / GE-2: A 11 (1 below a 2 in a run), 2-9 face, T J Q K 10, a joker what it
    stands for; an opening commits at 40 (RR-5)."""
    g = start([hand, "", ""])
    play(g, *melds)
    assert ("commit" in legal_texts(g)) == legal


# ---------------------------------------------------------------------------------- RR-3

def test_rr3_a_set_needs_distinct_suits():
    """RR-3: 7H 7S 7D takes no second 7H (two decks: the copies are different cards, not
    different suits) and no fifth card; the slot shows unfinished and commit is not offered."""
    g = start(["7H 7S 7D 7H 7C KC KD KS", "", ""])
    play(g, "meld 7D 7H 7S", "meld KC KD KS")
    assert "commit" in legal_texts(g)
    play(g, "layoff 7H m0")
    assert g.melds()[0]["kind"] == "unfinished" and "commit" not in legal_texts(g)
    play(g, "reset", "meld 7C 7D 7H 7S", "meld KC KD KS", "layoff 7H m0")
    assert g.melds()[0]["kind"] == "unfinished" and "commit" not in legal_texts(g)


def test_rr3_runs_ace_low_or_high_never_around_the_corner():
    g = start(["AH 2H 3H QS KS AS 2S TC TD TS", "", ""])
    texts = family(g, "meld")
    assert {"meld AH 2H 3H", "meld QS KS AS"} <= texts
    with pytest.raises(ActionError):
        g.variant.parse_action("meld KS AS 2S")
    play(g, "meld QS KS AS", "layoff 2S m0")        # K A 2 is no run
    assert g.melds()[0]["kind"] == "unfinished" and "commit" not in legal_texts(g)


def test_rr3_around_the_corner_option_allows_the_wrap():
    g = start(["QS KS AS 2S TC TD TS", "", ""], around_the_corner=True)
    play(g, "meld QS KS AS", "layoff 2S m0", "meld TC TD TS")
    assert table_texts(g)[0] == ["QS", "KS", "AS", "2S"] and g.melds()[0]["kind"] == "run"
    assert "commit" in legal_texts(g)


def test_rr3_one_joker_a_meld():
    """RR-3: a meld holds one joker: no template needs two, a second joker laid off leaves
    the slot unfinished."""
    g = start(["5H XX XX 9C 9D 9S 2C", "", ""])
    assert "meld 5H 6H 7H" not in legal_texts(g)
    play(g, "meld 9C 9D 9H 9S")
    assert table_texts(g)[0] == ["9C", "9D", "XX=9H", "9S"]
    play(g, "layoff XX m0")
    assert g.melds()[0]["kind"] == "unfinished" and "commit" not in legal_texts(g)


# ---------------------------------------------------------------------------------- RR-4

def test_rr4_no_play_draw_ends_the_turn():
    """RR-4: a seat that does not play draws one card and its turn is over; before a play
    there is no ``end turn`` and no ``pass`` while the stock holds cards."""
    g = start(OPENER, stock="KC")
    assert {"draw stock"} == family(g, "draw") and not family(g, "end") and not family(g, "pass")
    play(g, "draw stock")
    assert g.current_player() == 1 and "KC" in g.variant.deck.cards_text(g.hand(0, 0)).split()


def test_rr4_play_draw_play_then_end_one_draw_a_turn():
    """RR-4: after a play the seat may end its turn or draw one card and play again; a
    second draw is never offered."""
    g = start(["9C 9D 9S 5H 6H 7H 8H", "", ""], stock="4H")
    play(g, "meld 9C 9D 9S", "meld 5H 6H 7H 8H", "commit")
    assert {"draw stock", "end turn"} <= legal_texts(g)
    play(g, "draw stock")
    assert g.current_player() == 0 and "draw stock" not in legal_texts(g)
    play(g, "layoff 4H m1", "commit")
    assert table_texts(g)[1] == ["4H", "5H", "6H", "7H", "8H"]
    assert family(g, "draw") == set() and "end turn" in legal_texts(g)
    play(g, "end turn")
    assert g.current_player() == 1


def test_rr4_pass_when_the_stock_is_empty():
    """RR-4 / RR-7: with the stock empty a seat that did not play passes."""
    g = start(["", ""])
    draws(g, len(g.stock()))
    assert len(g.stock()) == 0 and "pass" in legal_texts(g) and "draw stock" not in legal_texts(g)


# ---------------------------------------------------------------------------------- RR-5

def test_rr5_before_opening_no_layoff_or_lift_on_the_table():
    """RR-5: until a seat has opened it may not touch melds on the table -- only slots it
    starts in this play; once opened, every slot."""
    g = start(OPENER + [""])                          # four seats
    open_seat_0(g)
    on_table = [t for t in legal_texts(g) if t.split()[0] in ("layoff", "lift")
                and t.endswith((" m0", " m1"))]
    assert on_table == [] and any(t.endswith(" m2") for t in family(g, "layoff"))
    draws(g, 3)                                       # seats 1-3 draw; seat 0 again
    assert {"lift 9C m0", "lift 5H m1"} <= family(g, "lift")
    assert {t for t in family(g, "layoff") if t.endswith(" m0")}


def test_rr5_the_opening_counts_only_new_melds_from_the_hand():
    """RR-5: a seat's own new melds in this play make the 40; a new meld is from the hand."""
    g = start(["9C 9D 9S TC TD", "", ""])
    play(g, "meld 9C 9D 9S")                          # 27
    assert "commit" not in legal_texts(g)
    play(g, "layoff TC m1", "layoff TD m1")           # an unfinished slot counts nothing
    assert "commit" not in legal_texts(g)
    play(g, "reset")
    assert g.melds() == [] and len(g.hand(0, 0)) == 11


def test_rr5_opening_from_hand_in_one_play_then_open():
    g = start(OPENER)
    open_seat_0(g)
    assert g.states[0]["placed_before"][0] == 1 and g.states[0]["placed_before"][1] == 0


# ---------------------------------------------------------------------------------- RR-6

def rob_position():
    """Seat 0 opened (m0 9C 9D 9S, m1 5H-8H); seat 1 opened with m2 KC KD KS and m3 2S-5S
    and holds 5C 5D; seat 2 and seat 0 draw; seat 1 to play."""
    g = start(["9C 9D 9S 5H 6H 7H 8H", "KC KD KS 2S 3S 4S 5S 5C 5D", ""])
    open_seat_0(g)
    play(g, "meld KC KD KS", "meld 2S 3S 4S 5S", "commit", "end turn")
    draws(g, 2)
    return g


def test_rr6_rob_the_table_keep_every_card_valid_and_use_a_hand_card():
    """RR-6: seat 1 takes 5H from seat 0's run (6H 7H 8H stays a run) and makes a set of it
    with its own 5C 5D: every table card is still on the table, every meld is valid, hand
    cards went down; the play commits and the 5H stays seat 0's card."""
    g = rob_position()
    assert g.current_player() == 1
    before = set(np.flatnonzero(g.states[0]["loc"] == LOC_TABLE).tolist())
    five = int(g.states[0]["m_cards"][1][0])
    play(g, "lift 5H m1", "put m4")
    assert "commit" not in legal_texts(g)             # m4 holds one card: unfinished
    play(g, "layoff 5C m4", "layoff 5D m4", "commit")
    assert table_texts(g)[1] == ["6H", "7H", "8H"] and table_texts(g)[4] == ["5C", "5D", "5H"]
    after = set(np.flatnonzero(g.states[0]["loc"] == LOC_TABLE).tolist())
    assert before < after and len(after - before) == 2
    assert g.states[0]["owner"][five] == 0 and g.melds()[4]["founder"] == 1


def test_rr6_a_rearrangement_needs_a_hand_card_and_valid_melds():
    """RR-6: moving table cards only never commits -- not even when every meld is valid
    again -- and a play that leaves a meld invalid does not commit."""
    g = rob_position()
    play(g, "lift 9C m0", "put m2")                   # 9C among the kings: both invalid
    assert [m["kind"] for m in g.melds()][:3] == ["unfinished", "run", "unfinished"]
    assert "commit" not in legal_texts(g)
    play(g, "lift 9C m2", "put m0")                   # back: the table as it was
    assert g.melds()[0]["kind"] == "set" and "commit" not in legal_texts(g)
    play(g, "layoff 5C m4")
    assert "commit" not in legal_texts(g)             # a lone 5C is no meld


def test_rr6_table_cards_never_go_to_a_hand():
    """RR-6: no action takes a table card into a hand; a lifted card must be put in a slot
    (or the play reset, which puts it back); ``reset`` restores table and hand exactly."""
    g = rob_position()
    table = [m["text"] for m in g.melds()]
    hand = sorted(g.hand(0, 1))
    play(g, "layoff 5C m4", "lift 8H m1")
    assert legal_texts(g) <= {f"put m{m}" for m in range(g.spec.max_melds)} | {"reset"}
    assert "reset" in legal_texts(g) and "put m1" not in legal_texts(g)
    with pytest.raises(ActionError, match="malformed meld slot 'hand'"):
        g.variant.parse_action("put hand")
    play(g, "put m4", "reset")
    assert [m["text"] for m in g.melds()] == table and sorted(g.hand(0, 1)) == hand


def test_rr6_jokers_are_re_declared_by_their_new_meld():
    """RR-6: a joker lifted from one meld and put into another stands for what that meld
    needs: XX=9S in a set of nines becomes XX=9H at the top of 5H-8H."""
    g = start(["9C 9D XX 5H 6H 7H 8H 9H", "", ""])
    play(g, "meld 9C 9D 9S", "meld 5H 6H 7H 8H", "commit", "end turn")
    assert table_texts(g)[0] == ["9C", "9D", "XX=9S"]
    draws(g, 2)
    play(g, "layoff 9H m0", "lift XX m0", "put m1", "commit")
    assert table_texts(g)[0] == ["9C", "9D", "9H"]
    assert table_texts(g)[1] == ["5H", "6H", "7H", "8H", "XX=9H"]


def test_rr6_an_invalid_commit_is_refused_and_changes_nothing():
    g = rob_position()
    play(g, "lift 9C m0", "put m2")
    snap = g.states.copy()
    with pytest.raises(IllegalActionError):
        g.step_one(0, "commit")
    assert g.states.tobytes() == snap.tobytes()


def test_rd8_the_edit_cap_bounds_a_turn_a_lift_and_its_put_count_once():
    """D8: after ``max_edits`` edits a turn offers no more; a lift and the put that completes
    it are one edit, so the put is always offered (D6: never into the lifted card's slot)."""
    g = start(["9C 9D 9S 5H 6H 7H 8H", "", ""], max_edits=3)
    play(g, "meld 9C 9D 9S", "meld 5H 6H 7H 8H", "lift 8H m1")
    assert {"put m0", "put m2"} <= legal_texts(g) and "put m1" not in legal_texts(g)
    play(g, "put m0")                                 # 9C 9D 9S 8H: unfinished
    assert legal_texts(g) == {"reset"}
    play(g, "reset")
    assert family(g, "meld") == set() and legal_texts(g) == {"draw stock"}


# ---------------------------------------------------------------------------------- RR-7

def test_rr7_going_out_wins_and_the_others_pay_their_hand_values():
    """RR-7: the first seat to empty its hand wins at once (its commit ends the hand); each
    other seat scores minus its hand value, the winner what they lost: the points sum to 0."""
    g = start(["9C 9D 9S 5H 6H 7H 8H AC AD AS 4H", "", ""])
    play(g, "meld 9C 9D 9S", "meld 4H 5H 6H 7H 8H", "meld AC AD AS")
    assert len(g.hand(0, 0)) == 0
    lost = [hand_value(g, p) for p in (1, 2)]
    event = g.step_one(0, "commit")
    s = g.states[0]
    assert event == EVENT_HAND_OVER and s["phase"] == PHASE_HAND_OVER
    assert list(s["h_points"][:3]) == [sum(lost), -lost[0], -lost[1]]
    assert s["h_winner"] == 0 and g.summary().end == "went out"


def test_rr7_everyone_passes_fewest_cards_then_lowest_value_wins():
    """RR-7: stock empty and every seat passing in turn ends the hand: fewest cards wins,
    then the lowest hand value; the winner takes what the others lose."""
    g = start(["9C 9D 9S 5H 6H 7H 8H", "", ""])
    open_seat_0(g)                                    # seat 0 holds 4 cards
    draws(g, len(g.stock()))
    for _ in range(3):
        assert legal_texts(g) >= {"pass"} and not family(g, "draw")
        play(g, "pass")
    s = g.states[0]
    values = [hand_value(g, p) for p in range(3)]
    sizes = [len(g.hand(0, p)) for p in range(3)]
    best = min(range(3), key=lambda p: (sizes[p], values[p]))
    assert s["h_winner"] == best
    assert sum(s["h_points"][:3]) == 0
    assert all(s["h_points"][p] == -values[p] for p in range(3) if p != best)


def test_rr7_a_tie_shares_the_pot_the_remainder_from_the_dealers_left():
    """RR-7 / D11, W4: seats 0 and 1 end with 12 cards worth 85 each, seat 2 with 12 worth
    113 (``max_turns`` ends the hand as an exhausted stock does): seats 0 and 1 share 113,
    the odd point to seat 0, the first after the dealer (seat 2)."""
    g = start(["2C 3D 4H 5S 6C 7D 8H 9S TC JD QH", "2D 3H 4S 5C 6D 7H 8S 9C TD JH QS",
               "KC KD KH KS QC QD JC JS TH TS AS"], stock="AC AD 2H", max_turns=3)
    draws(g, 3)
    s = g.states[0]
    assert s["phase"] == PHASE_HAND_OVER and [hand_value(g, p) for p in range(3)] == [85, 85, 113]
    assert list(s["h_points"][:3]) == [57, 56, -113] and s["h_winner"] == -1


def test_rd13_a_game_is_one_hand_per_seat_as_dealer():
    """D13, ``episode="game"``: each seat deals once, the deal rotates, scores add up."""
    g = Game(robbers(num_players=3, episode="game", max_turns=3), 1)
    g.reset(seed=5)
    first = int(g.states[0]["dealer"])
    for k in range(3):
        assert (g.states[0]["hand_no"], g.states[0]["dealer"]) == (k, (first + k) % 3)
        draws(g, 3)
    s = g.states[0]
    assert s["phase"] == PHASE_GAME_OVER and sum(s["scores"][:3]) == 0


def test_record_of_a_robbers_game_replays():
    """A game record (the actions as text) of a random hand replays to the same state."""
    rng = random.Random(4)
    rec = Recorder(robbers(num_players=4, max_turns=40), 21)
    while not rec.game.done(0):
        legal = rec.game.legal_actions(0)
        commit = rec.game.variant.layout.commit
        rec.play(commit if commit in legal else rng.choice(legal))
    game, log = replay(rec.record)
    assert game.states.tobytes() == rec.game.states.tobytes()
    assert any(line.startswith("Hand ends") for line in log)


# ------------------------------------------------------------------ random games: properties

def choose(g: Game, rng: random.Random, appetite: float) -> int:
    """A legal action: a commit when one is legal (mostly); with probability ``appetite`` an
    edit, preferring one after which a commit is legal (so that random play robs and goes
    out, not only draws); else a draw, end, pass or reset."""
    lay = g.variant.layout
    legal = [int(a) for a in g.legal_actions(0)]
    if lay.commit in legal and rng.random() < 0.9:
        return lay.commit
    edits = [a for a in legal if a >= lay.meld]
    others = [a for a in legal if a < lay.meld and a != lay.commit]
    if not edits or (others and rng.random() >= appetite):
        return rng.choice(others or legal)
    rng.shuffle(edits)
    for a in edits[:12]:
        trial = g.clone()
        trial.step_one(0, a)
        if lay.commit in trial.legal_actions(0):
            return a
    return rng.choice(edits)


def play_checked(g: Game, rng: random.Random, appetite: float, seen: Counter) -> None:
    """Play one random hand, checking the mask against the reference, the table against
    RR-3 and the cards against their places at every position."""
    v = g.variant
    lay = v.layout
    lifted = False
    while g.states[0]["phase"] == PHASE_PLAY:
        s = g.states[0]
        assert set(g.legal_actions(0)) == reference_legal(v, s)
        check_table(v, s)
        check_invariants(s, v.num_players)
        seen["positions"] += 1
        a = choose(g, rng, appetite)
        lifted = lifted or lay.lift <= a < lay.put
        if a == lay.commit:
            seen["robbed" if lifted else "committed"] += 1
        if a in (lay.commit, lay.reset):
            lifted = False
        g.step_one(0, a)
    s = g.states[0]
    seen[g.summary().end] += 1
    assert sum(s["h_points"][:v.num_players]) == 0


@pytest.mark.parametrize("seats", [pytest.param(2, marks=pytest.mark.slow), 4,
                                   pytest.param(6, marks=pytest.mark.slow)])
def test_random_games_match_the_reference_and_keep_every_card(seats):
    """RR-1 ... RR-7: random hands; at every position the mask equals the reference, every
    slot's kind is RR-3's, every card is in one place; the points sum to zero; the hands
    reach robberies (a commit after a lift)."""
    seen: Counter = Counter()
    for seed in range(3):
        g = Game(robbers(num_players=seats, max_turns=60 * seats, max_edits=30), 1)
        g.reset(seed=100 * seats + seed)
        play_checked(g, random.Random(seed), (0.6, 0.8, 0.95)[seed], seen)
    assert seen["positions"] > 500 and seen["committed"] > 0 and seen["robbed"] > 0


def checked(g: Game, *texts: str) -> None:
    """``play`` with the mask compared to the reference and the table checked first."""
    for text in texts:
        assert set(g.legal_actions(0)) == reference_legal(g.variant, g.states[0]), text
        check_table(g.variant, g.states[0])
        play(g, text)


def test_the_reference_agrees_through_a_robbery_that_goes_out():
    """Going out is rare in random play, so the reference is also walked through a scripted
    hand: two openings, draws, then seat 1 robs seat 0's run and, its hand empty, goes out."""
    g = start(["9C 9D 9S 5H 6H 7H 8H", "KC KD KS 2S 3S 4S 5S 6S 7S 5C 5D", ""])
    checked(g, "meld 9C 9D 9S", "meld 5H 6H 7H 8H", "commit", "end turn",
            "meld KC KD KS", "meld 2S 3S 4S 5S 6S 7S", "commit", "end turn", "draw stock", "draw stock",
            "lift 5H m1", "put m4", "layoff 5C m4", "layoff 5D m4", "commit")
    assert g.states[0]["phase"] == PHASE_HAND_OVER
    assert g.summary().end == "went out" and g.states[0]["h_winner"] == 1
