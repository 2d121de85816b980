#!/usr/bin/env python3
"""The Python bindings' cost, measured against NumPy and the C benchmark in one run.

    PYTHONPATH=build/python python3 bench/bench_python.py [--quick] [--json FILE]
        [--c-bench build/bench/ct_bench_broadcast_reduce]

1. Per-call overhead of a 1-element float32 add, from Python: NumPy's
   np.add(a, b, out=c) next to ctensor.add(a, b, out=c) on the same arrays,
   and ctensor.add(a, b) (which allocates a Tensor) next to np.add(a, b).
   With PyTorch installed, also torch.add(out=) next to ctensor.add on torch
   tensors (DLPack 1.3's C exchange API path). Timed with timeit, best of
   interleaved repeats (the host is shared: the minimum is the call's cost).
   Target: ctensor.add(out=) <= np.add(out=).
2. Large arrays: ctensor.add(a, b, out=c) from Python next to the C
   benchmark's BM_ct_add for the same n (Google Benchmark, the same library,
   ctensor's default threads, preallocated output), interleaved rounds,
   median of each. Target: the Python call adds < 2% over C.

A report, not a test: exit status 0 unless something fails to run.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "build", "python"))

import numpy as np  # noqa: E402

import ctensor  # noqa: E402


def best_ns(fn, number, repeat):
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e9


def overhead(quick):
    number, rounds = (20000, 3) if quick else (100000, 5)
    a = np.ones(1, np.float32)
    b = np.ones(1, np.float32)
    c = np.empty(1, np.float32)
    rows = {"np.add(a, b, out=c)": lambda: np.add(a, b, out=c),
            "ctensor.add(a, b, out=c)": lambda: ctensor.add(a, b, out=c),
            "np.add(a, b)": lambda: np.add(a, b),
            "ctensor.add(a, b)": lambda: ctensor.add(a, b),
            "empty lambda (timeit's own cost)": lambda: None}
    try:
        import torch

        ta, tb, tc = torch.ones(1), torch.ones(1), torch.empty(1)
        rows["torch.add(a, b, out=c)"] = lambda: torch.add(ta, tb, out=tc)
        rows["ctensor.add(torch a, b, out=c)"] = lambda: ctensor.add(ta, tb, out=tc)
    except ImportError:
        pass
    best = {k: float("inf") for k in rows}
    for _ in range(rounds):  # interleaved: drift hits every row alike
        for k, f in rows.items():
            best[k] = min(best[k], best_ns(f, number, 3))
    return best


def c_bench_add(binary, n, reps):
    out = os.path.join(os.path.dirname(os.path.abspath(binary)), "ct_bench_python_add.json")
    cmd = [binary, "--benchmark_filter=^BM_ct_add/%d/" % n, "--benchmark_repetitions=%d" % reps,
           "--benchmark_out=" + out, "--benchmark_out_format=json", "--benchmark_min_time=0.3"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(out) as f:
        res = json.load(f)
    times = [b["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b["time_unit"]]
             for b in res["benchmarks"] if b.get("run_type") == "iteration"]
    return times


def py_add(n, reps):
    rng = np.random.default_rng(0)
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    c = np.empty(n, np.float32)
    ctensor.add(a, b, out=c)
    number = max(1, int(0.3 / max(n * 12 / 10e9, 1e-6)))  # ~0.3 s per sample at ~10 GB/s
    return [min(timeit.repeat(lambda: ctensor.add(a, b, out=c), number=number, repeat=1)) / number
            for _ in range(reps)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", help="write the figures here")
    ap.add_argument("--c-bench", default=os.path.join(ROOT, "build", "bench", "ct_bench_broadcast_reduce"))
    args = ap.parse_args()

    print("ctensor %s Python bindings vs NumPy %s%s" % (ctensor.__version__, np.__version__,
                                                       "  (--quick)" if args.quick else ""))
    report = {"overhead_ns": {}, "large": [], "targets": []}
    best = overhead(args.quick)
    report["overhead_ns"] = best
    print("\n1. per-call cost, 1-element float32 add (best of interleaved repeats)")
    for k, v in best.items():
        print("   %-34s %7.0f ns" % (k, v))
    ok1 = best["ctensor.add(a, b, out=c)"] <= best["np.add(a, b, out=c)"]
    fig1 = "ctensor %.0f ns vs NumPy %.0f ns (ratio %.2f)" % (
        best["ctensor.add(a, b, out=c)"], best["np.add(a, b, out=c)"],
        best["ctensor.add(a, b, out=c)"] / best["np.add(a, b, out=c)"])
    report["targets"].append({"target": "1-element add overhead <= np.add(out=)", "ok": ok1, "figure": fig1})
    if "torch.add(a, b, out=c)" in best:
        print("   torch tensors through __dlpack_c_exchange_api__: ctensor %.0f ns vs torch.add(out=) %.0f ns"
              % (best["ctensor.add(torch a, b, out=c)"], best["torch.add(a, b, out=c)"]))

    print("\n2. large arrays: ctensor.add(a, b, out=c) from Python vs the C benchmark BM_ct_add "
          "(same library, default threads, interleaved rounds, medians)")
    sizes = [10**7] if args.quick else [10**7, 10**8]
    rounds = 3 if args.quick else 7
    if not os.path.exists(args.c_bench):
        print("   SKIPPED: %s not built" % args.c_bench)
        report["targets"].append({"target": "large-array Python overhead < 2% over C", "ok": None,
                                  "figure": "C benchmark not built"})
    else:
        worst = None
        for n in sizes:
            c_times, p_times, ratios = [], [], []
            for _ in range(rounds):  # paired rounds: C then Python back to back, one ratio each
                c = c_bench_add(args.c_bench, n, 3)
                p = py_add(n, 3)
                c_times += c
                p_times += p
                ratios.append(statistics.median(p) / statistics.median(c))
            extra = statistics.median(ratios) - 1
            worst = extra if worst is None else max(worst, extra)
            pm = statistics.median(p_times)
            print("   n=%-10d C %8.3f ms   Python %8.3f ms (medians; mins %.3f / %.3f)   Python adds %+6.2f%% "
                  "(median of %d paired rounds)   %.1f GB/s" % (
                      n, statistics.median(c_times) * 1e3, pm * 1e3, min(c_times) * 1e3, min(p_times) * 1e3,
                      extra * 100, rounds, 12 * n / pm / 1e9))
            report["large"].append({"n": n, "c_times_s": c_times, "py_times_s": p_times, "ratios": ratios,
                                    "extra": extra})
        per_call = best["ctensor.add(a, b, out=c)"] * 1e-9
        print("   the binding's own cost per call is the 1-element figure above, %.2f us: %.4f%% of the n=%d "
              "call" % (per_call * 1e6, per_call / statistics.median(report["large"][0]["c_times_s"]) * 100,
                        sizes[0]))
        report["targets"].append({"target": "large-array Python overhead < 2% over C", "ok": worst < 0.02,
                                  "figure": "worst median paired ratio %+.2f%%" % (worst * 100)})
    print("\ntargets")
    for t in report["targets"]:
        status = "SKIP" if t["ok"] is None else ("PASS" if t["ok"] else "MISS")
        print("   %-4s %s: %s" % (status, t["target"], t["figure"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
