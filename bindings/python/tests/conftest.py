"""Shared fixtures and helpers for the ctensor Python binding tests.

Run with the built package on the path:
    PYTHONPATH=build/python python3 -m pytest bindings/python/tests

Helpers here (imported by the test modules with ``from conftest import ...``):
  * dtype name lists (ALL_DTYPES, INT_DTYPES, FLOAT_DTYPES, ...)
  * ``make_input`` / ``to_numpy``: NumPy <-> ctensor for every dtype, bfloat16
    included (NumPy cannot export ml_dtypes' bfloat16, so bfloat16 inputs are
    made with ctensor.cast or handed over with the ctypes DLPack producer below)
  * ``strided_view``: non-contiguous views of a fresh array (a[:, ::2], a.T,
    a[::-1], ...)
  * ``DLPackProducer``: a minimal DLPack producer written with ctypes (legacy
    "dltensor" or "dltensor_versioned" capsules, any dtype code, byte_offset,
    read-only flag, deleter NULL or a callback)
  * ``round_to_half`` / ``round_to_bf16``: exact round-to-nearest-even of
    float64 values to the half types (the reference rounding)
  * ``assert_same`` (bit-exact, NaN matches NaN, sign of zero counts) and the
    per-dtype tolerances RTOL / ATOL.
  * ``c_reference``: an op's result from the C++ reference library
    (tests/reference, loaded with ctypes from CT_REFERENCE_LIB), for ops the
    tests have no NumPy reference for.
"""
import ctypes
import os
import sys

import numpy as np
import pytest

try:
    import ctensor as ct  # noqa: F401
except ImportError:  # fall back to the default build tree of this checkout
    _here = os.path.dirname(os.path.abspath(__file__))
    _build = os.path.normpath(os.path.join(_here, "..", "..", "..", "build", "python"))
    if os.path.isdir(_build) and _build not in sys.path:
        sys.path.insert(0, _build)
    import ctensor as ct  # noqa: F401

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is optional
    ml_dtypes = None

# Make ``from conftest import ...`` work from the test modules.
_tests_dir = os.path.dirname(os.path.abspath(__file__))
if _tests_dir not in sys.path:
    sys.path.insert(0, _tests_dir)

# ---------------------------------------------------------------------------
# dtypes
# ---------------------------------------------------------------------------

# In CTDtypeIndex order: bit k of a dtype mask (and index k of the reference library's C API) is ALL_DTYPES[k].
ALL_DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64",
              "uint16", "uint32", "uint64"]
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
UINT_DTYPES = ["uint8", "uint16", "uint32", "uint64"]
FLOAT_DTYPES = ["float16", "bfloat16", "float32", "float64"]
# The float8 dtypes (CTDtypeIndex 13..16, after ALL_DTYPES): NumPy has them only through ml_dtypes, so the
# suites over ALL_DTYPES leave them to test_float8.py; every float op is defined for them.
FLOAT8_DTYPES = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]
NP_FLOAT_DTYPES = ["float16", "float32", "float64"]  # NumPy-native floats
B = frozenset(["bool"])
I = frozenset(INT_DTYPES)
F = frozenset(FLOAT_DTYPES)
BI = B | I
IF = I | F
BIF = B | I | F

# DLPack dtype codes
kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6
DL_DTYPE = {
    "bool": (kDLBool, 8), "int8": (kDLInt, 8), "int16": (kDLInt, 16),
    "int32": (kDLInt, 32), "int64": (kDLInt, 64), "uint8": (kDLUInt, 8),
    "uint16": (kDLUInt, 16), "uint32": (kDLUInt, 32), "uint64": (kDLUInt, 64),
    "float16": (kDLFloat, 16), "bfloat16": (kDLBfloat, 16),
    "float32": (kDLFloat, 32), "float64": (kDLFloat, 64),
    # DLPack 1.3's float8 codes (kDLFloat8_e4m3fn = 10, ..._e4m3fnuz, ..._e5m2, ..._e5m2fnuz = 13): torch's
    # float8 tensors arrive with these
    "float8_e4m3fn": (10, 8), "float8_e4m3fnuz": (11, 8), "float8_e5m2": (12, 8), "float8_e5m2fnuz": (13, 8),
}


def np_dtype(name):
    """NumPy dtype for a ctensor dtype name (bfloat16 -> ml_dtypes.bfloat16)."""
    name = str(name)
    if name == "bfloat16":
        if ml_dtypes is None:
            pytest.skip("ml_dtypes not installed: bfloat16 reference skipped")
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(name)


def iinfo(name):
    return np.iinfo(np.dtype(name))


# ---------------------------------------------------------------------------
# exact rounding of float64 values to the narrow float types
# ---------------------------------------------------------------------------

