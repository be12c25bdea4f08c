"""Round-robin tournaments on duplicate deals, in parallel, resumable.

Every pair of agents plays every deal twice: the deal's seed fixes the deck order and the
dealer, and the two hands use the same deck and dealer with the seats swapped, so the luck
of the cards cancels out of the pair's result (duplicate play). Each finished deal is one
JSON line appended to ``results.jsonl``; a rerun with ``resume`` skips the deals already
there. The report gives per pair the mean hand-point margin and the deal win rate with 95%
bootstrap intervals over deals, Bradley-Terry ratings with bootstrap intervals, a markdown
and CSV table and a PNG plot.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import multiprocessing as mp
import os
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from mountain_rummy_env import Game
from mountain_rummy_env.records import make_variant

from .play import play_hand
from .stats import bootstrap_ci, rating_intervals

DEFAULT_AGENTS = ("random", "greedy", "rules", "search:budget=60")
SCHEDULES = ("round-robin", "ladder")


@dataclass
class TournamentConfig:
    agents: list[str] = field(default_factory=lambda: list(DEFAULT_AGENTS))
    deals: int = 60
    slow_deals: int | None = 8           # deals for pairs that include a ``search`` agent
    seed: int = 0
    workers: int = 2
    variant: str = "mountain"
    variant_options: dict = field(default_factory=dict)
    schedule: str = "round-robin"        # or "ladder": each agent against the next one only

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")

    def pairs(self) -> list[tuple[str, str]]:
        if self.schedule == "ladder":
            return list(zip(self.agents, self.agents[1:]))
        return list(itertools.combinations(self.agents, 2))

    def deals_for(self, a: str, b: str) -> int:
        slow = any(x.startswith("search") for x in (a, b))
        return min(self.deals, self.slow_deals) if slow and self.slow_deals else self.deals

    def jobs(self) -> list[tuple[str, str, int]]:
        out = []
        for a, b in self.pairs():
            for k in range(self.deals_for(a, b)):
                out.append((a, b, self.seed + k))
        return out


def _variant_key(cfg: TournamentConfig) -> str:
    return f"{cfg.variant}:{json.dumps(cfg.variant_options, sort_keys=True)}"


# -- the worker side ---------------------------------------------------------------------

_WORKER: dict = {}


def _agent_seed(base: int, deal: int, spec: str, seat: int) -> list[int]:
    h = int.from_bytes(hashlib.sha256(spec.encode()).digest()[:4], "little")
    return [base, deal, h, seat]


def play_deal(cfg_dict: dict, a: str, b: str, deal: int) -> dict:
    """Play deal ``deal`` twice, ``a`` in seat 0 then ``b`` in seat 0; returns the JSON row."""
    from agents import make_agent

    key = (cfg_dict["variant"], json.dumps(cfg_dict["variant_options"], sort_keys=True))
    if key not in _WORKER:
        variant = make_variant(cfg_dict["variant"], dict(cfg_dict["variant_options"]))
        _WORKER[key] = (variant, Game(variant, 1))
    variant, game = _WORKER[key]
    base = cfg_dict["seed"]
    game.reset(seed=deal)
    deck = game.states[0]["deck"].copy()
    dealer = deal % variant.num_players
    hands = []
    for order in ((a, b), (b, a)):
        agents = [make_agent(spec, seed=_agent_seed(base, deal, spec, seat))
                  for seat, spec in enumerate(order)]
        r = play_hand(game, agents, seed=deal, deck=deck, dealer=dealer)
        hands.append({"seats": list(order), "points": list(r.hand_points), "end": r.end,
                      "ender": r.ender, "winner": r.winner, "steps": r.steps,
                      "deck": variant.deck.cards_text(game.states[0]["deck"]),
                      "dealer": int(dealer)})
    pa = hands[0]["points"][0] + hands[1]["points"][1]
    pb = hands[0]["points"][1] + hands[1]["points"][0]
    margin = (pa - pb) / 2
    return {"a": a, "b": b, "deal": deal, "variant": _variant_key_from(cfg_dict),
            "margin": margin, "outcome": 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0,
            "hands": hands}


def _variant_key_from(cfg_dict) -> str:
    return f"{cfg_dict['variant']}:{json.dumps(cfg_dict['variant_options'], sort_keys=True)}"


def _play_job(args):
    cfg_dict, a, b, deal = args
    return play_deal(cfg_dict, a, b, deal)


# -- the driver --------------------------------------------------------------------------

def load_results(path) -> list[dict]:
    """Rows of a results JSONL file; a torn last line (interrupted write) is skipped."""
    rows = []
    p = Path(path)
    if not p.exists():
        return rows
    with p.open() as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


@contextmanager
def result_sink(path, total: int, *, desc: str, unit: str, progress: bool = True):
    """A ``sink(row)`` that appends each row to ``path`` as a JSON line at once (flushed)
    and ticks a progress bar of ``total``. A torn last line (an interrupted write) is
    ended first, so the next row starts on its own line and is not lost on reading."""
    p = Path(path)
    if p.exists() and p.stat().st_size:
        with p.open("rb") as fh:
            fh.seek(-1, os.SEEK_END)
            torn = fh.read(1) != b"\n"
        if torn:
            with p.open("a") as fh:
                fh.write("\n")
    bar = None
    if progress and total:
        from tqdm import tqdm
        bar = tqdm(total=total, desc=desc, unit=unit, dynamic_ncols=True)
    with p.open("a") as fh:
        def sink(row):
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            if bar is not None:
                bar.update(1)
        try:
            yield sink
        finally:
            if bar is not None:
                bar.close()


def run_tournament(cfg: TournamentConfig, out_dir, *, resume: bool = True,
                   progress: bool = True, max_jobs: int | None = None) -> list[dict]:
    """Play the missing deals of ``cfg`` into ``out_dir/results.jsonl``; returns all rows
    of this configuration. ``max_jobs`` stops after that many new deals (for tests)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.jsonl"
    if not resume and path.exists():
        path.unlink()
    vkey = _variant_key(cfg)
    have = {(r["a"], r["b"], r["deal"]) for r in load_results(path) if r.get("variant") == vkey}
    todo = [j for j in cfg.jobs() if j not in have]
    if max_jobs is not None:
        todo = todo[:max_jobs]
    cfg_dict = asdict(cfg)
    args = [(cfg_dict, a, b, d) for a, b, d in todo]
    with result_sink(path, len(todo), desc="deals", unit="deal", progress=progress) as sink:
        if cfg.workers <= 1 or len(args) <= 1:
            for job in args:
                sink(_play_job(job))
        else:
            ctx = mp.get_context("fork" if os.name == "posix" else "spawn")
            with ctx.Pool(cfg.workers) as pool:
                for row in pool.imap_unordered(_play_job, args, chunksize=1):
                    sink(row)
    wanted = set(cfg.jobs())
    rows = [r for r in load_results(path)
            if r.get("variant") == vkey and (r["a"], r["b"], r["deal"]) in wanted]
    return rows


