"""One or more tests per rule CR-1 ... CR-5 of docs/crazy_rummy.md (Crazy Rummy), per rule
decision D1 ... D13 and worked example W1 ... W4 of that page, each played as a scripted
table position (``german_helpers.crazy_start``); then random rounds of 3, 4 and 6 seats
whose mask is compared with the slow reference (tests/german_reference.py, Crazy's rules)
at every position, with every card in exactly one place.

Seat p is the page's P(p+1); unless a test says otherwise there are three seats, the last
deals, so seat 0 holds eight cards and plays first without drawing, and the round is 13
(kings wild), so the other ranks play as themselves.
"""

from __future__ import annotations

import random
from collections import Counter

import numpy as np
import pytest

from mountain_rummy_env import ActionError, ConfigError, Game, make_variant
from mountain_rummy_env.core.state import (
    EVENT_GAME_OVER, EVENT_HAND_OVER, EVENT_NONE, LOC_TABLE, PHASE_GAME_OVER, PHASE_HAND_OVER,
    PHASE_PLAY, check_invariants,
)
from mountain_rummy_env.envs import observation as O
from mountain_rummy_env.records import Recorder, replay

from german_helpers import crazy, crazy_deck, crazy_start, pass_turns, play_turn, stock_size
from german_reference import JOKER, reference_for, reference_legal
from helpers import legal_texts, play

RANK_PENALTY = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)    # CR-5: A 1, 2-10, J Q K 10
WILD_PENALTY = 25
KINGS = 13                                                    # the round whose wilds are kings


def start(hands, stock: str = "", *, round: int = KINGS, **options) -> Game:
    """:func:`german_helpers.crazy_start`, in round 13 unless told otherwise."""
    return crazy_start(hands, stock, round=round, **options)


def family(g, name: str) -> set[str]:
    return {t for t in legal_texts(g) if t.startswith(name)}


def checked_texts(g):
    """The legal actions as text, after checking that the reference agrees with the mask."""
    assert set(g.legal_actions(0)) == reference_legal(g.variant, g.states[0])
    return legal_texts(g)


def table_texts(g) -> list[list[str]]:
    return [m["text"] for m in g.melds()]


def penalty(g, seat: int) -> int:
    """CR-5 penalty of a seat's hand recounted here: a card of the wild rank 25, else its rank."""
    wild = int(g.states[0]["wild_rank"])
    return sum(WILD_PENALTY if c % 13 == wild else RANK_PENALTY[c % 13] for c in g.hand(0, seat))


# ---------------------------------------------------------------------------------- CR-1

@pytest.mark.parametrize("players", [3, 4, 5, 6])
def test_cr1_one_deck_seven_each_eight_to_the_first_no_upcard(players):
    """CR-1: 52 cards, no jokers; 7 each, 8 to the seat after the dealer, who plays first
    without drawing; no up-card; the stock is the rest; the wild rank is the round's."""
    g = Game(crazy(num_players=players), 1)
    g.reset(seed=11)
    s = g.states[0]
    first = (int(s["dealer"]) + 1) % players
    assert sorted(g.spec.card_face.tolist()) == list(range(52))
    sizes = [len(g.hand(0, p)) for p in range(players)]
    assert sizes == [8 if p == first else 7 for p in range(players)]
    assert g.discard_pile() == [] and len(g.stock()) == 52 - 7 * players - 1
    assert g.current_player() == first and s["phase"] == PHASE_PLAY and s["wild_rank"] == 0
    assert not family(g, "draw") and not family(g, "take")
    check_invariants(s, players)


