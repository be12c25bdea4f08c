"""Round-robin tournaments on duplicate deals, in parallel, resumable, self-describing.

A variant is played by ``N`` seats (its ``num_players``: 2 for Mountain and Gin, 2-6 for
German). Every table of ``N`` agents (every pair for two seats) plays every deal once per
cyclic rotation of its seats, or once per seat order with ``rotations="all"``: the deal's
seed fixes the deck order, the dealer and the game's generator, and every play uses the same,
so each agent meets the same cards from every seat and the luck of the cards and of the seat
cancels out of the table's result (duplicate play). For two seats that is the swap.

A run lives in one folder. ``manifest.json`` states its settings (variant and rules
options, agents, schedule, seed, deals per pair) and each session that played into it
(date, command, package version, git commit); it is written before the first deal. Each
finished deal is one JSON line appended to ``results.jsonl``; a rerun with ``resume`` plays
only the deals not there yet. A folder that holds another run (other settings, or results
without a manifest) is refused, so one run never mixes into or overwrites another.

The report states the settings at its top. For every seat count it gives each agent's mean
hand points per hand and mean place (1 = most points in a play) with 95% bootstrap intervals
over deals. For two seats, per pair, the mean hand-point margin with a 95% bootstrap interval
over deals (marked rough below ``MIN_BOOTSTRAP_ITEMS`` deals) and the deal win rate with a 95%
Wilson interval; Bradley-Terry ratings with bootstrap intervals, and for each agent whether
its place above the next one is supported. For more seats, per table, each agent's points and
place and whether it is ahead of the next on the same deals; Plackett-Luce ratings (openskill)
fed every play's places, with the support for each order from a bootstrap over deals.

Every decision is timed and every agent refereed (:class:`~experiments.play.Referee`): the
report gives each agent's mean and 95th-percentile time per decision, and the forfeits.
Each worker first plays one hand of a table untimed and unrecorded (:func:`warm_up`), so
that code compiled on first use is not counted.
With time limits (``move_limit``, ``hand_limit``) an agent that takes longer, like one
that crashes or plays an illegal or unreadable move, forfeits the hand: a ``random``
stand-in plays its seat's moves from there, so the hand ends on the same cards and the
deal stays a paired comparison; the row records who forfeited, when and why.
``time_per_move`` asks every agent that can size its effort by time (search agents, and
programs, which are told) to spend that long on each decision.

Deals play in ``workers`` local processes, or with ``ray`` set on a Ray cluster
(:mod:`experiments.ray_runner`): the same rows either way.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import itertools
import json
import multiprocessing as mp
import os
import shlex
from collections import Counter
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from mountain_rummy_env import Game
from mountain_rummy_env.registry import DEFAULT_VARIANT, make_variant

from .play import Limits, Referee, play_hand
from .provenance import PACKAGE as PACKAGE_NAME, git_commit, now, package_version
from .stats import (
    MIN_BOOTSTRAP_ITEMS, average_ranks, bootstrap_ci, cluster_bootstrap_ci, plackett_luce,
    plackett_luce_boot, rating_intervals, wilson_interval)

DEFAULT_AGENTS = ("random", "greedy", "rules", "search:budget=60")
SCHEDULES = {
    "round-robin": "every agent plays every other agent, n(n-1)/2 pairs; the ratings rest "
                   "on every pair. With N seats: every table of N of the n agents",
    "ladder": "each agent plays only the next one in the agent list, n-1 pairs, e.g. a "
              "ladder from weakest to strongest; cheaper, but agents two rungs apart meet "
              "only through the ratings. With N seats: the n-N+1 tables of N agents in a "
              "row of the list",
}
ROTATIONS = {
    "cyclic": "each deal is played once per cyclic rotation of the table's seats: N plays, "
              "every agent once in every seat (for 2 seats the swap)",
    "all": "each deal is played once per order of the table's agents in the seats: N! plays "
           "(24 for 4 seats), so every agent also follows every other one; up to 4 seats",
}
MAX_ALL_ORDERS_SEATS = 4
RUNS_ROOT = Path("runs/tournament")
MANIFEST = "manifest.json"
MANIFEST_FORMAT = "mountain-rummy-tournament/1"
RESULTS = "results.jsonl"
REPORT_FILES = ("report.md", "pairs.csv", "tables.csv", "agents.csv", "ratings.csv",
                "ratings.png", "times.csv")
# What makes two runs the same run; deal counts may grow (resuming with more deals adds
# them), so they are not part of it. The seat count is part of ``variant_config`` where the
# variant has the option. A manifest written before rotations existed played them cyclic.
IDENTITY = ("variant", "variant_config", "agents", "schedule", "seed", "rotations",
            "move_limit", "hand_limit", "time_per_move")
IDENTITY_DEFAULTS = {"rotations": "cyclic", "move_limit": None, "hand_limit": None,
                     "time_per_move": None}


def variant_key(variant) -> str:
    """The ``variant`` field of a result row: the variant's name and its full options."""
    return f"{variant.name}:{json.dumps(asdict(variant.config), sort_keys=True)}"


@functools.lru_cache(maxsize=None)
def _variant_seats(variant: str, options_json: str) -> int:
    return make_variant(variant, **json.loads(options_json)).num_players


def seat_options(variant: str, options: dict, players: int | None) -> dict:
    """``options`` for ``players`` seats (``None``: the variant's own count): the
    ``num_players`` option for a variant that has it. Raises ``ValueError`` saying why when
    the variant is not played by that many seats or the two settings disagree."""
    if players is None:
        return dict(options)
    given = options.get("num_players", players)
    if given != players:
        raise ValueError(f"--players {players} and the option num_players={given!r} disagree")
    config = make_variant(variant, **dict(options)).config
    if "num_players" in config.__dataclass_fields__:
        return {**options, "num_players": players}
    seats = _variant_seats(variant, json.dumps(options, sort_keys=True))
    if players != seats:
        raise ValueError(f"{variant} is played by {seats} seats only (it has no num_players "
                         f"option); --players {players} is not supported")
    return dict(options)


