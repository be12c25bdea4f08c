"""The rearrangement solver (Robber's Rummy RR-6) against a brute-force search on small
positions: the same optimum, and every answer a valid table that keeps each table card."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, product

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from mountain_rummy_env.cards import JOKER_FACE, parse_face
from mountain_rummy_env.melds import MeldRules, build_meld_table
from mountain_rummy_env.rearrange import best_rearrangement
from mountain_rummy_env.variants.german import german_hand_values

from benchmarks.bench import rearrangement_positions

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


# ---------------------------------------------------------------------------------------
# the two methods against each other on Robber's-sized positions, and the input checks

GE2 = german_hand_values().astype(np.float64)     # GE-2 (RR-2): A 11, K Q J 10, joker 20


def is_rr3_meld(faces, around_the_corner: bool) -> bool:
    """RR-3 on natural faces (a joker counted as its declared face): a set is 3-4 cards of
    one rank in distinct suits; a run 3-13 cards of one suit in a row, the ace low (A-2-3)
    or high (Q-K-A), around the corner (K-A-2) only with ``around_the_corner``."""
    ranks, suits = [f % 13 for f in faces], [f // 13 for f in faces]
    n = len(faces)
    if len(set(ranks)) == 1:
        return 3 <= n <= 4 and len(set(suits)) == n
    if n < 3 or len(set(suits)) != 1 or len(set(ranks)) != n:
        return False
    low = sorted(ranks)
    high = sorted(13 if r == 0 else r for r in ranks)
    if low == list(range(low[0], low[0] + n)) or high == list(range(high[0], high[0] + n)):
        return True
    return around_the_corner and any({(s + j) % 13 for j in range(n)} == set(ranks)
                                     for s in range(13))


def test_the_meld_check_itself():
    """is_rr3_meld, which the differential tests trust, on melds of RR-3 and near misses."""
    def meld(text, wrap=False):
        return is_rr3_meld([parse_face(c) for c in text.split()], wrap)

    assert meld("AH 2H 3H") and meld("QH KH AH") and meld("5C 5D 5S") and meld("5C 5D 5S 5H")
    assert meld("AS 2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS") and meld("9D JD TD")
    assert not meld("KH AH 2H") and meld("KH AH 2H", wrap=True) and meld("JH QH KH AH 2H 3H", True)
    assert not meld("5C 5D") and not meld("5C 5C 5D") and not meld("5H 6H 8H")
    assert not meld("5H 6H 7C") and not meld("5H 6H 6H 7H") and not meld("4H 5H 6H 6H", True)


def check_rr3(r, on_table, in_hand, around_the_corner=False):
    """``r`` is a legal table by RR-3 and RR-6, checked without the meld templates: every
    meld a valid set or run with at most one joker (declared as a face the meld needs), all
    the table's cards in the melds, the rest of the melds' cards from the hand."""
    total = np.zeros(JOKER_FACE + 1, dtype=np.int64)
    for shown, declared in zip(r.melds, r.declared):
        assert len(shown) == len(declared) >= 3, (shown, declared)
        assert sum(s == JOKER_FACE for s in shown) <= 1, shown
        faces = []
        for s, d in zip(shown, declared):
            assert 0 <= s <= JOKER_FACE
            if s == JOKER_FACE:
                assert 0 <= d < JOKER_FACE, (shown, declared)
            else:
                assert d == -1, (shown, declared)
            faces.append(d if s == JOKER_FACE else s)
            total[s] += 1
        assert is_rr3_meld(faces, around_the_corner), (shown, declared)
    used = np.append(r.used, r.used_jokers)
    assert (used >= 0).all() and (used <= in_hand).all(), "hand cards used are not in the hand"
    assert (total == on_table + used).all(), "the melds are not the table plus the hand cards used"


def worth(r, weights) -> float:
    return float(weights @ np.append(r.used, r.used_jokers))


@lru_cache(maxsize=None)
def _wrap_columns() -> np.ndarray:
    """Every RR-3 meld with around-the-corner runs, as face counts, written out here without
    :mod:`melds`: sets of 2-4 naturals of a rank with a joker or none (3-4 cards), and runs
    of 3-5 cards from any rank (K-A-2 included) with a joker in any one place or none. Longer
    runs are left out: each is a row of runs of 3-5, each with at most its one joker."""
    out = set()
    for rank in range(13):
        for size in (2, 3, 4):
            for suits in combinations(range(4), size):
                v = [0] * (JOKER_FACE + 1)
                for s in suits:
                    v[s * 13 + rank] = 1
                if size >= 3:
                    out.add(tuple(v))
                if size <= 3:
                    v[JOKER_FACE] = 1
                    out.add(tuple(v))
    for suit in range(4):
        for start in range(13):
            for length in (3, 4, 5):
                faces = [suit * 13 + (start + j) % 13 for j in range(length)]
                for slot in (-1, *range(length)):
                    v = [0] * (JOKER_FACE + 1)
                    for j, f in enumerate(faces):
                        v[JOKER_FACE if j == slot else f] += 1
                    out.add(tuple(v))
    return np.array(sorted(out), dtype=np.float64).T          # 53 x columns


def wrap_optimum(on_table, in_hand, weights) -> float | None:
    """The around-the-corner optimum by an integer program of its own (scipy's HiGHS over
    :func:`_wrap_columns`): the melds hold the table's cards plus ``u`` hand cards, ``0 <=
    u <= in_hand``, maximise ``weights . u``. None: no arrangement holds the table."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    cols = _wrap_columns()
    pool = on_table + in_hand
    cols = cols[:, (cols <= pool[:, None]).all(axis=0)]
    m = cols.shape[1]
    res = milp(np.concatenate([np.zeros(m), -weights]),
               constraints=LinearConstraint(np.hstack([cols, -np.eye(JOKER_FACE + 1)]),
                                            on_table, on_table),
               integrality=np.ones(m + JOKER_FACE + 1),
               bounds=Bounds(0, np.concatenate([np.full(m, 40.0), in_hand])),
               options={"mip_rel_gap": 0.0})
    return None if res.status != 0 else -float(res.fun)


