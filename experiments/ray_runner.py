"""Play a run's jobs on Ray, on this machine or a cluster, with the rows a local run gives.

A tournament or the luck/skill study is a list of independent jobs (a deal of a table, a
duplicate pair, a game), and a job's row depends only on its arguments (the deal seed fixes
the cards, each agent's seed is derived from the deal), never on the process that plays it.
:func:`run_on_ray` ships the jobs to Ray tasks in chunks and hands every row of a finished
chunk to ``sink``, so the caller appends results as they come and a rerun resumes: the same
seed gives the same rows locally and on Ray, in whatever order they arrive.

Addresses (``--ray [ADDRESS]`` on the command line):

* ``local`` (the flag alone): start a Ray instance on this machine with ``num_cpus`` CPUs;
* ``auto``: the cluster this machine has joined (``ray start`` ran here);
* ``HOST:PORT``: a cluster's head node (its GCS port, 6379 unless ``ray start`` said otherwise);
* ``ray://HOST:PORT``: a remote cluster through Ray Client (port 10001 by default).

Every node must run the same code (``pip install -e .`` of the same commit): each chunk
reports a fingerprint of the sources that played it, and rows from other code are refused.

Failures: Ray retries a chunk whose worker process died (``max_retries``); a chunk that
still fails, or whose job raised, is reported at the end as a :class:`RayRunError` naming it,
after every other chunk has played and been written, so the same command again plays just
the missing jobs. With ``timeout`` (seconds per job) a chunk running longer than its jobs'
time is cancelled: ``timeout_row(job, why)`` gives the rows to record for its jobs (the
luck/skill study records a failed job, as it does locally), else it counts as failed.

Nothing imports Ray unless a run asks for it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import socket
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

LOCAL = "local"
ROOT = Path(__file__).resolve().parent.parent
CODE_PACKAGES = ("mountain_rummy_env", "agents", "experiments")
RAY_EXTRA = 'pip install -e ".[ray]"'
TOKEN_FILE = Path.home() / ".ray" / "auth_token"


class RayRunError(RuntimeError):
    """The run could not reach Ray, or some chunks failed (their jobs were not written)."""


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of the Python sources that play the jobs (rules, agents, experiments)."""
    digest = hashlib.sha256()
    for package in CODE_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            digest.update(str(path.relative_to(ROOT)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RayRunError(f"--ray needs Ray, which is not installed here: {RAY_EXTRA}") from None
    return ray


def _check_reachable(address: str, wait: float = 5.0) -> None:
    """Fail fast with a clear error when ``address`` names a host and port that nothing
    answers on (Ray itself would retry for minutes)."""
    parts = urlsplit(address if "://" in address else "tcp://" + address)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host = port = None
    if not host or not port:
        raise RayRunError(f"cannot read the Ray address {address!r}: give 'local', 'auto', "
                          "HOST:PORT or ray://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=wait).close()
    except OSError as err:
        raise RayRunError(f"no Ray cluster answers at {address} ({err.strerror or err}); "
                          "start one with 'ray start --head' or check the address") from None


def connect(address: str | None = LOCAL, *, num_cpus: int | None = None):
    """Connect this process to Ray (see the module docstring for ``address``) unless it is
    connected already; returns the ``ray`` module."""
    address = address or LOCAL
    if address not in (LOCAL, "auto"):
        _check_reachable(address)
    if address != LOCAL:
        _use_token_if_present()
    ray = _import_ray()
    if ray.is_initialized():
        return ray
    kwargs = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
    if address == LOCAL:
        kwargs["num_cpus"] = num_cpus
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError, ValueError) as err:
        raise RayRunError(f"cannot connect to Ray at {address!r}: {_brief(err)}. A "
                          "cluster with token authentication needs its token here, in "
                          f"{TOKEN_FILE} or RAY_AUTH_TOKEN (docs/scaling.md)") from None
    return ray


def _use_token_if_present() -> None:
    """Send the cluster token when one is here, as ``ray start`` does for its node: Ray
    enables token authentication on a cluster whose head has a token, and a driver that
    connects by address sends it only with ``RAY_AUTH_MODE=token``."""
    if "RAY_AUTH_MODE" not in os.environ and (TOKEN_FILE.exists()
                                               or os.environ.get("RAY_AUTH_TOKEN")):
        os.environ["RAY_AUTH_MODE"] = "token"
        if "ray" in sys.modules:         # Ray read its settings on import: have it read again
            from ray._raylet import Config

            Config.initialize("")


def _play_chunk(fn, jobs):
    """The Ray task: play ``jobs`` in order; returns this worker's code fingerprint and rows."""
    return code_fingerprint(), [fn(job) for job in jobs]


def chunks_of(jobs: list, size: int) -> list[list]:
    return [jobs[k:k + size] for k in range(0, len(jobs), size)]


def auto_chunk_size(num_jobs: int, cpus: int) -> int:
    """About four chunks per CPU (so the last ones finish close together), at most 16 jobs
    in one (so little is replayed when a chunk fails)."""
    return max(1, min(16, num_jobs // max(1, 4 * cpus)))


def run_on_ray(fn, jobs: list, sink, *, address: str | None = LOCAL, num_cpus: int | None = None,
               chunk_size: int | None = None, max_retries: int = 2,
               timeout: float | None = None, timeout_row=None, desc: str = "jobs",
               label=repr) -> None:
    """Play ``fn(job)`` for every job on Ray and call ``sink(row)`` for each row as its chunk
    finishes; raises :class:`RayRunError` at the end if chunks failed (their rows are not
    sunk; ``label(job)`` names a chunk's first job there). At most as many chunks as the
    cluster has CPUs run at once, so a chunk's time limit (``timeout`` per job) counts from
    its start."""
    if not jobs:
        return
    ray = connect(address, num_cpus=num_cpus)
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    size = chunk_size or auto_chunk_size(len(jobs), cpus)
    task = ray.remote(max_retries=max_retries)(_play_chunk)
    waiting = list(reversed(chunks_of(list(jobs), size)))
    running: dict = {}                    # object ref -> (chunk, start time)
    failures: list[str] = []
    here = code_fingerprint()
    while waiting or running:
        while waiting and len(running) < cpus:
            chunk = waiting.pop()
            running[task.remote(fn, chunk)] = (chunk, time.monotonic())
        done, _ = ray.wait(list(running), num_returns=1, timeout=1.0)
        for ref in done:
            chunk, _ = running.pop(ref)
            try:
                there, rows = ray.get(ref)
            except Exception as err:  # noqa: BLE001 - a task error, a dead worker or node
                failures.append(f"{len(chunk)} {desc} from {label(chunk[0])}: {_brief(err)}")
                continue
            if there != here:
                failures.append(f"{len(chunk)} {desc} from {label(chunk[0])}: a worker runs other "
                                f"code (fingerprint {there}, here {here}); install the same "
                                "commit on every node")
                continue
            for row in rows:
                sink(row)
        if timeout is not None:
            now = time.monotonic()
            for ref, (chunk, start) in list(running.items()):
                if now - start > timeout * len(chunk):
                    ray.cancel(ref, force=True)
                    del running[ref]
                    why = f"timeout after {timeout:g} s per job (chunk of {len(chunk)} on Ray)"
                    if timeout_row is None:
                        failures.append(f"{len(chunk)} {desc} from {label(chunk[0])}: {why}")
                    else:
                        for job in chunk:
                            sink(timeout_row(job, why))
    if failures:
        raise RayRunError(f"{len(failures)} chunk(s) failed on Ray and were not recorded; the "
                          "finished ones are kept, run the same command again to play the "
                          "rest:\n  " + "\n  ".join(failures))


def _brief(err: BaseException) -> str:
    """The error's type and the last line of its message (a Ray task error's last line is the
    exception raised in the task)."""
    lines = [x for x in str(err).splitlines() if x.strip()]
    text = lines[-1].strip() if lines else ""
    return f"{type(err).__name__}: {text}"[:300]
