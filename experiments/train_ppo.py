"""Train a MaskablePPO policy for Mountain Rummy or Gin on the batched vector env.

One readable file in the CleanRL spirit: every hyper-parameter is a flag (``--help``).

* Env: ``<variant>.vector_env(num_envs)`` (N games in one batched core) through the SB3
  ``VecEnv`` adapter with ``action_masks()``; the learner's seat rotates per episode; one
  episode is one hand; the reward is the hand-point margin (``--reward margin``, scaled by
  ``--reward-scale``) or the sign of it (``--reward win``).
* Opponents: a pool (``--opponents random:1,greedy:1,self:2``). Each game draws an opponent
  for every new hand: a baseline agent (``agents.make_agent`` spec, acting on a
  ``PlayerView`` it builds for that game and seat) or ``self``, a frozen snapshot of the
  learner (the last ``--league-size`` snapshots, one taken every ``--snapshot-every`` steps;
  snapshot opponents sample from their policy and act on the observation batch directly).
* Action guard (``--guard rules-hold``, Mountain): the learner's mask leaves out the melds
  and layoffs the ``rules`` player would hold this turn, so its hold-or-place decision is
  the rules player's and the network learns the rest (:func:`agents.ppo.hold_guard`); the
  teacher's recorded masks, the self-play snapshots and the saved policy use it too.
* Adviser (``--hint rules``, ``rules-shortlist`` or ``rules-slots``): the rules player's
  move for the learner's position is appended to its observation, and the policy's logit
  for that move gets a learned bonus (``--hint-weight`` to start): the policy starts as the
  rules player and PPO learns where to differ. ``rules-shortlist`` (Mountain) also narrows
  the learner's choice to the moves the search would weigh
  (:meth:`agents.search.SearchAgent.slots`); ``rules-slots`` shows them as more columns,
  in fixed places, each with a bonus from the network. One adviser per game watches the
  hand from the learner's seat (:class:`Advisers`), as the ``ppo`` agent's does in play;
  the checkpoint records the hint.
* Duplicate baseline (``--reward-baseline rules``): each hand's margin less the margin
  the rules player makes in the learner's seat on the same deal against the same opponent
  (:class:`DuplicateBaseline`), so the reward measures the learner's own choices.
* Evaluation every ``--eval-every`` steps: the current policy against each
  ``--eval-opponents`` baseline on the same ``--eval-deals`` duplicate deals as
  ``experiments/tournament.py`` (``play_deal``: each deal played twice with the seats
  swapped); results appended to ``eval.csv``, logged to TensorBoard and drawn in
  ``learning_curve.png`` (win rate and margin against env steps, one line per baseline).
* Behaviour-cloning warm start (``--bc-teacher rules``; off by default): before PPO the
  teacher (any ``make_agent`` spec) plays ``--bc-hands`` hands against ``--bc-opponents``
  (``teacher`` = a second teacher, both seats recorded); at every teacher decision with more
  than one legal move the trainer records the observation of that seat (the shared encoder
  the policy sees), the action mask, the teacher's move and the hand's reward for that seat.
  The policy's actor is trained on it with masked cross-entropy and its critic on the hand
  reward (MSE x ``--bc-value-coef``) for ``--bc-epochs`` passes (Adam, ``--bc-lr``; 5% of
  the moves held out to report accuracy). ``--bc-dagger N`` adds N DAgger rounds: the
  clone plays ``--bc-dagger-hands`` hands, the teacher labels the clone's decisions, and the
  policy is retrained on everything (half the epochs). Accuracies go to the log and
  ``bc_stats.json``, the clone to ``bc.pt``, its evaluation to ``eval.csv`` at step 0.
* Outputs in ``--run-dir``: ``policy.pt`` (latest policy, the safe format of
  :mod:`agents.ppo`: play it with ``ppo:path=RUN/policy.pt``), ``best.pt`` (best evaluated
  margin against the last eval opponent), ``checkpoint.zip`` + ``state.json`` +
  ``league/`` (for ``--resume``; the SB3 zip is for resuming your own runs only -- it is a
  pickle), ``tb/`` (TensorBoard), ``eval.csv``, ``learning_curve.png``, ``args.json``.

    python -m experiments.train_ppo --variant mountain --total-steps 2000000 --run-dir runs/ppo/mountain
    python -m experiments.train_ppo --bc-teacher rules --bc-hands 8000 --bc-dagger 1 ...  # warm start
    (the command of the shipped agents/policies/mountain.pt: docs/training.md)
    tensorboard --logdir runs/ppo/mountain/tb
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np

DEFAULT_OPPONENTS = {"mountain": "random:1,greedy:1,self:2", "gin": "random:1,self:2"}
HINTED_OPPONENTS = {"mountain": "rules:3,greedy:1", "gin": "rules:3,random:1"}   # no self-play
DEFAULT_EVAL = {"mountain": "random,greedy", "gin": "random"}


def _variant_default(p, table: dict, variant: str, flag: str) -> str:
    """``table``'s default for ``variant``; for a registered variant it has none, a usage
    error naming the variants it has defaults for."""
    if variant not in table:
        p.error(f"{flag} has no default for --variant {variant} (only for {', '.join(table)}); "
                f"give {flag}")
    return table[variant]


def parse_args(argv=None):
    from mountain_rummy_env.envs.observation import OBS_DTYPES
    from mountain_rummy_env.registry import DEFAULT_VARIANT, variant_names

    p = argparse.ArgumentParser(prog="python -m experiments.train_ppo",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("run")
    g.add_argument("--variant", choices=variant_names(), default=DEFAULT_VARIANT)
    g.add_argument("--variant-options", default="{}", help="JSON dict of variant config options")
    g.add_argument("--run-dir", default=None, help="output folder (default runs/ppo/<variant>)")
    g.add_argument("--total-steps", type=int, default=2_000_000, help="learner env steps in all")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoint.zip")
    g.add_argument("--threads", type=int, default=1, help="torch CPU threads (0: torch default; more threads than free cores is much slower)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("env and opponents")
    g.add_argument("--num-envs", type=int, default=32, help="games stepped together")
    g.add_argument("--obs-dtype", choices=OBS_DTYPES, default="float32",
                   help="observation dtype of the env and the rollout buffer: int8 takes a "
                        "quarter of the memory (scaled features enter the network as "
                        "round(127 x)); recorded in the checkpoint, which plays with the same")
    g.add_argument("--reward", choices=("margin", "win"), default="margin",
                   help="per hand: point margin, or +1/0/-1 by its sign")
    g.add_argument("--reward-scale", type=float, default=0.01, help="multiplies the margin reward")
    g.add_argument("--reward-baseline", choices=("none", "rules"), default="none",
                   help="rules: from each hand's margin subtract the margin the rules player makes "
                        "in the learner's seat on the same deal against the same opponent (a "
                        "duplicate replay, DuplicateBaseline): the deal's luck leaves the reward, "
                        "the learner's own choices stay (--reward margin; no 'self' opponents)")
    g.add_argument("--opponents", default=None,
                   help="pool as spec:weight,...; 'self' = league snapshots "
                        f"(default {DEFAULT_OPPONENTS})")
    g.add_argument("--guard", choices=("none", "rules-hold"), default="none",
                   help="action guard (agents.ppo.GUARDS): rules-hold leaves the hold-or-place "
                        "decision to the rules player's hold policy (Mountain); recorded in "
                        "the checkpoint and applied wherever the policy plays")
    g.add_argument("--hint", choices=("none", "rules", "rules-shortlist", "rules-slots"), default="none",
                   help="adviser (agents.ppo.HINTS): the rules player's move for the learner's "
                        "position is one more observation column and its logit gets a learned "
                        "bonus, so the policy starts as the rules player and learns corrections; "
                        "rules-shortlist (Mountain) also narrows the choice to the moves the "
                        "search would weigh; rules-slots also shows those moves in fixed places, "
                        "each with a bonus from the network; recorded in the checkpoint (default opponents then "
                        f"{HINTED_OPPONENTS}; no 'self', no --bc-teacher)")
    g.add_argument("--hint-weight", type=float, default=5.0,
                   help="initial logit bonus of the adviser's move (learned from there)")
    g.add_argument("--snapshot-every", type=int, default=50_000, help="steps between league snapshots")
    g.add_argument("--league-size", type=int, default=8, help="snapshots kept in the league")
    g = p.add_argument_group("PPO")
    g.add_argument("--learning-rate", type=float, default=3e-4)
    g.add_argument("--anneal-lr", type=int, default=1, help="1: decay the learning rate linearly to 0")
    g.add_argument("--n-steps", type=int, default=128, help="rollout length per env")
    g.add_argument("--batch-size", type=int, default=512, help="minibatch size")
    g.add_argument("--n-epochs", type=int, default=4)
    g.add_argument("--gamma", type=float, default=0.995)
    g.add_argument("--gae-lambda", type=float, default=0.95)
    g.add_argument("--clip-range", type=float, default=0.2)
    g.add_argument("--ent-coef", type=float, default=0.01)
    g.add_argument("--vf-coef", type=float, default=0.5)
    g.add_argument("--max-grad-norm", type=float, default=0.5)
    g.add_argument("--target-kl", type=float, default=None)
    g.add_argument("--net-arch", default="256,256", help="hidden widths (actor and critic)")
    g.add_argument("--activation", choices=("tanh", "relu"), default="tanh")
    g = p.add_argument_group("behaviour-cloning warm start (before PPO; off unless --bc-teacher)")
    g.add_argument("--bc-teacher", default="", help="make_agent spec of the teacher ('' = no warm start)")
    g.add_argument("--bc-hands", type=int, default=4000, help="teacher hands recorded")
    g.add_argument("--bc-opponents", default="teacher:2,greedy:1,random:1",
                   help="the teacher's opponents while recording, spec:weight ('teacher' = a second "
                        "teacher, both seats recorded)")
    g.add_argument("--bc-epochs", type=int, default=6, help="passes over the recorded moves")
    g.add_argument("--bc-lr", type=float, default=1e-3, help="Adam learning rate of the warm start")
    g.add_argument("--bc-batch-size", type=int, default=512)
    g.add_argument("--bc-value-coef", type=float, default=0.5,
                   help="weight of the critic's regression on the (scaled) hand margin; 0: actor only")
    g.add_argument("--bc-dagger", type=int, default=0,
                   help="DAgger rounds after cloning: the cloned policy plays --bc-dagger-hands hands, "
                        "the teacher labels its moves, retrain on all data (half the epochs)")
    g.add_argument("--bc-dagger-hands", type=int, default=1000)
    g = p.add_argument_group("evaluation and checkpoints")
    g.add_argument("--eval-every", type=int, default=100_000, help="steps between evaluations (0: off)")
    g.add_argument("--eval-deals", type=int, default=50, help="duplicate deals per baseline")
    g.add_argument("--eval-seed", type=int, default=10_000, help="first deal seed (fixed deals)")
    g.add_argument("--eval-opponents", default=None, help=f"baselines (default {DEFAULT_EVAL})")
    g.add_argument("--checkpoint-every", type=int, default=100_000, help="steps between resumable checkpoints")
    args = p.parse_args(argv)
    if args.guard != "none" and args.variant != "mountain":
        p.error(f"--guard {args.guard} is a Mountain hold policy; --variant {args.variant} has none")
    if args.hint != "none":
        if args.hint in ("rules-shortlist", "rules-slots") and args.variant != "mountain":
            p.error(f"--hint {args.hint} uses the Mountain search's candidate moves")
        if args.opponents is None:
            args.opponents = _variant_default(p, HINTED_OPPONENTS, args.variant, "--opponents")
        if "self" in (spec for spec, _ in parse_pool(args.opponents)):
            p.error("--hint: self-play snapshots would need an adviser of their own; "
                    "give --opponents without 'self'")
        if args.bc_teacher:
            p.error("--hint starts from the adviser's play already; drop --bc-teacher")
    if args.opponents is None:
        _variant_default(p, DEFAULT_OPPONENTS, args.variant, "--opponents")
    if args.eval_opponents is None:
        _variant_default(p, DEFAULT_EVAL, args.variant, "--eval-opponents")
    if args.reward_baseline != "none":
        if args.reward != "margin":
            p.error("--reward-baseline compares point margins; use --reward margin")
        if "self" in (spec for spec, _ in parse_pool(args.opponents or DEFAULT_OPPONENTS[args.variant])):
            p.error("--reward-baseline replays each deal against the same opponent; "
                    "give --opponents without 'self'")
    return args


# ---------------------------------------------------------------------------------------
# opponents


def parse_pool(text: str) -> list[tuple[str, float]]:
    pool = []
    for item in text.split(","):
        spec, _, w = item.strip().rpartition(":")
        if not spec or not _is_number(w):
            spec, w = item.strip(), "1"
        pool.append((spec, float(w)))
    if not pool or sum(w for _, w in pool) <= 0:
        raise SystemExit(f"--opponents {text!r}: no opponent with positive weight")
    return pool


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


class OpponentPool:
    """The vector env's opponent callable ``(obs, masks) -> actions``.

    Every game gets an opponent from the pool at each new hand. The env hands over only the
    observation and mask batch of the games where an opponent is to move; this adapter finds
    those games in the env's batched state (same rule as the env: an opponent seat is to
    move and the hand is running) so baseline agents can be given a ``PlayerView``.
    """

    def __init__(self, pool, seed: int):
        self.specs = [s for s, _ in pool]
        w = np.array([w for _, w in pool], np.float64)
        self.weights = w / w.sum()
        self.rng = np.random.default_rng(seed)
        self.seed = seed
        self.league: list = []          # frozen actors (self-play snapshots)
        self.env = None
        self.guard = None               # the learner's action guard, snapshots play under it

    def bind(self, env):
        self.env = env
        n = env.num_envs
        self.assigned = [None] * n      # (spec, agent or snapshot index) per game
        self.hand_key = [None] * n
        self._agents: dict = {}

    def _agent(self, b: int, spec: str):
        from agents import make_agent

        key = (b, spec)
        if key not in self._agents:
            self._agents[key] = make_agent(spec, seed=[self.seed, b, len(self._agents)])
        return self._agents[key]

    def _assign(self, b: int):
        spec = self.specs[self.rng.choice(len(self.specs), p=self.weights)]
        if spec == "self":
            if not self.league:
                spec = next((s for s in self.specs if s != "self"), "random")
            else:
                return ("self", int(self.rng.integers(len(self.league))))
        agent = self._agent(b, spec)
        agent.reset()
        return (spec, agent)

    def opponent_of(self, b: int):
        """``(spec, agent or snapshot index)`` of game ``b``'s running hand, drawn at its first
        call in the hand."""
        key = running_hand(self.env, b)
        if self.hand_key[b] != key:
            self.hand_key[b] = key
            self.assigned[b] = self._assign(b)
        return self.assigned[b]

    def __call__(self, obs, masks):
        from mountain_rummy_env.core.state import PHASE_HAND_OVER
        from mountain_rummy_env.game import player_view

        from agents.ppo import masked_logits, pick

        env = self.env
        st = env.game.states
        need = (st["current"] != env._learner) & (st["phase"] < PHASE_HAND_OVER)
        idx = np.flatnonzero(need)
        if len(idx) != len(obs):
            raise RuntimeError(f"opponent adapter found {len(idx)} games to move, env gave {len(obs)}")
        actions = np.zeros(len(idx), np.int64)
        snap_rows: dict = {}
        for k, b in enumerate(idx):
            spec, who = self.opponent_of(b)
            if spec == "self":
                snap_rows.setdefault(who, []).append(k)
            else:
                actions[k] = who.act(player_view(env.game, int(b), int(st["current"][b])), masks[k])
        for snap, rows in snap_rows.items():
            rows = np.array(rows)
            allowed = guarded_masks(self.guard, env, idx[rows], masks[rows])
            actions[rows] = pick(masked_logits(self.league[snap], obs[rows], allowed), self.rng)
        return actions


def running_hand(env, b: int) -> tuple[int, int]:
    """A key of game ``b``'s running hand in the vector env (episodes started, deal seed):
    it changes exactly when a new hand is dealt there."""
    return int(env._episode[b]), int(env._seeds[b])


def guarded_masks(guard, env, games, masks):
    """``masks`` (a row per game of ``games`` in the vector env) through the action ``guard``
    (None: unchanged), each for the seat to move. Only rows with a legal meld, regroup or
    layoff are looked at: the guards of :data:`agents.ppo.GUARDS` only remove those."""
    if guard is None:
        return masks
    from mountain_rummy_env import player_view

    lay = env.variant.layout
    out = masks.copy()
    current = env.game.states["current"]
    for k in np.flatnonzero(masks[:, lay.meld:lay.discard].any(axis=1)):
        b = int(games[k])
        out[k] = guard(player_view(env.game, b, int(current[b])), masks[k])
    return out


# ---------------------------------------------------------------------------------------
# env, model, policy export


def make_venv(args, opponent):
    from mountain_rummy_env.envs.sb3_vec import SB3VecEnv
    from mountain_rummy_env.registry import variant_info

    from agents.ppo import GUARDS, HINTS

    module = variant_info(args.variant).import_env_module()
    opts = json.loads(args.variant_options)     # episodes: the variant's default, one hand
    venv = module.vector_env(num_envs=args.num_envs, seed=args.seed, opponent=opponent,
                             learner_seat="rotate", obs_dtype=args.obs_dtype, **opts)
    opponent.bind(venv)
    guard = opponent.guard = GUARDS[args.guard]
    every_game = np.arange(venv.num_envs)
    advisers = None if HINTS[args.hint] is None else Advisers(HINTS[args.hint], venv, args.seed)
    baseline = None if args.reward_baseline == "none" else \
        DuplicateBaseline(venv, opponent, args.reward_baseline, args.seed)

    class RewardShaped(SB3VecEnv):
        def __init__(self, venv):
            super().__init__(venv)
            self.advisers = advisers
            if advisers is not None:
                self.observation_space = advisers.observation_space(self.observation_space)

        def reset(self):
            return self._hinted(super().reset())

        def step_async(self, actions):
            if advisers is not None:
                advisers.played(actions)
            if baseline is not None:
                baseline.note_hands()
            super().step_async(actions)

        def step_wait(self):
            obs, rew, dones, infos = super().step_wait()
            if baseline is not None:
                for b in np.flatnonzero(dones):
                    infos[b]["baseline_margin"] = ref = baseline.margin(b)
                    rew[b] -= ref
            rew = np.sign(rew) if args.reward == "win" else rew * args.reward_scale
            if advisers is not None:
                for info in infos:
                    if "terminal_observation" in info:   # the critic's input only: no adviser
                        info["terminal_observation"] = np.append(
                            info["terminal_observation"], np.zeros(advisers.hint.id_columns, np.float32))
            return self._hinted(obs), rew.astype(np.float32), dones, infos

        def action_masks(self):
            if advisers is not None and advisers.masks is not None:
                return advisers.masks
            return guarded_masks(guard, venv, every_game, super().action_masks())

        def _hinted(self, obs):
            if advisers is None:
                return obs
            advisers.masks = None
            return np.concatenate([obs, advisers.advise(self.action_masks())], axis=1)

    return RewardShaped(venv)


class DuplicateBaseline:
    """The margin a reference player (``spec``, e.g. ``rules``) makes in the learner's seat
    on the deal of each game's running hand, against that hand's opponent (a fresh copy of
    its spec; the baselines are deterministic), played out on a side game. Subtracted from
    the learner's margin (``--reward-baseline``), it leaves the reward at 0 for a learner
    that plays as the reference does, and puts the deal's luck out of the signal."""

    def __init__(self, env, pool, spec: str, seed: int):
        from mountain_rummy_env import Game

        self.env, self.pool, self.spec, self.seed = env, pool, spec, seed
        self.game = Game(env.variant, 1)
        self.hands = [None] * env.num_envs     # (deal seed, learner seat, opponent spec)

    def note_hands(self) -> None:
        """Record each game's running hand before the step that may end it."""
        env = self.env
        for b in range(env.num_envs):
            self.hands[b] = (int(env._seeds[b]), int(env._learner[b]), self.pool.opponent_of(b)[0])

    def margin(self, b: int) -> float:
        """The reference's margin on game ``b``'s last noted hand."""
        from agents import make_agent
        from experiments.play import play_hand

        seed, seat, opp = self.hands[b]
        name = self.env.variant.name
        players = [None, None]
        players[seat] = make_agent(self.spec, seed=[self.seed, 1], variant=name)
        players[1 - seat] = make_agent(opp, seed=[self.seed, 2], variant=name)
        points = play_hand(self.game, players, seed=seed).hand_points
        return float(points[seat] - points[1 - seat])


