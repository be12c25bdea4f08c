"""MR-7 and MR-7.1 exactly: the mask against a brute-force enumerator of placement sequences.

A card k taken from below the top of the pile must be placed before the turn ends, after any
number of placements. So (docs/mountain_rummy.md, MR-7 and MR-7.1):

- ``take k`` is legal exactly when some sequence of placements this turn places k and leaves
  a way to end the turn;
- while k is pending, a placement is legal exactly when placing k (and then ending) is still
  reachable from the position it leaves;
- with no card pending, a placement that keeps only cards taken this turn (which may not be
  discarded) is legal exactly when some sequence of placements then empties the hand. Random
  play seldom keeps only taken cards, so each play position is also checked with every card
  in the hand marked as taken this turn.

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
from mountain_rummy_env.core.state import (
    LOC_HAND, LOC_STOCK, PHASE_DRAW, PHASE_PLAY, check_invariants,
)

from helpers import short_variant, variant

BUDGET = 20_000  # placements tried per question; positions needing more are not compared
MAX_CLEAR_HAND = 8  # hands checked with every card taken (MR-7): larger ones cost the enumerator


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
def _goal(s, spec, empty_hand):
    return rules.hand_size_of(s, spec, s.current) == 0 if empty_hand else _turn_can_end(s, spec)


@njit(cache=True)
def brute_force_reachable(stack, spec, budget, empty_hand=False):
    """Does some sequence of placements from ``stack[0]`` place the obligation card and leave
    a way to end the turn (with ``empty_hand``: empty the hand)? 1 yes, 0 no, -1 more than
    ``budget`` placements were needed to decide. Every placement, every order, depth-first
    on the records of ``stack``."""
    if _goal(stack[0], spec, empty_hand):
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
        if _goal(nxt, spec, empty_hand):
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
def _mask(s, spec, mask, scratch):
    rules.legal_mask(s, spec, mask, scratch)


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
        self.cleared = 0  # of the compared: placements keeping only taken cards (MR-7) ...
        self.clearable = 0  # ... after which the hand can be emptied

    def reachable(self, state, empty_hand: bool = False) -> int:
        self.stack[0] = state
        return brute_force_reachable(self.stack, self.g.spec, BUDGET, empty_hand)

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
            self.check_pending(s, mask)
        elif s["phase"] == PHASE_PLAY and (s["loc"] == LOC_HAND + s["current"]).sum() <= MAX_CLEAR_HAND:
            all_taken = g.states[0:1].copy()
            all_taken[0]["taken"][all_taken[0]["loc"] == LOC_HAND + s["current"]] = 1
            self.check_clear(all_taken[0])

    def mask_of(self, state) -> np.ndarray:
        mask = np.zeros(self.g.variant.num_actions, np.int8)
        _mask(state, self.g.spec, mask, self.stack)
        return mask

    def check_pending(self, state, mask) -> None:
        """MR-7.1 in ``state`` while k is pending: each placement is legal exactly when
        placing k and ending the turn stays reachable; nothing else is legal."""
        n = _candidates(state, self.g.spec, self.acts)
        for a in self.acts[:n]:
            after = np.array([state])
            _place(after[0], self.g.spec, a)
            self.expect(bool(mask[a]), self.reachable(after[0]), self.g.variant.action_text(int(a)))
        placements = set(int(a) for a in self.acts[:n])
        others = [a for a in np.flatnonzero(mask) if int(a) not in placements]
        assert not others, "only placements are legal while the obligation is pending"

    def check_clear(self, state) -> None:
        """MR-7 in ``state`` (play phase, every card in the hand taken this turn): each
        placement is legal exactly when the hand is empty after it or can still be emptied."""
        spec = self.g.spec
        mask = self.mask_of(state)
        n = _candidates(state, spec, self.acts)
        for a in self.acts[:n]:
            after = np.array([state])
            _place(after[0], spec, a)
            if (after[0]["loc"] == LOC_HAND + state["current"]).any():
                before = self.compared
                verdict = self.reachable(after[0], empty_hand=True)
                self.expect(bool(mask[a]), verdict, "MR-7 " + self.g.variant.action_text(int(a)))
                self.cleared += self.compared - before
                self.clearable += verdict == 1
            else:
                assert mask[a], f"High Camp by {self.g.variant.action_text(int(a))} is legal"


def meldable_hand(g: Game, rng, free: int = 0) -> np.void:
    """Game ``g``'s position with the current hand replaced by the cards of a few melds from
    the stock and the hands (sometimes one card more), all but ``free`` of them taken this
    turn: hands that random play seldom keeps, which can often, not always, be placed in
    full. With ``free`` cards one of the taken ones is the pending deep-drawn card (MR-7.1)."""
    spec, s = g.spec, g.states[0].copy()
    p, other = s["current"], LOC_HAND + (s["current"] + 1) % g.variant.num_players
    natural = {int(spec.card_face[c]): c for c in range(spec.num_naturals)}
    pool = [c for c in range(spec.num_cards) if s["loc"][c] == LOC_STOCK or s["loc"][c] >= LOC_HAND]
    wanted: list[int] = []
    size = rng.integers(3, 11)
    for t in rng.permutation(spec.num_templates):
        cards = [natural[int(f)] for f in spec.t_faces[t, :spec.t_len[t]]]
        if all(c in pool and c not in wanted for c in cards):
            wanted += cards
            if len(wanted) >= size:
                break
    spare = [c for c in pool if c not in wanted]
    if spare and rng.random() < 0.5:
        wanted.append(spare.pop(rng.integers(len(spare))))
    leaving = [c for c in range(spec.num_cards) if s["loc"][c] == LOC_HAND + p and c not in wanted]
    for c in wanted:
        if s["loc"][c] == LOC_STOCK:  # swap with a card leaving the hand, or another hand's
            swaps = leaving or [y for y in spare if s["loc"][y] == other]
            if not swaps:
                continue
            y = swaps.pop()
            s["stock"][np.flatnonzero(s["stock"][:s["stock_len"]] == c)[0]] = y
            s["loc"][y] = LOC_STOCK
        s["loc"][c] = LOC_HAND + p
    for c in leaving:
        s["loc"][c] = other
    hand = np.flatnonzero(s["loc"] == LOC_HAND + p)
    rng.shuffle(hand)
    free = max(0, min(free, len(hand) - 1))
    s["taken"][:] = 0
    s["taken"][hand[free:]] = 1
    if free:
        s["obligation"] = hand[-1]
    check_invariants(s, g.variant.num_players)
    return s


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
    """The random positions really exercise the rule: enough decided comparisons, of
    placements that keep only taken cards (MR-7) too."""
    checkers = [play_and_check(short_variant(7), seed) for seed in range(6)]
    assert sum(c.compared for c in checkers) >= 50
    assert sum(c.cleared for c in checkers) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("hand_size", [7, 9, 13])
def test_deep_draw_mask_equals_brute_force_long(hand_size):
    v = variant() if hand_size == 13 else short_variant(hand_size)
    compared = sum(play_and_check(v, 1000 + seed).compared for seed in range(60))
    assert compared >= 500


def check_meldable_hands(v, seed: int) -> Checker:
    """MR-7 and MR-7.1 on meldable hands built in the play positions of a random game: all
    taken, or one or two discardable cards and a deep-drawn card pending."""
    rng = np.random.default_rng(seed)
    g = Game(v, 1)
    g.reset(seed=seed)
    checker = Checker(g)
    for _ in range(200):
        if g.done(0):
            break
        s = g.states[0]
        if s["phase"] == PHASE_PLAY and s["obligation"] < 0:
            checker.check_clear(meldable_hand(g, rng))
            pending = meldable_hand(g, rng, free=rng.integers(1, 3))
            if pending["obligation"] >= 0:
                checker.check_pending(pending, checker.mask_of(pending))
        legal = g.legal_actions(0)
        placements = [a for a in legal if v.layout.meld <= a < v.layout.discard]
        pool = placements if placements and rng.random() < 0.7 else legal
        g.step_one(0, int(pool[rng.integers(len(pool))]))
    return checker


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), hand_size=st.sampled_from([7, 9, 13]),
       jokers=st.sampled_from([0, 1, 2]))
def test_clear_mask_equals_brute_force_on_meldable_hands(seed, hand_size, jokers):
    """MR-7: holding only cards taken this turn, a placement is legal exactly when the hand
    can then be emptied (the dead-end search against the enumerator)."""
    checker = check_meldable_hands(short_variant(hand_size, num_jokers=jokers), seed)
    assert checker.undecided <= checker.compared


def test_clear_mask_compares_clearable_and_stuck_hands():
    """The meldable hands exercise both answers of the dead-end search."""
    checkers = [check_meldable_hands(short_variant(9, num_jokers=jokers), seed)
                for seed in range(4) for jokers in (0, 2)]
    cleared = sum(c.cleared for c in checkers)
    clearable = sum(c.clearable for c in checkers)
    assert clearable >= 50 and cleared - clearable >= 50
    assert sum(c.compared for c in checkers) - cleared >= 50  # with a card pending
