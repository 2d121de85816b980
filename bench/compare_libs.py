#!/usr/bin/env python3
"""Old library against new under the same benchmark binaries, interleaved.

    python3 bench/compare_libs.py OLD_LIB_DIR NEW_LIB_DIR [--bench-dir DIR] [--rounds N]
                                  [--suite elementwise|broadcast_reduce|nn ...] [--filter-<suite> REGEX]

The benchmark binaries (build/bench/ct_bench_<suite>, or those of --bench-dir:
use the older build's binaries when the newer header changed the ABI) find
libctensor through LD_LIBRARY_PATH, which wins over their RUNPATH: each round
runs every suite once with OLD_LIB_DIR, then once with NEW_LIB_DIR. The table
gives each benchmark's median over the rounds (median_ns where the benchmark
reports one, else real time) and new/old; a row's spread between rounds says
how much of a ratio is this host's noise. Prints the host's load before and
after: run it when nothing else is compiling.
"""
import argparse
import collections
import json
import os
import statistics
import subprocess
import sys
import tempfile

DEFAULT_FILTERS = {
    "elementwise": r"BM_ct_relu_latency|BM_ct_exp/(1000|100000|10000000)/|BM_ct_relu/(1000|1000000|10000000)/"
                   r"|BM_ct_where/1000000/|BM_ct_cast_f32_f16/1000000/",
    "broadcast_reduce": r"BM_ct_add_latency/1/|BM_ct_add/(1000|100000|10000000)/|BM_ct_add_bcast_row|BM_ct_add_bcast_col"
                        r"|BM_ct_sum/10000000|BM_ct_sum_axis0|BM_ct_sum_axis1|BM_ct_softmax|BM_ct_logsumexp/",
    "nn": r"BM_overhead_conv_small|BM_nn_conv_res2_3x3_nhwc/1/|BM_nn_conv_res3_3x3_nchw/1/|BM_nn_matmul/(256|1024)/"
          r"|BM_nn_matmul_bert",
}
EXTRA = {"elementwise": ["--ct_skip_accuracy"]}


def run(binary, lib, regex, out):
    env = dict(os.environ, LD_LIBRARY_PATH=lib)
    cmd = [binary, "--benchmark_filter=" + regex, "--benchmark_out=" + out, "--benchmark_out_format=json"]
    cmd += EXTRA.get(os.path.basename(binary)[len("ct_bench_"):], [])
    subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(out) as f:
        return json.load(f).get("benchmarks", [])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--bench-dir", default=os.path.join(os.path.dirname(__file__), "..", "build", "bench"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--suite", action="append", choices=sorted(DEFAULT_FILTERS))
    for s in DEFAULT_FILTERS:
        p.add_argument("--filter-" + s.replace("_", "-"), dest="filter_" + s, default=DEFAULT_FILTERS[s])
    a = p.parse_args()
    suites = a.suite or sorted(DEFAULT_FILTERS)
    print("load before:", open("/proc/loadavg").read().split()[:3])
    times = collections.defaultdict(lambda: {"old": [], "new": []})
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(a.rounds):
            for which, lib in (("old", a.old), ("new", a.new)):
                for s in suites:
                    binary = os.path.join(a.bench_dir, "ct_bench_" + s)
                    for b in run(binary, lib, getattr(a, "filter_" + s), os.path.join(tmp, "out.json")):
                        times[b["name"]][which].append(b.get("median_ns", b["real_time"]))
    print("load after: ", open("/proc/loadavg").read().split()[:3])
    print("%-58s %11s %11s %8s %14s" % ("benchmark", "old (med)", "new (med)", "new/old", "new/old range"))
    ratios = []
    for name in sorted(times):
        o, n = times[name]["old"], times[name]["new"]
        if not o or not n:
            continue
        r = statistics.median(n) / statistics.median(o)
        ratios.append(r)
        lo, hi = min(n) / max(o), max(n) / min(o)
        print("%-58s %11.4g %11.4g %8.3f %6.2f..%-6.2f" % (name[:58], statistics.median(o), statistics.median(n), r, lo, hi))
    if not ratios:
        sys.exit("compare_libs: no benchmark ran with both libraries")
    print("geometric mean new/old: %.3f over %d benchmarks" % (statistics.geometric_mean(ratios), len(ratios)))


if __name__ == "__main__":
    main()