class Advisers:
    """The id columns of a hinted policy (``--hint``): per game, an adviser (an
    :class:`agents.ppo.Hint`) for the learner's seat, reset at every new hand, asked for its
    move (and shortlist: ``masks``) at every learner decision on the learner's (guarded)
    mask and told the move the learner played -- as :class:`agents.ppo.PPOAgent` does in play."""

    def __init__(self, hint, env, seed: int):
        from agents import make_agent

        self.env, self.hint = env, hint
        n = env.num_envs
        self.agents = [make_agent(hint.spec, seed=[seed, b, 17], variant=env.variant.name)
                       for b in range(n)]
        self.hand_key = [None] * n
        self.views = [None] * n
        self.masks = None       # the learner's masks narrowed to the shortlists

    def observation_space(self, space):
        """``space`` with the hint's id columns: action ids, -1 for an empty slot."""
        from gymnasium import spaces

        k, n_act = self.hint.id_columns, self.env.variant.num_actions
        return spaces.Box(np.append(space.low, [0] + [-1] * (k - 1)).astype(np.float32),
                          np.append(space.high, [n_act - 1] * k).astype(np.float32), dtype=np.float32)

    def advise(self, masks) -> np.ndarray:
        """The id columns (:func:`agents.ppo.advise`) for the learner's positions (``masks``:
        its legal masks); with a shortlist hint, ``self.masks`` becomes the narrowed masks."""
        from mountain_rummy_env import player_view

        from agents.ppo import advise

        env = self.env
        out = np.zeros((len(masks), self.hint.id_columns), np.float32)
        narrowed = masks.copy()
        for b, agent in enumerate(self.agents):
            key = running_hand(env, b)
            if self.hand_key[b] != key:
                self.hand_key[b] = key
                agent.reset()
            self.views[b] = player_view(env.game, b, int(env._learner[b]))
            out[b], narrowed[b] = advise(agent, self.hint, self.views[b], masks[b])
        if self.hint.shortlist:
            self.masks = narrowed
        return out

    def played(self, actions) -> None:
        for agent, view, a in zip(self.agents, self.views, actions):
            agent.remember(view, int(a))


