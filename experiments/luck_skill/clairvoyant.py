"""``clairvoyant``: the search agent allowed to see the hidden cards.

It is :class:`agents.search.SearchAgent` with determinisation switched off: instead of
re-dealing the opponent's unknown cards and the stock at random, every rollout starts from
the *true* state record (the real opponent hand and the real stock order). Everything else
-- candidate actions, the compiled playout policy, the placements, the budget -- is the
search agent's own code, so the difference to ``search`` at the same budget is the value of
knowing the chance outcomes: the "fictive player" of van der Genugten & Borm's relative-skill
measure.

How: the search agents take their rollout states from ``sample_states``; the clairvoyant
overrides it with :func:`true_states`, which keeps it in step with any change to the search
agents. The playout policy is deterministic, so with the true state all rollouts of a
candidate agree. Registered as agent ``clairvoyant`` (Mountain and Gin) when this module is
imported (it lives here, not in ``agents/``, on purpose: it cheats and is a measuring device
only).
"""

from __future__ import annotations

import numpy as np

from agents.base import register
from agents.search import GinSearchAgent, SearchAgent


def true_states(view, n: int) -> np.ndarray:
    """``n`` copies of the true state record behind ``view`` (no hidden card re-dealt)."""
    base = view.game.states[view.index]
    return np.repeat(base[None], n, axis=0)


class _SeesEverything:
    def sample_states(self, view, n: int) -> np.ndarray:
        return true_states(view, n)


_HELP = ("MEASURING DEVICE (cheats): the search agent rolling out from the true state, "
         "seeing the opponent's hand and the stock order")


@register("clairvoyant", help=_HELP, variant="mountain")
class ClairvoyantSearchAgent(_SeesEverything, SearchAgent):
    pass


@register("clairvoyant", help=_HELP, variant="gin")
class ClairvoyantGinSearchAgent(_SeesEverything, GinSearchAgent):
    pass
