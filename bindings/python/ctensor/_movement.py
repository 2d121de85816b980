"""Data movement as views plus copies: flip, roll, concatenate/cat, stack, tile/repeat, padding (constant,
reflect, replicate, circular), tril and triu.

Each output is a union of disjoint blocks, and each block is one strided view
of the input (a negative stride for a mirrored run, stride 0 for a replicated
edge) copied by ``ct_copy``, or a constant written by copying a 0-d tensor
broadcast over the block. So every one of them runs on every device that has
``ct_copy``, at copy speed, bit-exact, for every dtype; the rule of each lives
here once. A C or C++ caller composes the same from ``CTensor`` views and
``ct_copy``.
"""

from __future__ import annotations

import itertools
import operator
from typing import Sequence

from . import _ctensor
from . import _views


def _new(shape, like, out=None):
    """out (checked) or a new row-major tensor of `like`'s dtype on its device."""
    shape = tuple(shape)
    if out is None:
        return _ctensor.empty(shape, like.dtype, like.device)
    o = _ctensor.asarray(out)
    if tuple(o.shape) != shape:
        raise ValueError(f"out.shape={list(o.shape)} but the result has shape {list(shape)}")
    if o.dtype != like.dtype:
        raise TypeError(f"out.dtype={o.dtype} but the result has dtype {like.dtype}")
    return o


def _fill(region, value) -> None:
    """Every element of the view `region` set to `value` (converted as a cast would)."""
    if region.size == 0:
        return
    import numpy as np

    s = _ctensor.empty((), region.dtype, region.device)
    s.copy_(np.asarray(value))
    _ctensor.copy(_views.broadcast_to(s, region.shape), out=region)


def _block(t, starts, lens, steps):
    """The view of t whose element k along dim d is t[starts[d] + k * steps[d]] (steps in -1, 0, 1)."""
    offset = sum(s * st for s, st in zip(starts, t.strides))
    return _ctensor._view(t, list(lens), [st * p for st, p in zip(t.strides, steps)], offset)


def _remap(x, out, segments, value=None) -> None:
    """out[i] = x[src(i)] dim by dim: segments[d] lists (out_start, length, src_start, src_step) runs, src_start
    None for a run of `value`. Every combination of runs is one copy (or one fill)."""
    for combo in itertools.product(*segments):
        lens = [seg[1] for seg in combo]
        if 0 in lens:
            continue
        dst = _block(out, [seg[0] for seg in combo], lens, [1] * len(combo))
        if any(seg[2] is None for seg in combo):
            _fill(dst, value)
        else:
            _ctensor.copy(_block(x, [seg[2] for seg in combo], lens, [seg[3] for seg in combo]), out=dst)


def _axes(fn: str, axis, ndim: int) -> list[int]:
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) or hasattr(axis, "__index__") else list(axis)
    axes = [_views._axis(fn, a, ndim) for a in axes]
    if len(set(axes)) != len(axes):
        raise ValueError(f"{fn}: axes {axes} repeat an axis")
    return axes


def flip(x, axis=None, *, dims=None, out=None):
    """x reversed along `axis` (an int, a sequence, or None: every axis), NumPy's flip; torch's dims= too."""
    t = _ctensor.asarray(x)
    axes = set(_axes("flip", dims if dims is not None else axis, t.ndim))
    o = _new(t.shape, t, out)
    _remap(t, o, [[(0, n, n - 1, -1)] if d in axes else [(0, n, 0, 1)] for d, n in enumerate(t.shape)])
    return o


def roll(x, shift=None, axis=None, *, shifts=None, dims=None, out=None):
    """x shifted cyclically by `shift` along `axis` (ints or equal-length sequences); without an axis, the
    flattened x, reshaped back (NumPy's roll; torch's shifts=/dims= too)."""
    t = _ctensor.asarray(x)
    shift = shifts if shifts is not None else shift
    axis = dims if dims is not None else axis
    if shift is None:
        raise TypeError("roll: missing the shift")
    if axis is None or (not isinstance(axis, int) and len(axis) == 0):
        total = sum([shift] if isinstance(shift, int) else list(shift))
        r = _views.reshape(roll(_views.reshape(t, -1), total, 0), *t.shape)  # a view of the new 1-d result
        return r if out is None else _ctensor.copy(r, out=out)
    sh = [shift] if isinstance(shift, int) or hasattr(shift, "__index__") else list(shift)
    ax = [axis] if isinstance(axis, int) or hasattr(axis, "__index__") else list(axis)
    if len(sh) != len(ax):
        raise ValueError(f"roll: {len(sh)} shifts for {len(ax)} axes")
    total = [0] * max(t.ndim, 1)  # a 0-d x takes axis 0 or -1 (_axis), as the reductions do
    for s, a in zip(sh, ax):  # an axis given twice rolls by the sum, as NumPy's
        total[_views._axis("roll", a, t.ndim)] += operator.index(s)
    o = _new(t.shape, t, out)
    segs = []
    for d, n in enumerate(t.shape):
        s = total[d] % n if n else 0
        segs.append([(0, s, n - s, 1), (s, n - s, 0, 1)] if s else [(0, n, 0, 1)])
    _remap(t, o, segs)
    return o


