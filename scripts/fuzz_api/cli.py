"""Command line: argument parsing and dispatch (worker, replay, list, run)."""

from __future__ import annotations

import argparse

from . import __doc__ as PACKAGE_DOC
from .driver import replay, run_fuzz, use_snapshot
from .targets import build_targets, filter_targets
from .worker import worker_main


def main(argv=None):
    ap = argparse.ArgumentParser(description=PACKAGE_DOC.split("\n")[0])
    ap.add_argument("--calls", type=int, default=0, help="number of calls (0: until the time budget)")
    ap.add_argument("--seed", default="0")
    ap.add_argument("--start", type=int, default=0, help="first call index")
    ap.add_argument("--time-budget", type=float, default=0, help="seconds (0: no limit)")
    ap.add_argument("--timeout", type=float, default=10, help="per-call timeout in seconds")
    ap.add_argument("--mem-limit-gb", type=float, default=6, help="worker RLIMIT_AS")
    ap.add_argument("--worker-env", action="append", metavar="KEY=VALUE",
                    help="environment for the worker (e.g. PYTHONPATH of an instrumented "
                         "build, LD_PRELOAD, ASAN_OPTIONS); repeatable")
    ap.add_argument("--no-snapshot", action="store_true",
                    help="import lucid in place (default: from a private copy of the package)")
    ap.add_argument("--max-rss-mb", type=float, default=3000,
                    help="restart the worker when its resident memory passes this")
    ap.add_argument("--only", default=None, help="regex on target names")
    ap.add_argument("--replay", default=None, metavar="SEED:INDEX[:TARGET]",
                    help="rerun one call (give TARGET when the target list may have changed)")
    ap.add_argument("--inline", action="store_true", help="with --replay: run in this process")
    ap.add_argument("--self-test", action="store_true",
                    help="add selftest.* targets that abort, segfault, hang, ...")
    ap.add_argument("--list-targets", action="store_true")
    ap.add_argument("--json", default=None, help="write the summary as JSON here")
    ap.add_argument("--progress", type=float, default=30, help="progress line every N s (0: off)")
    ap.add_argument("--stop-on-failure", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker_main(args)
    use_snapshot(args)
    if args.replay:
        return replay(args)
    if args.list_targets:
        for t in filter_targets(build_targets(args.self_test), args.only):
            print(f"{t.kind:9s} {t.name}  {t.params}")
        return 0
    if not args.calls and not args.time_budget:
        args.calls = 2000
    return run_fuzz(args)
