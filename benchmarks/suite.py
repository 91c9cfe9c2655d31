"""lucid's benchmark suite: every workload in benchmarks/workloads.py, lucid against PyTorch.

    python benchmarks/suite.py [--quick] [--only SUBSTRING] [--threads N] [--out DIR] [--no-plot] [--check]

Runs lucid and PyTorch in one process at the same thread count, measures the machine's
ceilings (memory copy bandwidth, torch's sgemm rate; on a GPU machine the device copy and
pinned host-to-device rates), prints a table, and writes DIR/latest.json, DIR/latest.md
(the table in Markdown) and DIR/latest.png (a bar chart of the speedups). DIR defaults to
benchmarks/results. `--quick` takes fewer and shorter samples; `--check` only checks that
lucid and torch compute the same thing on every workload. docs/PERFORMANCE.md explains
the columns.
"""

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time

import numpy as np
import torch

import lucid

from common import per_call, same_threads, time_pair
from workloads import REGISTRY

HERE = os.path.dirname(os.path.abspath(__file__))


def gpu_available():
    return lucid.gpu.is_available() and torch.cuda.is_available()


# -- the machine's ceilings -----------------------------------------------------------------------

def best_time(fn, reps, sync=None):
    """The fastest of `reps` calls after a warm-up: a ceiling is what the machine can do, so
    a sample slowed by other work on the machine must not lower it (rows use the median)."""
    fn()
    if sync:
        sync()
    return min(per_call(fn, 1, sync) for _ in range(reps))


def measure_ceilings(quick):
    """Rates the rows are compared with: achieved rate / ceiling = the "% of ceiling" column."""
    reps = 5 if quick else 11
    c = {}
    n = 32 << 20  # 128 MiB of float32: far beyond any cache
    src, dst = torch.rand(n), torch.empty(n)
    t_torch = best_time(lambda: dst.copy_(src), reps)
    a, b = src.numpy(), dst.numpy()
    t_np = best_time(lambda: np.copyto(b, a), reps)
    # read + write bytes; the faster of torch's (threaded) and NumPy's copy
    c["copy"] = {"value": 2 * n * 4 / min(t_torch, t_np) / 1e9, "unit": "GB/s",
                 "what": "memory copy bandwidth, 128 MiB float32 (read + write bytes; fastest call of torch copy_ and numpy.copyto)"}
    del src, dst, a, b
    m = 2048
    x, y = torch.randn(m, m), torch.randn(m, m)
    t = best_time(lambda: torch.mm(x, y), reps)
    c["sgemm"] = {"value": 2 * m ** 3 / t / 1e9, "unit": "GFLOP/s",
                  "what": f"torch.mm {m}x{m} float32 at {torch.get_num_threads()} threads, fastest call"}
    if gpu_available():
        sync = torch.cuda.synchronize
        g = torch.rand(256 << 20, device="cuda")  # 1 GiB
        h = torch.empty_like(g)
        t = best_time(lambda: h.copy_(g), reps, sync)
        c["gpu_copy"] = {"value": 2 * g.numel() * 4 / t / 1e9, "unit": "GB/s",
                         "what": "GPU device-to-device copy, 1 GiB (read + write bytes), torch, fastest call"}
        del g, h
        p = torch.rand(64 << 20).pin_memory()  # 256 MiB
        t = best_time(lambda: p.to("cuda", non_blocking=True), reps, sync)
        c["h2d"] = {"value": p.numel() * 4 / t / 1e9, "unit": "GB/s",
                    "what": "host-to-device copy from pinned memory, 256 MiB, torch, fastest call"}
    return c


# -- running workloads -----------------------------------------------------------------------------

def ceiling_key(w):
    return w.ceiling or ("sgemm" if w.flops else "copy")


def _materialised(out):
    """Queues what a lazy GPU recorded while `out` is held, so that its calls run
    (Workload.materialise); no host wait, as torch's calls queue theirs."""
    lucid.gpu.flush()
    return out


