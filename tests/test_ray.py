"""Tournaments and the luck/skill study on Ray (experiments.ray_runner, docs/scaling.md).

Ray runs in local mode with 2 CPUs, started once for the file. What is checked: the same
seed gives the same rows and the same report tables as a local run (two and four seats, and
the luck/skill study's jobs); a run resumes; a worker that dies, a job that raises or runs
too long, code that differs between nodes and an unreachable address each give a clear error
with the finished chunks kept; and nothing imports Ray without ``--ray``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from experiments import ray_runner
from experiments.luck_skill import LuckSkillConfig
from experiments.luck_skill.runner import collect
from experiments.ray_runner import RayRunError, run_on_ray
from experiments.tournament import (
    TournamentConfig, load_results, report_run, row_key, run_tournament, without_times)

if os.environ.get("CI"):
    import ray  # CI installs the [dev] extra, which holds [ray]: never skip there
else:
    ray = pytest.importorskip("ray", reason='Ray is not installed; pip install -e ".[ray]"')

ROOT = Path(__file__).resolve().parent.parent
REPORT_TABLES = ("pairs.csv", "ratings.csv", "agents.csv", "tables.csv")


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One local Ray instance (2 CPUs) for the file; this module's functions travel to the
    workers by value (the workers need not import the tests)."""
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray_runner.connect("local", num_cpus=2)
    yield
    ray.shutdown()


def _sorted_rows(out: Path) -> list[dict]:
    return sorted((without_times(r) for r in load_results(out / "results.jsonl")),
                  key=lambda r: json.dumps(row_key(r)))


def _tables(out: Path) -> dict[str, str]:
    return {name: (out / name).read_text() for name in REPORT_TABLES if (out / name).exists()}


@pytest.mark.parametrize("variant, options, agents", [
    ("mountain", {}, ["random", "greedy", "rules"]),
    pytest.param("german", {"num_players": 4}, ["random", "greedy", "random", "greedy"],
                 marks=pytest.mark.slow),   # about 3 minutes: the N-seat tables on Ray
])
def test_same_seed_same_rows_and_tables_locally_and_on_ray(tmp_path, variant, options, agents):
    kw = dict(agents=agents, deals=4, seed=123, variant=variant, variant_options=options)
    local = run_tournament(TournamentConfig(workers=1, **kw), tmp_path / "local", progress=False)
    on_ray = run_tournament(TournamentConfig(workers=2, ray="local", **kw), tmp_path / "ray",
                            progress=False)
    assert len(local) == len(on_ray) == len(TournamentConfig(**kw).jobs())
    assert _sorted_rows(tmp_path / "local") == _sorted_rows(tmp_path / "ray")
    report_run(local, tmp_path / "local", n_boot=200, skill_boot=20)
    report_run(on_ray, tmp_path / "ray", n_boot=200, skill_boot=20)
    assert _tables(tmp_path / "local") == _tables(tmp_path / "ray")
    assert _tables(tmp_path / "ray")


def test_a_ray_run_resumes_where_it_stopped(tmp_path):
    cfg = TournamentConfig(agents=["random", "greedy"], deals=6, seed=5, ray="local")
    first = run_tournament(cfg, tmp_path, progress=False, max_jobs=2)
    assert len(first) == 2
    rows = run_tournament(cfg, tmp_path, progress=False)
    keys = [row_key(r) for r in load_results(tmp_path / "results.jsonl")]
    assert len(rows) == 6 and len(keys) == len(set(keys)) == 6


def test_luck_skill_jobs_give_the_same_rows_on_ray(tmp_path):
    kw = dict(variants=["gin"], ladder=["random", "greedy"], deals=3, self_agents=["random"],
              self_deals=2, games=0, seed=77)
    local = collect(LuckSkillConfig(workers=1, **kw), "gin", ["random", "greedy"],
                    tmp_path / "local", progress=False)
    on_ray = collect(LuckSkillConfig(ray="local", **kw), "gin", ["random", "greedy"],
                     tmp_path / "ray", progress=False)
    key = lambda r: (r["kind"], r["a"], r["b"], r["deal"])  # noqa: E731
    assert len(local) == 5 and not any("error" in r for r in local)
    assert sorted(local, key=key) == sorted(on_ray, key=key)


def test_cli_tournament_on_ray_names_ray_in_its_command(tmp_path, capsys):
    from experiments.cli import main

    assert main(["tournament", "--agents", "random", "greedy", "--deals", "2", "--ray",
                 "--out", str(tmp_path), "--no-progress"]) == 0
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert manifest["sessions"][-1]["command"].endswith("--ray local")
    assert len(load_results(tmp_path / "results.jsonl")) == 2


# -- failures ------------------------------------------------------------------------------

def _die_on_7(job):
    if job == 7:
        os._exit(1)            # the worker process dies, as on a lost node or out of memory
    return {"job": job}


def _raise_on_3(job):
    if job == 3:
        raise ValueError("bad job 3")
    return {"job": job}


