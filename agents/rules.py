"""``rules``: a stronger rule-based player.

On top of the greedy skeleton (:class:`agents.greedy.HeuristicAgent`) it

* tracks the hand: the cards the opponent took from the discard pile (still known to be in
  its hand) and the cards it discarded;
* discards by expected points: the solver's points of the hand left plus ``outs_weight`` x
  the mean gain of one more unseen card, less a feeding penalty for a card that completes or
  extends a meld with the opponent's known cards or lays off on a table meld; cards of
  ranks/suits the opponent threw away are preferred (``outs=0``: the older discard by
  deadwood and connectivity);
* takes deep discard-pile draws by solver points gain, counting every card taken with it;
* holds its melds and layoffs in hand (``hold=1``) until placing them lets it end the hand
  (a knock or a camp), the opponent is down to ``hold_opp`` cards in hand or the stock to
  ``hold_stock`` cards. A held meld feeds no layoffs to the opponent and tells it nothing;
  a knock costs it nothing (the response phase melds it, MR-10), only a camp or an
  exhausted stock does; and a hand ended by camp with nothing placed before earns the
  Summit. Measured +20 points a deal against placing at once (docs/agents.md);
* knocks and camps as soon as it may: waiting for a lead in points or for lower deadwood
  was measured to lose points against opponents that go out at once (docs/agents.md).
"""

from __future__ import annotations

from mountain_rummy_env.cards import JOKER_FACE, NUM_RANKS
from mountain_rummy_env.core.state import PHASE_DRAW
from mountain_rummy_env.solver import best_deadwood_batch, hand_mask_of

import numpy as np

from .base import register
from .common import (
    DISCARD, _shown_face, arrange, connectivity, faces_of, hand_value_of, table_faces,
)
from .greedy import HeuristicAgent


def _rank(f):
    return f % NUM_RANKS


def _suit(f):
    return f // NUM_RANKS


def _shown(view, card, text):
    return _shown_face(view.variant, card, text)


def _run_pos(f, shown):
    """Position of face ``f`` in a run (ace 0 low, 13 high when the run holds a K or Q)."""
    r = _rank(f)
    if r == 0 and any(_rank(g) >= 11 for g in shown):
        return 13
    return r


def _adjacent(a, b):
    """Rank distance within a suit (ace next to 2 and to K)."""
    d = abs(_rank(a) - _rank(b))
    return min(d, 13 - d) if 0 in (_rank(a), _rank(b)) else d


@register("rules", variant="mountain",
          help="tracks the opponent's takes and discards; discards by expected points less "
               "the risk of feeding the opponent's melds, takes deep draws by solver gain, "
               "holds its melds and layoffs until it can knock or camp")
