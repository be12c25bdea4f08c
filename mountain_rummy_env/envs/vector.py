"""``RummyVectorEnv``: a Gymnasium ``VectorEnv`` that steps N games at once on the batched core.

It is a thin adapter over :class:`mountain_rummy_env.game.Game` (one ``Game`` of batch N, not
N single envs): the learner's actions for all N games, and every opponent move in between,
are applied by one compiled call (:func:`advance`) that runs the same ``apply_action`` and
``legal_mask`` as every other adapter (resolved per variant by :mod:`core.batch`);
observations come from the shared batched
encoder (:func:`mountain_rummy_env.envs.observation.encode_observations`). Any variant works:
``mountain_rummy_v0.vector_env`` is ``RummyVectorEnv(mountain_variant(**config), ...)``, and
every registered variant's module has the same (:func:`vector_env_factory`).

## Agents and opponent

The learner controls one seat per game; the other seats are played *inside* the env by an
opponent policy, so the learner sees ordinary single-agent batches:

* ``opponent="random"`` (default): uniform over the legal actions, sampled in compiled code
  (:func:`sample_masked`) with a per-game splitmix64 generator seeded from the env seed;
* a callable ``policy(obs, mask) -> actions`` taking the observation batch (``(k, obs_size)``,
  from the acting opponent's point of view) and the int8 mask batch ``(k, num_actions)`` of
  the ``k`` games where an opponent is to move, returning ``k`` legal action ids. During the
  call ``env.opponent_games`` holds those games' indices (row ``j`` is game
  ``opponent_games[j]``), so a policy can pick a different opponent per game without
  searching the batched state.

``learner_seat``: an int (fixed seat), ``"rotate"`` (default: env ``i`` plays seat
``(i + k) % num_players`` in its ``k``-th episode) or ``"random"``.

## Spaces

* ``single_action_space = Discrete(num_actions)``, batched ``MultiDiscrete``.
* ``single_observation_space = Box(low, high, (observation_size,), float32)`` (``obs_dtype=
  "int8"`` gives the compact int8 encoding, a quarter of the memory: binary features 0/1,
  scaled ones ``round(127 x)`` in [-127, 127]; ``observation.observation_scale`` turns it back).
  ``obs_features="solver"`` appends the solver feature block (``docs/observation.md``;
  Mountain, German, Crazy) to every observation, the opponent callable's included; default ``"none"``.
* ``infos["action_mask"]``: ``(N, num_actions)`` int8, and :meth:`action_masks` returns the
  same as bool (sb3-contrib's convention).

## Rewards, episodes, autoreset

* Reward: whenever a hand ends (on the learner's move or inside the opponent's), the learner
  receives the margin of hand points, ``h_points[learner] - mean(h_points[others])`` (two
  seats: my points minus the opponent's; MR-12/MR-13 points including bonuses) -- the AEC
  env's ``reward="margin"``.
* ``episode="hand"`` (config): an episode is one hand; ``"game"``: hands until the target
  score, one reward per finished hand.  Episodes always *terminate* (an exhausted stock or
  ``max_turns`` is a scored end of hand); ``truncations`` are always ``False``.
* ``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``: a game whose episode ends is reset
  inside the same ``step``; the returned observation/mask are the new episode's first ones
  (after the opponent moved, if it opens), and ``infos["final_obs"]`` (object array, with
  ``infos["_final_obs"]``) holds the ended episode's last observation from the learner's seat.
  ``infos["final_info"]`` holds per-env arrays ``summary`` (``HandSummary.as_dict()``),
  ``seed`` (the ended episode's game seed, so ``Game.reset(seed=...)`` replays it),
  ``learner_seat`` and ``episode_return``, each with its ``_key`` mask.
* Seeding: ``reset(seed=s)`` starts game ``i`` with seed ``s + i`` (``Game.reset``'s
  convention); later episodes draw their game seeds from a generator seeded by ``s``.

Illegal actions (``docs/rewards.md``): ``illegal_action="raise"`` (default) raises
:class:`IllegalActionError` naming the first game with one, before any game changes;
``"terminate"`` ends the episode of each game with an illegal action, with reward
``illegal_reward`` (default :func:`~.aec.illegal_penalty` for ``reward="margin"``, no better
than the worst hand a legal policy can get), ``final_info["illegal_action"]`` set and no
summary; the other games step as usual.

A pathological corner: if a freshly dealt episode ends during the opponent's opening moves
(before the learner acted at all, e.g. an immediate camp), it is discarded and the game
re-dealt with a new seed and the same learner seat (``infos["skipped_episodes"]`` counts
these).
"""

