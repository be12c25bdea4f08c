"""The luck-skill pipeline end to end on a tiny configuration (cheap agents only), resume,
the clairvoyant agent and the CLI parser."""

from __future__ import annotations

import json

import numpy as np

from experiments.luck_skill import LuckSkillConfig, run_study
from experiments.luck_skill.runner import collect, play_duplicate
from experiments.tournament import load_results


def _cfg(**kw):
    base = dict(variants=["mountain", "nosuchvariant"], ladder=["random", "greedy", "rules"],
                deals=3, search_deals=1, self_agents=["random"], self_deals=3, games=1,
                game_agents=("rules", "rules"), workers=1, clair_budget=None)
    base.update(kw)
    return LuckSkillConfig(**base)


def test_study_end_to_end_and_resume(tmp_path):
    cfg = _cfg()
    res = run_study(cfg, tmp_path / "runs", report=tmp_path / "r.md",
                    data_dir=tmp_path / "data", command="mountain-rummy luck-skill --test",
                    progress=False, n_boot=20, add_ppo=False, log=lambda *a: None)
    assert "nosuchvariant" in res["missing"]
    st = res["stats"]["mountain"]
    assert set(st.ladder) == {"random", "greedy", "rules"}
    assert np.isfinite(st.point["hands_per_game"]) and st.point["hands_per_game"] >= 1
    md = (tmp_path / "r.md").read_text()
    assert "mountain-rummy luck-skill --test" in md.split("\n```\n")[1]
    assert "nosuchvariant: not measured" in md
    anchor = md.split("## Beside published figures for other games")[1]
    assert "| mountain |" in anchor and "| chess | 0.76 |" in anchor
    assert (tmp_path / "data" / "summary.csv").exists()
    rows = load_results(tmp_path / "runs" / "mountain" / "results.jsonl")
    # 3 ladder pairs x 3 deals + 3 self-play deals + 1 game
    assert len(rows) == 3 * 3 + 3 + 1
    # resume: nothing new is played, the same rows come back
    again = collect(cfg, "mountain", ["random", "greedy", "rules"], tmp_path / "runs" / "mountain",
                    progress=False)
    assert len(again) == len(rows)
    assert len(load_results(tmp_path / "runs" / "mountain" / "results.jsonl")) == len(rows)


def test_torn_line_is_skipped_and_replayed(tmp_path):
    cfg = _cfg(ladder=["random", "greedy"], self_agents=[], games=0, deals=2)
    out = tmp_path / "m"
    rows = collect(cfg, "mountain", ["random", "greedy"], out, progress=False)
    assert len(rows) == 2
    path = out / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text(lines[0] + "\n" + lines[1][:20])       # an interrupted write
    rows = collect(cfg, "mountain", ["random", "greedy"], out, progress=False)
    assert sorted(r["deal"] for r in rows) == [0, 1]


def test_selfplay_uses_distinct_random_streams():
    r = play_duplicate("mountain", {}, 0, "random", "random", 3)
    h1, h2 = r["hands"]
    # the same cards, but the random agent's choices differ between the two plays
    assert (h1["steps"], h1["points"]) != (h2["steps"], h2["points"])


def test_clairvoyant_plays_legal_hands():
    from agents import make_agent
    from experiments.luck_skill import clairvoyant  # noqa: F401

    agent = make_agent("clairvoyant:budget=4", seed=0)
    assert agent.name == "clairvoyant:budget=4"
    r = play_duplicate("mountain", {}, 0, "clairvoyant:budget=4", "greedy", 1)
    assert all(h["steps"] > 0 for h in r["hands"])
    json.dumps(r)


def test_cli_parser_has_luck_skill():
    from experiments.cli import build_parser

    args = build_parser().parse_args(["luck-skill", "--quick", "--variants", "mountain",
                                      "--workers", "1", "--seed", "3"])
    assert args.command == "luck-skill" and args.quick and args.seed == 3


