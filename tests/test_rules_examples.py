"""Worked examples E1, E2, E3, E4, E6, E7, E10 of docs/mountain_rummy.md, each played out
as a scripted hand from an explicit deck order through ``Game.step_one`` with action texts.

P1 is seat 0 (the non-dealer, who plays first), P2 is seat 1 (the dealer). The example end
positions cannot be reached from a 13-card deal (their card counts do not add up: e.g. in E1
P1 melds 7 and keeps 2, yet 13 + 1 - 7 - 1 = 6 cards would remain), so each example is
replayed with the smallest deal (``short_variant``) that reaches it exactly; all rules
MR-2..MR-14 are unchanged. Deep discard takes supply the remaining cards.
"""

from __future__ import annotations

from mountain_rummy_env.core.state import EVENT_HAND_OVER

from helpers import (
    hand_is, play, recompute_credit_deadwood, short_variant, start,
)


def check_summary(g, *, end, credit, deadwood, sp, bonus, points, winner, kinds=(), ender=0):
    s = g.summary(0)
    assert s.end == end
    assert s.ender == ender
    assert s.credit == credit
    assert s.deadwood == deadwood
    assert s.standard_points == sp
    assert s.bonus == bonus
    assert set(s.bonus_kinds) == set(kinds)
    assert s.hand_points == points
    assert s.totals == points  # first hand of the game
    assert s.winner == winner
    # the independent recomputation from the final table and hands agrees
    assert recompute_credit_deadwood(g) == (list(credit), list(deadwood))


def test_e1_knock():
    """E1 (MR-7 knock, MR-9 layoff on the opponent's run, MR-10 response, MR-12)."""
    g = start("5H 6H 7H QS QD 4D KH", "9S 9D 9C 9H KS 2D 3C", "QC", "8H 7C",
              v=short_variant(7))
    play(g, "draw stock", "discard 4D",            # P1 draws 8H
         "draw stock", "discard 3C",                # P2 draws 7C
         "take QC",                                 # P1 takes QC 4D 3C; QC must be melded
         "meld QS QD QC", "meld 5H 6H 7H 8H", "knock KH")
    assert hand_is(g, 0, "3C 4D")
    assert g.states[0]["phase"] == 2  # response
    assert play(g, "meld 9S 9D 9C", "layoff 9H m1", "done") == EVENT_HAND_OVER
    assert hand_is(g, 1, "2D 7C KS")
    check_summary(g, end="knock", credit=(62, 36), deadwood=(7, 22), sp=(55, 14),
                  bonus=(0, 0), points=(55, 14), winner=0)


def test_e2_undercut():
    """E2 (MR-13 undercut: D 8 <= 9 and M 50 >= 44; bonus to the hand winner P2)."""
    g = start("2C 3C 4C 5C TS TH TD 4D", "JS JH JD JC 6C 3H 2S 3S", "9H", "KH 5S",
              v=short_variant(8))
    play(g, "draw stock", "discard TD",                         # P1 draws KH
         "draw stock", "meld JS JH JD", "discard 5S",           # P2: earlier JS JH JD
         "take TD",                                             # P1 takes TD 5S
         "meld TS TH TD", "meld 2C 3C 4C 5C", "knock KH",
         "layoff JC m0", "layoff 6C m2", "done")
    assert hand_is(g, 0, "4D 5S")
    assert hand_is(g, 1, "3H 2S 3S")
    check_summary(g, end="knock", credit=(44, 50), deadwood=(9, 8), sp=(35, 42),
                  bonus=(0, 30), points=(35, 72), winner=1, kinds=("undercut",))


def test_e3_no_undercut():
    """E3 (MR-13: D 5 <= 10 but M 30 < 55, so no undercut)."""
    g = start("9S TS JS QS KS 6D 4C", "7H 7D 7C 2H 3H 4H 5C", "8C", "QH",
              v=short_variant(7))
    play(g, "draw stock", "meld 9S TS JS QS KS", "knock QH",
         "meld 7H 7D 7C", "meld 2H 3H 4H", "done")
    check_summary(g, end="knock", credit=(55, 30), deadwood=(10, 5), sp=(45, 25),
                  bonus=(0, 0), points=(45, 25), winner=0)


def test_e4_tie_goes_to_non_ender():
    """E4 (MR-12: equal SP, the tie goes to P2 who did not end the hand; P2 deals next)."""
    g = start("8S 8H 8D 3D 4D 5D", "9H TH JH QH 3C 7C", "2C", "6D 2D KC QS",
              v=short_variant(6))
    play(g, "draw stock", "discard 8D",          # P1 draws 6D
         "draw stock", "discard 3C",             # P2 draws 2D
         "draw stock", "discard 6D",             # P1 draws KC
         "draw stock", "discard 7C",             # P2 draws QS
         "take 8D",                              # depth 3: 8D 3C 6D 7C
         "meld 8S 8H 8D", "meld 3D 4D 5D 6D", "knock KC",
         "meld 9H TH JH QH", "layoff 2D m1", "done")
    assert hand_is(g, 0, "3C 7C")
    assert hand_is(g, 1, "QS")
    check_summary(g, end="knock", credit=(42, 44), deadwood=(10, 12), sp=(32, 32),
                  bonus=(0, 0), points=(32, 32), winner=1)
    assert g.states[0]["dealer"] == 1


