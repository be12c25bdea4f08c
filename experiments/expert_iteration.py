"""Expert iteration: a policy/value network trained on the network-guided search's own choices.

One file, every hyper-parameter a flag (``--help``); the style of ``selfplay_ppo.py``. Each
iteration:

1. **Play** ``--hands`` hands (one deal each, the learner's seat rotating) where the learner
   is ``netsearch`` (:mod:`agents.netsearch`) guided by the current network -- the plain
   search in iteration 0, when there is none (``--init-policy``: a policy file of
   :mod:`agents.ppo`, such as selfplay_ppo's, to start from; it guides iteration 0 too)
   -- against opponents drawn per seat and hand from ``--opponents`` (any ``make_agent``
   spec of the variant, weighted; ``self`` is the current network alone, ``rules`` until
   there is one).
2. **Record** each learner decision with more than one legal action: the observation (the
   env's int8 encoder, the learner's seat, the ``--obs-features`` block appended), the
   legal mask, the target policy (at a searched decision the softmax of the searched
   candidates' mean playout margins over ``--temperature`` points; elsewhere the move
   played) and, once the hand is over, the learner's hand margin (its points less the mean
   of the others') times ``--reward-scale`` as the value target. A replay buffer keeps the
   last ``--buffer``.
3. **Train** the policy and value networks on the buffer (``--epochs`` passes; masked
   cross-entropy to the target plus ``--value-coef`` x the value's squared error).
4. **Save** ``checkpoint.pt`` (a policy file of :mod:`agents.ppo` with the value network and
   a ``"training"`` entry: optimizer, counters, RNG states; read with
   ``torch.load(weights_only=True)``), ``buffer.npz`` (the replay buffer, no pickle),
   ``policy.pt`` + ``.json`` (the networks alone: ``ppo:path=RUN/policy.pt`` plays the
   network alone, ``netsearch:path=RUN/policy.pt`` the guided search), ``iterations.csv``.

    python -m experiments.expert_iteration --variant mountain --iterations 4 --hands 300
    mountain-rummy expert-iteration --variant gin --opponents rules:1,self:1
    mountain-rummy expert-iteration --obs-features solver --init-policy runs/selfplay/X/checkpoint.pt
    # interrupted? the same command with --resume continues after the last whole iteration
    mountain-rummy tournament --agents ppo:path=runs/expert/mountain/policy.pt greedy
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

FORMAT = "mountain-rummy-expert-iteration/1"
# flags a resumed run must share with its checkpoint (they shape the network or its data)
FIXED = ("variant", "variant_options", "net_arch", "activation", "obs_features", "reward_scale")
LOG_FIELDS = ("iteration", "hands", "records", "searched", "buffer", "learner_margin",
              "learner_hand_win", "policy_loss", "value_loss", "play_s", "train_s", "wall_s")
DEAL_BASE = 10_000_000      # training deals are DEAL_BASE + seed x 10^6 + hands played


def build_parser(prog: str = "python -m experiments.expert_iteration") -> argparse.ArgumentParser:
    from experiments.cli import _nonneg, _positive
    from experiments.selfplay_ppo import _positive_float, add_obs_features
    from mountain_rummy_env.registry import DEFAULT_VARIANT, variant_names

    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    g = p.add_argument_group("run")
    g.add_argument("--variant", choices=variant_names(), default=DEFAULT_VARIANT)
    g.add_argument("--variant-options", default="{}", help="JSON dict of variant config options")
    g.add_argument("--run-dir", default=None, help="output folder (default runs/expert/<variant>)")
    g.add_argument("--iterations", type=_positive, default=4,
                   help="iterations in all (a resumed run continues up to this many)")
    g.add_argument("--seed", type=_nonneg, default=0)
    g.add_argument("--resume", action="store_true", help="continue from RUN_DIR/checkpoint.pt")
    g.add_argument("--init-policy", default=None, metavar="PATH",
                   help="start from this policy file of agents.ppo (selfplay_ppo's policy.pt "
                        "or checkpoint.pt, an expert_iteration policy.pt): its actor, and its "
                        "value network or critic where the shapes match; it guides iteration 0")
    g.add_argument("--threads", type=_nonneg, default=1, help="torch CPU threads (0: torch default)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("play")
    g.add_argument("--hands", type=_positive, default=200, help="hands per iteration")
    g.add_argument("--opponents", default="greedy:1,rules:1,self:1",
                   help="weighted pool spec:weight,... drawn per seat and hand: make_agent "
                        "specs of the variant, and self (the current network alone; rules "
                        "until there is one)")
    g.add_argument("--budget", type=_positive, default=100, help="the learner's playouts per searched decision")
    g.add_argument("--top", type=_nonneg, default=3, help="the network's best actions added to the candidates")
    g.add_argument("--widen", type=int, choices=(0, 1), default=1,
                   help="1: the search's own candidates stay among them")
    g.add_argument("--temperature", type=_positive_float, default=5.0,
                   help="points: the target is softmax(candidate mean margins / temperature)")
    g = p.add_argument_group("network and training")
    add_obs_features(g)
    g.add_argument("--net-arch", default="256,256", help="hidden widths (policy and value)")
    g.add_argument("--activation", choices=("tanh", "relu"), default="relu")
    g.add_argument("--reward-scale", type=_positive_float, default=0.01,
                   help="the value target is the hand margin times this")
    g.add_argument("--buffer", type=_positive, default=50_000, help="records kept (the newest)")
    g.add_argument("--epochs", type=_positive, default=4, help="passes over the buffer per iteration")
    g.add_argument("--minibatch-size", type=_positive, default=256)
    g.add_argument("--learning-rate", type=_positive_float, default=1e-3)
    g.add_argument("--weight-decay", type=float, default=1e-4)
    g.add_argument("--value-coef", type=float, default=1.0)
    return p


def parse_args(argv=None, prog: str = "python -m experiments.expert_iteration"):
    """The flags, checked: a bad variant option, feature block, width or opponent, or
    ``--init-policy`` with ``--resume``, is a one-line usage error."""
    from experiments.selfplay_ppo import checked_variant_and_net

    p = build_parser(prog)
    args = p.parse_args(argv)
    variant = checked_variant_and_net(p, args)
    if args.init_policy and args.resume:
        p.error("--init-policy with --resume: a resumed run starts from its checkpoint")
    try:
        args.pool = parse_opponents(args.opponents, variant)
    except (ValueError, SystemExit) as err:    # parse_pool's errors are SystemExit
        p.error(str(err))
    return args


def parse_opponents(text: str, variant) -> list[tuple[str, float]]:
    """``--opponents`` as ``[(spec, weight)]``; each spec is built once for ``variant`` so
    an unknown agent or bad parameter is a ValueError naming it."""
    from agents import make_agent
    from agents.base import AgentSpecError
    from experiments.train_ppo import parse_pool

    pool = parse_pool(text)
    for spec, _ in pool:
        if spec != "self":
            try:
                make_agent(spec, seed=0, variant=variant.name)
            except AgentSpecError as err:
                raise ValueError(f"--opponents: {err}") from None
    return pool


# ---------------------------------------------------------------------------------------
# the networks and their files


def build_nets(n_obs: int, n_act: int, args):
    """``(actor, value)``: the :mod:`agents.ppo` actor and :func:`agents.netsearch.build_value`."""
    from agents.netsearch import build_value
    from agents.ppo_nets import build_actor
    from mountain_rummy_env.envs.observation import has_move_block

    return (build_actor(n_obs, n_act, args.net_arch_list, args.activation,
                        has_move_block(args.obs_features)),
            build_value(n_obs, args.net_arch_list, args.activation))


def net_meta(variant, n_obs: int, args, iteration: int, hands: int) -> dict:
    from agents.ppo import policy_meta
    from mountain_rummy_env.envs.observation import has_move_block

    return policy_meta(variant, n_obs, args.net_arch_list, args.activation, "int8", 0,
                       obs_features=args.obs_features,
                       move_skip=has_move_block(args.obs_features), trainer="expert_iteration",
                       iteration=int(iteration), hands=int(hands),
                       reward_scale=float(args.reward_scale))


def save_net(path: Path, actor, value, meta: dict, training: dict | None = None) -> None:
    """A policy file of :mod:`agents.ppo` with the value network (``value_state_dict``)
    and, for a checkpoint, the ``training`` entry; written atomically, ``.json`` sidecar
    for a policy file."""
    import torch

    from agents.ppo import FORMAT as POLICY_FORMAT

    blob = dict(meta, format=POLICY_FORMAT, state_dict=actor.state_dict(),
                value_state_dict=value.state_dict())
    if training is not None:
        blob["training"] = dict(training, format=FORMAT)
    tmp = path.with_name(path.name + ".tmp")
    torch.save(blob, tmp)
    os.replace(tmp, path)
    if training is None:
        path.with_suffix(".json").write_text(json.dumps(dict(meta, format=POLICY_FORMAT),
                                                        indent=1) + "\n")


def fixed_flags(args) -> dict:
    return {"variant": args.variant, "variant_options": json.loads(args.variant_options),
            "net_arch": args.net_arch_list, "activation": args.activation,
            "obs_features": args.obs_features, "reward_scale": args.reward_scale}


def load_checkpoint(path: Path, args) -> dict:
    """The checkpoint's ``training`` entry plus ``actor`` and ``value`` weights; a missing,
    corrupt or foreign file, or one of other :data:`FIXED` flags, is a CheckpointError."""
    import torch

    from agents.ppo import CheckpointError
    from experiments.selfplay_ppo import FIXED_DEFAULTS

    if not path.is_file():
        raise CheckpointError(f"--resume: no checkpoint {str(path)!r}")
    try:
        blob = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:
        raise CheckpointError(f"checkpoint {str(path)!r} is corrupt or not a torch file "
                              f"({type(err).__name__}: {str(err).splitlines()[0][:200]})") from None
    training = blob.get("training") if isinstance(blob, dict) else None
    if not isinstance(training, dict) or training.get("format") != FORMAT:
        raise CheckpointError(f"{str(path)!r} is not an expert_iteration checkpoint (expected format {FORMAT!r})")
    want = fixed_flags(args)
    for key in FIXED:
        have = training.get("flags", {}).get(key, FIXED_DEFAULTS.get(key))
        if have != want[key]:
            raise CheckpointError(f"checkpoint {str(path)!r} was made with --{key.replace('_', '-')} "
                                  f"{have!r}, this run has {want[key]!r}")
    return dict(training, actor=blob.get("state_dict"), value=blob.get("value_state_dict"))


def load_init(path: str, variant, n_obs: int, actor, value, args) -> str:
    """Load ``--init-policy`` into ``actor`` and, where the file has one of the same shape
    and reward scale, ``value`` (an expert_iteration ``value_state_dict`` or a selfplay_ppo
    checkpoint's critic: the same layers); returns what the value network starts from.
    A missing, corrupt or foreign file, or one whose network reads another input or has
    other widths, is a :class:`CheckpointError` naming what differs."""
    import torch

    from agents.ppo import CheckpointError, load_policy, obs_features_of_meta

    try:
        init_actor, meta = load_policy(path)
    except CheckpointError as err:
        raise CheckpointError(f"--init-policy: {err}") from None
    for flag, have, want in (
            ("--variant", meta.get("variant"), variant.name),
            ("--obs-features", obs_features_of_meta(meta), args.obs_features),
            ("observation size", meta.get("observation_size"), n_obs),
            ("obs_dtype", meta.get("obs_dtype") or "float32", "int8"),
            ("--net-arch", meta.get("net_arch"), args.net_arch_list),
            ("--activation", meta.get("activation"), args.activation)):
        if have != want:
            raise CheckpointError(f"--init-policy {path!r} has {flag} {have!r}, this run {want!r}")
    actor.load_state_dict(init_actor.state_dict())
    blob = torch.load(path, map_location="cpu", weights_only=True)
    if "value_state_dict" in blob:
        sd, source = blob["value_state_dict"], f"the value network of {path!r}"
        if meta.get("reward_scale", args.reward_scale) != args.reward_scale:
            return (f"fresh: the value network of {path!r} predicts margins x "
                    f"{meta['reward_scale']}, this run x {args.reward_scale}")
    elif isinstance(blob.get("training"), dict) and "critic" in blob["training"]:
        sd = blob["training"]["critic"]
        source = (f"the critic of {path!r} (selfplay_ppo's: margins x its --reward-scale, "
                  "discounted by its --gamma)")
    else:
        return f"fresh: {path!r} holds no value network"
    shapes = {k: tuple(v.shape) for k, v in value.state_dict().items()}
    if {k: tuple(getattr(v, "shape", ())) for k, v in sd.items()} != shapes:
        return f"fresh: the value network of {path!r} has other layers"
    value.load_state_dict(sd)
    return source


# ---------------------------------------------------------------------------------------
# the replay buffer


class Buffer:
    """The newest ``size`` records as arrays: ``obs`` int8, ``mask`` packed bits, ``ids`` and
    ``probs`` (the target, padded with probability 0), ``value`` (the value target)."""

    KEYS = ("obs", "mask", "ids", "probs", "value")

    def __init__(self, size: int):
        self.size = size
        self.data: dict | None = None

    def __len__(self) -> int:
        return 0 if self.data is None else len(self.data["value"])

    def add(self, records, values) -> None:
        """``records``: the agent's ``(obs, packed mask, ids, probs, action)`` tuples;
        ``values``: the value target of each."""
        if not records:
            return
        k = max(len(r[2]) for r in records)
        ids = np.zeros((len(records), k), np.int64)
        probs = np.zeros((len(records), k), np.float32)
        for i, r in enumerate(records):
            ids[i, :len(r[2])] = r[2]
            probs[i, :len(r[3])] = r[3]
        new = {"obs": np.stack([r[0] for r in records]), "mask": np.stack([r[1] for r in records]),
               "ids": ids, "probs": probs, "value": np.asarray(values, np.float32)}
        if self.data is not None:
            width = max(self.data["ids"].shape[1], k)
            for key in ("ids", "probs"):
                for d in (self.data, new):
                    d[key] = np.pad(d[key], ((0, 0), (0, width - d[key].shape[1])))
            new = {key: np.concatenate([self.data[key], new[key]]) for key in self.KEYS}
        self.data = {key: a[-self.size:] for key, a in new.items()}

    def save(self, path: Path, iteration: int) -> None:
        tmp = path.with_name(path.name + ".tmp.npz")
        np.savez(tmp, iteration=np.int64(iteration), **(self.data or {}))
        os.replace(tmp, path)

    def load(self, path: Path, iteration: int) -> None:
        from agents.ppo import CheckpointError

        try:
            with np.load(path, allow_pickle=False) as z:
                if int(z["iteration"]) != iteration:
                    raise ValueError(f"it holds iteration {int(z['iteration'])}, the checkpoint {iteration}")
                self.data = {k: z[k] for k in self.KEYS} if "value" in z else None
        except Exception as err:
            raise CheckpointError(f"replay buffer {str(path)!r} does not match the checkpoint "
                                  f"({type(err).__name__}: {str(err)[:200]})") from None
        if self.data is not None:
            self.data = {k: a[-self.size:] for k, a in self.data.items()}


# ---------------------------------------------------------------------------------------
# playing and training


def learner_spec(policy: Path | None, args) -> str:
    """The learner's ``netsearch`` spec: guided by ``policy``, or the plain search with no
    network; ``features`` keeps the records in the run's encoding either way."""
    spec = (f"netsearch:budget={args.budget},temperature={args.temperature:g},"
            f"features={args.obs_features}")
    if policy is not None:
        spec += f",path={policy},top={args.top},widen={args.widen}"
    return spec


def play_iteration(args, variant, game, policy: Path | None, counters, rng, bar=None):
    """Play ``--hands`` hands with the learner's seat rotating; returns the records and
    their value targets, and the learner's hand margins."""
    from agents import make_agent
    from experiments.play import play_hand

    n = variant.num_players
    learner = make_agent(learner_spec(policy, args), seed=[args.seed, counters["hands"], 1],
                         variant=variant.name)
    specs = [s for s, _ in args.pool]
    w = np.array([x for _, x in args.pool], np.float64)
    self_spec = f"ppo:path={policy}" if policy is not None else "rules"
    records, values, margins = [], [], []
    for h in range(args.hands):
        deal = DEAL_BASE + args.seed * 1_000_000 + counters["hands"]
        seat = counters["hands"] % n
        agents = []
        for s in range(n):
            if s == seat:
                agents.append(learner)
                continue
            spec = specs[rng.choice(len(specs), p=w / w.sum())]
            agents.append(make_agent(self_spec if spec == "self" else spec,
                                     seed=[args.seed, deal, s], variant=variant.name))
        learner.recorder = mine = []
        r = play_hand(game, agents, seed=deal)
        pts = np.asarray(r.hand_points, np.float64)
        margin = pts[seat] - np.delete(pts, seat).mean()
        records += mine
        values += [margin * args.reward_scale] * len(mine)
        margins.append(margin)
        counters["hands"] += 1
        if bar is not None:
            bar.update(1)
            bar.set_postfix(margin=f"{np.mean(margins):+.1f}", records=len(records))
    return records, values, np.asarray(margins)


def train_nets(actor, value, opt, buf: Buffer, args, gen) -> dict:
    """``--epochs`` passes of shuffled minibatches over the buffer; mean losses of the last."""
    import torch

    d = buf.data
    n, n_act = len(buf), actor.head.out_features
    obs = torch.from_numpy(d["obs"])
    ids, probs = torch.from_numpy(d["ids"]), torch.from_numpy(d["probs"])
    target_v = torch.from_numpy(d["value"])
    pl, vl = [], []
    for _ in range(args.epochs):
        perm = torch.randperm(n, generator=gen)
        pl, vl = [], []
        for start in range(0, n, args.minibatch_size):
            idx = perm[start:start + args.minibatch_size]
            x = obs[idx].float()
            mask = torch.from_numpy(np.unpackbits(d["mask"][idx.numpy()], axis=1,
                                                  count=n_act).astype(bool))
            logp = torch.log_softmax(actor(x).masked_fill(~mask, -1e9), dim=1)
            policy_loss = -(probs[idx] * logp.gather(1, ids[idx])).sum(1).mean()
            value_loss = (value(x)[:, 0] - target_v[idx]).pow(2).mean()
            loss = policy_loss + args.value_coef * value_loss
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            pl.append(policy_loss.item())
            vl.append(value_loss.item())
    return {"policy_loss": float(np.mean(pl)), "value_loss": float(np.mean(vl))}


def train(args) -> dict:
    """Run (or resume) the expert iteration of ``args``; returns a summary."""
    import torch

    from agents.ppo import CheckpointError
    from mountain_rummy_env import Game
    from mountain_rummy_env.envs.observation import observation_size
    from mountain_rummy_env.registry import make_variant

    if args.threads:
        torch.set_num_threads(args.threads)
    run = Path(args.run_dir or f"runs/expert/{args.variant}")
    ckpt_path, buf_path, policy_path = run / "checkpoint.pt", run / "buffer.npz", run / "policy.pt"
    if ckpt_path.exists() and not args.resume:
        raise SystemExit(f"{run} already holds a run; pass --resume to continue it or pick another --run-dir")
    blob = load_checkpoint(ckpt_path, args) if args.resume else None
    variant = make_variant(args.variant, **json.loads(args.variant_options))
    n_obs, n_act = observation_size(variant, args.obs_features), variant.num_actions
    torch.manual_seed(args.seed)
    actor, value = build_nets(n_obs, n_act, args)
    opt = torch.optim.Adam(list(actor.parameters()) + list(value.parameters()),
                           lr=args.learning_rate, weight_decay=args.weight_decay)
    gen = torch.Generator().manual_seed(args.seed)
    rng = np.random.default_rng([args.seed, 7])
    counters = {"iteration": 0, "hands": 0, "wall_s": 0.0}
    init = {}       # --init-policy and what the value network started from (kept on resume)
    if args.init_policy:
        init = {"init_policy": args.init_policy,
                "init_value": load_init(args.init_policy, variant, n_obs, actor, value, args)}
        print(f"--init-policy {args.init_policy}; value network: {init['init_value']}",
              file=sys.stderr, flush=True)
    buf = Buffer(args.buffer)
    if blob is not None:
        try:
            actor.load_state_dict(blob["actor"])
            value.load_state_dict(blob["value"])
            opt.load_state_dict(blob["optimizer"])
            counters.update(blob["counters"])
            gen.set_state(blob["gen_rng"])
            rng.bit_generator.state = blob["numpy_rng"]
            init = blob.get("init", {})
        except (KeyError, RuntimeError, ValueError, TypeError) as err:
            raise CheckpointError(f"checkpoint {str(ckpt_path)!r} is inconsistent: "
                                  f"{type(err).__name__}: {str(err)[:300]}") from None
        buf.load(buf_path, counters["iteration"])
        args.init_policy = init.get("init_policy")      # args.json keeps the run's start
    run.mkdir(parents=True, exist_ok=True)
    if init and counters["iteration"] == 0:     # iteration 0 is the search it guides
        save_net(policy_path, actor, value, net_meta(variant, n_obs, args, 0, 0))
    (run / "args.json").write_text(json.dumps({k: v for k, v in vars(args).items()
                                               if k not in ("pool", "net_arch_list")}, indent=1) + "\n")
    game = Game(variant, 1)
    t_start, wall_before = time.perf_counter(), counters["wall_s"]
    rows = []
    while counters["iteration"] < args.iterations:
        it = counters["iteration"]
        policy = policy_path if it > 0 or init else None    # else the plain search
        bar = None
        if not args.no_progress:
            from tqdm import tqdm

            bar = tqdm(total=args.hands, desc=f"iteration {it + 1}/{args.iterations}",
                       unit="hand", dynamic_ncols=True, file=sys.stderr)
        t0 = time.perf_counter()
        records, values, margins = play_iteration(args, variant, game, policy, counters, rng, bar)
        if bar is not None:
            bar.close()
        t1 = time.perf_counter()
        buf.add(records, values)
        losses = train_nets(actor, value, opt, buf, args, gen) if len(buf) else \
            {"policy_loss": float("nan"), "value_loss": float("nan")}
        t2 = time.perf_counter()
        counters["iteration"] = it + 1
        counters["wall_s"] = wall_before + time.perf_counter() - t_start
        meta = net_meta(variant, n_obs, args, counters["iteration"], counters["hands"])
        buf.save(buf_path, counters["iteration"])
        save_net(policy_path, actor, value, meta)
        save_net(ckpt_path, actor, value, meta, {
            "flags": fixed_flags(args), "counters": dict(counters), "init": init,
            "optimizer": opt.state_dict(), "gen_rng": gen.get_state(),
            "numpy_rng": rng.bit_generator.state})
        row = {"iteration": counters["iteration"], "hands": counters["hands"],
               "records": len(records), "searched": int(sum(len(r[2]) > 1 for r in records)),
               "buffer": len(buf), "learner_margin": round(float(margins.mean()), 2),
               "learner_hand_win": round(float((margins > 0).mean()), 3),
               "policy_loss": round(losses["policy_loss"], 4),
               "value_loss": round(losses["value_loss"], 4),
               "play_s": round(t1 - t0, 1), "train_s": round(t2 - t1, 1),
               "wall_s": round(counters["wall_s"], 1)}
        log = run / "iterations.csv"
        new = not log.exists()
        with log.open("a", newline="") as fh:
            w = csv.DictWriter(fh, LOG_FIELDS)
            if new:
                w.writeheader()
            w.writerow(row)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    return {"run_dir": str(run), "iterations": counters["iteration"], "hands": counters["hands"],
            "buffer": len(buf), "wall_s": round(counters["wall_s"], 1), **init, "rows": rows}


def main(argv=None, prog: str = "python -m experiments.expert_iteration") -> dict:
    from experiments.cli import run_trainer

    return run_trainer(parse_args, train, argv, prog)


if __name__ == "__main__":
    main()
