"""Round-robin tournaments on duplicate deals, in parallel, resumable, self-describing.

Every pair of agents plays every deal twice: the deal's seed fixes the deck order and the
dealer, and the two hands use the same deck and dealer with the seats swapped, so the luck
of the cards cancels out of the pair's result (duplicate play).

A run lives in one folder. ``manifest.json`` states its settings (variant and rules
options, agents, schedule, seed, deals per pair) and each session that played into it
(date, command, package version, git commit); it is written before the first deal. Each
finished deal is one JSON line appended to ``results.jsonl``; a rerun with ``resume`` plays
only the deals not there yet. A folder that holds another run (other settings, or results
without a manifest) is refused, so one run never mixes into or overwrites another.

The report states the settings at its top and gives per pair the mean hand-point margin
with a 95% bootstrap interval over deals (marked rough below ``MIN_BOOTSTRAP_ITEMS`` deals)
and the deal win rate with a 95% Wilson interval; Bradley-Terry ratings with bootstrap
intervals, and for each agent whether its place above the next one is supported.
"""

from __future__ import annotations

import csv
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import shlex
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from mountain_rummy_env import Game
from mountain_rummy_env.registry import DEFAULT_VARIANT, make_variant

from .play import play_hand
from .provenance import PACKAGE as PACKAGE_NAME, git_commit, now, package_version
from .stats import MIN_BOOTSTRAP_ITEMS, bootstrap_ci, rating_intervals, wilson_interval

DEFAULT_AGENTS = ("random", "greedy", "rules", "search:budget=60")
SCHEDULES = {
    "round-robin": "every agent plays every other agent, n(n-1)/2 pairs; the ratings rest "
                   "on every pair",
    "ladder": "each agent plays only the next one in the agent list, n-1 pairs, e.g. a "
              "ladder from weakest to strongest; cheaper, but agents two rungs apart meet "
              "only through the ratings",
}
RUNS_ROOT = Path("runs/tournament")
MANIFEST = "manifest.json"
MANIFEST_FORMAT = "mountain-rummy-tournament/1"
RESULTS = "results.jsonl"
REPORT_FILES = ("report.md", "pairs.csv", "ratings.csv", "ratings.png")
# What makes two runs the same run; deal counts may grow (resuming with more deals adds
# them), so they are not part of it.
IDENTITY = ("variant", "variant_config", "agents", "schedule", "seed")


def variant_key(variant) -> str:
    """The ``variant`` field of a result row: the variant's name and its full options."""
    return f"{variant.name}:{json.dumps(asdict(variant.config), sort_keys=True)}"


@dataclass
class TournamentConfig:
    agents: list[str] = field(default_factory=lambda: list(DEFAULT_AGENTS))
    deals: int = 60
    slow_deals: int | None = 8           # deals for pairs that include a ``search`` agent
    seed: int = 0
    workers: int = 2
    variant: str = DEFAULT_VARIANT
    variant_options: dict = field(default_factory=dict)
    schedule: str = "round-robin"        # see SCHEDULES

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {tuple(SCHEDULES)}, got {self.schedule!r}")

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

    def settings(self) -> dict:
        """What the manifest records as this run's settings (``IDENTITY`` plus deal counts);
        ``variant_config`` is every rules option, defaults included."""
        return {"variant": self.variant, "variant_options": dict(self.variant_options),
                "variant_config": asdict(make_variant(self.variant, **self.variant_options).config),
                "agents": list(self.agents), "schedule": self.schedule, "seed": self.seed,
                "deals": self.deals, "search_deals": self.deals_for("search", "search")}

    def default_out(self) -> Path:
        """``runs/tournament/<variant>-<schedule>-<hash of the identity settings>``: the same
        settings find their own folder again (and resume), other settings get another."""
        settings = self.settings()
        identity = json.dumps({k: settings[k] for k in IDENTITY}, sort_keys=True)
        digest = hashlib.sha256(identity.encode()).hexdigest()[:8]
        return RUNS_ROOT / f"{self.variant}-{self.schedule}-{digest}"

    def command(self, out_dir) -> str:
        """The ``mountain-rummy`` command that reproduces this run, every setting spelled out."""
        parts = ["tournament", "--variant", self.variant, "--schedule", self.schedule,
                 "--agents", *self.agents, "--deals", str(self.deals),
                 "--search-deals", str(self.slow_deals or 0), "--seed", str(self.seed),
                 "--workers", str(self.workers), "--out", str(out_dir)]
        if self.variant_options:
            parts += ["--options", json.dumps(self.variant_options, sort_keys=True)]
        return "mountain-rummy " + shlex.join(parts)


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
        variant = make_variant(cfg_dict["variant"], **cfg_dict["variant_options"])
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
    return {"a": a, "b": b, "deal": deal, "variant": variant_key(variant),
            "margin": margin, "outcome": 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0,
            "hands": hands}


