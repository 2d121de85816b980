"""Category 1 (elementwise) ops against NumPy / float64 references.

Every op the registry lists under category "elementwise" has an entry in REFS.
The ops written out below have a NumPy reference, and each entry encodes
notes/SEMANTICS.md: the dtypes the op is defined for (every other dtype must
raise NotImplementedError), its reference, its input domain and its
tolerance class. Any other op of the registry (one added to ctensor.h after
this file was written) gets an entry made from its row: the row's dtype
rule, the "trans" class, the generic domain, default parameters, and as its
reference the C++ reference library (tests/reference, the one the Catch2
suites and `ctensor check` use) through ctypes. Tolerance classes:
  exact  -- bit-exact (NaN matches NaN, the sign of zero counts)
  approx -- |got - ref| <= rtol * max(|ref|, 1) (a few roundings of O(1) values)
  trans  -- |got - ref| <= rtol * |ref| + atol (libm-like functions)
with rtol/atol per dtype: float16 1e-3/1e-5, bfloat16 1e-2/1e-5, float32
1e-5/1e-6, float64 1e-12/1e-13 (the C suite's tolerances). References are
computed in float64 (int64 for integers, wrapped to the dtype) on the values
actually stored in the input dtype and rounded once to the output dtype.
"""
import math

import numpy as np
import pytest

import ctensor as ct
from conftest import (ALL_DTYPES, ATOL, BI, BIF, F, FLOAT8_DTYPES, FLOAT_DTYPES, I, IF, INT_DTYPES, RTOL, UINT_DTYPES, DLPackProducer,
                      assert_same, bf16_bits, bf16_view, c_reference, c_reference_lib, iinfo, make_input,
                      random_array, round_to_dtype, strided_view, to_numpy)

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])
_K = math.sqrt(2.0 / math.pi)


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))


class Ref:
    """Reference entry of one elementwise op."""

    def __init__(self, kind, dtypes, f=None, i=None, b=None, tol="exact", lo=-5.0, hi=5.0,
                 out="same", params=None, no_inf=False, nin=1, op_id=None):
        self.kind = kind          # unary / unary_param / ternary / cast
        self.dtypes = frozenset(dtypes)
        self.f = f                # float64 reference (inputs..., *params)
        self.i = i                # int64 reference (inputs..., *params); wrapped afterwards
        self.b = b                # bool reference
        self.tol = tol
        self.lo, self.hi = lo, hi
        self.out = out            # "same" or "bool"
        self.params = params      # callable(dtype) -> list of param tuples
        self.no_inf = no_inf
        self.nin = nin
        self.op_id = op_id        # set: the reference is the C++ library's for this registry id


def _p(float_sets, int_sets=None, uint_sets=None):
    def get(dtype):
        if dtype in UINT_DTYPES and uint_sets is not None:
            return uint_sets
        if dtype in I and int_sets is not None:
            return int_sets
        return float_sets
    return get


def _clamp_f(x, lo, hi):
    r = np.where(x < lo, lo, x)
    return np.where(r > hi, hi, r)


def _clamp_tensor_f(x, lo, hi):
    """PyTorch's std::min(std::max(x, lo), hi) (ties keep x, so the sign of a zero x stays), NaN from any operand."""
    r = _clamp_f(x, lo, hi)
    return np.where(np.isnan(lo), lo, np.where(np.isnan(hi), hi, r))


def _lerp_f(a, b, w):
    return np.where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _gelu_tanh(x):
    with np.errstate(over="ignore"):
        return x / (1.0 + np.exp(-2.0 * _K * (x + 0.044715 * x * x * x)))


REFS = {
    "neg": Ref("unary", IF, f=lambda x: -x, i=lambda x: -x),
    "abs": Ref("unary", BIF, f=np.abs, i=np.abs, b=lambda x: x),
    "sign": Ref("unary", IF, f=lambda x: np.where(x > 0, 1.0, np.where(x < 0, -1.0, x)), i=np.sign),
    "exp": Ref("unary", F, f=np.exp, tol="trans", lo=-10, hi=10),
    "expm1": Ref("unary", F, f=np.expm1, tol="trans", lo=-10, hi=10),
    "exp2": Ref("unary", F, f=np.exp2, tol="trans", lo=-14, hi=14),
    "log": Ref("unary", F, f=np.log, tol="trans", lo=1e-3, hi=100),
    "log1p": Ref("unary", F, f=np.log1p, tol="trans", lo=-0.999, hi=10),
    "log2": Ref("unary", F, f=np.log2, tol="trans", lo=1e-3, hi=100),
    "sqrt": Ref("unary", F, f=np.sqrt, lo=0, hi=100),
    "rsqrt": Ref("unary", F, f=lambda x: 1.0 / np.sqrt(x), tol="trans", lo=1e-3, hi=100),
    "reciprocal": Ref("unary", IF, f=lambda x: 1.0 / x,
                      i=lambda x: np.where(x == 1, 1, np.where(x == -1, -1, 0)), lo=-10, hi=10),
    "square": Ref("unary", IF, f=lambda x: x * x, i=lambda x: x * x),
    "sin": Ref("unary", F, f=np.sin, tol="trans"),
    "cos": Ref("unary", F, f=np.cos, tol="trans"),
    "tan": Ref("unary", F, f=np.tan, tol="trans", lo=-1.3, hi=1.3),
    "tanh": Ref("unary", F, f=np.tanh, tol="trans", lo=-6, hi=6),
    "sigmoid": Ref("unary", F, f=_sigmoid, tol="trans", lo=-8, hi=8),
    "relu": Ref("unary", IF, f=lambda x: np.where(x < 0, 0.0, x), i=lambda x: np.where(x < 0, 0, x)),
    "gelu": Ref("unary", F, f=lambda x: 0.5 * x * _erfc(-x / math.sqrt(2.0)), tol="trans",
                lo=-6, hi=6, no_inf=True),
    "gelu_tanh": Ref("unary", F, f=_gelu_tanh, tol="trans", lo=-6, hi=6, no_inf=True),
    "silu": Ref("unary", F, f=lambda x: x * _sigmoid(x), tol="trans", lo=-8, hi=8, no_inf=True),
    "softplus": Ref("unary", F, f=lambda x: np.log1p(np.exp(x)), tol="trans", lo=-20, hi=20),
    "erf": Ref("unary", F, f=_erf, tol="trans", lo=-4, hi=4),
    "floor": Ref("unary", IF, f=np.floor, i=lambda x: x),
    "ceil": Ref("unary", IF, f=np.ceil, i=lambda x: x),
    "round": Ref("unary", IF, f=np.rint, i=lambda x: x),
    "trunc": Ref("unary", IF, f=np.trunc, i=lambda x: x),
    "logical_not": Ref("unary", BIF, f=lambda x: x == 0, i=lambda x: x == 0, b=lambda x: ~x,
                       out="bool", lo=-2, hi=2),
    "bitwise_not": Ref("unary", BI, i=lambda x: ~x, b=lambda x: ~x),
    "isnan": Ref("unary", BIF, f=np.isnan, i=lambda x: np.zeros(x.shape, bool),
                 b=lambda x: np.zeros(x.shape, bool), out="bool"),
    "isinf": Ref("unary", BIF, f=np.isinf, i=lambda x: np.zeros(x.shape, bool),
                 b=lambda x: np.zeros(x.shape, bool), out="bool"),
    "isfinite": Ref("unary", BIF, f=np.isfinite, i=lambda x: np.ones(x.shape, bool),
                    b=lambda x: np.ones(x.shape, bool), out="bool"),
    "leaky_relu": Ref("unary_param", F, f=lambda x, a: np.where(x >= 0, x, a * x), tol="approx",
                      params=_p([(0.1,), (0.01,)])),
    "elu": Ref("unary_param", F, f=lambda x, a: np.where(x > 0, x, a * np.expm1(x)), tol="trans",
               params=_p([(0.5,), (1.0,)])),
    "celu": Ref("unary_param", F, f=lambda x, a: np.where(x >= 0, x, a * np.expm1(x / a)), tol="trans",
                params=_p([(0.5,), (2.0,)])),
    "hardshrink": Ref("unary_param", F, f=lambda x, l: np.where((x >= -l) & (x <= l), 0.0, x),
                      params=_p([(0.5,), (1.25,)])),
    "softshrink": Ref("unary_param", F, f=lambda x, l: np.where(x > l, x - l, np.where(x < -l, x + l, x * 0)),
                      tol="approx", params=_p([(0.5,), (1.25,)])),
    "threshold": Ref("unary_param", F, f=lambda x, t, v: np.where(x <= t, v, x),
                     params=_p([(0.5, -2.0), (-1.0, 3.0)])),
    "clamp": Ref("unary_param", IF, f=_clamp_f, i=lambda x, lo, hi: _clamp_f(x, lo, hi),
                 params=_p([(-1.0, 2.0)], [(-100, 100), (-1, 2)], [(3, 200)]), lo=-120, hi=220),
    "pow_scalar": Ref("unary_param", F, f=lambda x, p: np.power(x, p), tol="trans",
                      params=_p([(2.5,), (3.0,), (-1.0,)])),
    "add_scalar": Ref("unary_param", IF, f=lambda x, s: x + s, i=lambda x, s: x + s,
                      params=_p([(1.5,)], [(3,), (-7,)], [(3,)])),
    "mul_scalar": Ref("unary_param", IF, f=lambda x, s: x * s, i=lambda x, s: x * s,
                      params=_p([(-2.5,)], [(-3,)], [(3,)])),
    "where": Ref("ternary", BIF, f=lambda c, a, b: np.where(c, a, b),
                 i=lambda c, a, b: np.where(c, a, b), b=lambda c, a, b: np.where(c, a, b)),
    "fma": Ref("ternary", IF, f=lambda a, b, c: a * b + c, i=lambda a, b, c: a * b + c,
               tol="approx"),
    "lerp": Ref("ternary", F, f=_lerp_f, tol="approx", no_inf=True),
    "round_decimals": Ref("unary_param", F, f=lambda x, d: np.round(x, int(d)), tol="approx", lo=-50, hi=50,
                          params=_p([(0,), (2,), (-1,)])),
    # PyTorch's addcmul / addcdiv (value: keyword-only, default 1) and clamp with tensor bounds
    "addcmul": Ref("ternary", IF, f=lambda a, b, c, v: a + v * b * c, i=lambda a, b, c, v: a + v * b * c,
                   tol="approx", params=_p([(1.0,), (-0.75,)], [(1,), (-3,)], [(1,), (3,)])),
    "addcdiv": Ref("ternary", F, f=lambda a, b, c, v: a + v * b / c, tol="approx",
                   params=_p([(1.0,), (0.5,)])),
    "clamp_tensor": Ref("ternary", IF, f=_clamp_tensor_f, i=lambda x, lo, hi: np.minimum(np.maximum(x, lo), hi)),
    "cast": Ref("cast", BIF),
}

