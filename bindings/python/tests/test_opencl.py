"""The OpenCL backend module from Python: tensors on "opencl:0", moves to and
from the CPU, ops on OpenCL tensors returning OpenCL tensors, against NumPy.

Runs where the library loaded libctensor_opencl and found a device (PoCL
runs OpenCL on the CPU in CI); elsewhere every test here is skipped with the
reason, never passed.
"""
import numpy as np
import pytest

import ctensor as ct

CL = "opencl:0"
pytestmark = pytest.mark.skipif(
    CL not in {str(d) for d in ct.devices()},
    reason="no OpenCL device: libctensor_opencl did not load or found no platform (install pocl-opencl-icd)",
)


def host(t):
    assert t.device == CL
    back = t.to("cpu")
    assert back.device == "cpu"
    return np.asarray(back)


def test_empty_and_round_trip(rng):
    x = ct.empty((3, 4), "float32", device=CL)
    assert x.device == CL and x.shape == (3, 4) and x.dtype == "float32"
    a = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
    g = ct.copy(a, CL)
    assert g.device == CL
    np.testing.assert_array_equal(host(g), a)
    # a strided host array goes up and comes back as it was
    s = ct.copy(a[:, ::-2], CL)
    np.testing.assert_array_equal(host(s), a[:, ::-2])
    # and a dtype change on the way
    i = ct.neg(a).to(CL, "int32")
    np.testing.assert_array_equal(host(i), (-a).astype(np.int32))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64", "uint8", "bool", "float16"])
def test_ops_stay_on_the_device(rng, dtype):
    a = (rng.uniform(-3, 3, (6, 5)) * 10).astype(dtype)
    b = (rng.uniform(-3, 3, (1, 5)) * 10).astype(dtype)
    ga, gb = ct.copy(a, CL), ct.copy(b, CL)
    r = ct.add(ga, gb)
    assert r.device == CL and r.dtype == dtype
    np.testing.assert_array_equal(host(r), a + b)
    m = ct.maximum(ga, gb)
    np.testing.assert_array_equal(host(m), np.maximum(a, b))
    eq = ct.equal(ga, gb)
    assert eq.dtype == "bool"
    np.testing.assert_array_equal(host(eq), a == b)
    if dtype != "bool":
        s = ct.sum(ga, axis=0)
        assert s.device == CL
        np.testing.assert_allclose(host(s), a.sum(axis=0), rtol=2e-3 if dtype == "float16" else 1e-6)
    am = ct.argmax(ga, axis=1)
    np.testing.assert_array_equal(host(am), a.argmax(axis=1))


