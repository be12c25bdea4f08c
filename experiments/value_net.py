"""An afterstate value network for the guided search (``netsearch:...,value_screen=1``).

The search (:mod:`agents.search`) compares a decision's candidates by playouts: half its
budget screens them all, the other half tests the best challenger against the heuristic's
choice on fresh samples. A value network that says what a position after a move is worth
can do the screen instead, at almost no cost, and leave the whole budget to the test
(:meth:`agents.netsearch.NetGuided.value_screened`). This file makes that network, in three
resumable steps in one run folder:

1. **Data** (``RUN/data/shard_K.npz``, ``--shard-size`` samples each; a shard on disk is
   kept): games of the variant's compiled playout policy in every seat
   (:mod:`agents.fastpolicy`, ``--discard``), each move replaced with probability
   ``--explore`` by a random legal move of the same family (another discard, another
   draw), so the data holds the afterstates a search compares, not only those its policy
   picks. Every afterstate that does not end the hand is encoded from the seat that just
   moved (the env's int8 encoder with the actor's feature block) and labelled with that
   seat's hand points less the next seat's at the end of the hand: what the search's
   playouts estimate, but measured from the true state, whatever the hidden cards.
2. **Fit** (``RUN/checkpoint.pt``): the value network of :mod:`agents.netsearch` (the
   actor's widths) on the squared error of margin x ``--reward-scale``; ``--holdout`` of
   the hands are held out and the epoch with the least held-out error is kept.
3. **Policy file** (``RUN/policy.pt`` + ``.json``): the actor of ``--actor`` (a shipped
   policy name or a policy file; its priors only break ties unless ``prior_weight`` is
   set) with the value network, read by ``netsearch:path=RUN/policy.pt,top=0,
   value_screen=1``. ``RUN/summary.json`` holds the held-out R^2.

    python -m experiments.value_net --actor mountain_solver --samples 3000000
    mountain-rummy tournament --agents "netsearch:path=runs/value/mountain/policy.pt,top=0,value_screen=1,budget=240" rules
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

FORMAT = "mountain-rummy-value-net/1"
DEAL_BASE = 20_000_000      # data deals: DEAL_BASE + seed x 10^6 + shard x 10^4 + game


def build_parser(prog: str = "python -m experiments.value_net") -> argparse.ArgumentParser:
    from experiments.cli import _nonneg, _positive
    from experiments.selfplay_ppo import _positive_float

    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0],
                                epilog="See docs/training.md, 'An afterstate value network'.",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--actor", default="mountain_solver",
                   help="shipped policy name or policy file whose actor (and feature block, "
                        "widths, variant) the policy file keeps")
    p.add_argument("--run-dir", default=None, help="output folder (default runs/value/<variant>)")
    p.add_argument("--seed", type=_nonneg, default=0)
    p.add_argument("--samples", type=_positive, default=3_000_000, help="afterstates in all")
    p.add_argument("--shard-size", type=_positive, default=250_000, help="afterstates a shard")
    p.add_argument("--games", type=_positive, default=512, help="games played side by side")
    p.add_argument("--explore", type=float, default=0.1,
                   help="chance a move is replaced by a random one of its family (0-1)")
    p.add_argument("--discard", default="outs",
                   help="the playout policy's discard (Mountain: points or outs, the rules "
                        "player's; other variants: points)")
    p.add_argument("--epochs", type=_positive, default=2)
    p.add_argument("--minibatch-size", type=_positive, default=2048)
    p.add_argument("--learning-rate", type=_positive_float, default=1e-3)
    p.add_argument("--reward-scale", type=_positive_float, default=0.01)
    p.add_argument("--holdout", type=float, default=0.05, help="share of hands held out (0-0.5)")
    p.add_argument("--threads", type=_nonneg, default=1, help="torch CPU threads (0: torch default)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def parse_args(argv=None, prog: str = "python -m experiments.value_net"):
    p = build_parser(prog)
    args = p.parse_args(argv)
    if not 0 <= args.explore <= 1:
        p.error(f"--explore must be in [0, 1], got {args.explore}")
    if not 0 < args.holdout <= 0.5:
        p.error(f"--holdout must be in (0, 0.5], got {args.holdout}")
    return args


def load_actor_blob(actor: str) -> tuple[dict, Path]:
    """The actor's policy file as stored (``weights_only``), and its path."""
    import torch

    from agents.ppo import CheckpointError, load_policy, policy_path

    path = Path(actor) if actor.endswith(".pt") else policy_path(actor)
    load_policy(path)          # the checks of the ppo format: a clean error for a bad file
    try:
        return torch.load(path, map_location="cpu", weights_only=True), path
    except Exception as err:   # pragma: no cover - load_policy read it a moment ago
        raise CheckpointError(f"cannot read {str(path)!r}: {err}") from None