PY_NAME = {}  # registry name -> module attribute, when they differ (none per API.md)

ELEMENTWISE = [o.name for o in ct.ops(category="elementwise")]
NUMPY_REFS = frozenset(REFS)  # the ops written out above


def _row_ref(info):
    """The entry of an op the table above does not list, from its row: the dtype rule (CTOpInfo.dtype_mask),
    the output rule, the "trans" tolerance class (exact for integer and bool dtypes), the generic domain with
    every special value, parameters 0.5, 1.5, ... (integers: 1, 2, ...), and the C++ reference."""
    mask = ct._ctensor._op_info(info.id)["dtype_mask"]
    n = len(info.params)
    params = _p([tuple(k + 0.5 for k in range(n))], [tuple(k + 1 for k in range(n))]) if n else None
    return Ref(info.kind, [d for k, d in enumerate(ALL_DTYPES) if mask >> k & 1], tol="trans",
               out="bool" if info.output_dtype == "bool" else "same", params=params, nin=info.num_inputs,
               op_id=info.id)


for _info in ct.ops(category="elementwise"):
    if _info.name not in REFS:
        REFS[_info.name] = _row_ref(_info)
# counts: polygamma's order and mvlgamma's dimension are integers (0.5 is refused), over x in (0, 12]
for _name, _sets in (("polygamma", [(0,), (1,), (3,)]), ("mvlgamma", [(1,), (3,)])):
    REFS[_name].params = _p(_sets)
    REFS[_name].lo, REFS[_name].hi = (0.1, 12.0) if _name == "polygamma" else (1.5, 12.0)


def _fn(name):
    return getattr(ct, PY_NAME.get(name, name))


# ---------------------------------------------------------------------------
# reference machinery
# ---------------------------------------------------------------------------

def _idom(dtype):
    """The reference domain of an integer dtype: uint64 for the unsigned ones (NumPy then computes their
    results unsigned: comparisons, abs, sign, shifts), else int64."""
    return np.uint64 if str(dtype) in UINT_DTYPES else np.int64


def _stored(values, dtype):
    """Values as stored in ``dtype``, in the reference domain (float64/int64 or uint64/bool)."""
    dtype = str(dtype)
    if dtype in F:
        return round_to_dtype(np.asarray(values, np.float64), dtype)
    if dtype == "bool":
        return np.asarray(values).astype(bool)
    with np.errstate(invalid="ignore"):
        return np.asarray(values).astype(dtype).astype(_idom(dtype))


def _reference(ref, dtype, xs, params=()):
    """Reference result of ``ref`` on stored inputs ``xs`` (reference domain)."""
    if ref.op_id is not None:  # the C++ reference library (bool inputs: where's condition, or bool data)
        out_dtype = "bool" if ref.out == "bool" else dtype
        r = c_reference(ref.op_id, ["bool" if np.asarray(x).dtype == bool else dtype for x in xs], xs, params,
                        out_dtype, np.broadcast_shapes(*[np.shape(x) for x in xs]))
        if out_dtype == "bool":
            return r.astype(bool)
        return round_to_dtype(r, dtype) if dtype in F else r
    with np.errstate(all="ignore"):
        if dtype in F:
            r = ref.f(*xs, *params)
            if ref.out == "bool":
                return np.asarray(r, bool)
            return round_to_dtype(np.asarray(r, np.float64), dtype)
        if dtype == "bool":
            r = ref.b(*xs, *params)
            return np.asarray(r, bool)
        r = ref.i(*xs, *params)
        if ref.out == "bool":
            return np.asarray(r, bool)
        return np.asarray(r).astype(dtype).astype(_idom(dtype))


def _check(ref, dtype, got, expected, err=""):
    got_np = to_numpy(got) if not isinstance(got, np.ndarray) else got
    if ref.out == "bool" or dtype not in F or ref.tol == "exact":
        assert_same(got_np, expected, err_msg=err)
        return
    rtol, atol = RTOL[dtype], ATOL[dtype]
    g = np.asarray(got_np, np.float64)
    e = np.asarray(expected, np.float64)
    if ref.tol == "approx":
        atol = rtol  # rtol * max(|e|, 1)
    np.testing.assert_allclose(g, e, rtol=rtol, atol=atol, equal_nan=True, err_msg=err)


