"""Category 2: broadcast binary ops, reductions and along-axis ops against NumPy.

Every op the registry lists under category "broadcast_reduce" must appear in
BINARY, REDUCE or ALONG below (test_every_broadcast_reduce_op_has_a_reference).
Dtype rules, integer edge cases and NaN rules are notes/SEMANTICS.md's.
"""
import functools
import math
import warnings

import numpy as np
import pytest

import ctensor as ct
from conftest import (ALL_DTYPES, ATOL, BI, BIF, F, I, IF, INT_DTYPES, RTOL, UINT_DTYPES, assert_same, iinfo, make_input,
                      random_array, round_to_dtype, strided_view, to_numpy)

# the index kind's ops have their own file (test_index.py)
REGISTRY = [o.name for o in ct.ops(category="broadcast_reduce") if o.kind != "index"]


def _np(a):
    return to_numpy(a)


def _stored(values, dtype):
    dtype = str(dtype)
    if dtype in F:
        return round_to_dtype(np.asarray(values, np.float64), dtype)
    if dtype == "bool":
        return np.asarray(values).astype(bool)
    with np.errstate(invalid="ignore"):
        return np.asarray(values).astype(dtype)


def _native(stored, dtype):
    """Stored values as a NumPy array of the native dtype (float64 for bfloat16)."""
    if dtype == "bfloat16":
        return np.asarray(stored, np.float64)
    return np.asarray(stored).astype(dtype)


# ---------------------------------------------------------------------------
# binary reference table
# ---------------------------------------------------------------------------

def _int_apply(fn, a, b, dtype):
    """Elementwise Python-int reference, wrapped to ``dtype`` (uint64 values
    above 2**63 too: the inputs become Python ints, never int64)."""
    bits = iinfo(dtype).bits
    signed = iinfo(dtype).min < 0
    a, b = np.broadcast_arrays(np.asarray(a).astype(object), np.asarray(b).astype(object))
    out = np.empty(a.shape, np.dtype(dtype))
    for idx in np.ndindex(a.shape):
        v = fn(int(a[idx]), int(b[idx]), bits, signed) & ((1 << bits) - 1)
        if signed and v >= 1 << (bits - 1):
            v -= 1 << bits
        out[idx] = v
    return out


def _floor_div_i(a, b, bits, signed):
    return 0 if b == 0 else a // b


def _mod_i(a, b, bits, signed):
    return 0 if b == 0 else a % b


def _pow_i(a, b, bits, signed):
    if b < 0:
        if a == 1:
            return 1
        if a == -1:
            return -1 if b % 2 else 1
        return 0
    return pow(a, b, 1 << bits)


def _fmod_i(a, b, bits, signed):  # C's truncated remainder (the sign of a); x fmod 0 = 0
    if b == 0:
        return 0
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _gcd_i(a, b, bits, signed):
    return math.gcd(a, b)


def _lcm_i(a, b, bits, signed):
    return 0 if a == 0 or b == 0 else abs(a * b) // math.gcd(a, b)


def _xlogy(a, b):  # PyTorch's: NaN b gives NaN, a == 0 gives 0
    return np.where(np.isnan(b), b, np.where(a == 0, 0.0, a * np.log(b)))


def _xlog1py(a, b):  # torch.special.xlog1py: NaN b gives NaN, a == 0 gives 0
    return np.where(np.isnan(b), b, np.where(a == 0, 0.0, a * np.log1p(b)))


def _torch_special(name):
    """torch.special's two-argument special function in float64 (NumPy has none of them), with ctensor's
    documented limits where torch's float64 gives NaN: zeta(a, +inf) = 0 (every term 0) and zeta(+inf, q) = 0, 1
    or inf for q > 1, = 1, < 1."""
    def f(a, b):
        import torch

        fn = {"igamma": torch.special.gammainc, "igammac": torch.special.gammaincc}.get(name) or getattr(
            torch.special, name)
        ta, tb = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(b, np.float64))
        r = fn(torch.from_numpy(ta.copy()), torch.from_numpy(tb.copy())).numpy()
        if name == "zeta":  # the limits where torch's float64 gives NaN: zeta(a, +inf) = 0, zeta(+inf, q > 0)
            r = np.where((tb == np.inf) & ~np.isnan(ta) & (ta > 1), 0.0, r)
            r = np.where((ta == np.inf) & (tb > 0), np.where(tb > 1, 0.0, np.where(tb == 1, 1.0, np.inf)), r)
        return r
    return f


POLYNOMIALS = ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p")


def _lshift_i(a, b, bits, signed):
    return 0 if b < 0 or b >= bits else a << b


def _rshift_i(a, b, bits, signed):
    if b < 0 or b >= bits:
        return -1 if a < 0 else 0
    return a >> b  # Python >> is arithmetic; unsigned values are non-negative


class Bin:
    def __init__(self, dtypes, np_fn=None, out="same", tol="exact", int_fn=None, zero_sign=True):
        self.dtypes = frozenset(dtypes)
        self.np_fn = np_fn
        self.out = out        # same / bool / float
        self.tol = tol
        self.int_fn = int_fn
        self.zero_sign = zero_sign


BINARY = {
    "add": Bin(BIF, np.add),
    "sub": Bin(IF, np.subtract),
    "mul": Bin(BIF, np.multiply),
    "div": Bin(BIF, np.true_divide, out="float"),
    "floor_div": Bin(IF, np.floor_divide, int_fn=_floor_div_i),
    "mod": Bin(IF, np.remainder, int_fn=_mod_i),
    "pow": Bin(IF, np.power, tol="trans", int_fn=_pow_i),
    "maximum": Bin(BIF, np.maximum, zero_sign=False),
    "minimum": Bin(BIF, np.minimum, zero_sign=False),
    "fmax": Bin(BIF, np.fmax, zero_sign=False),
    "fmin": Bin(BIF, np.fmin, zero_sign=False),
    "atan2": Bin(F, np.arctan2, tol="trans"),
    "hypot": Bin(F, np.hypot, tol="trans"),
    "copysign": Bin(F, np.copysign),
    "fmod": Bin(IF, np.fmod, tol="trans", int_fn=_fmod_i),
    "logaddexp": Bin(F, np.logaddexp, tol="trans"),
    "logaddexp2": Bin(F, np.logaddexp2, tol="trans"),
    "xlogy": Bin(F, _xlogy, tol="trans"),
    "xlog1py": Bin(F, _xlog1py, tol="trans"),
    "nextafter": Bin({"float32", "float64"}, np.nextafter),
    **{n: Bin(F, _torch_special(n), tol="trans") for n in POLYNOMIALS + ("zeta", "igamma", "igammac")},
    "gcd": Bin(I, np.gcd, int_fn=_gcd_i),
    "lcm": Bin(I, np.lcm, int_fn=_lcm_i),
    "heaviside": Bin(F, np.heaviside, tol="trans"),
    "prelu": Bin(F, lambda a, b: np.where((a >= 0) | np.isnan(a), a, b * a), tol="trans"),
    "ldexp": Bin(F, lambda a, b: a * np.exp2(b), tol="trans"),
    # torch.ops.aten.threshold_backward(g, x, 0): x <= 0 gives 0, a NaN x passes g
    "relu_backward": Bin(F, lambda g, x: np.where(x <= 0, np.zeros_like(g), g)),
    "bitwise_and": Bin(BI, np.bitwise_and),
    "bitwise_or": Bin(BI, np.bitwise_or),
    "bitwise_xor": Bin(BI, np.bitwise_xor),
    "left_shift": Bin(I, None, int_fn=_lshift_i),
    "right_shift": Bin(I, None, int_fn=_rshift_i),
    "logical_and": Bin(BIF, np.logical_and, out="bool"),
    "logical_or": Bin(BIF, np.logical_or, out="bool"),
    "logical_xor": Bin(BIF, np.logical_xor, out="bool"),
    "equal": Bin(BIF, np.equal, out="bool"),
    "not_equal": Bin(BIF, np.not_equal, out="bool"),
    "less": Bin(BIF, np.less, out="bool"),
    "less_equal": Bin(BIF, np.less_equal, out="bool"),
    "greater": Bin(BIF, np.greater, out="bool"),
    "greater_equal": Bin(BIF, np.greater_equal, out="bool"),
}

