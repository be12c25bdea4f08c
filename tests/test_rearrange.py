"""The rearrangement solver (Robber's Rummy RR-6) against a brute-force search on small
positions: the same optimum, and every answer a valid table that keeps each table card."""

from __future__ import annotations

from functools import lru_cache
from itertools import product

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mountain_rummy_env.cards import JOKER_FACE, parse_face
from mountain_rummy_env.melds import MeldRules, build_meld_table
from mountain_rummy_env.rearrange import best_rearrangement

TABLE = build_meld_table(MeldRules(ace_low=True, ace_high=True))   # RR-3: ace low or high
TEMPLATES = [tuple(int(f) for f in TABLE.faces[t, :TABLE.length[t]])
             for t in range(TABLE.num_templates)]


def counts(text: str) -> np.ndarray:
    c = np.zeros(JOKER_FACE + 1, dtype=np.int64)
    for card in text.split():
        c[JOKER_FACE if card == "XX" else parse_face(card)] += 1
    return c


def _shapes():
    """Every meld as a face-count vector: a template of naturals, or with one joker (RR-3)."""
    out = []
    for faces in TEMPLATES:
        for slot in (-1, *range(len(faces))):
            v = np.zeros(JOKER_FACE + 1, dtype=np.int64)
            for i, f in enumerate(faces):
                v[JOKER_FACE if i == slot else f] += 1
            out.append(v)
    return np.array(out)


SHAPES = _shapes()


@lru_cache(maxsize=None)
def _coverable(key: tuple) -> bool:
    """Can these cards be split exactly into melds? The lowest natural face left must be in
    some meld as a natural; try every meld shape holding it."""
    left = np.array(key)
    if not left.any():
        return True
    naturals = np.flatnonzero(left[:JOKER_FACE])
    if not len(naturals):
        return False                   # jokers alone make no meld
    f = naturals[0]
    for shape in SHAPES[SHAPES[:, f] > 0]:
        if (shape <= left).all() and _coverable(tuple(left - shape)):
            return True
    return False


def brute_force(on_table, in_hand, weights) -> float | None:
    """The best worth of hand cards added, trying every part of the hand (None: the table
    alone is not coverable)."""
    if not _coverable(tuple(on_table)):
        return None
    faces = np.flatnonzero(in_hand)
    best = 0.0
    for take in product(*(range(in_hand[f] + 1) for f in faces)):
        add = np.zeros_like(in_hand)
        add[faces] = take
        worth = float(weights @ add)
        if worth > best and _coverable(tuple(on_table + add)):
            best = worth
    return best


def check_valid(r, on_table, in_hand):
    """Every meld a template (with at most one joker) and the cards exactly the table's
    plus the used hand cards."""
    total = np.zeros(JOKER_FACE + 1, dtype=np.int64)
    for shown, declared in zip(r.melds, r.declared):
        faces = tuple(d if s == JOKER_FACE else s for s, d in zip(shown, declared))
        assert faces in TEMPLATES, faces
        assert sum(s == JOKER_FACE for s in shown) <= 1
        for s in shown:
            total[s] += 1
    used = np.append(r.used, r.used_jokers)
    assert (used <= in_hand).all() and (used >= 0).all()
    assert (total == on_table + used).all()


def test_rr6_worked_example():
    """RR-6: the table 5-8H, 9C 9D 9S, Q-A S and a hand 4H 9H 2C 3D XX: 4H extends the
    run, the run splits at 7H so that 9H joins 7H 8H, and the joker fills a meld; 2C and 3D
    have no place. Three cards are the most."""
    table, hand = counts("5H 6H 7H 8H 9C 9D 9S QS KS AS"), counts("4H 9H 2C 3D XX")
    r = best_rearrangement(TABLE, table, hand)
    check_valid(r, table, hand)
    assert r.cards_placed == 3 and r.used[parse_face("2C")] == 0
    assert brute_force(table, hand, np.ones(JOKER_FACE + 1)) == 3


def test_nothing_to_add_and_an_invalid_table():
    table = counts("5H 6H 7H")
    r = best_rearrangement(TABLE, table, counts("KC 2D"))
    assert r.cards_placed == 0 and r.melds == ((parse_face("5H"), parse_face("6H"),
                                                 parse_face("7H")),)
    assert best_rearrangement(TABLE, counts("5H 6H"), counts("KC")) is None
    with pytest.raises(ValueError, match="length 53"):
        best_rearrangement(TABLE, np.zeros(52), np.zeros(53))
    with pytest.raises(ValueError, match="weights are one per face"):
        best_rearrangement(TABLE, table, counts("KC"), np.ones(52))


def test_the_objective_chooses_between_exclusive_plays():
    """Four aces on the table can lend one ace: to 2H 3H or to QS KS, not to both (two aces
    are no set). Either is two cards; weighing points takes the spades."""
    table, hand = counts("AH AS AD AC"), counts("2H 3H QS KS")
    points = np.array([f % 13 + 1 for f in range(52)] + [25], dtype=float)
    by_count = best_rearrangement(TABLE, table, hand)
    by_value = best_rearrangement(TABLE, table, hand, points)
    for r in (by_count, by_value):
        check_valid(r, table, hand)
        assert r.cards_placed == 2
    assert by_value.used[parse_face("KS")] == 1 and by_value.used[parse_face("2H")] == 0


@st.composite
def positions(draw):
    """A legal table of 1-3 melds (two decks: a face at most twice, at most 4 jokers) and a
    hand of 1-6 cards near the table's faces."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    for _ in range(50):
        table = np.zeros(JOKER_FACE + 1, dtype=np.int64)
        for _ in range(int(rng.integers(1, 4))):
            table += SHAPES[rng.integers(len(SHAPES))]
        if (table[:JOKER_FACE] <= 2).all() and table[JOKER_FACE] <= 4 and table.sum() <= 10:
            break
    else:
        table = counts("5H 6H 7H")
    hand = np.zeros(JOKER_FACE + 1, dtype=np.int64)
    near = np.flatnonzero(table[:JOKER_FACE])
    for _ in range(int(rng.integers(1, 7))):
        f = (int(rng.choice(near)) + int(rng.integers(-2, 3)) * (13 if rng.random() < 0.3 else 1)
             if rng.random() < 0.8 else int(rng.integers(0, 53)))
        f = f % 53
        if table[f] + hand[f] < (4 if f == JOKER_FACE else 2):
            hand[f] += 1
    return table, hand


@settings(max_examples=150, deadline=None)
@given(positions(), st.booleans())
def test_solver_matches_brute_force(position, by_value):
    table, hand = position
    weights = (np.array([f % 13 + 1 for f in range(52)] + [25], dtype=float) if by_value
               else np.ones(JOKER_FACE + 1))
    r = best_rearrangement(TABLE, table, hand, weights)
    expected = brute_force(table, hand, weights)
    if expected is None:
        assert r is None
        return
    check_valid(r, table, hand)
    assert float(weights @ np.append(r.used, r.used_jokers)) == pytest.approx(expected)