def test_float_ops_match_numpy(rng):
    a = rng.uniform(-2, 2, (64, 33)).astype(np.float32)
    g = ct.copy(a, CL)
    np.testing.assert_allclose(host(ct.exp(g)), np.exp(a), rtol=2e-6)
    np.testing.assert_allclose(host(ct.tanh(g)), np.tanh(a), rtol=2e-6, atol=1e-7)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    np.testing.assert_allclose(host(ct.softmax(g, axis=1)), e / e.sum(axis=1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(host(ct.cumsum(g, axis=0)), np.cumsum(a, axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(host(ct.var(g, axis=1)), a.var(axis=1), rtol=1e-5)
    out = ct.empty((64, 33), "float32", device=CL)
    r = ct.mul(g, g, out=out)
    assert r is out or r.device == CL
    np.testing.assert_array_equal(host(out), a * a)


def test_matmul_with_bias_and_activation(rng):
    a = rng.uniform(-1, 1, (2, 9, 17)).astype(np.float32)
    b = rng.uniform(-1, 1, (17, 11)).astype(np.float32)
    bias = rng.uniform(-1, 1, (11,)).astype(np.float32)
    ga, gb, gbias = ct.copy(a, CL), ct.copy(b, CL), ct.copy(bias, CL)
    r = ct.matmul(ga, gb, bias=gbias, activation="relu")
    assert r.device == CL and r.shape == (2, 9, 11)
    np.testing.assert_allclose(host(r), np.maximum(a @ b + bias, 0), rtol=1e-5, atol=1e-5)
    # without bias and activation (transposed operands are strided views, which Python
    # cannot make on a device: ctensor check and the C suites cover them)
    r2 = ct.matmul(ga, gb)
    np.testing.assert_allclose(host(r2), a @ b, rtol=1e-5, atol=1e-5)


def test_unsupported_says_why():
    g = ct.empty((4,), "float32", device=CL)
    assert ct.supported("exp", "float32", CL)
    assert not ct.supported("matmul", "float16", CL)
    with pytest.raises(NotImplementedError, match="opencl"):
        ct.matmul(ct.empty((2, 2), "float16", device=CL), ct.empty((2, 2), "float16", device=CL))
    # data on OpenCL is a cl_mem, not host memory: NumPy cannot view it
    with pytest.raises((BufferError, TypeError, RuntimeError, ValueError)):
        np.from_dlpack(g)


@pytest.mark.parametrize("groups,stride,padding,dilation", [(1, 1, 0, 1), (2, 2, (1, 0, 2, 1), 1), (4, 1, 1, 2)])
def test_conv2d_and_backward_match_the_cpu(rng, groups, stride, padding, dilation):
    x = rng.uniform(-1, 1, (2, 4, 9, 8)).astype(np.float32)
    w = rng.uniform(-1, 1, (6 if groups != 4 else 8, 4 // groups, 3, 2)).astype(np.float32)
    bias = rng.uniform(-1, 1, (w.shape[0],)).astype(np.float32)
    kw = dict(stride=stride, padding=padding, dilation=dilation, groups=groups)
    y_cpu = np.asarray(ct.conv2d(x, w, bias, activation="gelu", **kw))
    gx, gw, gb = ct.copy(x, CL), ct.copy(w, CL), ct.copy(bias, CL)
    y = ct.conv2d(gx, gw, gb, activation="gelu", **kw)
    assert y.device == CL
    np.testing.assert_allclose(host(y), y_cpu, rtol=1e-4, atol=1e-4)
    dy = rng.uniform(-1, 1, y_cpu.shape).astype(np.float32)
    gdy = ct.copy(dy, CL)
    dx_cpu = np.asarray(ct.conv2d_backward_data(dy, w, x.shape, **kw))
    np.testing.assert_allclose(host(ct.conv2d_backward_data(gdy, gw, x.shape, **kw)), dx_cpu, rtol=1e-4, atol=1e-4)
    dw_cpu, db_cpu = ct.conv2d_backward_weight(x, dy, w.shape, bias=True, **kw)
    dw, db = ct.conv2d_backward_weight(gx, gdy, w.shape, bias=True, **kw)
    np.testing.assert_allclose(host(dw), np.asarray(dw_cpu), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(host(db), np.asarray(db_cpu), rtol=1e-4, atol=1e-4)


def test_pooling_and_norms_match_the_cpu(rng):
    x = rng.uniform(-1, 1, (2, 3, 9, 7)).astype(np.float32)
    gx = ct.copy(x, CL)
    for fn, kw in [(ct.max_pool2d, dict(kernel_size=3, stride=2, padding=1)),
                   (ct.avg_pool2d, dict(kernel_size=(2, 3), stride=(2, 1)))]:
        np.testing.assert_allclose(host(fn(gx, **kw)), np.asarray(fn(x, **kw)), rtol=1e-5, atol=1e-6)
    scale = rng.uniform(0.5, 1.5, (7,)).astype(np.float32)
    shift = rng.uniform(-1, 1, (7,)).astype(np.float32)
    y_cpu = np.asarray(ct.layer_norm(x, (7,), scale, shift))
    y = ct.layer_norm(gx, (7,), ct.copy(scale, CL), ct.copy(shift, CL))
    np.testing.assert_allclose(host(y), y_cpu, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_float8_on_opencl_gives_the_cpus_bits(rng, dtype):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = rng.uniform(-8, 8, (3, 257)).astype(np.float32).astype(getattr(ml_dtypes, dtype))
    g = ct.copy(x, CL)
    for got, want in ((ct.exp(g), ct.exp(x)), (ct.sum(g, axis=1), ct.sum(x, axis=1)), (ct.add(g, g), ct.add(x, x))):
        np.testing.assert_array_equal(np.asarray(host(got)).view(np.uint8), np.asarray(want).view(np.uint8))


def test_views_of_more_dims_than_the_kernels_walk():
    # 11 dims reversed: no two merge, more than the 8 a GPU kernel's geometry holds. This used to write past
    # the host's geometry struct (wrong results, memory corruption). Now elementwise ops and copies run as a
    # call per index of the outer dims; reductions and along-axis ops refuse with the reason, out untouched.
    a = np.random.default_rng(0).random([2] * 11).astype(np.float32)
    g = ct.copy(a, CL)
    rev = tuple(range(10, -1, -1))
    gv = g.permute(*rev)
    want = a.transpose(rev)
    np.testing.assert_allclose(host(ct.exp(gv)), np.exp(want), rtol=1e-6)
    np.testing.assert_array_equal(host(ct.add(gv, gv)), want + want)
    np.testing.assert_array_equal(host(ct.copy(gv)), want)
    np.testing.assert_array_equal(np.asarray(gv.to("cpu")), want)
    out = ct.copy(np.full([2] * 11, 7, np.float32), CL)
    for call in (lambda: ct.cumsum(gv, 0, out=out), lambda: ct.sum(gv, axis=(1,), keepdims=True, out=out[:, :1])):
        with pytest.raises(NotImplementedError, match="walk at most 8 dims"):
            call()
    assert (host(out) == 7).all()


def _attention_np(q, k, v, mask=None, causal=False):
    """scaled_dot_product_attention in float64: a row with no key left gives 0."""
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if mask is not None:
        s = s + (np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask.astype(np.float64))
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    mx = s.max(axis=-1, keepdims=True)
    w = np.exp(s - np.where(np.isfinite(mx), mx, 0.0))
    den = w.sum(axis=-1, keepdims=True)
    return np.where(den > 0, (w @ v) / np.where(den > 0, den, 1.0), 0.0)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_attention_runs_on_the_device_and_matches(rng, dtype):
    # the fused op itself on OpenCL (the kernel both GPU modules run): causal, a bool mask with a row whose
    # every key is masked (0), a broadcast additive mask, a transposed query, 40 output columns (two blocks
    # of 32), a NaN score making its row NaN
    from ctensor import _nn
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == "float32" else dict(rtol=2e-2, atol=2e-2)
    q = rng.standard_normal((2, 3, 37, 16)).astype(np.float32)
    k = rng.standard_normal((2, 3, 45, 16)).astype(np.float32)
    v = rng.standard_normal((2, 3, 45, 40)).astype(np.float32)
    on = lambda a: ct.copy(a, CL).to(CL, dtype)  # noqa: E731
    back = lambda t: np.asarray(t.to("cpu", "float32"))  # noqa: E731
    # the values the device sees (rounded to dtype)
    qr, kr, vr = (back(on(a)) for a in (q, k, v))
    (y,) = _nn._run("scaled_dot_product_attention", [on(q), on(k), on(v), None], [True], {"causal": 0, "scale": 0.0})
    assert y.device == CL and y.dtype == dtype and y.shape == (2, 3, 37, 40)
    np.testing.assert_allclose(back(y), _attention_np(qr, kr, vr), **tol)
    yc = ct.scaled_dot_product_attention(on(q), on(k[:, :, :37]), on(v[:, :, :37]), is_causal=True)
    np.testing.assert_allclose(back(yc), _attention_np(qr, kr[:, :, :37], vr[:, :, :37], causal=True), **tol)
    m = rng.random((37, 45)) > 0.5
    m[5] = False
    ym = back(ct.scaled_dot_product_attention(on(q), on(k), on(v), attn_mask=ct.copy(m, CL)))
    np.testing.assert_allclose(ym, _attention_np(qr, kr, vr, mask=m), **tol)
    assert (ym[:, :, 5] == 0).all()
    fm = rng.standard_normal((3, 1, 45)).astype(np.float32)
    yf = ct.scaled_dot_product_attention(on(q), on(k), on(v), attn_mask=ct.copy(fm, CL))
    np.testing.assert_allclose(back(yf), _attention_np(qr, kr, vr, mask=fm), **tol)
    qt = ct.copy(np.ascontiguousarray(np.swapaxes(q, -1, -2)), CL).to(CL, dtype).mT  # a strided query
    np.testing.assert_allclose(back(ct.scaled_dot_product_attention(qt, on(k), on(v))), back(y), rtol=1e-6, atol=0)
    qn = q.copy()
    qn[1, 2, 4, 0] = np.nan
    yn = back(ct.scaled_dot_product_attention(on(qn), on(k), on(v)))
    nan_rows = np.zeros((2, 3, 37, 40), bool)
    nan_rows[1, 2, 4] = True
    np.testing.assert_array_equal(np.isnan(yn), nan_rows)
