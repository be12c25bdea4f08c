"""Fast self-play PPO in plain torch over the batched vector env (CleanRL style).

One file, every hyper-parameter a flag (``--help``). ``experiments/train_ppo.py`` (SB3
MaskablePPO) stays the simple path with every extra (warm start, hints, guards, any
``make_agent`` opponent); this trainer trades those for speed:

* Env: ``<variant>.vector_env(--num-envs)`` with int8 observations and no copies; one
  episode is one hand; the learner's seat rotates; reward = hand-point margin x
  ``--reward-scale``. Any variant with a vector env works. ``--obs-features solver``
  appends the meld solver's feature block (``docs/observation.md``; Mountain, German, Crazy) to every
  observation, the opponents' included; it is recorded in the policy and fixed for a run.
* Policy: the actor is :func:`agents.ppo_nets.build_actor` (the :mod:`agents.ppo` format)
  and a critic of the same widths. Masking: the head's logits are computed at each row's
  legal actions only (padding at -1e9) and the softmax runs over them, in rollouts and in
  the update -- the masked softmax, over a few columns instead of all actions. In float32
  the first layers are computed from the observations' nonzeros (:mod:`agents.sparse_layers`);
  ``--precision bf16`` (the default on CPUs with AMX) runs the matmuls in bfloat16.
* Opponents (``--opponents self:2,league:1,random:1,playout:1``): every game draws one per
  hand. All are batched -- one call per opponent kind for all the games it plays, never a
  loop over games in Python: ``self`` the current network (forward on the opponent
  observation batch), ``league`` a frozen snapshot (the last ``--league-size``, one taken
  every ``--snapshot-every`` steps; the current network until the first), ``random`` the
  env's compiled uniform sampler, ``playout`` the search agent's playout policy, compiled
  (:mod:`agents.fastpolicy`: Mountain's and Gin's heuristics; German's and Crazy's rules
  player; not Robber's Rummy). The other ``make_agent`` players act on one
  ``PlayerView`` at a time; they are refused here (use train_ppo.py for them).
* Kickstarting (``--kickstart-coef``, off by default): a teacher is asked for its move at
  every learner decision of the rollouts, and the update adds the weighted cross-entropy to
  that move to the PPO loss, the weight decaying to 0 over ``--kickstart-steps``. The
  learner starts from the teacher's play on its own states (no recorded data set) and PPO
  takes over as the weight falls. ``--kickstart-teacher playout`` (the default) is the
  playout policy, one batched compiled call; any other value is a ``make_agent`` spec
  (``rules``, ``greedy``, ...), one agent per game that follows the learner's seat through
  the hand (it is told the learner's moves, so a tracking player remembers what was
  played) and is asked on one ``PlayerView`` at a time: slower, but any player can teach.
* Outputs in ``--run-dir``: ``checkpoint.pt`` (a policy file of :mod:`agents.ppo` whose
  ``"training"`` entry holds critic, optimizer, counters, league and RNG states; ``--resume``
  continues it, read with ``torch.load(weights_only=True)``; ``ppo:path=RUN/checkpoint.pt``
  plays it), ``policy.pt`` (+ ``.json``), ``best.pt``, ``eval.csv`` and ``learning_curve.png``
  (evaluation every ``--eval-every`` steps with train_ppo's duplicate-deal evaluation),
  ``tb/`` (TensorBoard), ``args.json``.

    python -m experiments.selfplay_ppo --variant mountain --total-steps 2000000
    mountain-rummy selfplay-ppo --variant gin --opponents self:1,playout:1
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

from experiments.train_ppo import evaluate, parse_pool, plot_curve, record_evaluation
from mountain_rummy_env.envs.observation import OBS_FEATURES

FORMAT = "mountain-rummy-selfplay-ppo/1"
# opponent kinds with a batched form, by their code in the per-game assignment
KINDS = ("self", "league", "random", "playout")
# flags a resumed run must share with its checkpoint (they shape the network or its inputs)
FIXED = ("variant", "variant_options", "net_arch", "activation", "obs_dtype", "obs_features")
# what a checkpoint made before a FIXED flag existed was run with
FIXED_DEFAULTS = {"obs_features": "none"}


def _checked_float(ok, what: str):
    """An argparse type: a number for which ``ok(value)`` holds, else an error naming ``what``."""
    def check(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"expected {what}, got {text}")
        return value
    return check


_positive_float = _checked_float(lambda v: v > 0, "a positive number")
_unit = _checked_float(lambda v: 0 <= v <= 1, "a number in [0, 1]")


def build_parser(prog: str = "python -m experiments.selfplay_ppo") -> argparse.ArgumentParser:
    from experiments.cli import _nonneg, _positive
    from mountain_rummy_env.registry import DEFAULT_VARIANT, variant_names

    p = argparse.ArgumentParser(prog=prog,
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("run")
    g.add_argument("--variant", choices=variant_names(), default=DEFAULT_VARIANT)
    g.add_argument("--variant-options", default="{}", help="JSON dict of variant config options")
    g.add_argument("--run-dir", default=None, help="output folder (default runs/selfplay/<variant>)")
    g.add_argument("--total-steps", type=_positive, default=2_000_000,
                   help="learner env steps in all, in whole updates of --num-envs x --n-steps "
                        "(rounded down, at least one)")
    g.add_argument("--seed", type=_nonneg, default=0)
    g.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoint.pt")
    g.add_argument("--threads", type=_nonneg, default=1,
                   help="torch CPU threads (0: torch default; on a shared 2-core box 1 is fastest)")
    g.add_argument("--precision", choices=("auto", "fp32", "bf16"), default="auto",
                   help="bf16: matmuls in bfloat16 under torch.autocast (weights, losses and "
                        "softmax stay float32); about 1.8x the learner steps/s on a CPU with AMX, "
                        "not measured without AMX; auto: bf16 where the CPU has AMX, else fp32")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("env and opponents")
    g.add_argument("--num-envs", type=_positive, default=256, help="games stepped together")
    g.add_argument("--obs-dtype", choices=("int8", "float32"), default="int8",
                   help="observation encoding (recorded in the policy; the ppo agent uses it)")
    add_obs_features(g)
    g.add_argument("--reward-scale", type=_positive_float, default=0.01, help="multiplies the hand margin")
    g.add_argument("--opponents", default="self:2,league:1,random:1,playout:1",
                   help="weighted pool kind:weight,... drawn per game and hand; kinds: "
                        "self (current network), league (a past snapshot), random (uniform "
                        "legal move, compiled), playout (the search's playout policy, compiled: "
                        "agents.fastpolicy's heuristic for Mountain and Gin, the rules player for "
                        "German and Crazy; not Robber's). Other agents (greedy, rules, ...) have no batched form "
                        "and are refused: train against them with experiments.train_ppo")
    g.add_argument("--snapshot-every", type=_positive, default=100_000, help="steps between league snapshots")
    g.add_argument("--league-size", type=_positive, default=5, help="snapshots kept in the league")
    g = p.add_argument_group("PPO")
    g.add_argument("--learning-rate", type=_positive_float, default=3e-4)
    g.add_argument("--anneal-lr", type=int, choices=(0, 1), default=1, help="1: decay linearly to 0")
    g.add_argument("--n-steps", type=_positive, default=32, help="rollout length per env")
    g.add_argument("--minibatch-size", type=_positive, default=4096)
    g.add_argument("--n-epochs", type=_positive, default=2)
    g.add_argument("--gamma", type=_unit, default=0.995)
    g.add_argument("--gae-lambda", type=_unit, default=0.95)
    g.add_argument("--clip-range", type=_positive_float, default=0.2)
    g.add_argument("--ent-coef", type=float, default=0.01)
    g.add_argument("--vf-coef", type=float, default=0.5)
    g.add_argument("--max-grad-norm", type=_positive_float, default=0.5)
    g.add_argument("--target-kl", type=_positive_float, default=None, help="stop an update's epochs past this KL")
    g.add_argument("--kickstart-coef", type=float, default=0.0,
                   help="kickstarting: weight of the cross-entropy to the teacher's move "
                        "(asked at every learner decision of the rollouts) added to the PPO "
                        "loss; 0: off")
    g.add_argument("--kickstart-teacher", default="playout", metavar="SPEC",
                   help="the kickstarting teacher: playout (the compiled playout policy, "
                        "batched) or a make_agent spec such as rules (one agent per game, "
                        "asked on one view at a time)")
    g.add_argument("--kickstart-steps", type=_nonneg, default=0,
                   help="env steps over which --kickstart-coef decays linearly to 0 (0: constant)")
    g.add_argument("--net-arch", default="256,256", help="hidden widths (actor and critic)")
    g.add_argument("--activation", choices=("tanh", "relu"), default="relu")
    g = p.add_argument_group("evaluation and checkpoints")
    g.add_argument("--eval-every", type=_nonneg, default=500_000, help="steps between evaluations (0: off)")
    g.add_argument("--eval-deals", type=_positive, default=50, help="duplicate deals per baseline")
    g.add_argument("--eval-seed", type=_nonneg, default=10_000, help="first deal seed (fixed deals)")
    g.add_argument("--eval-opponents", default="random,greedy",
                   help="make_agent baselines of the evaluation (per game, not batched: it is rare)")
    g.add_argument("--checkpoint-every", type=_positive, default=200_000, help="steps between checkpoints")
    return p


def add_obs_features(group) -> None:
    """The ``--obs-features`` flag (the network trainers share it; checked by
    :func:`checked_variant_and_net`)."""
    group.add_argument("--obs-features", choices=OBS_FEATURES, default="none",
                       help="feature block appended to the observation: solver = the meld "
                            "solver's values of each choice (docs/observation.md; Mountain, "
                            "German, Crazy); solver_move = those and the compiled heuristic's "
                            "move, one-hot (the actor adds it to its logits with a learned "
                            "gain per action); solver_move_outs (Mountain) = the same with "
                            "the heuristic discarding as rules; recorded in the policy")


def checked_variant_and_net(p: argparse.ArgumentParser, args):
    """The variant of ``--variant``/``--variant-options``, checked against
    ``--obs-features``, and ``args.net_arch_list`` from ``--net-arch``; a bad value is a
    one-line usage error (the network trainers share these flags)."""
    from mountain_rummy_env.config import ConfigError
    from mountain_rummy_env.envs.observation import obs_features_of
    from mountain_rummy_env.registry import make_variant

    try:
        opts = json.loads(args.variant_options)
        if not isinstance(opts, dict):
            raise ValueError("not a JSON object")
        variant = make_variant(args.variant, **opts)
    except (ValueError, TypeError) as err:
        p.error(f"--variant-options {args.variant_options!r}: {err}")
    try:
        obs_features_of(args.obs_features, variant)
    except ConfigError as err:
        p.error(f"--obs-features: {err}")
    try:
        args.net_arch_list = [int(w) for w in args.net_arch.split(",")]
        if not args.net_arch_list or min(args.net_arch_list) < 1:
            raise ValueError
    except ValueError:
        p.error(f"--net-arch {args.net_arch!r}: expected positive widths like 256,256")
    return variant


def parse_args(argv=None, prog: str = "python -m experiments.selfplay_ppo"):
    """The flags, checked: a bad variant option, feature block, opponent or width is a usage
    error."""
    p = build_parser(prog)
    args = p.parse_args(argv)
    variant = checked_variant_and_net(p, args)
    try:
        args.pool = parse_opponents(args.opponents, variant)
    except ValueError as err:
        p.error(str(err))
    if not [s for s in args.eval_opponents.split(",") if s.strip()] and args.eval_every:
        p.error("--eval-opponents is empty; give baselines or --eval-every 0")
    if args.kickstart_coef < 0:
        p.error(f"--kickstart-coef {args.kickstart_coef}: expected a number >= 0")
    if args.kickstart_coef > 0:
        if args.kickstart_teacher == "playout":
            if why := no_playout_policy(variant):
                p.error(f"--kickstart-teacher playout: {why}")
        else:
            try:
                AgentTeacher.check(args.kickstart_teacher, variant)
            except ValueError as err:
                p.error(f"--kickstart-teacher {args.kickstart_teacher!r}: {err}")
    return args


def no_playout_policy(variant) -> str | None:
    """Why ``variant`` has no compiled playout policy (the ``playout`` opponent and the
    kickstarting teacher), or None when it has one."""
    from agents.fastpolicy import check_playout_policy

    try:
        check_playout_policy(variant)
    except NotImplementedError as err:
        return f"{err} (Mountain, Gin, German and Crazy Rummy have one)"
    return None


def kickstart_weight(args, step: int) -> float:
    """The kickstarting loss weight at env step ``step``: ``--kickstart-coef``, decaying
    linearly to 0 at ``--kickstart-steps`` (constant when that is 0)."""
    if args.kickstart_steps == 0:
        return args.kickstart_coef
    return args.kickstart_coef * max(0.0, 1.0 - step / args.kickstart_steps)


def parse_opponents(text: str, variant) -> list[tuple[str, float]]:
    """``--opponents`` as ``[(kind, weight)]``; a kind without a batched form, a negative
    weight or no positive one is a ValueError saying which."""
    try:
        pool = parse_pool(text)
    except SystemExit as err:
        raise ValueError(str(err)) from None
    for kind, w in pool:
        if kind not in KINDS:
            raise ValueError(f"--opponents: {kind!r} has no batched form here; batched kinds: "
                             f"{', '.join(KINDS)} (make_agent players such as greedy or rules act "
                             "on one game at a time: use experiments.train_ppo for those)")
    if any(k == "playout" for k, w in pool if w > 0) and (why := no_playout_policy(variant)):
        raise ValueError(f"--opponents playout: {why}")
    return pool


# ---------------------------------------------------------------------------------------
# the network


def build_model(n_obs: int, n_act: int, args):
    """``(actor, critic)``: the :mod:`agents.ppo` actor and a critic of the same widths,
    orthogonally initialised as CleanRL does (small policy head: near-uniform at start)."""
    import torch.nn as nn

    from agents.ppo_nets import build_actor, mlp
    from mountain_rummy_env.envs.observation import has_move_block

    arch = args.net_arch_list
    actor = build_actor(n_obs, n_act, arch, args.activation, has_move_block(args.obs_features))
    critic = nn.Sequential(mlp(n_obs, arch, args.activation), nn.Linear(arch[-1], 1))
    for net, last_gain in ((actor, 0.01), (critic, 1.0)):
        linears = [m for m in net.modules() if isinstance(m, nn.Linear)]
        for k, m in enumerate(linears):
            nn.init.orthogonal_(m.weight, last_gain if k == len(linears) - 1 else 2 ** 0.5)
            nn.init.zeros_(m.bias)
    return actor, critic


def frozen(net, dtype):
    """A copy of ``net`` in ``dtype`` for inference only (rollouts, opponents, the league)."""
    import copy

    return copy.deepcopy(net).to(dtype).eval().requires_grad_(False)


@njit(cache=True)
def _count_legal(masks, counts):
    for b in range(masks.shape[0]):
        n = 0
        for a in range(masks.shape[1]):
            n += masks[b, a] != 0
        counts[b] = n


@njit(cache=True)
def _fill_legal(masks, ids):
    for b in range(masks.shape[0]):
        k = 0
        for a in range(masks.shape[1]):
            if masks[b, a] != 0:
                ids[b, k] = a
                k += 1


def legal_ids(masks: np.ndarray):
    """``(ids, valid)`` tensors: each row's legal action ids (of the numpy mask batch
    ``masks``), ascending, padded to the batch's largest count ``K`` (``valid`` marks the
    real ones). The softmax, entropy and their gradients then run over ``K`` columns
    (Mountain: 6 legal moves on average, about 100 at most) instead of all 1,845 actions:
    they were most of the update's time. Compiled: 3x faster than torch's sum + nonzero."""
    import torch

    counts = np.empty(len(masks), np.int64)
    _count_legal(masks, counts)
    ids = np.zeros((len(masks), counts.max()), np.int64)
    _fill_legal(masks, ids)
    return torch.from_numpy(ids), torch.from_numpy(np.arange(ids.shape[1]) < counts[:, None])


def legal_column(ids, actions):
    """Each row's column of ``ids`` (:func:`legal_ids`) holding its action in ``actions``
    (any shape with one action per row; legal actions), as a ``(rows, 1)`` index."""
    import torch

    return (ids == actions.reshape(len(ids), 1)).to(torch.int8).argmax(1, keepdim=True)


def legal_log_probs(actor, x, ids, valid):
    """Log-probabilities of ``actor``'s policy on ``x`` over the legal actions ``ids``
    (:func:`~agents.ppo_nets.legal_logits`; the padding has probability 0)."""
    import torch

    from agents.ppo_nets import legal_logits

    return torch.log_softmax(legal_logits(actor, x, ids, valid).float(), dim=1)


def masked_sample(actor, x, mask, gen=None):
    """Actions sampled from ``actor``'s policy on ``x`` over the legal actions of ``mask``
    (a numpy mask batch), and their log-probabilities. Inverse-CDF sampling (a cumulative sum and a
    binary search per row; ``torch.multinomial`` is 30x slower here); padding has
    probability exactly 0, so the search never lands on it."""
    import torch

    ids, valid = legal_ids(mask)
    logp = legal_log_probs(actor, x, ids, valid)
    cdf = torch.softmax(logp, dim=1).cumsum_(1)
    u = torch.rand((len(cdf), 1), generator=gen) * cdf[:, -1:]
    pos = torch.searchsorted(cdf, u, right=True).clamp_(max=cdf.shape[1] - 1)
    return ids.gather(1, pos)[:, 0], logp.gather(1, pos)[:, 0]


# ---------------------------------------------------------------------------------------
# opponents


class Opponents:
    """The vector env's opponent callable: each game draws a kind from the pool when a new
    hand starts there (``--opponents``; ``league`` also draws a snapshot), and every call
    serves each kind's rows in one batched step (see the module docstring)."""

    def __init__(self, pool, actor, rng, gen, x_dtype):
        self.actor, self.rng, self.gen, self.x_dtype = actor, rng, gen, x_dtype
        self.kinds = np.array([KINDS.index(k) for k, _ in pool])
        w = np.array([w for _, w in pool], np.float64)
        self.p = w / w.sum()
        self.league: list = []          # frozen actors, oldest first
        self.seconds = 0.0              # time spent choosing opponent moves
        self.moves = np.zeros(len(KINDS), np.int64)   # opponent moves made, per kind
        self.tables = None
        self.env = None

    def bind(self, env, splitmix=None):
        """Per-game state for ``env``: the drawn kinds, and the random kind's generators
        (``splitmix``: restored ones, else seeded from the pool's generator)."""
        from mountain_rummy_env.envs.vector import seed_rng

        n = env.num_envs
        self.env = env
        self.kind = np.zeros(n, np.int64)
        self.snap = np.zeros(n, np.int64)
        self.hand = np.full((n, 2), -1, np.int64)   # (episode, deal seed) of the drawn hand
        self.splitmix = seed_rng(int(self.rng.integers(2 ** 31)), n) if splitmix is None else splitmix
        if KINDS.index("playout") in self.kinds:
            from agents.fastpolicy import rollout_tables

            self.tables = rollout_tables(env.variant)

    def _draw(self, games):
        """New opponents for the games among ``games`` whose hand is new since their last draw."""
        key = hand_keys(self.env, games)
        fresh = (key != self.hand[games]).any(axis=1)
        new = games[fresh]
        if not len(new):
            return
        self.hand[new] = key[fresh]
        self.kind[new] = self.kinds[self.rng.choice(len(self.kinds), size=len(new), p=self.p)]
        self.snap[new] = self.rng.integers(max(len(self.league), 1), size=len(new))

    def __call__(self, obs, masks):
        import torch

        from agents.fastpolicy import act_batch
        from mountain_rummy_env.envs.vector import sample_masked

        t0 = time.perf_counter()
        games = self.env.opponent_games
        self._draw(games)
        kind = self.kind[games].copy()
        kind[(kind == 1) & (len(self.league) == 0)] = 0     # no snapshot yet: the current net
        out = np.empty(len(games), np.int64)
        for code in np.unique(kind):
            rows = np.flatnonzero(kind == code)
            self.moves[code] += len(rows)
            acts = np.empty(len(rows), np.int64)
            if KINDS[code] == "random":
                rng = self.splitmix[games[rows]]
                sample_masked(masks[rows], rng, acts)
                self.splitmix[games[rows]] = rng      # the streams move on
                out[rows] = acts
            elif KINDS[code] == "playout":
                act_batch(self.env.game.states, self.env.variant.spec_ref, masks[rows], games[rows],
                          self.tables, acts)
                out[rows] = acts
            else:
                snaps = np.zeros(len(rows), np.int64) if KINDS[code] == "self" else self.snap[games[rows]]
                for s in np.unique(snaps):
                    r = rows[snaps == s]
                    net = self.actor if KINDS[code] == "self" else self.league[s]
                    with torch.inference_mode():
                        a, _ = masked_sample(net, torch.from_numpy(obs[r]).to(self.x_dtype),
                                             masks[r], self.gen)
                    out[r] = a.numpy()
        self.seconds += time.perf_counter() - t0
        return out


