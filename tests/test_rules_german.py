"""One or more tests per rule GE-1 ... GE-9 of docs/german_rummy.md (German Rummy), and the
worked examples R1 ... R11 and rule decisions (D-numbers) that need a check of their own,
each played as a scripted table position (``german_helpers.start``). Seat p is the page's
P(p+1); unless a test says otherwise the last seat deals, so seat 0 (P1) plays first.
"""

from __future__ import annotations

import numpy as np
import pytest

from mountain_rummy_env import (
    ActionError, CardError, ConfigError, Game, IllegalActionError, player_view,
)
from mountain_rummy_env.core.state import (
    EVENT_GAME_OVER, EVENT_HAND_OVER, LOC_HAND, PHASE_DRAW, PHASE_GAME_OVER, PHASE_HAND_OVER,
    check_invariants,
)
from mountain_rummy_env.variants.german import german_variant

from german_helpers import (
    NUM_CARDS, german, german_deck, hand_value, pass_turns, play_turn, stock_size, start,
    table_credit,
)
from helpers import assert_unchanged, hand_is, legal_texts, play, snapshot


def melds_offered(g) -> set[str]:
    return {t for t in legal_texts(g) if t.startswith("meld")}


def family_offered(g, family: str) -> set[str]:
    return {t for t in legal_texts(g) if t.startswith(family)}


# P1's hand in several tests: opens with TC JC QC KC (40) and nothing else
OPENER = "TC JC QC KC 2D 4S 9S 3C 6D 7S JD AH KS"
OPENER_REST_VALUE = 2 + 4 + 9 + 3 + 6 + 7 + 10 + 11 + 10


def ids(text: str) -> list[int]:
    return german().deck.parse_cards(text)


def opened_position(rest: str, draw: str, other: str = "", **options):
    """Two seats; P1 opens on its first turn with ``TC JC QC KC`` (40, meld m0) and keeps
    ``rest`` (9 cards), P2 (dealt ``other``) passes, and P1 begins its second turn by
    drawing ``draw``."""
    g = start(["TC JC QC KC " + rest, other], stock=f"? ? {draw}", **options)
    play_turn(g, "meld TC JC QC KC")
    pass_turns(g)
    play(g, "draw stock")
    return g


# ---------------------------------------------------------------------------------- GE-1

@pytest.mark.parametrize("players,stock", [(2, 81), (3, 68), (4, 55), (5, 42), (6, 29)])
def test_ge1_deck_and_deal_sizes(players, stock):
    """GE-1: 108 cards (two packs, four jokers); 13 each, one up-card, the stock 108-13n-1;
    the seat after the dealer plays first."""
    g = Game(german(num_players=players), 1)
    g.reset(seed=11)
    s = g.states[0]
    faces = g.spec.card_face
    assert g.variant.deck.num_cards == NUM_CARDS == 108
    assert (faces == 52).sum() == 4 and all((faces == f).sum() == 2 for f in range(52))
    assert [len(g.hand(0, p)) for p in range(players)] == [13] * players
    assert len(g.discard_pile()) == 1 and len(g.stock()) == stock == 108 - 13 * players - 1
    assert g.current_player() == (s["dealer"] + 1) % players
    check_invariants(s, players)


@pytest.mark.parametrize("players,dealer", [(2, 0), (3, 1), (6, 4)])
def test_ge1_deal_one_at_a_time_from_the_seat_after_the_dealer(players, dealer):
    """GE-1: the deck is dealt from the top, one card at a time, first to the seat after the
    dealer; then the up-card; the rest is the stock, in order."""
    order = np.random.default_rng(players).permutation(NUM_CARDS).tolist()
    g = Game(german(num_players=players), 1)
    g.reset(seed=3, deck=order, dealer=dealer)
    dealt = 13 * players
    for k in range(players):
        seat = (dealer + 1 + k) % players
        assert sorted(g.hand(0, seat)) == sorted(order[k:dealt:players])
    assert g.discard_pile() == [order[dealt]]
    assert g.stock() == order[dealt + 1:]
    assert g.current_player() == (dealer + 1) % players


def test_ge1_deck_text_names_the_copies():
    """GE-1 / D19: a deck given as text deals the exact copies it names (``7H#2``, ``XX#3``)."""
    order = german_deck(["7H#2 XX#3", ""], upcard="7H")
    g = Game(german(num_players=2), 1)
    text = g.variant.deck.cards_text(order, exact=True)
    g.reset(seed=0, deck=text, dealer=1)
    assert list(g.states[0]["deck"]) == order
    second_7h, third_joker, first_7h = ids("7H#2 XX#3 7H")
    assert {second_7h, third_joker} <= set(g.hand(0, 0)) and g.discard_pile() == [first_7h]


def test_ge1_first_dealer_from_the_seed_then_the_deal_passes_on():
    """GE-1 / D1: the first dealer is drawn from the seed (each seat for some seed, the same
    for the same seed); every hand the deal passes to the next seat, the seat after it plays
    first, and after one hand per seat the game is over."""
    g = Game(german(num_players=3, max_turns=1), 1)
    firsts = set()
    for seed in range(12):
        g.reset(seed=seed)
        firsts.add(int(g.states[0]["dealer"]))
        again = Game(g.variant, 1)
        again.reset(seed=seed)
        assert again.states.tobytes() == g.states.tobytes()
    assert firsts == {0, 1, 2}
    g.reset(seed=5)
    first = int(g.states[0]["dealer"])
    for hand in range(3):
        s = g.states[0]
        assert s["hand_no"] == hand and s["dealer"] == (first + hand) % 3
        assert g.current_player() == (first + hand + 1) % 3
        pass_turns(g)                      # max_turns=1: the hand ends with no winner
        if hand < 2:
            assert g.states[0]["phase"] == PHASE_HAND_OVER
            g.next_hand(0)
    assert g.states[0]["phase"] == PHASE_GAME_OVER
    with pytest.raises(ValueError):
        g.next_hand(0)


