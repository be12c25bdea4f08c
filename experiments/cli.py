"""``mountain-rummy``: tournaments, head-to-head play and game-record replay.

    mountain-rummy tournament                      # default agents, prints the table
    mountain-rummy play                            # play a hand at the terminal
    mountain-rummy play --variant german --agents rules   # you and three rules players
    mountain-rummy replay game.json                # replay a saved record
    mountain-rummy serve --agents rules            # play in the browser at a local web table
    mountain-rummy agents                          # list the agent specs
    mountain-rummy variants                        # list the games and their options
    mountain-rummy selfplay-ppo --variant gin      # train a policy (fast self-play PPO)
    mountain-rummy expert-iteration                # train a network on the guided search
    mountain-rummy belief-net                      # train the search's belief network
"""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from pathlib import Path


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def _nonneg(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {value}")
    return value


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, got {text}")
    return value


def _seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text}")
    return value


def _seats(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a seat count of 2 or more, got {text!r}") from None
    if value < 2:
        raise argparse.ArgumentTypeError(f"expected a seat count of 2 or more, got {value}")
    return value


def _port(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number 0..65535, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0..65535, got {value}")
    return value


def _seat(text):
    """``--seat``: a seat number, or ``none`` (no human seat: agents in every seat)."""
    if text.strip().lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a seat number or 'none', got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a seat number (0, 1, ...) or 'none', got {value}")
    return value


def _options(text):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise argparse.ArgumentTypeError(f"--options must be a JSON object: {err}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("--options must be a JSON object, e.g. '{\"num_jokers\": 1}'")
    return value


def _ray_argument(parser) -> None:
    """``--ray [ADDRESS]``: play on Ray (experiments.ray_runner, docs/scaling.md)."""
    parser.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS",
                        help="play on Ray instead of local processes: alone, a Ray instance "
                             "on this machine with --workers CPUs; 'auto' the cluster this "
                             "machine joined; HOST:PORT or ray://HOST:PORT a cluster's head "
                             "(docs/scaling.md). Same rows as a local run; needs "
                             "pip install -e \".[ray]\"")


def build_parser() -> argparse.ArgumentParser:
    from experiments.tournament import DEFAULT_AGENTS, ROTATIONS, SCHEDULES
    from mountain_rummy_env.registry import DEFAULT_VARIANT, VARIANTS

    variants = list(VARIANTS)
    variant_help = ("game to play: " + ", ".join(f"{name} ({info.title})" for name, info in VARIANTS.items())
                    + " (default: %(default)s)")
    targets = ", ".join(f"{info.option_defaults()['target_score']} {info.title}"
                        for info in VARIANTS.values() if "target_score" in info.option_defaults())
    seat_counts = ", ".join(
        f"{name} {info.num_players[0]}" if len(info.num_players) == 1 else
        f"{name} {info.option_defaults()['num_players']} of "
        f"{info.num_players[0]}-{info.num_players[-1]}" for name, info in VARIANTS.items())
    players_help = f"the variant's num_players option (default: the variant's own: {seat_counts})"

    parser = argparse.ArgumentParser(
        prog="mountain-rummy", description=", ".join(info.title for info in VARIANTS.values())
        + ": tournaments, play and replays.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def choices(named):
        return "".join(textwrap.fill(text, 78, initial_indent=f"  {name:13s}",
                                     subsequent_indent=" " * 15) + "\n"
                       for name, text in named.items())

    t = sub.add_parser(
        "tournament", help="round-robin or ladder of agents on duplicate deals",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Agents play each other on duplicate deals (each deal played twice with the\n"
                    "seats swapped, so the luck of the cards cancels out). Prints the report and\n"
                    "writes it to a folder of its own. With N seats (--players, e.g. German for\n"
                    "2-6) tables of N agents play each deal once per rotation of their seats.",
        epilog="schedules:\n" + choices(SCHEDULES) + "\nrotations (--rotations):\n"
        + choices(ROTATIONS) +
        "\nseats: --players N sets the variant's num_players option; a variant without it\n"
        "(mountain, gin: 2 seats) accepts only its own count. A table seats each listed\n"
        "agent once; to seat an agent twice list it twice: --players 4 --agents random\n"
        "random greedy greedy is one table of two random and two greedy agents.\n"
        "\noutputs (in --out):\n"
        "  manifest.json  the settings; date, command, version, commit of each session\n"
        "  results.jsonl  one line per finished deal (a rerun plays only missing deals)\n"
        "  report.md      the settings, then the pair (2 seats) or table results, the\n"
        "                 agents' points and ranks, and the ratings with their marks\n"
        "  pairs.csv or tables.csv, agents.csv, ratings.csv, ratings.png, times.csv\n"
        "                 the same tables as data and as a plot\n"
        "\nagents: a registered name (mountain-rummy agents), an installed package's\n"
        "agent, a class as module.path:Name[:key=value,...], or a program speaking JSON\n"
        "lines as \"proc:COMMAND\" (docs/your_agent.md). Every decision is timed; an agent\n"
        "that crashes, answers late (--move-limit, --hand-limit), garbage or an illegal\n"
        "move forfeits that hand and a random stand-in plays its seat on.")
    t.add_argument("--agents", nargs="+", default=list(DEFAULT_AGENTS), metavar="SPEC",
                   help="agent specs, space separated (default: %(default)s)")
    t.add_argument("--variant", choices=variants, default=DEFAULT_VARIANT, help=variant_help)
    t.add_argument("--players", type=_seats, default=None, metavar="N",
                   help=f"seats per table: {players_help}")
    t.add_argument("--rotations", choices=list(ROTATIONS), default="cyclic",
                   help="seat orders each deal is played in, see below (default: %(default)s; "
                        "'all' up to 4 seats)")
    t.add_argument("--schedule", choices=list(SCHEDULES), default="round-robin",
                   help="which pairs (tables) play, see below (default: %(default)s)")
    t.add_argument("--deals", type=_positive, default=60,
                   help="deals per pair (table) (default: 60)")
    t.add_argument("--search-deals", type=_nonneg, default=8,
                   help="deals for pairs (tables) with a search agent; 0 = same as --deals "
                        "(default: 8)")
    t.add_argument("--workers", type=_positive, default=2, help="worker processes (default: 2)")
    _ray_argument(t)
    t.add_argument("--out", default=None,
                   help="output folder (default: runs/tournament/VARIANT[-Nseats]-SCHEDULE-HASH, "
                        "where HASH names the variant, rules options, agents, schedule, seed "
                        "and rotations, so each such run has its own folder); a folder holding "
                        "another run is refused")
    t.add_argument("--seed", type=_nonneg, default=0, help="first deal seed (default: 0)")
    t.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                   help="when --out holds this same run (same variant, rules options, agents, "
                        "schedule, seed and rotations; deal counts may grow), play only its missing deals "
                        "(default: on; --no-resume replays it from scratch)")
    t.add_argument("--options", type=_options, default={},
                   help="variant options as JSON, e.g. '{\"num_jokers\": 1}' (the options: "
                        "mountain-rummy variants)")
    t.add_argument("--move-limit", type=_seconds, default=None, metavar="SECONDS",
                   help="seconds an agent may take per decision, else it forfeits the hand "
                        "(default: no limit)")
    t.add_argument("--hand-limit", type=_seconds, default=None, metavar="SECONDS",
                   help="seconds an agent may take for its decisions in one hand, else it "
                        "forfeits the hand (default: no limit)")
    t.add_argument("--time-per-move", type=_seconds, default=None, metavar="SECONDS",
                   help="ask every agent that can size its effort by time (search agents; "
                        "programs are told) to spend this long per decision: comparisons at "
                        "equal time (default: each plays by its own settings)")
    t.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = sub.add_parser(
        "play", help="play a hand or a game against agents (or watch agents play)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="You play at --seat against an agent in every other seat, and the log is\n"
                    "printed as play goes. The log and your prompts name only the cards your\n"
                    "seat may know (the other seats' hand sizes and the cards they took from\n"
                    "the discard pile, 'P1: draw stock' without the card, face-down cards\n"
                    "hidden) until the end-of-hand reveal; the saved --record holds everything.\n"
                    "If input ends or play is interrupted, --record keeps the unfinished game.",
        epilog="seats: --players N sets the seat count. --agents lists one agent per other\n"
               "seat in seat order (with --seat 1 of 4: seats 0, 2 and 3), or one agent for\n"
               "all of them. 'human' in --agents seats another person (hot seat: the log then\n"
               "shows only public cards, each prompt its own seat's hand). --seat none seats\n"
               "agents only (one per seat, or one for all) and prints every card.\n"
               "\nexamples:\n"
               "  mountain-rummy play --agents rules              you (seat 0) against rules\n"
               "  mountain-rummy play --variant german --seat 2 --agents rules greedy search\n"
               "  mountain-rummy play --variant german --players 3 --agents greedy\n"
               "  mountain-rummy play --seat none --agents rules greedy --record game.json")
    p.add_argument("--seat", type=_seat, default=0, metavar="K",
                   help="your seat, 0..N-1, or none for agents only (default: 0)")

    def table_args(parser, seed_help):
        """The options ``play`` and ``serve`` share: the game, its seats and the agents."""
        parser.add_argument("--agents", nargs="+", default=["search:budget=200"], metavar="SPEC",
                            help="agent specs for the other seats in seat order, or one for all "
                                 "of them (default: %(default)s)")
        parser.add_argument("--players", type=_seats, default=None, metavar="N",
                            help=f"seats: {players_help}")
        parser.add_argument("--seed", type=_nonneg, default=None, help=seed_help)
        parser.add_argument("--game", action="store_true",
                            help="play a whole game instead of one hand: to the target score "
                                 "(german: a hand per seat as dealer)")
        parser.add_argument("--target", type=_positive, default=None,
                            help=f"target score of a --game (default: the variant's: {targets})")
        parser.add_argument("--variant", choices=variants, default=DEFAULT_VARIANT,
                            help=variant_help)
        parser.add_argument("--options", type=_options, default={},
                            help="variant options as JSON (the options: mountain-rummy variants)")

    table_args(p, "deal seed (default: random)")
    p.add_argument("--record", metavar="FILE", help="save the JSON game record here")
    p.add_argument("--reveal", action="store_true",
                   help="debugging: print every card (the other seats' hands and draws, "
                        "face-down cards) even when a human plays")

    r = sub.add_parser("replay", help="replay a saved JSON game record and print its log",
                       description="Replay a JSON game record; fails if it does not replay.")
    r.add_argument("file", help="game record (JSON) written by 'play --record'")
    r.add_argument("--html", metavar="OUT", default=None,
                   help="also write OUT: one self-contained HTML page that steps through the "
                        "game (slider, arrow keys, a view per seat or every card)")
    r.add_argument("--view", type=int, nargs="+", default=None, metavar="SEAT",
                   help="with --html: only these seats' views (default: every seat and the "
                        "view with every card)")

    w = sub.add_parser(
        "serve", help="play in the browser: a local web table against agents",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Serves a web table on this machine: open the address it prints, and play\n"
                    "at --seat against an agent in every other seat: the table drawn as your\n"
                    "seat sees it, your legal moves as buttons (click cards to narrow them), the\n"
                    "agents' moves one by one, the reveal and the scores at the end of the hand.\n"
                    "The browser is sent only what your seat may know (docs/web.md). Each page\n"
                    "opened is a table of its own; every finished game is saved in --records.\n"
                    "Needs the web extra: pip install 'mountain-rummy-env[web]'.",
        epilog="seats and agents as for play (one agent per other seat in seat order, or one\n"
               "for all of them); 'human' is not an agent here.\n"
               "\nexamples:\n"
               "  mountain-rummy serve --agents rules\n"
               "  mountain-rummy serve --variant german --seat 2 --agents rules greedy search\n"
               "  mountain-rummy serve --variant gin --agents search --hint search:budget=400\n"
               "  mountain-rummy serve --game --port 8080 --records my-games")
    w.add_argument("--seat", type=_nonneg, default=0, metavar="K", help="your seat, 0..N-1 "
                   "(default: 0)")
    table_args(w, "the first game's seed; each new game, at any table, takes the next "
                  "(default: random)")
    w.add_argument("--hint", metavar="SPEC", default=None,
                   help="an agent whose choice the hint button shows, e.g. search:budget=400 "
                        "(default: no hints)")
    w.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default: %(default)s, this machine only)")
    w.add_argument("--port", type=_port, default=8000,
                   help="port to listen on; 0 picks a free one (default: %(default)s)")
    w.add_argument("--records", metavar="DIR", default="runs/serve",
                   help="folder for the JSON record of every game, TABLE-GAME.json; an "
                        "unfinished game is saved when the server stops (default: %(default)s)")

    sub.add_parser("agents", help="list the agent specs and the shipped policies",
                   description="List the agent specs, and the policies shipped with the "
                               "package with the variant each plays.")
    sub.add_parser("variants", help="list the games, their seats and their options",
                   description="List the registered variants (the --variant choices): title, "
                               "seats, PettingZoo module, Gymnasium ids and every option with "
                               "its default.")
    add_luck_skill_parser(sub)
    # listed here for the help; main() hands its flags to the trainer's own parser
    sub.add_parser("selfplay-ppo", add_help=False,
                   help="train a policy with the fast self-play PPO trainer (its flags: "
                        "mountain-rummy selfplay-ppo --help; docs/training.md)")
    sub.add_parser("expert-iteration", add_help=False,
                   help="train a policy/value network on the network-guided search's choices "
                        "(its flags: mountain-rummy expert-iteration --help; docs/training.md)")
    sub.add_parser("belief-net", add_help=False,
                   help="train a belief network (which hidden cards the opponent holds) for "
                        "the search's samples (its flags: mountain-rummy belief-net --help; "
                        "docs/training.md)")
    return parser


def _check_table_agents(agents: list[str], seats: int, variant: str) -> None:
    """Refuse an agent list that cannot fill the tables: two seats need two different
    agents, each listed once; N seats need at least N listed (an agent listed twice may sit
    twice at a table)."""
    if seats == 2:
        if len(set(agents)) != len(agents) or len(agents) < 2:
            raise SystemExit("error: --agents needs at least two different agent specs")
    elif len(agents) < seats:
        raise SystemExit(f"error: {variant} with {seats} seats needs at least {seats} agents "
                         f"in --agents, got {len(agents)}; list an agent again to seat it "
                         f"again (e.g. --agents {' '.join((agents * seats)[:seats])})")


def _seated_variant(name: str, options: dict, players: int | None, what: str = "--options"):
    """``(options, variant)``: variant ``name`` with ``options`` for ``players`` seats (None:
    its own count; :func:`experiments.tournament.seat_options`), or a one-line error naming
    the bad setting (``what`` for the options)."""
    from experiments.tournament import seat_options
    from mountain_rummy_env.registry import make_variant

    try:
        make_variant(name, **options)
    except (ValueError, TypeError) as err:
        raise SystemExit(f"error: bad {what}: {err}")
    try:
        options = seat_options(name, dict(options), players)
        return options, make_variant(name, **options)
    except (ValueError, TypeError) as err:
        raise SystemExit(f"error: bad --players {players}: {err}")


def cmd_tournament(args) -> int:
    from agents import AgentSpecError, make_agent
    from experiments.tournament import (
        MAX_ALL_ORDERS_SEATS, RunFolderError, TournamentConfig, check_out_dir, report_run,
        run_tournament)
    from experiments.ray_runner import RayRunError

    options, variant = _seated_variant(args.variant, dict(args.options), args.players)
    seats = variant.num_players
    if args.rotations == "all" and seats > MAX_ALL_ORDERS_SEATS:
        raise SystemExit(f"error: --rotations all plays every seat order ({seats}! per deal); "
                         f"it is allowed up to {MAX_ALL_ORDERS_SEATS} seats, use cyclic")
    _check_table_agents(list(args.agents), seats, args.variant)
    for spec in dict.fromkeys(args.agents):
        try:
            make_agent(spec, variant=args.variant).check_options(variant)
        except ValueError as err:                 # AgentSpecError too
            raise SystemExit(f"error: {err}")
    cfg = TournamentConfig(agents=list(args.agents), deals=args.deals,
                           slow_deals=args.search_deals or None, seed=args.seed,
                           workers=args.workers, variant=args.variant, variant_options=options,
                           schedule=args.schedule, rotations=args.rotations,
                           move_limit=args.move_limit, hand_limit=args.hand_limit,
                           time_per_move=args.time_per_move, ray=args.ray)
    out = args.out or cfg.default_out()
    try:
        check_out_dir(cfg, out, resume=args.resume)
        print(f"tournament into {out} (its manifest.json states the settings)", flush=True)
        rows = run_tournament(cfg, out, resume=args.resume, progress=not args.no_progress)
    except (RunFolderError, RayRunError) as err:
        raise SystemExit(f"error: {err}")
    paths = report_run(rows, out)
    print(paths["report"].read_text())
    print(f"written: {', '.join(str(p) for p in paths.values())}")
    return 0


def _check_record_path(path) -> None:
    """Fail now, before any play, unless ``path`` can be written (a missing folder, a
    folder's name, no permission); a file this check creates is removed again."""
    from pathlib import Path

    target = Path(path)
    existed = target.exists()
    try:
        with open(target, "a"):
            pass
    except OSError as err:
        raise _cannot_write(path, err)
    if not existed:
        target.unlink()


def _log_viewer(specs: list[str], reveal: bool):
    """Whose knowledge the printed log keeps to: the human's seat; with two humans (hot
    seat) only what is public; with none, or ``--reveal``, everything (``None``)."""
    from agents import parse_spec
    from mountain_rummy_env.records import PUBLIC

    humans = [seat for seat, spec in enumerate(specs) if parse_spec(spec)[0] == "human"]
    if reveal or not humans:
        return None
    return humans[0] if len(humans) == 1 else PUBLIC


def _play_specs(agents: list[str], seat: int | None, seats: int, variant: str) -> list[str]:
    """Each seat's agent spec: ``human`` at ``seat`` (None: no human seat) and ``agents`` in
    the other seats in seat order, or one agent in all of them; a one-line error otherwise."""
    from mountain_rummy_env.registry import VARIANTS

    hint = "; --players sets the seat count" if len(VARIANTS[variant].num_players) > 1 else ""
    if seat is not None and seat >= seats:
        raise SystemExit(f"error: --seat {seat} is not a seat of {variant} with {seats} seats "
                         f"(0..{seats - 1}){hint}")
    others = [s for s in range(seats) if s != seat]
    if len(agents) == 1:
        agents = agents * len(others)
    if len(agents) != len(others):
        table = f"{variant} with {seats} seats" + ("" if seat is None else f", you at seat {seat},")
        needs = (f"one agent in --agents (for seat {others[0]})" if len(others) == 1 else
                 f"{len(others)} agents in --agents (seats {', '.join(map(str, others))} in "
                 f"order) or one for all of them")
        raise SystemExit(f"error: {table} needs {needs}, got {len(agents)}{hint}")
    specs = dict(zip(others, agents)) | ({} if seat is None else {seat: "human"})
    return [specs[s] for s in range(seats)]


def _table_variant(args):
    """The variant of ``play`` and ``serve``: ``--options``, ``--game``, ``--target`` and
    ``--players`` applied; a one-line error for a bad one."""
    from mountain_rummy_env.registry import VARIANTS

    options = dict(args.options)
    if args.game:
        options["episode"] = "game"            # else the variant's default: one hand (round)
    if args.target is not None:
        if "target_score" not in VARIANTS[args.variant].option_defaults():
            raise SystemExit(f"error: --target: {args.variant} has no target score")
        options["target_score"] = args.target
    return _seated_variant(args.variant, options, args.players, what="variant options")[1]


def cmd_play(args) -> int:
    from agents import AgentSpecError, make_agent
    from experiments.play import play_recorded
    from mountain_rummy_env.records import Recorder

    variant = _table_variant(args)
    specs = _play_specs(list(args.agents), args.seat, variant.num_players, args.variant)
    try:
        agents = [make_agent(spec, seed=None if args.seed is None else args.seed + seat,
                             variant=args.variant)
                  for seat, spec in enumerate(specs)]
    except AgentSpecError as err:
        raise SystemExit(f"error: {err}")
    if args.record:
        _check_record_path(args.record)
    seed = args.seed if args.seed is not None else int.from_bytes(__import__("os").urandom(4), "little")
    rec = Recorder(variant, seed, players=specs, viewer=_log_viewer(specs, args.reveal))
    try:
        play_recorded(rec, agents)
    except (EOFError, AgentSpecError, KeyboardInterrupt) as stop:
        print(rec.stop())
        kept = _save_record(rec, args.record)
        if isinstance(stop, KeyboardInterrupt):
            print(kept, file=sys.stderr)
            raise
        why = "input ended during play" if isinstance(stop, EOFError) else str(stop)
        raise SystemExit(f"error: {why}; {kept}")
    if args.record:
        print(_save_record(rec, args.record))
    return 0


def _save_record(rec, path) -> str:
    """Save the record to ``path`` (if given); says what was kept."""
    if not path:
        return "no record kept (no --record)"
    try:
        rec.record.save(path)
    except OSError as err:
        raise _cannot_write(path, err)
    return f"{'unfinished ' if rec.record.unfinished else ''}record saved to {path}"


def _cannot_write(path, err: OSError) -> SystemExit:
    return SystemExit(f"error: cannot write --record {path}: {err.strerror}")


def cmd_replay(args) -> int:
    from mountain_rummy_env.records import GameRecord, RecordError, replay

    if args.view is not None and args.html is None:
        raise SystemExit("error: --view needs --html")
    try:
        record = GameRecord.load(args.file)
        _, log = replay(record)
        if args.html:
            from mountain_rummy_env.drawing import replay_html

            page = replay_html(record, args.view)
    except (RecordError, ValueError) as err:
        raise SystemExit(f"error: {err}")
    print("\n".join(log))
    if args.html:
        try:
            Path(args.html).write_text(page)
        except OSError as err:
            raise SystemExit(f"error: cannot write {args.html}: {err}")
        print(f"written: {args.html} ({len(page) // 1024} kB)")
    return 0


def cmd_serve(args) -> int:
    import ipaddress
    import socket
    import tempfile

    from agents import AgentSpecError, make_agent, parse_spec
    from mountain_rummy_env.registry import variant_title

    try:
        import uvicorn

        from experiments.serve import Settings, create_app
    except ImportError as err:
        raise SystemExit(f"error: serve needs the web extra ({err.name} is not installed): "
                         "pip install 'mountain-rummy-env[web]'")
    variant = _table_variant(args)
    specs = _play_specs(list(args.agents), args.seat, variant.num_players, args.variant)
    if [parse_spec(spec)[0] for spec in specs].count("human") > 1:
        raise SystemExit("error: serve seats one person, at --seat; 'human' is not an agent here")
    checks = [("--agents", spec) for spec in dict.fromkeys(specs) if spec != "human"]
    for flag, spec in checks + ([("--hint", args.hint)] if args.hint else []):
        try:
            make_agent(spec, variant=args.variant)
        except AgentSpecError as err:
            raise SystemExit(f"error: {flag}: {err}")
    records = Path(args.records)
    try:
        records.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=records).close()
    except OSError as err:
        raise SystemExit(f"error: cannot write records in {records}: {err.strerror}")
    try:
        family, kind, proto, _, address = socket.getaddrinfo(args.host, args.port,
                                                             type=socket.SOCK_STREAM)[0]
        sock = socket.socket(family, kind, proto)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as err:
        raise SystemExit(f"error: cannot listen on {args.host} port {args.port}: "
                         f"{err.strerror or err}")
    host, port = sock.getsockname()[:2]
    app = create_app(Settings(variant, args.seat, tuple(specs), hint=args.hint,
                              records=records, seed=args.seed))
    url = f"http://{f'[{host}]' if ':' in host else host}:{port}/"
    print(f"{variant_title(variant.name)} table at {url} (you at seat {args.seat}; records in "
          f"{records}; Ctrl-C stops)", flush=True)
    if not ipaddress.ip_address(host).is_loopback:
        print(f"warning: {host} may be reachable from other machines; the table has no "
              "password", flush=True)
    try:
        uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])
    except KeyboardInterrupt:    # uvicorn stops cleanly (games saved), then passes Ctrl-C on
        pass
    print(f"stopped; the games are in {records}")
    return 0


