"""The strength ladder of a many-seat variant on duplicate deals: random < greedy < rules
(< search where the variant has them): German, Crazy and Robber's Rummy.

For two agents A and B at N seats (default 4), each deal (a seed: the deck and the first
dealer) is played twice, A and B alternating round the table (A B A B ..., then B A B A
...), so each agent sits in every seat of the same deal. A deal's score is the mean hand
points (GE-9; Crazy: minus the penalty points, CR-5; Robber's: D11) of A's seats minus
the mean of B's, averaged over the two seatings; the table
gives the mean over the deals with a 95% confidence interval (normal approximation)::

    python -m experiments.ladder --deals 400 --first-seed 100000
    python -m experiments.ladder --pair rules search:budget=400 --deals 200
    python -m experiments.ladder --variant robbers --deals 200

The agents were tuned on seeds below 10000; report on seeds from 100000 on.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

import numpy as np

from agents import make_agent
from experiments.play import play_hand
from mountain_rummy_env import Game, make_variant

LADDERS = {                                                  # (weaker, stronger) pairs
    "german": (("random", "greedy"), ("greedy", "rules"), ("rules", "search")),
    "crazy": (("random", "greedy"), ("greedy", "rules"), ("rules", "search")),
    "robbers": (("random", "greedy"), ("greedy", "rules"), ("rules", "search:budget=48")),
}


@dataclass(frozen=True)
class Comparison:
    stronger: str
    weaker: str
    deals: int
    mean: float
    low: float
    high: float
    seconds: float

    def row(self) -> str:
        return (f"| {self.stronger} vs {self.weaker} | {self.deals} | {self.mean:+.2f} | "
                f"[{self.low:+.2f}, {self.high:+.2f}] | {self.seconds:.0f} |")


def seatings(num_players: int):
    """The two seatings of a deal: A in the even seats, then in the odd ones (bool per seat)."""
    return [np.array([(q + shift) % 2 == 0 for q in range(num_players)]) for shift in (0, 1)]


def margin(points, is_a) -> np.ndarray:
    """Mean hand points of A's seats minus B's (points: one row per deal or one deal)."""
    points = np.asarray(points, dtype=float)
    return points[..., is_a].mean(axis=-1) - points[..., ~is_a].mean(axis=-1)


def deal_margins(spec_a: str, spec_b: str, seeds, num_players: int = 4,
                 agent_seed: int = 0, variant: str = "german") -> np.ndarray:
    """Per deal: mean hand points of A's seats minus B's, over the two alternating seatings."""
    game = Game(make_variant(variant, num_players=num_players), 1)
    out = np.zeros(len(seeds))
    for i, seed in enumerate(seeds):
        for shift, is_a in enumerate(seatings(num_players)):
            agents = [make_agent(spec_a if a else spec_b, seed=agent_seed + 1000 * q + shift,
                                 variant=variant) for q, a in enumerate(is_a)]
            out[i] += margin(play_hand(game, agents, seed=int(seed)).hand_points, is_a) / 2
    return out


def dealt_states(variant, seeds) -> np.ndarray:
    """State records of the first hand dealt from each seed (as ``Game.reset(seed)`` deals)."""
    game = Game(variant, len(seeds))
    game.reset(seed=np.asarray(list(seeds)))
    return game.states.copy()


def policy_margins(params_a, params_b, seeds, num_players: int = 4,
                   variant: str = "german") -> np.ndarray:
    """:func:`deal_margins` of two compiled policies (:mod:`agents.german_policy` parameter
    vectors, e.g. ``GREEDY`` and ``rules_params()``) played by the compiled playout loop:
    the same hands as their agents play, without Python in the loop."""
    from agents.german import _Compiled
    from agents.german_policy import play_out

    v = make_variant(variant, num_players=num_players)
    c = _Compiled.of(v)
    dealt = dealt_states(v, seeds)
    out = np.zeros(len(dealt))
    for is_a in seatings(num_players):
        states = dealt.copy()
        params = np.array([params_a if a else params_b for a in is_a])
        play_out(states, v.spec, np.full(len(states), -1), params, c.work, c.order, False,
                 np.zeros(v.num_actions, np.int8), np.zeros(len(states)), 0)
        out += margin(states["h_points"][:, :num_players], is_a) / 2
    return out


def compare(spec_a: str, spec_b: str, deals: int, first_seed: int,
            num_players: int = 4, variant: str = "german") -> Comparison:
    start = time.perf_counter()
    margins = deal_margins(spec_a, spec_b, range(first_seed, first_seed + deals), num_players,
                           variant=variant)
    half = 1.96 * margins.std(ddof=1) / np.sqrt(deals)
    return Comparison(spec_a, spec_b, deals, margins.mean(), margins.mean() - half,
                      margins.mean() + half, time.perf_counter() - start)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m experiments.ladder",
                                 description=" ".join(__doc__.split("\n\n")[0].split()))
    ap.add_argument("--variant", choices=sorted(LADDERS), default="german",
                    help="the game (default: german)")
    ap.add_argument("--pair", nargs=2, action="append", metavar=("WEAKER", "STRONGER"),
                    help="agent specs to compare (repeatable; default: the variant's ladder)")
    ap.add_argument("--deals", type=int, default=200, help="deals per pair (default 200)")
    ap.add_argument("--first-seed", type=int, default=100_000,
                    help="seed of the first deal (default 100000: seeds no agent was tuned on)")
    ap.add_argument("--players", type=int, default=4, help="seats per table (default 4)")
    args = ap.parse_args(argv)
    if args.deals < 2:
        ap.error("--deals must be at least 2 (the interval needs a spread)")
    try:
        make_variant(args.variant, num_players=args.players)
    except ValueError as err:
        ap.error(str(err))
    print(f"{args.variant}, {args.players} seats, deals from seed {args.first_seed}\n")
    print("| pair | deals | mean | 95% CI | seconds |\n|---|---|---|---|---|")
    for weaker, stronger in args.pair or LADDERS[args.variant]:
        print(compare(stronger, weaker, args.deals, args.first_seed, args.players,
                      args.variant).row(), flush=True)


if __name__ == "__main__":
    main()
