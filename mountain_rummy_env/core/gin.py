"""Gin Rummy rules (docs/gin_rummy.md) as compiled functions over state records.

The same entry points as :mod:`.rules` (``new_game_batch``, ``step_batch``, ``mask_batch``,
``next_hand``, ``apply_action``, ``legal_mask``) over the same record layout plus a few
Gin fields (:func:`gin_state_dtype`), and a :class:`GinSpec` (Mountain's :class:`Spec` fields
plus Gin options and the joker-free solver tables). Dealing, shuffling, the generator and
the table moves (``apply_meld``, ``apply_layoff``, ``layoff_position``) are Mountain's own
functions from :mod:`.rules`; deadwood is the exact best in-hand arrangement
(:func:`mountain_rummy_env.solver.nojoker_gain_kernel`).

A hand moves through steps (``g_step``); ``phase`` keeps the shared meaning
(draw / play / response / hand over / game over) so observations and adapters work as is:

=============  ======  =====================================================================
step           phase   legal actions
=============  ======  =====================================================================
OFFER          draw    GR-1: ``take <up-card>`` or ``pass``; after two passes ``draw stock``
DRAW           draw    GR-2: ``draw stock`` or ``take <top>``
DISCARD        play    GR-2/GR-3: ``discard c`` (not the card just taken) or ``knock c``
                       (discard ``c`` and knock: deadwood of the other ten <= knock_card)
WALL           draw    OpenSpiel only: ``take <top>`` (to knock with it) or ``pass`` (draw)
KNOCK_ONLY     play    OpenSpiel only, after a wall ``take``: ``knock c``
KNOCK_MELD     resp.   knocker: ``meld t`` (keeps deadwood <= knock_card reachable), ``pass``
                       once the unmelded cards total <= knock_card
LAYOFF         resp.   defender (not after gin): ``layoff c`` on the knocker's melds, ``pass``
DEF_MELD       resp.   defender: ``meld t`` from hand, ``pass`` (scores the hand, GR-4)
=============  ======  =====================================================================
"""

from __future__ import annotations

import sys
from typing import NamedTuple

import numpy as np
from numba import njit

from ..cards import NUM_RANKS
from ..solver import nojoker_gain_kernel
from .rules import (
    apply_layoff, apply_meld, begin_game, deal, draw_stock, leave_hand, layoff_position,
    shuffle_deck,
)
from .batch import register_kernels
from .spec import Spec
from .state import (
    BONUS_GIN, BONUS_UNDERCUT, END_EXHAUSTED, END_KNOCK, EVENT_GAME_OVER, EVENT_HAND_OVER,
    EVENT_NONE, LOC_DISCARD, LOC_HAND, MELD_EMPTY, MELD_WIDTH, PHASE_DRAW,
    PHASE_GAME_OVER, PHASE_HAND_OVER, PHASE_PLAY, PHASE_RESPONSE, state_dtype,
)

RUN = 2
MAX_CLEAR_DEPTH = 0        # Gin needs no dead-end search (Game sizes its scratch from rules)
WALL_STOCK = 2             # GR-5

# steps of a hand (g_step)
OFFER, DRAW, DISCARD, WALL, KNOCK_ONLY, KNOCK_MELD, LAYOFF, DEF_MELD, OVER = range(9)
STEP_NAMES = ("offer", "draw", "discard", "wall", "knock only", "knock melds", "layoff",
              "defender melds", "over")

GIN_FIELDS = [
    ("g_step", np.int8),
    ("g_passes", np.int8),     # GR-1: passes on the first up-card
    ("g_prev_up", np.int8),    # OpenSpiel: the up-card at the last draw (repeated-move rule)
    ("g_repeat", np.int8),     # OpenSpiel: the last discard returned the card just taken
    ("g_up_draws", np.int16),  # OpenSpiel: up-card draws in the draw phase
    ("g_gin", np.int8),        # the knocker went gin
]


def gin_state_dtype(num_cards: int, max_melds: int, num_players: int) -> np.dtype:
    """Mountain's record layout plus :data:`GIN_FIELDS`."""
    base = state_dtype(num_cards, max_melds, num_players)
    return np.dtype(base.descr + GIN_FIELDS)


# Every Spec field (same meanings; ``a_done`` is Gin's ``pass``) plus Gin's own. A distinct
# namedtuple type, so numba compiles Gin's kernels for it and the batch loops dispatch on it.
GinSpec = NamedTuple("GinSpec", [
    *Spec.__annotations__.items(),
    ("gin_bonus", int),
    ("tie_is_undercut", bool),
    ("openspiel", bool),
    ("max_meld_len", int),          # OpenSpiel declares runs of at most 5 cards
    ("max_upcard_draws", int),      # OpenSpiel: the 50th up-card draw ends the hand (draw)
    ("run_best", np.ndarray),       # solver.fast_tables (joker-free exact deadwood)
    ("tgain", np.ndarray),
    ("set_ids", np.ndarray),
    ("set_cnt", np.ndarray),
])
GinSpec.__module__ = __name__