REDUCE = {
    # name: (dtypes, output rule)
    "sum": (BIF, "accum"), "mean": (BIF, "float"), "prod": (BIF, "accum"),
    "max": (BIF, "same"), "min": (BIF, "same"), "argmax": (BIF, "int64"), "argmin": (BIF, "int64"),
    "any": (BIF, "bool"), "all": (BIF, "bool"), "norm2": (IF, "float"), "logsumexp": (F, "same"),
    "var": (IF, "float"), "std": (IF, "float"),
    "nansum": (BIF, "accum"), "nanmean": (BIF, "float"), "count_nonzero": (BIF, "int64"),
    "median": (IF, "same"), "nanmedian": (IF, "same"), "quantile": (IF, "float"), "nanquantile": (IF, "float"),
    "kthvalue": (IF, "same"), "mode": (IF, "same"),
}
# The order statistics' parameter in these tests (quantile's q); kthvalue takes k = 2 (1 of a single element).
Q = 0.3

ALONG = {"softmax": (F, "same"), "log_softmax": (F, "same"), "cumsum": (BIF, "accum"),
         "cumprod": (BIF, "accum"), "logcumsumexp": (F, "same"), "softmin": (F, "same"),
         "sort": (BIF, "same"), "argsort": (BIF, "int64"), "cummax": (BIF, "same"), "cummin": (BIF, "same")}

ALIASES = {"subtract": "sub", "multiply": "mul", "divide": "div", "floor_divide": "floor_div",
           "remainder": "mod", "bitwise_left_shift": "left_shift",
           "bitwise_right_shift": "right_shift", "cumulative_sum": "cumsum",
           "cumulative_prod": "cumprod"}


def _out_dtype(rule, dtype):
    if rule == "same":
        return dtype
    if rule == "bool":
        return "bool"
    if rule == "int64":
        return "int64"
    if rule == "accum":  # NumPy's: unsigned integers accumulate in uint64
        return dtype if dtype in F else "uint64" if dtype in UINT_DTYPES else "int64"
    if rule == "float":
        return dtype if dtype in F else "float64"
    raise ValueError(rule)


def test_every_broadcast_reduce_op_has_a_reference():
    assert REGISTRY, "the registry lists no broadcast/reduce op"
    known = set(BINARY) | set(REDUCE) | set(ALONG)
    missing = [n for n in REGISTRY if n not in known]
    assert not missing, f"category-2 ops without a reference here: {missing}"
    stale = [n for n in known if n not in REGISTRY]
    assert not stale, f"references for ops the registry does not list: {stale}"
    kinds = {o.name: o.kind for o in ct.ops(category="broadcast_reduce")}
    for n in BINARY:
        assert kinds[n] == "binary", n
    for n in REDUCE:
        assert kinds[n] == "reduce", n
    for n in ALONG:
        assert kinds[n] == "along_axis", n


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases(alias, rng):
    name = ALIASES[alias]
    info = [o for o in ct.ops(category="broadcast_reduce") if o.name == name][0]
    assert alias in info.python_names
    if name in BINARY:
        a = rng.integers(1, 5, (3, 4)).astype(np.int32)
        b = rng.integers(1, 3, (4,)).astype(np.int32)
        np.testing.assert_array_equal(_np(getattr(ct, alias)(a, b)), _np(getattr(ct, name)(a, b)))
    else:
        a = rng.integers(1, 5, (3, 4)).astype(np.int32)
        np.testing.assert_array_equal(_np(getattr(ct, alias)(a, axis=1)), _np(getattr(ct, name)(a, axis=1)))


# ---------------------------------------------------------------------------
# binary ops: values over every dtype
# ---------------------------------------------------------------------------

def _binary_data(name, dtype, rng, shape_a=(3, 1, 5), shape_b=(4, 1)):
    if dtype == "bool":
        a = rng.integers(0, 2, shape_a).astype(bool)
        b = rng.integers(0, 2, shape_b).astype(bool)
        return a, b
    if dtype in I:
        info = iinfo(dtype)
        if name in ("left_shift", "right_shift"):
            a = random_array(rng, shape_a, dtype, info.min, info.max)
            b = rng.integers(-2, info.bits + 3, shape_b)
            b = np.clip(b, info.min, info.max).astype(dtype)
            return a, b
        if name == "pow":
            a = rng.integers(max(-3, info.min), 4, shape_a)
            b = rng.integers(max(-3, info.min), 9, shape_b)
            return a, b
        lo, hi = max(-50, info.min), min(50, info.max)
        return rng.integers(lo, hi + 1, shape_a), rng.integers(lo, hi + 1, shape_b)
    lo, hi = (0.1, 3.0) if name == "pow" else (-4.0, 4.0)
    a = _stored(rng.uniform(lo, hi, shape_a), dtype)
    b = _stored(rng.uniform(-4.0, 4.0, shape_b), dtype)
    if name in ("floor_div", "mod", "div"):
        b.flat[0] = 0.0
        b.flat[1] = -0.0
    if name in ("equal", "not_equal", "less_equal", "greater_equal", "maximum", "fmax"):
        a[..., 0] = b.flat[0]
    return a, b


def _binary_ref(name, dtype, a, b):
    spec = BINARY[name]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dtype in I and spec.int_fn is not None:
            return _int_apply(spec.int_fn, a, b, dtype)
        if dtype == "bfloat16":
            r = spec.np_fn(np.asarray(a, np.float64), np.asarray(b, np.float64))
            if spec.out == "bool":
                return r
            return round_to_dtype(r, "bfloat16")
        if dtype in F and spec.tol == "trans":
            r = spec.np_fn(np.asarray(a, np.float64), np.asarray(b, np.float64))
            return round_to_dtype(r, dtype)
        r = spec.np_fn(_native(a, dtype), _native(b, dtype))
        if spec.out == "float" and dtype not in F:
            assert r.dtype == np.float64
        return r


def _check_binary(name, dtype, got, want, err=""):
    spec = BINARY[name]
    g = _np(got)
    if dtype in F and spec.tol == "trans" and spec.out == "same":
        np.testing.assert_allclose(np.asarray(g, np.float64), np.asarray(want, np.float64),
                                   rtol=RTOL[dtype], atol=ATOL[dtype], equal_nan=True, err_msg=err)
    else:
        assert_same(g, want, err_msg=err, check_zero_sign=spec.zero_sign)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", list(BINARY))
def test_binary_dtype(name, dtype, rng):
    spec = BINARY[name]
    a, b = _binary_data(name, dtype, rng)
    fn = getattr(ct, name)
    if dtype not in spec.dtypes:
        with pytest.raises(NotImplementedError):
            fn(make_input(a, dtype), make_input(b, dtype))
        return
    r = fn(make_input(a, dtype), make_input(b, dtype))
    assert tuple(r.shape) == (3, 4, 5)
    want_dtype = {"same": dtype, "bool": "bool", "float": dtype if dtype in F else "float64"}[spec.out]
    assert r.dtype == want_dtype, (r.dtype, want_dtype)
    _check_binary(name, dtype, r, _binary_ref(name, dtype, a, b), err=f"{name} {dtype}")


FLOAT_SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 3.0, 0.5, -7.0])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("name", [n for n, s in BINARY.items() if "float32" in s.dtypes])
def test_binary_float_specials(name, dtype):
    spec = BINARY[name]
    v = _stored(FLOAT_SPECIALS, dtype)
    a, b = v[:, None], v[None, :]  # every pair, by broadcasting
    if dtype not in spec.dtypes:  # nextafter: float32 and float64 only
        with pytest.raises(NotImplementedError, match=name):
            getattr(ct, name)(make_input(a, dtype), make_input(b, dtype))
        return
    r = getattr(ct, name)(make_input(a, dtype), make_input(b, dtype))
    _check_binary(name, dtype, r, _binary_ref(name, dtype, a, b), err=f"{name} {dtype}")


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("name", [n for n, s in BINARY.items() if "int8" in s.dtypes])
def test_binary_integer_limits(name, dtype):
    info = iinfo(dtype)
    vals = sorted({int(info.min), int(info.min) + 1, -3, -2, -1, 0, 1, 2, 3, 7, int(info.bits),
                   int(info.max) - 1, int(info.max)})
    vals = np.array([v for v in vals if info.min <= v <= info.max], np.dtype(dtype))
    a, b = vals[:, None], vals[None, :]
    r = getattr(ct, name)(a.astype(dtype), b.astype(dtype))
    _check_binary(name, dtype, r, _binary_ref(name, dtype, a, b), err=f"{name} {dtype}")


