"""Errors and text forms: illegal actions, malformed cards, invalid configs and bad deck
orders raise clear errors and change nothing; every action id round-trips through text."""

from __future__ import annotations

import numpy as np
import pytest

from mountain_rummy_env import (
    ActionError, CardError, ConfigError, Deck, Game, IllegalActionError, MountainConfig,
    mountain_variant,
)

from helpers import assert_unchanged, is_legal, play, snapshot, start, variant


# ------------------------------------------------------------------------------ configs

@pytest.mark.parametrize("options,word", [
    ({"num_jokers": 3}, "num_jokers"),
    ({"num_jokers": True}, "num_jokers"),
    ({"camp_response": "bad"}, "camp_response"),
    ({"bonus_recipient": "nobody"}, "bonus_recipient"),
    ({"max_turns": 0}, "max_turns"),
    ({"max_turns": 2.5}, "max_turns"),
    ({"target_score": -5}, "target_score"),
    ({"episode": "match"}, "episode"),
    ({"jokers": 2}, "jokers"),
])
def test_invalid_configs_name_the_problem(options, word):
    with pytest.raises(ConfigError, match=word):
        mountain_variant(**options)


def test_config_object_and_options_not_both():
    with pytest.raises(TypeError):
        mountain_variant(MountainConfig(), num_jokers=1)


# -------------------------------------------------------------------------------- cards

@pytest.mark.parametrize("text", ["1H", "ZZ", "AX", "10", "7CC", "XX=XX", "7C=8C"])
def test_malformed_card_strings(text):
    with pytest.raises(CardError):
        Deck(1, 2).parse_cards(text)


def test_duplicate_and_missing_cards():
    deck = Deck(1, 2)
    with pytest.raises(CardError, match="duplicate"):
        deck.parse_cards("AS 2S AS")
    with pytest.raises(CardError, match="joker"):
        deck.parse_cards("XX XX XX")
    with pytest.raises(CardError):
        Deck(1, 0).parse_cards("XX")
    with pytest.raises(CardError):
        deck.parse_cards("XX=7C")  # a card in hand has no declared value
    assert deck.parse_cards("10h as xx") == [9 + 26, 39, 52]
    assert deck.parse_cards("XX#2 XX") == [53, 52] and deck.cards_text([53, 52], exact=True) == "XX#2 XX"
    assert deck.cards_text([53, 52]) == "XX XX"                    # plain text, for people
    for bad, message in (("XX XX#1", "duplicate"), ("XX#3", "#1..#2"), ("XX#", "#1..#2"),
                         ("5H#2", "#1..#1")):
        with pytest.raises(CardError, match=message):
            deck.parse_cards(bad)
    two_decks = Deck(2, 4)                                          # 5H: ids 30 and 82
    assert two_decks.parse_cards("5H#2 5H") == [82, 30] and two_decks.card_text(82, exact=True) == "5H#2"


# ---------------------------------------------------------------------------- deck orders

def test_bad_deck_orders_raise_and_leave_the_state_unchanged():
    g = Game(variant(), 1)
    g.reset(seed=4)
    before = snapshot(g)
    order = list(range(54))
    for bad in (order[:53], order + [0], order[:53] + [0], [c + 1 for c in order]):
        with pytest.raises(ValueError, match="each of the 54 cards"):
            g.reset(deck=bad, dealer=0)
        assert_unchanged(g, before)
    with pytest.raises(CardError):
        g.reset(deck="AS KS QQ", dealer=0)
    with pytest.raises(ValueError):
        g.reset(deck=order, dealer=2)
    with pytest.raises(ValueError):
        g.reset(seed=-1)
    assert_unchanged(g, before)


ORDER = list(range(54))