def export_actor(model, args):
    """The SB3 policy's actor as a standalone :func:`agents.ppo_nets.build_actor` network."""
    from agents.ppo_nets import build_actor

    from agents.ppo import HINTS

    pol = model.policy
    hint = HINTS[args.hint]
    columns, slots = (0, 0) if hint is None else (hint.id_columns, hint.slots)
    actor = build_actor(pol.observation_space.shape[0] - columns, pol.action_space.n,
                        [int(w) for w in args.net_arch.split(",")], args.activation,
                        hint is not None, slots)
    actor.body.load_state_dict(pol.mlp_extractor.policy_net.state_dict())
    actor.head.load_state_dict(pol.action_net.state_dict())
    actor.eval()
    return actor


def policy_meta(venv, args, steps: int) -> dict:
    from agents.ppo import variant_options

    v = venv.venv.variant
    return {"variant": v.name, "variant_options": variant_options(v),
            "observation_size": int(venv.venv.single_observation_space.shape[0]),
            "num_actions": int(venv.action_space.n),
            "net_arch": [int(w) for w in args.net_arch.split(",")],
            "activation": args.activation, "env_steps": int(steps), "guard": args.guard,
            "hint": args.hint, "obs_dtype": args.obs_dtype}


# ---------------------------------------------------------------------------------------
# evaluation


