"""The 3-d NN functions as 2-d ops on rearranged views: conv3d, conv_transpose3d, max_pool3d, avg_pool3d, with
torch.nn.functional's signatures.

- conv3d is one conv2d: the T depth taps of the kernel become T times the input channels (a depth-only im2col:
  input (N, C, D, H, W) gathered by one strided copy into N * D_out channels-last images of groups * T * C/g
  channels, weight (K, C/g, T, R, S) into (K, T * C/g, R, S) channels-last, the output channels-last too), so
  every product and sum happens inside one conv2d (oneDNN's, or the device's), in its accumulator.
- conv_transpose3d is one conv_transpose2d whose output channels carry the depth taps (weight (C_in, C_out/g, T, R,
  S) is already (C_in, C_out/g * T, R, S) in memory), then T strided adds place each tap at its output depth.
- max_pool3d is separable: max_pool2d over (H, W) of every depth slice, then max_pool2d with a (kD, 1) window along
  depth; the first maximum in (d, h, w) order wins as in PyTorch (the 2-d pass picks the first in (h, w) order,
  the depth pass the first depth), and the indices are d * H * W plus the 2-d pass's index at that depth.
- avg_pool3d is separable too: window sums over (H, W) then depth (avg_pool2d on the explicitly zero-padded input,
  which always divides by the whole window, times its size), divided by PyTorch's divisor, itself a product over
  the three dims (count_include_pad, the cells inside the input, or divisor_override).

They run wherever and in whatever dtypes the 2-d ops run (float32, float16 and bfloat16, the latter two pooled in
float32 and rounded once), with their checks. They are compositions: the conv3d input is copied D_out / stride
times over its depth taps, and there are no 3-d backward ops (C and C++ callers lower them the same way on CTensor
views).
"""

from __future__ import annotations

import operator

from . import _ctensor
from . import _views
from ._index import gather
from ._movement import _fill, pad
from ._nn import avg_pool2d, conv2d, max_pool2d
from ._nn_compose import _in_float32
from ._nn_lower import _batched, _unbatch, conv_transpose2d


def _triple(fn: str, name: str, v) -> tuple[int, int, int]:
    if isinstance(v, (tuple, list)):
        if len(v) == 1:
            v = v[0]
        elif len(v) != 3:
            raise ValueError(f"{fn}: {name}={v!r} must be an int or a 3-tuple")
        else:
            return tuple(operator.index(e) for e in v)
    v = operator.index(v)
    return v, v, v


def _positive(fn: str, name: str, t, least: int = 1) -> None:
    if any(e < least for e in t):
        raise ValueError(f"{fn}: {name}={list(t)} must be at least {least} in every dim")


def _contiguous(t):
    """t itself if it is C-contiguous, else a contiguous copy (the strided views below index its memory)."""
    t = _ctensor.asarray(t)
    expect, ok = 1, True
    for n, s in zip(reversed(t.shape), reversed(t.strides)):
        if n != 1 and s != expect:
            ok = False
            break
        expect *= n
    return t if ok else _ctensor.copy(t)


def _dev(a, like):
    a = _ctensor.asarray(a)
    return a if str(like.device) == "cpu" else a.to(device=like.device)