def test_integer_edge_cases_documented():
    i8 = np.int8
    a = np.array([7, -7, -128, -128, 5, 0], i8)
    b = np.array([0, 0, -1, -1, 0, 0], i8)
    np.testing.assert_array_equal(_np(ct.floor_div(a, b)), [0, 0, -128, -128, 0, 0])
    np.testing.assert_array_equal(_np(ct.mod(a, b)), [0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(_np(ct.floor_div(np.array([7, -7, 7, -7], i8), np.array([2, 2, -2, -2], i8))),
                                  [3, -4, -4, 3])
    np.testing.assert_array_equal(_np(ct.mod(np.array([7, -7, 7, -7], i8), np.array([2, 2, -2, -2], i8))),
                                  [1, 1, -1, -1])
    d = ct.div(np.array([1, -1, 0, 7], np.int32), np.array([0, 0, 0, 2], np.int32))
    assert d.dtype == "float64"
    assert_same(_np(d), np.array([np.inf, -np.inf, np.nan, 3.5]))
    p = ct.pow(np.array([2, 1, -1, -1, 2, 0, 3], np.int32), np.array([-1, -5, -3, -4, 31, 0, 2], np.int32))
    np.testing.assert_array_equal(_np(p), [0, 1, -1, 1, -2 ** 31, 1, 9])
    ls = ct.left_shift(np.array([1, 1, 1, -1], i8), np.array([7, 8, -1, 1], i8))
    np.testing.assert_array_equal(_np(ls), [-128, 0, 0, -2])
    rs = ct.right_shift(np.array([-128, -128, 64, 64, -1], i8), np.array([7, 8, 8, -1, 1], i8))
    np.testing.assert_array_equal(_np(rs), [-1, -1, 0, 0, -1])
    ru = ct.right_shift(np.array([255, 128], np.uint8), np.array([1, 8], np.uint8))
    np.testing.assert_array_equal(_np(ru), [127, 0])
    # float mod / floor_div by zero
    fz = ct.mod(np.array([1.0, -1.0], np.float32), np.array([0.0, 0.0], np.float32))
    assert np.isnan(_np(fz)).all()
    fd = ct.floor_div(np.array([1.0, -1.0, 0.0], np.float32), np.array([0.0, 0.0, 0.0], np.float32))
    assert_same(_np(fd), np.array([np.inf, -np.inf, np.nan], np.float32))
    # mod takes the sign of b, zero results too
    m = ct.mod(np.array([4.0, -4.0, 5.5, -5.5], np.float64), np.array([-2.0, 2.0, -2.0, 2.0]))
    assert_same(_np(m), np.array([-0.0, 0.0, -0.5, 0.5]))


def test_bool_arithmetic():
    t, f = True, False
    a = np.array([f, f, t, t])
    b = np.array([f, t, f, t])
    assert_same(_np(ct.add(a, b)), a | b)
    assert_same(_np(ct.mul(a, b)), a & b)
    r = ct.div(a, b)
    assert r.dtype == "float64"
    assert_same(_np(r), np.array([np.nan, 0.0, np.inf, 1.0]))
    assert_same(_np(ct.maximum(a, b)), a | b)
    with pytest.raises(NotImplementedError):
        ct.sub(a, b)


# ---------------------------------------------------------------------------
# broadcasting
# ---------------------------------------------------------------------------

BROADCAST_CASES = [
    ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3), ()), ((0, 4), (4,)), ((0, 4), (1, 4)), ((1, 4), (0, 1)),
    ((2, 1, 3), (4, 1)), ((5,), (3, 1, 5)), ((1,), (1,)), ((), ()), ((2, 1, 1, 3), (1, 4, 2, 1)),
]


@pytest.mark.parametrize("sa,sb", BROADCAST_CASES)
@pytest.mark.parametrize("name", ["add", "sub", "less", "div", "maximum", "atan2"])
def test_broadcasting(name, sa, sb, rng):
    a = rng.uniform(-3, 3, sa).astype(np.float32)
    b = rng.uniform(-3, 3, sb).astype(np.float32)
    r = getattr(ct, name)(a, b)
    want = _binary_ref(name, "float32", a, b)
    assert tuple(r.shape) == np.broadcast_shapes(sa, sb)
    _check_binary(name, "float32", r, want)


@pytest.mark.parametrize("sa,sb", [((3,), (4,)), ((2, 3), (3, 2)), ((0, 4), (2, 4)), ((2, 4), (3,))])
def test_broadcast_mismatch(sa, sb):
    a = np.zeros(sa, np.float32)
    b = np.zeros(sb, np.float32)
    with pytest.raises(ValueError) as e:
        ct.add(a, b)
    msg = str(e.value)
    assert "ct_binary" in msg and "does not broadcast" in msg
    assert "b.shape=[" + ",".join(map(str, sb)) + "]" in msg


def test_broadcast_message_text():
    with pytest.raises(ValueError) as e:
        ct.add(np.zeros((2, 4), np.float32), np.zeros(3, np.float32))
    assert "ct_binary: b.shape=[3] does not broadcast with a.shape=[2,4]" in str(e.value)


def test_out_must_be_the_broadcast_shape():
    a = np.ones((3, 1), np.float32)
    b = np.ones((1, 4), np.float32)
    out = np.full((3, 4), 5, np.float32)
    ct.add(a, b, out=out)
    np.testing.assert_array_equal(out, 2)
    for bad in [np.full((1, 4), 5, np.float32), np.full((2, 3, 4), 5, np.float32),
                np.full((4, 3), 5, np.float32)]:
        before = bad.copy()
        with pytest.raises(ValueError) as e:
            ct.add(a, b, out=bad)
        assert "out.shape" in str(e.value)
        np.testing.assert_array_equal(bad, before)


def test_in_place_binary(rng):
    a = rng.uniform(-2, 2, (4, 5)).astype(np.float32)
    b = rng.uniform(-2, 2, (5,)).astype(np.float32)
    want = a * b
    ct.mul(a, b, out=a)
    np.testing.assert_array_equal(a, want)
    c = rng.uniform(-2, 2, (4, 5)).astype(np.float32)
    d = rng.uniform(-2, 2, (4, 5)).astype(np.float32)
    want = c - d
    ct.sub(c, d, out=d)  # out is b
    np.testing.assert_array_equal(d, want)
    # a partially overlapping out is rejected and left untouched
    buf = np.arange(12, dtype=np.float32)
    before = buf.copy()
    with pytest.raises(ValueError):
        ct.add(buf[:10], 1.0, out=buf[2:])
    np.testing.assert_array_equal(buf, before)


# ---------------------------------------------------------------------------
# Python scalars (NEP 50 weak scalars) and dtype rules
# ---------------------------------------------------------------------------

