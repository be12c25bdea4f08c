"""The luck/skill report: markdown, CSV and PNG from :class:`VariantStats` per variant."""

from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from .analysis import PRIMARY, VariantStats, fmt
from .estimators import percentile_interval

# the variants the claim is compared against (the project's other four)
VARIANTS_COMPARED = ("gin", "german", "crazy", "robbers")


def _title(column: str) -> str:
    """A study column's display name (``Robber's Rummy``; ``german@2``: ``German Rummy at
    2 seats``), or the name itself for an unknown variant."""
    from mountain_rummy_env.registry import VARIANTS

    name, _, seats = column.partition("@")
    title = VARIANTS[name].title if name in VARIANTS else name
    return f"{title} at {seats} seats" if seats else title


def _decides(column: str) -> bool:
    """Whether a column enters the pre-registered decision: each variant at its usual table
    (``german``), not at another size (``german@2``, a secondary like-for-like comparison)."""
    return "@" not in column


def _ci(st: VariantStats, key: str, digits: int = 2) -> str:
    v = st.point.get(key)
    if v is None:
        return "n/a"
    s = fmt(v, digits)
    lo, hi = st.lo.get(key, float("nan")), st.hi.get(key, float("nan"))
    if isinstance(v, float) and math.isinf(v) and not math.isfinite(lo):
        return s                       # no interval worth printing: [∞, ∞]
    if not (math.isnan(lo) and math.isnan(hi)):
        s += f" [{fmt(lo, digits)}, {fmt(hi, digits)}]"
    return s


SUMMARY_ROWS = [
    ("1. deal luck", None, 2),
    ("λ, self-play of {self} (share of a seat's margin variance owed to the deal)", "lambda_self[{self}]", 2),
    ("variance reduction of duplicate play, self-play of {self}", "var_reduction_self[{self}]", 2),
    ("λ pooled over ladder pairings (cards common to both plays)", "lambda_pairs", 2),
    ("variance reduction of duplicate play, ladder pairings", "var_reduction_pairs", 2),
    ("independent hands worth one duplicate deal, ladder pairings", "hands_equiv_pairs", 1),
    ("2. skill spread", None, 2),
    ("skill-chain length per hand, p ≥ 0.60", "chain60_hand", 0),
    ("skill-chain length per hand, p ≥ 0.75", "chain75_hand", 0),
    ("skill-chain length per full game, p ≥ 0.60", "chain60_game", 0),
    ("skill-chain length per full game, p ≥ 0.75", "chain75_game", 0),
    ("best − random, mean hand-point margin per hand", "best_minus_random", 1),
    ("3. true-score decomposition", None, 2),
    ("skill share per hand (margins)", "skill_share_hand_margin", 3),
    ("skill share per hand (win/loss)", "skill_share_hand_win", 3),
    ("n* hands (skill = luck), margins", "n_star_margin", 1),
    ("n* hands (skill = luck), win/loss", "n_star_win", 1),
    ("mean hands per full game", "hands_per_game", 1),
    ("skill share per full game (margins)", "skill_share_game_margin", 3),
    ("n* full games, margins", "n_star_games_margin", 2),
    ("skill share per hand without random (margins)", "skill_share_hand_margin_norandom", 3),
    ("n* hands without random, margins", "n_star_margin_norandom", 1),
    ("skill share per full game without random (margins)", "skill_share_game_margin_norandom", 3),
    ("4. clairvoyance", None, 2),
    ("LE = best − random (margin per hand)", "LE[random]", 1),
    ("RE = clairvoyant − best (margin per hand)", "RE[random]", 1),
    ("relative skill LE/(LE+RE), beginner random", "skill_level[random]", 3),
    ("relative skill LE/(LE+RE), beginner greedy", "skill_level[greedy]", 3),
]


# shown when some variant was chance-corrected (``--aivat``); secondary, not the primary statistic
CHANCE_ROWS = [
    ("5. chance correction (secondary)", None, 2),
    ("variance reduction factor of the chance correction, var raw / var corrected "
     "duplicate margin per deal", "aivat_factor", 2),
    ("n* hands without random, margins, chance-corrected", "n_star_margin_norandom_aivat", 1),
    ("skill share per hand without random (margins), chance-corrected",
     "skill_share_hand_margin_norandom_aivat", 3),
]


