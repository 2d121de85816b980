"""NN ops with torch.nn.functional's names and keywords.

Each function translates its keywords into the fields of the op's C
descriptor (CTConv2dDesc, CTPool2dDesc, ...) and makes one call into the
library (``_ctensor._nn``), which takes the tensors by position from the op's
row, allocates the outputs the library's shape query (ct_op_output_info)
gives (unless ``out=`` is given) on the input's device, queries the
workspace, takes it from a per-thread cache and runs ct_nn with the GIL
released. No output shape is computed here. Layouts are strides: an NHWC
tensor is passed as its (N, C, H, W) view, e.g. ``x.transpose(0, 3, 1, 2)``
of an (N, H, W, C) array, with no copy.
"""
from __future__ import annotations

from typing import Any, Sequence

from . import _ctensor

_OPS = {_ctensor._op_info(i)["name"]: i for i in range(_ctensor._op_count())}
_ACTIVATIONS = {None: 0, "none": 0, "relu": 1, "gelu": 2, "gelu_tanh": 3, "sigmoid": 4, "tanh": 5}


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


class Spec:
    """A stand-in for an array: its shape and dtype name only. Given Specs, the functions here run no kernel:
    they translate their keywords as always and answer Specs of their outputs from the library's shape query
    (ct_op_output_info). The framework adapters' fake tensors (ctensor.torch's meta functions) go through it, so
    an output shape is never computed twice."""

    __slots__ = ("shape", "dtype", "call", "base")

    def __init__(self, shape, dtype, call=None, base=None) -> None:
        self.shape, self.dtype = tuple(int(e) for e in shape), str(dtype)
        # on an output: (row name, descriptor fields, extent, which of the row's tensor arguments are present,
        # the row's inputs: Specs, None for an absent one), what a framework adapter passes to ct_nn itself
        self.call = call
        # a view made here of another Spec: (that Spec, "mT"), so an adapter makes the same view of its array
        self.base = base

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def mT(self) -> Spec:  # noqa: N802 (the array API's name)
        return Spec(self.shape[:-2] + self.shape[-2:][::-1], self.dtype, base=(self, "mT"))

    def __repr__(self) -> str:
        return f"Spec({self.shape}, {self.dtype!r})"


def _info(x):
    if isinstance(x, Spec):
        return x.shape, x.dtype, None
    return _ctensor._arg_info(x)


def _run(name: str, inputs, outputs, desc: dict, extent=None) -> tuple:
    """ct_nn on op `name`: inputs and outputs in the order of its row (see _ctensor._nn). With Spec inputs, the
    outputs' Specs from the shape query instead (an output given as a shape keeps it, one left out is None)."""
    if any(isinstance(t, Spec) for t in inputs):
        specs = [None if t is None else _info(t)[:2] for t in inputs]
        infos = _ctensor._output_info(_OPS[name], specs, desc=desc, extent=extent)
        outs = [True] * len(infos) if outputs is None else outputs
        call = (name, desc, extent, [t is not None for t in inputs] + [o is not None for o in outs], list(inputs))
        return tuple(None if o is None else Spec(o if isinstance(o, tuple) else s, d, call)
                     for o, (s, d) in zip(outs, infos))
    return _ctensor._nn(_OPS[name], inputs, outputs, desc, extent)


def _out(out):
    """out= or, without it, a new output shaped by the library's shape query."""
    return True if out is None else out


def _shape4(fn: str, name: str, shape) -> tuple[int, int, int, int]:
    """A caller's (N, C, H, W) argument: the backward ops take the shape they produce."""
    t = tuple(int(e) for e in shape)
    if len(t) != 4:
        raise ValueError(f"{fn}: {name}={list(t)} must be 4-d (N, C, H, W)")
    return t


def matmul(x1, x2, *, bias=None, activation: str | None = None, out=None):
    """x1 @ x2 with NumPy's matmul semantics for operands of at least 2 dims.

    Batch dims broadcast; a transposed operand is just a strided view (``a.T``).
    bias (optional) broadcasts to the result, typically (N,) or (M, N); it has
    the data dtype or float32. activation: None, "relu", "gelu", "gelu_tanh",
    "sigmoid" or "tanh", applied after the bias. float32 and bfloat16.
    """
    (y,) = _run("matmul", [x1, x2, bias], [_out(out)], {"activation": _activation("matmul", activation)})
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


