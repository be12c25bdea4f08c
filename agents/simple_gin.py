"""``simple_gin``: the EAAI Gin Rummy challenge's baseline, SimpleGinRummyPlayer, re-implemented.

The challenge (Neller et al., EAAI-21) measured every entry against this player, so Gin
results against ``simple_gin`` can be set beside the challenge's (the AAAI-21
hand-evaluation entry won 55.4% of games to 100 against it). Its published policy:

* take the face-up card if and only if it becomes part of a meld with the hand (any meld
  of the hand and the card that holds it, not only one of the best arrangement);
* discard a card leaving the least deadwood, ties at random; never the card just taken
  (GR-2), and never a card whose draw-and-discard pair it already played this hand (the
  original's guard against two players passing the same cards back and forth);
* knock as soon as the hand left after that discard has deadwood within the knock limit;
* after a knock: meld a best arrangement; as defender lay off every card outside it that
  fits the knocker's melds (the original's engine lays off the unmelded cards).

Deadwood comes from the project's exact solver (through the hooks of Gin's greedy player,
:class:`~agents.greedy.GinGreedyAgent`, which this player overrides); the opponent's moves
are ignored, as in the original.
"""

from __future__ import annotations

from mountain_rummy_env.core.gin import DRAW, OFFER, WALL
from mountain_rummy_env.solver import hand_mask_of

from .base import register
from .common import DISCARD, KNOCK, arrange, hand_deadwoods
from .greedy import GinGreedyAgent

__all__ = ["SimpleGinAgent"]


@register("simple_gin", variant="gin",
          help="the EAAI Gin challenge's SimpleGinRummyPlayer: takes a card that melds, "
               "discards to least deadwood, knocks at once")
class SimpleGinAgent(GinGreedyAgent):
    """SimpleGinRummyPlayer (see the module docstring); plays Gin only."""

    name = "simple_gin"

    def reset(self) -> None:
        self._before_draw: set[int] = set()              # the hand before this turn's draw
        self._played_pairs: set[frozenset] = set()       # draw-and-discard pairs played

    def track(self, view) -> None:
        if view.step in (OFFER, DRAW, WALL):
            self._before_draw = set(view.hand)

    def wants_take(self, view, card) -> bool:
        """Whether ``card`` is part of some meld of the hand and the card."""
        with_card = hand_mask_of(view.hand) | (1 << card)
        return any((m >> card) & 1 and not m & ~with_card
                   for m in map(int, view.variant.table.mask))

    def wants_to_knock(self, view, by) -> bool:
        """Knock when the discard it would make leaves deadwood within the knock limit."""
        hand = hand_mask_of(view.hand)
        cards = self._candidates(view, list(view.hand))
        return min(hand_deadwoods(view.variant, [hand & ~(1 << c) for c in cards])) \
            <= view.variant.config.knock_card

    def choose_discard(self, view, by) -> int:
        return self._least_deadwood(view, by[DISCARD], view.variant.layout.discard)

    def choose_knock(self, view, by) -> int:
        return self._least_deadwood(view, by[KNOCK], view.variant.layout.knock)

    def choose_layoff(self, view, layoffs):
        """The first layoff of a card outside the hand's best arrangement, or None."""
        off = view.variant.layout.layoff
        melded = 0
        for template, _ in arrange(view, list(view.hand), "deadwood").melds:
            melded |= int(view.variant.table.mask[template])
        loose = [int(a) for a in layoffs if not (melded >> int(a - off)) & 1]
        return loose[0] if loose else None

    def _candidates(self, view, cards) -> list[int]:
        """``cards`` less the card just taken and those repeating a draw-and-discard pair
        (all of them, should that leave none)."""
        taken = set(view.taken)
        drawn = set(view.hand) - self._before_draw
        keep = [c for c in cards if c not in taken
                and not any(frozenset((d, c)) in self._played_pairs for d in drawn)]
        return keep or list(cards)

    def _least_deadwood(self, view, actions, offset) -> int:
        """A random one of ``actions`` (discards or knocks) whose card leaves the least
        deadwood; its pair with the card drawn this turn is remembered."""
        by_card = {int(a - offset): int(a) for a in actions}
        cards = self._candidates(view, list(by_card))
        hand = hand_mask_of(view.hand)
        dws = hand_deadwoods(view.variant, [hand & ~(1 << c) for c in cards])
        best = [c for c, d in zip(cards, dws) if d == dws.min()]
        card = best[int(self.rng.integers(len(best)))]
        for drawn in set(view.hand) - self._before_draw:
            self._played_pairs.add(frozenset((drawn, card)))
        return by_card[card]

