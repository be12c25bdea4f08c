"""German Rummy / Rommé rules (docs/german_rummy.md) as compiled functions over state records,
with options that make them Crazy Rummy's (docs/crazy_rummy.md).

The same entry points as :mod:`.rules` (``new_game``, ``start_hand``, ``next_hand``,
``legal_mask``, ``apply_action``) over Mountain's record plus two German fields
(:func:`german_state_dtype`), for 2-6 seats and the two-deck, four-joker deck. Dealing,
shuffling, the hand and table views and the table moves are the shared building blocks of
:mod:`.rules`; what is German lives here:

* the GE-5 opening: melds before a seat has opened count toward the turn's total
  (``open_total``); a meld is offered only while 40 stays reachable
  (:func:`opening_reachable`), and the seat has opened once the total reaches 40 with the
  taken discard (if any) used;
* GE-6 joker exchange (``swap``) and the freed joker's meld;
* GE-7 going out, GE-8 the one stock rebuild, GE-9 scoring, one hand per seat as dealer.

``placed_before[p]`` means "seat p has opened"; ``obligation`` is the taken discard an
unopened seat must use in its opening, or the freed joker an opened seat must meld next.

The rule options of :class:`GermanSpec` (German Rummy's values keep German's rules) turn
these into Crazy Rummy's: no opening minimum (the first meld opens, and the top discard may
always be taken), wilds in any number and alone (CR-2), no freed-joker obligation, going out
only by a final discard and a lone card drawn from the stock (CR-4), no stock rebuild (CR-5),
the deal of CR-1, one deck's faces shown once on the table (decision D3) and a wild rank
that follows the round (``s.wild_rank``, :func:`.rules.card_face_now`).
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np
from numba import njit

from ..cards import JOKER_FACE, NUM_RANKS
from ..solver import OBJ_CREDIT, _lowbit, make_workspace, solve_multiset_ws
from .batch import register_kernels
from .rules import (
    apply_layoff, apply_meld, begin_game, card_face_now, deal, draw_stock, end_face,
    hand_counts, hand_mask_bits, hand_size_of, hand_view, is_wild, layoff_card, layoff_position,
    leave_hand, meld_buffers, place_on_table, popcount, random_below, resolve_meld,
    shuffle_deck, SET,
)
from .spec import Spec
from .state import (
    END_EXHAUSTED, END_WENT_OUT, EVENT_GAME_OVER, EVENT_HAND_OVER, EVENT_NONE, LOC_DISCARD,
    LOC_HAND, LOC_STOCK, LOC_TABLE, MELD_EMPTY, MELD_WIDTH, PHASE_DRAW, PHASE_GAME_OVER,
    PHASE_HAND_OVER, PHASE_PLAY, state_dtype,
)

MAX_CLEAR_DEPTH = 0         # no MR-7 dead-end search (Game sizes its scratch from rules)
MAX_OPENING_MELDS = 8       # melds one opening search stacks (14 cards make at most 4)

# Observation scalars German adds (docs/observation.md): what the player to move has melded
# toward its opening this turn (/ 40), and whether the stock was rebuilt (GE-8). Crazy Rummy
# writes its own two in the same places: the round / 13 and the wild rank (A 0 ... K 1).
VARIANT_SCALAR_NAMES = ("opening_total", "stock_rebuilt")
CRAZY_SCALAR_NAMES = ("round", "wild_rank")

GERMAN_FIELDS = [
    ("open_total", np.int16),  # GE-5: credit the player to move has melded this turn before opening
    ("rebuilt", np.int8),      # GE-8: the stock was rebuilt from the discard pile this hand
]


def german_state_dtype(num_cards: int, max_melds: int, max_seats: int) -> np.dtype:
    """Mountain's record layout plus :data:`GERMAN_FIELDS`, per-seat fields sized for ``max_seats``."""
    return np.dtype(state_dtype(num_cards, max_melds, max_seats).descr + GERMAN_FIELDS)


GermanSpec = NamedTuple("GermanSpec", [
    *Spec.__annotations__.items(),
    ("open_min", int),             # GE-5: 40
    ("a_swap", int),               # + meld slot * 52 + face (GE-6)
    ("t_credit", np.ndarray),      # (T, 14) credit per template slot (the solver's table)
    ("t_total", np.ndarray),       # (T,) credit of the whole template
    ("solver_values", np.ndarray), # (53,) int64 hand values, as the solver takes them
    ("min_naturals", int),         # GE-3: a meld with no natural or two or more jokers holds this
                                   # many naturals (Crazy 0: wilds in any number, even alone, CR-2)
    # rule options: German's value first, then Crazy Rummy's (docs/crazy_rummy.md); open_min
    # 0 (CR-3) also drops GE-5's rule on taking the top discard before opening
    ("freed_joker_melds", bool),   # GE-6: a swapped-out joker must go into a new meld; CR-3: free
    ("out_by_discard", bool),      # CR-4: no placement may empty the hand (German: GE-7 allows it)
    ("lone_card_draws", bool),     # CR-4: a seat holding one card may not take the top discard
    ("rebuild_stock", bool),       # GE-8 rebuild; CR-5: the turn that drew the last card ends the hand
    ("extra_card_first", bool),    # CR-1: no up-card; the seat after the dealer gets it and plays
    ("faces_once", bool),          # Crazy D3: one deck, so no face shows twice on the table
    ("first_wild", int),           # CR-1: the first hand's wild rank (round - 1); -1 none (German)
])
GermanSpec.__module__ = __name__


