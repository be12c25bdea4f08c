"""Exact best-arrangement solver: which melds to form from a hand, compiled with numba.

A one-deck hand is a set of natural faces (bitmask, bit ``f`` = face ``f`` of :mod:`cards`)
plus a number of jokers. A two-deck hand may hold a face twice: it is two bitmasks,
``once`` (faces held at least once) and ``twice`` (faces held twice, a subset of ``once``),
see :class:`MultisetHand`. An *arrangement* is a list of melds; each meld is a template of
a :class:`~melds.MeldTable` whose faces are supplied partly by naturals from the hand and
partly by jokers, each joker declared as the template face it fills. A meld takes one copy
of each natural it uses, so the two copies of a face can sit in two different melds.

Rules of a meld (MR-5, and what the callers pass in):

* at least one natural card per meld (no meld of jokers only);
* a joker fills a template face that no natural *of the same meld* supplies; that face
  must not be in ``forbidden_joker_faces`` (e.g. faces already face up on the table).
  A joker may stand for a face that the hand holds but uses elsewhere or keeps
  (MR-5 only forbids cards face up on the table and duplicates inside the meld);
  declared faces are not checked *across* melds of one arrangement -- pass the faces the
  caller wants excluded in ``forbidden_joker_faces``;
* at most ``max_jokers_per_meld`` jokers per meld (-1: no limit);
* a meld with 2+ jokers holds at least ``min_naturals`` naturals (German GE-3: 2; the
  Python API reads ``table.rules.min_naturals_with_two_jokers``, 0 for Mountain and Gin);
* optionally, one meld must use ``required_face`` as a natural (German GE-5: a discard
  taken before opening must go into the opening).

Objectives (``hand_value[53]`` gives the in-hand value of each face, index 52 = joker):

* ``"deadwood"``: minimise the hand value of the unmelded cards; ties are broken by the
  larger meld credit (:func:`best_arrangement` only; the optimum value is unaffected).
* ``"points"``: maximise meld credit - deadwood (MR-12 standard points of a hand laid
  down in full); the credit of a melded card is ``table.credit`` of its template slot, a
  joker earning the credit of the slot it fills; ties broken by the smaller deadwood.
* ``"credit"``: maximise meld credit alone (German GE-5: can melds worth >= 40 still be
  laid from this hand?); ties broken by the smaller deadwood.

All objectives are "maximise the sum of per-card gains of melded cards": a melded card
gains its hand value (deadwood), its hand value + slot credit (points) or its slot credit.

Compiled entry points (usable from other ``@njit`` code; arrays are the MeldTable's own):

``solve_kernel(hand_mask, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit,
hand_value, objective_code, forbidden, max_jokers, tiebreak, out_tmpl, out_nat)``
    ``hand_mask`` int64/uint64 natural-face bitmask (bits 0..51), ``jokers`` int (0..),
    ``tmpl_mask`` uint64[T], ``tmpl_len`` int8[T], ``tmpl_faces`` int8[T, 14],
    ``tmpl_credit`` int16[T, 14], ``hand_value`` int64[53], ``objective_code``
    (:data:`OBJ_DEADWOOD` 0, :data:`OBJ_POINTS` 1, :data:`OBJ_CREDIT` 2), ``forbidden``
    int64 face bitmask, ``max_jokers`` (-1 = no limit), ``tiebreak`` bool, ``out_tmpl``
    int32[>=popcount(hand)] and ``out_nat`` int64[>=popcount(hand)] receive per meld the
    template id and the bitmask of the naturals it uses (its joker faces are
    ``tmpl_mask & ~out_nat``).
    Returns ``(n_melds, deadwood, credit)`` as int64s.

``solve_ws(... same arguments ..., ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)``
    the same with caller-owned scratch: ``make_workspace(n_templates)`` returns that tuple
    once; reuse it in loops (``solve_kernel`` allocates it per call, about 1 us).

``solve_multiset_ws(once, twice, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit,
hand_value, objective_code, forbidden, max_jokers, min_naturals, required_face, tiebreak,
out_tmpl, out_nat, ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)``
    any hand: ``twice`` the faces held twice, ``min_naturals`` (0 = no rule),
    ``required_face`` (-1 = none); ``out_*`` hold up to 2 x 52 melds. Returns
    ``(n_melds, deadwood, credit)``, or ``(-1, hand value, 0)`` when no arrangement melds
    ``required_face``. ``solve_ws`` is the one-deck case (``twice = 0``, ``min_naturals =
    0``, ``required_face = -1``), compiled without the multiset work.

``batch_kernel(hands, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, hand_value,
objective_code, forbidden, max_jokers, run_best, suit_value, tgain, set_ids, set_cnt, out)``
    a loop over one-deck hands; the five tables come from :func:`fast_tables`.
    ``nojoker_gain_kernel`` is its joker-free fast path. ``multiset_batch_kernel(once,
    twice, jokers, ..., max_jokers, min_naturals, run_best, ...)`` is the loop behind
    :func:`best_deadwood_batch` and :func:`best_deadwood_batch_multiset`.

Numba notes: the kernels are not recursive (numba's on-disk cache and recursion crash
together) and the bit helpers are plain overloads (``inline="always"`` miscompiled here).

Algorithm. Templates are scanned with bitmask tests (``popcount(mask & ~hand) <= jokers``)
to collect candidate melds; naturals in no candidate are deadwood outright; a candidate no
better than another with the same held naturals and joker count is dropped. A depth-first
search (explicit stack) then decides the lowest undecided natural: unmelded, or the lowest
natural of one candidate meld (optionally leaving some of that template's other held
naturals out, a joker taking their face). A face held twice is one search card with two
undecided copies: a meld takes one, "unmelded" takes all that are left (the copies are
interchangeable, so melding copies first loses nothing). Branch-and-bound: gain so far +
jokers left x best joker gain + a fractional knapsack over the undecided copies, natural
``i`` costing at least ``min(jokers / naturals)`` over its candidates. Joker-free one-deck
hands in the batch use a faster exact method: choose the sets (per rank with >= 3 cards:
none / each held set template), then the best run packing of each suit is a lookup in a
4 x 8192 table precomputed per rule set (runs never need a choice once the sets are fixed).
The bound ignores the two-joker rule and the required face (it only gets looser), so it
stays an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numba import njit
from numba.extending import intrinsic, overload
from numba.cpython.unsafe.numbers import trailing_zeros

from .cards import JOKER_FACE, NUM_FACES, NUM_RANKS, NUM_SUITS, face_text
from .melds import RUN, SET, MeldTable

__all__ = [
    "OBJ_DEADWOOD",
    "OBJ_POINTS",
    "OBJ_CREDIT",
    "Arrangement",
    "MultisetHand",
    "best_arrangement",
    "best_arrangement_multiset",
    "best_deadwood_batch",
    "best_deadwood_batch_multiset",
    "hand_mask_of",
    "solve_kernel",
    "solve_ws",
    "solve_multiset_ws",
    "make_workspace",
    "batch_kernel",
    "multiset_batch_kernel",
    "fast_tables",
    "nojoker_gain_kernel",
]

OBJ_DEADWOOD = 0
OBJ_POINTS = 1
OBJ_CREDIT = 2
_OBJECTIVES = {"deadwood": OBJ_DEADWOOD, "points": OBJ_POINTS, "credit": OBJ_CREDIT}
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
    elif objective_code == OBJ_POINTS:
        g = (credit + value) * scale
        if tiebreak:
            g += value
    else:
        g = credit * scale
        if tiebreak:
            g += value
    return g


# ---------------------------------------------------------------------------------------
# general solver: candidate scan + branch-and-bound DFS


@njit(cache=True)
def _search(n, twice, jokers, remw0, maxj, minnat, req, req_twice, cand_a, cand_mfix,
            cand_gfix, gn, gj, wmax, by_card, by_cnt, forb_local, jmax, zero_mask, order, cost,
            best_k, best_nat, stack, multi):
    """Branch-and-bound DFS (explicit stack) over the lowest undecided local card.

    Local cards are the ``n`` meldable faces; ``twice`` marks those held twice. A state
    keeps two layers, ``rem`` (faces with an undecided copy) and ``rem2`` (faces with two),
    so a meld takes one copy of each face it uses: ``rem' = rem & ~used | rem2 & used``,
    ``rem2' = rem2 & ~used``. The copies are interchangeable, so "the lowest card stays
    unmelded" leaves all its undecided copies unmelded (a copy that melds is decided first).
    With ``twice == 0`` this is the one-deck search.

    A meld with 2+ jokers needs ``minnat`` naturals (0: no such rule). ``req`` >= 0: local
    face that one meld must use as a natural (the hand holds it ``1 + req_twice`` times).
    ``multi`` is a compile-time constant: False compiles the one-deck search, which ignores
    ``twice``, ``minnat`` and ``req``.

    Bound: gain so far + jokers left * best joker gain + a fractional knapsack over the
    undecided naturals, where natural ``i`` costs at least ``cost[i]`` jokers to meld
    (``zero_mask``: cost 0; ``order``: the others by gain per joker, best first).

    Returns ``(best gain, number of melds)``, best gain -1 when no arrangement uses ``req``;
    the melds go to ``best_k`` (candidate index) and ``best_nat`` (local bitmask of the
    naturals each meld uses). ``stack`` is scratch, int64[>= 19, >= number of cards + 2].
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
    s_rem2 = stack[18]
    best = np.int64(-1)
    best_n = np.int64(0)

    sp = 0
    s_rem[0] = (np.int64(1) << n) - 1
    if multi:
        s_rem2[0] = twice
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
            rem2 = np.int64(0)
            if multi:
                rem2 = s_rem2[sp]
            x = rem & zero_mask
            while x:
                ub += wmax[_lowbit(x)]
                x &= x - 1
            x = rem2 & zero_mask
            while x:
                ub += wmax[_lowbit(x)]
                x &= x - 1
            budget = np.float64(jl)
            frac = 0.0
            for q in range(order.shape[0]):
                i = order[q]
                if (rem >> i) & 1:
                    copies = 1 + ((rem2 >> i) & 1)
                    if cost[i] * copies <= budget:
                        budget -= cost[i] * copies
                        ub += wmax[i] * copies
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
        rem2 = np.int64(0)
        if multi:
            rem2 = s_rem2[sp]
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
                if multi and s_m[sp] + nd >= 2 and _popcount(s_a[sp]) - nd < minnat:
                    continue
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
                s_rem[t] = (rem & ~used) | (rem2 & used)
                if multi:
                    s_rem2[t] = rem2 & ~used
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
            if multi and m >= 2 and _popcount(a) < minnat:
                continue
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
            s_rem[t] = (rem & ~a) | (rem2 & a)
            if multi:
                s_rem2[t] = rem2 & ~a
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
        # 3. c stays unmelded, all its undecided copies: this frame becomes that child
        # (not the required face while none of its copies has melded)
        if multi and c == req and ((rem2 >> c) & 1) == req_twice:
            sp -= 1
            continue
        s_rem[sp] = rem & ~cb
        if multi:
            s_rem2[sp] = rem2 & ~cb
        s_remw[sp] = remw - wmax[c] * (1 + ((rem2 >> c) & 1))
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