def seat_orders(num_players: int, rotations: str = "cyclic") -> list[tuple[int, ...]]:
    """The plays of one deal: ``order[s]`` is the table position seated at seat ``s``.
    ``cyclic``: the ``num_players`` rotations, the table as listed first; ``all``: every
    permutation (``num_players``! plays), the table as listed first."""
    if rotations == "all":
        return list(itertools.permutations(range(num_players)))
    return [tuple((s + r) % num_players for s in range(num_players))
            for r in range(num_players)]


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
    rotations: str = "cyclic"            # see ROTATIONS
    move_limit: float | None = None      # seconds per decision, else the agent forfeits
    hand_limit: float | None = None      # seconds per seat's decisions in a hand
    time_per_move: float | None = None   # asked of the agents that can spend a time budget
    ray: str | None = None               # play on Ray at this address (experiments.ray_runner)

    def __post_init__(self):
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {tuple(SCHEDULES)}, got {self.schedule!r}")
        if self.rotations not in ROTATIONS:
            raise ValueError(f"rotations must be one of {tuple(ROTATIONS)}, got {self.rotations!r}")
        if self.rotations == "all" and self.num_players > MAX_ALL_ORDERS_SEATS:
            raise ValueError(f"rotations 'all' plays every seat order, "
                             f"{self.num_players}! per deal for {self.num_players} seats; it is "
                             f"allowed up to {MAX_ALL_ORDERS_SEATS} seats (use 'cyclic')")
        for name in ("move_limit", "hand_limit", "time_per_move"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")

    @property
    def num_players(self) -> int:
        """Seats at a table: the variant's ``num_players`` under these options."""
        return _variant_seats(self.variant, json.dumps(self.variant_options, sort_keys=True))

    def tables(self) -> list[tuple[str, ...]]:
        """The tables that play, each ``num_players`` agents in list order. An agent listed
        twice may sit twice at a table; a table that two list positions would make twice
        plays once."""
        n = self.num_players
        if self.schedule == "ladder":
            found = [tuple(self.agents[k:k + n]) for k in range(len(self.agents) - n + 1)]
        else:
            found = list(itertools.combinations(self.agents, n))
        return list(dict.fromkeys(found))

    def pairs(self) -> list[tuple[str, ...]]:
        """The tables of a two-seat run (its pairs)."""
        return self.tables()

    def deals_for(self, *table: str) -> int:
        slow = any(x.startswith("search") for x in table)
        return min(self.deals, self.slow_deals) if slow and self.slow_deals else self.deals

    def jobs(self) -> list[tuple[tuple[str, ...], int]]:
        """``(table, deal seed)`` of every deal the run plays."""
        return [(table, self.seed + k) for table in self.tables()
                for k in range(self.deals_for(*table))]

    def settings(self) -> dict:
        """What the manifest records as this run's settings (``IDENTITY``, the seat count and
        deal counts); ``variant_config`` is every rules option, defaults included."""
        return {"variant": self.variant, "variant_options": dict(self.variant_options),
                "variant_config": asdict(make_variant(self.variant, **self.variant_options).config),
                "agents": list(self.agents), "schedule": self.schedule, "seed": self.seed,
                "deals": self.deals, "search_deals": self.deals_for("search"),
                "num_players": self.num_players, "rotations": self.rotations,
                "move_limit": self.move_limit, "hand_limit": self.hand_limit,
                "time_per_move": self.time_per_move}

    def default_out(self) -> Path:
        """``runs/tournament/<variant>[-<N>seats]-<schedule>-<hash of the identity
        settings>``: the same settings find their own folder again (and resume), other
        settings get another. Cyclic rotations leave the hash as it was before rotations
        were a setting, so an older two-seat run's folder is found again."""
        settings = self.settings()
        identity = {k: settings[k] for k in IDENTITY}
        for key, default in IDENTITY_DEFAULTS.items():
            if identity[key] == default:
                del identity[key]
        digest = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:8]
        seats = f"-{self.num_players}seats" if self.num_players > 2 else ""
        return RUNS_ROOT / f"{self.variant}{seats}-{self.schedule}-{digest}"

    def command(self, out_dir) -> str:
        """The ``mountain-rummy`` command that reproduces this run, every setting spelled out
        (``--players`` for a variant with a seat count option, ``--rotations`` for more than
        two seats or when not cyclic)."""
        options = dict(self.variant_options)
        config = make_variant(self.variant, **dict(options)).config
        parts = ["tournament", "--variant", self.variant]
        if "num_players" in config.__dataclass_fields__:
            options.pop("num_players", None)
            parts += ["--players", str(self.num_players)]
        parts += ["--schedule", self.schedule]
        if self.num_players > 2 or self.rotations != "cyclic":
            parts += ["--rotations", self.rotations]
        parts += ["--agents", *self.agents, "--deals", str(self.deals),
                  "--search-deals", str(self.slow_deals or 0), "--seed", str(self.seed),
                  "--workers", str(self.workers), "--out", str(out_dir)]
        if self.ray is not None:
            parts += ["--ray", self.ray]
        for name in ("move_limit", "hand_limit", "time_per_move"):
            if getattr(self, name) is not None:
                parts += ["--" + name.replace("_", "-"), f"{getattr(self, name):g}"]
        if options:
            parts += ["--options", json.dumps(options, sort_keys=True)]
        return "mountain-rummy " + shlex.join(parts)


# -- the worker side ---------------------------------------------------------------------

_WORKER: dict = {}
_WARMED: set = set()         # (variant key, table) this worker has warmed up
WARM_UP_SEED = 2**31 - 1     # the deal of each worker's untimed first hand of a table


def warm_up(game, table) -> None:
    """Play one hand of ``table`` untimed and unrecorded, so that compiling on first use
    (numba) counts neither against a time limit nor in the decision times; a program
    (``proc:``) starts afresh every hand, so ``random`` sits in for it here."""
    from agents import make_agent
    from agents.base import read_spec

    agents = [make_agent("random" if read_spec(spec).kind == "proc" else spec, seed=0)
              for spec in table]
    play_hand(game, agents, seed=WARM_UP_SEED, referee=Referee())


def _agent_seed(base: int, deal: int, spec: str, seat: int) -> list[int]:
    h = int.from_bytes(hashlib.sha256(spec.encode()).digest()[:4], "little")
    return [base, deal, h, seat]


def _number(x: float) -> float | int:
    """``x`` as an int when it is whole (a place 2 reads ``2`` in JSON, a shared 2.5 ``2.5``)."""
    return int(x) if float(x).is_integer() else float(x)


