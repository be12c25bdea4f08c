"""``search``: determinised Monte Carlo search (perfect-information Monte Carlo).

At each decision that matters (for Mountain: the draw, and how to end the turn) it lists
candidate actions, then ``budget`` times in all: samples the hidden cards consistently with what
its player has seen (the opponent's hand size and the cards known to be in it, the stock
size, every card face up), writes the sample into a copy of the game's state record,
plays a candidate and finishes the hand with the compiled playout policy
(:mod:`agents.fastpolicy`). The same samples are used for every candidate (common random
numbers), and the candidate with the best mean hand-point margin is played. Placements
(melds, layoffs, the response phase) follow the greedy player.
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.core import gin as gin_kernels
from mountain_rummy_env.core import rules
from mountain_rummy_env.core.batch import step_batch
from mountain_rummy_env.core.state import (
    EVENT_NONE, LOC_FACEDOWN, LOC_HAND, LOC_STOCK, PHASE_DRAW, PHASE_PLAY,
)

from .base import register
from .common import BASE_CAMP, DISCARD, DRAW, KNOCK, legal_by_family
from .fastpolicy import playout_batch, rollout_tables
from .gin import GinRulesAgent
from .rules import RulesAgent


def hidden_pool(view) -> np.ndarray:
    """Card ids ``view``'s player cannot see: opponent's unknown cards, stock, face-down."""
    v = view.variant
    seen = np.zeros(v.deck.num_cards, dtype=bool)
    seen[list(view.hand)] = True
    seen[list(view.discard)] = True
    seen[list(view.opponent_known)] = True
    for m in view.melds:
        seen[m["cards"]] = True
    return np.flatnonzero(~seen)


def determinise(view, n: int, rng) -> np.ndarray:
    """``n`` copies of the view's game state with the hidden cards re-dealt at random,
    consistent with everything the player has observed."""
    game, i, me = view.game, view.index, view.player
    opp = (me + 1) % view.variant.num_players
    base = game.states[i]
    states = np.repeat(base[None], n, axis=0)
    pool = hidden_pool(view)
    k_opp = view.opponent_hand_size - len(view.opponent_known)
    ptr, end = int(base["stock_ptr"]), int(base["stock_len"])
    n_stock = end - ptr
    if k_opp + n_stock > len(pool):
        raise AssertionError("hidden-card counts do not fit the pool")
    perms = rng.permuted(np.broadcast_to(pool, (n, len(pool))), axis=1).astype(np.int8)
    loc = states["loc"]
    public = states["public"]
    rows = np.arange(n)[:, None]
    opp_cards = perms[:, :k_opp]
    stock_cards = perms[:, k_opp:k_opp + n_stock]
    fd_cards = perms[:, k_opp + n_stock:]
    loc[rows, opp_cards] = LOC_HAND + opp
    public[rows, opp_cards] = 0
    loc[rows, stock_cards] = LOC_STOCK
    states["stock"][:, ptr:end] = stock_cards
    loc[rows, fd_cards] = LOC_FACEDOWN
    states["loc"] = loc
    states["public"] = public
    return states


class MonteCarloSearch:
    """Determinised rollout evaluation of candidate actions, for any variant.

    Mixed into a heuristic agent: ``search`` plays each candidate on ``budget`` sampled
    deals (common random numbers across candidates) and keeps the heuristic's own choice,
    which must be candidate 0, unless another is better by ``z`` standard errors of the
    paired difference.
    """

    _scratch = None

    def __init__(self, seed=None, budget: int = 200, discards: int = 3, z: float = 1.0):
        super().__init__(seed=seed)
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        if discards < 1:
            raise ValueError(f"discards must be >= 1, got {discards}")
        if z < 0:
            raise ValueError(f"z must be >= 0, got {z}")
        self.budget = budget
        self.discards = discards   # discard candidates searched beside the heuristic's choice
        self.z = z

    def sample_states(self, view, n: int) -> np.ndarray:
        """``n`` state records to roll out from: the hidden cards re-dealt at random."""
        return determinise(view, n, self.rng)

    def search(self, view, mask, cands) -> int:
        v = view.variant
        k = len(cands)
        n = max(2, self.budget // k)
        base = self.sample_states(view, n)
        states = np.repeat(base, k, axis=0)          # sample-major: row = sample * k + cand
        actions = np.tile(np.asarray(cands, dtype=np.int64), n)
        masks = np.repeat(np.asarray(mask, dtype=np.int8)[None], n * k, axis=0)
        events = np.zeros(n * k, dtype=np.int8)
        if self._scratch is None or self._scratch.dtype != v.dtype:
            self._scratch = np.zeros(rules.MAX_CLEAR_DEPTH + 4, dtype=v.dtype)
        step_batch(states, v.spec, actions, masks, events, self._scratch)
        values = np.zeros(n * k, dtype=np.float64)
        playout_batch(states, v.spec, masks, self._scratch, values, view.player,
                      (events != EVENT_NONE).astype(np.int8), rollout_tables(v))
        vals = values.reshape(n, k)
        means = vals.mean(axis=0)
        self.last_values = dict(zip(cands, means.tolist()))
        best = int(np.argmax(means))
        if best == 0:
            return int(cands[0])
        diff = vals[:, best] - vals[:, 0]
        se = diff.std(ddof=1) / np.sqrt(n)
        return int(cands[best]) if diff.mean() > self.z * se else int(cands[0])


@register("search", variant="mountain",
          help="determinised Monte Carlo: samples hidden cards, rolls out each candidate "
               "with a compiled playout policy; budget = playouts per decision")
class SearchAgent(MonteCarloSearch, RulesAgent):
    """Mountain: searches the draw and the end of the turn; placements follow the rules player."""

    def act(self, view, mask) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        self.track(view)
        by = legal_by_family(view.variant, mask)
        if view.phase == PHASE_DRAW:
            cands = self.draw_candidates(view, by)
        elif view.phase == PHASE_PLAY and view.obligation < 0:
            place = self.choose_placement(view, by)
            if place is not None:
                return place
            cands = self.end_candidates(view, by)
        else:
            return super().act(view, mask)
        if len(cands) == 1:
            return cands[0]
        return self.search(view, mask, cands)

    def draw_candidates(self, view, by) -> list[int]:
        """The rules player's choice first, then stock, the top card and the best deep takes."""
        first = super().choose_draw(view, by)
        cands = [first]
        if DRAW in by:
            cands.append(int(by[DRAW][0]))
        top = view.discard[-1] if view.discard else None
        if top is not None:
            cands.append(int(view.variant.layout.take + top))
        gains = sorted(self.take_scores(view, by).items(), key=lambda kv: -kv[1])
        cands += [a for a, g in gains[:2]]
        return list(dict.fromkeys(cands))

    def end_candidates(self, view, by) -> list[int]:
        """The rules player's choice first, then knock and the best discards by value."""
        v = view.variant
        if BASE_CAMP in by:
            return [int(by[BASE_CAMP][0])]
        first = super().choose_end(view, by)
        cands = [first]
        if KNOCK in by:
            cands.append(self.best_by_value(view, by[KNOCK], v.layout.knock))
        if DISCARD in by:
            vals = self.discard_values(view, by)
            cands += sorted(vals, key=lambda a: -vals[a])[: self.discards]
        return list(dict.fromkeys(cands))


