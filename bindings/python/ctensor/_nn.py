"""NN ops with torch.nn.functional's names and keywords.

Each function parses its keywords, works out the output shapes, allocates the
outputs (unless ``out=`` is given) on the input's device and makes one call
into the library (``_ctensor._nn``), which queries the workspace, takes it
from a per-thread cache and runs with the GIL released. Layouts are strides:
an NHWC tensor is passed as its (N, C, H, W) view, e.g. ``x.transpose(0, 3,
1, 2)`` of an (N, H, W, C) array, with no copy.
"""
from __future__ import annotations

from typing import Any, Sequence

from . import _ctensor

_OPS = {_ctensor._op_info(i)["name"]: i for i in range(_ctensor._op_count())}
_ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "sigmoid": 4, "tanh": 5}


def _op(name: str) -> int:
    return _OPS[name]


def _activation(fn: str, activation) -> int:
    if activation not in _ACTIVATIONS:
        raise ValueError(f"{fn}: activation={activation!r} (expected one of None, 'relu', 'gelu', 'gelu_tanh', "
                         f"'sigmoid', 'tanh')")
    return _ACTIVATIONS[activation]


def _pair(fn: str, name: str, v) -> tuple[int, int]:
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v)
    try:
        t = tuple(int(e) for e in v)
    except TypeError:
        raise TypeError(f"{fn}: {name} must be an int or a pair of ints, not {type(v).__name__}") from None
    if len(t) == 1:
        return (t[0], t[0])
    if len(t) != 2:
        raise ValueError(f"{fn}: {name}={v!r} must be an int or a pair of ints")
    return t


def _padding(fn: str, padding) -> tuple[int, int, int, int]:
    """(top, left, bottom, right) from an int, a 1-tuple, a pair (both sides) or a 4-tuple in ONNX's order."""
    if isinstance(padding, int) and not isinstance(padding, bool):
        return (padding,) * 4
    try:
        t = tuple(int(e) for e in padding)
    except TypeError:
        raise TypeError(f"{fn}: padding must be an int, a pair or a 4-tuple, not {type(padding).__name__}") from None
    if len(t) == 1:  # PyTorch expands a 1-tuple as it does an int
        return t * 4
    if len(t) == 2:
        return (t[0], t[1], t[0], t[1])
    if len(t) == 4:
        return t
    raise ValueError(f"{fn}: padding={padding!r}: give an int, (pad,), (pad_h, pad_w) or (top, left, bottom, right)")


def _info(x):
    return _ctensor._arg_info(x)


def _new(out, shape, dtype, like_device):
    if out is not None:
        return out
    return _ctensor.empty(tuple(shape), dtype, like_device)


def _conv_out(size: int, k: int, stride: int, pb: int, pe: int, dilation: int) -> int:
    return (size + pb + pe - dilation * (k - 1) - 1) // stride + 1


def matmul(x1, x2, *, bias=None, activation: str | None = None, out=None):
    """x1 @ x2 with NumPy's matmul semantics for operands of at least 2 dims.

    Batch dims broadcast; a transposed operand is just a strided view (``a.T``).
    bias (optional) broadcasts to the result, typically (N,) or (M, N); it has
    the data dtype or float32. activation: None, "relu", "gelu", "gelu_tanh",
    "sigmoid" or "tanh", applied after the bias. float32 and bfloat16.
    """
    s1, dt, dev = _info(x1)
    s2, _, _ = _info(x2)
    if len(s1) < 2 or len(s2) < 2:
        raise ValueError(f"matmul: x1.shape={list(s1)} and x2.shape={list(s2)}: both operands need at least 2 dims")
    b1, b2 = s1[:-2], s2[:-2]
    n = max(len(b1), len(b2))
    b1 = (1,) * (n - len(b1)) + tuple(b1)
    b2 = (1,) * (n - len(b2)) + tuple(b2)
    batch = []
    for p, q in zip(b1, b2):
        if p != q and p != 1 and q != 1:
            raise ValueError(f"matmul: batch dims of x1.shape={list(s1)} and x2.shape={list(s2)} do not broadcast")
        batch.append(p if q == 1 else q)
    shape = tuple(batch) + (s1[-2], s2[-1])
    y = _new(out, shape, dt, dev)
    _ctensor._nn(_op("matmul"), [x1, x2, bias, y], [_activation("matmul", activation)], [])
    return y


