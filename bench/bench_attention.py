#!/usr/bin/env python3
"""scaled_dot_product_attention against torch.nn.functional.scaled_dot_product_attention in the same run, on the
CPU with 2 threads: (batch, heads, L, S, E) = (8, 12, 512, 512, 64) in float32 and bfloat16, plain and causal, and a
smaller shape; best of 5 calls each, and the fraction of ctensor's matmul rate in the same dtype measured in the
same run (the two products are 4 B H L S E flops; a 2048^3 matmul gives the host's rate: float32, and bfloat16 on
the AMX/AVX512_BF16 units where oneDNN has them).

usage: PYTHONPATH=build/python python3 bench/bench_attention.py
"""
import os
import time

import numpy as np
import torch

import ctensor as ct
from common import l3_mib

torch.set_num_threads(2)
ct.set_num_threads(2)
F = torch.nn.functional


def best(f, k=5):
    f()
    b = 1e9
    for _ in range(k):
        t0 = time.perf_counter()
        f()
        b = min(b, time.perf_counter() - t0)
    return b


def matmul_rate(dt):
    a = torch.from_numpy(np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)).to(dt)
    o = torch.empty_like(a)
    s = best(lambda: ct.matmul(a, a, out=o), 3)
    return 2 * 2048 ** 3 / s / 1e9


print(f"host: {os.cpu_count()} CPUs, L3 {l3_mib()} MiB; ctensor {ct.__version__}, torch {torch.__version__}")
peaks = {dt: matmul_rate(dt) for dt in (torch.float32, torch.bfloat16)}
print("ctensor matmul (2048^3) in this run: " + ", ".join(f"{str(dt)[6:]} {r:.1f} GFLOP/s" for dt, r in peaks.items()))
for shape in ((8, 12, 512, 512, 64), (2, 8, 128, 128, 32)):
    b, h, L, S, E = shape
    for dt in (torch.float32, torch.bfloat16):
        for causal in (False, True):
            g = torch.Generator().manual_seed(0)
            q, k, v = (torch.randn(b, h, n, E, generator=g).to(dt) for n in (L, S, S))
            tc = best(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            cc = best(lambda: ct.scaled_dot_product_attention(q, k, v, is_causal=causal))
            got = torch.from_dlpack(ct.scaled_dot_product_attention(q, k, v, is_causal=causal)).float()
            ref = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=causal)
            want = F.scaled_dot_product_attention(q, k, v, is_causal=causal).float()
            flops = 4 * b * h * L * S * E / (2 if causal else 1)
            print(f"{str(shape):22s} {str(dt)[6:]:8s} causal={causal!s:5s} ctensor {cc * 1e3:8.2f} ms  torch "
                  f"{tc * 1e3:8.2f} ms  ({tc / cc:4.2f}x)  ctensor {flops / cc / 1e9:6.1f} GFLOP/s "
                  f"({flops / cc / 1e9 / peaks[dt]:4.0%} of matmul)  max err vs float64: ctensor "
                  f"{(got.double() - ref).abs().max():.1e} torch {(want.double() - ref).abs().max():.1e}")
