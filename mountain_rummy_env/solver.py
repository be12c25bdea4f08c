"""Exact best-arrangement solver: which melds to form from a hand, compiled with numba.

A hand is a set of natural faces (bitmask, bit ``f`` = face ``f`` of :mod:`cards`) plus a
number of jokers. An *arrangement* is a list of non-overlapping melds; each meld is a
template of a :class:`~melds.MeldTable` whose faces are supplied partly by naturals from
the hand and partly by jokers, each joker declared as the template face it fills.

Rules of a meld (MR-5, and what the callers pass in):

* at least one natural card per meld (no meld of jokers only);
* a joker fills a template face that no natural *of the same meld* supplies; that face
  must not be in ``forbidden_joker_faces`` (e.g. faces already face up on the table).
  A joker may stand for a face that the hand holds but uses elsewhere or keeps
  (MR-5 only forbids cards face up on the table and duplicates inside the meld);
  declared faces are not checked *across* melds of one arrangement -- pass the faces the
  caller wants excluded in ``forbidden_joker_faces``;
* at most ``max_jokers_per_meld`` jokers per meld (-1: no limit).

Objectives (``hand_value[53]`` gives the in-hand value of each face, index 52 = joker):

* ``"deadwood"``: minimise the hand value of the unmelded cards; ties are broken by the
  larger meld credit (:func:`best_arrangement` only; the optimum value is unaffected).
* ``"points"``: maximise meld credit - deadwood (MR-12 standard points of a hand laid
  down in full); the credit of a melded card is ``table.credit`` of its template slot, a
  joker earning the credit of the slot it fills; ties broken by the smaller deadwood.

Both objectives are "maximise the sum of per-card gains of melded cards": a melded card
gains its hand value (deadwood) or its hand value + slot credit (points).

Compiled entry points (usable from other ``@njit`` code; arrays are the MeldTable's own):

``solve_kernel(hand_mask, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit,
hand_value, objective_code, forbidden, max_jokers, tiebreak, out_tmpl, out_nat)``
    ``hand_mask`` int64/uint64 natural-face bitmask (bits 0..51), ``jokers`` int (0..),
    ``tmpl_mask`` uint64[T], ``tmpl_len`` int8[T], ``tmpl_faces`` int8[T, 14],
    ``tmpl_credit`` int16[T, 14], ``hand_value`` int64[53], ``objective_code``
    (:data:`OBJ_DEADWOOD` 0 / :data:`OBJ_POINTS` 1), ``forbidden`` int64 face bitmask,
    ``max_jokers`` (-1 = no limit), ``tiebreak`` bool, ``out_tmpl`` int32[>=popcount(hand)]
    and ``out_nat`` int64[>=popcount(hand)] receive per meld the template id and the
    bitmask of the naturals it uses (its joker faces are ``tmpl_mask & ~out_nat``).
    Returns ``(n_melds, deadwood, credit)`` as int64s.

``solve_ws(... same arguments ..., ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)``
    the same with caller-owned scratch: ``make_workspace(n_templates)`` returns that tuple
    once; reuse it in loops (``solve_kernel`` allocates it per call, about 1 us).

``batch_kernel(hands, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, hand_value,
objective_code, forbidden, max_jokers, run_best, suit_value, tgain, set_ids, set_cnt, out)``
    the loop behind :func:`best_deadwood_batch`; the five tables come from
    :func:`fast_tables`. ``nojoker_gain_kernel`` is its joker-free fast path.

Numba notes: the kernels are not recursive (numba's on-disk cache and recursion crash
together) and the bit helpers are plain overloads (``inline="always"`` miscompiled here).

Algorithm. Templates are scanned with bitmask tests (``popcount(mask & ~hand) <= jokers``)
to collect candidate melds; naturals in no candidate are deadwood outright; a candidate no
better than another with the same held naturals and joker count is dropped. A depth-first
search (explicit stack) then decides the lowest undecided natural: unmelded, or the lowest
natural of one candidate meld (optionally leaving some of that template's other held
naturals out, a joker taking their face). Branch-and-bound: gain so far + jokers left x
best joker gain + a fractional knapsack over the undecided naturals, natural ``i`` costing
at least ``min(jokers / naturals)`` over its candidates. Joker-free hands in the batch use
a faster exact method: choose the sets (per rank with >= 3 cards: none / each held set
template), then the best run packing of each suit is a lookup in a 4 x 8192 table
precomputed per rule set (runs never need a choice once the sets are fixed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit
from numba.extending import intrinsic, overload
from numba.cpython.unsafe.numbers import trailing_zeros

from .cards import JOKER_FACE, NUM_FACES, NUM_RANKS, NUM_SUITS
from .melds import RUN, SET, MeldTable

__all__ = [
    "OBJ_DEADWOOD",
    "OBJ_POINTS",
    "Arrangement",
    "best_arrangement",
    "best_deadwood_batch",
    "hand_mask_of",
    "solve_kernel",
    "solve_ws",
    "make_workspace",
    "batch_kernel",
    "fast_tables",
    "nojoker_gain_kernel",
]

OBJ_DEADWOOD = 0
OBJ_POINTS = 1
_OBJECTIVES = {"deadwood": OBJ_DEADWOOD, "points": OBJ_POINTS}
TIEBREAK_SCALE = 1 << 20  # primary gain * scale + secondary gain (secondary < scale)
_NO_LIMIT = 1 << 30
_SUIT_BITS = 0x1FFF  # 13 bits of one suit


# ---------------------------------------------------------------------------------------
# bit helpers (masks are int64: faces 0..51 never touch the sign bit)


def _popcount(x):
    """Number of set bits (pure-Python version; compiled code uses the overload below)."""
    return bin(int(x)).count("1")


def _lowbit(x):
    """Index of the lowest set bit of a nonzero mask."""
    x = int(x)
    return (x & -x).bit_length() - 1


@intrinsic
def _ctpop(typingctx, x):
    """LLVM ``ctpop`` (one POPCNT instruction on x86-64)."""
    sig = x(x)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@overload(_popcount)
def _popcount_impl(x):
    def impl(x):
        return np.int64(_ctpop(x))

    return impl


@overload(_lowbit)
def _lowbit_impl(x):
    def impl(x):
        return np.int64(trailing_zeros(x))

    return impl


@njit(cache=True)
def _gain(value, credit, objective_code, scale, tiebreak):
    """Gain of melding a card of hand value ``value`` into a slot worth ``credit``."""
    if objective_code == OBJ_DEADWOOD:
        g = value * scale
        if tiebreak:
            g += credit
    else:
        g = (credit + value) * scale
        if tiebreak:
            g += value
    return g


# ---------------------------------------------------------------------------------------
# general solver: candidate scan + branch-and-bound DFS


@njit(cache=True)
def _search(n, jokers, remw0, maxj, cand_a, cand_mfix, cand_gfix, gn, gj, wmax, by_card,
            by_cnt, forb_local, jmax, zero_mask, order, cost, best_k, best_nat, stack):
    """Branch-and-bound DFS (explicit stack) over the lowest undecided local card.

    Bound: gain so far + jokers left * best joker gain + a fractional knapsack over the
    undecided naturals, where natural ``i`` costs at least ``cost[i]`` jokers to meld
    (``zero_mask``: cost 0; ``order``: the others by gain per joker, best first).

    Returns ``(best gain, number of melds)``; the melds go to ``best_k`` (candidate index)
    and ``best_nat`` (local bitmask of the naturals each meld uses). ``stack`` is scratch,
    int64[>= 18, >= n + 2].
    """
    s_rem = stack[0]
    s_jl = stack[1]
    s_cur = stack[2]
    s_remw = stack[3]
    s_depth = stack[4]
    s_state = stack[5]
    s_c = stack[6]
    s_q = stack[7]
    s_sub = stack[8]
    s_drop = stack[9]
    s_budget = stack[10]
    s_k = stack[11]
    s_a = stack[12]
    s_gain = stack[13]
    s_wa = stack[14]
    s_m = stack[15]
    path_k = stack[16]
    path_nat = stack[17]
    best = np.int64(-1)
    best_n = np.int64(0)

    sp = 0
    s_rem[0] = (np.int64(1) << n) - 1
    s_jl[0] = jokers
    s_cur[0] = 0
    s_remw[0] = remw0
    s_depth[0] = 0
    s_state[0] = 0
    while sp >= 0:
        rem = s_rem[sp]
        depth = s_depth[sp]
        if s_state[sp] == 0:
            if rem == 0:
                if s_cur[sp] > best:
                    best = s_cur[sp]
                    best_n = depth
                    for i in range(depth):
                        best_k[i] = path_k[i]
                        best_nat[i] = path_nat[i]
                sp -= 1
                continue
            jl = s_jl[sp]
            ub = s_cur[sp] + jl * jmax
            if ub + s_remw[sp] <= best:
                sp -= 1
                continue
            x = rem & zero_mask
            while x:
                ub += wmax[_lowbit(x)]
                x &= x - 1
            budget = np.float64(jl)
            frac = 0.0
            for q in range(order.shape[0]):
                i = order[q]
                if (rem >> i) & 1:
                    if cost[i] <= budget:
                        budget -= cost[i]
                        ub += wmax[i]
                    else:
                        frac = wmax[i] * budget / cost[i]
                        break
            # integer gains: prune when even the rounded-up bound cannot beat best
            if ub + frac + 1e-6 < best + 1:
                sp -= 1
                continue
            s_c[sp] = _lowbit(rem)
            s_q[sp] = 0
            s_sub[sp] = 0
            s_state[sp] = 1
        c = s_c[sp]
        jl = s_jl[sp]
        cur = s_cur[sp]
        remw = s_remw[sp]
        # 1. the current candidate with some held naturals left out (jokers take them)
        pushed = False
        while s_sub[sp] != 0:
            sub = s_sub[sp]
            s_sub[sp] = (sub - 1) & s_drop[sp]
            nd = _popcount(sub)
            if nd <= s_budget[sp]:
                k = s_k[sp]
                g = s_gain[sp]
                w = s_wa[sp]
                x = sub
                while x:
                    i = _lowbit(x)
                    g += gj[k, i] - gn[k, i]
                    w -= wmax[i]
                    x &= x - 1
                used = s_a[sp] & ~sub
                path_k[depth] = k
                path_nat[depth] = used
                t = sp + 1
                s_rem[t] = rem & ~used
                s_jl[t] = jl - s_m[sp] - nd
                s_cur[t] = cur + g
                s_remw[t] = remw - w
                s_depth[t] = depth + 1
                s_state[t] = 0
                sp = t
                pushed = True
                break
        if pushed:
            continue
        # 2. the next candidate meld whose lowest natural is c
        jcap = jl if jl < maxj else maxj
        cb = np.int64(1) << c
        while s_q[sp] < by_cnt[c]:
            k = by_card[c, s_q[sp]]
            s_q[sp] += 1
            full = cand_a[k]
            mh = full & ~rem  # held naturals already decided: jokers fill their faces
            if mh & forb_local:
                continue
            m = cand_mfix[k] + _popcount(mh)
            if m > jcap:
                continue
            a = full & rem
            gain = cand_gfix[k]
            x = mh
            while x:
                i = _lowbit(x)
                gain += gj[k, i]
                x &= x - 1
            wa = np.int64(0)
            x = a
            while x:
                i = _lowbit(x)
                gain += gn[k, i]
                wa += wmax[i]
                x &= x - 1
            budget = jcap - m
            drop = a & ~cb & ~forb_local
            if budget > 0 and drop != 0:
                s_sub[sp] = drop
                s_drop[sp] = drop
                s_budget[sp] = budget
                s_k[sp] = k
                s_a[sp] = a
                s_gain[sp] = gain
                s_wa[sp] = wa
                s_m[sp] = m
            path_k[depth] = k
            path_nat[depth] = a
            t = sp + 1
            s_rem[t] = rem & ~a
            s_jl[t] = jl - m
            s_cur[t] = cur + gain
            s_remw[t] = remw - wa
            s_depth[t] = depth + 1
            s_state[t] = 0
            sp = t
            pushed = True
            break
        if pushed:
            continue
        # 3. c stays unmelded: this frame becomes that child
        s_rem[sp] = rem & ~cb
        s_remw[sp] = remw - wmax[c]
        s_state[sp] = 0
    return best, best_n


@njit(cache=True)
def _dominates(k1, k2, cand_a, cand_gfix, gn, gj):
    """Candidate k1 is worth at least k2 in every search state (same naturals, jokers)."""
    a = cand_a[k1]
    if a & (a - 1) == 0:  # one natural: never decided before use, never dropped
        i = _lowbit(a)
        return cand_gfix[k1] + gn[k1, i] >= cand_gfix[k2] + gn[k2, i]
    if cand_gfix[k1] < cand_gfix[k2]:
        return False
    x = a
    while x:
        i = _lowbit(x)
        if gn[k1, i] < gn[k2, i] or gj[k1, i] < gj[k2, i]:
            return False
        x &= x - 1
    return True


_WS_ROWS = 32  # int64 scratch rows: 0..17 search stack, 18.. per-card arrays
_WS_COLS = 64  # >= 52 naturals + 2


@njit(cache=True)
def make_workspace(n_templates):
    """Scratch arrays for :func:`solve_ws` (reuse them across calls to skip allocation)."""
    ws_i = np.empty((_WS_ROWS, _WS_COLS), dtype=np.int64)
    ws_f = np.empty((2, _WS_COLS), dtype=np.float64)
    ws_cand = np.empty((6, n_templates), dtype=np.int64)
    slots = 64
    while slots < 2 * n_templates:
        slots *= 2
    ws_h = np.zeros((3, slots), dtype=np.int64)  # candidate hash: key, index, stamp
    ws_i[_WS_ROWS - 1, 0] = 0  # hash stamp
    ws_gn = np.empty((n_templates, NUM_FACES), dtype=np.int64)
    ws_gj = np.empty((n_templates, NUM_FACES), dtype=np.int64)
    ws_by = np.empty((NUM_FACES, n_templates), dtype=np.int32)
    return ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h


@njit(cache=True)
def solve_kernel(hand_mask, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, hand_value,
                 objective_code, forbidden, max_jokers, tiebreak, out_tmpl, out_nat):
    """Best arrangement of one hand; see the module docstring for the signature.

    Returns ``(n_melds, deadwood, credit)``; melds are written to ``out_tmpl[:n_melds]``
    (template ids) and ``out_nat[:n_melds]`` (natural-face bitmasks used by each meld).
    Allocates its scratch; loops should call :func:`solve_ws` with one
    :func:`make_workspace` instead.
    """
    ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h = make_workspace(tmpl_mask.shape[0])
    return solve_ws(hand_mask, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit,
                    hand_value, objective_code, forbidden, max_jokers, tiebreak, out_tmpl,
                    out_nat, ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)


@njit(cache=True)
def solve_ws(hand_mask, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, hand_value,
             objective_code, forbidden, max_jokers, tiebreak, out_tmpl, out_nat, ws_i, ws_f,
             ws_cand, ws_gn, ws_gj, ws_by, ws_h):
    """:func:`solve_kernel` with caller-owned scratch from :func:`make_workspace`."""
    hand = np.int64(hand_mask)
    forb = np.int64(forbidden)
    jokers = np.int64(jokers)
    maxj = np.int64(max_jokers)
    if maxj < 0:
        maxj = _NO_LIMIT
    jcap = jokers if jokers < maxj else maxj
    scale = np.int64(TIEBREAK_SCALE) if tiebreak else np.int64(1)
    jval = np.int64(hand_value[JOKER_FACE])

    # total hand value (for the deadwood of the answer)
    total = jokers * jval
    x = hand
    while x:
        total += hand_value[_lowbit(x)]
        x &= x - 1

    # candidate templates: at least one held natural, the missing faces fillable by jokers
    cand_t = ws_cand[0]
    cand_a = ws_cand[1]
    cand_mfix = ws_cand[2]
    cand_gfix = ws_cand[3]
    n_t = tmpl_mask.shape[0]
    n_c = 0
    meldable = np.int64(0)
    for t in range(n_t):
        tm = np.int64(tmpl_mask[t])
        inh = tm & hand
        if inh == 0:
            continue
        miss = tm & ~hand
        if miss & forb:
            continue
        if _popcount(miss) > jcap:
            continue
        cand_t[n_c] = t
        n_c += 1
        meldable |= inh

    n = _popcount(meldable)
    stack = ws_i[:18]
    loc = ws_i[18]
    wmax = ws_i[19]
    by_cnt = ws_i[20]
    local_face = ws_i[21]
    idx = ws_i[22]
    best_k = ws_i[23]
    best_nat = ws_i[24]
    cost = ws_f[0]
    key = ws_f[1]
    gn = ws_gn
    gj = ws_gj
    by_card = ws_by

    for f in range(NUM_FACES):
        loc[f] = -1
    x = meldable
    i = 0
    while x:
        f = _lowbit(x)
        loc[f] = i
        local_face[i] = f
        wmax[i] = 0
        by_cnt[i] = 0
        cost[i] = np.inf
        i += 1
        x &= x - 1
    forb_local = np.int64(0)
    x = meldable & forb
    while x:
        forb_local |= np.int64(1) << loc[_lowbit(x)]
        x &= x - 1

    jmax = np.int64(0)
    for k in range(n_c):
        t = cand_t[k]
        am = np.int64(0)
        mfix = np.int64(0)
        gfix = np.int64(0)
        for s in range(tmpl_len[t]):
            f = np.int64(tmpl_faces[t, s])
            cr = np.int64(tmpl_credit[t, s])
            g_j = _gain(jval, cr, objective_code, scale, tiebreak)
            if g_j > jmax:
                jmax = g_j
            li = loc[f]
            if li < 0:
                mfix += 1
                gfix += g_j
            else:
                am |= np.int64(1) << li
                g_n = _gain(np.int64(hand_value[f]), cr, objective_code, scale, tiebreak)
                gn[k, li] = g_n
                gj[k, li] = g_j
                if g_n > wmax[li]:
                    wmax[li] = g_n
        cand_a[k] = am
        cand_mfix[k] = mfix
        cand_gfix[k] = gfix

    # drop dominated candidates: same held naturals and joker count, no better gains
    # (for a single natural only the meld's total gain matters)
    alive = ws_cand[4]
    h_key = ws_h[0]
    h_idx = ws_h[1]
    h_stamp = ws_h[2]
    stamp = ws_i[_WS_ROWS - 1, 0] + 1
    ws_i[_WS_ROWS - 1, 0] = stamp
    hmask = h_key.shape[0] - 1
    for k in range(n_c):
        hk = cand_a[k] * 16 + cand_mfix[k]
        h = ((hk * 0x7F4A7C159E3779B1) >> 40) & hmask
        alive[k] = 1
        while h_stamp[h] == stamp:
            j = h_idx[h]
            if h_key[h] == hk and alive[j]:
                if _dominates(j, k, cand_a, cand_gfix, gn, gj):
                    alive[k] = 0
                    break
                if _dominates(k, j, cand_a, cand_gfix, gn, gj):
                    alive[j] = 0
            h = (h + 1) & hmask
        if alive[k]:
            h_stamp[h] = stamp
            h_key[h] = hk
            h_idx[h] = k

    prio = ws_cand[5]
    for k in range(n_c):
        if not alive[k]:
            continue
        am = cand_a[k]
        # joker cost per natural: this meld uses >= mfix jokers for <= popcount(am)
        # naturals, so each natural in it costs >= their ratio
        r = cand_mfix[k] / _popcount(am)
        # search order per card: more naturals first, then fewer jokers
        pk = _popcount(am) * 16 - cand_mfix[k]
        prio[k] = pk
        x = am
        while x:
            i = _lowbit(x)
            j = by_cnt[i]
            while j > 0 and prio[by_card[i, j - 1]] < pk:
                by_card[i, j] = by_card[i, j - 1]
                j -= 1
            by_card[i, j] = k
            by_cnt[i] += 1
            if r < cost[i]:
                cost[i] = r
            x &= x - 1
    if jcap == 0:
        jmax = 0
    remw = np.int64(0)
    zero_mask = np.int64(0)
    n_pos = 0
    for i in range(n):
        remw += wmax[i]
        if cost[i] == 0.0:
            zero_mask |= np.int64(1) << i
        else:
            # insertion sort by gain per joker, best first
            r = wmax[i] / cost[i]
            j = n_pos
            while j > 0 and key[j - 1] < r:
                key[j] = key[j - 1]
                idx[j] = idx[j - 1]
                j -= 1
            key[j] = r
            idx[j] = i
            n_pos += 1

    _, nm = _search(n, jokers, remw, maxj, cand_a, cand_mfix, cand_gfix, gn, gj, wmax,
                    by_card, by_cnt, forb_local, jmax, zero_mask, idx[:n_pos], cost, best_k,
                    best_nat, stack)

    # translate back to faces, and total up
    melded_value = np.int64(0)
    credit = np.int64(0)
    for q in range(nm):
        k = best_k[q]
        t = cand_t[k]
        nat = np.int64(0)
        x = best_nat[q]
        while x:
            f = local_face[_lowbit(x)]
            nat |= np.int64(1) << f
            melded_value += hand_value[f]
            x &= x - 1
        n_jok = np.int64(tmpl_len[t]) - _popcount(nat)
        melded_value += n_jok * jval
        for s in range(tmpl_len[t]):
            credit += tmpl_credit[t, s]
        out_tmpl[q] = t
        out_nat[q] = nat
    return nm, total - melded_value, credit


# ---------------------------------------------------------------------------------------
# joker-free fast path: set choice x per-suit run table


@njit(cache=True)
def _build_fast_tables(tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, tmpl_kind, tmpl_suit,
                       tmpl_rank, hand_value, objective_code):
    n_t = tmpl_mask.shape[0]
    scale = np.int64(1)
    tgain = np.zeros(n_t, dtype=np.int64)
    for t in range(n_t):
        g = np.int64(0)
        for s in range(tmpl_len[t]):
            g += _gain(np.int64(hand_value[tmpl_faces[t, s]]), np.int64(tmpl_credit[t, s]),
                       objective_code, scale, False)
        tgain[t] = g
    # sets by rank
    set_cnt = np.zeros(NUM_RANKS, dtype=np.int64)
    set_ids = np.full((NUM_RANKS, 16), -1, dtype=np.int64)
    for t in range(n_t):
        if tmpl_kind[t] == SET:
            r = tmpl_rank[t]
            set_ids[r, set_cnt[r]] = t
            set_cnt[r] += 1
    # per-suit run packing and hand value tables
    size = 1 << NUM_RANKS
    run_best = np.zeros((NUM_SUITS, size), dtype=np.int64)
    suit_value = np.zeros((NUM_SUITS, size), dtype=np.int64)
    for su in range(NUM_SUITS):
        shift = su * NUM_RANKS
        # run templates of this suit, as 13-bit masks, by each bit they hold
        cnt = np.zeros(NUM_RANKS, dtype=np.int64)
        lst = np.empty((NUM_RANKS, n_t), dtype=np.int64)
        for t in range(n_t):
            if tmpl_kind[t] == RUN and tmpl_suit[t] == su:
                m = (np.int64(tmpl_mask[t]) >> shift) & _SUIT_BITS
                x = m
                while x:
                    b = _lowbit(x)
                    lst[b, cnt[b]] = t
                    cnt[b] += 1
                    x &= x - 1
        for m in range(1, size):
            b = _lowbit(np.int64(m))
            rest = m & (m - 1)
            suit_value[su, m] = suit_value[su, rest] + hand_value[shift + b]
            best = run_best[su, rest]
            for q in range(cnt[b]):
                t = lst[b, q]
                rm = (np.int64(tmpl_mask[t]) >> shift) & _SUIT_BITS
                if rm & ~m:
                    continue
                v = tgain[t] + run_best[su, m & ~rm]
                if v > best:
                    best = v
            run_best[su, m] = best
    return run_best, suit_value, tgain, set_ids, set_cnt


@njit(cache=True)
def nojoker_gain_kernel(hand, tmpl_mask, run_best, tgain, set_ids, set_cnt):
    """Best total gain (see module docstring) of a joker-free hand; exact.

    ``run_best``, ``tgain``, ``set_ids``, ``set_cnt`` come from :func:`fast_tables`.
    """
    s0 = hand & _SUIT_BITS
    s1 = (hand >> 13) & _SUIT_BITS
    s2 = (hand >> 26) & _SUIT_BITS
    s3 = (hand >> 39) & _SUIT_BITS
    three = (s0 & s1 & (s2 | s3)) | ((s0 | s1) & s2 & s3)  # ranks held in >= 3 suits
    if three == 0:
        return run_best[0, s0] + run_best[1, s1] + run_best[2, s2] + run_best[3, s3]
    # per rank with >= 3 cards: option 0 = no set, else a held set template
    opt_mask = np.zeros((NUM_RANKS, 17), dtype=np.int64)
    opt_gain = np.zeros((NUM_RANKS, 17), dtype=np.int64)
    n_opt = np.zeros(NUM_RANKS, dtype=np.int64)
    nr = 0
    x = three
    while x:
        r = _lowbit(x)
        x &= x - 1
        no = 1
        for q in range(set_cnt[r]):
            t = set_ids[r, q]
            tm = np.int64(tmpl_mask[t])
            if tm & ~hand == 0:
                opt_mask[nr, no] = tm
                opt_gain[nr, no] = tgain[t]
                no += 1
        n_opt[nr] = no
        nr += 1
    idx = np.zeros(NUM_RANKS, dtype=np.int64)
    best = np.int64(-1) << 60
    while True:
        used = np.int64(0)
        g = np.int64(0)
        for j in range(nr):
            used |= opt_mask[j, idx[j]]
            g += opt_gain[j, idx[j]]
        h = hand & ~used
        g += (run_best[0, h & _SUIT_BITS] + run_best[1, (h >> 13) & _SUIT_BITS]
              + run_best[2, (h >> 26) & _SUIT_BITS] + run_best[3, (h >> 39) & _SUIT_BITS])
        if g > best:
            best = g
        j = 0
        while j < nr:
            idx[j] += 1
            if idx[j] < n_opt[j]:
                break
            idx[j] = 0
            j += 1
        if j == nr:
            break
    return best


@njit(cache=True)
def batch_kernel(hands, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, hand_value,
                 objective_code, forbidden, max_jokers, run_best, suit_value, tgain, set_ids,
                 set_cnt, out):
    """Optimal value per hand into ``out`` (deadwood, or points for OBJ_POINTS)."""
    out_tmpl = np.empty(NUM_FACES, dtype=np.int32)
    out_nat = np.empty(NUM_FACES, dtype=np.int64)
    ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h = make_workspace(tmpl_mask.shape[0])
    for b in range(hands.shape[0]):
        h = np.int64(hands[b])
        if jokers[b] == 0:
            g = nojoker_gain_kernel(h, tmpl_mask, run_best, tgain, set_ids, set_cnt)
            tv = (suit_value[0, h & _SUIT_BITS] + suit_value[1, (h >> 13) & _SUIT_BITS]
                  + suit_value[2, (h >> 26) & _SUIT_BITS]
                  + suit_value[3, (h >> 39) & _SUIT_BITS])
            if objective_code == OBJ_DEADWOOD:
                out[b] = tv - g
            else:
                out[b] = g - tv
        else:
            _, dw, cr = solve_ws(h, np.int64(jokers[b]), tmpl_mask, tmpl_len, tmpl_faces,
                                 tmpl_credit, hand_value, objective_code, forbidden,
                                 max_jokers, False, out_tmpl, out_nat, ws_i, ws_f, ws_cand,
                                 ws_gn, ws_gj, ws_by, ws_h)
            if objective_code == OBJ_DEADWOOD:
                out[b] = dw
            else:
                out[b] = cr - dw


# ---------------------------------------------------------------------------------------
# Python API


@dataclass(frozen=True)
class Arrangement:
    """A best arrangement.

    ``melds``: ``(template id, declared faces filled by jokers)`` per meld, the declared
    faces in template order. ``deadwood``: hand value of the unmelded cards. ``credit``:
    meld credit of the melded cards (jokers at their slot's credit). ``unmelded``: faces
    left in hand, ascending, ``52`` once per unmelded joker.
    """

    melds: tuple[tuple[int, tuple[int, ...]], ...]
    deadwood: int
    credit: int
    unmelded: tuple[int, ...]

    @property
    def points(self) -> int:
        return self.credit - self.deadwood


def hand_mask_of(faces) -> int:
    """Bitmask of natural faces (jokers, face 52, are skipped)."""
    mask = 0
    for f in faces:
        f = int(f)
        if f != JOKER_FACE:
            mask |= 1 << f
    return mask


def _objective_code(objective: str) -> int:
    try:
        return _OBJECTIVES[objective]
    except KeyError:
        raise ValueError(f"objective must be 'deadwood' or 'points', got {objective!r}") from None


def _values(hand_value) -> np.ndarray:
    values = np.ascontiguousarray(hand_value, dtype=np.int64)
    if values.shape != (NUM_FACES + 1,):
        raise ValueError(f"hand_value must have 53 entries (index 52 = joker), got {values.shape}")
    return values


def _check_hand(hand_mask: int, num_jokers: int) -> None:
    if not 0 <= int(hand_mask) < (1 << NUM_FACES):
        raise ValueError(f"hand_mask must be a bitmask of faces 0..51, got {hand_mask!r}")
    if not 0 <= int(num_jokers) <= 8:
        raise ValueError(f"num_jokers must be in 0..8, got {num_jokers!r}")


def best_arrangement(hand_mask: int, num_jokers: int, table: MeldTable, hand_value,
                     objective: str = "deadwood", forbidden_joker_faces: int = 0,
                     max_jokers_per_meld: int = -1) -> Arrangement:
    """Exact best arrangement of a hand (see the module docstring for rules and ties)."""
    _check_hand(hand_mask, num_jokers)
    code = _objective_code(objective)
    values = _values(hand_value)
    out_tmpl = np.empty(NUM_FACES, dtype=np.int32)
    out_nat = np.empty(NUM_FACES, dtype=np.int64)
    nm, deadwood, credit = solve_kernel(
        np.int64(hand_mask), np.int64(num_jokers), table.mask, table.length, table.faces,
        table.credit, values, np.int64(code), np.int64(forbidden_joker_faces),
        np.int64(max_jokers_per_meld), True, out_tmpl, out_nat)
    melds = []
    melded = 0
    jokers_used = 0
    for q in range(nm):
        t = int(out_tmpl[q])
        nat = int(out_nat[q])
        melded |= nat
        declared = tuple(f for f in table.template_faces(t) if not (nat >> f) & 1)
        jokers_used += len(declared)
        melds.append((t, declared))
    left = int(hand_mask) & ~melded
    unmelded = tuple(f for f in range(NUM_FACES) if (left >> f) & 1)
    unmelded += (JOKER_FACE,) * (int(num_jokers) - jokers_used)
    return Arrangement(tuple(melds), int(deadwood), int(credit), unmelded)


_FAST_CACHE: dict = {}


def fast_tables(table: MeldTable, hand_value, objective: str = "deadwood"):
    """``(run_best, suit_value, tgain, set_ids, set_cnt)`` for the joker-free fast path.

    Cached per (table, hand values, objective); ``run_best[s, m]`` is the best gain of runs
    inside the 13-bit rank mask ``m`` of suit ``s``, ``suit_value[s, m]`` its hand value.
    """
    code = _objective_code(objective)
    values = _values(hand_value)
    key = (id(table), values.tobytes(), code)
    hit = _FAST_CACHE.get(key)
    if hit is not None and hit[0] is table:
        return hit[1]
    tables = _build_fast_tables(table.mask, table.length, table.faces, table.credit,
                                table.kind, table.suit, table.rank, values, np.int64(code))
    for a in tables:
        a.setflags(write=False)
    if len(_FAST_CACHE) > 64:
        _FAST_CACHE.clear()
    _FAST_CACHE[key] = (table, tables)
    return tables


def best_deadwood_batch(hand_masks, num_jokers, table: MeldTable, hand_value,
                        objective: str = "deadwood", forbidden_joker_faces: int = 0,
                        max_jokers_per_meld: int = -1) -> np.ndarray:
    """Optimal deadwood (or optimal points for ``objective="points"``) per hand, int32[B].

    ``hand_masks`` uint64[B] natural-face bitmasks, ``num_jokers`` int[B] (or a scalar).
    ``forbidden_joker_faces`` and ``max_jokers_per_meld`` apply to every hand.
    """
    hands = np.ascontiguousarray(hand_masks, dtype=np.uint64).reshape(-1)
    jok = np.array(np.broadcast_to(np.asarray(num_jokers, dtype=np.int8), hands.shape),
                   dtype=np.int8, copy=True)
    if hands.size and (int(hands.max()) >> NUM_FACES):
        raise ValueError("hand masks must only use bits 0..51")
    if jok.size and (jok.min() < 0 or jok.max() > 8):
        raise ValueError("num_jokers must be in 0..8")
    code = _objective_code(objective)
    values = _values(hand_value)
    run_best, suit_value, tgain, set_ids, set_cnt = fast_tables(table, values, objective)
    out = np.empty(hands.shape[0], dtype=np.int32)
    batch_kernel(hands, jok, table.mask, table.length, table.faces, table.credit, values,
                 np.int64(code), np.int64(forbidden_joker_faces), np.int64(max_jokers_per_meld),
                 run_best, suit_value, tgain, set_ids, set_cnt, out)
    return out