def linear(input, weight, bias=None, *, activation: str | None = None, out=None):
    """input @ weight.T + bias, as torch.nn.functional.linear (weight is (out_features, in_features))."""
    sw, _, _ = _info(weight)
    if len(sw) != 2:
        raise ValueError(f"linear: weight.shape={list(sw)} must be 2-d (out_features, in_features)")
    wt = _transpose_view(weight)
    return matmul(input, wt, bias=bias, activation=activation, out=out)


def _transpose_view(w):
    """w.T without a copy, for any array type with .T / mT, else through NumPy's DLPack import."""
    if hasattr(w, "mT"):
        return w.mT
    if hasattr(w, "T"):
        return w.T
    import numpy as np

    return np.from_dlpack(w).T


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1, *,
           activation: str | None = None, out=None):
    """2-d convolution (cross-correlation), as torch.nn.functional.conv2d.

    input (N, C, H, W), weight (K, C/groups, R, S), bias (K,) or None; any
    strides, so NHWC input is its NCHW view. stride, dilation: int or pair.
    padding: int, (pad_h, pad_w), (top, left, bottom, right) in ONNX's order,
    "valid", or "same" (stride 1). activation is fused after the bias.
    Returns (N, K, P, Q).
    """
    fn = "conv2d"
    sx, dt, dev = _info(input)
    sw, _, _ = _info(weight)
    if len(sx) != 4 or len(sw) != 4:
        raise ValueError(f"conv2d: input.shape={list(sx)} and weight.shape={list(sw)} must both be 4-d "
                         f"(N, C, H, W) and (K, C/groups, R, S)")
    sh, sw_ = _pair(fn, "stride", stride)
    dh, dw = _pair(fn, "dilation", dilation)
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if (sh, sw_) != (1, 1):
                raise ValueError("conv2d: padding='same' needs stride 1 (as in PyTorch)")
            th, tw = dh * (sw[2] - 1), dw * (sw[3] - 1)
            pads = (th // 2, tw // 2, th - th // 2, tw - tw // 2)
        else:
            raise ValueError(f"conv2d: padding={padding!r} (expected an int, a tuple, 'valid' or 'same')")
    else:
        pads = _padding(fn, padding)
    p = _conv_out(sx[2], sw[2], sh or 1, pads[0], pads[2], dh or 1)
    q = _conv_out(sx[3], sw[3], sw_ or 1, pads[1], pads[3], dw or 1)
    y = _new(out, (sx[0], sw[0], max(p, 0), max(q, 0)), dt, dev)
    _ctensor._nn(_op("conv2d"), [input, weight, bias, y],
                 [groups, sh, sw_, pads[0], pads[1], pads[2], pads[3], dh, dw, _activation(fn, activation)], [])
    return y


def conv2d_backward_data(grad_output, weight, input_shape: Sequence[int], stride=1, padding=0, dilation=1,
                         groups: int = 1, *, out=None):
    """The gradient of conv2d with respect to its input, of shape input_shape (N, C, H, W)."""
    fn = "conv2d_backward_data"
    _, dt, dev = _info(grad_output)
    sh, sw = _pair(fn, "stride", stride)
    dh, dw = _pair(fn, "dilation", dilation)
    pads = _padding(fn, padding)
    dx = _new(out, tuple(input_shape), dt, dev)
    _ctensor._nn(_op(fn), [grad_output, weight, dx], [groups, sh, sw, *pads, dh, dw, 0], [])
    return dx


def conv2d_backward_weight(input, grad_output, weight_shape: Sequence[int], stride=1, padding=0, dilation=1,
                           groups: int = 1, *, bias: bool = False):
    """The gradient of conv2d with respect to its weight (shape weight_shape), and with bias=True also
    the bias gradient (grad_output summed over N, P, Q): returns dw or (dw, dbias)."""
    fn = "conv2d_backward_weight"
    _, dt, dev = _info(input)
    sh, sw = _pair(fn, "stride", stride)
    dh, dw_ = _pair(fn, "dilation", dilation)
    pads = _padding(fn, padding)
    dw = _ctensor.empty(tuple(weight_shape), dt, dev)
    db = _ctensor.empty((weight_shape[0],), dt, dev) if bias else None
    _ctensor._nn(_op(fn), [input, grad_output, dw, db], [groups, sh, sw, *pads, dh, dw_, 0], [])
    return (dw, db) if bias else dw


def _pool_geometry(fn: str, shape, kernel_size, stride, padding, dilation, ceil_mode: bool):
    kh, kw = _pair(fn, "kernel_size", kernel_size)
    sh, sw = _pair(fn, "stride", stride) if stride is not None and stride != () and stride != [] else (kh, kw)
    dh, dw = _pair(fn, "dilation", dilation)
    pads = list(_padding(fn, padding))
    if len(shape) != 4:
        raise ValueError(f"{fn}: input.shape={list(shape)} must be 4-d (N, C, H, W)")
    out_hw = []
    for axis, (size, k, s, d) in enumerate(((shape[2], kh, sh, dh), (shape[3], kw, sw, dw))):
        pb, pe = pads[axis], pads[axis + 2]
        span = size + pb + pe - (d or 1) * (k - 1) - 1
        s = s or 1
        n = (span + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and n > 1 and (n - 1) * s >= size + pb:
            n -= 1  # PyTorch: the last window must start inside the input or the leading padding
        if ceil_mode:
            # ceil_mode is a larger trailing pad: enough that floor division gives n windows
            need = (n - 1) * s + (d or 1) * (k - 1) + 1 - (size + pb + pe)
            if need > 0:
                pads[axis + 2] += need
        out_hw.append(max(n, 0))
    return (kh, kw, sh, sw, dh, dw, pads, out_hw)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False, *, out=None):
    """Max pooling over (H, W) windows, as torch.nn.functional.max_pool2d.

    stride defaults to kernel_size; padding is an int, a pair or (top, left,
    bottom, right) and never wins (it is -inf). With return_indices, also
    returns int64 indices h * W + w of each max within its (n, c) plane
    (PyTorch's convention), which max_pool2d_backward takes.
    """
    fn = "max_pool2d"
    shape, dt, dev = _info(input)
    kh, kw, sh, sw, dh, dw, pads, (p, q) = _pool_geometry(fn, shape, kernel_size, stride, padding, dilation,
                                                          ceil_mode)
    y = _new(out, (shape[0], shape[1], p, q), dt, dev)
    idx = _ctensor.empty((shape[0], shape[1], p, q), "int64", dev) if return_indices else None
    _ctensor._nn(_op(fn), [input, y, idx], [0, kh, kw, sh, sw, *pads, dh, dw], [])
    return (y, idx) if return_indices else y


def max_pool2d_backward(grad_output, indices, input_shape: Sequence[int], kernel_size, stride=None, padding=0,
                        dilation=1, ceil_mode: bool = False, *, out=None):
    """The gradient of max_pool2d with respect to its input (shape input_shape), from the forward's indices."""
    fn = "max_pool2d_backward"
    _, dt, dev = _info(grad_output)
    kh, kw, sh, sw, dh, dw, pads, _ = _pool_geometry(fn, tuple(input_shape), kernel_size, stride, padding, dilation,
                                                     ceil_mode)
    dx = _new(out, tuple(input_shape), dt, dev)
    _ctensor._nn(_op(fn), [grad_output, indices, dx], [0, kh, kw, sh, sw, *pads, dh, dw], [])
    return dx


def _avg_mode(fn: str, padding, ceil_mode: bool, count_include_pad: bool, divisor_override) -> int:
    if divisor_override is not None:
        raise NotImplementedError(f"{fn}: divisor_override is not supported (ctensor divides by the window or by "
                                  f"the elements inside the input)")
    if ceil_mode and count_include_pad and any(_padding(fn, padding)):
        # PyTorch's divisor then counts the padding but not the extra ceil_mode cells.
        raise NotImplementedError(f"{fn}: ceil_mode=True with count_include_pad=True and nonzero padding has a "
                                  f"divisor ctensor's avg_pool2d does not express")
    # With ceil_mode and no padding, PyTorch divides by the cells inside the input.
    return 0 if (ceil_mode and not any(_padding(fn, padding))) else int(bool(count_include_pad))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override=None, *, dilation=1, out=None):
    """Average pooling over (H, W) windows, as torch.nn.functional.avg_pool2d.

    count_include_pad=True divides by the whole window, False by the cells
    inside the input. dilation (keyword only, not in PyTorch; ONNX has it)
    spreads the window as in max_pool2d.
    """
    fn = "avg_pool2d"
    shape, dt, dev = _info(input)
    cip = _avg_mode(fn, padding, ceil_mode, count_include_pad, divisor_override)
    kh, kw, sh, sw, dh, dw, pads, (p, q) = _pool_geometry(fn, shape, kernel_size, stride, padding, dilation,
                                                          ceil_mode)
    y = _new(out, (shape[0], shape[1], p, q), dt, dev)
    _ctensor._nn(_op(fn), [input, y], [cip, kh, kw, sh, sw, *pads, dh, dw], [])
    return y


