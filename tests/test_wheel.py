"""The built wheel works on its own: installed into a fresh virtual environment and run from
a folder outside the repository, it runs the main job and plays a shipped policy.

Slow (builds the wheel, installs it, compiles the rules core afresh): ``pytest -m slow
tests/test_wheel.py``. The venv sees the system's packages (numpy, numba, torch, ...), but
the package itself must come from the venv, not from this checkout or an editable install:
checked through ``__file__``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(args, **kw) -> str:
    done = subprocess.run([str(a) for a in args], capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.mark.slow
def test_the_wheel_runs_the_main_job_and_a_shipped_policy(tmp_path):
    src, wheels = tmp_path / "src", tmp_path / "wheels"   # a clean copy: no stale build/
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "runs", "build", "dist", "*.egg-info", "__pycache__", ".*cache", ".hypothesis"))
    run([sys.executable, "-m", "pip", "wheel", src, "--no-deps", "--no-build-isolation",
         "-w", wheels, "-q"])
    wheel, = wheels.glob("mountain_rummy_env-*.whl")

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--system-site-packages", venv])
    bin_dir = venv / "bin"
    # --ignore-installed: the same version is installed (editable) system-wide; install anyway,
    # into the venv only, leaving that one alone
    run([bin_dir / "python", "-m", "pip", "install", "--no-deps", "--ignore-installed", "-q", wheel])

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba")      # compile afresh, leave no trace
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    kw = {"cwd": elsewhere, "env": env}

    where = json.loads(run([bin_dir / "python", "-c",
                            "import json, agents, experiments, mountain_rummy_env as m; "
                            "print(json.dumps([m.__file__, agents.__file__, experiments.__file__]))"],
                           **kw))
    site = venv.resolve()
    assert all(Path(f).resolve().is_relative_to(site) for f in where), where

    out = run(["mountain-rummy", "tournament", "--deals", "4", "--search-deals", "1",
               "--workers", "1", "--no-progress", "--out", tmp_path / "tournament"], **kw)
    assert "Bradley-Terry" in out and (tmp_path / "tournament" / "report.md").is_file()

    listed = run(["mountain-rummy", "agents"], **kw)
    assert "plays mountain" in listed
    out = run(["mountain-rummy", "play", "--seat", "none", "--agents", "ppo:policy=mountain",
               "greedy", "--seed", "1"], **kw)
    assert "Hand ends by" in out
