"""The compiled German and Crazy Rummy rules player's decisions (the ``greedy`` and ``rules``
players of :mod:`agents.german`; the policy is described in ``agents/german_policy.py``).

They live in the env package so the observation's solver feature block
(:mod:`mountain_rummy_env.german_features`, ``obs_features="solver"``) can ask the same
questions the rules player decides by (the package never imports ``agents``);
:mod:`agents.german_policy` adds the batch entry points, the playouts and the
determinisation; callers import the decisions from here.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .core.german import (
    fill, hand_layers, layoff_offered, meld_offered, opening_reachable, swap_offered, top_card,
)
from .core.rules import (
    RUN, card_face_now, face_now, hand_mask_bits, hand_size_of, hand_view, is_wild,
    layoff_position, meld_buffers,
)
from .core.state import LOC_HAND, MELD_EMPTY, MELD_WIDTH, PHASE_DRAW
from .solver import OBJ_DEADWOOD, solve_multiset_ws

JOKER_FACE = 52
NUM_RANKS = 13

# parameter vector of german_action
P_RULES = 0         # 0: greedy, 1: the rules player's judgement
P_KEEP = 1          # rules discard: points a partner card in hand is worth keeping
P_OPEN_VALUE = 2    # before opening, hand value weighs this much in the discard
P_FEED_LAYOFF = 3   # penalty of a discard the next seat, opened, can lay off
P_FEED_KNOWN = 4    # penalty per card the next seat took from the pile that it joins
P_DANGER = 5        # an opponent holding at most this many cards is about to go out
P_DANGER_VALUE = 6  # then hand value weighs this much in the discard (GE-9)
P_CASH = 7          # own hand of at most this many cards: jokers go to the table
P_ARRANGE = 8       # 1: meld first what the hand's least-deadwood arrangement melds
P_SWAP_FIRST = 9    # 1: swap table wilds before melding (the wild may join a meld)
N_PARAMS = 10

GREEDY = np.zeros(N_PARAMS, dtype=np.float64)

# The rules player's defaults per variant. German: tuned against greedy at 4 seats on seeds
# 0-2999 (tournament seeds are others): a high ``keep`` (partners count before value) and a
# negative ``open_value`` (before opening keep the high cards an opening of 40 needs) each
# gained about 5 points a hand; the feeding penalties, ``danger`` and ``cash`` moved the
# result by less than its noise. Crazy: screened against greedy at 4 seats on seeds
# 0-1799: German's defaults gained +0.1 (+-0.7) points a round; melding by the least-
# deadwood arrangement (``arrange``) and playing wilds at once (``cash`` 99) +2.0 (+-0.6);
# a lower ``keep``, a wider ``danger`` and swapping before melding (``swap_first``) each
# about +0.3 more, within the noise; ``open_value`` does not apply (no opening minimum).
RULES_DEFAULTS = {
    "german": {"keep": 16.0, "open_value": -4.0, "feed_layoff": 12.0, "feed_known": 4.0,
               "danger": 3, "danger_value": 2.0, "cash": 4, "arrange": 0, "swap_first": 0},
    "crazy": {"keep": 8.0, "open_value": 1.0, "feed_layoff": 12.0, "feed_known": 4.0,
              "danger": 4, "danger_value": 3.0, "cash": 99, "arrange": 1, "swap_first": 1},
}
RULES_PARAM_TYPES = {name: type(value) for name, value in RULES_DEFAULTS["german"].items()}
_INDEX = {"keep": P_KEEP, "open_value": P_OPEN_VALUE, "feed_layoff": P_FEED_LAYOFF,
          "feed_known": P_FEED_KNOWN, "danger": P_DANGER, "danger_value": P_DANGER_VALUE,
          "cash": P_CASH, "arrange": P_ARRANGE, "swap_first": P_SWAP_FIRST}


def rules_params(variant: str = "german", **overrides) -> np.ndarray:
    """The rules player's parameter vector: ``variant``'s :data:`RULES_DEFAULTS`, some
    overridden."""
    unknown = set(overrides) - set(_INDEX)
    if unknown:
        raise ValueError(f"unknown rules parameter(s): {', '.join(sorted(unknown))}")
    out = np.zeros(N_PARAMS, dtype=np.float64)
    out[P_RULES] = 1.0
    for name, value in {**RULES_DEFAULTS[variant], **overrides}.items():
        out[_INDEX[name]] = value
    return out


def credit_order(variant) -> np.ndarray:
    """Template ids by meld credit, largest first (ties by id): the order melds are tried.
    Where melds earn nothing (Crazy, D9) the largest meld is the longest."""
    credit = variant.spec.t_total
    key = credit if credit.any() else variant.spec.t_len
    return np.argsort(-key, kind="stable").astype(np.int64)


# --------------------------------------------------------------------------------------
# what the player sees


@njit(cache=True)
def _related(f, g):
    """1 if faces f and g sit next to each other in a suit (ace next to 2 and to K) or are
    the same rank in two suits, 0.5 if one rank apart in a suit, else 0."""
    rf, rg = f % NUM_RANKS, g % NUM_RANKS
    if f // NUM_RANKS != g // NUM_RANKS:
        return 1.0 if rf == rg else 0.0
    d = abs(rf - rg)
    if rf == 0 or rg == 0:          # the ace: rank 0 low, 13 high
        d = min(d, NUM_RANKS - d)
    if d == 1:
        return 1.0
    if d == 2:
        return 0.5
    return 0.0


@njit(cache=True)
def _in_partial(f, counts):
    """Greedy's test: ``f`` is in a pair (same rank) or a two-card run (adjacent ranks)."""
    for g in range(JOKER_FACE):
        if g != f and counts[g] > 0 and _related(f, g) == 1.0:
            return True
    return False