@pytest.mark.parametrize("players,dealer", [(3, 0), (4, 1), (6, 4)])
def test_cr1_deal_one_at_a_time_the_eighth_card_last(players, dealer):
    """CR-1 / D10: one card at a time from the seat after the dealer; that seat's eighth
    card is the one after the round of sevens; the rest is the stock, in order."""
    order = np.random.default_rng(players).permutation(52).tolist()
    g = Game(crazy(num_players=players), 1)
    g.reset(seed=3, deck=order, dealer=dealer)
    dealt = 7 * players
    for k in range(players):
        extra = [order[dealt]] if k == 0 else []
        seat = (dealer + 1 + k) % players
        assert sorted(g.hand(0, seat)) == sorted(order[k:dealt:players] + extra)
    assert g.stock() == order[dealt + 1:]


@pytest.mark.parametrize("round_", [1, 5, 13])
def test_cr1_the_wild_rank_is_the_rounds(round_):
    """CR-1: the wild rank is A in round 1, 2 in round 2, ... K in round 13; the round's
    four cards of that rank count 25 in hand (CR-5), the others their rank."""
    g = start(["AC 2C 3C 4C 5C 6C 7C 8C", "9C TC JC QC KC AD 2D", "3D 4D 5D 6D 7D 8D 9D"],
                    round=round_, max_turns=1)
    assert g.states[0]["wild_rank"] == round_ - 1
    play(g, "discard 8C")
    held = ((0, 1, 2, 3, 4, 5, 6), (8, 9, 10, 11, 12, 0, 1), (2, 3, 4, 5, 6, 7, 8))   # ranks
    expected = [sum(WILD_PENALTY if r == round_ - 1 else RANK_PENALTY[r] for r in ranks)
                for ranks in held]
    assert list(g.summary().deadwood) == expected == [penalty(g, p) for p in range(3)]


def test_cr1_rounds_follow_and_the_deal_rotates():
    """CR-1 / D10: in a game episode each round is dealt by the next seat with the next wild
    rank, from ``round`` to 13; then the game is over (CR-5)."""
    g = Game(crazy(num_players=3, episode="game", round=11, max_turns=1), 1)
    g.reset(seed=5)
    first = int(g.states[0]["dealer"])
    for k, round_ in enumerate((11, 12, 13)):
        s = g.states[0]
        assert (s["hand_no"], s["wild_rank"], s["dealer"]) == (k, round_ - 1, (first + k) % 3)
        assert g.current_player() == (first + k + 1) % 3
        event = g.step_one(0, sorted(family(g, "discard"))[0])   # max_turns=1: the round ends
    assert event == EVENT_GAME_OVER and g.states[0]["phase"] == PHASE_GAME_OVER


def test_cr1_a_round_episode_then_the_next_round():
    """CR-1: ``episode="round"`` stops after the round; the next hand is the next round."""
    g = Game(crazy(num_players=4, round=12, max_turns=1), 1)
    g.reset(seed=2)
    g.step_one(0, sorted(family(g, "discard"))[0])
    assert g.states[0]["phase"] == PHASE_HAND_OVER
    g.next_hand(0)
    assert g.states[0]["wild_rank"] == 12
    g.step_one(0, sorted(family(g, "discard"))[0])
    assert g.states[0]["phase"] == PHASE_GAME_OVER          # round 13 was the last
    with pytest.raises(ValueError):
        g.next_hand(0)


def test_cd10_first_dealer_from_the_seed():
    """D10: the first dealer is drawn at random from the seed: each seat for some seed, the
    same for the same seed."""
    g = Game(crazy(num_players=3), 1)
    dealers = set()
    for seed in range(12):
        g.reset(seed=seed)
        dealers.add(int(g.states[0]["dealer"]))
        again = Game(g.variant, 1)
        again.reset(seed=seed)
        assert again.states.tobytes() == g.states.tobytes()
    assert dealers == {0, 1, 2}


@pytest.mark.parametrize("options,words", [
    ({"num_players": 2}, r"num_players must be .*3\.\.6"),
    ({"num_players": 7}, r"num_players must be .*3\.\.6"),
    ({"round": 0}, r"round must be an integer in 1\.\.13; got 0"),
    ({"round": 14}, r"round must be an integer in 1\.\.13; got 14"),
    ({"episode": "hand"}, r"episode must be one of 'round', 'game'"),
])
def test_cr1_bad_options_name_the_range(options, words):
    with pytest.raises(ConfigError, match=words):
        make_variant("crazy", **options)


