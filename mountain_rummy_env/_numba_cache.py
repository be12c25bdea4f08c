"""Where numba caches the compiled rules: one folder per version of the package's sources.

Numba invalidates a cached function only when its own file changes, yet a kernel such as
``core.batch.step_batch`` has the rules of ``core.rules`` compiled into it. Keying the cache
folder by a hash of every source file in the package means an edit anywhere recompiles
everything that could depend on it, and never serves stale machine code. ``NUMBA_CACHE_DIR``
set by the user wins.

Numba names a compiled function after its argument types, a record type by a number given
in the order a process meets its layouts. Two processes that compile kernels for different
record layouts (German's spec in one, Crazy's in another) can give them the same number;
a third process that loads both from the cache then runs one layout's code on the other's
records (Crazy's masks came out wrong after German's were loaded).
:func:`stable_record_names` names each layout by a digest of its fields instead.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numba
from numba.core.types import npytypes


def _record_mangling_args(self):
    return type(self).__name__, (hashlib.sha256(self.name.encode()).hexdigest()[:20],)


def stable_record_names() -> None:
    """Mangle numba's record types by their layout, not by a per-process number."""
    npytypes.Record.mangling_args = property(_record_mangling_args)


def configure_cache() -> None:
    stable_record_names()
    if os.environ.get("NUMBA_CACHE_DIR"):
        return
    package = Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    numba.config.CACHE_DIR = str(base / "mountain-rummy-env" / digest.hexdigest()[:16])