def cmd_agents(args) -> int:
    from agents import registered
    from agents.belief import BELIEF_DIR, shipped_beliefs
    from agents.ppo import shipped_policies

    for name, text in registered().items():
        for k, line in enumerate(text.splitlines()):
            print(textwrap.fill(line, 78, initial_indent=f"{name if k == 0 else '':10s} ",
                                subsequent_indent=" " * 11))
    print("\nalso: a class or factory as module.path:Name[:key=value,...], a program as "
          "proc:COMMAND;\ninstalled packages add agents in the entry-point group "
          "mountain_rummy_env.agents (docs/your_agent.md)")
    print("\nshipped policies (spec ppo:policy=NAME, or netsearch:policy=NAME for the search "
          "it guides):")
    for name, meta in shipped_policies().items():
        arch = "-".join(str(n) for n in (meta["observation_size"], *meta["net_arch"], meta["num_actions"]))
        trained = (f"expert iteration, {meta.get('hands', '?')} hands"
                   if meta.get("trainer") == "expert_iteration"
                   else f"{meta.get('env_steps', '?')} PPO steps")
        print(f"  {name:10s} plays {meta['variant']}: {arch} {meta['activation']} actor, {trained}")
    print("\nshipped belief networks (spec netsearch:belief=NAME: they deal the opponent's "
          "hidden cards\nin the search's samples; docs/training.md):")
    for name in shipped_beliefs():
        meta = json.loads((BELIEF_DIR / f"{name}.json").read_text())
        arch = "-".join(str(n) for n in (meta["observation_size"], *meta["net_arch"], meta["num_cards"]))
        print(f"  {name:10s} {meta['variant']}: {arch} ReLU, {meta.get('hands', '?')} hands of "
              f"{' vs '.join(meta.get('agents', ['?']))}")
    return 0