def test_python_scalars_take_the_array_dtype(rng):
    x = rng.uniform(-3, 3, (2, 3)).astype(np.float32)
    r = ct.add(x, 1.25)
    assert r.dtype == "float32"
    np.testing.assert_array_equal(_np(r), x + np.float32(1.25))
    r = ct.mul(x, 2)  # int scalar with a float array
    assert r.dtype == "float32"
    np.testing.assert_array_equal(_np(r), x * 2)
    r = ct.add(x, True)
    np.testing.assert_array_equal(_np(r), x + 1)
    h = x.astype(np.float16)
    r = ct.sub(h, 0.1)
    assert r.dtype == "float16"
    np.testing.assert_array_equal(_np(r), h - np.float16(0.1))
    i = np.arange(6, dtype=np.int8).reshape(2, 3)
    r = ct.add(i, 100)
    assert r.dtype == "int8"
    np.testing.assert_array_equal(_np(r), (i.astype(np.int64) + 100).astype(np.int8))
    r = ct.less(i, 3)
    assert r.dtype == "bool"
    np.testing.assert_array_equal(_np(r), i < 3)
    r = ct.div(i, 2)
    assert r.dtype == "float64"
    np.testing.assert_array_equal(_np(r), i / 2)
    u = np.arange(4, dtype=np.uint8)
    np.testing.assert_array_equal(_np(ct.maximum(u, 2)), np.maximum(u, 2))
    with pytest.raises(TypeError):
        ct.add(i, 1.5)  # float scalar with an integer array
    with pytest.raises((ValueError, OverflowError)):
        ct.add(i, 300)  # out of int8's range
    with pytest.raises((ValueError, OverflowError)):
        ct.add(u, -1)
    # a Python scalar as the first operand (API.md only promises the non-first ones; the module
    # takes both): it takes the array's dtype, and the operand order is kept
    r = ct.sub(1.0, x)
    assert r.dtype == "float32"
    np.testing.assert_array_equal(_np(r), np.float32(1.0) - x)
    np.testing.assert_array_equal(_np(ct.div(3, x)), np.float32(3) / x)
    np.testing.assert_array_equal(_np(ct.less(0, i)), 0 < i)
    np.testing.assert_array_equal(_np(ct.floor_div(100, i + 1)), 100 // (i + 1))
    with pytest.raises(TypeError):
        ct.sub(1.5, i)
    with pytest.raises(TypeError):
        ct.add(x, [1.0, 2.0, 3.0])  # a list is not an array
    b = np.array([True, False])
    np.testing.assert_array_equal(_np(ct.logical_and(b, True)), b)
    assert ct.add(b, True).dtype == "bool"
    with pytest.raises(TypeError):
        ct.add(b, 1)  # an int with a bool array
    with pytest.raises(TypeError):
        ct.logical_or(b, 0.0)


def test_no_promotion_between_arrays():
    with pytest.raises(TypeError) as e:
        ct.add(np.zeros(3, np.int32), np.zeros(3, np.float32))
    assert "ct_binary" in str(e.value)
    with pytest.raises(TypeError):
        ct.less(np.zeros(3, np.float64), np.zeros(3, np.float32))
    with pytest.raises(TypeError):
        ct.add(np.zeros(3, np.float32), np.zeros(3, np.float32), out=np.zeros(3, np.float64))
    with pytest.raises(TypeError):
        ct.equal(np.zeros(3, np.float32), np.zeros(3, np.float32), out=np.zeros(3, np.float32))


def test_comparison_and_div_dtypes(rng):
    for dtype in ["int8", "int16", "int32", "int64", "uint8", "float32", "float16", "bool"]:
        a = random_array(rng, (4,), dtype, 1, 9)
        b = random_array(rng, (4,), dtype, 1, 9)
        assert ct.greater(a, b).dtype == "bool"
        assert ct.logical_xor(a, b).dtype == "bool"
        d = ct.div(a, b)
        assert d.dtype == (dtype if dtype in F else "float64")
        if dtype != "bool":
            np.testing.assert_allclose(_np(d), (a.astype(np.float64) / b).astype(d.dtype.__str__()),
                                       rtol=1e-3 if dtype == "float16" else 1e-15)


# ---------------------------------------------------------------------------
# strided inputs for binary ops
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["T", "step", "rev", "revstep", "0d", "empty"])
@pytest.mark.parametrize("name", ["add", "mod", "hypot", "greater", "bitwise_xor"])
def test_binary_strided(name, kind, rng):
    dtype = "int32" if name == "bitwise_xor" else "float64"
    a = strided_view((4, 6), kind, dtype, rng, -9, 9)
    b = strided_view((4, 6), kind, dtype, rng, -9, 9)
    r = getattr(ct, name)(a, b)
    _check_binary(name, dtype, r, _binary_ref(name, dtype, a.copy(), b.copy()))
    # a strided view broadcast against a row
    row = random_array(rng, a.shape[-1:], dtype, 1, 9)
    r = getattr(ct, name)(a, row)
    _check_binary(name, dtype, r, _binary_ref(name, dtype, a.copy(), row))


# ---------------------------------------------------------------------------
# reductions
# ---------------------------------------------------------------------------

def _wrap_axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(sorted(a % ndim for a in axis))


def _arg_ref(fn, x, axis, keepdims):
    axes = _wrap_axes(axis, x.ndim)
    keep = [d for d in range(x.ndim) if d not in axes]
    moved = np.transpose(x, keep + list(axes))
    flat = moved.reshape([x.shape[d] for d in keep] + [-1])
    if flat.shape[-1] == 1 or len(axes) == 0:
        r = np.zeros(flat.shape[:-1], np.int64)
    else:
        r = fn(flat, axis=-1).astype(np.int64)
    if keepdims:
        r = r.reshape([1 if d in axes else x.shape[d] for d in range(x.ndim)])
    return r


def _logsumexp_ref(x, axis, keepdims):
    axes = _wrap_axes(axis, x.ndim)
    with np.errstate(all="ignore"):
        if len(axes) == 0:
            return x.copy()
        m = np.max(x, axis=axes, keepdims=True) if x.size else np.full(
            [1 if d in axes else x.shape[d] for d in range(x.ndim)], -np.inf)
        mf = np.where(np.isinf(m), 0.0, m)
        s = np.sum(np.exp(x - mf), axis=axes, keepdims=True)
        r = mf + np.log(s)
        r = np.where(np.isinf(m) & ~np.isnan(r), m, r)
        if np.isnan(x).any():
            r = np.where(np.isnan(x).any(axis=axes, keepdims=True), np.nan, r)
        if not keepdims:
            r = np.squeeze(r, axis=axes)
        return r


def _reduce_ref(name, x64, axis, keepdims, correction=0.0):
    """Reference on float64 / int64 / bool data."""
    ax = None if axis is None else axis
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name == "sum":
            return np.sum(x64, axis=ax, keepdims=keepdims)
        if name == "mean":
            return np.mean(x64.astype(np.float64), axis=ax, keepdims=keepdims)
        if name == "prod":
            return np.prod(x64, axis=ax, keepdims=keepdims)
        if name == "max":
            return np.max(x64, axis=ax, keepdims=keepdims)
        if name == "min":
            return np.min(x64, axis=ax, keepdims=keepdims)
        if name == "argmax":
            return _arg_ref(np.argmax, x64, axis, keepdims)
        if name == "argmin":
            return _arg_ref(np.argmin, x64, axis, keepdims)
        if name == "any":
            return np.any(x64, axis=ax, keepdims=keepdims)
        if name == "all":
            return np.all(x64, axis=ax, keepdims=keepdims)
        if name == "norm2":
            return np.sqrt(np.sum(x64.astype(np.float64) ** 2, axis=ax, keepdims=keepdims))
        if name == "logsumexp":
            return _logsumexp_ref(x64, axis, keepdims)
        if name == "var":
            return np.var(x64.astype(np.float64), axis=ax, keepdims=keepdims, ddof=correction)
        if name == "std":
            return np.std(x64.astype(np.float64), axis=ax, keepdims=keepdims, ddof=correction)
        if name == "nansum":
            return np.nansum(x64, axis=ax, keepdims=keepdims)
        if name == "nanmean":
            return np.nanmean(x64.astype(np.float64), axis=ax, keepdims=keepdims)
        if name in ("median", "nanmedian", "quantile", "nanquantile", "kthvalue", "mode"):
            return _order_statistic(name, x64, axis, keepdims)
        if name == "count_nonzero":
            # NumPy's count_nonzero takes no keepdims for axis=None and gives intp: as int64, kept dims by hand
            r = np.sum(x64 != 0, axis=ax, keepdims=keepdims, dtype=np.int64)
            return r
    raise KeyError(name)


def _reduced_count(shape, axis):
    if axis is None:
        return int(np.prod(shape, dtype=np.int64))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return int(np.prod([shape[a] for a in axes], dtype=np.int64))


def _order_statistic(name, x64, axis, keepdims):
    """NumPy's quantile family on the reduced axes moved last and flattened: median and nanmedian are
    PyTorch's lower median (method="lower" at q = 1/2), kthvalue the k-th of the sorted elements."""
    nd = x64.ndim
    axes = tuple(range(nd)) if axis is None else ((axis,) if isinstance(axis, int) else tuple(axis))
    axes = tuple(a % nd for a in axes)
    kept = [a for a in range(nd) if a not in axes]
    y = np.transpose(x64, kept + list(axes)).reshape([x64.shape[a] for a in kept] + [-1])
    if name == "median":
        r = np.quantile(y, 0.5, axis=-1, method="lower")
    elif name == "nanmedian":
        r = np.nanquantile(y, 0.5, axis=-1, method="lower")
    elif name == "quantile":
        r = np.quantile(y.astype(np.float64), Q, axis=-1)
    elif name == "nanquantile":
        r = np.nanquantile(y.astype(np.float64), Q, axis=-1)
    elif name == "mode":  # the most frequent, the smallest of the equally frequent (np.unique: sorted, NaN as one)
        r = np.empty(y.shape[:-1], y.dtype)
        for i in np.ndindex(*y.shape[:-1]):
            u, c = np.unique(y[i], return_counts=True)
            r[i] = u[np.argmax(c)]
    else:
        r = np.sort(y, axis=-1)[..., min(2, y.shape[-1]) - 1]
    r = np.asarray(r)
    if keepdims:
        r = r.reshape([1 if a in axes else x64.shape[a] for a in range(nd)])
    return r


