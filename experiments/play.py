"""Drive agents through hands and games of any variant (``Game`` batch of one), and referee
them: time every decision, hold agents to time limits, and let a stand-in finish the hand
of a seat whose agent forfeits (:class:`Referee`, docs/your_agent.md)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from mountain_rummy_env import Game, player_view
from mountain_rummy_env.core.state import EVENT_GAME_OVER, EVENT_NONE


@dataclass
class HandResult:
    hand_points: tuple[int, ...]
    winner: int
    end: str
    ender: int
    steps: int
    decision_seconds: tuple[list[float], ...] = ()   # per seat, each decision's time (refereed)
    forfeits: tuple["Forfeit", ...] = ()


@dataclass(frozen=True)
class Limits:
    """Time limits in seconds (``None``: none): per decision, and per seat per hand (the
    sum of its decisions' times)."""
    move: float | None = None
    hand: float | None = None


@dataclass(frozen=True)
class Forfeit:
    """A seat's agent forfeited the hand at its ``decision``-th decision (0 = its first);
    ``kind`` as :class:`agents.proc.AgentFault`'s, ``reason`` in words."""
    seat: int
    decision: int
    kind: str
    reason: str


@dataclass
class _Seat:
    times: list[float] = field(default_factory=list)
    spent: float = 0.0
    started: bool = False
    stand_in: object = None          # the agent playing on after a forfeit


class Referee:
    """Times every decision and holds each seat's agent to the rules of play: an agent
    that raises, exits, answers late (over ``limits.move`` for one decision, or over
    ``limits.hand`` for its decisions in the hand), answers garbage or an illegal action
    forfeits the hand. The offending move is not played: from it on, the seat's moves are
    a ``random`` agent's (seeded from ``seed`` and the seat), so the hand is played to its
    end on the same cards and every seat's hand points are real.

    Agents in this process cannot be stopped mid-move, so their time is checked after the
    move (a move over the limit is not played); an agent with ``act_within(view, mask,
    seconds)`` (:class:`agents.proc.ProcAgent`) is waited for no longer than its allowance.
    An agent with ``start(view, limits)`` is started before its first decision, untimed.
    """

    def __init__(self, limits: Limits | None = None, seed=None):
        self.limits = limits or Limits()
        self.seed = seed
        self.seats: list[_Seat] = []
        self.forfeits: list[Forfeit] = []

    def begin(self, seats: int) -> None:
        """A new hand of ``seats`` seats."""
        self.seats = [_Seat() for _ in range(seats)]
        self.forfeits = []

    def allowance(self, seat: int) -> float | None:
        """Seconds the seat's next decision may take (``None``: no limit)."""
        left = [x for x in (self.limits.move, None if self.limits.hand is None
                            else max(0.0, self.limits.hand - self.seats[seat].spent))
                if x is not None]
        return min(left) if left else None

    def decide(self, seat: int, agent, view, mask) -> int:
        """The action of ``seat``'s agent, or its stand-in's once it has forfeited."""
        from agents.proc import AgentFault

        st = self.seats[seat]
        if st.stand_in is not None:
            return int(st.stand_in.act(view, mask))
        seconds, decision = self.allowance(seat), len(st.times)
        try:
            if not st.started:
                st.started = True
                if callable(getattr(agent, "start", None)):
                    agent.start(view, self.limits)
            act_within = getattr(agent, "act_within", None)
            begun = time.perf_counter()
            try:
                action = (act_within(view, mask, seconds) if callable(act_within)
                          else agent.act(view, mask))
            finally:
                took = time.perf_counter() - begun
                st.times.append(took)
                st.spent += took
            self._check(seat, action, took, mask)
        except AgentFault as fault:
            return self._forfeit(seat, decision, agent, view, mask, fault.kind, fault.detail)
        except Exception as err:  # noqa: BLE001 - any error of an agent forfeits its hand
            return self._forfeit(seat, decision, agent, view, mask, "crash",
                                 f"{type(err).__name__}: {err}")
        return int(action)

    def _check(self, seat: int, action, took: float, mask) -> None:
        from agents.proc import AgentFault

        lim = self.limits
        if lim.move is not None and took > lim.move:
            raise AgentFault("timeout", f"took {took:.3g} s, over the move limit of {lim.move:g} s")
        if lim.hand is not None and self.seats[seat].spent > lim.hand:
            raise AgentFault("timeout", f"its decisions took {self.seats[seat].spent:.3g} s "
                                        f"in the hand, over the hand limit of {lim.hand:g} s")
        if isinstance(action, (bool, np.bool_)) or not isinstance(action, (int, np.integer)):
            raise AgentFault("garbage", f"returned {action!r}, not an action id")
        if not (0 <= action < len(mask) and mask[action]):
            raise AgentFault("illegal", f"played action {int(action)}, not legal here")

    def _forfeit(self, seat, decision, agent, view, mask, kind: str, reason: str) -> int:
        from agents import make_agent

        st = self.seats[seat]
        self.forfeits.append(Forfeit(seat, decision, kind, reason))
        if callable(getattr(agent, "close", None)):
            agent.close()
        seed = None if self.seed is None else [*np.atleast_1d(self.seed).tolist(), seat]
        st.stand_in = make_agent("random", seed=seed)
        st.stand_in.reset()
        return int(st.stand_in.act(view, mask))


def play_hand(game: Game, agents, *, seed=None, deck=None, dealer=None, log=None,
              new: bool = True, referee: Referee | None = None,
              actions: list | None = None) -> HandResult:
    """Play one hand of game 0 with ``agents[p]`` in seat ``p``; returns its result.

    With ``new`` the game is reset first (``seed``/``deck``/``dealer`` as in ``Game.reset``).
    ``log``: a list to append readable move lines to (uses ``Game.describe``); ``actions``: a
    list to append every action id played to (with the deal, enough to replay the hand). With a
    ``referee`` every decision is timed and a faulty agent forfeits (:class:`Referee`); the
    result then holds the times and forfeits. Without one an agent's error propagates.
    """
    if new:
        game.reset(seed=seed, deck=deck, dealer=dealer)
    for a in agents:
        a.reset()
    if referee is not None:
        referee.begin(len(agents))
    steps = 0
    while True:
        p = game.current_player(0)
        view = player_view(game, 0, p)
        if referee is None:
            action = int(agents[p].act(view, game.masks[0]))
        else:
            action = referee.decide(p, agents[p], view, game.masks[0])
        before = game.states[0].copy() if log is not None else None
        event = game.step_one(0, action)
        steps += 1
        if actions is not None:
            actions.append(action)
        if log is not None:
            log.append(f"P{p}: {game.describe(0, action, before)}")
        if event != EVENT_NONE:
            h = game.summary(0)
            if referee is None:
                return HandResult(h.hand_points, h.winner, h.end, h.ender, steps)
            return HandResult(h.hand_points, h.winner, h.end, h.ender, steps,
                              tuple(s.times for s in referee.seats), tuple(referee.forfeits))


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