# ---------------------------------------------------------------------------------- CR-2

def test_cr2_the_ace_is_low_only():
    """CR-2: A-2-3 is a run, Q-K-A is none (not even as text); an ace lays off below a 2,
    never above a king."""
    g = start(["2S 3S 4S TS JS QS KS AS", "", ""], round=7)
    with pytest.raises(ActionError, match="not a set or run"):
        g.variant.parse_action("meld QS KS AS")
    assert {"meld AS 2S 3S", "meld AS 2S 3S 4S", "meld JS QS KS"} <= family(g, "meld")
    play(g, "meld 2S 3S 4S")
    assert "layoff AS m0" in legal_texts(g)
    play(g, "meld TS JS QS KS")
    assert legal_texts(g) == {"discard AS"}     # never above KS; below 2S it would empty the hand


def test_cr2_sets_of_three_or_four_runs_of_three_or_more():
    """CR-2: sets of 3-4 cards of one rank, runs of 3+ of one suit; nothing else melds."""
    g = start(["5C 5D 5H 5S 8H 9H TH 2C", "", ""])
    assert family(g, "meld") == {"meld 5C 5D 5H", "meld 5C 5D 5S", "meld 5C 5H 5S",
                                 "meld 5D 5H 5S", "meld 5C 5D 5H 5S", "meld 8H 9H TH"}


def test_cr2_wilds_in_any_number_each_declared():
    """CR-2: wilds stand for any card, any number in one meld (three kings and one natural),
    each declared as the card it stands for."""
    g = start(["5H KC KD KS 2C 9D 4S 7C", "", ""])
    assert "meld 5H 6H 7H 8H" in family(g, "meld")
    play(g, "meld 5H 6H 7H 8H")
    assert table_texts(g) == [["5H", "KC=6H", "KD=7H", "KS=8H"]]


def test_cd1_a_wild_rank_card_played_as_itself():
    """D1 / CR-2: in round 5 the 5H is a wild; played as itself it is a wild declared 5H:
    the table shows a plain 5H, the observation marks it as a wild, and no natural can
    ever swap it (the 5H is the only 5H)."""
    g = start(["4H 5H 6H 9C 9D 2S JS QC", "", ""], round=5)
    play(g, "meld 4H 5H 6H")
    assert table_texts(g) == [["4H", "5H", "6H"]]
    obs = encode(g, 1)
    lay = O.observation_layout(g.variant)
    assert obs[lay.card_plane(O.P_JOKER_FACES)].nonzero()[0].tolist() == [30]   # 5H
    assert obs[lay.card_plane(O.P_TABLE_FACES)].nonzero()[0].tolist() == [29, 30, 31]


def test_cd2_melds_of_wilds_only():
    """D2 / CR-2: three 5s in round 5 meld as a set of 5s (each as itself) or as any other
    meld; no natural is needed."""
    g = start(["5C 5D 5H 9S 2C 4D JH QC", "", ""], round=5)
    assert {"meld 5C 5D 5H", "meld 6H 7H 8H", "meld 9S TS JS"} <= family(g, "meld")
    play(g, "meld 5C 5D 5H")
    assert table_texts(g) == [["5C", "5D", "5H"]]


# ---------------------------------------------------------------------------------- CR-3

# Seat 0 melds 5D-6D-7D (m0) and 9C 9H 9S with the king of clubs as 9C (m1), then discards
# 2C, keeping 3S; seat 1 draws 2H to 4D 8D 9C TH JH QH KD.
TABLE = ["5D 6D 7D 9H 9S KC 2C 3S", "4D 8D 9C TH JH QH KD", ""]


