"""Broadcast / reduce / along-axis suite: run ct_bench_broadcast_reduce and
NumPy in one go, print one table and the issue's targets.

    python3 bench/run.py --suite broadcast_reduce [path/to/ct_bench_broadcast_reduce]
                         [--quick] [--json FILE] [-- extra Google Benchmark flags]

What runs, in this order, in one process tree (the host is shared and its
bandwidth drifts, so every comparison is against a figure measured in the
same run):
  1. ct_bench_broadcast_reduce: the STREAM probe (copy/add/triad, 1 and 2
     threads), the add latency through the C ABI at n = 1 and 1e3, and one
     benchmark per (op, shape) with ctensor's default threads.
  2. NumPy, single-threaded, each row's statement (ROWS below) timed with
     timeit (median of repeats) on the same shapes.
Then one table (ctensor time, NumPy time, ratio, GB/s, % of the 2-thread
STREAM add) and the issue's targets with PASS/MISS.

This is a report, not a test: it exits 0 when a target is missed and
non-zero only when the benchmark binary itself fails.
"""

import argparse
import json
import os
import sys

from common import (ROOT, Targets, add_common_args, fmt_n, fmt_r, fmt_t, header_lines,
                    import_numpy_single_threaded, load_bench, ok_entry, run_binary, seconds,
                    stream_figures, stream_line, time_numpy)

BINARY = "ct_bench_broadcast_reduce"
SIDE = 4096          # matrix rows are (SIDE, SIDE); the binary's Arg is SIDE
HALF_N = 10**7       # the float16 array NumPy sums
REDUCE_OPS = ("sum", "max", "argmax", "mean", "var", "logsumexp")

# NumPy statement per reduction, over all of x or along axis {ax} of M.
_REDUCE_ALL = {
    "sum": "np.sum(x)", "max": "np.max(x)", "argmax": "np.argmax(x)", "mean": "np.mean(x)",
    "var": "np.var(x)", "logsumexp": "m = x.max(); m + np.log(np.exp(x - m).sum())",
}
_REDUCE_AXIS = {
    "sum": "M.sum(axis={ax})", "max": "M.max(axis={ax})", "argmax": "M.argmax(axis={ax})",
    "mean": "M.mean(axis={ax})", "var": "M.var(axis={ax})",
    "logsumexp": "m = M.max(axis={ax}, keepdims=True); "
                 "m + np.log(np.exp(M - m).sum(axis={ax}, keepdims=True))",
}

# The rows, in table order: (benchmark name after BM_ct_, section, shape label
# or None for "n=<n>", NumPy statement or None). The sizes and bytes come from
# the binary's JSON. Names in the statements: a, b (1-D inputs), c (1-D
# float32 out), cb (1-D bool out), x (1-D input), M (the matrix), Y (matrix
# out), r (a (SIDE,) row), k (a (SIDE, 1) column), h (1-D float16).
MAT = "(%d,%d)" % (SIDE, SIDE)
ROWS = [
    ("add", "binary", None, "np.add(a, b, out=c)"),
    ("mul", "binary", None, "np.multiply(a, b, out=c)"),
    ("maximum", "binary", None, "np.maximum(a, b, out=c)"),
    ("less", "binary", None, "np.less(a, b, out=cb)"),
    ("add_bcast_row", "broadcast", MAT + "+(%d,)" % SIDE, "np.add(M, r, out=Y)"),
    ("add_bcast_col", "broadcast", MAT + "+(%d,1)" % SIDE, "np.add(M, k, out=Y)"),
]
ROWS += [(op, "reduce all", None, _REDUCE_ALL[op]) for op in REDUCE_OPS]
for _ax in (0, 1):
    ROWS += [("%s_axis%d" % (op, _ax), "reduce axis %d" % _ax, MAT + " axis %d" % _ax,
              _REDUCE_AXIS[op].format(ax=_ax)) for op in REDUCE_OPS]
ROWS += [
    ("softmax", "along axis", MAT + " axis -1",
     "e = np.exp(M - M.max(-1, keepdims=True)); e / e.sum(-1, keepdims=True)"),
    ("log_softmax", "along axis", MAT + " axis -1",
     "s = M - M.max(-1, keepdims=True); s - np.log(np.exp(s).sum(-1, keepdims=True))"),
    ("cumsum", "along axis", None, "np.cumsum(x, out=c)"),
    ("sum_f16", "half types", None, "np.sum(h)"),
    ("sum_bf16", "half types", None, None),  # NumPy has no bfloat16
]
LATENCY = ("add_latency", "np.add(a, b, out=c)")  # BM_ct_add_latency/<n>: median_ns