def evaluate(policy_path: Path, args, opponents, deals: int) -> list[dict]:
    """Duplicate deals of the tournament (``play_deal``) against each baseline."""
    from experiments.tournament import play_deal

    cfg = {"variant": args.variant, "variant_options": json.loads(args.variant_options),
           "seed": args.eval_seed}
    me = f"ppo:path={policy_path}"
    out = []
    for opp in opponents:
        rows = [play_deal(cfg, me, opp, args.eval_seed + k) for k in range(deals)]
        m = np.array([r["margin"] for r in rows], np.float64)
        w = np.array([r["outcome"] for r in rows], np.float64)
        out.append({"opponent": opp, "deals": deals, "win_rate": float(w.mean()),
                    "margin": float(m.mean()),
                    "margin_se": float(m.std(ddof=1) / math.sqrt(len(m))) if len(m) > 1 else 0.0})
    return out


EVAL_FIELDS = ["env_steps", "wall_s", "opponent", "deals", "win_rate", "margin", "margin_se"]


def plot_curve(csv_path: Path, png_path: Path) -> None:
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    with csv_path.open() as fh:
        rows = list(csv.DictReader(fh))
    if not rows:
        return
    fig = Figure(figsize=(11, 4))
    axes = fig.subplots(1, 2)
    for opp in dict.fromkeys(r["opponent"] for r in rows):
        rs = [r for r in rows if r["opponent"] == opp]
        x = [int(r["env_steps"]) for r in rs]
        axes[0].plot(x, [float(r["win_rate"]) for r in rs], marker="o", label=f"vs {opp}")
        m = np.array([float(r["margin"]) for r in rs])
        se = np.array([float(r["margin_se"]) for r in rs])
        axes[1].plot(x, m, marker="o", label=f"vs {opp}")
        axes[1].fill_between(x, m - 1.96 * se, m + 1.96 * se, alpha=0.2)
    axes[0].axhline(0.5, color="grey", lw=0.8, ls="--")
    axes[1].axhline(0.0, color="grey", lw=0.8, ls="--")
    axes[0].set(xlabel="env steps", ylabel="deal win rate", title="duplicate deals: win rate", ylim=(0, 1))
    axes[1].set(xlabel="env steps", ylabel="mean hand-point margin per deal", title="margin (95% CI)")
    for ax in axes:
        ax.legend()
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(png_path, dpi=100)


