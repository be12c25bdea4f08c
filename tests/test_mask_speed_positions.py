"""The positions that once made the mask search explode (MR-7, MR-7.1).

Mountain seed 1635, always playing the first legal action of the mask (which draws from the
stock, places what it can and discards the lowest card): after action 57 P1 faces a 23-card
discard pile, and after action 61 P1 holds only KS over a 25-card pile. A deep take there brings twenty-odd cards that may not be
discarded, and the dead-end and reachability searches used to try every order of placing
them: the first mask took ten seconds, the second did not finish in eight minutes. Other
seeds played the same way pile up alike. There are no timing assertions: the games simply
have to finish in normal test time, and the masks must be exact.
"""

from __future__ import annotations

import pytest

from mountain_rummy_env import Game
from mountain_rummy_env.core.state import PHASE_GAME_OVER, PHASE_HAND_OVER

from helpers import variant
from test_mr7_reachability import Checker

SEED = 1635


def first_legal_game(seed: int) -> Game:
    g = Game(variant(), 1)
    g.reset(seed=seed)
    return g


def test_deep_takes_over_the_long_piles_equal_brute_force():
    """MR-7.1 at both positions: each deep take is legal exactly when the enumerator of
    every placement sequence finds one placing the card and ending the turn."""
    g = first_legal_game(SEED)
    for action in range(1, 62):
        g.step_one(0, g.legal_actions(0)[0])
        if action in (57, 61):
            assert len(g.discard_pile()) == {57: 23, 61: 25}[action]
            checker = Checker(g)
            checker.check()
            assert checker.compared >= 20


@pytest.mark.parametrize("seed", [SEED, 9, 16, 34])
def test_first_legal_action_games_finish(seed):
    """The whole game, hand after hand, until someone reaches the target (MR-14)."""
    g = first_legal_game(seed)
    for _ in range(5000):
        if g.states[0]["phase"] == PHASE_GAME_OVER:
            break
        if g.states[0]["phase"] == PHASE_HAND_OVER:
            g.next_hand(0)
            continue
        g.step_one(0, g.legal_actions(0)[0])
    assert g.states[0]["phase"] == PHASE_GAME_OVER