# --------------------------------------------------------------------------------------
# the hand as the solver sees it


@njit(cache=True)
def hand_layers(s, spec, p):
    """(faces held at least once, faces held twice, jokers) of seat ``p``'s hand."""
    once = np.uint64(0)
    twice = np.uint64(0)
    jokers = 0
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            once, twice, jokers = with_face(once, twice, jokers, card_face_now(s, spec, c))
    return once, twice, jokers


@njit(cache=True)
def with_face(once, twice, jokers, f):
    """The hand layers (:func:`hand_layers`) with one more card of face ``f``."""
    if f == JOKER_FACE:
        return once, twice, jokers + 1
    bit = np.uint64(1) << np.uint64(f)
    if once & bit:
        return once, twice | bit, jokers
    return once | bit, twice, jokers


@njit(cache=True)
def fill(spec, t, once, jokers):
    """GE-3 template fill: (naturals held, jokers needed) of template ``t``, or (-1, -1)
    when it cannot be melded: not enough jokers, or fewer than ``min_naturals`` naturals in
    a meld with no natural or with two or more jokers (German: no natural; two jokers with
    one natural. Crazy: never, CR-2)."""
    naturals = popcount(np.uint64(spec.t_mask[t]) & once)
    k = spec.t_len[t] - naturals
    if k > jokers or naturals < spec.min_naturals and (naturals == 0 or k >= 2):
        return -1, -1
    return naturals, k


@njit(cache=True)
def credit_bounds(spec, once, twice, jokers, pending, ws, out_tmpl, out_nat):
    """(upper, lower) bounds of the credit template fills can still add from this hand, one
    meld using the ``pending`` face if it is a natural (-1 upper: no arrangement uses it).

    Upper: the solver's best credit of disjoint melds, jokers free to stand for any face.
    Lower: the same with no joker standing for a face the hand holds; such an arrangement is
    what template fills make, in any order (the solver keeps GE-3's two-joker rule)."""
    ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h = ws
    need = pending if pending < JOKER_FACE else -1
    first = solve_multiset_ws(once, twice, jokers, spec.t_mask, spec.t_len, spec.t_faces,
                              spec.t_credit, spec.solver_values, OBJ_CREDIT, np.uint64(0), -1,
                              spec.min_naturals, need, False, out_tmpl, out_nat,
                              ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)
    if first[0] < 0:
        return -1, -1
    second = solve_multiset_ws(once, twice, jokers, spec.t_mask, spec.t_len, spec.t_faces,
                               spec.t_credit, spec.solver_values, OBJ_CREDIT, once, -1,
                               spec.min_naturals, need, False, out_tmpl, out_nat,
                               ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)
    return first[2], second[2] if second[0] >= 0 else -1


@njit(cache=True)
def opening_reachable(spec, ws, once, twice, jokers, total, pending):
    """GE-5: can template-fill melds from this hand bring the turn's credit ``total`` to
    ``spec.open_min``, one of them using the ``pending`` card (a face, JOKER_FACE for a
    taken joker, -1 none)? Exact depth-first search over meld sequences, cut by the solver's
    bounds; ``ws`` is the solver's workspace (:func:`solver.make_workspace`)."""
    if pending < 0 and total >= spec.open_min:
        return True
    out_tmpl = np.empty(128, np.int32)
    out_nat = np.empty(128, np.int64)
    L = MAX_OPENING_MELDS + 1
    st_once = np.empty(L, np.uint64)
    st_twice = np.empty(L, np.uint64)
    st_jokers = np.empty(L, np.int64)
    st_total = np.empty(L, np.int64)
    st_pending = np.empty(L, np.int64)
    cursor = np.zeros(L, np.int64)
    st_once[0] = once
    st_twice[0] = twice
    st_jokers[0] = jokers
    st_total[0] = total
    st_pending[0] = pending
    depth = 0
    while depth >= 0:
        o, w, j, tot, pend = st_once[depth], st_twice[depth], st_jokers[depth], st_total[depth], st_pending[depth]
        if cursor[depth] == 0:
            if pend < 0 and tot >= spec.open_min:
                return True
            upper, lower = credit_bounds(spec, o, w, j, pend, ws, out_tmpl, out_nat)
            if upper < 0 or tot + upper < spec.open_min:
                depth -= 1
                continue
            if pend < JOKER_FACE and lower >= 0 and tot + lower >= spec.open_min:
                return True
        if cursor[depth] >= spec.num_templates or depth == MAX_OPENING_MELDS:
            depth -= 1
            continue
        t = cursor[depth]
        cursor[depth] += 1
        naturals, k = fill(spec, t, o, j)
        if naturals < 0:
            continue
        used = np.uint64(spec.t_mask[t]) & o
        d = depth + 1
        st_once[d], st_twice[d] = without_naturals(o, w, used)
        st_jokers[d] = j - k
        st_total[d] = tot + spec.t_total[t]
        st_pending[d] = pend
        if fill_uses(pend, used, k):
            st_pending[d] = -1
        cursor[d] = 0
        depth = d
    return False


@njit(cache=True)
def without_naturals(once, twice, used):
    """The hand layers (:func:`hand_layers`) once a natural of each face in ``used`` left."""
    return (once & ~used) | (twice & used), twice & ~used


