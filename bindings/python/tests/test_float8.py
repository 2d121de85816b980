"""The float8 dtypes (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz) through Python: ml_dtypes
arrays in and out, casts bit for bit against ml_dtypes (every code of every format, ties, overflow), ONNX's
saturating cast, and ops computed in float32 as ml_dtypes computes them.
"""
import numpy as np
import pytest

import ctensor as ct
from conftest import DLPackProducer

ml_dtypes = pytest.importorskip("ml_dtypes", reason="ml_dtypes not installed: float8 arrays cannot be made")

F8 = ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"]


def _f8(name):
    return np.dtype(getattr(ml_dtypes, name))


def _all_codes(name):
    """Every code of the format, as an ml_dtypes array."""
    return np.arange(256, dtype=np.uint8).view(_f8(name))


def _bits(a):
    return np.asarray(a).view(np.uint8)


def _same_f8(got, want):
    """Equal codes, except that any NaN code matches any NaN."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    gn, wn = np.isnan(got.astype(np.float32)), np.isnan(want.astype(np.float32))
    np.testing.assert_array_equal(gn, wn)
    np.testing.assert_array_equal(_bits(got)[~wn], _bits(want)[~wn])


@pytest.mark.parametrize("name", F8)
def test_dtype_objects_and_names(name):
    d = getattr(ct, name)
    assert isinstance(d, ct.DType) and str(d) == name and d.itemsize == 1
    assert d == _f8(name)  # an ml_dtypes NumPy dtype names the same dtype
    t = ct.empty((3,), name)
    assert t.dtype == name and t.nbytes == 3


@pytest.mark.parametrize("name", F8)
def test_every_code_decodes_exactly(name):
    x = _all_codes(name)
    got = ct.cast(x, "float32").numpy()
    want = x.astype(np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))  # -0 stays -0


def _finite_sorted(name):
    v = _all_codes(name).astype(np.float64)
    return np.unique(v[np.isfinite(v)])


@pytest.mark.parametrize("name", F8)
@pytest.mark.parametrize("src", ["float32", "float64", "float16"])
def test_cast_rounds_as_ml_dtypes(name, src, rng):
    # every code, the midpoints between neighbours (ties to even), float32 values just off them, beyond the
    # range, subnormals, both zeros, infinities and NaN; all exact in float32 (ml_dtypes converts float64
    # through float32, which rounds twice: the single rounding is checked below)
    vals = _finite_sorted(name).astype(np.float32)
    mids = (vals[1:] + vals[:-1]) / 2
    mx = float(vals[-1])
    extra = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, mx * 1.01, -mx * 1.01, mx * 1.2, 1e30, -1e30, 1e-30],
                     np.float32)
    x = np.concatenate([vals, mids, np.nextafter(mids, np.float32(np.inf)), np.nextafter(mids, np.float32(-np.inf)),
                        extra, rng.uniform(-2 * mx, 2 * mx, 1000).astype(np.float32),
                        rng.uniform(-1, 1, 1000).astype(np.float32)])
    with np.errstate(over="ignore"):  # float16 has no room for e5m2's top: those become inf, also a case
        x = x.astype(src)
    got = ct.cast(x, name).numpy()
    _same_f8(got, x.astype(np.float32).astype(_f8(name)))


@pytest.mark.parametrize("name", F8)
def test_cast_from_float64_rounds_once(name):
    # a float64 just off a midpoint goes to the nearer neighbour (through float32 it would become the tie)
    vals = _finite_sorted(name)
    vals = vals[vals > 0]
    lo, hi = vals[:-1], vals[1:]
    mids = (lo + hi) / 2
    up = ct.cast(np.nextafter(mids, np.inf), name).numpy().astype(np.float64)
    down = ct.cast(np.nextafter(mids, -np.inf), name).numpy().astype(np.float64)
    np.testing.assert_array_equal(up, hi)
    np.testing.assert_array_equal(down, lo)


@pytest.mark.parametrize("name", F8)
def test_cast_from_integers_rounds_once(name):
    x = np.array([0, 1, -1, 3, 17, 19, 21, 200, 239, 240, 247, 248, 255, 448, 464, 465, 480, 1000, 57344, 61439,
                  61440, 2 ** 40 + 1, -(2 ** 40) - 1, 2 ** 62 + 2 ** 40], np.int64)
    got = ct.cast(x, name).numpy()
    _same_f8(got, x.astype(np.float64).astype(_f8(name)))
    u = np.array([0, 7, 255, 2 ** 64 - 1], np.uint64)
    _same_f8(ct.cast(u, name).numpy(), u.astype(np.float64).astype(_f8(name)))


@pytest.mark.parametrize("name", F8)
def test_saturating_cast(name):
    fin = _all_codes(name).astype(np.float64)
    mx = float(np.nanmax(fin[np.isfinite(fin)]))
    x = np.array([mx, mx * 1.2, mx * 4, np.inf, -np.inf, -mx * 3, 1.5, -0.0, np.nan], np.float32)
    got = ct.cast(x, name, saturate=True).numpy().astype(np.float32)
    want = np.array([mx, mx, mx, mx, -mx, -mx, 1.5, 0.0, np.nan], np.float32)
    np.testing.assert_array_equal(got, want)
    # without saturate: inf (e5m2) or NaN (formats without an infinity)
    plain = ct.cast(x, name).numpy().astype(np.float32)
    over = np.inf if name == "float8_e5m2" else np.nan
    np.testing.assert_array_equal(plain[1:4], np.array([over] * 3, np.float32))
    with pytest.raises(TypeError):
        ct.cast(x, name, True)  # saturate is keyword-only


@pytest.mark.parametrize("name", F8)
def test_ops_compute_in_float32(name, rng):
    d = _f8(name)
    a = rng.uniform(-8, 8, (7, 13)).astype(d)
    b = rng.uniform(-8, 8, (13,)).astype(d)
    # exact in float32, then rounded once: the same codes as ml_dtypes' ufuncs
    for ours, theirs in [(ct.add, np.add), (ct.multiply, np.multiply), (ct.subtract, np.subtract),
                         (ct.maximum, np.maximum)]:
        _same_f8(ours(a, b).numpy(), theirs(a, b))
    _same_f8(ct.neg(a).numpy(), -a)
    _same_f8(ct.abs(a).numpy(), np.abs(a))
    assert ct.less(a, b).numpy().tolist() == (a < b).tolist()
    # functions: within one code of the exact value (computed in float32, rounded once)
    x8 = rng.uniform(-3, 3, 200).astype(d)
    got = ct.exp(x8).numpy().astype(np.float64)
    ref = np.exp(x8.astype(np.float64))
    np.testing.assert_allclose(got, ref, rtol=2.0 ** -3 if "e4m3" in name else 2.0 ** -2)


@pytest.mark.parametrize("name", F8)
def test_reductions(name, rng):
    d = _f8(name)
    x = rng.uniform(-4, 4, (6, 50)).astype(d)
    xf = x.astype(np.float64)
    s = ct.sum(x, axis=1)
    assert s.dtype == name  # float sums keep the dtype (NumPy's rule), accumulated in float64
    _same_f8(s.numpy(), xf.sum(axis=1).astype(d))
    _same_f8(ct.max(x, axis=0).numpy(), xf.max(axis=0).astype(d))
    np.testing.assert_array_equal(ct.argmax(x, axis=1).numpy(), xf.argmax(axis=1))
    m = ct.mean(x).numpy().astype(np.float64)
    assert abs(m - xf.mean()) <= 0.13 * abs(xf.mean()) + 2 ** -6
    sm = ct.softmax(x, axis=1).numpy().astype(np.float64)
    np.testing.assert_allclose(sm.sum(axis=1), 1.0, rtol=0.3)


def test_ml_dtypes_arrays_in_place_and_strided(rng):
    a = rng.uniform(-4, 4, (8, 10)).astype(ml_dtypes.float8_e4m3fn)
    v = a[::2, 1::3]  # a strided view of an ml_dtypes array: read in place
    r = ct.relu(v)
    _same_f8(r.numpy(), np.maximum(v, 0).astype(v.dtype))
    ct.neg(a, out=a)  # out= an ml_dtypes array: written in place
    assert (a.astype(np.float32) <= 4).all()


def test_float8_in_nn_ops_is_refused_with_a_reason():
    x = np.zeros((2, 3), ml_dtypes.float8_e4m3fn)
    assert not ct.supported("matmul", "float8_e4m3fn")
    with pytest.raises((TypeError, NotImplementedError)) as e:
        ct.matmul(x, x.T)
    assert "float8_e4m3fn" in str(e.value)
    assert ct.supported("exp", "float8_e5m2") and ct.supported("sum", "float8_e4m3fnuz")


@pytest.mark.parametrize("name", F8)
def test_dlpack_float8_codes_in_and_out(name):
    # what torch's float8 tensors export: DLPack 1.3's float8 type codes over one byte per element
    codes = np.array([0x38, 0x40, 0xb8, 0x00], np.uint8)  # 1, 2, -1, 0 in e4m3fn (other values elsewhere)
    p = DLPackProducer(codes, dtype=name, versioned=True)
    r = ct.add(p, p)
    assert r.dtype == name
    want = codes.view(_f8(name)).astype(np.float32) * 2
    np.testing.assert_array_equal(r.numpy().astype(np.float32), want.astype(_f8(name)).astype(np.float32))
    assert r.__dlpack_device__() == (1, 0)
    cap = r.__dlpack__(max_version=(1, 3))
    assert cap is not None  # the consumer gets the same code back (NumPy itself cannot take float8: ml_dtypes view)