def hand_keys(env, games) -> np.ndarray:
    """``(episode, deal seed)`` of the hand each of ``games`` is playing: it changes exactly
    when a new hand starts there."""
    return np.stack([env._episode[games], env._seeds[games].view(np.int64)], axis=1)


# ---------------------------------------------------------------------------------------
# kickstarting teachers: label(env, mask, out) at every learner decision, then played(actions)


class PlayoutTeacher:
    """The compiled playout policy: every game's label in one batched call."""

    def __init__(self, env):
        from agents.fastpolicy import rollout_tables

        self.env, self.tables = env, rollout_tables(env.variant)
        self.games = np.arange(env.num_envs)

    def label(self, mask, out):
        from agents.fastpolicy import act_batch

        act_batch(self.env.game.states, self.env.variant.spec_ref, mask, self.games, self.tables, out)

    def played(self, actions):
        """The playout policy keeps no memory."""


class AgentTeacher:
    """A ``make_agent`` player per game, following the learner's seat through each hand: it
    is reset when a new hand starts there, asked for its move on the learner's view, and
    then told the move the learner played (a :class:`agents.greedy.HeuristicAgent`'s
    ``choose``/``remember``), so a player that tracks the hand remembers what happened."""

    def __init__(self, spec: str, env, seed: int):
        from agents import make_agent

        self.env = env
        n = env.num_envs
        self.agents = [make_agent(spec, seed=seed * 1_000_003 + g, variant=env.variant.name)
                       for g in range(n)]
        self.hand = np.full((n, 2), -1, np.int64)
        self.views: list = []

    @staticmethod
    def check(spec: str, variant) -> None:
        """Raise ValueError if ``spec`` names no agent that can play ``variant``."""
        from agents import make_agent

        make_agent(spec, variant=variant.name).check_options(variant)

    def label(self, mask, out):
        from mountain_rummy_env.game import PlayerView

        env = self.env
        games = np.arange(env.num_envs)
        key = hand_keys(env, games)
        for g in np.flatnonzero((key != self.hand).any(axis=1)):
            self.agents[g].reset()
        self.hand[:] = key
        current = env.game.states["current"]
        self.views = []
        for g, agent in enumerate(self.agents):
            view = PlayerView(env.game, g, int(current[g]))
            choose = getattr(agent, "choose", agent.act)
            out[g] = choose(view, mask[g])
            self.views.append(view)

    def played(self, actions):
        for agent, view, a in zip(self.agents, self.views, actions):
            remember = getattr(agent, "remember", None)
            if remember is not None:
                remember(view, int(a))