# ---------------------------------------------------------------------------------------
# behaviour-cloning warm start


def collect_teacher_moves(variant, teacher: str, opponents, hands: int, seed: int, *,
                          reward: str = "margin", reward_scale: float = 0.01, student=None,
                          guard=None, obs_dtype: str = "float32") -> dict:
    """Play ``hands`` hands of ``teacher`` (a ``make_agent`` spec; its seat alternates)
    against opponents drawn from ``opponents`` (``[(spec, weight)]``, ``"teacher"`` = a
    second copy of the teacher, both of whose seats are recorded) and record, at every
    teacher decision with more than one legal action, the observation of that seat (the
    shared encoder, float16), the action mask, the teacher's action and the hand's reward
    for that seat (``reward``/``reward_scale`` as the env's, the critic's target).

    With ``student`` (an actor network) the recorded seat plays the student's argmax move
    while the teacher only labels it (DAgger); ``agree`` counts matches. With ``guard`` (an
    action guard of :data:`agents.ppo.GUARDS`) the recorded mask is the guarded one;
    ``obs_dtype`` is the encoding the policy trains on (the env's).
    """
    from mountain_rummy_env import Game, player_view
    from mountain_rummy_env.core.state import EVENT_NONE
    from mountain_rummy_env.envs.observation import encode_observations, observation_size

    from agents import make_agent
    from agents.ppo import masked_logits

    game = Game(variant, 1)
    buf = np.zeros((1, observation_size(variant)), obs_dtype)
    specs = [s for s, _ in opponents]
    w = np.array([w for _, w in opponents], np.float64)
    w /= w.sum()
    rng = np.random.default_rng([seed, 7])
    agents: dict = {}

    def agent(spec, slot):
        if (spec, slot) not in agents:
            agents[spec, slot] = make_agent(spec, seed=[seed, slot, len(agents)], variant=variant.name)
        return agents[spec, slot]

    lay, cf = variant.layout, variant.spec.card_face
    obs, masks, acts, seats, vals = [], [], [], [], []
    agree = steps = 0
    for h in range(hands):
        opp = specs[rng.choice(len(specs), p=w)]
        me = h % 2
        players = [None, None]
        players[me] = agent(teacher, 0)
        players[1 - me] = agent(teacher, 1) if opp == "teacher" else agent(opp, 1)
        recorded = (0, 1) if opp == "teacher" and student is None else (me,)
        for a in players:
            a.reset()
        game.reset(seed=int(seed) * 1_000_003 + 50_000_000 + h)
        start = len(acts)
        while True:
            p = game.current_player(0)
            mask = game.masks[0]
            view = player_view(game, 0, p)
            a = int(players[p].act(view, mask))
            if p in recorded and guard is not None:
                mask = guard(view, mask)
                if not mask[a]:
                    raise ValueError(f"teacher {teacher!r} plays outside the action guard")
            if p in recorded and int(mask.sum()) > 1:
                encode_observations(game.states[0:1], variant.spec, np.array([p], np.int64), buf)
                obs.append(buf[0].astype(np.float16))
                masks.append(mask.astype(bool))
                acts.append(a)
                seats.append(p)
                if student is not None:
                    s_ = int(masked_logits(student, buf, mask[None])[0].argmax())
                    agree += s_ == a
                    if s_ != a:
                        a = s_
                        if hasattr(players[p], "my_discard") and lay.discard <= a < lay.knock:
                            players[p].my_discard = next(
                                (c for c in view.hand if cf[c] == a - lay.discard), None)
            event = game.step_one(0, a)
            steps += 1
            if event != EVENT_NONE:
                break
        pts = game.summary(0).hand_points
        for i in range(start, len(acts)):
            m = float(pts[seats[i]] - pts[1 - seats[i]])
            vals.append(np.sign(m) if reward == "win" else m * reward_scale)
    n_obs = buf.shape[1]
    return {"obs": np.array(obs, np.float16).reshape(-1, n_obs),
            "masks": np.array(masks, bool).reshape(-1, variant.num_actions),
            "actions": np.array(acts, np.int64), "values": np.array(vals, np.float32),
            "agree": int(agree), "env_steps": int(steps), "hands": int(hands)}