def _conv_desc(fn: str, stride, padding, dilation, groups: int, weight=None, activation: int = 0) -> dict:
    """CTConv2dDesc's fields from torch.nn.functional.conv2d's keywords."""
    sh, sw = _pair(fn, "stride", stride)
    dh, dw = _pair(fn, "dilation", dilation)
    if isinstance(padding, str):
        if padding == "valid":
            pads = (0, 0, 0, 0)
        elif padding == "same":
            if (sh, sw) != (1, 1):
                raise ValueError(f"{fn}: padding='same' needs stride 1 (as in PyTorch)")
            # PyTorch's 'same': the dilated kernel's extent - 1 in total, the odd cell at the end
            ks = _info(weight)[0]
            th, tw = ((dh or 1) * (ks[2] - 1), (dw or 1) * (ks[3] - 1)) if len(ks) == 4 else (0, 0)
            pads = (th // 2, tw // 2, th - th // 2, tw - tw // 2)
        else:
            raise ValueError(f"{fn}: padding={padding!r} (expected an int, a tuple, 'valid' or 'same')")
    else:
        pads = _padding(fn, padding)
    return {"groups": groups, "stride": (sh, sw), "pad_begin": pads[:2], "pad_end": pads[2:], "dilation": (dh, dw),
            "activation": activation}


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
    desc = _conv_desc(fn, stride, padding, dilation, groups, weight, _activation(fn, activation))
    (y,) = _run(fn, [input, weight, bias], [_out(out)], desc)
    return y


def conv2d_backward_data(grad_output, weight, input_shape: Sequence[int], stride=1, padding=0, dilation=1,
                         groups: int = 1, *, out=None):
    """The gradient of conv2d with respect to its input, of shape input_shape (N, C, H, W)."""
    fn = "conv2d_backward_data"
    xs = _shape4(fn, "input_shape", input_shape)
    desc = _conv_desc(fn, stride, padding, dilation, groups)
    (dx,) = _run(fn, [grad_output, weight], [xs if out is None else out], desc, extent=xs[2:])
    return dx


def conv2d_backward_weight(input, grad_output, weight_shape: Sequence[int], stride=1, padding=0, dilation=1,
                           groups: int = 1, *, bias: bool = False):
    """The gradient of conv2d with respect to its weight (shape weight_shape), and with bias=True also
    the bias gradient (grad_output summed over N, P, Q): returns dw or (dw, dbias)."""
    fn = "conv2d_backward_weight"
    ws = _shape4(fn, "weight_shape", weight_shape)
    desc = _conv_desc(fn, stride, padding, dilation, groups)
    dw, db = _run(fn, [input, grad_output], [ws, True if bias else None], desc, extent=ws[2:])
    return (dw, db) if bias else dw


def _ceil_mode_pad_end(kind: str, shape, dtype: str, desc: dict) -> tuple[int, int]:
    """torch's ceil_mode as CTPool2dDesc expresses it: a larger pad_end.

    ceil_mode also counts a last, partial window when cells are left over past
    the last full one, if it starts inside the input or the leading padding.
    ctensor counts windows by floor division, so the trailing padding grows
    until it counts that window too. The counts come from the library's shape
    query; when a query fails the op itself reports the problem.
    """
    pad_end = tuple(desc["pad_end"])
    if len(shape) != 4:
        return pad_end
    n, c, h, w = shape
    s = [desc["stride"][i] or desc["kernel"][i] for i in (0, 1)]
    fwd, bwd = _OPS[kind + "_pool2d"], _OPS[kind + "_pool2d_backward"]
    try:
        # ceil division's counts are floor division's over an input stride - 1 cells longer
        (ceil_shape, _), *_ = _ctensor._output_info(fwd, [((n, c, h + s[0] - 1, w + s[1] - 1), dtype)], desc=desc)
    except (ValueError, TypeError, NotImplementedError):
        return pad_end
    counts = list(ceil_shape[2:])
    for i, size in enumerate((h, w)):
        if counts[i] > 1 and (counts[i] - 1) * s[i] >= size + desc["pad_begin"][i]:
            counts[i] -= 1  # that window would start in the trailing padding (torch drops it)
    try:
        (floor_shape, _), *_ = _ctensor._output_info(fwd, [((n, c, h, w), dtype)], desc=desc)
        floor = list(floor_shape[2:])
    except (ValueError, TypeError, NotImplementedError):
        floor = [0, 0]
    if counts == floor:
        return pad_end
    # the smallest input with that many windows: the backward's inferred input extent
    dy = ((n, c, counts[0], counts[1]), dtype)
    inputs = [dy, ((n, c, counts[0], counts[1]), "int64")] if kind == "max" else [dy]
    try:
        ((_, _, hmin, wmin), _), = _ctensor._output_info(bwd, inputs, desc=desc)
    except (ValueError, TypeError, NotImplementedError):
        return pad_end
    return (pad_end[0] + max(0, hmin - h), pad_end[1] + max(0, wmin - w))


def _pool_desc(fn: str, kind: str, shape, dtype: str, kernel_size, stride, padding, dilation, ceil_mode: bool,
               count_include_pad: int = 0) -> dict:
    """CTPool2dDesc's fields from torch.nn.functional's pooling keywords, for input of `shape`."""
    kernel = _pair(fn, "kernel_size", kernel_size)
    # stride 0 is the kernel size, PyTorch's default
    st = _pair(fn, "stride", stride) if stride is not None and stride != () and stride != [] else (0, 0)
    pads = _padding(fn, padding)
    desc = {"count_include_pad": count_include_pad, "kernel": kernel, "stride": st, "pad_begin": pads[:2],
            "pad_end": pads[2:], "dilation": _pair(fn, "dilation", dilation)}
    if ceil_mode:
        desc["pad_end"] = _ceil_mode_pad_end(kind, shape, dtype, desc)
    return desc


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False, *, out=None):
    """Max pooling over (H, W) windows, as torch.nn.functional.max_pool2d.

    stride defaults to kernel_size; padding is an int, a pair or (top, left,
    bottom, right) and never wins (it is -inf). With return_indices, also
    returns int64 indices h * W + w of each max within its (n, c) plane
    (PyTorch's convention), which max_pool2d_backward takes.
    """
    fn = "max_pool2d"
    shape, dt, _ = _info(input)
    desc = _pool_desc(fn, "max", shape, dt, kernel_size, stride, padding, dilation, ceil_mode)
    y, idx = _run(fn, [input], [_out(out), True if return_indices else None], desc)
    return (y, idx) if return_indices else y


