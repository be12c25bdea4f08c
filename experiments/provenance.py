"""Where a result came from: package version, git commit and the time, for run manifests."""

from __future__ import annotations

import subprocess
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

PACKAGE = "mountain-rummy-env"


def package_version() -> str:
    """The installed version of the package, or ``"unknown"`` when it is not installed."""
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


def _git(*args: str) -> str | None:
    here = Path(__file__).resolve().parent
    try:
        done = subprocess.run(["git", "-C", str(here), *args], capture_output=True, text=True,
                              timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit() -> str:
    """The commit of the code that runs (this file's clone), ``"+dirty"`` appended when
    tracked files differ from it; ``"unknown"`` outside a clone of this project (an
    installed wheel, even one inside some other git repository)."""
    here = Path(__file__).resolve()
    top = _git("rev-parse", "--show-toplevel")
    if not top or Path(top, "experiments", here.name).resolve() != here:
        return "unknown"
    commit = _git("rev-parse", "HEAD")
    if not commit:  # a clone without commits yet
        return "unknown"
    changed = _git("status", "--porcelain", "--untracked-files=no")
    return commit + ("+dirty" if changed else "")


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
