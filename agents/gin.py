"""Gin Rummy baselines (docs/gin_rummy.md): ``GinGreedyAgent`` and ``GinRulesAgent``.

* ``GinGreedyAgent``: one-ply greed with the exact solver. Takes the up-card / top discard
  when it goes into a meld and lowers the hand's minimum deadwood, else draws (passes an
  offered up-card); discards the card leaving the least deadwood (highest value on ties);
  knocks as soon as it may (gin when it can); melds its best arrangement; as defender lays
  off every card that lowers its deadwood, then melds.
* ``GinRulesAgent``: tracks the opponent's picks, discards and refusals; discards to minimise
  its deadwood now (what an opponent's knock would cost) plus the expected deadwood after
  the next draw over the unseen cards, less bonuses for the chance of knocking / gin next
  turn, plus the chance of feeding a meld the opponent may hold (per live 3-card meld,
  lowered near the cards it threw or refused, certain with the cards it took); takes a
  discard when it melds or lets it knock at once; knocks at once early in the hand, later
  only with deadwood under a limit falling with the turns down to gin only (undercut risk
  grows, while a low hand held on may undercut the opponent's knock); as defender runs an
  exact search over layoff sequences on the knocker's melds.

Both read the public Gin step (``PlayerView.step``) and the variant's action layout; card
ids are faces (``suit * 13 + rank``). Every returned action is legal (the mask is exact and
every choice is drawn from it).
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.cards import NUM_FACES, NUM_RANKS
from mountain_rummy_env.core.gin import (
    DEF_MELD, DISCARD, DRAW, KNOCK_MELD, KNOCK_ONLY, LAYOFF, OFFER, WALL,
)
from mountain_rummy_env.solver import best_deadwood_batch

from .base import Agent, register

__all__ = ["GinGreedyAgent", "GinRulesAgent", "gin_step"]


# ---------------------------------------------------------------------------------------
# helpers: hands are int bitmasks of card ids (= faces in Gin)


def gin_step(view) -> int:
    """The public Gin step (``core.gin.OFFER`` ... ``DEF_MELD``) of ``view``'s position."""
    return view.step