@njit(cache=True)
def fill_uses(pending, used, k):
    """Whether a template fill taking the naturals ``used`` (faces) and ``k`` jokers melds
    the ``pending`` card (a face, JOKER_FACE for a joker, -1 none): a natural's fill takes
    the taken copy, a joker fill takes the pending joker first (:func:`rules.hand_view`)."""
    if pending == JOKER_FACE:
        return k > 0
    return pending >= 0 and (used >> np.uint64(pending)) & np.uint64(1) != 0


# GE-5's shortcuts (issue #24): most questions :func:`opening_reachable` answers by its
# search are settled by a bound and a greedy try over the few templates the hand can fill.


@njit(cache=True)
def face_credit(spec, f):
    """The most credit a natural of face ``f`` earns in a meld: its rank's in a set, its
    run position's in a run (an ace's at either end)."""
    r = f % NUM_RANKS
    c = max(spec.rank_credit[r], spec.run_credit[r])
    if r == 0:
        c = max(c, spec.run_credit[NUM_RANKS])
    return c


@njit(cache=True)
def credit_ceiling(spec, ids, once, twice, jokers, pending):
    """An upper bound of the credit any sequence of template fills from this hand can meld
    (no smaller than :func:`credit_bounds`'s upper one), or -1 when no fill can use the
    ``pending`` natural; ``ids`` holds every template the hand can fill (others may be
    there). The smaller of two sums over the naturals of each face (once, or twice where
    two melds could take it): (a) those some fill can use, plus the best slot credit per
    joker; (b) those in a template the hand holds in full, plus the best template credit
    per joker (a meld either is such a template or uses a joker)."""
    usable = np.uint64(0)   # faces some fill uses
    full = np.uint64(0)     # faces of templates held in full
    full2 = np.uint64(0)    # ... of two such templates, or of one held twice over
    best_meld = 0
    for t in ids:
        if fill(spec, t, once, jokers)[0] < 0:
            continue
        tm = np.uint64(spec.t_mask[t])
        usable |= tm & once
        best_meld = max(best_meld, spec.t_total[t])
        if tm & ~once == 0:
            full2 |= full & tm
            if tm & ~twice == 0:
                full2 |= tm
            full |= tm
    if 0 <= pending < JOKER_FACE and (usable >> np.uint64(pending)) & np.uint64(1) == 0:
        return -1
    a = jokers * max(spec.rank_credit.max(), spec.run_credit.max())
    b = jokers * best_meld
    x = usable
    while x:
        f = _lowbit(x)
        x &= x - np.uint64(1)
        bit = np.uint64(1) << np.uint64(f)
        c = face_credit(spec, f)
        a += 2 * c if twice & bit else c
        if full & bit:
            b += 2 * c if full2 & twice & bit else c
    return min(a, b)


@njit(cache=True)
def greedy_opening(spec, ids, once, twice, jokers, total, pending):
    """Whether one sequence of template fills from ``ids`` brings the turn's credit
    ``total`` to ``spec.open_min`` and melds the ``pending`` card: each step the fill of
    most credit, one melding the pending card first. Such a sequence is one that
    :func:`opening_reachable` searches for, so yes here is its yes."""
    for _ in range(MAX_OPENING_MELDS):
        if pending < 0 and total >= spec.open_min:
            return True
        best = -1
        best_value = -1
        for t in ids:
            naturals, k = fill(spec, t, once, jokers)
            if naturals < 0:
                continue
            value = spec.t_total[t]
            if fill_uses(pending, np.uint64(spec.t_mask[t]) & once, k):
                value += 1 << 20
            if value > best_value:
                best, best_value = t, value
        if best < 0:
            return False
        _, k = fill(spec, best, once, jokers)
        used = np.uint64(spec.t_mask[best]) & once
        if fill_uses(pending, used, k):
            pending = -1
        once, twice = without_naturals(once, twice, used)
        jokers -= k
        total += spec.t_total[best]
    return pending < 0 and total >= spec.open_min


@njit(cache=True)
def opening_possible(spec, ids, once, twice, jokers, total, pending):
    """:func:`opening_reachable`, from :func:`credit_ceiling` (no) or :func:`greedy_opening`
    (yes) where they settle it, else by its search. ``ids`` holds every template the hand
    can fill."""
    if pending < 0 and total >= spec.open_min:
        return True
    ceiling = credit_ceiling(spec, ids, once, twice, jokers, pending)
    if ceiling < 0 or total + ceiling < spec.open_min:
        return False
    if greedy_opening(spec, ids, once, twice, jokers, total, pending):
        return True
    return opening_reachable(spec, make_workspace(spec.num_templates), once, twice, jokers,
                             total, pending)


@njit(cache=True)
def opening_melds(s, spec, mask, p):
    """GE-5, p not yet opened: mark every ``meld`` through which an opening can still be
    completed. A meld is its template's fill (naturals where held, jokers for the rest:
    :func:`resolve` picks the same cards), so the question is :func:`opening_possible` of
    the hand after that fill, all from face bitmasks. The shortcut of :func:`legal_mask`;
    :func:`legal_mask_full` asks :func:`meld_offered` instead."""
    once, twice, nj = hand_layers(s, spec, p)
    ids = fillable_templates(spec, once, nj)
    pending = pending_face(s, spec)
    if credit_ceiling(spec, ids, once, twice, nj, pending) < spec.open_min - s.open_total:
        return
    shown = d3_faces(s, spec)
    for t in ids:
        if np.uint64(spec.t_mask[t]) & shown:
            continue
        _, k = fill(spec, t, once, nj)
        used = np.uint64(spec.t_mask[t]) & once
        once_after, twice_after = without_naturals(once, twice, used)
        if opening_possible(spec, ids, once_after, twice_after, nj - k,
                            s.open_total + spec.t_total[t],
                            -1 if fill_uses(pending, used, k) else pending):
            mask[spec.a_meld + t] = 1


