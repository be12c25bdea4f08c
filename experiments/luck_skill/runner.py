"""Data collection for the luck/skill study: duplicate deals, self-play and full games,
in parallel (local processes, or Ray with ``ray`` set: :mod:`experiments.ray_runner`),
resumable (one JSON line per finished job in ``results.jsonl``).

Job kinds (``kind`` field of a row):

* ``pair``: deal ``deal`` played once per seat by ``a`` in one seat and ``b`` in every
  other, ``a`` in seat r in play r (two seats: the seat swap; the ladder round robin and the
  clairvoyance matches). With more than two seats both directions are jobs: ``a`` against a
  field of ``b`` and ``b`` against a field of ``a``;
* ``self``: deal ``deal`` played by the same agent spec in every seat, once per seat (the
  agent's random stream differs between the plays, so a stochastic agent does not replay
  itself);
* ``game``: one full game (``episode="game"``), ``a`` and ``b`` in alternate seats, to count
  hands.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import multiprocessing as mp
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from experiments.tournament import load_results, result_sink

DEFAULT_LADDER = ("random", "greedy", "rules", "search:budget=8", "search:budget=32")


@dataclass
class LuckSkillConfig:
    variants: list[str] = field(default_factory=lambda: ["mountain", "gin"])
    ladder: list[str] = field(default_factory=lambda: list(DEFAULT_LADDER))
    deals: int = 400                  # deals per ladder pair without a search agent
    search_deals: int = 100           # deals per pair with a search/clairvoyant agent
    self_agents: list[str] = field(default_factory=lambda: ["random", "search:budget=8"])
    self_deals: int = 200             # deals per self-play agent
    clair_budget: int | None = None   # None: the largest search budget on the ladder
    clair_deals: int | None = None    # None: search_deals
    games: int = 40                   # full games (episode="game") to count hands per game
    game_agents: tuple[str, str] = ("rules", "rules")
    seed: int = 0
    workers: int = 2
    job_timeout: float = 600.0        # seconds; a job past it is killed and recorded as failed
    ray: str | None = None            # play on Ray at this address (experiments.ray_runner)
    variant_options: dict = field(default_factory=dict)   # {variant: {option: value}}
    precision: float | None = None    # 95% half-width target, a share of the hand SD (None: fixed)
    max_deals: int = 4000             # the deals a pairing may reach under ``precision``
    aivat: str = ""                   # chance correction's value function ("": off; .aivat)

    @classmethod
    def quick(cls, **kw) -> "LuckSkillConfig":
        base = dict(deals=30, search_deals=10, self_deals=30, games=8, job_timeout=180.0)
        base.update(kw)
        return cls(**base)

    # -- derived -------------------------------------------------------------------------

    def search_budgets(self) -> list[int]:
        out = []
        for spec in self.ladder:
            name, _, rest = spec.partition(":")
            if name == "search":
                params = dict(p.split("=", 1) for p in rest.split(",") if "=" in p)
                out.append(int(params.get("budget", 200)))
        return out

    def clairvoyance_specs(self) -> tuple[str, str] | None:
        """(clairvoyant spec, matching search spec on the ladder) or None."""
        budgets = self.search_budgets()
        budget = self.clair_budget if self.clair_budget is not None else (max(budgets) if budgets else None)
        if budget is None:
            return None
        search = next((s for s in self.ladder if s.startswith("search") and
                       f"budget={budget}" in s), f"search:budget={budget}")
        return f"clairvoyant:budget={budget}", search

    # A study column is a variant name (``german``: its options, else its default table) or
    # a variant at a table size (``german@2``: German Rummy at 2 seats, the like-for-like
    # secondary comparison with Mountain); rows, results and report columns are per column.

    @staticmethod
    def variant_of(column: str) -> str:
        """The variant a study column plays (``german@2`` -> ``german``)."""
        return column.partition("@")[0]

    def options_for(self, column: str) -> dict:
        """The rules options of a study column: its own, else its variant's, with the table
        size of ``variant@N`` on top."""
        name, _, seats = column.partition("@")
        opts = dict(self.variant_options.get(column, self.variant_options.get(name, {})))
        if seats:
            opts["num_players"] = int(seats)
        return opts

    def seats(self, column: str) -> int:
        """The table size the study plays ``column`` at (its options, else its default)."""
        from mountain_rummy_env.registry import make_variant

        return make_variant(self.variant_of(column), **self.options_for(column)).num_players

    def jobs(self, variant: str, agents: list[str], deals_for: dict | None = None) -> list[tuple]:
        """Jobs for ``variant`` with the supported agents ``agents`` (ladder subset, plus
        the clairvoyant if supported); ``deals_for[(a, b)]`` overrides a ladder pairing's
        number of deals (the precision rule's blocks, :func:`more_deals`)."""
        slow = ("search", "clairvoyant")
        ladder = [a for a in self.ladder if a in agents]
        out = []
        pairs = (itertools.combinations(ladder, 2) if self.seats(variant) == 2
                 else itertools.permutations(ladder, 2))
        for a, b in pairs:
            n = self.search_deals if any(x.startswith(slow) for x in (a, b)) else self.deals
            n = (deals_for or {}).get((a, b), n)
            out += [("pair", a, b, self.seed + k) for k in range(n)]
        cs = self.clairvoyance_specs()
        if cs and cs[0] in agents and cs[1] in agents:
            n = self.clair_deals or self.search_deals
            pair = ("pair", cs[0], cs[1])
            have = {(j[1], j[2]) for j in out}
            if (cs[0], cs[1]) not in have:
                out += [pair + (self.seed + k,) for k in range(n)]
        for spec in self.self_agents:
            if spec in agents:
                out += [("self", spec, spec, self.seed + k) for k in range(self.self_deals)]
        ga, gb = self.game_agents
        if ga in agents and gb in agents:
            out += [("game", ga, gb, self.seed + k) for k in range(self.games)]
        return out


# -- the worker side ---------------------------------------------------------------------

_CACHE: dict = {}


def _agent_seed(base: int, deal: int, spec: str, seat: int, play: int) -> list[int]:
    h = int.from_bytes(hashlib.sha256(spec.encode()).digest()[:4], "little")
    return [base, deal, h, seat, play]


def _variant(name: str, options: dict, whole_game: bool):
    """The variant (one hand or round an episode, its default; or ``whole_game``) and a Game."""
    from mountain_rummy_env import Game
    from mountain_rummy_env.registry import make_variant

    opts = dict(options)
    if whole_game:
        opts["episode"] = "game"
    key = (name, json.dumps(opts, sort_keys=True))
    if key not in _CACHE:
        variant = make_variant(name, **opts)
        _CACHE[key] = (variant, Game(variant, 1))
    return _CACHE[key]


def _make(spec: str, seed):
    from agents import make_agent
    from . import clairvoyant  # noqa: F401  (registers 'clairvoyant')

    return make_agent(spec, seed=seed)


def play_duplicate(variant_name: str, options: dict, base_seed: int, a: str, b: str,
                   deal: int) -> dict:
    """Deal ``deal`` played once per seat, ``a`` in seat r and ``b`` in the others in play r
    (same deck order and dealer; two seats: ``a`` in seat 0, then ``b``). Returns the hands
    with seat-ordered points and winners, and the actions played (to replay a hand:
    :mod:`.aivat`)."""
    from experiments.play import play_hand

    variant, game = _variant(variant_name, options, False)
    game.reset(seed=deal)
    deck = game.states[0]["deck"].copy()
    seats = variant.num_players
    dealer = deal % seats
    hands = []
    for play in range(seats):
        order = [a if seat == play else b for seat in range(seats)]
        agents = [_make(spec, _agent_seed(base_seed, deal, spec, seat, play))
                  for seat, spec in enumerate(order)]
        actions: list[int] = []
        r = play_hand(game, agents, seed=deal, deck=deck, dealer=dealer, actions=actions)
        hands.append({"seats": list(order), "points": [int(p) for p in r.hand_points],
                      "winner": int(r.winner), "end": r.end, "ender": int(r.ender),
                      "steps": int(r.steps), "actions": actions})
    return {"hands": hands, "dealer": int(dealer)}


def play_game(variant_name: str, options: dict, base_seed: int, a: str, b: str, deal: int,
              *, max_hands: int = 300) -> dict:
    """One full game (``episode='game'``), ``a`` in the even seats and ``b`` in the odd ones;
    counts hands."""
    from mountain_rummy_env import player_view
    from mountain_rummy_env.core.state import EVENT_NONE

    variant, game = _variant(variant_name, options, True)
    game.reset(seed=deal, dealer=deal % variant.num_players)
    agents = [_make(spec, _agent_seed(base_seed, deal, spec, seat, 9))
              for seat, spec in enumerate((a, b) * variant.num_players)][:variant.num_players]
    for ag in agents:
        ag.reset()
    hands = []
    while not game.done(0) and len(hands) < max_hands:
        p = game.current_player(0)
        event = game.step_one(0, int(agents[p].act(player_view(game, 0, p), game.masks[0])))
        if event != EVENT_NONE:
            h = game.summary(0)
            hands.append([int(v) for v in h.hand_points])
            for ag in agents:
                ag.reset()
    s = game.states[0]
    return {"hand_points": hands, "num_hands": len(hands),
            "scores": [int(v) for v in s["scores"]], "game_winner": int(s["game_winner"]),
            "finished": bool(game.done(0))}


def run_job(args) -> dict:
    variant, options, base_seed, job = args
    kind, a, b, deal = job
    row = {"kind": kind, "variant": variant, "options": options, "a": a, "b": b,
           "deal": deal, "seed": base_seed}
    if kind in ("pair", "self"):
        row.update(play_duplicate(variant, options, base_seed, a, b, deal))
    elif kind == "game":
        row.update(play_game(variant, options, base_seed, a, b, deal))
    else:  # pragma: no cover
        raise ValueError(f"unknown job kind {kind!r}")
    return row


def _child(conn, a, fn):
    try:
        conn.send(("ok", fn(a)))
    except BaseException as err:  # noqa: BLE001 - reported to the parent as a failed job
        conn.send(("error", f"{type(err).__name__}: {err}"))
    finally:
        conn.close()


def run_job_recorded(a) -> dict:
    """:func:`run_job`, a job that raises recorded as a failed row (as :func:`run_jobs` does)."""
    try:
        return run_job(a)
    except Exception as err:  # noqa: BLE001 - recorded in the row, the study goes on
        return _failed_row(a, f"{type(err).__name__}: {err}")


def _failed_row(a, why: str) -> dict:
    variant, options, base_seed, (kind, x, y, deal) = a
    return {"kind": kind, "variant": variant, "options": options, "a": x, "b": y,
            "deal": deal, "seed": base_seed, "error": why}


def run_jobs(args, sink, *, workers: int = 2, timeout: float = 600.0, fn=None,
             failed=_failed_row) -> None:
    """Run each job (``fn(a)`` for each ``a`` in ``args``; by default :func:`run_job`, looked
    up when called) in its own forked process, at most ``workers`` at a time; a job that runs
    past ``timeout`` seconds (an engine or agent that loops inside compiled code cannot be
    interrupted otherwise) is killed and recorded with an ``error`` field (``failed(a,
    why)``), as is a job that raises. ``sink(row)`` gets every row as it finishes."""
    import time

    fn = run_job if fn is None else fn
    if os.name != "posix":  # pragma: no cover - no fork: run in this process
        for a in args:
            sink(fn(a))
        return
    ctx = mp.get_context("fork")
    pending = list(reversed(args))
    running = {}   # process -> (conn, job args, start time)
    while pending or running:
        while pending and len(running) < max(1, workers):
            a = pending.pop()
            parent, child = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_child, args=(child, a, fn), daemon=True)
            proc.start()
            child.close()
            running[proc] = (parent, a, time.monotonic())
        for proc, (conn, a, t0) in list(running.items()):
            row = None
            if conn.poll():
                try:
                    status, payload = conn.recv()
                    row = payload if status == "ok" else failed(a, payload)
                except EOFError:
                    row = failed(a, f"worker died (exit code {proc.exitcode})")
            elif not proc.is_alive():
                row = failed(a, f"worker died (exit code {proc.exitcode})")
            elif time.monotonic() - t0 > timeout:
                proc.kill()
                row = failed(a, f"timeout after {timeout:.0f} s")
            if row is not None:
                proc.join(timeout=5)
                conn.close()
                del running[proc]
                sink(row)
        time.sleep(0.02)