def test_clairvoyant_rollouts_start_from_the_true_state():
    import agents.search as search
    from experiments.luck_skill import clairvoyant
    from mountain_rummy_env import Game, player_view
    from mountain_rummy_env.records import make_variant

    game = Game(make_variant("mountain", {}), 1)
    game.reset(seed=7)
    view = player_view(game, 0, game.current_player(0))
    states = clairvoyant.true_states(view, 3)
    assert all(np.array_equal(s["loc"], game.states[0]["loc"]) for s in states)
    assert all(np.array_equal(s["stock"], game.states[0]["stock"]) for s in states)
    from agents import make_agent
    from mountain_rummy_env import gin_variant

    for v in (game.variant, gin_variant()):   # both variants' clairvoyants see the truth
        g = Game(v, 1)
        g.reset(seed=7)
        view = player_view(g, 0, g.current_player(0))
        seer = make_agent("clairvoyant:budget=4", variant=v.name)
        assert all(np.array_equal(s["loc"], g.states[0]["loc"]) for s in seer.sample_states(view, 2))
        normal = make_agent("search:budget=4", seed=0, variant=v.name)
        dealt = normal.sample_states(view, 8)
        assert isinstance(normal, search.MonteCarloSearch)
        assert any(not np.array_equal(s["loc"], g.states[0]["loc"]) for s in dealt)


def test_job_timeout_and_errors_are_recorded(monkeypatch):
    import time

    from experiments.luck_skill import runner

    def fake(a):
        kind, x, y, deal = a[3]
        if deal == 1:
            time.sleep(30)
        if deal == 2:
            raise RuntimeError("boom")
        return {"kind": kind, "a": x, "b": y, "deal": deal, "ok": True}

    monkeypatch.setattr(runner, "run_job", fake)
    args = [("mountain", {}, 0, ("pair", "x", "y", d)) for d in range(3)]
    rows = []
    t0 = time.monotonic()
    runner.run_jobs(args, rows.append, workers=2, timeout=1.0)
    assert time.monotonic() - t0 < 15
    by = {r["deal"]: r for r in rows}
    assert by[0]["ok"] and "timeout" in by[1]["error"] and "boom" in by[2]["error"]


def test_four_seat_study_rotates_a_against_a_field(tmp_path):
    """German at 4 seats: a pairing is `a` in one seat against three `b`, the deal played
    four times with `a` in seat r in play r; both directions are jobs; the analysis reads
    each seat's points minus the other seats' mean, so a table's results sum to zero."""
    from experiments.luck_skill.analysis import analyse, pair_data

    r = play_duplicate("german", {"num_players": 4}, 0, "greedy", "random", 5)
    assert [h["seats"] for h in r["hands"]] == [
        ["greedy", "random", "random", "random"], ["random", "greedy", "random", "random"],
        ["random", "random", "greedy", "random"], ["random", "random", "random", "greedy"]]
    assert all(len(h["points"]) == 4 for h in r["hands"])
    cfg = _cfg(variants=["german"], ladder=["random", "greedy"], self_agents=["random"],
               deals=4, self_deals=2, games=0, variant_options={"german": {"num_players": 4}})
    jobs = cfg.jobs("german", ["random", "greedy"])
    assert {(j[1], j[2]) for j in jobs if j[0] == "pair"} == {("random", "greedy"),
                                                              ("greedy", "random")}
    rows = collect(cfg, "german", ["random", "greedy"], tmp_path, progress=False)
    data = pair_data(rows)
    d = data[("greedy", "random")]
    assert d.y.shape == (4, 4) and d.x.shape == (4, 4)
    hand = rows[0]["hands"][0]["points"]
    rel = [p - (sum(hand) - p) / 3 for p in hand]
    assert sum(rel) == 0
    st = analyse("german", rows, ["random", "greedy"], n_boot=10)
    assert st.ladder == ["random", "greedy"]                 # greedy beats a field of random
    assert st.point["best_minus_random"] > 0
    assert np.isfinite(st.point["lambda_pairs"]) and np.isfinite(st.point["lambda_self[random]"])