def _reduce_tol(name, dtype, x64, axis, keepdims):
    """(rtol, atol) for comparing a reduction of ``dtype`` data with the float64 reference
    (already rounded to the output dtype): the library accumulates floats in float64
    and rounds once, so a couple of output ulps plus float64 noise."""
    out_dtype = _out_dtype(REDUCE[name][1], dtype)
    if out_dtype in ("int64", "uint64", "bool") or name in ("max", "min", "median", "nanmedian", "kthvalue", "mode"):
        return 0.0, 0.0  # exact
    eps = {"float16": 2.0 ** -11, "bfloat16": 2.0 ** -8, "float32": 2.0 ** -24,
           "float64": 2.0 ** -53}[out_dtype]
    if name in ("sum", "mean", "nansum", "nanmean"):
        # float64 accumulation error relative to the sum of magnitudes (cancellation)
        mag = np.nansum(np.abs(x64.astype(np.float64)), axis=axis, keepdims=keepdims)
        return 2 * eps, float(np.max(mag, initial=0.0)) * 1e-14
    if name == "norm2":
        return 2 * eps, 0.0
    if name == "prod":
        return 2 * eps + 1e-14 * max(1, x64.size), 0.0
    if name in ("var", "std"):
        return 4 * eps + 1e-13, 1e-13
    if name == "logsumexp":
        return 4 * eps + 1e-14, 4 * eps
    return 4 * eps, 0.0


def _check_reduce(name, dtype, r, x_stored, axis, keepdims, correction=0.0, err=""):
    out_dtype = _out_dtype(REDUCE[name][1], dtype)
    assert r.dtype == out_dtype, (name, dtype, r.dtype, out_dtype)
    # NumPy on the 64-bit type of the dtype's class: its sum/prod of unsigned is uint64, as ctensor's
    x64 = x_stored if dtype in ("bool",) else (np.asarray(x_stored, np.float64) if dtype in F
                                               else np.asarray(x_stored, np.uint64) if dtype in UINT_DTYPES
                                               else np.asarray(x_stored, np.int64))
    want = _reduce_ref(name, x64, axis, keepdims, correction)
    got = _np(r)
    assert got.shape == np.shape(want), (got.shape, np.shape(want), err)
    if out_dtype in ("int64", "uint64", "bool"):
        np.testing.assert_array_equal(got, want, err_msg=err)
        return
    want = round_to_dtype(np.asarray(want, np.float64), out_dtype)
    rtol, atol = _reduce_tol(name, dtype, x64, axis, keepdims)
    if rtol == 0 and atol == 0:
        assert_same(got, want, err_msg=err, check_zero_sign=False)
    else:
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=atol,
                                   equal_nan=True, err_msg=err)


def _reduce_data(name, dtype, rng, shape):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype in I:
        info = iinfo(dtype)
        lo, hi = (max(-3, info.min), 3) if name == "prod" else (max(-60, info.min), min(60, info.max))
        return rng.integers(lo, hi + 1, shape).astype(np.int64)
    lo, hi = (0.5, 1.5) if name == "prod" else (-3, 3)
    x = _stored(rng.uniform(lo, hi, shape), dtype)
    if name in ("argmax", "argmin", "max", "min"):
        x.flat[::5] = x.flat[0]  # ties
    if name in ("nansum", "nanmean", "count_nonzero"):
        x.flat[::4] = np.nan
        x.flat[1::7] = 0.0
    return x


def _call_reduce(name, x, **kw):
    if name in ("quantile", "nanquantile"):
        return getattr(ct, name)(x, Q, **kw)
    if name == "kthvalue":
        return ct.kthvalue(x, min(2, _reduced_count(np.shape(x), kw.get("axis"))), **kw)
    return getattr(ct, name)(x, **kw)


AXES = [None, 0, 1, -1, -2, (0, 2), (2, 0), (-1, 0, 1), ()]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce_dtype_and_axes(name, dtype, rng):
    dtypes, rule = REDUCE[name]
    x = _reduce_data(name, dtype, rng, (3, 4, 5))
    xin = make_input(x if dtype == "bool" else x, dtype)
    if dtype not in dtypes:
        with pytest.raises(NotImplementedError):
            _call_reduce(name, xin)
        return
    for axis in AXES:
        for keepdims in (False, True):
            r = _call_reduce(name, xin, axis=axis, keepdims=keepdims)
            _check_reduce(name, dtype, r, x, axis, keepdims, err=f"{name} {dtype} axis={axis} keepdims={keepdims}")


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "argmax", "any", "all", "norm2", "logsumexp",
                                  "var", "std"])
def test_reduce_out(name, rng):
    x = _reduce_data(name, "float32", rng, (3, 4, 5))
    dtype = "int64" if name == "argmax" else "bool" if name in ("any", "all") else "float32"
    out = np.full((3, 5), 99, dtype)
    r = getattr(ct, name)(x.astype(np.float32), axis=1, out=out)
    _check_reduce(name, "float32", r, x, 1, False)
    np.testing.assert_array_equal(out, _np(r))
    out2 = np.full((3, 1, 5), 99, dtype)
    getattr(ct, name)(x.astype(np.float32), axis=1, keepdims=True, out=out2)
    np.testing.assert_array_equal(out2[:, 0, :], out)
    bad = np.full((3, 4), 99 if dtype != "bool" else 0, dtype)
    with pytest.raises(ValueError) as e:
        getattr(ct, name)(x.astype(np.float32), axis=1, out=bad)
    assert "out.shape" in str(e.value)
    np.testing.assert_array_equal(bad, np.full((3, 4), 99 if dtype != "bool" else 0, dtype))
    wrong = np.full((3, 5), 99, "float64" if dtype != "float64" else "float32")
    with pytest.raises(TypeError):
        getattr(ct, name)(x.astype(np.float32), axis=1, out=wrong)
    np.testing.assert_array_equal(wrong, 99)


def test_reduce_bad_axes():
    x = np.zeros((2, 3), np.float32)
    for axis in [2, -3, (0, 0), (1, -1), (0, 1, 2)]:
        with pytest.raises(ValueError):
            ct.sum(x, axis=axis)
    with pytest.raises((TypeError, ValueError)):
        ct.sum(x, axis=1.5)
    with pytest.raises(ValueError):
        ct.sum(x, out=x)  # a reduction's out overlapping x


@pytest.mark.parametrize("name", list(REDUCE))
def test_reduce_empty(name):
    dtypes, rule = REDUCE[name]
    dtype = "float32"
    x = np.zeros((3, 0), np.float32)
    fn = getattr(ct, name)
    if name in ("quantile", "nanquantile"):
        fn = functools.partial(fn, q=Q)
    elif name == "kthvalue":
        fn = functools.partial(fn, k=1)
    if name in ("max", "min", "argmax", "argmin", "median", "nanmedian", "kthvalue", "mode"):
        with pytest.raises(ValueError) as e:
            fn(x, axis=1)
        assert "ct_reduce" in str(e.value)
        with pytest.raises(ValueError):
            fn(x)
        # reducing the non-empty axis leaves an empty result: fine
        r = fn(x, axis=0)
        assert tuple(r.shape) == (0,)
        return
    want = {"sum": 0.0, "mean": np.nan, "prod": 1.0, "any": False, "all": True, "norm2": 0.0,
            "logsumexp": -np.inf, "var": np.nan, "std": np.nan, "nansum": 0.0, "nanmean": np.nan,
            "count_nonzero": 0, "quantile": np.nan, "nanquantile": np.nan}[name]
    r = fn(x, axis=1)
    assert tuple(r.shape) == (3,)
    assert_same(_np(r), np.full(3, want, _out_dtype(rule, dtype)), check_zero_sign=False)
    r = fn(x)
    assert tuple(r.shape) == ()
    assert_same(_np(r), np.full((), want, _out_dtype(rule, dtype)), check_zero_sign=False)
    r = fn(x, axis=0, keepdims=True)
    assert tuple(r.shape) == (1, 0)