DIFF_POSITIONS = 200   # fast against milp: 200 positions, each counting cards and GE-2 points
WRAP_POSITIONS = 100   # around the corner: 100 positions, each counting cards and GE-2 points


def _diff_positions(n, seed, wrap=False):
    """Tables of 2-10 melds from two decks and 0-4 jokers, an 11-card hand of the rest."""
    return rearrangement_positions(n, seed, melds=(2, 10), jokers=(0, 4), wrap=wrap)


def test_fast_and_milp_reach_the_same_optimum_on_random_positions():
    """On DIFF_POSITIONS random positions (2-10 table melds from two decks, 0-4 jokers, an
    11-card hand), by card count and by GE-2 points, method="fast" and method="milp" reach
    the same optimum, and both answers are legal RR-3 tables holding every table card and
    only hand cards besides. Takes about 30 s (the MILP's time, most of it)."""
    wrong = []
    for k, (table, hand) in enumerate(_diff_positions(DIFF_POSITIONS, seed=11)):
        for label, weights in (("cards", np.ones(JOKER_FACE + 1)), ("points", GE2)):
            fast = best_rearrangement(TABLE, table, hand, weights, method="fast")
            exact = best_rearrangement(TABLE, table, hand, weights, method="milp")
            assert fast is not None and exact is not None    # the tables are legal
            check_rr3(fast, table, hand)
            check_rr3(exact, table, hand)
            if label == "cards":
                assert fast.cards_placed == worth(fast, weights)
            if worth(fast, weights) != pytest.approx(worth(exact, weights)):
                wrong.append((k, label, worth(fast, weights), worth(exact, weights)))
    assert not wrong, f"fast != milp (position, objective, fast, milp): {wrong[:10]}"


def test_fast_and_milp_agree_on_fractional_weights():
    """The fast method's bound is rounded only for whole weights: on 30 positions with
    random fractional weights it still meets the MILP's optimum."""
    rng = np.random.default_rng(5)
    for k, (table, hand) in enumerate(_diff_positions(30, seed=12)):
        weights = rng.uniform(0.1, 3.0, JOKER_FACE + 1)
        fast = best_rearrangement(TABLE, table, hand, weights, method="fast")
        exact = best_rearrangement(TABLE, table, hand, weights, method="milp")
        check_rr3(fast, table, hand)
        assert worth(fast, weights) == pytest.approx(worth(exact, weights), rel=1e-9), k


