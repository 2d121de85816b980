#!/usr/bin/env python3
"""Run the elementwise benchmark and its baselines in one go, print one table.

    python3 bench/run.py [path/to/ct_bench_elementwise] [--quick] [--json FILE]
                         [-- extra Google Benchmark flags]

What runs, in this order, in one process tree (the host is shared and its
bandwidth drifts, so every comparison is against a figure measured in the
same run):
  1. ct_bench_elementwise: the STREAM probe (copy/triad, 1 and 2 threads),
     the exp/tanh accuracy check, the 1-element latency, and for each op and
     size a plain single-threaded C++ loop next to ctensor (Google Benchmark,
     JSON written to --bench-json).
  2. NumPy, single-threaded, with preallocated outputs where NumPy has out=,
     timed with timeit (median of repeats) on the same sizes.
Then one table and the issue's targets with PASS/MISS.

This is a report, not a test: it exits 0 when a target is missed and
non-zero only when the benchmark binary itself fails.
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

SIZES = [10**3, 10**4, 10**5, 10**6, 10**7, 10**8]
BIG_OPS = ("relu", "cast_f32_f16", "where")  # the only ops run at 1e8
OPS = ["relu", "exp", "tanh", "sigmoid", "gelu", "cast_f32_f16", "cast_f16_f32",
       "where", "fma", "clamp", "add_scalar"]
BYTES_PER_ELEM = {"relu": 8, "exp": 8, "tanh": 8, "sigmoid": 8, "gelu": 8,
                  "cast_f32_f16": 6, "cast_f16_f32": 6, "where": 13, "fma": 16,
                  "clamp": 8, "add_scalar": 8}
# What NumPy runs for each op ("" = no single NumPy function: not timed).
NUMPY_EXPR = {
    "relu": "np.maximum(x, 0, out=y)",
    "exp": "np.exp(x, out=y)",
    "tanh": "np.tanh(x, out=y)",
    "cast_f32_f16": "np.copyto(h, x)  (astype(float16) into a preallocated h)",
    "cast_f16_f32": "np.copyto(y, h)  (astype(float32) into a preallocated y)",
    "where": "np.where(c, a, b)  (no out=: allocates)",
    "fma": "np.multiply(a, b, out=y); np.add(y, c, out=y)  (two passes)",
    "clamp": "np.clip(x, -1, 1, out=y)",
    "add_scalar": "np.add(x, 1.5, out=y)",
}


def find_binary(arg):
    if arg:
        return arg
    candidates = []
    for d in sorted(os.listdir(ROOT)):
        p = os.path.join(ROOT, d, "bench", "ct_bench_elementwise")
        if d.startswith("build") and os.access(p, os.X_OK):
            candidates.append(p)
    if not candidates:
        sys.exit("run.py: no build*/bench/ct_bench_elementwise under %s; build it "
                 "(cmake --build build --target ct_bench_elementwise) or pass its path" % ROOT)
    # Prefer build/, else the most recently built.
    pref = os.path.join(ROOT, "build", "bench", "ct_bench_elementwise")
    return pref if pref in candidates else max(candidates, key=os.path.getmtime)


# --------------------------------------------------------------------------
# Google Benchmark JSON
# --------------------------------------------------------------------------

def parse_name(name):
    """'BM_ct_relu/1000/real_time' -> ('BM_ct_relu', 1000); suffixes dropped."""
    parts = name.split("/")
    base, n = parts[0], None
    for p in parts[1:]:
        if p.isdigit() and n is None:
            n = int(p)
        elif p.startswith("threads:"):  # the STREAM probe: part of the name
            base += "/" + p
    return base, n


def load_bench(path):
    with open(path) as f:
        data = json.load(f)
    groups = {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        base, n = parse_name(b.get("run_name", b["name"]))
        groups.setdefault((base, n), []).append(b)
    result = {}
    for key, runs in groups.items():
        med = [r for r in runs if r.get("run_type") == "aggregate"]
        if med:
            result[key] = med[0]
            continue
        # Single run, or repetitions without aggregates: the median by time.
        runs = sorted(runs, key=lambda r: r.get("real_time", 0.0))
        result[key] = runs[len(runs) // 2]
    return data.get("context", {}), result


def seconds(entry):
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[entry.get("time_unit", "ns")]
    return entry["real_time"] * unit


# --------------------------------------------------------------------------
# NumPy, same run
# --------------------------------------------------------------------------

def time_numpy(fn, quick):
    """Median (and min) seconds per call over repeats of an autoranged loop."""
    t = timeit.Timer(fn)
    target = 0.02 if quick else 0.05
    number = 1
    while True:
        dt = t.timeit(number)
        if dt >= target or number >= 1 << 20:
            break
        number *= max(2, min(10, int(target / max(dt, 1e-9)) + 1))
    reps = t.repeat(repeat=3 if quick else 7, number=number)
    per = [r / number for r in reps]
    return statistics.median(per), min(per)


def run_numpy(sizes_by_op, quick):
    # NumPy single-threaded (its ufuncs are, but a BLAS-backed build may start
    # threads at import). Set only now, after the benchmark binary has run:
    # the binary must not inherit OMP_NUM_THREADS=1.
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = "1"
    import numpy as np
    rng = np.random.default_rng(1234)
    out = {}
    nmax = max(max(v) for v in sizes_by_op.values() if v)
    # One set of arrays at the largest size; smaller sizes use prefixes.
    x_all = rng.uniform(-5, 5, nmax).astype(np.float32)
    b_all = rng.uniform(-5, 5, nmax).astype(np.float32)
    c_all = rng.uniform(-5, 5, nmax).astype(np.float32)
    cond_all = rng.random(nmax) < 0.5
    y_all = np.zeros(nmax, np.float32)
    h_all = x_all.astype(np.float16)
    h_out = np.zeros(nmax, np.float16)
    for op, sizes in sizes_by_op.items():
        if not NUMPY_EXPR.get(op):
            continue
        for n in sizes:
            x, a, b, c = x_all[:n], x_all[:n], b_all[:n], c_all[:n]
            y, h, ho, cond = y_all[:n], h_all[:n], h_out[:n], cond_all[:n]
            if op == "relu":
                fn = lambda: np.maximum(x, 0, out=y)
            elif op == "exp":
                fn = lambda: np.exp(x, out=y)
            elif op == "tanh":
                fn = lambda: np.tanh(x, out=y)
            elif op == "cast_f32_f16":
                fn = lambda: np.copyto(ho, x)
            elif op == "cast_f16_f32":
                fn = lambda: np.copyto(y, h)
            elif op == "where":
                fn = lambda: np.where(cond, a, b)
            elif op == "fma":
                def fn():
                    np.multiply(a, b, out=y)
                    np.add(y, c, out=y)
            elif op == "clamp":
                fn = lambda: np.clip(x, -1, 1, out=y)
            elif op == "add_scalar":
                fn = lambda: np.add(x, np.float32(1.5), out=y)
            else:
                continue
            fn()  # warm up
            med, best = time_numpy(fn, quick)
            out[(op, n)] = {"median_s": med, "min_s": best}
            print("  numpy %-13s n=%-10s %s" % (op, fmt_n(n), fmt_t(med)), file=sys.stderr, flush=True)
    return out, np.__version__


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------

def fmt_n(n):
    if n >= 1000 and str(n).rstrip("0") == "1":
        return "1e%d" % (len(str(n)) - 1)
    return str(n)


def fmt_t(s):
    if s is None:
        return "-"
    if s < 1e-6:
        return "%.0f ns" % (s * 1e9)
    if s < 1e-3:
        return "%.2f us" % (s * 1e6)
    if s < 1:
        return "%.2f ms" % (s * 1e3)
    return "%.2f s" % s


def fmt_r(r):
    return "-" if r is None else "%.2fx" % r


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", nargs="?", help="path to ct_bench_elementwise (default: build*/bench/)")
    ap.add_argument("--quick", action="store_true",
                    help="shorter run: fewer repetitions, min time 0.1 s, no 1e8")
    ap.add_argument("--bench-json", help="where Google Benchmark writes its JSON "
                    "(default: next to the binary, ct_bench_elementwise.json)")
    ap.add_argument("--json", help="also write the merged report (table and targets) here")
    ap.add_argument("--repetitions", type=int, default=1,
                    help="run each benchmark N times and report the medians (N > 1)")
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy baseline")
    ap.add_argument("--from-json", metavar="FILE",
                    help="do not run the binary: report from an earlier --bench-json "
                    "(NumPy still runs now, so its ratios are not same-run)")
    args, extra = ap.parse_known_args()
    extra = [e for e in extra if e != "--"]

    load_before = os.getloadavg()[0]
    if args.from_json:
        bench_json = args.from_json
    else:
        binary = find_binary(args.binary)
        bench_json = args.bench_json or os.path.join(os.path.dirname(os.path.abspath(binary)),
                                                     "ct_bench_elementwise.json")
        cmd = [binary, "--benchmark_out=" + bench_json, "--benchmark_out_format=json"]
        if args.quick:
            cmd += ["--ct_quick", "--ct_max_n=1e7", "--benchmark_min_time=0.1"]
        if args.repetitions > 1:
            cmd += ["--benchmark_repetitions=%d" % args.repetitions,
                    "--benchmark_report_aggregates_only=true"]
        cmd += extra
        print("$ " + " ".join(cmd), flush=True)
        # Console output streams through (progress on a run of a few
        # minutes); the JSON file is what this script reads.
        try:
            rc = subprocess.call(cmd)
        except OSError as e:
            print("run.py: cannot run %s: %s" % (binary, e), file=sys.stderr)
            return 1
        if rc != 0:
            print("run.py: %s exited with status %d" % (binary, rc), file=sys.stderr)
            return rc if rc > 0 else 1
    load_after = os.getloadavg()[0]
    context, res = load_bench(bench_json)

    sizes = [n for n in SIZES if not (args.quick and n > 10**7)]
    sizes_by_op = {}
    for op in OPS:
        sizes_by_op[op] = [n for n in sizes
                           if ("BM_ct_" + op, n) in res or ("BM_plain_" + op, n) in res]
    np_res, np_version = {}, None
    if not args.no_numpy:
        print("\nNumPy baseline (single-threaded, same run):", file=sys.stderr, flush=True)
        try:
            np_res, np_version = run_numpy(sizes_by_op, args.quick)
        except ImportError:
            print("run.py: numpy is not importable (pip install numpy): NumPy columns empty",
                  file=sys.stderr)

    # ---- header: the machine's limit, accuracy, latency ----
    lines = []
    p = lines.append
    p("")
    p("ctensor %s, elementwise float32 — %s%s" % (
        context.get("ctensor_version", "?"), context.get("date", ""),
        "  (--quick)" if args.quick else ""))
    p("host: %s CPUs @ %s MHz, omp_max_threads=%s; NumPy %s" % (
        context.get("num_cpus", "?"), context.get("mhz_per_cpu", "?"),
        context.get("omp_max_threads", "?"), np_version or "-"))
    # Other processes on a 2-vCPU host stall 2-thread regions by whole time
    # slices (an op of 1e5 elements then takes 4-8 ms): say so when it happened.
    # The binary itself adds up to 2 to the 1-minute load average.
    busy = load_after > 2.5
    p("load average (1 min) before / after the benchmark binary: %.2f / %.2f%s" % (
        load_before, load_after,
        "  <- the host was busy: threaded figures are unreliable, run again when idle" if busy else ""))
    stream = {}
    for kind in ("copy", "triad"):
        for t in (1, 2):
            e = res.get(("BM_stream_%s/threads:%d" % (kind, t), None))
            if e is not None and "GBps" in e:
                stream[(kind, t)] = e["GBps"]
    if stream:
        p("STREAM probe (2^26 float32, best of passes): copy %s / %s GB/s, triad %s / %s GB/s "
          "(1 / 2 threads)" % tuple(
              "%.1f" % stream.get(k, float("nan"))
              for k in (("copy", 1), ("copy", 2), ("triad", 1), ("triad", 2))))
    copy2 = stream.get(("copy", 2))
    acc = res.get(("BM_accuracy", None))
    ulp_exp = ulp_tanh = None
    if acc and not acc.get("error_occurred"):
        ulp_exp, ulp_tanh = acc.get("max_ulp_exp"), acc.get("max_ulp_tanh")
        p("accuracy vs float64: max_ulp exp=%.3f tanh=%.3f (%d inputs each: uniform random "
          "+ sweep near 0)" % (ulp_exp, ulp_tanh, acc.get("inputs", 0)))
    lat = res.get(("BM_ct_relu_latency", None))
    lat_med = None
    if lat and not lat.get("error_occurred"):
        lat_med = lat.get("median_ns")
        p("1-element relu through the C ABI: median %.1f ns (p10 %.1f, p90 %.1f; mean %s)" % (
            lat_med, lat.get("p10_ns", 0), lat.get("p90_ns", 0), fmt_t(seconds(lat))))
    p("")

    # ---- the table ----
    hdr = ("op", "n", "ctensor", "GB/s", "frac copy", "plain loop", "vs plain",
           "NumPy", "vs NumPy")
    fmt = "%-13s %-5s %10s %7s %9s %11s %9s %10s %9s"
    p(fmt % hdr)
    p("-" * 92)
    rows = []
    for op in OPS:
        for n in sizes_by_op[op]:
            ct = res.get(("BM_ct_" + op, n))
            pl = res.get(("BM_plain_" + op, n))
            row = {"op": op, "n": n}
            if ct is not None and ct.get("error_occurred"):
                row["error"] = ct.get("error_message", "error")
                ct = None
            t_ct = seconds(ct) if ct else None
            t_pl = seconds(pl) if pl and not pl.get("error_occurred") else None
            npr = np_res.get((op, n))
            t_np = npr["median_s"] if npr else None
            gbs = BYTES_PER_ELEM[op] * n / t_ct * 1e-9 if t_ct else None
            frac = ct.get("frac_copy_bw") if ct else None
            row.update(ct_s=t_ct, gbps=gbs, frac_copy_bw=frac,
                       frac_copy_bw_same_n=ct.get("frac_copy_bw_same_n") if ct else None,
                       plain_s=t_pl, vs_plain=(t_pl / t_ct) if t_ct and t_pl else None,
                       numpy_s=t_np, vs_numpy=(t_np / t_ct) if t_ct and t_np else None)
            rows.append(row)
            if "error" in row:
                p("%-13s %-5s  ERROR: %s" % (op, fmt_n(n), row["error"]))
                continue
            p(fmt % (op, fmt_n(n), fmt_t(t_ct), "%.1f" % gbs if gbs else "-",
                     "%.2f" % frac if frac is not None else "-", fmt_t(t_pl),
                     fmt_r(row["vs_plain"]), fmt_t(t_np), fmt_r(row["vs_numpy"])))
        p("")
    p("ctensor: default threads (NULL stream). GB/s counts bytes read + written per element "
      "(f32 unary 8, casts 6, where 13, fma 16); frac copy = that / the 2-thread STREAM copy "
      "above. vs plain / vs NumPy = their time / ctensor's time (> 1: ctensor faster).")
    p("NumPy: median of repeats; " + "; ".join("%s = %s" % (k, v) for k, v in NUMPY_EXPR.items()
                                               if k in ("where", "cast_f32_f16", "fma")) + ".")
    p("")

    # ---- targets ----
    rowmap = {(r["op"], r["n"]): r for r in rows}
    targets = []

    def target(desc, ok, figure):
        status = "SKIP" if ok is None else ("PASS" if ok else "MISS")
        targets.append({"target": desc, "status": status, "figure": figure})

    for op in BIG_OPS:
        for n in (10**7, 10**8):
            r = rowmap.get((op, n))
            desc = "%s n=%s >= 85%% of 2-thread copy bw" % (op, fmt_n(n))
            if r is None or r.get("frac_copy_bw") is None:
                target(desc, None, "not run" + (" (--quick)" if args.quick and n > 10**7 else ""))
                continue
            same = r.get("frac_copy_bw_same_n")
            target(desc, r["frac_copy_bw"] >= 0.85,
                   "%.2f (%.1f of %.1f GB/s)%s" % (
                       r["frac_copy_bw"], r["gbps"], (copy2 or float("nan")),
                       "; %.2f of a copy at the same n" % same if same else ""))
    for op, ulp in (("exp", ulp_exp), ("tanh", ulp_tanh)):
        r = rowmap.get((op, 10**7))
        desc = "%s n=1e7 >= 2x np.%s" % (op, op)
        if r is None or r.get("vs_numpy") is None:
            target(desc, None, "not run")
        else:
            target(desc, r["vs_numpy"] >= 2.0, "%.2fx (%s vs NumPy %s)" % (
                r["vs_numpy"], fmt_t(r["ct_s"]), fmt_t(r["numpy_s"])))
        desc = "%s max error < 2 ulp" % op
        if ulp is None:
            target(desc, None, "not run")
        else:
            target(desc, ulp < 2.0, "%.3f ulp" % ulp)
    for n in (10**3, 10**4):
        for op in OPS:
            r = rowmap.get((op, n))
            desc = "%s n=%s >= plain single-threaded loop" % (op, fmt_n(n))
            if r is None or r.get("vs_plain") is None:
                target(desc, None, r.get("error", "not run") if r else "not run")
            else:
                target(desc, r["vs_plain"] >= 1.0, "%.2fx (%s vs %s)" % (
                    r["vs_plain"], fmt_t(r["ct_s"]), fmt_t(r["plain_s"])))
    desc = "1-element relu via the C ABI < 100 ns median"
    target(desc, None if lat_med is None else lat_med < 100.0,
           "not run" if lat_med is None else "%.1f ns" % lat_med)

    p("Targets (issue 2), measured in this run:")
    for t in targets:
        p("  %-4s  %-50s %s" % (t["status"], t["target"], t["figure"]))
    counts = {s: sum(1 for t in targets if t["status"] == s) for s in ("PASS", "MISS", "SKIP")}
    p("  -> %d PASS, %d MISS, %d SKIP" % (counts["PASS"], counts["MISS"], counts["SKIP"]))
    p("")
    p("command: python3 bench/run.py%s   (benchmark JSON: %s)" % (
        " --quick" if args.quick else "", os.path.relpath(bench_json, ROOT)))
    print("\n".join(lines), flush=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"context": context, "stream_GBps": {"%s_%dt" % k: v for k, v in stream.items()},
                       "max_ulp": {"exp": ulp_exp, "tanh": ulp_tanh},
                       "relu_latency_median_ns": lat_med, "numpy_version": np_version,
                       "rows": rows, "targets": targets}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