def table_position(**options) -> Game:
    g = start(TABLE, stock="2H 4S 7S", **options)
    play(g, "meld 5D 6D 7D", "meld 9C 9H 9S", "discard 2C", "draw stock")
    assert table_texts(g) == [["5D", "6D", "7D"], ["KC=9C", "9H", "9S"]]
    return g


def test_cr3_take_the_top_discard_but_not_discard_it_again():
    """CR-3: draw the stock's top card or take the top discard (any seat, melded or not);
    the card taken may not be discarded that turn."""
    g = start(TABLE, stock="2H")
    play(g, "meld 5D 6D 7D", "meld 9C 9H 9S", "discard 2C")
    assert legal_texts(g) == {"draw stock", "take 2C"}
    play(g, "take 2C")
    assert "discard 2C" not in legal_texts(g) and "discard QH" in legal_texts(g)


def test_cd4_layoffs_and_swaps_from_the_first_meld_on():
    """CR-3 / D4 / W3: before its first meld a seat may only meld (any meld opens, no minimum);
    from that meld on, the same turn included, it lays off on any meld and swaps."""
    g = table_position()
    assert not family(g, "layoff") | family(g, "swap")
    assert "meld TH JH QH" in family(g, "meld")
    play(g, "meld TH JH QH")
    assert g.states[0]["placed_before"][1] == 1
    assert {"layoff 4D m0", "layoff 8D m0", "layoff KH m2", "layoff 9H m2"} & checked_texts(g) \
        == {"layoff 4D m0", "layoff 8D m0", "layoff KH m2"}       # 9H shows already (D3)
    assert family(g, "swap") == {"swap 9C m1"}


def test_cr3_swap_a_table_wild_for_the_natural():
    """CR-3 / D5: the natural 9C takes the place of the king declared 9C; the king goes to
    the swapper's hand with no obligation: it may even be discarded that turn."""
    g = table_position()
    play(g, "meld TH JH QH", "swap 9C m1")
    assert table_texts(g)[1] == ["9C", "9H", "9S"]
    assert 12 in g.hand(0, 1)                                  # KC
    assert "discard KC" in legal_texts(g) and g.states[0]["obligation"] == -1
    play(g, "discard KC")
    assert g.discard_pile()[-1] == 12


def test_cd5_a_wild_rank_card_is_no_natural_to_swap():
    """D5: in round 9 the 9C is a wild itself, so it cannot swap the 9H declared 9C."""
    g = start(["8C TC 9H 2D 4S 6H QD KS", "9C TH JH QH", ""], stock="2H", round=9)
    play(g, "meld 8C 9C TC", "discard 2D", "draw stock", "meld TH JH QH")
    assert table_texts(g) == [["8C", "9H=9C", "TC"], ["TH", "JH", "QH"]]
    assert not family(g, "swap")


def test_cd3_no_face_shows_twice_on_the_table():
    """D3: with one deck a face shows once: no meld or layoff puts a face on the table that a
    card there already shows (a natural, or a wild's declaration), whoever would play it;
    the natural 9C reaches the table only by the swap."""
    g = start(["5D 6D 7D 9H 9S KC 2C 3S", "9C TC JC 7C 7S KD 4H", ""], stock="2H")
    play(g, "meld 5D 6D 7D", "meld 9C 9H 9S", "discard 2C", "draw stock")
    melds = {t for t in checked_texts(g) if t.startswith("meld")}
    assert "meld 9C TC JC" not in melds and "meld 7C 7D 7S" not in melds
    assert {"meld TC JC QC", "meld 7C 7H 7S"} <= melds       # KD as QC, as 7H
    play(g, "meld TC JC QC")
    assert "layoff 9C m2" not in checked_texts(g) and "swap 9C m1" in legal_texts(g)
    play(g, "swap 9C m1")
    assert "layoff 9C m2" not in checked_texts(g)             # the 9C is there now
    assert "layoff 9D m1" in legal_texts(g)                   # KC, back in hand, as 9D