def _round_to_bits(x, mant_bits, emin, emax):
    """Round float64 ``x`` to a binary float with ``mant_bits`` fraction bits,
    minimum normal exponent ``emin`` and maximum exponent ``emax``, nearest
    even, overflow to inf. Returns float64 holding the rounded values."""
    x = np.asarray(x, dtype=np.float64)
    out = x.copy()
    fin = np.isfinite(x) & (x != 0)
    xv = x[fin]
    _, e = np.frexp(xv)  # xv = m * 2**e, 0.5 <= |m| < 1: leading bit 2**(e-1)
    lead = np.maximum(e - 1, emin)
    ulp = np.ldexp(1.0, lead - mant_bits)
    r = np.rint(xv / ulp) * ulp  # exact scaling by a power of two; rint = half even
    maxval = (2.0 - 2.0 ** -mant_bits) * 2.0 ** emax
    r = np.where(np.abs(r) > maxval, np.copysign(np.inf, xv), r)
    r = np.where(r == 0, np.copysign(0.0, xv), r)
    out[fin] = r
    return out


def round_to_bf16(x):
    return _round_to_bits(x, 7, -126, 127)


def round_to_half(x):
    return _round_to_bits(x, 10, -14, 15)


def round_to_dtype(x, dtype):
    """Round float64 reference values once to ``dtype`` (returned as float64)."""
    dtype = str(dtype)
    if dtype == "bfloat16":
        return round_to_bf16(x)
    if dtype == "float16":
        return round_to_half(x)
    if dtype == "float32":
        with np.errstate(over="ignore"):
            return np.asarray(x, np.float64).astype(np.float32).astype(np.float64)
    return np.asarray(x, np.float64)


# ---------------------------------------------------------------------------
# NumPy <-> ctensor
# ---------------------------------------------------------------------------

def make_input(values, dtype):
    """An object ctensor accepts holding ``values`` converted to ``dtype``.

    For NumPy dtypes this is a NumPy array; for bfloat16 a ctensor.Tensor made
    by ctensor.cast from float32 (values are rounded to bfloat16)."""
    dtype = str(dtype)
    values = np.asarray(values)
    if dtype == "bfloat16":
        return ct.cast(np.ascontiguousarray(values, dtype=np.float32), "bfloat16")
    with np.errstate(invalid="ignore", over="ignore"):
        return values.astype(dtype)


def to_numpy(t):
    """Copy a ctensor result (or any input) to a NumPy array; bfloat16 results
    come back as float32 (exact)."""
    if isinstance(t, np.ndarray):
        return t.copy()
    if str(t.dtype) == "bfloat16":
        out = np.empty(tuple(t.shape), np.float32)
        ct.cast(t, out=out)
        return out
    return np.array(np.asarray(t), copy=True)


def bf16_bits(values):
    """float64/float32 values -> their bfloat16 bit patterns as uint16."""
    return round_to_bf16(values).astype(np.float32).view(np.uint32).__rshift__(16).astype(np.uint16)


def strided_view(base_shape, kind, dtype, rng, lo=-5.0, hi=5.0):
    """A non-contiguous NumPy view of a fresh random array.

    kind: "contig", "T" (transpose), "step" (a[:, ::2]), "rev" (a[::-1]),
    "revstep" (a[::-1, ::-2]), "0d", "empty". Returns the view (and keeps
    the base alive through .base)."""
    dtype = str(dtype)
    if kind == "0d":
        return random_array(rng, (), dtype, lo, hi)
    if kind == "empty":
        return random_array(rng, (0, base_shape[-1]), dtype, lo, hi)
    if kind == "contig":
        return random_array(rng, base_shape, dtype, lo, hi)
    if kind == "T":
        a = random_array(rng, base_shape[::-1], dtype, lo, hi)
        v = a.T
    elif kind == "step":
        r, c = base_shape
        a = random_array(rng, (r, 2 * c), dtype, lo, hi)
        v = a[:, ::2]
    elif kind == "rev":
        a = random_array(rng, base_shape, dtype, lo, hi)
        v = a[::-1]
    elif kind == "revstep":
        r, c = base_shape
        a = random_array(rng, (r, 2 * c), dtype, lo, hi)
        v = a[::-1, ::-2]
    else:
        raise ValueError(kind)
    assert v.shape == tuple(base_shape)
    assert not v.flags.c_contiguous or v.size <= 1
    return v