def test_cli_options_play_two_seat_german(tmp_path):
    """``--options '{"german": {"num_players": 2}}'``: the study plays German at two seats
    (two points per hand) and the report's command repeats the options; options for a
    variant not studied, or that the variant refuses, are one-line errors."""
    import pytest

    from experiments.cli import main

    out, report = tmp_path / "runs", tmp_path / "r.md"
    args = ["luck-skill", "--variants", "german", "--options", '{"german": {"num_players": 2}}',
            "--ladder", "random", "greedy", "--deals", "2", "--self-deals", "1",
            "--self-agents", "random", "--games", "0", "--workers", "1", "--no-progress",
            "--boot", "10", "--out", str(out), "--report", str(report)]
    assert main(args) == 0
    rows = load_results(out / "german" / "results.jsonl")
    assert rows and all(r["options"] == {"num_players": 2} for r in rows)
    assert all(len(h["points"]) == 2 for r in rows for h in r["hands"])
    assert '--options \'{"german": {"num_players": 2}}\'' in report.read_text()
    for bad, says in (('{"gin": {}}', "not in --variants"),
                      ('{"german": {"num_players": 7}}', "num_players")):
        with pytest.raises(SystemExit, match=says):
            main(args[:3] + ["--options", bad] + args[5:])


def test_a_variant_at_another_table_size_is_its_own_column(tmp_path):
    """``--variants german,german@2``: German at its default table and at 2 seats are two
    columns with their own results; rows name the variant and carry the table size; the
    report titles the column and keeps it out of the answer. Table sizes the variant
    refuses, and ones that are not numbers, are one-line errors."""
    import pytest

    from experiments.cli import main

    cfg = LuckSkillConfig(variants=["german", "german@2"],
                          variant_options={"german": {"num_players": 3}})
    assert cfg.options_for("german") == {"num_players": 3}
    assert cfg.options_for("german@2") == {"num_players": 2}
    assert (cfg.seats("german"), cfg.seats("german@2"), cfg.variant_of("german@2")) == (3, 2, "german")

    out, report = tmp_path / "runs", tmp_path / "r.md"
    args = ["luck-skill", "--variants", "mountain,german@2", "--ladder", "random", "greedy",
            "--deals", "2", "--self-deals", "1", "--self-agents", "random", "--games", "0",
            "--workers", "1", "--no-progress", "--boot", "10", "--out", str(out),
            "--report", str(report)]
    assert main(args) == 0
    rows = load_results(out / "german@2" / "results.jsonl")
    assert rows and all(r["variant"] == "german" and r["options"] == {"num_players": 2}
                        for r in rows)
    md = report.read_text()
    assert "| German Rummy at 2 seats | 2 |" in md
    answer = md.split("## The answer (pre-registered)")[1].split("\n\n")[1]
    assert "German" not in answer.split("Not measured in this run:")[0]   # secondary only
    for bad, says in (("crazy@2", "num_players"), ("german@two", "table size")):
        with pytest.raises(SystemExit, match=says):
            main(args[:2] + [bad] + args[3:])


def test_the_precision_rule_plays_blocks_until_the_interval_is_narrow(tmp_path):
    """``precision``: a pairing is played in blocks until its 95% half-width is within
    ``precision`` single-hand SDs or it reaches ``max_deals``; a rerun plays nothing new
    (the blocks follow from the rows on file); the report states the precision reached."""
    from experiments.luck_skill.analysis import pair_data, pair_precision

    cfg = _cfg(variants=["mountain"], ladder=["random", "greedy"], deals=3, self_deals=1,
               games=0, precision=0.05, max_deals=8)
    rows = collect(cfg, "mountain", ["random", "greedy"], tmp_path / "mountain", progress=False)
    pairs = pair_data(rows)
    sd, half = pair_precision(pairs)
    n = pairs[("random", "greedy")].n
    assert 3 < n <= 8
    assert half[("random", "greedy")] <= 0.05 * sd or n == 8
    again = collect(cfg, "mountain", ["random", "greedy"], tmp_path / "mountain", progress=False)
    assert len(again) == len(rows) == len(load_results(tmp_path / "mountain" / "results.jsonl"))
    res = run_study(cfg, tmp_path, report=tmp_path / "r.md", progress=False, n_boot=5,
                    add_ppo=False, play=False, log=lambda *a: None)
    assert res["stats"]["mountain"].n_deals["random vs greedy"] == n
    assert "Precision reached" in (tmp_path / "r.md").read_text()