def cmd_variants(args) -> int:
    from mountain_rummy_env.registry import VARIANTS

    for name, info in VARIANTS.items():
        seats = info.num_players
        print(f"{name:10s} {info.title}: {info.description}")
        print(f"{'':10s} players: {seats[0] if len(seats) == 1 else f'{seats[0]}..{seats[-1]}'}; "
              f"PettingZoo: mountain_rummy_env.{info.env_module}; Gymnasium: {', '.join(info.gym_ids)}")
        print(f"{'':10s} options: " + ", ".join(f"{k}={v!r}" for k, v in info.option_defaults().items()))
    return 0



# -- luck-skill (experiments/luck_skill) ----------------------------------------------------

def add_luck_skill_parser(sub) -> None:
    """The ``luck-skill`` subcommand (self-contained; see docs/luck_skill.md)."""
    from experiments.luck_skill.runner import DEFAULT_LADDER

    ls = sub.add_parser(
        "luck-skill", help="measure luck vs skill per variant (duplicate deals, ladder)",
        description="Luck/skill study: duplicate self-play, a duplicate round robin of an "
                    "agent ladder, true-score decomposition and a clairvoyant search; writes "
                    "a markdown report with CSV/PNG (see docs/luck_skill.md).")
    ls.add_argument("--variants", default="mountain,gin",
                    help="comma-separated variants, each optionally at a table size "
                         "(german@2: German Rummy at 2 seats, its own column beside "
                         "german); unavailable ones are reported as such "
                         "(default: %(default)s)")
    ls.add_argument("--options", type=_options, default={}, metavar="JSON",
                    help="rules options per variant as JSON, e.g. "
                         "'{\"german\": {\"num_players\": 2}}' for two-seat German "
                         "(default: each variant's own; the options: mountain-rummy variants)")
    ls.add_argument("--ladder", nargs="+", default=list(DEFAULT_LADDER), metavar="SPEC",
                    help="agent ladder (default: %(default)s; the shipped 'ppo:policy=mountain' is "
                         "added when torch is available)")
    ls.add_argument("--quick", action="store_true",
                    help="small sizes that run in a few minutes (first look, wide intervals)")
    ls.add_argument("--deals", type=_positive, default=None,
                    help="deals per ladder pair without search (default: 400; quick 30)")
    ls.add_argument("--search-deals", type=_positive, default=None,
                    help="deals per pair with a search/clairvoyant agent (default: 100; quick 10)")
    ls.add_argument("--self-deals", type=_positive, default=None,
                    help="deals per self-play agent (default: 200; quick 30)")
    ls.add_argument("--self-agents", nargs="+", default=None, metavar="SPEC",
                    help="agents for duplicate self-play (default: random search:budget=8)")
    ls.add_argument("--games", type=_nonneg, default=None,
                    help="full games (episode=game) to count hands per game (default: 40; quick 8)")
    ls.add_argument("--precision", type=_fraction, default=None, metavar="SHARE",
                    help="play each ladder pairing in blocks until its 95%% interval is "
                         "narrower than ±SHARE of the variant's single-hand SD of results "
                         "(docs/luck_skill.md pre-registers 0.05), or --max-deals (default: "
                         "the fixed --deals/--search-deals)")
    ls.add_argument("--max-deals", type=_positive, default=4000,
                    help="deals a pairing may reach under --precision (default: %(default)s)")
    ls.add_argument("--aivat", type=_chance_value, default=None, metavar="VALUE",
                    help="chance-correct every ladder hand (AIVAT-style, docs/luck_skill.md) "
                         "with the value function VALUE: 'hand' (the drawer's hand value on "
                         "the spot) or 'rollouts=N' (N playouts per card); the report adds the "
                         "variance reduction factor and the primary statistic on corrected "
                         "results as secondary rows. Mountain and Gin only (default: off)")
    ls.add_argument("--clair-budget", type=_positive, default=None,
                    help="budget of the clairvoyant and its search twin (default: the largest "
                         "search budget on the ladder)")
    ls.add_argument("--job-timeout", type=_positive, default=None,
                    help="seconds before a job is killed and recorded as failed "
                         "(default: 600; quick 180)")
    ls.add_argument("--boot", type=_positive, default=300, help="bootstrap replicates (default: 300)")
    ls.add_argument("--seed", type=_nonneg, default=0, help="first deal seed (default: 0)")
    ls.add_argument("--workers", type=_positive, default=2, help="worker processes (default: 2)")
    _ray_argument(ls)
    ls.add_argument("--out", default="runs/luck_skill",
                    help="folder for results.jsonl per variant (default: %(default)s)")
    ls.add_argument("--report", default="runs/luck_skill/report.md",
                    help="markdown report path (default: %(default)s)")
    ls.add_argument("--data-dir", default=None,
                    help="folder for CSV/PNG (default: the report path without .md)")
    ls.add_argument("--resume", action=argparse.BooleanOptionalAction, default=True,
                    help="keep finished jobs in --out (default: on)")
    ls.add_argument("--no-progress", action="store_true", help="no progress bar")
    ls.add_argument("--report-only", action="store_true",
                    help="play nothing: analyse the results already in --out and write the report")


