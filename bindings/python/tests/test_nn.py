"""Category 3 (NN) ops against NumPy references written here.

References run in float64 on the values the library sees (bfloat16 inputs are
rounded first). Tolerances follow the C suite: |got - ref| <= rtol * (mag +
|ref|) + atol, where mag is the same sum over absolute values (it bounds the
rounding error of any summation order); float32 rtol 1e-5, atol 1e-6;
bfloat16 rtol 1e-2, atol 1e-3 (plus the output's own rounding).
Backward ops are checked against the references, against the adjoint identity
of the forward (linear ops) and against central finite differences of the
library's own forward (normalisations).
"""
import math

import numpy as np
import pytest

import ctensor as ct
from ctensor import _nn
from conftest import to_numpy, round_to_bf16

NN_OPS = {"matmul", "conv2d", "conv2d_backward_data", "conv2d_backward_weight", "max_pool2d",
          "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward", "batch_norm", "batch_norm_training",
          "batch_norm_backward", "layer_norm", "layer_norm_backward", "scaled_dot_product_attention"}
NN_PY = {"matmul", "linear", "conv2d", "conv2d_backward_data", "conv2d_backward_weight", "max_pool2d",
         "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward", "batch_norm", "batch_norm_backward",
         "layer_norm", "layer_norm_backward", "scaled_dot_product_attention"}


def _np(t):
    return to_numpy(t).astype(np.float64) if str(t.dtype) != "int64" else to_numpy(t)


def _bf16(a):
    """(bfloat16 Tensor, float64 values it holds) from float values."""
    a32 = np.asarray(a, np.float32)
    return ct.cast(a32, "bfloat16"), round_to_bf16(a32.astype(np.float64))


def _data(rng, shape, dtype="float32", lo=-1.0, hi=1.0):
    """(input object, float64 values) of ``dtype``."""
    v = rng.uniform(lo, hi, shape)
    if dtype == "bfloat16":
        return _bf16(v)
    a = v.astype(dtype)
    return a, a.astype(np.float64)


def _close(got, ref, mag, dtype, what=""):
    rtol, atol = (1e-5, 1e-6) if dtype == "float32" else (1e-2, 1e-3)
    g = _np(got) if not isinstance(got, np.ndarray) else got.astype(np.float64)
    ref = np.asarray(ref, np.float64)
    assert g.shape == ref.shape, (what, g.shape, ref.shape)
    tol = rtol * (np.asarray(mag) + np.abs(ref)) + atol
    err = np.abs(g - ref)
    bad = ~(err <= tol)
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} outside tolerance; worst at "
                           f"{np.unravel_index(np.argmax(np.where(np.isnan(err), np.inf, err / tol)), err.shape)}: "
                           f"got {g[bad][:3]}, want {ref[bad][:3]}")


def _refused(op, dtype, call):
    """True when this CPU has no kernel for ``op`` in ``dtype`` (oneDNN 2.6 runs
    bfloat16 NN ops only where the CPU has AVX-512): the call must then be
    refused with NotImplementedError naming the dtype, as the C suite checks,
    and the caller skips the numerical comparison. False when the op runs."""
    if dtype == "float32" or ct.supported(op, dtype):
        return False
    with pytest.raises(NotImplementedError, match=dtype):
        call()
    return True


ACTS = {
    None: lambda v: v,
    "relu": lambda v: np.maximum(v, 0),
    "gelu": lambda v: 0.5 * v * (1 + np.vectorize(math.erf)(v / math.sqrt(2))),
    "gelu_tanh": lambda v: 0.5 * v * (1 + np.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3))),
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "tanh": np.tanh,
}


# ---------------------------------------------------------------------------
# registry
# ---------------------------------------------------------------------------

def test_nn_registry():
    infos = ct.ops(category="nn")
    assert {o.name for o in infos} == NN_OPS
    names = set()
    for o in infos:
        assert o.kind == "nn"
        assert o.python_names, o.name
        names |= set(o.python_names)
        for pn in o.python_names:
            assert callable(getattr(ct, pn))
        assert o.supported("float32"), o.name
        assert not o.supported("float16"), o.name  # no oneDNN 2.6 float16 kernels here
        assert not o.supported("float64"), o.name
        assert o.tensor_names
    assert names == NN_PY
    conv = [o for o in infos if o.name == "conv2d"][0]
    assert conv.tensor_names == ("x", "w", "bias?", "y")


# ---------------------------------------------------------------------------
# matmul / linear
# ---------------------------------------------------------------------------

MATMUL_CASES = [
    ((3, 4), (4, 5), None),
    ((2, 3, 4), (2, 4, 5), (5,)),
    ((2, 1, 3, 4), (3, 4, 2), (3, 2)),     # batch broadcast (2,1) x (3,) -> (2,3)
    ((3, 4), (2, 4, 6), (1, 6)),           # rank extension of the batch
    ((1, 7), (7, 1), (1,)),
    ((5, 0), (0, 3), (3,)),                # K = 0: act(bias)
]


@pytest.mark.parametrize("activation", list(ACTS))
@pytest.mark.parametrize("sa,sb,sbias", MATMUL_CASES)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_matmul(sa, sb, sbias, activation, dtype, rng):
    a, av = _data(rng, sa, dtype)
    b, bv = _data(rng, sb, dtype)
    kw = {"activation": activation}
    pre = np.matmul(av, bv)
    mag = np.matmul(np.abs(av), np.abs(bv))
    if sbias is not None:
        bias, biasv = _data(rng, sbias, "float32")
        kw["bias"] = bias
        pre = pre + biasv
        mag = mag + np.abs(biasv)
    if _refused("matmul", dtype, lambda: ct.matmul(a, b, **kw)):
        return
    r = ct.matmul(a, b, **kw)
    assert r.dtype == dtype
    assert tuple(r.shape) == pre.shape
    ref = ACTS[activation](pre)
    _close(r, ref, mag, dtype, f"matmul {sa}@{sb} +{sbias} {activation}")


@pytest.mark.parametrize("ta,tb", [(True, False), (False, True), (True, True)])
def test_matmul_transposed_views(ta, tb, rng):
    a = rng.uniform(-1, 1, (2, 6, 4)).astype(np.float32)  # (B, K, M) when transposed
    b = rng.uniform(-1, 1, (2, 5, 6)).astype(np.float32)  # (B, N, K)
    av = a.transpose(0, 2, 1) if ta else np.ascontiguousarray(a.transpose(0, 2, 1))
    bv = b.transpose(0, 2, 1) if tb else np.ascontiguousarray(b.transpose(0, 2, 1))
    r = ct.matmul(av, bv)
    ref = np.matmul(av.astype(np.float64), bv.astype(np.float64))
    _close(r, ref, np.matmul(np.abs(av), np.abs(bv)), "float32", "transposed")
    # out= a transposed view of a caller's buffer
    buf = np.zeros((2, 5, 4), np.float32)
    ct.matmul(av, bv, out=buf.transpose(0, 2, 1))
    _close(buf.transpose(0, 2, 1), ref, np.matmul(np.abs(av), np.abs(bv)), "float32", "out=view")
    # negative strides and a sliced operand
    big = rng.uniform(-1, 1, (12, 10)).astype(np.float32)
    x = big[::-2, 1::2]  # (6, 5), negative row step
    y = rng.uniform(-1, 1, (5, 3)).astype(np.float32)
    _close(ct.matmul(x, y), x.astype(np.float64) @ y, np.abs(x) @ np.abs(y), "float32", "neg strides")


def test_matmul_broadcast_batch_stride0(rng):
    a = rng.uniform(-1, 1, (1, 3, 4)).astype(np.float32)
    a_b = np.broadcast_to(a, (5, 3, 4))  # stride-0 batch dim
    b = rng.uniform(-1, 1, (5, 4, 2)).astype(np.float32)
    _close(ct.matmul(a_b, b), np.matmul(a_b.astype(np.float64), b), np.matmul(np.abs(a_b), np.abs(b)), "float32")


def test_matmul_errors(rng):
    a = np.zeros((3, 4), np.float32)
    with pytest.raises(ValueError):
        ct.matmul(a, np.zeros((5, 2), np.float32))  # K mismatch
    with pytest.raises(ValueError):
        ct.matmul(np.zeros(4, np.float32), np.zeros((4, 2), np.float32))  # 1-d
    with pytest.raises(ValueError):
        ct.matmul(np.zeros((2, 3, 4), np.float32), np.zeros((3, 4, 2), np.float32))  # batch 2 vs 3
    with pytest.raises(ValueError):
        ct.matmul(a, np.zeros((4, 2), np.float32), activation="swish")
    with pytest.raises(TypeError):
        ct.matmul(a, np.zeros((4, 2), np.float64))
    out = np.full((3, 2), 7, np.float32)
    with pytest.raises(ValueError):
        ct.matmul(a, np.zeros((4, 3), np.float32), out=out)  # out shape
    np.testing.assert_array_equal(out, 7)
    # NN ops never run in place / with overlapping outputs
    sq = rng.uniform(-1, 1, (4, 4)).astype(np.float32)
    before = sq.copy()
    with pytest.raises(ValueError):
        ct.matmul(sq, sq, out=sq)
    np.testing.assert_array_equal(sq, before)