def _inputs(ref, dtype, rng, shape):
    """Random stored inputs (reference domain) for an op in its domain."""
    if ref.kind == "ternary":
        if ref is REFS["where"]:
            c = rng.integers(0, 2, size=shape).astype(bool)
            return [c] + [_stored(random_array(rng, shape, dtype, -100, 100), dtype) for _ in range(2)]
        lo, hi = (-5, 5) if dtype in F else (-1000, 1000)
        xs = [_stored(random_array(rng, shape, dtype, lo, hi), dtype) for _ in range(3)]
        if ref is REFS["lerp"]:
            xs[2] = _stored(rng.uniform(-0.5, 1.5, size=shape), dtype)
        return xs
    if dtype in F:
        return [_stored(rng.uniform(ref.lo, ref.hi, size=shape), dtype)]
    lo, hi = (ref.lo, ref.hi) if ref.lo != -5.0 else (-100, 100)
    return [_stored(random_array(rng, shape, dtype, lo, hi), dtype)]


def _to_input(x, dtype):
    if x.dtype == bool:
        return x.copy()
    return make_input(x, dtype)


def _call(name, ref, dtype, xs, params=(), **kw):
    fn = _fn(name)
    args = [_to_input(x, dtype if not (ref is REFS["where"] and k == 0) else "bool")
            for k, x in enumerate(xs)]
    params, pkw = _params_kw(name, params)
    return fn(*args, *params, **kw, **pkw)


def _params_kw(name, params):
    """A ternary op's parameters are keyword-only (addcmul(..., value=2)): params as keywords."""
    if not params or REFS[name].kind != "ternary":
        return params, {}
    names = [o for o in ct.ops(category="elementwise") if o.name == name][0].params
    return (), dict(zip(names, params))


def _param_sets(ref, dtype):
    return ref.params(dtype) if ref.params is not None else [()]


# ---------------------------------------------------------------------------
# the registry is covered
# ---------------------------------------------------------------------------

def test_every_elementwise_op_has_a_reference():
    assert ELEMENTWISE, "the registry lists no elementwise op"
    missing = [n for n in ELEMENTWISE if n not in REFS]
    assert not missing, f"elementwise ops without a reference in test_elementwise.py: {missing}"
    stale = [n for n in NUMPY_REFS if n not in ELEMENTWISE]
    assert not stale, f"references for ops the registry does not list as elementwise: {stale}"
    # the others are checked against the C++ reference library: it must be there
    from_c = sorted(n for n in ELEMENTWISE if n not in NUMPY_REFS)
    assert not from_c or c_reference_lib() is not None, \
        f"ops {from_c} need the C++ reference library: set CT_REFERENCE_LIB (ctest does) or build build/"


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_op_info_and_bindings(name):
    info = [o for o in ct.ops(category="elementwise") if o.name == name][0]
    assert name in REFS, f"no reference for elementwise op {name!r}"
    assert info.category == "elementwise"
    assert info.kind == REFS[name].kind
    assert len(info.python_names) >= 1
    for pn in info.python_names:
        assert callable(getattr(ct, pn)), pn
    assert PY_NAME.get(name, name) in info.python_names
    # the registry's dtype support (ct_op_supported) is SEMANTICS.md's table
    f8 = set(FLOAT8_DTYPES) if F <= set(REFS[name].dtypes) else set()  # float ops run on the float8 dtypes too
    assert set(info.dtypes()) == set(REFS[name].dtypes) | f8, (name, info.dtypes())
    for d in ALL_DTYPES:
        assert ct.supported(name, d) == (d in REFS[name].dtypes), (name, d)
    want_out = "any" if name == "cast" else REFS[name].out
    assert info.output_dtype == want_out


# ---------------------------------------------------------------------------
# every op x every dtype
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n != "cast"])
def test_op_dtype(name, dtype, rng):
    assert name in REFS, f"no reference for elementwise op {name!r}"
    ref = REFS[name]
    shape = (3, 17)
    if dtype not in ref.dtypes:
        xs = _inputs(Ref(ref.kind, ALL_DTYPES), "float32" if dtype in F else dtype, rng, shape)
        params = _param_sets(ref, dtype if dtype in F else "int32")[0] if ref.params else ()
        if ref is REFS["where"]:
            pytest.fail("where is defined for every dtype")
        with pytest.raises(NotImplementedError):
            _call(name, ref, dtype, xs, params)
        return
    xs = _inputs(ref, dtype, rng, shape)
    for params in _param_sets(ref, dtype):
        r = _call(name, ref, dtype, xs, params)
        out_dtype = "bool" if ref.out == "bool" else dtype
        assert str(r.dtype) == out_dtype
        assert r.dtype == out_dtype
        assert tuple(r.shape) == shape
        _check(ref, dtype, r, _reference(ref, dtype, xs, params), err=f"{name}{params} {dtype}")


# ---------------------------------------------------------------------------
# special values
# ---------------------------------------------------------------------------

def _float_specials(dtype):
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1.0, -1.0, 3.0,
            1e-3, -7.25]
    info = {"float16": (65504.0, 2.0 ** -24), "bfloat16": (3.3895313892515355e38, 2.0 ** -133),
            "float32": (3.4028234663852886e38, 2.0 ** -149), "float64": (1.7976931348623157e308, 5e-324)}
    mx, tiny = info[dtype]
    return np.array(vals + [mx, -mx, tiny, -tiny], np.float64), np.array(vals, np.float64)


def _supported_pairs(dtypes):
    """(op, dtype) pairs of the registry's elementwise ops defined for ``dtypes`` (ops
    without a reference are reported by test_every_elementwise_op_has_a_reference)."""
    return [(n, d) for n in ELEMENTWISE if n != "cast" and n in REFS
            for d in dtypes if d in REFS[n].dtypes]