# -- variant / agent support --------------------------------------------------------------

def variant_available(name: str, options: dict | None = None) -> tuple[bool, str]:
    """Whether ``make_variant(name, **options)`` works here; (ok, reason)."""
    try:
        from mountain_rummy_env.registry import make_variant

        make_variant(name, **(options or {}))
        return True, ""
    except Exception as err:  # noqa: BLE001 - any failure means "not available"
        return False, f"{type(err).__name__}: {err}"


def agent_supported(variant: str, options: dict, spec: str, seed: int = 0) -> tuple[bool, str]:
    """Probe: can ``spec`` play a hand of ``variant`` (against ``random``)? (ok, reason)."""
    try:
        play_duplicate(variant, options, seed, spec, "random", 10_000 + seed)
        return True, ""
    except Exception as err:  # noqa: BLE001
        return False, f"{type(err).__name__}: {err}"


# -- the driver ----------------------------------------------------------------------------

def _key(row_or_job, variant=None, options=None, seed=None):
    if isinstance(row_or_job, dict):
        r = row_or_job
        return (r["variant"], json.dumps(r.get("options", {}), sort_keys=True), r["seed"],
                r["kind"], r["a"], r["b"], r["deal"])
    kind, a, b, deal = row_or_job
    return (variant, json.dumps(options, sort_keys=True), seed, kind, a, b, deal)


