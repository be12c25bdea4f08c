"""German (and Crazy) Rummy's solver feature block of the observation (``obs_features="solver"``).

The values the compiled German ``rules`` player (:mod:`mountain_rummy_env.german_player`,
played by ``agents/german_policy.py``) decides by, per face and per choice, computed from
the observing seat's information only (its hand, the discard pile, the table, who has
opened, hand sizes and the cards known to be in the next seat's hand; never a hidden
card): docs/observation.md, "Solver features", German. The rules player's parameters are
the variant's defaults (``rules_params(variant.name)``), so Crazy Rummy's block asks its
own rules player's questions (no opening minimum there: ``can_open`` is 1 and
``open_margin`` is the meld credit / 40).

:mod:`mountain_rummy_env.solver_features` dispatches here by spec type (``GermanSpec``);
the Mountain block is untouched.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .core.german import (
    fillable_templates, hand_layers, opening_possible, opening_reachable,
    pending_face, top_card, with_face, without_naturals,
)
from .core.rules import card_face_now, hand_size_of, is_wild, popcount
from .core.spec import spec_of
from .core.state import LOC_HAND, PHASE_DRAW, PHASE_PLAY
from .german_player import (
    P_CASH, P_FEED_KNOWN, P_FEED_LAYOFF, P_RULES, _danger, _in_partial, _joins, _layable,
    _related, german_action, seat_discard_scores,
)
from .solver import OBJ_CREDIT, OBJ_DEADWOOD, solve_multiset_ws
from .solver_features import quantise

JOKER_FACE = 52

# scales: a rules discard score runs from about -150 (partners kept) to +22 (-1000: a
# joker), a card's removal changes the least deadwood by -20 .. +60, a take by as much
SCORE_SCALE, DEADWOOD_SCALE, FEED_SCALE, CREDIT_SCALE, HAND_SCALE = 100.0, 50.0, 32.0, 100.0, 200.0
OPEN_SCALE = 40.0

# the blocks in order, 53 columns each (face f < 52, the joker at 52):
#   discard_score    held face f: the rules player's discard score / SCORE_SCALE, signed
#                    (seat_discard_scores; 0 where it may not discard f, -1 for a joker)
#   discard_deadwood held face f: (least deadwood(hand - f) - least deadwood(hand)) / 50, signed
#   in_melds         held face f: melded in every least-deadwood arrangement
#   in_partial       held natural f: in a pair or a two-card run (greedy's _in_partial)
#   layable          natural f lays off on a table meld now (_layable)
#   joins            a card of face f, taken, joins a meld of naturals or lays off
#                    (the rules player's take test _joins; joker column: a joker would)
#   feed_risk        natural f: the rules player's penalty for feeding the next seat (it can
#                    lay f off once opened, it holds known partners of f) / FEED_SCALE
#   rules_play       to move in the play phase: the faces the rules player's action puts
#                    down (a meld's held faces, joker column if it needs one; a layoff's, a
#                    swap's natural) or discards
GERMAN_BLOCK_NAMES = ("discard_score", "discard_deadwood", "in_melds", "in_partial", "layable",
                      "joins", "feed_risk", "rules_play")
G_SCORE, G_DDW, G_MELDS, G_PARTIAL, G_LAY, G_JOINS, G_FEED, G_PLAY = range(8)
NUM_GERMAN_BLOCKS = 8
# scalars after the blocks
Y_OPENED = 0         # the seat has opened (GE-5)
Y_CAN_OPEN = 1       # not opened: melds from the hand can still reach 40 this turn
Y_MELD_CREDIT = 2    # the most credit disjoint melds of the hand earn / CREDIT_SCALE
Y_OPEN_MARGIN = 3    # not opened: (turn's total + that credit - 40) / 40, signed
Y_DEADWOOD = 4       # the hand's least deadwood / HAND_SCALE
Y_DANGER = 5         # an opponent may go out soon (rules' danger)
Y_CASH = 6           # the rules player plays its jokers now (small hand or danger)
Y_TOP_JOINS = 7      # the pile top joins a meld of naturals or lays off (_joins)
Y_TOP_OPENS = 8      # not opened: an opening using the pile top is reachable (GE-5)
Y_TOP_GAIN = 9       # (deadwood(hand) + value(top) - deadwood(hand + top)) / 50
Y_RULES_TAKES = 10   # to move, drawing: the rules player takes the top discard
Y_RULES_MELDS = 11   # to move, playing: the rules player's action is a meld
Y_RULES_LAYS_OFF = 12
Y_RULES_SWAPS = 13
Y_RULES_DISCARDS = 14
NUM_GERMAN_SCALARS = 15
GERMAN_SCALAR_NAMES = ("opened", "can_open", "meld_credit", "open_margin", "deadwood", "danger",
                       "cash", "top_joins", "top_opens", "top_gain", "rules_takes", "rules_melds",
                       "rules_lays_off", "rules_swaps", "rules_discards")
GERMAN_SIGNED = ("discard_score", "discard_deadwood", "open_margin")
GERMAN_SCALED = ("discard_score", "discard_deadwood", "feed_risk", "meld_credit", "open_margin",
                 "deadwood", "top_gain")


def german_layout(variant) -> list[tuple[str, int, int]]:
    """``(name, offset, length)`` of every part of the German block."""
    F = JOKER_FACE + 1
    rows = [(name, k * F, F) for k, name in enumerate(GERMAN_BLOCK_NAMES)]
    off = NUM_GERMAN_BLOCKS * F
    return rows + [(name, off + k, 1) for k, name in enumerate(GERMAN_SCALAR_NAMES)]


@njit(cache=True)
def _solve(spec, ws, once, twice, nj, objective):
    """(deadwood, credit) of the hand's best arrangement under ``objective`` (jokers free
    to stand for any face)."""
    out_tmpl = np.empty(2 * JOKER_FACE, np.int32)
    out_nat = np.empty(2 * JOKER_FACE, np.int64)
    ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h = ws
    r = solve_multiset_ws(once, twice, nj, spec.t_mask, spec.t_len, spec.t_faces, spec.t_credit,
                          spec.solver_values, objective, np.uint64(0), -1, spec.min_naturals,
                          -1, False, out_tmpl, out_nat, ws_i, ws_f, ws_cand, ws_gn, ws_gj,
                          ws_by, ws_h)
    return r[1], r[2]


@njit(cache=True)
def least_deadwood(spec, ws, once, twice, nj):
    """Least deadwood of a hand given as layers (:func:`core.german.hand_layers`)."""
    return _solve(spec, ws, once, twice, nj, OBJ_DEADWOOD)[0]


@njit(cache=True)
def feed_risk(s, spec, p, f, params, lay):
    """The rules player's penalty for seat ``p`` discarding natural ``f`` (``lay``: f lays
    off on the table): the next seat, opened, could lay it off; it holds known partners."""
    nq = (p + 1) % spec.num_players
    r = 0.0
    if s.placed_before[nq] != 0 and lay:
        r += params[P_FEED_LAYOFF]
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + nq and s.public[c] != 0 and not is_wild(s, spec, c):
            r += params[P_FEED_KNOWN] * _related(f, spec.card_face[c])
    return r


@njit(cache=True)
def _german_features(s, spec, p, params, work, ws, order, row, q):
    """The German block of seat ``p``'s view of ``s`` into ``row`` (zeroed here)."""
    F = JOKER_FACE + 1
    x = NUM_GERMAN_BLOCKS * F
    row[:x + NUM_GERMAN_SCALARS] = 0
    counts = np.zeros(F, np.int64)
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            counts[card_face_now(s, spec, c)] += 1
    once, twice, nj = hand_layers(s, spec, p)
    rules = params[P_RULES] > 0
    opened = s.placed_before[p] != 0
    to_move = s.current == p
    # the rules player's discard scores
    scores = np.empty(F, np.float64)
    seat_discard_scores(s, spec, p, params, scores)
    for f in range(F):
        if scores[f] > -np.inf:
            row[G_SCORE * F + f] = quantise(scores[f] / SCORE_SCALE, q)
    # the least deadwood, and per held face the hand without one copy of it
    base = least_deadwood(spec, ws, once, twice, nj)
    for f in range(F):
        if counts[f] == 0:
            continue
        if f == JOKER_FACE:
            dw = least_deadwood(spec, ws, once, twice, nj - 1)
        else:
            o, w = without_naturals(once, twice, np.uint64(1) << np.uint64(f))
            dw = least_deadwood(spec, ws, o, w, nj)
        d = dw - base
        row[G_DDW * F + f] = quantise(d / DEADWOOD_SCALE, q)
        if d != -spec.solver_values[f]:
            row[G_MELDS * F + f] = 1
    # per face: partials, layoffs, joins, feeding the next seat
    for f in range(JOKER_FACE):
        lay = _layable(s, spec, f)
        if lay:
            row[G_LAY * F + f] = 1
        if counts[f] > 0 and _in_partial(f, counts):
            row[G_PARTIAL * F + f] = 1
        if lay or _joins(s, spec, f, once, nj, counts, rules):
            row[G_JOINS * F + f] = 1
        row[G_FEED * F + f] = quantise(feed_risk(s, spec, p, f, params, lay) / FEED_SCALE, q)
    if _joins(s, spec, JOKER_FACE, once, nj, counts, rules):
        row[G_JOINS * F + JOKER_FACE] = 1
    # the opening (GE-5) and the hand's meld credit
    total, pending = 0, -1
    if to_move and s.phase == PHASE_PLAY:
        total, pending = s.open_total, pending_face(s, spec)
    credit = _solve(spec, ws, once, twice, nj, OBJ_CREDIT)[1]
    row[x + Y_MELD_CREDIT] = quantise(credit / CREDIT_SCALE, q)
    if opened:
        row[x + Y_OPENED] = 1
    else:
        if opening_possible(spec, fillable_templates(spec, once, nj), once, twice, nj, total,
                            pending):
            row[x + Y_CAN_OPEN] = 1
        row[x + Y_OPEN_MARGIN] = quantise((total + credit - spec.open_min) / OPEN_SCALE, q)
    row[x + Y_DEADWOOD] = quantise(base / HAND_SCALE, q)
    danger = _danger(s, spec, p, params)
    if danger:
        row[x + Y_DANGER] = 1
    if hand_size_of(s, spec, p) <= params[P_CASH] or danger:
        row[x + Y_CASH] = 1
    # the pile top
    top = top_card(s)
    if top >= 0:
        tf = card_face_now(s, spec, top)
        if _joins(s, spec, tf, once, nj, counts, rules):
            row[x + Y_TOP_JOINS] = 1
        o, w, j = with_face(once, twice, nj, tf)
        if not opened and opening_reachable(spec, ws, o, w, j, 0, tf):
            row[x + Y_TOP_OPENS] = 1
        gain = base + spec.solver_values[tf] - least_deadwood(spec, ws, o, w, j)
        row[x + Y_TOP_GAIN] = quantise(gain / DEADWOOD_SCALE, q)
    # the rules player's choice, to move
    if to_move and (s.phase == PHASE_DRAW or s.phase == PHASE_PLAY):
        a = german_action(s, spec, params, work, ws, order)
        o_play = G_PLAY * F
        if spec.a_take <= a < spec.a_take + spec.num_cards:
            row[x + Y_RULES_TAKES] = 1
        elif spec.a_meld <= a < spec.a_meld + spec.num_templates:
            t = a - spec.a_meld
            tm = np.uint64(spec.t_mask[t])
            row[x + Y_RULES_MELDS] = 1
            for f in range(JOKER_FACE):
                if (tm & once) >> np.uint64(f) & np.uint64(1):
                    row[o_play + f] = 1
            if popcount(tm & ~once) > 0:
                row[o_play + JOKER_FACE] = 1
        elif spec.a_layoff <= a < spec.a_layoff + spec.max_melds * JOKER_FACE:
            f = (a - spec.a_layoff) % JOKER_FACE
            row[x + Y_RULES_LAYS_OFF] = 1
            row[o_play + (f if counts[f] > 0 else JOKER_FACE)] = 1
        elif spec.a_swap <= a < spec.a_swap + spec.max_melds * JOKER_FACE:
            row[x + Y_RULES_SWAPS] = 1
            row[o_play + (a - spec.a_swap) % JOKER_FACE] = 1
        elif spec.a_discard <= a < spec.a_discard + F:
            row[x + Y_RULES_DISCARDS] = 1
            row[o_play + a - spec.a_discard] = 1


