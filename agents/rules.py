"""``rules``: a stronger rule-based player, per variant a strategy of the greedy skeleton
(:class:`agents.greedy.HeuristicAgent`) that watches the hand (``track``/``remember``).

Mountain (:class:`RulesAgent`), on top of the greedy player:

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

Gin (:class:`GinRulesAgent`), on top of Gin's greedy player:

* tracks the opponent's picks, discards and refusals;
* discards to minimise its deadwood now (what an opponent's knock would cost) plus the
  expected deadwood after the next draw over the unseen cards, less bonuses for the chance
  of knocking / gin next turn, plus the chance of feeding a meld the opponent may hold (per
  live 3-card meld, lowered near the cards it threw or refused, certain with the cards it
  took);
* takes a discard when it melds or lets it knock at once;
* knocks at once early in the hand, later only with deadwood under a limit falling with
  the turns down to gin only (undercut risk grows, while a low hand held on may undercut
  the opponent's knock);
* as defender runs an exact search over layoff sequences on the knocker's melds.

The two differ where the games do: Mountain scores points (melds count for their player),
deals jokers and deep discard-pile draws and lets a player hold melds; Gin scores deadwood
against a knock, so its expectation, feeding model and knock policy are its own.
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.cards import JOKER_FACE, NUM_FACES, NUM_RANKS
from mountain_rummy_env.core.state import PHASE_DRAW
from mountain_rummy_env.solver import hand_mask_of

from .base import register
from .common import (
    DISCARD, KNOCK, arrange, cards_of, connectivity, draw_outlook, faces_of,
    hand_deadwoods, hand_value_of, unseen_faces,
)
from .greedy import GinGreedyAgent, HeuristicAgent


def _rank(f):
    return f % NUM_RANKS


def _suit(f):
    return f // NUM_RANKS


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
    """Mountain's rule-based player (see the module docstring)."""

    def __init__(self, seed=None, hold: int = 1, hold_opp: int = 4, hold_stock: int = 6,
                 outs: int = 1, outs_weight: float = 2.0, feed_weight: float = 1.5):
        super().__init__(seed=seed)
        self.outs = bool(outs)
        self.outs_weight = outs_weight
        self.feed_weight = feed_weight
        self.hold = bool(hold)
        self.hold_opp = hold_opp
        self.hold_stock = hold_stock

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

    def layable_faces(self, view) -> int:
        """Bitmask of faces that could be laid off on a table meld now (either player's)."""
        bits = 0
        for m in view.melds:
            shown = m["faces"]
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
        cands = [int(a) for a in by[DISCARD]]
        rests = [list(faces) for _ in cands]
        for a, rest in zip(cands, rests):
            rest.remove(a - off)
        now, after, w = draw_outlook(view, [hand_mask_of(r) for r in rests],
                                     [r.count(JOKER_FACE) for r in rests], "points")
        layable = self.layable_faces(view)
        out = {}
        for i, a in enumerate(cands):
            f = a - off
            base = float(now[i])
            gains = np.maximum(after[i] - base, 0.0)
            exp_gain = float((gains * w).sum() / max(1, w.sum()))
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


def _meld_partners() -> list[list[tuple[int, int]]]:
    """Per face: the pairs of faces completing a 3-card Gin meld with it (sets, ace-low
    runs)."""
    out = []
    for c in range(NUM_FACES):
        r, s = _rank(c), _suit(c)
        others = [t * NUM_RANKS + r for t in range(4) if t != s]
        pairs = [(others[i], others[j]) for i in range(3) for j in range(i + 1, 3)]
        for lo in (r - 2, r - 1, r):
            if lo < 0 or lo + 2 > NUM_RANKS - 1:
                continue
            run = [s * NUM_RANKS + k for k in range(lo, lo + 3) if k != r]
            pairs.append((run[0], run[1]))
        out.append(pairs)
    return out


_PARTNERS = _meld_partners()


def _near(a: int, b: int) -> bool:
    """Same rank, or same suit one rank apart (ace low only, as in Gin)."""
    if a == b:
        return False
    if _rank(a) == _rank(b):
        return True
    return _suit(a) == _suit(b) and abs(_rank(a) - _rank(b)) == 1


@register("rules", variant="gin",
          help="tracks the opponent's picks, discards and refusals; discards by present and "
               "expected deadwood less the risk of feeding its melds, knocks under a limit "
               "falling with the turns (undercut risk); as defender searches its layoffs")
