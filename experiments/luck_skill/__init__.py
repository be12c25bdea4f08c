"""How much of a rummy variant's outcome is luck, how much skill (``docs/luck_skill.md``).

    from experiments.luck_skill import LuckSkillConfig, run_study
    cfg = LuckSkillConfig.quick(variants=["mountain", "gin"], seed=0, workers=2)
    result = run_study(cfg, "runs/luck_skill", report="docs/luck_skill_report.md",
                       data_dir="docs/luck_skill", command="mountain-rummy luck-skill --quick")

Parts: :mod:`.estimators` (pure statistics, unit-tested on synthetic games),
:mod:`.clairvoyant` (the ``clairvoyant`` search agent that sees the hidden cards),
:mod:`.runner` (duplicate deals, self-play and full games; resumable JSONL, workers),
:mod:`.analysis` (bootstrap over deals), :mod:`.report` (markdown, CSV, PNG) and
:mod:`.aivat` (the chance correction of recorded hands, ``LuckSkillConfig.aivat``).
"""

from __future__ import annotations

from pathlib import Path

from .analysis import VariantStats, analyse
from .runner import (
    DEFAULT_LADDER, LuckSkillConfig, agent_supported, collect, stored_rows, variant_available,
)

SHIPPED_PPO = "ppo:policy=mountain"

__all__ = ["DEFAULT_LADDER", "LuckSkillConfig", "VariantStats", "analyse", "collect",
           "probe_agents", "run_study", "variant_available", "agent_supported"]


def _maybe_ppo(ladder: list[str]) -> list[str]:
    """Add the shipped PPO policy (``ppo:policy=mountain``) to a ladder without a ``ppo``
    agent when it loads (it needs torch); variants it cannot play leave it out, as for any
    agent (:func:`agent_supported`)."""
    if any(a.startswith("ppo") for a in ladder):
        return ladder
    try:
        from agents import make_agent

        make_agent(SHIPPED_PPO)
        return ladder + [SHIPPED_PPO]
    except Exception:  # noqa: BLE001 - no usable PPO agent: leave it out
        return ladder


def probe_agents(cfg, variant, options, clair):
    """Which agents can play ``variant``: (good, {bad: reason}, reason the variant cannot be
    measured or "")."""
    specs = list(dict.fromkeys(list(cfg.ladder) + list(cfg.self_agents) + list(cfg.game_agents)
                               + ([clair[0]] if clair else [])))
    specs = ["random"] + [x for x in specs if x != "random"]
    good, bad = [], {}
    for spec in specs:
        if "random" in bad:
            bad[spec] = bad["random"]
            continue
        sup, reason = agent_supported(variant, options, spec, cfg.seed)
        (good.append(spec) if sup else bad.__setitem__(spec, reason))
    first = {a: (r.strip().splitlines() or ["?"])[0][:100] for a, r in bad.items()}
    if "random" in bad:
        return good, bad, f"the variant builds but a hand of it cannot be played here ({first['random']})"
    if sum(a in good for a in cfg.ladder) < 2:
        return good, bad, ("fewer than two ladder agents can play it (" +
                           "; ".join(f"`{a}`: {r}" for a, r in first.items()) + ")")
    return good, bad, ""


def _with_chance(cfg, variant, rows, out_dir, progress, log):
    """``rows`` with the chance correction attached (value function ``cfg.aivat``; off when
    empty), when the variant supports it (:mod:`.aivat`)."""
    if not cfg.aivat:
        return rows
    from . import aivat
    from .runner import _variant

    why = aivat.supported(_variant(cfg.variant_of(variant), cfg.options_for(variant), False)[0],
                          cfg.aivat)
    if why:
        log(f"[luck-skill] {variant}: no chance correction ({why})")
        return rows
    return aivat.correct_rows(cfg, variant, rows, out_dir, progress=progress)


def _analysed(cfg, variant, rows, agents, out_dir, progress, log, clair, n_boot) -> VariantStats:
    """The variant's statistics from its rows (chance-corrected when ``cfg.aivat`` asks),
    over the ladder agents in ``agents`` and the clairvoyance match when both of its agents
    are there. Every variant's full games count (the pre-registered full-game share)."""
    rows = _with_chance(cfg, variant, rows, out_dir / variant, progress, log)
    use_clair = clair if clair and clair[0] in agents and clair[1] in agents else None
    st = analyse(variant, rows, [a for a in cfg.ladder if a in agents], clair=use_clair,
                 n_boot=n_boot, seed=cfg.seed)
    st.seats = cfg.seats(variant)
    return st


def run_study(cfg: LuckSkillConfig, out_dir, *, report=None, data_dir=None, command="",
              resume: bool = True, progress: bool = True, n_boot: int = 300,
              add_ppo: bool = True, play: bool = True, log=print) -> dict:
    """Collect the data for every available variant, analyse and (with ``report``) write
    the markdown report plus CSV/PNG into ``data_dir``. ``play=False`` plays nothing and
    analyses the results already in ``out_dir`` (no agent probes). Returns
    ``{"stats": {variant: VariantStats}, "missing": {...}, "unsupported": {...}, "paths": {...}}``."""
    out_dir = Path(out_dir)
    if add_ppo:
        cfg.ladder = _maybe_ppo(list(cfg.ladder))
    stats, missing, unsupported = {}, {}, {}
    clair = cfg.clairvoyance_specs()
    for variant in cfg.variants:
        options = cfg.options_for(variant)
        if not play:
            rows = stored_rows(cfg, variant, out_dir / variant)
            if not rows:
                ok, why = variant_available(cfg.variant_of(variant), options)
                if ok:
                    _, bad, why = probe_agents(cfg, cfg.variant_of(variant), options, clair)
                    unsupported[variant] = bad
                    why = why or f"no results in {out_dir / variant}"
                missing[variant] = why
                continue
            present = {r[x] for r in rows for x in ("a", "b")}
            stats[variant] = _analysed(cfg, variant, rows, present, out_dir, progress, log,
                                       clair, n_boot)
            continue
        ok, why = variant_available(cfg.variant_of(variant), options)
        if not ok:
            missing[variant] = why
            log(f"[luck-skill] {variant}: not available ({why})")
            continue
        good, bad, why = probe_agents(cfg, cfg.variant_of(variant), options, clair)
        unsupported[variant] = bad
        if bad:
            log(f"[luck-skill] {variant}: agents left out: {', '.join(bad)}")
        if why:
            missing[variant] = why
            log(f"[luck-skill] {variant}: {why}")
            continue
        rows = collect(cfg, variant, good, out_dir / variant, resume=resume, progress=progress)
        stats[variant] = _analysed(cfg, variant, rows, good, out_dir, progress, log, clair,
                                   n_boot)
    paths = {}
    if report is not None:
        from .report import write_report

        data_dir = Path(data_dir) if data_dir is not None else Path(report).with_suffix("")
        paths = write_report(stats, missing, unsupported, cfg, report, data_dir,
                             command=command, variants_order=list(cfg.variants))
    return {"stats": stats, "missing": missing, "unsupported": unsupported, "paths": paths}
