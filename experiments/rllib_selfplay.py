"""Self-play PPO for Mountain Rummy (or Gin) with Ray RLlib's new API stack, one readable file.

Needs Ray RLlib (``pip install -e ".[ray]"``); nothing in the package imports Ray,
only this script does. Every hyper-parameter is a flag (``--help``); ``docs/rllib.md`` has the
commands, the cluster set-up and measured numbers.

* Env: the PettingZoo AEC env (``mountain_rummy_v0.env()``) with ``illegal_action="raise"``,
  so an illegal move stops the run instead of being quietly penalised. RLlib's own
  ``PettingZooEnv`` wrapper turns it into a ``MultiAgentEnv``: each ``step`` returns the
  observation of the one agent to act next, which is what a turn-based game needs, and it
  copes with the same agent acting several times in a row (a Mountain turn is draw -> melds /
  layoffs -> discard). At a hand's end it reports both seats' rewards and terminations.
  One episode is one hand; the reward is the hand-point margin times ``--reward-scale``
  (``--reward win``: +1/-1/0).
* Action masking: RLlib's documented masked-action module, ``ActionMaskingTorchRLModule``
  (``ray.rllib.examples.rl_modules.classes.action_masking_rlm``), which adds log(mask) to the
  logits. It wants the observation dict keys ``"observations"`` and ``"action_mask"``; our
  env says ``"observation"``, so :class:`RenameForRLlib` renames the key (and hands the
  mask over as float32, the space that module documents). Nothing of RLlib is copied.
* Self-play: both seats map to one module, ``"shared"`` (``policy_mapping_fn``), so every
  hand trains the policy from both sides. The opponent is always the current policy (no
  frozen heuristic opponent: the project's agents act on a ``PlayerView``, which an RLModule
  does not see).
* Outputs in ``--out``: ``metrics.jsonl`` (one JSON line per iteration, appended as it goes),
  ``checkpoints/iter_NNNNN`` (``Algorithm.save_to_path``, every ``--checkpoint-every``
  iterations and at the end), ``args.json``, ``eval.json``. ``--resume`` restores the latest
  checkpoint and trains on to ``--iterations`` in all.
* Evaluation at the end: the trained policy (greedy: argmax of the masked logits) against
  ``--eval-opponent`` (any ``agents.make_agent`` spec, ``random`` by default) on
  ``--eval-deals`` deals, each played from both seats; every move of the policy is checked
  against the mask.
* Cluster: ``--address auto`` (or ``ray://HEAD:10001``) joins a running Ray cluster instead
  of starting a local one; ``--num-env-runners N`` samples on N remote workers.

    python -m experiments.rllib_selfplay --iterations 20 --out runs/rllib/mountain
    python -m experiments.rllib_selfplay --iterations 40 --out runs/rllib/mountain --resume
    python -m experiments.rllib_selfplay --address auto --num-env-runners 8 --out runs/rllib/cluster
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from gymnasium import spaces
from pettingzoo.utils.wrappers import BaseWrapper

from experiments import ray_runner
from mountain_rummy_env import gin_rummy_v0, mountain_rummy_v0

try:
    import ray
    import torch
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
    from ray.tune.registry import register_env
except ImportError as err:  # pragma: no cover - the message is the point
    sys.exit(f"rllib_selfplay needs Ray RLlib and torch ({err}); "
             f'pip install -e ".[ray]"')

VARIANTS = {"mountain": mountain_rummy_v0, "gin": gin_rummy_v0}
ENV_NAME = "rummy_selfplay"
MODULE_ID = "shared"


# -- the environment -------------------------------------------------------------------------

class RenameForRLlib(BaseWrapper):
    """The AEC env with the observation dict RLlib's masking module expects:
    ``{"observations": <our "observation">, "action_mask": float32 0/1}``."""

    def observation_space(self, agent):
        space = self.env.observation_space(agent)
        return spaces.Dict({
            "observations": space["observation"],
            "action_mask": spaces.Box(0.0, 1.0, space["action_mask"].shape, np.float32),
        })

    def observe(self, agent):
        obs = self.env.observe(agent)
        return {"observations": obs["observation"],
                "action_mask": obs["action_mask"].astype(np.float32)}


class RummyMultiAgentEnv(PettingZooEnv):
    """RLlib's ``PettingZooEnv`` over :class:`RenameForRLlib`, with the rewards scaled."""

    def __init__(self, config: dict | None = None):
        config = dict(config or {})
        self.reward_scale = float(config.pop("reward_scale", 1.0))
        module = VARIANTS[config.pop("variant", "mountain")]
        config.setdefault("illegal_action", "raise")   # strict: an illegal move is an error
        super().__init__(RenameForRLlib(module.env(**config)))

    def step(self, action):
        obs, rewards, terminateds, truncateds, infos = super().step(action)
        rewards = {agent: r * self.reward_scale for agent, r in rewards.items()}
        return obs, rewards, terminateds, truncateds, infos