def avg_pool2d_backward(grad_output, input_shape: Sequence[int], kernel_size, stride=None, padding=0,
                        ceil_mode: bool = False, count_include_pad: bool = True, *, dilation=1, out=None):
    """The gradient of avg_pool2d with respect to its input (shape input_shape)."""
    fn = "avg_pool2d_backward"
    _, dt, dev = _info(grad_output)
    cip = _avg_mode(fn, padding, ceil_mode, count_include_pad, None)
    kh, kw, sh, sw, dh, dw, pads, _ = _pool_geometry(fn, tuple(input_shape), kernel_size, stride, padding,
                                                     dilation, ceil_mode)
    dx = _new(out, tuple(input_shape), dt, dev)
    _ctensor._nn(_op(fn), [grad_output, dx], [cip, kh, kw, sh, sw, *pads, dh, dw], [])
    return dx


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5, *, return_stats: bool = False, out=None):
    """Batch normalisation over channel dim 1 of input (N, C, ...), as torch.nn.functional.batch_norm.

    Inference (training=False) uses running_mean and running_var. Training
    uses the batch's statistics and, when running_mean/running_var are given,
    updates them in place as PyTorch does (running_var with the unbiased
    variance). With return_stats (training only) also returns the batch mean
    and invstd = 1 / sqrt(var + eps), which batch_norm_backward takes.
    Per-channel tensors are float32.
    """
    shape, dt, dev = _info(input)
    if len(shape) < 2:
        raise ValueError(f"batch_norm: input.shape={list(shape)} needs at least 2 dims (N, C, ...)")
    y = _new(out, shape, dt, dev)
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: training=False needs running_mean and running_var")
        if return_stats:
            raise ValueError("batch_norm: return_stats needs training=True (inference computes no statistics)")
        _ctensor._nn(_op("batch_norm"), [input, running_mean, running_var, weight, bias, y], [], [eps])
        return y
    c = shape[1]
    mean = _ctensor.empty((c,), "float32", dev)
    invstd = _ctensor.empty((c,), "float32", dev)
    _ctensor._nn(_op("batch_norm_training"), [input, weight, bias, y, mean, invstd], [], [eps])
    n = 1
    for i, s in enumerate(shape):
        if i != 1:
            n *= s
    # An empty batch has no statistics (mean 0, invstd NaN): PyTorch then
    # leaves the running ones as they are.
    if n > 0 and (running_mean is not None or running_var is not None):
        if running_mean is not None:
            # running_mean = (1 - momentum) * running_mean + momentum * mean
            _ctensor.lerp(running_mean, mean, float(momentum), out=running_mean)
        if running_var is not None:
            # var = 1 / invstd^2 - eps (biased); unbiased = var * n / (n - 1)
            var = _ctensor.reciprocal(_ctensor.square(invstd))
            var = _ctensor.add_scalar(var, -float(eps), out=var)
            if n > 1:
                _ctensor.mul_scalar(var, n / (n - 1), out=var)
            _ctensor.lerp(running_var, var, float(momentum), out=running_var)
    return (y, mean, invstd) if return_stats else y


