"""Derivatives of the registry's elementwise, broadcast, reduction and along-axis ops, written once in ctensor's
own ops for every framework adapter (ctensor.torch registers them as its operators' autograd formulas).

Each rule takes ``o``, a namespace whose attributes are the framework's operators for the registry's rows
(``o.mul(a, b)``, ``o.mul_scalar(x, s)``, ``o.sum(x, dims, keepdim)``, ``o.softmax(x, dim)``: each row's
schema, positionally) plus four helpers:

- ``o.const(like, v)``: a 0-d tensor holding v with like's dtype and device (it broadcasts);
- ``o.sum_to(g, shape)``: g summed down to shape, the adjoint of broadcasting to it;
- ``o.unreduce(g, shape, dims, keepdim)``: a reduction's g broadcast back to the input's shape;
- ``o.count(shape, dims)``: how many elements a reduction over dims of shape combines.

and returns one gradient per tensor input (None where there is none). The rules use nothing else, so the
gradient graph is made of ctensor ops too, and is itself differentiable where its ops have rules here. An op
without a rule has no gradient: differentiating through it raises, it is never silently zero. Ops whose
derivative is zero almost everywhere (floor, sign, ...) say so with ``_ZERO`` rather than being left out.

Unary rules: ``f(o, x, y, g)``; with parameters ``f(o, x, y, g, *params)``; binary ``f(o, a, b, y, g)``
returning (ga, gb) before ``sum_to``; reductions ``f(o, x, y, g, dims, keepdim, *params)`` where ``g`` is
already broadcast back (``o.unreduce``) and so is ``y``; along-axis ``f(o, x, y, g, dim)``.
"""
from __future__ import annotations

import math

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _sq(o, t):
    return o.mul(t, t)


def _pos(o, x):
    """1 where x > 0, else 0, in x's dtype (relu's derivative, as PyTorch takes it at 0)."""
    return o.sign(o.relu(x))


def _zero(o, x, y, g, *params):
    return (o.mul_scalar(g, 0.0),)


_ZERO = _zero

