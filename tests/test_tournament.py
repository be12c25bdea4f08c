"""Tournament runner and its statistics."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

import experiments.provenance

from experiments.stats import bootstrap_ci, bradley_terry, rating_intervals, wilson_interval
from experiments.tournament import (
    RunFolderError, TournamentConfig, load_results, markdown_table, play_deal, read_manifest,
    run_tournament, summarise, without_times, write_report)


def test_bootstrap_ci_covers_the_true_mean_about_95_percent():
    rng = np.random.default_rng(0)
    hits = 0
    trials = 300
    for k in range(trials):
        x = rng.normal(2.0, 3.0, size=60)
        _, lo, hi = bootstrap_ci(x, n_boot=800, rng=k)
        hits += lo <= 2.0 <= hi
    assert 0.90 <= hits / trials <= 0.98


def test_bradley_terry_recovers_known_strengths():
    true = np.array([-200.0, 0.0, 200.0])
    rng = np.random.default_rng(1)
    names = ["weak", "mid", "strong"]
    outcomes = {}
    for i in range(3):
        for j in range(i + 1, 3):
            p = 1 / (1 + 10 ** ((true[j] - true[i]) / 400))
            outcomes[(names[i], names[j])] = (rng.random(3000) < p).astype(float)
    from experiments.stats import win_matrix
    r = bradley_terry(win_matrix(names, outcomes))
    assert np.all(np.diff(r) > 0)
    assert np.allclose(r, true, atol=30)
    ci = rating_intervals(names, outcomes, n_boot=50)
    assert ci["weak"][2] < ci["mid"][1] and ci["mid"][2] < ci["strong"][1]


def _cfg(**kw):
    base = dict(agents=["random", "greedy"], deals=4, slow_deals=None, seed=5, workers=1)
    base.update(kw)
    return TournamentConfig(**base)


def test_duplicate_deal_replays_the_same_cards_with_seats_swapped():
    from dataclasses import asdict
    row = play_deal(asdict(_cfg()), "random", "greedy", 7)
    h0, h1 = row["hands"]
    assert h0["deck"] == h1["deck"] and h0["dealer"] == h1["dealer"] == 7 % 2
    assert h0["seats"] == ["random", "greedy"] and h1["seats"] == ["greedy", "random"]
    pa = h0["points"][0] + h1["points"][1]
    pb = h0["points"][1] + h1["points"][0]
    assert row["margin"] == (pa - pb) / 2
    again = play_deal(asdict(_cfg()), "random", "greedy", 7)
    # reproducible (agent seeds come from the deal), all but the measured decision times
    assert without_times(again) == without_times(row)
    assert set(row["decision_ms"]) == {"random", "greedy"}
    assert len(row["decision_ms"]["random"]) + len(row["decision_ms"]["greedy"]) == \
        h0["steps"] + h1["steps"]


def test_resume_plays_only_missing_deals(tmp_path):
    cfg = _cfg()
    first = run_tournament(cfg, tmp_path, progress=False, max_jobs=2)
    assert len(first) == 2
    # a torn last line (an interrupted write) is skipped, and the rows written after it
    # start on a line of their own
    with open(tmp_path / "results.jsonl", "a") as fh:
        fh.write('{"a": "random", "b": "gre')
    rows = run_tournament(cfg, tmp_path, progress=False)
    assert len(rows) == 4
    assert len(load_results(tmp_path / "results.jsonl")) == 4  # nothing replayed
    assert {r["deal"] for r in rows} == {5, 6, 7, 8}
    assert len(run_tournament(cfg, tmp_path, progress=False)) == 4


def test_a_folder_being_written_is_refused_and_twice_written_deals_count_once(tmp_path):
    """Two tournaments into one folder at the same time appended the same deals twice
    (it happened: a report counted 600 results for 300 deals). The second is refused while
    the first holds the folder's lock, naming its pid; the rows of a folder that holds a
    deal twice count it once."""
    import fcntl

    cfg = _cfg()
    run_tournament(cfg, tmp_path, progress=False, max_jobs=1)
    with open(tmp_path / ".lock", "a+") as fh:          # another writer holds the folder
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        fh.truncate(0)
        fh.write("4242\n")
        fh.flush()
        with pytest.raises(RunFolderError, match=r"being written by another tournament \(pid 4242\)"):
            run_tournament(cfg, tmp_path, progress=False)
    assert len(load_results(tmp_path / "results.jsonl")) == 1
    rows = run_tournament(cfg, tmp_path, progress=False)   # free again: it resumes
    assert len(rows) == 4
    with open(tmp_path / "results.jsonl", "a") as fh:        # a deal written twice
        fh.write(json.dumps(rows[0]) + "\n")
    again = run_tournament(cfg, tmp_path, progress=False)
    assert len(load_results(tmp_path / "results.jsonl")) == 5
    assert sorted(r["deal"] for r in again) == [5, 6, 7, 8]


def test_ladder_schedule_plays_adjacent_pairs_only():
    cfg = TournamentConfig(agents=["random", "greedy", "rules"], deals=2, schedule="ladder")
    assert cfg.pairs() == [("random", "greedy"), ("greedy", "rules")]
    assert len(cfg.jobs()) == 4
    with pytest.raises(ValueError, match="schedule"):
        TournamentConfig(schedule="swiss")


def test_report_files_state_the_settings(tmp_path):
    rows = run_tournament(_cfg(workers=2, deals=3), tmp_path, progress=False)
    pairs, ratings = summarise(rows, ["random", "greedy"], n_boot=200)
    assert len(pairs) == 1 and pairs[0].deals == 3
    paths = write_report(pairs, ratings, tmp_path)
    report = paths["report"].read_text()
    assert report.startswith("# Tournament: mountain, round-robin\n")
    for line in ("- variant: mountain (options given: none; in full: num_jokers=2",
                 "- agents: random, greedy", "- schedule: round-robin (every agent plays",
                 "- deals: 3 per pair, each played twice", "- seed: 5 (deal k has seed 5 + k",
                 "- code: mountain-rummy-env ", "- command: `mountain-rummy tournament "):
        assert line in report, line
    assert "| random | greedy | 3 |" in report
    assert paths["pairs"].read_text().startswith(
        "a,b,deals,margin,margin_lo,margin_hi,win_rate,win_lo,win_hi,better,fewer_deals,"
        "rough_margin_ci\n")
    assert paths["manifest"] == tmp_path / "manifest.json"  # the CSVs' sidecar
    if "plot" in paths:
        assert paths["plot"].stat().st_size > 1000


def test_manifest_records_settings_and_sessions(tmp_path):
    cfg = _cfg(agents=["random", "greedy", "search:budget=4"], deals=3, slow_deals=1,
               variant="gin", variant_options={"knock_card": 8}, schedule="ladder")
    run_tournament(cfg, tmp_path, progress=False, max_jobs=0)  # the manifest comes first
    manifest = read_manifest(tmp_path)
    s = manifest["settings"]
    assert (s["variant"], s["variant_options"], s["agents"], s["schedule"], s["seed"],
            s["deals"], s["search_deals"]) == ("gin", {"knock_card": 8}, cfg.agents, "ladder",
                                               5, 3, 1)
    assert s["variant_config"]["knock_card"] == 8 and "gin_bonus" in s["variant_config"]
    assert manifest["pairs"] == [{"a": "random", "b": "greedy", "deals": 3},
                                 {"a": "greedy", "b": "search:budget=4", "deals": 1}]
    (session,) = manifest["sessions"]
    assert session["deals_to_play"] == 0 and session["date"].endswith("+00:00")
    assert session["package_version"] == "0.1.0"
    assert session["git_commit"] == "unknown" or len(session["git_commit"].split("+")[0]) == 40
    assert session["command"] == (
        "mountain-rummy tournament --variant gin --schedule ladder --agents random greedy "
        f"search:budget=4 --deals 3 --search-deals 1 --seed 5 --workers 1 --out {tmp_path} "
        "--options '{\"knock_card\": 8}'")


@pytest.mark.skipif(shutil.which("git") is None, reason="no git")
def test_the_commit_is_this_clones_or_unknown(tmp_path):
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?|unknown", experiments.provenance.git_commit())

    def commit_seen_from(path):
        path.parent.mkdir(parents=True)
        shutil.copy(experiments.provenance.__file__, path)
        spec = importlib.util.spec_from_file_location("provenance_copy", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.git_commit()

    assert commit_seen_from(tmp_path / "plain" / "experiments" / "provenance.py") == "unknown"
    other = tmp_path / "project"  # installed into a venv inside some other git repository
    other.mkdir()
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    subprocess.run(["git", "-C", str(other), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "other"], check=True)
    assert commit_seen_from(other / "venv" / "site-packages" / "experiments" / "provenance.py") \
        == "unknown"


def test_the_default_folder_is_one_per_run_identity():
    base = _cfg().default_out()
    assert base.parent.as_posix() == "runs/tournament" and base.name.startswith("mountain-round-robin-")
    assert _cfg(deals=400, workers=2).default_out() == base   # more deals extend the run
    assert _cfg(variant_options={"num_jokers": 2}).default_out() == base  # the default, spelled out
    for other in (_cfg(seed=6), _cfg(agents=["greedy", "random"]),
                  _cfg(variant_options={"num_jokers": 1}), _cfg(schedule="ladder")):
        assert other.default_out() != base
    assert _cfg(variant="gin").default_out().name.startswith("gin-round-robin-")


def test_a_folder_holding_another_run_is_refused(tmp_path):
    run_tournament(_cfg(), tmp_path, progress=False, max_jobs=1)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for other in (_cfg(seed=6), _cfg(agents=["random", "rules"]), _cfg(variant="gin"),
                  _cfg(variant_options={"num_jokers": 1}), _cfg(schedule="ladder")):
        for resume in (True, False):
            with pytest.raises(RunFolderError, match="holds another run"):
                run_tournament(other, tmp_path, resume=resume, progress=False)
    with pytest.raises(RunFolderError, match="holds more deals than asked"):
        run_tournament(_cfg(deals=3), tmp_path, progress=False)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    legacy = tmp_path / "legacy"  # results from before manifests: settings unknown
    legacy.mkdir()
    (legacy / "results.jsonl").write_bytes(before["results.jsonl"])
    with pytest.raises(RunFolderError, match="but no manifest.json"):
        run_tournament(_cfg(), legacy, progress=False)
    with pytest.raises(RunFolderError, match="is a file"):
        run_tournament(_cfg(), tmp_path / "results.jsonl", progress=False)
    with pytest.raises(RunFolderError, match="cannot create"):
        run_tournament(_cfg(), tmp_path / "results.jsonl" / "sub", progress=False)


def test_resuming_with_more_deals_extends_the_run(tmp_path):
    run_tournament(_cfg(deals=2), tmp_path, progress=False)
    rows = run_tournament(_cfg(deals=3), tmp_path, progress=False)
    assert sorted(r["deal"] for r in rows) == [5, 6, 7]
    assert len(load_results(tmp_path / "results.jsonl")) == 3  # only deal 7 was new
    manifest = read_manifest(tmp_path)
    assert manifest["settings"]["deals"] == 3
    assert [s["deals_to_play"] for s in manifest["sessions"]] == [2, 1]
    run_tournament(_cfg(deals=3), tmp_path, progress=False)  # nothing to play: no new session
    assert len(read_manifest(tmp_path)["sessions"]) == 2
    fresh = run_tournament(_cfg(deals=1), tmp_path, resume=False, progress=False)
    assert [r["deal"] for r in fresh] == [5]
    assert len(load_results(tmp_path / "results.jsonl")) == 1
    assert len(read_manifest(tmp_path)["sessions"]) == 1


# -- honest intervals on synthetic results ------------------------------------------------

def _rows(a, b, margins):
    return [{"a": a, "b": b, "deal": k, "margin": float(m),
             "outcome": 1.0 if m > 0 else 0.5 if m == 0 else 0.0} for k, m in enumerate(margins)]


def test_wilson_interval_known_values():
    assert wilson_interval(0, 20) == pytest.approx((0.0, 0.1611), abs=1e-4)
    assert wilson_interval(20, 20) == pytest.approx((0.8389, 1.0), abs=1e-4)
    assert wilson_interval(1, 10) == pytest.approx((0.0179, 0.4042), abs=1e-4)
    assert wilson_interval(10, 20) == pytest.approx((0.2993, 0.7007), abs=1e-4)


def test_win_rates_use_wilson_intervals():
    (pair,), _ = summarise(_rows("random", "greedy", [-30] * 20), ["random", "greedy"])
    assert (pair.win_rate, pair.win_lo) == (0.0, 0.0) and pair.win_hi == pytest.approx(0.1611, abs=1e-4)
    assert "| 0.000 (0.000, 0.161) |" in markdown_table(*summarise(
        _rows("random", "greedy", [-30] * 20), ["random", "greedy"]))


def test_small_pairs_fewer_deals_and_unresolved_pairs_are_marked():
    rng = np.random.default_rng(3)
    rows = (_rows("greedy", "random", rng.normal(40, 20, 60))
            + _rows("greedy", "search", rng.normal(0, 30, 8))
            + _rows("random", "search", rng.normal(-40, 20, 8)))
    pairs, ratings = summarise(rows, ["greedy", "random", "search"])
    by = {(p.a, p.b): p for p in pairs}
    assert not by["greedy", "random"].rough and by["greedy", "search"].rough
    assert by["greedy", "search"].better is None and by["greedy", "random"].better == "greedy"
    table = markdown_table(pairs, ratings)
    assert "| greedy | random | 60 | +" in table
    line = next(x for x in table.splitlines() if x.startswith("| greedy | search |"))
    assert "| 8 (fewer) |" in line and ") rough |" in line and "**not resolved**" in line
    for note in ("- (fewer): this pair played fewer deals", "- rough: fewer than 30 deals",
                 "- not resolved: the margin interval includes 0"):
        assert note in table
    assert "(fewer)" not in markdown_table(pairs[:1], ratings)  # one pair: nothing to compare


def _support(rows, agents):
    _, ratings = summarise(rows, agents, n_boot=500)
    return [(s.name, s.above_next) for s in ratings]


def test_the_rating_table_shows_which_orders_are_supported():
    # p wins 80% of its deals against q by 1 point and loses the rest by 60: ranked above q
    # on deal wins, beaten on points; q beats r in 2 deals of 3 and on points.
    rows = _rows("p", "q", [1] * 48 + [-60] * 12) + _rows("q", "r", [40, 40, -10] * 20)
    assert _support(rows, ["p", "q", "r"]) == [
        ("p", "no: q beat p on points"), ("q", "yes: their pair is resolved"), ("r", "")]
    # even deals and points: the order is chance
    assert _support(_rows("u", "v", [5, -5] * 30), ["u", "v"])[0][1] == \
        "no: their pair is not resolved, intervals overlap"
    # 80% of deals won but the points even: the pair is not resolved, the ratings are apart
    rows = _rows("x", "y", [10] * 48 + [-40] * 12)
    pairs, ratings = summarise(rows, ["x", "y"], n_boot=500)
    assert pairs[0].better is None
    assert [(s.name, s.above_next) for s in ratings][0] == ("x", "yes: rating intervals apart")
    # a ladder whose middle agent is best: the two others never met
    rows = _rows("a", "b", [-40, -40, 10] * 20) + _rows("b", "c", [40, 40, -10] * 20)
    support = _support(rows, ["a", "b", "c"])
    assert support[0] == ("b", "yes: their pair is resolved")
    assert support[1][1] == "no: no direct pair, intervals overlap"
    table = markdown_table(*summarise(rows, ["a", "b", "c"]))
    assert "| rank | agent | Bradley-Terry rating (Elo scale) | 95% CI | ranked above the " \
           "next by more than chance? |" in table
    assert "| 1 | b | +" in table and "| yes: their pair is resolved |" in table


def test_no_rating_interval_is_zero_width():
    _, ratings = summarise(_rows("random", "greedy", [-30] * 10), ["random", "greedy"])
    assert [(s.name, s.lo, s.hi, s.na) for s in ratings] == [
        ("greedy", None, None, "swept"), ("random", None, None, "swept")]
    assert ratings[0].rating > 200  # the prior keeps it finite; the table says n/a
    table = markdown_table(*summarise(_rows("random", "greedy", [-30] * 10), ["random", "greedy"]))
    assert "| 1 | greedy | +264 | n/a (swept) |" in table and "- n/a (swept):" in table
    _, ratings = summarise(_rows("random", "greedy", [-30, 10, -20] * 10), ["random", "greedy"])
    for s in ratings:
        assert s.na == "" and s.lo < s.rating < s.hi