@pytest.mark.parametrize("name,dtype", _supported_pairs(FLOAT_DTYPES))
def test_float_special_values(name, dtype):
    ref = REFS[name]
    full, moderate = _float_specials(dtype)
    # limits and subnormals only for exactly-rounded ops; transcendental ones get the
    # IEEE specials (NaN, +-inf, +-0) and moderate values
    vals = full if ref.tol == "exact" else moderate
    if ref.no_inf:
        vals = vals[np.isfinite(vals) | np.isnan(vals)]
    x = _stored(vals, dtype)
    if ref.kind == "ternary":
        n = x.size
        # every pairing of the special values appears: a takes each value, b and c rotate
        a = np.repeat(x, n)
        b = np.tile(x, n)
        c = np.roll(b, 3)
        if name == "where":
            xs = [np.arange(a.size) % 2 == 0, a, b]
        elif name == "lerp":
            xs = [a, b, _stored(np.tile([0.0, 1.0, 0.25, 0.75, 0.5], a.size // 5 + 1)[:a.size], dtype)]
        else:
            xs = [a, b, c]
    else:
        xs = [x]
    for params in _param_sets(ref, dtype):
        r = _call(name, ref, dtype, xs, params)
        _check(ref, dtype, r, _reference(ref, dtype, xs, params), err=f"{name}{params} {dtype} {vals}")


@pytest.mark.parametrize("name,dtype", _supported_pairs(INT_DTYPES + ["bool"]))
def test_integer_limits(name, dtype):
    ref = REFS[name]
    if dtype == "bool":
        x = np.array([False, True, True, False])
    else:
        info = iinfo(dtype)
        vals = {int(info.min), int(info.min) + 1, -1, 0, 1, 2, 3, int(info.max) - 1, int(info.max)}
        x = np.array(sorted(v for v in vals if info.min <= v <= info.max), _idom(dtype))
    if ref.kind == "ternary":
        n = x.size
        a, b = np.repeat(x, n), np.tile(x, n)
        xs = [np.arange(a.size) % 3 == 0, a, b] if name == "where" else [a, b, np.roll(b, 2)]
    else:
        xs = [x]
    for params in _param_sets(ref, dtype):
        r = _call(name, ref, dtype, xs, params)
        _check(ref, dtype, r, _reference(ref, dtype, xs, params), err=f"{name}{params} {dtype}")


def test_documented_integer_edge_cases():
    i8 = np.array([-128, 127, 0, -1, 1, 5], np.int8)
    np.testing.assert_array_equal(np.asarray(ct.neg(i8)), [-128, -127, 0, 1, -1, -5])
    np.testing.assert_array_equal(np.asarray(ct.abs(i8)), [-128, 127, 0, 1, 1, 5])
    np.testing.assert_array_equal(np.asarray(ct.square(i8)), [0, 1, 0, 1, 1, 25])
    np.testing.assert_array_equal(np.asarray(ct.reciprocal(i8)), [0, 0, 0, -1, 1, 0])
    np.testing.assert_array_equal(np.asarray(ct.add_scalar(i8, 1)), [-127, -128, 1, 0, 2, 6])
    np.testing.assert_array_equal(np.asarray(ct.mul_scalar(i8, 2)), [0, -2, 0, -2, 2, 10])
    u8 = np.array([0, 1, 255], np.uint8)
    np.testing.assert_array_equal(np.asarray(ct.neg(u8)), [0, 255, 1])
    np.testing.assert_array_equal(np.asarray(ct.bitwise_not(u8)), [255, 254, 0])
    b = np.array([True, False])
    np.testing.assert_array_equal(np.asarray(ct.bitwise_not(b)), [False, True])
    np.testing.assert_array_equal(np.asarray(ct.abs(b)), [True, False])


def test_addcmul_addcdiv_match_pytorch_and_default_value(rng):
    a, b, c = (rng.standard_normal((4, 5)).astype(np.float32) for _ in range(3))
    c[np.abs(c) < 0.1] = 0.5
    # PyTorch's order of roundings: (value * t1) * t2, then + input (no fused multiply-add)
    v = np.float32(0.3)
    assert_same(np.asarray(ct.addcmul(a, b, c, value=0.3)), a + v * b * c)
    assert_same(np.asarray(ct.addcdiv(a, b, c, value=0.3)), a + v * b / c)
    assert_same(np.asarray(ct.addcmul(a, b, c)), a + b * c)  # value defaults to 1
    # broadcasting and a scalar operand
    r = ct.addcmul(a[:, :1], b[:1, :], 2.0, value=-1)
    assert_same(np.asarray(r), a[:, :1] - b[:1, :] * np.float32(2.0))
    with pytest.raises(TypeError):
        ct.addcmul(a, b, c, 2.0)  # value is keyword-only, as in PyTorch
    with pytest.raises(ValueError):
        ct.addcmul(np.ones(3, np.int32), np.ones(3, np.int32), np.ones(3, np.int32), value=0.5)  # ints: integral
    with pytest.raises(NotImplementedError):
        ct.addcdiv(np.ones(3, np.int32), np.ones(3, np.int32), np.ones(3, np.int32))  # as PyTorch: floats only
    i = np.array([100, -100, 7], np.int8)
    np.testing.assert_array_equal(np.asarray(ct.addcmul(i, i, i, value=2)),
                                  (i.astype(np.int64) + 2 * i.astype(np.int64) ** 2).astype(np.int8))


def test_round_decimals_and_softplus_beta_as_numpy_and_pytorch(rng):
    x = rng.uniform(-100, 100, 200)
    for d in (-2, -1, 1, 3):
        assert_same(np.asarray(ct.round(x, d)), np.round(x, d))
        assert_same(np.asarray(ct.round(x, decimals=d)), np.round(x, d))
        assert_same(np.asarray(ct.round_decimals(x, d)), np.round(x, d))
    assert_same(np.asarray(ct.round(x)), np.round(x))
    x32 = x.astype(np.float32)
    assert_same(np.asarray(ct.round(x32, 2)), np.round(x32, 2))  # in float32 arithmetic, as NumPy's
    with pytest.raises(ValueError):
        ct.round_decimals(x, 1.5)  # decimals is an integer
    # softplus: exact without arguments; PyTorch's threshold form with them
    big = np.array([-30.0, -1.0, 0.0, 1.0, 15.0, 25.0, 40.0])
    np.testing.assert_allclose(np.asarray(ct.softplus(big)), np.logaddexp(0, big), rtol=1e-15)
    want = np.where(2 * big > 20, big, np.log1p(np.exp(2 * big)) / 2)
    np.testing.assert_allclose(np.asarray(ct.softplus(big, beta=2)), want, rtol=1e-15)
    np.testing.assert_allclose(np.asarray(ct.softplus(big, 1, 5)), np.where(big > 5, big, np.log1p(np.exp(big))),
                               rtol=1e-15)


def test_clamp_with_array_bounds(rng):
    x = rng.uniform(-3, 3, (6, 7)).astype(np.float32)
    lo = rng.uniform(-2, 0, (6, 1)).astype(np.float32)
    hi = rng.uniform(0, 2, (7,)).astype(np.float32)
    want = np.clip(x, lo, hi)
    for fn in (ct.clamp, ct.clip):
        assert_same(np.asarray(fn(x, lo, hi)), want)
        assert_same(np.asarray(fn(x, min=lo, max=hi)), want)
    assert_same(np.asarray(ct.clamp_tensor(x, lo, hi)), want)
    assert_same(np.asarray(ct.clamp(x, -1.0, hi)), np.clip(x, np.float32(-1), hi))  # a number and an array
    assert_same(np.asarray(ct.clamp(x, lo, None)), np.maximum(x, lo))
    # NaN in any operand gives NaN; lo > hi gives hi (NumPy's clip and PyTorch's clamp)
    xs = np.array([np.nan, 1.0, 1.0, 5.0], np.float32)
    los = np.array([0.0, np.nan, 0.0, 3.0], np.float32)
    his = np.array([2.0, 2.0, np.nan, 2.0], np.float32)
    with np.errstate(invalid="ignore"):
        assert_same(np.asarray(ct.clamp(xs, los, his)), np.clip(xs, los, his))
    xi = np.array([-5, 0, 9, 3], np.int16)
    np.testing.assert_array_equal(np.asarray(ct.clamp(xi, np.int16(-1), np.array([4, 4, 4, 2], np.int16))),
                                  [-1, 0, 4, 2])


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "int64"])
def test_integer_params_must_be_integral_and_representable(dtype):
    x = np.zeros(4, dtype)
    for bad in (2.5, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            ct.add_scalar(x, bad)
        with pytest.raises(ValueError):
            ct.mul_scalar(x, bad)
    too_big = int(iinfo(dtype).max) + 1
    with pytest.raises((ValueError, OverflowError)):
        ct.add_scalar(x, too_big)
    with pytest.raises((ValueError, OverflowError)):
        ct.clamp(x, min=0, max=too_big if dtype != "int64" else 2.5)


def test_round_half_to_even():
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 4.5, -0.4, 0.49999997], np.float32)
    r = np.asarray(ct.round(x))
    assert_same(r, np.array([0, 2, 2, -0.0, -2, -2, 4, 4, -0.0, 0], np.float32))


