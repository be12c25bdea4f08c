"""Exact table rearrangement (Robber's Rummy, RR-6), compiled with numba.

The question is the one of :mod:`rearrange`: which hand cards can join the table in one
play, at most (by count or by per-face weights), with every table card in a valid meld?
Melds follow RR-3: sets of 3-4 cards of one rank in distinct suits, runs of 3+ cards of one
suit (ace low and/or high; with ``around_the_corner`` also K-A-2 ...), at most
``max_jokers_per_meld`` (0 or 1) jokers a meld, so at least two naturals a meld.

How. *Bound*: the linear relaxation of the integer program of :mod:`rearrange` (columns:
every set, and every run of 3-5 cards, with a joker in any one place or none; longer runs
are sums of those) is solved by a small bounded simplex. Its dual prices ``y`` (one per
face and one for jokers) give every meld a price sum >= 0, so for any cards still to place,
``sum(table copies * y) + sum(hand copies * max(0, w + y))`` bounds what they can still
earn -- at the root that is the LP optimum, and a move lowers it by its reduced cost. The
prices are checked against every column, so a wrong simplex answer can only weaken the
bound, never break it.

*Search*: cards sit at *positions* 0..16 of their suit: rank r at position r, and 13..16
are second homes of A, 2, 3, 4 (the ace high; with wrap-around the 2-4 after K-A). Index
``i = position * 4 + suit`` orders them rank first. A state holds, per index, the table
copies still to place and the hand copies still undecided, and the jokers of each kind
left. The depth-first search takes the lowest card left: a hand copy may be skipped; an A
(2-4 with wrap-around) may move to its second home; else it starts a meld whose other
cards all lie above it: a set of its rank with higher suits, or a run of its suit from it.
Runs need at most 5 places (a longer run splits into runs of 3-5, each with at most one
joker); a run is 2-5 naturals in a row with a joker at the top end (the bottom where the
top is out of range), or 3-5 places with a joker in one inner gap, or 3-5 naturals. Table
copies and jokers are taken before the hand's (copies of a face are interchangeable). Moves
are tried in the order of their reduced cost; a branch whose bound cannot beat the best
play found is cut, and the search stops once the best play meets the root bound (rounded
down when the weights are integers). Below the lowest card only positions ``p..p+4`` and
the second homes differ from the input, so those, the lowest index and the jokers left are
a state's key in a hash table of upper bounds on what the state can still earn. There is no
recursion (numba's disk cache crashes on it): the stack is explicit.

Compiled entry points (usable from other ``@njit`` code)::

    ws = make_rearrange_workspace()        # once; reuse it, nothing is allocated per call
    out_shown, out_declared, out_len, out_used = make_rearrange_output()
    status, value, n_melds = rearrange_ws(on_table, in_hand, weights, ace_low, ace_high,
                                          around_the_corner, max_jokers_per_meld, ws,
                                          out_shown, out_declared, out_len, out_used)

``on_table``/``in_hand`` are int64[53] face counts (52 = jokers; a natural face at most
twice in all, at most 8 jokers in all), ``weights`` float64[53] the worth of placing a hand
card of each face. ``status`` is :data:`STATUS_OK`, :data:`STATUS_TABLE_ILLEGAL` (the table
alone is no legal table, though hand cards complete it: the result is that completion) or
:data:`STATUS_INFEASIBLE` (no arrangement holds the table; ``value`` is -inf). The melds are
``out_shown[k, :out_len[k]]`` for ``k < n_melds`` (:data:`JOKER_FACE` for a joker) with the
joker's declared face in ``out_declared`` (-1 for naturals); ``out_used[f]`` counts the hand
cards of face f placed (``out_used[52]``: hand jokers). The caller validates the input
(:func:`mountain_rummy_env.rearrange.best_rearrangement` does).
"""

from __future__ import annotations

import numpy as np
from numba import carray, njit, types
from numba.extending import intrinsic

from .cards import JOKER_FACE, NUM_FACES

STATUS_OK = 0
STATUS_TABLE_ILLEGAL = 1
STATUS_INFEASIBLE = 2

NUM_ROWS = NUM_FACES + 1      # LP rows: the faces and the jokers
NUM_POSITIONS = 17            # A..K at 0..12, then second homes of A, 2, 3, 4 at 13..16
NUM_INDICES = 4 * NUM_POSITIONS
SECOND_HOME = 13
WINDOW = 20                   # indices of positions p..p+4 from the lowest card on
MAX_RUN = 5
MAX_MOVES = 32
MAX_MELDS = 40                # 112 cards, 3 a meld at least
MAX_MELD_LEN = MAX_RUN
MAX_JOKERS = 8
MAX_DEPTH = 4 * NUM_FACES + 2          # a move places or skips a copy, or moves it up once
MAX_COLUMNS = 1400
INF = np.inf
RUN_KEYS = 4 * NUM_POSITIONS * 3 * (MAX_RUN + 1)   # suit, start, length 3-5, joker slot or none
SET_KEYS = 13 * 16 * 2                             # rank, suits, joker or not
_LP_FAILED, _LP_INFEASIBLE, _LP_PRICES = range(3)

SKIP, MOVE_UP, SET_MOVE, RUN_MOVE = 0, 1, 2, 3     # move kinds, bits 0-1 of a move code

# (table, hand) copies at an index, both <= 2 in all, as one base-6 digit
_DIGIT = np.array([[0, 1, 2], [3, 4, -1], [5, -1, -1]], dtype=np.int64)

# integer and float fields of a stack frame
_MJ, _OJ, _LOW, _NMOVES, _NEXT, _CUR_MOVE = range(6)
_GAIN, _BOUND, _UPPER, _MOVE_GAIN = range(4)
_HASH_A = np.uint64(0x9E3779B97F4A7C15)
_HASH_B = np.uint64(0xC2B2AE3D27D4EB4F)