def test_linear(rng):
    x = rng.uniform(-1, 1, (2, 3, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    b = rng.uniform(-1, 1, (4,)).astype(np.float32)
    ref = x.astype(np.float64) @ w.T.astype(np.float64) + b
    mag = np.abs(x) @ np.abs(w.T) + np.abs(b)
    r = ct.linear(x, w, b)
    assert tuple(r.shape) == (2, 3, 4)
    _close(r, ref, mag, "float32", "linear")
    _close(ct.linear(x, w), ref - b, mag, "float32", "linear no bias")
    _close(ct.linear(x, w, b, activation="relu"), np.maximum(ref, 0), mag, "float32", "linear relu")
    out = np.zeros((2, 3, 4), np.float32)
    ct.linear(x, w, bias=b, out=out)
    _close(out, ref, mag, "float32", "linear out")


# ---------------------------------------------------------------------------
# conv2d and its backward ops: a NumPy reference
# ---------------------------------------------------------------------------

def _pads(padding, R, S, dilation):
    dh, dw = dilation
    if padding == "valid":
        return (0, 0, 0, 0)
    if padding == "same":
        th, tw = dh * (R - 1), dw * (S - 1)
        return (th // 2, tw // 2, th - th // 2, tw - tw // 2)  # PyTorch: the extra one at the end
    if isinstance(padding, int):
        return (padding,) * 4
    if len(padding) == 2:
        return (padding[0], padding[1], padding[0], padding[1])
    return tuple(padding)


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def _geometry(xshape, wshape, stride, pads, dilation):
    N, C, H, W = xshape
    K, Cg, R, S = wshape
    sh, sw = stride
    dh, dw = dilation
    pt, pl, pb, pr = pads
    P = (H + pt + pb - dh * (R - 1) - 1) // sh + 1
    Q = (W + pl + pr - dw * (S - 1) - 1) // sw + 1
    return P, Q


def _patches(xp, r, s, P, Q, stride, dilation):
    sh, sw = stride
    dh, dw = dilation
    return xp[:, :, r * dh: r * dh + sh * (P - 1) + 1: sh, s * dw: s * dw + sw * (Q - 1) + 1: sw]


def conv2d_ref(x, w, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """Returns (y, mag) in float64; mag = the same sum over absolute values."""
    stride, dilation = _pair(stride), _pair(dilation)
    N, C, H, W = x.shape
    K, Cg, R, S = w.shape
    pads = _pads(padding, R, S, dilation)
    P, Q = _geometry(x.shape, w.shape, stride, pads, dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    y = np.zeros((N, K, P, Q))
    mag = np.zeros((N, K, P, Q))
    Kg = K // groups
    for r in range(R):
        for s in range(S):
            patch = _patches(xp, r, s, P, Q, stride, dilation)
            for g in range(groups):
                xs = patch[:, g * Cg:(g + 1) * Cg]
                ws = w[g * Kg:(g + 1) * Kg, :, r, s]
                y[:, g * Kg:(g + 1) * Kg] += np.einsum("ncpq,kc->nkpq", xs, ws)
                mag[:, g * Kg:(g + 1) * Kg] += np.einsum("ncpq,kc->nkpq", np.abs(xs), np.abs(ws))
    if bias is not None:
        y += bias[None, :, None, None]
        mag += np.abs(bias)[None, :, None, None]
    return y, mag


def conv2d_bwd_data_ref(dy, w, xshape, stride=1, padding=0, dilation=1, groups=1):
    stride, dilation = _pair(stride), _pair(dilation)
    N, C, H, W = xshape
    K, Cg, R, S = w.shape
    pads = _pads(padding, R, S, dilation)
    P, Q = dy.shape[2:]
    dxp = np.zeros((N, C, H + pads[0] + pads[2], W + pads[1] + pads[3]))
    mag = np.zeros_like(dxp)
    Kg = K // groups
    sh, sw = stride
    dh, dw = dilation
    for r in range(R):
        for s in range(S):
            for g in range(groups):
                d = dy[:, g * Kg:(g + 1) * Kg]
                ws = w[g * Kg:(g + 1) * Kg, :, r, s]
                sl = (slice(None), slice(g * Cg, (g + 1) * Cg),
                      slice(r * dh, r * dh + sh * (P - 1) + 1, sh), slice(s * dw, s * dw + sw * (Q - 1) + 1, sw))
                dxp[sl] += np.einsum("nkpq,kc->ncpq", d, ws)
                mag[sl] += np.einsum("nkpq,kc->ncpq", np.abs(d), np.abs(ws))
    crop = (slice(None), slice(None), slice(pads[0], pads[0] + H), slice(pads[1], pads[1] + W))
    return dxp[crop], mag[crop]


def conv2d_bwd_weight_ref(x, dy, wshape, stride=1, padding=0, dilation=1, groups=1):
    stride, dilation = _pair(stride), _pair(dilation)
    K, Cg, R, S = wshape
    pads = _pads(padding, R, S, dilation)
    P, Q = dy.shape[2:]
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    dw = np.zeros(wshape)
    mag = np.zeros(wshape)
    Kg = K // groups
    for r in range(R):
        for s in range(S):
            patch = _patches(xp, r, s, P, Q, stride, dilation)
            for g in range(groups):
                xs = patch[:, g * Cg:(g + 1) * Cg]
                d = dy[:, g * Kg:(g + 1) * Kg]
                dw[g * Kg:(g + 1) * Kg, :, r, s] = np.einsum("nkpq,ncpq->kc", d, xs)
                mag[g * Kg:(g + 1) * Kg, :, r, s] = np.einsum("nkpq,ncpq->kc", np.abs(d), np.abs(xs))
    return dw, mag


# (xshape, wshape, stride, padding, dilation, groups)
CONV_CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 3), 1, 0, 1, 1),
    ((1, 4, 8, 8), (6, 4, 3, 3), 2, 1, 1, 1),
    ((2, 2, 9, 7), (3, 2, 3, 2), (2, 1), (1, 0), 1, 1),
    ((1, 3, 9, 9), (2, 3, 3, 3), 1, (1, 2, 0, 1), 1, 1),       # asymmetric (top, left, bottom, right)
    ((1, 2, 10, 9), (4, 2, 3, 3), 1, 2, 2, 1),                 # dilation
    ((1, 2, 10, 9), (4, 2, 3, 2), (2, 3), (2, 1), (2, 3), 1),  # everything per axis
    ((2, 4, 6, 6), (6, 2, 3, 3), 1, 1, 1, 2),                  # groups
    ((1, 6, 7, 7), (6, 1, 3, 3), 1, 1, 1, 6),                  # depthwise
    ((1, 6, 7, 7), (12, 1, 3, 3), 2, 1, 1, 6),                 # depthwise, multiplier 2
    ((1, 3, 6, 5), (4, 3, 3, 3), 1, "same", 1, 1),
    ((1, 3, 6, 5), (4, 3, 2, 4), 1, "same", 1, 1),             # even kernel: uneven 'same' padding
    ((1, 3, 8, 7), (4, 3, 3, 3), 1, "same", 2, 1),
    ((1, 3, 6, 5), (4, 3, 3, 3), 1, "valid", 1, 1),
    ((2, 3, 5, 5), (4, 3, 1, 1), 1, 0, 1, 1),                  # 1x1
]


def _conv_id(c):
    return f"x{c[0]}w{c[1]}s{c[2]}p{c[3]}d{c[4]}g{c[5]}".replace(" ", "")


@pytest.mark.parametrize("case", CONV_CASES, ids=_conv_id)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_conv2d(case, dtype, rng):
    xs, ws, stride, padding, dilation, groups = case
    x, xv = _data(rng, xs, dtype)
    w, wv = _data(rng, ws, dtype)
    bias, bv = _data(rng, (ws[0],), "float32")
    ref, mag = conv2d_ref(xv, wv, bv, stride, padding, dilation, groups)
    if _refused("conv2d", dtype, lambda: ct.conv2d(x, w, bias, stride, padding, dilation, groups)):
        return
    y = ct.conv2d(x, w, bias, stride=stride, padding=padding, dilation=dilation, groups=groups)
    assert y.dtype == dtype
    _close(y, ref, mag, dtype, f"conv2d {case}")
    # no bias, fused activation
    ref0, mag0 = conv2d_ref(xv, wv, None, stride, padding, dilation, groups)
    y = ct.conv2d(x, w, None, stride, padding, dilation, groups, activation="relu")
    _close(y, np.maximum(ref0, 0), mag0, dtype, f"conv2d relu {case}")


@pytest.mark.parametrize("activation", ["relu", "gelu", "gelu_tanh", "sigmoid", "tanh"])
def test_conv2d_activations(activation, rng):
    x, xv = _data(rng, (1, 3, 6, 6))
    w, wv = _data(rng, (4, 3, 3, 3))
    b, bv = _data(rng, (4,))
    ref, mag = conv2d_ref(xv, wv, bv, 1, 1)
    y = ct.conv2d(x, w, b, padding=1, activation=activation)
    _close(y, ACTS[activation](ref), mag, "float32", activation)


def test_conv2d_nhwc_views(rng):
    N, C, H, W, K = 2, 3, 6, 5, 4
    x_nhwc = rng.uniform(-1, 1, (N, H, W, C)).astype(np.float32)
    w_khwc = rng.uniform(-1, 1, (K, 3, 3, C)).astype(np.float32)
    b = rng.uniform(-1, 1, (K,)).astype(np.float32)
    x = x_nhwc.transpose(0, 3, 1, 2)  # logical NCHW over NHWC memory
    w = w_khwc.transpose(0, 3, 1, 2)
    ref, mag = conv2d_ref(x.astype(np.float64), w.astype(np.float64), b.astype(np.float64), 1, 1)
    y = ct.conv2d(x, w, b, padding=1)
    _close(y, ref, mag, "float32", "nhwc in")
    out_nhwc = np.zeros((N, H, W, K), np.float32)
    ct.conv2d(x, w, b, padding=1, out=out_nhwc.transpose(0, 3, 1, 2))
    _close(out_nhwc.transpose(0, 3, 1, 2), ref, mag, "float32", "nhwc out")
    # a reversed (negative-stride) input is honoured too
    xr = np.ascontiguousarray(x[:, :, ::-1])[:, :, ::-1]
    _close(ct.conv2d(xr, w, b, padding=1), ref, mag, "float32", "negative strides")


def test_conv2d_errors(rng):
    x = np.zeros((1, 4, 5, 5), np.float32)
    w = np.zeros((6, 2, 3, 3), np.float32)
    with pytest.raises(ValueError):
        ct.conv2d(x, w)  # C/groups mismatch (groups=1)
    with pytest.raises(ValueError):
        ct.conv2d(x, np.zeros((5, 2, 3, 3), np.float32), groups=2)  # groups must divide K
    with pytest.raises(ValueError):
        ct.conv2d(x, np.zeros((6, 4, 7, 7), np.float32))  # input smaller than the kernel
    with pytest.raises(ValueError):
        ct.conv2d(x, np.zeros((6, 4, 3, 3), np.float32), stride=2, padding="same")
    with pytest.raises(ValueError):
        ct.conv2d(x, np.zeros((6, 4, 3, 3), np.float32), padding="full")
    with pytest.raises(ValueError):
        ct.conv2d(x, np.zeros((6, 4, 3, 3), np.float32), padding=-1)
    with pytest.raises(TypeError):
        ct.conv2d(x, np.zeros((6, 4, 3, 3), np.float64))
    out = np.full((1, 6, 4, 4), 3, np.float32)
    with pytest.raises(ValueError):
        ct.conv2d(x, np.zeros((6, 4, 3, 3), np.float32), out=out)  # wrong out shape (3x3 expected)
    np.testing.assert_array_equal(out, 3)


@pytest.mark.parametrize("case", CONV_CASES, ids=_conv_id)
def test_conv2d_backward(case, rng):
    xs, ws, stride, padding, dilation, groups = case
    if padding == "same":
        padding = _pads("same", ws[2], ws[3], _pair(dilation))
    if padding == "valid":
        padding = 0
    x, xv = _data(rng, xs)
    w, wv = _data(rng, ws)
    y = ct.conv2d(x, w, None, stride, padding, dilation, groups)
    dy, dyv = _data(rng, tuple(y.shape))
    # backward data: reference and the adjoint identity <conv(x, w), dy> == <x, bwd_data(dy, w)>
    dx = ct.conv2d_backward_data(dy, w, xs, stride, padding, dilation, groups)
    assert tuple(dx.shape) == xs and dx.dtype == "float32"
    ref, mag = conv2d_bwd_data_ref(dyv, wv, xs, stride, padding, dilation, groups)
    _close(dx, ref, mag, "float32", f"bwd data {case}")
    lhs = float(np.sum(_np(y) * dyv))
    rhs = float(np.sum(xv * _np(dx)))
    assert abs(lhs - rhs) <= 1e-4 * (np.sum(np.abs(_np(y) * dyv)) + 1), (lhs, rhs)
    # backward weight (+ bias): reference and <conv(x, w), dy> == <w, bwd_weight(x, dy)>
    dw, db = ct.conv2d_backward_weight(x, dy, ws, stride, padding, dilation, groups, bias=True)
    assert tuple(dw.shape) == ws and tuple(db.shape) == (ws[0],)
    ref, mag = conv2d_bwd_weight_ref(xv, dyv, ws, stride, padding, dilation, groups)
    _close(dw, ref, mag, "float32", f"bwd weight {case}")
    _close(db, dyv.sum(axis=(0, 2, 3)), np.abs(dyv).sum(axis=(0, 2, 3)), "float32", "dbias")
    rhs_w = float(np.sum(wv * _np(dw)))
    assert abs(lhs - rhs_w) <= 1e-4 * (np.sum(np.abs(_np(y) * dyv)) + 1), (lhs, rhs_w)
    dw_only = ct.conv2d_backward_weight(x, dy, ws, stride, padding, dilation, groups)
    assert isinstance(dw_only, ct.Tensor)
    np.testing.assert_allclose(_np(dw_only), _np(dw), rtol=1e-6, atol=1e-6)
    # out= for the data gradient (an NHWC view)
    buf = np.full((xs[0], xs[2], xs[3], xs[1]), 5, np.float32)
    ct.conv2d_backward_data(dy, w, xs, stride, padding, dilation, groups, out=buf.transpose(0, 3, 1, 2))
    _close(buf.transpose(0, 3, 1, 2), _np(dx), np.abs(_np(dx)), "float32", "bwd data out=")


def test_conv2d_backward_bfloat16(rng):
    x, xv = _data(rng, (1, 3, 6, 6), "bfloat16")
    w, wv = _data(rng, (4, 3, 3, 3), "bfloat16")
    dy, dyv = _data(rng, (1, 4, 6, 6), "bfloat16")
    if _refused("conv2d_backward_data", "bfloat16", lambda: ct.conv2d_backward_data(dy, w, (1, 3, 6, 6), padding=1)):
        assert _refused("conv2d_backward_weight", "bfloat16",
                        lambda: ct.conv2d_backward_weight(x, dy, (4, 3, 3, 3), padding=1))
        return
    dx = ct.conv2d_backward_data(dy, w, (1, 3, 6, 6), padding=1)
    assert dx.dtype == "bfloat16"
    ref, mag = conv2d_bwd_data_ref(dyv, wv, (1, 3, 6, 6), padding=1)
    _close(dx, ref, mag, "bfloat16", "bf16 bwd data")
    dw = ct.conv2d_backward_weight(x, dy, (4, 3, 3, 3), padding=1)
    ref, mag = conv2d_bwd_weight_ref(xv, dyv, (4, 3, 3, 3), padding=1)
    _close(dw, ref, mag, "bfloat16", "bf16 bwd weight")


def test_conv2d_backward_rejects_activation_free_api():
    # the backward ops take no activation keyword: their signatures follow API.md
    with pytest.raises(TypeError):
        ct.conv2d_backward_data(np.zeros((1, 2, 3, 3), np.float32), np.zeros((2, 2, 1, 1), np.float32),
                                (1, 2, 3, 3), activation="relu")


# ---------------------------------------------------------------------------
# pooling
# ---------------------------------------------------------------------------

def _pool_out(H, k, s, pb, pe, d, ceil_mode):
    span = H + pb + pe - d * (k - 1) - 1
    if ceil_mode:
        n = -(-span // s) + 1
        if (n - 1) * s >= H + pb:
            n -= 1
    else:
        n = span // s + 1
    return n


def max_pool_ref(x, k, s=None, padding=0, dilation=1, ceil_mode=False):
    kh, kw = _pair(k)
    sh, sw = _pair(s) if s is not None else (kh, kw)
    dh, dw = _pair(dilation)
    pt, pl, pb, pr = _pads(padding, 1, 1, (1, 1)) if not isinstance(padding, str) else (0, 0, 0, 0)
    N, C, H, W = x.shape
    P = _pool_out(H, kh, sh, pt, pb, dh, ceil_mode)
    Q = _pool_out(W, kw, sw, pl, pr, dw, ceil_mode)
    y = np.full((N, C, P, Q), -np.inf)
    idx = np.full((N, C, P, Q), -1, np.int64)
    for p in range(P):
        for q in range(Q):
            for i in range(kh):
                for j in range(kw):
                    h = p * sh - pt + i * dh
                    w_ = q * sw - pl + j * dw
                    if 0 <= h < H and 0 <= w_ < W:
                        v = x[:, :, h, w_]
                        better = v > y[:, :, p, q]  # strictly greater: the first max wins
                        y[:, :, p, q] = np.where(better, v, y[:, :, p, q])
                        idx[:, :, p, q] = np.where(better, h * W + w_, idx[:, :, p, q])
    return y, idx


def avg_pool_ref(x, k, s=None, padding=0, ceil_mode=False, count_include_pad=True):
    kh, kw = _pair(k)
    sh, sw = _pair(s) if s is not None else (kh, kw)
    pt, pl, pb, pr = _pads(padding, 1, 1, (1, 1))
    N, C, H, W = x.shape
    P = _pool_out(H, kh, sh, pt, pb, 1, ceil_mode)
    Q = _pool_out(W, kw, sw, pl, pr, 1, ceil_mode)
    y = np.zeros((N, C, P, Q))
    for p in range(P):
        for q in range(Q):
            acc = np.zeros((N, C))
            cnt = 0
            cnt_pad = 0
            for i in range(kh):
                for j in range(kw):
                    h = p * sh - pt + i
                    w_ = q * sw - pl + j
                    if -pt <= h < H + pb and -pl <= w_ < W + pr:
                        cnt_pad += 1
                    if 0 <= h < H and 0 <= w_ < W:
                        acc += x[:, :, h, w_]
                        cnt += 1
            y[:, :, p, q] = acc / ((kh * kw) if count_include_pad else cnt)
    return y


def avg_pool_bwd_ref(dy, xshape, k, s=None, padding=0, ceil_mode=False, count_include_pad=True):
    """The adjoint of avg_pool_ref: each window's dy / divisor spread over its cells inside x."""
    kh, kw = _pair(k)
    sh, sw = _pair(s) if s is not None else (kh, kw)
    pt, pl, pb, pr = _pads(padding, 1, 1, (1, 1))
    N, C, H, W = xshape
    P, Q = dy.shape[2:]
    dx = np.zeros(xshape)
    for p in range(P):
        for q in range(Q):
            cells = [(p * sh - pt + i, q * sw - pl + j) for i in range(kh) for j in range(kw)]
            inside = [(h, w_) for h, w_ in cells if 0 <= h < H and 0 <= w_ < W]
            div = kh * kw if count_include_pad else len(inside)
            for h, w_ in inside:
                dx[:, :, h, w_] += dy[:, :, p, q] / div
    return dx


POOL_CASES = [
    # (xshape, kernel, stride, padding, dilation, ceil_mode)
    ((2, 3, 6, 6), 2, None, 0, 1, False),
    ((1, 2, 7, 7), 3, 2, 1, 1, False),
    ((1, 2, 7, 8), (3, 2), (2, 1), (1, 0), 1, False),
    ((1, 2, 7, 7), 3, 2, 0, 1, True),
    ((1, 2, 8, 7), 3, 2, 1, 1, True),
    ((1, 2, 9, 9), 2, 2, (1, 0, 0, 1), 1, False),   # (top, left, bottom, right)
    ((1, 2, 9, 9), 3, 1, 1, 2, False),              # dilation (max only)
]


@pytest.mark.parametrize("case", POOL_CASES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_max_pool2d(case, dtype, rng):
    xs, k, s, padding, dilation, ceil_mode = case
    # distinct values (a permutation) so that the argmax is unique, plus forced ties
    vals = rng.permutation(int(np.prod(xs))).reshape(xs).astype(np.float64) / 8.0 - 5.0
    vals[..., 0, :2] = 3.0  # a tie: the first in window order wins
    x, xv = (vals.astype(np.float32), vals) if dtype == "float32" else _bf16(vals)
    if _refused("max_pool2d", dtype, lambda: ct.max_pool2d(x, k, s, padding, dilation, ceil_mode)):
        return
    y, idx = ct.max_pool2d(x, k, s, padding, dilation, ceil_mode, return_indices=True)
    ref, ridx = max_pool_ref(xv, k, s, padding, dilation, ceil_mode)
    assert idx.dtype == "int64"
    assert tuple(y.shape) == ref.shape
    np.testing.assert_array_equal(_np(y), ref)
    np.testing.assert_array_equal(to_numpy(idx), ridx)
    y2 = ct.max_pool2d(x, k, s, padding, dilation, ceil_mode)
    np.testing.assert_array_equal(_np(y2), ref)
    # backward: dy routed to the argmax positions, accumulated where windows overlap
    dy, dyv = _data(rng, ref.shape, dtype)
    dx = ct.max_pool2d_backward(dy, idx, xs, k, s, padding, dilation, ceil_mode)
    want = np.zeros(xs)
    N, C = xs[:2]
    for n in range(N):
        for c in range(C):
            np.add.at(want[n, c].reshape(-1), ridx[n, c].reshape(-1), dyv[n, c].reshape(-1))
    _close(dx, want, np.abs(want) + 4 * np.abs(dyv).max(), dtype, "max_pool2d_backward")


def test_max_pool2d_nan_and_views(rng):
    x = rng.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32)
    xn = np.ascontiguousarray(x.transpose(0, 2, 3, 1)).transpose(0, 3, 1, 2)  # NHWC memory
    ref, ridx = max_pool_ref(x.astype(np.float64), 2)
    y, idx = ct.max_pool2d(xn, 2, return_indices=True)
    np.testing.assert_array_equal(_np(y), ref)
    np.testing.assert_array_equal(to_numpy(idx), ridx)
    out = np.full((1, 2, 2, 2), 9, np.float32)
    ct.max_pool2d(x, 2, out=out)
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("count_include_pad", [True, False])
@pytest.mark.parametrize("case", [c for c in POOL_CASES if c[4] == 1], ids=str)
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_avg_pool2d(case, count_include_pad, dtype, rng):
    xs, k, s, padding, _, ceil_mode = case
    x, xv = _data(rng, xs, dtype)
    if ceil_mode and count_include_pad and padding != 0:
        # PyTorch then counts the padding but not the extra ceil_mode cells: the module says it
        # cannot express that divisor
        with pytest.raises(NotImplementedError):
            ct.avg_pool2d(x, k, s, padding, ceil_mode, count_include_pad)
        return
    if _refused("avg_pool2d", dtype, lambda: ct.avg_pool2d(x, k, s, padding, ceil_mode, count_include_pad)):
        return
    y = ct.avg_pool2d(x, k, s, padding, ceil_mode, count_include_pad)
    # with ceil_mode and no padding PyTorch divides by the cells inside x
    cip = count_include_pad and not ceil_mode
    ref = avg_pool_ref(xv, k, s, padding, ceil_mode, cip)
    _close(y, ref, avg_pool_ref(np.abs(xv), k, s, padding, ceil_mode, cip), dtype, f"avg {case}")
    # backward: the adjoint identity <avg(x), dy> == <x, avg_bwd(dy)>, and values
    dy, dyv = _data(rng, ref.shape, dtype)
    dx = ct.avg_pool2d_backward(dy, xs, k, s, padding, ceil_mode, count_include_pad)
    assert tuple(dx.shape) == xs
    want = avg_pool_bwd_ref(dyv, xs, k, s, padding, ceil_mode, cip)
    _close(dx, want, np.abs(want) + np.abs(dyv).max(), dtype, f"avg bwd {case}")
    # the adjoint identity <avg(x), dy> == <x, avg_bwd(dy)> on the library's own results
    lhs = float(np.sum(_np(y) * dyv))
    rhs = float(np.sum(xv * _np(dx)))
    assert abs(lhs - rhs) <= (1e-4 if dtype == "float32" else 3e-2) * (np.sum(np.abs(_np(y) * dyv)) + 1)


def test_avg_pool2d_divisor_override():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    try:
        y = ct.avg_pool2d(x, 2, divisor_override=3)
    except NotImplementedError as e:
        # API.md lists the keyword; the module declines it with a clear error (reported)
        assert "divisor_override" in str(e)
        return
    want = x.reshape(1, 1, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).sum(axis=(-1, -2)) / 3
    np.testing.assert_allclose(_np(y), want, rtol=1e-6)


def test_pool_vs_torch(rng):
    torch = pytest.importorskip("torch", reason="PyTorch not installed: torch pooling cross-check skipped")
    F = torch.nn.functional
    x = rng.uniform(-1, 1, (2, 3, 9, 8)).astype(np.float32)
    xt = torch.from_numpy(x)
    for k, s, p, d, cm in [(3, 2, 1, 1, True), (2, 2, 0, 1, True), (3, 1, 1, 2, False), ((3, 2), (2, 3), (1, 1), 1, True)]:
        yt, it = F.max_pool2d(xt, k, s, p, d, ceil_mode=cm, return_indices=True)
        y, idx = ct.max_pool2d(x, k, s, p, d, cm, return_indices=True)
        np.testing.assert_array_equal(_np(y), yt.numpy())
        np.testing.assert_array_equal(to_numpy(idx), it.numpy())
    for k, s, p, cm, cip in [(3, 2, 1, False, True), (3, 2, 1, False, False), (3, 2, 1, True, False),
                             (2, 2, 0, True, True), (3, 2, 0, True, False)]:
        yt = F.avg_pool2d(xt, k, s, p, ceil_mode=cm, count_include_pad=cip)
        y = ct.avg_pool2d(x, k, s, p, cm, cip)
        np.testing.assert_allclose(_np(y), yt.numpy(), rtol=1e-6, atol=1e-6, err_msg=f"{k} {s} {p} {cm} {cip}")


@pytest.mark.parametrize("shape", [(2, 3, 8, 8), (1, 2, 7, 9), (1, 1, 2, 2)], ids=str)
def test_pool_2x2_stride_2_vs_torch(shape, rng):
    """The 2x2 window of stride 2 (its own one-pass row): NaNs at every tap position (a NaN wins, the last in
    window order giving the index), ties (the first wins), -inf, odd H and W (the last row and column left
    out), and ceil_mode (the partial windows go the general way); values bit for bit as PyTorch's, and the
    backward's too."""
    torch = pytest.importorskip("torch", reason="PyTorch not installed: torch pooling cross-check skipped")
    F = torch.nn.functional
    x = rng.integers(-3, 4, shape).astype(np.float32)  # few values: many ties
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, max(1, flat.size // 7), replace=False)] = np.nan
    flat[rng.choice(flat.size, max(1, flat.size // 11), replace=False)] = -np.inf
    xt = torch.from_numpy(x)
    for cm in (False, True):
        yt, it = F.max_pool2d(xt, 2, 2, ceil_mode=cm, return_indices=True)
        y, idx = ct.max_pool2d(x, 2, 2, ceil_mode=cm, return_indices=True)
        np.testing.assert_array_equal(_np(y), yt.numpy())
        np.testing.assert_array_equal(to_numpy(idx), it.numpy())
        np.testing.assert_array_equal(_np(ct.max_pool2d(x, 2, 2, ceil_mode=cm)), yt.numpy())
        # backward (dx written once where the windows tile x): -0 and NaN gradients land as PyTorch's
        dy = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
        dy.reshape(-1)[::5] = -0.0
        dy.reshape(-1)[::7] = np.nan
        dxt = torch.ops.aten.max_pool2d_with_indices_backward(torch.from_numpy(dy), xt, [2, 2], [2, 2], [0, 0],
                                                              [1, 1], cm, it)
        dx = ct.max_pool2d_backward(dy, idx, shape, 2, 2, 0, 1, cm)
        np.testing.assert_array_equal(np.signbit(_np(dx)), np.signbit(dxt.numpy()))
        np.testing.assert_array_equal(_np(dx), dxt.numpy())
        for cip in (True, False):
            yt = F.avg_pool2d(xt, 2, 2, ceil_mode=cm, count_include_pad=cip)
            np.testing.assert_array_equal(_np(ct.avg_pool2d(x, 2, 2, 0, cm, cip)), yt.numpy())


def test_pool_errors():
    x = np.zeros((1, 1, 4, 4), np.float32)
    with pytest.raises(ValueError):
        ct.max_pool2d(x, 0)
    with pytest.raises(ValueError):
        ct.max_pool2d(x, 2, padding=2)  # padding >= the window
    with pytest.raises(ValueError):
        ct.max_pool2d(np.zeros((1, 4, 4), np.float32), 2)  # 3-d
    with pytest.raises(ValueError):
        ct.avg_pool2d(x, 5)  # window larger than the input


# ---------------------------------------------------------------------------
# normalisations
# ---------------------------------------------------------------------------

def _bn_axes(ndim):
    return (0,) + tuple(range(2, ndim))


def _bshape(ndim):
    return (1, -1) + (1,) * (ndim - 2)


@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 5), (2, 3, 4, 5), (2, 3, 2, 2, 3)])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_batch_norm_inference(shape, dtype, rng):
    x, xv = _data(rng, shape, dtype, -2, 2)
    C = shape[1]
    rm = rng.uniform(-0.5, 0.5, C).astype(np.float32)
    rv = rng.uniform(0.5, 2, C).astype(np.float32)
    w = rng.uniform(0.5, 1.5, C).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, C).astype(np.float32)
    bs = _bshape(len(shape))
    inv = 1 / np.sqrt(rv.astype(np.float64) + 1e-5)
    ref = (xv - rm.reshape(bs)) * inv.reshape(bs) * w.reshape(bs) + b.reshape(bs)
    mag = (np.abs(xv) + np.abs(rm).reshape(bs)) * (inv * np.abs(w)).reshape(bs) + np.abs(b).reshape(bs)
    if _refused("batch_norm", dtype, lambda: ct.batch_norm(x, rm, rv, w, b)):
        return
    y = ct.batch_norm(x, rm, rv, w, b)
    assert y.dtype == dtype
    _close(y, ref, mag, dtype, "bn inference")
    y = ct.batch_norm(x, rm, rv)  # no scale / shift
    _close(y, (xv - rm.reshape(bs)) * inv.reshape(bs), mag, dtype, "bn inference plain")
    y = ct.batch_norm(x, rm, rv, w, b, eps=0.5)
    inv2 = 1 / np.sqrt(rv.astype(np.float64) + 0.5)
    _close(y, (xv - rm.reshape(bs)) * (inv2 * w).reshape(bs) + b.reshape(bs), mag, dtype, "bn eps")


@pytest.mark.parametrize("shape", [(6, 3), (2, 3, 4, 5)])
def test_batch_norm_training(shape, rng):
    x, xv = _data(rng, shape, "float32", -2, 3)
    C = shape[1]
    axes = _bn_axes(len(shape))
    bs = _bshape(len(shape))
    n = xv.size // C
    rm = rng.uniform(-0.5, 0.5, C).astype(np.float32)
    rv = rng.uniform(0.5, 2, C).astype(np.float32)
    rm0, rv0 = rm.copy(), rv.copy()
    w = rng.uniform(0.5, 1.5, C).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, C).astype(np.float32)
    y, mean, invstd = ct.batch_norm(x, rm, rv, w, b, training=True, momentum=0.2, return_stats=True)
    bm = xv.mean(axis=axes)
    bv = xv.var(axis=axes)
    binv = 1 / np.sqrt(bv + 1e-5)
    ref = (xv - bm.reshape(bs)) * (binv * w).reshape(bs) + b.reshape(bs)
    _close(y, ref, np.abs(ref) + 3 * np.abs(w).max(), "float32", "bn training y")
    assert mean.dtype == "float32" and invstd.dtype == "float32"
    np.testing.assert_allclose(_np(mean), bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(invstd), binv, rtol=1e-5)
    # running stats updated in place, as torch: unbiased variance, momentum
    np.testing.assert_allclose(rm, 0.8 * rm0 + 0.2 * bm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, 0.8 * rv0 + 0.2 * bv * n / (n - 1), rtol=1e-5, atol=1e-6)
    # without running stats
    y2 = ct.batch_norm(x, None, None, w, b, training=True)
    _close(y2, ref, np.abs(ref) + 3 * np.abs(w).max(), "float32", "bn training no running stats")


def test_batch_norm_vs_torch(rng):
    torch = pytest.importorskip("torch", reason="PyTorch not installed: torch batch_norm cross-check skipped")
    x = rng.uniform(-2, 2, (4, 3, 5, 2)).astype(np.float32)
    rm = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    rv = rng.uniform(0.5, 2, 3).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    rmt, rvt = torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())
    yt = torch.nn.functional.batch_norm(torch.from_numpy(x), rmt, rvt, torch.from_numpy(w), torch.from_numpy(b),
                                        training=True, momentum=0.3, eps=1e-3)
    y = ct.batch_norm(x, rm, rv, w, b, training=True, momentum=0.3, eps=1e-3)
    np.testing.assert_allclose(_np(y), yt.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(rm, rmt.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv, rvt.numpy(), rtol=1e-5, atol=1e-6)


def _fd_check(loss, x, grad, idxs, h=1e-2, rtol=2e-2, atol=2e-3, what=""):
    """Central differences of loss (float64 of the library's float32 forward) at x[idxs]."""
    for i in idxs:
        xp = x.copy()
        xm = x.copy()
        xp.flat[i] += h
        xm.flat[i] -= h
        fd = (loss(xp) - loss(xm)) / (2 * h)
        g = grad.flat[i]
        assert abs(fd - g) <= rtol * abs(fd) + atol, (what, i, fd, g)


def test_batch_norm_backward(rng):
    shape = (4, 3, 2, 3)
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    w = rng.uniform(0.5, 1.5, 3).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, 3).astype(np.float32)
    dy = rng.uniform(-1, 1, shape).astype(np.float32)
    y, mean, invstd = ct.batch_norm(x, None, None, w, b, training=True, return_stats=True)
    dx, dw, db = ct.batch_norm_backward(x, dy, mean, invstd, w)
    axes, bs = _bn_axes(4), _bshape(4)
    xv, dyv = x.astype(np.float64), dy.astype(np.float64)
    n = xv.size // 3
    m = xv.mean(axis=axes)
    inv = 1 / np.sqrt(xv.var(axis=axes) + 1e-5)
    xhat = (xv - m.reshape(bs)) * inv.reshape(bs)
    rdb = dyv.sum(axis=axes)
    rdw = (dyv * xhat).sum(axis=axes)
    rdx = (w * inv).reshape(bs) / n * (n * dyv - rdb.reshape(bs) - xhat * rdw.reshape(bs))
    np.testing.assert_allclose(_np(db), rdb, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(dw), rdw, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(dx), rdx, rtol=1e-4, atol=1e-4)

    def loss(xx):
        return float(np.sum(_np(ct.batch_norm(xx, None, None, w, b, training=True)) * dyv))
    _fd_check(loss, x, _np(dx), [0, 7, 20, 41, 71], what="bn dx")
    # weight=None means scale 1
    dx1, _, _ = ct.batch_norm_backward(x, dy, mean, invstd)
    np.testing.assert_allclose(_np(dx1), rdx / w.reshape(bs), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("shape,norm", [((4, 6), (6,)), ((2, 3, 4), (3, 4)), ((2, 3, 5), 5), ((3, 2, 2, 4), (2, 2, 4))])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_layer_norm(shape, norm, dtype, rng):
    x, xv = _data(rng, shape, dtype, -2, 3)
    ns = (norm,) if isinstance(norm, int) else norm
    k = len(ns)
    w = rng.uniform(0.5, 1.5, ns).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, ns).astype(np.float32)
    axes = tuple(range(len(shape) - k, len(shape)))
    m = xv.mean(axis=axes, keepdims=True)
    r = 1 / np.sqrt(xv.var(axis=axes, keepdims=True) + 1e-5)
    ref = (xv - m) * r * w + b
    mag = np.abs(ref) + 4 * np.abs(w).max()
    if _refused("layer_norm", dtype, lambda: ct.layer_norm(x, norm, w, b)):
        return
    y, mean, rstd = ct.layer_norm(x, norm, w, b, return_stats=True)
    assert y.dtype == dtype
    assert tuple(mean.shape) == shape[:len(shape) - k] and mean.dtype == "float32"
    _close(y, ref, mag, dtype, "layer_norm")
    np.testing.assert_allclose(_np(mean), m.reshape(mean.shape), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(rstd), r.reshape(rstd.shape), rtol=1e-5 if dtype == "float32" else 1e-4)
    _close(ct.layer_norm(x, norm), (xv - m) * r, mag, dtype, "layer_norm plain")
    _close(ct.layer_norm(x, norm, w, b, eps=0.25), (xv - m) / np.sqrt(xv.var(axis=axes, keepdims=True) + 0.25) * w + b,
           mag, dtype, "layer_norm eps")


def test_layer_norm_strided_and_out(rng):
    base = rng.uniform(-2, 2, (3, 12)).astype(np.float32)
    x = base[:, ::2]  # (3, 6), non-contiguous rows
    xv = x.astype(np.float64)
    ref = (xv - xv.mean(-1, keepdims=True)) / np.sqrt(xv.var(-1, keepdims=True) + 1e-5)
    _close(ct.layer_norm(x, (6,)), ref, np.abs(ref) + 4, "float32", "strided")
    out = np.zeros((6, 3), np.float32).T
    ct.layer_norm(x, 6, out=out)
    _close(out, ref, np.abs(ref) + 4, "float32", "out view")
    with pytest.raises(ValueError):
        ct.layer_norm(x, (5,))  # not the trailing dims


def test_layer_norm_backward(rng):
    shape, ns = (3, 2, 5), (2, 5)
    x = rng.uniform(-2, 2, shape).astype(np.float32)
    w = rng.uniform(0.5, 1.5, ns).astype(np.float32)
    b = rng.uniform(-0.5, 0.5, ns).astype(np.float32)
    dy = rng.uniform(-1, 1, shape).astype(np.float32)
    y, mean, rstd = ct.layer_norm(x, ns, w, b, return_stats=True)
    dx, dw, db = ct.layer_norm_backward(x, dy, mean, rstd, ns, w)
    xv, dyv = x.astype(np.float64), dy.astype(np.float64)
    axes = (1, 2)
    m = xv.mean(axis=axes, keepdims=True)
    r = 1 / np.sqrt(xv.var(axis=axes, keepdims=True) + 1e-5)
    xhat = (xv - m) * r
    g = dyv * w
    rdx = r * (g - g.mean(axis=axes, keepdims=True) - xhat * (g * xhat).mean(axis=axes, keepdims=True))
    np.testing.assert_allclose(_np(db), dyv.sum(axis=0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(dw), (dyv * xhat).sum(axis=0), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(_np(dx), rdx, rtol=1e-4, atol=1e-4)

    def loss(xx):
        return float(np.sum(_np(ct.layer_norm(xx, ns, w, b)) * dyv))
    _fd_check(loss, x, _np(dx), [0, 4, 11, 17, 29], what="ln dx")


# ---------------------------------------------------------------------------
# dtypes: float16 and float64 raise NotImplementedError for every NN op
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_nn_unsupported_dtypes(dtype):
    z = lambda *s: np.zeros(s, dtype)  # noqa: E731
    f32 = lambda *s: np.ones(s, np.float32)  # noqa: E731
    calls = {
        "matmul": lambda: ct.matmul(z(2, 3), z(3, 2)),
        "linear": lambda: ct.linear(z(2, 3), z(4, 3)),
        "conv2d": lambda: ct.conv2d(z(1, 2, 4, 4), z(3, 2, 3, 3)),
        "conv2d_backward_data": lambda: ct.conv2d_backward_data(z(1, 3, 2, 2), z(3, 2, 3, 3), (1, 2, 4, 4)),
        "conv2d_backward_weight": lambda: ct.conv2d_backward_weight(z(1, 2, 4, 4), z(1, 3, 2, 2), (3, 2, 3, 3)),
        "max_pool2d": lambda: ct.max_pool2d(z(1, 1, 4, 4), 2),
        "max_pool2d_backward": lambda: ct.max_pool2d_backward(z(1, 1, 2, 2), np.zeros((1, 1, 2, 2), np.int64),
                                                              (1, 1, 4, 4), 2),
        "avg_pool2d": lambda: ct.avg_pool2d(z(1, 1, 4, 4), 2),
        "avg_pool2d_backward": lambda: ct.avg_pool2d_backward(z(1, 1, 2, 2), (1, 1, 4, 4), 2),
        "batch_norm": lambda: ct.batch_norm(z(2, 3), f32(3), f32(3)),
        "batch_norm_training": lambda: ct.batch_norm(z(2, 3), None, None, training=True),
        "batch_norm_backward": lambda: ct.batch_norm_backward(z(2, 3), z(2, 3), f32(3), f32(3)),
        "layer_norm": lambda: ct.layer_norm(z(2, 3), 3),
        "layer_norm_backward": lambda: ct.layer_norm_backward(z(2, 3), z(2, 3), f32(2), f32(2), 3),
        # the op itself (ct.scaled_dot_product_attention falls back to its float32 composition for float16)
        "scaled_dot_product_attention": lambda: _nn._run("scaled_dot_product_attention",
                                                         [z(2, 3), z(2, 3), z(2, 3), None], [True], {}),
    }
    assert set(calls) == NN_OPS | {"linear"}
    for name, call in calls.items():
        with pytest.raises(NotImplementedError):
            call()
            pytest.fail(f"{name} ran on {dtype}")


def test_nn_message_names_function():
    with pytest.raises(NotImplementedError) as e:
        ct.conv2d(np.zeros((1, 2, 4, 4), np.float16), np.zeros((3, 2, 3, 3), np.float16))
    assert "conv2d" in str(e.value)
    with pytest.raises(ValueError) as e:
        ct.matmul(np.zeros((3, 4), np.float32), np.zeros((5, 2), np.float32))
    assert "matmul" in str(e.value)


def test_stats_must_be_float32():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(TypeError):
        ct.batch_norm(x, np.zeros(3, np.float64), np.ones(3, np.float32))
    with pytest.raises(TypeError):
        ct.layer_norm(x, 3, np.ones(3, np.float64))
    xb = ct.cast(x, "bfloat16")
    # bfloat16 data with float32 statistics is the documented combination
    if _refused("batch_norm", "bfloat16", lambda: ct.batch_norm(xb, np.zeros(3, np.float32), np.ones(3, np.float32))):
        return
    y = ct.batch_norm(xb, np.zeros(3, np.float32), np.ones(3, np.float32))
    assert y.dtype == "bfloat16"


def test_empty_operands(rng):
    # K = 0 sums nothing: act(bias), or act(0) without a bias
    r = ct.matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32), activation="sigmoid")
    np.testing.assert_array_equal(_np(r), np.full((2, 3), 0.5))
    bias = rng.uniform(-1, 1, (3,)).astype(np.float32)
    r = ct.matmul(np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32), bias=bias, activation="relu")
    np.testing.assert_array_equal(_np(r), np.broadcast_to(np.maximum(bias, 0), (2, 3)))
    # every output empty: nothing to do
    y = ct.conv2d(np.zeros((0, 2, 5, 5), np.float32), np.zeros((3, 2, 3, 3), np.float32))
    assert tuple(y.shape) == (0, 3, 3, 3)
    assert tuple(ct.max_pool2d(np.zeros((0, 2, 4, 4), np.float32), 2).shape) == (0, 2, 2, 2)
    assert tuple(ct.matmul(np.zeros((0, 4), np.float32), np.zeros((4, 3), np.float32)).shape) == (0, 3)