def more_deals(cfg: LuckSkillConfig, rows, deals_for: dict) -> dict:
    """The precision rule's next blocks (docs/luck_skill.md, "Precision"): every ladder
    pairing whose 95% half-width is wider than ``cfg.precision`` times the single-hand SD
    of results gets the deals its spread says it needs (at least one more, at most double
    what it has, never past ``cfg.max_deals``). ``{(a, b): deals}``; empty when all are done."""
    from .analysis import pair_data, pair_precision

    pairs = pair_data(rows, "pair")
    sd, half = pair_precision(pairs)
    if not np.isfinite(sd) or sd == 0:
        return {}
    target = cfg.precision * sd
    out = {}
    for key, d in pairs.items():
        have = max(deals_for.get(key, 0), d.n)
        if half[key] <= target or have >= cfg.max_deals:
            continue
        needed = int(np.ceil(have * (half[key] / target) ** 2)) if np.isfinite(half[key]) \
            else 2 * have
        out[key] = int(min(cfg.max_deals, 2 * have, max(needed, have + 1)))
    return out


def collect(cfg: LuckSkillConfig, variant: str, agents: list[str], out_dir, *,
            resume: bool = True, progress: bool = True, max_jobs: int | None = None) -> list[dict]:
    """Play the missing jobs of ``variant`` into ``out_dir/results.jsonl``; returns all rows
    of this configuration for the variant. With ``cfg.precision`` the ladder pairings are
    played in blocks until the precision rule is met (:func:`more_deals`); a rerun
    resumes there, since the blocks follow from the rows on file."""
    deals_for: dict = {}
    while True:
        rows = _collect_once(cfg, variant, agents, out_dir, deals_for, resume=resume,
                             progress=progress, max_jobs=max_jobs)
        more = more_deals(cfg, rows, deals_for) if cfg.precision else {}
        if not more or max_jobs is not None:
            return rows
        deals_for.update(more)


