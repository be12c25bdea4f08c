"""``clairvoyant``: the search agent allowed to see the hidden cards.

It is :class:`agents.search.SearchAgent` with determinisation switched off: instead of
re-dealing the opponent's unknown cards and the stock at random, every rollout starts from
the *true* state record (the real opponent hand and the real stock order). Everything else
-- candidate actions, the compiled playout policy, the placements, the budget -- is the
search agent's own code, so the difference to ``search`` at the same budget is the value of
knowing the chance outcomes: the "fictive player" of van der Genugten & Borm's relative-skill
measure.

How: ``SearchAgent.search`` gets its rollout states from the module function
``agents.search.determinise``; while a clairvoyant searches, that name is bound to
:func:`true_states` (processes here are single-threaded; the original is restored at once).
Reusing ``search`` this way keeps the clairvoyant in step with changes to the search agent.
The playout policy is deterministic, so with the true state all rollouts of a candidate
agree. Registered as agent ``clairvoyant`` when this module is imported (it lives here, not
in ``agents/``, on purpose: it cheats and is a measuring device only).
"""

from __future__ import annotations

from contextlib import contextmanager

import numpy as np

import agents.search as _search
from agents.base import register
from agents.search import SearchAgent


def true_states(view, n: int, rng=None) -> np.ndarray:
    """``n`` copies of the true state record behind ``view`` (no hidden card re-dealt)."""
    base = view.game.states[view.index]
    return np.repeat(base[None], n, axis=0)


@contextmanager
def _clairvoyance():
    saved = _search.determinise
    _search.determinise = true_states
    try:
        yield
    finally:
        _search.determinise = saved


@register("clairvoyant", params={"budget": int, "discards": int},
          help="MEASURING DEVICE (cheats): the search agent rolling out from the true state, "
               "seeing the opponent's hand and the stock order")
class ClairvoyantSearchAgent(SearchAgent):
    def search(self, view, mask, cands) -> int:
        with _clairvoyance():
            return super().search(view, mask, cands)