# ---------------------------------------------------------------------------
# max_pool2d_backward refuses indices outside their windows (they would be
# routed elsewhere or dropped), before writing anything
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [10, 3, 1000, -1])
def test_max_pool2d_backward_rejects_out_of_window_indices(bad):
    # x (1,1,4,4), 2x2 windows: output (0,1) covers positions 2,3,6,7
    dy = np.array([[[[1, 2], [3, 4]]]], np.float32)
    good = np.array([[[[0, 2], [8, 10]]]], np.int64)
    dx = np.full((1, 1, 4, 4), 7.0, np.float32)
    ct.max_pool2d_backward(dy, good, (1, 1, 4, 4), 2, out=dx)
    want = np.zeros(16, np.float32)
    want[[0, 2, 8, 10]] = [1, 2, 3, 4]
    np.testing.assert_array_equal(dx.reshape(-1), want)
    idx = good.copy()
    idx[0, 0, 1, 1] = bad  # output (1,1) covers 10,11,14,15
    if bad in (10,):
        idx[0, 0, 0, 0] = bad  # output (0,0) covers 0,1,4,5: 10 is outside
    before = np.full((1, 1, 4, 4), 7.0, np.float32)
    dx2 = before.copy()
    with pytest.raises(ValueError, match=r"^ct_nn\(max_pool2d_backward\): indices element"):  # the entry point called
        ct.max_pool2d_backward(dy, idx, (1, 1, 4, 4), 2, out=dx2)
    np.testing.assert_array_equal(dx2, before)


