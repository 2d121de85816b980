#!/usr/bin/env python3
"""The modified Bessel functions' smooth parts: kBesselIe and kBesselKe in
src/math/coefficients.h (used by the float32 I0, I1, K0, K1 and their scaled
forms in float64 lanes, src/cpu/elementwise_bessel.cc).

sqrt(2 pi x) e^-x I_nu(x) for x >= 8 and sqrt(2 x / pi) e^x K_nu(x) for
x >= 2 tend to 1 and are smooth in v = 8/x (I) or v = 2/x (K), v in (0, 1]
(their asymptotic series are in powers of 1/x, A&S 9.7.1-2): each is fitted
by a degree-16 polynomial in v by least squares at 400 Chebyshev nodes of
(0, 1], against mpmath at 40 digits. Prints the coefficients, highest degree
first, and the largest relative error at the nodes and between them.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
DEG, M = 16, 400


def smooth(kind, nu, x):
    x = mp.mpf(x)
    if kind == "I":
        return mp.sqrt(2 * mp.pi * x) * mp.exp(-x) * mp.besseli(nu, x)
    return mp.sqrt(2 * x / mp.pi) * mp.exp(x) * mp.besselk(nu, x)


u = 0.5 - 0.5 * np.cos(np.pi * (np.arange(M) + 0.5) / M)
check = np.concatenate([u, np.linspace(1e-6, 1, 20001)[::97]])
for kind, x0 in (("I", 8.0), ("K", 2.0)):
    for nu in (0, 1):
        y = np.array([float(smooth(kind, nu, x0 / v)) for v in u])
        c = np.polynomial.chebyshev.chebfit(2 * u - 1, y, DEG)
        coef = np.polynomial.chebyshev.Chebyshev(c, domain=[0, 1]).convert(kind=np.polynomial.Polynomial).coef
        ref = np.array([float(smooth(kind, nu, x0 / v)) for v in check])
        err = np.max(np.abs(np.polynomial.polynomial.polyval(check, coef) / ref - 1))
        print(f"// {kind}{nu} from x >= {x0:g}, v = {x0:g}/x: max relative error {err:.2e}")
        print("{" + ", ".join(repr(float(v)) for v in coef[::-1]) + "},")