# ---------------------------------------------------------------------------------- GE-2

def test_ge2_hand_values():
    """GE-2: in hand A 11, K Q J T 10, 2-9 face value, a joker 20."""
    g = start(["AC 2D 3H 4S 5C 6D 7H 8S 9C TD JH QS KC",
               "XX XX AD KD QH JS 9H 8C 7D 5S 4C 3D 2S"], max_turns=2)
    pass_turns(g, 2)
    s = g.summary()
    assert s.winner == -1 and s.credit[:2] == (0, 0)
    assert s.deadwood[:2] == (95, 119) == tuple(hand_value(g))
    assert s.hand_points[:2] == (-95, -119)


def test_ge2_meld_credit_aces_and_jokers():
    """GE-2: on the table an ace is 1 at the bottom of a run and 11 at the top or in a set;
    a joker earns the card it stands for (here an ace: 11)."""
    g = start(["AH 2H 3H QS KS AS AC AD XX 5C 7C 9D TD", ""], stock="4C", max_turns=1)
    play(g, "draw stock", "meld AH 2H 3H", "meld QS KS AS", "meld AC AD AS")
    assert [m["text"] for m in g.melds()] == [["AH", "2H", "3H"], ["QS", "KS", "AS"], ["AC", "AD", "XX=AS"]]
    assert table_credit(g)[0] == 6 + 31 + 33
    play(g, "discard 4C")
    s = g.summary()
    assert s.credit[0] == 70 and s.deadwood[0] == 5 + 7 + 9 + 10
    assert s.hand_points[0] == 70 - 31


def test_d15_ace_laid_off_on_two_to_king_goes_high():
    """D15 / GE-2: an ace laid off on a 2...K run goes high and earns 11."""
    g = start(["2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH", ""], stock="5C")
    play(g, "draw stock", "meld 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", "layoff AH m0")
    assert g.melds()[0]["text"][0] == "2H" and g.melds()[0]["text"][-1] == "AH"
    assert play(g, "discard 5C") == EVENT_HAND_OVER
    assert g.summary().hand_points[0] == 84 + 11


# ---------------------------------------------------------------------------------- GE-3

def test_ge3_meld_shapes_of_the_action_texts():
    """GE-3 / D11: runs never go round the corner, a meld never names a face twice, sets
    are 3-4 cards of distinct suits; runs reach 13 cards (A...K or 2...A)."""
    v = german()
    for text in ("meld KH AH 2H", "meld QH KH AH 2H", "meld 7H 7H 7C", "meld 5H 6D 7H",
                 "meld 7C 7D 7H 7S 7C", "meld AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"):
        with pytest.raises(ActionError, match="not a set or run"):
            v.parse_action(text)
    with pytest.raises(ActionError):
        v.parse_action("meld 7C 7D")
    low = v.parse_action("meld AH 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH")
    high = v.parse_action("meld 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH")
    assert low != high and v.layout.layoff - v.layout.meld == 373


def test_ge3_two_copies_of_a_card_never_share_a_meld():
    """GE-3: 7H 7H 7C 7C is no set (two faces), nor is 7C 7C 7H plus anything but a third suit."""
    g = opened_position("7H 7H 7C 7C 2D 4S 9S JD 5H", draw="KD")
    assert not melds_offered(g)
    g = opened_position("7H 7H 7C 7C 2D 4S 9S JD 5H", draw="7S")
    assert melds_offered(g) == {"meld 7C 7H 7S"}
    play(g, "meld 7C 7H 7S")
    assert g.melds()[1]["text"] == ["7C", "7H", "7S"]
    assert hand_is(g, 0, "7H 7C 2D 4S 9S JD 5H")


def test_ge3_two_jokers_need_two_naturals():
    """GE-3 / D23: a meld holds a natural; with two or more jokers it holds two naturals:
    ``3H XX XX`` is no meld, ``3H 3S XX XX`` and ``5H XX XX XX 9H`` are."""
    g = opened_position("3H 3S 5H 9H XX XX XX XX 8C", draw="KS")
    offered = melds_offered(g)
    assert {"meld 3C 3D 3H 3S", "meld 5H 6H 7H 8H 9H", "meld 3H 4H 5H 6H 7H 8H"} <= offered
    assert {"meld 3H 4H 5H", "meld 3C 3H 3S"} <= offered                # one joker each
    for one_natural in ("meld AH 2H 3H", "meld 3C 3D 3H", "meld 9H TH JH", "meld 8C 9C TC"):
        assert one_natural not in offered
    play(g, "meld 5H 6H 7H 8H 9H")
    assert g.melds()[1]["text"] == ["5H", "XX=6H", "XX=7H", "XX=8H", "9H"]
    offered = melds_offered(g)
    assert "meld 3C 3D 3H 3S" not in offered and "meld 3D 3H 3S" in offered


def test_ge3_runs_ace_low_or_high_and_nothing_past_the_ace():
    """GE-3: A-2-3 and Q-K-A are runs; no layoff below an ace-low run's ace or above an
    ace-high run's ace (K on A-2-3, 2 on Q-K-A)."""
    g = opened_position("AH 2H 3H QS KS AS KH 2S JS", draw="4H")
    assert {"meld AH 2H 3H", "meld QS KS AS"} <= melds_offered(g)
    play(g, "meld AH 2H 3H", "meld QS KS AS")
    assert family_offered(g, "layoff") == {"layoff 4H m1", "layoff JS m2"}


# ---------------------------------------------------------------------------------- GE-4

