#!/usr/bin/env python3
"""ctensor kernels on a Dask cluster against NumPy chunk functions, same run, same cluster.

The pipeline: an array of --gb GB of float32 (made on the workers, chunk by chunk, by a cheap deterministic
function both sides share), then y = sum over axis 1 of tanh(x) * exp(-x^2), as chunk tasks: with NumPy
functions (np.tanh, np.exp, np.multiply, np.sum) and with ctensor's (ctensor.dask.map_blocks /
ctensor.dask.reduction). Cluster layouts on this machine: 1 worker x 1 thread, 2 workers x 1 thread (processes),
1 worker x 2 threads (ctensor releases the GIL, so threads in one worker overlap); ctensor runs 1 thread per
call so that Dask does the parallelism. Best of --repeat runs each.

usage: PYTHONPATH=build/python python3 bench/bench_dask.py [--gb 4] [--repeat 2]
"""
import argparse
import os
import time

import numpy as np

import dask.array as da
from distributed import Client, LocalCluster

import ctensor as ct
import ctensor.dask as cd

ROWS = 4096


def source(n_elems, chunk_elems):
    rows = max(1, n_elems // ROWS)
    chunk_rows = max(1, chunk_elems // ROWS)
    base = da.arange(rows * ROWS, chunks=chunk_rows * ROWS, dtype=np.float32).reshape(rows, ROWS)
    # a cheap deterministic filling of [-1, 1): the same for both sides, made on the workers (its cost is the
    # "source alone" row, part of every pipeline's time)
    scale = np.float32(2.0 / (rows * ROWS))
    return base.map_blocks(lambda b: b * scale - np.float32(1), dtype=np.float32)


def pipeline_source(x):
    return x.sum(axis=1, dtype=np.float32)


def pipeline_numpy(x):
    y = x.map_blocks(lambda b: np.tanh(b) * np.exp(-(b * b)), dtype=np.float32)
    return y.sum(axis=1, dtype=np.float32)


def pipeline_ctensor(x):
    sq = cd.map_blocks("square", x)
    y = cd.map_blocks("mul", cd.map_blocks("tanh", x), cd.map_blocks("exp", cd.map_blocks("neg", sq)))
    return cd.reduction("sum", y, axis=1)


def pipeline_ctensor_fused(x):
    """The same maths in one task per chunk (ctensor calls writing in place), as a user would write it."""
    def chunk(b):
        t = ct.tanh(b)
        e = ct.square(b)
        ct.neg(e, out=e)
        ct.exp(e, out=e)
        ct.mul(t, e, out=t)
        return np.asarray(ct.sum(t, axis=1))

    return x.map_blocks(chunk, dtype=np.float32, drop_axis=1)


def timed(client, build, n, chunk, repeat):
    best = float("inf")
    result = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = build(source(n, chunk)).compute()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=4.0)
    ap.add_argument("--chunk-mb", type=float, default=64.0)
    ap.add_argument("--repeat", type=int, default=2)
    a = ap.parse_args()
    n = int(a.gb * 1e9 / 4)
    chunk = int(a.chunk_mb * 1e6 / 4)
    print(f"host: {os.cpu_count()} CPUs; array {a.gb} GB float32 ({n:.3g} elements), chunks {a.chunk_mb} MB; "
          f"best of {a.repeat}")
    layouts = (("1 worker x 1 thread", 1, 1), ("2 workers x 1 thread", 2, 1), ("1 worker x 2 threads", 1, 2))
    times = {}
    for label, workers, threads in layouts:
        with LocalCluster(n_workers=workers, threads_per_worker=threads, processes=True, dashboard_address=None,
                          memory_limit=0) as cluster, Client(cluster) as client:
            cd.set_num_threads(1, client)
            t0, _ = timed(client, pipeline_source, n, chunk, a.repeat)
            tn, rn = timed(client, pipeline_numpy, n, chunk, a.repeat)
            tc, rc = timed(client, pipeline_ctensor, n, chunk, a.repeat)
            tf, rf = timed(client, pipeline_ctensor_fused, n, chunk, a.repeat)
            err = max(float(np.max(np.abs(rc - rn) / (1 + np.abs(rn)))), float(np.max(np.abs(rf - rn) / (1 + np.abs(rn)))))
            times[label] = (tn, tc, tf)
            print(f"  {label:22s} source alone {t0:6.2f} s   numpy {tn:7.2f} s   ctensor {tc:7.2f} s ({tn / tc:4.2f}x)"
                  f"   ctensor one task/chunk {tf:7.2f} s ({tn / tf:4.2f}x)   max rel diff {err:.1e}")
    one, two, thr = times["1 worker x 1 thread"], times["2 workers x 1 thread"], times["1 worker x 2 threads"]
    print(f"scaling, ctensor: 2 workers vs 1: {one[1] / two[1]:4.2f}x (target >= 1.6); 2 threads in 1 worker vs 1: "
          f"{one[1] / thr[1]:4.2f}x; numpy: 2 workers vs 1: {one[0] / two[0]:4.2f}x")
    print(f"ctensor vs numpy chunks (2 workers): {two[0] / two[1]:4.2f}x (target >= 1.5)")


if __name__ == "__main__":
    main()