def random_array(rng, shape, dtype, lo=-5.0, hi=5.0):
    """Random values of ``dtype`` (NumPy-native dtypes only; bfloat16 callers
    use float32 values + make_input)."""
    dtype = str(dtype)
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in I:
        info = np.iinfo(dtype)
        l = max(int(lo), int(info.min))
        h = min(int(hi), int(info.max))
        # endpoint=True: uint64's top is no int64
        return rng.integers(l, h, size=shape, dtype=np.uint64 if l >= 0 else np.int64, endpoint=True).astype(dtype)
    if dtype == "bfloat16":
        return rng.uniform(lo, hi, size=shape).astype(np.float32)
    return rng.uniform(lo, hi, size=shape).astype(dtype)


# ---------------------------------------------------------------------------
# comparisons
# ---------------------------------------------------------------------------

RTOL = {"float16": 1e-3, "bfloat16": 1e-2, "float32": 1e-5, "float64": 1e-12}
ATOL = {"float16": 1e-5, "bfloat16": 1e-5, "float32": 1e-6, "float64": 1e-13}


def _as_f64(a):
    a = np.asarray(a)
    if a.dtype == np.bool_ or a.dtype.kind in "iu":
        return a
    return a.astype(np.float64)


def assert_same(actual, expected, err_msg="", check_zero_sign=True):
    """Bit-exact comparison: equal values, NaN where NaN, the sign of zero."""
    a = _as_f64(actual)
    e = _as_f64(expected)
    assert a.shape == e.shape, f"shape {a.shape} != {e.shape} {err_msg}"
    if a.dtype.kind == "f" or e.dtype.kind == "f":
        a = a.astype(np.float64)
        e = e.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(a), np.isnan(e), err_msg=f"NaN mismatch {err_msg}")
        np.testing.assert_array_equal(a, e, err_msg=err_msg)
        if check_zero_sign:
            z = (e == 0)
            np.testing.assert_array_equal(np.signbit(a[z]), np.signbit(e[z]),
                                          err_msg=f"sign of zero {err_msg}")
    else:
        np.testing.assert_array_equal(a, e, err_msg=err_msg)


# ---------------------------------------------------------------------------
# a DLPack producer written with ctypes
# ---------------------------------------------------------------------------

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


DLPACK_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DLPACK_DELETER)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", DLPACK_DELETER), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


DLPACK_FLAG_BITMASK_READ_ONLY = 1

_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_PyCapsule_GetName = ctypes.pythonapi.PyCapsule_GetName
_PyCapsule_GetName.restype = ctypes.c_char_p
_PyCapsule_GetName.argtypes = [ctypes.py_object]

_CAPSULE_LEGACY = b"dltensor"
_CAPSULE_VERSIONED = b"dltensor_versioned"
# Everything a capsule points at stays alive for the whole session: a consumer
# may call the deleter late (or never), and freeing the structs under it would
# crash the interpreter instead of failing a test.
_KEEPALIVE = []


def capsule_name(capsule):
    return _PyCapsule_GetName(capsule).decode()


