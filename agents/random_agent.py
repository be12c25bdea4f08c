"""``random``: uniform over the legal actions."""

from __future__ import annotations

import numpy as np

from .base import Agent, register


@register("random", help="uniform over the legal actions (the floor)")
class RandomAgent(Agent):
    def act(self, view, mask) -> int:
        return int(self.rng.choice(np.flatnonzero(mask)))

    def action_probabilities(self, view, mask) -> np.ndarray:
        m = np.asarray(mask, dtype=np.float64)
        return m / m.sum()