@njit(cache=True)
def make_rearrange_workspace(capacity=1 << 17, node_limit=0, table_is_legal=False):
    """Caller-owned scratch of :func:`rearrange_ws`: a memo of ``capacity`` states (rounded
    up to a power of two; when it is 3/4 full new states are no longer kept, which costs time,
    never exactness), the search stack and the simplex's arrays. ``node_limit`` > 0 makes
    the solver *inexact*: a search stops after that many nodes once it has a play, and
    answers the best play found so far (a legal one, perhaps not the best). Search
    playouts use it; 0, the default, keeps the solver exact. ``table_is_legal`` promises
    that every ``on_table`` passed is a legal table (as it is at the start of a turn): the
    solver then looks only for plays worth more than nothing, and skips the check of the
    table alone (an answer of value 0 with no melds means "no play"). Slot 28 keeps the
    last LP's prices: under the promise they may prove "no play" before the next simplex."""
    size = 1
    while size < capacity:
        size *= 2
    n_var = MAX_COLUMNS + 2 * NUM_ROWS
    return (np.zeros((size, 2), dtype=np.uint64),          # 0 memo keys
            np.zeros(size, dtype=np.float64),              # 1 memo upper bounds
            np.zeros(size, dtype=np.int64),                # 2 memo stamps
            np.zeros((MAX_DEPTH, NUM_INDICES), dtype=np.int8),   # 3 table copies left
            np.zeros((MAX_DEPTH, NUM_INDICES), dtype=np.int8),   # 4 hand copies left
            np.zeros((MAX_DEPTH, 6), dtype=np.int64),      # 5 frame integers
            np.zeros((MAX_DEPTH, 4), dtype=np.float64),    # 6 frame floats
            np.zeros((MAX_DEPTH, 2), dtype=np.uint64),     # 7 frame keys
            np.zeros((MAX_DEPTH, MAX_MOVES), dtype=np.int64),     # 8 moves
            np.zeros((MAX_DEPTH, MAX_MOVES), dtype=np.float64),   # 9 their bound changes
            np.zeros(MAX_DEPTH, dtype=np.int64),           # 10 best path (move codes)
            np.zeros((2, MAX_MELD_LEN), dtype=np.int64),   # 11 meld tokens
            np.zeros((4, MAX_COLUMNS, MAX_RUN), dtype=np.int64),  # 12 LP columns: rows, length, key, joker's face
            np.zeros(MAX_COLUMNS, dtype=np.float64),       # 13 LP column values
            np.zeros((NUM_ROWS, NUM_ROWS), dtype=np.float64),     # 14 basis inverse
            np.zeros((NUM_ROWS, NUM_ROWS), dtype=np.float64),     # 15 refactor scratch
            np.zeros((6, n_var), dtype=np.float64),        # 16 cost, upper, at upper, basic
            np.zeros((4, NUM_ROWS), dtype=np.float64),     # 17 x_B, column, duals, prices
            np.zeros(NUM_ROWS, dtype=np.int64),            # 18 basis heads
            np.zeros(4, dtype=np.int64),                   # 19 stamp, states kept, path length, nodes
            np.zeros(NUM_ROWS, dtype=np.float64),          # 20 zero weights and prices
            np.zeros(NUM_ROWS, dtype=np.int64),            # 21 an empty hand
            np.zeros((1, 1), dtype=np.int64),              # 22 no meld output
            np.zeros(MAX_RUN, dtype=np.int64),             # 23 a column's faces
            np.zeros(RUN_KEYS + SET_KEYS, dtype=np.float64),      # 24 LP values by meld key
            np.zeros(MAX_MOVES, dtype=np.float64),         # 25 LP values of a frame's moves
            np.zeros((2, NUM_ROWS), dtype=np.int64),       # 26 cards the fixed LP melds leave
            np.array([node_limit, table_is_legal], dtype=np.int64),   # 27 node limit (0: none), legal-table promise
            np.zeros(NUM_ROWS, dtype=np.float64))          # 28 the last LP's prices


@njit(cache=True)
def make_rearrange_output():
    """Output arrays of :func:`rearrange_ws`: shown faces, declared faces, meld lengths,
    hand cards used."""
    return (np.full((MAX_MELDS, MAX_MELD_LEN), -1, dtype=np.int64),
            np.full((MAX_MELDS, MAX_MELD_LEN), -1, dtype=np.int64),
            np.zeros(MAX_MELDS, dtype=np.int64), np.zeros(NUM_ROWS, dtype=np.int64))


# ---------------------------------------------------------------------------------------
# rules: which places a run may use


@njit(cache=True)
def _run_limits(ace_low, ace_high, wrap):
    """Lowest and highest position a run may use."""
    if wrap:
        return 0, NUM_POSITIONS - 1
    return (0 if ace_low else 1), (SECOND_HOME if ace_high else SECOND_HOME - 1)


@njit(cache=True)
def _face(index):
    return (index & 3) * 13 + (index >> 2) % 13


# ---------------------------------------------------------------------------------------
# the LP bound


@njit(cache=True)
def _run_key(suit, start, length, joker_slot):
    """Index of a run (joker slot -1 for none) in the table of LP values by meld."""
    return ((suit * NUM_POSITIONS + start) * 3 + length - 3) * (MAX_RUN + 1) + joker_slot + 1


@njit(cache=True)
def _set_key(rank, suits, joker):
    return RUN_KEYS + (rank * 16 + suits) * 2 + joker


@njit(cache=True)
def _free_suit(suits):
    """The lowest suit not in a set (a joker in the set is declared as that suit)."""
    s = 0
    while (suits >> s) & 1:
        s += 1
    return s


@njit(cache=True)
def _popcount4(bits):
    return (bits & 1) + ((bits >> 1) & 1) + ((bits >> 2) & 1) + ((bits >> 3) & 1)


@njit(cache=True)
def _add_column(cols, col_len, col_key, col_decl, n, faces, length, joker_slot, key):
    """Append a meld column: its LP rows (the joker's row in its slot), key, declared face."""
    for j in range(length):
        cols[n, j] = JOKER_FACE if j == joker_slot else faces[j]
    col_len[n] = length
    col_key[n] = key
    col_decl[n] = faces[joker_slot] if joker_slot >= 0 else -1
    return n + 1


@njit(cache=True)
def _lp_columns(on_table, in_hand, ace_low, ace_high, wrap, max_jokers, lp_int, faces):
    """Every meld the table's and hand's cards can make (runs of 3-5 only: longer ones are
    sums of those), as LP columns; returns their number."""
    cols, col_len, col_key, col_decl = lp_int[0], lp_int[1, :, 0], lp_int[2, :, 0], lp_int[3, :, 0]
    joker = max_jokers >= 1 and on_table[JOKER_FACE] + in_hand[JOKER_FACE] > 0
    n = 0
    for rank in range(13):
        for suits in range(3, 16):
            size, missing = 0, 0
            for s in range(4):
                if (suits >> s) & 1:
                    faces[size] = s * 13 + rank
                    missing += on_table[faces[size]] + in_hand[faces[size]] == 0
                    size += 1
            if size < 2 or missing:
                continue
            if size >= 3:
                n = _add_column(cols, col_len, col_key, col_decl, n, faces, size, -1,
                                _set_key(rank, suits, 0))
            if joker and size <= 3:
                free = _free_suit(suits)
                k = 0
                for s in range(4):
                    if (suits | (1 << free)) >> s & 1:
                        faces[k] = s * 13 + rank
                        k += 1
                n = _add_column(cols, col_len, col_key, col_decl, n, faces, size + 1,
                                _popcount4(suits & ((1 << free) - 1)), _set_key(rank, suits, 1))
    run_lo, run_hi = _run_limits(ace_low, ace_high, wrap)
    last_start = SECOND_HOME - 1 if wrap else run_hi - 2
    for suit in range(4):
        for start in range(run_lo, last_start + 1):
            for length in range(3, MAX_RUN + 1):
                if not wrap and start + length - 1 > run_hi:
                    break
                missing, hole = 0, -1
                for j in range(length):
                    faces[j] = suit * 13 + (start + j) % 13
                    if on_table[faces[j]] + in_hand[faces[j]] == 0:
                        missing += 1
                        hole = j
                if missing == 0:
                    n = _add_column(cols, col_len, col_key, col_decl, n, faces, length, -1,
                                    _run_key(suit, start, length, -1))
                if joker and missing <= 1:
                    for slot in range(length):
                        if missing == 0 or slot == hole:
                            n = _add_column(cols, col_len, col_key, col_decl, n, faces, length,
                                            slot, _run_key(suit, start, length, slot))
    return n