assert GinSpec._fields[: len(Spec._fields)] == Spec._fields


# --------------------------------------------------------------------------------------
# helpers


@njit(cache=True)
def hand_bits(s, spec, p):
    bits = np.int64(0)
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            bits |= np.int64(1) << np.int64(c)
    return bits


@njit(cache=True)
def bits_value(spec, bits):
    v = 0
    x = bits
    c = 0
    while x:
        if x & 1:
            v += spec.hand_value[c]
        x >>= 1
        c += 1
    return v


@njit(cache=True)
def deadwood(spec, bits):
    """Exact minimum deadwood of the cards in ``bits`` (best in-hand arrangement)."""
    gain = nojoker_gain_kernel(bits, spec.t_mask, spec.run_best, spec.tgain, spec.set_ids,
                               spec.set_cnt)
    return bits_value(spec, bits) - gain


@njit(cache=True)
def top_card(s):
    return s.discard[s.discard_len - 1] if s.discard_len > 0 else -1


@njit(cache=True)
def stock_left(s):
    return s.stock_len - s.stock_ptr


@njit(cache=True)
def layoff_slot(s, spec, c):
    """Meld slot of the knocker's melds where card ``c`` lays off, or -1: a run before a set
    (a card completing a set and extending a run extends the run, which keeps the further
    layoffs open, as OpenSpiel counts it). OpenSpiel lays off at most two cards beyond each
    end of a run as the knocker declared it."""
    f = spec.card_face[c]
    for k in range(2 * spec.max_melds):
        m = k % spec.max_melds
        if s.m_kind[m] == MELD_EMPTY or s.m_founder[m] != s.ender:
            continue
        if (k < spec.max_melds) != (s.m_kind[m] == RUN):
            continue
        pos = layoff_position(s, spec, m, f)
        if pos < 0:
            continue
        if spec.openspiel and s.m_kind[m] == RUN:
            lo = 99
            hi = -1
            for k in range(MELD_WIDTH):
                x = s.m_cards[m, k]
                if x >= 0 and s.owner[x] == s.ender:
                    lo = min(lo, k)
                    hi = max(hi, k)
            if pos < lo - 2 or pos > hi + 2:
                continue
        return m
    return -1


# --------------------------------------------------------------------------------------
# the legal-action mask


@njit(cache=True)
def _knock_mask(s, spec, mask, p, respect_taken):
    bits = hand_bits(s, spec, p)
    for c in range(spec.num_cards):
        if s.loc[c] != LOC_HAND + p or (respect_taken and s.taken[c] != 0):
            continue
        if deadwood(spec, bits & ~(np.int64(1) << np.int64(c))) <= spec.knock_limit:
            mask[spec.a_knock + c] = 1


@njit(cache=True)
def _meld_mask(s, spec, mask, p, limit):
    """Templates held in p's hand (OpenSpiel: runs of <= 5) leaving deadwood <= ``limit``."""
    bits = hand_bits(s, spec, p)
    for t in range(spec.num_templates):
        tm = np.int64(spec.t_mask[t])
        if tm & ~bits or spec.t_len[t] > spec.max_meld_len:
            continue
        if limit >= 0 and deadwood(spec, bits & ~tm) > limit:
            continue
        mask[spec.a_meld + t] = 1