def play_table(cfg_dict: dict, table, deal: int) -> dict:
    """Play deal ``deal`` once per seat order of ``cfg_dict["rotations"]`` (see
    :func:`seat_orders`) with the agents of ``table``; returns the JSON row.

    Two seats give the row every version has written: ``a``, ``b``, ``margin`` (a's mean
    hand-point lead per hand), ``outcome`` and each hand with its deck and dealer. More seats
    give ``table``; ``points``, each table position's hand points summed over the plays;
    ``ranks``, its place in each play (1 = most points, ties share the mean place); the deal's
    ``deck`` and ``dealer``; and each hand with ``positions`` (the table position in each
    seat), its seats' specs and points. Every row ends with ``decision_ms`` (per agent, the
    time of each of its decisions in milliseconds) and, when an agent forfeited,
    ``forfeits`` (the play, seat, agent, decision, kind and reason of each)."""
    from agents import make_agent

    key = (cfg_dict["variant"], json.dumps(cfg_dict["variant_options"], sort_keys=True))
    if key not in _WORKER:
        variant = make_variant(cfg_dict["variant"], **cfg_dict["variant_options"])
        _WORKER[key] = (variant, Game(variant, 1))
    variant, game = _WORKER[key]
    table = list(table)
    n = variant.num_players
    if len(table) != n:
        raise ValueError(f"a table of {len(table)} agents cannot play {variant.name} with {n} seats")
    if (key, tuple(table)) not in _WARMED:
        _WARMED.add((key, tuple(table)))
        warm_up(game, table)
    base = cfg_dict["seed"]
    game.reset(seed=deal)
    deck = game.states[0]["deck"].copy()
    dealer = deal % n
    hands = []
    limits = Limits(cfg_dict.get("move_limit"), cfg_dict.get("hand_limit"))
    decision_ms: dict[str, list[float]] = {spec: [] for spec in table}
    forfeits = []
    for play, order in enumerate(seat_orders(n, cfg_dict.get("rotations", "cyclic"))):
        seated = [table[k] for k in order]
        agents = [make_agent(spec, seed=_agent_seed(base, deal, spec, seat))
                  for seat, spec in enumerate(seated)]
        if cfg_dict.get("time_per_move"):
            for agent in agents:
                getattr(agent, "use_time_per_move", lambda s: False)(cfg_dict["time_per_move"])
        referee = Referee(limits, seed=_agent_seed(base, deal, "stand-in", play))
        try:
            r = play_hand(game, agents, seed=deal, deck=deck, dealer=dealer, referee=referee)
        finally:
            for agent in agents:
                getattr(agent, "close", lambda: None)()
        for spec, times in zip(seated, r.decision_seconds):
            decision_ms[spec] += [round(t * 1000, 3) for t in times]
        forfeits += [{"play": play, "seat": f.seat, "agent": seated[f.seat],
                      "decision": f.decision, "kind": f.kind, "reason": f.reason}
                     for f in r.forfeits]
        hand = {"seats": seated, "points": list(r.hand_points), "end": r.end,
                "ender": r.ender, "winner": r.winner, "steps": r.steps}
        if n == 2:
            hand.update(deck=variant.deck.cards_text(game.states[0]["deck"]), dealer=int(dealer))
        else:
            hand = {"positions": list(order), **hand}
        hands.append(hand)
    if n == 2:
        a, b = table
        pa = hands[0]["points"][0] + hands[1]["points"][1]
        pb = hands[0]["points"][1] + hands[1]["points"][0]
        margin = (pa - pb) / 2
        row = {"a": a, "b": b, "deal": deal, "variant": variant_key(variant),
               "margin": margin, "outcome": 1.0 if margin > 0 else 0.5 if margin == 0 else 0.0,
               "hands": hands}
    else:
        points = play_points({"table": table, "hands": hands})
        row = {"table": table, "deal": deal, "variant": variant_key(variant),
               "points": [int(x) for x in points.sum(axis=0)],
               "ranks": [[_number(x) for x in average_ranks(p)] for p in points],
               "deck": variant.deck.cards_text(deck), "dealer": int(dealer), "hands": hands}
    row["decision_ms"] = decision_ms
    if forfeits:
        row["forfeits"] = forfeits
    return row


def play_deal(cfg_dict: dict, a: str, b: str, deal: int) -> dict:
    """Play deal ``deal`` twice, ``a`` in seat 0 then ``b`` in seat 0; returns the JSON row."""
    return play_table(cfg_dict, (a, b), deal)


def _play_job(args):
    cfg_dict, table, deal = args
    return play_table(cfg_dict, table, deal)


# -- reading result rows -----------------------------------------------------------------

def row_table(row: dict) -> tuple[str, ...]:
    """The agents of a result row's table: ``table``, or ``(a, b)`` for a two-seat row."""
    return tuple(row["table"]) if "table" in row else (row["a"], row["b"])


def without_times(row: dict) -> dict:
    """The row less its ``decision_ms``: what a replay of the same deal reproduces (the
    times are measured, and differ from run to run)."""
    return {k: v for k, v in row.items() if k != "decision_ms"}


def row_key(row: dict) -> tuple[tuple[str, ...], int]:
    """What identifies a row within its run: ``(table, deal)``, as :meth:`TournamentConfig.jobs`."""
    return row_table(row), row["deal"]


def play_points(row: dict) -> np.ndarray:
    """Hand points of each table position (columns) in each play (rows) of a result row;
    a two-seat row's hands have no ``positions``: they are ``a, b`` then ``b, a``."""
    table = row_table(row)
    out = np.zeros((len(row["hands"]), len(table)), dtype=np.int64)
    for k, hand in enumerate(row["hands"]):
        positions = hand.get("positions") or seat_orders(len(table))[k]
        out[k, list(positions)] = hand["points"]
    return out


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


def _table_deals(cfg: TournamentConfig) -> dict:
    """The manifest's deals per table: ``pairs`` (``a``, ``b``, ``deals``) for two seats, as
    every version wrote them, ``tables`` (``table``, ``deals``) for more."""
    if cfg.num_players == 2:
        return {"pairs": [{"a": a, "b": b, "deals": cfg.deals_for(a, b)} for a, b in cfg.tables()]}
    return {"tables": [{"table": list(t), "deals": cfg.deals_for(*t)} for t in cfg.tables()]}


def manifest_tables(manifest: dict) -> dict[tuple[str, ...], int]:
    """``{table: deals}`` of a manifest (``pairs`` or ``tables``)."""
    return {row_table(t): t["deals"] for t in manifest.get("tables", manifest.get("pairs", []))}


