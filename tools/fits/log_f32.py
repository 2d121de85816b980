#!/usr/bin/env python3
"""float32 log's polynomial, kLogF32 in src/math/coefficients.h (used by
LogF32 in src/cpu/exp_math-inl.h).

x = 2^e m, m in [sqrt(1/2), sqrt(2)), f = m - 1 (exact):
log(m) = f - f^2/2 + f^3 P(f), P of degree 7: relative least squares of
log1p(f) at 600 Chebyshev nodes against mpmath at 40 digits, each
coefficient rounded to float32 (highest degree first) and the rest refitted
around it. Prints the coefficients, highest degree first, and the largest
relative error of log1p(f) in double at 1001 points (7.5e-9).
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
DEG, M = 7, 600
lo, hi = float(mp.sqrt(0.5) - 1), float(mp.sqrt(2) - 1)
nodes = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(M) + 0.5) / M)
g = np.array([float((mp.log1p(f) - f + mp.mpf(f) ** 2 / 2) / mp.mpf(f) ** 3) for f in nodes])
w = np.abs(nodes ** 3 / np.array([float(mp.log1p(f)) for f in nodes]))  # relative error of log1p(f)
V = np.vander(nodes, DEG + 1)
cs = []
for i in range(DEG + 1):
    rhs = g - (V[:, :i] @ np.array(cs) if cs else 0)
    c = np.linalg.lstsq(V[:, i:] * w[:, None], rhs * w, rcond=None)[0]
    cs.append(float(np.float32(c[0])))
t = np.linspace(lo, hi, 1001)
t = t[t != 0]
ref = np.array([float(mp.log1p(x)) for x in t])
err = np.max(np.abs((t - t * t / 2 + t ** 3 * np.polyval(cs, t)) / ref - 1))
print(f"// degree {DEG}, max relative error {err:.2e}")
print("{" + ", ".join(repr(c) + "f" for c in cs) + "}")
