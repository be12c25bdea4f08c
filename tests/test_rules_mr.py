"""One or more tests per rule MR-1 ... MR-14 of docs/mountain_rummy.md (Mountain Rummy),
built from explicit deck orders (``helpers.deck_for``). Seat 0 is the non-dealer (plays
first)."""

from __future__ import annotations

import numpy as np
import pytest

from mountain_rummy_env import ActionError, Game
from mountain_rummy_env.core.state import (
    LOC_DISCARD, LOC_FACEDOWN, LOC_HAND, LOC_STOCK, PHASE_DRAW, PHASE_GAME_OVER,
    PHASE_HAND_OVER, PHASE_PLAY, PHASE_RESPONSE, check_invariants,
)

from helpers import (
    check_meld_shapes, deck_for, hand_is, hand_text, legal_texts, play, recompute_credit_deadwood,
    short_variant, start,
    variant,
)


def ids(g, text):
    return g.variant.deck.parse_cards(text)


# ---------------------------------------------------------------------------------- MR-1

@pytest.mark.parametrize("jokers,cards", [(2, 54), (1, 53), (0, 52)])
def test_mr1_deck_composition(jokers, cards):
    """MR-1: 52 cards + num_jokers; 13 each, one up-card, the rest is the stock."""
    v = variant(num_jokers=jokers)
    g = Game(v, 1)
    g.reset(seed=5)
    assert v.deck.num_cards == cards
    loc = g.where()
    assert (loc == LOC_HAND).sum() == 13 and (loc == LOC_HAND + 1).sum() == 13
    assert (loc == LOC_DISCARD).sum() == 1 and len(g.discard_pile()) == 1
    assert len(g.stock()) == cards - 27 and (loc == LOC_STOCK).sum() == cards - 27
    check_invariants(g.states[0], 2)


@pytest.mark.parametrize("dealer", [0, 1])
def test_mr1_deal_one_at_a_time_from_the_non_dealer(dealer):
    """MR-1/MR-6: cards dealt one at a time from the top starting with the non-dealer; then
    the up-card; the rest is the stock (top = next card); the non-dealer plays first."""
    order = np.random.default_rng(7).permutation(54).tolist()
    g = Game(variant(), 1)
    g.reset(seed=1, deck=order, dealer=dealer)
    other = 1 - dealer
    assert sorted(g.hand(0, other)) == sorted(order[0:26:2])
    assert sorted(g.hand(0, dealer)) == sorted(order[1:26:2])
    assert g.discard_pile() == [order[26]]
    assert g.stock() == order[27:]
    assert g.current_player() == other and g.states[0]["dealer"] == dealer
    assert list(g.states[0]["deck"]) == order


# ---------------------------------------------------------------------------------- MR-2

def test_mr2_deadwood_values():
    """MR-2: in hand A 14, 2-10 face, J 11, Q 12, K 13, joker 15."""
    g = start("AC 2D 3H 4S 5C 6D 7H 8S 9C TD JH QS KC",
              "XX XX AD KD QH JS 9H 8C 7D 5S 4C 3D 2S", "9S", "6H", v=variant(max_turns=1))
    play(g, "draw stock", "discard 6H")
    s = g.summary()
    assert s.end == "exhausted"
    assert s.deadwood == (104, 118) and s.credit == (0, 0)
    assert s.standard_points == (-104, -118) and s.winner == 0


def test_mr2_meld_credits_ace_low_high_and_jokers():
    """MR-2: ace 1 at the low end of a run, 14 at the top; a joker earns its declared card."""
    g = start("AH 2H 3H QS KS AS 5C 7C 9D TD XX XX 8S", "", "2C", "4D",
              v=variant(max_turns=1))
    play(g, "draw stock", "meld AH 2H 3H", "meld QS KS AS", "meld 5C XX=6C 7C",
         "meld 9D TD JD", "discard 4D")
    assert [m["text"] for m in g.melds()][2:] == [["5C", "XX=6C", "7C"], ["9D", "TD", "XX=JD"]]
    s = g.summary()
    assert s.credit[0] == 6 + 39 + 18 + 30
    assert s.deadwood[0] == 8


def test_mr2_set_of_aces_is_14_each():
    """MR-2: aces in a set earn 14 each."""
    g = start("AC AD AS 4H", "", "2C", "9H", v=variant(max_turns=1))
    play(g, "draw stock", "meld AC AD AS", "discard 9H")
    assert g.summary().credit[0] == 42


# ---------------------------------------------------------------------------------- MR-3

def test_mr3_no_wrap_runs_do_not_exist():
    """MR-3: K-A-2 is no run; a set/run needs 3+ cards."""
    v = variant()
    for text in ("meld KH AH 2H", "meld QH KH AH 2H", "meld 5H 7H 8H", "meld 5H 6D 7H"):
        with pytest.raises(ActionError, match="not a set or run"):
            v.parse_action(text)
    with pytest.raises(ActionError):
        v.parse_action("meld 5H 6H")
    assert v.parse_action("meld AH 2H 3H") != v.parse_action("meld QH KH AH")


