"""The benchmark's peer ratios (benchmarks/bench.py): the peers are measured in slices
between the variants' rows, and each row is compared with the slices around it, so a
machine whose speed drifts during the run does not move the ratios."""

from __future__ import annotations

import pytest

from benchmarks import bench


def test_bracketing_rate_is_the_mean_of_the_slices_around_a_block():
    rates = [{"steps_s": x} for x in (10.0, 20.0, 40.0)]
    assert bench.bracketing_rate(rates, 0) == 15.0
    assert bench.bracketing_rate(rates, 1) == 30.0
    assert bench.bracketing_rate(rates, 2) == 40.0      # no slice after it: the last one


def test_peer_summary_is_the_median_slice():
    rates = [{"name": "OpenSpiel x", "steps_s": s, "games_s": s / 100} for s in (9.0, 30.0, 10.0)]
    row = bench.peer_summary("OpenSpiel", rates)
    assert row["steps_s"] == 10.0 and row["games_s"] == 0.1 and row["name"] == "OpenSpiel x"


@pytest.fixture
def fake_rows(monkeypatch):
    """Every bench function replaced by an instant one: our envs at fixed rates, OpenSpiel
    at the rates of successive slices given by the test."""
    openspiel = []
    monkeypatch.setattr(bench, "bench_vector", lambda v, b, s: {
        "name": f"{bench._label(v)} vector env, batch {b}", "steps_s": 100.0,
        "learner_steps_s": 50.0, "games_s": 1.0})
    monkeypatch.setattr(bench, "bench_aec", lambda v, s: {
        "name": f"{bench._label(v)} AEC env (single game)", "steps_s": 40.0, "games_s": 1.0})
    monkeypatch.setattr(bench, "bench_openspiel", lambda s: {
        "name": "OpenSpiel gin_rummy (observation_tensor)", "steps_s": openspiel.pop(0),
        "games_s": 1.0})
    monkeypatch.setattr(bench, "bench_rlcard", lambda s: {
        "name": "RLCard gin-rummy", "steps_s": 10.0, "games_s": 1.0})
    monkeypatch.setattr(bench, "bench_solvers", lambda s: [])
    monkeypatch.setattr(bench, "bench_rearrange", lambda s: [])
    monkeypatch.setattr(bench, "rearrange_rows", lambda rows: [])
    monkeypatch.setattr(bench, "bench_memory", lambda v, obs_dtype: {
        "variant": v, "obs_dtype": obs_dtype, "batch": 1024, "state_bytes": 1, "obs_bytes": 1,
        "mask_bytes": 1, "core_bytes": 3, "tracemalloc_peak_per_env": 1000.0,
        "rss_delta_per_env": 1000.0})
    return openspiel


def test_each_rows_ratio_is_to_the_peer_slices_around_its_variant(fake_rows):
    # slices before gin, mountain, german, crazy, robbers and after the last
    fake_rows.extend([10.0, 30.0, 10.0, 5.0, 5.0, 5.0])
    text, md = bench.run_all(seconds=1.0, batches=[64], profile=False)
    assert "target: gin vector env >= 10x OpenSpiel steps/s -> best 5.00x" in text
    assert "target: mountain vector env >= 10x OpenSpiel steps/s -> best 5.00x" in text
    assert "target: german 4p vector env >= 5x OpenSpiel steps/s -> best 13.33x" in text
    assert "6 slices of 0.5 s between the variants' rows, 5.0-30" in text
    assert fake_rows == []
    # the OpenSpiel row is its median slice: 7.5 steps/s
    assert any(line.startswith("| OpenSpiel gin_rummy") and "| 7.5 |" in line
               for line in md.splitlines())