def _concat(parts: list[dict]) -> dict:
    return {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "masks", "actions", "values")}


def bc_forward(policy, obs, masks):
    """Masked logits and values of an SB3 MaskablePPO policy (its actor and critic)."""
    feats = policy.extract_features(obs)
    latent_pi, latent_vf = policy.mlp_extractor(feats)
    logits = policy.action_net(latent_pi).masked_fill(~masks, -1e9)
    return logits, policy.value_net(latent_vf).flatten()


def bc_accuracy(policy, data: dict, idx: np.ndarray, batch: int = 2048) -> float:
    """Fraction of the moves ``idx`` where the policy's argmax is the teacher's action."""
    import torch

    hit = 0
    with torch.no_grad():
        for k in range(0, len(idx), batch):
            j = idx[k:k + batch]
            logits, _ = bc_forward(policy, torch.as_tensor(data["obs"][j].astype(np.float32)),
                                   torch.as_tensor(data["masks"][j]))
            hit += int((logits.argmax(1).numpy() == data["actions"][j]).sum())
    return hit / max(len(idx), 1)


def holdout_split(n: int, seed: int) -> np.ndarray:
    """5% of ``n`` moves (none under 21) held out of the cloning, by ``seed``."""
    if n <= 20:
        return np.zeros(0, np.int64)
    return np.sort(np.random.default_rng([seed, 13]).permutation(n)[:max(n // 20, 1)])


def behaviour_clone(model, data: dict, args, seed: int, log=print, epochs: int | None = None,
                    val: np.ndarray | None = None) -> dict:
    """Train ``model.policy``'s actor on the teacher's moves (masked cross-entropy) and its
    critic on the hand reward (MSE x ``--bc-value-coef``); the moves ``val`` (default
    :func:`holdout_split`) are held out.
    Returns accuracies: ``chance`` (uniform legal move), ``before``, per-epoch train/val."""
    import torch

    pol = model.policy
    n = len(data["actions"])
    rng = np.random.default_rng([seed, 11])
    if val is None:
        val = holdout_split(n, seed)
    keep = np.ones(n, bool)
    keep[val] = False
    tr = np.flatnonzero(keep)
    n_val = len(val)
    chance = float(np.mean(1.0 / data["masks"].sum(1))) if n else 0.0
    stats = {"moves": int(n), "chance": chance,
             "before": bc_accuracy(pol, data, val if n_val else tr), "epochs": []}
    opt = torch.optim.Adam(pol.parameters(), lr=args.bc_lr)
    bs = args.bc_batch_size
    pol.set_training_mode(True)
    epochs = args.bc_epochs if epochs is None else epochs
    for ep in range(epochs):
        t = time.time()
        rng.shuffle(tr)
        tot = hit = 0
        ce_sum = v_sum = 0.0
        lr = args.bc_lr * (1 - ep / max(epochs, 1)) ** 0.5   # gentle decay
        for g_ in opt.param_groups:
            g_["lr"] = lr
        for k in range(0, len(tr), bs):
            j = np.sort(tr[k:k + bs])
            obs = torch.as_tensor(data["obs"][j].astype(np.float32))
            masks = torch.as_tensor(data["masks"][j])
            acts = torch.as_tensor(data["actions"][j])
            logits, values = bc_forward(pol, obs, masks)
            ce = torch.nn.functional.cross_entropy(logits, acts)
            vl = torch.nn.functional.mse_loss(values, torch.as_tensor(data["values"][j]))
            loss = ce + args.bc_value_coef * vl
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(pol.parameters(), 1.0)
            opt.step()
            tot += len(j)
            hit += int((logits.argmax(1) == acts).sum())
            ce_sum += ce.item() * len(j)
            v_sum += vl.item() * len(j)
        pol.set_training_mode(False)
        row = {"epoch": ep + 1, "train_acc": hit / max(tot, 1), "ce": ce_sum / max(tot, 1),
               "value_mse": v_sum / max(tot, 1),
               "val_acc": bc_accuracy(pol, data, val) if n_val else None, "seconds": round(time.time() - t, 1)}
        pol.set_training_mode(True)
        stats["epochs"].append(row)
        log(f"[bc] epoch {row['epoch']}: train acc {row['train_acc']:.3f} held-out acc "
            f"{row['val_acc'] if row['val_acc'] is None else round(row['val_acc'], 3)} ce {row['ce']:.3f} "
            f"value mse {row['value_mse']:.4f} ({row['seconds']}s)")
    pol.set_training_mode(False)
    stats["val_acc"] = stats["epochs"][-1]["val_acc"] if stats["epochs"] else stats["before"]
    return stats


def warm_start(model, venv, args, run: Path, log) -> dict:
    """The whole warm start: record the teacher, clone, optional DAgger rounds; writes
    ``bc_stats.json`` (accuracies) and ``bc.pt`` (the cloned policy) in the run folder."""
    from agents.ppo import GUARDS

    variant = venv.venv.variant
    pool = parse_pool(args.bc_opponents)
    guard = GUARDS[args.guard]
    t0 = time.time()
    data = collect_teacher_moves(variant, args.bc_teacher, pool, args.bc_hands, args.seed,
                                 reward=args.reward, reward_scale=args.reward_scale, guard=guard,
                                 obs_dtype=args.obs_dtype)
    t_collect = time.time() - t0
    log(f"[bc] teacher {args.bc_teacher!r}: {args.bc_hands} hands, {len(data['actions'])} moves, "
        f"{data['env_steps']} env steps in {t_collect:.0f}s")
    parts = [data]
    summary = {"teacher": args.bc_teacher, "hands": args.bc_hands, "env_steps": data["env_steps"],
               "collect_seconds": round(t_collect, 1), "rounds": []}
    val = holdout_split(len(data["actions"]), args.seed)
    stats = behaviour_clone(model, data, args, args.seed, log, val=val)
    summary["rounds"].append(stats)
    n_seen = len(data["actions"])
    for r in range(args.bc_dagger):
        student = export_actor(model, args)
        t = time.time()
        extra = collect_teacher_moves(variant, args.bc_teacher, pool, args.bc_dagger_hands,
                                      args.seed + 1000 * (r + 1), reward=args.reward,
                                      reward_scale=args.reward_scale, student=student, guard=guard,
                                      obs_dtype=args.obs_dtype)
        on_policy = extra["agree"] / max(len(extra["actions"]), 1)
        log(f"[bc] DAgger round {r + 1}: the clone agrees with the teacher on {on_policy:.3f} of "
            f"{len(extra['actions'])} moves of its own hands ({time.time() - t:.0f}s)")
        summary["env_steps"] += extra["env_steps"]
        parts.append(extra)
        # earlier held-out moves stay held out; 5% of the new ones join them
        val = np.concatenate([val, n_seen + holdout_split(len(extra["actions"]), args.seed + r + 1)])
        n_seen += len(extra["actions"])
        stats = behaviour_clone(model, _concat(parts), args, args.seed + r + 1, log,
                                epochs=max(1, (args.bc_epochs + 1) // 2), val=val)
        stats["on_policy_agreement_before"] = on_policy
        summary["rounds"].append(stats)
    summary["seconds"] = round(time.time() - t0, 1)
    summary["val_acc"] = summary["rounds"][-1]["val_acc"]
    summary["chance"] = summary["rounds"][0]["chance"]
    summary["before"] = summary["rounds"][0]["before"]
    (run / "bc_stats.json").write_text(json.dumps(summary, indent=1) + "\n")
    from agents.ppo import save_policy

    save_policy(run / "bc.pt", export_actor(model, args), policy_meta(venv, args, 0))
    return summary


# ---------------------------------------------------------------------------------------
# the training loop's hooks


def make_callback(venv, pool, args, run: Path, state: dict):
    from stable_baselines3.common.callbacks import BaseCallback

    from agents.ppo import save_policy

    eval_opps = [s.strip() for s in (args.eval_opponents or DEFAULT_EVAL[args.variant]).split(",") if s.strip()]

    class Hooks(BaseCallback):
        def _on_training_start(self):
            self.t0 = time.time()
            self.steps0 = self.model.num_timesteps
            self.bar = None
            if not args.no_progress:
                from tqdm import tqdm

                self.bar = tqdm(total=args.total_steps, initial=self.model.num_timesteps,
                                unit="step", dynamic_ncols=True, smoothing=0.05)
            self.hands = []
            self.over_baseline = []     # --reward-baseline: margin less the reference's

        def _on_step(self) -> bool:
            if self.bar is not None:
                self.bar.update(self.training_env.num_envs)
            for info in self.locals.get("infos", ()):
                if "episode" in info:
                    self.hands.append(info["episode"]["r"])
                    if "baseline_margin" in info:
                        self.over_baseline.append(info["episode"]["r"] - info["baseline_margin"])
            return True

        def _on_rollout_end(self):
            n = self.model.num_timesteps
            sps = (n - self.steps0) / max(time.time() - self.t0, 1e-9)
            self.logger.record("time/learner_steps_per_s", sps)
            if self.hands:
                h = np.array(self.hands[-1000:])
                self.logger.record("rollout/hand_margin_mean", float(h.mean()))
                self.logger.record("rollout/hand_win_rate", float((h > 0).mean()))
                self.logger.record("rollout/league_size", len(pool.league))
                if self.bar is not None:
                    self.bar.set_postfix(sps=f"{sps:.0f}", margin=f"{h.mean():+.1f}",
                                         league=len(pool.league))
                self.hands = self.hands[-1000:]
            if self.over_baseline:
                self.over_baseline = self.over_baseline[-1000:]
                self.logger.record("rollout/margin_over_baseline", float(np.mean(self.over_baseline)))
            if n >= state["next_snapshot"]:
                take_snapshot(self.model, n)
                state["next_snapshot"] = n + args.snapshot_every
            if args.eval_every and n >= state["next_eval"]:
                run_eval(self.model, n, self.logger)
                state["next_eval"] = n + args.eval_every
            if n >= state["next_checkpoint"]:
                save_checkpoint(self.model)
                state["next_checkpoint"] = n + args.checkpoint_every

        def _on_training_end(self):
            if self.bar is not None:
                self.bar.close()

    def take_snapshot(model, n):
        actor = export_actor(model, args)
        pool.league.append(actor)
        path = run / "league" / f"snap_{n:010d}.pt"
        save_policy(path, actor, policy_meta(venv, args, n))
        state["league"].append(path.name)
        while len(pool.league) > args.league_size:
            pool.league.pop(0)
            old = state["league"].pop(0)
            for f in (run / "league" / old, (run / "league" / old).with_suffix(".json")):
                f.unlink(missing_ok=True)

    def run_eval(model, n, logger):
        path = run / "policy.pt"
        save_policy(path, export_actor(model, args), policy_meta(venv, args, n))
        t = time.time()
        results = evaluate(path, args, eval_opps, args.eval_deals)
        csv_path = run / "eval.csv"
        new = not csv_path.exists()
        with csv_path.open("a", newline="") as fh:
            w = csv.DictWriter(fh, EVAL_FIELDS)
            if new:
                w.writeheader()
            for r in results:
                w.writerow({"env_steps": n, "wall_s": round(time.time() - start_time + state["wall_before"], 1), **r})
                if logger is not None:
                    logger.record(f"eval/{r['opponent']}/win_rate", r["win_rate"])
                    logger.record(f"eval/{r['opponent']}/margin", r["margin"])
        line = "  ".join(f"vs {r['opponent']}: win {r['win_rate']:.2f} margin {r['margin']:+.1f}±{1.96 * r['margin_se']:.1f}"
                         for r in results)
        print(f"\n[eval @ {n} steps, {time.time() - t:.0f}s] {line}", file=sys.stderr, flush=True)
        key = results[-1]["margin"]
        if state.get("best_margin") is None or key > state["best_margin"]:
            state["best_margin"] = key
            state["best_steps"] = n
            save_policy(run / "best.pt", export_actor(model, args), policy_meta(venv, args, n))
        try:
            plot_curve(csv_path, run / "learning_curve.png")
        except Exception as err:  # plotting must never stop training
            print(f"learning curve not drawn: {err}", file=sys.stderr)

    def save_checkpoint(model):
        tmp = run / "checkpoint.tmp.zip"
        model.save(tmp)
        os.replace(tmp, run / "checkpoint.zip")
        st = dict(state, wall_before=state["wall_before"] + time.time() - start_time,
                  num_timesteps=model.num_timesteps)
        (run / "state.json").write_text(json.dumps(st, indent=1) + "\n")

    start_time = time.time()
    hooks = Hooks()
    hooks.save_checkpoint = save_checkpoint
    hooks.run_eval = run_eval
    return hooks


# ---------------------------------------------------------------------------------------


def main(argv=None) -> dict:
    args = parse_args(argv)
    t_start = time.time()
    import torch
    from sb3_contrib import MaskablePPO

    from agents.ppo import load_policy

    if args.threads:
        torch.set_num_threads(args.threads)
    run = Path(args.run_dir or f"runs/ppo/{args.variant}")
    run.mkdir(parents=True, exist_ok=True)
    ckpt = run / "checkpoint.zip"
    if ckpt.exists() and not args.resume:
        raise SystemExit(f"{run} already holds a run; pass --resume to continue it or pick another --run-dir")
    (run / "args.json").write_text(json.dumps(vars(args), indent=1) + "\n")

    pool = OpponentPool(parse_pool(args.opponents or DEFAULT_OPPONENTS[args.variant]), args.seed)
    venv = make_venv(args, pool)
    state = {"next_snapshot": 0, "next_eval": args.eval_every, "next_checkpoint": args.checkpoint_every,
             "league": [], "wall_before": 0.0, "best_margin": None, "best_steps": None}

    total = args.total_steps
    lr = args.learning_rate
    schedule = (lambda frac: lr * frac) if args.anneal_lr else lr   # frac: 1 -> 0 over the run
    if args.resume and ckpt.exists():
        state.update(json.loads((run / "state.json").read_text()))
        model = MaskablePPO.load(ckpt, env=venv, device="cpu", tensorboard_log=str(run / "tb"),
                                 custom_objects={"learning_rate": schedule, "lr_schedule": schedule})
        for name in state["league"]:
            pool.league.append(load_policy(run / "league" / name)[0])
        print(f"resumed {run} at {model.num_timesteps} steps, league of {len(pool.league)}", file=sys.stderr)
    else:
        from agents.ppo_nets import ACTIVATIONS

        act = ACTIVATIONS[args.activation]
        arch = [int(w) for w in args.net_arch.split(",")]
        policy, extra = "MlpPolicy", {}
        if args.hint != "none":
            from experiments.hinted_policy import HintedMaskablePolicy

            from agents.ppo import HINTS

            policy = HintedMaskablePolicy
            extra = {"hint_weight": args.hint_weight, "slots": HINTS[args.hint].slots}
        model = MaskablePPO(
            policy, venv, learning_rate=schedule, n_steps=args.n_steps,
            batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
            gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
            vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, target_kl=args.target_kl,
            policy_kwargs={"net_arch": {"pi": arch, "vf": arch}, "activation_fn": act, **extra},
            tensorboard_log=str(run / "tb"), seed=args.seed, device="cpu", verbose=0)
    hooks = make_callback(venv, pool, args, run, state)
    if args.bc_teacher and not (args.resume and ckpt.exists()):
        log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
        state["bc"] = warm_start(model, venv, args, run, log)
        if args.eval_every:
            hooks.run_eval(model, 0, None)      # the cloned policy: the curve's first point
    remaining = max(total - model.num_timesteps, 0)
    t0, n0 = time.time(), model.num_timesteps
    if remaining:
        model.learn(remaining, callback=hooks, reset_num_timesteps=not args.resume,
                    tb_log_name="ppo", progress_bar=False)
    elapsed = time.time() - t0
    n = model.num_timesteps
    hooks.save_checkpoint(model)
    if args.eval_every:
        # final evaluation (unless the last rollout just did one)
        done_at = state["next_eval"] - args.eval_every
        if done_at != n:
            hooks.run_eval(model, n, model.logger)
            hooks.save_checkpoint(model)
    else:
        from agents.ppo import save_policy

        save_policy(run / "policy.pt", export_actor(model, args), policy_meta(venv, args, n))
    summary = {"run_dir": str(run), "env_steps": n, "seconds": round(elapsed, 1),
               "steps_per_s": round((n - n0) / max(elapsed, 1e-9), 1),
               "best_margin": state.get("best_margin"), "best_steps": state.get("best_steps"),
               "wall_s": round(time.time() - t_start + state.get("wall_before", 0.0), 1)}
    if state.get("bc"):
        summary["bc_val_acc"] = state["bc"]["val_acc"]
        summary["bc_seconds"] = state["bc"]["seconds"]
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