def test_around_the_corner_matches_an_integer_program_of_its_own():
    """around_the_corner=True (the MILP method has no K-A-2 runs): on WRAP_POSITIONS random
    positions whose tables may hold runs around the corner, by card count and by GE-2
    points, the fast optimum equals :func:`wrap_optimum`'s, the answer is a legal RR-3 table
    with K-A-2 allowed, and it is never below the optimum without wrap-around."""
    wrong = []
    for k, (table, hand) in enumerate(_diff_positions(WRAP_POSITIONS, seed=13, wrap=True)):
        for label, weights in (("cards", np.ones(JOKER_FACE + 1)), ("points", GE2)):
            fast = best_rearrangement(TABLE, table, hand, weights, around_the_corner=True)
            assert fast is not None
            check_rr3(fast, table, hand, around_the_corner=True)
            expected = wrap_optimum(table, hand, weights)
            if worth(fast, weights) != pytest.approx(expected):
                wrong.append((k, label, worth(fast, weights), expected))
            plain = best_rearrangement(TABLE, table, hand, weights)
            if plain is not None:
                assert worth(fast, weights) >= worth(plain, weights) - 1e-9
    assert not wrong, f"fast != wrap_optimum (position, objective, fast, exact): {wrong[:10]}"


def test_around_the_corner_plays_a_king_ace_two():
    """KS AS 2S is a run only around the corner; the fast method finds it, and the MILP
    method refuses the option rather than answer without it."""
    table, hand = counts("KS AS 2S"), counts("3S QS")
    assert best_rearrangement(TABLE, table, hand) is None           # K-A-2 is no run
    r = best_rearrangement(TABLE, table, hand, around_the_corner=True)
    check_rr3(r, table, hand, around_the_corner=True)
    assert r.cards_placed == 2
    with pytest.raises(ValueError, match="no wrap-around"):
        best_rearrangement(TABLE, table, hand, method="milp", around_the_corner=True)


def _bad(**change):
    """Valid inputs (a table run, a hand card) with some changed."""
    args = dict(on_table=counts("5H 6H 7H"), in_hand=counts("8H"), weights=None)
    args.update(change)
    return args


@pytest.mark.parametrize("method", ["fast", "milp"])
@pytest.mark.parametrize("args, message", [
    (_bad(on_table=np.zeros(52)), r"on_table is face counts of length 53.*\(52,\)"),
    (_bad(in_hand=np.zeros(54)), r"in_hand is face counts of length 53.*\(54,\)"),
    (_bad(in_hand=np.zeros((1, 53))), r"in_hand is face counts of length 53.*\(1, 53\)"),
    (_bad(on_table=3), r"on_table is face counts of length 53.*\(\)"),
    (_bad(in_hand=["8H"] * 53), r"in_hand holds numbers"),
    (_bad(in_hand=counts("8H") - counts("9C")), r"must be >= 0, in_hand has -1 of 9C"),
    (_bad(on_table=counts("5H 6H 7H") * -1), r"must be >= 0, on_table has -1 of 5H"),
    (_bad(in_hand=counts("8H") * 0.5), r"in_hand holds whole counts, got 0.5 of 8H"),
    (_bad(in_hand=np.where(counts("8H") > 0, np.inf, 0)), r"whole counts, got inf of 8H"),
    (_bad(in_hand=counts("8H 8H 8H")), r"a face at most twice: table and hand hold 3 of 8H"),
    (_bad(in_hand=counts("5H 5H")), r"a face at most twice: table and hand hold 3 of 5H"),
    (_bad(in_hand=counts(" ".join(["XX"] * 9))), r"at most 8 jokers, table and hand hold 9"),
    (_bad(weights=np.ones(52)), r"weights are one per face and one for jokers \(53\)"),
    (_bad(weights=np.ones((2, 53))), r"weights are one per face and one for jokers \(53\)"),
    (_bad(weights=["x"] * 53), r"weights are numbers"),
    (_bad(weights=np.full(53, np.nan)), r"weights must be finite"),
])
def test_bad_input_is_a_value_error_that_names_it(args, message, method):
    with pytest.raises(ValueError, match=message):
        best_rearrangement(TABLE, args["on_table"], args["in_hand"], args["weights"],
                           method=method)


@pytest.mark.parametrize("method", ["MILP", "slow", None, ""])
def test_an_unknown_method_is_a_value_error(method):
    with pytest.raises(ValueError, match=r"method is 'fast' or 'milp', got"):
        best_rearrangement(TABLE, counts("5H 6H 7H"), counts("8H"), method=method)


def test_whole_counts_of_any_number_type_are_accepted():
    """Lists, floats holding whole numbers and booleans are counts too."""
    table, hand = counts("5H 6H 7H"), counts("8H")
    for t, h in ((list(table), list(hand)), (table.astype(float), hand.astype(float)),
                 (table.astype(bool), hand.astype(bool))):
        for method in ("fast", "milp"):
            assert best_rearrangement(TABLE, t, h, method=method).cards_placed == 1