@njit(cache=True)
def _refactor(n_col, cols, col_len, head, binv, scratch, rhs, xb):
    """Recompute ``B^-1`` (Gauss-Jordan) and ``x_B = B^-1 rhs``; False if singular."""
    m = NUM_ROWS
    scratch[:, :] = 0.0
    for k in range(m):
        var = head[k]
        if var < n_col:
            for j in range(col_len[var]):
                scratch[cols[var, j], k] += 1.0
        elif var < n_col + m:
            scratch[var - n_col, k] = -1.0
        else:
            scratch[var - n_col - m, k] = 1.0
    binv[:, :] = 0.0
    for k in range(m):
        binv[k, k] = 1.0
    for c in range(m):
        p = c
        for r in range(c + 1, m):
            if abs(scratch[r, c]) > abs(scratch[p, c]):
                p = r
        piv = scratch[p, c]
        if abs(piv) < 1e-9:
            return False
        for j in range(m):
            scratch[c, j], scratch[p, j] = scratch[p, j], scratch[c, j]
            binv[c, j], binv[p, j] = binv[p, j], binv[c, j]
            scratch[c, j] /= piv
            binv[c, j] /= piv
        for r in range(m):
            f = scratch[r, c]
            if r != c and f != 0.0:
                for j in range(m):
                    scratch[r, j] -= f * scratch[c, j]
                    binv[r, j] -= f * binv[c, j]
    for k in range(m):
        s = 0.0
        for j in range(m):
            s += binv[k, j] * rhs[j]
        xb[k] = s
    return True


@njit(cache=True)
def _simplex(n_col, on_table, lp, lp_int, binv, scratch, vec, head):
    """Bounded primal simplex: maximise ``cost . x`` over ``A x = on_table``, ``0 <= x <=
    upper``, from the current basis. Variables: the meld columns, then ``u_f`` (column
    -e_f: hand cards used), then artificials (+e_f). Dantzig pricing, Bland's rule after 30
    degenerate pivots, a fresh factorisation every 50. Leaves the duals in ``vec[2]``.
    Returns 0 (optimal), 1 (iteration limit), 2 (singular basis) or 3 (unbounded)."""
    cols, col_len = lp_int[0], lp_int[1, :, 0]
    cost, upper, at_upper, basic, rhs = lp[0], lp[1], lp[2], lp[3], lp[4, :NUM_ROWS]
    xb, alpha, pi = vec[0], vec[1], vec[2]
    m = NUM_ROWS
    n_var = n_col + 2 * m
    degenerate = 0
    for iteration in range(50 * n_var):
        if iteration % 50 == 49:
            for f in range(m):
                rhs[f] = on_table[f] + (upper[n_col + f] if at_upper[n_col + f] == 1.0 else 0.0)
            if not _refactor(n_col, cols, col_len, head, binv, scratch, rhs, xb):
                return 2
        for i in range(m):
            pi[i] = 0.0
        for k in range(m):
            c = cost[head[k]]
            if c != 0.0:
                for i in range(m):
                    pi[i] += c * binv[k, i]
        enter, best, bland = -1, 1e-9, degenerate > 30
        for var in range(n_var):
            if basic[var] == 1.0 or upper[var] <= 0.0:
                continue
            if var < n_col:
                priced = 0.0
                for j in range(col_len[var]):
                    priced += pi[cols[var, j]]
            elif var < n_col + m:
                priced = -pi[var - n_col]
            else:
                priced = pi[var - n_col - m]
            d = cost[var] - priced
            gain = -d if at_upper[var] == 1.0 else d
            if gain > best:
                enter, best = var, gain
                if bland:
                    break
        if enter < 0:
            return 0
        if enter < n_col:                           # alpha = B^-1 a_enter
            for k in range(m):
                s = 0.0
                for j in range(col_len[enter]):
                    s += binv[k, cols[enter, j]]
                alpha[k] = s
        else:
            row, sign = (enter - n_col, -1.0) if enter < n_col + m else (enter - n_col - m, 1.0)
            for k in range(m):
                alpha[k] = sign * binv[k, row]
        sign = -1.0 if at_upper[enter] == 1.0 else 1.0
        step, leave, leave_to_upper = upper[enter], -1, False
        for k in range(m):
            change = -sign * alpha[k]
            if change < -1e-9:
                t, to_upper = xb[k] / -change, False
            elif change > 1e-9 and upper[head[k]] < INF:
                t, to_upper = (upper[head[k]] - xb[k]) / change, True
            else:
                continue
            if t < step - 1e-12 or (t < step + 1e-12 and leave >= 0 and
                                     (head[k] < head[leave] if bland
                                      else abs(alpha[k]) > abs(alpha[leave]))):
                step, leave, leave_to_upper = max(t, 0.0), k, to_upper
        if step == INF:
            return 3
        for k in range(m):
            xb[k] -= sign * step * alpha[k]
        degenerate = degenerate + 1 if step < 1e-12 else 0
        if leave < 0:                               # the entering variable flips its bound
            at_upper[enter] = 1.0 - at_upper[enter]
            continue
        out = head[leave]
        basic[out] = 0.0
        at_upper[out] = 1.0 if leave_to_upper else 0.0
        basic[enter] = 1.0
        entering_value = (upper[enter] if at_upper[enter] == 1.0 else 0.0) + sign * step
        at_upper[enter] = 0.0
        piv = alpha[leave]
        for j in range(m):
            binv[leave, j] /= piv
        for k in range(m):
            a = alpha[k]
            if k != leave and a != 0.0:
                for j in range(m):
                    binv[k, j] -= a * binv[leave, j]
        head[leave] = enter
        xb[leave] = entering_value
    return 1


