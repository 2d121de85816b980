#!/usr/bin/env python3
"""float32 tan's polynomial, kTanF32 in src/math/coefficients.h (used by
TanF32 in src/cpu/exp_math-inl.h).

r in [-pi/4, pi/4], z = r^2: tan(r) = r + r^3 P(z), P of degree DEG in z:
relative least squares of tan(r) at 600 Chebyshev nodes in z against mpmath
at 40 digits, each coefficient rounded to float32 (highest degree first) and
the rest refitted around it. Prints the coefficients, highest degree first,
and the largest relative error of tan(r) in double at 2001 points (degree
6: 1.9e-9).
"""
import sys
import mpmath as mp
import numpy as np

mp.mp.dps = 40
DEG = int(sys.argv[1]) if len(sys.argv) > 1 else 6
M = 600
hi = float(mp.pi / 4) ** 2
zs = hi / 2 + hi / 2 * np.cos(np.pi * (np.arange(M) + 0.5) / M)
rs = np.sqrt(zs)
g = np.array([float((mp.tan(mp.mpf(r)) - r) / mp.mpf(r) ** 3) for r in rs])
w = np.abs(rs ** 3 / np.array([float(mp.tan(r)) for r in rs]))  # relative error of tan(r)
V = np.vander(zs, DEG + 1)
cs = []
for i in range(DEG + 1):
    rhs = g - (V[:, :i] @ np.array(cs) if cs else 0)
    c = np.linalg.lstsq(V[:, i:] * w[:, None], rhs * w, rcond=None)[0]
    cs.append(float(np.float32(c[0])))
t = np.linspace(1e-4, float(mp.pi / 4), 2001)
ref = np.array([float(mp.tan(x)) for x in t])
err = np.max(np.abs((t + t ** 3 * np.polyval(cs, t * t)) / ref - 1))
print(f"// degree {DEG} in r^2, max relative error {err:.2e}")
print("{" + ", ".join(repr(c) + "f" for c in cs) + "}")
