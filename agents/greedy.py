"""``greedy``: one-ply greed with the exact arrangement solver, and the skeleton every
heuristic player of Mountain and Gin fills in (:class:`HeuristicAgent`).

Mountain (:class:`GreedyAgent`):

* Draw: takes a discard-pile card (top or deep) when the best arrangement of the hand plus
  the taken cards scores more than the hand alone and melds that card; else draws stock.
* Play: melds every meld of the hand's best arrangement (objective ``points``) as soon as it
  can, lays off any card the arrangement leaves unmelded.
* End: Base Camp when legal, knocks when legal (face down its highest card), else discards
  its highest-value deadwood card (never a joker while another card can go).

Gin (:class:`GinGreedyAgent`, docs/gin_rummy.md; card ids are faces, objective deadwood):

* Draw: takes the up-card / top discard when it goes into a meld and lowers the hand's
  least deadwood, else draws (passes an offered up-card).
* End: knocks as soon as it may (gin when it can), else discards; either with the card
  leaving the least deadwood (highest value on ties).
* After a knock: as defender lays off every card that lowers its deadwood; melds its best
  arrangement (the longest meld first).
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.cards import JOKER_FACE
from mountain_rummy_env.core.gin import WALL
from mountain_rummy_env.solver import hand_mask_of

from .base import Agent, register
from .common import (
    BASE_CAMP, DISCARD, DONE, DRAW, KNOCK, LAYOFF, MELD, PASS, PHASE_DRAW, REGROUP, TAKE,
    arrange, faces_of, first_of, hand_deadwoods, hand_value_of, legal_by_family,
    placing_forced, taken_cards,
)


class HeuristicAgent(Agent):
    """The shared skeleton: one decision is the draw (a take the strategy wants, else draw
    stock, else pass), or the next placement, else ``done``/``pass`` (the end of placing),
    else the end of the turn (Base Camp, a knock the strategy wants, else a discard).
    Action families are read from the variant's layout
    (:func:`~agents.common.legal_by_family`), so the same code plays each variant;
    strategies fill in the ``choose_*`` and ``wants_*`` hooks, and players that watch the
    hand :meth:`track` and :meth:`remember`. The hooks' defaults are Mountain's greedy play
    (:class:`GreedyAgent` is the skeleton as it is); Gin's strategies override them."""

    def __init__(self, seed=None):
        super().__init__(seed=seed)
        self.reset()

    def act(self, view, mask) -> int:
        return self.remember(view, self.choose(view, mask))

    def choose(self, view, mask) -> int:
        """The action to play, not yet remembered as played (:meth:`act` remembers it; a
        search that starts from this choice may play another, e.g. Gin's ``search``)."""
        self.track(view)
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        by = legal_by_family(view.variant, mask)
        if view.phase == PHASE_DRAW:
            return self.choose_draw(view, by)
        place = self.choose_placement(view, by)
        if place is None:
            place = first_of(by, (DONE, PASS))
        return self.choose_end(view, by) if place is None else place

    def track(self, view) -> None:
        """Read the view before every decision (greedy keeps no memory)."""

    def remember(self, view, a: int) -> int:
        """Note ``a`` as this player's move; returns it."""
        return int(a)

    # -- draw -----------------------------------------------------------------------------

    def choose_draw(self, view, by) -> int:
        take = self.choose_take(view, by)
        return first_of(by, (DRAW, PASS, *by)) if take is None else take

    def choose_take(self, view, by):
        """The take with the most points gained (:meth:`take_scores`), None if none gains."""
        scores = self.take_scores(view, by)
        if scores:
            a, g = max(scores.items(), key=lambda kv: kv[1])
            if g > 0:
                return a
        return None

    def take_gain(self, view, card, base_points):
        """Points gained by taking ``card`` (and all above it), per the solver; None if the
        arrangement would not meld ``card``."""
        v = view.variant
        taken = taken_cards(view, card)
        faces = faces_of(v, view.hand) + faces_of(v, taken)
        arr = arrange(view, faces, "points")
        face = int(v.spec.card_face[card])
        if face in arr.unmelded:
            return None
        return arr.points - base_points

    def take_scores(self, view, by):
        v = view.variant
        base = arrange(view, faces_of(v, view.hand), "points").points
        scores = {}
        for a in by.get(TAKE, ()):
            g = self.take_gain(view, int(a - v.layout.take), base)
            if g is not None:
                scores[int(a)] = g
        return scores

    # -- placements -----------------------------------------------------------------------

    def placement_plan(self, view):
        v = view.variant
        arr = arrange(view, faces_of(v, view.hand), "points")
        return arr, {t for t, _ in arr.melds}

    def choose_placement(self, view, by, force: bool = False):
        """The next meld or layoff of the hand's best arrangement, None when there is none
        or the player holds them (``wants_to_place``; ``force`` places regardless). When a
        placement is forced (:func:`~agents.common.placing_forced`) some legal placement is
        returned, a regroup if nothing else."""
        v = view.variant
        lay = v.layout
        melds, layoffs, regroups = by.get(MELD, ()), by.get(LAYOFF, ()), by.get(REGROUP, ())
        if not (len(melds) or len(layoffs) or len(regroups)):
            return None
        forced = placing_forced(view, by)
        if not (force or forced) and not self.wants_to_place(view, by):
            return None
        arr, plan = self.placement_plan(view)
        for a in melds:
            if int(a - lay.meld) in plan:
                return int(a)
        loose = set(arr.unmelded)
        best, best_v = None, -1
        for a in layoffs:
            face = int((a - lay.layoff) % JOKER_FACE)
            # a joker is laid off as the face it declares; it is loose if any joker is
            if face in loose or (JOKER_FACE in loose and not self._holds_face(view, face)):
                val = hand_value_of(v, face if face in loose else JOKER_FACE)
                if val > best_v:
                    best, best_v = int(a), val
        if best is not None:
            return best
        if forced:  # any legal placement
            for group in (melds, regroups, layoffs):
                if len(group):
                    return int(group[0])
        return None

    def wants_to_place(self, view, by) -> bool:
        return True

    @staticmethod
    def _holds_face(view, face):
        cf = view.variant.spec.card_face
        return any(int(cf[c]) == face for c in view.hand)

    # -- end of turn ----------------------------------------------------------------------

    def choose_end(self, view, by) -> int:
        if BASE_CAMP in by:
            return int(by[BASE_CAMP][0])
        if KNOCK in by and (DISCARD not in by or self.wants_to_knock(view, by)):
            return self.choose_knock(view, by)
        return self.choose_discard(view, by)

    def wants_to_knock(self, view, by) -> bool:
        return True

    def choose_knock(self, view, by) -> int:
        """Knock with the highest card face down."""
        return self.best_by_value(view, by[KNOCK], view.variant.layout.knock)

    def best_by_value(self, view, actions, offset) -> int:
        v = view.variant
        return int(max(actions, key=lambda a: (int(a - offset) != JOKER_FACE,
                                               hand_value_of(v, int(a - offset)))))

    def choose_discard(self, view, by) -> int:
        v = view.variant
        off = v.layout.discard
        arr = arrange(view, faces_of(v, view.hand), "deadwood")
        loose = set(arr.unmelded) - {JOKER_FACE}
        cands = [a for a in by[DISCARD] if int(a - off) in loose]
        if not cands:
            cands = [a for a in by[DISCARD] if int(a - off) != JOKER_FACE] or list(by[DISCARD])
        return self.best_by_value(view, cands, off)


