#!/usr/bin/env python3
"""The float64 polynomials of the OpenCL module's float32 pow (ct_log2d and
ct_exp2d in src/gpu/math.cc).

- log2: x = 2^e m, m in [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1),
  log2 m = s q(s^2), q(z) = (2 / ln 2) atanh(sqrt z) / sqrt z on
  [0, (3 - 2 sqrt 2)^2]: degree 4 (2^-37.8 relative).
- exp2: t = n + f, f in [-1/2, 1/2], 2^f = 1 + f g(f), g(f) = (2^f - 1) / f:
  degree 7 (2^-39 relative to 2^f); 2^0 = 1 exactly.

Relative least squares at Chebyshev nodes with Lawson's iteration, against
mpmath at 200 bits. Prints each polynomial's worst relative error and its
coefficients (lowest degree first) as hexadecimal doubles.
"""
import mpmath as mp

mp.mp.prec = 200


def fit(f, a, b, deg, iters=30, nodes=400):
    xs = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + 0.5) / nodes) for k in range(nodes)]
    w = [mp.mpf(1)] * nodes
    best = None
    for _ in range(iters):
        A = mp.matrix(nodes, deg + 1)
        r = mp.matrix(nodes, 1)
        for i, x in enumerate(xs):
            fx = f(x)
            sc = mp.sqrt(w[i]) / fx
            for j in range(deg + 1):
                A[i, j] = x**j * sc
            r[i] = fx * sc
        c = mp.lu_solve(A.T * A, A.T * r)
        errs = [abs((sum(c[j] * x**j for j in range(deg + 1)) - f(x)) / f(x)) for x in xs]
        if best is None or max(errs) < best[0]:
            best = (max(errs), [c[j] for j in range(deg + 1)])
        total = sum(w[i] * errs[i] for i in range(nodes))
        w = [w[i] * errs[i] / total * nodes for i in range(nodes)]
    return best


def q(z):
    if z == 0:
        return 2 / mp.log(2)
    s = mp.sqrt(z)
    return 2 / mp.log(2) * mp.atanh(s) / s


def g(f):
    return mp.log(2) if f == 0 else (mp.power(2, f) - 1) / f


zmax = ((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)) ** 2
for name, fn, a, b, deg in (("log2 q(z)", q, mp.mpf(0), zmax, 4), ("exp2 g(f)", g, mp.mpf(-0.5), mp.mpf(0.5), 7)):
    err, c = fit(fn, a, b, deg)
    if name.startswith("exp2"):  # the error of 1 + f g(f) relative to 2^f
        grid = [a + (b - a) * k / 4000 for k in range(4001)]
        err = max(abs((1 + x * sum(c[j] * x**j for j in range(deg + 1)) - mp.power(2, x)) / mp.power(2, x)) for x in grid)
    print(f"{name}: degree {deg}, worst relative error 2^{float(mp.log(err, 2)):.1f}")
    print("  " + ", ".join(float(v).hex() for v in c))