@njit(cache=True)
def _certified(prices, n_col, lp_int, on_table, in_hand, weights):
    """What ``prices`` prove: the bound ``sum(table * y) + sum(hand * max(0, w + y))`` on
    every arrangement, valid when no column prices below 0; and the worst such violation."""
    cols, col_len = lp_int[0], lp_int[1, :, 0]
    worst = 0.0
    for j in range(n_col):
        s = 0.0
        for k in range(col_len[j]):
            s += prices[cols[j, k]]
        worst = min(worst, s)
    bound = 0.0
    for f in range(NUM_ROWS):
        bound += on_table[f] * prices[f] + in_hand[f] * max(0.0, weights[f] + prices[f])
    return bound, -worst


@njit(cache=True)
def _solve_lp(n_col, on_table, in_hand, weights, ws):
    """The LP relaxation over the ``n_col`` columns of :func:`_lp_columns` in ``ws[12]``.
    Returns (outcome, bound, bound slack): outcome :data:`_LP_INFEASIBLE` (a Farkas
    certificate: no arrangement), :data:`_LP_PRICES` (dual prices in ``ws[17][3]`` and
    ``ws[28]``, values by column in ``ws[13]`` and by meld key in ``ws[24]``) or
    :data:`_LP_FAILED` (prices 0: the plain bound)."""
    lp_int, binv, scratch, lp, vec, head = ws[12], ws[14], ws[15], ws[16], ws[17], ws[18]
    prices, by_key, col_x = vec[3], ws[24], ws[13]
    prices[:] = 0.0
    by_key[:] = 0.0
    n_var = n_col + 2 * NUM_ROWS
    cost, upper, at_upper, basic = lp[0], lp[1], lp[2], lp[3]
    cost[:n_var] = 0.0
    upper[:n_col] = INF
    for f in range(NUM_ROWS):
        upper[n_col + f] = in_hand[f]
        upper[n_col + NUM_ROWS + f] = INF
        cost[n_col + NUM_ROWS + f] = -1.0          # phase 1: drive the artificials out
    at_upper[:n_var] = 0.0
    basic[:n_var] = 0.0
    binv[:, :] = 0.0
    for k in range(NUM_ROWS):
        binv[k, k] = 1.0
        head[k] = n_col + NUM_ROWS + k
        basic[head[k]] = 1.0
        vec[0, k] = on_table[k]
    if _simplex(n_col, on_table, lp, lp_int, binv, scratch, vec, head) != 0:
        return _LP_FAILED, 0.0, 0.0
    bound, violation = _certified(vec[2], n_col, lp_int, on_table, in_hand, ws[20])
    if violation < 1e-9 and bound < -1e-7:
        return _LP_INFEASIBLE, 0.0, 0.0
    for k in range(NUM_ROWS):
        if head[k] >= n_col + NUM_ROWS and vec[0, k] > 1e-7:
            return _LP_FAILED, 0.0, 0.0
    for f in range(NUM_ROWS):                       # phase 2
        cost[n_col + f] = weights[f]
        cost[n_col + NUM_ROWS + f] = 0.0
        upper[n_col + NUM_ROWS + f] = 0.0
    if _simplex(n_col, on_table, lp, lp_int, binv, scratch, vec, head) != 0:
        return _LP_FAILED, 0.0, 0.0
    bound, violation = _certified(vec[2], n_col, lp_int, on_table, in_hand, weights)
    if violation > 1e-6:
        return _LP_FAILED, 0.0, 0.0
    prices[:] = vec[2]
    ws[28][:] = prices
    col_x[:n_col] = 0.0
    for k in range(NUM_ROWS):
        if head[k] < n_col:
            col_x[head[k]] = vec[0, k]
    for j in range(n_col):
        by_key[lp_int[2, j, 0]] = col_x[j]
    return _LP_PRICES, bound, _slack(violation)


@njit(cache=True)
def _slack(violation):
    """What a price violation can add to a certified bound: each of at most MAX_MELDS melds
    of an arrangement prices at most ``violation`` below 0 (and rounding)."""
    return violation * MAX_MELDS + 1e-9


@njit(cache=True)
def _cheapest(in_hand, weights, oj):
    """The least worth of a hand card that may be placed (the jokers only when ``oj`` > 0);
    inf for an empty hand."""
    w_min = INF
    for f in range(NUM_ROWS):
        if in_hand[f] > 0 and (f != JOKER_FACE or oj > 0):
            w_min = min(w_min, weights[f])
    return w_min


@njit(cache=True)
def _proves_no_play(bound, slack, w_min):
    """Is every play, worth ``w_min`` > 0 or more (it places a hand card), above what the
    certified bound (+ slack) allows?"""
    return w_min > 0.0 and bound + slack + 1e-9 * (1.0 + abs(bound)) < w_min


@njit(cache=True)
def _placeable(n_col, lp_int, in_hand, weights):
    """Does some column hold a hand card worth more than 0?"""
    cols, col_len = lp_int[0], lp_int[1, :, 0]
    for j in range(n_col):
        for k in range(col_len[j]):
            if in_hand[cols[j, k]] > 0 and weights[cols[j, k]] > 0.0:
                return True
    return False


@njit(cache=True)
def _no_play_before_lp(n_col, lp_int, on_table, in_hand, weights, w_min, last_prices):
    """On a legal table, is "no play" proved without the simplex? Yes when no column holds
    a hand card worth more than 0 (then no play earns anything), or when the last LP's
    prices, checked against these columns, bound every play below ``w_min``: successive
    calls of a playout mostly share the table, and most of them have no play."""
    if not _placeable(n_col, lp_int, in_hand, weights):
        return True
    bound, violation = _certified(last_prices, n_col, lp_int, on_table, in_hand, weights)
    return violation <= 1e-9 and _proves_no_play(bound, _slack(violation), w_min)


# ---------------------------------------------------------------------------------------
# the search: moves of the lowest card


@njit(cache=True)
def _copies(mand, opt, d, pos, suit):
    if pos >= NUM_POSITIONS:
        return 0
    return mand[d, 4 * pos + suit] + opt[d, 4 * pos + suit]


@njit(cache=True)
def _lowest(mand, opt, d, start):
    i = start
    while i < NUM_INDICES and mand[d, i] + opt[d, i] == 0:
        i += 1
    return i