_WS_ROWS = 32  # int64 scratch rows: 0..18 search stack, 19.. per-card arrays
_WS_COLS = 112  # >= 104 natural cards (two decks) + 2 for the stack


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
def solve_multiset_ws(once, twice, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit,
                      hand_value, objective_code, forbidden, max_jokers, min_naturals,
                      required_face, tiebreak, out_tmpl, out_nat, ws_i, ws_f, ws_cand, ws_gn,
                      ws_gj, ws_by, ws_h):
    """Best arrangement of a multiset hand; see the module docstring for the signature.

    Returns ``(n_melds, deadwood, credit)``, or ``(-1, hand value, 0)`` when no arrangement
    melds ``required_face``.
    """
    return solve_ws(once, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, hand_value,
                    objective_code, forbidden, max_jokers, tiebreak, out_tmpl, out_nat, ws_i,
                    ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h, twice, min_naturals,
                    required_face, True)


@njit(cache=True)
def solve_ws(hand_mask, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit, hand_value,
             objective_code, forbidden, max_jokers, tiebreak, out_tmpl, out_nat, ws_i, ws_f,
             ws_cand, ws_gn, ws_gj, ws_by, ws_h, twice=0, min_naturals=0, required_face=-1,
             multi=False):
    """:func:`solve_kernel` with caller-owned scratch from :func:`make_workspace`.

    The trailing arguments belong to :func:`solve_multiset_ws` (call that instead). Left
    out, ``multi`` is a compile-time False and this compiles to the one-deck solver, which
    ignores ``twice``, ``min_naturals`` and ``required_face``; the one-deck loops call it
    directly because a further call layer costs a one-deck hand about 5%.
    """
    hand = np.int64(hand_mask)
    hand2 = np.int64(0)
    if multi:
        hand2 = np.int64(twice) & hand
    forb = np.int64(forbidden)
    jokers = np.int64(jokers)
    minnat = np.int64(min_naturals)
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
    x = hand2
    while x:
        total += hand_value[_lowbit(x)]
        x &= x - 1

    # candidate templates: at least one held natural, the missing faces fillable by jokers
    # (two or more missing faces need min_naturals held ones)
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
        n_miss = _popcount(miss)
        if n_miss > jcap:
            continue
        if multi and n_miss >= 2 and _popcount(inh) < minnat:
            continue
        cand_t[n_c] = t
        n_c += 1
        meldable |= inh
    required = np.int64(-1)
    if multi:
        required = np.int64(required_face)
    if required >= 0 and not (meldable >> required) & 1:
        return np.int64(-1), total, np.int64(0)

    n = _popcount(meldable)
    stack = ws_i[:19]
    loc = ws_i[19]
    wmax = ws_i[20]
    by_cnt = ws_i[21]
    local_face = ws_i[22]
    idx = ws_i[23]
    best_k = ws_i[24]
    best_nat = ws_i[25]
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
    twice_local = np.int64(0)
    x = meldable & hand2
    while x:
        twice_local |= np.int64(1) << loc[_lowbit(x)]
        x &= x - 1
    req = np.int64(-1)
    req_twice = np.int64(0)
    if required >= 0:
        req = loc[required]
        req_twice = (hand2 >> required) & 1

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
        remw += wmax[i] * (1 + ((twice_local >> i) & 1))
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

    best, nm = _search(n, twice_local, jokers, remw, maxj, minnat, req, req_twice, cand_a,
                       cand_mfix, cand_gfix, gn, gj, wmax, by_card, by_cnt, forb_local, jmax,
                       zero_mask, idx[:n_pos], cost, best_k, best_nat, stack, multi)
    if best < 0:
        return np.int64(-1), total, np.int64(0)

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
    """Optimal value per one-deck hand into ``out`` (deadwood, points or credit)."""
    multiset_batch_kernel(hands, np.zeros_like(hands), jokers, tmpl_mask, tmpl_len,
                          tmpl_faces, tmpl_credit, hand_value, objective_code, forbidden,
                          max_jokers, 0, run_best, suit_value, tgain, set_ids, set_cnt, out)