# ---------------------------------------------------------------------------------- CR-4

def test_cr4_going_out_needs_a_final_discard():
    """CR-4 / W1: no meld or layoff may empty the hand; discarding the last card goes out
    (the seat that went out scores 0, the others minus their hands)."""
    g = start(["2C 3C 4C 5C 7D 8D 9D TD", "AH 2H 3H 4H 5H 6H 7H", "JS QS KS AS 2S 3S 4S"])
    assert {"meld 2C 3C 4C 5C", "meld 7D 8D 9D TD"} <= family(g, "meld")
    play(g, "meld 2C 3C 4C 5C")
    assert "meld 7D 8D 9D TD" not in family(g, "meld")
    assert {"meld 7D 8D 9D", "meld 8D 9D TD"} <= family(g, "meld")
    play(g, "meld 7D 8D 9D")
    assert legal_texts(g) == {"discard TD"}                    # no layoff TD m1: empty hand
    assert play(g, "discard TD") == EVENT_GAME_OVER           # round 13 is the last
    s = g.summary()
    assert (s.end, s.winner) == ("went out", 0)
    assert list(s.hand_points) == [0, -(1 + 2 + 3 + 4 + 5 + 6 + 7), -(10 + 10 + 25 + 1 + 2 + 3 + 4)]


def test_cd7_a_seat_holding_one_card_must_draw():
    """CR-4 / D7: holding exactly one card, a seat draws from the stock (no take)."""
    g = table_position()
    play(g, "discard 2H")
    play_turn(g)
    assert len(g.hand(0, 0)) == 1 and g.discard_pile()
    assert legal_texts(g) == {"draw stock"}


def taken_card_position(swap_escape: bool) -> Game:
    """Seat 0 keeps 5D and 7C after melding 2C-6C (m0); seat 1 melds 6D-7D-8D (m1) and
    9H-TH-JH, or with ``swap_escape`` 9C TC and the king of diamonds as JC (m2); seat 2
    discards JC and seat 0 takes it."""
    second = "6D 7D 8D 9C TC KD 3S" if swap_escape else "6D 7D 8D 9H TH JH 3S"
    third = "9C TC JC" if swap_escape else "9H TH JH"
    g = start(["2C 3C 4C 5C 6C 5D 7C QS", second, "JC"], stock="2H 4S")
    play(g, "meld 2C 3C 4C 5C 6C", "discard QS", "draw stock", "meld 6D 7D 8D",
         f"meld {third}", "discard 2H", "draw stock", "discard JC", "take JC")
    return g


def test_cd6_no_placement_that_leaves_only_the_taken_card():
    """D6 / CR-3 / CR-4: the card taken may not be discarded, and placing it would empty the
    hand, so no placement may leave it alone in hand; the turn can always end."""
    g = taken_card_position(swap_escape=False)
    assert {"layoff 5D m1", "layoff 7C m0"} <= checked_texts(g)
    play(g, "layoff 5D m1")
    assert checked_texts(g) == {"discard 7C"}


def test_cd6_unless_the_taken_card_swaps_for_a_wild():
    """D6 / D5: when a wild on the table stands for the taken card, that card may be left
    alone: it swaps for the wild, and the wild is discarded to go out."""
    g = taken_card_position(swap_escape=True)
    assert "swap JC m2" in checked_texts(g)
    play(g, "layoff 5D m1")
    assert "layoff 7C m0" in checked_texts(g)
    play(g, "layoff 7C m0")
    assert checked_texts(g) == {"swap JC m2"}
    play(g, "swap JC m2")
    play(g, "discard KD")
    assert g.done() and g.summary().winner == 0


# ---------------------------------------------------------------------------------- CR-5

SIX = ["", "", "", "2C 3C 4C 5C 7D 8D 9D", "", ""]


