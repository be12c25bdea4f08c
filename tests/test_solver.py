"""Exact best-arrangement solver (mountain_rummy_env.solver) against a brute-force search.

Rules checked: MR-2 (values and credits, ace 1 low / 14 high), MR-3/MR-4 (melds), MR-5
(jokers: declared faces, never a forbidden face, no meld of jokers only), GR deadwood.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations

import numpy as np
import pytest

from mountain_rummy_env.cards import JOKER_FACE, NUM_FACES, parse_face
from mountain_rummy_env.melds import MeldRules, build_meld_table
from mountain_rummy_env.solver import (
    Arrangement,
    best_arrangement,
    best_deadwood_batch,
    hand_mask_of,
    solve_kernel,
)

MOUNTAIN = build_meld_table(MeldRules())
GIN = build_meld_table(
    MeldRules(ace_high=False, rank_credit=(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10))
)
# MR-2 hand values: A 14, 2-10 face, J 11, Q 12, K 13, joker 15
MOUNTAIN_VALUES = np.array([14 if r == 0 else r + 1 for _ in range(4) for r in range(13)] + [15])
# Gin: A 1, 2-10 face, J Q K 10 (no jokers)
GIN_VALUES = np.array([min(r + 1, 10) for _ in range(4) for r in range(13)] + [0])

RULESETS = {"mountain": (MOUNTAIN, MOUNTAIN_VALUES), "gin": (GIN, GIN_VALUES)}


def mask(text: str) -> int:
    return hand_mask_of(parse_face(t) for t in text.split())


# ---------------------------------------------------------------------------------------
# brute force: list every (template, naturals used) meld, then search all disjoint families


def brute_melds(table, hand: int, jokers: int, forbidden: int, max_jokers: int):
    """Every legal meld as (template id, natural mask, jokers, credit)."""
    cap = jokers if max_jokers < 0 else min(jokers, max_jokers)
    masks = table.mask.astype(np.uint64)
    held = masks & np.uint64(hand)
    missing = np.bitwise_count(masks & ~np.uint64(hand))
    out = []
    for t in np.flatnonzero((held != 0) & (missing <= cap)):
        faces = table.template_faces(int(t))
        credit = int(table.credit[t, : len(faces)].sum())
        mine = [f for f in faces if (hand >> f) & 1]
        for k in range(1, len(mine) + 1):
            if len(faces) - k > cap:
                continue
            for used in combinations(mine, k):
                fill = [f for f in faces if f not in used]
                if any((forbidden >> f) & 1 for f in fill):
                    continue
                out.append((int(t), sum(1 << f for f in used), len(fill), credit))
    return out


def brute_best(table, values, hand: int, jokers: int, objective: str, forbidden=0,
               max_jokers=-1) -> int:
    """Optimal deadwood (objective 'deadwood') or optimal credit - deadwood ('points')."""
    melds = brute_melds(table, hand, jokers, forbidden, max_jokers)
    by_low: dict[int, list] = {}
    for t, nat, nj, credit in melds:
        low = (nat & -nat).bit_length() - 1
        nat_value = sum(int(values[f]) for f in range(NUM_FACES) if (nat >> f) & 1)
        # what melding it is worth: hand value taken out of deadwood (+ credit for points)
        worth = nat_value + nj * int(values[JOKER_FACE])
        if objective == "points":
            worth += credit
        by_low.setdefault(low, []).append((nat, nj, worth))

    @lru_cache(maxsize=None)
    def search(rem: int, jl: int) -> int:
        if rem == 0:
            return 0
        low = (rem & -rem).bit_length() - 1
        best = search(rem & (rem - 1), jl)  # lowest card stays in hand
        for nat, nj, worth in by_low.get(low, ()):
            if nj <= jl and nat & rem == nat:
                best = max(best, worth + search(rem & ~nat, jl - nj))
        return best

    total = sum(int(values[f]) for f in range(NUM_FACES) if (hand >> f) & 1)
    total += jokers * int(values[JOKER_FACE])
    gained = search(hand, jokers)
    return total - gained if objective == "deadwood" else gained - total


# ---------------------------------------------------------------------------------------
# consistency of an Arrangement


def check_arrangement(arr: Arrangement, table, values, hand: int, jokers: int, forbidden=0,
                      max_jokers=-1):
    melded = 0
    credit = 0
    used_jokers = 0
    for t, declared in arr.melds:
        faces = table.template_faces(t)
        assert set(declared) <= set(faces)
        assert len(set(declared)) == len(declared)
        naturals = [f for f in faces if f not in declared]
        assert naturals, "MR-5: a meld of jokers only"
        for f in declared:
            assert not (forbidden >> f) & 1, "MR-5: joker declared as a forbidden face"
        if max_jokers >= 0:
            assert len(declared) <= max_jokers
        nat = sum(1 << f for f in naturals)
        assert nat & hand == nat, "meld uses a natural the hand lacks"
        assert nat & melded == 0, "melds overlap"
        melded |= nat
        used_jokers += len(declared)
        credit += int(table.credit[t, : len(faces)].sum())
    assert used_jokers <= jokers
    left = [f for f in range(NUM_FACES) if (hand >> f) & 1 and not (melded >> f) & 1]
    assert arr.unmelded == tuple(left) + (JOKER_FACE,) * (jokers - used_jokers)
    assert arr.deadwood == sum(int(values[f]) for f in arr.unmelded)
    assert arr.credit == credit


# ---------------------------------------------------------------------------------------
# random hands


def random_hands(seed: int, count: int, max_jokers: int, clustered: bool = False):
    rng = np.random.default_rng(seed)
    hands = np.zeros(count, dtype=np.uint64)
    jokers = rng.integers(0, max_jokers + 1, size=count).astype(np.int8)
    for i in range(count):
        size = int(rng.integers(10, 15)) - int(jokers[i])
        if clustered and i % 2:
            # a dense corner of the deck: many overlapping sets and runs
            suits = rng.choice(4, size=int(rng.integers(2, 5)), replace=False)
            lo = int(rng.integers(0, 7))
            pool = [s * 13 + r for s in suits for r in range(lo, lo + 7)]
            pool = pool if len(pool) >= size else list(range(52))
        else:
            pool = list(range(52))
        faces = rng.choice(pool, size=size, replace=False)
        hands[i] = np.uint64(hand_mask_of(faces))
    return hands, jokers


CASES = [
    # (ruleset, objective, max jokers per hand, seed, count, clustered)
    ("gin", "deadwood", 0, 1, 3000, False),
    ("gin", "deadwood", 0, 2, 2000, True),
    ("gin", "points", 0, 3, 2000, False),
    ("mountain", "deadwood", 0, 4, 2000, True),
    ("mountain", "points", 0, 5, 2000, False),
    ("mountain", "deadwood", 1, 6, 2000, False),
    ("mountain", "points", 1, 7, 2000, True),
    ("mountain", "deadwood", 2, 8, 2500, False),
    ("mountain", "points", 2, 9, 2500, True),
]


@pytest.mark.parametrize("ruleset,objective,max_j,seed,count,clustered", CASES)
def test_random_hands_match_brute_force(ruleset, objective, max_j, seed, count, clustered):
    table, values = RULESETS[ruleset]
    hands, jokers = random_hands(seed, count, max_j, clustered)
    got = best_deadwood_batch(hands, jokers, table, values, objective)
    assert got.dtype == np.int32 and got.shape == (count,)
    for i in range(count):
        hand, j = int(hands[i]), int(jokers[i])
        want = brute_best(table, values, hand, j, objective)
        assert got[i] == want, (hand, j, objective)
        arr = best_arrangement(hand, j, table, values, objective)
        check_arrangement(arr, table, values, hand, j)
        score = arr.deadwood if objective == "deadwood" else arr.credit - arr.deadwood
        assert score == want


def test_random_hands_forbidden_faces_and_joker_cap():
    """MR-5 options: forbidden joker faces and at most N jokers per meld, vs brute force."""
    rng = np.random.default_rng(11)
    hands, jokers = random_hands(12, 1500, 2, clustered=True)
    for i in range(len(hands)):
        hand, j = int(hands[i]), int(jokers[i])
        outside = [f for f in range(NUM_FACES) if not (hand >> f) & 1]
        forbidden = hand_mask_of(rng.choice(outside, size=int(rng.integers(0, 12)), replace=False))
        cap = int(rng.choice([-1, 0, 1]))
        objective = "points" if i % 2 else "deadwood"
        want = brute_best(MOUNTAIN, MOUNTAIN_VALUES, hand, j, objective, forbidden, cap)
        arr = best_arrangement(hand, j, MOUNTAIN, MOUNTAIN_VALUES, objective, forbidden, cap)
        check_arrangement(arr, MOUNTAIN, MOUNTAIN_VALUES, hand, j, forbidden, cap)
        assert (arr.deadwood if objective == "deadwood" else arr.points) == want
        got = best_deadwood_batch(np.array([hand], np.uint64), np.array([j], np.int8), MOUNTAIN,
                                  MOUNTAIN_VALUES, objective, forbidden, cap)
        assert got[0] == want


def test_gin_hand_with_two_tied_groupings():
    hand = mask("AH 6S 7S 7H 5S 6H AC 5D 5H 7C 3S") & ~mask("7C")
    arr = best_arrangement(hand, 0, GIN, GIN_VALUES)
    check_arrangement(arr, GIN, GIN_VALUES, hand, 0)
    assert arr.deadwood == 10 == brute_best(GIN, GIN_VALUES, hand, 0, "deadwood")
    got = best_deadwood_batch(np.array([hand], np.uint64), np.zeros(1, np.int8), GIN, GIN_VALUES)
    assert got.tolist() == [10]
    # with 7C back the hand has sets as well: 7S 7H 7C and 5S 5D 5H leave AH AC 6S 6H 3S
    full = mask("AH 6S 7S 7H 5S 6H AC 5D 5H 7C 3S")
    assert best_arrangement(full, 0, GIN, GIN_VALUES).deadwood == brute_best(
        GIN, GIN_VALUES, full, 0, "deadwood")


def test_mr2_ace_credit_low_and_high():
    low = best_arrangement(mask("AH 2H 3H"), 0, MOUNTAIN, MOUNTAIN_VALUES, "points")
    assert (low.credit, low.deadwood, len(low.melds)) == (6, 0, 1)  # 1 + 2 + 3
    high = best_arrangement(mask("QH KH AH"), 0, MOUNTAIN, MOUNTAIN_VALUES, "points")
    assert (high.credit, high.deadwood) == (39, 0)  # 12 + 13 + 14
    aces = best_arrangement(mask("AH AS AD"), 0, MOUNTAIN, MOUNTAIN_VALUES, "points")
    assert aces.credit == 42
    # a joker credited as the card it stands for: XX=AH low earns 1, high earns 14
    hi = best_arrangement(mask("QH KH"), 1, MOUNTAIN, MOUNTAIN_VALUES, "points",
                          forbidden_joker_faces=mask("JH"))
    assert hi.melds == ((MOUNTAIN.find(mask_faces("QH KH AH")), (parse_face("AH"),)),)
    assert hi.credit == 39
    lo = best_arrangement(mask("2H 3H"), 1, MOUNTAIN, MOUNTAIN_VALUES, "points",
                          forbidden_joker_faces=mask("4H"))
    assert lo.credit == 6 and lo.melds[0][1] == (parse_face("AH"),)
    # in Gin (ace low only) Q-K-A is no run
    assert best_arrangement(mask("QH KH AH"), 0, GIN, GIN_VALUES).deadwood == 21


def mask_faces(text: str) -> list[int]:
    return [parse_face(t) for t in text.split()]


def test_joker_never_fills_a_forbidden_face():
    hand = mask("5H 6H")
    free = best_arrangement(hand, 1, MOUNTAIN, MOUNTAIN_VALUES)
    assert free.deadwood == 0
    blocked = best_arrangement(hand, 1, MOUNTAIN, MOUNTAIN_VALUES,
                               forbidden_joker_faces=mask("4H 7H"))
    assert blocked.melds == () and blocked.deadwood == 5 + 6 + 15
    only_7 = best_arrangement(hand, 1, MOUNTAIN, MOUNTAIN_VALUES, forbidden_joker_faces=mask("4H"))
    assert only_7.melds[0][1] == (parse_face("7H"),)


def test_no_meld_of_jokers_only():
    none = best_arrangement(0, 3, MOUNTAIN, MOUNTAIN_VALUES)
    assert none.melds == () and none.deadwood == 45 and none.unmelded == (JOKER_FACE,) * 3
    one = best_arrangement(mask("2C"), 4, MOUNTAIN, MOUNTAIN_VALUES)
    assert one.deadwood == 0 and len(one.melds) == 1  # 2C with four jokers in one run
    capped = best_arrangement(mask("2C"), 4, MOUNTAIN, MOUNTAIN_VALUES, max_jokers_per_meld=2)
    check_arrangement(capped, MOUNTAIN, MOUNTAIN_VALUES, mask("2C"), 4, 0, 2)
    assert len(capped.melds) == 1 and capped.deadwood == 30
    got = best_deadwood_batch(np.array([0, mask("2C")], np.uint64), np.array([3, 4], np.int8),
                              MOUNTAIN, MOUNTAIN_VALUES, max_jokers_per_meld=2)
    assert got.tolist() == [45, 30]


def test_joker_may_stand_for_a_card_kept_in_hand():
    """MR-5 forbids only faces up on the table: XX=3H melds while 3H stays in hand."""
    arr = best_arrangement(mask("3H 4H 5H"), 1, MOUNTAIN, MOUNTAIN_VALUES,
                           forbidden_joker_faces=mask("2H 6H"))
    check_arrangement(arr, MOUNTAIN, MOUNTAIN_VALUES, mask("3H 4H 5H"), 1, mask("2H 6H"))
    assert arr.deadwood == 3 and arr.unmelded == (parse_face("3H"),)


def test_solve_kernel_from_compiled_code():
    from numba import njit

    @njit
    def deadwood_of(hand, jokers, tm, tl, tf, tc, hv):
        out_t = np.empty(52, np.int32)
        out_n = np.empty(52, np.int64)
        n, dw, cr = solve_kernel(hand, jokers, tm, tl, tf, tc, hv, 0, np.int64(0), -1, False,
                                 out_t, out_n)
        return n, dw, cr, out_t[:n].copy(), out_n[:n].copy()

    t = MOUNTAIN
    hand = mask("5H 6H 7H 9C 9D 9S KD")
    n, dw, cr, out_t, out_n = deadwood_of(np.int64(hand), 0, t.mask, t.length, t.faces,
                                          t.credit, MOUNTAIN_VALUES.astype(np.int64))
    assert (n, dw, cr) == (2, 13, 18 + 27)
    assert sorted(int(x) for x in out_n) == sorted([mask("5H 6H 7H"), mask("9C 9D 9S")])
    assert sorted(int(x) for x in out_t) == sorted([t.find(mask_faces("5H 6H 7H")),
                                                    t.find(mask_faces("9C 9D 9S"))])


def test_batch_input_checks_and_scalar_jokers():
    hands, _ = random_hands(3, 50, 0)
    a = best_deadwood_batch(hands, 0, GIN, GIN_VALUES)
    b = best_deadwood_batch(hands, np.zeros(50, np.int8), GIN, GIN_VALUES)
    assert (a == b).all()
    with pytest.raises(ValueError):
        best_deadwood_batch(hands, 0, GIN, GIN_VALUES, objective="nope")
    with pytest.raises(ValueError):
        best_deadwood_batch(np.array([1 << 60], np.uint64), 0, GIN, GIN_VALUES)
    with pytest.raises(ValueError):
        best_arrangement(1, 0, GIN, GIN_VALUES[:10])


@pytest.mark.skipif(not __import__("os").environ.get("SOLVER_BENCH"),
                    reason="speed report; run with SOLVER_BENCH=1 pytest -s")
def test_speed_report():
    """Single-thread hands/s of best_deadwood_batch (CPU time, after warm-up)."""
    import time

    rng = np.random.default_rng(0)

    def hands(n, size):
        faces = np.argsort(rng.random((n, 52)), axis=1)[:, :size].astype(np.uint64)
        return (np.uint64(1) << faces).sum(axis=1).astype(np.uint64)

    n = 100_000
    runs = [
        ("gin 11 cards, deadwood", hands(n, 11), 0, GIN, GIN_VALUES, "deadwood"),
        ("mountain 12 + 2 jokers, deadwood", hands(n, 12), 2, MOUNTAIN, MOUNTAIN_VALUES,
         "deadwood"),
        ("mountain 12 + 2 jokers, points", hands(n, 12), 2, MOUNTAIN, MOUNTAIN_VALUES,
         "points"),
        ("mountain 14 + 2 jokers, deadwood", hands(n, 14), 2, MOUNTAIN, MOUNTAIN_VALUES,
         "deadwood"),
    ]
    for name, h, j, table, values, objective in runs:
        jokers = np.full(len(h), j, np.int8)
        best_deadwood_batch(h[:1000], jokers[:1000], table, values, objective)
        start = time.process_time()
        best_deadwood_batch(h, jokers, table, values, objective)
        print(f"{name}: {len(h) / (time.process_time() - start):,.0f} hands/s")