def op_label(name):
    """'sum_axis0' -> 'sum', 'add_bcast_row' -> 'add', 'sum_f16' -> 'sum f16'."""
    for suffix in ("_axis0", "_axis1", "_bcast_row", "_bcast_col"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name.replace("_f16", " f16").replace("_bf16", " bf16")


def run_numpy(jobs, quick):
    """jobs: [(stmt, n)] -> {(stmt, n): {"median_s", "min_s"}}, single-threaded."""
    np = import_numpy_single_threaded()
    rng = np.random.default_rng(1234)
    nmax = max([n for _, n in jobs] + [SIDE * SIDE, HALF_N])
    # One set of arrays; 1-D rows use prefixes, matrix rows views.
    x_all = rng.random(nmax, dtype=np.float32) * 10 - 5
    b_all = rng.random(nmax, dtype=np.float32) * 10 - 5
    y_all = np.zeros(nmax, np.float32)
    cb_all = np.zeros(nmax, np.bool_)
    h_all = x_all[:HALF_N].astype(np.float16)
    mat = {"M": x_all[: SIDE * SIDE].reshape(SIDE, SIDE),
           "Y": y_all[: SIDE * SIDE].reshape(SIDE, SIDE),
           "r": b_all[:SIDE], "k": b_all[:SIDE].reshape(SIDE, 1)}
    out = {}
    for stmt, n in jobs:
        if (stmt, n) in out:
            continue
        g = {"np": np, "a": x_all[:n], "x": x_all[:n], "b": b_all[:n], "c": y_all[:n],
             "cb": cb_all[:n], "h": h_all[:n]}
        g.update(mat)
        exec(stmt, g)  # warm up
        med, best = time_numpy(stmt, quick, g)
        out[(stmt, n)] = {"median_s": med, "min_s": best}
        print("  numpy %-10s %-72s %s" % (fmt_n(n), stmt, fmt_t(med)), file=sys.stderr, flush=True)
    return out, np.__version__


def main(argv=None):
    ap = argparse.ArgumentParser(prog="run.py --suite broadcast_reduce",
                                 description=__doc__.split("\n\n")[0])
    add_common_args(ap, BINARY)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run (well under a minute): fewer probe passes and samples, "
                    "min time 0.05 s, no 1e8")
    args, extra = ap.parse_known_args(argv)
    extra = [e for e in extra if e != "--"]

    load_before = os.getloadavg()[0]
    bench_json, rc = run_binary(args, extra, BINARY,
                                ["--ct_quick", "--ct_max_n=1e7", "--benchmark_min_time=0.05"])
    if rc != 0:
        return rc
    load_after = os.getloadavg()[0]
    context, res = load_bench(bench_json)

    # What the binary ran (or skipped): (name, n) in ROWS order.
    sizes = {}
    for (base, n) in res:
        if base.startswith("BM_ct_") and n is not None:
            sizes.setdefault(base[len("BM_ct_"):], []).append(n)
    plan = [(spec, n) for spec in ROWS for n in sorted(sizes.get(spec[0], []))]
    lat_sizes = sorted(sizes.get(LATENCY[0], []))

    np_res, np_version = {}, None
    if not args.no_numpy:
        print("\nNumPy baseline (single-threaded, same run):", file=sys.stderr, flush=True)
        jobs = [(spec[3], SIDE * SIDE if spec[2] else n) for spec, n in plan if spec[3]]
        jobs += [(LATENCY[1], n) for n in lat_sizes]
        try:
            np_res, np_version = run_numpy(jobs, args.quick)
        except ImportError:
            print("run.py: numpy is not importable (pip install numpy): NumPy columns empty",
                  file=sys.stderr)

    stream = stream_figures(res)
    add2 = stream.get(("add", 2))
    lines = header_lines(context, "broadcast / reduce / along-axis, float32 unless named",
                         args.quick, np_version, load_before, load_after)
    p = lines.append
    if stream:
        p(stream_line(stream))
    p("")

    hdr = ("op", "shape", "ctensor", "NumPy", "vs NumPy", "GB/s", "% STREAM add")
    fmt = "%-12s %-24s %10s %10s %9s %7s %12s"
    p(fmt % hdr)
    p("-" * 90)
    rows = []
    section = None

    def emit(row, shape):
        if "error" in row:
            p("%-12s %-24s  SKIPPED: %s" % (row["op"], shape, row["error"]))
            return
        pct = "%.0f%%" % (100 * row["frac_stream_add"]) if row.get("frac_stream_add") else "-"
        p(fmt % (row["op"], shape, fmt_t(row["ct_s"]), fmt_t(row["numpy_s"]),
                 fmt_r(row["vs_numpy"]), "%.1f" % row["gbps"] if row["gbps"] else "-", pct))

    def make_row(name, op, n, shape, entry, t_ct, stmt, np_n):
        row = {"name": name, "op": op, "n": n, "shape": shape, "numpy": stmt}
        if entry is not None and entry.get("error_occurred"):
            row["error"] = entry.get("error_message", "error")
            rows.append(row)
            return row
        bytes_ = entry.get("bytes") if entry else None
        gbps = bytes_ / t_ct * 1e-9 if bytes_ and t_ct else None
        npr = np_res.get((stmt, np_n)) if stmt else None
        t_np = npr["median_s"] if npr else None
        row.update(ct_s=t_ct, bytes=bytes_, gbps=gbps,
                   frac_stream_add=gbps / add2 if gbps and add2 else None,
                   frac_stream_add_same_n=entry.get("frac_stream_add_same_n") if entry else None,
                   stream_add_same_n_GBps=entry.get("stream_add_same_n_GBps") if entry else None,
                   numpy_s=t_np, vs_numpy=t_np / t_ct if t_np and t_ct else None)
        rows.append(row)
        return row

    for spec, n in plan:
        name, sec, shape, stmt = spec
        if sec != section:
            if section is not None:
                p("")
            section = sec
        entry = res.get(("BM_ct_" + name, n))
        ok = entry if entry and not entry.get("error_occurred") else None
        label = shape or "n=" + fmt_n(n)
        row = make_row(name, op_label(name), n, label, entry, seconds(ok) if ok else None,
                       stmt, SIDE * SIDE if shape else n)
        emit(row, label)
    if lat_sizes:
        p("")
        for n in lat_sizes:
            entry = res.get(("BM_ct_" + LATENCY[0], n))
            ok = ok_entry(res, ("BM_ct_" + LATENCY[0], n))
            label = "n=%s, 1 call" % fmt_n(n)
            t = ok["median_ns"] * 1e-9 if ok and "median_ns" in ok else None
            row = make_row(LATENCY[0], "add", n, label, entry, t, LATENCY[1], n)
            emit(row, label)
    p("")
    p("ctensor: the C ABI, default threads (NULL stream); time = Google Benchmark's mean per call, "
      "except '1 call' rows: the median of 32-call batches. NumPy: single-threaded, median of "
      "timeit repeats of the statement (no lambda) — see --json for each statement; notable:")
    for name in ("logsumexp", "logsumexp_axis1", "softmax", "log_softmax"):
        stmt = next(s[3] for s in ROWS if s[0] == name)
        p("  %-16s %s" % (name, stmt))
    p("  sum_bf16         - (NumPy has no bfloat16)")
    p("GB/s: bytes moved per call / time, each input read once (a broadcast operand at its own "
      "size), the output written once (bool 1 B, int64 8 B). %% STREAM add = that / the 2-thread "
      "STREAM add above (%s GB/s); read-only reductions and cache-resident sizes can exceed 100%%."
      % ("%.1f" % add2 if add2 else "?"))
    p("")

    # ---- targets ----
    rowmap = {(r["name"], r["n"]): r for r in rows}
    tg = Targets()

    def get(name, n):
        r = rowmap.get((name, n))
        return None if r is None or "error" in r else r

    def why_not(name, n):
        r = rowmap.get((name, n))
        return ("skipped: " + r["error"]) if r and "error" in r else "not run"

    for name, n, desc in (("add", 10**7, "add n=1e7"),
                          ("add_bcast_row", SIDE, "add (4096,4096)+(4096,)"),
                          ("add_bcast_col", SIDE, "add (4096,4096)+(4096,1)")):
        r = get(name, n)
        d1 = "%s >= 85%% of 2-thread STREAM add" % desc
        if r is None or r.get("frac_stream_add") is None:
            tg.add(d1, None, why_not(name, n))
        else:
            same = r.get("frac_stream_add_same_n")
            tg.add(d1, r["frac_stream_add"] >= 0.85, "%.2f (%.1f of %.1f GB/s)%s" % (
                r["frac_stream_add"], r["gbps"], add2,
                "; %.2f of a STREAM add at the same n" % same if same else ""))
        d2 = "%s >= 1.5x np.add(out=)" % desc
        if r is None or r.get("vs_numpy") is None:
            tg.add(d2, None, why_not(name, n) if r is None else "no NumPy figure")
        else:
            tg.add(d2, r["vs_numpy"] >= 1.5, "%.2fx (%s vs NumPy %s)" % (
                r["vs_numpy"], fmt_t(r["ct_s"]), fmt_t(r["numpy_s"])))
    for name, n, need, desc in (("sum", 10**7, 2.0, "sum n=1e7 >= 2x np.sum"),
                                ("sum_axis1", SIDE, 2.0, "sum axis 1 (4096,4096) >= 2x x.sum(axis=1)"),
                                ("sum_axis0", SIDE, 1.6, "sum axis 0 (4096,4096) >= 1.6x x.sum(axis=0)"),
                                ("softmax", SIDE, 8.0, "softmax (4096,4096) axis -1 >= 8x NumPy expr"),
                                ("add_latency", 1000, 3.0, "add n=1e3, 1 call via C ABI >= 3x np.add")):
        r = get(name, n)
        if r is None or r.get("vs_numpy") is None:
            tg.add(desc, None, why_not(name, n) if r is None else "no NumPy figure")
        else:
            tg.add(desc, r["vs_numpy"] >= need, "%.2fx (%s vs NumPy %s)" % (
                r["vs_numpy"], fmt_t(r["ct_s"]), fmt_t(r["numpy_s"])))
    lines.extend(tg.lines("Targets (issue 3), measured in this run:", width=56))
    p("")
    p("command: python3 bench/run.py --suite broadcast_reduce%s   (benchmark JSON: %s)" % (
        " --quick" if args.quick else "", os.path.relpath(bench_json, ROOT)))
    print("\n".join(lines), flush=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"context": context, "stream_GBps": {"%s_%dt" % k: v for k, v in stream.items()},
                       "numpy_version": np_version, "rows": rows, "targets": tg.items},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