# -- the algorithm ---------------------------------------------------------------------------

def module_spec(args) -> RLModuleSpec:
    """RLlib's masked-action PPO module with an MLP of ``--hidden`` units."""
    hidden = [int(h) for h in args.hidden.split(",")]
    return RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                        model_config=DefaultModelConfig(fcnet_hiddens=hidden,
                                                        fcnet_activation="relu",
                                                        vf_share_layers=False))


def env_config(args) -> dict:
    return {"variant": args.variant, "reward": args.reward,
            "reward_scale": args.reward_scale if args.reward == "margin" else 1.0}


def fragment_length(args) -> int:
    """``--rollout-fragment-length``, or about 200 steps dividing each runner's share of the
    batch evenly (RLlib refuses fragments that miss the batch size by more than 10%)."""
    if args.rollout_fragment_length:
        return args.rollout_fragment_length
    share = args.train_batch_size / max(1, args.num_env_runners)
    return int(np.ceil(share / max(1, round(share / 200))))


def build_config(args) -> PPOConfig:
    register_env(ENV_NAME, lambda cfg: RummyMultiAgentEnv(cfg))
    return (
        PPOConfig()  # the new API stack (RLModule, Learner, EnvRunner) is the default
        # RLlib's env pre-check steps a random (so illegal) action: the strict env would raise
        .environment(ENV_NAME, env_config=env_config(args), disable_env_checking=True)
        # short fragments: RLlib 2.60's sampler revisits every finished episode of the current
        # `sample()` call at each step (measured here: 280 env steps/s sampling 4000 steps
        # in one call, 440 in 200-step calls)
        .env_runners(num_env_runners=args.num_env_runners, num_envs_per_env_runner=1,
                     rollout_fragment_length=fragment_length(args))
        .multi_agent(
            policies={MODULE_ID},
            # self-play: both seats play (and train) the same module
            policy_mapping_fn=lambda agent_id, episode, **kwargs: MODULE_ID,
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={MODULE_ID: module_spec(args)}))
        .training(train_batch_size_per_learner=args.train_batch_size,
                  minibatch_size=args.minibatch_size, num_epochs=args.num_epochs, lr=args.lr,
                  gamma=args.gamma, lambda_=args.gae_lambda, entropy_coeff=args.entropy_coeff,
                  vf_clip_param=args.vf_clip)
        .debugging(seed=args.seed, log_level="ERROR")
    )


# -- playing with the trained module ---------------------------------------------------------

def module_action(module, obs: dict, explore: bool = False) -> int:
    """One action of an ``ActionMaskingTorchRLModule`` for one renamed observation: sampled
    from its (masked) action distribution with ``explore``, else the most likely one."""
    batch = {Columns.OBS: {key: torch.from_numpy(np.asarray(value)[None])
                           for key, value in obs.items()}}
    with torch.no_grad():
        if explore:
            out = module.forward_exploration(batch)
            dist = module.get_exploration_action_dist_cls().from_logits(out[Columns.ACTION_DIST_INPUTS])
            return int(dist.sample()[0])
        out = module.forward_inference(batch)
    return int(torch.argmax(out[Columns.ACTION_DIST_INPUTS][0]))


def evaluate(module, args) -> dict:
    """The module (greedy) against ``--eval-opponent`` on ``--eval-deals`` deals, each from
    both seats (the same deck and dealer: duplicate play). Counts the module's moves and the
    legal ones among them."""
    from agents import make_agent
    from mountain_rummy_env.game import player_view

    env = RenameForRLlib(VARIANTS[args.variant].env(illegal_action="raise", reward="margin"))
    margins, moves, legal = [], 0, 0
    for deal in range(args.eval_deals):
        for seat in (0, 1):
            me = env.possible_agents[seat]
            opponent = make_agent(args.eval_opponent, seed=[args.seed, deal, seat], variant=args.variant)
            env.reset(seed=10_000 + deal)
            total = 0.0
            for agent in env.agent_iter():
                obs, reward, terminated, truncated, _ = env.last()
                if agent == me:
                    total += reward
                if terminated or truncated:
                    env.step(None)
                    continue
                if agent == me:
                    action = module_action(module, obs)
                    moves += 1
                    legal += int(obs["action_mask"][action] == 1)
                else:
                    view = player_view(env.unwrapped.game, 0, 1 - seat)
                    action = opponent.act(view, obs["action_mask"].astype(np.int8))
                env.step(action)
            margins.append(total)
    m = np.array(margins)
    return {"opponent": args.eval_opponent, "hands": len(m), "mean_margin": float(m.mean()),
            "win_rate": float((m > 0).mean()), "tie_rate": float((m == 0).mean()),
            "moves": moves, "legal_moves": legal}