# ---------------------------------------------------------------------------------------
# checkpoints


def policy_meta(env, args, steps: int) -> dict:
    """The :mod:`agents.ppo` metadata of the actor trained on ``env``."""
    from agents.ppo import policy_meta as meta
    from mountain_rummy_env.envs.observation import has_move_block

    return meta(env.variant, env.single_observation_space.shape[0], args.net_arch_list,
                args.activation, args.obs_dtype, steps, obs_features=args.obs_features,
                move_skip=has_move_block(args.obs_features), trainer="selfplay_ppo")


def fixed_flags(args) -> dict:
    """The values of :data:`FIXED` (variant options parsed, widths as a list)."""
    return {"variant": args.variant, "variant_options": json.loads(args.variant_options),
            "net_arch": args.net_arch_list, "activation": args.activation,
            "obs_dtype": args.obs_dtype, "obs_features": args.obs_features}


def save_checkpoint(path: Path, actor, meta: dict, training: dict) -> None:
    """A policy file of :mod:`agents.ppo` (``meta`` and the actor's weights: the ``ppo``
    agent plays it) whose ``"training"`` entry holds the rest of the run's state
    (``training``: tensors and plain values only), written atomically."""
    import os

    import torch

    from agents.ppo import FORMAT as POLICY_FORMAT

    tmp = path.with_name(path.name + ".tmp")
    torch.save(dict(meta, format=POLICY_FORMAT, state_dict=actor.state_dict(),
                    training=dict(training, format=FORMAT)), tmp)
    os.replace(tmp, path)


