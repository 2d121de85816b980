"""NN functions that are views of the 2-d ops: conv1d, conv_transpose1d/2d, max_pool1d, avg_pool1d, glu, and
topk (argsort plus gather).

A 1-d op is its 2-d op on a view with a unit height ((N, C, L) as (N, C, 1, L), the weight likewise), as oneDNN
and cuDNN run them; a transposed convolution is exactly the gradient of a convolution with respect to its input
(conv2d_backward_data: PyTorch's transposed weight (C_in, C_out/groups, kH, kW) is the forward weight of a
convolution from C_out to C_in), plus the bias. So each runs wherever and in whatever dtype the 2-d op runs, with
its speed and its checks; C and C++ callers lower them the same way with CTensor views.
"""

from __future__ import annotations

import operator

from . import _ctensor
from . import _views
from ._index import gather
from ._nn import avg_pool2d, conv2d, conv2d_backward_data, max_pool2d


def _one(fn: str, name: str, v) -> int:
    if isinstance(v, (tuple, list)):
        if len(v) != 1:
            raise ValueError(f"{fn}: {name}={v!r} must be an int or a 1-tuple")
        v = v[0]
    return operator.index(v)


def _pair(fn: str, name: str, v) -> tuple[int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) != 2:
            raise ValueError(f"{fn}: {name}={v!r} must be an int or a pair")
        return operator.index(v[0]), operator.index(v[1])
    v = operator.index(v)
    return v, v


def _batched(fn: str, x, nd: int):
    """x as a batched view (a leading 1 for PyTorch's unbatched form) and whether it was unbatched."""
    t = _ctensor.asarray(x)
    if t.ndim == nd - 1:
        return _views.expand_dims(t, 0), True
    if t.ndim != nd:
        raise ValueError(f"{fn}: input has {t.ndim} dims; it needs {nd - 1} (unbatched) or {nd}")
    return t, False


