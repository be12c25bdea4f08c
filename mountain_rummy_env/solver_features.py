"""Mountain's compiled solver primitives, its playout policy and the solver feature block of
the observation.

The primitives (meld-solver points and least deadwood of a batch of hands, the take, hold
and placement choices of the rules player) are what the compiled playout policy
(:func:`mountain_action`, the search's rollouts: ``agents/fastpolicy.py``) decides with; they
and the policy live here so the observation encoder can use them too (the package never
imports ``agents``).

:func:`encode_solver_features` appends, per observation, the values those choices hinge on,
computed from the observing player's information only (its hand, the discard pile, the
table melds, public counts; never a hidden card): the ``obs_features="solver"`` block of
``docs/observation.md`` ("Solver features"). German and Crazy Rummy have a block of their
own (:mod:`mountain_rummy_env.german_features`, the German rules player's questions); the
functions here dispatch by spec type (:data:`FEATURE_SPECS`).

The move block (``obs_features="solver_move"``, after the solver block) is the variant's
compiled heuristic's move for the observing seat when it is to move, one-hot over the
actions: Mountain's playout policy (:func:`mountain_action`, the search's rollouts), German's
and Crazy's rules player (:func:`german_features.encode_german_moves`). It reads what that
seat may know, as the block does; a network can add it to its logits (``agents/ppo_nets.py``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .config import ConfigError
from .core import batch, rules
from .core.german import GermanSpec
from .core.spec import Spec, spec_class_of, spec_of
from .core.state import (
    LOC_FACEDOWN, LOC_HAND, LOC_STOCK, MELD_EMPTY, PHASE_DRAW, PHASE_PLAY, PHASE_RESPONSE,
)
from .solver import OBJ_DEADWOOD, OBJ_POINTS, batch_kernel, fast_tables

JOKER_FACE = 52


# --------------------------------------------------------------------------------------
# solver primitives (shared with agents/fastpolicy.py)

@njit(cache=True)
def _layable(s, spec, f):
    """Whether face ``f`` can be laid off on a meld on the table."""
    for m in range(spec.max_melds):
        if s.m_kind[m] != MELD_EMPTY and rules.layoff_position(s, spec, m, f) >= 0:
            return True
    return False


@njit(cache=True)
def _hand_of(s, spec, p, counts):
    """Face counts of seat ``p``'s hand into ``counts`` (zeroed first, joker at
    ``JOKER_FACE``); returns the bit set of its non-joker faces."""
    counts[:] = 0
    bits = np.uint64(0)
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + p:
            f = spec.card_face[c]
            counts[f] += 1
            if f < JOKER_FACE:
                bits |= np.uint64(1) << np.uint64(f)
    return bits


@njit(cache=True)
def _solve(tables, fast, objective, hands, jokers, out):
    """The solver's value (``objective``) of each hand into ``out``; ``fast`` is the matching
    set of fast tables from :func:`solver_tables`."""
    credit, values = tables[0], tables[1]
    t_mask, t_len, t_faces = tables[7:10]
    run_best, suit_value, tgain, set_ids, set_cnt = fast
    batch_kernel(hands, jokers, t_mask, t_len, t_faces, credit, values, objective,
                 np.int64(0), np.int64(-1), run_best, suit_value, tgain, set_ids, set_cnt, out)


@njit(cache=True)
def _points(tables, hands, jokers, out):
    """Solver points (meld credit - deadwood, MR-12) of each hand into ``out``."""
    _solve(tables, tables[2:7], OBJ_POINTS, hands, jokers, out)


@njit(cache=True)
def _least_deadwood(tables, hands, jokers, out):
    """Least deadwood (MR-8) of each hand into ``out``."""
    _solve(tables, tables[10:15], OBJ_DEADWOOD, hands, jokers, out)


# The rules player's hold policy (agents.rules.RulesAgent defaults, held equal by a test;
# numba caches these constants, so they are copies): melds and layoffs stay in hand until
# the opponent is down to MOUNTAIN_HOLD_OPP cards, the stock to MOUNTAIN_HOLD_STOCK, or
# placing them would let the player knock or camp.
MOUNTAIN_HOLD_OPP, MOUNTAIN_HOLD_STOCK = 4, 6


# layable cards beyond this many are always set aside by _end_deadwood (2^k subsets tried)
MAX_LAYABLE_SUBSETS_BITS = 6


@njit(cache=True)
def _drop_deadwood(bits, jok, tables, limit):
    """:func:`_end_deadwood` of the natural faces ``bits`` and ``jok`` jokers, every card
    kept in hand (none set aside to lay off)."""
    hands = np.empty(JOKER_FACE + 1, np.uint64)
    jokers = np.empty(JOKER_FACE + 1, np.int8)
    hands[0] = bits
    jokers[0] = jok
    dw = np.empty(JOKER_FACE + 1, np.int32)
    _least_deadwood(tables, hands[:1], jokers[:1], dw[:1])
    if dw[0] == 0:
        return -1
    if dw[0] > limit + 15:
        return dw[0]
    n = 0
    for f in range(JOKER_FACE + 1):
        if f < JOKER_FACE and (bits >> np.uint64(f)) & np.uint64(1):
            hands[n] = bits & ~(np.uint64(1) << np.uint64(f))
            jokers[n] = jok
            n += 1
        elif f == JOKER_FACE and jok > 0:
            hands[n] = bits
            jokers[n] = jok - 1
            n += 1
    if n == 0:
        return -1
    _least_deadwood(tables, hands[:n], jokers[:n], dw[:n])
    return dw[:n].min()


@njit(cache=True)
def _end_deadwood(s, spec, counts, tables, limit):
    """Least deadwood of a hand left by placing every meld and layoff and dropping one card:
    at most the knock limit means placing could end the hand now (knock, MR-7.3). -1 when
    no card is left to drop or the cards left all meld (a camp: Base Camp, or High Camp by
    melding them, MR-7.3). A card that lays off on the table is either laid off or kept for
    a meld in hand, whichever leaves less (every subset of them is tried, as the rules
    player arranges the hand first and lays off only its loose cards). Exact up to
    ``limit``; above it, some value > ``limit`` (the hand's least deadwood, when no card
    dropped could bring it to ``limit``: a card is worth 15 at most)."""
    bits = np.uint64(0)
    layable = np.empty(MAX_LAYABLE_SUBSETS_BITS, np.int64)
    k = 0
    for f in range(JOKER_FACE):
        if counts[f] > 0:
            if not _layable(s, spec, f):
                bits |= np.uint64(1) << np.uint64(f)
            elif k < MAX_LAYABLE_SUBSETS_BITS:
                layable[k] = f
                k += 1
    best = np.int32(1 << 30)
    for kept in range(1 << k):
        hand = bits
        for j in range(k):
            if (kept >> j) & 1:
                hand |= np.uint64(1) << np.uint64(layable[j])
        end = _drop_deadwood(hand, counts[JOKER_FACE], tables, limit)
        if end < 0:
            return end
        best = min(best, end)
    return best


@njit(cache=True)
def _holds(s, spec, p, counts, tables):
    """Whether the player keeps its melds and layoffs in hand this turn (rules' policy):
    no deep-draw card to place, the opponent holds more than MOUNTAIN_HOLD_OPP cards, the
    stock more than MOUNTAIN_HOLD_STOCK, and no knock or camp would follow placing
    (:func:`_end_deadwood` above the knock limit)."""
    if s.phase == PHASE_RESPONSE or s.obligation >= 0:
        return False
    if s.stock_len - s.stock_ptr <= MOUNTAIN_HOLD_STOCK:
        return False
    opp_cards = 0
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + (p + 1) % spec.num_players:
            opp_cards += 1
    if opp_cards <= MOUNTAIN_HOLD_OPP:
        return False
    return _end_deadwood(s, spec, counts, tables, spec.knock_limit) > spec.knock_limit


@njit(cache=True)
def _arranged_placement(spec, mask, counts, hand_bits, tables):
    """The placement the hand's best arrangement (solver points) makes, as the rules player
    places: the legal meld whose credit plus the points of the hand left matches the whole
    hand's points, else the layoff of the loose card that leaves the most points; -1 when
    the arrangement places nothing. Regroups are never chosen."""
    credit = tables[0]
    jok = counts[JOKER_FACE]
    n = 1
    for a in range(spec.a_meld, spec.a_discard):
        if mask[a] and (a < spec.a_regroup or a >= spec.a_layoff):
            n += 1
    hands = np.empty(n, np.uint64)
    jokers = np.empty(n, np.int8)
    acts = np.empty(n, np.int64)
    hands[0] = hand_bits
    jokers[0] = jok
    k = 1
    for a in range(spec.a_meld, spec.a_discard):
        if not mask[a] or spec.a_regroup <= a < spec.a_layoff:
            continue
        if a < spec.a_regroup:
            tm = spec.t_mask[a - spec.a_meld]
            hands[k] = hand_bits & ~tm
            jokers[k] = jok - rules.popcount(tm & ~hand_bits)
        else:
            f = (a - spec.a_layoff) % JOKER_FACE
            if counts[f] > 0:
                hands[k] = hand_bits & ~(np.uint64(1) << np.uint64(f))
                jokers[k] = jok
            else:
                hands[k] = hand_bits
                jokers[k] = jok - 1
        acts[k] = a
        k += 1
    pts = np.empty(n, np.int32)
    _points(tables, hands, jokers, pts)
    best = -1
    best_v = pts[0] - 1
    for i in range(1, n):             # melds first: the meld's credit + points of the rest
        if acts[i] < spec.a_regroup:
            t = acts[i] - spec.a_meld
            v = pts[i] + credit[t, :spec.t_len[t]].sum()
            if v > best_v:
                best, best_v = acts[i], v
    if best >= 0:
        return best
    for i in range(1, n):             # then a loose card's layoff: points of the rest
        if acts[i] >= spec.a_layoff and pts[i] > best_v:
            best, best_v = acts[i], pts[i]
    return best


@njit(cache=True)
def _take_hands(s, spec, mask, legal_only, counts, hand_bits, hands, jokers, acts):
    """The hands a take leaves (the pile card and every card above it added), from the top
    down: ``hands[0]``/``jokers[0]`` the hand itself, then one entry per take (only the
    takes legal in ``mask`` when ``legal_only``), ``acts[k]`` its take action. Returns the
    number of entries (arrays need ``discard_len + 1``)."""
    bits = hand_bits
    jok = counts[JOKER_FACE]
    hands[0] = bits
    jokers[0] = jok
    k = 1
    for depth in range(s.discard_len):
        c = s.discard[s.discard_len - 1 - depth]
        f = spec.card_face[c]
        if f == JOKER_FACE:
            jok += 1
        else:
            bits |= np.uint64(1) << np.uint64(f)
        if not legal_only or mask[spec.a_take + c]:
            hands[k] = bits
            jokers[k] = jok
            acts[k] = spec.a_take + c
            k += 1
    return k


@njit(cache=True)
def _best_take(s, spec, mask, counts, hand_bits, tables):
    """The legal take (the top discard or a deeper one, with every card above it) that
    raises the hand's solver points the most, as the rules player takes; else the stock."""
    n = s.discard_len + 1
    hands = np.empty(n, np.uint64)
    jokers = np.empty(n, np.int8)
    acts = np.empty(n, np.int64)
    k = _take_hands(s, spec, mask, True, counts, hand_bits, hands, jokers, acts)
    pts = np.empty(k, np.int32)
    _points(tables, hands[:k], jokers[:k], pts)
    best = spec.a_draw
    best_v = pts[0]
    for i in range(1, k):
        if pts[i] > best_v:
            best, best_v = acts[i], pts[i]
    return best


# --------------------------------------------------------------------------------------
# the compiled playout policy (agents/fastpolicy.py describes it)

NUM_RANKS = 13

# Mountain's playout discards (solver_tables' item 15): "points" keeps the most solver points
# (the search's rollouts), "outs" is the rules player's expected points with its
# RulesAgent defaults outs_weight=2, feed_weight=1.5 (held equal by a test)
DISCARDS = {"points": np.array([0.0, 0.0, 0.0]), "outs": np.array([1.0, 2.0, 1.5])}


@njit(cache=True)
def _connect(face, counts):
    """How many hand cards share ``face``'s rank or sit within 2 in its suit."""
    r = face % NUM_RANKS
    su = face // NUM_RANKS
    score = 0.0
    for s2 in range(4):
        if s2 != su and counts[s2 * NUM_RANKS + r] > 0:
            score += 1.0
    for d in (-2, -1, 1, 2):
        rr = r + d
        if rr < 0:
            rr += 13  # the ace (rank 0) sits next to the king as well
        if rr >= 13:
            rr -= 13
        if (r == 0 or rr == 0) or (0 < r + d < 13):
            if counts[su * NUM_RANKS + rr] > 0:
                score += 1.0 if abs(d) == 1 else 0.5
    return score


@njit(cache=True)
def _first_legal(spec, mask):
    """The lowest legal action id (a fallback no policy case should reach), or -1."""
    for a in range(spec.num_actions):
        if mask[a]:
            return a
    return -1


@njit(cache=True)
def _rank_distance(a, b):
    """Rank distance of faces ``a`` and ``b`` of one suit (the ace next to 2 and to K)."""
    ra, rb = a % NUM_RANKS, b % NUM_RANKS
    d = abs(ra - rb)
    if ra == 0 or rb == 0:
        d = min(d, NUM_RANKS - d)
    return d


@njit(cache=True)
def _feed_risk(s, spec, p, f):
    """The rules player's risk (``RulesAgent.danger``, points) that discarding natural face
    ``f`` feeds the opponent: 25 when it completes a meld with cards the opponent is known
    to hold (taken from the discard pile), 6 with one such card of its rank or next to it,
    2 with one two ranks off in its suit; 15 more when it lays off on a table meld. (Rules
    also lowers it near the opponent's own discards, a history the state does not keep.)"""
    same = 0
    near1 = 0
    near2 = 0
    for c in range(spec.num_cards):
        where = s.loc[c]
        if where < LOC_HAND or where == LOC_HAND + p or s.public[c] == 0:
            continue
        g = spec.card_face[c]
        if g == JOKER_FACE or g == f:
            continue
        if g % NUM_RANKS == f % NUM_RANKS:
            same += 1
        elif g // NUM_RANKS == f // NUM_RANKS:
            d = _rank_distance(f, g)
            if d == 1:
                near1 += 1
            elif d == 2:
                near2 += 1
    risk = 0.0
    if same >= 2 or near1 >= 2 or (near1 > 0 and near2 > 0):
        risk = 25.0
    elif same == 1 or near1 == 1:
        risk = 6.0
    elif near2 > 0:
        risk = 2.0
    if _layable(s, spec, f):
        risk += 15.0
    return risk


@njit(cache=True)
def _outs_discard(s, spec, p, mask, counts, hand_bits, tables, outs_weight, feed_weight):
    """The rules player's discard (``RulesAgent.discard_values``): the legal discard whose
    hand left has the most solver points, plus ``outs_weight`` x the mean points gain of one
    more card over the cards seat ``p`` has not seen (a column per unseen natural card, one
    for a joker weighted by the unseen jokers), less ``feed_weight`` x the feeding risk
    (:func:`_feed_risk`) x the card's value / 10; a joker costs 30."""
    draws = np.empty(spec.num_cards, np.int64)
    n_draws = 0
    unseen_jokers = 0
    deals_jokers = False
    for c in range(spec.num_cards):
        f = spec.card_face[c]
        deals_jokers = deals_jokers or f == JOKER_FACE
        where = s.loc[c]
        if (where == LOC_STOCK or where == LOC_FACEDOWN
                or (where >= LOC_HAND and where != LOC_HAND + p and s.public[c] == 0)):
            if f == JOKER_FACE:
                unseen_jokers += 1
            else:
                draws[n_draws] = f
                n_draws += 1
    cols = 1 + n_draws + (1 if deals_jokers else 0)
    n_cands = 0
    for f in range(JOKER_FACE + 1):
        if mask[spec.a_discard + f]:
            n_cands += 1
    hands = np.empty(n_cands * cols, np.uint64)
    jokers = np.empty(n_cands * cols, np.int8)
    i = 0
    for f in range(JOKER_FACE + 1):
        if not mask[spec.a_discard + f]:
            continue
        rest = hand_bits
        jok = counts[JOKER_FACE]
        if f == JOKER_FACE:
            jok -= 1
        else:
            rest = hand_bits & ~(np.uint64(1) << np.uint64(f))
        row = i * cols
        hands[row:row + cols] = rest
        jokers[row:row + cols] = jok
        for j in range(n_draws):
            hands[row + 1 + j] = rest | (np.uint64(1) << np.uint64(draws[j]))
        if deals_jokers:
            jokers[row + cols - 1] = jok + 1
        i += 1
    pts = np.empty(n_cands * cols, np.int32)
    _points(tables, hands, jokers, pts)
    weight = max(1, n_draws + unseen_jokers)
    best = -1
    best_v = -1e18
    i = 0
    for f in range(JOKER_FACE + 1):
        if not mask[spec.a_discard + f]:
            continue
        row = i * cols
        base = pts[row]
        gain = 0.0
        for j in range(n_draws):
            gain += max(pts[row + 1 + j] - base, 0)
        if deals_jokers:
            gain += unseen_jokers * max(pts[row + cols - 1] - base, 0)
        v = base + outs_weight * gain / weight
        if f == JOKER_FACE:
            v -= 30.0
        else:
            v -= feed_weight * _feed_risk(s, spec, p, f) * spec.hand_value[f] / 10.0
        if v > best_v:
            best, best_v = spec.a_discard + f, v
        i += 1
    return best


@njit(cache=True)
def mountain_action(s, spec, mask, tables):
    """Mountain's playout action for the current player of ``s`` (mask must be current):
    the search's rollouts (``agents/fastpolicy.py``) and the observation's move block."""
    p = s.current
    counts = np.zeros(JOKER_FACE + 1, np.int64)
    hand_bits = _hand_of(s, spec, p, counts)
    hands = np.empty(JOKER_FACE + 1, np.uint64)
    jokers = np.full(JOKER_FACE + 1, counts[JOKER_FACE], np.int8)
    pts = np.empty(JOKER_FACE + 1, np.int32)
    if s.phase == PHASE_DRAW:
        if s.discard_len > 0:
            top = s.discard[s.discard_len - 1]
            f = spec.card_face[top]
            if f == JOKER_FACE or _layable(s, spec, f):
                return spec.a_take + top
        return _best_take(s, spec, mask, counts, hand_bits, tables)
    # placements, unless held: those of the hand's best arrangement
    for a in range(spec.a_meld, spec.a_discard):
        if mask[a]:
            if not _holds(s, spec, p, counts, tables):
                best = _arranged_placement(spec, mask, counts, hand_bits, tables)
                if best < 0 and s.obligation >= 0:
                    best = a      # the deep-drawn card must be placed: any placement
                if best >= 0:
                    return best
            break
    if s.phase == PHASE_RESPONSE:
        return spec.a_done
    if mask[spec.a_base_camp]:
        return spec.a_base_camp
    best = -1
    best_v = -1
    for f in range(JOKER_FACE + 1):
        if mask[spec.a_knock + f] and spec.hand_value[f] > best_v:
            best = spec.a_knock + f
            best_v = spec.hand_value[f]
    if best >= 0:
        return best
    params = tables[15]
    if params[0] > 0:
        best = _outs_discard(s, spec, p, mask, counts, hand_bits, tables, params[1], params[2])
        return best if best >= 0 else _first_legal(spec, mask)
    n = 0
    for f in range(JOKER_FACE):
        if mask[spec.a_discard + f]:
            hands[n] = hand_bits & ~(np.uint64(1) << np.uint64(f))
            n += 1
    _points(tables, hands[:n], jokers[:n], pts[:n])
    best = -1
    best_score = -1e9
    k = 0
    for f in range(JOKER_FACE + 1):
        if not mask[spec.a_discard + f]:
            continue
        if f == JOKER_FACE:
            score = -1000.0
        else:
            score = pts[k] + 0.5 * spec.hand_value[f] - 3.0 * _connect(f, counts)
            k += 1
            if _layable(s, spec, f):
                score -= 20.0  # it would feed a layoff to the opponent
        if score > best_score:
            best_score = score
            best = spec.a_discard + f
    if best >= 0:
        return best
    return _first_legal(spec, mask)


def solver_tables(variant, discard: str = "points") -> tuple:
    """Mountain's and Gin's solver tables: the meld table with the fast tables of the points
    objective (items 2-6) and of the deadwood objective (10-14), then Mountain's playout
    discard (15: float64 ``[outs, outs_weight, feed_weight]``; ``discard="points"`` the
    points kept, ``"outs"`` the rules player's expected points, :func:`_outs_discard`)."""
    if discard not in DISCARDS:
        raise ConfigError(f"discard={discard!r} is not a Mountain playout discard; "
                          f"choose one of {', '.join(DISCARDS)}")
    t = variant.table
    values = np.ascontiguousarray(variant.spec.hand_value, dtype=np.int64)
    return (t.credit, values, *fast_tables(t, values, "points"), t.mask, t.length, t.faces,
            *fast_tables(t, values, "deadwood"), DISCARDS[discard].copy())


# --------------------------------------------------------------------------------------
# the solver feature block (obs_features="solver")

# scales: a card's removal changes the points by -60 .. +15, a take by more
DISCARD_SCALE, TAKE_SCALE, POINTS_SCALE = 50.0, 100.0, 200.0

# the blocks in order, 53 columns each (face f < 52, the joker at 52) unless said otherwise:
#   discard_cost  held face f: (points(hand - f) - points(hand)) / DISCARD_SCALE, signed
#   in_melds      held face f is melded in every best arrangement (solver points)
#   layable       face f lays off on a table meld now (joker column: 0)
#   take_gain     C columns, card id: (points(hand + pile down to c) - points(hand)) / TAKE_SCALE
#   placement     faces the best arrangement's next placement puts down (joker: one used)
# (_mountain_features writes them at these offsets; feature_layout derives them from the names)
FEATURE_BLOCK_NAMES = ("discard_cost", "in_melds", "layable", "take_gain", "placement")
# scalars after the blocks
X_HOLDS = 0          # to move, placing, and the rules player's hold policy keeps the melds
X_CAN_END = 1        # placing the hand's melds could end the hand now (knock or camp)
X_POINTS = 2         # the hand's solver points / POINTS_SCALE, signed
X_DEADWOOD = 3       # the hand's least deadwood / POINTS_SCALE
X_END_DEADWOOD = 4   # least deadwood after placing and dropping one card / POINTS_SCALE
X_PLACES = 5         # to move, placing: the best arrangement places something now
NUM_FEATURE_SCALARS = 6
FEATURE_SCALAR_NAMES = ("holds", "can_end", "points", "deadwood", "end_deadwood", "places")
SIGNED_FEATURES = ("discard_cost", "take_gain", "points")
SCALED_FEATURES = ("discard_cost", "take_gain", "points", "deadwood", "end_deadwood")

# spec types with a solver feature block, and the variants of that type: the variants that
# may use obs_features="solver" (German and Crazy share GermanSpec and the German block)
FEATURE_SPECS = {Spec: ("mountain",), GermanSpec: ("crazy", "german")}

# the obs_features names with the move block, and the discard of Mountain's playout policy
# that block shows (DISCARDS; German's and Crazy's show their rules player under either)
MOVE_DISCARDS = {"solver_move": "points", "solver_move_outs": "outs"}


def check_solver_features(variant, obs_features: str = "solver") -> None:
    """A ``ConfigError`` naming the supported variants when ``variant`` has no solver block,
    or no ``obs_features`` move block (the option asked for, named in the message)."""
    if spec_class_of(variant.spec) not in FEATURE_SPECS:
        names = sorted(n for names in FEATURE_SPECS.values() for n in names)
        raise ConfigError(f"obs_features={obs_features!r} is not available for variant "
                          f"{variant.name!r}; supported: {', '.join(names)}")
    if MOVE_DISCARDS.get(obs_features, "points") != "points" and _is_german(variant):
        raise ConfigError(f"obs_features={obs_features!r} is Mountain's (its playout heuristic "
                          f"discarding as the rules player does); for variant {variant.name!r} "
                          f"'solver_move' already shows the rules player's move")


def _is_german(variant) -> bool:
    return spec_class_of(variant.spec) is GermanSpec


def feature_layout(variant, move: bool = False) -> list[tuple[str, int, int]]:
    """``(name, offset, length)`` of every part of the solver block (offsets from its start):
    Mountain's below, German's and Crazy's :func:`german_features.german_layout`; with
    ``move``, the move block (``"move"``, one column per action) after it."""
    check_solver_features(variant)
    if _is_german(variant):
        from .german_features import german_layout
        rows = german_layout(variant)
    else:
        F, C = JOKER_FACE + 1, int(variant.spec.num_cards)
        rows, off = [], 0
        for name in FEATURE_BLOCK_NAMES:
            n = C if name == "take_gain" else F
            rows.append((name, off, n))
            off += n
        rows += [(name, off + k, 1) for k, name in enumerate(FEATURE_SCALAR_NAMES)]
    if move:
        name, off, n = rows[-1]
        rows.append(("move", off + n, int(variant.num_actions)))
    return rows


def feature_size(variant, move: bool = False) -> int:
    name, off, n = feature_layout(variant, move)[-1]
    return off + n


def _feature_mask(variant, names, move: bool) -> np.ndarray:
    out = np.zeros(feature_size(variant, move), bool)
    for name, off, n in feature_layout(variant, move):
        if name in names:
            out[off:off + n] = True
    return out


def signed_features(variant, move: bool = False) -> np.ndarray:
    """Bool mask of the block's features that may be negative (none of the move block)."""
    if _is_german(variant):
        from .german_features import GERMAN_SIGNED
        return _feature_mask(variant, GERMAN_SIGNED, move)
    return _feature_mask(variant, SIGNED_FEATURES, move)


def scaled_features(variant, move: bool = False) -> np.ndarray:
    """Bool mask of the block's scaled (non-binary) features (none of the move block)."""
    if _is_german(variant):
        from .german_features import GERMAN_SCALED
        return _feature_mask(variant, GERMAN_SCALED, move)
    return _feature_mask(variant, SCALED_FEATURES, move)


@njit(cache=True)
def quantise(x, q):
    """A feature in [-1, 1] scaled for the output dtype (q = 1 float32, INT8_SCALE int8);
    the observation encoders share it."""
    if x > 1.0:
        x = 1.0
    elif x < -1.0:
        x = -1.0
    v = x * q
    if q != 1.0:
        v = np.floor(v + 0.5)
    return v


@njit(cache=True)
def _mountain_features(s, spec, p, tables, mask, scratch, row, q):
    """The solver block of seat ``p``'s view of ``s`` into ``row`` (zeroed here)."""
    F = JOKER_FACE + 1
    C = spec.num_cards
    o_cost, o_melds, o_lay, o_take = 0, F, 2 * F, 3 * F
    o_place = 3 * F + C
    x = 4 * F + C
    row[:x + NUM_FEATURE_SCALARS] = 0
    counts = np.zeros(F, np.int64)
    bits = _hand_of(s, spec, p, counts)
    jok = counts[JOKER_FACE]
    n = max(F, s.discard_len) + 1
    hands = np.empty(n, np.uint64)
    jokers = np.empty(n, np.int8)
    acts = np.empty(n, np.int64)
    pts = np.empty(n, np.int32)
    # the hand and, per held face, the hand without it
    hands[0] = bits
    jokers[0] = jok
    k = 1
    for f in range(F):
        if counts[f] > 0:
            hands[k] = bits & ~(np.uint64(1) << np.uint64(f)) if f < JOKER_FACE else bits
            jokers[k] = jok - 1 if f == JOKER_FACE else jok
            acts[k] = f
            k += 1
    _points(tables, hands[:k], jokers[:k], pts[:k])
    base = pts[0]
    for i in range(1, k):
        f = acts[i]
        d = pts[i] - base
        row[o_cost + f] = quantise(d / DISCARD_SCALE, q)
        if d != spec.hand_value[f]:      # not deadwood in any best arrangement
            row[o_melds + f] = 1
    for f in range(JOKER_FACE):
        if _layable(s, spec, f):
            row[o_lay + f] = 1
    # takes: every pile card, with every card above it
    if s.discard_len > 0:
        k = _take_hands(s, spec, mask, False, counts, bits, hands, jokers, acts)
        _points(tables, hands[:k], jokers[:k], pts[:k])
        for i in range(1, k):
            row[o_take + acts[i] - spec.a_take] = quantise((pts[i] - base) / TAKE_SCALE, q)
    row[x + X_POINTS] = quantise(base / POINTS_SCALE, q)
    dw = np.empty(1, np.int32)
    _least_deadwood(tables, hands[:1], jokers[:1], dw)
    row[x + X_DEADWOOD] = quantise(dw[0] / POINTS_SCALE, q)
    end = _end_deadwood(s, spec, counts, tables, 1 << 20)
    if end <= spec.knock_limit:
        row[x + X_CAN_END] = 1
    if end > 0:
        row[x + X_END_DEADWOOD] = quantise(end / POINTS_SCALE, q)
    # placing now: the hold decision and the best arrangement's placement
    if s.current == p and (s.phase == PHASE_PLAY or s.phase == PHASE_RESPONSE):
        batch.legal_mask(s, spec, mask, scratch)
        if _holds(s, spec, p, counts, tables):
            row[x + X_HOLDS] = 1
        a = _arranged_placement(spec, mask, counts, bits, tables)
        if a >= 0:
            row[x + X_PLACES] = 1
            if a < spec.a_regroup:
                tm = spec.t_mask[a - spec.a_meld]
                for f in range(JOKER_FACE):
                    if (tm >> np.uint64(f)) & np.uint64(1) and (bits >> np.uint64(f)) & np.uint64(1):
                        row[o_place + f] = 1
                if rules.popcount(tm & ~bits) > 0:
                    row[o_place + JOKER_FACE] = 1
            else:
                f = (a - spec.a_layoff) % JOKER_FACE
                row[o_place + (f if counts[f] > 0 else JOKER_FACE)] = 1


@njit(cache=True)
def encode_solver_features(states, spec, players, tables, mask, scratch, out, offset):
    """Write the solver block of seat ``players[b]``'s view of ``states[b]`` into
    ``out[b, offset:]`` (float32 in [-1, 1], or int8 with scaled features x 127).
    ``tables`` from :func:`solver_tables`; ``mask`` (num_actions int8) and ``scratch``
    (``rules.SCRATCH_RECORDS`` state records) are work space."""
    spec = spec_of(spec)
    q = 127.0 if out.itemsize == 1 else 1.0
    for b in range(states.shape[0]):
        _mountain_features(states[b], spec, players[b], tables, mask, scratch, out[b, offset:], q)


@njit(cache=True)
def encode_mountain_moves(states, spec, players, tables, mask, scratch, out, offset):
    """The move block: ``out[b, offset + a] = 1`` for the playout policy's move ``a``
    (:func:`mountain_action`) where seat ``players[b]`` is to move in ``states[b]``, the
    block's other columns 0 (``mask``, ``scratch``: work space as for the solver block)."""
    spec = spec_of(spec)
    for b in range(states.shape[0]):
        s = states[b]
        out[b, offset:offset + spec.num_actions] = 0
        if s.current == players[b] and (s.phase == PHASE_DRAW or s.phase == PHASE_PLAY
                                        or s.phase == PHASE_RESPONSE):
            batch.legal_mask(s, spec, mask, scratch)
            out[b, offset + mountain_action(s, spec, mask, tables)] = 1


class SolverFeatures:
    """The ``obs_features`` block of one variant (``"solver"``, or with the move block after
    it: :data:`MOVE_DISCARDS`), with its tables and work space:
    ``features(states, players, out, offset)`` (not thread-safe: one per thread)."""

    def __init__(self, variant, obs_features: str = "solver"):
        check_solver_features(variant, obs_features)
        self.variant = variant
        self.move = obs_features in MOVE_DISCARDS
        self.size = feature_size(variant, self.move)
        self.block_size = feature_size(variant)
        self.scratch = np.zeros(rules.SCRATCH_RECORDS, dtype=variant.dtype)
        self.german = _is_german(variant)
        if self.german:      # the German rules player's parameters, meld order, workspace
            from .german_player import credit_order, rules_params
            from .solver import make_workspace
            self.params = rules_params(variant.name)
            self.order = credit_order(variant)
            self.ws = make_workspace(variant.spec.num_templates)
        else:
            self.tables = solver_tables(variant, MOVE_DISCARDS.get(obs_features, "points"))
            self.mask = np.zeros(variant.num_actions, np.int8)

    def __call__(self, states, players, out, offset):
        players = np.asarray(players, np.int64)
        spec, moves = self.variant.spec_ref, offset + self.block_size
        if self.german:
            from .german_features import encode_german_features
            encode_german_features(states, spec, players, self.params, self.scratch, self.ws,
                                   self.order, out, offset)
            if self.move:
                from .german_features import encode_german_moves
                encode_german_moves(states, spec, players, self.params, self.scratch, self.ws,
                                    self.order, out, moves)
        else:
            encode_solver_features(states, spec, players, self.tables, self.mask, self.scratch,
                                   out, offset)
            if self.move:
                encode_mountain_moves(states, spec, players, self.tables, self.mask,
                                      self.scratch, out, moves)


_FEATURES: dict = {}


def solver_features(variant, obs_features: str = "solver") -> SolverFeatures:
    """The (cached, per variant name, options and ``obs_features``) :class:`SolverFeatures`
    of ``variant``."""
    key = (variant.name, repr(variant.config), obs_features)
    hit = _FEATURES.get(key)
    if hit is None:
        hit = _FEATURES[key] = SolverFeatures(variant, obs_features)
    return hit