UNARY = {
    "neg": lambda o, x, y, g: (o.neg(g),),
    "positive": lambda o, x, y, g: (g,),
    "abs": lambda o, x, y, g: (o.mul(g, o.sign(x)),),
    "exp": lambda o, x, y, g: (o.mul(g, y),),
    "exp2": lambda o, x, y, g: (o.mul_scalar(o.mul(g, y), _LN2),),
    "expm1": lambda o, x, y, g: (o.mul(g, o.add_scalar(y, 1.0)),),
    "log": lambda o, x, y, g: (o.div(g, x),),
    "log2": lambda o, x, y, g: (o.div(g, o.mul_scalar(x, _LN2)),),
    "log10": lambda o, x, y, g: (o.div(g, o.mul_scalar(x, _LN10)),),
    "log1p": lambda o, x, y, g: (o.div(g, o.add_scalar(x, 1.0)),),
    "sqrt": lambda o, x, y, g: (o.div(g, o.mul_scalar(y, 2.0)),),
    "rsqrt": lambda o, x, y, g: (o.mul(g, o.mul_scalar(o.mul(y, _sq(o, y)), -0.5)),),
    "reciprocal": lambda o, x, y, g: (o.mul(g, o.neg(_sq(o, y))),),
    "square": lambda o, x, y, g: (o.mul(g, o.mul_scalar(x, 2.0)),),
    "sin": lambda o, x, y, g: (o.mul(g, o.cos(x)),),
    "cos": lambda o, x, y, g: (o.mul(g, o.neg(o.sin(x))),),
    "tan": lambda o, x, y, g: (o.mul(g, o.add_scalar(_sq(o, y), 1.0)),),
    "asin": lambda o, x, y, g: (o.mul(g, o.rsqrt(o.add_scalar(o.neg(_sq(o, x)), 1.0))),),
    "acos": lambda o, x, y, g: (o.neg(o.mul(g, o.rsqrt(o.add_scalar(o.neg(_sq(o, x)), 1.0)))),),
    "atan": lambda o, x, y, g: (o.div(g, o.add_scalar(_sq(o, x), 1.0)),),
    "sinh": lambda o, x, y, g: (o.mul(g, o.cosh(x)),),
    "cosh": lambda o, x, y, g: (o.mul(g, o.sinh(x)),),
    "tanh": lambda o, x, y, g: (o.mul(g, o.add_scalar(o.neg(_sq(o, y)), 1.0)),),
    "asinh": lambda o, x, y, g: (o.mul(g, o.rsqrt(o.add_scalar(_sq(o, x), 1.0))),),
    "acosh": lambda o, x, y, g: (o.mul(g, o.rsqrt(o.add_scalar(_sq(o, x), -1.0))),),
    "atanh": lambda o, x, y, g: (o.div(g, o.add_scalar(o.neg(_sq(o, x)), 1.0)),),
    "sigmoid": lambda o, x, y, g: (o.mul(g, o.mul(y, o.add_scalar(o.neg(y), 1.0))),),
    "logsigmoid": lambda o, x, y, g: (o.mul(g, o.sigmoid(o.neg(x))),),
    "logit": lambda o, x, y, g: (o.div(g, o.mul(x, o.add_scalar(o.neg(x), 1.0))),),
    "relu": lambda o, x, y, g: (o.relu_backward(g, y),),  # g where relu(x) > 0, that is where x > 0
    "silu": lambda o, x, y, g: (o.mul(g, _silu_d(o, x)),),
    "gelu": lambda o, x, y, g: (o.mul(g, o.add(o.ndtr(x), o.mul_scalar(o.mul(x, o.exp(o.mul_scalar(_sq(o, x), -0.5))),
                                                                       1.0 / math.sqrt(2.0 * math.pi)))),),
    "softplus": lambda o, x, y, g: (o.mul(g, o.sigmoid(x)),),
    "softsign": lambda o, x, y, g: (o.div(g, _sq(o, o.add_scalar(o.abs(x), 1.0))),),
    "tanhshrink": lambda o, x, y, g: (o.mul(g, _sq(o, o.tanh(x))),),
    "erf": lambda o, x, y, g: (o.mul(g, o.mul_scalar(o.exp(o.neg(_sq(o, x))), 2.0 / math.sqrt(math.pi))),),
    "erfc": lambda o, x, y, g: (o.mul(g, o.mul_scalar(o.exp(o.neg(_sq(o, x))), -2.0 / math.sqrt(math.pi))),),
    "erfinv": lambda o, x, y, g: (o.mul(g, o.mul_scalar(o.exp(_sq(o, y)), math.sqrt(math.pi) / 2.0)),),
    "ndtr": lambda o, x, y, g: (o.mul(g, o.mul_scalar(o.exp(o.mul_scalar(_sq(o, x), -0.5)),
                                                      1.0 / math.sqrt(2.0 * math.pi))),),
    "lgamma": lambda o, x, y, g: (o.mul(g, o.digamma(x)),),
    "digamma": lambda o, x, y, g: (o.mul(g, o.polygamma(x, 1.0)),),
    "deg2rad": lambda o, x, y, g: (o.mul_scalar(g, math.pi / 180.0),),
    "rad2deg": lambda o, x, y, g: (o.mul_scalar(g, 180.0 / math.pi),),
    "frac": lambda o, x, y, g: (g,),
    "sign": _ZERO, "floor": _ZERO, "ceil": _ZERO, "round": _ZERO, "trunc": _ZERO,
}

UNARY_PARAM = {
    "mul_scalar": lambda o, x, y, g, s: (o.mul_scalar(g, s),),
    "add_scalar": lambda o, x, y, g, s: (g,),
    "pow_scalar": lambda o, x, y, g, p: (o.mul(g, o.mul_scalar(o.pow_scalar(x, p - 1.0), p)),),
    "leaky_relu": lambda o, x, y, g, a: (o.mul(g, o.add_scalar(o.mul_scalar(_pos(o, x), 1.0 - a), a)),),
    "polygamma": lambda o, x, y, g, n: (o.mul(g, o.polygamma(x, n + 1.0)),),
    "round_decimals": _ZERO,
}

BINARY = {
    "add": lambda o, a, b, y, g: (g, g),
    "sub": lambda o, a, b, y, g: (g, o.neg(g)),
    "mul": lambda o, a, b, y, g: (o.mul(g, b), o.mul(g, a)),
    "div": lambda o, a, b, y, g: (o.div(g, b), o.neg(o.div(o.mul(g, y), b))),
    "pow": lambda o, a, b, y, g: (o.mul(g, o.mul(b, o.pow(a, o.add_scalar(b, -1.0)))),
                                  o.mul(g, o.mul(y, o.log(a)))),
    "maximum": lambda o, a, b, y, g: _minmax(o, a, b, g, o.greater),
    "minimum": lambda o, a, b, y, g: _minmax(o, a, b, g, o.less),
    "atan2": lambda o, a, b, y, g: (o.div(o.mul(g, b), o.add(_sq(o, a), _sq(o, b))),
                                    o.neg(o.div(o.mul(g, a), o.add(_sq(o, a), _sq(o, b))))),
    "hypot": lambda o, a, b, y, g: (o.mul(g, o.div(a, y)), o.mul(g, o.div(b, y))),
    "logaddexp": lambda o, a, b, y, g: (o.mul(g, o.exp(o.sub(a, y))), o.mul(g, o.exp(o.sub(b, y)))),
    "xlogy": lambda o, a, b, y, g: (o.mul(g, o.log(b)), o.mul(g, o.div(a, b))),
    # relu's backward is linear in the gradient a, and constant in b (almost everywhere)
    "relu_backward": lambda o, a, b, y, g: (o.relu_backward(g, b), o.mul_scalar(g, 0.0)),
}