@njit(cache=True)
def _layable(s, spec, f):
    """Whether a natural ``f`` would lay off on some table meld."""
    for m in range(spec.max_melds):
        if s.m_kind[m] != MELD_EMPTY and layoff_position(s, spec, m, f) >= 0:
            return True
    return False


@njit(cache=True)
def _hand_sizes(s, spec, out):
    for q in range(spec.num_players):
        out[q] = 0
    for c in range(spec.num_cards):
        if s.loc[c] >= LOC_HAND:
            out[s.loc[c] - LOC_HAND] += 1


@njit(cache=True)
def _danger(s, spec, p, params):
    """Whether some opponent holds at most ``P_DANGER`` cards (it may go out soon)."""
    sizes = np.zeros(spec.num_players, np.int64)
    _hand_sizes(s, spec, sizes)
    for q in range(spec.num_players):
        if q != p and sizes[q] <= params[P_DANGER]:
            return True
    return False


# --------------------------------------------------------------------------------------
# the draw


@njit(cache=True)
def _joins(s, spec, f, once, nj, counts, naturals_only):
    """Whether a taken card of face ``f`` joins a meld: it lays off on the table, or a
    template holding it can be filled from the hand (GE-3; ``naturals_only``: without
    jokers). A joker joins when any layoff or joker meld exists."""
    if f == JOKER_FACE:
        for m in range(spec.max_melds):
            if s.m_kind[m] == MELD_EMPTY:
                continue
            for g in range(JOKER_FACE):
                if layoff_position(s, spec, m, g) >= 0:
                    return True
        for t in range(spec.num_templates):
            if fill(spec, t, once, nj + 1)[1] >= 1:
                return True
        return False
    if _layable(s, spec, f):
        return True
    if counts[f] > 0:               # a second copy adds no meld the first did not
        return False
    bit = np.uint64(1) << np.uint64(f)
    with_f = once | bit
    for t in range(spec.num_templates):
        tm = np.uint64(spec.t_mask[t])
        if not tm & bit:
            continue
        if naturals_only:
            if tm & ~with_f == 0:
                return True
        elif fill(spec, t, with_f, nj)[0] >= 0:
            return True
    return False


@njit(cache=True)
def _draw(s, spec, p, params, ws, counts, nj, opened):
    top = top_card(s)
    if top < 0 or spec.lone_card_draws and hand_size_of(s, spec, p) == 1:    # CR-4
        return spec.a_draw
    f = card_face_now(s, spec, top)
    once, twice, _ = hand_layers(s, spec, p)
    if not opened:                  # GE-5: the take is legal only for an opening with it
        o, w, j = once, twice, nj
        if f == JOKER_FACE:
            j += 1
        else:
            bit = np.uint64(1) << np.uint64(f)
            if o & bit:
                w |= bit
            else:
                o |= bit
        if opening_reachable(spec, ws, o, w, j, 0, f):
            return spec.a_take + top
        return spec.a_draw
    rules = params[P_RULES] > 0
    if f == JOKER_FACE and rules and _danger(s, spec, p, params):
        return spec.a_draw           # a joker caught in hand costs 20 (GE-9)
    if _joins(s, spec, f, once, nj, counts, rules):
        return spec.a_take + top
    return spec.a_draw