# ---------------------------------------------------------------------------
# the generic NN entry point and the shape query the module exposes: no op's
# output-shape rule lives in the bindings
# ---------------------------------------------------------------------------

def _op_id(name):
    return [o.id for o in ct.ops() if o.name == name][0]


def test_output_info_query():
    q = ct._ctensor._output_info
    f32 = "float32"
    assert q(_op_id("conv2d"), [((2, 3, 9, 8), f32), ((4, 3, 3, 3), f32), None],
             desc={"stride": (2, 1), "pad_begin": (1, 1), "pad_end": (1, 1)}) == [((2, 4, 5, 8), f32)]
    assert q(_op_id("matmul"), [((2, 1, 3, 4), "bfloat16"), ((5, 4, 6), "bfloat16"), None]) == \
        [((2, 5, 3, 6), "bfloat16")]
    assert q(_op_id("max_pool2d"), [np.zeros((1, 2, 7, 7), np.float32)], desc={"kernel": (3, 3), "stride": (2, 2)}) \
        == [((1, 2, 3, 3), f32), ((1, 2, 3, 3), "int64")]
    # a backward op's open extents: inferred (the smallest) or given
    dy, w = ((1, 4, 3, 3), f32), ((4, 2, 3, 3), f32)
    conv = {"stride": (2, 2)}
    assert q(_op_id("conv2d_backward_data"), [dy, w], desc=conv) == [((1, 2, 7, 7), f32)]
    assert q(_op_id("conv2d_backward_data"), [dy, w], desc=conv, extent=(8, 7)) == [((1, 2, 8, 7), f32)]
    assert q(_op_id("conv2d_backward_weight"), [((1, 2, 8, 8), f32), dy], desc=conv, extent=(3, 3)) == \
        [((4, 2, 3, 3), f32), ((4,), f32)]
    assert q(_op_id("layer_norm"), [((2, 3, 4), "bfloat16"), None, None], desc={"normalized_ndim": 2}) == \
        [((2, 3, 4), "bfloat16"), ((2,), f32), ((2,), f32)]
    assert q(_op_id("batch_norm_training"), [((5, 3, 2), f32), None, None]) == [((5, 3, 2), f32), ((3,), f32),
                                                                              ((3,), f32)]
    # the other kinds answer too
    assert q(_op_id("sum"), [((2, 3), "int8")], axis=1, keepdims=True) == [((2, 1), "int64")]
    assert q(_op_id("mean"), [((2, 3, 4), "int32")], axis=(0, 2)) == [((3,), "float64")]
    assert q(_op_id("add"), [((3, 1), f32), ((4,), f32)]) == [((3, 4), f32)]
    assert q(_op_id("where"), [((), "bool"), ((2, 1), "float64"), ((3,), "float64")]) == [((2, 3), "float64")]
    assert q(_op_id("cast"), [((2,), f32)], dtype="int8") == [((2,), "int8")]
    assert q(_op_id("isnan"), [np.zeros((2, 2), np.float16)]) == [((2, 2), "bool")]
    # failures read as the entry point the op runs through
    with pytest.raises(ValueError) as e:
        q(_op_id("matmul"), [((3, 4), f32), ((5, 2), f32), None])
    assert str(e.value).startswith("ct_nn(matmul): ")
    with pytest.raises(ValueError) as e:
        q(_op_id("add"), [((2, 4), f32), ((3,), f32)])
    assert str(e.value).startswith("ct_binary: b.shape=[3] does not broadcast with a.shape=[2,4]")
    with pytest.raises(TypeError, match="no field 'padding'"):
        q(_op_id("conv2d"), [((1, 1, 3, 3), f32), ((1, 1, 3, 3), f32), None], desc={"padding": 1})