@njit(cache=True)
def multiset_batch_kernel(once, twice, jokers, tmpl_mask, tmpl_len, tmpl_faces, tmpl_credit,
                          hand_value, objective_code, forbidden, max_jokers, min_naturals,
                          run_best, suit_value, tgain, set_ids, set_cnt, out):
    """Optimal value per multiset hand into ``out``; hands with no joker and no face twice
    take the joker-free fast path."""
    out_tmpl = np.empty(2 * NUM_FACES, dtype=np.int32)
    out_nat = np.empty(2 * NUM_FACES, dtype=np.int64)
    ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h = make_workspace(tmpl_mask.shape[0])
    for b in range(once.shape[0]):
        h = np.int64(once[b])
        h2 = np.int64(twice[b])
        if jokers[b] == 0 and h2 == 0:
            g = nojoker_gain_kernel(h, tmpl_mask, run_best, tgain, set_ids, set_cnt)
            tv = (suit_value[0, h & _SUIT_BITS] + suit_value[1, (h >> 13) & _SUIT_BITS]
                  + suit_value[2, (h >> 26) & _SUIT_BITS]
                  + suit_value[3, (h >> 39) & _SUIT_BITS])
            if objective_code == OBJ_DEADWOOD:
                out[b] = tv - g
            elif objective_code == OBJ_POINTS:
                out[b] = g - tv
            else:
                out[b] = g
        else:
            if h2 == 0 and min_naturals == 0:  # the one-deck search
                _, dw, cr = solve_ws(h, np.int64(jokers[b]), tmpl_mask, tmpl_len, tmpl_faces,
                                     tmpl_credit, hand_value, objective_code, forbidden,
                                     max_jokers, False, out_tmpl, out_nat, ws_i, ws_f, ws_cand,
                                     ws_gn, ws_gj, ws_by, ws_h)
            else:
                _, dw, cr = solve_multiset_ws(h, h2, np.int64(jokers[b]), tmpl_mask, tmpl_len,
                                              tmpl_faces, tmpl_credit, hand_value,
                                              objective_code, forbidden, max_jokers,
                                              min_naturals, -1, False, out_tmpl, out_nat, ws_i,
                                              ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)
            if objective_code == OBJ_DEADWOOD:
                out[b] = dw
            elif objective_code == OBJ_POINTS:
                out[b] = cr - dw
            else:
                out[b] = cr


