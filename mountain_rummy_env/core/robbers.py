"""Robber's Rummy rules (docs/robbers_rummy.md) as compiled functions over state records.

The same entry points as :mod:`.rules` (``new_game``, ``start_hand``, ``next_hand``,
``legal_mask``, ``apply_action``) over Mountain's record plus the fields of a play in
progress (:data:`ROBBERS_FIELDS`), for 2-6 seats and two decks with jokers. Dealing,
shuffling and the stock draw are the shared pieces of :mod:`.rules`.

A turn (RR-4) is a sequence of small actions. A *play* is a run of edits of the table --
``meld`` (a new meld from hand), ``layoff`` (a hand card into a meld slot), ``lift`` (pick a
table card up) then ``put`` (set it down in another slot) -- closed by ``commit``, legal only
when every slot holds a valid meld (RR-3) and a hand card was placed (RR-6), or by
``reset``, legal throughout a play, which restores the table and the hand as they were at
the play's start. So no sequence of edits is a dead end; ``spec.max_edits`` edits a turn
bound every turn. Outside a play the seat draws (``draw stock``: ends the turn unless it
played; at most one draw a turn), ``pass`` es (the stock is empty and it did not play) or
ends its turn (``end turn``, after a play).

Meld slots hold their cards packed from index 0 (``m_cards[m, :n]``): a valid meld in
sequence order (a set by suit, a run from its low end), with ``m_kind`` SET or RUN and every
joker's declared face in ``shown``; a slot an edit left invalid has kind ``MELD_WORK``, its
cards in the order they came, and its jokers undeclared (``shown`` -1). Before opening
(RR-5) only slots started in this play (``m_new``) may be touched, so an opening is new
melds from the hand; it commits at 40 points (GE-2 values, jokers as declared).

Fields reused from the shared record: ``obligation`` is the lifted card a ``put`` must set
down; ``taken[c]`` marks a hand card placed in this play (``reset`` returns it);
``placed_this_turn`` means the seat committed a play this turn and ``placed_before[p]``
that seat ``p`` has opened.
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np
from numba import njit

from ..cards import JOKER_FACE, NUM_RANKS
from .batch import register_kernels
from .german import mark_game_winner, mark_hand_end
from .rules import SET, RUN, begin_game, deal, draw_stock, hand_size_of, shuffle_deck
from .spec import Spec
from .state import (
    EVENT_GAME_OVER, EVENT_HAND_OVER, EVENT_NONE, LOC_HAND,
    LOC_STOCK, LOC_TABLE, MELD_EMPTY, MELD_WIDTH, MELD_WORK, PHASE_GAME_OVER, PHASE_HAND_OVER,
    PHASE_PLAY, state_dtype,
)

MAX_CLEAR_DEPTH = 0         # no MR-7 dead-end search (Game sizes its scratch from rules)
MAX_RUN = NUM_RANKS         # a run never holds a face twice: at most 13 cards
ACE_LOW_VALUE = 1           # GE-2: an ace counts 1 when a 2 follows it in its run

# Observation scalars Robber's adds (docs/observation.md).
VARIANT_SCALAR_NAMES = ("play_in_progress", "edits_left", "drew", "opening_total",
                        "passes", "table_valid")

ROBBERS_FIELDS = [
    ("r_meld_of", np.int8),    # per card: its slot at the play's start (-1: not on the table)
    ("r_shown", np.int8),      # per card: the face it showed then
    ("r_founder", np.int8),    # per slot: its founder then
    ("m_new", np.int8),        # per slot: started in this play
    ("edits", np.int16),       # edits this turn (at most spec.max_edits; a lift and its put: one)
    ("drew", np.int8),         # the seat drew this turn (RR-4: once)
    ("editing", np.int8),      # a play is in progress
    ("passes", np.int8),       # turns in a row that ended with a pass (RR-7)
]


def robbers_state_dtype(num_cards: int, max_melds: int, max_seats: int) -> np.dtype:
    """Mountain's record layout plus :data:`ROBBERS_FIELDS` (per card or per slot)."""
    shape = {"r_meld_of": (num_cards,), "r_shown": (num_cards,), "r_founder": (max_melds,),
             "m_new": (max_melds,)}
    extra = [(name, dtype, shape[name]) if name in shape else (name, dtype)
             for name, dtype in ROBBERS_FIELDS]
    return np.dtype(state_dtype(num_cards, max_melds, max_seats).descr + extra)


