"""From result rows to the luck/skill statistics of one variant, with bootstrap intervals
over deals (each pairing's deals resampled independently; full games resampled too)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from experiments.stats import bradley_terry, win_matrix

from . import estimators as est


@dataclass
class PairData:
    """One pairing's duplicate deals: ``a`` in one seat against ``b`` in every other seat,
    the deal played once per seat with ``a`` in seat r in play r (two seats: the seat swap).
    Results are a seat's points minus the mean of the other seats' (two seats: the margin)."""

    a: str
    b: str
    x: np.ndarray       # (deals, plays): seat 0's result in each play (the same cards)
    y: np.ndarray       # (deals, plays): a's result in each play
    w: np.ndarray       # (deals, plays): a's hand win (1) or another seat's (-1/(seats-1)), 0 none
    chance: np.ndarray | None = None   # (deals, plays): a's chance correction (.aivat), if every deal has one

    def take(self, idx) -> "PairData":
        return PairData(self.a, self.b, self.x[idx], self.y[idx], self.w[idx],
                        None if self.chance is None else self.chance[idx])

    def corrected(self) -> np.ndarray:
        """a's chance-corrected results, shape (n_deals, plays)."""
        return self.y + self.chance

    @property
    def n(self) -> int:
        return len(self.y)

    def margins_a(self) -> np.ndarray:
        """a's results, shape (n_deals, plays)."""
        return self.y

    def results_a(self) -> np.ndarray:
        return self.w

    def dup(self) -> np.ndarray:
        """a's duplicate result per deal (mean over its plays)."""
        return self.y.mean(axis=1)

    def wdl(self):
        r = self.w.reshape(-1)
        n = max(r.size, 1)
        return (r > 0).sum() / n, (r == 0).sum() / n, (r < 0).sum() / n


def relative(points) -> np.ndarray:
    """Each seat's points minus the mean of the other seats' points."""
    p = np.asarray(points, dtype=np.float64)
    return p - (p.sum(axis=-1, keepdims=True) - p) / (p.shape[-1] - 1)


def pair_data(rows, kind="pair") -> dict[tuple[str, str], PairData]:
    groups: dict = {}
    for r in sorted((r for r in rows if r["kind"] == kind and "error" not in r),
                    key=lambda r: r["deal"]):
        groups.setdefault((r["a"], r["b"]), []).append(r)
    out = {}
    for (a, b), rs in groups.items():
        rel = relative([[h["points"] for h in r["hands"]] for r in rs])   # deals x plays x seats
        plays = np.arange(rel.shape[1])
        winners = np.array([[h["winner"] for h in r["hands"]] for r in rs])
        seats = rel.shape[2]
        w = np.where(winners < 0, 0.0, np.where(winners == plays, 1.0, -1.0 / (seats - 1)))
        chance = [[h.get("chance") for h in r["hands"]] for r in rs]
        if all(c is not None for cs in chance for c in cs):
            chance = np.asarray(chance, dtype=np.float64)[:, plays, plays]
        else:
            chance = None
        out[(a, b)] = PairData(a, b, rel[:, :, 0], rel[:, plays, plays], w, chance)
    return out


def pair_precision(pairs: dict) -> tuple[float, dict]:
    """The precision rule's two numbers (docs/luck_skill.md, "Precision"): the single-hand
    standard deviation of results (every pairing's hands pooled) and, per pairing, the
    95% half-width of a's mean result per deal (normal approximation)."""
    hands = [d.y.ravel() for d in pairs.values() if d.n]
    sd = float(np.concatenate(hands).std(ddof=1)) if hands and sum(map(len, hands)) > 1 \
        else float("nan")
    half = {}
    for key, d in pairs.items():
        per_deal = d.y.mean(axis=1)
        half[key] = (1.96 * float(per_deal.std(ddof=1)) / np.sqrt(d.n)) if d.n > 1 \
            else float("inf")
    return sd, half


def games_data(rows) -> np.ndarray:
    """Hands per finished full game."""
    return np.array([r["num_hands"] for r in rows
                     if r["kind"] == "game" and "error" not in r and r.get("finished")],
                    dtype=np.float64)


# -- the statistics of one (possibly resampled) data set ---------------------------------

def _p_matrix(names, pairs, fn):
    idx = {n: k for k, n in enumerate(names)}
    p = np.full((len(names), len(names)), np.nan)
    for (a, b), d in pairs.items():
        if a in idx and b in idx and d.n:
            v = fn(d)
            p[idx[a], idx[b]] = v
            p[idx[b], idx[a]] = 1 - v
    return p


def _hand_win_prob(d: PairData) -> float:
    w, dr, _ = d.wdl()
    return w + dr / 2


def _game_win_prob(d: PairData, hands: float) -> float:
    m = d.margins_a().reshape(-1)
    return est.game_win_prob(float(m.mean()), float(m.std(ddof=1)) if m.size > 1 else 0.0, hands)