# --------------------------------------------------------------------------------------
# the legal-action mask


@njit(cache=True)
def top_card(s):
    return s.discard[s.discard_len - 1] if s.discard_len > 0 else -1


@njit(cache=True)
def opened(s, p):
    return s.placed_before[p] != 0


@njit(cache=True)
def pending_face(s, spec):
    """The face the pending obligation card shows (JOKER_FACE for a joker), or -1."""
    return card_face_now(s, spec, s.obligation) if s.obligation >= 0 else -1


@njit(cache=True)
def resolve(s, spec, t, p, face_card, jokers, nj, no_face_up, used, decl, removed):
    """Cards for a new meld of template ``t`` from p's hand (naturals where held, jokers for
    the rest), or -1 if GE-3 forbids it (no natural, or two jokers with fewer than
    ``min_naturals`` naturals; Crazy's wilds meld in any number, CR-2)."""
    n, _ = resolve_meld(s, spec, t, False, p, face_card, jokers, nj, no_face_up, no_face_up,
                        used, decl, removed, spec.min_naturals > 0)
    if n < 0:
        return -1
    wild = 0
    for i in range(n):
        if is_wild(s, spec, used[i]):
            wild += 1
    if wild >= 2 and n - wild < spec.min_naturals:
        return -1
    return n


@njit(cache=True)
def lone_taken_card_stuck(s, spec, p):
    """After a placement: is p left holding only the card taken this turn (which may not be
    discarded) with nowhere to lay it off? Such a placement is a dead end and is not offered."""
    card = -1
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            if card >= 0 or s.taken[c] == 0:
                return False
            card = c
    if card < 0:
        return False
    f = card_face_now(s, spec, card)
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_EMPTY:
            continue
        if f < JOKER_FACE:
            if layoff_position(s, spec, m, f) >= 0:
                return False
        else:
            for g in range(JOKER_FACE):
                if layoff_position(s, spec, m, g) >= 0:
                    return False
    return True


@njit(cache=True)
def table_faces(s, spec):
    """The faces shown on the table (bits), a joker's or wild's declared face included."""
    bits = np.uint64(0)
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_TABLE:
            bits |= np.uint64(1) << np.uint64(s.shown[c])
    return bits


@njit(cache=True)
def wild_shows(s, spec, f):
    """Whether a joker or wild on the table stands for face ``f``."""
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_TABLE and s.shown[c] == f and is_wild(s, spec, c):
            return True
    return False


@njit(cache=True)
def turn_can_end(s, spec, p):
    """After a placement by p: can the turn still end? German (D18): unless p holds only
    the card taken this turn and it lays off nowhere (an empty hand has gone out). Crazy
    (``out_by_discard``, CR-4): p keeps a card to discard, one not taken this turn, or the
    taken card swaps for a table wild standing for it (the wild may then be discarded)."""
    if not spec.out_by_discard:
        return not lone_taken_card_stuck(s, spec, p)
    taken = -1
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            if s.taken[c] == 0:
                return True
            taken = c
    return taken >= 0 and wild_shows(s, spec, card_face_now(s, spec, taken))


@njit(cache=True)
def keeps_free_card(s, spec, p, used, n):
    """Whether p still holds a card not taken this turn once the ``n`` cards ``used`` leave
    the hand: then the turn can end (:func:`turn_can_end`) without playing the placement
    out."""
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p and s.taken[c] == 0:
            gone = False
            for i in range(n):
                if used[i] == c:
                    gone = True
            if not gone:
                return True
    return False


@njit(cache=True)
def layers_without(s, spec, p, used, n):
    """p's hand layers (:func:`hand_layers`) after the ``n`` hand cards ``used`` leave it."""
    once, twice, jokers = hand_layers(s, spec, p)
    for i in range(n):
        f = card_face_now(s, spec, used[i])
        if f == JOKER_FACE:
            jokers -= 1
            continue
        bit = np.uint64(1) << np.uint64(f)
        if twice & bit:
            twice &= ~bit
        else:
            once &= ~bit
    return once, twice, jokers


@njit(cache=True)
def joker_meld_exists(spec, once, jokers):
    """GE-6: a new meld of the freed joker with at least two naturals from hand."""
    for t in range(spec.num_templates):
        naturals, k = fill(spec, t, once, jokers)
        if naturals >= 2 and k >= 1:
            return True
    return False


@njit(cache=True)
def fillable_templates(spec, held, nj):
    """The templates a hand of faces ``held`` and ``nj`` jokers can fill (:func:`fill`): the
    only ones :func:`meld_offered` may accept, found without its per-call cost."""
    out = np.empty(spec.num_templates, np.int64)
    n = 0
    for t in range(spec.num_templates):
        if fill(spec, t, held, nj)[0] >= 0:
            out[n] = t
            n += 1
    return out[:n]


