# noqa: D212, D415
"""
# Mountain Rummy

| Import             | `from mountain_rummy_env import mountain_rummy_v0`          |
|--------------------|-------------------------------------------------------------|
| Actions            | Discrete                                                    |
| Parallel API       | Yes (`turn_based_aec_to_parallel`)                          |
| Manual Control     | No                                                          |
| Agents             | `agents= ['player_0', 'player_1']`                          |
| Agents             | 2                                                           |
| Action Shape       | Discrete(1845) (default options; `num_jokers` changes it)   |
| Action Values      | Discrete(1845)                                              |
| Observation Shape  | (1809,) flat, or (60, 54) with `observation_layout="planes"` |
| Observation Values | [-1, 1] (binary features 0/1); int8 with `obs_dtype="int8"`  |
| State Shape        | (2025,)                                                     |

Mountain Rummy (docs/mountain_rummy.md) for two players: draw from the stock or take any card of
the discard pile with everything above it, meld and lay off (also on the opponent's melds,
which may be reorganised), then end the turn with a face-up discard, a Knock, Base Camp or
High Camp. Points are meld credit minus deadwood, plus bonuses for the hand winner.

A turn is several steps by the same agent (draw -> meld / lay off ... -> end);
`agent_selection` always names the player the rules wait for (`game.current_player`), so
the same agent can be selected many times in a row. After a Knock the opponent gets a
response phase (meld / lay off, then `done`).

### Options

`env(render_mode=None, reward="margin", observation_layout="flat", obs_dtype="float32",
illegal_action="terminate", illegal_reward=None, obs_features="none", **config)` where `config` goes to
`mountain_variant` (`num_jokers`, `camp_response`, `bonus_recipient`, `max_turns`,
`target_score`, `episode`; invalid values raise `ConfigError`); `raw_env` takes the same with
`illegal_action="raise"`. `env()` is the same class as `raw_env`, not a stack of wrappers:
the checks of PettingZoo's `OrderEnforcingWrapper` (nothing before `reset()`, a `step()` or
`reset()` between two agents of `agent_iter`) and `AssertOutOfBoundsWrapper` (an id outside
the action space raises, whatever `illegal_action` says) are built in, off the hot path.
`reset(seed=None, options={...})` takes `Game.reset`'s position: `deck` fixes the first
hand's card order (card string such as `"5H 6H XX ..."` or ids, top first), `dealer` the first
dealer, `scores` the game totals, `hand_no` the hands already played, `next_decks` the decks
of the following hands (other keys are ignored).

### Observation Space

A dict: `observation` is the player's own view (`docs/observation.md`: own hand, discard
pile in order, table melds with owners and declared jokers, the opponent's known cards,
stock size, scores, phase, turn constraints; never the opponent's hidden cards or the stock
order) and `action_mask` (int8, length = number of actions) marks the legal actions. The
mask of an agent that is not to act is all zeros; its observation is still its own view.
`state()` is the full state (both hands, stock order, face-down cards) for centralised critics.

`obs_dtype="float32"` (default) gives values in [-1, 1]; `"int8"` a quarter of the memory:
binary features 0/1 as before, the scaled ones as `round(127 x)`
(`observation.observation_scale` turns them back). `obs_features="solver"` appends the solver
feature block (`docs/observation.md`; Mountain, German, Crazy; flat layout). Observations are encoded only when asked
for (`observe`, `last`) and kept until the next `step` or `reset`: asking again in the same
step returns the same arrays (copy them before changing them in place).

### Action Space

One flat `Discrete` space; every id has a text form (`env.unwrapped.variant.action_text`):
`draw stock`, `take 7H` (that card and all above it), `meld 5H 6H 7H`, `regroup ...`,
`layoff 9H m3`, `discard 3C`, `knock 4D`, `base camp`, `done`. See `variant.py`.

### Rewards

Given when a hand ends (each hand in `episode="game"`, where the episode ends at game over):

| `reward`  | value for each player                                          |
|-----------|----------------------------------------------------------------|
| `margin`  | own hand points - opponent's hand points (default; zero-sum)   |
| `points`  | own hand points (standard points + bonuses)                    |
| `win`     | +1 hand won, -1 hand lost, 0 no winner (exhausted tie)         |

`infos[agent]["hand"]` holds the finished hand's `HandSummary` as a dict (credit, deadwood,
bonuses, hand points, game totals, game winner).

An illegal action (`docs/rewards.md`, which also derives the penalties): with
`illegal_action="raise"` (the raw env's default) `step` raises `IllegalActionError` naming
the legal moves and nothing changes; with `"terminate"` (`env()`'s default, PettingZoo's
convention for the classic envs) the episode ends, the mover gets `illegal_reward` (default
`illegal_penalty`: no better than the worst hand a legal policy can get) and the other seats
its zero-sum counterpart (0 in `points` mode); every `infos[agent]["illegal_action"]` names
the mover.

### Version History

* v0: Initial release (mountain-rummy-env 0.1.0).
"""