def load_checkpoint(path: Path, args) -> dict:
    """The training state of the checkpoint at ``path`` (its ``"training"`` entry, with the
    actor's weights as ``"actor"``), read without arbitrary pickle; a missing, corrupt or
    foreign file, or one made with other :data:`FIXED` flags, is a :class:`CheckpointError`."""
    import torch

    from agents.ppo import CheckpointError

    if not path.is_file():
        raise CheckpointError(f"--resume: no checkpoint {str(path)!r}")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # truncated zip, not a torch file, unsafe pickle, ...
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a torch file "
                              f"({type(err).__name__}: {str(err).splitlines()[0][:200]})") from None
    training = blob.get("training") if isinstance(blob, dict) else None
    if not isinstance(training, dict) or training.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not a selfplay_ppo checkpoint (expected format {FORMAT!r})")
    want = fixed_flags(args)
    flags = training.get("flags", {})
    for key in FIXED:
        have = flags.get(key, FIXED_DEFAULTS.get(key))
        if have != want[key]:
            raise CheckpointError(f"checkpoint {str(path)!r} was made with --{key.replace('_', '-')} "
                                  f"{have!r}, this run has {want[key]!r}")
    return dict(training, actor=blob.get("state_dict"))


# ---------------------------------------------------------------------------------------
# training


