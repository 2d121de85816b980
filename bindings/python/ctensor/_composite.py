"""Functions that are compositions of registry ops, with NumPy's and PyTorch's meaning: fill, float_power,
isclose, nan_to_num, rrelu (evaluation mode) and frexp.

Each is a few calls of ops every device has (copy, cast, the elementwise and binary maps), so it runs on every
device and dtype they run on; nothing here computes an element itself. A C or C++ caller composes the same calls.
"""

from __future__ import annotations

from . import _ctensor
from ._movement import _fill, _new

_FLOATS = ("float16", "bfloat16", "float32", "float64", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
           "float8_e5m2fnuz")


def _is_float(t) -> bool:
    return str(t.dtype) in _FLOATS


def _scalar_like(t, value):
    """A 0-d tensor of t's dtype on t's device holding value (converted as a cast would)."""
    s = _ctensor.empty((), t.dtype, t.device)
    _fill(s, value)
    return s


def fill(x, value, *, out=None):
    """A tensor of x's shape, dtype and device with every element `value` (torch.fill, numpy.full_like)."""
    t = _ctensor.asarray(x)
    o = _new(t.shape, t, out)
    _fill(o, value)
    return o


def float_power(a, b, *, out=None):
    """a ** b computed in float64 (torch.float_power, numpy.float_power): both inputs are cast to float64 first,
    so the result is float64 whatever their dtypes. A Python number stays a number."""
    def f64(v):
        if isinstance(v, (bool, int, float)):
            return float(v)
        t = _ctensor.asarray(v)
        return t if str(t.dtype) == "float64" else _ctensor.astype(t, "float64")

    return _ctensor.pow(f64(a), f64(b), out=out)


def isclose(a, b, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False):
    """|a - b| <= atol + |rtol * b| elementwise, as bool (torch.isclose and numpy.isclose: asymmetric in b); equal
    values (infinities of one sign included) are close, NaN is close to NaN only with equal_nan. Integer and bool
    inputs are compared as float32 (PyTorch's default float) where a tolerance applies."""
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol={rtol} and atol={atol} must be >= 0")
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    close = _ctensor.equal(ta, tb)
    if equal_nan:
        close = _ctensor.logical_or(close, _ctensor.logical_and(_ctensor.isnan(ta), _ctensor.isnan(tb)))
    if rtol == 0 and atol == 0:
        return close
    if not _is_float(ta):
        ta = _ctensor.astype(ta, "float32")
    if not _is_float(tb):
        tb = _ctensor.astype(tb, "float32")
    err = _ctensor.abs(_ctensor.sub(ta, tb))
    allowed = _ctensor.add(_ctensor.abs(_ctensor.mul(tb, rtol)), atol)
    within = _ctensor.logical_and(_ctensor.isfinite(err), _ctensor.less_equal(err, allowed))
    return _ctensor.logical_or(close, within)


def nan_to_num(x, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None, *, out=None):
    """NaN replaced by `nan`, +inf by `posinf`, -inf by `neginf` (default: the dtype's largest and smallest finite
    values), as numpy.nan_to_num and torch.nan_to_num; integer and bool inputs are copied."""
    t = _ctensor.asarray(x)
    if not _is_float(t):
        o = _new(t.shape, t, out)
        _ctensor.copy(t, out=o)
        return o
    import numpy as np

    name = str(t.dtype)
    try:
        info = np.finfo(name)
    except (TypeError, ValueError):  # bfloat16, float8: ml_dtypes' finfo
        import ml_dtypes

        info = ml_dtypes.finfo(getattr(ml_dtypes, name))
    hi = float(info.max) if posinf is None else posinf
    lo = float(info.min) if neginf is None else neginf
    r = _ctensor.where(_ctensor.isposinf(t), _scalar_like(t, hi), t)
    r = _ctensor.where(_ctensor.isneginf(t), _scalar_like(t, lo), r)
    return _ctensor.where(_ctensor.isnan(t), _scalar_like(t, nan), r, out=out)


def rrelu(x, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False, inplace: bool = False):
    """torch.nn.functional.rrelu in evaluation mode: leaky_relu with the slope (lower + upper) / 2. Training mode
    draws a random slope per element; ctensor has no random number generator, so training=True is refused."""
    if lower > upper:
        raise ValueError(f"rrelu: lower={lower} must be <= upper={upper}")
    if training:
        raise NotImplementedError("rrelu: training=True draws random slopes and ctensor has no random number "
                                  "generator; call it with training=False (the slope (lower + upper) / 2)")
    t = _ctensor.asarray(x)
    return _ctensor.leaky_relu(t, (lower + upper) / 2, out=t if inplace else None)


def frexp(x):
    """(mantissa, exponent) with x = mantissa * 2**exponent and |mantissa| in [0.5, 1), as torch.frexp and
    numpy.frexp: the mantissa in x's dtype, the exponent int32; 0, +-inf and NaN give themselves and exponent 0.
    The exponent is floor(log2|x|) + 1 corrected by one step either way from the exact mantissa ldexp gives (log2
    may round up to an integer just below a power of two), computed in float32 (float64 for float64) so every
    exponent, subnormals' included, is exact."""
    t = _ctensor.asarray(x)
    if not _is_float(t):
        raise TypeError(f"frexp: x.dtype={t.dtype} is not a float dtype (torch.frexp takes floating point only)")
    dt = str(t.dtype)
    w = t if dt == "float64" else _ctensor.astype(t, "float32")  # exact: every narrower float fits
    a = _ctensor.abs(w)
    fin = _ctensor.logical_and(_ctensor.isfinite(w), _ctensor.not_equal(w, _scalar_like(w, 0)))
    one = _scalar_like(w, 1)
    e = _ctensor.add(_ctensor.floor(_ctensor.log2(_ctensor.where(fin, a, one))), one)
    am = _ctensor.abs(_ctensor.ldexp(w, _ctensor.negative(e)))
    e = _ctensor.add(e, _ctensor.astype(_ctensor.greater_equal(am, one), w.dtype))
    e = _ctensor.subtract(e, _ctensor.astype(_ctensor.less(am, _scalar_like(w, 0.5)), w.dtype))
    e = _ctensor.where(fin, e, _scalar_like(w, 0))
    m = _ctensor.where(fin, _ctensor.ldexp(w, _ctensor.negative(e)), w)
    return (m if dt == str(w.dtype) else _ctensor.astype(m, dt)), _ctensor.astype(e, "int32")