def _unbatch(y, unbatched: bool):
    return _views.squeeze(y, 0) if unbatched else y


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """1-d convolution, as torch.nn.functional.conv1d: input (N, C, L) or (C, L), weight (K, C/groups, R); padding
    an int, "valid" or "same". conv2d on a unit-height view."""
    fn = "conv1d"
    x, unb = _batched(fn, input, 3)
    w = _ctensor.asarray(weight)
    if w.ndim != 3:
        raise ValueError(f"{fn}: weight.shape={list(w.shape)} must be 3-d (K, C/groups, R)")
    s, d = _one(fn, "stride", stride), _one(fn, "dilation", dilation)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"{fn}: padding={padding!r} (expected an int, 'valid' or 'same')")
        if padding == "same" and s != 1:
            raise ValueError(f"{fn}: padding='same' needs stride 1 (as in PyTorch)")
        total = d * (w.shape[2] - 1) if padding == "same" else 0
        pads = (0, total // 2, 0, total - total // 2)
    else:
        p = _one(fn, "padding", padding)
        pads = (0, p, 0, p)
    y = conv2d(_views.expand_dims(x, 2), _views.expand_dims(w, 2), bias, stride=(1, s), padding=pads,
               dilation=(1, d), groups=groups)
    return _unbatch(_views.squeeze(_ctensor.asarray(y), 2), unb)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1):
    """2-d transposed convolution, as torch.nn.functional.conv_transpose2d: input (N, C_in, H, W) or unbatched,
    weight (C_in, C_out/groups, kH, kW). The input gradient of a conv2d (conv2d_backward_data), plus the bias."""
    fn = "conv_transpose2d"
    x, unb = _batched(fn, input, 4)
    w = _ctensor.asarray(weight)
    if w.ndim != 4:
        raise ValueError(f"{fn}: weight.shape={list(w.shape)} must be 4-d (C_in, C_out/groups, kH, kW)")
    (sh, sw), (ph, pw) = _pair(fn, "stride", stride), _pair(fn, "padding", padding)
    (oph, opw), (dh, dw) = _pair(fn, "output_padding", output_padding), _pair(fn, "dilation", dilation)
    narrow = str(x.dtype) if bias is not None and str(x.dtype) in ("bfloat16", "float16") else None
    if narrow:  # the bias is added before the one rounding, as PyTorch's fused kernel does: in float32
        x, w = _ctensor.asarray(_ctensor.astype(x, "float32")), _ctensor.asarray(_ctensor.astype(w, "float32"))
        bias = _ctensor.astype(bias, "float32")
    if oph >= max(sh, dh) or opw >= max(sw, dw):
        raise ValueError(f"{fn}: output_padding=({oph}, {opw}) must be smaller than the stride or the dilation")
    n, _, h, wd = x.shape
    ho = (h - 1) * sh - 2 * ph + dh * (w.shape[2] - 1) + oph + 1
    wo = (wd - 1) * sw - 2 * pw + dw * (w.shape[3] - 1) + opw + 1
    # An output_padding of a stride or more (PyTorch allows it below the dilation) makes the forward conv of
    # (ho, wo) one output longer than x: x gets zero rows or columns there, which add nothing.
    hy = (ho + 2 * ph - dh * (w.shape[2] - 1) - 1) // sh + 1
    wy = (wo + 2 * pw - dw * (w.shape[3] - 1) - 1) // sw + 1
    if (hy, wy) != (h, wd):
        from ._movement import pad

        x = pad(x, (0, wy - wd, 0, hy - h))
    y = conv2d_backward_data(x, w, (n, w.shape[1] * groups, ho, wo), stride=(sh, sw), padding=(ph, pw),
                             dilation=(dh, dw), groups=groups)
    if bias is not None:
        b = _ctensor.asarray(bias)
        y = _ctensor.add(y, _views.reshape(b, 1, b.shape[0], 1, 1) if b.ndim == 1 else b)
    if narrow:
        y = _ctensor.astype(y, narrow)
    return _unbatch(_ctensor.asarray(y), unb)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1):
    """1-d transposed convolution, as torch.nn.functional.conv_transpose1d: conv_transpose2d on unit-height
    views."""
    fn = "conv_transpose1d"
    x, unb = _batched(fn, input, 3)
    w = _ctensor.asarray(weight)
    if w.ndim != 3:
        raise ValueError(f"{fn}: weight.shape={list(w.shape)} must be 3-d (C_in, C_out/groups, k)")
    y = conv_transpose2d(_views.expand_dims(x, 2), _views.expand_dims(w, 2), bias,
                         stride=(1, _one(fn, "stride", stride)), padding=(0, _one(fn, "padding", padding)),
                         output_padding=(0, _one(fn, "output_padding", output_padding)), groups=groups,
                         dilation=(1, _one(fn, "dilation", dilation)))
    return _unbatch(_views.squeeze(_ctensor.asarray(y), 2), unb)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """1-d max pooling, as torch.nn.functional.max_pool1d (the indices are positions along L): max_pool2d on a
    unit-height view."""
    fn = "max_pool1d"
    x, unb = _batched(fn, input, 3)
    k = _one(fn, "kernel_size", kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _one(fn, "stride", stride)
    r = max_pool2d(_views.expand_dims(x, 2), (1, k), (1, s), (0, _one(fn, "padding", padding)),
                   (1, _one(fn, "dilation", dilation)), ceil_mode, return_indices)
    if return_indices:
        return tuple(_unbatch(_views.squeeze(_ctensor.asarray(t), 2), unb) for t in r)
    return _unbatch(_views.squeeze(_ctensor.asarray(r), 2), unb)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True):
    """1-d average pooling, as torch.nn.functional.avg_pool1d: avg_pool2d on a unit-height view."""
    fn = "avg_pool1d"
    x, unb = _batched(fn, input, 3)
    k = _one(fn, "kernel_size", kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _one(fn, "stride", stride)
    y = avg_pool2d(_views.expand_dims(x, 2), (1, k), (1, s), (0, _one(fn, "padding", padding)), ceil_mode,
                   count_include_pad)
    return _unbatch(_views.squeeze(_ctensor.asarray(y), 2), unb)


def glu(input, dim: int = -1):
    """Gated linear unit, as torch.nn.functional.glu: a * sigmoid(b) for the halves a, b of input along dim."""
    t = _ctensor.asarray(input)
    if t.ndim == 0:
        raise ValueError("glu: input is 0-d: it has no dim to halve")
    d = _views._axis("glu", dim, t.ndim)
    n = t.shape[d]
    if n % 2:
        raise ValueError(f"glu: dim {d} has extent {n}, which is not even")
    lo = tuple(slice(None) if k != d else slice(0, n // 2) for k in range(t.ndim))
    hi = tuple(slice(None) if k != d else slice(n // 2, n) for k in range(t.ndim))
    return _ctensor.multiply(t[lo], _ctensor.sigmoid(t[hi]))


def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """The k largest (or smallest) elements along dim and their int64 indices, as torch.topk: the stable argsort
    (NaN above everything, as PyTorch ranks it), its last (first) k positions, and a gather. Returns (values,
    indices), largest first (smallest first), whatever `sorted` says."""
    t = _ctensor.asarray(input)
    nd = max(t.ndim, 1)
    d = _views._axis("topk", dim, nd)
    n = t.shape[d] if t.ndim else 1
    k = operator.index(k)
    if not 0 <= k <= n:
        raise ValueError(f"topk: k={k} is outside [0, {n}] for dim {d}")
    x = t if t.ndim else _views.reshape(t, 1)
    order = _ctensor.argsort(x, d)
    last = slice(n - 1, None if k == n else n - 1 - k, -1)  # the k largest, largest first
    sel = tuple(slice(None) if j != d else (last if largest and k else slice(0, k)) for j in range(nd))
    idx = _ctensor.asarray(order)[sel]
    vals = gather(x, d, idx)
    if not t.ndim:
        return _views.reshape(vals, ()), _views.reshape(idx, ())
    return vals, _ctensor.copy(idx)