@njit(cache=True)
def _gen_moves(mand, opt, d, low, jokers_left, ace_high, wrap, max_jokers, run_lo, run_hi,
               moves):
    """The moves of the lowest card ``low`` of frame ``d`` into ``moves[d]``: runs, sets,
    moving up, skipping (that order breaks ties between equal bounds); their count.

    Codes: kind in bits 0-1; a set's higher suits (bits 2-4, bit k = suit + 1 + k) and joker
    (bit 5); a run's span of places (bits 2-4), joker gap offset (bits 5-6, 0 = none) and
    joker at an end (bit 7)."""
    pos, suit = low >> 2, low & 3
    n = 0
    if pos < SECOND_HOME:             # cards at second homes only join runs from below
        joker = max_jokers >= 1 and jokers_left > 0
        if pos >= run_lo:
            row = 0                   # naturals in a row from pos
            while (row < MAX_RUN and pos + row <= run_hi
                   and _copies(mand, opt, d, pos + row, suit) > 0):
                row += 1
            for span in range(row, 2, -1):
                moves[d, n] = RUN_MOVE | (span << 2)
                n += 1
            if joker:
                for span in range(min(row, MAX_RUN - 1), 1, -1):
                    moves[d, n] = RUN_MOVE | (span << 2) | (1 << 7)
                    n += 1
                for gap in range(1, min(row, MAX_RUN - 2) + 1):
                    after = 0
                    while (gap + 1 + after < MAX_RUN and pos + gap + 1 + after <= run_hi
                           and _copies(mand, opt, d, pos + gap + 1 + after, suit) > 0):
                        after += 1
                        moves[d, n] = RUN_MOVE | ((gap + 1 + after) << 2) | (gap << 5)
                        n += 1
        others = 0
        for s in range(suit + 1, 4):
            if _copies(mand, opt, d, pos, s) > 0:
                others |= 1 << (s - suit - 1)
        for sub in range(7, 0, -1):
            if sub & others != sub:
                continue
            size = 1 + _popcount4(sub)
            if size >= 3:
                moves[d, n] = SET_MOVE | (sub << 2)
                n += 1
            if joker and size <= 3:
                moves[d, n] = SET_MOVE | (sub << 2) | (1 << 5)
                n += 1
        # to the second home, where a run from one of the two places below can use it
        if (pos == 0 and ace_high and not wrap) or (wrap and pos < NUM_POSITIONS - SECOND_HOME):
            top = pos + SECOND_HOME
            if _copies(mand, opt, d, top - 1, suit) > 0 or _copies(mand, opt, d, top - 2, suit) > 0:
                moves[d, n] = MOVE_UP
                n += 1
    if mand[d, low] == 0:
        moves[d, n] = SKIP
        n += 1
    return n


@njit(cache=True)
def _tokens(move, low, run_hi, tok):
    """The cards of a meld move in order: ``tok[0, j]`` the index of a natural or -1 for a
    joker, ``tok[1, j]`` the joker's declared face; returns their number."""
    pos, suit = low >> 2, low & 3
    k = 0
    if move & 3 == SET_MOVE:
        suits = (1 << suit) | (((move >> 2) & 7) << (suit + 1))
        joker_suit = _free_suit(suits) if (move >> 5) & 1 else -1
        for s in range(4):
            if (suits >> s) & 1:
                tok[0, k] = 4 * pos + s
                k += 1
            elif s == joker_suit:
                tok[0, k] = -1
                tok[1, k] = s * 13 + pos % 13
                k += 1
        return k
    span, gap, end_joker = (move >> 2) & 7, (move >> 5) & 3, (move >> 7) & 1
    bottom = end_joker == 1 and pos + span > run_hi
    if bottom:
        tok[0, k] = -1
        tok[1, k] = suit * 13 + (pos + 12) % 13
        k += 1
    for j in range(span):
        if gap > 0 and j == gap:
            tok[0, k] = -1
            tok[1, k] = _face(low + 4 * j)
        else:
            tok[0, k] = low + 4 * j
        k += 1
    if end_joker == 1 and not bottom:
        tok[0, k] = -1
        tok[1, k] = _face(low + 4 * span)
        k += 1
    return k


@njit(cache=True)
def _worth(mandatory_left, face, weights, prices):
    """Change of the bound when one copy of ``face`` is placed."""
    if mandatory_left > 0:
        return -prices[face]
    return weights[face] - max(0.0, weights[face] + prices[face])


@njit(cache=True)
def _delta(move, mand, opt, st_int, d, low, weights, prices, run_hi, tok):
    """How much ``move`` lowers the bound of frame ``d`` (its reduced cost, negated)."""
    kind = move & 3
    if kind == MOVE_UP:
        return 0.0
    if kind == SKIP:
        f = _face(low)
        return -max(0.0, weights[f] + prices[f])
    total = 0.0
    for j in range(_tokens(move, low, run_hi, tok)):
        i = tok[0, j]
        if i < 0:
            total += _worth(st_int[d, _MJ], JOKER_FACE, weights, prices)
        else:
            total += _worth(mand[d, i], _face(i), weights, prices)
    return total


@njit(cache=True)
def _take(mand, opt, d, index, weights):
    """Place one copy at ``index`` (a table copy first); (gain, 1 if it was the hand's)."""
    if mand[d, index] > 0:
        mand[d, index] -= 1
        return 0.0, 0
    opt[d, index] -= 1
    return weights[_face(index)], 1


@njit(cache=True)
def _take_joker(st_int, d, weights):
    if st_int[d, _MJ] > 0:
        st_int[d, _MJ] -= 1
        return 0.0, 0
    st_int[d, _OJ] -= 1
    return weights[JOKER_FACE], 1


@njit(cache=True)
def _apply(move, mand, opt, st_int, d, low, weights, run_hi, tok, out_shown, out_declared,
           out_len, out_used, meld):
    """Apply ``move`` to frame ``d``; returns its gain. With ``meld >= 0`` also write the
    meld to that row of the outputs and count the hand cards it used in ``out_used``."""
    kind = move & 3
    if kind == SKIP:
        opt[d, low] -= 1
        return 0.0
    if kind == MOVE_UP:
        up = low + 4 * SECOND_HOME
        if mand[d, low] > 0:
            mand[d, low] -= 1
            mand[d, up] += 1
        else:
            opt[d, low] -= 1
            opt[d, up] += 1
        return 0.0
    gain = 0.0
    n = _tokens(move, low, run_hi, tok)
    for j in range(n):
        i = tok[0, j]
        if i < 0:
            g, used = _take_joker(st_int, d, weights)
        else:
            g, used = _take(mand, opt, d, i, weights)
        gain += g
        if meld >= 0:
            face = JOKER_FACE if i < 0 else _face(i)
            out_shown[meld, j] = face
            out_declared[meld, j] = tok[1, j] if i < 0 else -1
            out_used[face] += used
    if meld >= 0:
        out_len[meld] = n
    return gain


# ---------------------------------------------------------------------------------------
# the search: memo and the depth-first loop


@intrinsic
def _address_as_pointer(typingctx, address, dtype):
    ptr = types.CPointer(dtype.dtype)

    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], context.get_value_type(ptr))
    return ptr(address, dtype), codegen


@njit(cache=True)
def _unowned(a):
    """A view of C-contiguous ``a`` that holds no reference to it (the caller keeps ``a``
    alive): passing it to a function costs no atomic reference count."""
    if not a.flags.c_contiguous:
        raise ValueError("the solver's arrays must be C-contiguous")
    return carray(_address_as_pointer(a.ctypes.data, a.dtype), a.shape)


