"""German Rummy's mask shortcuts against the full search (issue #24, GE-5).

``german.legal_mask`` settles most GE-5 questions (can an opening of 40 still be completed,
through this meld, or with the taken discard?) by a credit bound and one greedy sequence
of melds (``german.opening_possible``, ``german.opening_melds``); ``german.legal_mask_full``
asks the exact search (``german.opening_reachable``) every time. Along seeded random
playouts (German 4 and 2 seats on deals rich in melds and jokers, Crazy 4 seats) every mask
must equal the full one, entry for entry; on random hands the shortcut's answer must be
the search's, and its bound no lower than the solver's.
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from numba import njit

from mountain_rummy_env import Game
from mountain_rummy_env.cards import JOKER_FACE
from mountain_rummy_env.core import german
from mountain_rummy_env.core.state import PHASE_DRAW, PHASE_PLAY
from mountain_rummy_env.solver import make_workspace

from german_helpers import crazy
from test_german_properties import choose, rich_deck, variant

NO_SHRINK = (Phase.explicit, Phase.reuse, Phase.generate)


@njit(cache=True)
def _masks(s, spec, fast, full, scratch):
    german.legal_mask(s, spec, fast, scratch)
    german.legal_mask_full(s, spec, full, scratch)


def play_and_compare(v, seed: int, steps: int, rich: bool, appetite: float) -> dict:
    """Random play of one game of ``v`` (``rich``: a meld-rich deal, test_german_properties'
    ``rich_deck``; ``appetite``: how eagerly it melds and takes, its ``choose``); every
    position's mask is compared with the full recomputation. Returns what it saw."""
    rng = random.Random(seed)
    g = Game(v, 1)
    seats = v.num_players
    dealer = rng.randrange(seats)
    g.reset(seed=seed, dealer=dealer, deck=rich_deck(rng, seats, dealer) if rich else None)
    fast = np.zeros(v.num_actions, np.int8)
    full = np.zeros(v.num_actions, np.int8)
    scratch = np.zeros_like(g._scratch)
    seen = {"positions": 0, "unopened draw, take legal": 0, "unopened play, meld legal": 0,
            "unopened, taken card pending": 0}
    for _ in range(steps):
        if g.done(0):
            break
        s = g.states[0]
        _masks(s, g.spec, fast, full, scratch)
        assert np.array_equal(fast, full), (seed, int(s["phase"]),
                                            np.flatnonzero(fast != full).tolist())
        assert np.array_equal(fast, g.masks[0])
        seen["positions"] += 1
        if not s["placed_before"][s["current"]] and v.spec.open_min > 0:
            if s["phase"] == PHASE_DRAW and fast[v.layout.take: v.layout.meld].any():
                seen["unopened draw, take legal"] += 1
            if s["phase"] == PHASE_PLAY:
                seen["unopened play, meld legal"] += int(
                    fast[v.layout.meld: v.layout.meld + v.spec.num_templates].any())
                seen["unopened, taken card pending"] += int(s["obligation"] >= 0)
        g.step_one(0, choose(g, rng, appetite))
    return seen


def compare_games(seats: int, seeds: range, steps: int) -> dict:
    """:func:`play_and_compare` over whole games (the first hand dealt rich in every other
    game); the counts of what they saw, summed."""
    total: dict = {}
    for seed in seeds:
        seen = play_and_compare(variant(seats, "game"), seed, steps, seed % 2 == 0, 0.7)
        total = {k: total.get(k, 0) + n for k, n in seen.items()}
    return total


def test_fast_mask_equals_full_german_4p():
    total = compare_games(4, range(100, 140), 1500)
    assert total["unopened, taken card pending"] >= 200, total
    assert total["unopened draw, take legal"] >= 300, total
    assert total["unopened play, meld legal"] >= 800, total


def test_fast_mask_equals_full_german_2p():
    total = compare_games(2, range(200, 260), 1500)
    assert total["unopened, taken card pending"] >= 80, total


def test_fast_mask_equals_full_crazy_4p():
    for seed in range(8):
        play_and_compare(crazy(num_players=4), 300 + seed, 400, False, 0.7)


@settings(deadline=None, phases=NO_SHRINK, max_examples=12)
@given(seed=st.integers(0, 2**31 - 1), seats=st.sampled_from([2, 3, 4, 6]),
       appetite=st.sampled_from([0.3, 0.7, 0.95]))
def test_fast_mask_equals_full_random_games(seed, seats, appetite):
    play_and_compare(variant(seats), seed, 400, seed % 3 > 0, appetite)


@njit(cache=True)
def _opening_answers(spec, faces, total, pending):
    """For the hand of ``faces``: (the shortcut's answer, the search's, the shortcut's
    bound, the solver's upper bound)."""
    once = twice = np.uint64(0)
    jokers = 0
    for f in faces:
        once, twice, jokers = german.with_face(once, twice, jokers, f)
    ws = make_workspace(spec.num_templates)
    ids = german.fillable_templates(spec, once, jokers)
    out_tmpl = np.empty(128, np.int32)
    out_nat = np.empty(128, np.int64)
    return (german.opening_possible(spec, ids, once, twice, jokers, total, pending),
            german.opening_reachable(spec, ws, once, twice, jokers, total, pending),
            german.credit_ceiling(spec, ids, once, twice, jokers, pending),
            german.credit_bounds(spec, once, twice, jokers, pending, ws, out_tmpl, out_nat)[0])


@settings(deadline=None, max_examples=400)
@given(cards=st.lists(st.integers(0, 107), min_size=1, max_size=16, unique=True),
       total=st.sampled_from([0, 0, 10, 20, 30, 36, 39]), pending=st.integers(-1, 15),
       narrow=st.booleans())
def test_opening_shortcut_answers_as_the_search(cards, total, pending, narrow):
    """GE-5 on random two-deck hands (jokers are cards 104..107): the bound is never below
    the solver's upper bound, and the shortcut's answer is the search's. ``narrow`` keeps
    the hand to two suits, where melds (and so undecided cases) are common."""
    faces = np.array([JOKER_FACE if c >= 104 else c % 26 if narrow else c % 52 for c in cards])
    pend = -1 if pending < 0 else int(faces[pending % len(faces)])
    possible, reachable, ceiling, upper = _opening_answers(variant(4).spec, faces, total, pend)
    assert possible == reachable
    assert ceiling >= upper
