#!/usr/bin/env python3
"""erfinv in Giles' variable w = -log(1 - y^2) ("Approximating the erfinv
function", GPU Computing Gems, 2011), to double accuracy: kErfinvCentral and
kErfinvTail in src/math/coefficients.h (used by float32 erfinv in float64
lanes, src/cpu/elementwise_more.cc).

erfinv(y) = y F(w). Central, w < 6.25 (|y| < 0.99903): F as a degree-20
polynomial in w / 6.25 in [0, 1). Tail, 6.25 <= w <= 17.5 (float32's largest
|y| < 1 gives w = 16.6): F as a degree-16 polynomial in (sqrt(w) - 2.5) / 1.7
in [0, 1]. Weighted (relative) least squares at 400 Chebyshev nodes against
mpmath at 30 digits; prints the coefficients, highest degree first, and the
largest relative error of Horner's rule in double at 3001 points.
"""
import warnings

import mpmath as mp
import numpy as np

mp.mp.dps = 30
M = 400
warnings.simplefilter("ignore", np.exceptions.RankWarning)


def f(w):  # F(w) = erfinv(y) / y
    y = mp.sqrt(-mp.expm1(-mp.mpf(w)))
    return mp.erfinv(y) / y


def show(name, to_w, deg, c0=None):
    """c0: F's value at v = 0, kept exact (the fit is then c0 + v g(v))."""
    nodes = 0.5 - 0.5 * np.cos(np.pi * (np.arange(M) + 0.5) / M)
    vals = np.array([float(f(to_w(v))) for v in nodes])
    if c0 is None:
        c = np.polynomial.chebyshev.chebfit(2 * nodes - 1, vals, deg, w=1 / vals)
        coef = np.polynomial.chebyshev.Chebyshev(c, domain=[0, 1]).convert(kind=np.polynomial.Polynomial).coef
    else:
        g = np.array([float((f(to_w(v)) - c0) / v) for v in nodes])
        c = np.polynomial.chebyshev.chebfit(2 * nodes - 1, g, deg - 1, w=nodes / vals)
        coef = np.concatenate([[c0], np.polynomial.chebyshev.Chebyshev(c, domain=[0, 1]).convert(
            kind=np.polynomial.Polynomial).coef])
    check = np.linspace(1e-12, 1, 3001)
    got = np.zeros_like(check)
    for k in coef[::-1]:
        got = got * check + k
    ref = np.array([float(f(to_w(v))) for v in check])
    print(f"// {name}: degree {deg}, max relative error {np.max(np.abs(got / ref - 1)):.2e}")
    print("{" + ", ".join(repr(float(v)) for v in coef[::-1]) + "},")


show("central, w / 6.25", lambda v: 6.25 * v, 13, c0=float(mp.sqrt(mp.pi) / 2))  # exact y sqrt(pi)/2 near 0
show("tail, (sqrt(w) - 2.5) / 1.7", lambda v: (2.5 + 1.7 * v) ** 2, 11)