from __future__ import annotations

from functools import cached_property
from typing import Callable

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space
from numba import njit

from ..core import batch
from ..core.spec import spec_of
from ..core.state import EVENT_GAME_OVER, PHASE_HAND_OVER
from ..game import Game, IllegalActionError
from .aec import illegal_reward_for, observation_box
from .observation import (
    encode_observations, obs_dtype_of, obs_features_of, observation_layout,
)

__all__ = ["RummyVectorEnv", "sample_masked", "advance", "vector_env_factory", "seed_rng"]


# --------------------------------------------------------------------------------------
# compiled kernels

@njit(cache=True)
def _next_random(rng, b):
    rng[b] = rng[b] + np.uint64(0x9E3779B97F4A7C15)
    z = rng[b]
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


SAMPLE_BLOCK = 64  # mask entries counted at once while looking for the k-th legal one


@njit(cache=True)
def _sample_row(mask_row, rng, b):
    """The k-th legal action of ``mask_row`` (k uniform below their number). The counts run
    as branch-free sums (vectorised); whole blocks of ``SAMPLE_BLOCK`` entries are skipped
    by their count, so only the block holding the action is walked entry by entry."""
    L = mask_row.shape[0]
    n = 0
    for a in range(L):
        n += mask_row[a] != 0
    if n == 0:
        return -1
    k = np.int64(_next_random(rng, b) % np.uint64(n))
    base = 0
    while base + SAMPLE_BLOCK <= L:
        cnt = 0
        for a in range(base, base + SAMPLE_BLOCK):
            cnt += mask_row[a] != 0
        if k < cnt:
            break
        k -= cnt
        base += SAMPLE_BLOCK
    for a in range(base, L):
        if mask_row[a] != 0:
            if k == 0:
                return a
            k -= 1
    return -1


@njit(cache=True)
def sample_masked(masks, rng, out):
    """``out[b]``: a uniformly random legal action of ``masks[b]`` (-1 if none), drawn from the
    splitmix64 stream ``rng[b]`` (uint64, advanced in place)."""
    for b in range(masks.shape[0]):
        out[b] = _sample_row(masks[b], rng, b)


@njit(cache=True)
def _hand_end(s, spec, learner, b, rewards, hand_over):
    P = spec.num_players   # the record's per-seat arrays may be padded past the seats in play
    others = 0.0
    for p in range(P):
        if p != learner:
            others += s.h_points[p]
    rewards[b] += s.h_points[learner] - others / (P - 1)
    hand_over[b] = 1


@njit(cache=True)
def advance(states, spec, masks, events, scratch, actions, learner, active, random_opp, rng,
            rewards, terminal, hand_over):
    """For every game ``b`` with ``active[b]``: apply ``actions[b]`` if it is >= 0 (legal, checked
    by the caller), then, if ``random_opp``, play uniformly random legal moves for the other
    seats until ``learner[b]`` is to move or the episode ended. A hand end adds the learner's
    point margin to ``rewards[b]`` and sets ``hand_over[b]``; an episode end (game over, or any
    hand end when ``spec.episode_game`` is off) sets ``terminal[b]``. Returns the number of
    actions applied. ``spec``: the record or ``Variant.spec_ref`` (core.spec.spec_of)."""
    spec = spec_of(spec)
    applied = 0
    for b in range(states.shape[0]):
        if not active[b] or terminal[b]:
            continue
        s = states[b]
        me = learner[b]
        a = actions[b]
        if a >= 0:
            ev = batch.apply_action(s, spec, a)
            batch.legal_mask(s, spec, masks[b], scratch)
            events[b] = ev
            applied += 1
            if ev != 0:
                _hand_end(s, spec, me, b, rewards, hand_over)
                if ev == EVENT_GAME_OVER or not spec.episode_game:
                    terminal[b] = 1
                    continue
        if random_opp:
            while s.current != me and s.phase < PHASE_HAND_OVER:
                a = _sample_row(masks[b], rng, b)
                ev = batch.apply_action(s, spec, a)
                batch.legal_mask(s, spec, masks[b], scratch)
                events[b] = ev
                applied += 1
                if ev != 0:
                    _hand_end(s, spec, me, b, rewards, hand_over)
                    if ev == EVENT_GAME_OVER or not spec.episode_game:
                        terminal[b] = 1
                        break
    return applied