RobbersSpec = NamedTuple("RobbersSpec", [
    *Spec.__annotations__.items(),
    ("open_min", int),             # RR-5: 40
    ("max_edits", int),            # edit actions a turn (an option; so every turn ends)
    ("around_the_corner", bool),   # RR-3: wrap-around runs (Q-K-A-2)
    ("a_pass", int),
    ("a_end", int),
    ("a_commit", int),
    ("a_reset", int),
    ("a_lift", int),               # + slot * 53 + face (52: a joker)
    ("a_put", int),                # + slot
])
RobbersSpec.__module__ = __name__

STRIDE = JOKER_FACE + 1            # faces per slot in the layoff and lift families


# --------------------------------------------------------------------------------------
# meld slots


@njit(cache=True)
def slot_len(s, m):
    n = 0
    while n < MELD_WIDTH and s.m_cards[m, n] >= 0:
        n += 1
    return n


@njit(cache=True)
def slot_add(s, m, c):
    s.m_cards[m, slot_len(s, m)] = c
    s.meld_of[c] = m


@njit(cache=True)
def slot_remove(s, m, c):
    n = slot_len(s, m)
    k = 0
    while s.m_cards[m, k] != c:
        k += 1
    for i in range(k, n - 1):
        s.m_cards[m, i] = s.m_cards[m, i + 1]
    s.m_cards[m, n - 1] = -1


@njit(cache=True)
def set_order(spec, rank, suits_held, joker, decl_suit, order, cards_by_suit):
    """A set in suit order; the joker takes suit ``decl_suit``. Returns its length."""
    n = 0
    for u in range(4):
        if suits_held >> u & 1:
            order[n] = cards_by_suit[u]
            n += 1
        elif joker >= 0 and u == decl_suit:
            order[n] = joker
            n += 1
    return n