@njit(cache=True)
def meld_offered(s, spec, t, p, held, work, ws, face_card, jokers, nj, no_face_up, used, decl,
                 removed):
    """Whether ``meld t`` is legal now (see the module docstring): ``work`` is scratch for
    the position after it (played out only when the turn's end is in doubt), ``ws`` the
    solver's workspace; ``held`` the faces p holds."""
    if fill(spec, t, held, nj)[0] < 0:
        return False
    if np.uint64(spec.t_mask[t]) & d3_faces(s, spec):
        return False
    n = resolve(s, spec, t, p, face_card, jokers, nj, no_face_up, used, decl, removed)
    if n < 0:
        return False
    is_open = opened(s, p)
    if is_open and s.obligation >= 0:       # the freed joker's meld: it and >= 2 naturals
        has_joker = False
        for i in range(n):
            if used[i] == s.obligation:
                has_joker = True
        if not has_joker or n - 1 < 2:
            return False
    if not is_open and spec.open_min > 0:
        once, twice, nj_after = layers_without(s, spec, p, used, n)
        pending = pending_face(s, spec)
        for i in range(n):
            if used[i] == s.obligation:
                pending = -1
        total = s.open_total + spec.t_total[t]
        return opening_reachable(spec, ws, once, twice, nj_after, total, pending)
    if keeps_free_card(s, spec, p, used, n):
        return True
    work[0] = s
    apply_meld(work[0], spec, t, used, decl, n)
    return turn_can_end(work[0], spec, p)


@njit(cache=True)
def meld_scratch(s, spec, p):
    """Seat ``p``'s hand view (Mountain's :func:`hand_view`: the card of each face, the jokers,
    their number) and the scratch rows a meld's resolution writes: (face_card, jokers, nj,
    no_face_up, used, decl, removed). German has no MR-5 face-up rule: no_face_up stays 0."""
    face_card = np.empty(JOKER_FACE, np.int16)
    jokers = np.empty(8, np.int16)
    nj = hand_view(s, spec, p, face_card, jokers)[0]
    used, decl, removed, _ = meld_buffers(spec, 0)
    return face_card, jokers, nj, np.zeros(JOKER_FACE, np.int16), used, decl, removed


@njit(cache=True)
def some_meld_offered(s, spec, p, work, ws):
    """Whether any ``meld`` is legal in position ``s`` (after a swap: the freed joker's meld)."""
    face_card, jokers, nj, no_face_up, used, decl, removed = meld_scratch(s, spec, p)
    held = hand_mask_bits(face_card)
    for t in fillable_templates(spec, held, nj):
        if meld_offered(s, spec, t, p, held, work, ws, face_card, jokers, nj, no_face_up, used,
                        decl, removed):
            return True
    return False


@njit(cache=True)
def legal_mask(s, spec, mask, scratch):
    """Write the exact legal-action mask of game ``s`` into ``mask`` (int8, zeroed here)."""
    legal_mask_exact(s, spec, mask, scratch, True)


@njit(cache=True)
def legal_mask_full(s, spec, mask, scratch):
    """:func:`legal_mask` without its shortcuts (every GE-5 question searched by
    :func:`opening_reachable`): the reference the tests hold the mask to."""
    legal_mask_exact(s, spec, mask, scratch, False)


@njit(cache=True)
def legal_mask_exact(s, spec, mask, scratch, fast):
    """:func:`legal_mask`; ``fast`` settles GE-5's questions by :func:`opening_possible`
    and :func:`opening_melds` where it can."""
    mask[:] = 0
    if s.phase >= PHASE_HAND_OVER:
        return
    p = s.current
    is_open = opened(s, p)
    top = top_card(s)
    opening = not is_open and spec.open_min > 0
    if s.phase == PHASE_DRAW:
        mask[spec.a_draw] = 1      # the stock is never empty at a draw (end_turn sees to it)
        if top >= 0 and not (spec.lone_card_draws and hand_size_of(s, spec, p) == 1):   # CR-4
            if not opening:
                mask[spec.a_take + top] = 1
            else:                  # GE-5: only for an opening that uses it
                f = card_face_now(s, spec, top)
                once, twice, nj = hand_layers(s, spec, p)
                once, twice, nj = with_face(once, twice, nj, f)
                if fast:
                    ok = fits_a_template(spec, f, once, nj) and opening_possible(
                        spec, fillable_templates(spec, once, nj), once, twice, nj, 0, f)
                else:
                    ok = opening_reachable(spec, make_workspace(spec.num_templates), once,
                                           twice, nj, 0, f)
                if ok:
                    mask[spec.a_take + top] = 1
        return
    if opening and fast:
        opening_melds(s, spec, mask, p)
        unopened_discards(s, spec, mask, p)
        return
    face_card, jokers, nj, no_face_up, used, decl, removed = meld_scratch(s, spec, p)
    held = hand_mask_bits(face_card)
    # the solver's workspace (about 320 kB for German) only where GE-5's search needs it
    ws = make_workspace(spec.num_templates) if opening else no_workspace()
    # GE-5: a meld is offered only if an opening through it can be completed, so none is
    # when no opening can be completed from here (one search instead of one per template)
    may_meld = not opening
    if opening:
        once, twice, nj_now = hand_layers(s, spec, p)
        may_meld = opening_reachable(spec, ws, once, twice, nj_now, s.open_total,
                                     pending_face(s, spec))
    if may_meld:
        for t in fillable_templates(spec, held, nj):
            if meld_offered(s, spec, t, p, held, scratch, ws, face_card, jokers, nj, no_face_up,
                            used, decl, removed):
                mask[spec.a_meld + t] = 1
    if not is_open:
        unopened_discards(s, spec, mask, p)
        return
    if s.obligation >= 0:                             # GE-6: the freed joker's meld first
        return
    shown = d3_faces(s, spec)
    free = hand_counts(s, spec, p)[1]
    once = twice = np.uint64(0)     # p's hand layers, read for the first possible swap
    layers = False
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_EMPTY:
            continue
        for end in range(4):
            f = end_face(s, m, end)
            if f < 0:
                continue
            c = layoff_card(s, spec, m, f, face_card, jokers, nj, no_face_up)
            if c >= 0 and card_layoff_offered(s, spec, p, m, f, c, shown, free, scratch):
                mask[spec.a_layoff + m * JOKER_FACE + f] = 1
        for k in range(MELD_WIDTH):
            j = s.m_cards[m, k]
            if j < 0 or not is_wild(s, spec, j) or face_card[s.shown[j]] < 0:
                continue            # (swap_offered's first test, before the layers are read)
            if not layers:
                once, twice, _ = hand_layers(s, spec, p)
                layers = True
            f = s.shown[j]
            if swap_offered(s, spec, p, m, f, once, twice, nj, face_card, scratch[1:], ws):
                mask[spec.a_swap + m * JOKER_FACE + f] = 1
    discard_mask(s, spec, mask, p)