@njit(cache=True)
def _key(mand, opt, d, low, mj, oj):
    """The state's memo key: base-6 digits of the window from ``low`` and of the second
    homes, the lowest index and the jokers left."""
    k1 = np.uint64(0)
    for j in range(WINDOW - 1, -1, -1):
        i = low + j
        digit = _DIGIT[mand[d, i], opt[d, i]] if i < NUM_INDICES else 0
        k1 = k1 * np.uint64(6) + np.uint64(digit)
    k1 = k1 * np.uint64(NUM_INDICES) + np.uint64(low)
    k2 = np.uint64(0)
    for i in range(NUM_INDICES - 1, 4 * SECOND_HOME - 1, -1):
        k2 = k2 * np.uint64(6) + np.uint64(_DIGIT[mand[d, i], opt[d, i]])
    k2 = (k2 * np.uint64(MAX_JOKERS + 1) + np.uint64(mj)) * np.uint64(MAX_JOKERS + 1) + np.uint64(oj)
    return k1, k2


@njit(cache=True)
def _slot(memo_key, memo_stamp, stamp, k1, k2):
    """The key's slot: where it is, or the free slot where it would go."""
    mask = memo_key.shape[0] - 1
    h = np.int64(((k1 * _HASH_A) ^ (k2 * _HASH_B) ^ (k1 >> np.uint64(29))) & np.uint64(mask))
    while memo_stamp[h] == stamp and (memo_key[h, 0] != k1 or memo_key[h, 1] != k2):
        h = (h + 1) & mask
    return h


@njit(cache=True)
def _drop_dead(mand, opt, st_int, d, start, stop, weights, prices, ace_high, wrap, max_jokers,
               run_lo, run_hi):
    """Cards of frame ``d`` at indices ``start..stop`` (and at the second homes) that no meld
    of the cards left can hold: a table card there ends the branch (returns -inf); hand
    copies are dropped, and the bound change is returned. Necessary tests only: a card is
    dead when no set of its rank and no three places in a row around it have all but one
    card (all, without jokers); cards that may still move up are not tested."""
    joker = max_jokers >= 1 and st_int[d, _MJ] + st_int[d, _OJ] > 0
    change = 0.0
    for i in range(start, NUM_INDICES):
        if i >= stop and i < 4 * SECOND_HOME:
            continue
        if mand[d, i] + opt[d, i] == 0:
            continue
        pos, suit = i >> 2, i & 3
        if pos < SECOND_HOME:
            if (pos == 0 and ace_high and not wrap) or (wrap and pos < NUM_POSITIONS - SECOND_HOME):
                continue
            others = 0
            for s in range(4):
                if s != suit and mand[d, 4 * pos + s] + opt[d, 4 * pos + s] > 0:
                    others += 1
            if others >= 2 or (others == 1 and joker):
                continue
        alive = False
        for a in range(max(pos - 2, run_lo), min(pos, run_hi - 2) + 1):
            missing = 0
            for q in range(a, a + 3):
                there = mand[d, 4 * q + suit] + opt[d, 4 * q + suit]
                if q >= SECOND_HOME:          # or still at home, free to move up
                    there += mand[d, 4 * (q - SECOND_HOME) + suit] + opt[d, 4 * (q - SECOND_HOME) + suit]
                if q != pos and there == 0:
                    missing += 1
            if missing == 0 or (missing == 1 and joker):
                alive = True
                break
        if alive:
            continue
        if mand[d, i] > 0:
            return -INF
        f = _face(i)
        change -= opt[d, i] * max(0.0, weights[f] + prices[f])
        opt[d, i] = 0
    return change


@njit(cache=True)
def _move_key(move, low, run_hi):
    """The LP meld key of a meld move (see :func:`_run_key`)."""
    pos, suit = low >> 2, low & 3
    if move & 3 == SET_MOVE:
        return _set_key(pos, (1 << suit) | (((move >> 2) & 7) << (suit + 1)), (move >> 5) & 1)
    span, gap, end_joker = (move >> 2) & 7, (move >> 5) & 3, (move >> 7) & 1
    if end_joker == 0:
        return _run_key(suit, pos, span, gap if gap > 0 else -1)
    if pos + span > run_hi:
        return _run_key(suit, pos - 1, span + 1, 0)
    return _run_key(suit, pos, span + 1, span)


@njit(cache=True)
def _open_frame(mand, opt, st_int, st_flt, moves, deltas, tok, by_key, xs, d, low, weights,
                prices, ace_high, wrap, max_jokers, run_lo, run_hi):
    """Generate frame ``d``'s moves and sort them: least bound lost first, then the larger
    LP value of the meld (the LP optimum is the likeliest play)."""
    st_int[d, _LOW] = low
    n = _gen_moves(mand, opt, d, low, st_int[d, _MJ] + st_int[d, _OJ], ace_high, wrap,
                   max_jokers, run_lo, run_hi, moves)
    for k in range(n):
        move = moves[d, k]
        delta = _delta(move, mand, opt, st_int, d, low, weights, prices, run_hi, tok)
        x = by_key[_move_key(move, low, run_hi)] if move & 3 >= SET_MOVE else 0.0
        j = k
        while j > 0 and (deltas[d, j - 1] < delta - 1e-9 or
                         (deltas[d, j - 1] < delta + 1e-9 and xs[j - 1] < x)):
            moves[d, j] = moves[d, j - 1]
            deltas[d, j] = deltas[d, j - 1]
            xs[j] = xs[j - 1]
            j -= 1
        moves[d, j] = move
        deltas[d, j] = delta
        xs[j] = x
    st_int[d, _NMOVES] = n
    st_int[d, _NEXT] = 0
    st_flt[d, _UPPER] = -INF


@njit(cache=True)
def _cannot_beat(bound, best, integral, slack):
    if integral:
        return np.floor(bound + slack + 1e-6) <= best
    return bound <= best + slack + 1e-9 * (1.0 + abs(best))