# --------------------------------------------------------------------------------------
# placements


@njit(cache=True)
def _arranged_first(s, spec, p, order, ws):
    """``order`` with the melds of seat p's least-deadwood arrangement in front (jokers
    standing only for faces p lacks, so the melds can be made one by one in any order)."""
    once, twice, nj = hand_layers(s, spec, p)
    out_tmpl = np.empty(2 * JOKER_FACE, np.int32)
    out_nat = np.empty(2 * JOKER_FACE, np.int64)
    ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h = ws
    n = solve_multiset_ws(once, twice, nj, spec.t_mask, spec.t_len, spec.t_faces,
                          spec.t_credit, spec.solver_values, OBJ_DEADWOOD, once, -1,
                          spec.min_naturals, -1, False, out_tmpl, out_nat,
                          ws_i, ws_f, ws_cand, ws_gn, ws_gj, ws_by, ws_h)[0]
    if n <= 0:
        return order
    out = np.empty(n + order.shape[0], np.int64)
    out[:n] = out_tmpl[:n]
    out[n:] = order
    return out


@njit(cache=True)
def _meld(s, spec, p, order, work, ws, face_card, jokers, nj, joker_pass, natural_pass,
          arrange):
    """The first legal meld in ``order`` (largest credit first; with ``arrange`` the melds
    of the hand's least-deadwood arrangement before it); the joker-free ones first when
    ``natural_pass``, melds needing jokers only when ``joker_pass``. -1 if none."""
    if arrange:
        order = _arranged_first(s, spec, p, order, ws)
    held = hand_mask_bits(face_card)
    no_face_up = np.zeros(JOKER_FACE, np.int16)
    used, decl, removed, _ = meld_buffers(spec, 0)
    for rnd in range(2):
        if rnd == 0 and not natural_pass or rnd == 1 and not joker_pass:
            continue
        for i in range(order.shape[0]):
            t = order[i]
            naturals, k = fill(spec, t, held, nj)
            if naturals < 0 or rnd == 0 and k > 0 or rnd == 1 and natural_pass and k == 0:
                continue
            if meld_offered(s, spec, t, p, held, work, ws, face_card, jokers, nj, no_face_up,
                            used, decl, removed):
                return t
    return -1


@njit(cache=True)
def _layoff(s, spec, p, work, face_card, jokers, nj, rules, jokers_too):
    """Greedy: the first legal layoff by action id. Rules: the first legal layoff of a
    natural; with ``jokers_too`` else the joker layoff that earns the most credit."""
    no_face_up = np.zeros(JOKER_FACE, np.int16)
    best, best_credit = -1, -1
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_EMPTY:
            continue
        for f in range(JOKER_FACE):
            natural = face_card[f] >= 0
            credit = 0
            if not natural and (nj == 0 or rules and not jokers_too):
                continue
            pos = layoff_position(s, spec, m, f)
            if pos < 0:
                continue
            if rules and not natural:
                credit = (spec.run_credit[pos] if s.m_kind[m] == RUN
                          else spec.rank_credit[f % NUM_RANKS])
                if credit <= best_credit:
                    continue
            if not layoff_offered(s, spec, p, m, f, face_card, jokers, nj, no_face_up, work):
                continue
            a = spec.a_layoff + m * JOKER_FACE + f
            if natural or not rules:
                return a
            best, best_credit = a, credit
    return best


@njit(cache=True)
def _swap(s, spec, p, work, ws, face_card, nj):
    """The first legal joker exchange (GE-6) by action id, or -1."""
    once, twice, _ = hand_layers(s, spec, p)
    for m in range(spec.max_melds):
        if s.m_kind[m] == MELD_EMPTY:
            continue
        for k in range(MELD_WIDTH):
            j = s.m_cards[m, k]
            if j < 0 or not is_wild(s, spec, j):
                continue
            f = s.shown[j]
            if swap_offered(s, spec, p, m, f, once, twice, nj, face_card, work[1:], ws):
                return spec.a_swap + m * JOKER_FACE + f
    return -1


# --------------------------------------------------------------------------------------
# the discard


@njit(cache=True)
def discard_scores(s, spec, params, out):
    """How much the player to move wants to discard each face (``out[f]``, larger = sooner;
    -inf for a face it may not discard). Greedy: the hand value of a card in no partial
    meld, less 100 for one in a partial meld, less 1000 for a joker. Rules: see
    ``agents/german_policy.py``'s docstring."""
    seat_discard_scores(s, spec, s.current, params, out)