def test_mr3_ace_low_and_high_runs_and_nothing_past_an_ace():
    """MR-3: A-2-3 and Q-K-A are runs; nothing extends below an ace-low or above an
    ace-high run."""
    g = start("AH 2H 3H QS KS AS KH 4H 2S JS 9C 9D 7C", "", "5D", "8D")
    play(g, "draw stock")
    assert legal_texts(g) >= {"meld AH 2H 3H", "meld QS KS AS"}
    play(g, "meld AH 2H 3H", "meld QS KS AS")
    layoffs = {t for t in legal_texts(g) if t.startswith("layoff")}
    assert layoffs == {"layoff 4H m0", "layoff JS m1"}


def test_mr3_ace_laid_off_on_two_to_king_goes_high():
    """MR-3 + design decision: an ace laid off on a 2..K run goes high (credit 14)."""
    g = start("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", "", "5D", "8C")
    play(g, "draw stock", "meld 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", "layoff AH m0")
    meld = g.melds()[0]
    assert meld["text"][0] == "2H" and meld["text"][-1] == "AH"
    assert g.states[0]["m_lo"][0] == 1 and g.states[0]["m_hi"][0] == 13
    play(g, "base camp")
    assert g.summary().credit[0] == sum(range(2, 14)) + 14


def test_mr3_ace_laid_off_on_two_three_four_goes_low():
    """MR-3: an ace on 2-3-4 can only be the low end (credit 1)."""
    g = start("2D 3D 4D AD 9C 9S", "", "5C", "JH", v=variant(max_turns=1))
    play(g, "draw stock", "meld 2D 3D 4D", "layoff AD m0", "discard JH")
    assert g.melds()[0]["text"] == ["AD", "2D", "3D", "4D"]
    assert g.summary().credit[0] == 10


# ---------------------------------------------------------------------------------- MR-4

def test_mr4_sets_three_or_four_distinct_suits():
    """MR-4: 3 or 4 of a rank in different suits; a 3-set takes the missing suit, a
    4-set nothing more."""
    v = variant()
    with pytest.raises(ActionError):
        v.parse_action("meld 7C 7C 7D")
    with pytest.raises(ActionError):
        v.parse_action("meld 7C 7D 7H 7S 7C")
    g = start("7C 7D 7H 7S 2C 9D JH KS 4H 5S 8C TD QH", "", "3C", "6D")
    play(g, "draw stock")
    assert legal_texts(g) >= {"meld 7C 7D 7H", "meld 7C 7D 7H 7S"}
    play(g, "meld 7C 7D 7H")
    assert "layoff 7S m0" in legal_texts(g)
    play(g, "layoff 7S m0")
    assert not [t for t in legal_texts(g) if t.endswith(" m0")]


# ---------------------------------------------------------------------------------- MR-5

def _p2_melds_sixes(p1: str):
    """P1 holds ``p1``; P2 melds 6C 6D 6H on its first turn."""
    g = start(p1, "6C 6D 6H 2S 3D 9C JD KH QC 8S 4D TC 5C", "AS", "KS 2C JS")
    play(g, "draw stock", "discard KS", "draw stock", "meld 6C 6D 6H", "discard 2C",
         "draw stock")
    return g


def test_mr5_joker_not_declared_as_a_face_up_card():
    """MR-5: a joker may not be declared as a card already face up in a meld (6H), but may
    be laid off as a missing one (6S)."""
    g = _p2_melds_sixes("5H 7H XX 9D 3C 8C AH TS QD 4S 2H KD 7D")
    texts = legal_texts(g)
    assert "meld 5H 6H 7H" not in texts
    assert "regroup 5H 6H 7H" not in texts      # the 3-set would be left with 2
    assert "layoff 6S m0" in texts               # the joker as 6S
    play(g, "layoff 6S m0")
    assert g.melds()[0]["text"][-1] == "XX=6S" and g.melds()[0]["owners"] == [1, 1, 1, 0]


def test_mr5_natural_card_used_when_held_and_jokers_fill_only_missing_faces():
    """MR-5 + design decision: a meld uses the natural card of a face if held, jokers fill
    only the faces the player does not hold."""
    g = start("5H 6H 7H XX XX 9D 3C 8C AS TS QD 4S KD", "", "2D", "JC")
    play(g, "draw stock", "meld 5H 6H 7H")
    assert g.melds()[0]["text"] == ["5H", "6H", "7H"]
    assert hand_is(g, 0, "XX XX 9D 3C 8C AS TS QD 4S KD JC")
    g = start("5H 7H XX XX 9D 3C 8C AS TS QD 4S KD 2D", "", "2C", "JC")
    play(g, "draw stock", "meld 5H 6H 7H 8H")
    assert g.melds()[0]["text"] == ["5H", "XX=6H", "7H", "XX=8H"]


def test_mr5_two_jokers_need_a_natural():
    """MR-5: every meld holds a natural card; jokers fill at most the missing faces held."""
    g = start("5H 7H XX XX 9D 3C 8C AS TS QD 4S KD 2D", "", "2C", "JC")
    play(g, "draw stock")
    texts = legal_texts(g)
    assert "meld 4H 5H 6H 7H" in texts            # two jokers: 4H, 6H
    assert "meld 4H 5H 6H 7H 8H" not in texts     # would need three jokers
    assert "meld 3H 4H 5H" in texts and "meld JS QS KS" not in texts


