"""``proc:COMMAND``: an agent that is a program, spoken to in JSON lines (docs/your_agent.md).

The harness starts the program once per hand (a fresh process, so nothing it learned in
one seat of a duplicate deal carries into the other seat's play of the same cards), writes
one JSON object per line to its stdin and reads one per line from its stdout:

* ``hello`` (harness → agent): the protocol version, the variant and its options, the
  seat, the number of action ids, every card id's text, a seed, the time per move the
  agent is asked to use and the limits it is held to. The agent answers
  ``{"type": "ready"}`` within ``start_seconds``.
* ``act``: the seat's view (only what that seat may know, :func:`view_message`) and the
  legal action ids with their texts; the agent answers ``{"action": ID}``.
* The hand is over when stdin closes; the process should exit then (it is killed after a
  moment otherwise).

A process that cannot start, exits, answers late or answers something unreadable raises
:class:`AgentFault`; the tournament's referee (``experiments.play.Referee``) turns that
into a forfeit by the documented rule. Its stderr is kept (the last lines name the crash).
"""

from __future__ import annotations

import collections
import json
import os
import queue
import shlex
import shutil
import subprocess
import threading
from dataclasses import asdict

import numpy as np

from mountain_rummy_env.core.state import PHASE_NAMES

from .base import Agent, AgentSpecError

PROTOCOL = 1
START_SECONDS = 10.0      # for the process to start and answer the hello (not a decision)
EXIT_SECONDS = 1.0        # for it to exit once stdin closes, before it is killed


class AgentFault(RuntimeError):
    """An agent broke the harness's rules. ``kind``: ``start`` (did not start or answer
    the hello), ``crash`` (raised or exited), ``timeout``, ``garbage`` (an unreadable
    answer) or ``illegal`` (an action not legal now)."""

    KINDS = ("start", "crash", "timeout", "garbage", "illegal")

    def __init__(self, kind: str, detail: str):
        super().__init__(f"{kind}: {detail}")
        self.kind, self.detail = kind, detail


def view_message(view, mask) -> dict:
    """The ``act`` message: the seat's view and the legal actions, nothing else. Every
    field is one of the :class:`~mountain_rummy_env.game.PlayerView`'s (what the seat may
    know); card ids are those of the hello's ``cards``."""
    v = view.variant
    legal = np.flatnonzero(mask).tolist()
    return {
        "type": "act",
        "view": {
            "player": view.player, "hand": list(view.hand), "discard": list(view.discard),
            "melds": [{k: m[k] for k in ("slot", "founder", "kind", "cards", "text", "owners")}
                      for m in view.melds],
            "known": [list(k) for k in view.known], "hand_sizes": list(view.hand_sizes),
            "stock_size": view.stock_size, "scores": list(view.scores),
            "phase": PHASE_NAMES[view.phase], "step": view.step, "current": view.current,
            "obligation": view.obligation, "taken": list(view.taken), "turn": view.turn,
            "dealer": view.dealer,
        },
        "legal": legal,
        "legal_text": [v.action_text(a) for a in legal],
    }


def hello_message(variant, seat: int, seed: int, time_per_move=None, limits=None) -> dict:
    """The ``hello`` message: the rules, the seat and the terms of play; no card's place."""
    return {"type": "hello", "protocol": PROTOCOL, "variant": variant.name,
            "options": asdict(variant.config), "num_players": variant.num_players,
            "seat": seat, "num_actions": variant.num_actions,
            "cards": [variant.deck.card_text(c) for c in range(variant.deck.num_cards)],
            "seed": seed, "time_per_move": time_per_move,
            "limits": {"move": getattr(limits, "move", None), "hand": getattr(limits, "hand", None)}}


