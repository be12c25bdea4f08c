"""How much one departure from the ``rules`` move changes a Mountain hand, and how noisy that is.

The learner of the PPO trainer's env plays the ``rules`` move at every decision except, in
some hands, one decision chosen at random, where it plays another move from the search's
shortlist (``--hint rules-slots``). Each hand's reward is its margin less the margin of the
``rules`` player replaying the same deal against the same opponent (``--reward-baseline
rules``), so hands without a departure score exactly 0 and the rest measure the departure.
The table gives, per kind of departure (the ``rules`` move's family -> the played move's),
the hands, the mean change in points and its spread: the signal a policy-gradient learner
gets from one exploratory move (docs/training.md).

    python -m experiments.departure_noise --hands 1500
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.departure_noise",
                                description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--hands", type=int, default=1500, help="hands to play")
    p.add_argument("--num-envs", type=int, default=16, help="games stepped together")
    p.add_argument("--depart", type=float, default=0.12,
                   help="chance per decision of the one departure, until a hand has had it")
    p.add_argument("--opponents", default="rules:3,greedy:1", help="opponent pool, spec:weight")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    if args.hands < 1 or args.num_envs < 1 or not 0.0 <= args.depart <= 1.0:
        p.error("--hands and --num-envs must be positive and --depart a probability")
    return args


def measure(args) -> list[tuple[str | None, float]]:
    """``(kind of departure or None, margin over the rules replay)`` for each hand."""
    from experiments.train_ppo import OpponentPool, make_venv, parse_args as train_args, parse_pool

    targs = train_args(["--num-envs", str(args.num_envs), "--hint", "rules-slots",
                        "--opponents", args.opponents, "--reward-baseline", "rules",
                        "--reward-scale", "1", "--seed", str(args.seed)])
    venv = make_venv(targs, OpponentPool(parse_pool(targs.opponents), args.seed))
    variant = venv.venv.variant
    hint_column = -venv.advisers.hint.id_columns
    rng = np.random.default_rng(args.seed)
    n = venv.num_envs
    kind: list[str | None] = [None] * n
    rows: list[tuple[str | None, float]] = []
    from tqdm import tqdm

    bar = tqdm(total=args.hands, unit="hand", disable=args.no_progress, file=sys.stderr)
    obs = venv.reset()
    while len(rows) < args.hands:
        masks = venv.action_masks()
        actions = obs[:, hint_column].astype(np.int64)
        for b in range(n):
            others = np.flatnonzero(masks[b])
            others = others[others != actions[b]]
            if kind[b] is None and len(others) and rng.random() < args.depart:
                played = int(rng.choice(others))
                kind[b] = f"{variant.action_family(int(actions[b]))} -> {variant.action_family(played)}"
                actions[b] = played
        obs, rewards, dones, _ = venv.step(actions)
        for b in np.flatnonzero(dones):
            rows.append((kind[b], float(rewards[b])))
            kind[b] = None
        bar.update(min(int(dones.sum()), args.hands - bar.n))
    bar.close()
    return rows[: args.hands]


def table(rows) -> str:
    lines = ["| departure | hands | mean change (95% CI) | sd |", "|---|---:|---|---:|"]
    groups = {None: [x for k, x in rows if k is not None]}
    for k in sorted({k for k, _ in rows if k is not None}):
        groups[k] = [x for kk, x in rows if kk == k]
    groups["none"] = [x for k, x in rows if k is None]
    for k, xs in groups.items():
        x = np.array(xs)
        if len(x) < 2:
            continue
        sd = float(x.std(ddof=1))
        half = 1.96 * sd / math.sqrt(len(x))
        lines.append(f"| {k or 'any'} | {len(x)} | {x.mean():+.1f} ({x.mean() - half:+.1f}, "
                     f"{x.mean() + half:+.1f}) | {sd:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> list:
    args = parse_args(argv)
    rows = measure(args)
    print(table(rows))
    sys.stdout.flush()
    return rows


if __name__ == "__main__":
    main()