class DLPackProducer:
    """Exports ``base``'s memory through __dlpack__ with ctypes-made structs.

    base: a NumPy array; the DLTensor's data pointer is base's element [0,...]
    (``base.ctypes.data``), plus ``byte_offset``. shape/strides (in elements)
    default to base's. dtype: a ctensor dtype name (default: base's dtype;
    "bfloat16" over uint16 storage). versioned: produce "dltensor_versioned"
    when the consumer asks with max_version >= (1, 0) (else legacy), or a
    legacy capsule always when False. readonly sets the versioned READ_ONLY
    flag. with_deleter: a ctypes callback counting its calls in
    ``self.deleter_calls`` (else the deleter is NULL).
    """

    def __init__(self, base, *, shape=None, strides=None, byte_offset=0, dtype=None,
                 versioned=False, readonly=False, with_deleter=False):
        self.base = base
        self.shape = tuple(base.shape) if shape is None else tuple(shape)
        if strides is None:
            strides = tuple(s // base.itemsize for s in base.strides)
        self.strides = tuple(strides)
        self.byte_offset = byte_offset
        if dtype is None:
            dtype = {np.dtype(np.bool_): "bool"}.get(base.dtype, str(base.dtype))
        self.dtype = str(dtype)
        self.versioned = versioned
        self.readonly = readonly
        self.with_deleter = with_deleter
        self.deleter_calls = 0
        self.produced = []  # capsule names handed out
        self.calls = []     # kwargs of each __dlpack__ call

    def _deleter(self, ptr):
        self.deleter_calls += 1

    def __dlpack_device__(self):
        return (1, 0)

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.calls.append(dict(stream=stream, max_version=max_version,
                               dl_device=dl_device, copy=copy))
        if copy:
            raise BufferError("this producer never copies")
        nd = len(self.shape)
        shape = (ctypes.c_int64 * max(nd, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(nd, 1))(*self.strides)
        code, bits = DL_DTYPE[self.dtype]
        deleter = DLPACK_DELETER(self._deleter) if self.with_deleter else DLPACK_DELETER()
        use_versioned = self.versioned and max_version is not None and tuple(max_version)[0] >= 1
        if use_versioned:
            m = DLManagedTensorVersioned()
            m.version.major, m.version.minor = 1, 0
            m.flags = DLPACK_FLAG_BITMASK_READ_ONLY if self.readonly else 0
            name = _CAPSULE_VERSIONED
        else:
            m = DLManagedTensor()
            name = _CAPSULE_LEGACY
        t = m.dl_tensor
        t.data = self.base.ctypes.data
        t.device.device_type, t.device.device_id = 1, 0
        t.ndim = nd
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        t.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = self.byte_offset
        m.manager_ctx = None
        m.deleter = deleter
        _KEEPALIVE.append((m, shape, strides, deleter, self))
        self.produced.append(name.decode())
        return _PyCapsule_New(ctypes.addressof(m), name, None)


def bf16_view(values_f32, view=lambda a: a):
    """A strided bfloat16 input: ``values_f32`` rounded to bfloat16 bits in a
    uint16 array, ``view`` applied (e.g. lambda a: a[:, ::2]), exported as
    bfloat16 through DLPackProducer. Returns (producer, float32 values of the
    view after rounding)."""
    bits = bf16_bits(np.asarray(values_f32, np.float64))
    v = view(bits)
    prod = DLPackProducer(v, dtype="bfloat16")
    vals = (v.astype(np.uint32) << 16).view(np.float32)
    return prod, vals


# ---------------------------------------------------------------------------
# the C++ reference library (tests/reference), through ctypes
# ---------------------------------------------------------------------------

_CREF = None


def c_reference_lib():
    """The shared library ct_reference_c (path in CT_REFERENCE_LIB, set by ctest; else this checkout's default
    build tree), or None."""
    global _CREF
    if _CREF is None:
        path = os.environ.get("CT_REFERENCE_LIB") or os.path.join(
            _tests_dir, "..", "..", "..", "build", "tests", "reference", "libct_reference_c.so")
        _CREF = False
        if path and os.path.exists(path):
            lib = ctypes.CDLL(path)
            lib.ctref_c_run.restype = ctypes.c_int
            _CREF = lib
    return _CREF or None


def c_reference(op_id, in_dtypes, inputs, params, out_dtype, out_shape):
    """The reference result of registry op ``op_id`` (unary, unary_param, ternary, cast or binary) from the one
    C++ reference library the Catch2 suites and ``ctensor check`` use: inputs are stored values in the reference
    domain (float64 for float dtypes, else int64: uint64 values as their bits), one dtype name each; returns
    float64 (exact, not rounded to ``out_dtype``) or int64 values (wrapped to ``out_dtype``; uint64 as uint64)
    of ``out_shape``. Fails the test when the library is not there or refuses the call."""
    lib = c_reference_lib()
    if lib is None:
        pytest.fail("CT_REFERENCE_LIB does not name the ct_reference_c library (run through ctest)")
    n = len(inputs)
    arrs = [np.array(x, np.float64 if d in F else np.int64, order="C") for x, d in zip(inputs, in_dtypes)]  # 0-d too
    shapes = [np.asarray(a.shape, np.int64) for a in arrs]
    out = np.zeros(tuple(out_shape), np.float64 if str(out_dtype) in F else np.int64)
    oshape = np.asarray(out.shape, np.int64)
    p = np.asarray(params, np.float64)
    why = ctypes.create_string_buffer(512)
    i64p = ctypes.POINTER(ctypes.c_int64)
    ok = lib.ctref_c_run(
        ctypes.c_int32(op_id), ctypes.c_int32(n),
        (ctypes.c_int32 * n)(*[ALL_DTYPES.index(str(d)) for d in in_dtypes]),
        (ctypes.c_int32 * n)(*[a.ndim for a in arrs]),
        (i64p * n)(*[s.ctypes.data_as(i64p) for s in shapes]),
        (ctypes.c_void_p * n)(*[a.ctypes.data for a in arrs]),
        p.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ctypes.c_int32(p.size),
        ctypes.c_int32(ALL_DTYPES.index(str(out_dtype))), ctypes.c_int32(out.ndim), oshape.ctypes.data_as(i64p),
        ctypes.c_void_p(out.ctypes.data), why, ctypes.c_int32(len(why)))
    assert ok == 1, f"C++ reference of op {op_id}: {why.value.decode()}"
    return out.view(np.uint64) if str(out_dtype) == "uint64" else out


# ---------------------------------------------------------------------------
# fixtures
# ---------------------------------------------------------------------------

@pytest.fixture
def rng():
    return np.random.default_rng(12345)

