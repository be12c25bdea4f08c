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
* Evaluation every ``--eval-every`` steps: the current policy against each
  ``--eval-opponents`` baseline on the same ``--eval-deals`` duplicate deals as
  ``experiments/tournament.py`` (``play_deal``: each deal played twice with the seats
  swapped); results appended to ``eval.csv``, logged to TensorBoard and drawn in
  ``learning_curve.png`` (win rate and margin against env steps, one line per baseline).
* Outputs in ``--run-dir``: ``policy.pt`` (latest policy, the safe format of
  :mod:`agents.ppo`: play it with ``ppo:path=RUN/policy.pt``), ``best.pt`` (best evaluated
  margin against the last eval opponent), ``checkpoint.zip`` + ``state.json`` +
  ``league/`` (for ``--resume``; the SB3 zip is for resuming your own runs only -- it is a
  pickle), ``tb/`` (TensorBoard), ``eval.csv``, ``learning_curve.png``, ``args.json``.

    python -m experiments.train_ppo --variant mountain --total-steps 2000000 --run-dir runs/ppo/mountain
    (the shipped agents/policies/mountain.pt began with a behaviour-cloning warm start, removed
    since; docs/training.md says how it was made, at commit cb72a70)
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
    g.add_argument("--opponents", default=None,
                   help="pool as spec:weight,...; 'self' = league snapshots "
                        f"(default {DEFAULT_OPPONENTS})")
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
    g = p.add_argument_group("evaluation and checkpoints")
    g.add_argument("--eval-every", type=int, default=100_000, help="steps between evaluations (0: off)")
    g.add_argument("--eval-deals", type=int, default=50, help="duplicate deals per baseline")
    g.add_argument("--eval-seed", type=int, default=10_000, help="first deal seed (fixed deals)")
    g.add_argument("--eval-opponents", default=None, help=f"baselines (default {DEFAULT_EVAL})")
    g.add_argument("--checkpoint-every", type=int, default=100_000, help="steps between resumable checkpoints")
    args = p.parse_args(argv)
    if args.opponents is None:
        _variant_default(p, DEFAULT_OPPONENTS, args.variant, "--opponents")
    if args.eval_opponents is None:
        _variant_default(p, DEFAULT_EVAL, args.variant, "--eval-opponents")
    return args


# ---------------------------------------------------------------------------------------
# opponents


def parse_pool(text: str) -> list[tuple[str, float]]:
    pool = []
    for item in text.split(","):
        spec, _, w = item.strip().rpartition(":")
        if not spec or not _is_number(w):
            spec, w = item.strip(), "1"
        if float(w) < 0:
            raise SystemExit(f"--opponents: weight of {spec!r} is negative ({float(w)})")
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
            actions[rows] = pick(masked_logits(self.league[snap], obs[rows], masks[rows]), self.rng)
        return actions


def running_hand(env, b: int) -> tuple[int, int]:
    """A key of game ``b``'s running hand in the vector env (episodes started, deal seed):
    it changes exactly when a new hand is dealt there."""
    return int(env._episode[b]), int(env._seeds[b])


# ---------------------------------------------------------------------------------------
# env, model, policy export


def make_venv(args, opponent):
    from mountain_rummy_env.envs.sb3_vec import SB3VecEnv
    from mountain_rummy_env.registry import variant_info

    module = variant_info(args.variant).import_env_module()
    opts = json.loads(args.variant_options)     # episodes: the variant's default, one hand
    venv = module.vector_env(num_envs=args.num_envs, seed=args.seed, opponent=opponent,
                             learner_seat="rotate", obs_dtype=args.obs_dtype, **opts)
    opponent.bind(venv)

    class RewardShaped(SB3VecEnv):
        def step_wait(self):
            obs, rew, dones, infos = super().step_wait()
            rew = np.sign(rew) if args.reward == "win" else rew * args.reward_scale
            return obs, rew.astype(np.float32), dones, infos

    return RewardShaped(venv)


def export_actor(model, args):
    """The SB3 policy's actor as a standalone :func:`agents.ppo_nets.build_actor` network."""
    from agents.ppo_nets import build_actor

    pol = model.policy
    actor = build_actor(pol.observation_space.shape[0], pol.action_space.n,
                        [int(w) for w in args.net_arch.split(",")], args.activation)
    actor.body.load_state_dict(pol.mlp_extractor.policy_net.state_dict())
    actor.head.load_state_dict(pol.action_net.state_dict())
    actor.eval()
    return actor


def policy_meta(venv, args, steps: int) -> dict:
    """The :mod:`agents.ppo` metadata of the actor trained on ``venv``."""
    from agents.ppo import policy_meta as meta

    env = venv.venv
    return meta(env.variant, env.single_observation_space.shape[0], args.net_arch.split(","),
                args.activation, args.obs_dtype, steps)


# ---------------------------------------------------------------------------------------
# evaluation