def seed_rng(seed: int, n: int) -> np.ndarray:
    """Per-game splitmix64 states for the random opponent, from one seed."""
    return np.random.SeedSequence([int(seed), 0x5EED]).generate_state(n, np.uint64)


# --------------------------------------------------------------------------------------
# the vector env


class RummyVectorEnv(VectorEnv):
    """N games of ``variant`` against an in-env opponent; see the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, variant, num_envs: int = 1, *, seed: int | None = None,
                 opponent: str | Callable = "random", learner_seat: int | str = "rotate",
                 obs_dtype: str = "float32", copy: bool = True, illegal_action: str = "raise",
                 illegal_reward: float | None = None, obs_features: str = "none"):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if not (opponent == "random" or callable(opponent)):
            raise ValueError(f"opponent must be 'random' or a callable (obs, mask) -> actions; got {opponent!r}")
        P = variant.num_players
        if not (learner_seat in ("rotate", "random") or
                (isinstance(learner_seat, (int, np.integer)) and 0 <= learner_seat < P)):
            raise ValueError(f"learner_seat must be 'rotate', 'random' or a seat 0..{P - 1}; got {learner_seat!r}")
        self.obs_dtype = obs_dtype_of(obs_dtype)
        self.obs_features = obs_features_of(obs_features, variant)
        self._features = None
        if self.obs_features != "none":
            from ..solver_features import SolverFeatures
            # its own work space
            self._features = SolverFeatures(variant, self.obs_features)
        self._view_size = observation_layout(variant).size
        self.illegal_action = illegal_action
        self.illegal_reward = illegal_reward_for(variant, "margin", illegal_action, illegal_reward)
        self.variant = variant
        self._spec_ref = variant.spec_ref   # what the compiled calls take (core.spec.spec_of)
        self.num_envs = num_envs
        self.opponent = opponent
        self.learner_seat = learner_seat
        self.copy = copy
        self.render_mode = None
        self.game = Game(variant, num_envs)
        self.single_observation_space = observation_box(variant, dtype=self.obs_dtype,
                                                        obs_features=self.obs_features)
        self.single_action_space = spaces.Discrete(variant.num_actions)
        self.action_space = batch_space(self.single_action_space, num_envs)

        self._obs = np.zeros((num_envs,) + self.single_observation_space.shape, self.obs_dtype)
        self._learner = np.zeros(num_envs, np.int64)
        self._episode = np.zeros(num_envs, np.int64)      # episodes started per env
        self._seeds = np.zeros(num_envs, np.uint64)       # game seed of the running episode
        self._returns = np.zeros(num_envs, np.float64)
        self._rng = seed_rng(0, num_envs)
        self._seed_gen = np.random.default_rng()
        self._all = np.ones(num_envs, np.bool_)
        self._no_actions = np.full(num_envs, -1, np.int64)
        self.actions_applied = 0   # every action applied, both seats (for benchmarks)
        self.opponent_games = np.zeros(0, np.int64)   # games of the opponent callable's rows
        self._needs_reset = True
        self._init_seed = seed

    # ----------------------------------------------------------------------------------
    # gymnasium API

    @cached_property
    def observation_space(self) -> spaces.Box:
        """The batched space, built on first use: its bounds (low, high and two bool masks,
        one of each per feature and game) outweigh the env's own state, and a learner reads
        ``single_observation_space``."""
        return batch_space(self.single_observation_space, self.num_envs)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is None and self._init_seed is not None:
            seed, self._init_seed = self._init_seed, None
        if seed is None:
            seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
        self._np_random_seed = seed
        self._seed_gen = np.random.default_rng(np.random.SeedSequence([int(seed), 1]))
        self._rng = seed_rng(seed, self.num_envs)
        self._episode[:] = 0
        seeds = np.uint64(seed) + np.arange(self.num_envs, dtype=np.uint64)
        rewards, terminal, hand_over = self._buffers()
        idx = np.arange(self.num_envs)
        self._start(idx, seeds)
        skipped = self._settle(idx, rewards, terminal, hand_over)
        self._needs_reset = False
        obs = self._observe()
        infos = {"action_mask": self._out(self.game.masks),
                 "learner_seat": self._learner.copy()}
        if skipped:
            infos["skipped_episodes"] = skipped
        return obs, infos

    def step(self, actions):
        if self._needs_reset:
            raise RuntimeError("call reset() before step()")
        game = self.game
        actions = np.asarray(actions, dtype=np.int64).reshape(-1)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions, got {actions.shape[0]}")
        bad = (actions < 0) | (actions >= self.variant.num_actions)
        bad[~bad] = game.masks[np.flatnonzero(~bad), actions[~bad]] == 0
        rewards, terminal, hand_over = self._buffers()
        if bad.any():
            b = int(np.flatnonzero(bad)[0])
            if self.illegal_action == "raise":
                raise IllegalActionError(game.illegal_reason(b, int(actions[b])))
            actions = np.where(bad, -1, actions)
            rewards[bad] = self.illegal_reward     # the episode ends unplayed: advance skips it
            terminal[bad] = True
        self.actions_applied += advance(
            game.states, self._spec_ref, game.masks, game.events, game._scratch, actions,
            self._learner, self._all, self.opponent == "random", self._rng,
            rewards, terminal, hand_over)
        if self.opponent != "random":
            self._play_callable(self._all, rewards, terminal, hand_over)
        self._returns += rewards
        infos: dict = {}
        done = np.flatnonzero(terminal)
        if len(done):
            infos.update(self._finish(done, bad))
            rewards2, terminal2, hand_over2 = self._buffers()
            self._start(done, None)
            skipped = self._settle(done, rewards2, terminal2, hand_over2)
            if skipped:
                infos["skipped_episodes"] = skipped
        obs = self._observe()
        infos["action_mask"] = self._out(game.masks)
        infos["learner_seat"] = self._learner.copy()
        infos["hand_over"] = hand_over.astype(bool)
        return (obs, rewards.astype(np.float32),
                terminal.astype(bool), np.zeros(self.num_envs, bool), infos)

    def action_masks(self) -> np.ndarray:
        """Legal actions of every game for the learner to move, ``(N, num_actions)`` bool."""
        return self.game.masks.astype(bool)

    def close(self, **kwargs):
        pass

    # ----------------------------------------------------------------------------------
    # internals

    def _out(self, a):
        return a.copy() if self.copy else a

    def _observe(self):
        """Every learner's observation: encoded straight into a fresh array when the env
        hands out copies (one write of the batch instead of a write and a copy), else into
        the env's own buffer."""
        out = np.empty_like(self._obs) if self.copy else self._obs
        self._encode(self.game.states, self._learner, out)
        return out

    def _encode(self, states, players, out):
        """The views of seats ``players`` of ``states`` into ``out``, feature block included."""
        encode_observations(states, self._spec_ref, players, out)
        if self._features is not None:
            self._features(states, players, out, self._view_size)

    def _buffers(self):
        n = self.num_envs
        return np.zeros(n, np.float64), np.zeros(n, np.bool_), np.zeros(n, np.bool_)

    def _start(self, idx, seeds):
        """Deal new episodes in games ``idx`` and choose their learner seats."""
        P = self.variant.num_players
        if seeds is None:
            seeds = self._seed_gen.integers(0, 2 ** 63, size=len(idx), dtype=np.uint64)
        self._seeds[idx] = seeds
        self.game.reset(seeds, index=idx)
        if self.learner_seat == "rotate":
            self._learner[idx] = (idx + self._episode[idx]) % P
        elif self.learner_seat == "random":
            self._learner[idx] = self._seed_gen.integers(0, P, size=len(idx))
        else:
            self._learner[idx] = int(self.learner_seat)
        self._episode[idx] += 1
        self._returns[idx] = 0.0

    def _settle(self, idx, rewards, terminal, hand_over) -> int:
        """Let the opponent open in the freshly dealt games ``idx``; re-deal any that end
        before the learner moved (the pathological corner of the module docstring)."""
        skipped = 0
        active = np.zeros(self.num_envs, np.bool_)
        active[idx] = True
        while True:
            self.actions_applied += advance(
                self.game.states, self._spec_ref, self.game.masks, self.game.events,
                self.game._scratch, self._no_actions, self._learner, active,
                self.opponent == "random", self._rng, rewards, terminal, hand_over)
            if self.opponent != "random":
                self._play_callable(active, rewards, terminal, hand_over)
            again = np.flatnonzero(terminal & active)
            if not len(again):
                return skipped
            skipped += len(again)
            terminal[again] = False
            rewards[again] = 0.0
            active[:] = False
            active[again] = True
            self._episode[again] -= 1   # the same seat again
            self._start(again, None)

    def _play_callable(self, active, rewards, terminal, hand_over):
        """Opponent moves from a Python policy, one batched call per opponent action."""
        game = self.game
        actions = np.full(self.num_envs, -1, np.int64)
        step_active = np.zeros(self.num_envs, np.bool_)
        while True:
            st = game.states
            need = active & ~terminal & (st["current"] != self._learner) & (st["phase"] < PHASE_HAND_OVER)
            idx = np.flatnonzero(need)
            if not len(idx):
                return
            sub = st[idx]
            obs = np.zeros((len(idx), self._obs.shape[1]), self.obs_dtype)
            self._encode(sub, sub["current"].astype(np.int64), obs)
            masks = game.masks[idx]
            self.opponent_games = idx
            acts = np.asarray(self.opponent(obs, masks), dtype=np.int64).reshape(-1)
            if acts.shape != (len(idx),) or (acts < 0).any() or (acts >= self.variant.num_actions).any() \
                    or (masks[np.arange(len(idx)), acts] == 0).any():
                raise IllegalActionError(f"opponent policy returned illegal actions {acts[:8]!r}")
            actions[:] = -1
            actions[idx] = acts
            step_active[:] = False
            step_active[idx] = True
            self.actions_applied += advance(
                st, self._spec_ref, game.masks, game.events, game._scratch, actions, self._learner,
                step_active, False, self._rng, rewards, terminal, hand_over)

    def _finish(self, done, illegal) -> dict:
        """Same-step autoreset infos for the games ``done`` (before they are re-dealt);
        ``illegal[b]``: game ``b`` ended by an illegal action (no hand summary)."""
        n = self.num_envs
        final = np.zeros((len(done), self._obs.shape[1]), self.obs_dtype)
        self._encode(self.game.states[done], self._learner[done], final)
        final_obs = np.empty(n, dtype=object)
        summary = np.empty(n, dtype=object)
        mask = np.zeros(n, bool)
        mask[done] = True
        for k, b in enumerate(done):
            final_obs[b] = final[k]
        scored = done[~illegal[done]]
        for b, hand in zip(scored.tolist(), self.game.summaries(scored)):
            summary[b] = hand.as_dict()
        final_info = {
            "summary": summary, "_summary": mask.copy(),
            "illegal_action": illegal.copy(), "_illegal_action": mask.copy(),
            "seed": self._seeds.copy(), "_seed": mask.copy(),
            "learner_seat": self._learner.copy(), "_learner_seat": mask.copy(),
            "episode_return": self._returns.copy(), "_episode_return": mask.copy(),
        }
        return {"final_obs": final_obs, "_final_obs": mask.copy(),
                "final_info": final_info, "_final_info": mask.copy()}


def vector_env_factory(make_variant: Callable, title: str | None = None) -> Callable:
    """``vector_env(num_envs=1, seed=None, opponent="random", learner_seat="rotate", **config)``
    for a variant constructor ``make_variant(**config)``; ``title`` names the game in its
    docstring (each registered variant's: :mod:`.game_module`)."""

    def vector_env(num_envs: int = 1, seed: int | None = None, opponent="random",
                   learner_seat="rotate", obs_dtype: str = "float32", copy: bool = True,
                   illegal_action: str = "raise", illegal_reward: float | None = None,
                   obs_features: str = "none", **config) -> RummyVectorEnv:
        return RummyVectorEnv(make_variant(**config), num_envs, seed=seed, opponent=opponent,
                              learner_seat=learner_seat, obs_dtype=obs_dtype, copy=copy,
                              illegal_action=illegal_action, illegal_reward=illegal_reward,
                              obs_features=obs_features)

    title = title or getattr(make_variant, "__name__", "the variant")
    vector_env.__doc__ = (f"Gymnasium VectorEnv of {title} games; see "
                          ":class:`mountain_rummy_env.envs.vector.RummyVectorEnv`.")
    return vector_env