@pytest.mark.parametrize("position,message", [
    ({"scores": [5]}, "one total per seat"),
    ({"scores": [1, 2, 3]}, "one total per seat"),
    ({"scores": "12"}, "one total per seat"),
    ({"scores": [1.5, 2]}, "total in scores"),
    ({"scores": [True, 2]}, "total in scores"),
    ({"scores": [10**10, 0]}, "total in scores"),
    ({"dealer": 2}, "dealer"),
    ({"dealer": -1}, "dealer"),
    ({"dealer": 1.0}, "dealer"),
    ({"dealer": True}, "dealer"),
    ({"hand_no": -1}, "hand_no"),
    ({"hand_no": "3"}, "hand_no"),
    ({"next_decks": ORDER}, r"next_decks\[0\]"),               # one deck, not a list of decks
    ({"next_decks": "AS KS"}, "list of deck orders"),
    ({"next_decks": 5}, "list of deck orders"),
    ({"next_decks": [ORDER, ORDER[:53]]}, r"next_decks\[1\] must hold each of the 54 cards.*53 cards"),
    ({"next_decks": [ORDER[:53] + [0]]}, "AC repeated"),
    ({"next_decks": [ORDER[:53] + [60]]}, "60 is not a card id"),
    ({"next_decks": [ORDER[:53] + ["XX"]]}, "is not a card id"),
    ({"deck": ORDER, "next_decks": ["AS KS"]}, "54 cards"),
])
def test_bad_positions_raise_and_leave_the_state_unchanged(position, message):
    """Game.reset's position (totals, dealer, hand number, scripted decks) is checked before
    anything changes: one clear error naming the argument."""
    g = Game(variant(episode="game"), 2)
    g.reset(seed=4, scores=[10, 20], next_decks=[ORDER])
    before = snapshot(g)
    with pytest.raises((ValueError, TypeError), match=message):
        g.reset(seed=5, **position)
    assert_unchanged(g, before)


def test_position_at_reset_and_scripted_hands_after_next_hand():
    """Totals, dealer and hand number set at reset (only in the games of ``index``); in
    episode='hand', next_hand deals the scripted decks in turn, then the game's own shuffle;
    a reset without a script drops what was left of one."""
    g = Game(variant(max_turns=1), 3)
    reversed_order = ORDER[:52][::-1] + ORDER[52:]
    g.reset(seed=7, dealer=0, scores=[962, 991], hand_no=5, next_decks=[reversed_order, ORDER],
            index=[0, 2])
    s = g.states
    assert s["scores"][[0, 2]].tolist() == [[962, 991]] * 2 and s["scores"][1].tolist() == [0, 0]
    assert s["hand_no"][[0, 2]].tolist() == [5, 5] and s["dealer"][[0, 2]].tolist() == [0, 0]

    def finish_and_deal(index):
        drawn = g.variant.deck.card_text(g.stock(index)[0])
        play(g, "draw stock", "discard " + drawn, index=index)   # max_turns=1 ends the hand
        g.next_hand(index)
        return g.states["deck"][index].tolist()

    decks = [finish_and_deal(0) for _ in range(3)]
    assert decks[:2] == [reversed_order, ORDER] and decks[2] not in (reversed_order, ORDER)
    assert g.states["hand_no"][0] == 8
    g.reset(seed=7, index=2)
    assert finish_and_deal(2) != reversed_order


def test_deck_order_as_card_string():
    from helpers import deck_for
    order = deck_for("AS KS QS", "2C 3C", "7H", "8D")
    text = Deck(1, 2).cards_text(order)
    g = Game(variant(), 1)
    g.reset(deck=text, dealer=1)
    assert list(g.states[0]["deck"]) == order
    with pytest.raises(CardError):
        from helpers import deck_for as d
        d("AS AS")


# ------------------------------------------------------------------------------ actions

def test_illegal_actions_raise_and_change_nothing():
    g = start("5H 6H 7H 2C", "", "9C")
    before = snapshot(g)
    for action in ("discard 2C", "knock 2C", "meld 5H 6H 7H", "done", "base camp",
                   "take AS", "layoff 8H m0", "regroup 5H 6H 7H"):
        with pytest.raises(IllegalActionError, match="illegal action"):
            g.step_one(0, action)
        assert_unchanged(g, before)
    for action in (-1, g.variant.num_actions, 10**9, "1.5", 2.0, None):
        with pytest.raises(ActionError):
            g.step_one(0, action)
        assert_unchanged(g, before)
    with pytest.raises(IllegalActionError):
        g.step([g.variant.parse_action("done")])
    with pytest.raises(ValueError):
        g.step([0, 0])
    assert_unchanged(g, before)
    with pytest.raises(ValueError):
        g.next_hand(0)
    assert_unchanged(g, before)


def test_batch_step_rejects_before_changing_any_game():
    g = Game(variant(), 3)
    g.reset(seed=11)
    before = snapshot(g)
    actions = [g.variant.layout.draw, g.variant.layout.done, g.variant.layout.draw]
    with pytest.raises(IllegalActionError, match="game 1"):
        g.step(actions)
    assert_unchanged(g, before)


def test_bool_action_is_rejected_as_action_error():
    """A bool is not an action id (numpy would read masks[i, True] as a boolean index)."""
    g = start("5H 6H 7H 2C", "", "9C")
    with pytest.raises(ActionError):
        g.step_one(0, True)