def generate_shard(variant, features: str, n_samples: int, seed: int, games: int,
                   explore: float, discard: str) -> dict:
    """``n_samples`` labelled afterstates (step 1 of the module docstring): ``X`` int8
    observations, ``y`` hand margins in points, ``hand`` a hand id within the shard.
    Afterstates of hands still running when the count is reached are dropped."""
    from agents.common import family_table
    from agents.fastpolicy import act_batch, check_playout_policy, rollout_tables
    from mountain_rummy_env.core import rules
    from mountain_rummy_env.core.batch import step_batch
    from mountain_rummy_env.envs.observation import encode_views, observation_size
    from mountain_rummy_env.game import Game

    check_playout_policy(variant, discard)
    fam = family_table(variant)
    tables = rollout_tables(variant, discard)
    rng = np.random.default_rng(seed)
    P = variant.num_players
    game = Game(variant, games)
    game.reset(DEAL_BASE + seed + np.arange(games, dtype=np.uint64))
    scratch = np.zeros(rules.SCRATCH_RECORDS, dtype=variant.dtype)
    events = np.zeros(games, np.int8)
    actions = np.zeros(games, np.int64)
    every = np.arange(games)
    X = np.zeros((n_samples, observation_size(variant, features)), np.int8)
    hand_of = np.zeros(n_samples, np.int64)
    seat_of = np.zeros(n_samples, np.int64)
    hand_now = np.arange(games)             # each game's hand id
    points = []                             # (hand id, points of every seat) at its end
    next_hand, k = games, 0
    while k < n_samples:
        st = game.states
        act_batch(st, variant.spec_ref, game.masks, every, tables, actions)
        for b in np.flatnonzero(rng.random(games) < explore):
            legal = np.flatnonzero(game.masks[b])
            same = legal[fam[legal] == fam[actions[b]]]
            actions[b] = same[rng.integers(len(same))]
        actor = st["current"].astype(np.int64)
        if step_batch(st, variant.spec_ref, actions, game.masks, events, scratch) >= 0:
            raise AssertionError("the playout policy played an illegal move")
        live = np.flatnonzero(events == 0)[: n_samples - k]
        encode_views(st[live], variant, actor[live], X[k:k + len(live)], features)
        hand_of[k:k + len(live)] = hand_now[live]
        seat_of[k:k + len(live)] = actor[live]
        k += len(live)
        ended = np.flatnonzero(events != 0)
        if len(ended):
            points += [(int(hand_now[b]), st[b]["h_points"][:P].astype(np.float64)) for b in ended]
            hand_now[ended] = next_hand + np.arange(len(ended))
            next_hand += len(ended)
            game.reset(rng.integers(0, 2 ** 63, size=len(ended), dtype=np.uint64), index=ended)
    final = np.full((next_hand, P), np.nan)
    for h, pts in points:
        final[h] = pts
    y = final[hand_of, seat_of] - final[hand_of, (seat_of + 1) % P]
    done = ~np.isnan(y)
    return {"X": X[done], "y": y[done].astype(np.float32), "hand": hand_of[done]}