def compute(ladder, pairs, selfs, hands_per_game, order, *, clair=None) -> dict:
    """All scalar statistics of one data set. ``order``: ladder agents weakest first (fixed
    from the point estimate so bootstrap replicates are comparable)."""
    out: dict = {}
    lp = {k: v for k, v in pairs.items() if k[0] in ladder and k[1] in ladder}
    # 1. deal luck
    for spec, d in selfs.items():
        out[f"lambda_self[{spec}]"] = est.pooled_deal_share([d.x])
        out[f"var_reduction_self[{spec}]"] = est.duplicate_variance_reduction(d.y)["reduction"]
    out["lambda_pairs"] = est.pooled_deal_share([d.x for d in lp.values()])
    ys = [d.y - d.y.mean(axis=0) for d in lp.values()]
    if ys and len({y.shape[1] for y in ys}) == 1:
        vr = est.duplicate_variance_reduction(np.concatenate(ys))
        out["var_reduction_pairs"] = vr["reduction"]
        out["hands_equiv_pairs"] = vr["hands_equiv"]
    # 2. ratings and chains
    outcomes = {k: np.where(d.dup() > 0, 1.0, np.where(d.dup() < 0, 0.0, 0.5))
                for k, d in lp.items()}
    names = list(order)
    if len(names) >= 2:
        r = bradley_terry(win_matrix(names, outcomes), iters=500, tol=1e-8)
        for n, v in zip(names, r):
            out[f"rating[{n}]"] = float(v)
    ph = _p_matrix(names, lp, _hand_win_prob)
    pd = _p_matrix(names, lp, lambda d: float(np.mean(np.where(d.dup() > 0, 1, np.where(d.dup() < 0, 0, .5)))))
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i != j:
                out[f"p_hand[{a}|{b}]"] = ph[i, j]
                out[f"p_deal[{a}|{b}]"] = pd[i, j]
    ordi = list(range(len(names)))
    if len(names) >= 2:
        for t in (0.6, 0.75):
            out[f"chain{int(t * 100)}_hand"] = est.skill_chain(np.nan_to_num(ph, nan=0.5), ordi, t)
    if np.isfinite(hands_per_game):
        pg = _p_matrix(names, lp, lambda d: _game_win_prob(d, hands_per_game))
        for t in (0.6, 0.75):
            out[f"chain{int(t * 100)}_game"] = est.skill_chain(np.nan_to_num(pg, nan=0.5), ordi, t)
        for i, a in enumerate(names):
            for j, b in enumerate(names):
                if i != j:
                    out[f"p_game[{a}|{b}]"] = pg[i, j]
    best = names[-1] if names else None
    if best and "random" in names and best != "random":
        d, sign = _get(lp, best, "random")
        if d is not None:
            out["best_minus_random"] = sign * float(d.dup().mean())
    # adjacent pairs: games for a majority
    for lo_, hi_ in zip(names[:-1], names[1:]):
        d, sign = _get(lp, hi_, lo_)
        if d is None:
            continue
        w, dr, l = d.wdl()
        if sign < 0:
            w, l = l, w
        out[f"hands_for_majority[{hi_}>{lo_}]"] = est.games_for_majority(w, dr, l)
        if np.isfinite(hands_per_game):
            pgv = _game_win_prob(d, hands_per_game)
            pgv = pgv if sign > 0 else 1 - pgv
            out[f"games_for_majority[{hi_}>{lo_}]"] = est.games_for_majority(pgv, 0.0, 1 - pgv)
    # 3. true-score decomposition
    for tag, sub in (("", lp), ("_norandom", {k: v for k, v in lp.items() if "random" not in k})):
        for unit, fn in (("margin", PairData.margins_a), ("win", PairData.results_a)):
            dec = est.true_score_decomposition([fn(d) for d in sub.values()])
            out[f"skill_share_hand_{unit}{tag}"] = dec["skill_share"]
            out[f"n_star_{unit}{tag}"] = dec["n_star"]
            out[f"var_skill_{unit}{tag}"] = dec["var_skill"]
            out[f"var_luck_{unit}{tag}"] = dec["var_luck"]
            if np.isfinite(hands_per_game):
                out[f"skill_share_game_{unit}{tag}"] = est.skill_share_after(dec["n_star"], hands_per_game)
                out[f"n_star_games_{unit}{tag}"] = dec["n_star"] / hands_per_game
    out["hands_per_game"] = hands_per_game
    out.update(_chance_corrected(lp))
    # 4. clairvoyance
    if clair is not None:
        cspec, sspec = clair
        dc, sc = _get(pairs, cspec, sspec)
        for beginner in ("random", "greedy"):
            db, sb = _get(pairs, sspec, beginner)
            if dc is not None and db is not None:
                le = sb * float(db.dup().mean())
                re = sc * float(dc.dup().mean())
                out[f"LE[{beginner}]"] = le
                out[f"RE[{beginner}]"] = re
                out[f"skill_level[{beginner}]"] = est.skill_level(le, re)
    return out