from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from pettingzoo import AECEnv
from pettingzoo.utils import turn_based_aec_to_parallel
from pettingzoo.utils.env import AECIterator
from pettingzoo.utils.env_logger import EnvLogger

from ..config import ConfigError
from ..core.state import EVENT_GAME_OVER
from ..game import Game, IllegalActionError
from ..variants.mountain import mountain_variant
from ..core.dispatch import FastCall
from . import observation as obs_mod
from .render import render_text

REWARD_MODES = ("margin", "points", "win")
OBSERVATION_LAYOUTS = ("flat", "planes")
ILLEGAL_ACTIONS = ("raise", "terminate")
RESET_OPTIONS = ("deck", "dealer", "scores", "hand_no", "next_decks")


def hand_rewards(summary, mode: str, num_players: int = 2) -> list[float]:
    """Per-seat reward for a finished hand (``summary``: HandSummary)."""
    pts = summary.hand_points
    if mode == "margin":
        return [float(pts[p] - sum(pts[q] for q in range(num_players) if q != p) / (num_players - 1))
                for p in range(num_players)]
    if mode == "points":
        return [float(pts[p]) for p in range(num_players)]
    if summary.winner < 0:
        return [0.0] * num_players
    return [1.0 if p == summary.winner else -1.0 / (num_players - 1) for p in range(num_players)]


def check_reward_mode(reward: str) -> None:
    if reward not in REWARD_MODES:
        raise ConfigError(f"reward must be one of {', '.join(map(repr, REWARD_MODES))}; got {reward!r}")


def illegal_penalty(variant, mode: str) -> float:
    """The default reward of a seat whose illegal action ends the episode: no better than the
    worst hand a legal policy can get in ``mode`` (the variant's bounds, docs/rewards.md),
    and never above -1, so ignoring the mask never pays."""
    worst = {"margin": variant.lowest_hand_margin(), "points": variant.lowest_hand_points(),
             "win": -1}[mode]
    return float(min(worst, -1))


def illegal_reward_for(variant, mode: str, illegal_action: str, illegal_reward) -> float:
    """Check an adapter's illegal-action options; returns the penalty to use. A chosen
    ``illegal_reward`` above the default would let an agent gain by ignoring the mask."""
    if illegal_action not in ILLEGAL_ACTIONS:
        raise ConfigError(f"illegal_action must be 'raise' or 'terminate'; got {illegal_action!r}")
    default = illegal_penalty(variant, mode)
    if illegal_reward is None:
        return default
    if isinstance(illegal_reward, bool) or not isinstance(illegal_reward, (int, float)) \
            or not illegal_reward <= default:
        raise ConfigError(f"illegal_reward must be a number <= {default:g} (the worst hand a legal "
                          f"policy can get with reward={mode!r}); got {illegal_reward!r}")
    return float(illegal_reward)