@njit(cache=True)
def arrange(s, spec, m, order, decl):
    """RR-3: whether slot ``m`` holds a valid meld; if so ``order`` gets its cards in
    sequence order and ``decl`` the face its joker stands for (-1: no joker), the joker's
    current declaration kept where it still fits. Returns (kind, length, low position);
    kind 0 when invalid. A run's low position is the ace-low-based position of its first
    card (0 = ace low, 13 = ace high; with wrap-around it may start anywhere)."""
    n = slot_len(s, m)
    decl[0] = -1
    if n < 3 or n > MAX_RUN:
        return 0, n, 0
    joker = -1
    faces_seen = np.uint64(0)
    rank = -1
    suit = -1
    same_rank = True
    same_suit = True
    for i in range(n):
        c = s.m_cards[m, i]
        f = spec.card_face[c]
        if f == JOKER_FACE:
            if joker >= 0:
                return 0, n, 0           # RR-3: at most one joker per meld
            joker = c
            continue
        bit = np.uint64(1) << np.uint64(f)
        if faces_seen & bit:
            return 0, n, 0               # a face twice: neither a set nor a run
        faces_seen |= bit
        r = f % NUM_RANKS
        u = f // NUM_RANKS
        if rank < 0:
            rank = r
            suit = u
        same_rank = same_rank and r == rank
        same_suit = same_suit and u == suit
    wish = s.shown[joker] if joker >= 0 else -1
    if same_rank and n <= 4:
        cards_by_suit = np.full(4, -1, np.int64)
        held = 0
        for i in range(n):
            c = s.m_cards[m, i]
            f = spec.card_face[c]
            if f < JOKER_FACE:
                held |= 1 << (f // NUM_RANKS)
                cards_by_suit[f // NUM_RANKS] = c
        decl_suit = -1
        if joker >= 0:
            if 0 <= wish < JOKER_FACE and wish % NUM_RANKS == rank and not held >> (wish // NUM_RANKS) & 1:
                decl_suit = wish // NUM_RANKS
            else:
                for u in range(4):
                    if decl_suit < 0 and not held >> u & 1:
                        decl_suit = u
            decl[0] = decl_suit * NUM_RANKS + rank
        set_order(spec, rank, held, joker, decl_suit, order, cards_by_suit)
        return SET, n, 0
    if not same_suit:
        return 0, n, 0
    # a run: the positions its naturals take, then where the joker goes
    by_rank = np.full(NUM_RANKS, -1, np.int64)
    for i in range(n):
        c = s.m_cards[m, i]
        f = spec.card_face[c]
        if f < JOKER_FACE:
            by_rank[f % NUM_RANKS] = c
    jokers = 1 if joker >= 0 else 0
    lo = -1
    if spec.around_the_corner:
        lo = wrap_start(by_rank, n, jokers)
    else:
        for ace_high in (False, True):
            if lo < 0 and (not ace_high or by_rank[0] >= 0):
                lo = line_start(by_rank, n, jokers, ace_high)
    if lo < 0:
        return 0, n, 0
    # span of the naturals from lo; a joker left over extends the run
    last = lo
    for k in range(n):
        if by_rank[(lo + k) % NUM_RANKS] >= 0:
            last = lo + k
    gap = -1
    for k in range(lo, last + 1):
        if by_rank[k % NUM_RANKS] < 0:
            gap = k
    if joker >= 0 and gap < 0:               # no gap: at an end, the wished one if it fits
        top_free = last + 1 <= (2 * NUM_RANKS if spec.around_the_corner else NUM_RANKS)
        low_free = lo - 1 >= (-NUM_RANKS if spec.around_the_corner else 0)
        if spec.around_the_corner and last - lo + 2 > NUM_RANKS:
            top_free = low_free = False
        wish_top = wish == suit * NUM_RANKS + (last + 1) % NUM_RANKS
        wish_low = wish == suit * NUM_RANKS + (lo - 1) % NUM_RANKS
        if top_free and (wish_top or not (low_free and wish_low)):
            gap = last + 1
            last += 1
        elif low_free:
            gap = lo - 1
            lo -= 1
        else:
            return 0, n, 0
    for k in range(n):
        pos = lo + k
        if pos == gap:
            order[k] = joker
        else:
            order[k] = by_rank[pos % NUM_RANKS]
    if joker >= 0:
        decl[0] = suit * NUM_RANKS + gap % NUM_RANKS
    if lo < 0:
        lo += NUM_RANKS
    return RUN, n, lo


@njit(cache=True)
def line_start(by_rank, n, jokers, ace_high):
    """Without wrap-around: the first position of the run the naturals ``by_rank`` make
    with ``jokers`` filling at most that many gaps, the ace low (0) or high (13); -1 if none."""
    lo = 99
    hi = -1
    count = 0
    for r in range(NUM_RANKS):
        if by_rank[r] >= 0:
            pos = NUM_RANKS if r == 0 and ace_high else r
            lo = min(lo, pos)
            hi = max(hi, pos)
            count += 1
    if hi - lo + 1 - count > jokers or hi - lo + 1 > n:
        return -1
    return lo


@njit(cache=True)
def wrap_start(by_rank, n, jokers):
    """With wrap-around: the rank the run starts at -- just after the widest cyclic gap
    between the naturals -- or -1 when the gaps inside need more than ``jokers``."""
    best_gap = -1
    start = -1
    count = 0
    for r in range(NUM_RANKS):
        if by_rank[r] >= 0:
            count += 1
            g = 0
            while by_rank[(r - 1 - g) % NUM_RANKS] < 0:
                g += 1
            if g > best_gap:
                best_gap = g
                start = r
    inside = NUM_RANKS - best_gap - count
    if inside > jokers:
        return -1
    return start


@njit(cache=True)
def normalise(s, spec, m):
    """Rewrite slot ``m`` after an edit: a valid meld in sequence order with its joker
    declared (:func:`arrange`), else kind MELD_WORK with its jokers undeclared; an empty
    slot becomes MELD_EMPTY. Returns whether it is valid (an empty slot counts as valid)."""
    n = slot_len(s, m)
    if n == 0:
        s.m_kind[m] = MELD_EMPTY
        return True
    order = np.empty(MELD_WIDTH, np.int64)
    decl = np.empty(1, np.int64)
    kind, n, lo = arrange(s, spec, m, order, decl)
    if kind == 0:
        s.m_kind[m] = MELD_WORK
        for i in range(n):
            c = s.m_cards[m, i]
            if spec.card_face[c] == JOKER_FACE:
                s.shown[c] = -1
        return False
    s.m_kind[m] = kind
    s.m_lo[m] = lo
    s.m_hi[m] = lo + n - 1
    for i in range(n):
        c = order[i]
        s.m_cards[m, i] = c
        s.shown[c] = decl[0] if spec.card_face[c] == JOKER_FACE else spec.card_face[c]
    f0 = s.shown[order[0]]
    s.m_suit[m] = -1 if kind == SET else f0 // NUM_RANKS
    s.m_rank[m] = f0 % NUM_RANKS if kind == SET else -1
    return True


@njit(cache=True)
def meld_value(s, spec, m):
    """GE-2 points of the valid meld in slot ``m`` (jokers as declared; an ace counts 1
    when a 2 follows it in its run, else 11)."""
    n = slot_len(s, m)
    total = 0
    for i in range(n):
        r = s.shown[s.m_cards[m, i]] % NUM_RANKS
        if r == 0 and s.m_kind[m] == RUN and i + 1 < n and s.shown[s.m_cards[m, i + 1]] % NUM_RANKS == 1:
            total += ACE_LOW_VALUE
        else:
            total += spec.rank_credit[r]
    return total


# --------------------------------------------------------------------------------------
# the position, as the mask sees it


@njit(cache=True)
def opened(s, p):
    return s.placed_before[p] != 0


@njit(cache=True)
def first_empty(s, spec):
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_EMPTY:
            return m
    return -1


@njit(cache=True)
def open_to(s, p, m, new):
    """Whether p's edits may reach slot ``m``: the first empty slot (``new``) or a meld --
    before opening (RR-5) only one started in this play."""
    if m == new:
        return True
    return s.m_kind[m] != MELD_EMPTY and (opened(s, p) or s.m_new[m] != 0)


@njit(cache=True)
def table_valid(s, spec):
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_WORK:
            return False
    return True


@njit(cache=True)
def placed_from_hand(s, spec):
    for c in range(spec.num_cards):
        if s.taken[c] != 0:
            return True
    return False


@njit(cache=True)
def opening_total(s, spec):
    """The points of the valid melds started in this play (RR-5 counts them)."""
    total = 0
    for m in range(spec.max_melds):
        if s.m_new[m] != 0 and s.m_kind[m] != MELD_WORK and s.m_kind[m] != MELD_EMPTY:
            total += meld_value(s, spec, m)
    return total


@njit(cache=True)
def commit_legal(s, spec, p):
    if s.editing == 0 or s.obligation >= 0 or not table_valid(s, spec):
        return False
    if not placed_from_hand(s, spec):
        return False                         # RR-6: at least one card from the hand
    return opened(s, p) or opening_total(s, spec) >= spec.open_min


@njit(cache=True)
def stock_size(s):
    return s.stock_len - s.stock_ptr


@njit(cache=True)
def hand_card(s, spec, p, f):
    """The lowest-id card of face ``f`` (JOKER_FACE: a joker) in p's hand, or -1."""
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p and spec.card_face[c] == f:
            return c
    return -1


@njit(cache=True)
def slot_card(s, spec, m, f):
    """The lowest-id card of face ``f`` in slot ``m``, or -1."""
    best = -1
    for k in range(slot_len(s, m)):
        c = s.m_cards[m, k]
        if spec.card_face[c] == f and (best < 0 or c < best):
            best = c
    return best


@njit(cache=True)
def template_card_count(spec, t, held, jokers):
    """Jokers a ``meld`` of template ``t`` needs from a hand holding faces ``held`` (bits)
    and ``jokers`` jokers, or -1 if it cannot be laid (RR-3: one joker at most)."""
    tm = np.uint64(spec.t_mask[t])
    have = tm & held
    k = 0
    x = tm & ~have
    while x:
        x &= x - np.uint64(1)
        k += 1
    if k > 1 or k > jokers:
        return -1
    return k


@njit(cache=True)
def hand_bits(s, spec, p):
    """(faces p holds as bits, p's jokers)."""
    held = np.uint64(0)
    jokers = 0
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            f = spec.card_face[c]
            if f == JOKER_FACE:
                jokers += 1
            else:
                held |= np.uint64(1) << np.uint64(f)
    return held, jokers


# --------------------------------------------------------------------------------------
# the legal-action mask


@njit(cache=True)
def legal_mask(s, spec, mask, scratch):
    """Write the exact legal-action mask of game ``s`` into ``mask`` (int8, zeroed here)."""
    mask[:] = 0
    if s.phase >= PHASE_HAND_OVER:
        return
    p = s.current
    if s.obligation >= 0:                    # a lifted card: set it down, or reset
        src = s.meld_of[s.obligation]
        new = first_empty(s, spec)
        for m in range(spec.max_melds):
            if m != src and open_to(s, p, m, new) and slot_len(s, m) < MELD_WIDTH:
                mask[spec.a_put + m] = 1
        mask[spec.a_reset] = 1
        return
    if s.editing != 0:
        mask[spec.a_reset] = 1
        if commit_legal(s, spec, p):
            mask[spec.a_commit] = 1
    else:
        played = s.placed_this_turn != 0
        if s.drew == 0 and stock_size(s) > 0:
            mask[spec.a_draw] = 1
        if played:
            mask[spec.a_end] = 1
        elif stock_size(s) == 0:
            mask[spec.a_pass] = 1
    if s.edits >= spec.max_edits:
        return
    new = first_empty(s, spec)
    held, jokers = hand_bits(s, spec, p)
    if new >= 0:
        for t in range(spec.num_templates):
            if template_card_count(spec, t, held, jokers) >= 0:
                mask[spec.a_meld + t] = 1
    for m in range(spec.max_melds):
        if not open_to(s, p, m, new):
            continue
        n = slot_len(s, m)
        if n < MELD_WIDTH:
            x = held
            while x:
                f = 0
                while not (x >> np.uint64(f)) & np.uint64(1):
                    f += 1
                x &= x - np.uint64(1)
                mask[spec.a_layoff + m * STRIDE + f] = 1
            if jokers > 0:
                mask[spec.a_layoff + m * STRIDE + JOKER_FACE] = 1
        for k in range(n):
            mask[spec.a_lift + m * STRIDE + spec.card_face[s.m_cards[m, k]]] = 1


def scalar_names(spec) -> tuple[str, ...]:
    return VARIANT_SCALAR_NAMES


@njit(cache=True)
def variant_scalars(s, spec, p, row, start, q):
    """Write :data:`VARIANT_SCALAR_NAMES` of seat ``p``'s view at ``row[start:]`` (x ``q``);
    the play's state is the player to move's only."""
    if s.current != p or s.phase >= PHASE_HAND_OVER:
        return
    values = (float(s.editing), 1.0 - s.edits / spec.max_edits, float(s.drew),
              min(opening_total(s, spec) / spec.open_min, 1.0),
              s.passes / spec.num_players, 1.0 if table_valid(s, spec) else 0.0)
    for k in range(len(values)):
        x = values[k]
        row[start + k] = x if q == 1.0 else np.floor(x * q + 0.5)


# --------------------------------------------------------------------------------------
# applying actions


@njit(cache=True)
def begin_edit(s):
    s.editing = 1
    s.edits += 1


@njit(cache=True)
def claim_slot(s, m, p):
    """Slot ``m`` about to receive a card: if empty it starts in this play, founded by p."""
    if s.m_kind[m] == MELD_EMPTY:
        s.m_new[m] = 1
        s.m_founder[m] = p
        s.m_kind[m] = MELD_WORK


@njit(cache=True)
def place_from_hand(s, spec, c, m, p, shows):
    """Hand card ``c`` into slot ``m`` (a joker declared ``shows``, -1: by the meld)."""
    claim_slot(s, m, p)
    s.loc[c] = LOC_TABLE
    s.owner[c] = p
    s.taken[c] = 1
    s.shown[c] = shows if spec.card_face[c] == JOKER_FACE else spec.card_face[c]
    slot_add(s, m, c)


@njit(cache=True)
def apply_meld(s, spec, t, p):
    m = first_empty(s, spec)
    used_joker = False
    for i in range(spec.t_len[t]):
        f = spec.t_faces[t, i]
        c = hand_card(s, spec, p, f)
        if c < 0:
            c = hand_card(s, spec, p, JOKER_FACE)
            used_joker = True
        place_from_hand(s, spec, c, m, p, f)
    normalise(s, spec, m)
    return used_joker


@njit(cache=True)
def apply_put(s, spec, m, p):
    c = s.obligation
    src = s.meld_of[c]
    slot_remove(s, src, c)
    if slot_len(s, src) == 0:
        s.m_new[src] = 0
    normalise(s, spec, src)
    claim_slot(s, m, p)
    if spec.card_face[c] == JOKER_FACE:
        s.shown[c] = -1                      # declared afresh by its new meld
    slot_add(s, m, c)
    normalise(s, spec, m)
    s.obligation = -1


@njit(cache=True)
def snapshot(s, spec):
    """The table as a play starts from (what ``reset`` restores)."""
    for c in range(spec.num_cards):
        s.r_meld_of[c] = s.meld_of[c] if s.loc[c] == LOC_TABLE else -1
        s.r_shown[c] = s.shown[c] if s.loc[c] == LOC_TABLE else -1
    for m in range(spec.max_melds):
        s.r_founder[m] = s.m_founder[m]
        s.m_new[m] = 0


@njit(cache=True)
def reset_play(s, spec, p):
    """Return the hand cards placed in this play and every table card to its place."""
    for m in range(spec.max_melds):
        for k in range(MELD_WIDTH):
            s.m_cards[m, k] = -1
        s.m_kind[m] = MELD_EMPTY
        s.m_founder[m] = s.r_founder[m]
        s.m_new[m] = 0
    for c in range(spec.num_cards):
        if s.taken[c] != 0:
            s.loc[c] = LOC_HAND + p
            s.taken[c] = 0
            s.meld_of[c] = -1
            s.shown[c] = -1
            s.owner[c] = -1
        elif s.loc[c] == LOC_TABLE:
            s.shown[c] = s.r_shown[c]
            slot_add(s, s.r_meld_of[c], c)
    for m in range(spec.max_melds):
        if slot_len(s, m) > 0:
            s.m_kind[m] = MELD_WORK
            normalise(s, spec, m)
    s.obligation = -1
    s.editing = 0


@njit(cache=True)
def commit_play(s, spec, p):
    """Close the play: its table stands; an unopened seat has opened (RR-5)."""
    for c in range(spec.num_cards):
        s.taken[c] = 0
    s.placed_before[p] = 1
    s.placed_this_turn = 1
    s.editing = 0
    snapshot(s, spec)


@njit(cache=True)
def hand_value(s, spec, p):
    v = 0
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            v += spec.hand_value[spec.card_face[c]]
    return v


@njit(cache=True)
def apply_action(s, spec, a):
    """Play legal action ``a`` for the current player; returns an EVENT_* code."""
    p = s.current
    if a == spec.a_draw:
        draw_stock(s, p)
        s.drew = 1
        if s.placed_this_turn == 0:          # RR-4: who did not play draws and is done
            return end_turn(s, spec, False)
        return EVENT_NONE
    if a == spec.a_pass:
        return end_turn(s, spec, True)
    if a == spec.a_end:
        return end_turn(s, spec, False)
    if a == spec.a_reset:
        reset_play(s, spec, p)
        return EVENT_NONE
    if a == spec.a_commit:
        commit_play(s, spec, p)
        if hand_size_of(s, spec, p) == 0:       # RR-7: the first to empty the hand wins
            return score_hand(s, spec, p)
        return EVENT_NONE
    if a >= spec.a_put:                      # completes its lift: one edit between them
        apply_put(s, spec, a - spec.a_put, p)
        return EVENT_NONE
    begin_edit(s)
    if spec.a_meld <= a < spec.a_meld + spec.num_templates:
        apply_meld(s, spec, a - spec.a_meld, p)
    elif spec.a_layoff <= a < spec.a_layoff + spec.max_melds * STRIDE:
        m, f = divmod(a - spec.a_layoff, STRIDE)
        place_from_hand(s, spec, hand_card(s, spec, p, f), m, p, -1)
        normalise(s, spec, m)
    else:
        m, f = divmod(a - spec.a_lift, STRIDE)
        s.obligation = slot_card(s, spec, m, f)
    return EVENT_NONE


# --------------------------------------------------------------------------------------
# dealing, turns, scoring


@njit(cache=True)
def start_hand(s, spec):
    """RR-1: deal ``s.deck`` (``hand_size`` each from the seat after the dealer); the rest
    is the stock, top first -- no discard pile, so the up-card the shared deal turns goes
    back on top of the stock."""
    deal(s, spec)
    up = s.discard[0]
    for i in range(s.stock_len, 0, -1):
        s.stock[i] = s.stock[i - 1]
    s.stock[0] = up
    s.stock_len += 1
    s.loc[up] = LOC_STOCK
    s.discard_len = 0
    s.phase = PHASE_PLAY
    s.edits = 0
    s.drew = 0
    s.editing = 0
    s.passes = 0
    snapshot(s, spec)


@njit(cache=True)
def new_game(s, spec, seed, dealer, deck_given):
    """Start a game (:func:`rules.begin_game`, the first dealer at random) and deal."""
    begin_game(s, spec, seed, dealer, deck_given, False)
    start_hand(s, spec)


@njit(cache=True)
def next_hand(s, spec):
    """The next hand of the game: the next seat deals."""
    s.hand_no += 1
    s.dealer = (s.dealer + 1) % spec.num_players
    shuffle_deck(s, spec)
    start_hand(s, spec)


@njit(cache=True)
def end_turn(s, spec, passed):
    """The turn is over: the next seat plays; every seat passing in turn (RR-7), or the
    turn cap, ends the hand."""
    s.passes = s.passes + 1 if passed else 0
    s.edits = 0
    s.drew = 0
    s.placed_this_turn = 0
    s.turn += 1
    if s.passes >= spec.num_players or s.turn >= spec.max_turns:
        return score_hand(s, spec, -1)
    s.current = (s.current + 1) % spec.num_players
    return EVENT_NONE


@njit(cache=True)
def score_hand(s, spec, went_out):
    """RR-7 and the result per seat (docs/robbers_rummy.md, D11): the winner is the
    seat that went out (``went_out``), else the seats with fewest cards, then the lowest
    hand value. Every other seat scores minus its hand value; the winners share what the
    others lost (the remainder one point each in turn order from the dealer's left), so
    a hand's points sum to zero. One hand per seat as dealer makes a game."""
    P = spec.num_players
    best_cards = 1 << 30
    best_value = 1 << 30
    for p in range(P):
        s.h_deadwood[p] = hand_value(s, spec, p)
        s.h_credit[p] = 0
        s.h_bonus[p] = 0
        n = hand_size_of(s, spec, p)
        v = s.h_deadwood[p]
        if went_out >= 0:
            if p == went_out:
                best_cards, best_value = 0, 0
        elif n < best_cards or n == best_cards and v < best_value:
            best_cards, best_value = n, v
    winners = 0
    lost = 0
    for p in range(P):
        if hand_size_of(s, spec, p) == best_cards and s.h_deadwood[p] == best_value:
            winners += 1
        else:
            lost += s.h_deadwood[p]
    k = 0
    s.h_winner = -1
    for i in range(P):
        p = (s.dealer + 1 + i) % P
        if hand_size_of(s, spec, p) == best_cards and s.h_deadwood[p] == best_value:
            s.h_points[p] = lost // winners + (1 if k < lost % winners else 0)
            k += 1
            if winners == 1:
                s.h_winner = p
        else:
            s.h_points[p] = -s.h_deadwood[p]
    for p in range(P):
        s.h_sp[p] = s.h_points[p]
        s.scores[p] += s.h_points[p]
    mark_hand_end(s, went_out)
    if s.hand_no + 1 >= P:
        mark_game_winner(s, P)
        s.phase = PHASE_GAME_OVER
        return EVENT_GAME_OVER
    if spec.episode_game:
        next_hand(s, spec)
    else:
        s.phase = PHASE_HAND_OVER
    return EVENT_HAND_OVER


__all__ = [
    "RobbersSpec", "robbers_state_dtype", "legal_mask", "apply_action", "new_game", "next_hand",
    "start_hand", "arrange", "normalise", "meld_value", "commit_legal", "scalar_names",
    "MAX_CLEAR_DEPTH",
]


register_kernels(RobbersSpec, sys.modules[__name__])
