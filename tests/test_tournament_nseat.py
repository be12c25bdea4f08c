"""Tournaments of more than two seats (German Rummy), and the two-seat path kept as it was."""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pytest

import experiments.tournament as tournament
from agents import Agent, register
from experiments.cli import main
from experiments.play import HandResult
from experiments.stats import average_ranks, cluster_bootstrap_ci
from experiments.tournament import (
    RunFolderError, TournamentConfig, agent_summary, load_results, markdown_tables,
    play_table, read_manifest, report_run, run_tournament, seat_options, seat_orders,
    skill_ratings, summarise_tables)

DATA = Path(__file__).parent / "data" / "tournament_2seat"


@register("lowest", help="the lowest legal action id (a deterministic test agent)")
class LowestAgent(Agent):
    def act(self, view, mask) -> int:
        return int(np.flatnonzero(mask)[0])


def _german(seats=3, **kw):
    base = dict(agents=["random", "random", "lowest"], deals=2, slow_deals=None, seed=5,
                workers=1, variant="german", variant_options={"num_players": seats})
    base.update(kw)
    return TournamentConfig(**base)


# -- seat orders and tables ---------------------------------------------------------------

def test_rotations_are_the_cyclic_rotations_and_all_the_permutations():
    assert seat_orders(2) == [(0, 1), (1, 0)]  # the two-seat swap
    assert seat_orders(3) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    assert seat_orders(4)[1] == (1, 2, 3, 0)
    assert seat_orders(3, "all") == list(itertools.permutations(range(3)))
    assert len(seat_orders(4, "all")) == 24 and seat_orders(4, "all")[0] == (0, 1, 2, 3)


@pytest.mark.parametrize("seats, rotations", [(n, "cyclic") for n in range(2, 7)]
                         + [(n, "all") for n in range(2, 5)])