# -- the report --------------------------------------------------------------------------

@dataclass
class PairStats:
    a: str
    b: str
    deals: int
    margin: float
    margin_lo: float
    margin_hi: float
    win_rate: float
    win_lo: float
    win_hi: float


def summarise(rows, agents, *, n_boot: int = 2000, seed: int = 0):
    """Per-pair statistics and ratings from result rows."""
    by_pair: dict = {}
    for r in rows:
        by_pair.setdefault((r["a"], r["b"]), []).append(r)
    pairs = []
    outcomes = {}
    for (a, b), rs in sorted(by_pair.items(), key=lambda kv: (agents.index(kv[0][0]) if kv[0][0] in agents else 99,
                                                               agents.index(kv[0][1]) if kv[0][1] in agents else 99)):
        rs.sort(key=lambda r: r["deal"])
        m = [r["margin"] for r in rs]
        o = [r["outcome"] for r in rs]
        mm, ml, mh = bootstrap_ci(m, n_boot=n_boot, rng=seed)
        wm, wl, wh = bootstrap_ci(o, n_boot=n_boot, rng=seed + 1)
        pairs.append(PairStats(a, b, len(rs), mm, ml, mh, wm, wl, wh))
        outcomes[(a, b)] = o
    names = [n for n in agents if any(n in k for k in outcomes)]
    ratings = rating_intervals(names, outcomes, rng=seed) if len(names) >= 2 else {}
    return pairs, ratings