@njit(cache=True)
def encode_german_features(states, spec, players, params, work, ws, order, out, offset):
    """Write the German block of seat ``players[b]``'s view of ``states[b]`` into
    ``out[b, offset:]`` (float32 in [-1, 1], or int8 with scaled features x 127).
    ``params`` the rules player's (``rules_params(variant.name)``), ``work`` scratch records
    (3 or more), ``ws`` the solver's workspace, ``order`` from ``credit_order``."""
    spec = spec_of(spec)
    q = 127.0 if out.itemsize == 1 else 1.0
    for b in range(states.shape[0]):
        _german_features(states[b], spec, players[b], params, work, ws, order, out[b, offset:], q)


@njit(cache=True)
def encode_german_moves(states, spec, players, params, work, ws, order, out, offset):
    """German's and Crazy's move block: the rules player's move
    (:func:`german_action`, the arguments of :func:`encode_german_features`) one-hot, where
    seat ``players[b]`` is to move (solver_features.encode_mountain_moves is Mountain's)."""
    spec = spec_of(spec)
    for b in range(states.shape[0]):
        s = states[b]
        out[b, offset:offset + spec.num_actions] = 0
        if s.current == players[b] and (s.phase == PHASE_DRAW or s.phase == PHASE_PLAY):
            out[b, offset + german_action(s, spec, params, work, ws, order)] = 1