def table_margin(row: dict, me: str) -> float:
    """A tournament row's margin for ``me``: the mean hand points per hand of its table
    positions less the other positions' (two seats: the row's own ``margin``)."""
    from experiments.ladder import margin
    from experiments.tournament import play_points, row_table

    mine = np.array([spec == me for spec in row_table(row)])
    return float(margin(play_points(row).mean(axis=0), mine))


def evaluate(policy_path: Path, args, opponents, deals: int) -> list[dict]:
    """Duplicate deals of the tournament (``play_table``) against each baseline: the policy
    and the baseline alternate round the table (A B A B ...; two seats: A B), each deal
    played in every cyclic seat order."""
    from experiments.tournament import play_table
    from mountain_rummy_env import make_variant

    options = json.loads(args.variant_options)
    cfg = {"variant": args.variant, "variant_options": options, "seed": args.eval_seed}
    seats = make_variant(args.variant, **options).num_players
    me = f"ppo:path={policy_path}"
    out = []
    for opp in opponents:
        table = [me if k % 2 == 0 else opp for k in range(seats)]
        rows = [play_table(cfg, table, args.eval_seed + k) for k in range(deals)]
        m = np.array([table_margin(r, me) for r in rows], np.float64)
        w = (m > 0) + 0.5 * (m == 0)
        forfeits = [f for r in rows for f in r.get("forfeits", ())]
        out.append({"opponent": opp, "deals": deals, "win_rate": float(w.mean()),
                    "margin": float(m.mean()),
                    "margin_se": float(m.std(ddof=1) / math.sqrt(len(m))) if len(m) > 1 else 0.0,
                    "forfeits": len(forfeits),
                    "first_forfeit": (f"{forfeits[0]['agent']}: {forfeits[0]['kind']}: "
                                      f"{forfeits[0]['reason']}"[:300] if forfeits else "")})
    return out


EVAL_FIELDS = ["env_steps", "wall_s", "opponent", "deals", "win_rate", "margin", "margin_se",
               "forfeits", "first_forfeit"]


def record_evaluation(csv_path: Path, step: int, wall_s: float, results: list[dict]) -> str:
    """Append ``results`` (of :func:`evaluate`) to ``eval.csv`` and return the line to print.
    A file from before a column was added is rewritten with the new header first. A hand
    forfeited in an evaluation (an agent crashed or played an illegal move, and a random
    stand-in took its seat) makes the margin meaningless, so the line says so loudly."""
    rows = []
    if csv_path.exists():
        with csv_path.open(newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames != EVAL_FIELDS:
                rows = list(reader)
    mode = "w" if rows or not csv_path.exists() else "a"
    with csv_path.open(mode, newline="") as fh:
        w = csv.DictWriter(fh, EVAL_FIELDS, restval="")
        if mode == "w":
            w.writeheader()
        w.writerows(rows)
        for r in results:
            w.writerow({"env_steps": step, "wall_s": round(wall_s, 1), **r})
    line = "  ".join(f"vs {r['opponent']}: win {r['win_rate']:.2f} margin {r['margin']:+.1f}"
                     f"±{1.96 * r['margin_se']:.1f}" for r in results)
    bad = [r for r in results if r["forfeits"]]
    if bad:
        line += "".join(f"\nWARNING: {r['forfeits']} forfeited hand(s) against {r['opponent']}, "
                        f"this evaluation is not a measurement (first: {r['first_forfeit']})"
                        for r in bad)
    return line


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

        def _on_step(self) -> bool:
            if self.bar is not None:
                self.bar.update(self.training_env.num_envs)
            for info in self.locals.get("infos", ()):
                if "episode" in info:
                    self.hands.append(info["episode"]["r"])
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
        line = record_evaluation(csv_path, n, time.time() - start_time + state["wall_before"], results)
        for r in results:
            logger.record(f"eval/{r['opponent']}/win_rate", r["win_rate"])
            logger.record(f"eval/{r['opponent']}/margin", r["margin"])
        print(f"\n[eval @ {n} steps, {time.time() - t:.0f}s] {line}", file=sys.stderr, flush=True)
        key = results[-1]["margin"]
        if not results[-1]["forfeits"] and (state.get("best_margin") is None or key > state["best_margin"]):
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
        model = MaskablePPO(
            "MlpPolicy", venv, learning_rate=schedule, n_steps=args.n_steps,
            batch_size=args.batch_size, n_epochs=args.n_epochs, gamma=args.gamma,
            gae_lambda=args.gae_lambda, clip_range=args.clip_range, ent_coef=args.ent_coef,
            vf_coef=args.vf_coef, max_grad_norm=args.max_grad_norm, target_kl=args.target_kl,
            policy_kwargs={"net_arch": {"pi": arch, "vf": arch}, "activation_fn": act},
            tensorboard_log=str(run / "tb"), seed=args.seed, device="cpu", verbose=0)
    hooks = make_callback(venv, pool, args, run, state)
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
    print(json.dumps(summary), flush=True)
    return summary


if __name__ == "__main__":
    main()
