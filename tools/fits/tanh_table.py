#!/usr/bin/env python3
"""tanh's interval table, kTanhTable in src/math/coefficients.h (used by TanhTable in
src/cpu/exp_math-inl.h).

|x| in [0, 16) is cut into 32 intervals by the bits of |x|: interval 0 is
[0, 0.078125); then each binade from 1/16 to 8 in quarters. Intervals 29-31
([10, 16), where tanh rounds to 1) are the constant 1. On interval i,
tanh(|x|) = P_i(|x| - mid_i), P_i of degree 5, fitted for relative error by
weighted least squares at Chebyshev nodes with Lawson's iteration against
mpmath's tanh at 30 digits; c0 is rounded to float32 first and the others
refitted around it (interval 0: c0 = 0, c1 = 1 exactly). Prints the C++ rows.
"""
import numpy as np, mpmath as mp, struct
mp.mp.dps = 30
DEG = 5
def f32(v): return struct.unpack('f', struct.pack('f', v))[0]
def fit(A, b, iters=40):
    w = np.ones(len(b)); best = None
    for _ in range(iters):
        sw = np.sqrt(w); c = np.linalg.lstsq(A * sw[:, None], b * sw, rcond=None)[0]
        err = np.abs(A @ c - b); m = err.max()
        if best is None or m < best[1]: best = (c, m)
        w = w * err; w /= w.sum()
    return best
rows = []
for k in range(32):
    if k == 0: lo, hi, mid = 0.0, 0.078125, 0.0
    else:
        e, j = -4 + k // 4, k % 4
        lo, hi = 2.0**e * (1 + j / 4), 2.0**e * (1 + (j + 1) / 4)
        mid = (lo + hi) / 2
    if lo >= 10:  # [10, 16): tanh rounds to 1 from 9.011
        rows.append([0.0, 1.0] + [0.0] * DEG); continue
    N = 400; t = np.cos(np.pi * (np.arange(N) + 0.5) / N)
    x = (lo + hi) / 2 + (hi - lo) / 2 * t
    y = np.array([float(mp.tanh(mp.mpf(v))) for v in x])
    u = x - mid
    V = np.vander(u, DEG + 1, increasing=True)
    if k == 0: c0, c1 = 0.0, 1.0; fixed = 2
    else: c0 = f32(float(mp.tanh(mp.mpf(mid)))); fixed = 1
    base = c0 + (u if k == 0 else 0)
    c, m = fit(V[:, fixed:] / y[:, None], (y - base) / y)
    coef = [c0] + ([1.0] if k == 0 else []) + [f32(v) for v in c]
    rows.append([mid] + coef)
    print('// %2d [%.6g, %.6g): relative error %.2g' % (k, lo, hi, m))
print('{' + ',\n'.join('{' + ', '.join('%.9g' % f32(r[i]) for i in range(len(r))) + '}' for r in rows) + '}')