def markdown_table(pairs, ratings) -> str:
    lines = ["| A | B | deals | mean margin A-B (95% CI) | A deal win rate (95% CI) | A better? |",
             "|---|---|---:|---|---|---|"]
    for p in pairs:
        verdict = "yes" if p.margin_lo > 0 else "no (worse)" if p.margin_hi < 0 else "not resolved"
        lines.append(f"| {p.a} | {p.b} | {p.deals} | {p.margin:+.1f} ({p.margin_lo:+.1f}, "
                     f"{p.margin_hi:+.1f}) | {p.win_rate:.3f} ({p.win_lo:.3f}, {p.win_hi:.3f}) | "
                     f"{verdict} |")
    lines += ["", "| agent | Bradley-Terry rating (Elo scale) | 95% CI |", "|---|---:|---|"]
    for name, (r, lo, hi) in sorted(ratings.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"| {name} | {r:+.0f} | ({lo:+.0f}, {hi:+.0f}) |")
    return "\n".join(lines)


def write_report(pairs, ratings, out_dir) -> dict:
    """Write ``report.md``, ``pairs.csv``, ``ratings.csv`` and ``ratings.png``; returns paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    md = markdown_table(pairs, ratings)
    (out / "report.md").write_text("# Tournament\n\n" + md + "\n")
    with (out / "pairs.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "deals", "margin", "margin_lo", "margin_hi", "win_rate",
                    "win_lo", "win_hi"])
        for p in pairs:
            w.writerow([p.a, p.b, p.deals, f"{p.margin:.3f}", f"{p.margin_lo:.3f}",
                        f"{p.margin_hi:.3f}", f"{p.win_rate:.4f}", f"{p.win_lo:.4f}",
                        f"{p.win_hi:.4f}"])
    with (out / "ratings.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "rating", "lo", "hi"])
        for name, (r, lo, hi) in ratings.items():
            w.writerow([name, f"{r:.1f}", f"{lo:.1f}", f"{hi:.1f}"])
    paths = {"report": out / "report.md", "pairs": out / "pairs.csv",
             "ratings": out / "ratings.csv"}
    try:
        paths["plot"] = plot(pairs, ratings, out / "ratings.png")
    except ImportError:  # matplotlib is optional (the 'analysis' extra)
        pass
    return paths


def plot(pairs, ratings, path):
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    fig = Figure(figsize=(12, 4.5))
    axes = fig.subplots(1, 2)
    order = sorted(ratings, key=lambda n: ratings[n][0])
    r = np.array([ratings[n][0] for n in order])
    lo = np.array([ratings[n][1] for n in order])
    hi = np.array([ratings[n][2] for n in order])
    axes[0].errorbar(r, range(len(order)), xerr=[r - lo, hi - r], fmt="o", capsize=4)
    axes[0].set_yticks(range(len(order)), order)
    axes[0].set_xlabel("Bradley-Terry rating (Elo scale), 95% CI")
    axes[0].set_title("Ratings")
    labels = [f"{p.a} vs {p.b}" for p in pairs]
    m = np.array([p.margin for p in pairs])
    axes[1].errorbar(m, range(len(pairs)), xerr=[m - [p.margin_lo for p in pairs],
                                                 [p.margin_hi for p in pairs] - m],
                     fmt="o", capsize=4)
    axes[1].axvline(0, color="grey", lw=1)
    axes[1].set_yticks(range(len(pairs)), labels)
    axes[1].set_xlabel("mean hand-point margin per deal (A - B), 95% CI")
    axes[1].set_title("Pairs (duplicate deals)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return Path(path)