# -- run folder, metrics, checkpoints --------------------------------------------------------

def checkpoints(out: Path) -> list[Path]:
    folder = out / "checkpoints"
    return sorted(folder.glob("iter_*")) if folder.is_dir() else []


def metrics_row(result: dict, steps_before: int, seconds: float) -> dict:
    """The per-iteration numbers worth keeping from RLlib's (nested) result dict; ``seconds``
    is the iteration's wall time (sampling + learning), measured here: RLlib's
    ``time_this_iter_s`` is a smoothed timer, not this iteration's time."""
    runners = result.get("env_runners", {})
    learner = result.get("learners", {}).get(MODULE_ID, {})
    steps = int(result.get("num_env_steps_sampled_lifetime", 0))
    returns = runners.get("agent_episode_returns_mean", {})
    return {
        "iteration": int(result["training_iteration"]),
        "env_steps": steps,
        "iter_env_steps": steps - steps_before,
        "iter_seconds": round(seconds, 3),
        "env_steps_per_s": round((steps - steps_before) / seconds, 1) if seconds else None,
        "episodes": int(runners.get("num_episodes", 0)),
        "episode_len_mean": runners.get("episode_len_mean"),
        "episode_return_mean": runners.get("episode_return_mean"),
        "return_player_0": returns.get("player_0"),
        "return_player_1": returns.get("player_1"),
        "policy_loss": learner.get("policy_loss"),
        "vf_loss": learner.get("vf_loss"),
        "entropy": learner.get("entropy"),
        "mean_kl": learner.get("mean_kl_loss"),
    }