def _ws_answer(ws, table, hand, weights):
    """``rearrange_ws`` with workspace ``ws``: (status, value, a Rearrangement or None)."""
    from mountain_rummy_env.rearrange import Rearrangement
    from mountain_rummy_env.rearrange_fast import make_rearrange_output, rearrange_ws

    shown, declared, length, used = make_rearrange_output()
    status, value, n = rearrange_ws(np.asarray(table, np.int64), np.asarray(hand, np.int64),
                                    weights, True, True, False, 1, ws, shown, declared,
                                    length, used)
    r = Rearrangement(tuple(tuple(int(f) for f in shown[k, :length[k]]) for k in range(n)),
                      tuple(tuple(int(f) for f in declared[k, :length[k]]) for k in range(n)),
                      used[:JOKER_FACE].copy(), int(used[JOKER_FACE]))
    return status, value, r


def test_the_playout_workspace_options():
    """``table_is_legal`` (a promise the turn-start table keeps) answers the exact optimum
    on legal tables, and "no play" as value 0 with no melds; a ``node_limit`` answers a legal
    play worth at most the optimum (the search agent's playouts use both)."""
    from mountain_rummy_env.rearrange_fast import STATUS_OK, make_rearrange_workspace

    legal_ws = make_rearrange_workspace(table_is_legal=True)
    capped_ws = make_rearrange_workspace(node_limit=50, table_is_legal=True)
    weights = np.ones(JOKER_FACE + 1)
    nothing = short = 0
    positions = _diff_positions(60, seed=13)
    for table, hand in positions + [(t, _two_cards(h)) for t, h in positions]:
        exact = best_rearrangement(TABLE, table, hand, weights)
        status, value, r = _ws_answer(legal_ws, table, hand, weights)
        assert status == STATUS_OK and value == exact.cards_placed
        if exact.cards_placed:
            check_rr3(r, table, hand)
        else:
            nothing += 1
            assert r.melds == () and r.cards_placed == 0
        status, value, r = _ws_answer(capped_ws, table, hand, weights)
        assert status == STATUS_OK and 0 <= value <= exact.cards_placed
        if value:
            check_rr3(r, table, hand)
        short += value < exact.cards_placed
    assert nothing and short < len(positions)


def _two_cards(hand):
    """The two lowest faces of ``hand`` (often no play at all)."""
    out = np.zeros_like(hand)
    for f in np.flatnonzero(hand)[:2]:
        out[f] = 1
    return out


# A turn-start position of a 4-seat hand (seed 111745, rules vs greedy): 72 table cards
# with 4 jokers, two in hand. Proving this table legal on its own kept the fast method
# busy for minutes; between plays the table is legal, and the promise skips the proof.
STALLED_TABLE = [1, 0, 2, 1, 2, 2, 1, 2, 2, 1, 2, 2, 0, 1, 1, 1, 2, 2, 2, 1, 2, 2, 1, 1, 0, 2,
                 2, 1, 0, 1, 2, 2, 1, 1, 2, 2, 1, 1, 2, 2, 0, 1, 2, 1, 1, 2, 1, 2, 0, 1, 1, 0, 4]


def test_a_legal_table_promise_answers_the_exact_play_on_a_large_table():
    """On the position that stalled greedy, ``table_is_legal=True`` answers what the MILP
    answers (one of the two cards placed) as a legal RR-3 table."""
    table = np.asarray(STALLED_TABLE, dtype=np.int64)
    hand = np.zeros(JOKER_FACE + 1, dtype=np.int64)
    hand[[27, 43]] = 1
    weights = 1.0 + GE2 / 1000.0
    fast = best_rearrangement(TABLE, table, hand, weights, table_is_legal=True)
    exact = best_rearrangement(TABLE, table, hand, weights, method="milp", table_is_legal=True)
    check_rr3(fast, table, hand)
    assert fast.cards_placed == exact.cards_placed == 1
    assert worth(fast, weights) == pytest.approx(worth(exact, weights))


# Another turn start (seed 120018, search vs rules): 64 table cards with 3 jokers, 9S and a
# joker in hand. Only the joker fits, and proving that 9S cannot follow it kept the search
# busy for minutes even with the promise; a node limit answers the best play found.
ALMOST_FITS_TABLE = [2, 1, 2, 2, 2, 2, 1, 0, 1, 0, 1, 1, 2, 0, 1, 1, 1, 2, 1, 2, 1, 2, 0, 1,
                     1, 1, 2, 1, 1, 1, 1, 0, 0, 1, 1, 0, 1, 2, 1, 1, 0, 2, 1, 2, 2, 2, 2, 0, 2,
                     2, 1, 1, 3]


