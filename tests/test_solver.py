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