def test_ge4_turn_order_passes_to_the_next_seat_and_wraps():
    """GE-4 / GE-1: play passes from each seat to the next and from the last to seat 0."""
    g = start(["", "", ""], dealer=1)
    seen = []
    for _ in range(5):
        seen.append(g.current_player())
        pass_turns(g)
    assert seen == [2, 0, 1, 2, 0]


def test_ge4_a_turn_is_draw_place_discard():
    """GE-4: a turn starts with a compulsory draw (stock or the top discard), then placements,
    and ends with a discard."""
    g = start([OPENER, ""], upcard="5H", stock="8H")
    assert legal_texts(g) == {"draw stock"}       # 5H opens nothing, so it cannot be taken
    play(g, "draw stock")
    texts = legal_texts(g)
    assert not {t for t in texts if t.startswith(("draw", "take"))}
    assert "meld TC JC QC KC" in texts and "discard 8H" in texts
    play(g, "meld TC JC QC KC")
    assert g.current_player() == 0
    play(g, "discard 8H")
    assert g.current_player() == 1 and g.states[0]["phase"] == PHASE_DRAW
    assert g.discard_pile() == ids("5H 8H")


def test_ge4_only_the_top_discard_can_be_taken():
    """GE-4: of the discard pile only the top card can be taken, and it is named by its copy:
    with ``7H`` under ``7H#2`` only ``take 7H#2`` is offered."""
    g = start([OPENER, "7H 7H"])
    play_turn(g, "meld TC JC QC KC")        # P1 opens
    play(g, "draw stock", "discard 7H")           # P2 discards 7H, then 7H#2 next turn
    pass_turns(g)
    play(g, "draw stock", "discard 7H")
    first, second = ids("7H 7H")
    assert g.discard_pile()[-1] == second and first in g.discard_pile()[:-1]
    assert family_offered(g, "take") == {"take 7H#2"}
    with pytest.raises(IllegalActionError):
        g.step_one(0, "take 7H")
    play(g, "take 7H#2")
    assert second in g.hand(0, 0) and first in g.discard_pile()


def test_d5_the_card_taken_is_not_discarded_that_turn():
    """D5 / GE-4: after opening too, the card taken from the discard pile may not be
    discarded that turn; with the other copy in hand, that copy is discarded (D19)."""
    g = start([OPENER, "4D"])
    play_turn(g, "meld TC JC QC KC")
    play(g, "draw stock", "discard 4D")           # P2 discards 4D; P1 takes it
    play(g, "take 4D")
    assert "discard 4D" not in legal_texts(g) and "discard 2D" in legal_texts(g)
    g = start([OPENER, "2D"])                     # P2 holds the second 2D
    play_turn(g, "meld TC JC QC KC")
    play(g, "draw stock", "discard 2D", "take 2D#2")
    assert "discard 2D" in legal_texts(g)
    play(g, "discard 2D")
    assert ids("2D#2")[0] in g.hand(0, 0) and g.discard_pile()[-1] == ids("2D")[0]


# ---------------------------------------------------------------------------------- GE-5

R8_TABLE = ["JD 2H 3H 4H 5H 7C 7D 7S 8S 9S XX KC 4D 6C",          # P1 (draws JD)
            "KH KD KS 8D 9D TD", "QC QD QS 5S 6S 7S", "AC AD AH AS"]


def r8_position():
    """R8: P2, P3, P4 open with five melds (m0 ... m4), then P1 draws to the R8 hand."""
    p1, *others = R8_TABLE
    g = start([p1.split(maxsplit=1)[1], *others], dealer=0, stock="? ? ? JD")
    play_turn(g, "meld KD KH KS", "meld 8D 9D TD")
    play_turn(g, "meld QC QD QS", "meld 5S 6S 7S")
    play_turn(g, "meld AC AD AH AS")
    play(g, "draw stock")
    assert hand_is(g, 0, p1) and len(g.melds()) == 5
    return g


def test_r8_an_opening_of_several_melds():
    """R8 / GE-5: an opening of three melds (9 + 21 + 27 = 57); until the total reaches 40
    only melds that keep 40 reachable are offered (no discard, no layoff); at 57 P1 has
    opened and may lay off the same turn; the layoff is credit, not opening."""
    g = r8_position()
    offered = melds_offered(g)
    assert {"meld 2H 3H 4H", "meld 7C 7D 7S", "meld 8S 9S TS"} <= offered
    assert "meld 4H 5H 6H" not in offered and "meld 6S 7S 8S" not in offered   # 39, 35 at most
    assert not family_offered(g, "layoff")        # KC would fit m0, but P1 has not opened
    for step, total in (("meld 2H 3H 4H", 9), ("meld 7C 7D 7S", 30)):
        play(g, step)
        assert g.states[0]["open_total"] == total and not g.states[0]["placed_before"][0]
        texts = legal_texts(g)
        assert texts == melds_offered(g) and texts, texts      # only melds, and some
    play(g, "meld 8S 9S TS")
    s = g.states[0]
    assert s["open_total"] == 57 and s["placed_before"][0]
    assert g.melds()[7]["text"] == ["8S", "9S", "XX=TS"]
    assert {"layoff 5H m5", "layoff KC m0", "discard KC"} <= legal_texts(g)
    play(g, "layoff 5H m5", "discard KC")
    assert table_credit(g)[0] == 9 + 21 + 27 + 5 == 62
    assert g.current_player() == 1


R9_HAND = "TS JS QS 2C 2D 2H 4S 5C 6H 7D 8C 9H KD"