@njit(cache=True)
def _search(mj, oj, weights, prices, slack, integral, incumbent, ace_high, wrap, max_jokers,
            run_lo, run_hi, ws):
    """Best total gain of placing all of frame 0's table copies (set by the caller) and any
    of its hand copies, if it beats ``incumbent`` (else ``incumbent``); the path of moves
    that reaches it goes to ``ws[10]`` (its length to ``ws[19][2]``, 0 if none beat it)."""
    # unowned views: the search passes these to a helper or more each node, and numba
    # counts references to an owned array atomically at every call (a fifth of the time)
    memo_key, memo_ub, memo_stamp = _unowned(ws[0]), _unowned(ws[1]), _unowned(ws[2])
    mand, opt, st_int, st_flt = _unowned(ws[3]), _unowned(ws[4]), _unowned(ws[5]), _unowned(ws[6])
    st_key, moves, deltas = _unowned(ws[7]), _unowned(ws[8]), _unowned(ws[9])
    path, tok, meta = _unowned(ws[10]), _unowned(ws[11]), _unowned(ws[19])
    no_meld, no_count = _unowned(ws[22]), _unowned(ws[21])
    by_key, xs = _unowned(ws[24]), _unowned(ws[25])
    weights, prices = _unowned(weights), _unowned(prices)
    node_limit = ws[27][0]
    meta[0] += 1
    stamp = meta[0]
    meta[1:4] = 0
    capacity = 3 * memo_key.shape[0] // 4
    st_int[0, _MJ], st_int[0, _OJ] = mj, oj
    bound = 0.0
    for i in range(NUM_INDICES):
        f = _face(i)
        bound += mand[0, i] * prices[f] + opt[0, i] * max(0.0, weights[f] + prices[f])
    bound += mj * prices[JOKER_FACE] + oj * max(0.0, weights[JOKER_FACE] + prices[JOKER_FACE])
    best = incumbent
    change = _drop_dead(mand, opt, st_int, 0, 0, NUM_INDICES, weights, prices, ace_high, wrap,
                        max_jokers, run_lo, run_hi)
    if change == -INF:
        return best
    bound += change
    low = _lowest(mand, opt, 0, 0)
    if low == NUM_INDICES:
        return max(best, 0.0) if mj == 0 else best
    st_flt[0, _GAIN] = 0.0
    st_flt[0, _BOUND] = bound
    st_key[0, 0], st_key[0, 1] = _key(mand, opt, 0, low, mj, oj)
    _open_frame(mand, opt, st_int, st_flt, moves, deltas, tok, by_key, xs, 0, low, weights, prices,
                ace_high, wrap, max_jokers, run_lo, run_hi)
    depth = 0
    while depth >= 0:
        if node_limit > 0 and meta[3] >= node_limit and best > -INF:
            break                                 # inexact on request: keep what was found
        d = depth
        if st_int[d, _NEXT] < st_int[d, _NMOVES] and not _cannot_beat(bound, best, integral, slack):
            m = st_int[d, _NEXT]
            st_int[d, _NEXT] += 1
            move = moves[d, m]
            child_bound = st_flt[d, _BOUND] + deltas[d, m]
            if _cannot_beat(child_bound, best, integral, slack):
                st_flt[d, _UPPER] = max(st_flt[d, _UPPER], child_bound - st_flt[d, _GAIN])
                continue
            c = d + 1
            mand[c, :] = mand[d, :]
            opt[c, :] = opt[d, :]
            st_int[c, _MJ] = st_int[d, _MJ]
            st_int[c, _OJ] = st_int[d, _OJ]
            gain = _apply(move, mand, opt, st_int, c, st_int[d, _LOW], weights, run_hi, tok,
                          no_meld, no_meld, no_count, no_count, -1)
            low = _lowest(mand, opt, c, st_int[d, _LOW])
            change = _drop_dead(mand, opt, st_int, c, low, low + WINDOW, weights, prices,
                                ace_high, wrap, max_jokers, run_lo, run_hi)
            if change == -INF:
                continue
            child_bound += change
            if _cannot_beat(child_bound, best, integral, slack):
                st_flt[d, _UPPER] = max(st_flt[d, _UPPER], child_bound - st_flt[d, _GAIN])
                continue
            low = _lowest(mand, opt, c, low)
            if low == NUM_INDICES:
                if st_int[c, _MJ] == 0:
                    st_flt[d, _UPPER] = max(st_flt[d, _UPPER], gain)
                    total = st_flt[d, _GAIN] + gain
                    if total > best:
                        best = total
                        for k in range(d):
                            path[k] = st_int[k, _CUR_MOVE]
                        path[d] = move
                        meta[2] = d + 1
                continue
            k1, k2 = _key(mand, opt, c, low, st_int[c, _MJ], st_int[c, _OJ])
            h = _slot(memo_key, memo_stamp, stamp, k1, k2)
            if memo_stamp[h] == stamp:
                known = memo_ub[h]
                if _cannot_beat(st_flt[d, _GAIN] + gain + known, best, integral, slack):
                    st_flt[d, _UPPER] = max(st_flt[d, _UPPER], gain + known)
                    continue
            st_int[d, _CUR_MOVE] = move
            st_flt[d, _MOVE_GAIN] = gain
            st_flt[c, _GAIN] = st_flt[d, _GAIN] + gain
            st_flt[c, _BOUND] = child_bound
            st_key[c, 0], st_key[c, 1] = k1, k2
            _open_frame(mand, opt, st_int, st_flt, moves, deltas, tok, by_key, xs, c, low, weights,
                        prices, ace_high, wrap, max_jokers, run_lo, run_hi)
            meta[3] += 1
            depth = c
        else:
            if st_int[d, _NEXT] < st_int[d, _NMOVES]:     # stopped early: moves left unseen
                st_flt[d, _UPPER] = max(st_flt[d, _UPPER], st_flt[d, _BOUND] - st_flt[d, _GAIN])
            upper = min(st_flt[d, _UPPER], st_flt[d, _BOUND] - st_flt[d, _GAIN])
            h = _slot(memo_key, memo_stamp, stamp, st_key[d, 0], st_key[d, 1])
            if memo_stamp[h] == stamp:
                memo_ub[h] = min(memo_ub[h], upper)
            elif meta[1] < capacity:
                memo_stamp[h] = stamp
                memo_key[h, 0], memo_key[h, 1] = st_key[d, 0], st_key[d, 1]
                memo_ub[h] = upper
                meta[1] += 1
            depth = d - 1
            if depth >= 0:
                st_flt[depth, _UPPER] = max(st_flt[depth, _UPPER],
                                            st_flt[depth, _MOVE_GAIN] + upper)
    return best


@njit(cache=True)
def _load(on_table, in_hand, mand, opt):
    """Frame 0 of the stack: the table's and the hand's copies at their home positions."""
    mand[0, :] = 0
    opt[0, :] = 0
    for i in range(4 * SECOND_HOME):
        mand[0, i] = on_table[_face(i)]
        opt[0, i] = in_hand[_face(i)]