def test_relu_keeps_nan_and_clamp_rules():
    x = np.array([np.nan, -1.0, 0.5, 3.0, -0.0], np.float32)
    assert_same(np.asarray(ct.relu(x)), np.array([np.nan, 0.0, 0.5, 3.0, -0.0], np.float32))
    assert_same(np.asarray(ct.clamp(x, -0.5, 2.0)), np.array([np.nan, -0.5, 0.5, 2.0, -0.0], np.float32))
    # lo > hi gives hi
    assert_same(np.asarray(ct.clamp(x[1:4], 2.0, 1.0)), np.array([1.0, 1.0, 1.0], np.float32))
    assert_same(np.asarray(ct.clamp(x, max=1.0)), np.array([np.nan, -1.0, 0.5, 1.0, -0.0], np.float32))
    assert_same(np.asarray(ct.clamp(x, min=0.0)), np.array([np.nan, 0.0, 0.5, 3.0, 0.0], np.float32),
                check_zero_sign=False)
    xi = np.array([-5, 0, 7, 100], np.int16)
    np.testing.assert_array_equal(np.asarray(ct.clamp(xi, min=0)), [0, 0, 7, 100])
    np.testing.assert_array_equal(np.asarray(ct.clamp(xi, max=7)), [-5, 0, 7, 7])
    np.testing.assert_array_equal(np.asarray(ct.clip(xi, -1, 1)), [-1, 0, 1, 1])


def test_gelu_approximate_keyword(rng):
    x = rng.uniform(-4, 4, 50).astype(np.float32)
    exact = np.asarray(ct.gelu(x))
    np.testing.assert_array_equal(np.asarray(ct.gelu(x, approximate="none")), exact)
    tanh = np.asarray(ct.gelu(x, approximate="tanh"))
    np.testing.assert_array_equal(tanh, np.asarray(ct.gelu_tanh(x)))
    np.testing.assert_allclose(tanh, _gelu_tanh(x.astype(np.float64)), rtol=1e-5, atol=1e-6)
    assert np.abs(tanh - exact).max() > 1e-5  # the two forms differ
    with pytest.raises(ValueError):
        ct.gelu(x, approximate="bogus")


def test_lerp_exact_at_endpoints(rng):
    a = rng.uniform(-1e3, 1e3, 40).astype(np.float32)
    b = rng.uniform(-1e3, 1e3, 40).astype(np.float32)
    assert_same(np.asarray(ct.lerp(a, b, np.zeros(40, np.float32))), a)
    assert_same(np.asarray(ct.lerp(a, b, np.ones(40, np.float32))), b)
    assert_same(np.asarray(ct.lerp(a, b, 1.0)), b)
    assert_same(np.asarray(ct.lerp(a, b, 0.0)), a)


def test_fma_single_rounding():
    # a*b + c where a*b is not representable: fma keeps the low bits
    a = np.array([1.0 + 2.0 ** -23], np.float32)
    c = np.array([-(1.0 + 2.0 ** -22)], np.float32)
    r = np.asarray(ct.fma(a, a, c))
    assert r[0] == np.float32(2.0 ** -46)  # (1+e)^2 - (1+2e) = e^2 exactly
    a64 = np.array([1.0 + 2.0 ** -52])
    c64 = np.array([-(1.0 + 2.0 ** -51)])
    assert np.asarray(ct.fma(a64, a64, c64))[0] == 2.0 ** -104


# ---------------------------------------------------------------------------
# aliases
# ---------------------------------------------------------------------------

ALIASES = {"negative": "neg", "bitwise_invert": "bitwise_not", "clip": "clamp"}


@pytest.mark.parametrize("alias", sorted(ALIASES))
def test_aliases(alias, rng):
    name = ALIASES[alias]
    assert alias in [o for o in ct.ops(category="elementwise") if o.name == name][0].python_names
    dtype = "int32" if name == "bitwise_not" else "float32"
    x = random_array(rng, (5, 3), dtype)
    args = (-1, 2) if name == "clamp" else ()
    np.testing.assert_array_equal(np.asarray(getattr(ct, alias)(x, *args)),
                                  np.asarray(getattr(ct, name)(x, *args)))


# ---------------------------------------------------------------------------
# strided inputs, 0-d, empty
# ---------------------------------------------------------------------------

def _strided_dtype(ref):
    return "float32" if "float32" in ref.dtypes else "int32"


@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n != "cast"])
def test_strided_inputs(name, rng):
    ref = REFS.get(name)
    assert ref is not None, f"no reference for elementwise op {name!r}"
    dtype = _strided_dtype(ref)
    lo, hi = (ref.lo, ref.hi) if dtype == "float32" else (-50, 50)
    params = _param_sets(ref, dtype)[0]
    for kind in ["T", "step", "rev", "revstep", "0d", "empty"]:
        if ref.kind == "ternary":
            views = [strided_view((4, 6), kind, dtype, rng, -5, 5) for _ in range(3)]
            if name == "where":
                views[0] = strided_view((4, 6), kind, "bool", rng)
            if name == "lerp":
                views[2] = strided_view((4, 6), kind, dtype, rng, 0, 1)
        else:
            views = [strided_view((4, 6), kind, dtype, rng, lo, hi)]
        pos, pkw = _params_kw(name, params)
        r = _fn(name)(*views, *pos, **pkw)
        assert tuple(r.shape) == views[0].shape, kind
        xs = [_stored(v, "bool" if v.dtype == bool else dtype) for v in views]
        _check(ref, dtype, r, _reference(ref, dtype, xs, params), err=f"{name} {kind}")


@pytest.mark.parametrize("name", ["exp", "neg", "sqrt", "isnan", "round", "where", "lerp", "fma"])
def test_strided_bfloat16_and_float16(name, rng):
    ref = REFS[name]
    vals = [rng.uniform(0.1, 4, (4, 12)) for _ in range({"unary": 1, "ternary": 3}[ref.kind])]
    if name == "lerp":
        vals[2] = rng.uniform(0, 1, (4, 12))
    view = lambda a: a[::-1, ::2]  # noqa: E731
    # bfloat16 through the ctypes DLPack producer (uint16 storage, strides, negative step)
    prods, stored = [], []
    for v in vals:
        p, s = bf16_view(v, view)
        prods.append(p)
        stored.append(s.astype(np.float64))
    if name == "where":
        prods[0] = view(rng.integers(0, 2, (4, 12)).astype(bool))
        stored[0] = prods[0]
    r = _fn(name)(*prods)
    _check(ref, "bfloat16", r, _reference(ref, "bfloat16", stored), err=name)
    # float16 as strided NumPy views
    h = [view(v.astype(np.float16)) for v in vals]
    if name == "where":
        h[0] = prods[0]
    r = _fn(name)(*h)
    assert r.dtype == ("bool" if ref.out == "bool" else "float16")
    xs = [np.asarray(v, np.float64) if v.dtype != bool else v for v in h]
    _check(ref, "float16", r, _reference(ref, "float16", xs), err=name)