class GinRulesAgent(GinGreedyAgent):
    """Gin's rule-based player (see the module docstring).

    Parameters (defaults tuned against Gin's greedy player on duplicate deals):

    ``now_weight``
        weight of the deadwood of the hand kept after a discard, next to the expected
        deadwood after the next draw (weight 1): what it loses if the opponent knocks first.
    ``knock_weight``, ``gin_weight``
        bonus (deadwood points) per unit of probability that the next draw lets the hand
        knock (by its own knock limit) / go gin.
    ``feed_weight``
        cost (deadwood points) per unit of probability that a discard completes a meld the
        opponent may hold.
    ``signal``
        how much a card the opponent threw or refused lowers the chance that it holds the
        cards next to it (0: ignored, 1: never); the pairs completing such a card are
        also taken as not held.
    ``early_turns``, ``late_knock``, ``knock_slope``, ``min_knock``
        the knock limit: while ``turn`` (completed turns of both players) is below
        ``early_turns`` any legal knock; then ``late_knock`` less ``knock_slope`` per turn,
        down to ``min_knock`` (0: only gin). The undercut risk grows as the hand goes on,
        while a low hand held on is cheap when the opponent knocks (it may be undercut).
    ``opp_known_knock``
        with at least this many cards known in the opponent's hand (taken to meld), the
        limit drops to ``min_knock``.
    ``gin_hold``
        early on, deadwood of at most this much is held to play for gin (0: never).
    ``wall_knock``
        with at most 3 stock cards left (GR-5: the hand is about to be a draw), knock
        with deadwood up to this much whatever the limit.
    """

    def __init__(self, seed=None, now_weight: float = 2.0, knock_weight: float = 6.0,
                 gin_weight: float = 6.0, feed_weight: float = 12.0, signal: float = 0.5,
                 early_turns: int = 4, late_knock: int = 10, knock_slope: float = 2.0,
                 min_knock: int = 0, opp_known_knock: int = 4, gin_hold: int = 0,
                 wall_knock: int = 10):
        super().__init__(seed=seed)
        self.now_weight = float(now_weight)
        self.knock_weight = float(knock_weight)
        self.gin_weight = float(gin_weight)
        self.feed_weight = float(feed_weight)
        self.signal = float(signal)
        self.early_turns = int(early_turns)
        self.late_knock = int(late_knock)
        self.knock_slope = float(knock_slope)
        self.min_knock = int(min_knock)
        self.opp_known_knock = int(opp_known_knock)
        self.gin_hold = int(gin_hold)
        self.wall_knock = int(wall_knock)

    def reset(self) -> None:
        self.my_discards: set[int] = set()
        self.upcard: int | None = None
        self.opp_thrown: set[int] = set()    # the opponent discarded it
        self.opp_refused: set[int] = set()   # the opponent could take it and did not

    # -- tracking ------------------------------------------------------------------------

    def track(self, view) -> None:
        pile = list(view.discard)
        if self.upcard is None and pile and view.turn == 0:
            self.upcard = pile[0]
        passes = int(view.public_state()[0]["g_passes"])
        upcard_offered = not (view.turn == 0 and passes == 0)
        for c in pile:
            if c in self.my_discards:
                self.opp_refused.add(c)
            elif c == self.upcard:
                if upcard_offered:  # the opponent had the offer of the first up-card
                    self.opp_refused.add(c)
            else:
                self.opp_thrown.add(c)

    def remember(self, view, a: int) -> int:
        """Note ``a`` as played (the cards it threw are signals to read later)."""
        lay = view.variant.layout
        if lay.discard <= a < lay.meld:
            self.my_discards.add((a - lay.discard) % NUM_FACES)
        return int(a)

    # -- what the opponent may hold ---------------------------------------------------------

    def hold_probs(self, view) -> np.ndarray:
        """Probability per card that it is in the opponent's hand."""
        known = set(view.opponent_known)
        pool = unseen_faces(view)
        n_unknown = max(0, view.opponent_hand_size - len(known))
        p = np.zeros(NUM_FACES)
        if pool:
            w = np.ones(len(pool))
            sig = [(c, 1.0) for c in self.opp_thrown] + [(c, 0.5) for c in self.opp_refused]
            for i, c in enumerate(pool):
                for s, weight in sig:
                    if _near(c, s):
                        w[i] *= 1.0 - self.signal * weight
            w *= n_unknown / max(w.sum(), 1e-9)
            p[pool] = np.minimum(w, 1.0)
        for c in known:
            p[c] = 1.0
        return p

    def excluded_pairs(self) -> set:
        """Pairs the opponent is taken not to hold: those completing a card it threw or
        refused (it would have kept or taken that card); :meth:`feed_prob` still counts a
        pair with a card known to be in its hand (taken since)."""
        out = set()
        for x in self.opp_thrown | self.opp_refused:
            out.update(_PARTNERS[x])
        return out

    @staticmethod
    def feed_prob(card: int, p: np.ndarray, excluded=frozenset(), known=frozenset()) -> float:
        """Chance that ``card`` completes (or extends) a meld in the opponent's hand."""
        miss = 1.0
        for a, b in _PARTNERS[card]:
            if (a, b) in excluded and a not in known and b not in known:
                continue
            miss *= 1.0 - p[a] * p[b]
        return 1.0 - miss

    # -- discarding -------------------------------------------------------------------------

    def hand_costs(self, view, hands: list[int]) -> np.ndarray:
        """Cost of keeping each 10-card hand: ``now_weight`` x its deadwood + the expected
        deadwood after the next draw (its best discard then, maybe the drawn card back)
        - bonuses for the chance that draw lets it knock / go gin."""
        K = self.knock_limit(view, view.turn + 2)   # what it will knock with next turn
        now, after, _ = draw_outlook(view, hands, [0] * len(hands), "deadwood", discard=True)
        pk, pg = (after <= K).mean(axis=1), (after == 0).mean(axis=1)
        return (self.now_weight * now + after.mean(axis=1) - self.knock_weight * pk
                - self.gin_weight * pg)

    def choose_discard(self, view, by) -> int:
        v = view.variant
        off = v.layout.discard
        actions = self.not_just_taken(view, by[DISCARD], off)
        cards = [a - off for a in actions]
        hand = hand_mask_of(view.hand)
        costs = self.hand_costs(view, [hand & ~(1 << c) for c in cards])
        p = self.hold_probs(view)
        excl = self.excluded_pairs()
        known = set(view.opponent_known)
        for i, c in enumerate(cards):
            costs[i] += self.feed_weight * self.feed_prob(c, p, excl, known)
        i = min(range(len(cards)), key=lambda k: (costs[k], -hand_value_of(v, cards[k])))
        return actions[i]

    # -- taking and knocking ----------------------------------------------------------------

    def takes_to_knock(self, view, cur: int, best: int) -> bool:
        """A card that lets the hand knock at once, with the knock policy's consent."""
        K = view.variant.config.knock_card
        return best <= K < cur and best <= self.knock_limit(view)

    def knock_limit(self, view, turn: int | None = None) -> int:
        """Largest deadwood this agent knocks with now (the undercut risk grows with the
        turns and with the cards known in the opponent's hand)."""
        K = view.variant.config.knock_card
        turn = view.turn if turn is None else turn
        if turn < self.early_turns:
            limit = K
        else:
            limit = int(np.floor(self.late_knock - self.knock_slope * (turn - self.early_turns)))
            limit = max(self.min_knock, min(K, limit))
        if len(view.opponent_known) >= self.opp_known_knock:
            limit = min(limit, self.min_knock)
        return limit

    def wants_to_knock(self, view, by) -> bool:
        dk = self.least_deadwood(view, by[KNOCK], view.variant.layout.knock)[1]
        if dk == 0:
            return True
        if view.stock_size <= 3 and dk <= self.wall_knock:   # last chance before the wall (GR-5)
            return True
        if view.turn < self.early_turns and dk <= self.gin_hold:
            return False
        return dk <= self.knock_limit(view)

    # -- defending: exact layoff search (Gin's; Mountain has no defender's layoff phase) ----

    def choose_layoff(self, view, layoffs):
        """The first layoff of a sequence that leaves the least deadwood (an exact search
        over sequences on a model of the knocker's melds: a run grows at its ends, a set up
        to four; a card that breaks this player's own meld may still pay), or None."""
        v = view.variant
        off = v.layout.layoff
        knocker = 1 - view.player
        melds = []
        for m in view.melds:
            if m["founder"] != knocker:
                continue
            cards = [int(c) for c in m["cards"]]
            if m["kind"] == "run":
                ranks = [_rank(c) for c in cards]
                melds.append(("run", _suit(cards[0]), min(ranks), max(ranks)))
            else:
                melds.append(("set", _rank(cards[0]), hand_mask_of(cards), len(cards)))
        memo: dict = {}

        def fit(ms, c):
            for k, m in enumerate(ms):  # a run before a set, as the engine lays off
                if m[0] == "run" and _suit(c) == m[1] and _rank(c) in (m[2] - 1, m[3] + 1):
                    return k
            for k, m in enumerate(ms):
                if m[0] == "set" and _rank(c) == m[1] and m[3] < 4 and not (m[2] >> c) & 1:
                    return k
            return -1

        def put(ms, k, c):
            m = ms[k]
            if m[0] == "run":
                new = ("run", m[1], min(m[2], _rank(c)), max(m[3], _rank(c)))
            else:
                new = ("set", m[1], m[2] | (1 << c), m[3] + 1)
            return ms[:k] + (new,) + ms[k + 1:]

        def best(h, ms):
            key = (h, ms)
            if key in memo:
                return memo[key]
            val = int(hand_deadwoods(v, [h])[0])
            for c in cards_of(h):
                k = fit(ms, c)
                if k >= 0:
                    val = min(val, best(h & ~(1 << c), put(ms, k, c)))
            memo[key] = val
            return val

        ms0 = tuple(melds)
        hand = hand_mask_of(view.hand)
        choice, choice_val = None, int(hand_deadwoods(v, [hand])[0])
        for a in layoffs:
            c = int(a - off)
            k = fit(ms0, c)
            nxt = put(ms0, k, c) if k >= 0 else ms0
            val = best(hand & ~(1 << c), nxt)
            if val < choice_val or (val == choice_val and choice is not None
                                    and hand_value_of(v, c) > hand_value_of(v, choice - off)):
                choice, choice_val = int(a), val
        return choice
