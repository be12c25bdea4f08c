"""Robber's Rummy agents (docs/robbers_rummy.md): ``greedy`` for 2-6 seats.

It plays the exact solver's best play (:func:`mountain_rummy_env.robbers_play.best_play`)
on a copy of what the seat may know (``PlayerView.public_state()``): the most hand cards
the table and the hand allow in one play, before opening the highest-scoring opening; then
(RR-4: a seat that played may draw one card and play again) it draws and plays again.
Its parameters switch to other strategies for screening (:class:`RobbersGreedyAgent`).
"""

from __future__ import annotations

import numpy as np

from mountain_rummy_env.cards import JOKER_FACE, NUM_RANKS
from mountain_rummy_env.game import Game
from mountain_rummy_env.robbers_play import best_play

from . import robbers_playout as playout
from .base import Agent, register
from .robbers_playout import playout_start
from .search import MonteCarloSearch

__all__ = ["RobbersGreedyAgent", "RobbersRulesAgent", "RobbersSearchAgent"]


@register("greedy", variant="robbers",
          help="plays the exact solver's largest play (the highest opening first), then "
               "draws and plays again; draw_below, by, hold_until and small_opening "
               "change that (docs/agents.md)")
class RobbersGreedyAgent(Agent):
    """The solver's largest play whenever there is one, played action by action, then a
    draw and another play. The parameters switch to other strategies (docs/agents.md has
    the screens): ``draw_below`` draws after a play only with at most that many cards;
    ``by`` ``"points"`` places the most points, ``"shape"`` breaks ties by keeping a joker
    and the cards near other hand cards; ``hold_until`` > 0 keeps a play that does not go
    out in hand while every other seat holds more cards than that; ``small_opening`` > 0
    keeps an opening (RR-5) of at most that many cards while every other seat holds at
    least ``others_at_least`` cards (the ``rules`` player's one change)."""

    name = "greedy"

    def __init__(self, seed=None, draw_below: int = 1000, by: str = "cards",
                 hold_until: int = 0, small_opening: int = 0, others_at_least: int = 6):
        super().__init__(seed=seed)
        self.hold_openings(small_opening, others_at_least)
        if draw_below < 0:
            raise ValueError(f"draw_below is a number of cards >= 0, got {draw_below}")
        if by not in ("cards", "points", "shape"):
            raise ValueError(f"by is 'cards' (the most cards a play), 'points' or 'shape', "
                             f"got {by!r}")
        if hold_until < 0:
            raise ValueError(f"hold_until is a number of cards >= 0, got {hold_until}")
        self.draw_below, self.by, self.hold_until = draw_below, by, hold_until
        self._plan: list[int] = []

    def reset(self) -> None:
        self._plan = []

    def act(self, view, mask) -> int:
        if self._plan and mask[self._plan[0]]:
            return self._plan.pop(0)
        self._plan = []
        v = view.variant
        lay = v.layout
        if mask[lay.reset] and not mask[lay.draw] and not mask[lay.end]:
            return lay.reset                 # a play in progress it did not plan: undo it
        game = Game(v, 1)
        game.states[:] = view.public_state()
        game.masks[0] = mask
        play = best_play(game, weights=self.weights(view, game.states[0]))
        opened = bool(game.states[0]["placed_before"][view.player])
        if play is not None and not self.holds(view, play.cards, opened):
            self._plan = list(play.actions[1:])
            return play.actions[0]
        played = mask[lay.end]
        if mask[lay.draw] and (not played or len(view.hand) <= self.draw_below):
            return lay.draw
        if played:
            return lay.end
        return lay.pass_ if mask[lay.pass_] else int(np.flatnonzero(mask)[0])

    def weights(self, view, state):
        """The solver's worth of placing a card of each face (None: best_play's default)."""
        values = view.variant.spec.hand_value
        if self.by == "points":
            return values + 0.01
        if self.by == "cards" or not state["placed_before"][view.player]:
            return None
        hand = np.bincount(view.variant.spec.card_face[list(view.hand)],
                           minlength=JOKER_FACE + 1)
        near = np.zeros(JOKER_FACE + 1)
        for f in np.flatnonzero(hand[:JOKER_FACE]):
            rank, suit = f % NUM_RANKS, f // NUM_RANKS
            same_rank = [u * NUM_RANKS + rank for u in range(4) if u != suit]
            same_suit = [suit * NUM_RANKS + (rank + d) % NUM_RANKS for d in (-2, -1, 1, 2)]
            near[f] = hand[same_rank].sum() + hand[same_suit].sum()
        w = 1.0 + values / 4000.0 - np.minimum(near, 3) / 400.0
        w[JOKER_FACE] = 0.99                 # keep a joker: it can always be placed later
        return w

    def hold_openings(self, small_opening: int, others_at_least: int) -> None:
        """Set (and check) which openings :meth:`holds` keeps in hand."""
        if small_opening < 0 or others_at_least < 0:
            raise ValueError(f"small_opening and others_at_least are numbers of cards >= 0, "
                             f"got {small_opening} and {others_at_least}")
        self.small_opening, self.others_at_least = small_opening, others_at_least

    def holds(self, view, cards: int, opened: bool) -> bool:
        """Keep a play of ``cards`` hand cards (and draw) while the stock lasts: an opening
        of at most ``small_opening`` cards while every other seat holds at least
        ``others_at_least`` (0: never); any play that does not go out while every other
        seat holds more than ``hold_until`` cards (0: never). Melds kept in hand give the
        others nothing to rob or lay off on."""
        if view.stock_size == 0 or cards == len(view.hand):
            return False
        fewest = min(n for q, n in enumerate(view.hand_sizes) if q != view.player)
        if not opened and cards <= self.small_opening and fewest >= self.others_at_least:
            return True
        return 0 < self.hold_until < fewest