def summary_lines(stats: dict, missing: dict, self_agents) -> list[tuple[str, str, dict]]:
    """(label, key, {variant: text}) rows of the summary table."""
    out = []
    corrected = any("aivat_factor" in st.point for st in stats.values())
    for label, key, digits in SUMMARY_ROWS + (CHANCE_ROWS if corrected else []):
        if key is None:
            out.append((f"**{label}**", None, {}))
            continue
        specs = self_agents if "{self}" in key else [None]
        for s in specs:
            k = key.format(self=s) if s else key
            lab = label.format(self=f"`{s}`") if s else label
            cells = {}
            for v in list(stats) + list(missing):
                if v in missing:
                    cells[v] = "not available"
                else:
                    cells[v] = _ci(stats[v], k, digits)
            out.append((lab, k, cells))
    return out


def write_report(stats: dict[str, VariantStats], missing: dict[str, str],
                 unsupported: dict[str, dict], cfg, out_md, data_dir, *, command: str,
                 variants_order) -> dict:
    data_dir = Path(data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    out_md = Path(out_md)
    cols = [v for v in variants_order]
    others = ", ".join(_title(c) for c in cols if c != "mountain")
    lines = [f"# Luck and skill in Mountain Rummy{' vs ' + others if others else ''}",
             "", "Made by:", "", "```", *command.splitlines(), "```", "",
             "Methods, formulas and assumptions: [luck_skill.md](luck_skill.md). "
             "Values are point estimates with 95% percentile-bootstrap intervals over deals "
             "in brackets. Data and plots: "
             f"[{data_dir.name}/]({data_dir.name}/).", ""]
    for v, why in missing.items():
        lines.append(f"**{v}: not measured** — {why}; its column is empty.")
        lines.append("")
    for v, bad in unsupported.items():
        if bad and v not in missing:
            lines.append(f"**{v}: agents that cannot play this variant (left out):** " +
                         "; ".join(f"`{a}` ({why.strip().splitlines()[0][:120] if why.strip() else '?'})"
                                   for a, why in bad.items()))
            lines.append("")
    lines += ["## The answer (pre-registered)", "", headline(stats, missing), "",
              *headline_table(stats, missing, cols), ""]
    lines += ["## Secondary statistics", "", "| statistic | " + " | ".join(cols) + " |",
              "|---|" + "---|" * len(cols)]
    for label, key, cells in summary_lines(stats, missing, cfg.self_agents):
        lines.append(f"| {label} | " + " | ".join(cells.get(c, "") for c in cols) + " |")
    lines.append("")
    lines += ["## What the secondary statistics say", "", conclusion(stats, missing, cfg), ""]
    lines += anchor_lines(stats)
    # per variant details
    for v, st in stats.items():
        lines += [f"## {v}: details", ""]
        lines.append("Sample sizes (deals, each played once per seat rotation): " +
                     ", ".join(f"{k} {n}" for k, n in st.n_deals.items()) +
                     f"; full games: {st.n_games}.")
        lines.append("")
        if st.half_width:
            lines.append(f"Precision reached (95% half-width of a pairing's mean result per "
                         f"deal; single-hand SD of results {st.hand_sd:.1f}): " +
                         ", ".join(f"{k} ±{h:.1f} ({h / st.hand_sd:.3f} SD)"
                                   for k, h in st.half_width.items()) + ".")
            lines.append("")
        if st.failed:
            lines.append(f"**{len(st.failed)} job(s) failed and are excluded** (a rerun with "
                         "`--no-resume` retries them): " +
                         "; ".join(f"{k} {a} vs {b} deal {d}: {e[:100]}" for k, a, b, d, e in st.failed[:10]))
            lines.append("")
        lines += ["### Ratings (duplicate-deal Bradley–Terry, Elo scale)", "",
                  "| agent | rating |", "|---|---|"]
        for a in reversed(st.ladder):
            lines.append(f"| `{a}` | {_ci(st, f'rating[{a}]', 0)} |")
        lines.append("")
        for key, title in (("p_hand", "P(row beats column) in a single hand (ties half)"),
                           ("p_deal", "P(row wins the duplicate deal)"),
                           ("p_game", "P(row wins a full game), derived from per-hand statistics")):
            if not any(k.startswith(key + "[") for k in st.point):
                continue
            lines += [f"### {title}", "", "| | " + " | ".join(f"`{b}`" for b in st.ladder) + " |",
                      "|---|" + "---|" * len(st.ladder)]
            for a in reversed(st.ladder):
                cells = []
                for b in st.ladder:
                    cells.append("—" if a == b else _ci(st, f"{key}[{a}|{b}]", 2))
                lines.append(f"| `{a}` | " + " | ".join(cells) + " |")
            lines.append("")
        adj = [k for k in st.point if k.startswith("hands_for_majority[")]
        if adj:
            lines += ["### Match length for the better of two adjacent agents to win a majority 95% of the time", "",
                      "| pairing | hands | full games |", "|---|---|---|"]
            for k in adj:
                pair = k[len("hands_for_majority["):-1]
                g = f"games_for_majority[{pair}]"
                lines.append(f"| {pair} | {_ci(st, k, 0)} | {_ci(st, g, 0) if g in st.point else 'n/a'} |")
            lines.append("")
    md = "\n".join(lines) + "\n"
    out_md.write_text(md)
    paths = {"report": out_md}
    paths.update(write_csv(stats, data_dir))
    try:
        paths.update(plot(stats, data_dir))
    except ImportError:  # matplotlib optional
        pass
    return paths


# Duersch, Lambrecht and Oechssler's skill figures from Board Game Arena Elo ratings, as
# quoted in the project's study plan (docs/luck_skill.md, "Published figures").
PUBLISHED_SKILL = (("Rummy", 0.31), ("Gin Rummy", 0.19), ("backgammon", 0.23), ("chess", 0.76))


def anchor_lines(stats: dict) -> list[str]:
    """The published figures for other games beside this study's skill shares per full
    game (competent agents; whole ladder), with what differs in method."""
    lines = ["## Beside published figures for other games", "",
             "| game | skill figure | what it is |", "|---|---|---|"]
    for v, st in stats.items():
        for key, what in (("skill_share_game_margin_norandom",
                           "skill share of one full game, competent agents (this study)"),
                          ("skill_share_game_margin",
                           "skill share of one full game, whole ladder (this study)")):
            if key in st.point:
                lines.append(f"| {v} | {_ci(st, key, 3)} | {what} |")
    for game, value in PUBLISHED_SKILL:
        lines.append(f"| {game} | {value:.2f} | spread of human Elo ratings on Board Game "
                     "Arena, relative to chess (Duersch, Lambrecht, Oechssler) |")
    lines += ["", "The two kinds of figure answer different questions: the published ones "
              "how far apart a population of human players ends up over many games, ours how "
              "much of one full game's result a fixed ladder of agents decides rather than "
              "the cards. Neither converts into the other; they are side by side to place "
              "the variants, not to rank them on one scale (docs/luck_skill.md).", ""]
    return lines


def write_csv(stats, data_dir) -> dict:
    p = Path(data_dir) / "summary.csv"
    with p.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["variant", "statistic", "value", "lo", "hi"])
        for v, st in stats.items():
            for k, val in st.point.items():
                w.writerow([v, k, _num(val), _num(st.lo.get(k)), _num(st.hi.get(k))])
    return {"summary_csv": p}