@njit(cache=True)
def legal_mask(s, spec, mask, scratch):
    """Write the exact legal-action mask of game ``s`` into ``mask`` (int8, zeroed here)."""
    mask[:] = 0
    if s.phase >= PHASE_HAND_OVER:
        return
    p = s.current
    step = s.g_step
    top = top_card(s)
    if step == OFFER:
        if s.g_passes >= 2:
            mask[spec.a_draw] = 1
        else:
            mask[spec.a_take + top] = 1
            mask[spec.a_done] = 1
    elif step == DRAW:
        mask[spec.a_draw] = 1
        mask[spec.a_take + top] = 1
    elif step == DISCARD:
        respect = not spec.openspiel
        for c in range(spec.num_cards):
            if s.loc[c] == LOC_HAND + p and not (respect and s.taken[c] != 0):
                mask[spec.a_discard + c] = 1
        _knock_mask(s, spec, mask, p, respect)
    elif step == WALL:
        mask[spec.a_done] = 1
        bits = hand_bits(s, spec, p) | (np.int64(1) << np.int64(top))
        for c in range(spec.num_cards):
            if not (bits >> np.int64(c)) & 1:
                continue
            if deadwood(spec, bits & ~(np.int64(1) << np.int64(c))) <= spec.knock_limit:
                mask[spec.a_take + top] = 1
                break
    elif step == KNOCK_ONLY:
        _knock_mask(s, spec, mask, p, False)
    elif step == KNOCK_MELD:
        _meld_mask(s, spec, mask, p, spec.knock_limit)
        if bits_value(spec, hand_bits(s, spec, p)) <= spec.knock_limit:
            mask[spec.a_done] = 1
    elif step == LAYOFF:
        mask[spec.a_done] = 1
        for c in range(spec.num_cards):
            if s.loc[c] == LOC_HAND + p and layoff_slot(s, spec, c) >= 0:
                mask[spec.a_layoff + c] = 1
    elif step == DEF_MELD:
        mask[spec.a_done] = 1
        _meld_mask(s, spec, mask, p, -1)


# --------------------------------------------------------------------------------------
# dealing, scoring


@njit(cache=True)
def start_hand(s, spec):
    """Deal ``s.deck`` (Mountain's :func:`deal`: alternately from the non-dealer, one up-card,
    the rest the stock) and open the GR-1 up-card offer to the non-dealer."""
    deal(s, spec)
    s.g_step = OFFER
    s.g_passes = 0
    s.g_prev_up = -1
    s.g_repeat = 0
    s.g_up_draws = 0
    s.g_gin = 0


@njit(cache=True)
def new_game(s, spec, seed, dealer, deck_given):
    """Start a game (:func:`rules.begin_game`, the first dealer at random) and Gin's hand."""
    begin_game(s, spec, seed, dealer, deck_given, False)
    start_hand(s, spec)


@njit(cache=True)
def finish_hand(s, spec, knocker, dk, dd):
    """GR-4 (or OpenSpiel's returns) for a knock by ``knocker`` (``dk`` < 0: a drawn hand);
    then the next hand (``episode='game'``, dealer alternates) or the end."""
    P = spec.num_players
    for p in range(P):
        s.h_credit[p] = 0
        s.h_deadwood[p] = 0
        s.h_sp[p] = 0
        s.h_bonus[p] = 0
        s.h_points[p] = 0
    s.h_bonus_kinds = 0
    s.h_winner = -1
    s.g_step = OVER
    if dk < 0:
        s.h_end_kind = END_EXHAUSTED
        s.h_ender = -1
        s.end_kind = END_EXHAUSTED
        s.ender = -1
    else:
        d = (knocker + 1) % P
        s.h_deadwood[knocker] = dk
        s.h_deadwood[d] = dd
        s.h_end_kind = END_KNOCK
        s.h_ender = knocker
        winner = -1
        base = 0
        bonus = 0
        kinds = 0
        if spec.openspiel:                           # OpenSpiel's Returns()
            r = dd - dk
            if dk == 0:
                r += spec.gin_bonus
            if r < 0:
                r -= spec.undercut_bonus
                winner = d
                bonus = spec.undercut_bonus
                kinds = BONUS_UNDERCUT
                base = -r - bonus
            elif r > 0:
                winner = knocker
                if dk == 0:
                    bonus = spec.gin_bonus
                    kinds = BONUS_GIN
                base = r - bonus
        elif dk == 0:
            winner = knocker
            base = dd
            bonus = spec.gin_bonus
            kinds = BONUS_GIN
        elif dd < dk or (dd == dk and spec.tie_is_undercut):
            winner = d
            base = dk - dd
            bonus = spec.undercut_bonus
            kinds = BONUS_UNDERCUT
        else:
            winner = knocker
            base = dd - dk
        if winner >= 0:
            s.h_sp[winner] = base
            s.h_bonus[winner] = bonus
            s.h_points[winner] = base + bonus
            s.scores[winner] += base + bonus
        s.h_winner = winner
        s.h_bonus_kinds = kinds
    if s.h_winner >= 0 and s.scores[s.h_winner] >= spec.target_score:
        s.game_winner = s.h_winner
        s.phase = PHASE_GAME_OVER
        return EVENT_GAME_OVER
    if spec.episode_game:
        s.hand_no += 1
        s.dealer = (s.dealer + 1) % P
        shuffle_deck(s, spec)
        start_hand(s, spec)
    else:
        s.phase = PHASE_HAND_OVER
    return EVENT_HAND_OVER