@pytest.mark.parametrize("draw,melds", [
    ("3H", set()),
    ("XX", {"meld TS JS QS KS", "meld 9S TS JS QS", "meld 2C 2D 2H"}),
])
def test_r9_an_opening_that_cannot_reach_40_is_never_started(draw, melds):
    """R9 / GE-5 / D3: a meld is offered before opening only if melds from the rest of the
    hand can bring the turn's total to 40; with nothing staged P1 may simply discard."""
    g = start([R9_HAND, ""], stock=draw)
    play(g, "draw stock")
    assert melds_offered(g) == melds
    assert "discard 9H" in legal_texts(g)
    if melds:
        play(g, "meld 2C 2D 2H")
        assert legal_texts(g) == {"meld TS JS QS KS", "meld 9S TS JS QS"}   # 46, 45
        play(g, "meld TS JS QS KS")
        assert g.states[0]["placed_before"][0] and g.states[0]["open_total"] == 46


R10_HAND = "8H 9H TH KC KD 3S 4S 5C 7D 9C JS AD 2D"


def test_r10_taking_the_top_discard_before_opening():
    """R10 / GE-5 / D4: before opening the top discard may be taken only for an opening that
    uses it: 7H (7H-8H-9H-TH is 34) is not offered, KS (KC KD KS and 8H 9H TH: 57) is; the
    turn then must open with KS and no discard is offered until it has."""
    g = start([R10_HAND, ""], upcard="7H")
    assert legal_texts(g) == {"draw stock"}
    g = start([R10_HAND, ""], upcard="KS")
    assert legal_texts(g) == {"draw stock", "take KS"}
    play(g, "take KS")
    assert legal_texts(g) == {"meld KC KD KS", "meld 8H 9H TH"}
    play(g, "meld 8H 9H TH")
    assert legal_texts(g) == {"meld KC KD KS"}
    play(g, "meld KC KD KS")
    s = g.states[0]
    assert s["placed_before"][0] and s["open_total"] == 57 and s["obligation"] == -1
    assert family_offered(g, "discard") == {f"discard {c}" for c in "3S 4S 5C 7D 9C JS AD 2D".split()}


def test_d4_the_taken_card_must_be_in_the_opening():
    """D4: 40 reached without the taken card is not yet an opening; only melds that use it
    are offered, and the seat opens once it is on the table."""
    g = start(["TC JC QC KC KD KH 2S 5D 9H 3C 6S 8D 4H", ""], upcard="KS")
    play(g, "take KS", "meld TC JC QC KC")
    s = g.states[0]
    assert s["open_total"] == 40 and not s["placed_before"][0] and s["obligation"] == ids("KS")[0]
    assert legal_texts(g) == {"meld KD KH KS"}
    play(g, "meld KD KH KS")
    assert g.states[0]["placed_before"][0] and g.states[0]["open_total"] == 70


def test_ge5_no_layoff_or_joker_exchange_before_opening():
    """GE-5: before opening nothing but an opening is offered: P1 holds 7S (fits P2's run)
    and 5S (P2's joker stands for it), but may only discard."""
    g = start(["5S 9C 9D JH 2D 7S 2S KH 6D 8C QH 3D AC", "3S 4S XX 6S JC QC KC"],
              dealer=0, stock="? 4C")
    play_turn(g, "meld 3S 4S 5S 6S", "meld JC QC KC")
    play(g, "draw stock")
    assert g.melds()[0]["text"] == ["3S", "4S", "XX=5S", "6S"]
    assert legal_texts(g) == family_offered(g, "discard")


# ---------------------------------------------------------------------------------- GE-6

R11_P1 = "TD JD QD KD AH 2H 3H 4H 5S 9C 9D JH 2D"      # opens m0, m1 and keeps R11's five
R11_P2 = "3S 4S XX 6S JC QC KC 2C 5D 7D 9S TH KH"      # melds m2 3S-4S-XX=5S-6S and m3


def r11_position(p1=R11_P1, opening=("meld TD JD QD KD", "meld AH 2H 3H 4H"), **options):
    """R11: P1 opens (m0, m1; by default TD JD QD KD and AH 2H 3H 4H: 50), P2 opens with
    m2 = 3S-4S-XX=5S-6S and m3 = JC QC KC, then P1 draws 4C."""
    g = start([p1, R11_P2], stock="? ? 4C", **options)
    play_turn(g, *opening)
    play_turn(g, "meld 3S 4S 5S 6S", "meld JC QC KC")
    play(g, "draw stock")
    assert g.melds()[2]["text"] == ["3S", "4S", "XX=5S", "6S"]
    return g


def test_r11_joker_exchange():
    """R11 / GE-6 / D6 / D7 / D17: ``swap 5S m2`` puts P1's 5S in the joker's place (credited
    to P1, +5; P2 loses the joker's 5); the joker must go straight into a new meld with two
    naturals (nothing else is offered), ``meld 9C 9D 9H`` makes 9C 9D XX=9H (27)."""
    g = r11_position(max_turns=3)
    assert table_credit(g)[:2] == [50, 48]
    texts = legal_texts(g)
    assert family_offered(g, "swap") == {"swap 5S m2"}
    assert "discard JH" in texts
    play(g, "swap 5S m2")
    s = g.states[0]
    joker = ids("XX")[0]
    assert s["loc"][joker] == LOC_HAND and s["obligation"] == joker
    assert g.melds()[2]["text"] == ["3S", "4S", "5S", "6S"] and g.melds()[2]["owners"] == [1, 1, 0, 1]
    assert table_credit(g)[:2] == [55, 43]
    assert legal_texts(g) == {"meld 9C 9D 9H", "meld 9C 9D 9S"}
    play(g, "meld 9C 9D 9H")
    assert g.melds()[4]["text"] == ["9C", "9D", "XX=9H"] and g.states[0]["obligation"] == -1
    assert table_credit(g)[:2] == [55 + 27, 43]
    assert "discard JH" in legal_texts(g)
    play(g, "discard JH")                         # max_turns=3: the hand ends here
    s = g.summary()
    assert s.credit[:2] == (50 + 5 + 27, 13 + 30)
    assert s.hand_points[:2] == (82 - (2 + 4), 43 - (2 + 5 + 7 + 9 + 10 + 10))