@register("search", variant="gin")
class GinSearchAgent(MonteCarloSearch, GinRulesAgent):
    """Gin: searches the draw (take, draw or pass) and the discard or knock; the melds and
    layoffs after a knock follow the rules player."""

    def choose(self, view, mask) -> int:
        first = super().choose(view, mask)
        legal = np.flatnonzero(mask)
        lay = view.variant.layout
        if legal.max() < lay.discard:                       # take / draw / pass
            cands = [first, *legal.tolist()]
        elif legal.min() >= lay.discard and legal.max() < lay.meld:   # discard or knock
            cands = [first, *self.discard_candidates(view, legal)]
        else:
            return first
        cands = list(dict.fromkeys(int(a) for a in cands))
        return cands[0] if len(cands) == 1 else self.search(view, mask, cands)

    def discard_candidates(self, view, legal) -> list[int]:
        """The knock leaving the least deadwood, then the ``discards`` discards that do."""
        v = view.variant
        lay = v.layout
        hand = 0
        for c in view.hand:
            hand |= 1 << c

        def left(a, offset):
            return gin_kernels.deadwood(v.spec, np.int64(hand & ~(1 << int(a - offset))))

        knocks = sorted((a for a in legal if a >= lay.knock), key=lambda a: left(a, lay.knock))
        discards = sorted((a for a in legal if a < lay.knock), key=lambda a: left(a, lay.discard))
        return knocks[:1] + discards[: self.discards]
