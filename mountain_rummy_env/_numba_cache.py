"""Where numba caches the compiled rules: one folder per version of the package's sources.

Numba invalidates a cached function only when its own file changes, yet a kernel such as
``core.batch.step_batch`` has the rules of ``core.rules`` compiled into it. Keying the cache
folder by a hash of every source file in the package means an edit anywhere recompiles
everything that could depend on it, and never serves stale machine code. ``NUMBA_CACHE_DIR``
set by the user wins.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba


def configure_cache() -> None:
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    numba.config.CACHE_DIR = str(base / "mountain-rummy-env" / digest.hexdigest()[:16])