def _play_job(args):
    cfg_dict, a, b, deal = args
    return play_deal(cfg_dict, a, b, deal)


# -- the run folder ----------------------------------------------------------------------

class RunFolderError(ValueError):
    """The output folder cannot take this run: it is a file, or it holds another run."""


def read_manifest(out_dir) -> dict | None:
    """The manifest of the run in ``out_dir``, or ``None`` when there is none."""
    path = Path(out_dir) / MANIFEST
    if not path.exists():
        return None
    try:
        manifest = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise RunFolderError(f"{path} is not readable as JSON: {err}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise RunFolderError(f"{path} is not a tournament manifest ({MANIFEST_FORMAT})")
    return manifest


def _pair_deals(cfg: TournamentConfig) -> list[dict]:
    return [{"a": a, "b": b, "deals": cfg.deals_for(a, b)} for a, b in cfg.pairs()]


def _identity_differences(there: dict, now: dict) -> list[str]:
    """How the ``IDENTITY`` settings of two runs differ, e.g. ``"seed 0 there, 3 now"``;
    rules options are compared one by one (and only when the variant is the same)."""
    if there.get("variant") != now["variant"]:
        return [f"variant {there.get('variant')} there, {now['variant']} now"]
    out = []
    for key in IDENTITY:
        old, new = there.get(key), now[key]
        if key == "variant_config":
            old = old or {}
            out += [f"rules option {k} {old.get(k)!r} there, {new.get(k)!r} now"
                    for k in sorted(set(old) | set(new)) if old.get(k) != new.get(k)]
        elif old != new:
            out.append(f"{key} {old} there, {new} now")
    return out


def check_out_dir(cfg: TournamentConfig, out_dir, *, resume: bool) -> dict | None:
    """Check before any play that ``out_dir`` may take the run ``cfg``; returns the
    manifest already there (``None`` for a fresh folder). Raises :class:`RunFolderError`
    when ``out_dir`` is a file, holds results without a manifest, holds a run whose
    ``IDENTITY`` settings differ, or (resuming) one with more deals in some pair."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise RunFolderError(f"{out} is a file; the output must be a folder")
    old = read_manifest(out)
    if old is None:
        found = [name for name in (RESULTS, *REPORT_FILES) if (out / name).exists()]
        if found:
            raise RunFolderError(
                f"{out} holds tournament results ({', '.join(found)}) but no {MANIFEST}, so "
                f"their settings are unknown; choose another output folder or move them away")
        return None
    differ = _identity_differences(old["settings"], cfg.settings())
    if differ:
        raise RunFolderError(f"{out} holds another run ({'; '.join(differ)}); choose another "
                             f"output folder (by default each run's settings get their own)")
    if resume:
        have = {(p["a"], p["b"]): p["deals"] for p in old["pairs"]}
        fewer = [f"{p['a']} vs {p['b']}: {have[p['a'], p['b']]} there, {p['deals']} now"
                 for p in _pair_deals(cfg) if p["deals"] < have[p["a"], p["b"]]]
        if fewer:
            raise RunFolderError(f"{out} holds more deals than asked ({'; '.join(fewer)}); ask "
                                 f"for at least as many (more deals extend the run), or choose "
                                 f"another output folder")
    return old


def _write_manifest(cfg: TournamentConfig, out: Path, old: dict | None, deals_to_play: int):
    """Record the settings and append this session (date, command, version, commit)."""
    session = {"date": now(), "command": cfg.command(out), "package_version": package_version(),
               "git_commit": git_commit(), "deals_to_play": deals_to_play}
    manifest = {"format": MANIFEST_FORMAT, "settings": cfg.settings(), "pairs": _pair_deals(cfg),
                "sessions": (old["sessions"] if old else []) + [session]}
    (out / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n")


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


def run_tournament(cfg: TournamentConfig, out_dir=None, *, resume: bool = True,
                   progress: bool = True, max_jobs: int | None = None) -> list[dict]:
    """Play the missing deals of ``cfg`` into ``out_dir/results.jsonl`` (default
    ``cfg.default_out()``); returns all rows of this configuration. The folder is checked
    first (:func:`check_out_dir`, raises :class:`RunFolderError`) and its manifest written
    before any deal is played. ``resume=False`` starts the run afresh (same settings
    only). ``max_jobs`` stops after that many new deals (for tests)."""
    out = Path(out_dir) if out_dir is not None else cfg.default_out()
    old = check_out_dir(cfg, out, resume=resume)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise RunFolderError(f"cannot create the output folder {out}: {err.strerror}") from None
    path = out / RESULTS
    if not resume:
        for name in (RESULTS, *REPORT_FILES):
            (out / name).unlink(missing_ok=True)
        old = None
    vkey = variant_key(make_variant(cfg.variant, **cfg.variant_options))
    have = {(r["a"], r["b"], r["deal"]) for r in load_results(path) if r.get("variant") == vkey}
    todo = [j for j in cfg.jobs() if j not in have]
    if max_jobs is not None:
        todo = todo[:max_jobs]
    if old is None or todo:
        _write_manifest(cfg, out, old, len(todo))
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

    @property
    def rough(self) -> bool:
        """Too few deals for the bootstrap margin interval to be read as 95%."""
        return self.deals < MIN_BOOTSTRAP_ITEMS

    @property
    def better(self) -> str | None:
        """The agent the margin interval favours, ``None`` when it includes 0 (unresolved)."""
        return self.a if self.margin_lo > 0 else self.b if self.margin_hi < 0 else None


@dataclass
class RatingStats:
    """One agent's Bradley-Terry rating; ``lo``/``hi`` are ``None`` when the bootstrap
    cannot give an interval (``na`` says why), and ``above_next`` says whether the data
    support its place above the next agent in the ranking."""
    name: str
    rating: float
    lo: float | None
    hi: float | None
    na: str = ""
    above_next: str = ""


def summarise(rows, agents, *, n_boot: int = 2000, seed: int = 0):
    """Per-pair statistics (in ``agents`` order) and ratings (best first) from result rows."""
    by_pair: dict = {}
    for r in rows:
        by_pair.setdefault((r["a"], r["b"]), []).append(r)
    rank = {name: k for k, name in enumerate(agents)}
    pairs = []
    outcomes = {}
    for (a, b), rs in sorted(by_pair.items(),
                             key=lambda kv: (rank.get(kv[0][0], 99), rank.get(kv[0][1], 99))):
        rs.sort(key=lambda r: r["deal"])
        m = [r["margin"] for r in rs]
        o = [r["outcome"] for r in rs]
        mm, ml, mh = bootstrap_ci(m, n_boot=n_boot, rng=seed)
        wl, wh = wilson_interval(sum(o), len(o))
        pairs.append(PairStats(a, b, len(rs), mm, ml, mh, float(np.mean(o)), wl, wh))
        outcomes[(a, b)] = o
    names = [n for n in agents if any(n in k for k in outcomes)]
    if len(names) < 2:
        return pairs, []
    ratings = [RatingStats(name, r, lo, hi)
               for name, (r, lo, hi) in rating_intervals(names, outcomes, rng=seed).items()]
    ratings.sort(key=lambda s: -s.rating)
    for s in ratings:
        s.na = _no_interval(s, outcomes)
        if s.na:
            s.lo = s.hi = None
    for upper, lower in zip(ratings, ratings[1:]):
        upper.above_next = _ordering_support(upper, lower, pairs)
    return pairs, ratings


def _no_interval(s: RatingStats, outcomes) -> str:
    """Why ``s`` gets no rating interval ("" when it gets one): a pair it won or lost
    every deal of (resampling such a pair never changes it, and the rating gap rests on
    the fit's prior), or a bootstrap that never moved the rating."""
    for (a, b), out in outcomes.items():
        if s.name in (a, b) and set(out) in ({0.0}, {1.0}):
            return "swept"
    return "no spread" if s.hi - s.lo < 1 else ""


def _ordering_support(upper: RatingStats, lower: RatingStats, pairs) -> str:
    """Whether ``upper`` ranks above ``lower`` by more than chance: their own pair's margin
    interval excludes 0 in that direction, or the rating intervals do not overlap."""
    pair = next((p for p in pairs if {p.a, p.b} == {upper.name, lower.name}), None)
    if pair is not None and pair.better == lower.name:
        return f"no: {lower.name} beat {upper.name} on points"
    if pair is not None and pair.better == upper.name:
        return "yes: their pair is resolved" + (" (rough)" if pair.rough else "")
    if upper.lo is not None and lower.hi is not None and upper.lo > lower.hi:
        return "yes: rating intervals apart"
    why = "their pair is not resolved" if pair is not None else "no direct pair"
    spread = "rating interval n/a" if upper.lo is None or lower.hi is None else "intervals overlap"
    return f"no: {why}, {spread}"


def markdown_table(pairs, ratings) -> str:
    """The pair table and the rating table, each with notes on its marks."""
    most = max((p.deals for p in pairs), default=0)
    marks = set()
    lines = ["| A | B | deals | mean margin A-B (95% CI) | A deal win rate (95% Wilson CI) | A better? |",
             "|---|---|---:|---|---|---|"]
    for p in pairs:
        deals = f"{p.deals}" + (" (fewer)" if p.deals < most else "")
        rough = " rough" if p.rough else ""
        verdict = ("yes" if p.better == p.a else "no: B better" if p.better == p.b
                   else "**not resolved**")
        marks |= {"fewer"} if p.deals < most else set()
        marks |= {"rough"} if p.rough else set()
        marks |= {"unresolved"} if p.better is None else set()
        lines.append(f"| {p.a} | {p.b} | {deals} | {p.margin:+.1f} ({p.margin_lo:+.1f}, "
                     f"{p.margin_hi:+.1f}){rough} | {p.win_rate:.3f} ({p.win_lo:.3f}, "
                     f"{p.win_hi:.3f}) | {verdict} |")
    notes = {
        "fewer": "(fewer): this pair played fewer deals than the others (pairs with a "
                 "`search` agent play `--search-deals`), so its intervals are wider.",
        "rough": f"rough: fewer than {MIN_BOOTSTRAP_ITEMS} deals; a bootstrap interval over so "
                 f"few is narrower than a true 95% one (about 89% at 8 deals for normal "
                 f"margins, less for skewed), so read it and its verdict as a rough guide.",
        "unresolved": "not resolved: the margin interval includes 0; these deals do not say "
                      "which agent is better on points.",
    }
    lines += [""] + [f"- {text}" for key, text in notes.items() if key in marks]
    lines += ["", "| rank | agent | Bradley-Terry rating (Elo scale) | 95% CI | ranked above the next by more than chance? |",
              "|---:|---|---:|---|---|"]
    for k, s in enumerate(ratings, 1):
        ci = f"n/a ({s.na})" if s.na else f"({s.lo:+.0f}, {s.hi:+.0f})"
        lines.append(f"| {k} | {s.name} | {s.rating:+.0f} | {ci} | {s.above_next or '-'} |")
    rating_notes = [
        "Ratings are fitted on deal wins (ties half) with half a virtual win and loss per "
        "pair; intervals resample the deals within each pair.",
        "An order is supported when the two agents' own pair is resolved that way, or their "
        "rating intervals do not overlap.",
    ]
    if any(s.na == "swept" for s in ratings):
        rating_notes.append("n/a (swept): the agent won or lost every deal of one of its "
                            "pairs; resampling those deals never changes them, so the "
                            "bootstrap cannot say how far apart the two are (the gap rests on "
                            "the virtual games). The pair's Wilson interval bounds it.")
    if any(s.na == "no spread" for s in ratings):
        rating_notes.append("n/a (no spread): resampling the deals never moved the rating.")
    lines += [""] + [f"- {text}" for text in rating_notes]
    return "\n".join(lines)


def _deal_counts(manifest: dict) -> str:
    """"60 per pair" and, when some pairs play fewer, which and how many."""
    deals = manifest["settings"]["deals"]
    fewer = [p for p in manifest["pairs"] if p["deals"] != deals]
    text = f"{deals} per pair"
    if fewer:
        text += f", {fewer[0]['deals']} for the {len(fewer)} pair(s) with a search agent"
    return text


def markdown_header(manifest: dict) -> str:
    """The top of a report: every setting of the run and where and when it was played."""
    s = manifest["settings"]
    given = json.dumps(s["variant_options"], sort_keys=True) if s["variant_options"] else "none"
    config = ", ".join(f"{k}={v}" for k, v in s["variant_config"].items())
    last = manifest["sessions"][-1]
    lines = [f"# Tournament: {s['variant']}, {s['schedule']}", "",
             f"- variant: {s['variant']} (options given: {given}; in full: {config})",
             f"- agents: {', '.join(s['agents'])}",
             f"- schedule: {s['schedule']} ({SCHEDULES[s['schedule']]})",
             f"- deals: {_deal_counts(manifest)}, each played twice with the seats swapped",
             f"- seed: {s['seed']} (deal k has seed {s['seed']} + k; agent seeds derive from it)",
             f"- code: {PACKAGE_NAME} {last['package_version']}, commit {last['git_commit']}",
             f"- date: {last['date']}",
             f"- command: `{last['command']}`"]
    if len(manifest["sessions"]) > 1:
        lines.append("- played in sessions: " + "; ".join(
            f"{x['date']} (commit {x['git_commit'][:12]}, {x['deals_to_play']} deals)"
            for x in manifest["sessions"]))
    return "\n".join(lines)


def write_report(pairs, ratings, out_dir) -> dict:
    """Write ``report.md``, ``pairs.csv``, ``ratings.csv`` and ``ratings.png`` into the run
    folder ``out_dir``, each naming the run's settings from its ``manifest.json`` (the
    CSVs' sidecar); returns the paths."""
    out = Path(out_dir)
    manifest = read_manifest(out)
    if manifest is None:
        raise RunFolderError(f"{out} has no {MANIFEST}: write the report into the folder "
                             f"run_tournament played into")
    (out / "report.md").write_text(
        markdown_header(manifest) + "\n\n" + markdown_table(pairs, ratings) + "\n")
    most = max((p.deals for p in pairs), default=0)
    with (out / "pairs.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "b", "deals", "margin", "margin_lo", "margin_hi", "win_rate",
                    "win_lo", "win_hi", "better", "fewer_deals", "rough_margin_ci"])
        for p in pairs:
            w.writerow([p.a, p.b, p.deals, f"{p.margin:.3f}", f"{p.margin_lo:.3f}",
                        f"{p.margin_hi:.3f}", f"{p.win_rate:.4f}", f"{p.win_lo:.4f}",
                        f"{p.win_hi:.4f}", p.better or "not resolved", int(p.deals < most),
                        int(p.rough)])
    with (out / "ratings.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["agent", "rating", "lo", "hi", "no_interval", "above_next"])
        for s in ratings:
            w.writerow([s.name, f"{s.rating:.1f}", "" if s.na else f"{s.lo:.1f}",
                        "" if s.na else f"{s.hi:.1f}", s.na, s.above_next])
    paths = {"report": out / "report.md", "pairs": out / "pairs.csv",
             "ratings": out / "ratings.csv", "manifest": out / MANIFEST}
    try:
        paths["plot"] = plot(pairs, ratings, out / "ratings.png", manifest)
    except ImportError:  # matplotlib is optional (the 'analysis' extra)
        pass
    return paths


def plot(pairs, ratings, path, manifest):
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    s = manifest["settings"]
    last = manifest["sessions"][-1]
    fig = Figure(figsize=(12, 5))
    fig.suptitle(f"Tournament: {s['variant']}, {s['schedule']}, deals {_deal_counts(manifest)}, "
                 f"seed {s['seed']}\n{', '.join(s['agents'])} | {last['date']}, "
                 f"commit {last['git_commit'][:12]}", fontsize=10)
    axes = fig.subplots(1, 2)
    order = ratings[::-1]
    for y, r in enumerate(order):
        if r.na:
            axes[0].plot(r.rating, y, "o", mfc="none", color="C0")
            axes[0].annotate(f"interval n/a ({r.na})", (r.rating, y), xytext=(0, 8),
                             textcoords="offset points", ha="center", fontsize=8)
        else:
            # a percentile bootstrap interval may miss its own point estimate: draw it from
            # the point to the interval's ends, never a negative bar (matplotlib refuses)
            bar = np.clip([[r.rating - r.lo], [r.hi - r.rating]], 0, None)
            axes[0].errorbar(r.rating, y, xerr=bar,
                             fmt="o", capsize=4, color="C0")
    axes[0].set_yticks(range(len(order)), [r.name for r in order])
    axes[0].margins(x=0.2, y=0.15)
    axes[0].set_xlabel("Bradley-Terry rating (Elo scale), 95% CI")
    axes[0].set_title("Ratings")
    most = max((p.deals for p in pairs), default=0)
    labels = [f"{p.a} vs {p.b}" + (f" ({p.deals} deals{', rough' if p.rough else ''})"
                                   if p.deals < most or p.rough else "") for p in pairs]
    m = np.array([p.margin for p in pairs])
    bars = np.clip([m - [p.margin_lo for p in pairs], [p.margin_hi for p in pairs] - m], 0, None)
    axes[1].errorbar(m, range(len(pairs)), xerr=bars,
                     fmt="o", capsize=4)
    axes[1].axvline(0, color="grey", lw=1)
    axes[1].set_yticks(range(len(pairs)), labels)
    axes[1].set_xlabel("mean hand-point margin per deal (A - B), 95% CI")
    axes[1].set_title("Pairs (duplicate deals)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return Path(path)