def _chance_value(text):
    """--aivat's value function, checked (experiments.luck_skill.aivat.parse_value)."""
    from experiments.luck_skill.aivat import parse_value

    try:
        parse_value(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return text


def cmd_luck_skill(args) -> int:
    import shlex

    from agents import AgentSpecError
    from experiments.luck_skill import LuckSkillConfig, run_study
    from experiments.luck_skill.runner import _make
    from experiments.ray_runner import RayRunError

    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if not variants:
        raise SystemExit("error: --variants needs at least one variant")
    if len(set(args.ladder)) != len(args.ladder) or len(args.ladder) < 2:
        raise SystemExit("error: --ladder needs at least two different agent specs")
    kw = {"variants": variants, "ladder": list(args.ladder), "seed": args.seed,
          "workers": args.workers, "clair_budget": args.clair_budget, "ray": args.ray,
          "variant_options": _study_options(args.options, variants),
          "precision": args.precision, "max_deals": args.max_deals, "aivat": args.aivat or ""}
    for name in ("deals", "search_deals", "self_deals", "games", "job_timeout"):
        if getattr(args, name) is not None:
            kw[name] = getattr(args, name)
    if args.self_agents:
        kw["self_agents"] = list(args.self_agents)
    cfg = LuckSkillConfig.quick(**kw) if args.quick else LuckSkillConfig(**kw)
    for spec in list(cfg.ladder) + list(cfg.self_agents):
        try:
            _make(spec, 0)
        except AgentSpecError as err:
            raise SystemExit(f"error: {err}")
    parts = ["luck-skill", "--variants", ",".join(variants), "--ladder", *cfg.ladder]
    parts += ["--options", json.dumps(args.options, sort_keys=True)] if args.options else []
    parts += ["--quick"] if args.quick else []
    if args.precision is not None:
        parts += ["--precision", str(args.precision), "--max-deals", str(args.max_deals)]
    parts += ["--aivat", args.aivat] if args.aivat else []
    for flag in ("deals", "search_deals", "self_deals", "games", "clair_budget", "job_timeout"):
        if getattr(args, flag) is not None:
            parts += ["--" + flag.replace("_", "-"), str(getattr(args, flag))]
    if args.self_agents:
        parts += ["--self-agents", *args.self_agents]
    parts += ["--boot", str(args.boot), "--seed", str(args.seed), "--workers", str(args.workers),
              "--out", args.out, "--report", args.report]
    parts += ["--ray", args.ray] if args.ray is not None else []
    parts += ["--data-dir", args.data_dir] if args.data_dir else []
    parts += ["--report-only"] if args.report_only else []
    command = "mountain-rummy " + shlex.join(parts)
    if args.report_only:  # the data came from the same command without --report-only
        command = ("# data: " + command.replace(" --report-only", "") +
                   "\n# report: " + command)
    try:
        result = run_study(cfg, args.out, report=args.report, data_dir=args.data_dir,
                           command=command, resume=args.resume, progress=not args.no_progress,
                           n_boot=args.boot, play=not args.report_only)
    except RayRunError as err:
        raise SystemExit(f"error: {err}")
    for v, why in result["missing"].items():
        print(f"{v}: not available ({why})")
    print(f"written: {', '.join(str(p) for p in result['paths'].values())}")
    return 0


def _study_options(options: dict, variants: list[str]) -> dict:
    """luck-skill's ``--options`` checked: ``{variant: {option: value}}`` for variants the
    study plays, each set accepted by the variant, and every ``variant@N`` column's table
    size accepted; else a one-line error naming it."""
    from mountain_rummy_env.registry import make_variant

    from experiments.luck_skill import LuckSkillConfig

    played = set(variants) | {LuckSkillConfig.variant_of(c) for c in variants}
    for name, opts in options.items():
        if name not in played:
            raise SystemExit(f"error: --options names {name!r}, which is not in --variants "
                             f"({', '.join(variants)}); give options per variant, e.g. "
                             "'{\"german\": {\"num_players\": 2}}'")
        if not isinstance(opts, dict):
            raise SystemExit(f"error: --options for {name!r} must be a JSON object of "
                             f"options, got {json.dumps(opts)}")
        try:
            make_variant(LuckSkillConfig.variant_of(name), **opts)
        except (TypeError, ValueError) as err:
            raise SystemExit(f"error: --options for {name!r}: {err}")
    for column in (c for c in variants if "@" in c):
        seats = column.partition("@")[2]
        if not seats.isdigit():
            raise SystemExit(f"error: --variants entry {column!r}: after '@' comes a table "
                             "size, e.g. german@2")
        try:
            make_variant(LuckSkillConfig.variant_of(column),
                         **LuckSkillConfig(variant_options=options).options_for(column))
        except (TypeError, ValueError) as err:
            raise SystemExit(f"error: --variants entry {column!r}: {err}")
    return {name: dict(opts) for name, opts in options.items()}


def run_trainer(parse_args, train, argv, prog) -> dict:
    """A trainer's ``main``: its flags, its run, a checkpoint error as one line; prints the
    summary as JSON (without its per-row log) and returns it."""
    from agents.ppo import CheckpointError

    args = parse_args(argv, prog)
    try:
        summary = train(args)
    except CheckpointError as err:
        raise SystemExit(f"error: {err}") from None
    print(json.dumps({k: v for k, v in summary.items() if k != "rows"}), flush=True)
    return summary


# subcommands whose module's own parser owns their flags (and --help): name -> module
TRAINERS = {"selfplay-ppo": "selfplay_ppo", "expert-iteration": "expert_iteration",
            "belief-net": "belief_net"}


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] and argv[0] in TRAINERS:    # the trainer's parser owns its flags (and --help)
        import importlib

        trainer = importlib.import_module(f"experiments.{TRAINERS[argv[0]]}")
        trainer.main(argv[1:], prog=f"mountain-rummy {argv[0]}")
        return 0
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = {"tournament": cmd_tournament, "play": cmd_play, "replay": cmd_replay,
               "serve": cmd_serve, "agents": cmd_agents, "variants": cmd_variants,
               "luck-skill": cmd_luck_skill}[args.command]
    try:
        return handler(args)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