def test_generic_nn_entry(rng):
    nn = ct._ctensor._nn
    x = rng.uniform(-1, 1, (2, 3, 6, 5)).astype(np.float32)
    pool = {"kernel": (2, 2)}
    y, idx = nn(_op_id("max_pool2d"), [x], None, pool)  # outputs=None: every output, from the shape query
    ry, ridx = ct.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(_np(y), _np(ry))
    np.testing.assert_array_equal(to_numpy(idx), to_numpy(ridx))
    y2, none = nn(_op_id("max_pool2d"), [x], [True, None], pool)  # an optional output left out
    assert none is None and tuple(y2.shape) == (2, 3, 3, 2)
    out = np.zeros((2, 3, 3, 2), np.float32)
    r, _ = nn(_op_id("max_pool2d"), [x], [out, None], pool)
    assert r is out
    np.testing.assert_array_equal(out, _np(ry))
    (dx,) = nn(_op_id("max_pool2d_backward"), [y, idx], [(2, 3, 6, 5)], pool, extent=(6, 5))
    assert tuple(dx.shape) == (2, 3, 6, 5)
    with pytest.raises(ValueError, match="was asked for"):
        nn(_op_id("max_pool2d_backward"), [y, idx], [(2, 4, 6, 5)], pool, extent=(6, 5))
    with pytest.raises(ValueError, match="takes 1 input"):
        nn(_op_id("max_pool2d"), [x, x], None, pool)
    with pytest.raises(ValueError, match="has 2 output"):
        nn(_op_id("max_pool2d"), [x], [True], pool)
    with pytest.raises(TypeError, match="CTPool2dDesc"):
        nn(_op_id("max_pool2d"), [x], None, {"kernel_size": 2})
    with pytest.raises(ValueError, match="not an NN op"):
        nn(_op_id("add"), [x, x], None, None)
    # a missing non-optional input is the library's error
    with pytest.raises(ValueError, match="w is NULL"):
        nn(_op_id("conv2d"), [x, None, None], None, {})