def to_the_last_stock_card(g: Game) -> None:
    """Play six seats up to seat 3's second turn, which draws the ninth and last stock card:
    every turn draws (seat 0's first excepted) and discards the card drawn."""
    play(g, f"discard {g.variant.deck.card_text(g.hand(0, 0)[0])}")
    pass_turns(g, 8)
    play(g, "draw stock")
    assert g.current_player() == 3 and stock_size(g) == 0 and g.states[0]["phase"] == PHASE_PLAY


def test_cr5_the_round_ends_after_the_turn_that_drew_the_last_card():
    """CR-5 / D8: the seat drawing the last stock card finishes its turn; then the round
    ends with nobody out, every seat scoring minus its hand."""
    g = start(SIX, stock="? ? ? ? ? ? ? ? QS")
    to_the_last_stock_card(g)
    assert "meld 2C 3C 4C 5C" in legal_texts(g)
    play(g, "discard QS")
    assert g.done()
    s = g.summary()
    assert (s.end, s.winner) == ("exhausted", -1)
    assert list(s.hand_points) == [-penalty(g, p) for p in range(6)] and min(s.hand_points) < 0


def test_cd8_the_last_turn_may_still_go_out():
    """D8: on the turn that drew the last stock card a seat may meld and go out by its
    discard; the round ends by going out."""
    g = start(SIX, stock="? ? ? ? ? ? ? ? QS")
    to_the_last_stock_card(g)
    play(g, "meld 2C 3C 4C 5C", "meld 7D 8D 9D", "discard QS")
    assert g.done()
    s = g.summary()
    assert (s.end, s.winner, s.hand_points[3]) == ("went out", 3, 0)


SCORING = ["AC 2D 3H 4S 5C 6D TH JS", "QC KD 9H 8S 7C 5S AD", "2C 3D 4H 6S TC JD QS"]


def test_cr5_penalties_wild_25_ace_1_faces_and_pictures_10():
    """CR-5 / W2 / D8: A 1, 2-10 face value, J Q K 10, a wild (round 5: the fives) 25; the
    turn cap (max_turns) ends the round with nobody out; melds count nothing (D9)."""
    g = start(SCORING, round=5, max_turns=1)
    assert play(g, "discard JS") == EVENT_HAND_OVER
    s = g.summary()
    assert (s.end, s.winner) == ("exhausted", -1)
    assert s.deadwood == (1 + 2 + 3 + 4 + 25 + 6 + 10, 10 + 10 + 9 + 8 + 7 + 25 + 1,
                          2 + 3 + 4 + 6 + 10 + 10 + 10) == (51, 70, 45)
    assert s.hand_points == (-51, -70, -45) and s.credit == (0, 0, 0)


@pytest.mark.parametrize("before,winner", [((-10, -20, -40), 0), ((-54, 0, -20), -1)])
def test_cd9_lowest_penalty_total_wins_ties_share(before, winner):
    """CR-5 / D9 / W4: after round 13 the highest total (the lowest penalty) wins; equal
    leaders share (``game_winner`` -1). Round 13: kings wild, penalties 31, 65 and 45."""
    g = Game(crazy(num_players=3, round=13, max_turns=1), 1)
    g.reset(seed=0, deck=crazy_deck(SCORING), dealer=2, scores=list(before))
    assert play(g, "discard JS") == EVENT_GAME_OVER
    totals = [b - p for b, p in zip(before, (31, 65, 45))]
    assert list(g.summary().totals) == totals and g.summary().game_winner == winner


# ----------------------------------------------------------------------- decisions, more

def test_cd11_which_card_an_action_uses():
    """D11: a meld uses the naturals held and wilds for the rest, the wild taken this turn
    first (so the other stays discardable); ``discard 5C`` discards the printed 5C, wild or
    not."""
    g = start(["5D 2C 3C 4C 9H 9D JC QD", "9S TS 5H 8C 2S 3S 4S", ""], round=5)
    play(g, "discard 5D", "take 5D")
    play(g, "meld 9S TS JS")
    assert table_texts(g) == [["9S", "TS", "5D=JS"]]
    assert "discard 5H" in legal_texts(g)
    play(g, "discard 5H")
    assert g.variant.deck.card_text(g.discard_pile()[-1]) == "5H"


