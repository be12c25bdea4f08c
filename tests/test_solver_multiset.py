"""The solver on two-deck hands (a face held twice) against a brute-force search.

Rules checked: GE-2 (values: ace 11 or 1 low, joker 20 in hand, a melded joker worth its
declared card), GE-3 (runs and sets; a meld with 2+ jokers needs 2+ naturals), GE-5 (the
opening's meld credit, a taken discard that must be melded), and that one-deck hands get
the one-deck solver's answers.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mountain_rummy_env.cards import JOKER_FACE, NUM_FACES, face_of, parse_face
from mountain_rummy_env.melds import MeldRules, build_meld_table
from mountain_rummy_env.solver import (
    OBJ_CREDIT,
    Arrangement,
    MultisetHand,
    best_arrangement,
    best_arrangement_multiset,
    best_deadwood_batch,
    best_deadwood_batch_multiset,
    make_workspace,
    solve_kernel,
    solve_multiset_ws,
)
from mountain_rummy_env.variants.german import GERMAN_RULES, OPENING_MINIMUM, german_hand_values

GERMAN = build_meld_table(GERMAN_RULES)
GERMAN_NO_JOKER_RULE = build_meld_table(replace(GERMAN_RULES, min_naturals_with_two_jokers=0))
VALUES = german_hand_values()
MOUNTAIN = build_meld_table(MeldRules())
MOUNTAIN_VALUES = np.array([14 if r == 0 else r + 1 for _ in range(4) for r in range(13)] + [15])
OBJECTIVES = ("deadwood", "points", "credit")


def faces(text: str) -> list[int]:
    return [parse_face(t) for t in text.split()]


# ---------------------------------------------------------------------------------------
# brute force: every legal meld, then every way to take melds from the multiset hand


def brute_melds(table, counts, jokers: int, forbidden: int, max_jokers: int):
    """Every legal meld as (template id, natural faces used, jokers, credit)."""
    cap = jokers if max_jokers < 0 else min(jokers, max_jokers)
    min_naturals = table.rules.min_naturals_with_two_jokers
    out = []
    for t in range(table.num_templates):
        tf = table.template_faces(t)
        mine = [f for f in tf if counts[f]]
        credit = int(table.credit[t, : len(tf)].sum())
        for k in range(1, len(mine) + 1):
            for used in combinations(mine, k):
                fill = [f for f in tf if f not in used]
                if len(fill) > cap or any((forbidden >> f) & 1 for f in fill):
                    continue
                if len(fill) >= 2 and k < min_naturals:
                    continue
                out.append((t, used, len(fill), credit))
    return out


def brute_best(table, values, counts, jokers: int, objective: str, forbidden=0, max_jokers=-1,
               required=None):
    """Optimal deadwood / points / credit, or None when no arrangement melds ``required``.

    The lowest card left is either kept, one copy at a time, or the lowest natural of a meld.
    """
    melds = brute_melds(table, counts, jokers, forbidden, max_jokers)
    by_low: dict[int, list] = {}
    for t, used, nj, credit in melds:
        worth = {"deadwood": 0, "points": credit, "credit": credit}[objective]
        if objective != "credit":
            worth += sum(int(values[f]) for f in used) + nj * int(values[JOKER_FACE])
        by_low.setdefault(min(used), []).append((used, nj, worth))

    @lru_cache(maxsize=None)
    def search(left: tuple, jl: int, done: bool) -> float:
        low = next((f for f in range(NUM_FACES) if left[f]), None)
        if low is None:
            return 0 if done else -np.inf
        kept = list(left)
        kept[low] -= 1
        best = search(tuple(kept), jl, done)
        for used, nj, worth in by_low.get(low, ()):
            if nj <= jl and all(left[f] for f in used):
                rest = list(left)
                for f in used:
                    rest[f] -= 1
                best = max(best, worth + search(tuple(rest), jl - nj, done or required in used))
        return best

    gained = search(tuple(int(c) for c in counts[:NUM_FACES]), jokers, required is None)
    if gained == -np.inf:
        return None
    total = sum(int(values[f]) * int(counts[f]) for f in range(NUM_FACES))
    total += jokers * int(values[JOKER_FACE])
    return {"deadwood": total - gained, "points": gained - total, "credit": gained}[objective]


def check_arrangement(arr: Arrangement, table, values, hand: MultisetHand, forbidden=0,
                      max_jokers=-1, required=None):
    """The melds fit the hand copy by copy, obey the meld rules, and add up."""
    left = hand.counts()
    credit = 0
    used_required = False
    for t, declared in arr.melds:
        tf = table.template_faces(t)
        assert set(declared) <= set(tf) and len(set(declared)) == len(declared)
        naturals = [f for f in tf if f not in declared]
        assert naturals, "a meld of jokers only"
        assert not any((forbidden >> f) & 1 for f in declared)
        assert max_jokers < 0 or len(declared) <= max_jokers
        if len(declared) >= 2:
            assert len(naturals) >= table.rules.min_naturals_with_two_jokers, "GE-3"
        for f in naturals:
            left[f] -= 1
        left[JOKER_FACE] -= len(declared)
        used_required |= required in naturals
        credit += int(table.credit[t, : len(tf)].sum())
    assert left.min() >= 0, "the melds use more copies than the hand holds"
    assert arr.unmelded == tuple(f for f in range(NUM_FACES + 1) for _ in range(left[f]))
    assert arr.deadwood == sum(int(values[f]) for f in arr.unmelded)
    assert arr.credit == credit
    assert required is None or used_required, "GE-5: the required face is not melded"


def score(arr: Arrangement, objective: str) -> int:
    return {"deadwood": arr.deadwood, "points": arr.points, "credit": arr.credit}[objective]


# ---------------------------------------------------------------------------------------
# random small multiset hands: a dense corner of the two decks, so melds overlap a lot


@st.composite
def multiset_hands(draw, max_naturals=10):
    suits = draw(st.lists(st.integers(0, 3), min_size=1, max_size=4, unique=True))
    low = draw(st.integers(0, 12))
    width = draw(st.integers(2, 5))
    pool = [face_of((low + i) % 13, s) for s in suits for i in range(width)]
    pool += draw(st.lists(st.integers(0, NUM_FACES - 1), max_size=2))
    counts = np.zeros(NUM_FACES + 1, dtype=np.int64)
    for f in pool:
        counts[f] = min(2, counts[f] + draw(st.integers(0, 2)))
    while counts[:NUM_FACES].sum() > max_naturals:
        counts[draw(st.sampled_from(np.flatnonzero(counts[:NUM_FACES]).tolist()))] -= 1
    counts[JOKER_FACE] = draw(st.integers(0, 4))
    return MultisetHand.from_counts(counts)


@settings(max_examples=250)
@given(hand=multiset_hands(), objective=st.sampled_from(OBJECTIVES),
       joker_rule=st.booleans(), data=st.data())
def test_ge3_ge5_random_multiset_hands_match_brute_force(hand, objective, joker_rule, data):
    table = GERMAN if joker_rule else GERMAN_NO_JOKER_RULE
    counts = hand.counts()
    held = np.flatnonzero(counts[:NUM_FACES]).tolist()
    required = data.draw(st.none() | st.sampled_from(held)) if held else None
    want = brute_best(table, VALUES, counts, hand.jokers, objective, required=required)
    arr = best_arrangement_multiset(hand, table, VALUES, objective, required_face=required)
    if want is None:
        assert arr is None
        return
    check_arrangement(arr, table, VALUES, hand, required=required)
    assert score(arr, objective) == want
    if required is None:
        got = best_deadwood_batch_multiset([hand.once], [hand.twice], [hand.jokers], table,
                                           VALUES, objective)
        assert got.tolist() == [want]


@settings(max_examples=120)
@given(hand=multiset_hands(max_naturals=8), objective=st.sampled_from(OBJECTIVES),
       cap=st.sampled_from([-1, 1, 2]), data=st.data())
def test_ge3_random_multiset_hands_forbidden_faces_and_joker_cap(hand, objective, cap, data):
    """The one-deck options (faces a joker may not take, jokers per meld) with duplicates."""
    forbidden = sum(1 << f for f in data.draw(st.lists(st.integers(0, NUM_FACES - 1),
                                                       max_size=8, unique=True)))
    counts = hand.counts()
    want = brute_best(GERMAN, VALUES, counts, hand.jokers, objective, forbidden, cap)
    arr = best_arrangement_multiset(hand, GERMAN, VALUES, objective, forbidden, cap)
    check_arrangement(arr, GERMAN, VALUES, hand, forbidden, cap)
    assert score(arr, objective) == want
    got = best_deadwood_batch_multiset([hand.once], [hand.twice], [hand.jokers], GERMAN, VALUES,
                                       objective, forbidden, cap)
    assert got.tolist() == [want]


# ---------------------------------------------------------------------------------------
# one-deck hands: the multiset search gives the one-deck search's answers exactly


def one_deck_hands(seed: int, count: int):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        jokers = int(rng.integers(0, 3))
        size = int(rng.integers(8, 15)) - jokers
        if rng.random() < 0.5:  # a dense corner: many overlapping sets and runs
            suits = rng.choice(4, size=int(rng.integers(2, 5)), replace=False)
            low = int(rng.integers(0, 7))
            pool = [s * 13 + r for s in suits for r in range(low, low + 7)]
        else:
            pool = list(range(NUM_FACES))
        chosen = rng.choice(pool, size=min(size, len(pool)), replace=False)
        yield sum(1 << int(f) for f in chosen), jokers, rng


@pytest.mark.parametrize("objective", ["deadwood", "points"])
def test_one_deck_hands_get_the_one_deck_answers(objective):
    code = {"deadwood": 0, "points": 1}[objective]
    t = MOUNTAIN
    values = MOUNTAIN_VALUES.astype(np.int64)
    ws = make_workspace(t.num_templates)
    out_t = np.empty(104, np.int32)
    out_n = np.empty(104, np.int64)
    ref_t = np.empty(104, np.int32)
    ref_n = np.empty(104, np.int64)
    for hand, jokers, rng in one_deck_hands(5, 1500):
        forbidden = int(rng.integers(0, 1 << 52)) & ~hand if rng.random() < 0.3 else 0
        cap = int(rng.choice([-1, -1, 0, 1, 2]))
        ref = solve_kernel(np.int64(hand), np.int64(jokers), t.mask, t.length, t.faces,
                           t.credit, values, code, np.int64(forbidden), np.int64(cap), True,
                           ref_t, ref_n)
        got = solve_multiset_ws(np.int64(hand), np.int64(0), np.int64(jokers), t.mask,
                                t.length, t.faces, t.credit, values, code, np.int64(forbidden),
                                np.int64(cap), 0, -1, True, out_t, out_n, *ws)
        n = int(ref[0])
        assert got == ref
        assert out_t[:n].tolist() == ref_t[:n].tolist()
        assert out_n[:n].tolist() == ref_n[:n].tolist()
        arr = best_arrangement_multiset(MultisetHand(hand, 0, jokers), MOUNTAIN, MOUNTAIN_VALUES,
                                        objective, forbidden, cap)
        assert arr == best_arrangement(hand, jokers, MOUNTAIN, MOUNTAIN_VALUES, objective,
                                       forbidden, cap)


def test_batch_of_one_deck_hands_is_unchanged_by_the_multiset_entry():
    hands, jokers = zip(*((h, j) for h, j, _ in one_deck_hands(6, 800)))
    hands = np.array(hands, dtype=np.uint64)
    for objective in OBJECTIVES:
        one = best_deadwood_batch(hands, np.array(jokers), MOUNTAIN, MOUNTAIN_VALUES, objective)
        multi = best_deadwood_batch_multiset(hands, np.zeros_like(hands), np.array(jokers),
                                             MOUNTAIN, MOUNTAIN_VALUES, objective)
        assert (one == multi).all()


# ---------------------------------------------------------------------------------------
# hand-worked German examples


def test_ge3_both_copies_of_a_face_meld_in_different_melds():
    hand = faces("7H 7H 7C 7D XX 8H 9H")
    arr = best_arrangement_multiset(hand, GERMAN, VALUES)
    check_arrangement(arr, GERMAN, VALUES, MultisetHand.of(hand))
    # 7C 7D 7H and 7H 8H 9H XX=TH: nothing left, credit 21 + 34 (the joker counts as TH)
    assert arr.deadwood == 0 and arr.unmelded == ()
    assert sorted(GERMAN.template_faces(t) for t, _ in arr.melds) == sorted(
        [faces("7C 7D 7H"), faces("7H 8H 9H TH")])
    assert arr.credit == 55
    # one 7H only: the set takes it and the joker ends the run, 7C 7D 7H + 8H 9H XX=TH
    # (21 + 27) beats 7C 7D XX=7H + 7H 8H 9H (21 + 24)
    one = best_arrangement_multiset(faces("7H 7C 7D XX 8H 9H"), GERMAN, VALUES, "credit")
    assert one.deadwood == 0 and one.credit == 48
    assert sorted(GERMAN.template_faces(t) for t, _ in one.melds) == sorted(
        [faces("7C 7D 7H"), faces("8H 9H TH")])


def test_ge3_two_jokers_need_two_naturals():
    alone = best_arrangement_multiset(faces("5H XX XX"), GERMAN, VALUES)
    assert alone.melds == () and alone.deadwood == 5 + 20 + 20
    assert best_arrangement_multiset(faces("5H XX XX"), GERMAN_NO_JOKER_RULE, VALUES).deadwood == 0
    pair = best_arrangement_multiset(faces("5H 6H XX XX"), GERMAN, VALUES)
    assert pair.deadwood == 0 and len(pair.melds) == 1
    # two naturals of no common meld: each would need both jokers alone
    apart = best_arrangement_multiset(faces("5H 9C XX XX"), GERMAN, VALUES)
    assert apart.melds == () and apart.deadwood == 5 + 9 + 40
    # Mountain keeps its own rules: no minimum of naturals
    assert best_arrangement(1 << parse_face("5H"), 2, MOUNTAIN, MOUNTAIN_VALUES).deadwood == 0


def test_ge2_values_ace_low_and_high_and_joker_in_hand():
    low = best_arrangement_multiset(faces("AH 2H 3H"), GERMAN, VALUES, "credit")
    assert low.credit == 1 + 2 + 3
    high = best_arrangement_multiset(faces("QH KH AH"), GERMAN, VALUES, "credit")
    assert high.credit == 10 + 10 + 11
    aces = best_arrangement_multiset(faces("AH AC AD"), GERMAN, VALUES, "credit")
    assert aces.credit == 33
    kept = best_arrangement_multiset(faces("AH 2C XX"), GERMAN, VALUES)
    assert kept.melds == () and kept.deadwood == 11 + 2 + 20
    # a joker declared as the low ace earns 1, as the high ace 11
    assert best_arrangement_multiset(faces("2H 3H XX"), GERMAN, VALUES, "credit",
                                     forbidden_joker_faces=1 << parse_face("4H")).credit == 6
    assert best_arrangement_multiset(faces("QH KH XX"), GERMAN, VALUES, "credit",
                                     forbidden_joker_faces=1 << parse_face("JH")).credit == 31


def test_ge5_opening_credit_with_a_required_discard():
    # the set AH AC AD (33) and the run QH KH AH (31) share the ace of hearts
    one_ace = faces("QH KH AH AC AD")
    assert best_arrangement_multiset(one_ace, GERMAN, VALUES, "credit").credit == 33
    # with the second AH both melds go down: 64 >= 40, enough to open
    two_aces = faces("QH KH AH AH AC AD")
    both = best_arrangement_multiset(two_aces, GERMAN, VALUES, "credit")
    assert both.credit == 64 >= OPENING_MINIMUM and both.unmelded == ()
    # QH taken from the discard pile must be melded: then the run, 31 < 40
    forced = best_arrangement_multiset(one_ace, GERMAN, VALUES, "credit",
                                       required_face=parse_face("QH"))
    check_arrangement(forced, GERMAN, VALUES, MultisetHand.of(one_ace),
                      required=parse_face("QH"))
    assert forced.credit == 31
    # a taken card that fits no meld: no opening at all
    assert best_arrangement_multiset(one_ace + faces("4S"), GERMAN, VALUES, "credit",
                                     required_face=parse_face("4S")) is None
    # held twice, one melded copy is enough
    twice = best_arrangement_multiset(two_aces, GERMAN, VALUES, "credit",
                                      required_face=parse_face("AH"))
    assert twice.credit == 64


def test_ge5_credit_query_from_compiled_code():
    from numba import njit

    @njit
    def opening_credit(once, twice, jokers, required, tm, tl, tf, tc, hv, min_naturals):
        ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h = make_workspace(tm.shape[0])
        out_t = np.empty(104, np.int32)
        out_n = np.empty(104, np.int64)
        n, _, credit = solve_multiset_ws(once, twice, jokers, tm, tl, tf, tc, hv, OBJ_CREDIT, 0,
                                         -1, min_naturals, required, False, out_t, out_n, ws_i,
                                         ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)
        return credit if n >= 0 else -1

    hand = MultisetHand.of(faces("QH KH AH AH AC AD XX 5S"))
    t = GERMAN
    args = (t.mask, t.length, t.faces, t.credit, VALUES.astype(np.int64), 2)
    # the joker joins a meld as a 10-point K/Q/J (or 11 as an ace)
    assert opening_credit(hand.once, hand.twice, hand.jokers, -1, *args) == 64 + 11
    assert opening_credit(hand.once, hand.twice, hand.jokers, parse_face("5S"), *args) == -1
    assert opening_credit(hand.once, hand.twice, 0, parse_face("QH"), *args) == 64


def test_hand_input_checks():
    with pytest.raises(ValueError, match="at most 2 copies"):
        MultisetHand.of(faces("7H 7H 7H"))
    with pytest.raises(ValueError, match="at most 4"):
        MultisetHand.of(faces("XX XX XX XX XX 7H"))
    with pytest.raises(ValueError):
        MultisetHand.of([53])
    with pytest.raises(ValueError):
        MultisetHand.from_counts(np.ones(40))
    counts = np.zeros(53, np.int64)
    counts[[5, 6, JOKER_FACE]] = [1, 2, 3]
    assert MultisetHand.from_counts(counts) == MultisetHand((1 << 5) | (1 << 6), 1 << 6, 3)
    assert MultisetHand.from_counts(counts).counts().tolist() == counts.tolist()
    with pytest.raises(ValueError, match="subset"):
        best_arrangement_multiset(MultisetHand(1, 2, 0), GERMAN, VALUES)
    with pytest.raises(ValueError, match="not a natural face"):
        best_arrangement_multiset(faces("7H 8H"), GERMAN, VALUES, required_face=parse_face("9H"))
    with pytest.raises(ValueError, match="subset"):
        best_deadwood_batch_multiset([1], [2], [0], GERMAN, VALUES)
    with pytest.raises(ValueError, match="0..4"):
        best_deadwood_batch_multiset([1], [0], [5], GERMAN, VALUES)


@pytest.mark.skipif(not __import__("os").environ.get("SOLVER_BENCH"),
                    reason="speed report; run with SOLVER_BENCH=1 pytest -s")
def test_speed_report_two_decks():
    """Single-thread hands/s on random 14-card two-deck hands with 0-2 jokers."""
    import time

    rng = np.random.default_rng(0)
    n = 20_000
    jokers = rng.integers(0, 3, n).astype(np.int8)
    once = np.zeros(n, np.uint64)
    twice = np.zeros(n, np.uint64)
    for i in range(n):
        hand = MultisetHand.of(rng.choice(104, 14 - int(jokers[i]), replace=False) % 52)
        once[i], twice[i] = hand.once, hand.twice
    for objective in ("deadwood", "credit"):
        best_deadwood_batch_multiset(once[:500], twice[:500], jokers[:500], GERMAN, VALUES,
                                     objective)
        start = time.process_time()
        best_deadwood_batch_multiset(once, twice, jokers, GERMAN, VALUES, objective)
        print(f"german 14 cards + 0-2 jokers, {objective}: "
              f"{n / (time.process_time() - start):,.0f} hands/s")