def run(w, quick, ceilings):
    ls, ts = w.setup()
    sync_l = sync_t = None
    if w.device == "gpu":
        sync_l, sync_t = lucid.gpu.synchronize, w.other_sync or torch.cuda.synchronize
    tfn = w.torch_fn or w.fn
    if w.device == "gpu" and w.materialise:
        def lfn():
            return _materialised(w.fn(lucid, *ls))
    else:
        def lfn():
            return w.fn(lucid, *ls)
    sl, st = time_pair(lfn, lambda: tfn(torch, *ts),
                       samples=5 if quick else 11, target=0.01 if quick else 0.05,
                       sync_l=sync_l, sync_t=sync_t)
    tl, tt = statistics.median(sl) / w.ops, statistics.median(st) / w.ops
    row = {"name": w.name, "group": w.group, "device": w.device, "lucid_s": tl, "torch_s": tt,
           "ratio": tl / tt, "speedup": tt / tl,
           # the fastest sample too: far below the median means the machine was busy
           "lucid_min_s": min(sl) / w.ops, "torch_min_s": min(st) / w.ops}
    work, unit = (w.nbytes, "GB/s") if w.nbytes else (w.flops, "GFLOP/s") if w.flops else (None, None)
    if work:
        ceil = ceilings.get(ceiling_key(w))
        # (work is a whole call's: `ops` calls' worth of the per-op times)
        row.update(unit=unit, lucid_rate=work / (tl * w.ops) / 1e9, torch_rate=work / (tt * w.ops) / 1e9,
                   ceiling=ceiling_key(w))
        if ceil:
            row.update(lucid_pct=100 * row["lucid_rate"] / ceil["value"],
                       torch_pct=100 * row["torch_rate"] / ceil["value"])
    return row


def check(w):
    """Runs `w` once on each side and compares the results: a benchmark that compares two
    different computations is worse than none. Returns an error string or None."""
    ls, ts = w.setup()
    a, b = w.fn(lucid, *ls), (w.torch_fn or w.fn)(torch, *ts)
    if isinstance(a, tuple):  # (values, indices) of max along a dimension
        a, b = a[0], b[0]
    if not hasattr(b, "shape"):
        return None  # the backward chain returns nothing
    a = a.detach().cpu().numpy()
    b = b.detach().cpu().numpy() if hasattr(b, "detach") else np.asarray(b)  # a JAX array
    if a.shape != b.shape:
        return f"shape {a.shape} vs torch {b.shape}"
    if not np.allclose(a, b, rtol=1e-3, atol=1e-3):
        return f"values differ by up to {np.abs(a.astype(np.float64) - b).max():.3g}"
    return None


# -- output ------------------------------------------------------------------------------------------

def fmt_time(s):
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s / 1e-9:.3g} ns"


COLUMNS = ["workload", "lucid", "torch", "lucid/torch", "speedup", "lucid rate", "% ceil", "torch % ceil"]


def cells(r):
    rate = f"{r['lucid_rate']:.3g} {r['unit']}" if "lucid_rate" in r else ""
    return [r["name"], fmt_time(r["lucid_s"]), fmt_time(r["torch_s"]), f"{r['ratio']:.2f}",
            f"{r['speedup']:.2f}x", rate,
            f"{r['lucid_pct']:.0f}%" if "lucid_pct" in r else "",
            f"{r['torch_pct']:.0f}%" if "torch_pct" in r else ""]


def print_row(r, widths):
    c = cells(r)
    print("  ".join([c[0].ljust(widths[0])] + [x.rjust(w) for x, w in zip(c[1:], widths[1:])]), flush=True)


def geomean_line(rows):
    return (f"geometric mean over {len(rows)} workloads: lucid/torch {statistics.geometric_mean([r['ratio'] for r in rows]):.2f}"
            f" (speedup {statistics.geometric_mean([r['speedup'] for r in rows]):.2f}x)")


def markdown(meta, ceilings, rows):
    lines = [f"{meta['date']}, {meta['machine']}, {meta['threads']} threads, torch {meta['torch']}, "
             f"{'quick run' if meta['quick'] else 'full run'}, load average {meta['load_average']:.1f}. Ceilings: "
             + "; ".join(f"{k} {v['value']:.3g} {v['unit']}" for k, v in ceilings.items()) + ".", "",
             "| " + " | ".join(COLUMNS) + " |", "|" + " --- |" * len(COLUMNS)]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(lines + ["", geomean_line(rows), ""])