def _conv_operands(fn: str, input, weight, groups, weight_dims: str):
    """(x batched, whether it was unbatched, the weight contiguous, groups) of a 3-d convolution."""
    x, unb = _batched(fn, input, 5)
    w = _contiguous(weight)
    if w.ndim != 5:
        raise ValueError(f"{fn}: weight.shape={list(w.shape)} must be 5-d {weight_dims}")
    return x, unb, w, operator.index(groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1):
    """3-d convolution, as torch.nn.functional.conv3d: input (N, C, D, H, W) or (C, D, H, W), weight
    (K, C/groups, T, R, S); padding an int, a triple, "valid" or "same". One conv2d over the depth taps stacked as
    channels."""
    fn = "conv3d"
    x, unb, w, groups = _conv_operands(fn, input, weight, groups, "(K, C/groups, T, R, S)")
    n, c, d, h, wd = x.shape
    k, cg, kt, kr, ks = w.shape
    if groups < 1 or c % groups or k % groups or cg * groups != c:
        raise ValueError(f"{fn}: input has {c} channels and weight.shape={list(w.shape)}: C must be "
                         f"groups * weight.shape[1] with groups={groups} dividing K={k}")
    st, dl = _triple(fn, "stride", stride), _triple(fn, "dilation", dilation)
    _positive(fn, "stride", st)
    _positive(fn, "dilation", dl)
    taps = (kt, kr, ks)
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(f"{fn}: padding={padding!r} (expected an int, a triple, 'valid' or 'same')")
        if padding == "same" and st != (1, 1, 1):
            raise ValueError(f"{fn}: padding='same' needs stride 1 (as in PyTorch)")
        tot = [dl[i] * (taps[i] - 1) if padding == "same" else 0 for i in range(3)]
        lo, hi = [t // 2 for t in tot], [t - t // 2 for t in tot]  # PyTorch puts the odd one at the end
    else:
        lo = hi = list(_triple(fn, "padding", padding))
        _positive(fn, "padding", lo, 0)
    dp = d + lo[0] + hi[0]
    do = (dp - dl[0] * (kt - 1) - 1) // st[0] + 1
    if do < 1:
        raise ValueError(f"{fn}: input depth {d} padded to {dp} is smaller than the dilated kernel depth "
                         f"{dl[0] * (kt - 1) + 1}")
    # the depth padding, and a contiguous input whose memory the gather view below indexes
    xp = pad(x, (0, 0, 0, 0, lo[0], hi[0]))
    hw = h * wd
    # the stacked channels innermost (NHWC), where the 2-d convolution runs fastest (oneDNN's blocked kernels
    # without a reorder: 2.5x NCHW's speed at (32, 96, 32, 32))
    cols = _views.as_strided(xp, (n, do, h, wd, groups, kt, cg),
                             (c * dp * hw, st[0] * hw, wd, 1, cg * dp * hw, dl[0] * hw, dp * hw))
    ck = groups * kt * cg
    xs = _views.as_strided(_ctensor.copy(cols), (n * do, ck, h, wd), (hw * ck, 1, wd * ck, ck))
    ws = _views.as_strided(_ctensor.copy(_views.permute(w, 0, 3, 4, 2, 1)), (k, kt * cg, kr, ks),
                           (kr * ks * kt * cg, 1, ks * kt * cg, kt * cg))
    ho = (h + lo[1] + hi[1] - dl[1] * (kr - 1) - 1) // st[1] + 1
    wo = (wd + lo[2] + hi[2] - dl[2] * (ks - 1) - 1) // st[2] + 1
    if ho < 1 or wo < 1:
        raise ValueError(f"{fn}: input (H, W) = ({h}, {wd}) padded is smaller than the dilated kernel")
    ym = _ctensor.empty((n, do, ho, wo, k), x.dtype, x.device)
    conv2d(xs, ws, bias, stride=st[1:], padding=(lo[1], lo[2], hi[1], hi[2]), dilation=dl[1:], groups=groups,
           out=_views.as_strided(ym, (n * do, k, ho, wo), (ho * wo * k, 1, wo * k, k)))
    return _unbatch(_ctensor.copy(_views.permute(ym, 0, 4, 1, 2, 3)), unb)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups: int = 1,
                     dilation=1):
    """3-d transposed convolution, as torch.nn.functional.conv_transpose3d: input (N, C_in, D, H, W) or unbatched,
    weight (C_in, C_out/groups, T, R, S). One conv_transpose2d with the depth taps as output channels, then each
    tap added at its output depth (float16 and bfloat16 accumulate in float32, rounded once)."""
    fn = "conv_transpose3d"
    x, unb, w, groups = _conv_operands(fn, input, weight, groups, "(C_in, C_out/groups, T, R, S)")
    n, ci, d, h, wd = x.shape
    if groups < 1 or w.shape[0] != ci or ci % groups:
        raise ValueError(f"{fn}: input has {ci} channels, weight.shape={list(w.shape)}, groups={groups}: "
                         "weight.shape[0] must be C_in and groups must divide it")
    st, pd = _triple(fn, "stride", stride), _triple(fn, "padding", padding)
    op, dl = _triple(fn, "output_padding", output_padding), _triple(fn, "dilation", dilation)
    _positive(fn, "stride", st)
    _positive(fn, "dilation", dl)
    _positive(fn, "padding", pd, 0)
    _positive(fn, "output_padding", op, 0)
    if any(op[i] >= max(st[i], dl[i]) for i in range(3)):
        raise ValueError(f"{fn}: output_padding={list(op)} must be smaller than the stride or the dilation")
    dt = str(x.dtype)
    narrow = dt in ("float16", "bfloat16")
    if narrow:  # the taps are summed in float32 and rounded once, as PyTorch's kernels accumulate
        x, w = _ctensor.asarray(_ctensor.astype(x, "float32")), _ctensor.asarray(_ctensor.astype(w, "float32"))
        if bias is not None:
            bias = _ctensor.astype(bias, "float32")
    cog, kt = w.shape[1], w.shape[2]
    co = cog * groups
    dout = (d - 1) * st[0] - 2 * pd[0] + dl[0] * (kt - 1) + op[0] + 1
    if dout < 1:
        raise ValueError(f"{fn}: the output depth (D - 1) * stride - 2 * padding + dilation * (T - 1) + "
                         f"output_padding + 1 = {dout} is not positive")
    xs = _views.reshape(_ctensor.copy(_views.permute(x, 0, 2, 1, 3, 4)), n * d, ci, h, wd)
    ws = _views.reshape(w, ci, cog * kt, w.shape[3], w.shape[4])  # (C_in, C_out/g, T, ...) is already this
    z = _ctensor.asarray(conv_transpose2d(xs, ws, None, stride=st[1:], padding=pd[1:], output_padding=op[1:],
                                          groups=groups, dilation=dl[1:]))
    ho, wo = z.shape[2], z.shape[3]
    z = _views.reshape(z, n, d, co, kt, ho, wo)
    full = max((d - 1) * st[0] + dl[0] * (kt - 1) + 1, pd[0] + dout)
    y = _ctensor.empty((n, co, full, ho, wo), x.dtype, x.device)
    _fill(y, 0)
    for t in range(kt):
        at = _views.getitem(y, (slice(None), slice(None), slice(t * dl[0], t * dl[0] + st[0] * (d - 1) + 1, st[0])))
        _ctensor.add(at, _views.permute(_views.getitem(z, (slice(None),) * 3 + (t,)), 0, 2, 1, 3, 4), out=at)
    y = _ctensor.copy(_views.getitem(y, (slice(None), slice(None), slice(pd[0], pd[0] + dout))))
    if bias is not None:
        b = _ctensor.asarray(bias)
        y = _ctensor.add(y, _views.reshape(b, 1, b.shape[0], 1, 1, 1) if b.ndim == 1 else b)
    if narrow:
        y = _ctensor.astype(y, dt)
    return _unbatch(_ctensor.asarray(y), unb)