def test_ge6_no_exchange_without_a_new_meld_for_the_joker():
    """GE-6 / D6: had P1 held 5S JH 2D 4C KS after the draw, no two of the other cards make a
    meld with the joker, and ``swap 5S m2`` is not offered."""
    g = r11_position("TD JD QD KD AH 2H 3H 4H 5H 5S KS JH 2D",
                     opening=("meld TD JD QD KD", "meld AH 2H 3H 4H 5H"))
    assert hand_is(g, 0, "5S JH 2D 4C KS")
    assert not family_offered(g, "swap")


def test_ge6_only_the_natural_of_the_declared_card_replaces_a_joker():
    """GE-6: a 5C never replaces ``XX=5S``; the exchange names the joker's declared card."""
    g = r11_position("TD JD QD KD AH 2H 3H 4H 5C 9C 9D JH 2D")
    assert not family_offered(g, "swap")
    with pytest.raises(IllegalActionError):
        g.step_one(0, "swap 5C m2")


def test_d21_exchange_with_the_card_just_taken_on_ones_own_meld():
    """D21 / GE-6: a joker may be taken from one's own meld, and the natural may be the card
    just taken from the discard pile (placing it satisfies D5)."""
    g = start(["TD JD QD KD 3S 4S XX 6S 9C 9D 2H 4C JH", "5S"], stock="? ? ?")
    play_turn(g, "meld TD JD QD KD", "meld 3S 4S 5S 6S")
    play(g, "draw stock", "discard 5S")
    play(g, "take 5S")
    assert family_offered(g, "swap") == {"swap 5S m1"}
    play(g, "swap 5S m1")
    assert g.melds()[1]["owners"] == [0, 0, 0, 0]
    assert legal_texts(g) == {"meld 9C 9D 9H", "meld 9C 9D 9S"}


def test_ge6_every_seat_knows_where_the_freed_joker_went():
    """GE-6: the joker leaves the table in full view, so in the swapper's hand it is a known
    card to every other seat (their views list it; search never re-deals it)."""
    g = start(["TD JD QD KD 3S 4S XX 6S 9C 9D 2H 4C JH", "5S"], stock="? ? ?")
    play_turn(g, "meld TD JD QD KD", "meld 3S 4S 5S 6S")
    play(g, "draw stock", "discard 5S")
    play(g, "take 5S")
    play(g, "swap 5S m1")
    joker = next(c for c in g.hand(0, 0) if c >= g.variant.deck.num_naturals)
    assert joker in player_view(g, 0, 1).known[0]
    assert joker not in player_view(g, 0, 1).hidden_cards()


# ---------------------------------------------------------------------------------- GE-7

def ge7_position(last: str):
    """P1 opens (9C 9D 9H, TS JS QS), melds 4D...8D and lays 9S off, keeping ``last``;
    P2 discards 2C; P1's turn begins."""
    g = start([f"9C 9D 9H TS JS QS 4D 5D 6D 7D 8D 9S {last}", ""], stock="? ? ? 2C")
    play_turn(g, "meld 9C 9D 9H", "meld TS JS QS")
    pass_turns(g)
    play_turn(g, "meld 4D 5D 6D 7D 8D", "layoff 9S m0")
    pass_turns(g)
    assert hand_is(g, 0, last) and g.discard_pile()[-1] == ids("2C")[0]
    return g


@pytest.mark.parametrize("last", ["8H", "KS"])
def test_ge7_the_card_taken_cannot_be_the_last_discard(last):
    """GE-7 / D5: P1 (opened) holds one card and takes the top discard, which fits nowhere:
    only the old card may be discarded, not the taken one (which would go out); P1 then
    holds the taken card and the hand goes on."""
    g = ge7_position(last)
    play(g, "take 2C")
    assert legal_texts(g) == {f"discard {last}"}
    play(g, f"discard {last}")
    assert hand_is(g, 0, "2C") and g.current_player() == 1 and not g.done()


def test_d18_no_placement_that_leaves_only_the_taken_card():
    """D18: P1's last card KS fits P1's spades and may be laid off after a stock draw; after
    taking 2C (which fits nowhere and may not be discarded) the layoff is not offered."""
    g = ge7_position("KS")
    play(g, "draw stock")
    assert "layoff KS m1" in legal_texts(g)
    g = ge7_position("KS")
    play(g, "take 2C")
    assert "layoff KS m1" not in legal_texts(g)


# ---------------------------------------------------------------------------------- GE-8

def test_d10_the_turn_cap_ends_a_hand_without_a_winner():
    """D10 / GE-8: after ``max_turns`` turns the hand ends with no winner: every seat scores
    credit - hand value."""
    g = start([OPENER, ""], max_turns=3)
    play_turn(g, "meld TC JC QC KC")
    pass_turns(g)
    assert not g.done()
    pass_turns(g)
    s = g.summary()
    assert g.done() and s.winner == -1 and s.ender == -1
    assert s.hand_points[0] == 40 - OPENER_REST_VALUE
    assert s.hand_points[1] == -hand_value(g)[1]


def r6_until_rebuilt(seed: int):
    """R6's hand: P1 and P2 open, then every seat draws and discards until the stock runs
    out and is rebuilt; returns the game and the pile as it was before the last discard."""
    g = start(["JH QH KH AH 3S 3D 3C 6D 7D 8D 9D 5C TS",
               "7S 7H 7C TC JC QC XX 2H 4S 8H 5D KD AS",
               "2D 2S 4D 5H 6S 8S 9H TD JS QS KC AC 3H"], seed=seed)
    play_turn(g, "meld JH QH KH AH", "meld 3C 3D 3S", "meld 6D 7D 8D 9D")
    play_turn(g, "meld 7C 7H 7S", "meld TC JC QC")
    pass_turns(g, stock_size(g) - 1)
    s = g.states[0]
    drawn = g.variant.deck.card_text(int(s["stock"][s["stock_ptr"]]))
    play(g, "draw stock")
    pile = g.discard_pile()
    play(g, f"discard {drawn}")                   # the stock is empty: rebuilt from the pile
    return g, pile