def forfeit_rewards(offender: int, penalty: float, mode: str, num_players: int = 2) -> list[float]:
    """Per-seat rewards when ``offender``'s illegal action ends the episode: ``penalty`` for
    it; in the zero-sum modes (``margin``, ``win``) the other seats share ``-penalty``, in
    ``points`` mode they get 0 (no hand was scored)."""
    share = 0.0 if mode == "points" else -penalty / (num_players - 1)
    return [penalty if p == offender else share for p in range(num_players)]


def reset_position(options: dict | None) -> dict:
    """``Game.reset`` keyword arguments from an env's ``reset(options=...)``: the
    ``RESET_OPTIONS`` it holds (other keys are ignored, as PettingZoo's ``api_test`` expects)."""
    options = options or {}
    return {name: options[name] for name in RESET_OPTIONS if name in options}


def observation_dtype(layout: str, obs_dtype) -> np.dtype:
    """Check an adapter's observation options; returns the observation dtype."""
    if layout not in OBSERVATION_LAYOUTS:
        raise ConfigError(f"observation_layout must be 'flat' or 'planes'; got {layout!r}")
    return obs_mod.obs_dtype_of(obs_dtype)


def observation_features(layout: str, obs_features, variant) -> str:
    """Check an adapter's ``obs_features`` option (:data:`observation.OBS_FEATURES`; a feature
    block needs the flat layout); returns it."""
    name = obs_mod.obs_features_of(obs_features, variant)
    if name != "none" and layout != "flat":
        raise ConfigError(f"obs_features={name!r} needs observation_layout='flat'; got {layout!r}")
    return name


def observation_box(variant, layout: str = "flat", dtype=np.float32,
                    obs_features: str = "none") -> spaces.Box:
    low, high = obs_mod.observation_bounds(variant, dtype=dtype, obs_features=obs_features)
    if layout == "planes":
        low = obs_mod.to_planes(low[None], variant)[0]
        high = obs_mod.to_planes(high[None], variant)[0]
    return spaces.Box(low=low, high=high, dtype=low.dtype)


class SeatEncoder:
    """The player views of a single game (``Game`` of batch 1) in an adapter's layout and
    dtype: ``encoder(seat)`` is a new array (the compiled encoder bound to the game's state)."""

    def __init__(self, game, layout: str, dtype, obs_features: str = "none"):
        self.game = game
        self.planes = layout == "planes"
        self._buf = np.zeros((1, obs_mod.observation_size(game.variant, obs_features)), dtype)
        self._features = None    # the solver block (obs_features="solver"), after the view
        if obs_features != "none":
            from ..solver_features import SolverFeatures
            self._features = SolverFeatures(game.variant, obs_features)
        self._view_size = obs_mod.observation_layout(game.variant).size
        self._players = np.zeros(1, np.int64)
        self._bound = None       # (states, the encoder bound to them and the buffers)

    def __getstate__(self):  # copies and pickles bind the encoder again on first use
        return {**self.__dict__, "_bound": None}

    def __call__(self, seat: int) -> np.ndarray:
        states = self.game.states
        if self._bound is None or self._bound[0] is not states:
            self._bound = (states, FastCall(obs_mod.encode_observations).bind(
                states, self.game.variant.spec_ref, self._players, self._buf))
        self._players[0] = seat
        self._bound[1]()
        if self._features is not None:
            self._features(states, self._players, self._buf, self._view_size)
        if self.planes:
            return obs_mod.to_planes(self._buf, self.game.variant)[0]
        return self._buf[0].copy()


class OrderedAgentIter(AECIterator):
    """``agent_iter`` of :class:`raw_env`: a ``step()`` or ``reset()`` must come between two
    agents (the check of PettingZoo's ``OrderEnforcingWrapper``)."""

    def __next__(self):
        agent = super().__next__()
        assert self.env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        self.env._has_updated = False
        return agent


