"""``search``: determinised Monte Carlo search (perfect-information Monte Carlo).

At each decision that matters (for Mountain: the draw, and the discard; for Gin: the draw
and the discard or knock) it lists candidate actions, the heuristic (``rules``) player's
choice first. Each sample re-deals the hidden cards consistently with what its player has
seen (the opponent's hand size and the cards known to be in it, the stock size, every card
face up), honed so that the opponent's hand looks played rather than freshly dealt
(:func:`determinise`), writes it into a copy of the game's state record, plays a candidate
and finishes the hand with the compiled playout policy (:mod:`agents.fastpolicy`). Every
candidate is played on the same samples (common random numbers). Half the budget screens
the candidates; the screen's best challenger must then beat the heuristic's choice again on
fresh samples before it is played (:meth:`MonteCarloSearch.search`). A candidate may be a
plan, several moves played in turn: Mountain's search weighs holding its melds against a
plan that places them all. Which melds and layoffs to place, and the response phase, follow
the rules player.
"""

from __future__ import annotations

from time import perf_counter

import numpy as np

from mountain_rummy_env.cards import JOKER_FACE
from mountain_rummy_env.core import rules
from mountain_rummy_env.core.batch import step_batch
from mountain_rummy_env.game import Game, player_view
from mountain_rummy_env.solver import hand_mask_of
from mountain_rummy_env.core.state import (
    EVENT_NONE, LOC_FACEDOWN, LOC_HAND, LOC_STOCK, PHASE_DRAW, PHASE_PLAY,
)

from .base import register
from .common import (
    BASE_CAMP, DONE, DRAW, KNOCK, PLACE, deadwood_batch, hand_deadwoods, legal_by_family,
    placing_forced,
)
from .fastpolicy import playout_batch, rollout_tables
from .rules import GinRulesAgent, RulesAgent


def determinise(view, n: int, rng, hone: float = 0.0, meld_free: bool = False,
                belief: np.ndarray | None = None) -> np.ndarray:
    """``n`` copies of the view's game state with the hidden cards re-dealt at random,
    consistent with everything the player has observed: each other seat keeps its hand
    size and the cards known to be in it, the stock its size, every face-up card its place.
    The hidden cards go to the other seats in playing order (the next seat first), then to
    the stock, then face down.

    ``hone`` > 0 makes the next seat's hidden cards look played rather than dealt: per turn
    the opponent has had, ``hone`` rounds of "draw a random hidden card, drop the card
    whose removal leaves the least deadwood" (:func:`hone_hands`). Uniform re-dealing
    badly overrates a hand held for some turns: in rules-vs-rules Gin the opponent's true
    deadwood after 8 turns each averages 12, a uniform re-deal 46 (docs/agents.md).
    ``meld_free``: once the next seat has played a turn its hidden cards hold no meld (an
    opponent that melds at once, as Mountain's `greedy` does; :func:`break_melds`).
    ``belief`` (one logit per card id, :mod:`agents.belief`) deals the next seat's hidden
    cards by :func:`belief_order` instead, and neither hones nor breaks melds."""
    seats = view.opponents
    states = np.repeat(view.public_state(), n, axis=0)
    base = states[0]
    pool = view.hidden_cards()
    unknown = [view.hand_sizes[q] - len(view.known[q]) for q in seats]
    k_opp = unknown[0]
    ptr, end = int(base["stock_ptr"]), int(base["stock_len"])
    n_stock = end - ptr
    if sum(unknown) + n_stock > len(pool):
        raise AssertionError("hidden-card counts do not fit the pool")
    if belief is not None and k_opp:
        perms = belief_order(pool, belief, k_opp, n, rng)
        hone, meld_free = 0.0, False
    else:
        perms = rng.permuted(np.broadcast_to(pool, (n, len(pool))), axis=1).astype(np.int8)
    rounds = int(round(hone * (view.turn + 1) / 2))     # the opponent's turns so far, about
    if rounds and k_opp:
        hone_hands(view.variant, perms, k_opp, view.opponent_known, rounds, rng)
    if meld_free and view.turn >= 1 and k_opp:
        break_melds(view.variant, perms, k_opp, view.opponent_known, rng)
    loc = states["loc"]
    public = states["public"]
    rows = np.arange(n)[:, None]
    dealt = 0
    for q, k in zip(seats, unknown):
        cards = perms[:, dealt:dealt + k]
        loc[rows, cards] = LOC_HAND + q
        public[rows, cards] = 0
        dealt += k
    stock_cards = perms[:, dealt:dealt + n_stock]
    fd_cards = perms[:, dealt + n_stock:]
    loc[rows, stock_cards] = LOC_STOCK
    states["stock"][:, ptr:end] = stock_cards
    loc[rows, fd_cards] = LOC_FACEDOWN
    states["loc"] = loc
    states["public"] = public
    return states