def test_var_std_correction(rng):
    x = rng.uniform(-2, 2, (4, 7))
    for correction in [0.0, 1.0, 0.5, 2.0, 7.0, 9.0, -1.0]:
        for axis in [None, 1, (0, 1)]:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                wv = np.var(x, axis=axis, ddof=correction)
                ws = np.std(x, axis=axis, ddof=correction)
            v = ct.var(x, axis=axis, correction=correction)
            s = ct.std(x, axis=axis, correction=correction)
            np.testing.assert_allclose(_np(v), wv, rtol=1e-13, err_msg=f"{correction} {axis}")
            np.testing.assert_allclose(_np(s), ws, rtol=1e-13, err_msg=f"{correction} {axis}")
    # count - correction <= 0: x/0 -> inf, 0/0 -> NaN, as NumPy
    assert np.isinf(_np(ct.var(x, axis=1, correction=7.0))).all()
    assert np.isnan(_np(ct.var(np.ones((2, 3)), axis=1, correction=3.0))).all()
    xi = rng.integers(-5, 5, (3, 6)).astype(np.int16)
    r = ct.var(xi, axis=0, correction=1)
    assert r.dtype == "float64"
    np.testing.assert_allclose(_np(r), np.var(xi.astype(np.float64), axis=0, ddof=1), rtol=1e-13)
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            ct.var(x, correction=bad)


def test_argmax_ties_and_nan():
    x = np.array([[1.0, 3.0, 3.0, 2.0], [np.nan, 5.0, np.nan, 9.0], [0.0, -0.0, 0.0, 0.0]], np.float32)
    np.testing.assert_array_equal(_np(ct.argmax(x, axis=1)), [1, 0, 0])
    np.testing.assert_array_equal(_np(ct.argmin(x, axis=1)), [0, 0, 0])
    assert int(_np(ct.argmax(x))) == 4  # the first NaN wins over everything
    y = np.array([[2, 7, 7], [7, 1, 7]], np.int32)
    assert int(_np(ct.argmax(y))) == 1
    np.testing.assert_array_equal(_np(ct.argmax(y, axis=0)), [1, 0, 0])
    # tuple axes: row-major index within the reduced axes, in x's axis order
    z = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    z[1, 2, 0] = 100
    r = _np(ct.argmax(z, axis=(0, 2)))
    np.testing.assert_array_equal(r, _arg_ref(np.argmax, z, (0, 2), False))
    np.testing.assert_array_equal(_np(ct.argmax(z, axis=(2, 0))), r)
    assert r[2] == 1 * 4 + 0
    np.testing.assert_array_equal(_np(ct.argmax(z, axis=())), np.zeros((2, 3, 4), np.int64))
    b = np.array([False, True, True])
    assert int(_np(ct.argmax(b))) == 1
    assert int(_np(ct.argmin(b))) == 0


def test_max_min_nan_and_logsumexp_specials():
    x = np.array([[1.0, np.nan, 3.0], [-np.inf, -np.inf, -np.inf], [np.inf, 1.0, 2.0]])
    assert_same(_np(ct.max(x, axis=1)), np.array([np.nan, -np.inf, np.inf]))
    assert_same(_np(ct.min(x, axis=1)), np.array([np.nan, -np.inf, 1.0]))
    assert_same(_np(ct.logsumexp(x, axis=1)), np.array([np.nan, -np.inf, np.inf]))
    big = np.array([1000.0, 1000.0], np.float32)
    np.testing.assert_allclose(_np(ct.logsumexp(big)), 1000.0 + np.log(2.0), rtol=1e-6)
    assert _np(ct.any(np.array([0.0, np.nan]))) == True  # noqa: E712 (NaN is true)
    assert _np(ct.all(np.array([-0.0, 1.0]))) == False  # noqa: E712


def test_integer_sums_wrap_and_widen():
    x = np.full(10, 100, np.int8)
    r = ct.sum(x)
    assert r.dtype == "int64" and int(_np(r)) == 1000
    p = ct.prod(np.full(70, 2, np.int32))
    assert p.dtype == "int64" and int(_np(p)) == 0  # 2**70 wraps in int64
    big = np.array([2 ** 62, 2 ** 62, 2 ** 62], np.int64)
    assert int(_np(ct.sum(big))) == np.sum(big)  # wraps like NumPy
    # unsigned inputs widen to uint64, as NumPy's: the sum and product of uint8 stay exact, uint64 wraps
    u = np.full(10, 255, np.uint8)
    r = ct.sum(u)
    assert r.dtype == "uint64" == np.sum(u).dtype and int(_np(r)) == 2550
    u64 = np.array([2 ** 64 - 1, 2 ** 63, 5], np.uint64)
    assert int(_np(ct.sum(u64))) == int(np.sum(u64)) == (2 ** 64 - 1 + 2 ** 63 + 5) % 2 ** 64
    assert int(_np(ct.prod(u64))) == int(np.prod(u64))
    np.testing.assert_array_equal(_np(ct.cumsum(u64, axis=0)), np.cumsum(u64))
    assert _np(ct.cumprod(np.array([300, 300], np.uint16), axis=0)).dtype == np.uint64
    b = np.array([[True, False, True], [True, True, True]])
    np.testing.assert_array_equal(_np(ct.sum(b, axis=1)), [2, 3])
    m = ct.mean(np.array([1, 2], np.int32))
    assert m.dtype == "float64" and float(_np(m)) == 1.5
    n = ct.norm2(np.array([3, 4, 2 ** 31 - 1, -(2 ** 31)], np.int32))
    np.testing.assert_allclose(float(_np(n)), math.sqrt(25 + (2 ** 31 - 1) ** 2 + 2 ** 62), rtol=1e-15)


def test_float32_sum_is_accurate(rng):
    x = rng.uniform(0, 1, 100_000).astype(np.float32)
    exact = math.fsum(x.astype(np.float64).tolist())
    got = float(_np(ct.sum(x)))
    assert abs(got - exact) <= np.spacing(np.float32(exact))  # within 1 ulp
    # column reductions and row reductions agree with float64 sums
    m = rng.uniform(-1, 1, (300, 70)).astype(np.float32)
    np.testing.assert_allclose(_np(ct.sum(m, axis=0)), m.astype(np.float64).sum(0), rtol=2 ** -23, atol=1e-6)
    np.testing.assert_allclose(_np(ct.sum(m.T, axis=1)), m.astype(np.float64).sum(0), rtol=2 ** -23, atol=1e-6)


def test_reduction_determinism_over_threads(rng):
    x = rng.uniform(-1, 1, (1 << 18,)).astype(np.float32)
    old = ct.get_num_threads()
    try:
        ct.set_num_threads(1)
        a = _np(ct.sum(x))
        ct.set_num_threads(2)
        b = _np(ct.sum(x))
    finally:
        ct.set_num_threads(old)
    assert a.tobytes() == b.tobytes()


@pytest.mark.parametrize("kind", ["T", "step", "rev", "revstep"])
@pytest.mark.parametrize("name", ["sum", "argmax", "var", "max", "logsumexp"])
def test_reduce_strided(name, kind, rng):
    x = strided_view((5, 6), kind, "float64", rng)
    for axis in [None, 0, 1, (0, 1)]:
        r = getattr(ct, name)(x, axis=axis)
        _check_reduce(name, "float64", r, x.copy(), axis, False, err=f"{name} {kind} {axis}")


def test_reduce_0d():
    x = np.array(2.5, np.float32)
    assert float(_np(ct.sum(x))) == 2.5
    assert float(_np(ct.sum(x, axis=()))) == 2.5
    assert int(_np(ct.argmax(x))) == 0
    assert tuple(ct.sum(x, keepdims=True).shape) == ()
    # axis 0 or -1 reduce the one element, as NumPy's reductions do
    # (np.sum(np.float32(3), axis=0) is 3.0); the result stays 0-d
    for axis in (0, -1, (0,), (-1,)):
        for keepdims in (False, True):
            r = ct.sum(x, axis=axis, keepdims=keepdims)
            assert tuple(r.shape) == ()
            assert float(_np(r)) == 2.5
    assert float(_np(ct.sum(np.float32(3), axis=0))) == float(np.sum(np.float32(3), axis=0))
    assert int(_np(ct.argmax(x, axis=0))) == int(np.argmax(x, axis=0)) == 0
    assert float(_np(ct.max(x, axis=-1))) == float(np.max(x, axis=-1))
    assert float(_np(ct.mean(x, axis=0))) == 2.5
    assert float(_np(ct.var(x, axis=0))) == 0.0
    assert bool(_np(ct.any(x, axis=0)))
    out = np.zeros((), np.float32)
    assert ct.prod(x, axis=-1, out=out) is out
    assert float(out) == 2.5
    for axis in (1, -2, (0, -1), (0, 0)):
        with pytest.raises(ValueError):
            ct.sum(x, axis=axis)