def _die_once(job):
    """Dies the first time it meets job 2 (a marker file remembers), then plays it."""
    marker = Path(job[1])
    if job[0] == 2 and not marker.exists():
        marker.write_text("died once")
        os._exit(1)
    return {"job": job[0]}


def _slow_on_1(job):
    if job == 1:
        import time
        time.sleep(60)
    return {"job": job}


def test_a_dead_worker_loses_only_its_chunk_and_a_rerun_plays_it():
    rows = []
    with pytest.raises(RayRunError) as err:
        run_on_ray(_die_on_7, list(range(12)), rows.append, chunk_size=2, max_retries=0)
    assert "1 chunk(s) failed" in str(err.value) and "2 jobs from 6: " in str(err.value)
    assert "run the same command again" in str(err.value)
    assert sorted(r["job"] for r in rows) == [0, 1, 2, 3, 4, 5, 8, 9, 10, 11]
    rest = []
    run_on_ray(_raise_on_3, [6, 7], rest.append)
    assert sorted(r["job"] for r in rest) == [6, 7]


def test_a_failed_tournament_chunk_names_its_table_and_deal(tmp_path):
    cfg = TournamentConfig(agents=["random", "no_such_agent"], deals=2, seed=40, ray="local")
    with pytest.raises(RayRunError, match=r"1 deals from table random, no_such_agent, deal 4[01]: "
                                          r".*no_such_agent"):
        run_tournament(cfg, tmp_path, progress=False)
    assert load_results(tmp_path / "results.jsonl") == []


def test_ray_retries_a_chunk_whose_worker_died(tmp_path):
    rows = []
    jobs = [(k, str(tmp_path / "marker")) for k in range(4)]
    run_on_ray(_die_once, jobs, rows.append, chunk_size=1, max_retries=1)
    assert sorted(r["job"] for r in rows) == [0, 1, 2, 3]
    assert (tmp_path / "marker").exists()


def test_a_job_that_raises_is_named_and_the_rest_are_kept():
    rows = []
    with pytest.raises(RayRunError, match="ValueError: bad job 3"):
        run_on_ray(_raise_on_3, list(range(6)), rows.append, chunk_size=1)
    assert sorted(r["job"] for r in rows) == [0, 1, 2, 4, 5]


def test_a_job_past_its_time_is_cancelled_and_recorded_or_reported():
    rows = []   # 10 s: the quick jobs must finish within it on a loaded machine (at 1 s they
    #             did not, once, with two study processes and the test run on 2 cores)
    run_on_ray(_slow_on_1, [0, 1, 2], rows.append, chunk_size=1, timeout=10.0,
               timeout_row=lambda job, why: {"job": job, "error": why})
    assert sorted((r["job"], "error" in r) for r in rows) == [(0, False), (1, True), (2, False)]
    with pytest.raises(RayRunError, match="timeout after 1 s"):
        run_on_ray(_slow_on_1, [1], rows.append, timeout=1.0)


def test_rows_from_other_code_are_refused(monkeypatch):
    monkeypatch.setattr(ray_runner, "code_fingerprint", lambda: "0" * 16)
    rows = []
    with pytest.raises(RayRunError, match="a worker runs other code"):
        run_on_ray(_raise_on_3, [0, 1], rows.append)
    assert rows == []


def test_an_unreachable_or_unreadable_address_is_a_clear_error_at_once():
    with pytest.raises(RayRunError, match="no Ray cluster answers at 127.0.0.1:9"):
        ray_runner._check_reachable("127.0.0.1:9", wait=2)
    with pytest.raises(RayRunError, match="cannot read the Ray address"):
        ray_runner._check_reachable("head-node-without-port")


def test_cli_refuses_an_unreachable_address_in_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "tournament", "--agents", "random", "greedy",
         "--deals", "2", "--ray", "127.0.0.1:9", "--out", str(tmp_path), "--no-progress"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode != 0
    assert "error: no Ray cluster answers at 127.0.0.1:9" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "results.jsonl").exists() or not load_results(tmp_path / "results.jsonl")


def test_nothing_imports_ray_without_the_flag(tmp_path):
    code = (
        "import sys\n"
        "from experiments.cli import main\n"
        f"main(['tournament', '--agents', 'random', 'greedy', '--deals', '1', '--workers', '1',"
        f" '--out', {str(tmp_path)!r}, '--no-progress'])\n"
        "import experiments.luck_skill, experiments.ray_runner, agents, mountain_rummy_env\n"
        "assert 'ray' not in sys.modules, 'ray was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]


def test_chunks_and_the_study_projection_arithmetic():
    from benchmarks.scaling import projection_table

    assert ray_runner.auto_chunk_size(10, 2) == 1
    assert ray_runner.auto_chunk_size(400, 2) == 16 and ray_runner.auto_chunk_size(80, 2) == 10
    assert [len(c) for c in ray_runner.chunks_of(list(range(7)), 3)] == [3, 3, 1]
    table = projection_table(7200.0, 72000.0, cores=2, efficiency=0.5).splitlines()
    assert "| 1 | 2 | 2.0 | 20 |" in table and "| 2 | 4 | 1.0 | 10 |" in table