@njit(cache=True)
def no_workspace():
    """A stand-in of the solver's workspace (:func:`solver.make_workspace`'s types) for the
    calls that run no GE-5 search, an opened seat's: ``make_workspace(0)`` allocates 30 kB."""
    z = np.empty((0, 0), np.int64)
    return z, np.empty((0, 0), np.float64), z, z, z, np.empty((0, 0), np.int32), z


@njit(cache=True)
def fits_a_template(spec, f, once, jokers):
    """Whether a template holding face ``f`` can be filled from this hand (``f`` a joker:
    yes): the taken discard's first test, before every template is (GE-5)."""
    if f == JOKER_FACE:
        return True
    for i in range(spec.by_face_count[f]):
        if fill(spec, spec.by_face[f, i], once, jokers)[0] >= 0:
            return True
    return False


@njit(cache=True)
def d3_faces(s, spec):
    """The faces a placement may not show again (Crazy's D3, ``faces_once``: the table's),
    as bits; none where faces may show twice."""
    return table_faces(s, spec) if spec.faces_once else np.uint64(0)


@njit(cache=True)
def layoff_offered(s, spec, p, m, f, face_card, jokers, nj, no_face_up, work):
    """Whether ``layoff f m`` is legal for p, who has opened and owes no freed joker: a card
    of p's lays off face ``f`` on meld ``m`` without a dead end (``work[0]`` is scratch for
    the position after it). ``face_card``/``jokers``/``nj`` are p's hand (:func:`rules.hand_view`)."""
    c = layoff_card(s, spec, m, f, face_card, jokers, nj, no_face_up)
    return c >= 0 and card_layoff_offered(s, spec, p, m, f, c, d3_faces(s, spec),
                                          hand_counts(s, spec, p)[1], work)


@njit(cache=True)
def card_layoff_offered(s, spec, p, m, f, c, shown, free, work):
    """:func:`layoff_offered` once p's card ``c`` to lay off is known: ``shown`` are the
    faces it may not show (:func:`d3_faces`), ``free`` p's cards not taken this turn; when
    another of those stays in hand the turn can end without playing the layoff out."""
    if shown >> np.uint64(f) & np.uint64(1):   # D3
        return False
    if free > (s.taken[c] == 0):
        return True
    work[0] = s
    apply_layoff(work[0], spec, m, f, c)
    return turn_can_end(work[0], spec, p)


@njit(cache=True)
def swap_offered(s, spec, p, m, f, once, twice, nj, face_card, work, ws):
    """Whether ``swap f m`` is legal for p, who has opened and owes no freed joker, given a
    joker declared ``f`` in meld ``m`` (GE-6): p holds a natural f and can then meld the
    freed joker (with no such obligation, CR-3, holding the natural is enough).
    ``once``/``twice`` are p's hand layers (:func:`hand_layers`); ``work[0]`` gets the
    position after the swap, ``work[1:]`` is scratch for the meld search."""
    if face_card[f] < 0:
        return False
    if not spec.freed_joker_melds:
        return True
    # after the swap p holds the joker instead of one copy of f
    bit = np.uint64(1) << np.uint64(f)
    after = (once & ~bit) | (twice & bit)
    if not joker_meld_exists(spec, after, nj + 1):
        return False
    work[0] = s
    apply_swap(work[0], spec, m, f)
    return some_meld_offered(work[0], spec, p, work[1:], ws)


@njit(cache=True)
def unopened_discards(s, spec, mask, p):
    """Before p has opened: the discards, unless melds toward the opening are staged or the
    taken discard is still to be used (GE-5)."""
    if s.open_total == 0 and s.obligation < 0:
        discard_mask(s, spec, mask, p)


@njit(cache=True)
def discard_mask(s, spec, mask, p):
    """``discard f`` for every face in p's hand with a copy not taken this turn."""
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p and s.taken[c] == 0:
            mask[spec.a_discard + spec.card_face[c]] = 1