def batch_norm_backward(input, grad_output, mean, invstd, weight=None, eps: float = 1e-5):
    """Gradients of training-mode batch_norm: (dx, dweight, dbias), from the forward's mean and invstd."""
    shape, dt, dev = _info(input)
    dx = _ctensor.empty(shape, dt, dev)
    dscale = _ctensor.empty((shape[1],), "float32", dev)
    dshift = _ctensor.empty((shape[1],), "float32", dev)
    _ctensor._nn(_op("batch_norm_backward"), [input, grad_output, mean, invstd, weight, dx, dscale, dshift], [],
                 [eps])
    return dx, dscale, dshift


def _normalized_ndim(fn: str, shape, normalized_shape) -> int:
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(ns)
    if k == 0 or k > len(shape) or tuple(shape[len(shape) - k:]) != ns:
        raise ValueError(f"{fn}: normalized_shape={list(ns)} must be the trailing dims of input.shape={list(shape)}")
    return k


def layer_norm(input, normalized_shape, weight=None, bias=None, eps: float = 1e-5, *, return_stats: bool = False,
               out=None):
    """Layer normalisation over the trailing dims normalized_shape, as torch.nn.functional.layer_norm.

    weight and bias have shape normalized_shape (float32). With return_stats
    also returns mean and rstd = 1 / sqrt(var + eps) (float32, input's shape
    without the normalized dims), which layer_norm_backward takes.
    """
    fn = "layer_norm"
    shape, dt, dev = _info(input)
    k = _normalized_ndim(fn, shape, normalized_shape)
    y = _new(out, shape, dt, dev)
    mean = rstd = None
    if return_stats:
        mean = _ctensor.empty(tuple(shape[:len(shape) - k]), "float32", dev)
        rstd = _ctensor.empty(tuple(shape[:len(shape) - k]), "float32", dev)
    _ctensor._nn(_op(fn), [input, weight, bias, y, mean, rstd], [k], [eps])
    return (y, mean, rstd) if return_stats else y


def layer_norm_backward(input, grad_output, mean, rstd, normalized_shape, weight=None):
    """Gradients of layer_norm: (dx, dweight, dbias), from the forward's mean and rstd."""
    fn = "layer_norm_backward"
    shape, dt, dev = _info(input)
    k = _normalized_ndim(fn, shape, normalized_shape)
    dx = _ctensor.empty(shape, dt, dev)
    tail = tuple(shape[len(shape) - k:])
    dscale = _ctensor.empty(tail, "float32", dev)
    dshift = _ctensor.empty(tail, "float32", dev)
    _ctensor._nn(_op(fn), [input, grad_output, mean, rstd, weight, dx, dscale, dshift], [k], [0.0])
    return dx, dscale, dshift


__all__ = [
    "matmul", "linear", "conv2d", "conv2d_backward_data", "conv2d_backward_weight", "max_pool2d",
    "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward", "batch_norm", "batch_norm_backward", "layer_norm",
    "layer_norm_backward",
]
_ = Any
