"""PyTorch and JAX interop: their arrays as inputs (views, bfloat16), as out=,
and ctensor results imported back with their from_dlpack. Results are
compared with the frameworks' own ops.

Each framework is optional: its tests are skipped, with a message saying so,
when it is not installed.
"""
import math
from unittest import mock

import numpy as np
import pytest

import ctensor as ct
from conftest import to_numpy


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="PyTorch not installed: torch interop tests skipped")


@pytest.fixture(scope="module")
def jax_np():
    pytest.importorskip("jax", reason="JAX not installed: jax interop tests skipped")
    import jax.numpy as jnp
    return jnp


# ---------------------------------------------------------------------------
# PyTorch
# ---------------------------------------------------------------------------

def test_torch_inputs_match_torch_ops(torch):
    g = torch.Generator().manual_seed(0)
    x = torch.rand((4, 6), generator=g) * 4 - 2
    y = torch.rand((4, 6), generator=g) * 4 - 2
    for a, b in [(x, y), (x.T, y.T), (x[:, ::2], y[:, 1::2]), (x[1:], y[:-1]), (x[0], y[:, 0:6:1][1])]:
        assert torch.equal(torch.from_dlpack(ct.add(a, b)), a + b)
        assert torch.equal(torch.from_dlpack(ct.mul(a, b)), a * b)
        assert torch.equal(torch.from_dlpack(ct.maximum(a, b)), torch.maximum(a, b))
        assert torch.equal(torch.from_dlpack(ct.less(a, b)), a < b)
        torch.testing.assert_close(torch.from_dlpack(ct.exp(a)), torch.exp(a), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(torch.from_dlpack(ct.tanh(a)), torch.tanh(a), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(torch.from_dlpack(ct.gelu(a)), torch.nn.functional.gelu(a), rtol=1e-5,
                                   atol=1e-6)
        torch.testing.assert_close(torch.from_dlpack(ct.gelu(a, approximate="tanh")),
                                   torch.nn.functional.gelu(a, approximate="tanh"), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(torch.from_dlpack(ct.sigmoid(a)), torch.sigmoid(a), rtol=1e-5, atol=1e-6)
        torch.testing.assert_close(torch.from_dlpack(ct.silu(a)), torch.nn.functional.silu(a), rtol=1e-5,
                                   atol=1e-6)
    torch.testing.assert_close(torch.from_dlpack(ct.sum(x, axis=1)), torch.sum(x, dim=1), rtol=1e-6, atol=1e-6)
    torch.testing.assert_close(torch.from_dlpack(ct.mean(x.T, axis=0)), torch.mean(x.T, dim=0), rtol=1e-6,
                               atol=1e-6)
    torch.testing.assert_close(torch.from_dlpack(ct.softmax(x, axis=0)), torch.softmax(x, dim=0), rtol=1e-5,
                               atol=1e-7)
    torch.testing.assert_close(torch.from_dlpack(ct.log_softmax(x, axis=1)), torch.log_softmax(x, dim=1),
                               rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(torch.from_dlpack(ct.var(x, axis=1, correction=1)), torch.var(x, dim=1),
                               rtol=1e-5, atol=1e-6)
    assert torch.equal(torch.from_dlpack(ct.argmax(x, axis=1)), torch.argmax(x, dim=1))
    torch.testing.assert_close(torch.from_dlpack(ct.cumsum(x, axis=1)), torch.cumsum(x, dim=1), rtol=1e-5,
                               atol=1e-6)
    torch.testing.assert_close(torch.from_dlpack(ct.logsumexp(x, axis=1)), torch.logsumexp(x, dim=1),
                               rtol=1e-5, atol=1e-6)
    xi = torch.randint(-50, 50, (5, 4), generator=g, dtype=torch.int32)
    yi = torch.randint(1, 9, (5, 4), generator=g, dtype=torch.int32)
    assert torch.equal(torch.from_dlpack(ct.floor_div(xi, yi)), torch.floor_divide(xi, yi))
    assert torch.equal(torch.from_dlpack(ct.mod(xi, yi)), torch.remainder(xi, yi))
    assert torch.equal(torch.from_dlpack(ct.sum(xi, axis=0)), torch.sum(xi, dim=0))  # int64 like torch
    b = xi > 0
    assert torch.equal(torch.from_dlpack(ct.logical_not(b)), ~b)


def test_torch_out_sees_the_write(torch):
    x = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    out = torch.zeros(3, 4)
    r = ct.neg(x, out=out)
    assert torch.equal(out, -x)
    assert r is out
    # a non-contiguous out view: the gaps stay untouched
    buf = torch.full((3, 8), 7.0)
    ct.add(x, x, out=buf[:, ::2])
    assert torch.equal(buf[:, ::2], 2 * x)
    assert torch.equal(buf[:, 1::2], torch.full((3, 4), 7.0))
    buf2 = torch.full((4, 3), 7.0)
    ct.mul_scalar(x, 3.0, out=buf2.T)
    assert torch.equal(buf2.T, 3 * x)
    # in place on a torch tensor
    y = x.clone()
    ct.square(y, out=y)
    assert torch.equal(y, x * x)
    # dtype mismatch with a torch out
    with pytest.raises(TypeError):
        ct.neg(x, out=torch.zeros(3, 4, dtype=torch.float64))


def test_torch_from_dlpack_shares_memory(torch):
    r = ct.add(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    t = torch.from_dlpack(r)
    assert t.shape == (2, 3) and t.dtype == torch.float32
    t[0, 1] = 42.0
    assert np.asarray(r)[0, 1] == 42.0
    np.from_dlpack(r)[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    # a tensor result of every torch-representable dtype
    for name, tdt in [("int8", torch.int8), ("uint8", torch.uint8), ("int64", torch.int64), ("bool", torch.bool),
                      ("float16", torch.float16), ("bfloat16", torch.bfloat16), ("float64", torch.float64)]:
        e = ct.cast(np.arange(4, dtype=np.float32) % 2, name)
        te = torch.from_dlpack(e)
        assert te.dtype == tdt
        assert torch.equal(te.to(torch.float32), torch.tensor([0.0, 1.0, 0.0, 1.0]))


def test_torch_bfloat16_and_float16(torch):
    g = torch.Generator().manual_seed(1)
    x = (torch.rand((5, 8), generator=g) * 4 - 2).to(torch.bfloat16)
    y = (torch.rand((5, 8), generator=g) * 4 - 2).to(torch.bfloat16)
    for a, b in [(x, y), (x.T, y.T), (x[:, ::2], y[:, ::2])]:
        r = ct.add(a, b)
        assert r.dtype == "bfloat16"
        assert torch.equal(torch.from_dlpack(r), a + b)  # one rounding of the float32 sum, as torch
        assert torch.equal(torch.from_dlpack(ct.mul(a, b)), a * b)
        torch.testing.assert_close(torch.from_dlpack(ct.exp(a)), torch.exp(a), rtol=1e-2, atol=1e-5)
    out = torch.zeros((5, 8), dtype=torch.bfloat16)
    ct.sub(x, y, out=out)
    assert torch.equal(out, x - y)
    # float32 <-> bfloat16 casts agree with torch's rounding
    f = torch.randn(1000, generator=g) * 100
    assert torch.equal(torch.from_dlpack(ct.cast(f, torch.bfloat16)), f.to(torch.bfloat16))
    assert torch.equal(torch.from_dlpack(ct.astype(f, "float16")), f.to(torch.float16))
    h = f.to(torch.float16)
    assert torch.equal(torch.from_dlpack(ct.neg(h)), -h)
    # NN in bfloat16: where this CPU has the kernels (oneDNN 2.6: AVX-512), else refused naming the dtype
    a = (torch.rand((3, 16), generator=g) - 0.5).to(torch.bfloat16)
    w = (torch.rand((16, 4), generator=g) - 0.5).to(torch.bfloat16)
    if ct.supported("matmul", "bfloat16"):
        torch.testing.assert_close(torch.from_dlpack(ct.matmul(a, w)).float(), (a.float() @ w.float()),
                                   rtol=2e-2, atol=2e-2)
    else:
        with pytest.raises(NotImplementedError, match="bfloat16"):
            ct.matmul(a, w)


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"])
def test_torch_float8_through_dlpack(torch, name):
    # torch's float8 tensors in and out through DLPack (codes 10-13), every
    # value computed in float32 and rounded once, as torch rounds its float32
    # result; a cast from float32 into torch's dtype gives torch's own bits.
    tdt = getattr(torch, name)
    g = torch.Generator().manual_seed(5)
    a = ((torch.rand(257, generator=g) - 0.5) * 8).to(tdt)
    b = ((torch.rand(257, generator=g) - 0.5) * 8).to(tdt)
    r = ct.add(a, b)
    assert r.dtype == name
    back = torch.from_dlpack(r)
    assert back.dtype == tdt
    want = (a.float() + b.float()).to(tdt)
    assert torch.equal(back.view(torch.uint8), want.view(torch.uint8))
    want = (a.float() * b.float()).to(tdt)
    assert torch.equal(torch.from_dlpack(ct.mul(a, b)).view(torch.uint8), want.view(torch.uint8))
    f = (torch.rand(300, generator=g) - 0.5) * 20
    assert torch.equal(torch.from_dlpack(ct.cast(f, tdt)).view(torch.uint8), f.to(tdt).view(torch.uint8))
    # a reduction: the sum, computed wide and rounded once to the float8 dtype
    # (within one float8 rounding of the exact sum: 2 or 3 mantissa bits)
    total = torch.from_dlpack(ct.sum(a))
    assert total.dtype == tdt
    assert float(total.float()) == pytest.approx(float(a.double().sum()), rel=0.13, abs=1e-3)


def test_torch_nn_ops_match_torch(torch):
    F = torch.nn.functional
    g = torch.Generator().manual_seed(2)
    x = torch.randn((2, 4, 9, 8), generator=g)
    w = torch.randn((6, 2, 3, 3), generator=g)
    b = torch.randn((6,), generator=g)
    for stride, padding, dilation in [(1, 1, 1), (2, 0, 1), ((2, 1), (1, 2), (2, 1)), (1, "same", 2)]:
        want = F.conv2d(x, w, b, stride, padding, dilation, groups=2)
        got = torch.from_dlpack(ct.conv2d(x, w, b, stride, padding, dilation, groups=2))
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)
    # NHWC (channels_last) input
    xc = x.contiguous(memory_format=torch.channels_last)
    torch.testing.assert_close(torch.from_dlpack(ct.conv2d(xc, w, b, padding=1, groups=2)),
                               F.conv2d(x, w, b, padding=1, groups=2), rtol=1e-4, atol=1e-4)
    # out= a channels_last torch tensor
    out = torch.empty((2, 6, 9, 8)).contiguous(memory_format=torch.channels_last)
    ct.conv2d(x, w, b, padding=1, groups=2, activation="relu", out=out)
    torch.testing.assert_close(out, F.relu(F.conv2d(x, w, b, padding=1, groups=2)), rtol=1e-4, atol=1e-4)
    # backward ops against autograd
    xr = x.clone().requires_grad_(True)
    wr = w.clone().requires_grad_(True)
    y = F.conv2d(xr, wr, None, 2, 1, 1, 2)
    dy = torch.randn(y.shape, generator=g)
    y.backward(dy)
    dx = torch.from_dlpack(ct.conv2d_backward_data(dy, w, tuple(x.shape), 2, 1, 1, 2))
    dw, db = ct.conv2d_backward_weight(x, dy, tuple(w.shape), 2, 1, 1, 2, bias=True)
    torch.testing.assert_close(dx, xr.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(torch.from_dlpack(dw), wr.grad, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(torch.from_dlpack(db), dy.sum(dim=(0, 2, 3)), rtol=1e-4, atol=1e-4)
    # pooling and norms
    yt, it = F.max_pool2d(x, 3, 2, 1, return_indices=True)
    y, i = ct.max_pool2d(x, 3, 2, 1, return_indices=True)
    assert torch.equal(torch.from_dlpack(y), yt) and torch.equal(torch.from_dlpack(i), it)
    torch.testing.assert_close(torch.from_dlpack(ct.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
                               F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), rtol=1e-5, atol=1e-6)
    ln_w, ln_b = torch.randn((9, 8), generator=g), torch.randn((9, 8), generator=g)
    torch.testing.assert_close(torch.from_dlpack(ct.layer_norm(x, (9, 8), ln_w, ln_b)),
                               F.layer_norm(x, (9, 8), ln_w, ln_b), rtol=1e-4, atol=1e-4)
    lin_w, lin_b = torch.randn((5, 8), generator=g), torch.randn((5,), generator=g)
    torch.testing.assert_close(torch.from_dlpack(ct.linear(x, lin_w, lin_b)), F.linear(x, lin_w, lin_b),
                               rtol=1e-4, atol=1e-4)
    a, m = torch.randn((3, 5, 7), generator=g), torch.randn((7, 2), generator=g)
    torch.testing.assert_close(torch.from_dlpack(ct.matmul(a, m)), a @ m, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(torch.from_dlpack(ct.matmul(a.mT, a)), a.mT @ a, rtol=1e-5, atol=1e-5)


def test_torch_c_exchange_api_path(torch):
    """When torch offers __dlpack_c_exchange_api__, ctensor uses it instead of __dlpack__."""
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    out = torch.zeros(3, 2)
    calls = []
    real = torch.Tensor.__dlpack__

    if hasattr(torch.Tensor, "__dlpack_c_exchange_api__"):
        def refuse(self, *a, **k):
            calls.append("__dlpack__")
            raise AssertionError("__dlpack__ called although torch has __dlpack_c_exchange_api__")

        with mock.patch.object(torch.Tensor, "__dlpack__", refuse):
            r = ct.neg(x.T)
            ct.add(x.T, x.T, out=out)
            np.testing.assert_array_equal(np.asarray(r), -x.T.numpy())
            assert torch.equal(out, 2 * x.T)
        assert calls == []
    else:
        def spy(self, *a, **k):
            calls.append("__dlpack__")
            return real(self, *a, **k)

        with mock.patch.object(torch.Tensor, "__dlpack__", spy):
            np.testing.assert_array_equal(np.asarray(ct.neg(x.T)), -x.T.numpy())
        assert calls, "torch without the C exchange API goes through __dlpack__"


def test_torch_dtype_arguments(torch):
    x = np.arange(4, dtype=np.float32)
    for tdt, name in [(torch.float16, "float16"), (torch.bfloat16, "bfloat16"), (torch.int32, "int32"),
                      (torch.bool, "bool"), (torch.float64, "float64"), (torch.uint8, "uint8")]:
        r = ct.cast(x, tdt)
        assert r.dtype == name
        e = ct.empty((2,), tdt)
        assert e.dtype == name


def test_torch_errors(torch):
    with pytest.raises(TypeError):
        ct.add(torch.zeros(3), torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError):
        ct.add(torch.zeros(3), torch.zeros(4))
    with pytest.raises(NotImplementedError):
        ct.sqrt(torch.zeros(3, dtype=torch.int8))
    with pytest.raises(NotImplementedError):
        ct.conv2d(torch.zeros((1, 2, 4, 4), dtype=torch.float16), torch.zeros((3, 2, 3, 3), dtype=torch.float16))
    with pytest.raises((TypeError, NotImplementedError)):
        ct.neg(torch.zeros(3, dtype=torch.complex64))
    out = torch.full((3,), 5.0)
    with pytest.raises(ValueError):
        ct.add(torch.zeros(4), torch.zeros(4), out=out)
    assert torch.equal(out, torch.full((3,), 5.0))


# ---------------------------------------------------------------------------
# JAX
# ---------------------------------------------------------------------------

def test_jax_inputs_match_jax_ops(jax_np):
    jnp = jax_np
    rng = np.random.default_rng(3)
    a = jnp.asarray(rng.uniform(-2, 2, (4, 6)).astype(np.float32))
    b = jnp.asarray(rng.uniform(-2, 2, (4, 6)).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(ct.add(a, b)), np.asarray(a + b))
    np.testing.assert_array_equal(np.asarray(ct.mul(a, b)), np.asarray(a * b))
    np.testing.assert_allclose(np.asarray(ct.exp(a)), np.asarray(jnp.exp(a)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ct.sum(a, axis=0)), np.asarray(jnp.sum(a, axis=0)), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(np.asarray(ct.matmul(a, b.T)), np.asarray(a @ b.T), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(ct.greater(a, b)), np.asarray(a > b))
    ai = jnp.arange(12, dtype=jnp.int32).reshape(3, 4)
    np.testing.assert_array_equal(np.asarray(ct.mod(ai, 5)), np.asarray(ai % 5))
    # bfloat16 JAX arrays
    ab = a.astype(jnp.bfloat16)
    r = ct.neg(ab)
    assert r.dtype == "bfloat16"
    np.testing.assert_array_equal(to_numpy(r), np.asarray((-ab).astype(jnp.float32)))
    np.testing.assert_array_equal(to_numpy(ct.add(ab, ab)), np.asarray((ab + ab).astype(jnp.float32)))


def test_jax_out_is_rejected(jax_np):
    jnp = jax_np
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    target = jnp.zeros((2, 3), dtype=jnp.float32) + 5.0
    with pytest.raises(ValueError):
        ct.neg(x, out=target)  # JAX arrays are immutable
    np.testing.assert_array_equal(np.asarray(target), np.full((2, 3), 5.0, np.float32))
    with pytest.raises(ValueError):
        ct.exp(x, out=x)
    np.testing.assert_array_equal(np.asarray(x), np.arange(6).reshape(2, 3))


def test_jax_from_dlpack_of_a_result(jax_np):
    jnp = jax_np
    r = ct.add(np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32))
    j = jnp.from_dlpack(r)
    assert j.shape == (2, 3) and j.dtype == jnp.float32
    np.testing.assert_array_equal(np.asarray(j), np.arange(1, 7).reshape(2, 3))
    rb = ct.cast(np.array([1.5, -2.0], np.float32), "bfloat16")
    jb = jnp.from_dlpack(rb)
    assert jb.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(jb.astype(jnp.float32)), [1.5, -2.0])
    ri = ct.argmax(np.array([[1, 5, 2]], np.int32), axis=1)
    assert jnp.from_dlpack(ri).dtype in (jnp.int64, jnp.int32)  # int32 unless jax_enable_x64
    assert int(jnp.from_dlpack(ri)[0]) == 1
    # a JAX result of ctensor feeding JAX math
    np.testing.assert_allclose(float(jnp.sum(jnp.from_dlpack(ct.exp(np.zeros(4, np.float32))))), 4.0)
    assert math.isclose(float(jnp.from_dlpack(ct.sum(np.ones(10, np.float32)))), 10.0)