class ProcAgent(Agent):
    """A program speaking the JSON-lines protocol (module docstring). ``command`` is its
    command line (split as a shell would, not run by one)."""

    def __init__(self, command: str, seed=None, start_seconds: float = START_SECONDS):
        super().__init__(seed=seed)
        try:
            self.argv = shlex.split(command)
        except ValueError as err:
            raise AgentSpecError(f"proc:{command}: cannot read the command line ({err})") from None
        program = self.argv[0] if self.argv else ""
        if not (shutil.which(program) or (os.sep in program and os.access(program, os.X_OK))):
            raise AgentSpecError(f"proc:{command}: cannot start {program!r}: no such program "
                                 f"(not on PATH, or not an executable file)")
        self.command = command
        self.start_seconds = float(start_seconds)
        self.time_per_move: float | None = None
        self._proc: subprocess.Popen | None = None

    # -- the harness's hooks -----------------------------------------------------------

    def use_time_per_move(self, seconds: float) -> bool:
        """Told to the program in its hello; whether it keeps to it is up to the program."""
        self.time_per_move = float(seconds)
        return True

    def check_variant(self, variant: str) -> None:
        """Start the program once, for seat 0 of ``variant`` (default options), and check
        that it answers the hello; raises :class:`AgentSpecError` saying why not."""
        from mountain_rummy_env.registry import make_variant

        try:
            self._launch(hello_message(make_variant(variant), 0, 0, self.time_per_move))
        except AgentFault as fault:
            raise AgentSpecError(f"proc:{self.command}: {fault.detail}") from None
        finally:
            self.close()

    def reset(self) -> None:
        """A new hand: the process of the last one (if any) goes."""
        self.close()

    def start(self, view, limits=None) -> None:
        """Start the process for ``view``'s seat and exchange the hello (untimed: it is not
        a decision, and has ``start_seconds`` of its own)."""
        seed = int(self.rng.integers(2**31))
        self._launch(hello_message(view.variant, view.player, seed, self.time_per_move, limits))

    def act(self, view, mask) -> int:
        return self.act_within(view, mask, None)

    def act_within(self, view, mask, seconds: float | None) -> int:
        """The program's action, waiting at most ``seconds`` (``None``: as long as it
        takes); raises :class:`AgentFault` when it is late, gone or unreadable."""
        if self._proc is None:
            self.start(view)
        self._send(self.request(view, mask))
        reply = self._receive(seconds, "its action")
        action = reply.get("action") if isinstance(reply, dict) else None
        if isinstance(action, bool) or not isinstance(action, int):
            self.close(wait=0)
            raise AgentFault("garbage", f"answered {_short(reply)} where "
                                        f'{{"action": ID}} was due')
        return action

    def request(self, view, mask) -> dict:
        """The message for one decision (:func:`view_message`)."""
        return view_message(view, mask)

    def close(self, wait: float = EXIT_SECONDS) -> None:
        """End the process: close its stdin, give it ``wait`` seconds to exit, then kill it
        (a process that broke the rules gets no time)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(wait)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __del__(self):
        try:
            self.close()
        except Exception:         # at interpreter exit the modules it needs may be gone
            pass

    # -- the pipe ------------------------------------------------------------------------

    def _launch(self, hello: dict) -> None:
        self.close()
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True, bufsize=1)
        except OSError as err:
            raise AgentFault("start", f"cannot start {self.argv[0]!r}: {err.strerror}") from None
        self._proc, self._lines = proc, queue.Queue()
        self._stderr = collections.deque(maxlen=20)
        threading.Thread(target=_pump, args=(proc.stdout, self._lines.put), daemon=True).start()
        self._stderr_pump = threading.Thread(target=_pump, args=(proc.stderr, self._stderr.append),
                                             daemon=True)
        self._stderr_pump.start()
        try:
            self._send(hello)
            reply = self._receive(self.start_seconds, "the hello")
        except AgentFault as fault:
            raise AgentFault("start", fault.detail) from None
        if not (isinstance(reply, dict) and reply.get("type") == "ready"):
            self.close(wait=0)
            raise AgentFault("start", f'answered the hello with {_short(reply)}, not '
                                      f'{{"type": "ready"}}')
        if reply.get("protocol", PROTOCOL) != PROTOCOL:
            self.close(wait=0)
            raise AgentFault("start", f"speaks protocol {reply['protocol']!r}; this harness "
                                      f"speaks {PROTOCOL}")

    def _send(self, message: dict) -> None:
        try:
            self._proc.stdin.write(json.dumps(message) + "\n")
            self._proc.stdin.flush()
        except (OSError, ValueError):
            raise self._gone("while being written to") from None

    def _receive(self, seconds: float | None, what: str):
        try:
            line = self._lines.get(timeout=seconds)
        except queue.Empty:
            self.close(wait=0)
            raise AgentFault("timeout", f"no answer within {seconds:g} s to {what}") from None
        if line is None:
            raise self._gone(f"before answering {what}")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            self.close(wait=0)
            raise AgentFault("garbage", f"answered {line.strip()[:80]!r} to {what}, "
                                        f"not a JSON line") from None

    def _gone(self, when: str) -> AgentFault:
        """The fault of a process that exited: its exit code and last stderr line."""
        proc = self._proc
        try:
            code = proc.wait(EXIT_SECONDS)
            self._stderr_pump.join(EXIT_SECONDS)     # its last lines name the crash
        except subprocess.TimeoutExpired:
            code = None
        self.close(wait=0)
        tail = next((s.strip() for s in reversed(self._stderr) if s and s.strip()), "")
        exit_text = "closed its output" if code is None else f"exited with code {code}"
        return AgentFault("crash", f"{exit_text} {when}" + (f": {tail[:160]}" if tail else ""))


def _pump(stream, put) -> None:
    """Move ``stream``'s lines to ``put`` until it ends (then ``None`` once)."""
    try:
        for line in stream:
            put(line)
    except (OSError, ValueError):
        pass
    put(None)


def _short(value) -> str:
    return json.dumps(value)[:80]