def test_cd12_the_action_space():
    """D12: German's families over 52 cards, 2203 ids; ``discard XX`` has an id, never legal."""
    v = crazy()
    assert tuple(v.layout) == (0, 1, 53, 382, 1266, 2150, 2203) and v.table.num_templates == 329
    assert v.parse_action("discard XX") == 2202
    for a in range(v.num_actions):
        assert v.parse_action(v.action_text(a)) == a
    g = start(["5H KC KD KS 2C 9D 4S 7C", "", ""])
    assert 2202 not in g.legal_actions(0)


def encode(g: Game, seat: int) -> np.ndarray:
    out = np.zeros((1, O.observation_size(g.variant)), np.float32)
    O.encode_observations(g.states, g.variant.spec, np.array([seat]), out)
    return out[0]


def test_cd13_the_observation_says_the_round_and_marks_table_wilds():
    """D13: the variant scalars are the round / 13 and the wild rank (A 0 ... K 1); a wild on
    the table marks its declared face in the joker plane, and only its own id as a table
    card (a 52-card deck has no joker columns); a wild in hand counts 25 in my deadwood."""
    g = table_position(round=13)
    lay = O.observation_layout(g.variant)
    assert lay.variant_scalars == ("round", "wild_rank")
    obs = encode(g, 1)
    assert obs[lay.variant_scalar("round")] == 1.0 and obs[lay.variant_scalar("wild_rank")] == 1.0
    assert obs[lay.card_plane(O.P_JOKER_FACES)].nonzero()[0].tolist() == [8]          # 9C
    assert 12 not in obs[lay.card_plane(O.P_TABLE_FACES)].nonzero()[0]               # KC itself
    assert obs[lay.seat_plane(0, 2)].nonzero()[0].tolist() == [12, 17, 18, 19, 34, 47]   # seat 0's
    deadwood = 4 + 8 + 9 + 10 + 10 + 10 + 25 + 2                  # 4D 8D 9C TH JH QH KD 2H
    assert obs[lay.scalar(O.S_MY_DEADWOOD)] == pytest.approx(deadwood / 200)
    g5 = start(["", "", ""], round=5)
    obs = encode(g5, 0)
    assert obs[lay.variant_scalar("round")] == pytest.approx(5 / 13)
    assert obs[lay.variant_scalar("wild_rank")] == pytest.approx(4 / 12)


def test_record_of_a_crazy_game_replays():
    """A game record (the actions as text) of a two-round game replays to the same state."""
    rng = random.Random(4)
    rec = Recorder(crazy(num_players=4, episode="game", round=12), 21)
    while not rec.game.done(0):
        rec.play(rng.choice(rec.game.legal_actions(0)))
    game, log = replay(rec.record)
    assert game.states.tobytes() == rec.game.states.tobytes()
    assert sum(line.startswith("Hand ends") for line in log) == 2


# ------------------------------------------------------------------ random rounds: properties

def choose(g: Game, rng: random.Random, appetite: float) -> int:
    """A legal action: with probability ``appetite`` a swap, meld, layoff or take when one is
    legal (in that order), else a draw or a random discard."""
    v = g.variant
    families: dict[str, list[int]] = {}
    for a in g.legal_actions(0):
        families.setdefault(v.action_family(a), []).append(a)
    if rng.random() < appetite:
        for name in ("swap", "meld", "layoff", "take"):
            if families.get(name):
                return rng.choice(families[name])
    for name in ("draw", "discard"):
        if families.get(name):
            return rng.choice(families[name])
    return rng.choice(g.legal_actions(0))