def test_ge8_the_discard_pile_but_its_top_becomes_the_stock():
    """GE-8 / D9: when the stock runs out the discard pile but its top card becomes the new
    stock, shuffled by the game's own generator (a seed replays it, another seed does not);
    the top card stays as the discard pile and the hand goes on."""
    g, pile = r6_until_rebuilt(seed=0)
    s = g.states[0]
    assert s["rebuilt"] and s["turn"] == 68 and not g.done()
    assert len(g.discard_pile()) == 1 and g.discard_pile()[0] not in pile
    assert sorted(g.stock()) == sorted(pile) and g.stock() != pile
    assert r6_until_rebuilt(seed=0)[0].stock() == g.stock() != r6_until_rebuilt(seed=1)[0].stock()


def test_r6_the_stock_runs_out_twice_no_winner():
    """R6 / GE-8 / GE-9: when the rebuilt stock runs out too, the hand ends with no winner
    before P2's turn, and every seat scores credit - hand value: P1 80 - 15 = 65, P2
    51 - 60 = -9, P3 (never opened) -90."""
    g, _ = r6_until_rebuilt(seed=0)
    pass_turns(g, 67)
    assert not g.done() and stock_size(g) == 1 and g.current_player() == 0
    pass_turns(g)
    assert g.done() and g.states[0]["turn"] == 136 and g.current_player() == 0
    s = g.summary()
    assert s.winner == -1 and s.ender == -1
    assert s.credit[:3] == (80, 51, 0) and s.deadwood[:3] == (15, 60, 90)
    assert s.hand_points[:3] == (65, -9, -90)


# ---------------------------------------------------------------------------------- GE-9

def test_r1_going_out_by_melding():
    """R1 / GE-7 / GE-9 / D8: P1 melds and lays off the last cards without a discard and
    scores its credit, 103; P2 scores 56 - 38 = 18, P3 59 - 50 = 9."""
    g = start(["TH JH QH 8S 8D 8C 9H 3C 4C 6D XX 6S KH",
               "5S 6S 7S 8S KC KD KS 2D 2H 9C JC AS 4D",
               "QC QD QS 9D TD JD 2C 3H 5H TS JS 9S AD"], stock="? ? ? ? ? ? 5C")
    play_turn(g, "meld TH JH QH", "meld 8C 8D 8S")
    play_turn(g, "meld 5S 6S 7S 8S", "meld KC KD KS")
    play_turn(g, "meld QC QD QS", "meld 9D TD JD")
    play_turn(g, "layoff 9H m0")
    pass_turns(g, 2)
    pile = g.discard_pile()
    play(g, "draw stock", "meld 3C 4C 5C", "meld 6D 6H 6S")
    assert g.melds()[7]["text"] == ["6D", "XX=6H", "6S"]
    assert play(g, "layoff KH m0") == EVENT_HAND_OVER
    assert g.melds()[0]["text"] == ["9H", "TH", "JH", "QH", "KH"]
    s = g.summary()
    assert s.winner == 0 and g.discard_pile() == pile      # out without a discard
    assert hand_is(g, 1, "2D 2H 9C JC AS 4D") and hand_is(g, 2, "2C 3H 5H TS JS 9S AD")
    assert s.credit[:3] == (103, 56, 59) and s.deadwood[:3] == (0, 38, 50)
    assert s.hand_points[:3] == (103, 18, 9) == s.totals[:3]


def test_r2_going_out_by_discarding_the_last_card():
    """R2 / GE-7 / GE-9: P1 lays KS off and discards 8H, its last card: +106 (the 8H counts
    for nobody); P2 scores 48 - 48 = 0."""
    g = start(["9C 9D 9H TS JS QS 4D 5D 6D 7D 8D 9S 8H",
               "5H 6H 7H JC JD JH 2S 3S 4C 8C KD AH QD"], stock="? ? ? ? KS")
    play_turn(g, "meld 9C 9D 9H", "meld TS JS QS")
    play_turn(g, "meld 5H 6H 7H", "meld JC JD JH")
    play_turn(g, "meld 4D 5D 6D 7D 8D", "layoff 9S m0")
    pass_turns(g)
    play(g, "draw stock", "layoff KS m1")
    assert hand_is(g, 0, "8H")
    assert play(g, "discard 8H") == EVENT_HAND_OVER
    s = g.summary()
    assert s.winner == 0 and g.discard_pile()[-1] == ids("8H")[0]
    assert s.credit[:2] == (106, 48) and s.deadwood[:2] == (0, 48)
    assert s.hand_points[:2] == (106, 0)


def test_r3_never_opened_and_going_out_on_the_opening_turn():
    """R3 / GE-5 / GE-7 / D8: P2 (who plays first) has 7S-8S-9S but no way to 40, so no meld
    is offered; P1 then melds all 14 cards in its opening turn (89) and goes out; P2 never
    opened and scores -81."""
    g = start(["AH 2H 3H 4H 5C 5D 5S JC JD JS 7D 8D 9D",
               "7S 8S 9S 4C 4D 2C 2D AS QD KC 5H 6H 3S"], dealer=0, stock="JH TD")
    play(g, "draw stock")
    assert not melds_offered(g)
    play(g, "discard JH")
    play(g, "draw stock", "meld AH 2H 3H 4H", "meld 5C 5D 5S", "meld JC JD JS")
    assert g.states[0]["placed_before"][0] and g.states[0]["open_total"] == 55
    assert play(g, "meld 7D 8D 9D TD") == EVENT_HAND_OVER
    s = g.summary()
    assert s.winner == 0 and s.credit[:2] == (89, 0) and s.deadwood[1] == 81
    assert s.hand_points[:2] == (89, -81)