# ---------------------------------------------------------------------------------------
# Python API


@dataclass(frozen=True)
class Arrangement:
    """A best arrangement.

    ``melds``: ``(template id, declared faces filled by jokers)`` per meld, the declared
    faces in template order. ``deadwood``: hand value of the unmelded cards. ``credit``:
    meld credit of the melded cards (jokers at their slot's credit). ``unmelded``: faces
    left in hand, ascending (a face twice when both its copies stay), ``52`` once per
    unmelded joker.
    """

    melds: tuple[tuple[int, tuple[int, ...]], ...]
    deadwood: int
    credit: int
    unmelded: tuple[int, ...]

    @property
    def points(self) -> int:
        return self.credit - self.deadwood


MAX_COPIES = 2            # two decks: a face is held at most twice
MAX_MULTISET_JOKERS = 4   # two decks bring four jokers


class MultisetHand(NamedTuple):
    """A hand that may hold a face twice: ``once`` is the bitmask of the faces held at least
    once, ``twice`` of those held twice (a subset of ``once``), ``jokers`` the joker count."""

    once: int
    twice: int
    jokers: int

    @classmethod
    def of(cls, faces) -> MultisetHand:
        """From card faces with repeats, 52 for a joker: ``MultisetHand.of([19, 19, 52])``."""
        counts = np.zeros(NUM_FACES + 1, dtype=np.int64)
        for f in faces:
            f = int(f)
            if not 0 <= f <= JOKER_FACE:
                raise ValueError(f"a face is 0..51 or 52 for a joker, got {f}")
            counts[f] += 1
        return cls.from_counts(counts)

    @classmethod
    def from_counts(cls, counts) -> MultisetHand:
        """From copies per face: 52 entries, or 53 with the joker count last."""
        counts = np.asarray(counts)
        if counts.shape not in ((NUM_FACES,), (NUM_FACES + 1,)):
            raise ValueError(f"counts must have 52 or 53 entries, got shape {counts.shape}")
        jokers = int(counts[JOKER_FACE]) if len(counts) > NUM_FACES else 0
        naturals = counts[:NUM_FACES].astype(np.int64)
        if naturals.min() < 0 or jokers < 0:
            raise ValueError("counts must not be negative")
        over = np.flatnonzero(naturals > MAX_COPIES)
        if over.size:
            f = int(over[0])
            raise ValueError(f"{face_text(f)} is held {naturals[f]} times; two decks hold "
                             f"at most {MAX_COPIES} copies of a face")
        if jokers > MAX_MULTISET_JOKERS:
            raise ValueError(f"{jokers} jokers; two decks hold at most {MAX_MULTISET_JOKERS}")
        once = sum(1 << int(f) for f in np.flatnonzero(naturals >= 1))
        twice = sum(1 << int(f) for f in np.flatnonzero(naturals >= 2))
        return cls(once, twice, jokers)

    def counts(self) -> np.ndarray:
        """Copies per face, int64[53], the joker count last."""
        once, twice = int(self.once), int(self.twice)
        counts = np.zeros(NUM_FACES + 1, dtype=np.int64)
        for f in range(NUM_FACES):
            counts[f] = ((once >> f) & 1) + ((twice >> f) & 1)
        counts[JOKER_FACE] = self.jokers
        return counts


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
        raise ValueError(f"objective must be one of {sorted(_OBJECTIVES)}, got {objective!r}") \
            from None


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


