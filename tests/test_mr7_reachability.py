"""MR-7.1 exactly: the deep-draw mask against a brute-force enumerator of placement sequences.

A card k taken from below the top of the pile must be placed before the turn ends, after any
number of placements. So (docs/mountain_rummy.md, MR-7 and MR-7.1):

- ``take k`` is legal exactly when some sequence of placements this turn places k and leaves
  a way to end the turn;
- while k is pending, a placement is legal exactly when placing k (and then ending) is still
  reachable from the position it leaves.

The enumerator below tries every placement sequence, in every order, with no pruning: it
shares with the engine only what one placement is (``placement_candidates``,
``apply_placement``). A turn can end once k is placed and the hand is empty or holds a card
that may be discarded. Positions come from random play on short deals, biased towards
placements and deep takes so that the table fills and obligations arise.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from mountain_rummy_env import Game
from mountain_rummy_env.core import rules
from mountain_rummy_env.core.state import LOC_HAND, PHASE_DRAW, PHASE_PLAY

from helpers import short_variant, variant

BUDGET = 20_000  # placements tried per question; positions needing more are not compared


@njit(cache=True)
def _turn_can_end(s, spec):
    """k placed, and the hand empty (High Camp) or holding a card that may be discarded."""
    if s.obligation >= 0:
        return False
    p = s.current
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p and s.taken[c] == 0:
            return True
    return rules.hand_size_of(s, spec, p) == 0


@njit(cache=True)
def brute_force_reachable(stack, spec, budget):
    """Does some sequence of placements from ``stack[0]`` place the obligation card and leave
    a way to end the turn? 1 yes, 0 no, -1 more than ``budget`` placements were needed to
    decide. Every placement, every order, depth-first on the records of ``stack``."""
    if _turn_can_end(stack[0], spec):
        return 1
    levels = len(stack) - 1
    n_max = 2 * spec.num_templates + 4 * spec.max_melds
    acts = np.empty((levels, n_max), np.int64)
    n_hand = np.empty((levels, n_max), np.int64)
    free_used = np.empty((levels, n_max), np.int64)
    uses = np.empty((levels, n_max), np.int8)
    placed = np.empty((levels, n_max), np.uint64)
    count = np.zeros(levels, np.int64)
    cursor = np.zeros(levels, np.int64)
    count[0] = rules.placement_candidates(stack[0], spec, -1, acts[0], n_hand[0],
                                          free_used[0], uses[0], placed[0])
    tried = 0
    depth = 0
    while depth >= 0:
        if cursor[depth] >= count[depth]:
            depth -= 1
            continue
        i = cursor[depth]
        cursor[depth] += 1
        tried += 1
        if tried > budget:
            return -1
        stack[depth + 1] = stack[depth]
        nxt = stack[depth + 1]
        rules.apply_placement(nxt, spec, acts[depth, i])
        if _turn_can_end(nxt, spec):
            return 1
        if depth + 1 < levels:
            depth += 1
            cursor[depth] = 0
            count[depth] = rules.placement_candidates(nxt, spec, -1, acts[depth], n_hand[depth],
                                                      free_used[depth], uses[depth], placed[depth])
    return 0


@njit(cache=True)
def _take(s, depth):
    rules.take_cards(s, depth)


@njit(cache=True)
def _place(s, spec, a):
    rules.apply_placement(s, spec, a)


@njit(cache=True)
def _candidates(s, spec, acts):
    n_max = len(acts)
    return rules.placement_candidates(s, spec, -1, acts, np.empty(n_max, np.int64),
                                      np.empty(n_max, np.int64), np.empty(n_max, np.int8),
                                      np.empty(n_max, np.uint64))


class Checker:
    """Compares the engine's mask with the enumerator on the positions of one game."""

    def __init__(self, g: Game):
        self.g = g
        self.stack = np.zeros(40, dtype=g.variant.dtype)
        self.acts = np.empty(2 * g.spec.num_templates + 4 * g.spec.max_melds, np.int64)
        self.compared = 0
        self.undecided = 0

    def reachable(self, state) -> int:
        self.stack[0] = state
        return brute_force_reachable(self.stack, self.g.spec, BUDGET)

    def expect(self, legal: bool, verdict: int, what: str) -> None:
        if verdict < 0:
            self.undecided += 1
            return
        self.compared += 1
        assert legal == bool(verdict), f"{what}: mask {legal}, enumerator {bool(verdict)}"

    def check(self) -> None:
        g, spec = self.g, self.g.spec
        s = g.states[0]
        mask = g.masks[0]
        lay = g.variant.layout
        if s["phase"] == PHASE_DRAW:
            pile = g.discard_pile()
            for depth in range(1, len(pile)):
                card = pile[len(pile) - 1 - depth]
                after = g.states[0:1].copy()
                _take(after[0], depth)
                self.expect(bool(mask[lay.take + card]), self.reachable(after[0]),
                            f"take {g.variant.deck.card_text(card)}")
        elif s["phase"] == PHASE_PLAY and s["obligation"] >= 0:
            n = _candidates(g.states[0], spec, self.acts)
            for a in self.acts[:n]:
                after = g.states[0:1].copy()
                _place(after[0], spec, a)
                self.expect(bool(mask[a]), self.reachable(after[0]),
                            g.variant.action_text(int(a)))
            placements = set(int(a) for a in self.acts[:n])
            others = [a for a in np.flatnonzero(mask) if int(a) not in placements]
            assert not others, "only placements are legal while the obligation is pending"