# ---------------------------------------------------------------------------
# along an axis
# ---------------------------------------------------------------------------

def _softmax_ref(x, axis):
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
        e = np.exp(x - m)
        return e / np.sum(e, axis=axis, keepdims=True)


def _log_softmax_ref(x, axis):
    with np.errstate(all="ignore"):
        m = np.max(x, axis=axis, keepdims=True)
        return x - m - np.log(np.sum(np.exp(x - m), axis=axis, keepdims=True))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", list(ALONG))
def test_along_axis_dtypes(name, dtype, rng):
    dtypes, rule = ALONG[name]
    lo, hi = (0.5, 1.5) if name == "cumprod" else (-3, 3)
    if dtype == "bool":
        x = rng.integers(0, 2, (3, 4, 5)).astype(bool)
    elif dtype in I:
        x = rng.integers(-3 if name == "cumprod" else -50, 4 if name == "cumprod" else 50, (3, 4, 5))
        x = np.clip(x, iinfo(dtype).min, iinfo(dtype).max).astype(np.int64)
    else:
        x = _stored(rng.uniform(lo, hi, (3, 4, 5)), dtype)
    xin = make_input(x, dtype)
    fn = getattr(ct, name)
    if dtype not in dtypes:
        with pytest.raises(NotImplementedError):
            fn(xin, axis=1)
        return
    out_dtype = _out_dtype(rule, dtype)
    for axis in [0, 1, 2, -1, -3]:
        r = fn(xin, axis=axis)
        assert r.dtype == out_dtype
        assert tuple(r.shape) == (3, 4, 5)
        got = _np(r)
        if name in ("sort", "argsort"):
            xs = np.asarray(x, np.float64) if dtype in F else np.asarray(x)
            if name == "sort":
                assert_same(np.asarray(got, np.float64) if dtype in F else got,
                            np.sort(xs, axis=axis), check_zero_sign=False)
            else:
                np.testing.assert_array_equal(got, np.argsort(xs, axis=axis, kind="stable"))
        elif name in ("cummax", "cummin"):
            f = np.maximum if name == "cummax" else np.minimum  # NaN propagates, as in ctensor
            assert_same(got, f.accumulate(x, axis=axis), check_zero_sign=False)
        elif name == "logcumsumexp":
            want = round_to_dtype(np.logaddexp.accumulate(np.asarray(x, np.float64), axis=axis), dtype)
            rtol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 4e-7, "float64": 1e-14}[dtype]
            np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol, atol=rtol)
        elif name in ("cumsum", "cumprod"):
            f = np.cumsum if name == "cumsum" else np.cumprod
            if dtype in F:
                want = round_to_dtype(f(np.asarray(x, np.float64), axis=axis), dtype)
                rtol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 2e-7, "float64": 1e-15}[dtype]
                np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=rtol,
                                           atol=rtol * 60 if name == "cumsum" else 0)
            else:
                np.testing.assert_array_equal(got, f(np.asarray(x, np.int64), axis=axis))
        else:
            ref = _log_softmax_ref if name == "log_softmax" else _softmax_ref
            sign = -1.0 if name == "softmin" else 1.0
            want = round_to_dtype(ref(sign * np.asarray(x, np.float64), axis), dtype)
            np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=RTOL[dtype] * 4,
                                       atol=ATOL[dtype] * 4 if dtype != "bfloat16" else 4e-3)