@njit(cache=True)
def _to_hand(s, c, p, from_pile):
    s.loc[c] = LOC_HAND + p
    if from_pile:
        s.discard_len -= 1
        s.taken[c] = 1
        s.public[c] = 1


@njit(cache=True)
def _meld_from_hand(s, spec, t):
    n = spec.t_len[t]
    used = np.empty(MELD_WIDTH, np.int16)
    decl = np.empty(MELD_WIDTH, np.int16)
    for i in range(n):
        used[i] = spec.t_faces[t, i]   # one deck, no jokers: card id == face
        decl[i] = spec.t_faces[t, i]
    apply_meld(s, spec, t, used, decl, n)


@njit(cache=True)
def apply_action(s, spec, a):
    """Play legal action ``a`` for the current player; returns an EVENT_* code."""
    p = s.current
    o = (p + 1) % spec.num_players
    step = s.g_step
    top = top_card(s)
    if step == OFFER or step == DRAW:
        if a == spec.a_done:                         # GR-1 pass
            s.g_passes += 1
            s.current = o
            return EVENT_NONE
        if step == DRAW and a != spec.a_draw and spec.openspiel:
            s.g_up_draws += 1
            if s.g_up_draws >= spec.max_upcard_draws:
                return finish_hand(s, spec, p, -1, -1)
        s.g_prev_up = top
        if a == spec.a_draw:
            draw_stock(s, p)
        else:
            _to_hand(s, top, p, True)
        s.g_step = DISCARD
        s.phase = PHASE_PLAY
        return EVENT_NONE
    if step == WALL:
        if a == spec.a_done:
            return finish_hand(s, spec, p, -1, -1)
        _to_hand(s, top, p, True)
        s.g_step = KNOCK_ONLY
        s.phase = PHASE_PLAY
        return EVENT_NONE
    if step == DISCARD or step == KNOCK_ONLY:
        knock = a >= spec.a_knock
        c = a - (spec.a_knock if knock else spec.a_discard)
        for x in range(spec.num_cards):
            s.taken[x] = 0
        leave_hand(s, c)
        s.loc[c] = LOC_DISCARD
        s.discard[s.discard_len] = c
        s.discard_len += 1
        s.turn += 1
        if knock:                                    # GR-3
            s.end_kind = END_KNOCK
            s.ender = p
            s.g_step = KNOCK_MELD
            s.phase = PHASE_RESPONSE
            return EVENT_NONE
        if spec.openspiel:
            if c == s.g_prev_up:
                if s.g_repeat:
                    return finish_hand(s, spec, p, -1, -1)
                s.g_repeat = 1
            else:
                s.g_repeat = 0
        s.current = o
        s.phase = PHASE_DRAW
        if stock_left(s) <= WALL_STOCK:              # GR-5
            if spec.openspiel:
                s.g_step = WALL
                return EVENT_NONE
            return finish_hand(s, spec, p, -1, -1)
        if s.turn >= spec.max_turns:
            return finish_hand(s, spec, p, -1, -1)
        s.g_step = DRAW
        return EVENT_NONE
    if step == KNOCK_MELD:
        if a == spec.a_done:
            s.g_gin = 1 if bits_value(spec, hand_bits(s, spec, p)) == 0 else 0
            s.current = o
            s.g_step = DEF_MELD if s.g_gin else LAYOFF
            return EVENT_NONE
        _meld_from_hand(s, spec, a - spec.a_meld)
        return EVENT_NONE
    if step == LAYOFF:
        if a == spec.a_done:
            s.g_step = DEF_MELD
            return EVENT_NONE
        c = a - spec.a_layoff
        apply_layoff(s, spec, layoff_slot(s, spec, c), spec.card_face[c], c)
        return EVENT_NONE
    if step == DEF_MELD:
        if a == spec.a_done:
            k = s.ender
            dk = bits_value(spec, hand_bits(s, spec, k))
            dd = bits_value(spec, hand_bits(s, spec, p))
            return finish_hand(s, spec, k, dk, dd)
        _meld_from_hand(s, spec, a - spec.a_meld)
        return EVENT_NONE
    return EVENT_NONE


@njit(cache=True)
def next_hand(s, spec):
    """From a finished hand (episode = hand) deal the next hand of the same game."""
    s.hand_no += 1
    s.dealer = (s.dealer + 1) % spec.num_players
    shuffle_deck(s, spec)
    start_hand(s, spec)


__all__ = [
    "GinSpec", "gin_state_dtype", "legal_mask", "apply_action", "new_game", "next_hand",
    "deadwood", "MAX_CLEAR_DEPTH", "STEP_NAMES", "NUM_RANKS",
]


register_kernels(GinSpec, sys.modules[__name__])