def read_shard(path: Path) -> dict:
    """A data shard, checked: a truncated or foreign file is a clean error naming it."""
    try:
        with np.load(path, allow_pickle=False) as z:
            shard = {k: z[k] for k in ("X", "y", "hand")}
    except Exception as err:
        raise ValueError(f"data shard {str(path)!r} is unreadable ({type(err).__name__}: "
                         f"{str(err)[:200]}); delete it and rerun to regenerate it") from None
    n = len(shard["y"])
    if shard["X"].ndim != 2 or len(shard["X"]) != n or len(shard["hand"]) != n:
        raise ValueError(f"data shard {str(path)!r} has inconsistent arrays; delete it and rerun")
    return shard


def make_data(args, variant, features: str, bar) -> list[Path]:
    """Step 1: every shard, generating those not on disk (written atomically)."""
    data = Path(args.run_dir) / "data"
    data.mkdir(parents=True, exist_ok=True)
    n_shards = -(-args.samples // args.shard_size)
    paths = []
    for i in range(n_shards):
        path = data / f"shard_{i}.npz"
        if not path.exists():
            size = min(args.shard_size, args.samples - i * args.shard_size)
            shard = generate_shard(variant, features, size, args.seed * 1_000_000 + i * 10_000,
                                   args.games, args.explore, args.discard)
            tmp = path.with_name(path.name + ".tmp.npz")
            np.savez_compressed(tmp, **shard)
            os.replace(tmp, path)
        paths.append(path)
        bar.update(1)
    return paths


def split_hands(paths: list[Path], holdout: float, seed: int):
    """``(X, y, held)``: every shard's samples, ``held`` marking the held-out hands'."""
    Xs, ys, helds = [], [], []
    rng = np.random.default_rng(seed)
    for path in paths:
        shard = read_shard(path)
        hands = np.unique(shard["hand"])
        out = rng.choice(hands, size=max(1, int(round(holdout * len(hands)))), replace=False)
        Xs.append(shard["X"])
        ys.append(shard["y"])
        helds.append(np.isin(shard["hand"], out))
    widths = {x.shape[1] for x in Xs}
    if len(widths) != 1:
        raise ValueError(f"data shards of different observation sizes {sorted(widths)}: "
                         "shards of another --actor? delete RUN/data and rerun")
    return np.concatenate(Xs), np.concatenate(ys), np.concatenate(helds)


def fit(args, meta: dict, X, y, held, bar) -> dict:
    """Step 2: the value network, the best held-out epoch kept; resumes from
    ``RUN/checkpoint.pt`` after its last whole epoch."""
    import torch

    from agents.netsearch import build_value

    run = Path(args.run_dir)
    ckpt = run / "checkpoint.pt"
    net = build_value(X.shape[1], meta["net_arch"], meta["activation"])
    opt = torch.optim.Adam(net.parameters(), lr=args.learning_rate)
    train, test = np.flatnonzero(~held), np.flatnonzero(held)
    per_epoch = max(1, len(train) // args.minibatch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.learning_rate,
                                                total_steps=args.epochs * per_epoch, pct_start=0.05)
    state = {"epoch": 0, "best_mse": None, "best": None, "log": []}
    if ckpt.exists():
        blob = torch.load(ckpt, map_location="cpu", weights_only=True)
        if blob.get("format") != FORMAT or blob.get("observation_size") != X.shape[1]:
            raise ValueError(f"{ckpt} is not a value_net checkpoint of this data; delete it "
                             "to fit afresh")
        net.load_state_dict(blob["net"])
        opt.load_state_dict(blob["opt"])
        sched.load_state_dict(blob["sched"])
        state = blob["state"]
    scale = args.reward_scale
    y_test = torch.as_tensor(y[test] * scale)

    def held_out_mse() -> float:
        net.eval()
        with torch.no_grad():
            pred = torch.cat([net(torch.as_tensor(X[test[i:i + 8192]].astype(np.float32)))[:, 0]
                              for i in range(0, len(test), 8192)])
        net.train()
        return float(((pred - y_test) ** 2).mean())

    gen = np.random.default_rng(args.seed + 1)
    for epoch in range(state["epoch"], args.epochs):
        order = gen.permutation(train)
        t0 = time.perf_counter()
        for i in range(per_epoch):
            rows = order[i * args.minibatch_size:(i + 1) * args.minibatch_size]
            xb = torch.as_tensor(X[rows].astype(np.float32))
            loss = ((net(xb)[:, 0] - torch.as_tensor(y[rows] * scale)) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            bar.update(1)
        mse = held_out_mse()
        state["log"].append({"epoch": epoch + 1, "train_mse": float(loss.detach()), "held_out_mse": mse,
                             "held_out_r2": 1 - mse / float(y_test.var()),
                             "seconds": round(time.perf_counter() - t0, 1)})
        if state["best_mse"] is None or mse < state["best_mse"]:
            state["best_mse"] = mse
            state["best"] = {k: v.clone() for k, v in net.state_dict().items()}
        state["epoch"] = epoch + 1
        tmp = ckpt.with_name(ckpt.name + ".tmp")
        torch.save({"format": FORMAT, "observation_size": X.shape[1], "net": net.state_dict(),
                    "opt": opt.state_dict(), "sched": sched.state_dict(), "state": state}, tmp)
        os.replace(tmp, ckpt)
    return state


def write_policy(args, blob: dict, value_sd: dict, summary: dict) -> Path:
    """Step 3: the actor's file with the value network added (ppo format + json sidecar)."""
    import torch

    meta = {k: v for k, v in blob.items() if k not in ("state_dict", "value_state_dict")}
    meta.update(reward_scale=args.reward_scale, value_net=summary,
                note=f"actor {args.actor} with an afterstate value network "
                     "(experiments/value_net.py)")
    path = Path(args.run_dir) / "policy.pt"
    tmp = path.with_name(path.name + ".tmp")
    torch.save(dict(meta, state_dict=blob["state_dict"], value_state_dict=value_sd), tmp)
    os.replace(tmp, path)
    path.with_suffix(".json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    return path


def run(args) -> dict:
    import torch

    from mountain_rummy_env.registry import make_variant
    from agents.ppo import obs_features_of_meta

    blob, actor_path = load_actor_blob(args.actor)
    variant = make_variant(blob["variant"], **(blob.get("variant_options") or {}))
    features = obs_features_of_meta(blob)
    args.run_dir = args.run_dir or f"runs/value/{variant.name}"
    if args.threads:
        torch.set_num_threads(args.threads)
    from tqdm import tqdm

    n_shards = -(-args.samples // args.shard_size)
    with tqdm(total=n_shards, desc="data shards", unit="shard", disable=args.no_progress) as bar:
        paths = make_data(args, variant, features, bar)
    X, y, held = split_hands(paths, args.holdout, args.seed)
    steps = args.epochs * max(1, int((~held).sum()) // args.minibatch_size)
    with tqdm(total=steps, desc="fit", unit="batch", disable=args.no_progress) as bar:
        state = fit(args, blob, X, y, held, bar)
    summary = {"format": FORMAT, "actor": str(actor_path), "variant": variant.name,
               "obs_features": features, "samples": int(len(y)),
               "held_out_samples": int(held.sum()), "explore": args.explore,
               "discard": args.discard, "epochs": state["log"],
               "best_held_out_r2": max(e["held_out_r2"] for e in state["log"])}
    write_policy(args, blob, state["best"], summary)
    Path(args.run_dir, "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def main(argv=None, prog: str = "python -m experiments.value_net") -> dict:
    args = parse_args(argv, prog)
    try:
        summary = run(args)
    except (ValueError, OSError) as err:
        print(f"{prog}: error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    print(f"value network: held-out R^2 {summary['best_held_out_r2']:.3f} over "
          f"{summary['held_out_samples']} afterstates; {args.run_dir}/policy.pt")
    return summary


if __name__ == "__main__":
    main()