def _num(x):
    if x is None:
        return ""
    x = float(x)
    return "inf" if math.isinf(x) else "" if math.isnan(x) else f"{x:.6g}"


def plot(stats, data_dir) -> dict:
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    out = {}
    n = len(stats)
    fig = Figure(figsize=(6 * max(n, 1), 4))
    axes = fig.subplots(1, max(n, 1), squeeze=False)
    for ax, (v, st) in zip(axes[0], stats.items()):
        r = np.array([st.point[f"rating[{a}]"] for a in st.ladder])
        lo = np.array([st.lo[f"rating[{a}]"] for a in st.ladder])
        hi = np.array([st.hi[f"rating[{a}]"] for a in st.ladder])
        ax.errorbar(r, range(len(r)), xerr=[np.maximum(r - lo, 0), np.maximum(hi - r, 0)],
                    fmt="o", capsize=4)
        ax.set_yticks(range(len(r)), st.ladder)
        ax.set_xlabel("Bradley–Terry rating (Elo scale), 95% CI")
        ax.set_title(f"{v}: ladder")
    fig.tight_layout()
    p = Path(data_dir) / "ratings.png"
    fig.savefig(p, dpi=100)
    out["ratings_png"] = p

    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    hands = np.logspace(0, 4, 300)
    for v, st in stats.items():
        ns = st.point.get(PRIMARY)
        if ns is None or np.isnan(ns):
            continue
        # n* infinite (no measurable spread among the competent agents): flat at 0, dashed
        label = (f"{_title(v)}: n* = {ns:.1f} hands" if np.isfinite(ns) else
                 f"{_title(v)}: n* = ∞ (competent agents alike)")
        line, = ax.plot(hands, hands / (hands + ns), label=label,
                        ls="-" if np.isfinite(ns) else "--")
        lo, hi = st.lo.get(PRIMARY), st.hi.get(PRIMARY)
        if lo is not None and not (np.isnan(lo) or np.isnan(hi)):
            ax.fill_between(hands, hands / (hands + hi), hands / (hands + lo),
                            color=line.get_color(), alpha=0.15)
        H = st.point.get("hands_per_game")
        if H is not None and np.isfinite(H):
            ax.axvline(H, color=line.get_color(), lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("hands averaged (dotted: mean hands per full game)")
    ax.set_ylabel("skill share of the variance of the mean result")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title("Competent agents (pre-registered n*): skill share n / (n + n*), 95% CI")
    fig.tight_layout()
    p = Path(data_dir) / "skill_share.png"
    fig.savefig(p, dpi=100)
    out["skill_share_png"] = p

    for v, st in stats.items():
        k = len(st.ladder)
        m = np.full((k, k), np.nan)
        for i, a in enumerate(st.ladder):
            for j, b in enumerate(st.ladder):
                if i != j:
                    m[i, j] = st.point.get(f"p_hand[{a}|{b}]", np.nan)
        fig = Figure(figsize=(1.3 * k + 2, 1.1 * k + 1.5))
        ax = fig.subplots()
        im = ax.imshow(m, vmin=0, vmax=1, cmap="RdBu")
        for i in range(k):
            for j in range(k):
                if np.isfinite(m[i, j]):
                    ax.text(j, i, f"{m[i, j]:.2f}", ha="center", va="center", fontsize=8)
        ax.set_xticks(range(k), st.ladder, rotation=30, ha="right", fontsize=8)
        ax.set_yticks(range(k), st.ladder, fontsize=8)
        ax.set_title(f"{v}: P(row beats column), single hand")
        fig.colorbar(im, ax=ax)
        fig.tight_layout()
        p = Path(data_dir) / f"winrate_{v}.png"
        fig.savefig(p, dpi=100)
        out[f"winrate_{v}_png"] = p
    return out


def conclusion(stats: dict, missing: dict, cfg) -> str:
    """A plain-language reading of the numbers (generated, so it always matches them)."""
    parts = []
    for v, st in stats.items():
        p = st.point
        share = p.get("skill_share_hand_margin")
        nsg = p.get("n_star_games_margin")
        lam = p.get("lambda_pairs")
        sl = p.get("skill_level[random]")
        txt = [f"**{v}.**"]
        if lam is not None:
            txt.append(f"The cards dealt explain λ ≈ {_ci(st, 'lambda_pairs')} of the variance "
                       "of a single hand's margin when two different agents meet; duplicate "
                       f"play removes that part (one duplicate deal is worth ≈ "
                       f"{fmt(p.get('hands_equiv_pairs'), 1)} independent hands).")
        if share is not None:
            txt.append(f"Over the ladder, skill accounts for {_ci(st, 'skill_share_hand_margin', 3)} "
                       f"of the variance of one hand's margin; skill and luck weigh equally after "
                       f"n* ≈ {_ci(st, 'n_star_margin', 1)} hands")
            if nsg is not None and np.isfinite(p.get("hands_per_game", float("nan"))):
                txt[-1] += (f" (≈ {_ci(st, 'n_star_games_margin', 2)} full games of "
                            f"{fmt(p['hands_per_game'], 1)} hands; skill share of one full game "
                            f"{_ci(st, 'skill_share_game_margin', 3)})")
            txt[-1] += "."
            nr = p.get("skill_share_hand_margin_norandom")
            if nr is not None:
                txt.append(f"Without the random agent (competent players only) the per-hand "
                           f"skill share is {_ci(st, 'skill_share_hand_margin_norandom', 3)} "
                           f"(n* ≈ {_ci(st, 'n_star_margin_norandom', 1)} hands"
                           + (f"; per full game {_ci(st, 'skill_share_game_margin_norandom', 3)}"
                              if "skill_share_game_margin_norandom" in p else "") + ").")
        if p.get("chain60_hand") is not None:
            steps = "step" if p["chain60_hand"] == 1 else "steps"
            txt.append(f"The ladder has a skill chain of {fmt(p['chain60_hand'], 0)} {steps} at "
                       f"60% per hand ({fmt(p.get('chain75_hand'), 0)} at 75%)"
                       + (f", {fmt(p['chain60_game'], 0)} / {fmt(p.get('chain75_game'), 0)} per full game"
                          if p.get("chain60_game") is not None else "") + ".")
        if sl is not None:
            txt.append(f"A clairvoyant search gains RE ≈ {_ci(st, 'RE[random]', 1)} points a hand "
                       f"over the same search, against LE ≈ {_ci(st, 'LE[random]', 1)} from random to "
                       f"the search: relative skill LE/(LE+RE) ≈ {_ci(st, 'skill_level[random]', 3)}.")
        top = st.ladder[-1] if st.ladder else None
        if clair_spec := (st.clair[1] if st.clair else None):
            if top and top != clair_spec:
                txt.append(f"Note: the top-rated agent here is `{top}`, not the clairvoyant's "
                           f"twin `{clair_spec}`, so LE above understates best − beginner; "
                           "LE/(LE+RE) with a beginner that beats the search is meaningless "
                           "(negative).")
        parts.append(" ".join(txt))
    parts.append("Caveats: the numbers are relative to this agent ladder (a stronger top agent "
                 "or a weaker bottom one widens the skill spread); a `--quick` run has few "
                 "deals and wide intervals.")
    return "\n\n".join(parts)


def headline_table(stats: dict, missing: dict, order) -> list[str]:
    """The headline table: per variant the pre-registered primary statistic (n* of the
    competent ladder) with its interval, the skill shares it implies per hand and per full
    game, and the comparison with Mountain that decides the claim."""
    lines = ["| variant | seats | competent ladder (weakest first) | deals per pairing | "
             "n* hands [95% CI] | skill share per hand | hands per full game | "
             "skill share of one full game | n*_Mountain / n*_variant [95% CI] | Mountain is |",
             "|---|---:|---|---|---|---|---|---|---|---|"]
    for v in order:
        if v in missing:
            lines.append(f"| {_title(v)} | | not measured: {missing[v][:80]} | | | | | | | |")
            continue
        st = stats[v]
        competent = [a for a in st.ladder if a != "random"]
        deals = [n for k, n in st.n_deals.items()
                 if " vs " in k and set(k.split(" vs ")) <= set(competent)]
        span = (f"{min(deals)}" if min(deals) == max(deals) else f"{min(deals)}–{max(deals)}"
                ) if deals else "n/a"
        if v == "mountain" or "mountain" not in stats:
            ratio = verdict = "—"
        else:
            r, lo, hi, verdict = compare_primary(stats["mountain"], st)
            ratio = f"{fmt(r, 2)} [{fmt(lo, 2)}, {fmt(hi, 2)}]"
            verdict = verdict if _decides(v) else f"{verdict} (secondary)"
        lines.append(f"| {_title(v)} | {st.seats or ''} | " + ", ".join(f"`{a}`" for a in competent)
                     + f" | {span} | {_ci(st, PRIMARY, 1)} | "
                     f"{_ci(st, 'skill_share_hand_margin_norandom', 3)} | "
                     f"{_ci(st, 'hands_per_game', 1)} | "
                     f"{_ci(st, 'skill_share_game_margin_norandom', 3)} | {ratio} | {verdict} |")
    lines += ["", "n*: the hands after which the variance of a player's mean result owed to "
              "skill equals the variance owed to luck, among the competent agents (`random` "
              "left out); fewer hands means more skill. A seat's result is its hand points "
              "minus the mean of the other seats'. The skill shares are 1 / (1 + n*) for one "
              "hand and H / (H + n*) for a full game of H hands. The last two columns apply "
              "the pre-registered decision rule (docs/luck_skill.md); a variant at another "
              "table size than its usual one is a secondary, like-for-like comparison and "
              "does not enter the answer."]
    return lines


def _ratio(a: float, b: float) -> float:
    """a / b for n* values, which may be infinite (no measurable skill spread)."""
    if not (np.isfinite(a) or np.isfinite(b)) or np.isnan(a) or np.isnan(b) or b == 0:
        return float("nan")
    return 0.0 if np.isinf(b) else a / b


def compare_primary(mountain: VariantStats, other: VariantStats) -> tuple[float, float, float, str]:
    """(ratio, lo, hi, verdict) of n*_Mountain / n*_other, the pre-registered comparison:
    the 95% interval pairs the variants' independent bootstrap replicates. Below 1: Mountain
    needs fewer hands for skill to outweigh luck, so it is the more skill-based game."""
    a, b = mountain.point.get(PRIMARY, float("nan")), other.point.get(PRIMARY, float("nan"))
    ratio = _ratio(a, b)
    n = min(mountain.primary_boot.size, other.primary_boot.size)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = mountain.primary_boot[:n] / other.primary_boot[:n]
    lo, hi = percentile_interval(reps) if n else (float("nan"), float("nan"))
    if np.isnan(lo) or np.isnan(hi):
        verdict = "not measured (no interval)"
    elif hi < 1:
        verdict = "more skill-based"
    elif lo > 1:
        verdict = "less skill-based"
    else:
        verdict = "not distinguishable at this precision"
    return ratio, lo, hi, verdict


def headline(stats: dict, missing: dict) -> str:
    """The one answer to "is Mountain Rummy more skill-based than the other variants?",
    from the pre-registered statistic alone (docs/luck_skill.md); every other figure of
    the report is secondary."""
    if "mountain" not in stats:
        return "Mountain Rummy was not measured, so the claim cannot be tested by this run."
    others = [v for v in stats if v != "mountain" and _decides(v)]
    unmeasured = sorted(set(VARIANTS_COMPARED) - set(others))
    if not others:
        return ("Only Mountain Rummy was measured: the claim is comparative, so this run "
                "cannot test it.")
    m = stats["mountain"]
    parts, verdicts = [], []
    for v in others:
        ratio, lo, hi, verdict = compare_primary(m, stats[v])
        verdicts.append(verdict)
        parts.append(f"against {_title(v)}, n*_Mountain / n*_{v} = {fmt(ratio, 2)} "
                     f"[{fmt(lo, 2)}, {fmt(hi, 2)}]: Mountain Rummy is {verdict}")
    if all(v == "more skill-based" for v in verdicts):
        answer = "supports the claim for every variant measured"
    elif any(v == "less skill-based" for v in verdicts):
        answer = "contradicts the claim"
    else:
        answer = "does not settle the claim"
    text = (f"Among competent agents, skill and luck weigh equally in a player's mean margin "
            f"after n* = {_ci(m, PRIMARY, 1)} hands of Mountain Rummy; "
            + "; ".join(parts) + f". The pre-registered statistic {answer}.")
    flat = [v for v in others if np.isinf(stats[v].point.get(PRIMARY, float("nan")))]
    if flat:
        text += (" Caveat: in " + ", ".join(
            f"{_title(v)} (whole-ladder skill share per hand "
            f"{_ci(stats[v], 'skill_share_hand_margin', 3)})" for v in flat)
            + " the competent agents' spread of mean results is too small to measure beside "
              "a hand's spread (n* is infinite) while `random` is far below them: there the "
              "statistic says the ladder's competent players play much alike, not that the "
              "game holds no skill, so that comparison is weaker evidence than the others.")
    if unmeasured:
        text += (" Not measured in this run: " + ", ".join(
            f"{_title(u)} ({missing[u][:80]})" if u in missing else _title(u) for u in unmeasured)
            + "; the claim's \"other rummy games\" are only partly covered.")
    return text