def test_nn_messages_name_the_op():
    with pytest.raises(ValueError) as e:
        ct.matmul(np.zeros((3, 4), np.float32), np.zeros((5, 2), np.float32))
    assert str(e.value).startswith("ct_nn(matmul): ") and "(the K dims)" in str(e.value)
    with pytest.raises(ValueError) as e:
        ct.matmul(np.zeros(4, np.float32), np.zeros((4, 2), np.float32))
    assert str(e.value).startswith("ct_nn(matmul): ") and "at least 2 dims" in str(e.value)
    with pytest.raises(ValueError) as e:
        ct.conv2d(np.zeros((1, 2, 4), np.float32), np.zeros((3, 2, 3, 3), np.float32))
    assert str(e.value).startswith("ct_nn(conv2d): ")
    with pytest.raises(ValueError) as e:
        ct.max_pool2d(np.zeros((1, 4, 4), np.float32), 2)
    assert str(e.value).startswith("ct_nn(max_pool2d): ")
    with pytest.raises(ValueError) as e:
        ct.batch_norm(np.zeros(3, np.float32), None, None, training=True)
    assert str(e.value).startswith("ct_nn(batch_norm_training): ")
    # a backward op's declared shape must be the one its inputs give
    with pytest.raises(ValueError) as e:
        ct.conv2d_backward_data(np.zeros((1, 3, 2, 2), np.float32), np.zeros((3, 2, 3, 3), np.float32), (1, 5, 4, 4))
    assert "conv2d_backward_data" in str(e.value) and "[1,5,4,4]" in str(e.value) and "[1,2,4,4]" in str(e.value)
    with pytest.raises(ValueError, match="input_shape"):
        ct.avg_pool2d_backward(np.zeros((1, 1, 2, 2), np.float32), (4, 4), 2)