# ---------------------------------------------------------------------------
# out= and in-place
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n != "cast"])
def test_out_into_caller_array(name, rng):
    ref = REFS[name]
    dtype = _strided_dtype(ref)
    params = _param_sets(ref, dtype)[0]
    shape = (3, 5)
    xs = _inputs(ref, dtype, rng, shape)
    out_dtype = "bool" if ref.out == "bool" else dtype
    expected = _reference(ref, dtype, xs, params)
    # contiguous out
    out = np.zeros(shape, out_dtype)
    r = _call(name, ref, dtype, xs, params, out=out)
    _check(ref, dtype, out, expected, err=f"{name} out=")
    _check(ref, dtype, r, expected, err=f"{name} returned")
    # strided out (every other column of a sentinel-filled buffer): the gaps stay untouched
    buf = np.full((3, 10), 7, out_dtype)
    _call(name, ref, dtype, xs, params, out=buf[:, ::2])
    _check(ref, dtype, buf[:, ::2], expected, err=f"{name} strided out=")
    np.testing.assert_array_equal(buf[:, 1::2], np.full((3, 5), 7, out_dtype))
    # wrong out shape -> ValueError, out untouched
    bad = np.full((5, 3), 7, out_dtype)
    with pytest.raises(ValueError):
        _call(name, ref, dtype, xs, params, out=bad)
    np.testing.assert_array_equal(bad, np.full((5, 3), 7, out_dtype))
    # wrong out dtype -> TypeError, out untouched
    other = "float64" if out_dtype != "float64" else "float32"
    bad = np.full(shape, 7, other)
    with pytest.raises(TypeError):
        _call(name, ref, dtype, xs, params, out=bad)
    np.testing.assert_array_equal(bad, np.full(shape, 7, other))


@pytest.mark.parametrize("name", [n for n in ELEMENTWISE if n != "cast" and REFS.get(n, REFS["neg"]).out != "bool"])
def test_in_place(name, rng):
    ref = REFS[name]
    dtype = _strided_dtype(ref)
    info = [o for o in ct.ops(category="elementwise") if o.name == name][0]
    assert info.inplace, f"{name}: SAME-dtype elementwise ops run in place"
    params = _param_sets(ref, dtype)[0]
    xs = _inputs(ref, dtype, rng, (4, 6))
    k = 1 if name == "where" else 0
    expected = _reference(ref, dtype, xs, params)
    arrays = [_to_input(x, "bool" if (name == "where" and j == 0) else dtype) for j, x in enumerate(xs)]
    # a strided in-place operand: the transposed view of a fresh array
    target = np.ascontiguousarray(arrays[k].T).T
    arrays[k] = target
    pos, pkw = _params_kw(name, params)
    _fn(name)(*arrays, *pos, out=target, **pkw)
    _check(ref, dtype, target, expected, err=f"{name} in place")


def test_bool_output_in_place_rejected():
    x = np.array([1.0, np.nan], np.float32)
    with pytest.raises(TypeError):
        ct.isnan(x, out=x)


def test_partial_overlap_rejected():
    buf = np.arange(10, dtype=np.float32)
    before = buf.copy()
    with pytest.raises(ValueError):
        ct.neg(buf[:8], out=buf[2:])
    np.testing.assert_array_equal(buf, before)


# ---------------------------------------------------------------------------
# float16 / bfloat16 against NumPy and ml_dtypes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["exp", "tanh", "sigmoid", "sqrt", "gelu", "silu", "log1p"])
def test_half_types_vs_numpy(name, rng):
    ref = REFS[name]
    x = rng.uniform(max(ref.lo, -4), min(ref.hi, 4), 300)
    h = x.astype(np.float16)
    r = ct.__dict__[name](h)
    assert r.dtype == "float16"
    assert np.asarray(r).dtype == np.float16
    # NumPy's float16 functions also compute in float32 and round once
    want = ref.f(h.astype(np.float64))
    np.testing.assert_allclose(np.asarray(r, np.float64), want.astype(np.float16).astype(np.float64),
                               rtol=1e-3, atol=1e-5)
    bx = ct.cast(x.astype(np.float32), "bfloat16")
    rb = getattr(ct, name)(bx)
    assert rb.dtype == "bfloat16"
    xb = round_to_dtype(x, "bfloat16")
    np.testing.assert_allclose(to_numpy(rb).astype(np.float64), round_to_dtype(ref.f(xb), "bfloat16"),
                               rtol=1e-2, atol=1e-5)


def test_bfloat16_via_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes not installed")
    x = np.array([1.0, 1.00390625, 1.01171875, -3.3, 65504.0, 1e38, 3.4e38, np.nan], np.float32)
    t = ct.cast(x, "bfloat16")
    back = to_numpy(t)
    want = x.astype(ml_dtypes.bfloat16).astype(np.float32)
    assert_same(back, want)
    r = ct.neg(t)
    assert_same(to_numpy(r), -want)


# ---------------------------------------------------------------------------
# cast / astype
# ---------------------------------------------------------------------------

def _cast_src_values(dtype):
    if dtype == "bool":
        return np.array([0, 1, 1, 0], np.int64)
    if dtype in I:
        info = iinfo(dtype)
        vals = {int(info.min), int(info.min) + 1, -1000, -129, -128, -2, -1, 0, 1, 2, 127, 128, 255,
                256, 1000, 12345, 65535, 65536, 2 ** 32 - 1, 2 ** 32, 2 ** 53 + 1, 2 ** 63 + 2 ** 39 + 1,
                int(info.max) - 1, int(info.max)}
        return np.array(sorted(v for v in vals if info.min <= v <= info.max), np.dtype(dtype))
    vals = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5, 2.5, 127.9,
            128.5, -128.5, -129.7, 255.9, 256.0, 300.7, -300.7, 32767.5, 40000.2, -40000.2,
            65504.0, 70000.0, 2.0 ** 31 + 0.5, -(2.0 ** 31) - 3.0, 1e10, -1e10, 2.0 ** 63, -(2.0 ** 63),
            1e19, -1e19, 1e-8, -1e-8, 1.00390625, 1.01171875, 3.0e38, -3.0e38, 1e300,
            65535.5, 4294967295.5, 2.0 ** 64, -(2.0 ** 64)]
    return round_to_dtype(np.array(vals, np.float64), dtype)


def _cast_ref(vals, src, dst):
    """SEMANTICS.md cast rules, computed with Python ints where exactness matters."""
    if dst == "bool":
        return np.array([bool(v != 0) for v in vals.tolist()], bool)
    if src == "bool":
        v = vals.astype(np.int64)
        return v.astype(bool) if dst == "bool" else (v.astype(np.float64) if dst in F else v)
    if dst in I:
        info = iinfo(dst)
        lo, hi = int(info.min), int(info.max)
        out = []
        for v in vals.tolist():
            if src in F:
                if math.isnan(v):
                    out.append(0)
                    continue
                if math.isinf(v):
                    out.append(hi if v > 0 else lo)
                    continue
                n = int(math.trunc(v))
                out.append(min(max(n, lo), hi))
            else:
                n = int(v) & ((1 << info.bits) - 1)
                if lo < 0 and n > hi:
                    n -= 1 << info.bits
                out.append(n)
        return np.array(out, np.dtype(dst))
    # to a float type
    if src in F:
        return round_to_dtype(vals.astype(np.float64), dst)
    return round_to_dtype(np.array([_int_to_float(int(v), dst) for v in vals.tolist()], np.float64), dst)


def _int_to_float(n, dst):
    """The Python int ``n`` rounded once, to nearest even, to the precision of float dtype ``dst`` (float(n)
    first would round twice: 2**63 + 2**39 + 1 to float32 is 2**63 + 2**40, not the tie 2**63 + 2**39's 2**63).
    Overflow is round_to_dtype's."""
    bits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[dst]
    m = abs(n)
    if m.bit_length() > bits:
        shift = m.bit_length() - bits
        q, r = divmod(m, 1 << shift)
        half = 1 << (shift - 1)
        if r > half or (r == half and q & 1):
            q += 1
        m = q << shift
    return float(-m if n < 0 else m)