def _pool_args(fn: str, kernel_size, stride, padding, dilation=1):
    k = _triple(fn, "kernel_size", kernel_size)
    s = k if stride is None or (isinstance(stride, (list, tuple)) and not stride) else _triple(fn, "stride", stride)
    p, dl = _triple(fn, "padding", padding), _triple(fn, "dilation", dilation)
    _positive(fn, "kernel_size", k)
    _positive(fn, "stride", s)
    _positive(fn, "dilation", dl)
    _positive(fn, "padding", p, 0)
    if any(2 * p[i] > k[i] for i in range(3)):
        raise ValueError(f"{fn}: padding={list(p)} must be at most half of kernel_size={list(k)}")
    return k, s, p, dl


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode: bool = False,
               return_indices: bool = False):
    """3-d max pooling, as torch.nn.functional.max_pool3d (indices: flat positions d * H * W + h * W + w in each
    (N, C) plane, int64): max_pool2d over (H, W), then over depth."""
    fn = "max_pool3d"
    x, unb = _batched(fn, input, 5)
    k, s, p, dl = _pool_args(fn, kernel_size, stride, padding, dilation)
    n, c, d, h, wd = x.shape
    v1, i1 = max_pool2d(_views.reshape(_contiguous(x), n, c * d, h, wd), k[1:], s[1:], p[1:], dl[1:], ceil_mode,
                        True)
    v1, i1 = _ctensor.asarray(v1), _ctensor.asarray(i1)
    ho, wo = v1.shape[2], v1.shape[3]
    v2, i2 = max_pool2d(_views.reshape(v1, n, c, d, ho * wo), (k[0], 1), (s[0], 1), (p[0], 0), (dl[0], 1),
                        ceil_mode, True)
    v2, i2 = _ctensor.asarray(v2), _ctensor.asarray(i2)
    do = v2.shape[2]
    y = _unbatch(_views.reshape(v2, n, c, do, ho, wo), unb)
    if not return_indices:
        return y
    depth = _ctensor.floor_divide(i2, ho * wo)  # the depth pass's flat (d, column) index: its depth
    within = gather(_views.reshape(i1, n, c, d, ho * wo), 2, depth)
    idx = _ctensor.add(_ctensor.multiply(depth, h * wd), within)
    return y, _unbatch(_views.reshape(_ctensor.asarray(idx), n, c, do, ho, wo), unb)