@register("greedy", variant="mountain",
          help="takes discards (top or deep) that meld, melds and lays off at once (solver), "
               "Base Camp or knock as soon as legal, else discards its worst deadwood")
class GreedyAgent(HeuristicAgent):
    pass


@register("greedy", variant="gin",
          help="takes the up-card or discard that melds and lowers its deadwood, discards to "
               "the least deadwood, knocks as soon as it may (gin when it can); as defender "
               "lays off all that lowers its deadwood")
class GinGreedyAgent(HeuristicAgent):
    """Gin's greedy (see the module docstring): the skeleton's hooks with Gin's objective,
    least deadwood, and Gin's moves (the take of the one face-up card, a knock that discards,
    the layoffs and melds after a knock). Hands are bitmasks of card ids (= faces)."""

    def choose_take(self, view, by):
        if TAKE in by and self.wants_take(view, int(by[TAKE][0] - view.variant.layout.take)):
            return int(by[TAKE][0])
        return None

    def take_outcome(self, view, card: int):
        """``(deadwood now, best deadwood after taking card and discarding another, melds)``
        where ``melds`` says the card goes into a meld of that best hand."""
        v = view.variant
        hand = hand_mask_of(view.hand)
        eleven = hand | (1 << card)
        rest = [eleven & ~(1 << x) for x in sorted(view.hand)]
        cur, *dws = hand_deadwoods(v, [hand, *rest])
        k = int(np.argmin(dws))
        without = int(hand_deadwoods(v, [rest[k] & ~(1 << card)])[0])
        return int(cur), int(dws[k]), dws[k] < without + hand_value_of(v, card)

    def wants_take(self, view, card: int) -> bool:
        """Take a card that melds and lowers the least deadwood (:meth:`take_outcome`), or
        lets the hand knock at once (:meth:`takes_to_knock`); always at OpenSpiel's wall,
        where the take is only legal to knock with it."""
        if view.step == WALL:
            return True
        cur, best, melds = self.take_outcome(view, card)
        return (melds and best < cur) or self.takes_to_knock(view, cur, best)

    def takes_to_knock(self, view, cur: int, best: int) -> bool:
        """Whether a take that brings the deadwood from ``cur`` to ``best`` is worth it for
        the knock it allows (greedy: no; it takes only cards that meld)."""
        return False

    def choose_knock(self, view, by) -> int:
        off = view.variant.layout.knock
        return self.least_deadwood(view, self.not_just_taken(view, by[KNOCK], off), off)[0]

    def choose_discard(self, view, by) -> int:
        off = view.variant.layout.discard
        return self.least_deadwood(view, self.not_just_taken(view, by[DISCARD], off), off)[0]

    @staticmethod
    def not_just_taken(view, actions, offset) -> list[int]:
        """``actions`` (a card each) less the card taken this turn, unless that is all."""
        taken = set(view.taken)
        keep = [int(a) for a in actions if a - offset not in taken]
        return keep or [int(a) for a in actions]

    @staticmethod
    def least_deadwood(view, actions, offset) -> tuple[int, int]:
        """``(action, deadwood)``: of ``actions`` (``offset`` + a card each) the one whose
        card leaves the least deadwood in hand, the highest card on ties."""
        v = view.variant
        hand = hand_mask_of(view.hand)
        dws = hand_deadwoods(v, [hand & ~(1 << int(a - offset)) for a in actions])
        a, dw = min(zip(actions, dws),
                    key=lambda t: (int(t[1]), -hand_value_of(v, int(t[0] - offset))))
        return int(a), int(dw)

    # -- after a knock ---------------------------------------------------------------------

    def choose_placement(self, view, by):
        """The defender's layoff, else a meld (knocker or defender); None passes."""
        if LAYOFF in by:
            return self.choose_layoff(view, by[LAYOFF])
        if MELD in by:
            return self.choose_meld(view, by)
        return None

    def choose_layoff(self, view, layoffs):
        """A layoff that lowers the hand's deadwood (most first), or None to pass."""
        a, dw = self.least_deadwood(view, layoffs, view.variant.layout.layoff)
        return a if dw < hand_deadwoods(view.variant, [hand_mask_of(view.hand)])[0] else None

    def choose_meld(self, view, by):
        """The longest legal meld that keeps the least deadwood reachable, or None (pass)
        once no meld lowers it and passing is legal."""
        v = view.variant
        off, table = v.layout.meld, v.table
        hand = hand_mask_of(view.hand)
        melds = [int(a) for a in by[MELD]]
        best, *dws = hand_deadwoods(v, [hand] + [hand & ~int(table.mask[a - off]) for a in melds])
        if PASS in by and sum(hand_value_of(v, c) for c in view.hand) == best:
            return None
        keep = [a for a, d in zip(melds, dws) if d == best] or melds   # exact masks: never empty
        return max(keep, key=lambda a: (int(table.length[a - off]), -a))
