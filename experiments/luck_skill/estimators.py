"""Luck/skill estimators on duplicate-deal data (pure numpy; no game code).

Notation (see ``docs/luck_skill.md``): a *deal* is played once per seat of the table, with
the players rotated (two seats: the seat swap). A seat's *result* is its hand points minus
the mean of the other seats' points (two seats: the margin). Per pairing the data are
``(n_deals, plays)`` arrays: a player's result in each play, or one seat's result in each
play (the same cards each time).

Every function takes plain arrays so it can be tested on synthetic games with known
structure (``tests/test_luck_skill.py``, :mod:`experiments.luck_skill.synthetic`).
"""

from __future__ import annotations

import math

import numpy as np


# -- 1. deal luck from duplicate play -----------------------------------------------------

def pooled_deal_share(groups) -> float:
    """λ: the deal's share of a seat's result variance, pooled over pairings. Each group
    is one pairing's results of one seat (the same cards) in every play of each deal, shape
    ``(n_deals, plays)``; each play's column is centred on its own mean (removes the players'
    skill). λ = Σ cov(play r, play r') / Σ sqrt(var r · var r') over pairs of plays, sums of
    products pooled over the groups: the correlation of a seat's results across plays with
    different players in it (with two plays, Pearson's correlation of the pooled data). Identical results in every play (a
    deterministic agent replaying itself) give 1: all of the variance is the deal's."""
    cross = sq = None
    constant = True
    for x in groups:
        x = np.asarray(x, dtype=np.float64)
        if x.shape[0] < 2:
            continue
        constant &= bool(np.allclose(x, x[:, :1]))
        x = x - x.mean(axis=0)
        cross = (0.0 if cross is None else cross) + x.T @ x      # plays x plays, summed
    if cross is None:
        return float("nan")
    sq = np.diag(cross)
    upper = np.triu_indices(len(sq), 1)
    den = float(np.sqrt(np.outer(sq, sq))[upper].sum())
    if den > 0:
        return float(cross[upper].sum()) / den
    return 1.0 if constant else float("nan")


def duplicate_variance_reduction(y) -> dict:
    """Variance of a player's duplicate result (its mean over the ``k`` plays of a deal)
    against the mean of ``k`` independent hands (``var(single hand) / k``), from ``y`` of
    shape ``(n_deals, k)``: the player's result in each play, each play's column centred.
    Returns ``{"var_single", "var_dup", "ratio", "reduction", "hands_equiv"}``: ``ratio`` ≈
    1 - λ, ``reduction`` = 1 - ratio, ``hands_equiv`` = independent hands worth one
    duplicate deal (k / ratio)."""
    y = np.asarray(y, dtype=np.float64)
    y = y - y.mean(axis=0)
    k = y.shape[1]
    var_single = float(y.var(ddof=1)) if y.size > 1 else float("nan")
    var_dup = float(y.mean(axis=1).var(ddof=1)) if y.shape[0] > 1 else float("nan")
    ratio = var_dup / (var_single / k) if var_single > 0 else float("nan")
    return {"var_single": var_single, "var_dup": var_dup, "ratio": ratio,
            "reduction": 1 - ratio, "hands_equiv": k / ratio if ratio > 0 else float("inf")}


def variance_reduction_factor(raw, corrected) -> float:
    """var(raw) / var(corrected) of per-deal results, pooled over groups (pairings), each
    group centred on its own mean (the skill difference is not luck): how many deals of
    raw results one corrected deal is worth. ``raw`` and ``corrected`` are lists of
    per-deal arrays, the same deals in the same order."""
    def pooled(groups):
        x = [np.asarray(g, dtype=np.float64) for g in groups]
        dev = np.concatenate([g - g.mean() for g in x if g.size > 1] or [np.zeros(0)])
        dof = sum(g.size - 1 for g in x if g.size > 1)
        return float((dev ** 2).sum() / dof) if dof > 0 else float("nan")

    var_raw, var_corrected = pooled(raw), pooled(corrected)
    return var_raw / var_corrected if var_corrected > 0 else float("nan")


# -- 3. true-score decomposition ----------------------------------------------------------