def test_along_axis_default_axes_and_errors(rng):
    x = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    np.testing.assert_allclose(_np(ct.softmax(x)), _softmax_ref(x.astype(np.float64), -1), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(_np(ct.log_softmax(x)), _log_softmax_ref(x.astype(np.float64), -1),
                               rtol=1e-5, atol=1e-6)
    v = rng.integers(-5, 5, 7).astype(np.int32)
    r = ct.cumsum(v)
    assert r.dtype == "int64"
    np.testing.assert_array_equal(_np(r), np.cumsum(v))
    np.testing.assert_array_equal(_np(ct.cumprod(v[:4])), np.cumprod(v[:4]))
    with pytest.raises(ValueError):
        ct.cumsum(x)  # axis=None only for ndim <= 1
    with pytest.raises(ValueError):
        ct.cumsum(x, axis=2)
    with pytest.raises(ValueError):
        ct.softmax(x, axis=-3)
    s = np.array(1.5, np.float32)
    assert float(_np(ct.cumsum(s))) == 1.5
    assert float(_np(ct.softmax(s, axis=0))) == 1.0
    assert float(_np(ct.softmax(s, axis=-1))) == 1.0
    with pytest.raises(ValueError):
        ct.softmax(s, axis=1)


def test_softmax_specials():
    x = np.array([[0.0, -np.inf, 1.0], [-np.inf, -np.inf, -np.inf], [1.0, np.nan, 2.0], [1e4, 1e4, -1e4]],
                 np.float32)
    r = _np(ct.softmax(x, axis=1))
    assert r[0, 1] == 0.0
    np.testing.assert_allclose(r[0], _softmax_ref(x[0:1].astype(np.float64), 1)[0], rtol=1e-6)
    assert np.isnan(r[1]).all()  # a line of all -inf
    assert np.isnan(r[2]).all()  # NaN propagates to the line
    np.testing.assert_allclose(r[3], [0.5, 0.5, 0.0], rtol=1e-6)
    lr = _np(ct.log_softmax(x, axis=1))
    assert lr[0, 1] == -np.inf
    assert np.isnan(lr[2]).all()


def test_along_axis_out_in_place_and_strided(rng):
    x = rng.uniform(-2, 2, (4, 6))
    want = np.cumsum(x, axis=0)
    y = x.copy()
    ct.cumsum(y, axis=0, out=y)
    np.testing.assert_allclose(y, want, rtol=1e-15)
    z = x.copy()
    ct.softmax(z, axis=1, out=z)
    np.testing.assert_allclose(z, _softmax_ref(x, 1), rtol=1e-14)
    for kind in ["T", "step", "rev", "revstep"]:
        v = strided_view((4, 6), kind, "float64", rng)
        for axis in (0, 1):
            np.testing.assert_allclose(_np(ct.cumsum(v, axis=axis)), np.cumsum(v, axis=axis), rtol=1e-14)
            np.testing.assert_allclose(_np(ct.log_softmax(v, axis=axis)), _log_softmax_ref(v, axis), rtol=1e-13,
                                       atol=1e-14)
    out = np.zeros((4, 6), np.int64)
    xi = rng.integers(-3, 3, (4, 6)).astype(np.int8)
    ct.cumprod(xi, axis=1, out=out)
    np.testing.assert_array_equal(out, np.cumprod(xi.astype(np.int64), axis=1))
    with pytest.raises(TypeError):
        ct.cumprod(xi, axis=1, out=np.zeros((4, 6), np.int8))
    buf = np.arange(10, dtype=np.float64)
    with pytest.raises(ValueError):
        ct.cumsum(buf[:8], out=buf[2:])


# ---------------------------------------------------------------------------
# sizes that take the blocked / multi-threaded paths
# ---------------------------------------------------------------------------

def test_large_reductions_first_occurrence_across_blocks(rng):
    n = 200_003
    x = rng.uniform(-1, 1, n).astype(np.float32)
    x[10] = 5.0
    x[150_000] = 5.0  # a tie in a later block: the first one wins
    assert int(_np(ct.argmax(x))) == 10
    assert float(_np(ct.max(x))) == 5.0
    x[170_001] = np.nan
    x[190_000] = np.nan
    assert int(_np(ct.argmax(x))) == 170_001  # the first NaN, far from the start
    assert int(_np(ct.argmin(x))) == 170_001
    assert np.isnan(_np(ct.max(x))) and np.isnan(_np(ct.min(x)))
    m = rng.uniform(-1, 1, (3000, 67)).astype(np.float32)
    m[2500, 5] = 9.0
    m[2999, 5] = 9.0
    np.testing.assert_array_equal(_np(ct.argmax(m, axis=0)), np.argmax(m, axis=0))
    np.testing.assert_array_equal(_np(ct.argmin(m.T, axis=1)), np.argmin(m, axis=0))
    np.testing.assert_array_equal(_np(ct.max(m, axis=0)), np.max(m, axis=0))


def test_large_float_reductions(rng):
    m = rng.uniform(-1, 1, (2000, 130)).astype(np.float32)
    m64 = m.astype(np.float64)
    for axis in (None, 0, 1):
        for name, ref in [("sum", np.sum), ("mean", np.mean)]:
            want = round_to_dtype(ref(m64, axis=axis), "float32")
            mag = np.sum(np.abs(m64), axis=axis) / (1 if name == "sum" else (m.size if axis is None else m.shape[axis]))
            np.testing.assert_allclose(_np(getattr(ct, name)(m, axis=axis)), want, rtol=2.0 ** -23,
                                       atol=float(np.max(mag)) * 1e-14, err_msg=f"{name} {axis}")
        np.testing.assert_allclose(_np(ct.var(m, axis=axis, correction=1)),
                                   round_to_dtype(np.var(m64, axis=axis, ddof=1), "float32"), rtol=2.0 ** -22)
        np.testing.assert_allclose(_np(ct.norm2(m, axis=axis)),
                                   round_to_dtype(np.sqrt(np.sum(m64 ** 2, axis=axis)), "float32"), rtol=2.0 ** -23)
        np.testing.assert_allclose(_np(ct.logsumexp(m, axis=axis)),
                                   _logsumexp_ref(m64, axis, False), rtol=4e-7, atol=4e-7)
    big_i = rng.integers(-1000, 1000, (1000, 257)).astype(np.int16)
    np.testing.assert_array_equal(_np(ct.sum(big_i, axis=0)), big_i.astype(np.int64).sum(0))
    np.testing.assert_array_equal(_np(ct.sum(big_i)), big_i.astype(np.int64).sum())
    b = rng.integers(0, 2, 300_001).astype(bool)
    assert bool(_np(ct.any(b))) and not bool(_np(ct.all(b)))
    assert int(_np(ct.sum(b))) == int(b.sum())
    z = np.zeros(300_001, bool)
    z[-1] = True
    assert bool(_np(ct.any(z)))
    assert not bool(_np(ct.any(z[:-1])))


def test_large_binary_and_along_axis(rng):
    a = rng.uniform(-3, 3, (512, 300)).astype(np.float32)
    b = rng.uniform(-3, 3, (300,)).astype(np.float32)
    np.testing.assert_array_equal(_np(ct.add(a, b)), a + b)
    np.testing.assert_array_equal(_np(ct.mul(a.T, b[:, None])), a.T * b[:, None])
    np.testing.assert_array_equal(_np(ct.mod(a[::-1, ::3], b[::3])), np.remainder(a[::-1, ::3], b[::3]))
    np.testing.assert_array_equal(_np(ct.greater(a, b)), a > b)
    c = rng.uniform(-1, 1, (40, 5000)).astype(np.float64)
    np.testing.assert_allclose(_np(ct.cumsum(c, axis=1)), np.cumsum(c, axis=1), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_np(ct.softmax(c, axis=1)), _softmax_ref(c, 1), rtol=1e-13, atol=1e-17)
    np.testing.assert_allclose(_np(ct.log_softmax(c.T, axis=0)), _log_softmax_ref(c.T, 0), rtol=1e-13,
                               atol=1e-13)


def test_order_statistics_with_nan_ties_and_signatures(rng):
    x = np.round(rng.uniform(-3, 3, (6, 301)) * 2) / 2  # ties
    x[1, ::7] = np.nan
    x[2, :] = np.nan
    x[3, 5] = np.inf
    x[4, 9] = -np.inf
    for dt in (np.float64, np.float32, np.float16):
        a = x.astype(dt)
        # torch's median: the lower median, NaN if any; nanmedian skips NaN (NaN when nothing else)
        # (-0 and 0 share a sort key: either may be the answer, in NumPy as in ctensor)
        assert_same(_np(ct.median(a, axis=1)), np.quantile(a, 0.5, axis=1, method="lower").astype(dt),
                    check_zero_sign=False)
        assert_same(_np(ct.nanmedian(a, axis=1)), np.nanquantile(a, 0.5, axis=1, method="lower").astype(dt),
                    check_zero_sign=False)
        for q in (0.0, 0.1, 0.5, 0.75, 1.0):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                # where q * (n - 1) is a whole position ctensor returns that element; NumPy (and torch) still
                # compute a + 0 * (b - a), NaN next to an infinity (SEMANTICS.md): their "lower" is the element
                method = "lower" if float(q * 300).is_integer() else "linear"
                wq = np.quantile(a.astype(np.float64), q, axis=1, method=method)
                wn = np.nanquantile(a.astype(np.float64), q, axis=1, method="lower" if q in (0, 1) else "linear")
            tol = {np.float64: 1e-15, np.float32: 1e-6, np.float16: 1e-3}[dt]
            np.testing.assert_allclose(np.asarray(_np(ct.quantile(a, q, axis=1)), np.float64), wq, rtol=tol, atol=tol)
            np.testing.assert_allclose(np.asarray(_np(ct.nanquantile(a, q, 1)), np.float64), wn, rtol=tol, atol=tol)
        for k in (1, 150, 301):
            assert_same(_np(ct.kthvalue(a, k, axis=1)), np.sort(a, axis=1)[:, k - 1], check_zero_sign=False)
    # NumPy's median averages the middle two of an even count: quantile(x, 0.5) is that one
    e = np.array([4.0, 1.0, 3.0, 2.0])
    assert float(_np(ct.median(e))) == 2.0 and float(_np(ct.quantile(e, 0.5))) == float(np.median(e))
    # integers: median stays an integer (an element), quantile is float64
    i = np.array([[7, -2, 5, 5], [1, 2, 3, 4]], np.int16)
    r = ct.median(i, axis=1)
    assert r.dtype == "int16" and _np(r).tolist() == [5, 2]
    r = ct.quantile(i, 0.5, axis=1, keepdims=True)
    assert r.dtype == "float64" and _np(r).tolist() == [[5.0], [2.5]]
    # parameters: q in [0, 1], k an integer in [1, count]; the output untouched on a refusal
    out = np.full(2, 9, np.int16)
    for bad in (0, 5, 1.5):
        with pytest.raises(ValueError, match="kthvalue: k="):
            ct.kthvalue(i, bad, axis=1, out=out)
    np.testing.assert_array_equal(out, 9)
    with pytest.raises(ValueError, match=r"q=1\.5 is outside \[0, 1\]"):
        ct.quantile(i, 1.5)
    with pytest.raises(TypeError):
        ct.quantile(i)  # q is required, as NumPy's


def test_cummax_cummin_nan_and_in_place(rng):
    x = rng.uniform(-5, 5, (4, 50))
    x[1, 10] = np.nan
    for name, f in (("cummax", np.maximum), ("cummin", np.minimum)):
        got = _np(getattr(ct, name)(x, axis=1))
        assert_same(got, f.accumulate(x, axis=1))
        assert np.isnan(got[1, 10:]).all() and not np.isnan(got[1, :10]).any()
        y = x.copy()
        getattr(ct, name)(y, axis=0, out=y)  # in place
        assert_same(y, f.accumulate(x, axis=0))
    u = np.array([3, 2**64 - 1, 5], np.uint64)  # above int64's range: compared as unsigned
    np.testing.assert_array_equal(_np(ct.cummax(u, 0)), [3, 2**64 - 1, 2**64 - 1])
    b = np.array([False, True, False])
    np.testing.assert_array_equal(_np(ct.cummax(b, 0)), [False, True, True])


def test_mode_as_torch():
    # torch.mode: the smallest of the most frequent; NaN equal to NaN; -0 equal to 0
    assert float(_np(ct.mode(np.array([3.0, 1.0, 1.0, 3.0, 2.0])))) == 1.0
    assert np.isnan(_np(ct.mode(np.array([np.nan, np.nan, 1.0]))))
    assert float(_np(ct.mode(np.array([-0.0, 0.0, 5.0])))) == 0.0
    x = np.array([[2, 2, 7, 7, 7, 1], [5, 4, 4, 5, 9, 9]], np.int64)
    np.testing.assert_array_equal(_np(ct.mode(x, axis=1)), [7, 4])
    big = np.repeat(np.arange(100, dtype=np.float32), np.arange(100) % 7 + 1)  # 6 and others at 7 each
    np.random.default_rng(0).shuffle(big)
    assert float(_np(ct.mode(big))) == 6.0
