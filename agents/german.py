"""German and Crazy Rummy agents (docs/agents.md): ``greedy``, ``rules`` and ``search``, German
at 2-6 seats, Crazy at 3-6 (its rules player with Crazy's defaults).

``greedy`` and ``rules`` are the compiled policies of :mod:`agents.german_policy` (described
there), played on the view's public state (``PlayerView.public_state()``: the cards the
player cannot see are dealt back in id order, so the policy cannot read them). ``search``
is determinised Monte Carlo over the rules player's candidates, with compiled rules
playouts for every seat (:class:`GermanSearchAgent`).
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.core.rules import SCRATCH_RECORDS
from mountain_rummy_env.core.state import PHASE_DRAW
from mountain_rummy_env.german_player import GREEDY, RULES_PARAM_TYPES, credit_order, rules_params

from .base import Agent, register
from .german_policy import choose, discard_scores_of, play_out, settle_hands
from .search import MonteCarloSearch, determinise

__all__ = ["GermanGreedyAgent", "GermanRulesAgent", "GermanSearchAgent"]


class _Compiled:
    """Per-variant arrays the compiled policy reads: scratch records and the meld order."""

    _cache: dict = {}

    def __init__(self, variant):
        self.work = np.zeros(SCRATCH_RECORDS, dtype=variant.dtype)
        self.order = credit_order(variant)

    @classmethod
    def of(cls, variant) -> "_Compiled":
        hit = cls._cache.get(id(variant))
        if hit is None or hit.variant is not variant:
            hit = cls._cache[id(variant)] = cls(variant)
            hit.variant = variant
        return hit


class GermanPolicyAgent(Agent):
    """An agent playing the compiled policy under its parameter vector ``params``."""

    params: np.ndarray = GREEDY

    def params_of(self, variant) -> np.ndarray:
        """The parameter vector this agent plays ``variant`` with."""
        return self.params

    def act(self, view, mask) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        return self.policy_action(view, mask)

    def policy_action(self, view, mask) -> int:
        v = view.variant
        c = _Compiled.of(v)
        a = int(choose(view.public_state(), v.spec_ref, self.params_of(v), c.work, c.order))
        if not (0 <= a < len(mask) and mask[a]):
            raise AssertionError(f"{self.name}: the German policy chose an illegal action "
                                 f"({a}) for seat {view.player}")
        return a


@register("greedy", variant="crazy",
          help="takes a discard that joins a meld, places everything as soon as legal "
               "(longest meld first, a card of the wild rank as a joker), discards its "
               "highest card in no partial meld, never a wild")
@register("greedy", variant="german",
          help="takes a discard that joins a meld, places everything as soon as legal "
               "(largest meld first), discards its highest card in no partial meld")
class GermanGreedyAgent(GermanPolicyAgent):
    """Takes a discard that joins a meld, places everything as soon as legal (largest meld
    first), discards its highest card in no partial meld (:mod:`agents.german_policy`)."""

    name = "greedy"
    params = GREEDY


@register("rules", RULES_PARAM_TYPES, variant="crazy",
          help="melds by the hand's least-deadwood arrangement, takes a table wild back for "
               "its natural before melding, plays wilds at once (one caught in hand costs "
               "25), takes only discards that lay off or complete a natural meld, discards "
               "by value against partners in hand and feeding the next seat")
@register("rules", RULES_PARAM_TYPES, variant="german",
          help="holds its jokers until it cashes in, takes only discards that lay off or "
               "complete a natural meld, discards by hand value against what a card is worth "
               "keeping and the risk of feeding the next seat")
class GermanRulesAgent(GermanPolicyAgent):
    """Greedy with judgement: holds its jokers until it cashes in, takes only discards that
    lay off or complete a natural meld, and discards by hand value against what a card is
    worth keeping and the risk of feeding the next seat (:mod:`agents.german_policy`).
    Parameters not given take the defaults of the variant played
    (:data:`mountain_rummy_env.german_player.RULES_DEFAULTS`)."""

    name = "rules"

    def __init__(self, seed=None, *, keep: float | None = None,
                 open_value: float | None = None, feed_layoff: float | None = None,
                 feed_known: float | None = None, danger: int | None = None,
                 danger_value: float | None = None, cash: int | None = None,
                 arrange: int | None = None, swap_first: int | None = None):
        super().__init__(seed=seed)
        given = dict(keep=keep, open_value=open_value, feed_layoff=feed_layoff,
                     feed_known=feed_known, danger=danger, danger_value=danger_value,
                     cash=cash, arrange=arrange, swap_first=swap_first)
        self.overrides = {name: value for name, value in given.items() if value is not None}
        self._params: dict[str, np.ndarray] = {}

    def params_of(self, variant) -> np.ndarray:
        hit = self._params.get(variant.name)
        if hit is None:
            hit = self._params[variant.name] = rules_params(variant.name, **self.overrides)
        return hit

    def discard_ranking(self, view, mask) -> list[int]:
        """Legal discard actions, the one the rules player prefers first."""
        v = view.variant
        scores = discard_scores_of(view.public_state(), v.spec_ref, self.params_of(v))
        start = v.layout.discard
        legal = [f for f in np.argsort(-scores, kind="stable") if mask[start + f]]
        return [int(start + f) for f in legal]


@register("search", variant="crazy",
          help="Monte Carlo over taking the top discard and Crazy's rules player's best "
               "discards, every seat played out by that rules policy")
@register("search", variant="german",
          help="the same Monte Carlo over taking the top discard and the rules player's best "
               "discards, every seat played out by the rules policy")
class GermanSearchAgent(MonteCarloSearch, GermanRulesAgent):
    """Determinised Monte Carlo over the rules player's candidates: at the draw (when the
    top discard may be taken) take or draw; at the end of the turn the rules player's
    ``discards`` best discards. Each sample deals the hidden cards anew (the other seats'
    unknown cards and the stock, :func:`agents.search.determinise`; with ``settle`` > 0
    then :func:`agents.german_policy.settle_hands`), plays a candidate and finishes the
    hand with the rules policy for every seat; a candidate's value is the searching seat's
    mean hand points (GE-9). :meth:`MonteCarloSearch.search` keeps the rules choice unless
    a challenger beats it by ``z`` standard errors on fresh samples. Placements follow the
    rules player.

    Defaults from screens against the rules player on seeds 6000-6299 (the search in one
    seat, its hand points against the all-rules hand of that seat): every setting tried
    gained 2-6 points a hand with intervals of +-3 to 4 (budget 200/400/800, z 1 or 0.5,
    settle 0 or 8, 3 or 5 discards); ``budget=400, z=0.5`` is among the best and costs
    about 0.8 s a hand of one seat."""

    name = "search"

    def __init__(self, seed=None, budget: int = 400, discards: int = 3, z: float = 0.5,
                 settle: int = 0, seconds: float = 0.0):
        super().__init__(seed, budget, discards, z, seconds=seconds)
        if settle < 0:
            raise ValueError(f"settle must be >= 0, got {settle}")
        self.settle = settle    # rounds of settle_hands per seat and sample (0: uniform deals)

    def act(self, view, mask) -> int:
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        first = self.policy_action(view, mask)
        cands = self.candidates(view, mask, first)
        return first if len(cands) == 1 else int(self.search(view, mask, cands))

    def candidates(self, view, mask, first: int) -> list[int]:
        """The searched alternatives, the rules choice first: the draw's take and draw; the
        discards when the rules player would discard."""
        lay = view.variant.layout
        if view.phase == PHASE_DRAW:
            return [first, *(int(a) for a in np.flatnonzero(mask) if a != first)]
        if lay.discard <= first < lay.num_actions:
            ranked = self.discard_ranking(view, mask)[: self.discards]
            return list(dict.fromkeys([first, *ranked]))
        return [first]

    def rollouts(self, view, mask, cands, n: int) -> np.ndarray:
        """Hand points of the searching seat (``n`` samples x candidates), each candidate
        played on the same ``n`` sampled deals and the hand finished by the rules policy."""
        v = view.variant
        c = _Compiled.of(v)
        k = len(cands)
        samples = self.sample_states(view, n)
        settle_hands(samples, v.spec, view.player, self.settle, int(self.rng.integers(2**31)))
        states = np.repeat(samples, k, axis=0)
        first = np.tile(np.asarray(cands, dtype=np.int64), n)
        params = np.repeat(self.params_of(v)[None], v.num_players, axis=0)
        out = np.zeros(n * k, dtype=np.float64)
        play_out(states, v.spec, first, params, c.work, c.order, False,
                 np.zeros(v.num_actions, np.int8), out, view.player)
        return out.reshape(n, k)