@njit(cache=True)
def seat_discard_scores(s, spec, p, params, out):
    """:func:`discard_scores` of seat ``p``'s hand (the solver features ask it of the
    observing seat, to move or not)."""
    counts = np.zeros(JOKER_FACE + 1, np.int64)
    free = np.zeros(JOKER_FACE + 1, np.int64)
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            counts[card_face_now(s, spec, c)] += 1
            if s.taken[c] == 0:
                free[spec.card_face[c]] += 1        # discards are by printed face
    rules = params[P_RULES] > 0
    opened = s.placed_before[p] != 0
    weight = 1.0 if opened or spec.open_min == 0 else params[P_OPEN_VALUE]   # Crazy: no 40
    nq = (p + 1) % spec.num_players
    feeds_layoff = rules and s.placed_before[nq] != 0
    if rules and _danger(s, spec, p, params):
        weight = params[P_DANGER_VALUE]
    for f in range(JOKER_FACE + 1):
        if free[f] == 0:
            out[f] = -np.inf
            continue
        if face_now(s, f) == JOKER_FACE:            # a joker or a card of the wild rank
            out[f] = -1000.0
            continue
        value = float(spec.hand_value[f])
        if not rules:
            out[f] = value - (100.0 if _in_partial(f, counts) else 0.0)
            continue
        score = weight * value
        for g in range(JOKER_FACE):
            if g != f and counts[g] > 0:
                score -= params[P_KEEP] * _related(f, g)
        if feeds_layoff and _layable(s, spec, f):
            score -= params[P_FEED_LAYOFF]
        for c in range(spec.num_cards):
            if s.loc[c] == LOC_HAND + nq and s.public[c] != 0 and not is_wild(s, spec, c):
                score -= params[P_FEED_KNOWN] * _related(f, spec.card_face[c])
        out[f] = score


@njit(cache=True)
def _discard(s, spec, params):
    scores = np.empty(JOKER_FACE + 1, np.float64)
    discard_scores(s, spec, params, scores)
    return spec.a_discard + np.argmax(scores)


# --------------------------------------------------------------------------------------
# the policy


@njit(cache=True)
def german_action(s, spec, params, work, ws, order):
    """The action of the player to move in ``s`` under ``params`` (see the module
    docstring); ``work`` is scratch records (3 or more), ``ws`` the solver's workspace
    (:func:`solver.make_workspace`), ``order`` from :func:`credit_order`."""
    p = s.current
    face_card = np.empty(JOKER_FACE, np.int16)
    jokers = np.empty(8, np.int16)
    nj, size, _, _ = hand_view(s, spec, p, face_card, jokers)
    opened = s.placed_before[p] != 0
    if s.phase == PHASE_DRAW:
        counts = np.zeros(JOKER_FACE + 1, np.int64)
        for c in range(spec.num_cards):
            if s.loc[c] == LOC_HAND + p:
                counts[card_face_now(s, spec, c)] += 1
        return _draw(s, spec, p, params, ws, counts, nj, opened)
    rules = params[P_RULES] > 0
    arrange = params[P_ARRANGE] > 0
    if s.obligation >= 0 or not opened:
        # the freed joker's meld, an opening under way, or one that may begin (GE-5, GE-6)
        t = _meld(s, spec, p, order, work, ws, face_card, jokers, nj, True, rules, arrange)
        if t >= 0:
            return spec.a_meld + t
        if s.obligation >= 0 or s.open_total > 0:
            return -1                # cannot happen: the engine keeps such a meld reachable
        return _discard(s, spec, params)
    cash = not rules or size <= params[P_CASH] or _danger(s, spec, p, params)
    swap_first = params[P_SWAP_FIRST] > 0
    if swap_first:
        a = _swap(s, spec, p, work, ws, face_card, nj)
        if a >= 0:
            return a
    t = _meld(s, spec, p, order, work, ws, face_card, jokers, nj, cash, rules, arrange)
    if t >= 0:
        return spec.a_meld + t
    a = _layoff(s, spec, p, work, face_card, jokers, nj, rules, cash)
    if a >= 0:
        return a
    if not swap_first:               # with swap_first the swaps were looked at above
        a = _swap(s, spec, p, work, ws, face_card, nj)
        if a >= 0:
            return a
    return _discard(s, spec, params)