REDUCE = {
    "sum": lambda o, x, y, g, dims, keep: (g,),
    "nansum": lambda o, x, y, g, dims, keep: (o.where(o.isnan(x), o.const(g, 0.0), g),),
    "mean": lambda o, x, y, g, dims, keep: (o.mul_scalar(g, 1.0 / max(1, o.count(x.shape, dims))),),
    "logsumexp": lambda o, x, y, g, dims, keep: (o.mul(g, o.exp(o.sub(x, y))),),
    "norm2": lambda o, x, y, g, dims, keep: (o.mul(g, o.div(x, y)),),
    "var": lambda o, x, y, g, dims, keep, c: (o.mul(g, o.mul_scalar(_centered(o, x, dims),
                                                                    2.0 / max(1.0, o.count(x.shape, dims) - c))),),
    "std": lambda o, x, y, g, dims, keep, c: (o.mul(o.div(g, y), o.mul_scalar(_centered(o, x, dims),
                                                                              1.0 / max(1.0, o.count(x.shape, dims) - c))),),
}

ALONG_AXIS = {
    "softmax": lambda o, x, y, g, d: (o.mul(y, o.sub(g, o.sum(o.mul(g, y), [d], True))),),
    "softmin": lambda o, x, y, g, d: (o.neg(o.mul(y, o.sub(g, o.sum(o.mul(g, y), [d], True)))),),
    "log_softmax": lambda o, x, y, g, d: (o.sub(g, o.mul(o.exp(y), o.sum(g, [d], True))),),
    "logcumsumexp": lambda o, x, y, g, d: (o.mul(o.exp(x), o.flip(o.cumsum(o.flip(o.mul(g, o.exp(o.neg(y))), d), d),
                                                                   d)),),
    "cumsum": lambda o, x, y, g, d: (o.flip(o.cumsum(o.flip(g, d), d), d),),
}


def _silu_d(o, x):
    s = o.sigmoid(x)
    return o.mul(s, o.add_scalar(o.mul(x, o.add_scalar(o.neg(s), 1.0)), 1.0))


def _minmax(o, a, b, g, wins):
    """PyTorch's rule for maximum/minimum: the winner takes g, a tie splits it."""
    half = o.mul_scalar(g, 0.5)
    zero = o.const(g, 0.0)
    ga = o.where(wins(a, b), g, o.where(o.equal(a, b), half, zero))
    gb = o.where(wins(b, a), g, o.where(o.equal(a, b), half, zero))
    return ga, gb


def _centered(o, x, dims):
    return o.sub(x, o.mean(x, dims, True))


# ---- shape helpers the adapters' namespaces share (each adds its framework's reshape / broadcast / sum) ----

def count(shape, dims) -> int:
    """How many elements a reduction over dims (None: all) of shape combines."""
    n = 1
    for d in (range(len(shape)) if dims is None else dims):
        n *= shape[d]
    return n


def kept_shape(shape, dims):
    """shape with the reduced dims (None: all) as 1: where a reduction's result broadcasts back."""
    nd = len(shape)
    ds = set(range(nd)) if dims is None else {d % nd for d in dims}
    return tuple(1 if i in ds else s for i, s in enumerate(shape))


def summed_dims(gshape, shape):
    """The dims of a gradient of gshape to sum (keeping them) so that it reshapes to shape: the broadcast ones."""
    lead = len(gshape) - len(shape)
    return list(range(lead)) + [lead + i for i, s in enumerate(shape) if s == 1 and gshape[lead + i] != 1]


def rule(kind: str, name: str):
    """The derivative rule of op `name` of `kind`, or None when it has none."""
    return {"unary": UNARY, "unary_param": UNARY_PARAM, "binary": BINARY, "reduce": REDUCE,
            "along_axis": ALONG_AXIS}.get(kind, {}).get(name)