def env_functions(raw_cls):
    """``(env, parallel_env)`` for an AEC class: ``env(**kwargs)`` is ``raw_cls`` playing like
    PettingZoo's classic envs (an illegal move ends the game: ``illegal_action="terminate"``
    unless given; the order and bounds checks are the class's own); ``parallel_env`` is
    ``turn_based_aec_to_parallel`` over it."""
    name = raw_cls.metadata["name"]

    def env(**kwargs):
        kwargs.setdefault("illegal_action", "terminate")
        return raw_cls(**kwargs)

    def parallel_env(**kwargs):
        return turn_based_aec_to_parallel(env(**kwargs))

    env.__doc__ = f"The {name} AEC env as PettingZoo's classic envs play (illegal moves terminate)."
    parallel_env.__doc__ = f"Parallel API over the {name} env (only the agent to act has a non-zero mask)."
    return env, parallel_env


class raw_env(AECEnv):
    metadata = {
        "name": "mountain_rummy_v0",
        "render_modes": ["human", "ansi"],
        "is_parallelizable": True,
        "render_fps": 1,
    }
    # the variant constructor ``factory(**config)``; each variant's root module subclasses
    # with its registry entry's (:mod:`.game_module`)
    variant_factory = staticmethod(mountain_variant)

    # read before the first reset(): an error saying so (as OrderEnforcingWrapper's)
    _SET_BY_RESET = frozenset({"rewards", "terminations", "truncations", "infos",
                               "agent_selection", "num_agents", "agents"})

    def __init__(self, render_mode: str | None = None, reward: str = "margin",
                 observation_layout: str = "flat", obs_dtype="float32",
                 illegal_action: str = "raise", illegal_reward: float | None = None,
                 obs_features: str = "none", **config):
        super().__init__()
        check_reward_mode(reward)
        self.obs_dtype = observation_dtype(observation_layout, obs_dtype)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}; got {render_mode!r}")
        self.variant = self.variant_factory(**config)
        self.obs_features = observation_features(observation_layout, obs_features, self.variant)
        self.game = Game(self.variant, 1)
        self.reward_mode = reward
        self.illegal_action = illegal_action
        self.illegal_reward = illegal_reward_for(self.variant, reward, illegal_action, illegal_reward)
        self.observation_layout = observation_layout
        self.render_mode = render_mode
        n = self.variant.num_players
        self.possible_agents = [f"player_{p}" for p in range(n)]
        self._seat = {a: p for p, a in enumerate(self.possible_agents)}
        self._episode_game = self.variant.config.episode == "game"
        A = self.variant.num_actions
        self.observation_spaces = {
            a: spaces.Dict({
                "observation": observation_box(self.variant, observation_layout, self.obs_dtype,
                                               self.obs_features),
                "action_mask": spaces.Box(0, 1, (A,), dtype=np.int8),
            }) for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(A) for a in self.possible_agents}
        low, high = obs_mod.observation_bounds(self.variant, clairvoyant=True)
        self.state_space = spaces.Box(low=low, high=high, dtype=np.float32)
        self._encoder = SeatEncoder(self.game, observation_layout, self.obs_dtype, self.obs_features)
        self._observed = {}              # agent -> its observation dict, until the next step
        self._state_buf = np.zeros((1, obs_mod.state_size(self.variant)), np.float32)
        self._np_random = None
        self._has_reset = False
        self._has_updated = False        # a step() or reset() since agent_iter's last agent
        self._rewarded = False           # self.rewards holds a finished hand's rewards
        self._current = 0                # the seat the rules wait for

    def __getattr__(self, name):
        if name in raw_env._SET_BY_RESET:
            raise AttributeError(f"{name} cannot be accessed before reset")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # ----------------------------------------------------------------------------------

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    @property
    def np_random(self) -> np.random.Generator:
        if self._np_random is None:
            self._np_random, _ = seeding.np_random()
        return self._np_random

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """New game; ``options`` may set a position (``RESET_OPTIONS``, see ``Game.reset``)."""
        position = reset_position(options)
        if seed is not None:
            self._np_random, _ = seeding.np_random(seed)
            game_seed = int(seed)
        else:
            game_seed = int(self.np_random.integers(2**62))
        self.game.reset(seed=game_seed, **position)
        self._has_reset = self._has_updated = True
        self._rewarded = False
        self._observed.clear()
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self._current = self.game.current_player(0)
        self.agent_selection = self.possible_agents[self._current]
        if self.render_mode == "human":
            self.render()

    def observe(self, agent):
        """``agent``'s observation dict, encoded on the first call after a step or reset."""
        obs = self._observed.get(agent)
        if obs is None:
            if not self._has_reset:
                EnvLogger.error_observe_before_reset()
            p = self._seat[agent]
            acting = (p == self._current and agent in self.terminations
                      and not self.terminations[agent])
            mask = self.game.masks[0].copy() if acting else np.zeros_like(self.game.masks[0])
            obs = self._observed[agent] = {"observation": self._encoder(p), "action_mask": mask}
        return dict(obs)

    def agent_iter(self, max_iter: int = 2**63):
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return OrderedAgentIter(self, max_iter)

    def state(self) -> np.ndarray:
        if not self._has_reset:
            EnvLogger.error_state_before_reset()
        obs_mod.encode_state(self.game.states, self.variant.spec_ref, self._state_buf)
        return self._state_buf[0].copy()

    def action_mask(self, agent=None) -> np.ndarray:
        agent = self.agent_selection if agent is None else agent
        return self.observe(agent)["action_mask"]

    def step(self, action) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        self._has_updated = True
        if not self.agents:
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        try:
            event = self.game.step_one(0, action)
        except IllegalActionError:  # nothing changed
            if not (isinstance(action, str) or self.action_spaces[agent].contains(action)):
                raise IllegalActionError(f"action {action!r} is not in the action space "
                                         f"{self.action_spaces[agent]}") from None
            if self.illegal_action == "raise":
                raise
            self._forfeit(agent)
            return
        self._observed.clear()
        self._cumulative_rewards[agent] = 0.0
        self.infos[agent] = {}
        if self._rewarded:
            self.rewards = dict.fromkeys(self.agents, 0.0)
            self._rewarded = False
        if event:   # the hand ended (EVENT_HAND_OVER or EVENT_GAME_OVER)
            self._hand_over(event)
        if not self.terminations[agent]:
            self._current = self.game.current_player(0)
            self.agent_selection = self.possible_agents[self._current]
        if self.render_mode == "human":
            self.render()

    def _hand_over(self, event: int) -> None:
        """Rewards and infos of the hand that just ended; the episode may end with it."""
        summary = self.game.summary(0)
        values = hand_rewards(summary, self.reward_mode, self.variant.num_players)
        for a in self.agents:
            self.rewards[a] = values[self._seat[a]]
            self.infos[a] = {"hand": summary.as_dict()}
        self._rewarded = True
        if event == EVENT_GAME_OVER or not self._episode_game:
            self.terminations = {a: True for a in self.agents}
        self._accumulate_rewards()

    def _forfeit(self, agent) -> None:
        """``illegal_action="terminate"``: the illegal move of ``agent`` ends the episode."""
        values = forfeit_rewards(self._seat[agent], self.illegal_reward, self.reward_mode,
                                 self.variant.num_players)
        self.rewards = {a: values[self._seat[a]] for a in self.agents}
        self.infos = {a: {"illegal_action": agent} for a in self.agents}
        self.terminations = {a: True for a in self.agents}
        self._cumulative_rewards[agent] = 0.0
        self._rewarded = True
        self._observed.clear()
        self._accumulate_rewards()

    def render(self):
        if not self._has_reset:
            EnvLogger.error_render_before_reset()
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = render_text(self.game, 0, self.possible_agents)
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


env, parallel_env = env_functions(raw_env)