@pytest.mark.parametrize("text", ["", "dance", "draw pile", "take", "take 1H", "take XX#3",
                                  "meld 5H 6H", "meld KH AH 2H", "meld XX XX XX",
                                  "layoff 9H", "layoff 9H x3", "layoff 9H m99",
                                  "discard XX=7C", "knock", "base", "done now"])
def test_malformed_action_texts(text):
    with pytest.raises(ActionError):
        variant().parse_action(text)


# ------------------------------------------------------------------------------ text forms

@pytest.mark.parametrize("jokers", [2, 1, 0])
def test_every_action_id_round_trips_through_text(jokers):
    v = variant(num_jokers=jokers)
    seen = set()
    for a in range(v.num_actions):
        text = v.action_text(a)
        seen.add(text)
        assert v.parse_action(text) == a, text
        assert v.parse_action(text.upper()) == a
    assert len(seen) == v.num_actions


def full_suit_ace_high_runs(v):
    """Ids of the 13-card runs 2..A (ace high): same faces as A..K, so ``MeldTable.find``
    (face bitmask) cannot tell them apart."""
    out = set()
    for t in range(v.table.num_templates):
        if v.table.kind[t] == 2 and v.table.length[t] == 13 and v.table.hi[t] == 13:
            out |= {v.layout.meld + t, v.layout.regroup + t}
    assert len(out) == 8
    return out


def test_full_suit_ace_high_run_text_round_trips():
    """'meld 2C ... KC AC' (ace high) and 'meld AC 2C ... KC' (ace low) hold the same faces;
    the text order tells them apart."""
    v = variant()
    for a in sorted(full_suit_ace_high_runs(v)):
        assert v.parse_action(v.action_text(a)) == a
    assert v.parse_action("meld 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC") != \
        v.parse_action("meld AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC")


def test_text_aliases():
    v = variant()
    assert v.parse_action("take XX#2") == v.layout.take + 53
    assert v.action_text(v.layout.take + 53) == "take XX#2"
    assert v.parse_action("meld 5H XX=6H 7H") == v.parse_action("meld 5H 6H 7H")
    assert v.parse_action("meld 7S 7C 7D") == v.parse_action("meld 7C 7D 7S")
    assert v.parse_action("layoff XX=9H m3") == v.parse_action("layoff 9H m3")
    assert v.parse_action("DRAW") == v.layout.draw
    assert v.parse_action("discard 10h") == v.parse_action("discard TH")


# ------------------------------------------------------------------ MR-7 deep draw order

def test_mr7_deep_draw_placeable_only_after_another_play():
    """MR-7.1: a deep draw is legal if k can be melded or laid off this turn, also when that
    needs another play first: 9H fits only after 8H is laid off on 5H-6H-7H."""
    g = start("8H 9H 2C 4D 6S 8C TD QS KC 3S 5D JC AS",
              "5H 6H 7H 2D 3C 4S 6C 7D 8S 9C JD QH KD", "AD", "2S 3D 4H")
    play(g, "draw stock", "discard 9H", "draw stock", "meld 5H 6H 7H", "discard 3D")
    assert is_legal(g, "take 9H")
    play(g, "take 9H")
    assert not [a for a in g.legal_actions() if g.variant.action_family(a) == "discard"]
    play(g, "layoff 8H m0", "layoff 9H m0")
    assert g.melds()[0]["text"] == ["5H", "6H", "7H", "8H", "9H"]
    assert g.melds()[0]["owners"] == [1, 1, 1, 0, 0]
    assert is_legal(g, "discard 2C") and not is_legal(g, "discard 3D")


def test_a_large_int_seed_deals_as_the_same_seed_in_a_seed_array():
    """Game.reset(seed=s) deals what reset(seed=[s]) does for every 64-bit seed: the vector
    env draws seeds near 2**63, and int64 + uint64 arithmetic would round them through float64."""
    v = mountain_variant()
    for s in (0, 2**53 + 1, 8822282796967251139, 2**64 - 1):
        a, b = Game(v, 1), Game(v, 1)
        a.reset(seed=s)
        b.reset(seed=np.array([s], np.uint64))
        assert (a.states[0]["deck"] == b.states[0]["deck"]).all(), s
    lo, hi = Game(v, 1), Game(v, 1)
    lo.reset(seed=2**53)
    hi.reset(seed=2**53 + 1)        # the same float64
    assert (lo.states[0]["deck"] != hi.states[0]["deck"]).any()