def test_every_table_position_sits_in_every_seat_equally_often(seats, rotations):
    orders = seat_orders(seats, rotations)
    count = Counter((position, seat) for order in orders for seat, position in enumerate(order))
    assert set(count) == set(itertools.product(range(seats), repeat=2))
    assert set(count.values()) == {len(orders) // seats}


def test_schedules_yield_tables_of_the_seat_count():
    cfg = _german(agents=["a", "b", "c", "d"])
    assert cfg.num_players == 3
    assert cfg.tables() == [("a", "b", "c"), ("a", "b", "d"), ("a", "c", "d"), ("b", "c", "d")]
    assert _german(agents=["a", "b", "c", "d"], schedule="ladder").tables() == [
        ("a", "b", "c"), ("b", "c", "d")]
    # an agent listed twice may sit twice; a table two list positions make twice plays once
    assert _german(agents=["r", "r", "g", "g"]).tables() == [("r", "r", "g"), ("r", "g", "g")]
    assert _german(4, agents=["r", "r", "g", "g"]).tables() == [("r", "r", "g", "g")]
    assert [len(t) for t in _german(6, agents=list("abcdef")).tables()] == [6]
    two = TournamentConfig(agents=["a", "b", "c"])
    assert two.num_players == 2 and two.tables() == [("a", "b"), ("a", "c"), ("b", "c")]
    assert len(_german(agents=list("abcd"), deals=3).jobs()) == 4 * 3


def test_bad_rotations_and_seat_counts_are_refused():
    with pytest.raises(ValueError, match="rotations must be one of"):
        _german(rotations="some")
    with pytest.raises(ValueError, match="allowed up to 4 seats"):
        _german(5, agents=list("abcde"), rotations="all")
    assert _german(4, agents=list("abcd"), rotations="all").rotations == "all"
    assert seat_options("german", {}, 5) == {"num_players": 5}
    assert seat_options("german", {"max_turns": 9}, None) == {"max_turns": 9}
    assert seat_options("mountain", {}, 2) == {}
    with pytest.raises(ValueError, match="mountain is played by 2 seats only"):
        seat_options("mountain", {}, 4)
    with pytest.raises(ValueError, match="disagree"):
        seat_options("german", {"num_players": 3}, 4)


# -- sums, ranks and ties on scripted hands -------------------------------------------------

SKILL = {"x": 10, "y": 4, "z": 4}
SEAT_LUCK = (6, 3, 0)     # seat 0 is worth 6 points, seat 1 3, seat 2 nothing


class _Scripted:
    """Stands in for an agent: only its name is read, by :func:`_scripted_hand`."""

    def __init__(self, spec, seed=None):
        self.name = spec


def _scripted_hand(game, agents, **kw):
    return HandResult(tuple(SKILL[a.name] + SEAT_LUCK[s] for s, a in enumerate(agents)),
                      0, "scripted", 0, 1)


def test_a_row_sums_points_over_the_rotations_and_ranks_each_play(monkeypatch):
    import agents

    monkeypatch.setattr(agents, "make_agent", _Scripted)
    monkeypatch.setattr(tournament, "play_hand", _scripted_hand)
    row = play_table(asdict(_german()), ("x", "y", "z"), 7)
    assert [h["seats"] for h in row["hands"]] == [["x", "y", "z"], ["y", "z", "x"],
                                                  ["z", "x", "y"]]
    assert [h["positions"] for h in row["hands"]] == [[0, 1, 2], [1, 2, 0], [2, 0, 1]]
    assert [h["points"] for h in row["hands"]] == [[16, 7, 4], [10, 7, 10], [10, 13, 4]]
    assert row["points"] == [39, 21, 21]  # the seat luck cancels: y and z come out equal
    # by table position x, y, z; in the second play y (seat 0) and x (seat 2) tie for first
    assert row["ranks"] == [[1, 2, 3], [1.5, 1.5, 3], [1, 3, 2]]
    assert row["table"] == ["x", "y", "z"] and row["deal"] == 7 and row["dealer"] == 7 % 3
    assert row["variant"].startswith("german:") and '"num_players": 3' in row["variant"]
    assert "margin" not in row and "a" not in row
    everything = play_table(asdict(_german(rotations="all")), ("x", "y", "z"), 7)
    assert len(everything["hands"]) == 6 and everything["points"] == [78, 42, 42]


def test_average_ranks_share_tied_places():
    assert average_ranks([10, 5, 5, 0]).tolist() == [1, 2.5, 2.5, 4]
    assert average_ranks([3, 3, 3]).tolist() == [2, 2, 2]
    assert average_ranks([-5, 20]).tolist() == [2, 1]


def _row(table, deal, plays):
    """A result row of the N-seat format from scripted plays: ``plays`` lists each play's
    points by table position; the seats follow the cyclic rotations."""
    n = len(table)
    orders = seat_orders(n)
    hands = []
    for order, points in zip(itertools.cycle(orders), plays):
        hands.append({"positions": list(order), "seats": [table[k] for k in order],
                      "points": [points[k] for k in order]})
    return {"table": list(table), "deal": deal, "hands": hands}


def test_agent_and_table_statistics_on_scripted_rows():
    rows = [_row(("a", "b", "b"), d, [[9, 3, 0], [6, 6, 1]]) for d in range(40)]
    (a, b) = agent_summary(rows, ["a", "b"], n_boot=200)
    assert (a.name, a.tables, a.deals, a.hands) == ("a", 1, 40, 80)
    assert a.points == pytest.approx(7.5) and a.points_lo == a.points_hi == pytest.approx(7.5)
    # a: places 1 and 1.5 (tied with one b); b: 2, 3, 1.5, 3
    assert a.rank == pytest.approx(1.25) and b.rank == pytest.approx(2.375)
    assert b.hands == 160 and b.points == pytest.approx(2.5)
    (table,) = summarise_tables(rows, ["a", "b"], n_boot=200)
    assert table.table == ("a", "b", "b") and table.deals == 40 and not table.rough
    top, second = table.entries
    assert (top.name, top.seats, second.name, second.seats) == ("a", 1, "b", 2)
    assert top.ahead == "yes: +5.0 (+5.0, +5.0)" and second.ahead == ""
    text = markdown_tables([table], [])
    assert "| a, b, b | 40 | a | +7.5 (+7.5, +7.5) | 1.25 (1.25, 1.25) | yes: +5.0" in text
    assert "|  |  | b (2 seats) | +2.5 (+2.5, +2.5) | 2.38 (2.38, 2.38) | - |" in text
    assert "No ratings: they need two different agents." in text


def test_cluster_bootstrap_resamples_whole_deals():
    mean, lo, hi = cluster_bootstrap_ci([10, 0], [1, 3], n_boot=500)
    assert mean == 2.5 and lo == 0 and hi == 10
    assert cluster_bootstrap_ci([4.0] * 5, [2] * 5) == (2.0, 2.0, 2.0)


# -- Plackett-Luce ratings ------------------------------------------------------------------

def _noisy_rows(table, strength, deals, rng):
    """Rows whose points are ``strength`` per table position plus noise, three plays each."""
    return [_row(table, d, [np.round(np.asarray(strength) + rng.normal(0, 10, len(table)))
                            .astype(int).tolist() for _ in range(len(table))])
            for d in range(deals)]


def test_plackett_luce_puts_a_clearly_stronger_agent_first():
    pytest.importorskip("openskill")
    rng = np.random.default_rng(0)
    rows = _noisy_rows(("weak", "mid", "strong"), (0, 8, 30), 40, rng)
    skills = skill_ratings(rows, ["weak", "mid", "strong"], n_boot=60)
    assert [s.name for s in skills] == ["strong", "mid", "weak"]
    assert skills[0].above_next.startswith("yes: gap +")
    assert skills[0].mu_lo > skills[1].mu_hi
    assert skills[0].ordinal == pytest.approx(skills[0].mu - 3 * skills[0].sigma)
    assert skills[-1].above_next == ""
    # two agents of the same strength: the order between them is not supported
    even = _noisy_rows(("p", "q", "strong"), (0, 0, 30), 40, rng)
    skills = skill_ratings(even, ["p", "q", "strong"], n_boot=60)
    assert skills[0].name == "strong" and skills[1].above_next.startswith("no: gap ")


def test_plackett_luce_with_an_agent_seated_twice_and_ties():
    pytest.importorskip("openskill")
    rng = np.random.default_rng(1)
    rows = _noisy_rows(("lo", "lo", "hi", "hi"), (0, 0, 20, 20), 30, rng)
    rows += [_row(("lo", "lo", "hi", "hi"), 100, [[5, 5, 5, 5]] * 4)]  # an all-tie deal
    skills = skill_ratings(rows, ["lo", "hi"], n_boot=40)
    assert [s.name for s in skills] == ["hi", "lo"] and skills[0].above_next.startswith("yes")
    assert skill_ratings(rows[:1], ["lo"], n_boot=5) == []  # one agent: nothing to rate


# -- real German tournaments ----------------------------------------------------------------

def test_an_n_seat_run_resumes_and_extends(tmp_path):
    cfg = _german()
    assert run_tournament(cfg, tmp_path, progress=False, max_jobs=1)[0]["deal"] == 5
    with open(tmp_path / "results.jsonl", "a") as fh:
        fh.write('{"table": ["random", "ran')          # a torn last line
    rows = run_tournament(cfg, tmp_path, progress=False)
    assert sorted(r["deal"] for r in rows) == [5, 6]
    assert len(load_results(tmp_path / "results.jsonl")) == 2  # nothing replayed
    for r in rows:
        assert len(r["hands"]) == 3 and r["table"] == ["random", "random", "lowest"]
        assert sum(r["points"]) == sum(sum(h["points"]) for h in r["hands"])
        assert all(sorted(ranks) in ([1, 2, 3], [1.5, 1.5, 3], [1, 2.5, 2.5], [2, 2, 2])
                   for ranks in r["ranks"])
    rows = run_tournament(_german(deals=3), tmp_path, progress=False)
    assert sorted(r["deal"] for r in rows) == [5, 6, 7]
    manifest = read_manifest(tmp_path)
    assert manifest["tables"] == [{"table": ["random", "random", "lowest"], "deals": 3}]
    assert "pairs" not in manifest
    s = manifest["settings"]
    assert (s["num_players"], s["rotations"], s["variant_config"]["num_players"]) == (3, "cyclic", 3)
    assert [x["deals_to_play"] for x in manifest["sessions"]] == [1, 1, 1]
    assert manifest["sessions"][-1]["command"].startswith(
        "mountain-rummy tournament --variant german --players 3 --schedule round-robin "
        "--rotations cyclic --agents random random lowest --deals 3 ")
    for other, why in ((_german(rotations="all"), "rotations cyclic there, all now"),
                       (_german(4, agents=["random"] * 3 + ["lowest"]),
                        "rules option num_players 3 there, 4 now")):
        with pytest.raises(RunFolderError, match=why):
            run_tournament(other, tmp_path, progress=False)
    paths = report_run(rows, tmp_path, n_boot=100, skill_boot=20)
    report = paths["report"].read_text()
    assert report.startswith("# Tournament: german, round-robin, 3 seats\n")
    assert "- rotations: cyclic (each deal is played once per cyclic rotation" in report
    assert "- deals: 3 per table, each played 3 times" in report
    assert "| random, random, lowest | 3 rough |" in report
    assert {"agents", "tables", "ratings", "report", "manifest"} <= set(paths)
    assert paths["tables"].read_text().startswith("table,deals,agent,seats,points,")


def test_the_report_does_not_depend_on_the_order_rows_arrived_in(tmp_path):
    """Workers (local or Ray) finish deals in any order; the bootstrap intervals must not
    follow it (they did: resampling deals in arrival order)."""
    cfg = _german(4, agents=["random", "greedy"] * 2, deals=4, seed=123)
    rows = run_tournament(cfg, tmp_path, progress=False)
    paths = report_run(rows, tmp_path, n_boot=200, skill_boot=20)
    tables = {name: paths[name].read_text() for name in ("agents", "tables", "ratings")}
    report_run(rows[::-1], tmp_path, n_boot=200, skill_boot=20)
    assert tables == {name: paths[name].read_text() for name in tables}


def test_default_folders_name_the_seats_and_keep_two_seat_names():
    assert _german().default_out().name.startswith("german-3seats-round-robin-")
    assert _german(2, agents=["random", "lowest"]).default_out().name.startswith(
        "german-round-robin-")
    assert _german(rotations="all").default_out() != _german().default_out()


# -- the two-seat path, as it was -------------------------------------------------------------

def _golden_config(**kw):
    base = dict(agents=["random", "lowest"], deals=2, slow_deals=None, seed=3, workers=1)
    base.update(kw)
    return TournamentConfig(**base)


def _timeless_bytes(path: Path) -> bytes:
    """A results file as JSON lines without the decision times rows now end with."""
    return "".join(json.dumps(tournament.without_times(json.loads(line))) + "\n"
                   for line in path.read_text().splitlines()).encode()


def test_two_seat_rows_are_byte_identical_to_the_previous_version(tmp_path):
    """``tests/data/tournament_2seat`` was written by the version before N seats (commit
    01b4a7a) with these settings; a change of Mountain's or Gin's rules or options, or of the
    random agent, changes these rows too and needs them written again. Rows now end with
    the measured ``decision_ms``; all before it is byte for byte the old row."""
    run_tournament(_golden_config(), tmp_path / "m", progress=False)
    assert _timeless_bytes(tmp_path / "m" / "results.jsonl") == (DATA / "results.jsonl").read_bytes()
    run_tournament(_golden_config(agents=["lowest", "random"], deals=1, seed=1, variant="gin"),
                   tmp_path / "g", progress=False)
    assert _timeless_bytes(tmp_path / "g" / "results.jsonl") == \
        (DATA / "gin_results.jsonl").read_bytes()
    assert all(list(json.loads(line))[-1] == "decision_ms"
               for line in (tmp_path / "g" / "results.jsonl").read_text().splitlines())


def test_a_two_seat_run_folder_of_the_previous_version_resumes(tmp_path):
    shutil.copy(DATA / "manifest.json", tmp_path)
    shutil.copy(DATA / "results.jsonl", tmp_path)
    before = (DATA / "results.jsonl").read_text()
    assert "rotations" not in read_manifest(tmp_path)["settings"]
    rows = run_tournament(_golden_config(deals=3), tmp_path, progress=False)
    assert sorted(r["deal"] for r in rows) == [3, 4, 5]
    after = (tmp_path / "results.jsonl").read_text()
    assert after.startswith(before) and len(after.splitlines()) == 3  # only deal 5 was new
    manifest = read_manifest(tmp_path)
    assert manifest["pairs"] == [{"a": "random", "b": "lowest", "deals": 3}]
    assert (manifest["settings"]["num_players"], manifest["settings"]["rotations"]) == (2, "cyclic")
    assert len(manifest["sessions"]) == 2
    paths = report_run(rows, tmp_path, n_boot=100)
    report = paths["report"].read_text()
    assert "| random | lowest | 3 |" in report and "## Agents" in report
    assert "- deals: 3 per pair, each played twice with the seats swapped" in report
    assert paths["agents"].read_text().startswith("agent,tables,deals,hands,points,")


def test_the_default_folder_of_a_two_seat_run_is_the_one_it_had():
    """The previous version hashed the identity without rotations; cyclic keeps that hash."""
    settings = _golden_config().settings()
    old = {k: settings[k] for k in ("variant", "variant_config", "agents", "schedule", "seed")}
    digest = hashlib.sha256(json.dumps(old, sort_keys=True).encode()).hexdigest()[:8]
    assert _golden_config().default_out().name == f"mountain-round-robin-{digest}"
    assert _golden_config(rotations="all").default_out().name != f"mountain-round-robin-{digest}"


# -- the command line -------------------------------------------------------------------------

def test_a_german_three_seat_tournament_through_the_cli(tmp_path, capsys):
    assert main(["tournament", "--variant", "german", "--players", "3", "--agents", "random",
                 "random", "lowest", "--deals", "2", "--workers", "1", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "# Tournament: german, round-robin, 3 seats" in out
    assert "## Agents" in out and "## Tables" in out and "## Ratings (Plackett-Luce)" in out
    assert "| random, random, lowest | 2 rough |" in out
    assert "random (2 seats)" in out
    rows = load_results(tmp_path / "results.jsonl")
    assert len(rows) == 2 and all(len(r["hands"]) == 3 for r in rows)
    for name in ("report.md", "agents.csv", "tables.csv", "ratings.csv", "manifest.json"):
        assert (tmp_path / name).exists(), name


@pytest.mark.parametrize("argv, message", [
    (["--players", "4"], "error: bad --players 4: mountain is played by 2 seats only"),
    (["--variant", "german", "--players", "7"], "num_players must be in 2..6"),
    (["--variant", "german", "--players", "3", "--options", '{"num_players": 4}'], "disagree"),
    (["--variant", "german", "--players", "5", "--rotations", "all"], "allowed up to 4 seats"),
    (["--variant", "german", "--agents", "random", "random"],
     "german with 4 seats needs at least 4 agents in --agents, got 2; list an agent again to "
     "seat it again (e.g. --agents random random random random)"),
    (["--agents", "random", "random"], "at least two different agent specs"),
])
def test_bad_seat_settings_are_one_error_line(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["tournament", *argv, "--out", str(tmp_path)])
    assert message in str(exc.value)
    assert capsys.readouterr().out == "" and not any(tmp_path.iterdir())


@pytest.mark.parametrize("argv, message", [
    (["tournament", "--players", "1"], "expected a seat count of 2 or more, got 1"),
    (["tournament", "--players", "x"], "expected a seat count of 2 or more"),
    (["tournament", "--rotations", "some"], "invalid choice"),
])
def test_bad_seat_arguments_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_help_documents_players_and_rotations(capsys):
    with pytest.raises(SystemExit):
        main(["tournament", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for phrase in ("--players N", "--rotations {cyclic,all}", "cyclic each deal is played once "
                   "per cyclic rotation", "all each deal is played once per order",
                   "--players 4 --agents random random greedy greedy is one table"):
        assert phrase in text, phrase
