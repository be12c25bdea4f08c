"""``python -m benchmarks``: throughput of our envs and solver beside OpenSpiel and RLCard.

Everything runs in one process pinned to one CPU core, with numba/BLAS threads set to 1, so
the numbers are per core. See ``docs/benchmarks.md``.
"""

from __future__ import annotations

import os

for _var in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
             "NUMEXPR_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402

from .bench import run_all  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    ap.add_argument("--quick", action="store_true", help="about 1.5 s per row")
    ap.add_argument("--seconds", type=float, default=None, help="seconds per row (default 5)")
    ap.add_argument("--batches", default="1,64,1024,4096", help="vector env batch sizes")
    ap.add_argument("--markdown", metavar="FILE", help="also write the tables as markdown")
    ap.add_argument("--no-peers", action="store_true", help="skip OpenSpiel and RLCard rows")
    ap.add_argument("--no-profile", action="store_true", help="skip the step-time breakdown")
    ap.add_argument("--core", type=int, default=0, help="CPU core to pin to (default 0)")
    ap.add_argument("--trainer", action="store_true",
                    help="add the self-play PPO trainer's learner steps/s, Mountain and Gin "
                         "(at least 10 s each; needs torch)")
    args = ap.parse_args(argv)
    seconds = args.seconds if args.seconds is not None else (1.5 if args.quick else 5.0)
    try:
        os.sched_setaffinity(0, {args.core})
    except (AttributeError, OSError) as err:  # pragma: no cover - non-Linux
        print(f"note: could not pin to core {args.core}: {err}", file=sys.stderr)
    text, md = run_all(seconds=seconds, batches=[int(b) for b in args.batches.split(",")],
                       peers=not args.no_peers, profile=not args.no_profile, trainer=args.trainer)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(md)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