def has_amx() -> bool:
    """Whether torch finds AMX tiles on this CPU (bf16 matmuls 5-7x faster than float32)."""
    import torch

    probe = getattr(torch.cpu, "_is_amx_tile_supported", None)
    return bool(probe and probe())


def train(args) -> dict:
    """Run (or resume) the training of ``args``; returns a summary with the speed and where
    the time went."""
    import contextlib

    import torch
    from torch.utils.tensorboard import SummaryWriter

    from agents.ppo import save_policy
    from mountain_rummy_env.envs.observation import observation_size
    from mountain_rummy_env.registry import make_variant, variant_info

    if args.threads:
        torch.set_num_threads(args.threads)
    run = Path(args.run_dir or f"runs/selfplay/{args.variant}")
    ckpt_path = run / "checkpoint.pt"
    if ckpt_path.exists() and not args.resume:
        raise SystemExit(f"{run} already holds a run; pass --resume to continue it or pick another --run-dir")
    blob = load_checkpoint(ckpt_path, args) if args.resume else None
    run.mkdir(parents=True, exist_ok=True)
    (run / "args.json").write_text(json.dumps({k: v for k, v in vars(args).items()
                                               if k not in ("pool", "net_arch_list")}, indent=1) + "\n")
    bf16 = args.precision == "bf16" or (args.precision == "auto" and has_amx())
    autocast = (lambda: torch.autocast("cpu", dtype=torch.bfloat16)) if bf16 else contextlib.nullcontext

    N, T = args.num_envs, args.n_steps
    rng = np.random.default_rng([args.seed, 3])
    gen = torch.Generator().manual_seed(args.seed)
    variant_opts = json.loads(args.variant_options)
    variant = make_variant(args.variant, **variant_opts)
    n_obs, n_act = observation_size(variant, args.obs_features), variant.num_actions
    torch.manual_seed(args.seed)        # the initial weights (a resumed run loads its own)
    actor, critic = build_model(n_obs, n_act, args)
    params = list(actor.parameters()) + list(critic.parameters())
    opt = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)
    # rollouts and opponents play copies in the compute dtype, refreshed after each update:
    # under autocast every forward would cast the weights again (most of the opponents' time)
    x_dtype = torch.bfloat16 if bf16 else torch.float32
    play_actor, play_critic = frozen(actor, x_dtype), frozen(critic, x_dtype)
    opponents = Opponents(args.pool, play_actor, rng, gen, x_dtype)
    counters = {"global_step": 0, "updates": 0, "wall_s": 0.0, "next_snapshot": args.snapshot_every,
                "next_eval": args.eval_every, "next_checkpoint": args.checkpoint_every,
                "best_margin": None, "league_steps": []}
    splitmix = None
    if blob is not None:
        from agents.ppo import CheckpointError

        try:
            actor.load_state_dict(blob["actor"])
            critic.load_state_dict(blob["critic"])
            opt.load_state_dict(blob["optimizer"])
            for sd in blob["league"]:
                opponents.league.append(frozen(actor, x_dtype))
                opponents.league[-1].load_state_dict(sd)
            counters.update(blob["counters"])
            torch.set_rng_state(blob["torch_rng"])
            gen.set_state(blob["gen_rng"])
            rng.bit_generator.state = blob["numpy_rng"]
            splitmix = blob["splitmix"].numpy().view(np.uint64).copy()
        except (KeyError, RuntimeError, ValueError, TypeError) as err:
            raise CheckpointError(f"checkpoint {str(ckpt_path)!r} is inconsistent: "
                                  f"{type(err).__name__}: {str(err)[:300]}") from None
    # a resumed run deals new hands: the env's state is not saved, only the seed moves on
    env = variant_info(args.variant).import_env_module().vector_env(
        num_envs=N, seed=args.seed * 1_000_003 + counters["global_step"], opponent=opponents,
        obs_dtype=args.obs_dtype, obs_features=args.obs_features, copy=False, **variant_opts)
    opponents.bind(env, splitmix)
    teacher = None
    if args.kickstart_coef > 0:     # asked for the learner's own moves
        teacher = (PlayoutTeacher(env) if args.kickstart_teacher == "playout"
                   else AgentTeacher(args.kickstart_teacher, env, args.seed))
    teacher_acts = np.empty(N, np.int64)

    obs_dtype = torch.int8 if args.obs_dtype == "int8" else torch.float32
    obs_buf = torch.zeros((T, N, n_obs), dtype=obs_dtype)
    mask_buf = torch.zeros((T, N, n_act), dtype=torch.bool)
    act_buf = torch.zeros((T, N), dtype=torch.int64)
    teacher_buf = torch.zeros((T, N), dtype=torch.int64)
    logp_buf, val_buf, rew_buf, done_buf = (torch.zeros((T, N)) for _ in range(4))
    obs, info = env.reset()     # copy=False: the env's own arrays, read before the next step
    mask = info["action_mask"]
    batch = T * N
    num_updates = max(args.total_steps // batch, 1)
    eval_opps = [s.strip() for s in args.eval_opponents.split(",") if s.strip()]
    writer = SummaryWriter(str(run / "tb"))
    clock = {"env": 0.0, "opponents": 0.0, "policy": 0.0, "teacher": 0.0, "update": 0.0, "eval": 0.0}
    trained = ("env", "opponents", "policy", "teacher", "update")   # the learner's time
    hands, margins = 0, []
    start_step, t_start, opp_start = counters["global_step"], time.perf_counter(), opponents.seconds
    wall_before = counters["wall_s"]
    bar = None
    if not args.no_progress:
        from tqdm import tqdm

        bar = tqdm(total=num_updates * batch, initial=counters["global_step"], unit="step",
                   dynamic_ncols=True, smoothing=0.05)

    def wall() -> float:
        return wall_before + time.perf_counter() - t_start

    def checkpoint():
        counters["wall_s"] = wall()
        save_checkpoint(ckpt_path, actor, policy_meta(env, args, counters["global_step"]), {
            "flags": fixed_flags(args), "counters": counters,
            "critic": critic.state_dict(), "optimizer": opt.state_dict(),
            "league": [s.state_dict() for s in opponents.league],
            "torch_rng": torch.get_rng_state(), "gen_rng": gen.get_state(),
            "numpy_rng": rng.bit_generator.state,
            "splitmix": torch.from_numpy(opponents.splitmix.view(np.int64).copy())})
        save_policy(run / "policy.pt", actor, policy_meta(env, args, counters["global_step"]))

    def evaluation(step):
        t = time.perf_counter()
        save_policy(run / "policy.pt", actor, policy_meta(env, args, step))
        results = evaluate(run / "policy.pt", args, eval_opps, args.eval_deals)
        csv_path = run / "eval.csv"
        line = record_evaluation(csv_path, step, wall(), results)
        for r in results:
            writer.add_scalar(f"eval/{r['opponent']}/win_rate", r["win_rate"], step)
            writer.add_scalar(f"eval/{r['opponent']}/margin", r["margin"], step)
        print(f"\n[eval @ {step} steps] {line}", file=sys.stderr, flush=True)
        if not results[-1]["forfeits"] and (
                counters["best_margin"] is None or results[-1]["margin"] > counters["best_margin"]):
            counters["best_margin"] = results[-1]["margin"]
            save_policy(run / "best.pt", actor, policy_meta(env, args, step))
        try:
            plot_curve(csv_path, run / "learning_curve.png")
        except Exception as err:  # plotting must never stop training
            print(f"learning curve not drawn: {err}", file=sys.stderr)
        clock["eval"] += time.perf_counter() - t

    stats = {}
    while counters["updates"] < num_updates:
        frac = 1.0 - counters["updates"] / num_updates
        for group in opt.param_groups:
            group["lr"] = args.learning_rate * (frac if args.anneal_lr else 1.0)
        kick = kickstart_weight(args, counters["global_step"]) if teacher is not None else 0.0
        # -- rollout
        for t in range(T):
            t0 = time.perf_counter()
            obs_buf[t].copy_(torch.from_numpy(obs))
            mask_buf[t].copy_(torch.from_numpy(mask))
            with torch.inference_mode():
                x = obs_buf[t].to(x_dtype)
                action, logp = masked_sample(play_actor, x, mask, gen)
                value = play_critic(x).float()[:, 0]
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            t1 = time.perf_counter()
            clock["policy"] += t1 - t0
            if kick > 0:
                teacher.label(mask, teacher_acts)
                teacher.played(act_buf[t].numpy())
                teacher_buf[t] = torch.from_numpy(teacher_acts)
                t0, t1 = t1, time.perf_counter()
                clock["teacher"] += t1 - t0
            opp0 = opponents.seconds
            obs, reward, term, _, info = env.step(action.numpy())
            mask = info["action_mask"]
            t2 = time.perf_counter()
            clock["env"] += t2 - t1 - (opponents.seconds - opp0)
            rew_buf[t] = torch.from_numpy(reward) * args.reward_scale
            done_buf[t] = torch.from_numpy(term)
            if term.any():
                margins.append(reward[term])        # one hand per episode: its margin
                hands += int(term.sum())
        clock["opponents"] = opponents.seconds - opp_start   # not the compile of the first deal
        counters["global_step"] += batch
        # -- advantages (GAE); an episode that ended at step t does not bootstrap
        t0 = time.perf_counter()
        with torch.inference_mode():
            next_value = play_critic(torch.from_numpy(obs).to(x_dtype)).float()[:, 0]
        adv = torch.zeros((T, N))
        gae = torch.zeros(N)
        for t in reversed(range(T)):
            nonterminal = 1.0 - done_buf[t]
            nxt = next_value if t == T - 1 else val_buf[t + 1]
            delta = rew_buf[t] + args.gamma * nxt * nonterminal - val_buf[t]
            gae = delta + args.gamma * args.gae_lambda * nonterminal * gae
            adv[t] = gae
        returns = adv + val_buf
        ids, valid = legal_ids(mask_buf.reshape(batch, n_act).numpy())
        pos = legal_column(ids, act_buf)
        teacher_pos = legal_column(ids, teacher_buf) if kick > 0 else None
        stats = update(actor, critic, opt, params, args, gen, autocast, x_dtype, obs_buf.reshape(batch, n_obs),
                       ids, valid, pos, logp_buf.reshape(-1), adv.reshape(-1), returns.reshape(-1),
                       teacher_pos, kick)
        play_actor.load_state_dict(actor.state_dict())
        play_critic.load_state_dict(critic.state_dict())
        counters["updates"] += 1
        clock["update"] += time.perf_counter() - t0
        # -- logs, league, evaluation, checkpoints
        step = counters["global_step"]
        train_s = sum(clock[k] for k in trained)
        sps = (step - start_step) / max(train_s, 1e-9)
        for k, v in stats.items():
            writer.add_scalar(f"losses/{k}", v, step)
        if kick > 0:
            writer.add_scalar("kickstart/weight", kick, step)
            writer.add_scalar("kickstart/rollout_agreement",
                              float((act_buf == teacher_buf).float().mean()), step)
        writer.add_scalar("time/learner_steps_per_s", sps, step)
        for k in trained:
            writer.add_scalar(f"time/share_{k}", clock[k] / max(train_s, 1e-9), step)
        if margins:
            margins = margins[-50:]         # about the last 1,500 hands
            m = np.concatenate(margins)
            writer.add_scalar("rollout/hand_margin_mean", float(m.mean()), step)
            writer.add_scalar("rollout/hand_win_rate", float((m > 0).mean()), step)
        writer.add_scalar("rollout/league_size", len(opponents.league), step)
        if bar is not None:
            bar.update(batch)
            bar.set_postfix(sps=f"{sps:.0f}", margin=f"{m.mean():+.1f}" if margins else "-",
                            league=len(opponents.league))
        if step >= counters["next_snapshot"]:
            opponents.league.append(frozen(actor, x_dtype))
            counters["league_steps"].append(step)
            del opponents.league[:-args.league_size], counters["league_steps"][:-args.league_size]
            counters["next_snapshot"] = step + args.snapshot_every
        last = counters["updates"] == num_updates
        if args.eval_every and (step >= counters["next_eval"] or last):
            evaluation(step)
            counters["next_eval"] = step + args.eval_every
        if step >= counters["next_checkpoint"] or last:
            checkpoint()
            counters["next_checkpoint"] = step + args.checkpoint_every
    if bar is not None:
        bar.close()
    writer.close()
    train_s = sum(clock[k] for k in trained)
    done = counters["global_step"] - start_step
    return {"run_dir": str(run), "env_steps": counters["global_step"], "updates": counters["updates"],
            "precision": "bf16" if bf16 else "fp32",
            "learner_steps_per_s": round(done / max(train_s, 1e-9), 1),
            "seconds": {k: round(v, 2) for k, v in clock.items()},
            "wall_s": round(time.perf_counter() - t_start, 1), "total_wall_s": round(wall(), 1),
            "hands": hands,
            "opponent_moves": dict(zip(KINDS, opponents.moves.tolist())),
            "league": len(opponents.league), "last_update": stats}


def update(actor, critic, opt, params, args, gen, autocast, x_dtype, obs, ids, valid, pos, old_logp,
           adv, returns, teacher_pos=None, kick: float = 0.0) -> dict:
    """PPO's clipped update over ``--n-epochs`` passes of shuffled minibatches (``ids``,
    ``valid``: :func:`legal_ids` of the masks; ``pos``: the action taken, as a column of
    ``ids``); stops early past ``--target-kl``. Kickstarting (``kick`` > 0) adds ``kick`` x
    the cross-entropy to the teacher's move (``teacher_pos``, a column of ``ids``), as
    Schmitt et al. (2018) with a deterministic teacher. Returns the last minibatch's losses."""
    import torch

    n = len(pos)
    mb = min(args.minibatch_size, n)
    for epoch in range(args.n_epochs):
        perm = torch.randperm(n, generator=gen)
        for start in range(0, n, mb):
            idx = perm[start:start + mb]
            x = obs[idx].to(x_dtype)
            with autocast():
                logp_all = legal_log_probs(actor, x, ids[idx], valid[idx])
                value = critic(x)
            logp = logp_all.gather(1, pos[idx])[:, 0]
            entropy = -(torch.softmax(logp_all, dim=1) * logp_all).sum(1).mean()
            log_ratio = logp - old_logp[idx]
            ratio = log_ratio.exp()
            a = adv[idx]
            a = (a - a.mean()) / (a.std(correction=0) + 1e-8)
            pg_loss = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip_range, 1 + args.clip_range)).mean()
            v_loss = 0.5 * (value.float()[:, 0] - returns[idx]).pow(2).mean()
            loss = pg_loss - args.ent_coef * entropy + args.vf_coef * v_loss
            if kick > 0:
                teacher_logp = logp_all.gather(1, teacher_pos[idx])[:, 0]
                kick_loss = -teacher_logp.mean()
                loss = loss + kick * kick_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm)
            opt.step()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - log_ratio).mean().item()
        if args.target_kl is not None and approx_kl > args.target_kl:
            break
    stats = {"loss": loss.item(), "policy_loss": pg_loss.item(), "value_loss": v_loss.item(),
             "entropy": entropy.item(), "approx_kl": approx_kl, "epochs": epoch + 1}
    if kick > 0:
        with torch.no_grad():
            agree = (logp_all.argmax(1, keepdim=True) == teacher_pos[idx]).float().mean().item()
        stats.update(kickstart_loss=kick_loss.item(), teacher_agreement=agree)
    return stats


def main(argv=None, prog: str = "python -m experiments.selfplay_ppo") -> dict:
    from agents.ppo import CheckpointError

    args = parse_args(argv, prog)
    try:
        summary = train(args)
    except CheckpointError as err:
        raise SystemExit(f"error: {err}") from None
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