def test_a_node_limit_answers_a_legal_play_where_proving_it_best_is_slow():
    table = np.asarray(ALMOST_FITS_TABLE, dtype=np.int64)
    hand = np.zeros(JOKER_FACE + 1, dtype=np.int64)
    hand[[33, JOKER_FACE]] = 1
    weights = 1.0 + GE2 / 1000.0
    fast = best_rearrangement(TABLE, table, hand, weights, table_is_legal=True,
                              node_limit=20_000)
    exact = best_rearrangement(TABLE, table, hand, weights, method="milp", table_is_legal=True)
    check_rr3(fast, table, hand)
    assert (fast.cards_placed, fast.used_jokers) == (exact.cards_placed, exact.used_jokers) \
        == (1, 1)


def _skipped_simplex(ws, table, hand, weights):
    """``_ws_answer``, and whether it answered without the LP (``ws[17][3]``, the simplex's
    prices, is zeroed by every LP solve: a NaN left there means none ran)."""
    ws[17][3][:] = np.nan
    status, value, r = _ws_answer(ws, table, hand, weights)
    return status, value, r, bool(np.isnan(ws[17][3]).all())


def test_no_play_proofs_before_the_simplex():
    """On a promised legal table "no play" may be answered before the simplex: when no LP
    column holds a hand card, or when the last LP's prices (``ws[28]``), checked against the
    new columns, bound every play below the cheapest hand card. Prices the new columns break
    prove nothing, and a play they would have hidden is found."""
    from mountain_rummy_env.rearrange_fast import STATUS_OK, make_rearrange_workspace

    ws = make_rearrange_workspace(table_is_legal=True)
    ones = np.ones(JOKER_FACE + 1)
    table = counts("5H 6H 7H")

    def no_play(hand):
        """Assert "no play" (value 0, no melds, no cards used); was the simplex skipped?"""
        status, value, r, skipped = _skipped_simplex(ws, table, counts(hand), ones)
        assert (status, value, r.melds, r.cards_placed, r.used_jokers) == (STATUS_OK, 0, (), 0, 0)
        return skipped

    assert no_play("9H")                # 9H is in no meld with these cards: no column holds it
    # 5D 5C make a set only with the run's 5H: the LP proves no play, and its prices then
    # prove it for 5D 5D 5C without a simplex
    assert not no_play("5D 5C")
    assert no_play("5D 5D 5C")
    # 5S adds columns those prices do not hold up on, and 5D 5C 5S is a play
    status, value, r, skipped = _skipped_simplex(ws, table, counts("5D 5C 5S"), ones)
    assert (status, value, skipped) == (STATUS_OK, 3.0, False)
    check_rr3(r, table, counts("5D 5C 5S"))
    # prices far below every column's need would "prove" anything: they are not trusted
    ws[28][:] = -100.0
    status, value, r, skipped = _skipped_simplex(ws, counts("AS 2S 3S"), counts("4S"), ones)
    assert (status, value, skipped) == (STATUS_OK, 1.0, False)


def test_no_play_proofs_answer_as_the_solver_without_the_promise():
    """Hands of two cards or one against each random table in turn, one workspace as in a
    playout: the promise's answers (many of them "no play" without a simplex) are the
    values of the solver without the promise, which takes no such shortcut."""
    from mountain_rummy_env.rearrange_fast import STATUS_OK, make_rearrange_workspace

    legal_ws, plain_ws = make_rearrange_workspace(table_is_legal=True), make_rearrange_workspace()
    skips = plays = 0
    for table, hand in _diff_positions(30, seed=17):
        faces = np.flatnonzero(hand)
        for pick in (faces[:2], faces[-2:], faces[:1], faces[3:5], faces[::3]):
            sub = np.zeros_like(hand)
            sub[pick] = hand[pick]
            for weights in (np.ones(JOKER_FACE + 1), GE2):
                status, value, r, skipped = _skipped_simplex(legal_ws, table, sub, weights)
                _, exact, _ = _ws_answer(plain_ws, table, sub, weights)
                assert status == STATUS_OK and value == exact
                if value:
                    check_rr3(r, table, sub)
                    plays += 1
                else:
                    assert r.melds == () and r.cards_placed == 0 and r.used_jokers == 0
                skips += skipped
    assert skips >= 20 and plays >= 20
