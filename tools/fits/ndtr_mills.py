#!/usr/bin/env python3
"""The normal distribution's Mills ratio for the float32 ndtr and log_ndtr
in float64 lanes: kNdtrMills in src/math/coefficients.h (used by
src/cpu/elementwise_more.cc).

m(y) = ndtr(-y) / phi(y), phi(y) = e^(-y^2/2) / sqrt(2 pi), is smooth and
tends to 1/y. With t = 4 / (4 + y), m(y) / t is smooth on t in [0, 1]
(y from 0 to infinity) and tends to 1/4: it is fitted by a degree-20
polynomial in t by least squares at 400 Chebyshev nodes, against mpmath at
40 digits. Prints the coefficients, highest degree first, and the largest
relative error at the nodes and between them.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
THI, DEG, M = 1.0, 20, 400


def mills_over_t(t):
    t = mp.mpf(t)
    if t == 0:
        return mp.mpf(1) / 4
    y = 4 / t - 4
    return mp.ncdf(-y) / mp.npdf(y) / t


u = 0.5 - 0.5 * np.cos(np.pi * (np.arange(M) + 0.5) / M)
t = THI * u
f = np.array([float(mills_over_t(v)) for v in t])
c = np.polynomial.chebyshev.chebfit(2 * u - 1, f, DEG)
coef = np.polynomial.chebyshev.Chebyshev(c, domain=[0, THI]).convert(kind=np.polynomial.Polynomial).coef
check = np.concatenate([t, np.linspace(0, THI, 20001)[::37]])
ref = np.array([float(mills_over_t(v)) for v in check])
err = np.max(np.abs(np.polynomial.polynomial.polyval(check, coef) / ref - 1))
print(f"// m(y) / t for t = 4/(4 + y) in [0, {THI:g}]: max relative error {err:.2e}")
print("{" + ", ".join(repr(float(v)) for v in coef[::-1]) + "}")
