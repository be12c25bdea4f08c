"""Drive agents through hands and games of any variant (``Game`` batch of one)."""

from __future__ import annotations

from dataclasses import dataclass

from mountain_rummy_env import Game, player_view
from mountain_rummy_env.core.state import EVENT_NONE


@dataclass
class HandResult:
    hand_points: tuple[int, ...]
    winner: int
    end: str
    ender: int
    steps: int


def play_hand(game: Game, agents, *, seed=None, deck=None, dealer=None, log=None,
              new: bool = True) -> HandResult:
    """Play one hand of game 0 with ``agents[p]`` in seat ``p``; returns its result.

    With ``new`` the game is reset first (``seed``/``deck``/``dealer`` as in ``Game.reset``).
    ``log``: a list to append readable move lines to (uses ``Game.describe``).
    """
    if new:
        game.reset(seed=seed, deck=deck, dealer=dealer)
    for a in agents:
        a.reset()
    steps = 0
    while True:
        p = game.current_player(0)
        view = player_view(game, 0, p)
        action = int(agents[p].act(view, game.masks[0]))
        before = game.states[0].copy() if log is not None else None
        event = game.step_one(0, action)
        steps += 1
        if log is not None:
            log.append(f"P{p}: {game.describe(0, action, before)}")
        if event != EVENT_NONE:
            h = game.summary(0)
            return HandResult(h.hand_points, h.winner, h.end, h.ender, steps)
