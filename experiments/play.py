"""Drive agents through hands and games of any variant (``Game`` batch of one)."""

from __future__ import annotations

from dataclasses import dataclass

from mountain_rummy_env import Game, player_view
from mountain_rummy_env.core.state import EVENT_GAME_OVER, EVENT_NONE


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


def play_recorded(rec, agents, out=print) -> None:
    """Play the game of ``rec`` (a :class:`~mountain_rummy_env.records.Recorder`) to its end
    with ``agents[p]`` in seat ``p``, passing each line of ``rec.view_log`` to ``out`` as it
    is written (the deal first). Agents are reset at every new hand."""
    game = rec.game
    shown = 0

    def show():
        nonlocal shown
        for line in rec.view_log[shown:]:
            out(line)
        shown = len(rec.view_log)

    show()
    for a in agents:
        a.reset()
    while not game.done(0):
        p = game.current_player(0)
        event = rec.play(int(agents[p].act(player_view(game, 0, p), game.masks[0])))
        show()
        if event not in (EVENT_NONE, EVENT_GAME_OVER):
            for a in agents:
                a.reset()
