"""Compiled playout policies for the search agent's rollouts (numba), one per variant.

Each reads only what the player to move may know, and is cheap enough for hundreds of
playouts a decision. :func:`playout_batch` is written once; numba picks the policy by the
spec's type (:data:`POLICY_BY_SPEC`), as :mod:`mountain_rummy_env.core.batch` picks rules.

* Mountain (:func:`mountain_action`, in :mod:`mountain_rummy_env.solver_features`, whose
  observation move block plays it too): takes the top discard when it lays off on the table
  or is a joker, else the take (top or deep, with every card above it) that raises the
  hand's solver points the most (:func:`_best_take`), else draws stock; holds its melds and
  layoffs as the rules player does (:func:`_holds`), else places those of the hand's best
  arrangement, melds first, as the rules player does (:func:`_arranged_placement`; never a
  regroup unless a deep-drawn card must be placed); ends with Base Camp, else a knock
  (highest card face down), else discards the card whose removal leaves the most solver
  points (high, unconnected cards first; a card that would lay off on the table is held
  back), or with ``discard="outs"`` (:func:`rollout_tables`) as the rules player does, by
  the points kept plus the next draw's expected gain less the feeding risk.
* Gin (:func:`gin_action`): takes the up-card when it goes into a meld (exact deadwood)
  or lets it knock at once, else draws (passes on the first offer); knocks with the
  discard that leaves the least deadwood when the rules player's falling knock limit
  allows, else discards that card; melds an optimal arrangement; lays off every card
  that lowers its deadwood.
* German and Crazy Rummy (:func:`german_playout_action`): the rules player of
  :mod:`agents.german_policy` with the variant's defaults (``rules_params``), which is what
  :mod:`agents.german`'s ``search`` plays its playouts with; it reads no mask (it checks
  each move with the engine's predicates). Robber's Rummy has none here: its search plays
  out on face counts (:mod:`agents.robbers_playout`), not on the engine's state.
"""

from __future__ import annotations

import numpy as np
from numba import njit
from numba.extending import overload

from mountain_rummy_env.core import batch, gin, rules
from mountain_rummy_env.core.german import GermanSpec
from mountain_rummy_env.core.spec import Spec, spec_class_of, spec_of
from mountain_rummy_env.solver import make_workspace
# the solver primitives are the package's (the observation's solver features use them too)
from mountain_rummy_env.solver_features import (
    DISCARDS, _first_legal, mountain_action, solver_tables,
)
from mountain_rummy_env.core.state import EVENT_NONE, LOC_HAND
from mountain_rummy_env.german_player import credit_order, german_action, rules_params

from .base import Agent, AgentSpecError, register


@njit(cache=True)
def _gin_best_removal(spec, bits, mask, offset):
    """Card ``c`` with ``mask[offset + c]`` whose removal leaves the least deadwood (ties:
    the higher card), or -1."""
    best = -1
    best_dw = 1 << 30
    for c in range(spec.num_cards):
        if mask[offset + c] == 0:
            continue
        dw = gin.deadwood(spec, bits & ~(np.int64(1) << np.int64(c)))
        if dw < best_dw or (dw == best_dw and spec.hand_value[c] > spec.hand_value[best]):
            best = c
            best_dw = dw
    return best


# Gin rules player's knock policy (agents.rules.GinRulesAgent defaults, held equal by a test;
# numba caches these constants, so they are copies): any legal knock in
# the first GIN_EARLY_TURNS turns, then a limit falling by GIN_KNOCK_SLOPE a turn from
# GIN_LATE_KNOCK down to gin only; gin only once GIN_OPP_KNOWN cards of the opponent's hand
# are known; with at most 3 stock cards left, any deadwood up to GIN_WALL_KNOCK.
GIN_EARLY_TURNS, GIN_LATE_KNOCK, GIN_KNOCK_SLOPE, GIN_OPP_KNOWN, GIN_WALL_KNOCK = 4, 10, 2, 4, 10


@njit(cache=True)
def _gin_knock_limit(s, spec, p, turn):
    """Largest deadwood the Gin playout policy knocks with at ``turn`` (rules player's)."""
    limit = spec.knock_limit
    if turn >= GIN_EARLY_TURNS:
        limit = min(limit, max(0, GIN_LATE_KNOCK - GIN_KNOCK_SLOPE * (turn - GIN_EARLY_TURNS)))
    known = 0
    for c in range(spec.num_cards):
        if s.loc[c] == LOC_HAND + (p + 1) % spec.num_players and s.public[c] != 0:
            known += 1
    return 0 if known >= GIN_OPP_KNOWN else limit