def concatenate(arrays: Sequence, axis: int | None = 0, *, dim=None, out=None):
    """The arrays joined along an existing axis (NumPy's concatenate; axis=None joins them flattened; torch's
    cat and dim= too). They must share the dtype and device, and the shape off the axis."""
    if dim is not None:
        axis = dim
    ts = [_ctensor.asarray(a) for a in arrays]
    if not ts:
        raise ValueError("concatenate: no arrays")
    if len({t.ndim for t in ts}) > 1:  # PyTorch's legacy rule: 1-d empty arrays join anything, as nothing
        ts = [t for t in ts if tuple(t.shape) != (0,)] or ts[:1]
    if axis is None:
        ts = [_views.reshape(t, -1) for t in ts]
        axis = 0
    first = ts[0]
    if first.ndim == 0:
        raise ValueError("concatenate: 0-d arrays cannot be concatenated")
    a = _views._axis("concatenate", axis, first.ndim)
    for k, t in enumerate(ts):
        if t.ndim != first.ndim or any(t.shape[d] != first.shape[d] for d in range(t.ndim) if d != a):
            raise ValueError(f"concatenate: arrays[{k}].shape={list(t.shape)} does not match arrays[0].shape="
                             f"{list(first.shape)} off axis {a}")
        if t.dtype != first.dtype:
            raise TypeError(f"concatenate: arrays[{k}].dtype={t.dtype} but arrays[0].dtype={first.dtype} "
                            "(ctensor does not promote)")
    shape = list(first.shape)
    shape[a] = sum(t.shape[a] for t in ts)
    o = _new(shape, first, out)
    at = 0
    for t in ts:
        n = t.shape[a]
        if n and t.size:
            starts = [0] * t.ndim
            starts[a] = at
            _ctensor.copy(t, out=_block(o, starts, t.shape, [1] * t.ndim))
        at += n
    return o


concat = concatenate


def cat(tensors: Sequence, dim: int = 0, *, out=None):
    """torch.cat: concatenate along dim."""
    return concatenate(tensors, dim, out=out)


def stack(arrays: Sequence, axis: int = 0, *, dim=None, out=None):
    """The arrays (one shape) joined along a new axis (NumPy's stack; torch's dim= too)."""
    if dim is not None:
        axis = dim
    ts = [_ctensor.asarray(a) for a in arrays]
    if not ts:
        raise ValueError("stack: no arrays")
    for k, t in enumerate(ts):
        if tuple(t.shape) != tuple(ts[0].shape):
            raise ValueError(f"stack: arrays[{k}].shape={list(t.shape)} differs from arrays[0].shape="
                             f"{list(ts[0].shape)}")
    a = _views._axis("stack", axis, ts[0].ndim + 1)
    return concatenate([_views.expand_dims(t, a) for t in ts], a, out=out)