@register("rules", variant="robbers",
          help="greedy, except that it keeps a small opening (7 cards or fewer) in hand "
               "while every other seat holds 6 or more cards (docs/agents.md)")
class RobbersRulesAgent(RobbersGreedyAgent):
    """``rules``: greedy holding small openings, the one rule that beat greedy in the
    screens (docs/agents.md); the other parameters as greedy's."""

    name = "rules"

    def __init__(self, seed=None, draw_below: int = 1000, by: str = "cards",
                 hold_until: int = 0, small_opening: int = 7, others_at_least: int = 6):
        super().__init__(seed, draw_below, by, hold_until, small_opening, others_at_least)


@register("search", variant="robbers",
          help="determinised Monte Carlo over how to play the turn (the rules player's "
               "choice, greedy's plays and draw, holding the plays and drawing, or playing "
               "without the draw), each played out by compiled greedy play on face counts; "
               "budget = playouts a decision")
class RobbersSearchAgent(MonteCarloSearch, RobbersRulesAgent):
    """At the start of a turn with a play to make, compares the turn's *modes*
    (:data:`agents.robbers_playout.MODES`: greedy's turn, holding the play back, playing
    without the draw) by playouts from re-dealt hidden cards (the other hands and the
    stock; Robber's has no discard pile, so nothing about them is known but their sizes),
    every seat then playing as ``greedy`` (:func:`agents.robbers_playout.rollouts`), and
    plays the turn in the chosen mode. The ``rules`` player's mode is the default; another
    must beat it on fresh samples by ``z`` standard errors (:meth:`MonteCarloSearch.search`;
    2 here: at 1 the duel's false switches cost more than the true ones won, docs/agents.md)."""

    def __init__(self, seed=None, budget: int = 96, z: float = 2.0, seconds: float = 0.0,
                 small_opening: int = 7, others_at_least: int = 6):
        super().__init__(seed=seed, budget=budget, z=z, seconds=seconds)
        self.hold_openings(small_opening, others_at_least)
        self._greedy = RobbersGreedyAgent()
        self._no_draw = RobbersGreedyAgent(draw_below=0)
        self._mode = "greedy"
        self._start = None            # the playout start of the decision being searched

    def reset(self) -> None:
        super().reset()
        self._greedy.reset()
        self._no_draw.reset()
        self._mode = "greedy"

    def act(self, view, mask) -> int:
        lay = view.variant.layout
        s = view.public_state()[0]
        if s["placed_this_turn"] == 0 and s["drew"] == 0 and s["editing"] == 0:
            self._mode = self.choose_mode(view, s)
        if self._mode == "hold":
            return lay.draw if mask[lay.draw] else lay.pass_
        return (self._no_draw if self._mode == "no_draw" else self._greedy).act(view, mask)

    def choose_mode(self, view, state) -> str:
        """The mode of this turn: greedy's when the seat has no play, else the search's
        choice with the rules player's first."""
        start = playout_start(view, state)
        hand = start.hands[view.player].copy()
        table = start.table.copy()
        opened = bool(start.opened[view.player])
        cards = playout.play_once(table, hand, opened, start.weights, start.open_weights,
                                  *start.solver_args())
        if not cards:
            return "greedy"
        cands = ["greedy", "hold"] + (["no_draw"] if view.stock_size else [])
        if self.holds(view, int(cards), opened):
            cands[:2] = ["hold", "greedy"]
        self._start = start
        return self.search(view, None, cands)

    def rollouts(self, view, mask, cands, n: int) -> np.ndarray:
        """Margins (``n`` samples x modes) of the turn played in each mode, then greedy."""
        return self._start.rollouts([playout.MODES[c] for c in cands], n, self.rng)