@njit(cache=True)
def gin_action(s, spec, mask, tables):
    """Gin's playout action for the current player of ``s`` (mask must be current)."""
    p = s.current
    bits = gin.hand_bits(s, spec, p)
    step = s.g_step
    if step == gin.OFFER or step == gin.DRAW or step == gin.WALL:
        top = gin.top_card(s)
        if top >= 0 and mask[spec.a_take + top]:
            with_top = bits | (np.int64(1) << np.int64(top))
            if (step == gin.WALL or gin.deadwood(spec, with_top)
                    < gin.deadwood(spec, bits) + spec.hand_value[top]):
                return spec.a_take + top
            cur = gin.deadwood(spec, bits)
            if cur > spec.knock_limit:   # a take that lets it knock at once, by its limit
                best = cur
                for c in range(spec.num_cards):
                    if c != top and (bits >> np.int64(c)) & 1:
                        best = min(best, gin.deadwood(spec, with_top & ~(np.int64(1) << np.int64(c))))
                if best <= min(spec.knock_limit, _gin_knock_limit(s, spec, p, s.turn)):
                    return spec.a_take + top
        return spec.a_draw if mask[spec.a_draw] else spec.a_done
    if step == gin.DISCARD or step == gin.KNOCK_ONLY:
        c = _gin_best_removal(spec, bits, mask, spec.a_knock)
        if c >= 0:
            dk = gin.deadwood(spec, bits & ~(np.int64(1) << np.int64(c)))
            if (step == gin.KNOCK_ONLY or dk == 0 or dk <= _gin_knock_limit(s, spec, p, s.turn)
                    or (gin.stock_left(s) <= 3 and dk <= GIN_WALL_KNOCK)):
                return spec.a_knock + c
        return spec.a_discard + _gin_best_removal(spec, bits, mask, spec.a_discard)
    if step == gin.LAYOFF:
        dw = gin.deadwood(spec, bits)
        for c in range(spec.num_cards):
            if mask[spec.a_layoff + c] and gin.deadwood(
                    spec, bits & ~(np.int64(1) << np.int64(c))) < dw:
                return spec.a_layoff + c
        return spec.a_done
    # meld steps: a meld of an optimal arrangement, then pass
    dw = gin.deadwood(spec, bits)
    for t in range(spec.num_templates):
        if mask[spec.a_meld + t] and gin.deadwood(spec, bits & ~np.int64(spec.t_mask[t])) == dw:
            return spec.a_meld + t
    if mask[spec.a_done]:
        return spec.a_done
    return _first_legal(spec, mask)


@njit(cache=True)
def german_playout_action(s, spec, mask, tables):
    """German's or Crazy's playout action for the current player of ``s``:
    :func:`mountain_rummy_env.german_player.german_action` under ``tables`` = (params, scratch records,
    solver workspace, meld order) from :func:`rollout_tables`; ``mask`` is not read."""
    params, work, ws, order = tables
    return german_action(s, spec, params, work, ws, order)


def _german_tables(variant, discard: str = "points") -> tuple:
    """German's and Crazy's tables: what :func:`german_action` reads besides the state, with
    the parameters :class:`agents.german.GermanSearchAgent` plays its playouts with (the
    variant's rules player, :func:`rules_params`); ``discard`` is Mountain's only."""
    return (rules_params(variant.name), np.zeros(rules.SCRATCH_RECORDS, dtype=variant.dtype),
            make_workspace(int(variant.spec.num_templates)), credit_order(variant))


_TABLES: dict = {}


def rollout_tables(variant, discard: str = "points") -> tuple:
    """The ``tables`` argument of the variant's playout policy (built once per variant name
    and ``discard``, by :data:`TABLES_BY_SPEC`); ``discard="outs"`` (Mountain only) makes
    Mountain's policy discard as the rules player does (:data:`DISCARDS`)."""
    key = (variant.name, discard)
    hit = _TABLES.get(key)
    if hit is None:
        check_playout_policy(variant, discard)
        hit = _TABLES[key] = TABLES_BY_SPEC[spec_class_of(variant.spec)](variant, discard)
    return hit


# spec type -> playout action, and the builder of its tables
POLICY_BY_SPEC: dict = {Spec: mountain_action, gin.GinSpec: gin_action,
                        GermanSpec: german_playout_action}
