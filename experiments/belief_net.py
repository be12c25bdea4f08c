"""Belief network trainer: which hidden cards the opponent holds, learned from played hands.

The network guides the search's samples (``netsearch:belief=FILE``, :mod:`agents.belief`).
One file, every hyper-parameter a flag (``--help``):

1. **Play** ``--hands`` hands of ``--agents`` (``rules`` in both seats by default; one deal
   each, seeds 20,000,000 + ``--seed`` x 10^6 + the hand's number) in shards of
   ``--shard-hands`` hands (``RUN/data/shard_NNNNN.npz``, one per worker job). At each
   decision, with probability ``--keep``, the seat to move is recorded: its observation
   (the env's int8 encoder), its :class:`~agents.belief.OpponentTracker` planes, the cards
   it cannot see and, as the label, those of them the other seat holds.
2. **Train** an MLP (``--net-arch``) on the binary cross-entropy of each hidden card's
   logit, over the hidden cards only; Adam at ``--learning-rate`` with a cosine decay over
   ``--epochs``. Hands whose number ends in 9 are held out; the held-out loss is reported
   beside a uniform belief's (each hidden card held with probability k / hidden).
3. **Save** ``belief.pt`` (+ ``.json``: the held-out epoch with the lowest loss, float16
   weights with ``--half``), ``checkpoint.pt`` after every epoch (read with
   ``torch.load(weights_only=True)``), ``epochs.csv``. The same command with ``--resume``
   keeps the shards already written and continues after the last whole epoch.

    mountain-rummy belief-net --variant mountain --hands 80000 --workers 2
    mountain-rummy tournament --agents netsearch:belief=runs/belief/mountain/belief.pt search
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

FORMAT = "mountain-rummy-belief-training/1"
DEAL_BASE = 20_000_000     # training deals: DEAL_BASE + seed x 10^6 + the hand's number
FIXED = ("variant", "variant_options", "agents", "keep", "seed", "shard_hands", "net_arch")
LOG_FIELDS = ("epoch", "train_loss", "heldout_loss", "uniform_loss", "learning_rate", "seconds")


def build_parser(prog: str = "python -m experiments.belief_net") -> argparse.ArgumentParser:
    from experiments.cli import _fraction, _nonneg, _positive
    from experiments.selfplay_ppo import _positive_float
    from mountain_rummy_env.registry import DEFAULT_VARIANT, variant_names

    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.set_defaults(obs_features="none")
    g = p.add_argument_group("run")
    g.add_argument("--variant", choices=variant_names(), default=DEFAULT_VARIANT)
    g.add_argument("--variant-options", default="{}", help="JSON dict of variant config options")
    g.add_argument("--run-dir", default=None, help="output folder (default runs/belief/<variant>)")
    g.add_argument("--seed", type=_nonneg, default=0)
    g.add_argument("--resume", action="store_true",
                   help="keep RUN_DIR's shards and continue from its checkpoint.pt")
    g.add_argument("--workers", type=_positive, default=1, help="processes playing the hands")
    g.add_argument("--threads", type=_nonneg, default=1, help="torch CPU threads (0: torch default)")
    g.add_argument("--no-progress", action="store_true", help="no progress bar")
    g = p.add_argument_group("play")
    g.add_argument("--agents", nargs="+", default=["rules"], metavar="SPEC",
                   help="the agent of each seat (one spec: every seat); the network learns "
                        "the opponents these make")
    g.add_argument("--hands", type=_positive, default=80_000)
    g.add_argument("--shard-hands", type=_positive, default=5_000, help="hands per data shard")
    g.add_argument("--keep", type=_fraction, default=0.35,
                   help="probability that a decision is recorded")
    g = p.add_argument_group("network and training")
    g.add_argument("--net-arch", default="512,512", help="hidden widths")
    g.add_argument("--epochs", type=_positive, default=10)
    g.add_argument("--minibatch-size", type=_positive, default=512)
    g.add_argument("--learning-rate", type=_positive_float, default=1e-3)
    g.add_argument("--half", action="store_true", help="belief.pt in float16 (half the size)")
    return p


def parse_args(argv=None, prog: str = "python -m experiments.belief_net"):
    """The flags, checked: a bad variant option, width or agent, or a table of more than
    two seats, is a one-line usage error."""
    from agents import make_agent
    from agents.base import AgentSpecError
    from experiments.selfplay_ppo import checked_variant_and_net

    p = build_parser(prog)
    args = p.parse_args(argv)
    variant = checked_variant_and_net(p, args)
    if variant.num_players != 2:
        p.error(f"a belief network needs a 2-seat table; {args.variant} here has "
                f"{variant.num_players} seats (set num_players in --variant-options)")
    if len(args.agents) not in (1, 2):
        p.error(f"--agents: one spec (every seat) or two (seat 0, seat 1), got {len(args.agents)}")
    for spec in args.agents:
        try:
            make_agent(spec, seed=0, variant=variant.name).check_options(variant)
        except (AgentSpecError, ValueError) as err:
            p.error(f"--agents: {err}")
    args.run_dir = Path(args.run_dir or f"runs/belief/{variant.name}")
    return args


def settings(args) -> dict:
    return {"variant": args.variant, "variant_options": json.loads(args.variant_options),
            "agents": list(args.agents), "keep": args.keep, "seed": args.seed,
            "shard_hands": args.shard_hands, "net_arch": args.net_arch_list}


# ---------------------------------------------------------------------------------------
# play: the data shards


class _TrackedSeat:
    """A seat's agent with its :class:`~agents.belief.OpponentTracker`: the tracker sees
    every view the seat acts on and every action it plays, and ``record`` is called with
    the view and the planes before the seat acts."""

    def __init__(self, agent, tracker, record):
        self.agent, self.tracker, self.record = agent, tracker, record

    def reset(self) -> None:
        self.agent.reset()
        self.tracker.reset()

    def act(self, view, mask) -> int:
        self.tracker.observe(view)
        self.record(view, self.tracker.planes)
        action = int(self.agent.act(view, mask))
        self.tracker.remember(view, action)
        return action


def play_shard(job: tuple) -> str:
    """Play one shard's hands and write it (``job``: settings, first deal seed, hands, path)."""
    from agents import make_agent
    from agents.belief import OpponentTracker, next_seat_labels, num_cards
    from experiments.play import play_hand
    from mountain_rummy_env.envs.observation import encode_views, observation_size
    from mountain_rummy_env.game import Game
    from mountain_rummy_env.registry import make_variant

    cfg, first, hands, path = job
    v = make_variant(cfg["variant"], **cfg["variant_options"])
    rng = np.random.default_rng(first)
    enc = np.zeros((1, observation_size(v)), np.int8)
    obs, planes, pools, held, hand_ids = [], [], [], [], []

    def record(view, seat_planes) -> None:
        if rng.random() < cfg["keep"]:
            pool, y = next_seat_labels(view)
            if y.any():
                encode_views(view.public_state(), v, np.array([view.player], np.int64), enc)
                obs.append(enc[0].copy())
                planes.append(seat_planes.astype(np.float16))
                pools.append(pool)
                held.append(y)
                hand_ids.append(hand)

    specs = cfg["agents"] * (2 // len(cfg["agents"]))
    seats = [_TrackedSeat(make_agent(s, seed=first * 2 + p, variant=v.name),
                          OpponentTracker(num_cards(v)), record) for p, s in enumerate(specs)]
    game = Game(v, 1)
    for hand in range(first, first + hands):
        play_hand(game, seats, seed=hand)
    tmp = Path(path).with_suffix(".tmp.npz")
    np.savez_compressed(tmp, obs=np.array(obs, np.int8).reshape(-1, enc.shape[1]),
                        planes=np.array(planes, np.float16).reshape(len(obs), -1),
                        pool=np.array(pools, np.int8).reshape(len(obs), -1),
                        held=np.array(held, np.int8).reshape(len(obs), -1),
                        hand=np.array(hand_ids, np.int64))
    os.replace(tmp, path)
    return str(path)


def play(args, cfg: dict) -> list[Path]:
    """The shards of ``--hands`` hands, playing those not yet written."""
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing as mp

    data = args.run_dir / "data"
    data.mkdir(parents=True, exist_ok=True)
    paths, jobs = [], []
    for shard, start in enumerate(range(0, args.hands, args.shard_hands)):
        path = data / f"shard_{shard:05d}.npz"
        paths.append(path)
        if not path.is_file():
            first = DEAL_BASE + cfg["seed"] * 1_000_000 + start
            jobs.append((cfg, first, min(args.shard_hands, args.hands - start), str(path)))
    if jobs:
        bar = _bar(len(paths), "shards", args.no_progress, initial=len(paths) - len(jobs))
        if args.workers == 1:
            for job in jobs:
                play_shard(job)
                bar.update()
        else:
            with ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn")) as pool:
                for _ in pool.map(play_shard, jobs):
                    bar.update()
        bar.close()
    return paths


def load_shards(paths) -> dict:
    """The shards' arrays, concatenated; a corrupt shard is an error naming it."""
    parts = []
    for path in paths:
        try:
            with np.load(path) as z:
                parts.append({k: z[k] for k in ("obs", "planes", "pool", "held", "hand")})
        except Exception as err:
            raise SystemExit(f"error: data shard {str(path)!r} cannot be read "
                             f"({type(err).__name__}: {err}); delete it and run again with "
                             "--resume to play it anew") from None
    return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}