def scalar_names(spec) -> tuple[str, ...]:
    """Names of the variant scalars ``spec`` writes: German's, or Crazy Rummy's."""
    return CRAZY_SCALAR_NAMES if spec.first_wild >= 0 else VARIANT_SCALAR_NAMES


assert len(CRAZY_SCALAR_NAMES) == len(VARIANT_SCALAR_NAMES)   # one observation size for both


@njit(cache=True)
def variant_scalars(s, spec, p, row, start, q):
    """Write the variant scalars of seat ``p``'s view (:func:`scalar_names`) at
    ``row[start:]`` (scaled by ``q``)."""
    if spec.first_wild >= 0:
        for k, x in enumerate(((s.wild_rank + 1) / NUM_RANKS, s.wild_rank / (NUM_RANKS - 1))):
            row[start + k] = x if q == 1.0 else np.floor(x * q + 0.5)
        return
    if s.current == p:
        x = min(s.open_total / spec.open_min, 1.0) * q
        row[start] = x if q == 1.0 else np.floor(x + 0.5)
    row[start + 1] = s.rebuilt


# --------------------------------------------------------------------------------------
# dealing, turns, scoring


@njit(cache=True)
def start_hand(s, spec):
    """GE-1: deal ``s.deck`` (13 each from the seat after the dealer, one up-card, the stock).
    CR-1 (``extra_card_first``): 7 each, and the card that would be the up-card goes to the
    seat after the dealer, who begins by melding or discarding; the discard pile is empty."""
    deal(s, spec)
    if spec.extra_card_first:
        s.loc[s.discard[0]] = LOC_HAND + s.current
        s.discard_len = 0
        s.phase = PHASE_PLAY
    s.open_total = 0
    s.rebuilt = 0


@njit(cache=True)
def new_game(s, spec, seed, dealer, deck_given):
    """Start a game (:func:`rules.begin_game`, the first dealer at random) and deal; the
    first hand's wild rank is ``spec.first_wild`` (CR-1; -1: none)."""
    begin_game(s, spec, seed, dealer, deck_given, False)
    s.wild_rank = spec.first_wild
    start_hand(s, spec)


@njit(cache=True)
def next_hand(s, spec):
    """The next hand of the game: the next seat deals, the wild rank (if any) is the next (CR-1)."""
    s.hand_no += 1
    s.dealer = (s.dealer + 1) % spec.num_players
    if s.wild_rank >= 0:
        s.wild_rank += 1
    shuffle_deck(s, spec)
    start_hand(s, spec)


@njit(cache=True)
def card_credit(s, spec, c):
    m = s.meld_of[c]
    if s.m_kind[m] == SET:
        return spec.rank_credit[s.m_rank[m]]
    for k in range(MELD_WIDTH):
        if s.m_cards[m, k] == c:
            return spec.run_credit[k]
    return 0


@njit(cache=True)
def score_hand(s, spec, went_out):
    """GE-9: the seat that went out scores its meld credit, every other seat credit - hand
    value (``went_out`` -1: nobody did, GE-8). After the last dealer's hand, or in a game
    with wild ranks after the kings' round (CR-5), the game ends (highest total wins; equal
    leaders share the place, ``game_winner`` -1). Crazy's melds earn no credit, so its hand
    points are minus the hand's penalty (0 for the seat that went out)."""
    P = spec.num_players
    for p in range(P):
        s.h_credit[p] = 0
        s.h_deadwood[p] = 0
        s.h_bonus[p] = 0
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_TABLE:
            s.h_credit[s.owner[c]] += card_credit(s, spec, c)
        elif s.loc[c] >= LOC_HAND:
            s.h_deadwood[s.loc[c] - LOC_HAND] += spec.hand_value[card_face_now(s, spec, c)]
    for p in range(P):
        s.h_sp[p] = s.h_credit[p] - s.h_deadwood[p]
        s.h_points[p] = s.h_sp[p]
        s.scores[p] += s.h_points[p]
    s.h_winner = went_out
    mark_hand_end(s, went_out)
    last = s.wild_rank == NUM_RANKS - 1 if s.wild_rank >= 0 else s.hand_no + 1 >= P
    if last:
        mark_game_winner(s, P)
        s.phase = PHASE_GAME_OVER
        return EVENT_GAME_OVER
    if spec.episode_game:
        next_hand(s, spec)
    else:
        s.phase = PHASE_HAND_OVER
    return EVENT_HAND_OVER


@njit(cache=True)
def mark_hand_end(s, went_out):
    """Record how the hand ended: seat ``went_out`` went out, or (-1) the stock ran out."""
    kind = END_WENT_OUT if went_out >= 0 else END_EXHAUSTED
    s.h_end_kind = kind
    s.h_ender = went_out
    s.h_bonus_kinds = 0
    s.end_kind = kind
    s.ender = went_out


@njit(cache=True)
def mark_game_winner(s, P):
    """The game is over: ``game_winner`` is the seat with the highest total, -1 on a tie."""
    best = s.scores[0]
    for p in range(1, P):
        best = max(best, s.scores[p])
    s.game_winner = -1
    leaders = 0
    for p in range(P):
        if s.scores[p] == best:
            leaders += 1
            s.game_winner = p
    if leaders > 1:
        s.game_winner = -1


