#!/usr/bin/env python3
"""The smooth parts of the Airy function Ai on both sides of its power series:
kAiryDec, kAiryP and kAiryQ in src/math/coefficients.h (used by float32
airy_ai in float64 lanes, src/cpu/elementwise_bessel.cc).

zeta = 2/3 |x|^(3/2).
- Decaying side, x >= 2.08 (zeta >= 2): Ai(x) = e^-zeta F / (2 sqrt(pi) x^(1/4))
  (DLMF 9.7.5), F - 1 fitted as a degree-20 polynomial in t = 2 / zeta in (0, 1].
- Oscillating side, x = -z <= -4.327 (zeta >= 6): Ai(-z) = (cos(zeta - pi/4) P
  + sin(zeta - pi/4) Q) / (sqrt(pi) z^(1/4)) (DLMF 9.7.9), and Bi(-z) the same
  with (-sin, cos): P and Q are Ai and Bi rotated back. P - 1 and zeta Q are
  fitted as degree-12 polynomials in u = 36 / zeta^2 in (0, 1].
Least squares at 400 Chebyshev nodes against mpmath at 40 digits; prints the
coefficients, highest degree first, and the largest error at 3001 points.
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40
M = 400


def dec(t):  # F - 1 at zeta = 2 / t
    zeta = 2 / mp.mpf(t)
    x = (3 * zeta / 2) ** (mp.mpf(2) / 3)
    return 2 * mp.sqrt(mp.pi) * mp.root(x, 4) * mp.exp(zeta) * mp.airyai(x) - 1


def osc(u):  # P - 1, zeta Q at zeta = 6 / sqrt(u)
    zeta = 6 / mp.sqrt(mp.mpf(u))
    z = (3 * zeta / 2) ** (mp.mpf(2) / 3)
    c, s = mp.cos(zeta - mp.pi / 4), mp.sin(zeta - mp.pi / 4)
    a = mp.sqrt(mp.pi) * mp.root(z, 4)
    ai, bi = mp.airyai(-z), mp.airybi(-z)
    return a * (c * ai - s * bi) - 1, a * (s * ai + c * bi) * zeta


def fit(values, deg):
    c = np.polynomial.chebyshev.chebfit(2 * nodes - 1, values, deg)
    return np.polynomial.chebyshev.Chebyshev(c, domain=[0, 1]).convert(kind=np.polynomial.Polynomial).coef


def show(name, fn, deg):
    coef = fit(np.array([float(fn(v)) for v in nodes]), deg)
    err = np.max(np.abs(np.polynomial.polynomial.polyval(check, coef) - np.array([float(fn(v)) for v in check])))
    print(f"// {name}: degree {deg}, max error {err:.2e}")
    print("{" + ", ".join(repr(float(v)) for v in coef[::-1]) + "},")


nodes = 0.5 - 0.5 * np.cos(np.pi * (np.arange(M) + 0.5) / M)
check = np.linspace(1e-6, 1, 3001)
show("F (decaying side)", dec, 20)
show("P (oscillating side)", lambda u: osc(u)[0], 12)
show("zeta Q (oscillating side)", lambda u: osc(u)[1], 12)
