"""NN suite (category 3): run ct_bench_nn and NumPy's matmul in one go, print
one table and the issue's targets.

    python3 bench/run.py --suite nn [path/to/ct_bench_nn]
                         [--quick] [--json FILE] [-- extra Google Benchmark flags]

What runs, in this order, in one process tree (the host is shared and its
speed drifts, so every comparison is against a figure measured in the same
run):
  1. ct_bench_nn: the FMA probe (the machine's float32 peak, 1 and 2
     threads); the per-call overhead on a small conv; ResNet-50 conv layers
     (batch 1 and 8, NHWC and NCHW) and matmuls (square 256 ... 4096, and
     (8,512,768) @ (768,3072)), each row timing ctensor's direct call and the
     same oneDNN primitives called directly, interleaved in rounds; plan and
     primitive creation times.
  2. NumPy's matmul (OpenBLAS, with the machine's thread count, as ctensor
     and oneDNN) on the same matmul shapes, timed with timeit.
Then one table (time, GFLOP/s, % of the FMA peak, ratios) and the issue's
targets with PASS/MISS.

This is a report, not a test: it exits 0 when a target is missed and
non-zero only when the benchmark binary itself fails.
"""

import argparse
import json
import os
import sys

from common import (ROOT, Targets, add_common_args, fmt_r, fmt_t, header_lines, load_bench,
                    ok_entry, run_binary, time_numpy)

BINARY = "ct_bench_nn"

# ResNet-50 layers, in table order: name in the binary -> description.
LAYERS = [
    ("res2_3x3", "C64 56x56 K64 3x3 p1"),
    ("res2_1x1", "C256 56x56 K64 1x1"),
    ("res3_3x3", "C128 28x28 K128 3x3 p1"),
    ("conv1_7x7s2", "C3 224x224 K64 7x7 s2 p3"),
]
LAYOUTS = ("nhwc", "nchw")
SQUARE = (256, 512, 1024, 2048, 4096)
BERT = (8, 512, 768, 3072)  # batch, M, K, N: (8, 512, 768) @ (768, 3072)
NUMPY_MATMUL = "np.matmul(a, b, out=c)"
NEED_VS_DNNL = 0.95
NEED_VS_NUMPY = 1.0
NEED_OVERHEAD_US = 2.0
ERR_LIMIT = 1e-3  # ctensor vs oneDNN, max |diff| / max |oneDNN|; above it the row is wrong


def read_steal():
    """(steal, total) jiffies of all CPUs from /proc/stat, or None."""
    try:
        with open("/proc/stat") as f:
            for line in f:
                if line.startswith("cpu "):
                    v = [int(x) for x in line.split()[1:]]
                    return (v[7] if len(v) > 7 else 0), sum(v[:8])
    except (OSError, ValueError):
        pass
    return None


def parse_label(label):
    """'dnnl_w=a|dnnl_all=b|ct_error=msg' -> dict; ct_error takes the rest."""
    out = {}
    rest = label or ""
    while rest:
        if rest.startswith("ct_error="):
            out["ct_error"] = rest[len("ct_error="):]
            break
        part, _, rest = rest.partition("|")
        k, _, v = part.partition("=")
        if k:
            out[k] = v
    return out


def import_numpy_threads(threads):
    """Import NumPy with its BLAS at `threads` threads (the machine's, as
    ctensor and oneDNN use). Only after the binary has run."""
    for v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[v] = str(threads)
    import numpy as np
    return np


def blas_thread_setter():
    """openblas_set_num_threads of the OpenBLAS NumPy loaded (found in this
    process's mappings), or None. OpenBLAS' threads can lose to one thread on
    a shared 2-vCPU host (a small GEMM waits for a time slice): NumPy's figure
    is the better of 1 and the machine's threads, so the target is strict."""
    import ctypes
    paths = []
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if "openblas" in os.path.basename(path).lower() and path not in paths:
                    paths.append(path)
    except OSError:
        return None
    for path in paths:
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for sym in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                    "openblas_set_num_threads64_", "openblas_set_num_threads"):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.argtypes = [ctypes.c_int]
                fn.restype = None
                return fn
    return None