def tile(x, reps, *, out=None):
    """x repeated reps[d] times along each axis (NumPy's and torch's tile: reps and x's shape are padded with
    leading 1s to the same length): one copy of a broadcast view."""
    t = _ctensor.asarray(x)
    reps = (reps,) if isinstance(reps, int) or hasattr(reps, "__index__") else tuple(reps)
    reps = tuple(operator.index(r) for r in reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps {reps} has a negative count")
    nd = max(t.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    t = _views.reshape(t, *((1,) * (nd - t.ndim) + tuple(t.shape))) if nd > t.ndim else t
    shape = [r * n for r, n in zip(reps, t.shape)]
    o = _new(shape, t, out)
    if o.size == 0:
        return o
    # out as (r0, n0, r1, n1, ...): the source broadcasts over each r
    split_shape, split_out, split_src = [], [], []
    for d in range(nd):
        split_shape += [reps[d], t.shape[d]]
        split_out += [o.strides[d] * t.shape[d], o.strides[d]]
        split_src += [0, t.strides[d]]
    dst = _ctensor._view(o, split_shape, split_out, 0)
    _ctensor.copy(_ctensor._view(t, split_shape, split_src, 0), out=dst)
    return o


def repeat(x, *sizes, out=None):
    """torch.Tensor.repeat: tile with at least x.ndim sizes."""
    if len(sizes) == 1 and not isinstance(sizes[0], int):
        sizes = tuple(sizes[0])
    t = _ctensor.asarray(x)
    if len(sizes) < t.ndim:
        raise ValueError(f"repeat: {len(sizes)} sizes for a {t.ndim}-d array (at least {t.ndim})")
    return tile(t, sizes, out=out)


def _pad_segments(mode: str, n: int, left: int, m: int):
    """Runs (out_start, length, src_start, src_step) of one padded axis: out index i reads x at j = i - left,
    mapped by the mode (None: the constant)."""
    segs, i = [], 0
    while i < m:
        j = i - left
        if mode == "constant" or n == 0:
            if j < 0:
                ln, src, step = min(m - i, -j), None, 0
            elif j >= n:
                ln, src, step = m - i, None, 0
            else:
                ln, src, step = min(m - i, n - j), j, 1
        elif mode == "replicate":
            if j < 0:
                ln, src, step = min(m - i, -j), 0, 0
            elif j >= n:
                ln, src, step = m - i, n - 1, 0
            else:
                ln, src, step = min(m - i, n - j), j, 1
        elif mode == "circular":
            r = j % n
            ln, src, step = min(m - i, n - r), r, 1
        else:  # reflect: period 2 (n - 1), the edges not repeated
            if n == 1:
                ln, src, step = m - i, 0, 0
            else:
                p = 2 * (n - 1)
                r = j % p
                if r < n - 1:
                    ln, src, step = min(m - i, n - 1 - r), r, 1
                else:
                    ln, src, step = min(m - i, p - r), p - r, -1
        segs.append((i, ln, src, step))
        i += ln
    return segs


def pad(x, pad: Sequence[int], mode: str = "constant", value=None, *, out=None):
    """torch.nn.functional.pad: `pad` gives (left, right) pairs from the last axis backwards; mode "constant"
    (value, default 0; negative pads crop), "reflect" (the edge not repeated), "replicate" or "circular"."""
    t = _ctensor.asarray(x)
    pad = [operator.index(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > t.ndim:
        raise ValueError(f"pad: pad={pad} must be (left, right) pairs for at most {t.ndim} axes")
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise ValueError(f"pad: mode={mode!r} is not constant, reflect, replicate or circular")
    if mode != "constant" and value not in (None, 0):
        raise ValueError(f"pad: value={value} is only for mode='constant'")
    lr = [(0, 0)] * t.ndim
    for k in range(len(pad) // 2):
        lr[t.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    if mode == "circular" and any(p < 0 for p in pad):  # PyTorch's rule: crop first, then wrap what is left
        t = t[tuple(slice(max(0, -lft), n - max(0, -rgt)) for n, (lft, rgt) in zip(t.shape, lr))]
        lr = [(max(0, lft), max(0, rgt)) for lft, rgt in lr]
    shape = [n + lft + rgt for n, (lft, rgt) in zip(t.shape, lr)]
    for d, m in enumerate(shape):
        n, (lft, rgt) = t.shape[d], lr[d]
        if m < 0:
            raise ValueError(f"pad: axis {d} of extent {n} padded by ({lft}, {rgt}) has a negative extent")
        if mode == "reflect" and (lft >= n or rgt >= n) and (lft or rgt):
            raise ValueError(f"pad: reflect padding ({lft}, {rgt}) of axis {d} must be less than its extent {n}")
        if mode in ("replicate", "circular") and n == 0 and m:
            raise ValueError(f"pad: {mode} padding of axis {d} needs a nonempty axis")
        if mode == "circular" and (lft > n or rgt > n):
            raise ValueError(f"pad: circular padding ({lft}, {rgt}) of axis {d} must be at most its extent {n}")
    o = _new(shape, t, out)
    if o.size:
        _remap(t, o, [_pad_segments(mode, n, lft, m) for n, (lft, _), m in zip(t.shape, lr, shape)],
               0 if value is None else value)
    return o


def constant_pad_nd(x, pad: Sequence[int], value=0, *, out=None):
    """torch.constant_pad_nd: pad with a constant (negative pads crop)."""
    return globals()["pad"](x, pad, "constant", value, out=out)


def _triangle(fn: str, x, k: int, lower: bool, out):
    t = _ctensor.asarray(x)
    if t.ndim < 2:
        raise ValueError(f"{fn}: x has {t.ndim} dims; it needs at least 2")
    k = operator.index(k)
    o = _new(t.shape, t, out)
    if o.size == 0:
        return o
    # one select against a (rows, cols) mask of the kept triangle (col - row <= k, or >= k), broadcast over the
    # leading dims: a single pass whatever the size
    import numpy as np

    rows, cols = t.shape[-2], t.shape[-1]
    d = np.arange(cols, dtype=np.int64)[None, :] - np.arange(rows, dtype=np.int64)[:, None]
    keep = _ctensor.asarray(d <= k if lower else d >= k)
    if str(t.device) != "cpu":
        keep = keep.to(device=t.device)
    zero = _ctensor.empty((), t.dtype, t.device)
    _fill(zero, 0)
    _ctensor.where(keep, t, zero, out=o)
    return o


def tril(x, diagonal: int = 0, *, out=None):
    """x with the elements above the diagonal-th diagonal zeroed (last two axes; NumPy's and torch's tril)."""
    return _triangle("tril", x, diagonal, True, out)


def triu(x, diagonal: int = 0, *, out=None):
    """x with the elements below the diagonal-th diagonal zeroed (last two axes; NumPy's and torch's triu)."""
    return _triangle("triu", x, diagonal, False, out)