def true_score_decomposition(pairs) -> dict:
    """Classical test theory over pairings: ``pairs`` is a list of arrays, one per pairing
    (a, b), each holding per-deal *duplicate-ordered* results of A: shape ``(n_deals, 2)``
    (A's result in each of the two plays of a deal) or ``(n,)`` (independent hands).

    Model: ``y = μ_ab + e`` with μ_ab the pairing's true (skill-determined) mean and e the
    luck of the hand, mean 0. Results are counted from both players' side (y and -y), so
    the grand mean is 0 and

        var(observed) = var(skill) + var(luck),  var(skill) = E[μ²],  var(luck) = E[var(e)].

    var(luck) is the pooled within-pairing variance of single hands; var(skill) is the
    weighted mean of (ȳ_ab² - var(ȳ_ab)), with var(ȳ_ab) from the per-deal means (so the
    negative correlation of the two plays of a deal is accounted for). Returns
    ``var_obs, var_skill, var_luck, skill_share, n_star`` (hands after which skill and luck
    contribute equally to a mean result: var(luck) / var(skill))."""
    num_s = num_l = weight = 0.0
    obs = 0.0
    for y in pairs:
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 1:
            y = y[:, None]
        n_deals, k = y.shape
        if n_deals < 2:
            continue
        hands = y.reshape(-1)
        m = hands.mean()
        deal_means = y.mean(axis=1)
        var_mean = deal_means.var(ddof=1) / n_deals
        # pooled single-hand luck variance: within-deal spread + between-deal spread
        var_hand = hands.var(ddof=1)
        w = hands.size
        num_s += w * (m * m - var_mean)
        num_l += w * var_hand
        obs += w * float((hands ** 2).mean())
        weight += w
    if weight == 0:
        return {k: float("nan") for k in ("var_obs", "var_skill", "var_luck", "skill_share",
                                          "n_star")}
    var_skill = num_s / weight
    var_luck = num_l / weight
    tot = max(var_skill, 0.0) + var_luck
    share = max(var_skill, 0.0) / tot if tot > 0 else float("nan")
    n_star = var_luck / var_skill if var_skill > 0 else float("inf")
    return {"var_obs": obs / weight, "var_skill": var_skill, "var_luck": var_luck,
            "skill_share": share, "n_star": n_star}


def skill_share_after(n_star: float, n: float) -> float:
    """Skill share of the variance of a mean over ``n`` hands: n / (n + n*)."""
    if not np.isfinite(n_star):
        return 0.0
    return n / (n + n_star) if n + n_star > 0 else 1.0


# -- 2. skill chain, matches, full games --------------------------------------------------

def skill_chain(p: np.ndarray, order, threshold: float) -> int:
    """Length of the skill chain: from the weakest agent (``order[0]``) step to the first
    agent further up ``order`` that beats the current one with probability ≥ ``threshold``
    (``p[i, j]`` = P(i beats j)); the number of such steps."""
    order = list(order)
    steps = 0
    cur = order[0]
    for j in order[1:]:
        if p[j, cur] >= threshold:
            steps += 1
            cur = j
    return steps


def majority_prob(win: float, draw: float, loss: float, n: int) -> float:
    """P(more wins than losses) in ``n`` independent games with these per-game chances."""
    dist = np.zeros(2 * n + 1)
    dist[n] = 1.0
    step = np.array([loss, draw, win])
    for _ in range(n):
        dist = np.convolve(dist, step)[1:-1]
    return float(dist[n + 1:].sum())


def games_for_majority(win: float, draw: float = 0.0, loss: float | None = None, *,
                       level: float = 0.95, cap: int = 5000) -> float:
    """Smallest number of games (odd, when there are no draws) for which the better player
    wins a majority of a match with probability ≥ ``level``; ``inf`` if not reached by
    ``cap`` (or the player is not better). Uses the normal approximation past 400 games."""
    if loss is None:
        loss = 1.0 - win - draw
    tot = win + draw + loss
    win, draw, loss = win / tot, draw / tot, loss / tot
    if win <= loss:
        return float("inf")
    mu = win - loss
    var = win + loss - mu * mu
    z = 1.6448536269514722 if level == 0.95 else _norm_ppf(level)
    guess = max(1, int((z * z * var) / (mu * mu)))
    if guess > 400:
        return float(guess) if guess <= cap else float("inf")
    n = 1
    while n <= min(cap, 2 * guess + 50):
        if majority_prob(win, draw, loss, n) >= level:
            return float(n)
        n += 2 if draw == 0 else 1
    return float("inf")


def _norm_ppf(q: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(q)


def _norm_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def game_win_prob(mu: float, sd: float, hands: float) -> float:
    """P(the better player wins a full game) from per-hand margin mean ``mu`` and standard
    deviation ``sd`` over ``hands`` hands: Φ(μ √H / σ) (the game as the sign of the sum of
    H independent hand margins; see the docs for the assumptions)."""
    if sd <= 0:
        return 1.0 if mu > 0 else 0.0 if mu < 0 else 0.5
    return _norm_cdf(mu * math.sqrt(hands) / sd)


# -- 4. clairvoyance ----------------------------------------------------------------------

def skill_level(le: float, re: float) -> float:
    """van der Genugten & Borm's relative skill: LE / (LE + RE), LE = best - beginner
    (learning effect), RE = clairvoyant - best (random effect)."""
    tot = le + re
    return le / tot if tot != 0 else float("nan")


# -- bootstrap ----------------------------------------------------------------------------

def percentile_interval(samples, alpha: float = 0.05):
    """Percentile interval; NaN replicates are dropped, infinite ones (e.g. "no match length
    reaches 95%") are kept, so an interval can run to infinity."""
    s = np.asarray([v for v in samples if v is not None and not np.isnan(v)], dtype=np.float64)
    if s.size == 0:
        return float("nan"), float("nan")
    lo, hi = np.quantile(s, [alpha / 2, 1 - alpha / 2], method="nearest")
    return float(lo), float(hi)