def play_and_check(v, seed: int, max_actions: int = 400) -> Checker:
    """Random play biased to placements and deep takes, checking every position."""
    rng = np.random.default_rng(seed)
    g = Game(v, 1)
    g.reset(seed=seed)
    checker = Checker(g)
    lay = v.layout
    for _ in range(max_actions):
        if g.done(0):
            break
        checker.check()
        legal = g.legal_actions(0)
        eager = [a for a in legal if lay.meld <= a < lay.discard or
                 (lay.take <= a < lay.meld and a - lay.take != g.discard_pile()[-1])]
        pool = eager if eager and rng.random() < 0.7 else legal
        g.step_one(0, int(pool[rng.integers(len(pool))]))
    return checker


def test_enumerator_agrees_with_the_issue_position():
    """The enumerator itself: KC under 7S is placeable (P2's run TC-JC-QC), KD is not."""
    from helpers import play, start
    g = start("KC 4S 5S 6S 2D 8H AH 9D 3C JS 5D QH 8C",
              "TC JC QC 7S 2H 4H 6C 9S KD AD 3S 7D TH", "3D", "2S 4C")
    play(g, "draw stock", "discard KC", "draw stock", "meld TC JC QC", "discard 7S")
    c = Checker(g)
    after = g.states[0:1].copy()
    _take(after[0], 1)
    assert c.reachable(after[0]) == 1
    after = g.states[0:1].copy()
    _take(after[0], 2)  # 3D with KC 7S: 3D has no place
    assert c.reachable(after[0]) == 0


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), hand_size=st.sampled_from([6, 7, 8]),
       jokers=st.sampled_from([0, 1, 2]))
def test_deep_draw_mask_equals_brute_force_on_short_deals(seed, hand_size, jokers):
    """MR-7.1: every deep take and every placement while k is pending, on random positions."""
    checker = play_and_check(short_variant(hand_size, num_jokers=jokers), seed)
    assert checker.undecided <= checker.compared


def test_deep_draw_mask_compares_many_positions():
    """The random positions really exercise the rule: enough decided comparisons."""
    total = sum(play_and_check(short_variant(7), seed).compared for seed in range(6))
    assert total >= 50


@pytest.mark.slow
@pytest.mark.parametrize("hand_size", [7, 9, 13])
def test_deep_draw_mask_equals_brute_force_long(hand_size):
    v = variant() if hand_size == 13 else short_variant(hand_size)
    compared = sum(play_and_check(v, 1000 + seed).compared for seed in range(60))
    assert compared >= 500
