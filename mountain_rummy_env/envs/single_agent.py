"""Gymnasium single-agent rummy: one seat learns, the other seats play fixed policies.

## Description

Mountain Rummy (docs/mountain_rummy.md; other games through their modules) seen from one
seat; the other seats' moves are played inside :meth:`SingleAgentEnv.step` (and
:meth:`reset`, when another seat starts) until it is the agent's turn again, so every observation is one where the agent must act. A turn is several
steps (draw -> meld / lay off ... -> end).

## Action Space

``Discrete(num_actions)`` (1845 with the default options); most ids are illegal in any
given position: use :meth:`SingleAgentEnv.action_masks` (sb3-contrib ``MaskablePPO`` calls it)
or ``info``-free masking. ``env.unwrapped.variant.action_text(a)`` names an action.

## Observation Space

``Box`` float32 of the flat player view (``docs/observation.md``), or ``(rows, C)`` with
``observation_layout="planes"``; ``obs_dtype="int8"`` gives the compact int8 encoding (a
quarter of the memory, scaled features as ``round(127 x)``); ``obs_features="solver"``
appends the solver feature block (Mountain, German, Crazy; flat layout). Only what the agent's seat may
know.

## Rewards

Given when a hand ends (``reward="margin"``: own hand points - the other seats' mean,
default; ``"points"``: own hand points; ``"win"``: +1 for the hand winner, -1/(seats-1) for
the others, 0 without a winner). With
``episode="game"`` every hand pays and the episode ends at game over. The finished hand's
summary is in ``info["hand"]``. Every adapter's rewards and illegal-action handling:
``docs/rewards.md``.

## Arguments

``SingleAgentEnv(opponent=None, seat=0, reward="margin", render_mode=None,
illegal_action="raise", illegal_reward=None, observation_layout="flat", obs_dtype="float32",
obs_features="none", **config)``

* ``opponent``: the policy of every other seat, or a list of one policy per other seat in
  playing order after the agent. A policy is ``None`` (uniform random over the legal
  actions, drawn from ``np_random``), a callable ``(observation, action_mask) -> action``
  (observation: that seat's view, in the env's layout and dtype), or an object with
  ``.act(view, mask)`` taking a :class:`PlayerView`.
* ``seat``: a seat number (0 .. seats-1) or ``"rotate"`` (the next seat each reset; a seeded
  reset plays seat ``seed % seats``).
* ``illegal_action``: ``"raise"`` (default) raises :class:`IllegalActionError` naming the
  legal moves, nothing changed; ``"terminate"`` ends the episode with reward
  ``illegal_reward`` and ``info["illegal_action"] = True`` (for generic checkers that sample
  unmasked actions). ``illegal_reward=None`` is :func:`~.aec.illegal_penalty`, no better than
  the worst hand a legal policy can get (``docs/rewards.md``); a larger one is refused.
* ``config``: :class:`MountainConfig` options (invalid ones raise ``ConfigError``).

## Version History

* v0: Initial release (mountain-rummy-env 0.1.0).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from ..config import ConfigError
from ..core.state import EVENT_GAME_OVER, EVENT_HAND_OVER
from ..game import Game, IllegalActionError, player_view
from ..variants.mountain import mountain_variant
from .aec import (
    SeatEncoder, check_reward_mode, hand_rewards, illegal_reward_for, observation_box,
    observation_dtype, observation_features, reset_position,
)
from .render import render_text


class SingleAgentEnv(gymnasium.Env):
    metadata = {"render_modes": ["human", "ansi"], "render_fps": 1}
    # the variant constructor ``factory(**config)``; each variant's root module subclasses
    # with its registry entry's (:mod:`.game_module`)
    variant_factory = staticmethod(mountain_variant)

    def __init__(self, opponent=None, seat=0, reward: str = "margin", render_mode: str | None = None,
                 illegal_action: str = "raise", illegal_reward: float | None = None,
                 observation_layout: str = "flat", obs_dtype="float32", obs_features: str = "none",
                 **config):
        check_reward_mode(reward)
        self.obs_dtype = observation_dtype(observation_layout, obs_dtype)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}; got {render_mode!r}")
        self.variant = self.variant_factory(**config)
        self.obs_features = observation_features(observation_layout, obs_features, self.variant)
        seats = self.variant.num_players
        if seat != "rotate" and (isinstance(seat, bool) or not isinstance(seat, (int, np.integer))
                                 or not 0 <= seat < seats):
            raise ConfigError(f"seat must be a seat number 0..{seats - 1} or 'rotate'; got {seat!r}")
        policies = list(opponent) if isinstance(opponent, (list, tuple)) else [opponent] * (seats - 1)
        if len(policies) != seats - 1:
            raise ConfigError(f"opponent must be one policy or a list of {seats - 1} (one per other "
                              f"seat); got a list of {len(policies)}")
        for policy in policies:
            if policy is not None and not (hasattr(policy, "act") or callable(policy)):
                raise TypeError("an opponent must be None, a callable (observation, action_mask) -> "
                                "action, or an object with .act(view, mask)")
        self.game = Game(self.variant, 1)
        self.opponent = opponent
        self._policies = policies
        self.seat_option = seat
        self.seat = seats - 1 if seat == "rotate" else int(seat)  # "rotate": the first unseeded reset plays 0
        self.reward_mode = reward
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_reward = illegal_reward_for(self.variant, reward, illegal_action, illegal_reward)
        self.observation_layout = observation_layout
        self.observation_space = observation_box(self.variant, observation_layout, self.obs_dtype,
                                                 self.obs_features)
        self.action_space = spaces.Discrete(self.variant.num_actions)
        self._episode_game = self.variant.config.episode == "game"
        self._encoder = SeatEncoder(self.game, observation_layout, self.obs_dtype, self.obs_features)
        self._terminated = True
        self._pending = 0.0
        self._last_info: dict = {}

    # ----------------------------------------------------------------------------------

    def _encode(self, seat: int) -> np.ndarray:
        return self._encoder(seat)

    def _opponent_action(self, opp: int) -> int:
        mask = self.game.masks[0].copy()
        policy = self._policies[(opp - self.seat) % self.variant.num_players - 1]
        if policy is None:
            return int(self.np_random.choice(np.flatnonzero(mask)))
        if hasattr(policy, "act"):
            action = policy.act(player_view(self.game, 0, opp), mask)
        else:
            action = policy(self._encode(opp), mask)
        if isinstance(action, str):
            action = self.variant.parse_action(action)
        action = int(action)
        if not (0 <= action < self.variant.num_actions and mask[action]):
            raise IllegalActionError("the opponent policy chose an illegal action: "
                                     + self.game.illegal_reason(0, action))
        return action

    def _apply(self, action: int) -> tuple[float, dict]:
        """Play one action; returns the agent's reward and an info dict if a hand ended."""
        event = self.game.step_one(0, action)
        if event in (EVENT_HAND_OVER, EVENT_GAME_OVER):
            summary = self.game.summary(0)
            reward = hand_rewards(summary, self.reward_mode, self.variant.num_players)[self.seat]
            if event == EVENT_GAME_OVER or not self._episode_game:
                self._terminated = True
            return reward, {"hand": summary.as_dict()}
        return 0.0, {}

    def _play_opponent(self) -> tuple[float, dict]:
        reward, info = 0.0, {}
        while not self._terminated and self.game.current_player(0) != self.seat:
            r, i = self._apply(self._opponent_action(self.game.current_player(0)))
            reward += r
            info = i or info
        return reward, info

    # ----------------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """New game; ``options`` may set a position (``RESET_OPTIONS``, see ``Game.reset``)."""
        super().reset(seed=seed)
        position = reset_position(options)
        if self.seat_option == "rotate":
            seats = self.variant.num_players
            self.seat = int(seed) % seats if seed is not None else (self.seat + 1) % seats
        game_seed = int(seed) if seed is not None else int(self.np_random.integers(2**62))
        self._pending = 0.0
        while True:
            self.game.reset(seed=game_seed, **position)
            self._terminated = False
            reward, info = self._play_opponent()
            if not self._terminated:
                break
            # the opponent ended the whole episode before the agent's first move: deal again
            game_seed = int(self.np_random.integers(2**62))
            position.pop("deck", None)
        self._pending = reward  # a hand the opponent finished first (episode="game") pays now
        if self.render_mode == "human":
            self.render()
        return self._encode(self.seat), {}

    def step(self, action):
        if self._terminated:
            raise RuntimeError("the episode is over; call reset() first")
        a = np.asarray(action)
        if a.size != 1 or a.dtype.kind not in "iu":
            raise IllegalActionError(f"action must be one integer id; got {action!r}")
        a = int(a.reshape(-1)[0])
        if not (0 <= a < self.variant.num_actions and self.game.masks[0, a]):
            if self.illegal_action == "raise":
                raise IllegalActionError(self.game.illegal_reason(0, a)
                                         + " (use env.action_masks() to pick legal actions)")
            self._terminated = True
            reward = self._pending + self.illegal_reward   # a hand finished before still pays
            self._pending = 0.0
            return self._encode(self.seat), reward, True, False, {"illegal_action": True}
        reward, info = self._apply(a)
        reward += self._pending
        self._pending = 0.0
        r, i = self._play_opponent()
        reward += r
        info = dict(i or info)
        if self.render_mode == "human":
            self.render()
        return self._encode(self.seat), float(reward), self._terminated, False, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the agent now (bool), for sb3-contrib ``MaskablePPO``."""
        if self._terminated:
            return np.zeros(self.variant.num_actions, dtype=bool)
        return self.game.masks[0].astype(bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        seats = self.variant.num_players
        names = ["agent" if p == self.seat else "opponent" if seats == 2
                 else f"opponent {(p - self.seat) % seats}" for p in range(seats)]
        text = render_text(self.game, 0, names)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None