def test_r4_a_joker_left_in_hand_costs_20():
    """R4 / GE-2 / GE-9: P1 goes out (102); P2's melded joker earns 9, its joker in hand
    costs 20: 45 - 59 = -14."""
    g = start(["QS QD QC 3H 4H 5H 7C 8C 9C TC JC QH KS",
               "8H XX TH 6C 6D 6S XX 3D 5C QH KD 2S 9D"], stock="? ? ? ? 6H")
    play_turn(g, "meld QC QD QS", "meld 3H 4H 5H")
    play_turn(g, "meld 8H 9H TH", "meld 6C 6D 6S")
    assert g.melds()[2]["text"] == ["8H", "XX=9H", "TH"]
    play_turn(g, "meld 7C 8C 9C TC JC", "layoff QH m0")
    pass_turns(g)
    play(g, "draw stock", "layoff 6H m1")
    assert play(g, "discard KS") == EVENT_HAND_OVER
    s = g.summary()
    assert s.credit[:2] == (102, 45) and s.deadwood[:2] == (0, 59)
    assert s.hand_points[:2] == (102, -14)


def test_r5_the_ace_is_11_or_1_at_the_bottom_of_a_run():
    """R5 / GE-2 / GE-9: P2 goes out (102, its high ace 11); P1's two AD earn 11 (Q-K-A) and
    1 (A-2-3-4), the second AC cannot join the set and costs 11 in hand: 74 - 27 = 47."""
    g = start(["QD KD AD AH AS AC AD 2D 3D 4D AC 7S 9H",
               "9S TS JS QS KS AS 4H 4C 4S 6C 7C 8C 2H"], stock="? ? 5H 9C")
    play_turn(g, "meld QD KD AD", "meld AC AH AS")
    play_turn(g, "meld 9S TS JS QS KS AS", "meld 4C 4H 4S")
    play(g, "draw stock", "meld AD 2D 3D 4D")
    assert not {t for t in family_offered(g, "layoff") if "AC" in t}     # the set has a club
    play(g, "discard 5H")
    play(g, "draw stock", "meld 6C 7C 8C 9C")
    assert play(g, "discard 2H") == EVENT_HAND_OVER
    s = g.summary()
    assert s.winner == 1
    assert s.credit[:2] == (74, 102) and s.deadwood[:2] == (27, 0)
    assert s.hand_points[:2] == (47, 102)


# R7: each hand's deal, the seat that goes out first (it melds all 14 cards on its second
# turn) and what every seat opens with on its first turn (nothing: it passes).
R7_HANDS = [
    dict(dealer=3, out="9H TH JH QH KH 8S 8D 8C 3C 4C 6D 6H 6S", draw="5C",
         melds=["meld 9H TH JH QH KH", "meld 8C 8D 8S", "meld 3C 4C 5C", "meld 6D 6H 6S"],
         seats={1: ("TC JC QC KC 2D 3D 4D 2C 3S 4H 5S 8H 9S", ["meld TC JC QC KC", "meld 2D 3D 4D"]),
                2: ("2H 2S 3H 3C 4S 4D 5D 5H 7C JD 2C 2D 3S", []),
                3: ("AC AD 9D TS JC 6C 7S 8C 3D 2S 4C 6S 2H", [])}),
    dict(dealer=0, out="TS JS QS KS 7C 7D 7H 2S 3S 4S 4D 5D 6D", draw="7D",
         melds=["meld TS JS QS KS", "meld 7C 7D 7H", "meld 2S 3S 4S", "meld 4D 5D 6D 7D"],
         seats={2: ("KC KD KH QC QD QH 8C 9C 5S 6S 8H 4C 6C", ["meld KC KD KH", "meld QC QD QH"]),
                3: ("AC AH AS 8S 9S TS 9D TD JD 5C 6H 8D 6S", ["meld AC AH AS", "meld 8S 9S TS"]),
                0: ("2C 2C 2D 2D 2H 2H 2S 3C 3C 3D 3D 3H 6C", [])}),
    dict(dealer=1, out="TC JC QC KC TD JD QD KD 2S 3S 4S 7C 7H", draw="7S",
         melds=["meld TC JC QC KC", "meld TD JD QD KD", "meld 2S 3S 4S", "meld 7C 7H 7S"],
         seats={3: ("KC KD KH KS 4C 4D 4H 4S 5C 5S 6H 9H AD", ["meld KC KD KH KS"]),
                0: ("9S TS JS QS 2H 3H 4H 5C 6D 8C 2C 3C 3D", ["meld 9S TS JS QS", "meld 2H 3H 4H"]),
                1: ("2C 2D 2D 2H 2S 3C 3D 3H 3S 4C 4D 5D 5H", [])}),
    dict(dealer=2, out="AH 2H 3H 4H 5H 6H 7H 9C 9D 9S 5C 5D 5H", draw="5S",
         melds=["meld AH 2H 3H 4H 5H 6H 7H", "meld 9C 9D 9S", "meld 5C 5D 5H 5S"],
         seats={0: ("TC JC QC KC 2C 2D 3C 3D 2S 3S 4C 4D 6S", ["meld TC JC QC KC"]),
                1: ("KD KH KS QD QH QS XX AC AD AS 4H 4S 6D", ["meld KD KH KS", "meld QD QH QS"]),
                2: ("JH JS JD TH TS TD 2H 3H 4S 6C 7C 7D 3D", ["meld JD JH JS", "meld TD TH TS"])}),
]
R7_POINTS = [(103, 18, -52, -89), (-35, 92, 14, 6), (21, -40, 110, -12), (11, -7, 28, 75)]