def max_pool2d_backward(grad_output, indices, input_shape: Sequence[int], kernel_size, stride=None, padding=0,
                        dilation=1, ceil_mode: bool = False, *, out=None):
    """The gradient of max_pool2d with respect to its input (shape input_shape), from the forward's indices."""
    fn = "max_pool2d_backward"
    _, dt, _ = _info(grad_output)
    xs = _shape4(fn, "input_shape", input_shape)
    desc = _pool_desc(fn, "max", xs, dt, kernel_size, stride, padding, dilation, ceil_mode)
    (dx,) = _run(fn, [grad_output, indices], [xs if out is None else out], desc, extent=xs[2:])
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
    shape, dt, _ = _info(input)
    cip = _avg_mode(fn, padding, ceil_mode, count_include_pad, divisor_override)
    desc = _pool_desc(fn, "avg", shape, dt, kernel_size, stride, padding, dilation, ceil_mode, cip)
    (y,) = _run(fn, [input], [_out(out)], desc)
    return y


def avg_pool2d_backward(grad_output, input_shape: Sequence[int], kernel_size, stride=None, padding=0,
                        ceil_mode: bool = False, count_include_pad: bool = True, *, dilation=1, out=None):
    """The gradient of avg_pool2d with respect to its input (shape input_shape)."""
    fn = "avg_pool2d_backward"
    _, dt, _ = _info(grad_output)
    xs = _shape4(fn, "input_shape", input_shape)
    cip = _avg_mode(fn, padding, ceil_mode, count_include_pad, None)
    desc = _pool_desc(fn, "avg", xs, dt, kernel_size, stride, padding, dilation, ceil_mode, cip)
    (dx,) = _run(fn, [grad_output], [xs if out is None else out], desc, extent=xs[2:])
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
    desc = {"epsilon": eps}
    if not training:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: training=False needs running_mean and running_var")
        if return_stats:
            raise ValueError("batch_norm: return_stats needs training=True (inference computes no statistics)")
        (y,) = _run("batch_norm", [input, running_mean, running_var, weight, bias], [_out(out)], desc)
        return y
    y, mean, invstd = _run("batch_norm_training", [input, weight, bias], [_out(out), True, True], desc)
    shape = _info(input)[0]
    n = 1  # values per channel, for PyTorch's unbiased running variance
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
    dx, dscale, dshift = _run("batch_norm_backward", [input, grad_output, mean, invstd, weight], None,
                              {"epsilon": eps})
    return dx, dscale, dshift


def _normalized_ndim(fn: str, shape, normalized_shape) -> int:
    """torch's normalized_shape as CTLayerNormDesc's normalized_ndim (it must be input's trailing dims)."""
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
    k = _normalized_ndim(fn, _info(input)[0], normalized_shape)
    stats = True if return_stats else None
    y, mean, rstd = _run(fn, [input, weight, bias], [_out(out), stats, stats], {"normalized_ndim": k, "epsilon": eps})
    return (y, mean, rstd) if return_stats else y


def layer_norm_backward(input, grad_output, mean, rstd, normalized_shape, weight=None):
    """Gradients of layer_norm: (dx, dweight, dbias), from the forward's mean and rstd."""
    fn = "layer_norm_backward"
    k = _normalized_ndim(fn, _info(input)[0], normalized_shape)
    dx, dscale, dshift = _run(fn, [input, grad_output, mean, rstd, weight], None, {"normalized_ndim": k})
    return dx, dscale, dshift


__all__ = [
    "matmul", "linear", "conv2d", "conv2d_backward_data", "conv2d_backward_weight", "max_pool2d",
    "max_pool2d_backward", "avg_pool2d", "avg_pool2d_backward", "batch_norm", "batch_norm_backward", "layer_norm",
    "layer_norm_backward",
]
_ = Any