@pytest.mark.parametrize("dst", ALL_DTYPES)
@pytest.mark.parametrize("src", ALL_DTYPES)
def test_cast_all_pairs(src, dst):
    vals = _cast_src_values(src)
    x = make_input(vals.astype(bool) if src == "bool" else vals, src)
    r = ct.cast(x, dst)
    assert r.dtype == dst
    assert tuple(r.shape) == vals.shape
    want = _cast_ref(vals, src, dst)
    assert_same(to_numpy(r), want, err_msg=f"cast {src}->{dst} of {vals.tolist()}")
    # astype agrees
    assert_same(to_numpy(ct.astype(x, dst)), want, err_msg=f"astype {src}->{dst}")


@pytest.mark.parametrize("dst", ["int8", "float16", "float32", "bool", "float64"])
def test_cast_out_takes_dtype_from_out(dst, rng):
    x = rng.uniform(-100, 100, (3, 4)).astype(np.float32)
    out = np.zeros((3, 4), dst)
    ct.cast(x, out=out)
    assert_same(out, _cast_ref(x.astype(np.float64).ravel(), "float32", dst).reshape(3, 4).astype(dst))
    # strided out, gaps untouched
    buf = np.full((3, 8), 9, dst)
    ct.cast(x, out=buf[:, 1::2])
    np.testing.assert_array_equal(buf[:, ::2], np.full((3, 4), 9, dst))
    assert_same(buf[:, 1::2], out)
    # explicit dtype that disagrees with out
    other = "float64" if dst != "float64" else "float32"
    with pytest.raises(TypeError):
        ct.cast(x, other, out=np.zeros((3, 4), dst))


def test_cast_bfloat16_out_via_dlpack(rng):
    x = rng.uniform(-10, 10, (3, 4)).astype(np.float32)
    bits = np.zeros((3, 8), np.uint16)
    out = DLPackProducer(bits[:, ::2], dtype="bfloat16")
    ct.cast(x, out=out)
    np.testing.assert_array_equal(bits[:, 1::2], 0)
    np.testing.assert_array_equal(bits[:, ::2], bf16_bits(x.astype(np.float64)))


@pytest.mark.parametrize("spelling", ["dtype", "str", "np.dtype", "np.type"])
def test_dtype_argument_spellings(spelling, rng):
    x = rng.uniform(-3, 3, 6)
    dt = {"dtype": ct.float32, "str": "float32", "np.dtype": np.dtype("float32"),
          "np.type": np.float32}[spelling]
    r = ct.cast(x, dt)
    assert r.dtype == ct.float32
    np.testing.assert_array_equal(np.asarray(r), x.astype(np.float32))
    r = ct.astype(x, dt)
    assert r.dtype == ct.float32


def test_astype_copy_semantics(rng):
    x = rng.uniform(-3, 3, (2, 3)).astype(np.float32)
    t = ct.cast(x, "float32")
    assert isinstance(t, ct.Tensor)
    assert ct.astype(t, "float32", copy=False) is t
    c = ct.astype(t, "float32")  # copy=True: a new buffer
    assert c is not t
    np.testing.assert_array_equal(np.asarray(c), x)
    np.asarray(c)[0, 0] = 42.0
    assert np.asarray(t)[0, 0] == x[0, 0]
    # the cast from a NumPy array never aliases the input
    c2 = ct.astype(x, "float32")
    np.asarray(c2)[0, 1] = 43.0
    assert x[0, 1] != 43.0
    with pytest.raises((ValueError, TypeError)):
        ct.cast(x, "complex64")


# ---------------------------------------------------------------------------
# ternary broadcasting and Python scalars
# ---------------------------------------------------------------------------