def run_numpy(shapes, quick, threads):
    """shapes: {key: (batch, M, K, N)} -> {key: {"median_s", "min_s", "threads",
    "by_threads": {t: {"median_s", "min_s"}}}}: the better thread count by best time."""
    np = import_numpy_threads(threads)
    rng = np.random.default_rng(1234)
    out = {}
    setter = None
    for key, (batch, m, k, n) in shapes.items():
        a = rng.random((batch, m, k) if batch else (m, k), dtype=np.float32) * 2 - 1
        b = rng.random((k, n), dtype=np.float32) * 2 - 1
        c = np.zeros((batch, m, n) if batch else (m, n), np.float32)
        g = {"np": np, "a": a, "b": b, "c": c}
        exec(NUMPY_MATMUL, g)  # warm up (and loads the BLAS)
        if setter is None:
            setter = blas_thread_setter() or False
        by = {}
        for t in ([threads, 1] if setter and threads > 1 else [threads]):
            if setter:
                setter(t)
                exec(NUMPY_MATMUL, g)
            med, best = time_numpy(NUMPY_MATMUL, quick, g)
            by[t] = {"median_s": med, "min_s": best}
            print("  numpy %-24s %d thread%s: %s (best %s)" % (
                mm_label(key), t, "s" if t > 1 else "", fmt_t(med), fmt_t(best)),
                file=sys.stderr, flush=True)
        if setter:
            setter(threads)
        t_best = min(by, key=lambda t: by[t]["min_s"])
        out[key] = dict(by[t_best], threads=t_best, by_threads=by)
    return out, np.__version__


def mm_label(key):
    if key == "bert":
        b, m, k, n = BERT
        return "(%d,%d,%d)@(%d,%d)" % (b, m, k, k, n)
    return "%dx%d @ %dx%d" % (key, key, key, key)


def fmt_g(x):
    return "-" if x is None else "%.1f" % x