def _bits(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return m


def _cards(bits: int) -> list[int]:
    out = []
    while bits:
        low = bits & -bits
        out.append(low.bit_length() - 1)
        bits ^= low
    return out


def _rank(c: int) -> int:
    return c % NUM_RANKS


def _suit(c: int) -> int:
    return c // NUM_RANKS


class _Solver:
    """Batched exact deadwood of many hands for one variant (joker-free fast path)."""

    def __init__(self, variant):
        self.table = variant.table
        self.values = np.asarray(variant.spec.hand_value, dtype=np.int64)
        self.tmask = [int(m) for m in variant.table.mask]
        self.tlen = [int(n) for n in variant.table.length]

    def dw(self, hands) -> np.ndarray:
        """Minimum deadwood per hand (list of int bitmasks) as int64[len(hands)]."""
        if not len(hands):
            return np.zeros(0, dtype=np.int64)
        arr = np.fromiter((int(h) for h in hands), dtype=np.uint64, count=len(hands))
        return best_deadwood_batch(arr, 0, self.table, self.values, "deadwood").astype(np.int64)

    def dw1(self, hand: int) -> int:
        return int(self.dw([hand])[0])

    def value(self, card: int) -> int:
        return int(self.values[card])

    def total(self, bits: int) -> int:
        return sum(int(self.values[c]) for c in _cards(bits))


_SOLVERS: dict = {}


def _solver(variant) -> _Solver:
    key = id(variant.table)
    hit = _SOLVERS.get(key)
    if hit is None or hit.table is not variant.table:
        hit = _SOLVERS[key] = _Solver(variant)
    return hit


def _family_actions(mask, start: int, stop: int) -> list[int]:
    return [int(a) for a in np.flatnonzero(mask[start:stop]) + start]


# ---------------------------------------------------------------------------------------
# the greedy baseline


@register("greedy", variant="gin",
          help="takes the up-card or discard that melds and lowers its deadwood, discards to "
               "the least deadwood, knocks as soon as it may (gin when it can); as defender "
               "lays off all that lowers its deadwood")
class GinGreedyAgent(Agent):
    """One-ply greed with the exact solver (see the module docstring).

    The hooks (``wants_take``, ``choose_discard``, ``wants_knock``, ``choose_knock``,
    ``choose_layoff``, ``choose_meld``) are what :class:`GinRulesAgent` overrides.
    """

    name = "greedy"

    def __init__(self, seed=None):
        super().__init__(seed=seed)
        self.reset()

    def reset(self) -> None:
        """Greedy keeps no memory between decisions."""

    # -- dispatch -------------------------------------------------------------------------

    def act(self, view, mask) -> int:
        mask = np.asarray(mask)
        self.observe(view, mask)
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        lay = view.variant.layout
        step = gin_step(view)
        sv = _solver(view.variant)
        hand = _bits(view.hand)
        if step in (OFFER, DRAW, WALL):
            takes = _family_actions(mask, lay.take, lay.pass_)
            if takes and self.wants_take(view, sv, hand, takes[0] - lay.take, step):
                return takes[0]
            if mask[lay.draw]:
                return lay.draw
            return lay.pass_
        if step in (DISCARD, KNOCK_ONLY):
            knocks = _family_actions(mask, lay.knock, lay.meld)
            if knocks and (step == KNOCK_ONLY or self.wants_knock(view, sv, hand, knocks)):
                return self.choose_knock(view, sv, hand, knocks)
            discards = _family_actions(mask, lay.discard, lay.knock)
            return self.choose_discard(view, sv, hand, discards)
        if step == LAYOFF:
            layoffs = _family_actions(mask, lay.layoff, lay.num_actions)
            a = self.choose_layoff(view, sv, hand, layoffs) if layoffs else None
            return lay.pass_ if a is None else a
        if step in (KNOCK_MELD, DEF_MELD):
            a = self.choose_meld(view, sv, hand, mask)
            return lay.pass_ if a is None else a
        return int(legal[0])  # pragma: no cover - every step is handled above

    def observe(self, view, mask) -> None:
        """Called before every decision (memory hook; greedy has none)."""

    # -- draw -----------------------------------------------------------------------------

    def take_outcome(self, sv, hand: int, card: int):
        """``(deadwood now, best deadwood after taking card and discarding another, melds)``
        where ``melds`` says the card goes into a meld of that best hand."""
        cur = sv.dw1(hand)
        eleven = hand | (1 << card)
        rest = [eleven & ~(1 << x) for x in _cards(hand)]
        dws = sv.dw(rest)
        k = int(np.argmin(dws))
        best = int(dws[k])
        without = sv.dw1(rest[k] & ~(1 << card))
        melds = best < without + sv.value(card)
        return cur, best, melds

    def wants_take(self, view, sv, hand, card, step) -> bool:
        cur, best, melds = self.take_outcome(sv, hand, card)
        if step == WALL:  # OpenSpiel wall: the take is only legal to knock with it
            return True
        return melds and best < cur

    # -- discard and knock ----------------------------------------------------------------

    @staticmethod
    def _discardable(view, actions, offset) -> list[int]:
        taken = set(view.taken)
        keep = [a for a in actions if a - offset not in taken]
        return keep or list(actions)

    def choose_discard(self, view, sv, hand, actions) -> int:
        off = view.variant.layout.discard
        actions = self._discardable(view, actions, off)
        dws = sv.dw([hand & ~(1 << (a - off)) for a in actions])
        return min(zip(actions, dws), key=lambda t: (int(t[1]), -sv.value(t[0] - off)))[0]

    def wants_knock(self, view, sv, hand, knocks) -> bool:
        return True

    def choose_knock(self, view, sv, hand, knocks) -> int:
        off = view.variant.layout.knock
        knocks = self._discardable(view, knocks, off)
        dws = sv.dw([hand & ~(1 << (a - off)) for a in knocks])
        return min(zip(knocks, dws), key=lambda t: (int(t[1]), -sv.value(t[0] - off)))[0]

    # -- after a knock ---------------------------------------------------------------------

    def choose_layoff(self, view, sv, hand, layoffs):
        """A layoff that lowers the hand's deadwood (most first), or None to pass."""
        off = view.variant.layout.layoff
        cur = sv.dw1(hand)
        dws = sv.dw([hand & ~(1 << (a - off)) for a in layoffs])
        best = min(zip(layoffs, dws), key=lambda t: (int(t[1]), -sv.value(t[0] - off)))
        return best[0] if best[1] < cur else None

    def choose_meld(self, view, sv, hand, mask):
        """A legal meld that keeps the minimum deadwood reachable, or None (pass) once no
        meld lowers it and passing is legal."""
        lay = view.variant.layout
        melds = _family_actions(mask, lay.meld, lay.layoff)
        best = sv.dw1(hand)
        if mask[lay.pass_] and (not melds or sv.total(hand) == best):
            return None
        if not melds:
            return None
        tm = sv.tmask
        dws = sv.dw([hand & ~tm[a - lay.meld] for a in melds])
        keep = [a for a, d in zip(melds, dws) if d == best]
        if not keep:  # cannot happen with an exact mask; stay legal anyway
            return min(zip(melds, dws), key=lambda t: int(t[1]))[0]
        return self.pick_meld(view, sv, hand, keep)

    def pick_meld(self, view, sv, hand, actions) -> int:
        """Among melds that keep the optimum: the longest (fewest declarations)."""
        lay = view.variant.layout
        return max(actions, key=lambda a: (sv.tlen[a - lay.meld], -a))


# ---------------------------------------------------------------------------------------
# the rule-based player


def _meld_partners() -> list[list[tuple[int, int]]]:
    """Per face: the pairs of faces completing a 3-card meld with it (sets, ace-low runs)."""
    out = []
    for c in range(NUM_FACES):
        r, s = _rank(c), _suit(c)
        pairs = []
        others = [t * NUM_RANKS + r for t in range(4) if t != s]
        for i in range(3):
            for j in range(i + 1, 3):
                pairs.append((others[i], others[j]))
        for lo in (r - 2, r - 1, r):
            if lo < 0 or lo + 2 > NUM_RANKS - 1:
                continue
            run = [s * NUM_RANKS + k for k in range(lo, lo + 3) if k != r]
            pairs.append((run[0], run[1]))
        out.append(pairs)
    return out


_PARTNERS = _meld_partners()


def _near(a: int, b: int) -> bool:
    """Same rank, or same suit one rank apart (ace low only)."""
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
    """A stronger rule-based Gin player (see the module docstring).

    Parameters (defaults tuned against :class:`GinGreedyAgent` on duplicate deals):

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

    name = "rules"

    def __init__(self, seed=None, now_weight: float = 2.0, knock_weight: float = 6.0,
                 gin_weight: float = 6.0, feed_weight: float = 12.0, signal: float = 0.5,
                 early_turns: int = 4, late_knock: int = 10, knock_slope: float = 2.0,
                 min_knock: int = 0, opp_known_knock: int = 4, gin_hold: int = 0,
                 wall_knock: int = 10):
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
        super().__init__(seed=seed)

    def reset(self) -> None:
        self.my_discards: set[int] = set()
        self.upcard: int | None = None
        self.opp_thrown: set[int] = set()    # the opponent discarded it
        self.opp_refused: set[int] = set()   # the opponent could take it and did not

    # -- memory ---------------------------------------------------------------------------

    def observe(self, view, mask) -> None:
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

    def act(self, view, mask) -> int:
        return self.remember(view, self.choose(view, mask))

    def choose(self, view, mask) -> int:
        """The action to play, not yet remembered as played (search overrides this)."""
        return super().act(view, mask)

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
        pool = self.draw_pool(view)
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

    def excluded_pairs(self, view) -> set:
        """Pairs the opponent is taken not to hold: those completing a card it threw or
        refused (it would have kept or taken that card); :meth:`feed_prob` still counts a
        pair with a card known to be in its hand (taken since)."""
        out = set()
        for x in self.opp_thrown | self.opp_refused:
            out.update(_PARTNERS[x])
        return out

    def feed_prob(self, card: int, p: np.ndarray, excluded=frozenset(), known=frozenset()) -> float:
        """Chance that ``card`` completes (or extends) a meld in the opponent's hand."""
        miss = 1.0
        for a, b in _PARTNERS[card]:
            if (a, b) in excluded and a not in known and b not in known:
                continue
            miss *= 1.0 - p[a] * p[b]
        return 1.0 - miss

    # -- evaluating 10-card hands -----------------------------------------------------------

    def hand_costs(self, view, sv, hands: list[int], pool: list[int]) -> np.ndarray:
        """Cost of keeping each 10-card hand: ``now_weight`` x its deadwood + the expected
        deadwood after the next draw from ``pool`` (best discard, or the drawn card back)
        - bonuses for the chance that draw lets it knock / go gin."""
        K = self.knock_limit(view, view.turn + 2)   # what it will knock with next turn
        batch = []
        for h in hands:
            batch.append(h)
            for u in pool:
                e = h | (1 << u)
                batch.extend(e & ~(1 << x) for x in _cards(h))
        dws = sv.dw(batch)
        out = np.empty(len(hands))
        pos = 0
        for i, h in enumerate(hands):
            width = 1 + bin(h).count("1") * len(pool)
            row = dws[pos: pos + width]
            pos += width
            now = row[0]
            if pool:
                nxt = np.minimum(row[1:].reshape(len(pool), -1).min(axis=1), now)
                exp = nxt.mean()
                pk = float((nxt <= K).mean())
                pg = float((nxt == 0).mean())
            else:
                exp, pk, pg = now, float(now <= K), float(now == 0)
            out[i] = (self.now_weight * now + exp - self.knock_weight * pk
                      - self.gin_weight * pg)
        return out

    def draw_pool(self, view) -> list[int]:
        """The cards this player cannot see (ids = faces in Gin)."""
        return view.hidden_cards().tolist()

    def choose_discard(self, view, sv, hand, actions) -> int:
        off = view.variant.layout.discard
        actions = self._discardable(view, actions, off)
        cards = [a - off for a in actions]
        pool = self.draw_pool(view)
        kept = [hand & ~(1 << c) for c in cards]
        costs = self.hand_costs(view, sv, kept, pool)
        p = self.hold_probs(view)
        excl = self.excluded_pairs(view)
        known = set(view.opponent_known)
        for i, c in enumerate(cards):
            costs[i] += self.feed_weight * self.feed_prob(c, p, excl, known)
        i = min(range(len(cards)), key=lambda k: (costs[k], -sv.value(cards[k])))
        return actions[i]

    # -- taking ---------------------------------------------------------------------------

    def wants_take(self, view, sv, hand, card, step) -> bool:
        cur, best, melds = self.take_outcome(sv, hand, card)
        if step == WALL:
            return True
        K = view.variant.config.knock_card
        if melds and best < cur:
            return True
        # a card that lets the hand knock at once (with the knock policy's consent)
        return best <= K and cur > K and best <= self.knock_limit(view)

    # -- knocking -------------------------------------------------------------------------

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

    def wants_knock(self, view, sv, hand, knocks) -> bool:
        off = view.variant.layout.knock
        dk = int(sv.dw([hand & ~(1 << (a - off)) for a in knocks]).min())
        if dk == 0:
            return True
        if view.stock_size <= 3 and dk <= self.wall_knock:   # last chance before the wall (GR-5)
            return True
        if view.turn < self.early_turns and dk <= self.gin_hold:
            return False
        return dk <= self.knock_limit(view)

    # -- defending: exact layoff search -----------------------------------------------------

    def choose_layoff(self, view, sv, hand, layoffs):
        """The first layoff of a sequence that leaves the least deadwood (an exact search
        over sequences on a model of the knocker's melds: a run grows at its ends, a set up
        to four; a card that breaks this player's own meld may still pay), or None."""
        off = view.variant.layout.layoff
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
                melds.append(("set", _rank(cards[0]), _bits(cards), len(cards)))
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
            val = sv.dw1(h)
            for c in _cards(h):
                k = fit(ms, c)
                if k >= 0:
                    val = min(val, best(h & ~(1 << c), put(ms, k, c)))
            memo[key] = val
            return val

        ms0 = tuple(melds)
        stay = sv.dw1(hand)
        choice, choice_val = None, stay
        for a in layoffs:
            c = a - off
            k = fit(ms0, c)
            nxt = put(ms0, k, c) if k >= 0 else ms0
            val = best(hand & ~(1 << c), nxt)
            if val < choice_val or (val == choice_val and choice is not None
                                    and sv.value(c) > sv.value(choice - off)):
                choice, choice_val = a, val
        return choice
