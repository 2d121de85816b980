"""Helpers shared by the benchmark drivers (bench/run.py and its suites).

Each suite runs one Google Benchmark binary with JSON output, then NumPy
single-threaded in the same run, and prints one table and the issue's targets
with PASS/MISS. These are the parts every suite does the same way: finding
and running the binary, reading its JSON, timing NumPy, formatting, and the
header lines (host, load, STREAM probe).
"""

import json
import os
import statistics
import subprocess
import sys
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def l3_mib():
    """The last-level cache of CPU 0 in MiB (NaN where sysfs does not say), printed beside every figure."""
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size") as fh:
            s = fh.read().strip()
        return int(s[:-1]) // 1024 if s.endswith("K") else int(s)
    except OSError:
        return float("nan")


# --------------------------------------------------------------------------
# The binary
# --------------------------------------------------------------------------

def find_binary(arg, name):
    """arg if given, else build/bench/<name>, else the newest build*/bench/<name>."""
    if arg:
        return arg
    candidates = []
    for d in sorted(os.listdir(ROOT)):
        p = os.path.join(ROOT, d, "bench", name)
        if d.startswith("build") and os.access(p, os.X_OK):
            candidates.append(p)
    if not candidates:
        sys.exit("run.py: no build*/bench/%s under %s; build it "
                 "(cmake --build build --target %s) or pass its path" % (name, ROOT, name))
    # Prefer build/, else the most recently built.
    pref = os.path.join(ROOT, "build", "bench", name)
    return pref if pref in candidates else max(candidates, key=os.path.getmtime)


def add_common_args(ap, name):
    """The options every suite takes (the suite adds its own)."""
    ap.add_argument("binary", nargs="?", help="path to %s (default: build*/bench/)" % name)
    ap.add_argument("--bench-json", help="where Google Benchmark writes its JSON "
                    "(default: next to the binary, %s.json)" % name)
    ap.add_argument("--json", help="also write the merged report (table and targets) here")
    ap.add_argument("--repetitions", type=int, default=1,
                    help="run each benchmark N times and report the medians (N > 1)")
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy baseline")
    ap.add_argument("--from-json", metavar="FILE",
                    help="do not run the binary: report from an earlier --bench-json "
                    "(NumPy still runs now, so its ratios are not same-run)")


def run_binary(args, extra, name, quick_flags):
    """Run the benchmark binary (unless --from-json). Returns (bench_json, rc)."""
    if args.from_json:
        return args.from_json, 0
    binary = find_binary(args.binary, name)
    bench_json = args.bench_json or os.path.join(os.path.dirname(os.path.abspath(binary)),
                                                 name + ".json")
    cmd = [binary, "--benchmark_out=" + bench_json, "--benchmark_out_format=json"]
    if args.quick:
        cmd += quick_flags
    if args.repetitions > 1:
        cmd += ["--benchmark_repetitions=%d" % args.repetitions,
                "--benchmark_report_aggregates_only=true"]
    cmd += extra
    print("$ " + " ".join(cmd), flush=True)
    # Console output streams through (progress on a run of a few minutes);
    # the JSON file is what the suite reads.
    try:
        rc = subprocess.call(cmd)
    except OSError as e:
        print("run.py: cannot run %s: %s" % (binary, e), file=sys.stderr)
        return bench_json, 1
    if rc != 0:
        print("run.py: %s exited with status %d" % (binary, rc), file=sys.stderr)
        return bench_json, rc if rc > 0 else 1
    return bench_json, 0


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
    """(context, {(base, n): entry}); with repetitions, the median entry."""
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


def ok_entry(res, key):
    """The entry, or None when missing or skipped with an error."""
    e = res.get(key)
    return None if e is None or e.get("error_occurred") else e


def stream_figures(res):
    """{(kind, threads): GB/s} from the BM_stream_<kind>/threads:<t> entries."""
    out = {}
    for kind in ("copy", "add", "triad"):
        for t in (1, 2):
            e = res.get(("BM_stream_%s/threads:%d" % (kind, t), None))
            if e is not None and "GBps" in e:
                out[(kind, t)] = e["GBps"]
    return out


def stream_line(stream):
    """'STREAM probe ...: copy a / b GB/s, add ..., triad ... (1 / 2 threads)'."""
    kinds = [k for k in ("copy", "add", "triad") if (k, 1) in stream or (k, 2) in stream]
    parts = ["%s %.1f / %.1f GB/s" % (k, stream.get((k, 1), float("nan")),
                                      stream.get((k, 2), float("nan"))) for k in kinds]
    return ("STREAM probe (2^26 float32, best of passes): %s (1 / 2 threads)" % ", ".join(parts))


# --------------------------------------------------------------------------
# NumPy, same run
# --------------------------------------------------------------------------

def import_numpy_single_threaded():
    """Import NumPy with BLAS/OpenMP pools limited to one thread. Call it only
    after the benchmark binary has run: the binary must not inherit
    OMP_NUM_THREADS=1."""
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = "1"
    import numpy as np
    return np


def time_numpy(fn, quick, globals_=None):
    """Median (and min) seconds per call over repeats of an autoranged loop.
    fn is a callable, or a statement string run with globals_ (no lambda
    call in the timed loop: what a user's line of Python costs)."""
    t = timeit.Timer(fn, globals=globals_) if isinstance(fn, str) else timeit.Timer(fn)
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


def header_lines(context, title, quick, np_version, load_before, load_after):
    """Title, host and load-average lines of a report."""
    lines = [
        "",
        "ctensor %s, %s — %s%s" % (context.get("ctensor_version", "?"), title,
                                    context.get("date", ""), "  (--quick)" if quick else ""),
        "host: %s CPUs @ %s MHz, omp_max_threads=%s; NumPy %s" % (
            context.get("num_cpus", "?"), context.get("mhz_per_cpu", "?"),
            context.get("omp_max_threads", "?"), np_version or "-"),
    ]
    # Other processes on a 2-vCPU host stall 2-thread regions by whole time
    # slices (an op of 1e5 elements then takes 4-8 ms): say so when it
    # happened. The binary itself adds up to 2 to the 1-minute load average.
    busy = load_after > 2.5
    lines.append("load average (1 min) before / after the benchmark binary: %.2f / %.2f%s" % (
        load_before, load_after,
        "  <- the host was busy: threaded figures are unreliable, run again when idle"
        if busy else ""))
    return lines


class Targets:
    """The issue's targets, each PASS, MISS or SKIP (not measured)."""

    def __init__(self):
        self.items = []

    def add(self, desc, ok, figure):
        status = "SKIP" if ok is None else ("PASS" if ok else "MISS")
        self.items.append({"target": desc, "status": status, "figure": figure})

    def lines(self, title, width=50):
        out = [title]
        for t in self.items:
            out.append("  %-4s  %-*s %s" % (t["status"], width, t["target"], t["figure"]))
        counts = {s: sum(1 for t in self.items if t["status"] == s) for s in ("PASS", "MISS", "SKIP")}
        out.append("  -> %d PASS, %d MISS, %d SKIP" % (counts["PASS"], counts["MISS"], counts["SKIP"]))
        return out
