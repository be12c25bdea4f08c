"""Synthetic duplicate tournaments whose skill and luck are set, to validate the estimators.

A seat's hand points are ``skill[agent] + deal[seat] + play[seat]``: the deal's luck of a
seat (its cards and stock order, the same in every play of the deal) and the luck of one
play (induced luck and decision noise, drawn anew each play), both normal with mean 0.
Each pairing (a, b) is "a against a field of b": ``a`` takes one seat, ``b`` the other
``seats - 1``, and the deal is played ``seats`` times with ``a`` rotated through every seat
(two seats: the classic seat swap). A seat's result is its points minus the mean of the
other seats' (the N-seat margin of docs/luck_skill.md), so over the rotations of a deal the
deal's luck cancels exactly, as in real duplicate play.

The truth the estimators target follows from the set-up (:meth:`SyntheticGame.truth`):
``var_skill`` is the mean of μ² over the pairings (μ = skill[a] - skill[b], a's expected
result), ``var_luck`` the variance of a single hand's result around μ, and
λ = deal_sd² / (deal_sd² + play_sd²) the deal's share of a seat's luck.
:func:`coverage` runs many simulated studies and counts how often each estimator's 95%
bootstrap interval (deals resampled within each pairing, as the study does) holds the truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from . import estimators as est


@dataclass(frozen=True)
class SyntheticGame:
    """A simulated duplicate study: agent skills (points a hand), the luck scales, its size."""

    skills: tuple[float, ...] = (0.0, 1.0, 2.0, 4.0)
    seats: int = 2
    deal_sd: float = 10.0
    play_sd: float = 10.0
    deals: int = 200

    def pairings(self) -> list[tuple[int, int]]:
        return list(combinations(range(len(self.skills)), 2))

    def truth(self) -> dict:
        field = 1 + 1 / (self.seats - 1)        # var of (own - mean of others) per unit
        mus = np.array([self.skills[a] - self.skills[b] for a, b in self.pairings()])
        var_skill = float((mus ** 2).mean())
        var_luck = field * (self.deal_sd ** 2 + self.play_sd ** 2)
        return {"var_skill": var_skill, "var_luck": var_luck,
                "skill_share": var_skill / (var_skill + var_luck),
                "n_star": var_luck / var_skill if var_skill > 0 else float("inf"),
                "lambda": self.deal_sd ** 2 / (self.deal_sd ** 2 + self.play_sd ** 2)}

    def simulate(self, rng) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """One study: per pairing, ``a``'s result in each play of each deal (deals x seats)
        and seat 0's result in each play (deals x seats, for the deal's share λ)."""
        n, k = self.deals, self.seats
        results, seat0 = [], []
        for a, b in self.pairings():
            deal = rng.normal(0.0, self.deal_sd, (n, 1, k))         # per deal and seat
            play = rng.normal(0.0, self.play_sd, (n, k, k))         # per deal, play, seat
            skill = np.full((k, k), self.skills[b])
            skill[np.arange(k), np.arange(k)] = self.skills[a]      # play r: a in seat r
            points = skill[None] + deal + play                      # deals x plays x seats
            rel = points - (points.sum(axis=2, keepdims=True) - points) / (k - 1)
            results.append(rel[:, np.arange(k), np.arange(k)])      # a's seat in each play
            seat0.append(rel[:, :, 0])
        return results, seat0


def estimates(results, seat0) -> dict:
    """The estimators under test on one (possibly resampled) study."""
    dec = est.true_score_decomposition(results)
    return {"var_skill": dec["var_skill"], "var_luck": dec["var_luck"],
            "skill_share": dec["skill_share"], "n_star": dec["n_star"],
            "lambda": est.pooled_deal_share(seat0)}


def bootstrap_interval(results, seat0, rng, n_boot: int = 200) -> dict:
    """95% percentile intervals of :func:`estimates`, deals resampled within each pairing."""
    reps: dict[str, list] = {}
    for _ in range(n_boot):
        idx = [rng.integers(0, len(r), len(r)) for r in results]
        v = estimates([r[i] for r, i in zip(results, idx)], [s[i] for s, i in zip(seat0, idx)])
        for key, x in v.items():
            reps.setdefault(key, []).append(x)
    return {key: est.percentile_interval(vals) for key, vals in reps.items()}


def coverage(game: SyntheticGame, sims: int = 200, n_boot: int = 200, seed: int = 0) -> dict:
    """Share of ``sims`` simulated studies whose 95% interval holds the truth, per
    estimator, with the mean point estimate beside the truth: ``{name: (coverage,
    mean estimate, truth)}``."""
    rng = np.random.default_rng(seed)
    truth = game.truth()
    hits = {key: 0 for key in truth}
    means = {key: [] for key in truth}
    for _ in range(sims):
        results, seat0 = game.simulate(rng)
        point = estimates(results, seat0)
        ci = bootstrap_interval(results, seat0, rng, n_boot)
        for key in truth:
            lo, hi = ci[key]
            hits[key] += int(lo <= truth[key] <= hi)
            means[key].append(point[key])
    return {key: (hits[key] / sims, float(np.mean(means[key])), truth[key]) for key in truth}


# The settings of the validation table in docs/luck_skill.md: luck-heavy (a competent field,
# as in the real games) and skill-heavy, 2 and 4 seats, and a small study.
SETTINGS = {
    "2 seats, luck-heavy": SyntheticGame(seats=2),
    "4 seats, luck-heavy": SyntheticGame(seats=4),
    "2 seats, skill-heavy": SyntheticGame(skills=(0, 5, 10, 20), seats=2, deal_sd=6, play_sd=4),
    "4 seats, skill-heavy": SyntheticGame(skills=(0, 5, 10, 20), seats=4, deal_sd=6, play_sd=4),
    "4 seats, 100 deals": SyntheticGame(seats=4, deals=100),
}


def main(argv=None) -> int:
    """``python -m experiments.luck_skill.synthetic``: the coverage table of the estimators."""
    import argparse

    from tqdm import tqdm

    ap = argparse.ArgumentParser(
        prog="python -m experiments.luck_skill.synthetic",
        description="Validate the luck/skill estimators on simulated duplicate studies with a "
                    "known truth: per setting, the share of simulated studies whose 95% "
                    "bootstrap interval holds the true value (about 0.95 expected).")
    ap.add_argument("--sims", type=int, default=200, help="simulated studies per setting")
    ap.add_argument("--boot", type=int, default=200, help="bootstrap replicates per study")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)
    if args.sims < 1 or args.boot < 10:
        ap.error("--sims must be >= 1 and --boot >= 10")
    names = ("skill_share", "n_star", "lambda", "var_skill", "var_luck")
    print("| setting | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for label, game in tqdm(SETTINGS.items(), desc="settings", leave=False):
        cov = coverage(game, args.sims, args.boot, args.seed)
        print(f"| {label} | " + " | ".join(f"{cov[n][0]:.3f}" for n in names) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