def belief_order(pool, logits, k: int, n: int, rng) -> np.ndarray:
    """``n`` orders of the card ids ``pool`` (int8, one row each): the first ``k`` drawn
    without replacement with weights ``exp(logits[card])`` (Gumbel top-k), the rest in
    uniform random order."""
    keys = np.asarray(logits, np.float64)[pool][None] + rng.gumbel(size=(n, len(pool)))
    perms = np.asarray(pool)[np.argsort(-keys, axis=1)].astype(np.int8)
    perms[:, k:] = rng.permuted(perms[:, k:], axis=1)
    return perms


def hone_hands(variant, perms, k: int, known, rounds: int, rng) -> None:
    """In place: ``rounds`` times per row of ``perms``, swap a random card from beyond the
    first ``k`` (the opponent's unknown cards) into them when dropping another card of the
    hand (those ``k`` plus the ``known`` cards) leaves less deadwood."""
    n, width = perms.shape
    if width <= k:
        return
    rows = np.arange(n)
    for _ in range(rounds):
        j = rng.integers(k, width, size=n)
        drawn = np.concatenate([perms[:, :k], perms[rows, j][:, None]], axis=1)   # n x (k+1)
        out = _deadwood_dropping_each(variant, *_hands(variant, drawn, known)).argmin(axis=1)
        swap = out < k
        r, c, o = rows[swap], j[swap], out[swap]
        perms[r, o], perms[r, c] = perms[r, c], perms[r, o]


def break_melds(variant, perms, k: int, known, rng, tries: int = 12) -> None:
    """In place: while a row's hand (``perms[row, :k]`` + ``known``) holds a meld, swap the
    hidden card whose loss melds the least value for a random card beyond the first ``k``
    (up to ``tries`` rounds; a row still holding a meld then is kept)."""
    n, width = perms.shape
    if width <= k:
        return
    values = np.asarray(variant.spec.hand_value, dtype=np.int64)
    face = np.asarray(variant.spec.card_face, dtype=np.int64)
    known_value = int(values[face[np.asarray(list(known), dtype=np.int64)]].sum())
    rows = np.arange(n)
    for _ in range(tries):
        bit, natural, bits, jokers = _hands(variant, perms[rows, :k], known)
        value = values[face[perms[rows, :k]]]
        total = value.sum(axis=1) + known_value
        melded = total - deadwood_batch(variant, bits, jokers)
        keep = melded > 0
        rows = rows[keep]
        if not len(rows):
            return
        left = (total[keep][:, None] - value[keep]) - _deadwood_dropping_each(
            variant, bit[keep], natural[keep], bits[keep], jokers[keep])
        i = left.argmin(axis=1)
        j = rng.integers(k, width, size=len(rows))
        perms[rows, i], perms[rows, j] = perms[rows, j], perms[rows, i]