def plot(rows, path):
    import matplotlib  # only here: lucid and the other benchmarks never need it
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["name"] for r in rows]
    speed = [r["speedup"] for r in rows]
    fig, ax = plt.subplots(figsize=(9, 1.2 + 0.22 * len(rows)))
    ax.barh(range(len(rows)), speed, color=["tab:green" if s >= 1 else "tab:red" for s in speed])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_yticks(range(len(rows)), names, fontsize=7)
    ax.set_ylim(len(rows) - 0.5, -0.5)  # first workload on top, no empty margins
    ax.set_xlabel("speedup of lucid over PyTorch (torch time / lucid time; > 1: lucid faster)")
    ax.set_title("lucid vs PyTorch, same process, same thread count")
    fig.savefig(path, dpi=110, bbox_inches="tight")  # "tight": long workload names stay whole
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter samples")
    ap.add_argument("--only", default="", help="run only workloads whose name or group contains this")
    ap.add_argument("--out", default=os.path.join(HERE, "results"), help="folder for latest.json/.md/.png")
    ap.add_argument("--no-plot", action="store_true", help="skip the PNG chart")
    ap.add_argument("--check", action="store_true", help="only check that lucid and torch agree on each workload")
    ap.add_argument("--threads", type=int, default=0, help="thread count for both (default: lucid's)")
    args = ap.parse_args()

    if args.threads:
        lucid.set_num_threads(args.threads)
    threads = same_threads()
    has_gpu = gpu_available()
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "cpu": cpu_model(), "threads": threads, "torch": torch.__version__, "lucid": lucid.__version__,
            "blas": lucid._C._blas_info(), "quick": args.quick, "gpu": has_gpu,
            "load_average": os.getloadavg()[0]}  # other work on the machine skews the times
    meta["machine"] = f"{meta['cpu']}, {os.cpu_count()} cores" + (f", {torch.cuda.get_device_name()}" if has_gpu else "")
    print(f"lucid {meta['lucid']} ({meta['blas']}), torch {meta['torch']}, {threads} threads; {meta['machine']}")
    selected = [w for w in REGISTRY if (w.device == "cpu" or has_gpu)
            and (args.only in w.name or args.only == w.group)]
    if not selected:
        print(f"no workload matches --only {args.only!r}" + ("" if has_gpu else " (GPU rows need a GPU)"))
        return 1
    if args.check:
        errors = [(w.name, e) for w in selected if (e := check(w))]
        for name, e in errors:
            print(f"MISMATCH {name}: {e}")
        print(f"checked {len(selected)} workloads: {len(errors)} mismatches")
        return 1 if errors else 0
    ceilings = measure_ceilings(args.quick)
    for k, v in ceilings.items():
        print(f"ceiling {k}: {v['value']:.4g} {v['unit']}  ({v['what']})")
    widths = [max(len(w.name) for w in selected), 9, 9, 11, 8, 15, 6, 12]
    print("  ".join([COLUMNS[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(COLUMNS[1:], widths[1:])]))
    rows = []
    start = time.perf_counter()
    for w in selected:
        rows.append(run(w, args.quick, ceilings))
        print_row(rows[-1], widths)
    print(geomean_line(rows))
    meta["load_average_after"] = os.getloadavg()[0]
    print(f"({time.perf_counter() - start:.0f} s; load average {meta['load_average']:.1f} before, "
          f"{meta['load_average_after']:.1f} after)")

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "latest.json"), "w") as f:
        json.dump({"meta": meta, "ceilings": ceilings, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out, "latest.md"), "w") as f:
        f.write(markdown(meta, ceilings, rows))
    if not args.no_plot:
        plot(rows, os.path.join(args.out, "latest.png"))
    print(f"wrote {os.path.relpath(args.out)}/latest.json, latest.md" + ("" if args.no_plot else ", latest.png"))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


if __name__ == "__main__":
    sys.exit(main())