def _check_multiset(hand: MultisetHand) -> None:
    _check_hand(hand.once, 0)
    if int(hand.twice) & ~int(hand.once):
        raise ValueError("a face held twice must also be in once (twice is a subset of once)")
    if not 0 <= int(hand.jokers) <= MAX_MULTISET_JOKERS:
        raise ValueError(f"jokers must be in 0..{MAX_MULTISET_JOKERS}, got {hand.jokers!r}")


def _arrangement(hand: MultisetHand, table: MeldTable, hand_value, objective: str,
                 forbidden_joker_faces: int, max_jokers_per_meld: int,
                 required_face: int) -> Arrangement | None:
    code = _objective_code(objective)
    values = _values(hand_value)
    out_tmpl = np.empty(2 * NUM_FACES, dtype=np.int32)
    out_nat = np.empty(2 * NUM_FACES, dtype=np.int64)
    min_naturals = table.rules.min_naturals_with_two_jokers
    if hand.twice == 0 and min_naturals == 0 and required_face < 0:  # the one-deck search
        nm, deadwood, credit = solve_kernel(
            np.int64(hand.once), np.int64(hand.jokers), table.mask, table.length, table.faces,
            table.credit, values, np.int64(code), np.int64(forbidden_joker_faces),
            np.int64(max_jokers_per_meld), True, out_tmpl, out_nat)
    else:
        nm, deadwood, credit = solve_multiset_ws(
            np.int64(hand.once), np.int64(hand.twice), np.int64(hand.jokers), table.mask,
            table.length, table.faces, table.credit, values, np.int64(code),
            np.int64(forbidden_joker_faces), np.int64(max_jokers_per_meld),
            np.int64(min_naturals), np.int64(required_face), True, out_tmpl, out_nat,
            *make_workspace(table.num_templates))
    if nm < 0:
        return None
    left = hand.counts()
    melds = []
    for q in range(nm):
        t = int(out_tmpl[q])
        nat = int(out_nat[q])
        declared = tuple(f for f in table.template_faces(t) if not (nat >> f) & 1)
        for f in table.template_faces(t):
            left[f] -= (nat >> f) & 1
        left[JOKER_FACE] -= len(declared)
        melds.append((t, declared))
    unmelded = tuple(f for f in range(NUM_FACES + 1) for _ in range(left[f]))
    return Arrangement(tuple(melds), int(deadwood), int(credit), unmelded)