@njit(cache=True)
def rearrange_ws(on_table, in_hand, weights, ace_low, ace_high, around_the_corner,
                 max_jokers_per_meld, ws, out_shown, out_declared, out_len, out_used):
    """The best rearrangement; see the module docstring. Returns (status, value, n_melds).

    First the melds the LP optimum takes whole are fixed and the rest is searched; when that
    meets the LP bound it is the answer, else it is the incumbent of the full search. On a
    promised legal table, "no play" is answered without the search where the LP's columns
    or bound prove it, and without the simplex where the columns or the last LP's prices do."""
    wrap = around_the_corner
    run_lo, run_hi = _run_limits(ace_low, ace_high, wrap)
    out_used[:] = 0
    mj = on_table[JOKER_FACE]
    oj = in_hand[JOKER_FACE] if max_jokers_per_meld >= 1 else 0
    if mj > 0 and max_jokers_per_meld < 1:
        return STATUS_INFEASIBLE, -INF, 0
    legal_table = ws[27][1] != 0
    floor = 0.0 if legal_table else -INF      # a promised legal table: placing nothing is 0
    n_col = _lp_columns(on_table, in_hand, ace_low, ace_high, wrap, max_jokers_per_meld, ws[12],
                        ws[23])
    w_min = _cheapest(in_hand, weights, oj)
    # no play (every play places a hand card, worth w_min or more): most of a search
    # playout's calls once the stock runs low; the searches below could only confirm it
    if legal_table and _no_play_before_lp(n_col, ws[12], on_table, in_hand, weights, w_min,
                                          ws[28]):
        return STATUS_OK, floor, 0
    outcome, bound, slack = _solve_lp(n_col, on_table, in_hand, weights, ws)
    if outcome == _LP_INFEASIBLE:
        return STATUS_INFEASIBLE, -INF, 0
    integral = True
    for f in range(NUM_ROWS):
        if in_hand[f] > 0 and weights[f] != np.floor(weights[f]):
            integral = False
    prices = ws[17][3]
    rest_table, rest_hand = ws[26][0], ws[26][1]
    if legal_table and outcome == _LP_PRICES and _proves_no_play(bound, slack, w_min):
        return STATUS_OK, floor, 0      # the LP's bound proves it
    value, n_melds = floor, 0
    if outcome != _LP_FAILED:
        n_fixed, fixed_gain = _fix_lp_melds(n_col, ws[12], ws[13], on_table, in_hand, weights,
                                            rest_table, rest_hand, out_shown, out_declared,
                                            out_len, out_used)
        if n_fixed >= 0:
            _load(rest_table, rest_hand, ws[3], ws[4])
            rest = _search(rest_table[JOKER_FACE], rest_hand[JOKER_FACE], weights, prices, slack,
                           integral, floor - fixed_gain, ace_high, wrap, max_jokers_per_meld,
                           run_lo, run_hi, ws)
            if rest > floor - fixed_gain:
                value = fixed_gain + rest
                n_melds = n_fixed + _replay(rest_table, rest_hand, weights, ace_high, wrap,
                                            max_jokers_per_meld, run_lo, run_hi, ws, n_fixed,
                                            out_shown, out_declared, out_len, out_used)
    if not _cannot_beat(bound, value, integral, slack):
        _load(on_table, in_hand, ws[3], ws[4])
        best = _search(mj, oj, weights, prices, slack, integral, value, ace_high, wrap,
                       max_jokers_per_meld, run_lo, run_hi, ws)
        if best > value:
            value = best
            out_used[:] = 0
            n_melds = _replay(on_table, in_hand, weights, ace_high, wrap, max_jokers_per_meld,
                              run_lo, run_hi, ws, 0, out_shown, out_declared, out_len, out_used)
    if value == -INF:
        return STATUS_INFEASIBLE, value, 0
    if value <= floor:                        # no play beats placing nothing
        out_used[:] = 0
        return STATUS_OK, floor, 0
    status = STATUS_OK
    if not legal_table and out_used.sum() > 0 and not _table_legal(
            on_table, ace_high, wrap, max_jokers_per_meld, run_lo, run_hi, ws):
        status = STATUS_TABLE_ILLEGAL
    return status, value, n_melds


@njit(cache=True)
def _fix_lp_melds(n_col, lp_int, col_x, on_table, in_hand, weights, rest_table, rest_hand,
                  out_shown, out_declared, out_len, out_used):
    """Write the whole copies of the LP optimum's melds to the outputs and leave the cards
    they do not hold in ``rest_*`` (the table's first). Returns (melds written or -1 if the
    LP values are numerically off, worth of the hand cards they hold)."""
    cols, col_len, col_decl = lp_int[0], lp_int[1, :, 0], lp_int[3, :, 0]
    rest_table[:] = on_table
    rest_hand[:] = in_hand
    n, gain = 0, 0.0
    for j in range(n_col):
        copies = int(np.floor(col_x[j] + 1e-6))
        if copies < 0 or n + copies > MAX_MELDS:
            return -1, 0.0
        for _ in range(copies):
            for k in range(col_len[j]):
                f = cols[j, k]
                out_shown[n, k] = f
                out_declared[n, k] = col_decl[j] if f == JOKER_FACE else -1
                if rest_table[f] > 0:
                    rest_table[f] -= 1
                elif rest_hand[f] > 0:
                    rest_hand[f] -= 1
                    out_used[f] += 1
                    gain += weights[f]
                else:
                    return -1, 0.0
            out_len[n] = col_len[j]
            n += 1
    return n, gain


@njit(cache=True)
def _replay(on_table, in_hand, weights, ace_high, wrap, max_jokers, run_lo, run_hi, ws, first,
            out_shown, out_declared, out_len, out_used):
    """Replay the search's best path from these cards, writing its melds from row
    ``first`` on and adding the hand cards it places to ``out_used``; their number."""
    mand, opt, st_int, path, tok, meta = ws[3], ws[4], ws[5], ws[10], ws[11], ws[19]
    _load(on_table, in_hand, mand, opt)
    st_int[0, _MJ] = on_table[JOKER_FACE]
    st_int[0, _OJ] = in_hand[JOKER_FACE] if max_jokers >= 1 else 0
    zeros = ws[20]
    _drop_dead(mand, opt, st_int, 0, 0, NUM_INDICES, zeros, zeros, ace_high, wrap, max_jokers,
               run_lo, run_hi)
    low = 0
    n_melds = 0
    for k in range(meta[2]):
        low = _lowest(mand, opt, 0, low)
        move = path[k]
        meld = first + n_melds if (move & 3) >= SET_MOVE else -1
        _apply(move, mand, opt, st_int, 0, low, weights, run_hi, tok, out_shown, out_declared,
               out_len, out_used, meld)
        if meld >= 0:
            n_melds += 1
        low = _lowest(mand, opt, 0, low)
        _drop_dead(mand, opt, st_int, 0, low, low + WINDOW, zeros, zeros, ace_high, wrap,
                   max_jokers, run_lo, run_hi)
    return n_melds


@njit(cache=True)
def _table_legal(on_table, ace_high, wrap, max_jokers, run_lo, run_hi, ws):
    """Can the table's cards alone be arranged? (A search with an empty hand.)"""
    zeros = ws[20]
    _load(on_table, ws[21], ws[3], ws[4])
    ws[24][:] = 0.0
    return _search(on_table[JOKER_FACE], 0, zeros, zeros, 0.0, True, -INF, ace_high, wrap,
                   max_jokers, run_lo, run_hi, ws) == 0.0