class RulesAgent(HeuristicAgent):
    def __init__(self, seed=None, hold: int = 1, hold_opp: int = 4, hold_stock: int = 6,
                 outs: int = 1, outs_weight: float = 2.0, feed_weight: float = 1.5):
        super().__init__(seed=seed)
        self.outs = bool(outs)
        self.outs_weight = outs_weight
        self.feed_weight = feed_weight
        self.hold = bool(hold)
        self.hold_opp = hold_opp
        self.hold_stock = hold_stock
        self.reset()

    def reset(self) -> None:
        self.opp_discards: set[int] = set()
        self.opp_taken: set[int] = set()
        self.my_discard = None
        self.last_turn = -1

    # -- tracking ------------------------------------------------------------------------

    def track(self, view) -> None:
        v = view.variant
        cf = v.spec.card_face
        self.opp_taken |= {int(cf[c]) for c in view.opponent_known}
        if view.phase == PHASE_DRAW and view.turn != self.last_turn:
            self.last_turn = view.turn
            if view.turn > 0 and view.discard and view.discard[-1] != self.my_discard:
                self.opp_discards.add(int(cf[view.discard[-1]]))

    def act(self, view, mask) -> int:
        return self.remember(view, self.choose(view, mask))

    def choose(self, view, mask) -> int:
        """The action to play, not yet remembered as played (a caller may play another and
        tell :meth:`remember` which)."""
        self.track(view)
        return super().act(view, mask)

    def remember(self, view, a: int) -> int:
        """Note ``a`` as played: a discard is this player's, not a signal from the opponent."""
        lay = view.variant.layout
        if lay.discard <= a < lay.knock:
            face = a - lay.discard
            cf = view.variant.spec.card_face
            self.my_discard = next((c for c in view.hand if cf[c] == face), None)
        return int(a)

    # -- danger of a discard ---------------------------------------------------------------

    def danger(self, view, f) -> float:
        if f == JOKER_FACE:
            return 20.0
        known = self.opp_taken | {int(view.variant.spec.card_face[c]) for c in view.opponent_known}
        same_rank = sum(1 for g in known if g != JOKER_FACE and _rank(g) == _rank(f) and g != f)
        run = [g for g in known if g != JOKER_FACE and _suit(g) == _suit(f) and g != f]
        near1 = sum(1 for g in run if _adjacent(f, g) == 1)
        near2 = sum(1 for g in run if _adjacent(f, g) == 2)
        d = 0.0
        if same_rank >= 2 or near1 >= 2 or (near1 and near2):
            d += 25.0       # completes a meld with cards it is known to hold
        elif same_rank == 1 or near1 == 1:
            d += 6.0
        elif near2:
            d += 2.0
        safe = sum(1 for g in self.opp_discards if g != JOKER_FACE and
                   (_rank(g) == _rank(f) or (_suit(g) == _suit(f) and _adjacent(f, g) <= 1)))
        d -= 2.0 * min(safe, 2)
        return d

    def unseen_faces(self, view) -> list[int]:
        """Faces of the cards this player has not seen (a face per card, jokers = 52)."""
        return view.variant.spec.card_face[view.hidden_cards()].tolist()

    def layable_faces(self, view) -> int:
        """Bitmask of faces that could be laid off on a table meld now (either player's)."""
        bits = 0
        for m in view.melds:
            shown = [_shown(view, c, t) for c, t in zip(m["cards"], m["text"])]
            if m["kind"] == "set":
                r = _rank(shown[0])
                for s in range(4):
                    f = s * NUM_RANKS + r
                    if f not in shown and len(shown) < 4:
                        bits |= 1 << f
            else:
                su = _suit(shown[0])
                pos = sorted(_run_pos(f, shown) for f in shown)
                lo, hi = pos[0], pos[-1]
                if lo > 0:
                    bits |= 1 << (su * NUM_RANKS + (lo - 1) % NUM_RANKS)
                if hi < 13:
                    bits |= 1 << (su * NUM_RANKS + (hi + 1) % NUM_RANKS)
        return bits

    def discard_values(self, view, by):
        """Expected-points value of each legal discard: points of the hand left, plus the
        mean gain of one more unseen card (the draw to come), minus feeding risk."""
        v = view.variant
        off = v.layout.discard
        faces = faces_of(v, view.hand)
        unseen = self.unseen_faces(view)
        nat_unseen = [u for u in unseen if u != JOKER_FACE]
        j_unseen = len(unseen) - len(nat_unseen)
        cands = [int(a) for a in by[DISCARD]]
        hands, jok = [], []
        for a in cands:
            f = a - off
            rest = list(faces)
            rest.remove(f)
            hm = hand_mask_of(rest)
            nj = rest.count(JOKER_FACE)
            hands.append(hm); jok.append(nj)
            for u in nat_unseen:
                hands.append(hm | (1 << u)); jok.append(nj)
            hands.append(hm); jok.append(nj + 1)
        pts = best_deadwood_batch(np.array(hands, dtype=np.uint64), np.array(jok), v.table,
                                  v.spec.hand_value, "points", table_faces(view))
        k = len(nat_unseen) + 2
        layable = self.layable_faces(view)
        out = {}
        for i, a in enumerate(cands):
            f = a - off
            row = pts[i * k:(i + 1) * k].astype(np.float64)
            base = row[0]
            gains = np.maximum(row[1:] - base - 0.0, 0.0)
            w = np.ones(k - 1)
            w[-1] = j_unseen
            exp_gain = float((gains * w).sum() / max(1, len(unseen)))
            val = base + self.outs_weight * exp_gain
            if f == JOKER_FACE:
                val -= 30.0
            else:
                feed = self.danger(view, f)
                if (layable >> f) & 1:
                    feed += 15.0
                val -= self.feed_weight * max(feed, 0.0) * hand_value_of(v, f) / 10.0
            out[a] = val
        return out

    def choose_discard(self, view, by) -> int:
        if self.outs:
            vals = self.discard_values(view, by)
            return max(vals, key=vals.get)
        return self._discard_by_deadwood(view, by)

    def _discard_by_deadwood(self, view, by) -> int:
        """The older discard (``outs=0``): the highest loose card, less connectivity and
        feeding danger; melded cards only as a last resort."""
        v = view.variant
        off = v.layout.discard
        faces = faces_of(v, view.hand)
        arr = arrange(view, faces, "deadwood")
        loose = list(arr.unmelded)
        best, best_s = None, None
        for a in by[DISCARD]:
            f = int(a - off)
            if f == JOKER_FACE:
                s = -1000.0
            else:
                s = float(hand_value_of(v, f))
                if f not in loose:
                    s -= 40.0
                s -= 4.0 * connectivity(f, [g for g in loose if g != f])
                s -= self.danger(view, f)
            if best_s is None or s > best_s:
                best, best_s = int(a), s
        return best

    # -- holding melds ---------------------------------------------------------------------

    def wants_to_place(self, view, by) -> bool:
        if not self.hold or self.placing_due(view):
            return True
        return self.could_end_after_placing(view)

    def placing_due(self, view) -> bool:
        """Whether to place whatever the hand: a deep-drawn card must be placed, the
        opponent is down to ``hold_opp`` cards or the stock to ``hold_stock``."""
        return (view.obligation >= 0 or view.opponent_hand_size <= self.hold_opp
                or view.stock_size <= self.hold_stock)

    def could_end_after_placing(self, view) -> bool:
        """Whether placing the best arrangement (melds and layoffs) leaves a hand that can
        end the turn: at most one card (a camp) or a knock (deadwood <= 10 once the highest
        card goes face down, MR-7)."""
        v = view.variant
        arr = arrange(view, faces_of(v, view.hand), "points")
        layable = self.layable_faces(view)
        loose = [hand_value_of(v, f) for f in arr.unmelded
                 if not (layable >> f) & 1 and not (f == JOKER_FACE and layable)]
        return len(loose) <= 1 or sum(loose) - max(loose) <= v.spec.knock_limit