def fmt(x, spec=".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and np.isnan(x)) else format(x, spec)


def read_metrics(path: Path, up_to: int) -> list[str]:
    """The metrics lines of iterations up to ``up_to`` (a resumed run redoes the later ones)."""
    if not path.exists():
        return []
    return [line for line in path.read_text().splitlines()
            if line.strip() and json.loads(line)["iteration"] <= up_to]


# -- Ray ------------------------------------------------------------------------------------

def connect(args) -> bool:
    """Start local Ray (``--num-cpus``) or join ``--address`` as the tournaments do
    (:func:`experiments.ray_runner.connect`: a one-line error, at once, for an address that
    does not answer or refuses us; the cluster's token sent when one is here); True when this
    call started it."""
    if ray.is_initialized():
        return False
    try:
        ray_runner.connect(args.address or ray_runner.LOCAL, num_cpus=args.num_cpus)
    except ray_runner.RayRunError as err:
        raise SystemExit(f"rllib_selfplay: {err}")
    return True


def parse_args(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m experiments.rllib_selfplay",
        description="Self-play PPO (Ray RLlib, new API stack, masked actions) on Mountain Rummy.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--variant", choices=sorted(VARIANTS), default="mountain")
    p.add_argument("--iterations", type=int, default=20, help="training iterations in all (also when resuming)")
    p.add_argument("--out", default="runs/rllib/selfplay", help="run folder: metrics, checkpoints")
    p.add_argument("--resume", action="store_true", help="continue from the latest checkpoint in --out")
    p.add_argument("--checkpoint-every", type=int, default=5, help="iterations between checkpoints")
    p.add_argument("--seed", type=int, default=0)
    g = p.add_argument_group("Ray")
    g.add_argument("--address", default=None,
                   help="join a running Ray cluster (auto, HOST:6379 or ray://HOST:10001); default: local Ray")
    g.add_argument("--num-cpus", type=int, default=None, help="CPUs of local Ray (default: all)")
    g.add_argument("--num-env-runners", type=int, default=0,
                   help="remote sampling workers (0: sample in the driver process)")
    g = p.add_argument_group("PPO")
    g.add_argument("--train-batch-size", type=int, default=4000, help="env steps per iteration")
    g.add_argument("--rollout-fragment-length", type=int, default=0,
                   help="env steps an env runner samples per call (0: about 200, fitting the batch)")
    g.add_argument("--minibatch-size", type=int, default=500)
    g.add_argument("--num-epochs", type=int, default=4)
    g.add_argument("--lr", type=float, default=3e-4)
    g.add_argument("--gamma", type=float, default=1.0, help="1: the hand's result is all that counts")
    g.add_argument("--gae-lambda", type=float, default=0.95)
    g.add_argument("--entropy-coeff", type=float, default=0.01)
    g.add_argument("--vf-clip", type=float, default=10.0, help="PPO's value-loss clip")
    g.add_argument("--hidden", default="256,256", help="MLP layer sizes")
    g.add_argument("--reward", choices=("margin", "win"), default="margin")
    g.add_argument("--reward-scale", type=float, default=0.01, help="multiplies the margin reward")
    g = p.add_argument_group("evaluation")
    g.add_argument("--eval-deals", type=int, default=10, help="deals (x2 seats) against --eval-opponent; 0: none")
    g.add_argument("--eval-opponent", default="random", help="an agents.make_agent spec")
    args = p.parse_args(argv)
    if args.iterations < 1 or args.checkpoint_every < 1 or args.num_env_runners < 0:
        p.error("--iterations and --checkpoint-every must be >= 1, --num-env-runners >= 0")
    if not all(h.strip().isdigit() and int(h) > 0 for h in args.hidden.split(",")):
        p.error(f"--hidden takes layer sizes such as 256,256; got {args.hidden!r}")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    if args.eval_deals > 0:  # an opponent that cannot play is an error now, not after training
        from agents import AgentSpecError, make_agent
        try:
            make_agent(args.eval_opponent, seed=0, variant=args.variant)
        except AgentSpecError as err:
            raise SystemExit(f"rllib_selfplay: --eval-opponent: {err}")
    out = Path(args.out)
    saved = checkpoints(out)
    if args.resume and not saved:
        raise SystemExit(f"rllib_selfplay: --resume but no checkpoint in {out / 'checkpoints'}")
    if not args.resume and (saved or (out / "metrics.jsonl").exists()):
        raise SystemExit(f"rllib_selfplay: {out} already holds a run; pass --resume or another --out")
    out.mkdir(parents=True, exist_ok=True)
    (out / "args.json").write_text(json.dumps(vars(args), indent=1))

    started = connect(args)
    try:
        algo = build_config(args).build_algo()
        if args.resume:
            try:
                algo.restore_from_path(str(saved[-1].resolve()))
            except Exception as err:
                raise SystemExit(f"rllib_selfplay: cannot resume from {saved[-1]}: "
                                 f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}")
            print(f"resumed from {saved[-1]} (iteration {algo.iteration})")
        metrics = out / "metrics.jsonl"
        kept = read_metrics(metrics, algo.iteration)
        metrics.write_text("".join(line + "\n" for line in kept))
        steps = json.loads(kept[-1])["env_steps"] if kept else 0

        print(f"{'iter':>5} {'env steps':>10} {'steps/s':>8} {'s/iter':>7} {'episodes':>8} "
              f"{'ep len':>7} {'ret p0':>7} {'ret sum':>7} {'entropy':>7} {'vf loss':>7}")
        while algo.iteration < args.iterations:
            t = time.perf_counter()
            result = algo.train()
            row = metrics_row(result, steps, time.perf_counter() - t)
            steps = row["env_steps"]
            with metrics.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(f"{row['iteration']:>5} {steps:>10} {fmt(row['env_steps_per_s'], '.0f'):>8} "
                  f"{row['iter_seconds']:>7.1f} {row['episodes']:>8} {fmt(row['episode_len_mean'], '.1f'):>7} "
                  f"{fmt(row['return_player_0']):>7} {fmt(row['episode_return_mean']):>7} "
                  f"{fmt(row['entropy']):>7} {fmt(row['vf_loss']):>7}", flush=True)
            if algo.iteration % args.checkpoint_every == 0 or algo.iteration == args.iterations:
                path = out / "checkpoints" / f"iter_{algo.iteration:05d}"
                algo.save_to_path(str(path.resolve()))
                print(f"checkpoint {path}")

        report = {"iteration": algo.iteration, "env_steps": steps}
        if args.eval_deals > 0:
            t = time.time()
            report["eval"] = evaluate(algo.get_module(MODULE_ID), args)
            e = report["eval"]
            print(f"eval vs {e['opponent']}: {e['hands']} hands, mean margin {e['mean_margin']:+.1f}, "
                  f"won {e['win_rate']:.0%}, legal moves {e['legal_moves']}/{e['moves']} "
                  f"({time.time() - t:.0f} s)")
            (out / "eval.json").write_text(json.dumps(report["eval"], indent=1))
        algo.stop()
        return report
    finally:
        if started:
            ray.shutdown()


if __name__ == "__main__":
    main()