def manifest_seats(manifest: dict) -> int:
    """A manifest's seats per table (one written before seat counts existed: 2)."""
    return manifest["settings"].get("num_players", 2)


def _identity_differences(there: dict, now: dict) -> list[str]:
    """How the ``IDENTITY`` settings of two runs differ, e.g. ``"seed 0 there, 3 now"``;
    rules options are compared one by one (and only when the variant is the same)."""
    if there.get("variant") != now["variant"]:
        return [f"variant {there.get('variant')} there, {now['variant']} now"]
    out = []
    for key in IDENTITY:
        old, new = there.get(key, IDENTITY_DEFAULTS.get(key)), now[key]
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
        have = manifest_tables(old)
        fewer = [f"{' vs '.join(t)}: {have[t]} there, {deals} now"
                 for t, deals in manifest_tables(_table_deals(cfg)).items() if deals < have[t]]
        if fewer:
            raise RunFolderError(f"{out} holds more deals than asked ({'; '.join(fewer)}); ask "
                                 f"for at least as many (more deals extend the run), or choose "
                                 f"another output folder")
    return old


def _write_manifest(cfg: TournamentConfig, out: Path, old: dict | None, deals_to_play: int):
    """Record the settings and append this session (date, command, version, commit)."""
    session = {"date": now(), "command": cfg.command(out), "package_version": package_version(),
               "git_commit": git_commit(), "deals_to_play": deals_to_play}
    manifest = {"format": MANIFEST_FORMAT, "settings": cfg.settings(), **_table_deals(cfg),
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


@contextmanager
def writer_lock(out: Path):
    """Hold ``out/.lock`` exclusively while this run writes the folder: a second
    tournament into the same folder (two processes appending the same deals) is a
    :class:`RunFolderError` naming the first one's pid. The lock (``flock``) ends with the
    process, so a killed run leaves none behind; without ``fcntl`` (Windows) nothing is
    locked."""
    try:
        import fcntl
    except ImportError:     # pragma: no cover - not POSIX
        yield
        return
    with (out / ".lock").open("a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.seek(0)
            holder = fh.read().strip() or "unknown"
            raise RunFolderError(f"{out} is being written by another tournament (pid {holder}); "
                                 "wait for it to finish or choose another output folder") from None
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def unique_rows(rows) -> list[dict]:
    """``rows`` with each (table, deal) once, the first written kept (a folder two runs
    once wrote at the same time holds some deals twice)."""
    seen, out = set(), []
    for r in rows:
        k = row_key(r)
        if k not in seen:
            seen.add(k)
            out.append(r)
    return out


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
    with writer_lock(out):
        return _run_locked(cfg, out, old, resume, progress, max_jobs)


def _run_locked(cfg: TournamentConfig, out: Path, old, resume: bool, progress: bool,
                max_jobs: int | None) -> list[dict]:
    """:func:`run_tournament` once the folder is checked, made and locked."""
    path = out / RESULTS
    if not resume:
        for name in (RESULTS, *REPORT_FILES):
            (out / name).unlink(missing_ok=True)
        old = None
    vkey = variant_key(make_variant(cfg.variant, **cfg.variant_options))
    have = {row_key(r) for r in load_results(path) if r.get("variant") == vkey}
    todo = [j for j in cfg.jobs() if j not in have]
    if max_jobs is not None:
        todo = todo[:max_jobs]
    if old is None or todo:
        _write_manifest(cfg, out, old, len(todo))
    cfg_dict = asdict(cfg)
    args = [(cfg_dict, table, deal) for table, deal in todo]
    with result_sink(path, len(todo), desc="deals", unit="deal", progress=progress) as sink:
        if cfg.ray is not None:
            from .ray_runner import run_on_ray

            run_on_ray(_play_job, args, sink, address=cfg.ray, num_cpus=cfg.workers, desc="deals",
                       label=lambda job: f"table {', '.join(job[1])}, deal {job[2]}")
        elif cfg.workers <= 1 or len(args) <= 1:
            for job in args:
                sink(_play_job(job))
        else:
            ctx = mp.get_context("fork" if os.name == "posix" else "spawn")
            with ctx.Pool(cfg.workers) as pool:
                for row in pool.imap_unordered(_play_job, args, chunksize=1):
                    sink(row)
    wanted = set(cfg.jobs())
    return unique_rows(r for r in load_results(path) if r.get("variant") == vkey and row_key(r) in wanted)


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
    """"60 per pair" (or per table) and, when some play fewer, which and how many."""
    deals = manifest["settings"]["deals"]
    unit = "pair" if manifest_seats(manifest) == 2 else "table"
    fewer = [d for d in manifest_tables(manifest).values() if d != deals]
    text = f"{deals} per {unit}"
    if fewer:
        text += f", {fewer[0]} for the {len(fewer)} {unit}(s) with a search agent"
    return text


def markdown_header(manifest: dict) -> str:
    """The top of a report: every setting of the run and where and when it was played."""
    s = manifest["settings"]
    seats = manifest_seats(manifest)
    rotations = s.get("rotations", IDENTITY_DEFAULTS["rotations"])
    given = json.dumps(s["variant_options"], sort_keys=True) if s["variant_options"] else "none"
    config = ", ".join(f"{k}={v}" for k, v in s["variant_config"].items())
    last = manifest["sessions"][-1]
    if seats == 2:
        title = f"# Tournament: {s['variant']}, {s['schedule']}"
        play = [f"- deals: {_deal_counts(manifest)}, each played twice with the seats swapped"]
    else:
        title = f"# Tournament: {s['variant']}, {s['schedule']}, {seats} seats"
        plays = len(seat_orders(seats, rotations))
        play = [f"- seats: {seats} per table, {len(manifest_tables(manifest))} table(s)",
                f"- rotations: {rotations} ({ROTATIONS[rotations]})",
                f"- deals: {_deal_counts(manifest)}, each played {plays} times with the same "
                f"deck, dealer and generator seed"]
    lines = [title, "",
             f"- variant: {s['variant']} (options given: {given}; in full: {config})",
             f"- agents: {', '.join(s['agents'])}",
             f"- schedule: {s['schedule']} ({SCHEDULES[s['schedule']]})",
             *play,
             f"- seed: {s['seed']} (deal k has seed {s['seed']} + k; agent seeds derive from it)",
             f"- code: {PACKAGE_NAME} {last['package_version']}, commit {last['git_commit']}",
             f"- date: {last['date']}",
             f"- command: `{last['command']}`"]
    if len(manifest["sessions"]) > 1:
        lines.append("- played in sessions: " + "; ".join(
            f"{x['date']} (commit {x['git_commit'][:12]}, {x['deals_to_play']} deals)"
            for x in manifest["sessions"]))
    return "\n".join(lines)


# -- points and places per agent and per table (any seat count) --------------------------

@dataclass
class AgentStats:
    """One agent's mean hand points per hand and mean place per play (1 = most points) over
    all its tables, with 95% bootstrap intervals that resample deals (every play of a deal
    in any of its tables comes along: they share the cards)."""
    name: str
    tables: int
    deals: int
    hands: int
    points: float
    points_lo: float
    points_hi: float
    rank: float
    rank_lo: float
    rank_hi: float

    @property
    def rough(self) -> bool:
        return self.deals < MIN_BOOTSTRAP_ITEMS


@dataclass
class TableEntry:
    """One agent at one table: ``seats`` of the table are its (more than one when it is
    listed twice); points and place per hand over the table's deals, with 95% bootstrap
    intervals; ``ahead`` says whether it is ahead of the next entry on the same deals."""
    name: str
    seats: int
    points: float
    points_lo: float
    points_hi: float
    rank: float
    rank_lo: float
    rank_hi: float
    ahead: str = ""


@dataclass
class TableStats:
    table: tuple[str, ...]
    deals: int
    entries: list[TableEntry]

    @property
    def rough(self) -> bool:
        return self.deals < MIN_BOOTSTRAP_ITEMS


def _per_name(row) -> dict[str, tuple[float, float, int]]:
    """``{agent: (hand points, places, hands)}`` summed over a row's plays and the agent's
    seats at the table."""
    table = row_table(row)
    points = play_points(row)
    ranks = np.array([average_ranks(p) for p in points])
    out = {}
    for name in dict.fromkeys(table):
        cols = [k for k, x in enumerate(table) if x == name]
        out[name] = (float(points[:, cols].sum()), float(ranks[:, cols].sum()),
                     points[:, cols].size)
    return out


def agent_summary(rows, agents, *, n_boot: int = 2000, seed: int = 0) -> list[AgentStats]:
    """Per-agent points and places (most points first) from result rows with hands."""
    by_deal: dict[str, dict[int, np.ndarray]] = {}
    tables: dict[str, set] = {}
    for row in rows:
        for name, sums in _per_name(row).items():
            acc = by_deal.setdefault(name, {}).setdefault(row["deal"], np.zeros(3))
            acc += sums
            tables.setdefault(name, set()).add(row_table(row))
    out = []
    for name in dict.fromkeys(agents):
        if name not in by_deal:
            continue
        sums = np.array(list(by_deal[name].values()))
        pts = cluster_bootstrap_ci(sums[:, 0], sums[:, 2], n_boot=n_boot, rng=seed)
        rank = cluster_bootstrap_ci(sums[:, 1], sums[:, 2], n_boot=n_boot, rng=seed)
        out.append(AgentStats(name, len(tables[name]), len(sums), int(sums[:, 2].sum()),
                              *pts, *rank))
    out.sort(key=lambda a: -a.points)
    return out


def summarise_tables(rows, agents, *, n_boot: int = 2000, seed: int = 0) -> list[TableStats]:
    """Per-table points and places of each agent (tables in the order the schedule lists
    them, agents most points first). Whether an agent is ahead of the next rests on their
    per-deal difference in points per hand, a paired comparison on the same deals."""
    by_table: dict[tuple, list] = {}
    for r in rows:
        by_table.setdefault(row_table(r), []).append(r)
    order = {name: k for k, name in enumerate(agents)}
    out = []
    for table in sorted(by_table, key=lambda t: [order.get(x, len(order)) for x in t]):
        rs = sorted(by_table[table], key=lambda r: r["deal"])
        sums = [_per_name(r) for r in rs]
        per_hand = {name: np.array([[s[name][0] / s[name][2], s[name][1] / s[name][2]]
                                    for s in sums]) for name in dict.fromkeys(table)}
        entries = [TableEntry(name, table.count(name),
                              *bootstrap_ci(x[:, 0], n_boot=n_boot, rng=seed),
                              *bootstrap_ci(x[:, 1], n_boot=n_boot, rng=seed))
                   for name, x in per_hand.items()]
        entries.sort(key=lambda e: -e.points)
        stats = TableStats(table, len(rs), entries)
        for upper, lower in zip(entries, entries[1:]):
            gap = per_hand[upper.name][:, 0] - per_hand[lower.name][:, 0]
            mean, lo, hi = bootstrap_ci(gap, n_boot=n_boot, rng=seed)
            verdict = "yes" if lo > 0 else "no"
            upper.ahead = (f"{verdict}: {mean:+.1f} ({lo:+.1f}, {hi:+.1f})"
                           + (" rough" if stats.rough else ""))
        out.append(stats)
    return out


# -- Plackett-Luce ratings (more than two seats) ------------------------------------------

@dataclass
class SkillStats:
    """One agent's Plackett-Luce rating (openskill): ``mu`` and ``sigma`` from one pass over
    every play, ``mu_lo``/``mu_hi`` a 95% bootstrap interval over deals, and whether its
    place above the next agent holds in that bootstrap."""
    name: str
    mu: float
    sigma: float
    mu_lo: float
    mu_hi: float
    deals: int
    above_next: str = ""

    @property
    def ordinal(self) -> float:
        """openskill's conservative rating, ``mu - 3 sigma``."""
        return self.mu - 3 * self.sigma


def skill_ratings(rows, agents, *, n_boot: int = 200, seed: int = 0) -> list[SkillStats]:
    """Plackett-Luce ratings (best first) fed every play's places, deal by deal (tables in
    schedule order, plays in seat-order order). An order is supported when the bootstrap
    interval of the two agents' ``mu`` gap, deals resampled with every play of a drawn deal,
    lies above 0; ``sigma`` alone would overstate it, as it counts every play as independent
    while the plays of one deal share its cards. Needs openskill (the 'analysis' extra)."""
    names = [n for n in dict.fromkeys(agents) if any(n in row_table(r) for r in rows)]
    if len(names) < 2:
        return []
    order = {name: k for k, name in enumerate(agents)}
    deal_plays: dict[int, list] = {}
    for r in sorted(rows, key=lambda r: (r["deal"], [order.get(x, len(order)) for x in row_table(r)])):
        table = list(row_table(r))
        deal_plays.setdefault(r["deal"], []).extend(
            (table, average_ranks(p)) for p in play_points(r))
    clusters = list(deal_plays.values())
    point = plackett_luce([play for plays in clusters for play in plays], names)
    boots = plackett_luce_boot(clusters, names, n_boot=n_boot, rng=seed)
    lo, hi = np.quantile(boots, [0.025, 0.975], axis=0)
    out = [SkillStats(n, *point[n], float(lo[k]), float(hi[k]), len(clusters))
           for k, n in enumerate(names)]
    out.sort(key=lambda s: -s.mu)
    col = {n: k for k, n in enumerate(names)}
    for upper, lower in zip(out, out[1:]):
        gaps = boots[:, col[upper.name]] - boots[:, col[lower.name]]
        g_lo, g_hi = np.quantile(gaps, [0.025, 0.975])
        verdict = "yes" if g_lo > 0 else "no"
        upper.above_next = (f"{verdict}: gap {upper.mu - lower.mu:+.2f} ({g_lo:+.2f}, {g_hi:+.2f})"
                            + (" rough" if upper.deals < MIN_BOOTSTRAP_ITEMS else ""))
    return out


# -- report text -------------------------------------------------------------------------

ROUGH_NOTE = (f"rough: fewer than {MIN_BOOTSTRAP_ITEMS} deals; a bootstrap interval over so few "
              f"is narrower than a true 95% one, so read it as a rough guide.")


def _ci(mean, lo, hi, fmt=".1f") -> str:
    return f"{mean:{fmt}} ({lo:{fmt}}, {hi:{fmt}})"


def agent_table(stats: list[AgentStats], num_players: int) -> str:
    """The per-agent table with its notes."""
    lines = ["## Agents", "",
             "| agent | tables | deals | hands | mean hand points per hand (95% CI) | "
             "mean rank (95% CI) |", "|---|---:|---:|---:|---|---|"]
    for a in stats:
        rough = " rough" if a.rough else ""
        lines.append(f"| {a.name} | {a.tables} | {a.deals} | {a.hands} | "
                     f"{_ci(a.points, a.points_lo, a.points_hi, '+.1f')}{rough} | "
                     f"{_ci(a.rank, a.rank_lo, a.rank_hi, '.2f')}{rough} |")
    notes = [f"rank: the place in each play, 1 = most hand points of the {num_players} seats; "
             f"tied seats share the mean of their places, so the mean over all seats is "
             f"{(num_players + 1) / 2:g}.",
             "hands: the hands it played, one for every seat it held in every play.",
             "Intervals resample deals: an agent's plays of one deal (its seats, the seat "
             "orders, all its tables) share the cards and count as one item."]
    if any(a.rough for a in stats):
        notes.append(ROUGH_NOTE)
    return "\n".join(lines + [""] + [f"- {text}" for text in notes])


def markdown_tables(tables: list[TableStats], skills: list[SkillStats],
                    no_ratings: str = "") -> str:
    """The per-table results and the Plackett-Luce rating table, each with its notes;
    ``no_ratings`` says why there are no ratings (when there are none)."""
    lines = ["## Tables", "",
             "| table | deals | agent | mean hand points per hand (95% CI) | mean rank (95% CI) "
             "| ahead of the next on the same deals? |", "|---|---:|---|---|---|---|"]
    for t in tables:
        for k, e in enumerate(t.entries):
            name = e.name + (f" ({e.seats} seats)" if e.seats > 1 else "")
            where = (f"{', '.join(t.table)} | {t.deals}" + (" rough" if t.rough else "")
                     if k == 0 else " | ")
            lines.append(f"| {where} | {name} | {_ci(e.points, e.points_lo, e.points_hi, '+.1f')}"
                         f" | {_ci(e.rank, e.rank_lo, e.rank_hi, '.2f')} | {e.ahead or '-'} |")
    lines += ["", "- ahead of the next: the mean difference in hand points per hand to the next "
                  "agent of the table on the same deals, with its 95% bootstrap interval over "
                  "deals; yes when the interval lies above 0."]
    if any(t.rough for t in tables):
        lines.append(f"- {ROUGH_NOTE}")
    lines += ["", "## Ratings (Plackett-Luce)", ""]
    if not skills:
        return "\n".join(lines + [no_ratings or "No ratings: they need two different agents."])
    lines += ["| rank | agent | mu | sigma | ordinal (mu - 3 sigma) | mu 95% CI (bootstrap over "
              "deals) | ranked above the next by more than chance? |",
              "|---:|---|---:|---:|---:|---|---|"]
    for k, s in enumerate(skills, 1):
        lines.append(f"| {k} | {s.name} | {s.mu:.2f} | {s.sigma:.2f} | {s.ordinal:.2f} | "
                     f"({s.mu_lo:.2f}, {s.mu_hi:.2f}) | {s.above_next or '-'} |")
    lines += ["", "- Ratings are openskill's Plackett-Luce model (mu 25, sigma 25/3 to start, no "
                  "skill drift) fed the places of every play, deal by deal; an agent seated twice "
                  "in a play takes both seats' updates.",
              "- sigma counts every play as independent, but the plays of one deal share its "
              "cards, so it is too small to judge an order by. The order column uses the "
              "bootstrap over deals instead: the gap in mu to the next agent with its 95% "
              "interval; yes when the interval lies above 0."]
    if skills[0].deals < MIN_BOOTSTRAP_ITEMS:
        lines.append(f"- {ROUGH_NOTE}")
    return "\n".join(lines)


# -- decision times and forfeits ----------------------------------------------------------

FORFEITS_LISTED = 10


@dataclass
class TimeStats:
    """One agent's decisions: how many, their mean, 95th-percentile and longest wall-clock
    time in milliseconds, and its forfeits by kind."""
    name: str
    decisions: int
    mean_ms: float
    p95_ms: float
    max_ms: float
    forfeits: dict


def time_summary(rows, agents) -> list[TimeStats]:
    """Per agent (in ``agents`` order) the time of its decisions over every row that
    recorded them (``decision_ms``), and its forfeits."""
    times: dict[str, list] = {name: [] for name in dict.fromkeys(agents)}
    forfeits: dict[str, Counter] = {name: Counter() for name in times}
    for row in rows:
        for name, ms in row.get("decision_ms", {}).items():
            times.setdefault(name, []).extend(ms)
        for f in row.get("forfeits", ()):
            forfeits.setdefault(f["agent"], Counter())[f["kind"]] += 1
    out = []
    for name, ms in times.items():
        if not ms and not forfeits.get(name):
            continue
        x = np.asarray(ms, dtype=float)
        out.append(TimeStats(name, len(x), float(x.mean()) if len(x) else float("nan"),
                             float(np.percentile(x, 95)) if len(x) else float("nan"),
                             float(x.max()) if len(x) else float("nan"),
                             dict(forfeits.get(name, {}))))
    return out


def time_table(stats: list[TimeStats], rows, manifest: dict) -> str:
    """The report's section on decision times and forfeits, with the forfeit rule."""
    s = manifest["settings"]
    lines = ["## Decision time and forfeits", ""]
    if not stats:
        return "\n".join(lines + ["No decision times: the rows were written before they "
                                   "were recorded."])
    lines += ["| agent | decisions | mean ms per decision | 95th percentile ms | longest ms "
              "| forfeits |", "|---|---:|---:|---:|---:|---|"]
    for t in stats:
        kinds = ", ".join(f"{n} {k}" for k, n in sorted(t.forfeits.items())) or "0"
        lines.append(f"| {t.name} | {t.decisions} | {t.mean_ms:.3g} | {t.p95_ms:.3g} | "
                     f"{t.max_ms:.3g} | {kinds} |")
    limits = [f"{label} {s[key]:g} s" for key, label in
              (("move_limit", "per decision"), ("hand_limit", "per seat and hand"))
              if s.get(key) is not None]
    notes = ["Wall-clock time of each call of the agent on the machine that played, under "
             "its load then; a program's (`proc:`) includes the round trip through its pipes.",
             "Time limits: " + (", ".join(limits) if limits else "none") + ". An agent that "
             "crashes, answers late, answers what is not an action id or plays an illegal "
             "action forfeits the hand: the move is not played and a `random` stand-in plays "
             "its seat from there, so every play ends on the deal's cards and its points stay "
             "a paired comparison (docs/your_agent.md)."]
    if s.get("time_per_move") is not None:
        notes.append(f"Time per move: {s['time_per_move']:g} s, asked of every agent that "
                     f"can spend a time budget (search agents; programs are told it).")
    lines += [""] + [f"- {text}" for text in notes]
    listed = [(r["deal"], f) for r in sorted(rows, key=lambda r: r["deal"])
              for f in r.get("forfeits", ())]
    if listed:
        lines += ["", "Forfeits:", ""]
        lines += [f"- deal {deal}, play {f['play']}, seat {f['seat']}, {f['agent']}, decision "
                  f"{f['decision']}: {f['kind']}: {f['reason']}"
                  for deal, f in listed[:FORFEITS_LISTED]]
        if len(listed) > FORFEITS_LISTED:
            lines.append(f"- and {len(listed) - FORFEITS_LISTED} more (`forfeits` in "
                         f"{RESULTS})")
    return "\n".join(lines)


def _write_times_csv(stats: list[TimeStats], path: Path) -> Path:
    return _write_csv(path, ["agent", "decisions", "mean_ms", "p95_ms", "max_ms", "forfeits",
                             "forfeit_kinds"],
                      ([t.name, t.decisions, f"{t.mean_ms:.4f}", f"{t.p95_ms:.4f}",
                        f"{t.max_ms:.4f}", sum(t.forfeits.values()),
                        " ".join(f"{k}:{n}" for k, n in sorted(t.forfeits.items()))]
                       for t in stats))


# -- report files ------------------------------------------------------------------------

def _write_csv(path: Path, header: list[str], rows) -> Path:
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def _write_agents_csv(stats: list[AgentStats], path: Path) -> Path:
    return _write_csv(path, ["agent", "tables", "deals", "hands", "points", "points_lo",
                             "points_hi", "rank", "rank_lo", "rank_hi", "rough_ci"],
                      ([a.name, a.tables, a.deals, a.hands, f"{a.points:.3f}",
                        f"{a.points_lo:.3f}", f"{a.points_hi:.3f}", f"{a.rank:.4f}",
                        f"{a.rank_lo:.4f}", f"{a.rank_hi:.4f}", int(a.rough)] for a in stats))


def _run_manifest(out: Path) -> dict:
    manifest = read_manifest(out)
    if manifest is None:
        raise RunFolderError(f"{out} has no {MANIFEST}: write the report into the folder "
                             f"run_tournament played into")
    return manifest


def write_report(pairs, ratings, out_dir, agent_stats: list[AgentStats] | None = None,
                 tail: str = "") -> dict:
    """Write the two-seat report, ``report.md``, ``pairs.csv``, ``ratings.csv``,
    ``ratings.png`` and with ``agent_stats`` the agent table and ``agents.csv``, into the
    run folder ``out_dir``, each naming the run's settings from its ``manifest.json`` (the
    CSVs' sidecar); ``tail`` ends the report; returns the paths."""
    out = Path(out_dir)
    manifest = _run_manifest(out)
    body = markdown_table(pairs, ratings)
    if agent_stats:
        body += "\n\n" + agent_table(agent_stats, 2)
    if tail:
        body += "\n\n" + tail
    (out / "report.md").write_text(markdown_header(manifest) + "\n\n" + body + "\n")
    most = max((p.deals for p in pairs), default=0)
    paths = {"report": out / "report.md",
             "pairs": _write_csv(out / "pairs.csv", [
                 "a", "b", "deals", "margin", "margin_lo", "margin_hi", "win_rate", "win_lo",
                 "win_hi", "better", "fewer_deals", "rough_margin_ci"],
                 ([p.a, p.b, p.deals, f"{p.margin:.3f}", f"{p.margin_lo:.3f}",
                   f"{p.margin_hi:.3f}", f"{p.win_rate:.4f}", f"{p.win_lo:.4f}",
                   f"{p.win_hi:.4f}", p.better or "not resolved", int(p.deals < most),
                   int(p.rough)] for p in pairs)),
             "ratings": _write_csv(out / "ratings.csv", [
                 "agent", "rating", "lo", "hi", "no_interval", "above_next"],
                 ([s.name, f"{s.rating:.1f}", "" if s.na else f"{s.lo:.1f}",
                   "" if s.na else f"{s.hi:.1f}", s.na, s.above_next] for s in ratings))}
    if agent_stats:
        paths["agents"] = _write_agents_csv(agent_stats, out / "agents.csv")
    paths["manifest"] = out / MANIFEST
    try:
        paths["plot"] = plot(pairs, ratings, out / "ratings.png", manifest)
    except ImportError:  # matplotlib is optional (the 'analysis' extra)
        pass
    return paths


def write_table_report(tables: list[TableStats], skills: list[SkillStats],
                       agent_stats: list[AgentStats], out_dir, no_ratings: str = "",
                       tail: str = "") -> dict:
    """Write the report of a run with more than two seats, ``report.md``, ``agents.csv``,
    ``tables.csv``, ``ratings.csv`` and ``ratings.png``, into the run folder ``out_dir``
    (``manifest.json`` is the CSVs' sidecar); ``tail`` ends the report; returns the paths."""
    out = Path(out_dir)
    manifest = _run_manifest(out)
    seats = manifest_seats(manifest)
    (out / "report.md").write_text("\n\n".join([
        markdown_header(manifest), agent_table(agent_stats, seats),
        markdown_tables(tables, skills, no_ratings), *([tail] if tail else [])]) + "\n")
    paths = {"report": out / "report.md",
             "agents": _write_agents_csv(agent_stats, out / "agents.csv"),
             "tables": _write_csv(out / "tables.csv", [
                 "table", "deals", "agent", "seats", "points", "points_lo", "points_hi",
                 "rank", "rank_lo", "rank_hi", "ahead_of_next", "rough_ci"],
                 ([" ".join(t.table), t.deals, e.name, e.seats, f"{e.points:.3f}",
                   f"{e.points_lo:.3f}", f"{e.points_hi:.3f}", f"{e.rank:.4f}",
                   f"{e.rank_lo:.4f}", f"{e.rank_hi:.4f}", e.ahead, int(t.rough)]
                  for t in tables for e in t.entries)),
             "ratings": _write_csv(out / "ratings.csv", [
                 "agent", "mu", "sigma", "ordinal", "mu_lo", "mu_hi", "above_next"],
                 ([s.name, f"{s.mu:.3f}", f"{s.sigma:.3f}", f"{s.ordinal:.3f}",
                   f"{s.mu_lo:.3f}", f"{s.mu_hi:.3f}", s.above_next] for s in skills)),
             "manifest": out / MANIFEST}
    try:
        paths["plot"] = plot_tables(skills, agent_stats, out / "ratings.png", manifest)
    except ImportError:  # matplotlib is optional (the 'analysis' extra)
        pass
    return paths


def report_run(rows, out_dir, *, n_boot: int = 2000, skill_boot: int = 200, seed: int = 0) -> dict:
    """Summarise ``rows`` of the run in ``out_dir`` and write its report files, for any seat
    count (the manifest says which), the decision times and forfeits (``times.csv``)
    included; returns the paths. Rows are put in one canonical order first, so the
    bootstrap intervals do not depend on the order in which workers finished them."""
    out = Path(out_dir)
    rows = sorted(rows, key=row_key)
    manifest = _run_manifest(out)
    agents = manifest["settings"]["agents"]
    stats = agent_summary(rows, agents, n_boot=n_boot, seed=seed)
    times = time_summary(rows, agents)
    tail = time_table(times, rows, manifest)
    if manifest_seats(manifest) == 2:
        paths = write_report(*summarise(rows, agents, n_boot=n_boot, seed=seed), out,
                             agent_stats=stats, tail=tail)
    else:
        tables = summarise_tables(rows, agents, n_boot=n_boot, seed=seed)
        try:
            skills, why = skill_ratings(rows, agents, n_boot=skill_boot, seed=seed), ""
        except ImportError:
            skills, why = [], ("No ratings: Plackett-Luce ratings need openskill "
                               "(pip install 'mountain-rummy-env[analysis]').")
        paths = write_table_report(tables, skills, stats, out, no_ratings=why, tail=tail)
    paths["times"] = _write_times_csv(times, out / "times.csv")
    return paths


# -- plots -------------------------------------------------------------------------------

def _title(manifest: dict) -> str:
    s = manifest["settings"]
    last = manifest["sessions"][-1]
    seats = manifest_seats(manifest)
    return (f"Tournament: {s['variant']}, {s['schedule']}"
            + (f", {seats} seats, {s.get('rotations', 'cyclic')} rotations" if seats > 2 else "")
            + f", deals {_deal_counts(manifest)}, seed {s['seed']}\n{', '.join(s['agents'])} | "
            f"{last['date']}, commit {last['git_commit'][:12]}")


def _interval_rows(ax, values, lows, highs, labels):
    """Points with horizontal 95% bars, the first value on top. A percentile bootstrap
    interval may miss its own point estimate: it is drawn from the point to the interval's
    ends, never as a negative bar (matplotlib refuses those)."""
    m = np.asarray(values, dtype=float)[::-1]
    bars = np.clip([m - np.asarray(lows)[::-1], np.asarray(highs)[::-1] - m], 0, None)
    ax.errorbar(m, range(len(m)), xerr=bars, fmt="o", capsize=4, color="C0")
    ax.set_yticks(range(len(m)), list(labels)[::-1])
    ax.margins(x=0.2, y=0.15)


def plot_tables(skills, agent_stats, path, manifest):
    """Plackett-Luce mu and agents' points per hand, each with its 95% interval."""
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    fig = Figure(figsize=(12, 5))
    fig.suptitle(_title(manifest), fontsize=10)
    axes = fig.subplots(1, 2)
    if skills:
        _interval_rows(axes[0], [s.mu for s in skills], [s.mu_lo for s in skills],
                       [s.mu_hi for s in skills], [s.name for s in skills])
    axes[0].set_xlabel("Plackett-Luce mu, 95% bootstrap CI over deals")
    axes[0].set_title("Ratings")
    _interval_rows(axes[1], [a.points for a in agent_stats], [a.points_lo for a in agent_stats],
                   [a.points_hi for a in agent_stats], [a.name for a in agent_stats])
    axes[1].set_xlabel("mean hand points per hand, 95% CI")
    axes[1].set_title("Agents (duplicate deals)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return Path(path)


def plot(pairs, ratings, path, manifest):
    from matplotlib.figure import Figure  # no pyplot: leaves the caller's backend alone

    fig = Figure(figsize=(12, 5))
    fig.suptitle(_title(manifest), fontsize=10)
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
