#!/usr/bin/env python3
"""sort and argsort against NumPy and PyTorch in the same run: one line of 1e7 and 10000 rows of 1000, per dtype;
then the order statistics (median, quantile, kthvalue) of one line of 1e7 and of 1000 rows of 10000.

ctensor sorts into a preallocated out= (NumPy: copy then in-place sort, so neither allocates); argsort is compared
with NumPy's and torch's stable argsort, the order ctensor gives. Best of 5 calls. Needs torch.

usage: PYTHONPATH=build/python python3 bench/bench_sort.py
"""
import time

import numpy as np
import torch

import ctensor as ct

torch.set_num_threads(2)
def t(f, k=5):
    f(); b = 1e9
    for _ in range(k):
        t0 = time.perf_counter(); f(); b = min(b, time.perf_counter() - t0)
    return b * 1e3
rng = np.random.default_rng(0)
for dt in (np.float32, np.float64, np.int32, np.int64):
    for shape in ((10_000_000,), (10_000, 1000)):
        x = (rng.standard_normal(shape) * 1000).astype(dt)
        o = np.empty_like(x); oi = np.empty(shape, np.int64)
        tx = torch.from_numpy(x)
        c = t(lambda: ct.sort(x, out=o)); n = t(lambda: (np.copyto(o, x), o.sort()))
        tt = t(lambda: torch.sort(tx, stable=True))
        ca = t(lambda: ct.argsort(x, out=oi)); na = t(lambda: np.argsort(x, kind="stable"))
        ta = t(lambda: torch.argsort(tx, stable=True))
        assert (np.from_dlpack(ct.sort(x)) == np.sort(x)).all()
        print(f"{np.dtype(dt).name:8s} {str(shape):14s} sort ct {c:7.1f} np {n:7.1f} ({n/c:4.2f}x) torch {tt:7.1f} ({tt/c:4.2f}x) | "
              f"argsort ct {ca:7.1f} np {na:7.1f} ({na/ca:4.2f}x) torch {ta:7.1f} ({ta/ca:4.2f}x)")

# The order statistics (a radix select over the sort keys, no scratch) against NumPy's and torch's selections.
print()
for dt in (np.float32, np.float64, np.int32):
    for shape, axis in (((10_000_000,), None), ((1000, 10_000), 1)):
        x = (rng.standard_normal(shape) * 1000).astype(dt)
        tx = torch.from_numpy(x)
        d = -1 if axis is not None else None
        cases = [
            # NumPy's median (the mean of the middle two: a partition at two ranks) is what its users call
            ("median", lambda: ct.median(x, axis=axis), lambda: np.median(x, axis=axis),
             lambda: torch.median(tx) if d is None else torch.median(tx, dim=d)),
            ("quantile", lambda: ct.quantile(x, 0.3, axis=axis), lambda: np.quantile(x, 0.3, axis=axis),
             None if dt != np.float32 and dt != np.float64 or x.size > 16_000_000 else
             (lambda: torch.quantile(tx, 0.3) if d is None else torch.quantile(tx, 0.3, dim=d))),
            ("kthvalue", lambda: ct.kthvalue(x, 100, axis=axis),
             lambda: np.partition(x, 99, axis=axis if axis is not None else None)[..., 99] if axis is not None
             else np.partition(x, 99)[99],
             lambda: torch.kthvalue(tx.reshape(-1) if d is None else tx, 100, dim=-1)),
        ]
        for name, c, n, tt in cases:
            a, b = t(c), t(n)
            tm = t(tt) if tt is not None else float("nan")
            print(f"{np.dtype(dt).name:8s} {str(shape):14s} {name:9s} ct {a:7.1f} np {b:7.1f} ({b/a:4.2f}x) "
                  f"torch {tm:7.1f} ({tm/a:4.2f}x)")