def best_arrangement(hand_mask: int, num_jokers: int, table: MeldTable, hand_value,
                     objective: str = "deadwood", forbidden_joker_faces: int = 0,
                     max_jokers_per_meld: int = -1) -> Arrangement:
    """Exact best arrangement of a one-deck hand (see the module docstring for rules and
    ties); ``table.rules.min_naturals_with_two_jokers`` applies."""
    _check_hand(hand_mask, num_jokers)
    return _arrangement(MultisetHand(int(hand_mask), 0, int(num_jokers)), table, hand_value,
                        objective, forbidden_joker_faces, max_jokers_per_meld, -1)


def best_arrangement_multiset(hand, table: MeldTable, hand_value, objective: str = "deadwood",
                              forbidden_joker_faces: int = 0, max_jokers_per_meld: int = -1,
                              required_face: int | None = None) -> Arrangement | None:
    """Exact best arrangement of a hand that may hold a face twice (two decks).

    ``hand``: a :class:`MultisetHand`, or card faces with repeats (52 = joker). With
    ``required_face`` one meld must use that natural (GE-5: a taken discard); ``None`` is
    returned when no arrangement can. ``table.rules.min_naturals_with_two_jokers`` applies.
    """
    if not isinstance(hand, MultisetHand):
        hand = MultisetHand.of(hand)
    _check_multiset(hand)
    required = -1 if required_face is None else int(required_face)
    if required_face is not None and not (0 <= required < NUM_FACES
                                          and (int(hand.once) >> required) & 1):
        raise ValueError(f"required_face {required_face!r} is not a natural face of the hand")
    return _arrangement(hand, table, hand_value, objective, forbidden_joker_faces,
                        max_jokers_per_meld, required)


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


