"""The parent side: the worker subprocess (start, call with a timeout, crash and hang
detection), the lucid snapshot, the fuzzing loop, the summary and --replay."""

from __future__ import annotations

import collections
import json
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time

from .programs import make_call, program_text
from .targets import build_targets, filter_targets
from .worker import BAD_MSG, INTERNAL, _worker_namespace

# scripts/fuzz_api: run as `python PKG_DIR --worker ...` to start a worker.
PKG_DIR = os.path.dirname(os.path.abspath(__file__))
# the repository root (python/ under it is the default PYTHONPATH of the worker)
ROOT = os.path.dirname(os.path.dirname(PKG_DIR))


class Worker:
    def __init__(self, args):
        self.args = args
        self.errfile = tempfile.TemporaryFile()
        env = dict(os.environ)
        env.setdefault("PYTHONPATH", os.path.join(ROOT, "python"))
        env["MALLOC_PERTURB_"] = env.get("MALLOC_PERTURB_", "165")
        env["PYTHONFAULTHANDLER"] = "1"
        for kv in args.worker_env or []:
            k, _, v = kv.partition("=")
            env[k] = v
        # the worker's current directory, where calls given a relative path write
        self.workdir = tempfile.mkdtemp(prefix="lucid_fuzz_")
        cmd = [sys.executable, PKG_DIR, "--worker",
               "--mem-limit-gb", str(args.mem_limit_gb), "--workdir", self.workdir]
        # Its own session, so that the worker and anything it forked are killed together.
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.errfile, env=env, bufsize=0,
                                  start_new_session=True)
        self.buf = b""
        self.history = []
        line = self._readline(60)
        if line != "ready":
            err = self.stderr_tail(0)
            self.kill()
            raise RuntimeError(f"worker did not start: {line!r}\n{err}")

    def _readline(self, timeout):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return ""     # EOF: the worker died
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def stderr_tail(self, start, n=12000):
        self.errfile.flush()
        self.errfile.seek(start)
        data = self.errfile.read()
        return data[-n:].decode(errors="replace")

    def errpos(self):
        return os.fstat(self.errfile.fileno()).st_size

    def call(self, stages, timeout, index):
        self.history.append(index)
        start = self.errpos()
        self.p.stdin.write((json.dumps({"stages": stages}) + "\n").encode())
        line = self._readline(timeout)
        if line:
            return json.loads(line), None
        if line is None:   # hang: ask for a traceback, then kill
            try:
                self.p.send_signal(signal.SIGUSR1)
                time.sleep(0.5)
            except ProcessLookupError:
                pass
            self.kill()
            return None, {"kind": "hang", "stderr": self.stderr_tail(start)}
        rc = self.p.wait()
        self.reap_group()
        self.cleanup()
        sig = -rc if rc < 0 else None
        return None, {"kind": "crash", "rc": rc,
                      "signal": signal.Signals(sig).name if sig else None,
                      "stderr": self.stderr_tail(start)}

    def rss_mb(self):
        try:
            with open(f"/proc/{self.p.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            pass
        return 0

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.p.wait()
        self.cleanup()

    def cleanup(self):
        import shutil
        shutil.rmtree(self.workdir, ignore_errors=True)

    def reap_group(self):
        """Kills what the worker left behind in its process group (a crash can leave
        forked children)."""
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


def snapshot_lucid(dest_root):
    """Copies the lucid package (the extension's symlink resolved) to dest_root, so that a
    long run keeps testing one build while the checkout is rebuilt under it (a relinked
    .so truncated under a running worker faults it: a false crash). Retries while the
    extension is being written."""
    import importlib.util
    import shutil
    spec = importlib.util.find_spec("lucid")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError("lucid is not importable (set PYTHONPATH=python)")
    src = list(spec.submodule_search_locations)[0]
    dest = os.path.join(dest_root, "lucid")
    for k in range(30):
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(src, dest, symlinks=False,
                        ignore=shutil.ignore_patterns("__pycache__"))
        ok = subprocess.run([sys.executable, "-c", "import lucid; lucid.zeros(1)"],
                            cwd=dest_root, env=dict(os.environ, PYTHONPATH=dest_root),
                            capture_output=True).returncode == 0
        if ok:
            return dest_root
        print(".. lucid snapshot does not import (a rebuild in progress?), retrying in 10s",
              file=sys.stderr)
        time.sleep(10)
    raise RuntimeError("could not snapshot an importable lucid")


def use_snapshot(args):
    if args.no_snapshot or "lucid" in sys.modules:
        return
    root = tempfile.mkdtemp(prefix="lucid_fuzz_pkg_")
    snapshot_lucid(root)
    sys.path.insert(0, root)
    os.environ["PYTHONPATH"] = root + os.pathsep + os.environ.get("PYTHONPATH", "")
    import atexit
    import shutil
    atexit.register(shutil.rmtree, root, True)


def start_worker(args, tries=30):
    """A fresh worker; retried for a while, because the extension may be being rebuilt
    (a half-written .so fails to import)."""
    for k in range(tries):
        try:
            return Worker(args)
        except RuntimeError as e:
            if k == tries - 1:
                raise
            print(f".. worker failed to start, retrying in 10s: {str(e)[-300:]}", file=sys.stderr)
            time.sleep(10)




def run_fuzz(args):
    targets = filter_targets(build_targets(args.self_test), args.only)
    if not targets:
        print("no targets match", file=sys.stderr)
        return 2
    kinds = collections.Counter(t.kind for t in targets)
    stats = collections.Counter()
    raised = collections.Counter()
    aux = collections.Counter()
    per_target = collections.defaultdict(collections.Counter)
    failures, bad_msgs, internal = [], {}, {}
    worker = None
    t0 = time.monotonic()
    last_report = t0
    i = args.start
    end = args.start + args.calls if args.calls else None
    try:
        while True:
            if end is not None and i >= end:
                break
            if args.time_budget and time.monotonic() - t0 > args.time_budget:
                break
            if worker is None:
                worker = start_worker(args)
            elif stats["calls"] % 200 == 0 and worker.rss_mb() > args.max_rss_mb:
                stats["rss_restarts"] += 1     # a slow leak, or a big cache: start afresh
                worker.close()
                worker = start_worker(args)
            t, stages = make_call(targets, args.seed, i)
            res, fail = worker.call(stages, args.timeout, f"{args.seed}:{i}:{t.name}")
            stats["calls"] += 1
            per_target[t.name]["calls"] += 1
            if fail is not None:
                hist = worker.history[-20:]
                worker = None if fail["kind"] == "crash" else (worker.kill() or None)
                stats[fail["kind"]] += 1
                per_target[t.name][fail["kind"]] += 1
                rec = dict(fail, target=t.name, replay=f"{args.seed}:{i}:{t.name}",
                           program=program_text(stages), history=hist)
                failures.append(rec)
                print(f"!! {fail['kind'].upper()} {t.name} (replay {args.seed}:{i}:{t.name}) "
                      f"{fail.get('signal') or fail.get('rc') or ''}", file=sys.stderr)
                if args.stop_on_failure:
                    break
            else:
                o = res["o"]
                stats[o] += 1
                per_target[t.name][o] += 1
                if o == "raised":
                    raised[res["exc"]] += 1
                elif o == "bug":
                    rec = dict(kind="bug", target=t.name, replay=f"{args.seed}:{i}:{t.name}",
                               program=program_text(stages), exc=res["exc"], msg=res["msg"],
                               stage=res["stage"])
                    failures.append(rec)
                    print(f"!! BUG {res['exc']} in {t.name} (replay {args.seed}:{i}:{t.name}): "
                          f"{res['msg'][:200]}", file=sys.stderr)
                for st, cat, name, msg in res["aux"]:
                    aux[f"{st}:{name}"] += 1
                msgs = [(res["stage"], res["exc"], res["msg"])] if res["exc"] else []
                msgs += [(a[0], a[2], a[3]) for a in res["aux"]] + [tuple(n) for n in res["notes"]]
                for st, name, msg in msgs:
                    if msg and BAD_MSG.search(msg):
                        key = (t.name, name, re.sub(r"\d+", "N", msg)[:120])
                        bad_msgs.setdefault(key, dict(target=t.name, exc=name, msg=msg,
                                                      replay=f"{args.seed}:{i}:{t.name}", stage=st,
                                                      count=0))["count"] += 1
                    if name in INTERNAL:
                        key = (t.name, name, re.sub(r"\d+", "N", msg or "")[:120])
                        internal.setdefault(key, dict(target=t.name, exc=name, msg=msg,
                                                      replay=f"{args.seed}:{i}:{t.name}", stage=st,
                                                      count=0))["count"] += 1
            i += 1
            now = time.monotonic()
            if args.progress and now - last_report > args.progress:
                last_report = now
                print(f".. {stats['calls']} calls, {now - t0:.0f}s, returned {stats['returned']},"
                      f" raised {stats['raised']}, crash {stats['crash']}, hang {stats['hang']},"
                      f" bug {stats['bug']}", file=sys.stderr)
    finally:
        if worker is not None:
            worker.close()
    elapsed = time.monotonic() - t0
    covered = sum(1 for t in targets if per_target[t.name]["calls"])
    summary = {
        "seed": args.seed, "targets": len(targets), "targets_by_kind": dict(kinds),
        "targets_covered": covered, "calls": stats["calls"], "seconds": round(elapsed, 1),
        "returned": stats["returned"], "raised": stats["raised"],
        "raised_by_type": dict(raised.most_common()),
        "arg_build_errors": stats["builderr"],
        "crashes": stats["crash"], "hangs": stats["hang"], "bugs": stats["bug"],
        "worker_restarts_for_memory": stats["rss_restarts"],
        "aux_exceptions": dict(aux.most_common()),
        "bad_messages": list(bad_msgs.values()), "internal_errors": list(internal.values()),
        "failures": failures,
        "never_returned": sorted(t.name for t in targets
                                 if per_target[t.name]["calls"] and not per_target[t.name]["returned"]),
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    print_summary(summary, args.verbose)
    return 1 if (stats["crash"] or stats["hang"] or stats["bug"]) else 0


def print_summary(s, verbose=False):
    p = print
    p(f"== lucid API fuzz: seed {s['seed']}, {s['calls']} calls in {s['seconds']}s "
      f"({s['calls'] / max(s['seconds'], 1e-9):.0f}/s)")
    p(f"targets: {s['targets']} ({', '.join(f'{k} {v}' for k, v in sorted(s['targets_by_kind'].items()))}),"
      f" covered {s['targets_covered']}")
    p(f"returned {s['returned']}, raised {s['raised']}, crashes {s['crashes']}, hangs "
      f"{s['hangs']}, bugs (SystemError/BaseException) {s['bugs']}, "
      f"bad messages {sum(b['count'] for b in s['bad_messages'])} "
      f"({len(s['bad_messages'])} distinct), arg-build errors {s['arg_build_errors']}")
    p("raised by type: " + ", ".join(f"{k} {v}" for k, v in s["raised_by_type"].items()))
    if verbose and s["aux_exceptions"]:
        p("after-call stages (touch/backward) raised: " +
          ", ".join(f"{k} {v}" for k, v in s["aux_exceptions"].items()))
    groups = collections.Counter((f["kind"], f["target"]) for f in s["failures"])
    shown = collections.Counter()
    if groups:
        p("failures by target: " + ", ".join(f"{k} {t} x{n}" for (k, t), n in groups.items()))
    for f in s["failures"]:
        key = (f["kind"], f["target"])
        shown[key] += 1
        if shown[key] > 2 and not verbose:
            continue
        p(f"\n-- {f['kind'].upper()} in {f['target']}  (--replay {f['replay']})"
          + (f" signal {f.get('signal')}" if f.get("signal") else "")
          + (f" rc {f.get('rc')}" if f.get("rc") is not None and not f.get("signal") else "")
          + (f" {f.get('exc')}: {f.get('msg')}" if f.get("exc") else ""))
        p(f["program"])
        if f.get("stderr"):
            lines = f["stderr"].strip().splitlines()
            key = [ln for ln in lines if re.search(r"ERROR: \w+Sanitizer|runtime error:|"
                                                   r"SUMMARY:|Fatal Python error|terminate", ln)]
            if key:
                p("stderr key lines:\n" + "\n".join(key[:8]))
            p("stderr tail:\n" + "\n".join(lines[-25:]))
    for b in s["bad_messages"]:
        p(f"\n-- BAD MESSAGE in {b['target']} ({b['stage']}, x{b['count']}, --replay "
          f"{b['replay']}): {b['exc']}: {b['msg'][:300]}")
    if s["internal_errors"]:
        p("\ninternal-looking errors (not failures):")
        for b in s["internal_errors"][:40]:
            p(f"  {b['target']} ({b['stage']}, x{b['count']}, --replay {b['replay']}): "
              f"{b['exc']}: {(b['msg'] or '')[:200]}")


def replay(args):
    """--replay SEED:INDEX[:TARGET][,SEED:INDEX[:TARGET]...]: the calls run one after the
    other in one fresh worker (a crash that needs earlier calls: pass the failure's
    history, then the failing call)."""
    all_targets = build_targets(args.self_test)
    items = args.replay.split(",")
    if len(items) > 1:
        w = start_worker(args)
        for k, item in enumerate(items):
            seed, index, *target = item.strip().split(":", 2)
            targets = all_targets if target else filter_targets(all_targets, args.only)
            t, stages = make_call(targets, seed, int(index), target[0] if target else None)
            res, fail = w.call(stages, args.timeout, item)
            if fail:
                print(f"# [{k}] {item}: {fail['kind']} rc={fail.get('rc')} signal={fail.get('signal')}")
                print(program_text(stages))
                print(fail["stderr"][-6000:])
                return 1
            print(f"# [{k}] {item}: {res['o']} {res['exc'] or ''} {(res['msg'] or '')[:100]}")
        w.close()
        return 0
    seed, index, *target = args.replay.split(":", 2)
    targets = all_targets if target else filter_targets(all_targets, args.only)
    t, stages = make_call(targets, seed, int(index), target[0] if target else None)
    print(f"# target: {t.name}  (replay {args.replay})")
    print(program_text(stages))
    if args.inline:
        ns = _worker_namespace()
        for stage, code in stages + [("touch", "_touch(_r)")]:
            print(f"# running {stage}", flush=True)
            exec(compile(code, f"<{stage}>", "exec"), ns)
        print("# returned")
        return 0
    w = start_worker(args)
    res, fail = w.call(stages, args.timeout, args.replay)
    if fail:
        print(f"# => {fail['kind']} rc={fail.get('rc')} signal={fail.get('signal')}")
        print(fail["stderr"][-3000:])
        return 1
    w.close()
    print(f"# => {res['o']} at {res['stage']}: {res['exc']}: {res['msg']}")
    for a in res["aux"]:
        print(f"#    {a[0]}: {a[2]}: {a[3][:200]}")
    return 1 if res["o"] == "bug" else 0
