"""German Rummy (Rommé, GE rules): card values and meld rules.

The variant itself (deal, opening, joker exchange, scoring) is not built yet; these are
the constants its solver queries use, kept here so that the variant module grows around
them.
"""

from __future__ import annotations

import numpy as np

from ..cards import JOKER_FACE
from ..melds import MeldRules

# GE-2: an ace is worth 11 (1 low in A-2-3), kings, queens, jacks and tens 10, 2-9 face.
HAND_VALUES = (11, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10)   # A..K, in hand
JOKER_HAND_VALUE = 20                                        # GE-2: a joker left in hand
OPENING_CREDIT = 40                                          # GE-5: first melds worth >= 40

# GE-2/GE-3: runs ace low or high (no wrap), a melded joker credited as its declared card,
# a meld with two or more jokers needs two or more naturals.
GERMAN_RULES = MeldRules(ace_low=True, ace_high=True, rank_credit=HAND_VALUES,
                         ace_low_credit=1, ace_high_credit=11, min_naturals_with_two_jokers=2)


def german_hand_values() -> np.ndarray:
    """In-hand value of each face, int16[53] (index 52 = joker), for the solver."""
    values = np.zeros(JOKER_FACE + 1, dtype=np.int16)
    values[:JOKER_FACE] = np.tile(HAND_VALUES, 4)
    values[JOKER_FACE] = JOKER_HAND_VALUE
    return values