def _run_batch(once, twice, jokers, table: MeldTable, hand_value, objective: str,
               forbidden_joker_faces: int, max_jokers_per_meld: int) -> np.ndarray:
    code = _objective_code(objective)
    values = _values(hand_value)
    run_best, suit_value, tgain, set_ids, set_cnt = fast_tables(table, values, objective)
    out = np.empty(once.shape[0], dtype=np.int32)
    multiset_batch_kernel(once, twice, jokers, table.mask, table.length, table.faces,
                          table.credit, values, np.int64(code), np.int64(forbidden_joker_faces),
                          np.int64(max_jokers_per_meld),
                          np.int64(table.rules.min_naturals_with_two_jokers), run_best,
                          suit_value, tgain, set_ids, set_cnt, out)
    return out


def _batch_jokers(num_jokers, shape, most: int) -> np.ndarray:
    jok = np.array(np.broadcast_to(np.asarray(num_jokers, dtype=np.int8), shape),
                   dtype=np.int8, copy=True)
    if jok.size and (jok.min() < 0 or jok.max() > most):
        raise ValueError(f"num_jokers must be in 0..{most}")
    return jok


def _batch_masks(masks, name: str) -> np.ndarray:
    hands = np.ascontiguousarray(masks, dtype=np.uint64).reshape(-1)
    if hands.size and (int(hands.max()) >> NUM_FACES):
        raise ValueError(f"{name} must only use bits 0..51")
    return hands


def best_deadwood_batch(hand_masks, num_jokers, table: MeldTable, hand_value,
                        objective: str = "deadwood", forbidden_joker_faces: int = 0,
                        max_jokers_per_meld: int = -1) -> np.ndarray:
    """Optimal deadwood (or optimal points / credit, see ``objective``) per hand, int32[B].

    ``hand_masks`` uint64[B] natural-face bitmasks, ``num_jokers`` int[B] (or a scalar).
    ``forbidden_joker_faces`` and ``max_jokers_per_meld`` apply to every hand.
    """
    hands = _batch_masks(hand_masks, "hand masks")
    jok = _batch_jokers(num_jokers, hands.shape, 8)
    return _run_batch(hands, np.zeros_like(hands), jok, table, hand_value, objective,
                      forbidden_joker_faces, max_jokers_per_meld)


def best_deadwood_batch_multiset(once, twice, num_jokers, table: MeldTable, hand_value,
                                 objective: str = "deadwood", forbidden_joker_faces: int = 0,
                                 max_jokers_per_meld: int = -1) -> np.ndarray:
    """:func:`best_deadwood_batch` for hands that may hold a face twice: ``once[b]`` /
    ``twice[b]`` are the :class:`MultisetHand` layers of hand ``b``, ``num_jokers`` 0..4."""
    once = _batch_masks(once, "once")
    twice = _batch_masks(twice, "twice")
    if once.shape != twice.shape:
        raise ValueError(f"once and twice differ in length: {once.shape} vs {twice.shape}")
    if np.any(twice & ~once):
        raise ValueError("a face held twice must also be in once (twice is a subset of once)")
    jok = _batch_jokers(num_jokers, once.shape, MAX_MULTISET_JOKERS)
    return _run_batch(once, twice, jok, table, hand_value, objective, forbidden_joker_faces,
                      max_jokers_per_meld)