# ---------------------------------------------------------------------------------------
# train


def masked_bce(net, x, pool, held):
    """Mean binary cross-entropy of the logits over the hidden cards (``pool``)."""
    import torch.nn.functional as F

    loss = F.binary_cross_entropy_with_logits(net(x), held, reduction="none")
    return (loss * pool).sum() / pool.sum()


def uniform_loss(pool: np.ndarray, held: np.ndarray) -> float:
    """The same loss for a uniform belief: each hidden card held with probability k / hidden."""
    q = held.sum(1, keepdims=True) / pool.sum(1, keepdims=True)
    loss = -(held * np.log(q) + (1 - held) * np.log(1 - q))
    return float((loss * pool).sum() / pool.sum())


def train(args) -> dict:
    import torch

    from agents.belief import belief_meta, build_belief_net, save_belief
    from agents.ppo import CheckpointError
    from mountain_rummy_env.registry import make_variant

    if args.threads:
        torch.set_num_threads(args.threads)
    cfg = settings(args)
    run = args.run_dir
    ck_path = run / "checkpoint.pt"
    if run.exists() and any(run.iterdir()) and not args.resume:
        raise CheckpointError(f"{run} holds a run: --resume to continue it, or another --run-dir")
    if args.resume and (run / "args.json").is_file():
        old = json.loads((run / "args.json").read_text())
        differ = [k for k in FIXED if old.get(k) != cfg[k]]
        if differ:
            raise CheckpointError(f"--resume with other {', '.join(differ)} than the run in {run} "
                                  f"({', '.join(f'{k}={old.get(k)!r}' for k in differ)})")
    run.mkdir(parents=True, exist_ok=True)
    (run / "args.json").write_text(json.dumps(cfg, indent=1) + "\n")
    v = make_variant(args.variant, **cfg["variant_options"])
    t0 = time.time()
    d = load_shards(play(args, cfg))
    play_s = time.time() - t0
    heldout = d["hand"] % 10 == 9
    tr, va = np.flatnonzero(~heldout), np.flatnonzero(heldout)
    if not len(tr) or not len(va):
        raise SystemExit(f"error: {len(d['hand'])} records from {args.hands} hands leave no "
                         "training or held-out data: play more --hands")
    base = uniform_loss(d["pool"][va], d["held"][va])

    def batch(i):
        x = np.concatenate([d["obs"][i].astype(np.float32), d["planes"][i].astype(np.float32)], 1)
        return (torch.from_numpy(x), torch.from_numpy(d["pool"][i].astype(np.float32)),
                torch.from_numpy(d["held"][i].astype(np.float32)))

    torch.manual_seed(args.seed)
    net = build_belief_net(d["obs"].shape[1] + d["planes"].shape[1], args.net_arch_list,
                           d["pool"].shape[1])
    opt = torch.optim.Adam(net.parameters(), args.learning_rate)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, args.epochs)
    start, best, best_state, rows = 0, float("inf"), None, []
    if args.resume and ck_path.is_file():
        try:
            ck = torch.load(ck_path, map_location="cpu", weights_only=True)
            if ck.get("format") != FORMAT:
                raise ValueError(f"format {ck.get('format')!r}")
            net.load_state_dict(ck["model"])
            opt.load_state_dict(ck["optimizer"])
            sched.load_state_dict(ck["scheduler"])
            sched.T_max = args.epochs          # --epochs may grow on resuming
        except Exception as err:
            raise CheckpointError(f"checkpoint {str(ck_path)!r} cannot be resumed: "
                                  f"{type(err).__name__}: {str(err)[:200]}") from None
        start, best, best_state, rows = ck["epoch"], ck["best"], ck["best_state"], ck["rows"]
    meta = belief_meta(v, args.net_arch_list, agents=list(args.agents), hands=args.hands,
                       records=int(len(tr)), heldout_records=int(len(va)),
                       uniform_loss=round(base, 5), seed=args.seed)
    for epoch in range(start, args.epochs):
        began = time.time()
        net.train()
        order = np.random.default_rng([args.seed, epoch]).permutation(tr)
        total, bar = 0.0, _bar(len(order), f"epoch {epoch + 1}/{args.epochs}", args.no_progress)
        for b in range(0, len(order), args.minibatch_size):
            i = np.sort(order[b:b + args.minibatch_size])
            loss = masked_bce(net, *batch(i))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(i)
            bar.update(len(i))
        bar.close()
        lr = sched.get_last_lr()[0]
        sched.step()
        net.eval()
        with torch.no_grad():
            held_sum = sum(float(masked_bce(net, *batch(va[b:b + 8192]))) * len(va[b:b + 8192])
                           for b in range(0, len(va), 8192))
        row = {"epoch": epoch + 1, "train_loss": round(total / len(tr), 5),
               "heldout_loss": round(held_sum / len(va), 5), "uniform_loss": round(base, 5),
               "learning_rate": lr, "seconds": round(time.time() - began, 1)}
        rows.append(row)
        print(json.dumps(row), flush=True)
        if row["heldout_loss"] < best:
            best = row["heldout_loss"]
            best_state = {k: w.detach().clone() for k, w in net.state_dict().items()}
            meta.update(epoch=epoch + 1, heldout_loss=best)
            save_belief(run / "belief.pt", _with(net, best_state), meta, half=args.half)
        tmp = ck_path.with_suffix(".tmp")
        torch.save({"format": FORMAT, "epoch": epoch + 1, "model": net.state_dict(),
                    "optimizer": opt.state_dict(), "scheduler": sched.state_dict(),
                    "best": best, "best_state": best_state, "rows": rows}, tmp)
        os.replace(tmp, ck_path)
        with open(run / "epochs.csv", "w", newline="") as f:
            w = csv.DictWriter(f, LOG_FIELDS)
            w.writeheader()
            w.writerows(rows)
    return {"run_dir": str(run), "records": int(len(d["hand"])), "heldout_records": int(len(va)),
            "uniform_loss": round(base, 5), "best_heldout_loss": best, "play_s": round(play_s, 1),
            "rows": rows}


def _with(net, state):
    """``net`` carrying ``state`` (a copy, so training goes on from its own weights)."""
    import copy

    other = copy.deepcopy(net)
    other.load_state_dict(state)
    return other


def _bar(total: int, desc: str, off: bool, initial: int = 0):
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, initial=initial, disable=off, file=sys.stderr,
                leave=False)


def main(argv=None, prog: str = "python -m experiments.belief_net") -> dict:
    from experiments.cli import run_trainer

    return run_trainer(parse_args, train, argv, prog)


if __name__ == "__main__":
    main()