# ---------------------------------------------------------------------------
# regressions: 1-tuples as PyTorch takes them; empty batches; the C-level
# defects seen from Python (strided bias, odd output layouts, windows wholly
# in the padding)
# ---------------------------------------------------------------------------

def test_one_tuple_keywords_as_torch(rng):
    x = rng.uniform(-1, 1, (1, 2, 5, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32)
    for kw in ({"padding": (1,)}, {"stride": (2,)}, {"dilation": (2,)}, {"padding": (1,), "stride": (1,),
                                                                          "dilation": (1,)}):
        plain = {k: v[0] for k, v in kw.items()}
        np.testing.assert_array_equal(_np(ct.conv2d(x, w, **kw)), _np(ct.conv2d(x, w, **plain)), err_msg=str(kw))
        np.testing.assert_array_equal(_np(ct.max_pool2d(x, (3,), **kw)), _np(ct.max_pool2d(x, 3, **plain)),
                                      err_msg=str(kw))
        y1, i1 = ct.max_pool2d(x, 3, return_indices=True, **kw)
        y2, i2 = ct.max_pool2d(x, 3, return_indices=True, **plain)
        np.testing.assert_array_equal(_np(i1), _np(i2))
        if "dilation" not in kw:
            np.testing.assert_array_equal(_np(ct.avg_pool2d(x, (3,), **kw)), _np(ct.avg_pool2d(x, 3, **plain)),
                                          err_msg=str(kw))
    # the reference agrees on what padding=(1,) means
    y = ct.conv2d(x, w, padding=(1,))
    ref, mag = conv2d_ref(x.astype(np.float64), w.astype(np.float64), padding=1)
    _close(y, ref, mag, "float32", "conv2d padding=(1,)")
    dx = ct.conv2d_backward_data(y, w, x.shape, padding=(1,))
    np.testing.assert_array_equal(_np(dx), _np(ct.conv2d_backward_data(y, w, x.shape, padding=1)))
    with pytest.raises(ValueError, match="padding"):
        ct.conv2d(x, w, padding=(1, 1, 1))


def test_one_tuple_keywords_vs_torch(rng):
    torch = pytest.importorskip("torch", reason="PyTorch not installed: torch 1-tuple cross-check skipped")
    F = torch.nn.functional
    x = rng.uniform(-1, 1, (1, 2, 5, 6)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 2, 3, 3)).astype(np.float32)
    tx, tw = torch.from_numpy(x), torch.from_numpy(w)
    np.testing.assert_allclose(_np(ct.conv2d(x, w, padding=(1,), stride=(2,), dilation=(1,))),
                               F.conv2d(tx, tw, padding=(1,), stride=(2,), dilation=(1,)).numpy(), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_array_equal(_np(ct.max_pool2d(x, (3,), stride=(2,), padding=(1,))),
                                  F.max_pool2d(tx, (3,), stride=(2,), padding=(1,)).numpy())
    np.testing.assert_allclose(_np(ct.avg_pool2d(x, (3,), stride=(2,), padding=(1,))),
                               F.avg_pool2d(tx, (3,), stride=(2,), padding=(1,)).numpy(), rtol=1e-6)


def test_empty_batch_norms_and_conv_gradients(rng):
    # batch_norm training on an empty batch: y empty, running stats untouched (as torch)
    rm = np.array([0.5, -1.0, 2.0], np.float32)
    rv = np.array([1.0, 2.0, 3.0], np.float32)
    rm0, rv0 = rm.copy(), rv.copy()
    y, mean, invstd = ct.batch_norm(np.zeros((0, 3, 4, 4), np.float32), rm, rv, training=True, return_stats=True)
    assert tuple(y.shape) == (0, 3, 4, 4)
    np.testing.assert_array_equal(_np(mean), np.zeros(3))
    assert np.isnan(_np(invstd)).all()
    np.testing.assert_array_equal(rm, rm0)
    np.testing.assert_array_equal(rv, rv0)
    dx, dscale, dshift = ct.batch_norm_backward(np.zeros((0, 3, 4, 4), np.float32),
                                                np.zeros((0, 3, 4, 4), np.float32), mean, invstd)
    np.testing.assert_array_equal(_np(dscale), np.zeros(3))
    np.testing.assert_array_equal(_np(dshift), np.zeros(3))
    # layer_norm over zero elements: mean 0, rstd NaN (torch's native_layer_norm)
    y, mean, rstd = ct.layer_norm(np.zeros((2, 0), np.float32), (0,), return_stats=True)
    np.testing.assert_array_equal(_np(mean), np.zeros(2))
    assert np.isnan(_np(rstd)).all()
    # layer_norm_backward of zero rows: dweight = dbias = 0
    x0 = np.zeros((0, 5), np.float32)
    _, dw, db = ct.layer_norm_backward(x0, x0, np.zeros(0, np.float32), np.zeros(0, np.float32), (5,),
                                       np.ones(5, np.float32))
    np.testing.assert_array_equal(_np(dw), np.zeros(5))
    np.testing.assert_array_equal(_np(db), np.zeros(5))
    # conv2d_backward_weight with N = 0: dw = 0, dbias = 0
    dw, db = ct.conv2d_backward_weight(np.zeros((0, 2, 5, 5), np.float32), np.zeros((0, 3, 3, 3), np.float32),
                                       (3, 2, 3, 3), bias=True)
    np.testing.assert_array_equal(_np(dw), np.zeros((3, 2, 3, 3)))
    np.testing.assert_array_equal(_np(db), np.zeros(3))


def test_strided_bias_and_odd_output_layouts(rng):
    a = np.eye(2, dtype=np.float32)
    b = np.array([[1, 2], [3, 4]], np.float32)
    buf = np.array([10, -777, 20], np.float32)
    np.testing.assert_array_equal(_np(ct.matmul(a, b, bias=buf[::2])), [[11, 22], [13, 24]])
    np.testing.assert_array_equal(_np(ct.matmul(a, b, bias=buf[::-2])), [[21, 12], [23, 14]])
    # out (2, 2) with element strides (3, 2)
    store = np.full(6, -5.0, np.float32)
    out = np.lib.stride_tricks.as_strided(store, (2, 2), (12, 8))
    ct.matmul(a, b, out=out)
    np.testing.assert_array_equal(store, [1, -5, 2, 3, -5, 4])
    # y (1, 2, 2, 2) of a conv2d with element strides (12, 6, 3, 2): no overlap, but oneDNN cannot describe it
    x = rng.uniform(-1, 1, (1, 2, 4, 4)).astype(np.float32)
    w = rng.uniform(-1, 1, (2, 2, 3, 3)).astype(np.float32)
    store = np.full(12, -5.0, np.float32)
    y = np.lib.stride_tricks.as_strided(store, (1, 2, 2, 2), (48, 24, 12, 8))
    ct.conv2d(x, w, out=y)
    ref, mag = conv2d_ref(x.astype(np.float64), w.astype(np.float64))
    _close(y.copy(), ref, mag, "float32", "conv2d into an odd layout")
    touched = np.zeros(12, bool)
    touched[[0, 2, 3, 5, 6, 8, 9, 11]] = True
    assert (store[~touched] == -5).all()


def test_pool_window_wholly_in_padding_is_refused():
    x = np.arange(2, dtype=np.float32).reshape(1, 1, 2, 1)
    msg = r"ct_nn(_workspace_size)?\(max_pool2d\): output row 0 .* whole window in the padding"
    with pytest.raises(ValueError, match=msg):
        ct.max_pool2d(x, (2, 1), stride=1, padding=(1, 0), dilation=(3, 1))
    with pytest.raises(ValueError, match="whole window in the padding"):
        ct.avg_pool2d(x, (2, 1), stride=1, padding=(1, 0), dilation=(3, 1))


def test_matmul_bfloat16_into_a_float32_out():
    ml = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(21)
    a = rng.standard_normal((3, 17, 40)).astype(ml.bfloat16)
    b = rng.standard_normal((3, 40, 9)).astype(ml.bfloat16)
    want = a.astype(np.float64) @ b.astype(np.float64)
    out = ct.empty((3, 17, 9), "float32", ct.asarray(a).device)
    try:
        ct.matmul(a, b, out=out)
    except NotImplementedError as e:  # no bfloat16 matmul on this CPU: the message says why
        assert "bfloat16" in str(e)
        return
    np.testing.assert_allclose(to_numpy(out), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="float32 for float16/bfloat16"):
        ct.matmul(a, b, out=ct.empty((3, 17, 9), "float64", ct.asarray(a).device))
    devs = {str(d) for d in ct.devices()}
    if "opencl:0" in devs:  # the GPU modules refuse the mixed output, saying where it runs
        with pytest.raises(NotImplementedError, match="CPU backend only|float32"):
            ct.matmul(ct.asarray(a).to(device="opencl:0"), ct.asarray(b).to(device="opencl:0"),
                      out=ct.empty((3, 17, 9), "float32", "opencl:0"))