def test_mr5_real_card_later_goes_elsewhere_never_into_the_jokers_place():
    """MR-5: once XX=6H is melded, the real 6H may be melded elsewhere but not replace it."""
    g = start("5H 7H XX 6C 6D 9D 3C 8C AS TS QD 4S KD", "", "2C", "JC 2D 6H")
    play(g, "draw stock", "meld 5H XX=6H 7H", "discard JC", "draw stock", "discard 2D",
         "draw stock")
    texts = legal_texts(g)
    assert not [t for t in texts if t.startswith("layoff 6H")]
    assert "meld 6C 6D 6H" in texts
    play(g, "meld 6C 6D 6H")
    assert g.melds()[0]["text"] == ["5H", "XX=6H", "7H"]  # the joker's declared card stays


# ---------------------------------------------------------------------------------- MR-6

MASK64 = (1 << 64) - 1


def _expected_first_dealer(seed: int) -> int:
    """MR-6 recomputed: splitmix64 + Fisher-Yates as in the core, then each player draws a
    card (jokers redrawn); highest deals, ace high, ties by suit C < D < H < S."""
    state = seed

    def nxt():
        nonlocal state
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    deck = list(range(54))
    for i in range(53, 0, -1):
        j = nxt() % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    drawn = [c for c in deck if c < 52][:2]
    keys = [((13 if c % 13 == 0 else c % 13) * 4 + c // 13) for c in drawn]
    return int(np.argmax(keys))


def test_mr6_first_dealer_by_drawing_cards():
    """MR-6: without a given dealer, the first dealer is the higher drawn card."""
    g = Game(variant(), 1)
    dealers = []
    for seed in range(24):
        g.reset(seed=seed)
        d = int(g.states[0]["dealer"])
        dealers.append(d)
        assert d == _expected_first_dealer(seed)
        assert g.current_player() == 1 - d  # the non-dealer plays first
    assert set(dealers) == {0, 1}


def test_mr6_hand_winner_deals_next():
    """MR-6: the winner of a hand deals the next one (episode='game')."""
    v = variant(max_turns=1, episode="game", target_score=10_000)
    g = start("AC 2D 3H 4S 5C 6D 7H 8S 9C TD JH QS KC", "2C 3C 4C 5S 6S 7S 8D 9D TH JC QD",
              "KH", "KS", v=v, dealer=1)
    play(g, "draw stock", "discard KS")  # P2 (seat 1) has less deadwood and wins
    assert g.summary().winner == 1
    s = g.states[0]
    assert s["dealer"] == 1 and s["current"] == 0 and s["hand_no"] == 1
    g = start("2C 3C 4C 5S 6S 7S 8D 9D TH JC QD", "AC 2D 3H 4S 5C 6D 7H 8S 9C TD JH QS KC",
              "KH", "KS", v=v, dealer=1)
    play(g, "draw stock", "discard KS")  # P1 (seat 0) wins and deals next
    assert g.summary().winner == 0
    assert g.states[0]["dealer"] == 0 and g.states[0]["current"] == 1


def test_mr6_winner_deals_next_across_scripted_hands():
    """MR-6 over four hands of one game: the hand winner deals the next hand, an exhausted
    tie (MR-12) keeps the dealer. Three hands are scripted (Game.reset's next_decks); the
    fourth comes from the game's own shuffle."""
    low, high = "2C 3C 4C 5S 6S 7S 8D 9D TH JC QD", "AC 2D 3H 4S 5C 6D 7H 8S 9C TD JH QS KC"
    tie = deck_for("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC",
                   "AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD", "AH", "AS")
    hands = [deck_for(low, high, "KH", "KS"),    # dealer 1: the first player (seat 0) wins
             deck_for(low, high, "KH", "KS"),    # dealer 0: the first player (seat 1) wins
             tie]                                # dealer 1: equal deadwood, no winner
    g = Game(variant(max_turns=1, episode="game", target_score=10_000), 1)
    g.reset(seed=3, deck=hands[0], dealer=1, next_decks=hands[1:])
    dealers, winners = [], []
    for k in range(4):
        s = g.states[0]
        dealers.append(int(s["dealer"]))
        assert s["hand_no"] == k and g.current_player() == 1 - dealers[-1]  # the non-dealer opens
        assert (list(s["deck"]) == hands[k]) if k < 3 else (list(s["deck"]) not in hands)
        drawn = g.variant.deck.card_text(g.stock()[0])
        play(g, "draw stock", "discard " + drawn)             # max_turns=1: the hand is over
        winners.append(g.summary().winner)
    assert dealers == [1, 0, 1, 1] and winners[:3] == [0, 1, -1]


# ---------------------------------------------------------------------------------- MR-7

def test_mr7_draw_is_mandatory():
    """MR-7.1: the turn starts with draw stock or a take; nothing else."""
    g = start("5H 6H 7H", "", "9C")
    assert legal_texts(g) == {"draw stock", "take 9C"}
    assert g.states[0]["phase"] == PHASE_DRAW


def test_mr7_taken_card_may_not_be_discarded_this_turn():
    """MR-7.1: no card taken from the pile this turn is discarded, face up or face down."""
    g = start("2C 2D 3S 4H 5C AD", "", "3C")
    play(g, "take 3C")
    texts = legal_texts(g)
    assert "discard 3C" not in texts and "knock 3C" not in texts
    assert "discard 2C" in texts


def test_mr7_deep_draw_must_be_placed():
    """MR-7.1: a card below the top may be taken only if it can be melded or laid off
    this turn, and the turn cannot end while it is in hand."""
    g = start("8S 8D 2C 3D 4S 5C 9H TS JD QC KH 6S 7D", "", "8H", "AC 2H")
    play(g, "draw stock", "discard AC", "draw stock", "discard 2H")
    assert legal_texts(g) & {"take 8H", "take AC", "take 2H"} == {"take 8H", "take 2H"}
    play(g, "take 8H")
    texts = legal_texts(g)
    assert texts == {"meld 8S 8H 8D"}  # no discard, knock or other play while 8H is held
    assert g.states[0]["obligation"] == ids(g, "8H")[0]
    play(g, "meld 8S 8H 8D")
    texts = legal_texts(g)
    assert "discard AC" not in texts and "discard 2H" not in texts  # taken this turn
    assert "discard 2C" in texts


def test_mr7_deep_draw_illegal_when_the_card_cannot_be_placed():
    """MR-7.1: KD cannot be melded or laid off by this hand, so it cannot be dug out."""
    g = start("8S 8D 2C 3D 4S 5C 9H TS JD QC 2H 6S 7D", "", "KD", "AC 3C")
    play(g, "draw stock", "discard AC", "draw stock", "discard 3C")
    texts = legal_texts(g)
    assert "take KD" not in texts and "take 3C" in texts
    assert "take AC" in texts   # AC 2C 3C: the card taken with it counts


def test_mr7_deep_draw_obligation_allows_unrelated_placements_first():
    """MR-7.1: k must be placed before the turn ends, after any number of placements. P1
    deep-takes KC (pile 3D KC 7S), melds 4S-5S-6S-7S first, then lays KC off on P2's run."""
    g = start("KC 4S 5S 6S 2D 8H AH 9D 3C JS 5D QH 8C",
              "TC JC QC 7S 2H 4H 6C 9S KD AD 3S 7D TH", "3D", "2S 4C")
    play(g, "draw stock", "discard KC", "draw stock", "meld TC JC QC", "discard 7S")
    assert "take KC" in legal_texts(g)
    play(g, "take KC")
    texts = legal_texts(g)
    assert {"layoff KC m0", "meld 4S 5S 6S 7S", "meld 4S 5S 6S"} <= texts
    assert not any(t.startswith(("discard", "knock")) for t in texts)  # KC still in hand
    play(g, "meld 4S 5S 6S 7S")
    assert legal_texts(g) == {"layoff KC m0"}  # every other placement would strand KC
    play(g, "layoff KC m0")
    assert "discard 2D" in legal_texts(g)


def test_mr7_deep_draw_placed_after_a_layoff_frees_a_table_card():
    """MR-7.1 + MR-9: P2 has 7H-8H-9H on the table, P1 holds 6H 9D, the pile is AS 9S KH.
    Laying 6H off on P2's run makes 9H detachable, so 'regroup 9S 9D 9H' places 9S: the
    deep take is legal, and so is the layoff that prepares it."""
    g = start("6H 9D 9S 2C 4D 7S JC KS 3H 5C QD 8D TC",
              "7H 8H 9H KH 2D 5S JD AC 3C 6D 4S QC TS", "AS", "2S 4C")
    play(g, "draw stock", "discard 9S", "draw stock", "meld 7H 8H 9H", "discard KH")
    texts = legal_texts(g)
    assert {"take 9S", "take KH"} <= texts
    play(g, "take 9S")
    texts = legal_texts(g)
    assert "layoff 6H m0" in texts
    assert "regroup 9S 9H 9D" not in texts       # 9H ends a run of three: not detachable yet
    assert not any(t.startswith(("discard", "knock")) for t in texts)
    play(g, "layoff 6H m0", "regroup 9S 9H 9D")
    assert g.melds()[0]["text"] == ["6H", "7H", "8H"]
    assert "discard 2C" in legal_texts(g)


def test_mr7_knock_needs_deadwood_at_most_10():
    """MR-7.3 Knock: face-down discard leaving deadwood <= 10 (knocks listed exactly)."""
    g = start("2C 3C 4C 5D 6D 7D 9H 9S 9C 2H 3S 4D 8S", "", "KC", "KH")
    play(g, "draw stock", "meld 2C 3C 4C", "meld 5D 6D 7D", "meld 9H 9S 9C")
    # hand 2H 3S 4D 8S KH = 30: knocking KH leaves 17 > 10
    assert not [t for t in legal_texts(g) if t.startswith("knock")]
    g = start("2C 3C 4C 5C 5D 6D 7D 9H 9S 9C 2H 3S KS", "", "KC", "4D")
    play(g, "draw stock", "meld 2C 3C 4C 5C", "meld 5D 6D 7D", "meld 9H 9S 9C")
    # hand 2H 3S 4D KS = 22: only knocking KS leaves <= 10 (9)
    assert {t for t in legal_texts(g) if t.startswith("knock")} == {"knock KS"}
    play(g, "knock KS")
    assert g.states[0]["phase"] == PHASE_RESPONSE
    assert g.where()[ids(g, "KS")[0]] == LOC_FACEDOWN


def test_mr7_one_card_left_only_base_camp():
    """MR-7.3: a face-up discard may not empty the hand: with one card left the only end is
    Base Camp (last card face down), here with summit (nothing melded before)."""
    g = start("2C 3C 4C 5D 6D 7D 9H 9S 9C JH QH KH 8C", "", "KC", "5C")
    play(g, "draw stock", "meld 2C 3C 4C", "meld 5D 6D 7D", "meld 9H 9S 9C", "meld JH QH KH",
         "layoff 5C m0")
    assert legal_texts(g) == {"base camp"}
    play(g, "base camp")
    s = g.summary()
    assert s.end == "base camp" and g.where()[ids(g, "8C")[0]] == LOC_FACEDOWN
    assert s.credit[0] == 14 + 18 + 27 + 36 and s.deadwood[0] == 0
    assert s.bonus[0] == 50 and set(s.bonus_kinds) == {"base camp", "summit"}


def test_mr7_meld_illegal_if_the_turn_could_not_end():
    """MR-7: a meld or layoff that leaves only cards that may not be discarded (and cannot
    all be melded) is illegal; there is never a dead end."""
    g = start("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", "", "QC")
    play(g, "take QC")                                     # QC may not be discarded now
    texts = legal_texts(g)
    assert "meld AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH" not in texts   # only QC left
    assert "meld 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH" not in texts
    assert "meld 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH" in texts          # AH, QC left
    play(g, "meld 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    assert legal_texts(g) == {"discard AH"}               # layoff AH m0 would leave QC alone
    play(g, "discard AH")
    check_invariants(g.states[0], 2)


def test_mr7_high_camp_by_melding_everything():
    """MR-7.3 High Camp: the hand is emptied by melding (no discard)."""
    g = start("2C 3C 4C 5C 6C 7D 8D 9D TD QS QH QD XX", "", "KH", "QC")
    play(g, "draw stock", "meld 2C 3C 4C 5C 6C", "meld 7D 8D 9D TD", "meld QS QH QD QC")
    assert g.states[0]["phase"] == PHASE_PLAY
    play(g, "layoff JD m1")  # the joker as JD empties the hand
    assert g.summary().end == "high camp" and g.states[0]["phase"] == PHASE_HAND_OVER


# ---------------------------------------------------------------------------------- MR-8

def test_mr8_cards_forming_a_meld_in_hand_are_deadwood_and_knock_card_scores_nothing():
    """MR-8: an unmelded meld in hand is deadwood; the face-down knock card scores for
    nobody."""
    g = start("2C 3C 4C 5D 6D 7D 9H 9S 9C 2H 2S 3S JS", "KC KD KH 2D 3D 4D 5S 6S 7S 8H 8D 8C AC",
              "AH", "4S")
    play(g, "draw stock", "meld 2C 3C 4C", "meld 5D 6D 7D", "meld 9H 9S 9C", "meld 2S 3S 4S",
         "knock JS")
    jack = ids(g, "JS")[0]
    assert g.where()[jack] == LOC_FACEDOWN
    play(g, "done")
    s = g.summary()
    assert s.deadwood == (2, 39 + 2 + 3 + 4 + 5 + 6 + 7 + 8 + 8 + 8 + 14)
    assert s.credit[0] == 9 + 18 + 27 + 9


# ---------------------------------------------------------------------------------- MR-9

def test_mr9_layoff_on_opponents_meld_is_credited_to_the_layer():
    """MR-9: a layoff on the opponent's meld is credited to the player who laid it off."""
    g = _p2_melds_sixes("6S 9D 3C 8C AH TS QD 4S 2H KD 7D JH 5H")
    play(g, "layoff 6S m0")
    assert g.melds()[0]["owners"] == [1, 1, 1, 0]


def _p2_melds_run_and_set(p1: str):
    g = start(p1, "3H 4H 5H 6H 7H 8H 9H KC KD KH KS 2D 2C", "JD", "QS AC")
    play(g, "draw stock", "discard QS", "draw stock", "meld 3H 4H 5H 6H 7H 8H 9H",
         "meld KC KD KH KS", "discard AC", "draw stock")
    return g


def test_mr9_regroup_detachments():
    """MR-9: a new meld from hand cards plus cards detached from the opponent's melds, each
    detachment leaving the rest valid (end card of a 4+ run, one card of a 4-set, a middle
    card with both halves 3+); credit stays with the owner."""
    g = _p2_melds_run_and_set("6S 6D 5S 5D 3S 3D QH AH JC QC 9S XX 2S")
    texts = legal_texts(g)
    assert texts >= {"regroup 6S 6H 6D", "regroup 3S 3H 3D", "regroup QH KH AH",
                     "regroup 9S 9H 9D"}
    assert "regroup 5S 5H 5D" not in texts     # would leave 3H 4H
    assert "meld 9S 9H 9D" not in texts        # a joker may not be the face-up 9H
    play(g, "regroup 6S 6H 6D")                # middle card: 3H-5H and 7H-9H remain
    melds = {tuple(sorted(m["text"])): m for m in g.melds()}
    assert melds[("3H", "4H", "5H")]["founder"] == 1
    assert melds[("7H", "8H", "9H")]["founder"] == 1
    sixes = melds[("6D", "6H", "6S")]
    assert sixes["founder"] == 0
    assert dict(zip(sixes["text"], sixes["owners"])) == {"6D": 0, "6H": 1, "6S": 0}
    texts = legal_texts(g)
    assert "regroup 3S 3H 3D" not in texts     # 3H-5H has only 3 cards now
    assert "regroup 9S 9H 9D" not in texts
    play(g, "regroup QH KH AH")                # one card of the 4-set
    assert "regroup JC QC KC" not in legal_texts(g)  # the set is down to 3
    check_invariants(g.states[0], 2)
    check_meld_shapes(g)
    credit, _ = recompute_credit_deadwood(g)
    assert credit == [6 + 6 + 12 + 14, 3 + 4 + 5 + 6 + 7 + 8 + 9 + 13 * 4]


def test_mr9_regroup_takes_table_cards_before_jokers_and_own_melds_are_never_reorganised():
    """MR-9 + design decision: regroup takes a missing face from the opponent's melds before
    using a joker; a player may regroup the opponent's melds, never their own."""
    g = start("5H 6H 7H 8H 8S 8D 2C 9D JC KS 3D 4C TS", "5S 5D 2H 9C JD QC KD 3S 4S TC 6D 7C XX",
              "AC", "QH QD QS")
    play(g, "draw stock", "meld 5H 6H 7H 8H", "discard QH", "draw stock")
    assert "regroup 5S 5H 5D" in legal_texts(g)
    other = g.clone()
    play(other, "regroup 5S 5H 5D")
    assert "XX" in hand_text(other, 1)  # the joker stayed in hand
    assert sorted(other.melds()[-1]["text"]) == ["5D", "5H", "5S"]
    assert other.melds()[0]["text"] == ["6H", "7H", "8H"]
    play(g, "discard QD", "draw stock")
    texts = legal_texts(g)
    assert "regroup 8S 8H 8D" not in texts and "meld 8S 8H 8D" not in texts


# ---------------------------------------------------------------------------------- MR-10

def _knock_then_response(**options):
    g = start("7C 8C 9C JD QD KD 2H 3H 4H 4S 5S 6S 2D",
              "2C 3C 4C 5C 6D 7D 8D 9H TH JH QS KS AS", "9S", "3S", v=variant(**options))
    play(g, "draw stock", "meld 7C 8C 9C", "meld JD QD KD", "meld 2H 3H 4H", "meld 4S 5S 6S",
         "knock 3S")
    return g


def test_mr10_response_phase_after_knock():
    """MR-10: after a knock the opponent may meld and lay off (no draw, no discard), then
    'done'; emptying the hand there is not a High Camp."""
    g = _knock_then_response()
    s = g.states[0]
    assert s["phase"] == PHASE_RESPONSE and s["current"] == 1
    texts = legal_texts(g)
    assert "done" in texts
    assert not [t for t in texts if t.split()[0] in ("draw", "take", "discard", "knock", "base")]
    assert "meld 2C 3C 4C 5C" in texts and "meld QS KS AS" in texts
    play(g, "meld 2C 3C 4C 5C", "meld 6D 7D 8D", "meld 9H TH JH", "meld QS KS AS")
    assert g.hand(0, 1) == [] and g.states[0]["phase"] == PHASE_RESPONSE
    play(g, "done")
    s = g.summary()
    assert s.end == "knock" and "high camp" not in s.bonus_kinds
    assert s.credit == (24 + 36 + 9 + 15, 14 + 21 + 30 + 39) and s.deadwood == (2, 0)
    assert s.bonus_kinds == ("undercut",) and s.bonus == (0, 30) and s.winner == 1


@pytest.mark.parametrize("response", ["none", "respond"])
def test_mr10_camp_response_option(response):
    """MR-10: after Base/High Camp the opponent responds only with camp_response='respond'."""
    v = variant(camp_response=response)
    g = start("2C 3C 4C 5D 6D 7D 9H 9S 9C JH QH KH XX", "5C 8S 2S 3S AD KD TC JS QD 4H 6H 7S 2H",
              "AC", "8D", v=v)
    play(g, "draw stock", "meld 2C 3C 4C", "meld 5D 6D 7D", "meld 9H 9S 9C", "meld JH QH KH",
         "layoff 8D m1", "layoff 4D m1")           # the joker as 4D empties the hand
    if response == "none":
        assert g.states[0]["phase"] == PHASE_HAND_OVER
        assert g.summary().end == "high camp"
        return
    assert g.states[0]["phase"] == PHASE_RESPONSE and g.current_player() == 1
    assert "layoff 5C m0" in legal_texts(g)
    play(g, "layoff 5C m0", "done")
    s = g.summary()
    assert s.end == "high camp" and s.credit == (9 + 30 + 27 + 36, 5)
    assert s.bonus[0] == 60


# ---------------------------------------------------------------------------------- MR-11

def test_mr11_turn_drawing_the_last_stock_card_exhausts():
    """MR-11: the hand ends as exhausted after the turn that drew the last stock card."""
    g = start("AC 2D 3H 4S 5C 6D 7H 8S 9C TD JH QS KC")
    for turn in range(27):
        assert g.states[0]["phase"] == PHASE_DRAW
        drawn = g.stock()[0]
        play(g, "draw stock", "discard " + g.variant.deck.card_text(drawn))
    s = g.summary()
    assert s.end == "exhausted" and s.ender == 0 and s.bonus == (0, 0)
    assert g.states[0]["phase"] == PHASE_HAND_OVER and g.legal_actions() == []


def test_mr11_last_stock_turn_may_still_knock():
    """MR-11: a hand ended by a knock on the last-stock turn is a knock, with response."""
    g = start("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC 2D")
    for turn in range(26):
        drawn = g.stock()[0]
        play(g, "draw stock", "discard " + g.variant.deck.card_text(drawn))
    play(g, "draw stock", "meld AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC")
    last = [c for c in g.hand(0, 0) if c != ids(g, "2D")[0]][0]
    assert len(g.stock()) == 0
    play(g, f"knock {g.variant.deck.card_text(last)}")
    assert g.states[0]["phase"] == PHASE_RESPONSE
    play(g, "done")
    assert g.summary().end == "knock"


def test_mr11_max_turns():
    """MR-11: a hand also ends as exhausted after max_turns turns."""
    g = start("AC 2D 3H 4S 5C 6D 7H 8S 9C TD JH QS KC", v=variant(max_turns=3))
    for _ in range(3):
        drawn = g.stock()[0]
        play(g, "draw stock", "discard " + g.variant.deck.card_text(drawn))
    s = g.summary()
    assert s.end == "exhausted" and s.ender == 0 and g.states[0]["turn"] == 3


# ---------------------------------------------------------------------------------- MR-12

def test_mr12_exhausted_tie_has_no_winner_and_dealer_stays():
    """MR-12: a tie in an exhausted hand has no winner; the same dealer deals again."""
    v = variant(max_turns=1, episode="game", target_score=10_000)
    g = start("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", "AD 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",
              "AH", "AS", v=v)
    play(g, "draw stock", "discard AS")
    s = g.summary()
    assert s.winner == -1 and s.standard_points == (-104, -104)
    assert s.totals == (-104, -104)  # negative SP is added to the game totals
    assert g.states[0]["dealer"] == 1 and g.states[0]["current"] == 0


def test_mr12_knock_tie_goes_to_the_player_who_did_not_end():
    """MR-12: equal SP after a knock: the non-knocker wins (see also E4)."""
    g = start("2C 3C 4C 5D 6D 7D 9H 9S 9C 2H 3S 2S 3H", "5S 6S 7S 8C 8D 8H TD JD QD KH 4H 5C 9D",
              "AH", "KS")
    play(g, "draw stock", "meld 2C 3C 4C", "meld 5D 6D 7D", "meld 9H 9S 9C", "knock KS",
         "meld 5S 6S 7S", "meld 8C 8D 8H", "meld TD JD QD", "done")
    s = g.summary()
    assert s.credit == (54, 75) and s.deadwood == (10, 31)
    assert s.standard_points == (44, 44) and s.winner == 1 and s.bonus == (0, 0)


# ---------------------------------------------------------------------------------- MR-13

def test_mr13_high_camp_plus_summit_is_60():
    """MR-13: High Camp 20 + Summit 40 when nothing was melded on earlier turns."""
    g = start("2C 3C 4C 5C 6C 7D 8D 9D TD QS QH QD XX", "", "KH", "QC")
    play(g, "draw stock", "meld 2C 3C 4C 5C 6C", "meld 7D 8D 9D TD", "meld QS QH QD QC",
         "layoff JD m1")
    s = g.summary()
    assert s.credit[0] == 20 + 34 + 11 + 48 and s.deadwood[0] == 0
    assert s.bonus[0] == 60 and set(s.bonus_kinds) == {"high camp", "summit"}
    assert s.hand_points[0] == 113 + 60


def test_mr13_base_camp_without_summit_is_10():
    """MR-13: Base Camp after melding on an earlier turn: 10, no summit."""
    v = short_variant(4)
    g = start("2C 3C 4C 9D", "QS KS AS 2D", "7H", "5C 8H 6C", v=v)
    play(g, "draw stock", "meld 2C 3C 4C", "discard 9D",       # P1 melds on turn 1
         "draw stock", "meld QS KS AS", "discard 8H",
         "draw stock", "layoff 5C m0")
    assert legal_texts(g) == {"base camp", "layoff 6C m0"}
    play(g, "base camp")
    s = g.summary()
    assert s.end == "base camp" and s.bonus_kinds == ("base camp",)
    assert s.credit == (14, 39) and s.deadwood == (0, 2)
    assert s.winner == 1 and s.bonus == (0, 10)  # all bonuses to the hand winner


@pytest.mark.parametrize("recipient", ["hand_winner", "earner"])
def test_mr13_bonus_recipient(recipient):
    """MR-13: bonuses go to the hand winner, or with bonus_recipient='earner' to the
    player who earned them."""
    v = short_variant(4, bonus_recipient=recipient)
    g = start("2C 3C 4C 9D", "QS KS AS 2D", "7H", "8H JH 5C", v=v)
    play(g, "draw stock", "discard 8H", "draw stock", "meld QS KS AS", "discard JH",
         "draw stock", "meld 2C 3C 4C 5C", "base camp")
    s = g.summary()
    assert s.standard_points == (14, 37) and s.winner == 1
    assert set(s.bonus_kinds) == {"base camp", "summit"}
    assert s.bonus == ((0, 50) if recipient == "hand_winner" else (50, 0))


def test_mr13_undercut_on_equal_deadwood_and_credit():
    """MR-13: undercut needs D <= knocker's D and M >= knocker's M (equality counts)."""
    v = short_variant(5)
    g = start("2C 3C 4C 5D 4S", "2H 3H 4H 5S 4D", "KS", "AD", v=v)
    play(g, "draw stock", "meld 2C 3C 4C", "knock AD")
    play(g, "meld 2H 3H 4H", "done")
    s = g.summary()
    assert s.credit == (9, 9) and s.deadwood == (9, 9)
    assert s.bonus_kinds == ("undercut",) and s.winner == 1 and s.bonus == (0, 30)


# ---------------------------------------------------------------------------------- MR-14

def test_mr14_game_ends_when_the_hand_winner_reaches_target():
    """MR-14: the game ends after a hand whose winner has a total >= target_score."""
    v = variant(episode="game", target_score=100)
    g = start("2C 3C 4C 5C 6C 7D 8D 9D TD QS QH QD XX", "", "KH", "QC", v=v)
    play(g, "draw stock", "meld 2C 3C 4C 5C 6C", "meld 7D 8D 9D TD", "meld QS QH QD QC",
         "layoff JD m1")
    s = g.summary()
    assert s.game_winner == 0 and g.states[0]["phase"] == PHASE_GAME_OVER
    assert g.legal_actions() == [] and s.totals[0] >= 100


def test_mr14_loser_passing_target_does_not_end_the_game():
    """MR-14: a hand loser passing target_score does not end the game."""
    v = short_variant(4, bonus_recipient="earner", episode="game", target_score=60)
    g = start("2C 3C 4C 9D", "QS KS AS 2D", "7H", "8H JH 5C", v=v)
    play(g, "draw stock", "discard 8H", "draw stock", "meld QS KS AS", "discard JH",
         "draw stock", "meld 2C 3C 4C 5C", "base camp")
    s = g.summary()
    assert s.totals == (64, 37) and s.winner == 1 and s.game_winner == -1
    assert g.states[0]["phase"] == PHASE_DRAW and g.states[0]["hand_no"] == 1


def test_mr14_totals_near_target_over_scripted_hands():
    """MR-14 from a game in progress: totals 962 and 991, target 1000. Hand 1: P1 (seat 0)
    knocks and wins 36 to 23, so the loser passes 1000 (1014) and the game goes on while the
    winner stays below (998). Hand 2, dealt by the winner (MR-6): seat 0 wins again, reaches
    1034 and wins the game."""
    melds = "2C 3C 4C 2D 3D 4D 2H 3H 4H 5C 5D 5H 6S"
    other = "TC JC QC KC TD JD QD KD AS AD AH AC KS"
    knock = ["meld 2C 3C 4C", "meld 2D 3D 4D", "meld 2H 3H 4H", "meld 5C 5D 5H", "knock 7S"]
    g = Game(variant(episode="game"), 1)
    g.reset(seed=0, deck=deck_for(melds, other, "9H", "7S"), dealer=1, scores=[962, 991],
            next_decks=[deck_for(other, melds, "9H", "8S 7S")])
    assert g.summary().totals == (962, 991)
    play(g, "draw stock", *knock, "meld TC JC QC KC", "meld TD JD QD KD", "done")
    s = g.summary()
    assert s.hand_points == (36, 23) and s.winner == 0
    assert s.totals == (998, 1014) and s.game_winner == -1          # the loser passed 1000
    st = g.states[0]
    assert st["phase"] == PHASE_DRAW and st["hand_no"] == 1 and st["dealer"] == 0
    assert hand_is(g, 0, melds) and hand_is(g, 1, other)             # the scripted second deal
    play(g, "draw stock", "discard 8S", "draw stock", *knock, "done")
    s = g.summary()
    assert s.winner == 0 and s.hand_points == (36, -161) and s.totals == (1034, 853)
    assert s.game_winner == 0 and g.states[0]["phase"] == PHASE_GAME_OVER
