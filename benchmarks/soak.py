"""``python -m benchmarks.soak``: play many random games of every variant and check them.

Uniformly random legal play, batched on the compiled core (a ``Game`` of ``--batch`` games):
every step must find a legal action in every unfinished game (the mask is never empty), the
rules must never refuse an action the mask offered, and every ``--check-every``-th position
of each game is checked card by card (each physical card in exactly one place). A game is
one episode of the variant's default options (one hand or round; a variant with several
table sizes shares the games between them: German 2-6 seats, Crazy 3-6).
Not part of the test run: ``python -m benchmarks.soak --games 100000`` takes tens of minutes
per variant on one core; ``--games 2000`` is a quick look.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from mountain_rummy_env.registry import VARIANTS


def _variants(name: str):
    """The variant at every table size it allows (German 2-6 seats, Crazy 3-6)."""
    seats = VARIANTS[name].num_players
    if len(seats) == 1:
        return [VARIANTS[name].make()]
    return [VARIANTS[name].make(num_players=n) for n in seats]


def soak(variant, games: int, batch: int, seed: int, check_every: int) -> dict:
    """Play ``games`` random games of ``variant``; raises on the first fault."""
    from mountain_rummy_env import Game
    from mountain_rummy_env.core.state import PHASE_HAND_OVER, check_invariants
    from mountain_rummy_env.envs.vector import sample_masked, seed_rng

    game = Game(variant, min(batch, games))
    n = game.batch_size
    game.reset(seed=seed)
    next_seed = seed + n
    rng = seed_rng(seed, n)
    actions = np.zeros(n, np.int64)
    live = np.ones(n, bool)
    started, finished, steps, checks, rounds = n, 0, 0, 0, 0
    while live.any():
        empty = live & ~game.masks.any(axis=1)
        assert not empty.any(), f"{variant.name}: no legal action in game(s) {np.flatnonzero(empty)}"
        sample_masked(game.masks, rng, actions)
        if live.all():
            game.step(actions)            # raises IllegalActionError on a refused move
        else:                             # the last games, once no new ones start
            for b in np.flatnonzero(live):
                game.step_one(int(b), int(actions[b]))
        steps += int(live.sum())
        rounds += 1
        if rounds % check_every == 0:
            for b in np.flatnonzero(live)[:4]:
                check_invariants(game.states[b], variant.num_players)
                checks += 1
        for b in np.flatnonzero(live & (game.states["phase"] >= PHASE_HAND_OVER)):
            finished += 1
            if started < games:
                game.reset(seed=next_seed, index=int(b))
                next_seed += 1
                started += 1
            else:
                live[b] = False
    return {"games": finished, "steps": steps, "checks": checks}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.soak", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=100_000, help="games per variant (default 100000)")
    ap.add_argument("--variant", choices=(*VARIANTS, "all"), default="all")
    ap.add_argument("--batch", type=int, default=256, help="games played side by side")
    ap.add_argument("--seed", type=int, default=0, help="seed of the first game (then +1 each)")
    ap.add_argument("--check-every", type=int, default=50,
                    help="card-by-card check of a few games every this many batch steps")
    args = ap.parse_args(argv)
    if args.games < 1 or args.batch < 1 or args.check_every < 1:
        ap.error("--games, --batch and --check-every must be >= 1")
    names = tuple(VARIANTS) if args.variant == "all" else (args.variant,)
    print(f"{'variant':<14} {'games':>8} {'steps':>11} {'checks':>7} {'seconds':>8}")
    for name in names:
        variants = _variants(name)
        for k, variant in enumerate(variants):
            share = args.games // len(variants) + (1 if k < args.games % len(variants) else 0)
            t0 = time.perf_counter()
            result = soak(variant, share, args.batch, args.seed, args.check_every)
            label = f"{name} {variant.num_players}p" if len(variants) > 1 else name
            print(f"{label:<14} {result['games']:>8,} {result['steps']:>11,} {result['checks']:>7,} "
                  f"{time.perf_counter() - t0:>8.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
