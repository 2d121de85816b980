#!/usr/bin/env python3
"""Hankel's P and Q for the Bessel functions of order 0 and 1 from x >= 8:
kBesselP and kBesselQ in src/math/coefficients.h (used by the float32 J0, J1,
Y0, Y1 in float64 lanes, src/cpu/elementwise_bessel.cc).

J_nu(x) = sqrt(2/(pi x)) (P_nu cos w - Q_nu sin w), Y_nu(x) = sqrt(2/(pi x))
(P_nu sin w + Q_nu cos w), w = x - (2 nu + 1) pi / 4 (A&S 9.2.5), so P and
Q are J and Y rotated back by w. With u = 64 / x^2 in (0, 1], P_nu - 1 and
x Q_nu are smooth in u: each is fitted by a degree-10 polynomial in u by least
squares at 400 Chebyshev nodes of (0, 1], against mpmath at 40 digits.
Prints the coefficients, highest degree first, and the largest error at the
nodes and at 20001 points between them.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
X0, DEG, M = 8.0, 10, 400


def pq(nu, x):
    x = mp.mpf(x)
    w = x - (2 * nu + 1) * mp.pi / 4
    j, y = mp.besselj(nu, x), mp.bessely(nu, x)
    a = mp.sqrt(mp.pi * x / 2)
    return a * (j * mp.cos(w) + y * mp.sin(w)) - 1, a * (y * mp.cos(w) - j * mp.sin(w)) * x


def fit(nodes, values):
    c = np.polynomial.chebyshev.chebfit(2 * nodes - 1, values, DEG)
    return np.polynomial.chebyshev.Chebyshev(c, domain=[0, 1]).convert(kind=np.polynomial.Polynomial).coef


u = 0.5 - 0.5 * np.cos(np.pi * (np.arange(M) + 0.5) / M)
check = np.linspace(1e-6, 1, 20001)[::97]
for nu in (0, 1):
    vals = [pq(nu, X0 / mp.sqrt(v)) for v in u]
    for k, name in ((0, "P"), (1, "Q")):
        coef = fit(u, np.array([float(v[k]) for v in vals]))
        ref = np.array([float(pq(nu, X0 / mp.sqrt(v))[k]) for v in check])
        err = np.max(np.abs(np.polynomial.polynomial.polyval(check, coef) - ref))
        print(f"// {name}{nu}: max error {err:.2e}")
        print("{" + ", ".join(repr(float(v)) for v in coef[::-1]) + "},")