def r7_deck(hand: dict) -> list[int]:
    first = (hand["dealer"] + 1) % 4
    cards = [""] * 4
    cards[first] = hand["out"]
    for seat, (held, _) in hand["seats"].items():
        cards[seat] = held
    return german_deck(cards, stock="? ? ? ? " + hand["draw"], dealer=hand["dealer"])


def play_r7_hand(g: Game, hand: dict) -> int:
    """The first seat passes, every other seat opens as scripted (or passes), then the first
    seat draws its 14th card and melds everything: out."""
    first = (hand["dealer"] + 1) % 4
    assert g.states[0]["dealer"] == hand["dealer"] and g.current_player() == first
    pass_turns(g)
    for k in range(1, 4):
        play_turn(g, *hand["seats"][(first + k) % 4][1])
    play(g, "draw stock", *hand["melds"][:-1])
    return play(g, hand["melds"][-1])


def test_r7_a_four_player_game_with_a_tie_for_first():
    """R7 / GE-9 / GE-1 / D1: seed 0 makes P4 the first dealer; the deal passes to P1, P2,
    P3; after four hands (one per seat) the game is over; P1 and P3 share first place with
    100 each (``game_winner`` -1), P2 has 63, P4 -20."""
    g = Game(german(num_players=4, episode="game"), 1)
    g.reset(seed=0, deck=r7_deck(R7_HANDS[0]), next_decks=[r7_deck(h) for h in R7_HANDS[1:]])
    totals = np.zeros(4, int)
    for k, (hand, points) in enumerate(zip(R7_HANDS, R7_POINTS)):
        event = play_r7_hand(g, hand)
        s = g.summary()
        totals += points
        assert s.hand_no == k and s.winner == (hand["dealer"] + 1) % 4
        assert s.hand_points[:4] == points and s.totals[:4] == tuple(totals)
        assert event == (EVENT_GAME_OVER if k == 3 else EVENT_HAND_OVER)
    assert tuple(totals) == (100, 63, 100, -20)
    assert g.states[0]["phase"] == PHASE_GAME_OVER and g.summary().game_winner == -1


def test_ge9_the_highest_total_wins_the_game():
    """GE-9: after the last hand the highest total wins (R7's last hand from other totals)."""
    g = Game(german(num_players=4), 1)
    g.reset(seed=0, deck=r7_deck(R7_HANDS[3]), dealer=2, scores=[90, 70, 72, -95], hand_no=3)
    assert play_r7_hand(g, R7_HANDS[3]) == EVENT_GAME_OVER
    s = g.summary()
    assert s.totals[:4] == (101, 63, 100, -20) and s.game_winner == 0


def test_d20_a_hand_without_a_winner_counts_as_one_of_the_game():
    """D20 / GE-9: hands ended by the turn cap count; the game is one hand per seat."""
    g = Game(german(num_players=4, episode="game", max_turns=4), 1)
    g.reset(seed=9)
    first = int(g.states[0]["dealer"])
    totals = np.zeros(4, int)
    for hand in range(4):
        assert g.states[0]["dealer"] == (first + hand) % 4
        before = hand_value(g)
        for _ in range(4):
            pass_turns(g)
        s = g.summary()
        assert s.winner == -1 and s.hand_points[:4] == tuple(-v for v in before)
        totals -= before
    assert g.states[0]["phase"] == PHASE_GAME_OVER
    assert s.totals[:4] == tuple(totals)
    best = np.flatnonzero(totals == totals.max())
    assert s.game_winner == (best[0] if len(best) == 1 else -1)


# ---------------------------------------------------------------------------------- bad input

@pytest.mark.parametrize("players", [1, 7])
def test_ge1_seat_count_outside_2_to_6_is_refused(players):
    """GE-1: 2-6 seats; anything else is a ConfigError that names the range."""
    with pytest.raises(ConfigError, match=r"num_players must be an integer in 2\.\.6"):
        german_variant(num_players=players)


@pytest.mark.parametrize("card,message", [
    ("7Z", "malformed card '7Z'"), ("7H#3", r"copies #1\.\.#2"), ("XX#5", r"copies #1\.\.#4"),
])
def test_ge1_bad_card_text_in_a_deck_is_refused(card, message):
    """GE-1: a malformed card, or a copy the two packs do not have, is a clear CardError and
    the game is left as it was."""
    g = Game(german(num_players=2), 1)
    g.reset(seed=1)
    snap = snapshot(g)
    text = g.variant.deck.cards_text(german_deck(["", ""])[:-1], exact=True) + " " + card
    with pytest.raises(CardError, match=message):
        g.reset(seed=2, deck=text)
    assert_unchanged(g, snap)
    with pytest.raises(ActionError, match=message):
        g.variant.parse_action(f"take {card}")


def test_ge4_an_illegal_action_changes_nothing():
    """GE-4: an action the mask does not allow raises IllegalActionError and leaves the record
    byte for byte as it was (a discard before the draw, a card not held, a take of a card
    under the top, an out-of-range id)."""
    g = start([OPENER, ""], upcard="5H", stock="8H")
    for action in ("discard TC", "take 5H", 4279, -1):
        snap = snapshot(g)
        with pytest.raises(IllegalActionError):
            g.step_one(0, action)
        assert_unchanged(g, snap)
    play(g, "draw stock", "meld TC JC QC KC")
    for action in ("discard 7H", "draw stock", "layoff 9C m0", "meld 2D 3D 4D"):
        snap = snapshot(g)
        with pytest.raises(IllegalActionError):
            g.step_one(0, action)
        assert_unchanged(g, snap)
        with pytest.raises(IllegalActionError):
            g.step([g.variant.parse_action(action)])
        assert_unchanged(g, snap)
