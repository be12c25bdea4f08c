"""Measure the chance correction's variance reduction on fresh ``rules`` vs ``greedy``
duplicate deals (docs/luck_skill.md, "Chance correction", the "Measured" table).

    PYTHONPATH=. python -m experiments.luck_skill.aivat_measure german --options '{"num_players": 4}' \\
        --first 900000 --deals 200 --out runs/aivat_measure

plays deals ``first .. first + deals - 1`` (resumable, one JSON line a deal, with its CPU
seconds), corrects each with the ``hand`` value at scale 1 (the correction is linear in the
scale, so one pass serves every scale), and prints: the least-squares scale on these deals
(``-cov(raw, c) / var(c)`` of the duplicate result per deal: what calibration seeds fix),
and at ``--scale`` (default: the variant's :data:`aivat.HandValue.SCALES`) the factor
var(raw) / var(corrected) of the duplicate result per deal with a 95% percentile bootstrap
interval over deals, the same per hand (every play's result), the mean correction per deal
in standard errors, and the CPU seconds per deal of the correction and of play.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from . import aivat
from .analysis import pair_data
from .runner import _variant, run_job


def _load(path: Path) -> dict:
    out = {}
    if path.exists():
        for line in path.read_text().splitlines():
            r = json.loads(line)
            out[r["deal"]] = r
    return out


def collect(variant: str, options: dict, deals: list[int], out: Path, a="rules", b="greedy"):
    """Rows of ``deals`` (played and corrected at scale 1 where not on file)."""
    out.mkdir(parents=True, exist_ok=True)
    tag = variant + "".join(f"_{k}{v}" for k, v in sorted(options.items()))
    path = out / f"{tag}.jsonl"
    done = _load(path)
    v, _ = _variant(variant, options, False)
    with path.open("a") as f:
        for deal in deals:
            if deal in done:
                continue
            t = time.process_time()
            row = run_job((variant, options, 0, ("pair", a, b, deal)))
            row["play_cpu"] = time.process_time() - t
            c = aivat.correct_row(row, v, "hand=1")
            row["unit_chance"], row["aivat_cpu"] = c["chance"], c["cpu_seconds"]
            f.write(json.dumps(row) + "\n")
            f.flush()
            done[deal] = row
    return [done[d] for d in deals], v


def summarise(rows, scale: float, n_boot: int = 2000, seed: int = 0) -> dict:
    rows = [{**r, "hands": [{**h, "chance": [scale * x for x in c]}
                            for h, c in zip(r["hands"], r["unit_chance"])]} for r in rows]
    (d,) = pair_data(rows).values()
    raw, cor = d.dup(), d.corrected().mean(axis=1)
    unit = (cor - raw) / scale

    def factor(x, y):
        return float(np.var(x, ddof=1) / np.var(y, ddof=1))

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, d.n, size=(n_boot, d.n))
    boots = np.array([factor(raw[i], cor[i]) for i in idx])
    ls = -np.cov(raw, unit)[0, 1] / np.var(unit, ddof=1)
    hands_raw, hands_cor = d.y.ravel(), d.corrected().ravel()
    chance = cor - raw
    return {"deals": d.n, "scale": scale, "ls_scale": float(ls),
            "factor": factor(raw, cor), "lo": float(np.percentile(boots, 2.5)),
            "hi": float(np.percentile(boots, 97.5)),
            "per_hand": factor(hands_raw, hands_cor),
            "mean_correction_se": float(chance.mean() / (chance.std(ddof=1) / np.sqrt(d.n))),
            "var_raw": float(np.var(raw, ddof=1)),
            "aivat_cpu": float(np.mean([r["aivat_cpu"] for r in rows])),
            "play_cpu": float(np.mean([r["play_cpu"] for r in rows]))}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("variant")
    p.add_argument("--options", default="{}")
    p.add_argument("--first", type=int, required=True)
    p.add_argument("--deals", type=int, default=200)
    p.add_argument("--scale", type=float, default=None)
    p.add_argument("--out", default="runs/aivat_measure")
    p.add_argument("--boot", type=int, default=2000)
    args = p.parse_args(argv)
    options = json.loads(args.options)
    rows, v = collect(args.variant, options, list(range(args.first, args.first + args.deals)),
                      Path(args.out))
    scale = aivat.HandValue(v).scale if args.scale is None else args.scale
    s = summarise(rows, scale, args.boot)
    print(json.dumps({"variant": args.variant, "options": options, "first": args.first, **s}))


if __name__ == "__main__":
    main()