def _hands(variant, cards, known):
    """Per row of card ids ``cards`` plus the ``known`` cards: each card's face bit (0 for a
    joker), which cards are natural, the hand's face bitmask and its joker count."""
    face = np.asarray(variant.spec.card_face, dtype=np.int64)
    f = face[cards]
    natural = f < JOKER_FACE
    bit = np.where(natural, np.uint64(1) << np.where(natural, f, 0).astype(np.uint64),
                   np.uint64(0))
    kf = face[np.asarray(list(known), dtype=np.int64)]
    bits = np.bitwise_or.reduce(bit, axis=1) | np.uint64(hand_mask_of(kf[kf < JOKER_FACE]))
    jokers = (~natural).sum(axis=1) + int((kf == JOKER_FACE).sum())
    return bit, natural, bits, jokers


def _deadwood_dropping_each(variant, bit, natural, bits, jokers) -> np.ndarray:
    """Least deadwood of each hand (row) without each one of its cards (column)."""
    drop_bits = (bits[:, None] & ~bit).reshape(-1)
    drop_jokers = (jokers[:, None] - (~natural).astype(np.int64)).reshape(-1)
    return deadwood_batch(variant, drop_bits, drop_jokers).reshape(bit.shape)


class MonteCarloSearch:
    """Determinised rollout evaluation of candidate actions, for any variant.

    Mixed into a heuristic agent: ``search`` spends ``budget`` playouts per decision and
    keeps the heuristic's own choice, which must be candidate 0, unless a challenger beats
    it by ``z`` standard errors of the paired difference on fresh samples. With
    ``seconds`` > 0 it spends that much time per searched decision instead (as many
    playouts as fit, :meth:`use_time_per_move`), so search agents compare at equal time.
    """

    _scratch = None
    meld_free = False   # the opponent's hidden cards hold no meld (it melds at once)

    SCOPES = ("all", "draw", "end")

    MAX_TIMED_SAMPLES = 100_000   # a bound on one timed batch, whatever the clock says

    def __init__(self, seed=None, budget: int = 200, discards: int = 3, z: float = 1.0,
                 scope: str = "all", hone: float = 0.0, seconds: float = 0.0):
        super().__init__(seed=seed)
        if scope not in self.SCOPES:
            raise ValueError(f"scope must be one of {', '.join(self.SCOPES)}, got {scope!r}")
        if budget < 1:
            raise ValueError(f"budget must be >= 1, got {budget}")
        if discards < 1:
            raise ValueError(f"discards must be >= 1, got {discards}")
        if z < 0:
            raise ValueError(f"z must be >= 0, got {z}")
        if hone < 0:
            raise ValueError(f"hone must be >= 0, got {hone}")
        if seconds < 0:
            raise ValueError(f"seconds must be >= 0, got {seconds}")
        self.seconds = seconds     # time per searched decision (0: ``budget`` playouts)
        self.budget = budget
        self.discards = discards   # discard candidates searched beside the heuristic's choice
        self.z = z
        self.scope = scope         # which decisions are searched: the draw, the end, or both
        self.hone = hone           # opponent-hand honing rounds per turn (determinise)

    def sample_states(self, view, n: int) -> np.ndarray:
        """``n`` state records to roll out from: the hidden cards re-dealt at random."""
        return determinise(view, n, self.rng, self.hone, self.meld_free, self.belief_logits(view))

    def belief_logits(self, view) -> np.ndarray | None:
        """Logits of the next seat's hidden cards for :func:`determinise` (None: uniform;
        a network-guided search has a belief network, :mod:`agents.belief`)."""
        return None

    def rollouts(self, view, mask, cands, n: int) -> np.ndarray:
        """Hand-point margins (``n`` samples x candidates) of each candidate played on the
        same ``n`` sampled deals and finished by the playout policy. A candidate is an
        action or a tuple of actions played in turn (a plan for the rest of the turn)."""
        v = view.variant
        states, masks, finished = self.play_candidates(view, mask, cands, self.sample_states(view, n))
        values = np.zeros(len(states), dtype=np.float64)
        playout_batch(states, v.spec, masks, self._scratch, values, view.player, finished,
                      rollout_tables(v))
        return values.reshape(n, len(cands))

    def play_candidates(self, view, mask, cands, base):
        """Each candidate played on a copy of each sampled state of ``base``: ``(states,
        masks, finished)``, sample-major (row = sample * candidates + candidate);
        ``finished`` marks the rows whose hand the candidate ended."""
        v = view.variant
        n = len(base)
        plans = [c if isinstance(c, tuple) else (c,) for c in cands]
        k = len(plans)
        states = np.repeat(base, k, axis=0)          # sample-major: row = sample * k + cand
        masks = np.repeat(np.asarray(mask, dtype=np.int8)[None], n * k, axis=0)
        events = np.zeros(n * k, dtype=np.int8)
        if self._scratch is None or self._scratch.dtype != v.dtype:
            self._scratch = np.zeros(rules.SCRATCH_RECORDS, dtype=v.dtype)
        finished = np.zeros(n * k, dtype=np.int8)
        for t in range(max(len(p) for p in plans)):
            live = [i for i, p in enumerate(plans) if len(p) > t]
            rows = (np.arange(n)[:, None] * k + np.asarray(live)[None]).reshape(-1)
            rows = rows[finished[rows] == 0]       # a hand that ended takes no more moves
            step_t = np.asarray([p[t] if len(p) > t else -1 for p in plans], dtype=np.int64)
            sub, sub_masks, sub_events = states[rows], masks[rows], events[rows]
            step_batch(sub, v.spec_ref, step_t[rows % k], sub_masks, sub_events, self._scratch)
            states[rows], masks[rows] = sub, sub_masks
            finished[rows] |= (sub_events != EVENT_NONE).astype(np.int8)
        return states, masks, finished

    def use_time_per_move(self, seconds: float) -> bool:
        """Search for ``seconds`` a decision from now on, instead of ``budget`` playouts."""
        self.seconds = float(seconds)
        return True

    def samples(self, view, mask, cands, n: int, until: float | None = None) -> np.ndarray:
        """:meth:`rollouts` on ``n`` samples; with ``until`` (a ``perf_counter``
        reading) on as many as fit before it instead: two first, timed, then one batch
        sized by their cost (so at least two, and a little over ``until`` at worst)."""
        if until is None:
            return self.rollouts(view, mask, cands, n)
        begun = perf_counter()
        first = self.rollouts(view, mask, cands, 2)
        each = (perf_counter() - begun) / 2
        more = min(int((until - perf_counter()) / max(each, 1e-9)), self.MAX_TIMED_SAMPLES)
        if more < 1:
            return first
        return np.concatenate([first, self.rollouts(view, mask, cands, more)])

    def screen_scores(self, view, mask, cands, means) -> np.ndarray:
        """What picks the screen's best challenger: the candidates' mean playout margins
        (a network-guided search blends in its priors and values, agents/netsearch.py)."""
        return means

    def search(self, view, mask, cands):
        """Half the budget screens every candidate; the best challenger of the heuristic's
        choice then meets it alone on fresh samples (the other half), and replaces it only
        if better by ``z`` standard errors there. Testing on fresh samples keeps the
        screen's winner's curse (the luckiest of several equal candidates) out of the test.
        With ``seconds``, half the time screens and the rest duels."""
        k = len(cands)
        begun = perf_counter()
        timed = self.seconds > 0
        screen = self.samples(view, mask, cands, max(2, self.budget // (2 * k)),
                              begun + self.seconds / 2 if timed else None)
        means = screen.mean(axis=0)
        self.last_values = dict(zip(cands, means.tolist()))
        best = int(np.argmax(self.screen_scores(view, mask, cands, means)))
        if best == 0:
            return cands[0]
        return self.duel(view, mask, cands[0], cands[best], max(2, self.budget // 4),
                         begun + self.seconds if timed else None)

    def duel(self, view, mask, first, challenger, n: int, until: float | None):
        """``challenger`` if it beats ``first`` by ``z`` standard errors of the paired
        difference over ``n`` fresh samples (or as many as fit before ``until``), else
        ``first``."""
        duel = self.samples(view, mask, [first, challenger], n, until)
        diff = duel[:, 1] - duel[:, 0]
        se = diff.std(ddof=1) / np.sqrt(len(diff))
        return challenger if diff.mean() > self.z * se else first


@register("search", variant="mountain",
          help="determinised Monte Carlo (samples the hidden cards, plays each candidate out "
               "with a compiled policy; budget = playouts per decision) over the rules "
               "player's draw, whether to hold or place its melds, and its discard")
class SearchAgent(MonteCarloSearch, RulesAgent):
    """Mountain: searches the draw, whether to hold its melds and layoffs (``search_hold``,
    :meth:`hold_or_place`) and the end of the turn; which placements to make follows the
    rules player. The opponent's hidden cards are honed (``hone=1.0`` rounds a
    turn matched the true deadwood of a rules player's hand, which holds its melds).
    ``meld_free=1`` models an opponent that melds at once (``greedy``): once it has played,
    its sampled hidden cards hold no meld (:func:`break_melds`)."""

    def __init__(self, seed=None, budget: int = 200, discards: int = 3, z: float = 1.0,
                 scope: str = "all", hone: float = 1.0, meld_free: int = 0,
                 search_hold: int = 1, seconds: float = 0.0):
        super().__init__(seed, budget, discards, z, scope, hone, seconds)
        self.meld_free = bool(meld_free)
        self.search_hold = bool(search_hold)

    def reset(self) -> None:
        super().reset()
        self._plan: list[int] = []     # the rest of a placing plan chosen by the search

    def choose(self, view, mask) -> int:
        """The searched draw, hold-or-place and end of turn (the rules player's choice
        elsewhere); :meth:`act` remembers it, so the rules player's tracking knows its
        own discards from the opponent's."""
        self.track(view)
        legal = np.flatnonzero(mask)
        if len(legal) == 1:
            return int(legal[0])
        by = legal_by_family(view.variant, mask)
        if view.phase == PHASE_DRAW and self.scope != "end":
            self._plan = []
            cands = self.draw_candidates(view, by)
        elif view.phase == PHASE_PLAY and view.obligation < 0 and self.scope != "draw":
            if self._plan and mask[self._plan[0]]:
                return self._plan.pop(0)
            self._plan = []
            place = self.hold_or_place(view, mask, by)
            if place is not None:
                return place
            cands = self.end_candidates(view, by)
        else:
            return super().choose(view, mask)
        if len(cands) == 1:
            return cands[0]
        return int(self.search(view, mask, cands))

    def hold_or_place(self, view, mask, by):
        """The placement to play now, or None to hold (or when there is none). With
        ``search_hold`` and the rules player's hold policy, a turn that holds a meld or
        layoff but cannot end by placing it is searched: holding everything (the rules
        discard) against placing everything the best arrangement allows, then the rules
        end of turn (:meth:`placing_plan`), played as one plan. The rules player's choice
        (its hold thresholds) is candidate 0."""
        if (not (self.search_hold and self.hold and any(f in by for f in PLACE))
                or placing_forced(view, by)):
            return self.choose_placement(view, by)      # nothing to weigh
        if self.could_end_after_placing(view):
            return self.choose_placement(view, by, force=True)     # rules places to go out
        plan = self.placing_plan(view, mask)
        if not plan:
            return None
        hold = (self.choose_end(view, by),)
        cands = [plan, hold] if self.placing_due(view) else [hold, plan]
        if self.search(view, mask, cands) is hold:
            return None
        self._plan = list(plan[1:])
        return plan[0]

    def placing_plan(self, view, mask) -> tuple:
        """Every placement of the hand's best arrangement, one after another, then the
        rules player's end of turn (or ``done``): played on a copy of the public state,
        since the player's own hand and the table decide it."""
        v = view.variant
        game = Game(v, 1)
        game.states[:] = view.public_state()
        game.masks[0] = mask
        plan = []
        while True:
            here = player_view(game, 0, view.player)
            by = legal_by_family(v, game.masks[0])
            a = self.choose_placement(here, by, force=True)
            if a is None:
                if game.states[0]["current"] != view.player or here.phase != PHASE_PLAY:
                    return tuple(plan)
                a = int(by[DONE][0]) if DONE in by else self.choose_end(here, by)
                return (*plan, a)
            plan.append(int(a))
            if game.step_one(0, a) != EVENT_NONE:
                return tuple(plan)

    def draw_candidates(self, view, by) -> list[int]:
        """The rules player's choice first, then stock, the top card and the best deep takes."""
        top = view.discard[-1] if view.discard else None
        gains = sorted(self.take_scores(view, by).items(), key=lambda kv: -kv[1])
        takes = [a for a, g in gains[:2]]
        cands = [super().choose_draw(view, by)]
        if DRAW in by:
            cands.append(int(by[DRAW][0]))
        if top is not None:
            cands.append(int(view.variant.layout.take + top))
        return list(dict.fromkeys(cands + takes))

    def end_candidates(self, view, by) -> list[int]:
        """The rules player's choice first, then the best discards by its value. A legal
        Base Camp or knock is played unsearched: measured against the rules player's own
        continuation from the true state, knocking beat discarding by 13 points a hand on
        average, and the search's knock-to-discard overrides lost (docs/agents.md)."""
        first = super().choose_end(view, by)
        if BASE_CAMP in by or KNOCK in by:
            return [first]
        vals = self.discard_values(view, by)
        cands = [first, *sorted(vals, key=lambda a: -vals[a])[: self.discards]]
        return list(dict.fromkeys(cands))


@register("search", variant="gin",
          help="the same Monte Carlo over the draw (take, draw or pass) and the discard or "
               "knock; melds and layoffs as rules")
class GinSearchAgent(MonteCarloSearch, GinRulesAgent):
    """Gin: searches the draw (take, draw or pass) and the discard or knock; the melds and
    layoffs after a knock follow the rules player. The opponent's hidden cards are honed
    (``hone=1.25`` rounds a turn matched the true deadwood of a rules player's hand)."""

    def __init__(self, seed=None, budget: int = 200, discards: int = 3, z: float = 1.0,
                 scope: str = "all", hone: float = 1.25, seconds: float = 0.0):
        super().__init__(seed, budget, discards, z, scope, hone, seconds)

    def choose(self, view, mask) -> int:
        first = super().choose(view, mask)
        legal = np.flatnonzero(mask)
        lay = view.variant.layout
        if legal.max() < lay.discard and self.scope != "end":     # take / draw / pass
            cands = [first, *legal.tolist()]
        elif (legal.min() >= lay.discard and legal.max() < lay.meld
              and self.scope != "draw"):                             # discard or knock
            cands = [first, *self.discard_candidates(view, legal)]
        else:
            return first
        cands = list(dict.fromkeys(int(a) for a in cands))
        return cands[0] if len(cands) == 1 else self.search(view, mask, cands)

    def discard_candidates(self, view, legal) -> list[int]:
        """The knock leaving the least deadwood, then the ``discards`` discards that do."""
        lay = view.variant.layout
        hand = hand_mask_of(view.hand)

        def by_deadwood(actions, offset):
            dws = hand_deadwoods(view.variant, [hand & ~(1 << int(a - offset)) for a in actions])
            return [a for _, a in sorted(zip(dws.tolist(), actions), key=lambda t: t[0])]

        knocks = by_deadwood([a for a in legal if a >= lay.knock], lay.knock)
        discards = by_deadwood([a for a in legal if a < lay.knock], lay.discard)
        return knocks[:1] + discards[: self.discards]