def test_where_broadcast_and_scalars(rng):
    c = rng.integers(0, 2, (3, 1)).astype(bool)
    a = rng.uniform(-1, 1, (1, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (4,)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(ct.where(c, a, b)), np.where(c, a, b))
    np.testing.assert_array_equal(np.asarray(ct.where(c, a, 0.0)), np.where(c, a, np.float32(0)))
    np.testing.assert_array_equal(np.asarray(ct.where(c, 2.5, b)), np.where(c, np.float32(2.5), b))
    r = ct.where(c, a, 0.0)
    assert r.dtype == "float32" and tuple(r.shape) == (3, 4)
    ai = np.arange(4, dtype=np.int16)
    np.testing.assert_array_equal(np.asarray(ct.where(c, ai, -1)), np.where(c, ai, np.int16(-1)))
    assert ct.where(c, ai, -1).dtype == "int16"
    with pytest.raises(TypeError):
        ct.where(c, ai, 1.5)  # float scalar with an integer array
    with pytest.raises(TypeError):
        ct.where(c, ai, a)  # int16 vs float32
    with pytest.raises(TypeError):
        ct.where(c.astype(np.int8), a, a)  # condition not bool
    with pytest.raises(ValueError):
        ct.where(np.ones((3, 2), bool), a, b)  # (3,2) vs (1,4) does not broadcast


def test_fma_lerp_broadcast_and_scalars(rng):
    a = rng.uniform(-2, 2, (2, 3, 1)).astype(np.float64)
    b = rng.uniform(-2, 2, (3, 4)).astype(np.float64)
    c = rng.uniform(-2, 2, ()).astype(np.float64)
    r = ct.fma(a, b, c)
    assert tuple(r.shape) == (2, 3, 4)
    np.testing.assert_allclose(np.asarray(r), a * b + c, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(np.asarray(ct.fma(a, 2.0, 1.0)), a * 2 + 1, rtol=0, atol=0)
    np.testing.assert_allclose(np.asarray(ct.fma(a, b, 0.5)), a * b + 0.5, rtol=1e-15, atol=1e-15)
    r = ct.lerp(a, b, 0.25)
    np.testing.assert_allclose(np.asarray(r), a + 0.25 * (b - a), rtol=1e-14, atol=1e-14)
    w = rng.uniform(0, 1, (4,))
    np.testing.assert_allclose(np.asarray(ct.lerp(a, b, w)), _lerp_f(a, b, w), rtol=1e-14, atol=1e-14)
    ai = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(ct.fma(ai, 3, -1)), ai * 3 - 1)
    with pytest.raises(TypeError):
        ct.fma(ai, 1.5, 1)
    with pytest.raises(NotImplementedError):
        ct.lerp(ai, ai, ai)


TERNARY_BROADCAST_CASES = [
    # (op, shapes of the three operands); the result has NumPy's broadcast shape
    ("where", [(3, 1), (), (4,)]),
    ("where", [(), (2, 3), (3,)]),
    ("where", [(), (), ()]),
    ("where", [(2, 1, 1), (1, 3, 1), (4,)]),
    ("where", [(0, 1), (1, 5), ()]),
    ("fma", [(), (2, 1, 3), (4, 1)]),
    ("fma", [(), (), ()]),
    ("fma", [(5,), (), (5,)]),
    ("lerp", [(5, 1), (1, 6), ()]),
    ("lerp", [(), (2, 2), (2, 1)]),
    ("lerp", [(3,), (3,), (3,)]),
]


@pytest.mark.parametrize("name,shapes", TERNARY_BROADCAST_CASES, ids=lambda v: str(v))
def test_ternary_broadcast_in_the_library(name, shapes, rng):
    # every operand may broadcast, 0-d ones included; ct_ternary broadcasts (no views made in Python)
    arrs = [rng.uniform(0.1, 1, s).astype(np.float64) for s in shapes]
    if name == "where":
        arrs[0] = rng.integers(0, 2, shapes[0]).astype(bool)
        want = np.where(*arrs)
    elif name == "fma":
        want = arrs[0] * arrs[1] + arrs[2]
    else:
        want = _lerp_f(*arrs)
    r = getattr(ct, name)(*arrs)
    assert tuple(r.shape) == want.shape and r.dtype == "float64"
    np.testing.assert_allclose(np.asarray(r), want, rtol=1e-14, atol=1e-15)
    out = np.full(want.shape, 7.0)
    assert getattr(ct, name)(*arrs, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-14, atol=1e-15)
    # a Tensor operand (0-d or not) broadcasts the same way
    k = 1 if name == "where" else 0
    arrs[k] = ct.copy(arrs[k])
    np.testing.assert_allclose(np.asarray(getattr(ct, name)(*arrs)), want, rtol=1e-14, atol=1e-15)


def test_ternary_scalars_and_0d(rng):
    # Python scalars become 0-d operands of the arrays' dtype; a 0-d array is an operand like any other
    c = np.array(True)
    b = rng.uniform(-1, 1, (2, 3)).astype(np.float32)
    r = ct.where(c, 1.5, b)
    assert r.dtype == "float32" and tuple(r.shape) == (2, 3)
    np.testing.assert_array_equal(np.asarray(r), np.full((2, 3), 1.5, np.float32))
    r = ct.where(np.array([True, False, True]), np.array(1, np.int8), -1)
    assert r.dtype == "int8" and tuple(r.shape) == (3,)
    np.testing.assert_array_equal(np.asarray(r), [1, -1, 1])
    r = ct.where(np.array(True), 2.0, 3.0)  # scalar data operands only: float64, 0-d
    assert r.shape == () and r.dtype == "float64" and float(np.asarray(r)) == 2.0
    with pytest.raises(TypeError):
        ct.where(True, 2.0, 3.0)  # the condition is an array (a 0-d one will do)
    r = ct.fma(2, 3, 4)
    assert r.shape == () and r.dtype == "int64" and int(np.asarray(r)) == 10
    r = ct.lerp(np.array(0.0, np.float32), np.array(4.0, np.float32), np.linspace(0, 1, 5, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(r), [0, 1, 2, 3, 4])
    r = ct.fma(np.float32(2), b, 1.0)  # a NumPy scalar is a 0-d array
    np.testing.assert_allclose(np.asarray(r), 2 * b + 1, rtol=1e-6)


def test_ternary_errors_name_the_arguments():
    with pytest.raises(ValueError) as e:
        ct.where(np.ones((3, 2), bool), np.zeros((1, 4)), np.zeros(4))
    msg = str(e.value)
    assert msg.startswith("ct_ternary: ") and "a.shape=[1,4]" in msg and "cond.shape=[3,2]" in msg
    with pytest.raises(ValueError) as e:
        ct.fma(np.ones((3, 2)), np.zeros((1, 4)), 1.0)
    msg = str(e.value)
    assert msg.startswith("ct_ternary: ") and "b.shape=[1,4]" in msg and "a.shape=[3,2]" in msg
    with pytest.raises(ValueError) as e:
        ct.lerp(np.ones(4, np.float32), np.ones(4, np.float32), np.ones(5, np.float32))
    assert "c.shape=[5]" in str(e.value) and "does not broadcast" in str(e.value)
    with pytest.raises(ValueError) as e:  # out= must be exactly the broadcast shape
        ct.fma(np.ones((3, 1)), np.ones(4), 0.0, out=np.zeros((4, 3)))
    assert "out.shape" in str(e.value)
    with pytest.raises(TypeError) as e:
        ct.where(np.ones(3, np.int8), np.ones(3), np.ones(3))
    assert "cond" in str(e.value) and "int8" in str(e.value)
    with pytest.raises(TypeError) as e:
        ct.fma(np.ones(3, np.float32), np.ones(3, np.float64), np.ones(3, np.float32))
    assert "ct_ternary" in str(e.value) and "float64" in str(e.value)


# ---------------------------------------------------------------------------
# sizes that take the vectorised / multi-threaded paths
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["exp", "log", "tanh", "sigmoid", "gelu", "sqrt", "neg", "round", "isnan",
                                  "clamp", "where", "fma", "lerp"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_large_arrays(name, dtype, rng):
    ref = REFS[name]
    shape = (301, 1031)  # odd extents: vector tails in every row
    xs = _inputs(ref, dtype, rng, shape)
    if ref.kind == "unary" and ref.tol == "exact":
        xs[0].ravel()[::97] = np.nan
    params = _param_sets(ref, dtype)[0]
    r = _call(name, ref, dtype, xs, params)
    _check(ref, dtype, r, _reference(ref, dtype, xs, params), err=f"{name} {dtype} large")
    if dtype in ("float32", "float64") and ref.kind == "unary":
        # a transposed strided view of the same data
        xt = np.ascontiguousarray(_to_input(xs[0], dtype).T).T
        r = _fn(name)(xt[:, ::-2], *params)
        _check(ref, dtype, r, _reference(ref, dtype, [xs[0][:, ::-2]], params), err=f"{name} {dtype} large view")


def test_large_casts(rng):
    x = rng.uniform(-300, 300, 60_007)
    x[::1001] = np.nan
    for dst in ["int8", "uint8", "int32", "float16", "bfloat16", "float32", "bool"]:
        r = ct.cast(x, dst)
        want = _cast_ref(x, "float64", dst)
        assert_same(to_numpy(r), want, err_msg=dst)


def test_parameter_defaults_come_from_the_row():
    """A row's "name=default" gives the Python keyword and its default (PyTorch's names and values); a
    parameter without one is required."""
    info = {o.name: o for o in ct.ops(category="elementwise")}
    assert info["leaky_relu"].params == ("negative_slope",) and info["leaky_relu"].param_defaults == (0.01,)
    assert info["celu"].param_defaults == (1.0,) and info["hardshrink"].param_defaults == (0.5,)
    assert info["threshold"].params == ("threshold", "value") and info["threshold"].param_defaults == (None, None)
    assert info["clamp"].param_defaults == (None, None)
    x = np.array([-2.0, -0.25, 0.0, 0.4, 3.0], np.float32)
    np.testing.assert_array_equal(np.asarray(ct.leaky_relu(x)), np.asarray(ct.leaky_relu(x, 0.01)))
    np.testing.assert_array_equal(np.asarray(ct.leaky_relu(x, negative_slope=0.5)), np.where(x >= 0, x, 0.5 * x))
    np.testing.assert_array_equal(np.asarray(ct.hardshrink(x)), np.where(np.abs(x) <= 0.5, 0, x))
    np.testing.assert_array_equal(np.asarray(ct.softshrink(x, lambd=0.25)),
                                  np.float32([-1.75, 0, 0, 0.15, 2.75]))
    np.testing.assert_allclose(np.asarray(ct.celu(x)), np.where(x >= 0, x, np.expm1(x)), rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(ct.threshold(x, 0.0, -9.0)), np.where(x <= 0, -9, x))
    np.testing.assert_array_equal(np.asarray(ct.threshold(x, value=1.0, threshold=0.4)), np.where(x <= 0.4, 1, x))
    with pytest.raises(TypeError, match="threshold.*missing required argument: 'value'"):
        ct.threshold(x, 0.0)
    with pytest.raises(TypeError, match="pow_scalar.*missing required argument: 'p'"):
        ct.pow_scalar(x)
    assert "negative_slope: float = 0.01" in ct.leaky_relu.__doc__ or "negative_slope" in str(ct.leaky_relu.__doc__)
