"""``python -m benchmarks.scaling``: tournament throughput locally and on Ray, and the projected
time of the five-variant luck/skill study on N machines (docs/scaling.md).

1. The same tournament (fresh seeds, every deal played once per seat order) is played four
   ways: one local process, ``--workers`` local processes, and Ray with 1 and with
   ``--workers`` CPUs (a local Ray instance; its start-up is not timed). The table gives deals
   and hands per second and the speed-up over one process, so Ray's overhead and the
   parallel efficiency on this machine are read off one run.
2. ``--project``: the CPU time of the study's jobs, measured per variant and pairing on
   ``--samples`` jobs each (one process, CPU seconds, so a busy machine does not inflate
   it), times the number of jobs of the study
   (:class:`~experiments.luck_skill.LuckSkillConfig`'s sizes, each variant at its study table),
   then divided over N machines of ``--cores`` cores at the parallel efficiency measured in 1.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from pathlib import Path

STUDY_TABLES = {"mountain": {}, "gin": {}, "german": {"num_players": 4},
                "crazy": {"num_players": 4}, "robbers": {"num_players": 4}}
MACHINES = (1, 2, 4, 8, 16, 32)
CEILING_DEALS = 4000     # a pairing's deal budget under the study's precision rule


def _play(cfg) -> tuple[list[dict], float]:
    from experiments.tournament import run_tournament

    with tempfile.TemporaryDirectory() as out:
        start = time.perf_counter()
        rows = run_tournament(cfg, out, progress=False)
        return rows, time.perf_counter() - start


def time_tournament(*, variant: str, agents: list[str], deals: int, seed: int, workers: int,
                    ray_cpus: int | None = None) -> dict:
    """Play one tournament into a throw-away folder: its wall time, deals and hands, in the
    steady state. Start-up is timed apart (``startup``): for Ray, starting the instance and
    every worker's first deals (imports, the compiled kernels from the cache, the agents'
    warm-up hand); local workers fork from this process, which is warmed before any way."""
    from experiments.tournament import TournamentConfig

    def config(n, first):
        return TournamentConfig(agents=agents, deals=n, slow_deals=None, seed=first,
                                workers=ray_cpus or workers, variant=variant,
                                ray="local" if ray_cpus else None)

    startup = 0.0
    if ray_cpus:
        from experiments.ray_runner import connect

        start = time.perf_counter()
        connect("local", num_cpus=ray_cpus)
        _play(config(2 * ray_cpus, seed + 10**6))
        startup = time.perf_counter() - start
    rows, seconds = _play(config(deals, seed))
    if ray_cpus:
        import ray

        ray.shutdown()
    hands = sum(len(r["hands"]) for r in rows)
    return {"deals": len(rows), "hands": hands, "seconds": seconds, "startup": startup}


def throughput_table(args) -> tuple[str, float]:
    """The four ways of section 1 as a markdown table; returns it and the efficiency of
    ``--workers`` Ray CPUs (speed-up / CPUs)."""
    kw = dict(variant=args.variant, agents=args.agents, deals=args.deals, seed=args.seed)
    ways = [("local, 1 process", dict(workers=1)),
            (f"local, {args.workers} processes", dict(workers=args.workers)),
            ("Ray, 1 CPU", dict(workers=1, ray_cpus=1)),
            (f"Ray, {args.workers} CPUs", dict(workers=args.workers, ray_cpus=args.workers))]
    time_tournament(**{**kw, "deals": 1}, workers=1)       # warm this process
    results = {}
    for name, way in ways:
        results[name] = r = time_tournament(**kw, **way)
        print(f"  {name}: {r['deals']} deals in {r['seconds']:.1f} s", flush=True)
    base = results["local, 1 process"]["seconds"]
    lines = [f"Tournament: {args.variant}, {' vs '.join(args.agents)}, {args.deals} deals per "
             f"pair from seed {args.seed}", "",
             "| way | deals | hands | seconds | deals/s | hands/s | speed-up | start-up s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        lines.append(f"| {name} | {r['deals']} | {r['hands']} | {r['seconds']:.1f} | "
                     f"{r['deals'] / r['seconds']:.2f} | {r['hands'] / r['seconds']:.2f} | "
                     f"{base / r['seconds']:.2f}x | {r['startup']:.1f} |")
    efficiency = base / results[f"Ray, {args.workers} CPUs"]["seconds"] / args.workers
    return "\n".join(lines), efficiency


def study_cpu_seconds(args) -> tuple[str, float, list[str]]:
    """Section 2's per-variant table (CPU hours of the study's jobs) and their total."""
    from experiments.luck_skill import LuckSkillConfig, probe_agents
    from experiments.luck_skill.runner import run_job_recorded

    cfg = LuckSkillConfig(variants=list(STUDY_TABLES), variant_options=STUDY_TABLES,
                          seed=args.seed)
    lines = ["| variant | seats | jobs | sampled | CPU hours | CPU hours at the ceiling "
             "| agents left out |", "|---|---:|---:|---:|---:|---:|---|"]
    total, ceiling_total, notes = 0.0, 0.0, []
    for variant in STUDY_TABLES:
        options = cfg.options_for(variant)
        good, bad, _ = probe_agents(cfg, variant, options, cfg.clairvoyance_specs())
        jobs = cfg.jobs(variant, good)
        by_kind = defaultdict(list)
        for job in jobs:
            by_kind[job[:3]].append(job)
        seconds, ceiling, sampled = 0.0, 0.0, 0
        for kind, group in by_kind.items():
            times = []
            for job in group[:args.samples]:
                start = time.process_time()        # CPU time: the machine may be shared
                row = run_job_recorded((variant, options, args.seed, job))
                times.append(time.process_time() - start)
                if "error" in row:
                    notes.append(f"{variant} {kind}: {row['error']}")
            sampled += len(times)
            mean = sum(times) / len(times)
            seconds += mean * len(group)
            ceiling += mean * (CEILING_DEALS if kind[0] == "pair" else len(group))
        left_out = sorted(bad)
        lines.append(f"| {variant} | {cfg.seats(variant)} | {len(jobs)} | {sampled} | "
                     f"{seconds / 3600:.1f} | {ceiling / 3600:.0f} | "
                     f"{', '.join(left_out) or '-'} |")
        print(f"  {variant}: {len(jobs)} jobs, {seconds / 3600:.1f} CPU hours", flush=True)
        total += seconds
        ceiling_total += ceiling
    lines.append(f"| all | | | | {total / 3600:.1f} | {ceiling_total / 3600:.0f} | |")
    return "\n".join(lines), total, ceiling_total, notes


def projection_table(total_seconds: float, ceiling_seconds: float, cores: int,
                     efficiency: float) -> str:
    lines = [f"Machines of {cores} cores at the measured parallel efficiency {efficiency:.2f}:",
             "", "| machines | CPUs | hours, the study's sizes | hours at the ceiling |",
             "|---:|---:|---:|---:|"]
    for n in MACHINES:
        cpus = n * cores * efficiency
        lines.append(f"| {n} | {n * cores} | {total_seconds / cpus / 3600:.1f} | "
                     f"{ceiling_seconds / cpus / 3600:.0f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--variant", default="mountain", help="tournament variant (default: mountain)")
    ap.add_argument("--agents", nargs=2, default=["rules", "search:budget=16"], metavar="SPEC",
                    help="the pair that plays (default: rules search:budget=16)")
    ap.add_argument("--deals", type=int, default=40, help="deals (default: 40)")
    ap.add_argument("--seed", type=int, default=900000, help="first deal seed (default: 900000)")
    ap.add_argument("--workers", type=int, default=2, help="processes / Ray CPUs (default: 2)")
    ap.add_argument("--project", action="store_true",
                    help="also measure the luck/skill study's jobs and project its time")
    ap.add_argument("--samples", type=int, default=1,
                    help="jobs timed per variant and pairing for --project (default: 1)")
    ap.add_argument("--cores", type=int, default=2, help="cores per machine for --project (default: 2)")
    ap.add_argument("--markdown", metavar="FILE", help="also write the tables to FILE")
    args = ap.parse_args(argv)
    if args.deals < 1 or args.workers < 1 or args.samples < 1 or args.cores < 1:
        ap.error("--deals, --workers, --samples and --cores must be at least 1")
    print("throughput:", flush=True)
    text, efficiency = throughput_table(args)
    if args.project:
        print("the study's jobs:", flush=True)
        study, total, ceiling, notes = study_cpu_seconds(args)
        text += ("\n\nThe luck/skill study, CPU time per variant: at LuckSkillConfig's sizes, "
                 f"and at the ceiling of {CEILING_DEALS:,} deals per pairing that the "
                 "pre-registered precision rule allows (docs/luck_skill.md):\n\n")
        text += study + "\n\n" + projection_table(total, ceiling, args.cores, efficiency)
        text += "".join(f"\n- failed while timing: {n}" for n in notes)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
        print(json.dumps({"written": args.markdown}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
