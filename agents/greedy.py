"""``greedy``: one-ply greed with the exact arrangement solver.

* Draw: takes a discard-pile card (top or deep) when the best arrangement of the hand plus
  the taken cards scores more than the hand alone and melds that card; else draws stock.
* Play: melds every meld of the hand's best arrangement (objective ``points``) as soon as it
  can, lays off any card the arrangement leaves unmelded.
* End: Base Camp when legal, knocks when legal (face down its highest card), else discards
  its highest-value deadwood card (never a joker while another card can go).
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.cards import JOKER_FACE

from .base import Agent, register
from .common import (
    BASE_CAMP, DISCARD, DONE, DRAW, KNOCK, LAYOFF, MELD, PHASE_DRAW, REGROUP, TAKE, arrange,
    faces_of, hand_value_of, legal_by_family, placing_forced, taken_cards,
)


class HeuristicAgent(Agent):
    """Shared skeleton: draw choice, placements, end of turn; subclasses tune the parts."""

    def act(self, view, mask) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        by = legal_by_family(view.variant, mask)
        if view.phase == PHASE_DRAW:
            return self.choose_draw(view, by)
        place = self.choose_placement(view, by)
        if place is not None:
            return place
        if DONE in by:
            return int(by[DONE][0])
        return self.choose_end(view, by)

    # -- draw -----------------------------------------------------------------------------

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

    def choose_draw(self, view, by) -> int:
        scores = self.take_scores(view, by)
        if scores:
            a, g = max(scores.items(), key=lambda kv: kv[1])
            if g > 0:
                return a
        return int(by[DRAW][0]) if DRAW in by else int(next(iter(by.values()))[0])

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
        if KNOCK in by and self.wants_to_knock(view, by):
            return self.best_by_value(view, by[KNOCK], view.variant.layout.knock)
        return self.choose_discard(view, by)

    def wants_to_knock(self, view, by) -> bool:
        return True

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
