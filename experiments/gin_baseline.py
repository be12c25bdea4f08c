"""The Gin ladder against ``simple_gin``, the EAAI challenge's SimpleGinRummyPlayer.

For each agent X of the ladder: a duplicate tournament of X against ``simple_gin``
(:func:`experiments.tournament.run_tournament`, each deal played twice with the seats
swapped; margin per deal with a 95% bootstrap interval, deal win rate with a 95% Wilson
interval, the decision times of both), and duplicate games to 100 (``episode="game"``):
each game seed played twice with the seats swapped, the same first dealer and so the same
deck in every hand both games reach. A seed scores X's share of its two games; the games
won are the mean over seeds with a 95% bootstrap interval over seeds (a Wilson interval on
the games when every game went the same way, which no resampling moves; the challenge quoted
games to 100 won: the AAAI-21 hand-evaluation entry won 55.4% against this player)::

    nice -n 10 python -m experiments.gin_baseline --deals 300 --games 150 \\
        --out runs/gin_baseline

Runs resume: the tournaments from their folders, the games from ``games.jsonl``. Seeds
default to 200000 (deals) and 300000 (games), away from those the agents were tuned on.
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path

import numpy as np

from agents import make_agent
from experiments.play import Referee, play_hand
from experiments.stats import bootstrap_ci, wilson_interval
from experiments.tournament import (
    TournamentConfig, load_results, run_tournament, summarise, time_summary)
from mountain_rummy_env import Game
from mountain_rummy_env.registry import make_variant

BASELINE = "simple_gin"
LADDER = ("random", "greedy", "rules", "search:budget=64")


def play_game(game: Game, seats: list[str], seed: int) -> int:
    """One game to the variant's target score, ``seats[p]`` in seat ``p``, the first dealer
    seat 1; returns the winning seat."""
    game.reset(seed=seed, dealer=1)
    agents = [make_agent(spec, seed=[seed, p]) for p, spec in enumerate(seats)]
    while not game.done(0):
        play_hand(game, agents, new=False, referee=Referee())
    return int(game.states[0]["game_winner"])


def duplicate_games(spec: str, seeds, path: Path, target: int = 100) -> list[float]:
    """X's share of the two games of each seed (X in seat 0, then in seat 1), appended to
    ``path`` as they finish and read back from it when already played."""
    done = {(r["agent"], r["seed"]): r["share"] for r in load_results(path)}
    game = Game(make_variant("gin", episode="game", target_score=target), 1)
    with path.open("a") as fh:
        for seed in seeds:
            if (spec, seed) not in done:
                wins = [play_game(game, [spec, BASELINE], seed) == 0,
                        play_game(game, [BASELINE, spec], seed) == 1]
                done[(spec, seed)] = sum(wins) / 2
                fh.write(json.dumps({"agent": spec, "seed": seed, "share": sum(wins) / 2}) + "\n")
                fh.flush()
    return [done[(spec, seed)] for seed in seeds]


def measure(ladder, deals: int, games: int, deal_seed: int, game_seed: int, out: Path):
    """Per agent: its pair with ``simple_gin`` and its games; and everyone's decision times."""
    out.mkdir(parents=True, exist_ok=True)
    pairs, shares, rows_all = {}, {}, []
    for spec in ladder:
        cfg = TournamentConfig(agents=[spec, BASELINE], deals=deals, slow_deals=None,
                               seed=deal_seed, workers=1, variant="gin")
        rows = run_tournament(cfg, out / spec.replace(":", "_").replace("=", "-"),
                              progress=False)
        (pair,), _ = summarise(rows, [spec, BASELINE])
        pairs[spec] = pair
        rows_all += rows
        shares[spec] = duplicate_games(spec, range(game_seed, game_seed + games),
                                       out / "games.jsonl")
    return pairs, shares, time_summary(rows_all, [*ladder, BASELINE])


def table(pairs, shares, times, command: str) -> str:
    lines = [f"    {command}", "",
             "| agent vs simple_gin | deals | margin per deal (95% CI) | deal win rate (95% CI) "
             "| game seeds | games to 100 won (95% CI) |", "|---|---:|---|---|---:|---|"]
    for spec, p in pairs.items():
        share = np.asarray(shares[spec])
        mean, lo, hi = bootstrap_ci(share, rng=0)
        swept = ""
        if share.min() == share.max():   # resampling a sweep never moves it: Wilson instead
            lo, hi = wilson_interval(share.sum() * 2, 2 * len(share))
            swept = f", Wilson: {share.sum() * 2:.0f} of {2 * len(share)} games"
        lines.append(f"| {spec} | {p.deals} | {p.margin:+.1f} ({p.margin_lo:+.1f}, "
                     f"{p.margin_hi:+.1f}) | {p.win_rate:.3f} ({p.win_lo:.3f}, {p.win_hi:.3f}) "
                     f"| {len(share)} | {mean:.3f} ({lo:.3f}, {hi:.3f}{swept}) |")
    lines += ["", "| agent | decisions | mean ms per decision | 95th percentile ms |",
              "|---|---:|---:|---:|"]
    lines += [f"| {t.name} | {t.decisions} | {t.mean_ms:.3g} | {t.p95_ms:.3g} |" for t in times]
    return "\n".join(lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--agents", nargs="+", default=list(LADDER), metavar="SPEC",
                    help="the ladder (default: %(default)s)")
    ap.add_argument("--deals", type=int, default=300, help="duplicate deals per agent")
    ap.add_argument("--games", type=int, default=150, help="game seeds per agent (2 games each)")
    ap.add_argument("--deal-seed", type=int, default=200_000)
    ap.add_argument("--game-seed", type=int, default=300_000)
    ap.add_argument("--out", default="runs/gin_baseline")
    args = ap.parse_args(argv)
    command = "python -m experiments.gin_baseline " + shlex.join(
        ["--agents", *args.agents, "--deals", str(args.deals), "--games", str(args.games),
         "--deal-seed", str(args.deal_seed), "--game-seed", str(args.game_seed),
         "--out", args.out])
    text = table(*measure(args.agents, args.deals, args.games, args.deal_seed, args.game_seed,
                          Path(args.out)), command)
    (Path(args.out) / "table.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