def _chance_corrected(lp) -> dict:
    """The chance correction's statistics (docs/luck_skill.md, "Chance correction"): its
    variance reduction factor over the corrected ladder pairings, and, when every pairing
    without ``random`` is corrected, the primary statistic on corrected results."""
    cp = {k: d for k, d in lp.items() if d.chance is not None}
    if not cp:
        return {}
    out = {"aivat_factor": est.variance_reduction_factor(
        [d.dup() for d in cp.values()], [d.corrected().mean(axis=1) for d in cp.values()])}
    competent = [k for k in lp if "random" not in k]
    if competent and all(k in cp for k in competent):
        dec = est.true_score_decomposition([cp[k].corrected() for k in competent])
        out[f"{PRIMARY}_aivat"] = dec["n_star"]
        out["skill_share_hand_margin_norandom_aivat"] = dec["skill_share"]
    return out


def _get(pairs, a, b):
    if (a, b) in pairs:
        return pairs[(a, b)], 1.0
    if (b, a) in pairs:
        return pairs[(b, a)], -1.0
    return None, 0.0


# The pre-registered primary statistic (docs/luck_skill.md): n*, the hands after which skill
# and luck weigh equally in a player's mean margin, among the competent agents (no `random`).
PRIMARY = "n_star_margin_norandom"


@dataclass
class VariantStats:
    variant: str
    ladder: list[str]                       # supported ladder agents, weakest first
    point: dict
    lo: dict
    hi: dict
    n_deals: dict = field(default_factory=dict)   # pair label -> deals
    n_games: int = 0
    clair: tuple | None = None
    failed: list = field(default_factory=list)    # (kind, a, b, deal, error) of failed jobs
    primary_boot: np.ndarray = field(default_factory=lambda: np.zeros(0))  # PRIMARY per replicate
    hand_sd: float = float("nan")           # single-hand SD of results, all pairings pooled
    half_width: dict = field(default_factory=dict)   # pair label -> 95% half-width per deal
    seats: int = 0                          # the table size played (0: not recorded)


def analyse(variant, rows, ladder, *, clair=None, n_boot=300, seed=0) -> VariantStats:
    pairs = pair_data(rows, "pair")
    selfs = {a: d for (a, _), d in pair_data(rows, "self").items()}
    hpg = games_data(rows)
    H = float(hpg.mean()) if hpg.size else float("nan")
    # order the ladder by duplicate-deal Bradley-Terry rating (weakest first)
    ladder = [a for a in ladder if any(a in k for k in pairs)]
    if len(ladder) >= 2:
        lp = {k: v for k, v in pairs.items() if k[0] in ladder and k[1] in ladder}
        outcomes = {k: np.where(d.dup() > 0, 1.0, np.where(d.dup() < 0, 0.0, 0.5))
                    for k, d in lp.items()}
        r = bradley_terry(win_matrix(ladder, outcomes))
        ladder = [ladder[i] for i in np.argsort(r, kind="stable")]
    point = compute(ladder, pairs, selfs, H, ladder, clair=clair)
    rng = np.random.default_rng(seed)
    boots: dict = {k: [] for k in point}
    for _ in range(n_boot):
        bp = {k: d.take(rng.integers(0, d.n, d.n)) for k, d in pairs.items()}
        bs = {k: d.take(rng.integers(0, d.n, d.n)) for k, d in selfs.items()}
        bh = float(hpg[rng.integers(0, hpg.size, hpg.size)].mean()) if hpg.size else H
        v = compute(ladder, bp, bs, bh, ladder, clair=clair)
        for k in boots:
            boots[k].append(v.get(k, float("nan")))
    lo, hi = {}, {}
    for k, vals in boots.items():
        lo[k], hi[k] = est.percentile_interval(vals)
    n_deals = {f"{a} vs {b}": d.n for (a, b), d in pairs.items()}
    n_deals.update({f"{a} self-play": d.n for a, d in selfs.items()})
    failed = [(r["kind"], r["a"], r["b"], r["deal"], r["error"]) for r in rows if "error" in r]
    hand_sd, half = pair_precision(pairs)
    return VariantStats(variant, ladder, point, lo, hi, n_deals, int(hpg.size), clair, failed,
                        np.asarray(boots.get(PRIMARY, []), dtype=np.float64), hand_sd,
                        {f"{a} vs {b}": h for (a, b), h in half.items()})


def fmt(v, digits=2) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if isinstance(v, float) and math.isinf(v):
        return "∞"
    return f"{v:.{digits}f}"