def fmt_pct(x):
    return "-" if x is None else "%.0f%%" % (100 * x)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="run.py --suite nn", description=__doc__.split("\n\n")[0])
    add_common_args(ap, BINARY)
    ap.add_argument("--quick", action="store_true",
                    help="subset (well under a minute): batch-1 convs, matmul 256 and 1024, "
                    "the overhead row; fewer and shorter rounds")
    args, extra = ap.parse_known_args(argv)
    extra = [e for e in extra if e != "--"]

    load_before = os.getloadavg()[0]
    steal_before = read_steal()
    bench_json, rc = run_binary(args, extra, BINARY, ["--ct_quick"])
    if rc != 0:
        return rc
    load_after = os.getloadavg()[0]
    steal_after = read_steal()
    context, res = load_bench(bench_json)
    threads = int(context.get("omp_max_threads", 0) or 0) or os.cpu_count() or 1

    # ---- what ran ----
    conv_keys = [(layer, n, lay) for layer, _ in LAYERS for n in (1, 8) for lay in LAYOUTS
                 if ("BM_nn_conv_%s_%s" % (layer, lay), n) in res]
    mm_keys = [s for s in SQUARE if ("BM_nn_matmul", s) in res]
    if ("BM_nn_matmul_bert", BERT[0]) in res:
        mm_keys.append("bert")

    def mm_entry(key):
        return res.get(("BM_nn_matmul_bert", BERT[0]) if key == "bert" else ("BM_nn_matmul", key))

    np_res, np_version = {}, None
    if not args.no_numpy and mm_keys:
        print("\nNumPy matmul baseline (OpenBLAS, %d threads and 1, same run):" % threads,
              file=sys.stderr, flush=True)
        shapes = {k: (BERT if k == "bert" else (0, k, k, k)) for k in mm_keys}
        try:
            np_res, np_version = run_numpy(shapes, args.quick, threads)
        except ImportError:
            print("run.py: numpy is not importable (pip install numpy): NumPy columns empty",
                  file=sys.stderr)

    # ---- header ----
    lines = header_lines(context, "NN ops (category 3), float32", args.quick, np_version,
                         load_before, load_after)
    p = lines.append
    p("oneDNN %s (called directly in the same process; primitive cache capacity %s)" % (
        context.get("dnnl_version", "?"), context.get("dnnl_primitive_cache_capacity", "?")))
    if steal_before and steal_after and steal_after[1] > steal_before[1]:
        frac = (steal_after[0] - steal_before[0]) / float(steal_after[1] - steal_before[1])
        p("CPU steal time during the binary: %.0f%% of all CPU time%s" % (
            100 * frac, "  <- the hypervisor ran other guests on these CPUs: figures are noisy"
            if frac > 0.05 else ""))
    peak, probes = {}, {}
    for t in (1, 2):
        for when, name in (("start", "BM_fma_peak"), ("end", "BM_fma_peak_end")):
            e = ok_entry(res, ("%s/threads:%d" % (name, t), None))
            if e and "GFLOPs" in e:
                probes[(when, t)] = e["GFLOPs"]
                peak[t] = max(peak.get(t, 0.0), e["GFLOPs"])
    peak2 = peak.get(2)
    if peak:
        p("FMA probe (%s, independent FMAs, best of passes, at the start / end of the run): "
          "1 thread %s / %s, 2 threads %s / %s GFLOP/s; %% peak below is of the larger 2-thread "
          "figure, %s" % (
              context.get("fma_probe", "?"), fmt_g(probes.get(("start", 1))), fmt_g(probes.get(("end", 1))),
              fmt_g(probes.get(("start", 2))), fmt_g(probes.get(("end", 2))), fmt_g(peak2)))
    p("")

    rows = []
    tg = Targets()

    def best_and_median(e, key):
        if e is None or (key + "_s") not in e:
            return None, None
        return e.get(key + "_min_s", e[key + "_s"]), e[key + "_s"]

    # ---- conv table ----
    if conv_keys:
        hdr = ("conv layer", "N", "layout", "ctensor", "GFLOP/s", "%peak", "oneDNN", "var",
               "GFLOP/s", "ct/oneDNN", "(median)", "oneDNN impl")
        fmt = "%-26s %2s %-6s %10s %8s %6s %10s %-4s %8s %9s %9s  %s"
        p(fmt % hdr)
        p("-" * 140)
    last_n = None
    for layer, n, lay in conv_keys:
        desc = dict(LAYERS)[layer]
        e = res[("BM_nn_conv_%s_%s" % (layer, lay), n)]
        if last_n is not None and n != last_n:
            p("")
        last_n = n
        row = {"kind": "conv", "layer": layer, "desc": desc, "N": n, "layout": lay}
        rows.append(row)
        tdesc = "conv %s N=%d %s >= %d%% of oneDNN" % (layer, n, lay.upper(), NEED_VS_DNNL * 100)
        if e.get("error_occurred"):
            row["error"] = e.get("error_message", "error")
            p("%-26s %2d %-6s  SKIPPED: %s" % (desc, n, lay.upper(), row["error"]))
            tg.add(tdesc, None, "skipped: " + row["error"])
            continue
        lab = parse_label(e.get("label", ""))
        flops = e["flops"]
        ct_b, ct_m = best_and_median(e, "ct")
        w_b, w_m = best_and_median(e, "dnnl_w")
        a_b, a_m = best_and_median(e, "dnnl_all")
        var, d_b, d_m = ("w", w_b, w_m) if a_b is None or (w_b is not None and w_b <= a_b) else ("all", a_b, a_m)
        ratio = d_b / ct_b if ct_b and d_b else None
        ratio_m = d_m / ct_m if ct_m and d_m else None
        err = e.get("check_rel_err")
        row.update(flops=flops, ct_s=ct_b, ct_median_s=ct_m, dnnl_w_s=w_b, dnnl_w_median_s=w_m,
                   dnnl_all_s=a_b, dnnl_all_median_s=a_m, dnnl_variant=var, dnnl_s=d_b,
                   ct_gflops=flops / ct_b * 1e-9 if ct_b else None,
                   dnnl_gflops=flops / d_b * 1e-9 if d_b else None,
                   vs_dnnl=ratio, vs_dnnl_median=ratio_m, check_rel_err=err,
                   ct_primitives_created_in_loop=e.get("ct_primitives_created_in_loop"),
                   dnnl_impl={"w": lab.get("dnnl_w"), "all": lab.get("dnnl_all")},
                   ct_error=lab.get("ct_error"))
        row["frac_peak"] = row["ct_gflops"] / peak2 if row["ct_gflops"] and peak2 else None
        impl = "w=%s all=%s" % (lab.get("dnnl_w", "?"), lab.get("dnnl_all", "?"))
        if ct_b is None:
            p(fmt % (desc, n, lay.upper(), "-", "-", "-", fmt_t(d_b), var, fmt_g(row["dnnl_gflops"]),
                     "-", "-", impl))
            p("%-26s    ctensor SKIPPED: %s" % ("", lab.get("ct_error", "not run")))
            tg.add(tdesc, None, "ctensor skipped: " + lab.get("ct_error", "not run"))
            continue
        wrong = err is not None and err > ERR_LIMIT
        p(fmt % (desc, n, lay.upper(), fmt_t(ct_b), fmt_g(row["ct_gflops"]), fmt_pct(row["frac_peak"]),
                 fmt_t(d_b), var, fmt_g(row["dnnl_gflops"]), fmt_r(ratio), fmt_r(ratio_m), impl)
          + ("   WRONG RESULT: rel err %.2g" % err if wrong else ""))
        if wrong:
            tg.add(tdesc, False, "wrong result (max rel err %.2g vs oneDNN)" % err)
        else:
            tg.add(tdesc, ratio >= NEED_VS_DNNL, "%.2fx (%s vs oneDNN[%s] %s; %.0f vs %.0f GFLOP/s)" % (
                ratio, fmt_t(ct_b), var, fmt_t(d_b), row["ct_gflops"], row["dnnl_gflops"]))
    if conv_keys:
        p("")

    # ---- matmul table ----
    if mm_keys:
        hdr = ("matmul", "ctensor", "GFLOP/s", "%peak", "oneDNN", "GFLOP/s", "ct/oneDNN", "(median)",
               "NumPy", "thr", "GFLOP/s", "ct/NumPy", "(median)")
        fmt = "%-24s %10s %8s %6s %10s %8s %9s %9s %10s %3s %8s %9s %9s"
        p(fmt % hdr)
        p("-" * 130)
    for key in mm_keys:
        e = mm_entry(key)
        label = mm_label(key)
        row = {"kind": "matmul", "shape": label, "key": key}
        rows.append(row)
        d1 = "matmul %s >= %d%% of oneDNN" % (label, NEED_VS_DNNL * 100)
        d2 = "matmul %s >= NumPy (OpenBLAS)" % label
        if e.get("error_occurred"):
            row["error"] = e.get("error_message", "error")
            p("%-24s  SKIPPED: %s" % (label, row["error"]))
            tg.add(d1, None, "skipped: " + row["error"])
            tg.add(d2, None, "skipped: " + row["error"])
            continue
        lab = parse_label(e.get("label", ""))
        flops = e["flops"]
        ct_b, ct_m = best_and_median(e, "ct")
        d_b, d_m = best_and_median(e, "dnnl")
        npr = np_res.get(key)
        n_b, n_m = (npr["min_s"], npr["median_s"]) if npr else (None, None)
        err = e.get("check_rel_err")
        row.update(flops=flops, ct_s=ct_b, ct_median_s=ct_m, dnnl_s=d_b, dnnl_median_s=d_m,
                   numpy_s=n_b, numpy_median_s=n_m, numpy_stmt=NUMPY_MATMUL,
                   numpy_threads=npr["threads"] if npr else None,
                   numpy_by_threads=npr["by_threads"] if npr else None,
                   ct_gflops=flops / ct_b * 1e-9 if ct_b else None,
                   dnnl_gflops=flops / d_b * 1e-9 if d_b else None,
                   numpy_gflops=flops / n_b * 1e-9 if n_b else None,
                   vs_dnnl=d_b / ct_b if ct_b and d_b else None,
                   vs_dnnl_median=d_m / ct_m if ct_m and d_m else None,
                   vs_numpy=n_b / ct_b if ct_b and n_b else None,
                   vs_numpy_median=n_m / ct_m if ct_m and n_m else None,
                   check_rel_err=err, dnnl_impl=lab.get("dnnl"), ct_error=lab.get("ct_error"),
                   ct_primitives_created_in_loop=e.get("ct_primitives_created_in_loop"))
        row["frac_peak"] = row["ct_gflops"] / peak2 if row["ct_gflops"] and peak2 else None
        wrong = err is not None and err > ERR_LIMIT
        p(fmt % (label, fmt_t(ct_b), fmt_g(row["ct_gflops"]), fmt_pct(row["frac_peak"]), fmt_t(d_b),
                 fmt_g(row["dnnl_gflops"]), fmt_r(row["vs_dnnl"]), fmt_r(row["vs_dnnl_median"]),
                 fmt_t(n_b), row["numpy_threads"] or "-", fmt_g(row["numpy_gflops"]), fmt_r(row["vs_numpy"]),
                 fmt_r(row["vs_numpy_median"]))
          + ("   WRONG RESULT: rel err %.2g" % err if wrong else ""))
        if ct_b is None:
            why = "ctensor skipped: " + lab.get("ct_error", "not run")
            p("%-24s  ctensor SKIPPED: %s" % ("", lab.get("ct_error", "not run")))
            tg.add(d1, None, why)
            tg.add(d2, None, why)
            continue
        if wrong:
            tg.add(d1, False, "wrong result (max rel err %.2g vs oneDNN)" % err)
            tg.add(d2, False, "wrong result (max rel err %.2g vs oneDNN)" % err)
            continue
        tg.add(d1, row["vs_dnnl"] >= NEED_VS_DNNL, "%.2fx (%s vs oneDNN %s; %.0f vs %.0f GFLOP/s)" % (
            row["vs_dnnl"], fmt_t(ct_b), fmt_t(d_b), row["ct_gflops"], row["dnnl_gflops"]))
        if n_b is None:
            tg.add(d2, None, "no NumPy figure")
        else:
            tg.add(d2, row["vs_numpy"] >= NEED_VS_NUMPY, "%.2fx (%s vs NumPy %s, %d thread%s)" % (
                row["vs_numpy"], fmt_t(ct_b), fmt_t(n_b), row["numpy_threads"],
                "s" if row["numpy_threads"] > 1 else ""))
    if mm_keys:
        p("")

    # ---- per-call overhead ----
    ov = res.get(("BM_overhead_conv_small", None))
    overhead = {}
    if ov is not None:
        p("Per-call overhead: 1x1 conv N=1 C=16 8x8 K=16, NHWC, one call at a time "
          "(median of 32-call batches, variants interleaved in 5 rounds):")
        if ov.get("error_occurred"):
            p("  SKIPPED: %s" % ov.get("error_message", "error"))
        else:
            lab = parse_label(ov.get("label", ""))
            us = lambda k: ov[k] * 1e-3 if k in ov else None  # noqa: E731
            base = {"w": us("dnnl_w_ns"), "all": us("dnnl_all_ns"), "plainw": us("dnnl_plainw_ns")}
            base = {k: v for k, v in base.items() if v is not None}
            bk = min(base, key=base.get) if base else None
            best = base[bk] if bk else None
            pre = us("dnnl_prebuilt_ns")
            for name, k, note in (
                    ("ct_conv2d (plan-cache hit)", "ct_ns", ""),
                    ("ct_plan_execute", "ct_plan_ns", ""),
                    ("oneDNN: weight reorder + conv", "dnnl_w_ns", lab.get("dnnl_w", "")),
                    ("oneDNN: all format any, reorders", "dnnl_all_ns", lab.get("dnnl_all", "")),
                    ("oneDNN: plain oihw weights", "dnnl_plainw_ns", lab.get("dnnl_plainw", "")),
                    ("oneDNN: conv only, weights pre-reordered", "dnnl_prebuilt_ns",
                     "(informational: not possible when the weights change every call)")):
                v = us(k)
                if v is not None:
                    p("  %-42s %8.2f us  %s" % (name, v, note))
            if "ct_error" in lab:
                p("  ctensor SKIPPED: %s" % lab["ct_error"])
            if best is not None:
                p("  best direct oneDNN with new weights each call: %s, %.2f us" % (bk, best))
            overhead = {"ct_us": us("ct_ns"), "ct_plan_us": us("ct_plan_ns"), "dnnl_best_us": best,
                        "dnnl_best_variant": bk, "dnnl_prebuilt_us": pre,
                        "dnnl_impl": {k: lab.get("dnnl_" + k) for k in ("w", "all", "plainw")},
                        "check_rel_err": ov.get("check_rel_err"),
                        "ct_primitives_created_in_loop": ov.get("ct_primitives_created_in_loop")}
            for key, name in (("ct_us", "ct_conv2d"), ("ct_plan_us", "ct_plan_execute")):
                v = overhead[key]
                if v is not None and best is not None:
                    overhead[key.replace("_us", "_overhead_us")] = v - best
                    p("  overhead %-16s = %6.2f us  (%.2f - %.2f; vs the pre-reordered bare conv: %+.2f us)" % (
                        name, v - best, v, best, v - pre if pre is not None else float("nan")))
        p("")
    for key, name in (("ct_overhead_us", "ct_conv2d"), ("ct_plan_overhead_us", "ct_plan_execute")):
        desc = "%s overhead over direct oneDNN < %g us" % (name, NEED_OVERHEAD_US)
        v = overhead.get(key)
        if v is None:
            why = "not run"
            if ov is not None and not ov.get("error_occurred"):
                why = "ctensor skipped: " + parse_label(ov.get("label", "")).get("ct_error", "not run")
            tg.add(desc, None, why)
        else:
            tg.add(desc, v < NEED_OVERHEAD_US, "%.2f us (%.2f vs oneDNN[%s] %.2f us)" % (
                v, overhead[key.replace("_overhead", "")], overhead["dnnl_best_variant"],
                overhead["dnnl_best_us"]))

    # ---- plan / primitive creation ----
    pc_keys = [(layer, n, lay) for layer, _ in LAYERS for n in (1, 8) for lay in LAYOUTS
               if ("BM_plan_create_conv_%s_%s" % (layer, lay), n) in res]
    creation = []
    if pc_keys:
        p("Plan creation (median of a few runs): ct_plan_create + ct_plan_destroy, and oneDNN's own "
          "primitive_desc + primitive creation of the 'w' and 'all' pipelines (the conv and its reorders), "
          "each with oneDNN's primitive cache at its capacity (warm) / disabled "
          "(set_primitive_cache_capacity(0), which libctensor's oneDNN shares):")
        fmt = "%-26s %2s %-6s %11s %11s %11s %11s %11s %11s"
        p(fmt % ("", "", "", "ctensor", "", "oneDNN w", "", "oneDNN all", ""))
        p(fmt % ("conv layer", "N", "layout", "cache", "no cache", "cache", "no cache", "cache", "no cache"))
        p("-" * 115)
        for layer, n, lay in pc_keys:
            e = res[("BM_plan_create_conv_%s_%s" % (layer, lay), n)]
            desc = dict(LAYERS)[layer]
            if e.get("error_occurred"):
                p("%-26s %2d %-6s  SKIPPED: %s" % (desc, n, lay.upper(), e.get("error_message", "")))
                continue
            lab = parse_label(e.get("label", ""))
            c = {"layer": layer, "N": n, "layout": lay}
            keys = ("ct_cache_s", "ct_nocache_s", "dnnl_w_cache_s", "dnnl_w_nocache_s",
                    "dnnl_all_cache_s", "dnnl_all_nocache_s")
            for k in keys:
                c[k] = e.get(k)
            c["ct_error"] = lab.get("ct_error")
            creation.append(c)
            p(fmt % ((desc, n, lay.upper()) + tuple(fmt_t(c[k]) for k in keys)))
        skipped = sorted({c["ct_error"] for c in creation if c["ct_error"]})
        for s in skipped:
            p("  ctensor SKIPPED: %s" % s)
        p("")

    # ---- notes and checks ----
    p("Times: each row runs its implementations interleaved in 9 rounds (5 with --quick) of ~0.06 s "
      "(0.02 s) each; a time is the best round's mean per call (noise on a shared host only adds time), "
      "'(median)' the ratio of the medians over rounds. NumPy: best (and median) of timeit repeats of "
      "%s, with OpenBLAS at %d threads and at 1 thread (openblas_set_num_threads), the better one "
      "('thr'): OpenBLAS' threads can lose to one thread on a shared host." % (NUMPY_MATMUL, threads))
    p("ctensor: direct call, NULL stream (default threads = OpenMP max threads = %d), workspace "
      "allocated once outside the timed loop. oneDNN (%d threads, scratchpad_mode user): 'w' = src/dst "
      "in the user's layout (format_tag nhwc/nchw), weights format any with the reorder from the user's "
      "OIHW inside the timed loop; 'all' = src, weights, dst format any with every reorder to/from the "
      "user's layout inside the loop; the table's oneDNN is the better of the two." % (threads, threads))
    p("GFLOP/s: 2*N*K*P*Q*C*R*S (conv), 2*B*M*N*K (matmul); % peak: ctensor's GFLOP/s over the 2-thread "
      "FMA probe. ct/oneDNN, ct/NumPy: their time / ctensor's (> 1: ctensor faster).")
    fastest = max([r.get(k) or 0.0 for r in rows for k in ("ct_gflops", "dnnl_gflops", "numpy_gflops")] + [0.0])
    if peak2 and fastest > peak2:
        p("NOTE: a row ran at %.1f GFLOP/s, above the 2-thread FMA probe (%.1f): the probes ran while the "
          "host was busy, so %% peak overstates; compare the ratios, or run again when idle." % (fastest, peak2))
    errs = [r["check_rel_err"] for r in rows if r.get("check_rel_err") is not None]
    if overhead.get("check_rel_err") is not None:
        errs.append(overhead["check_rel_err"])
    prims = [r.get("ct_primitives_created_in_loop") for r in rows] + \
        [overhead.get("ct_primitives_created_in_loop")]
    prims = [x for x in prims if x is not None]
    if errs or prims:
        p("Checks: ctensor's output vs oneDNN's, max |diff| / max |oneDNN| over %d rows: %s (limit %g); "
          "backend primitives ctensor created inside its timed loops: %s." % (
              len(errs), "%.2g" % max(errs) if errs else "-", ERR_LIMIT,
              "%d" % sum(prims) if prims else "-"))
        if prims and sum(prims) > 0:
            p("  <- repeated identical direct calls must hit the plan cache and create no primitives")
    p("")
    lines.extend(tg.lines("Targets (issue 4), measured in this run:", width=56))
    p("")
    p("command: python3 bench/run.py --suite nn%s   (benchmark JSON: %s)" % (
        " --quick" if args.quick else "", os.path.relpath(bench_json, ROOT)))
    print("\n".join(lines), flush=True)

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"context": context, "fma_peak_GFLOPs": {"%dt" % k: v for k, v in peak.items()},
                       "fma_probes_GFLOPs": {"%s_%dt" % k: v for k, v in probes.items()},
                       "numpy_version": np_version, "numpy_threads": threads, "rows": rows,
                       "overhead": overhead, "plan_creation": creation, "targets": tg.items},
                      f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