def test_e4_tie_next_dealer_in_game_mode():
    """E4 in episode='game': the next hand is dealt by P2, so P1 plays first again."""
    g = start("8S 8H 8D 3D 4D 5D", "9H TH JH QH 3C 7C", "2C", "6D 2D KC QS",
              v=short_variant(6, episode="game", target_score=500))
    play(g, "draw stock", "discard 8D", "draw stock", "discard 3C", "draw stock",
         "discard 6D", "draw stock", "discard 7C", "take 8D", "meld 8S 8H 8D",
         "meld 3D 4D 5D 6D", "knock KC", "meld 9H TH JH QH", "layoff 2D m1", "done")
    s = g.states[0]
    assert tuple(s["scores"]) == (32, 32)
    assert s["dealer"] == 1 and s["current"] == 0 and s["hand_no"] == 1


def test_e6_base_camp_with_summit():
    """E6 (MR-7 Base Camp, MR-13 base camp 10 + summit 40; ace low 1 and ace high 14)."""
    g = start("AH 4H TD 7S 7H 9S", "5S 5H 5D 6C 8C QS", "2C",
              "3H 2H QD JD KD 7C 7D AD", v=short_variant(6))
    play(g, "draw stock", "discard TD",                       # P1 draws 3H
         "draw stock", "meld 5S 5H 5D", "discard 2H",         # P2 draws 2H
         "draw stock", "discard 3H",                          # P1 draws QD
         "draw stock", "discard JD",                          # P2 draws JD
         "draw stock", "discard QD",                          # P1 draws KD
         "draw stock", "discard 7C",                          # P2 draws 7C
         "draw stock", "discard 7D",                          # P1 draws 7D
         "draw stock", "discard AD",                          # P2 draws AD
         "take TD")                                           # depth 7: TD 2H 3H JD QD 7C 7D AD
    assert hand_is(g, 0, "7C 7D TD JD QD KD AD AH 2H 3H 4H 7H 7S 9S")
    play(g, "meld TD JD QD KD AD", "meld AH 2H 3H 4H", "meld 7S 7H 7C 7D")
    assert play(g, "base camp") == EVENT_HAND_OVER
    check_summary(g, end="base camp", credit=(98, 15), deadwood=(0, 26), sp=(98, -11),
                  bonus=(50, 0), points=(148, -11), winner=0, kinds=("base camp", "summit"))


def test_e7_high_camp_with_joker():
    """E7 (MR-7 High Camp by melding, MR-5 joker declared JS earns 11, no summit)."""
    g = start("6C 7C 8C 9S TS XX", "4H 4D 4S AC 2S KH", "2D", "QS 9C", v=short_variant(6))
    play(g, "draw stock", "meld 6C 7C 8C", "discard 9S",      # P1 draws QS
         "draw stock", "meld 4H 4D 4S", "discard 9C",         # P2 draws 9C
         "take 9S",                                           # depth 1: 9S 9C
         "meld 9S TS XX=JS QS")
    assert [m["text"] for m in g.melds()][-1] == ["9S", "TS", "XX=JS", "QS"]
    assert play(g, "layoff 9C m0") == EVENT_HAND_OVER          # hand empty: High Camp
    check_summary(g, end="high camp", credit=(72, 12), deadwood=(0, 29), sp=(72, -17),
                  bonus=(20, 0), points=(92, -17), winner=0, kinds=("high camp",))


def test_e10_exhausted():
    """E10 (MR-11: exhausted after max_turns, scored as it stands, no bonuses)."""
    g = start("6S 6H 6D 9C TC JC", "2C 3C 4C 5C XX 7D", "3S", "KD QD 8S AH",
              v=short_variant(6, max_turns=5))
    play(g, "draw stock", "discard 6D",                        # P1 draws KD
         "draw stock", "meld 2C 3C 4C 5C", "discard QD",       # P2 draws QD
         "draw stock", "discard KD",                           # P1 draws 8S
         "draw stock", "discard AH",                           # P2 draws AH
         "take 6D",                                            # depth 3: 6D QD KD AH
         "meld 6S 6H 6D", "meld 9C TC JC")
    assert play(g, "discard 8S") == EVENT_HAND_OVER            # 5th turn: exhausted
    assert hand_is(g, 0, "QD KD AH")
    assert hand_is(g, 1, "7D XX")
    check_summary(g, end="exhausted", credit=(48, 14), deadwood=(39, 22), sp=(9, -8),
                  bonus=(0, 0), points=(9, -8), winner=0)