def _collect_once(cfg, variant, agents, out_dir, deals_for, *, resume, progress, max_jobs):
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.jsonl"
    options, name = cfg.options_for(variant), cfg.variant_of(variant)
    jobs = cfg.jobs(variant, agents, deals_for)
    have = {_key(r) for r in load_results(path)}
    todo = [j for j in jobs if _key(j, name, options, cfg.seed) not in have]
    # slow jobs first so the pool's tail is short
    todo.sort(key=lambda j: 0 if any(x.startswith(("search", "clairvoyant")) for x in j[1:3]) else 1)
    if max_jobs is not None:
        todo = todo[:max_jobs]
    args = [(name, options, cfg.seed, j) for j in todo]
    with result_sink(path, len(todo), desc=f"{variant} jobs", unit="job",
                     progress=progress) as sink:
        if cfg.ray is not None:
            from experiments.ray_runner import run_on_ray

            run_on_ray(run_job_recorded, args, sink, address=cfg.ray, num_cpus=cfg.workers,
                       chunk_size=1, timeout=cfg.job_timeout, timeout_row=_failed_row)
            # one job a chunk: a job past its time fails alone, as locally
        else:
            run_jobs(args, sink, workers=cfg.workers, timeout=cfg.job_timeout)
    wanted = {_key(j, name, options, cfg.seed) for j in jobs}
    seen = set()
    rows = []
    for r in load_results(path):
        k = _key(r)
        if k in wanted and k not in seen:
            seen.add(k)
            rows.append(r)
    return rows


def stored_rows(cfg: LuckSkillConfig, variant: str, out_dir) -> list[dict]:
    """The rows of ``out_dir/results.jsonl`` that belong to this configuration (any agent;
    with ``cfg.precision`` any number of deals per ladder pairing)."""
    options, name = cfg.options_for(variant), cfg.variant_of(variant)
    agents = {x for j in cfg.jobs(variant, _all_specs(cfg)) for x in j[1:3]}
    deals_for = None
    if cfg.precision:
        deals_for = {(a, b): cfg.max_deals for a in agents for b in agents}
    wanted = {_key(j, name, options, cfg.seed)
              for j in cfg.jobs(variant, sorted(agents), deals_for)}
    seen, rows = set(), []
    for r in load_results(Path(out_dir) / "results.jsonl"):
        k = _key(r)
        if k in wanted and k not in seen:
            seen.add(k)
            rows.append(r)
    return rows


def _all_specs(cfg: LuckSkillConfig) -> list[str]:
    cs = cfg.clairvoyance_specs()
    return list(dict.fromkeys(list(cfg.ladder) + list(cfg.self_agents) + list(cfg.game_agents)
                              + ([cs[0]] if cs else [])))


def config_dict(cfg: LuckSkillConfig) -> dict:
    return asdict(cfg)