TABLES_BY_SPEC: dict = {Spec: solver_tables, gin.GinSpec: solver_tables,
                        GermanSpec: _german_tables}


def check_playout_policy(variant, discard: str = "points") -> None:
    """Fail before compiling, naming the supported spec types, for a registered variant whose
    spec type has no playout policy here, or naming the choices for a ``discard`` the
    variant's policy does not have (only Mountain's has more than ``"points"``)."""
    if spec_class_of(variant.spec) not in POLICY_BY_SPEC:
        raise NotImplementedError(
            f"no playout policy for variant {variant.name!r} (spec type {spec_class_of(variant.spec).__name__}); "
            f"agents.fastpolicy.POLICY_BY_SPEC has: {', '.join(t.__name__ for t in POLICY_BY_SPEC)}")
    choices = tuple(DISCARDS) if spec_class_of(variant.spec) is Spec else ("points",)
    if discard not in choices:
        raise NotImplementedError(
            f"discard={discard!r} is not a playout discard of variant {variant.name!r}; "
            f"it has: {', '.join(choices)}")


def fast_action(s, spec, mask, tables):  # pragma: no cover - compiled only, resolved by spec type
    raise NotImplementedError("compiled only: resolved by spec type")


@overload(fast_action)
def _fast_action(s, spec, mask, tables):
    fn = POLICY_BY_SPEC[spec_class_of(spec)]
    return lambda s, spec, mask, tables: fn(s, spec, mask, tables)


@njit(cache=True)
def act_batch(states, spec, masks, games, tables, out):
    """``out[k]``: :func:`fast_action` of game ``games[k]`` of ``states`` for its current
    player, ``masks[k]`` its legal mask: the playout policy as a batched opponent
    (``experiments/selfplay_ppo.py``), one compiled call for every game it plays. ``spec``
    the record or ``Variant.spec_ref`` (cheaper from Python: core.spec.spec_of)."""
    spec = spec_of(spec)
    for k in range(games.shape[0]):
        out[k] = fast_action(states[games[k]], spec, masks[k], tables)


@njit(cache=True)
def playout_batch(states, spec, masks, scratch, values, me, finished, tables):
    """Play every game in ``states`` to the end of its hand with :func:`fast_action`;
    ``values[b]`` = hand points of ``me`` minus the opponent's. Masks must be current;
    ``finished[b] != 0`` marks a game whose hand already ended (it is only scored);
    ``tables`` from :func:`rollout_tables`."""
    P = spec.num_players
    for b in range(states.shape[0]):
        s = states[b]
        if finished[b] != 0 or s.phase >= 3:
            values[b] = s.h_points[me] - s.h_points[(me + 1) % P]
            continue
        event = EVENT_NONE
        while event == EVENT_NONE:
            a = fast_action(s, spec, masks[b], tables)
            event = batch.apply_action(s, spec, a)
            if event == EVENT_NONE:
                batch.legal_mask(s, spec, masks[b], scratch)
        values[b] = s.h_points[me] - s.h_points[(me + 1) % P]


@register("playout",
          help="the search's compiled playout policy as a player, about 0.1 ms a move: "
               "Mountain's heuristic (takes by solver gain, holds and places as rules, "
               "discards by points kept; discard=outs: by rules' expected points), Gin's, "
               "German's and Crazy's rules player; what the observation's move block "
               "(obs_features=solver_move, solver_move_outs) shows a network")
class PlayoutAgent(Agent):
    """:func:`fast_action` on the seat's public state (its own information only);
    ``discard`` picks Mountain's discard (:data:`DISCARDS`)."""

    def __init__(self, seed=None, discard: str = "points"):
        super().__init__(seed)
        self.discard = discard
        self._out = np.zeros(1, np.int64)
        self._games = np.zeros(1, np.int64)

    def check_variant(self, variant: str) -> None:
        from mountain_rummy_env.registry import make_variant

        try:
            check_playout_policy(make_variant(variant), self.discard)
        except NotImplementedError as err:
            raise AgentSpecError(str(err)) from None

    def act(self, view, mask) -> int:
        v = view.variant
        masks = np.ascontiguousarray(np.asarray(mask, np.int8)[None])
        tables = rollout_tables(v, self.discard)
        act_batch(view.public_state(), v.spec_ref, masks, self._games, tables, self._out)
        return int(self._out[0])