def play_checked(g: Game, rng: random.Random, appetite: float, seen: Counter) -> None:
    """Play to the end of the episode; at every position: each of the 52 cards in exactly
    one place (CR-1), the mask equal to the reference's and never empty (D6); at each
    round's end the points recounted where the hands are still dealt (CR-5, D9)."""
    seats = g.variant.num_players
    reference = reference_for(g.variant)
    totals = [0] * seats
    while True:
        s = g.states[0]
        check_invariants(s, seats)
        legal = set(g.legal_actions(0))
        refused = reference.refused.copy()
        expected = reference.legal(s)
        seen.update(reference.refused - refused)
        if legal != expected:
            text = g.variant.action_text
            raise AssertionError(f"engine only {sorted(text(a) for a in legal - expected)}, "
                                 f"reference only {sorted(text(a) for a in expected - legal)}; "
                                 f"record {s!r}")
        assert legal, "D6: the mask is never empty before the round ends"
        seen["positions"] += 1
        if any(s["loc"][c] == LOC_TABLE and c % 13 == s["wild_rank"] for c in range(52)):
            seen["wild on the table"] += 1
        a = choose(g, rng, appetite)
        seen["played " + g.variant.action_family(a)] += 1
        event = g.step_one(0, a)
        if event == EVENT_NONE:
            continue
        h = g.summary()
        if event == EVENT_GAME_OVER or not g.spec.episode_game:    # the hands are still there
            assert list(h.hand_points) == [0 if p == h.winner else -penalty(g, p)
                                           for p in range(seats)]
        totals = [x + y for x, y in zip(totals, h.hand_points)]
        assert list(h.totals) == totals and h.credit == (0,) * seats
        seen["went out" if h.winner >= 0 else "nobody out"] += 1
        if event == EVENT_GAME_OVER or not g.spec.episode_game:
            return


@pytest.mark.parametrize("seats", [3, 4, 6])
def test_random_rounds_keep_every_card_and_match_the_reference(seats):
    """CR-1 ... CR-5: random rounds of every round number; the mask equals the reference at
    every position, each card is in one place, the penalties are recounted."""
    seen: Counter = Counter()
    for seed in range(6):
        g = Game(crazy(num_players=seats, round=1 + (seed * 5 + seats) % 13), 1)
        g.reset(seed=1000 * seats + seed)
        play_checked(g, random.Random(seed), (0.5, 0.8, 0.95)[seed % 3], seen)
    assert seen["positions"] > 100


def test_random_play_reaches_the_interesting_cases():
    """The comparison is not vacuous: random rounds reach swaps, takes refused to a lone card
    and placements refused for emptying the hand (CR-4) or for a dead end (D6), wilds on the
    table, and rounds that end both ways; whole games end after round 13."""
    seen: Counter = Counter()
    for seed in range(12):
        seats = (3, 4, 6)[seed % 3]
        g = Game(crazy(num_players=seats, round=1 + seed), 1)
        g.reset(seed=seed)
        play_checked(g, random.Random(seed), 0.6, seen)
    for seed in range(12):
        seats = (3, 4, 6)[seed % 3]
        g = Game(crazy(num_players=seats, episode="game", round=11 + seed % 3), 1)
        g.reset(seed=seed)
        play_checked(g, random.Random(seed), (0.5, 0.9)[seed % 2], seen)
        assert g.states[0]["phase"] == PHASE_GAME_OVER and g.states[0]["wild_rank"] == 12
    for case in ("played swap", "played take", "played layoff", "CR-4 take", "CR-4 placement",
                 "D18 placement", "wild on the table", "went out", "nobody out"):
        assert seen[case] > 0, (case, seen)


def test_reference_reads_wilds_as_jokers():
    """The reference's own D1: a card of the record's wild rank plays as a joker."""
    ref = reference_for(crazy())
    assert ref.plays_as(4, 4) == JOKER and ref.plays_as(4, 0) == 4 and ref.printed(4) == 4
