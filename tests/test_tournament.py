"""Tournament runner and its statistics."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.stats import bootstrap_ci, bradley_terry, rating_intervals
from experiments.tournament import (
    TournamentConfig, load_results, play_deal, run_tournament, summarise, write_report)


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
    assert again == row  # reproducible: agent seeds come from the deal


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


def test_ladder_schedule_plays_adjacent_pairs_only():
    cfg = TournamentConfig(agents=["random", "greedy", "rules"], deals=2, schedule="ladder")
    assert cfg.pairs() == [("random", "greedy"), ("greedy", "rules")]
    assert len(cfg.jobs()) == 4
    with pytest.raises(ValueError, match="schedule"):
        TournamentConfig(schedule="swiss")


def test_report_files(tmp_path):
    rows = run_tournament(_cfg(workers=2, deals=3), tmp_path, progress=False)
    pairs, ratings = summarise(rows, ["random", "greedy"], n_boot=200)
    assert len(pairs) == 1 and pairs[0].deals == 3
    paths = write_report(pairs, ratings, tmp_path)
    assert "| random | greedy | 3 |" in paths["report"].read_text()
    assert paths["pairs"].read_text().startswith("a,b,deals,margin")
    if "plot" in paths:
        assert paths["plot"].stat().st_size > 1000