@njit(cache=True)
def rebuild_stock(s, spec):
    """GE-8: the discard pile but its top card, shuffled by the game's generator, is the new stock."""
    n = s.discard_len - 1
    for i in range(n):
        s.stock[i] = s.discard[i]
        s.loc[s.discard[i]] = LOC_STOCK
    for i in range(n - 1, 0, -1):
        j = random_below(s, i + 1)
        tmp = s.stock[i]
        s.stock[i] = s.stock[j]
        s.stock[j] = tmp
    s.discard[0] = s.discard[n]
    s.discard_len = 1
    s.stock_len = n
    s.stock_ptr = 0
    s.rebuilt = 1


@njit(cache=True)
def end_turn(s, spec):
    """The turn ended with a discard: the next seat draws, after a GE-8 rebuild if the stock
    is empty; a second empty stock, or the turn cap, ends the hand with no winner, and so
    does an empty stock without ``rebuild_stock`` (CR-5)."""
    p = s.current
    for c in range(spec.num_cards):
        s.taken[c] = 0
    s.open_total = 0
    s.placed_this_turn = 0
    s.obligation = -1
    s.turn += 1
    if s.turn >= spec.max_turns:
        return score_hand(s, spec, -1)
    if s.stock_ptr >= s.stock_len:
        if not spec.rebuild_stock or s.rebuilt or s.discard_len < 2:
            return score_hand(s, spec, -1)
        rebuild_stock(s, spec)
    s.current = (p + 1) % spec.num_players
    s.phase = PHASE_DRAW
    return EVENT_NONE


@njit(cache=True)
def apply_swap(s, spec, m, f):
    """GE-6: p's natural of face ``f`` takes the place of meld ``m``'s joker declared ``f``;
    the joker goes to p's hand, as the card p must meld next if ``freed_joker_melds``."""
    p = s.current
    slot = -1
    for k in range(MELD_WIDTH):
        j = s.m_cards[m, k]
        if j >= 0 and is_wild(s, spec, j) and s.shown[j] == f:
            slot = k
    joker = s.m_cards[m, slot]
    natural = -1
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p and card_face_now(s, spec, c) == f and (natural < 0 or s.taken[c] != 0):
            natural = c
    place_on_table(s, natural, m, slot, f, p)
    s.loc[joker] = LOC_HAND + p
    s.public[joker] = 1                 # every seat saw it leave the table for p's hand
    s.meld_of[joker] = -1
    s.shown[joker] = -1
    s.owner[joker] = -1
    if spec.freed_joker_melds:
        s.obligation = joker
    s.placed_this_turn = 1


@njit(cache=True)
def apply_action(s, spec, a):
    """Play legal action ``a`` for the current player; returns an EVENT_* code."""
    p = s.current
    if a == spec.a_draw:
        draw_stock(s, p)
        s.phase = PHASE_PLAY
        return EVENT_NONE
    if spec.a_take <= a < spec.a_take + spec.num_cards:
        c = a - spec.a_take
        s.discard_len -= 1
        s.loc[c] = LOC_HAND + p
        s.taken[c] = 1
        s.public[c] = 1
        if not opened(s, p) and spec.open_min > 0:   # GE-5: to be used in the opening
            s.obligation = c
        s.phase = PHASE_PLAY
        return EVENT_NONE
    if spec.a_discard <= a < spec.a_discard + JOKER_FACE + 1:
        f = a - spec.a_discard
        for c in range(spec.num_cards):
            if s.loc[c] == LOC_HAND + p and spec.card_face[c] == f and s.taken[c] == 0:
                leave_hand(s, c)
                s.loc[c] = LOC_DISCARD
                s.discard[s.discard_len] = c
                s.discard_len += 1
                break
        if hand_size_of(s, spec, p) == 0:            # GE-7: out by discarding the last card
            return score_hand(s, spec, p)
        return end_turn(s, spec)
    if spec.a_meld <= a < spec.a_meld + spec.num_templates:
        t = a - spec.a_meld
        face_card, jokers, nj, no_face_up, used, decl, removed = meld_scratch(s, spec, p)
        n = resolve(s, spec, t, p, face_card, jokers, nj, no_face_up, used, decl, removed)
        apply_meld(s, spec, t, used, decl, n)
        if not opened(s, p):
            s.open_total += spec.t_total[t]
            if s.open_total >= spec.open_min and s.obligation < 0:
                s.placed_before[p] = 1               # GE-5: opened
    elif spec.a_swap <= a < spec.a_swap + spec.max_melds * JOKER_FACE:
        m, f = divmod(a - spec.a_swap, JOKER_FACE)
        apply_swap(s, spec, m, f)
    else:
        m, f = divmod(a - spec.a_layoff, JOKER_FACE)
        face_card, jokers, nj, no_face_up, _, _, _ = meld_scratch(s, spec, p)
        c = layoff_card(s, spec, m, f, face_card, jokers, nj, no_face_up)
        apply_layoff(s, spec, m, f, c)
    if hand_size_of(s, spec, p) == 0:                # GE-7: out by melding
        return score_hand(s, spec, p)
    return EVENT_NONE


__all__ = [
    "GermanSpec", "german_state_dtype", "legal_mask", "apply_action", "new_game", "next_hand",
    "start_hand", "opening_reachable", "meld_offered", "legal_mask_full", "layoff_offered",
    "swap_offered", "scalar_names", "MAX_CLEAR_DEPTH",
]


register_kernels(GermanSpec, sys.modules[__name__])