def _divisors(n: int, k: int, s: int, p: int, ceil_mode: bool, count_include_pad: bool):
    """Output length and, per output, PyTorch's divisor along one dim (the window clipped to the padded input, or
    to the input itself without count_include_pad)."""
    span = n + 2 * p - k
    o = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (o - 1) * s >= n + p:  # the last window must start inside the input or its left padding
        o -= 1
    div = []
    for i in range(o):
        a = i * s - p
        b = min(a + k, n + p)
        div.append(b - a if count_include_pad else min(b, n) - max(a, 0))
    return o, div


def _avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode: bool = False, count_include_pad: bool = True,
                divisor_override=None):
    """3-d average pooling, as torch.nn.functional.avg_pool3d: window sums over (H, W) then depth, divided by
    PyTorch's divisor (a product over the dims). float16 and bfloat16 are pooled in float32 and rounded once."""
    import numpy as np

    fn = "avg_pool3d"
    x, unb = _batched(fn, input, 5)
    k, s, p, _ = _pool_args(fn, kernel_size, stride, padding)
    if divisor_override is not None and operator.index(divisor_override) == 0:
        raise ValueError(f"{fn}: divisor_override must be nonzero")
    n, c = x.shape[:2]
    lens, divs = [], []
    for j in range(3):
        o, dv = _divisors(x.shape[2 + j], k[j], s[j], p[j], ceil_mode, count_include_pad)
        if o < 1:
            raise ValueError(f"{fn}: input dim {2 + j} of extent {x.shape[2 + j]} with padding {p[j]} is smaller "
                             f"than the kernel {k[j]}")
        lens.append(o)
        divs.append(np.asarray(dv, dtype=np.float64))
    # zeros around the input so that every window is whole: the left padding and, at the end, whatever the last
    # window reaches (a negative pad crops rows no window covers)
    ends = [(lens[j] - 1) * s[j] + k[j] - x.shape[2 + j] - p[j] for j in range(3)]
    pads = (p[2], ends[2], p[1], ends[1], p[0], ends[0])
    xp = pad(x, pads) if any(pads) else _contiguous(x)
    dp, hp, wp = xp.shape[2:]
    m = _ctensor.asarray(avg_pool2d(_views.reshape(xp, n, c * dp, hp, wp), k[1:], s[1:], 0))
    m = _ctensor.asarray(avg_pool2d(_views.reshape(m, n, c, dp, lens[1] * lens[2]), (k[0], 1), (s[0], 1), 0))
    # m is the window sum / (kD kH kW); PyTorch's divisor replaces the window size
    if divisor_override is not None:
        f = np.full(lens, k[0] * k[1] * k[2] / operator.index(divisor_override))
    else:
        f = (k[0] * k[1] * k[2]) / (divs[0][:, None, None] * divs[1][None, :, None] * divs[2][None, None, :])
    fac = _dev(f.reshape(lens[0], lens[1] * lens[2]).astype(str(x.dtype)), x)
    y = _ctensor.multiply(m, fac)
    return _unbatch(_views.reshape(_ctensor.asarray(y), n, c, *lens), unb)


avg_pool3d = _in_float32(_avg_pool3d)
avg_pool3d.__name__ = "avg_pool3d"
