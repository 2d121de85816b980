"""Views of a ctensor.Tensor: reshape, permute, slicing, diagonal, broadcasting.

A view shares its tensor's memory and differs only in shape, strides and
offset, as NumPy's and PyTorch's views do. Every view is made by one checked
primitive (``_ctensor._view``: every element it reaches must lie in the
tensor's storage), so no view can address memory that is not the tensor's.
Ops take views like any strided array; ``ctensor.asarray`` makes a Tensor over
another library's array without a copy, so these views apply to any array.
"""

from __future__ import annotations

import operator
from typing import Sequence

from . import _ctensor


def _dims(shape) -> tuple[int, ...]:
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    return tuple(operator.index(e) for e in shape)


class AxisError(ValueError, IndexError):
    """An axis out of range (a ValueError and an IndexError, as NumPy's)."""


def _axis(fn: str, axis, ndim: int) -> int:
    a = operator.index(axis)
    if not -max(ndim, 1) <= a < max(ndim, 1):
        raise AxisError(f"{fn}: axis {a} is out of range for {ndim} dims")
    return a % max(ndim, 1)


def as_strided(x, shape: Sequence[int], strides: Sequence[int], offset: int = 0):
    """A view of x's memory with `shape` and `strides` (in elements) from `offset` elements past x's first
    element (NumPy's ``as_strided``, checked: every element must lie in x's storage)."""
    return _ctensor._view(_ctensor.asarray(x), tuple(shape), tuple(strides), int(offset))


def _merge_strides(shape, strides, new_shape):
    """The strides that view (shape, strides) as new_shape (same nonzero size) without a copy, or None when
    none exist: NumPy's rule (each group of new extents covers a group of old extents whose strides are
    contiguous among themselves)."""
    old = [(n, s) for n, s in zip(shape, strides) if n != 1]
    new = list(new_shape)
    out = [0] * len(new)
    oi, oj, ni, nj = 0, 1, 0, 1
    while ni < len(new) and oi < len(old):
        np_, op = new[ni], old[oi][0]
        while np_ != op:
            if np_ < op:
                np_ *= new[nj]
                nj += 1
            else:
                op *= old[oj][0]
                oj += 1
        for ok in range(oi, oj - 1):
            if old[ok][1] != old[ok + 1][0] * old[ok + 1][1]:
                return None
        out[nj - 1] = old[oj - 1][1]
        for nk in range(nj - 1, ni, -1):
            out[nk - 1] = out[nk] * new[nk]
        ni, nj = nj, nj + 1
        oi, oj = oj, oj + 1
    for nk in range(ni, len(new)):  # trailing extents of 1
        out[nk] = 0
    return out


def reshape(x, *shape):
    """x with a new shape (one extent may be -1): a view when the strides allow one, else a row-major copy
    (NumPy's reshape)."""
    t = _ctensor.asarray(x)
    shape = list(_dims(shape))
    size = t.size
    if shape.count(-1) > 1:
        raise ValueError(f"reshape: shape {tuple(shape)} has more than one -1")
    if -1 in shape:
        rest = 1
        for e in shape:
            if e != -1:
                rest *= e
        if rest == 0 or size % rest:
            raise ValueError(f"reshape: cannot reshape {t.shape} ({size} elements) into {tuple(shape)}")
        shape[shape.index(-1)] = size // rest
    n = 1
    for e in shape:
        if e < 0:
            raise ValueError(f"reshape: shape {tuple(shape)} has a negative extent")
        n *= e
    if n != size:
        raise ValueError(f"reshape: cannot reshape {t.shape} ({size} elements) into {tuple(shape)}")
    if size == 0:
        return _ctensor._view(t, shape, [0] * len(shape), 0)
    st = _merge_strides(t.shape, t.strides, shape)
    if st is None:
        t = t.to(copy=True)  # row-major
        st = _merge_strides(t.shape, t.strides, shape)
    return _ctensor._view(t, shape, st, 0)


def permute(x, *axes):
    """x with its axes in the order `axes` (NumPy's transpose(x, axes), torch's permute)."""
    t = _ctensor.asarray(x)
    axes = _dims(axes)
    if sorted(a % max(t.ndim, 1) for a in axes) != list(range(t.ndim)) or len(axes) != t.ndim:
        raise ValueError(f"permute: axes {axes} are not a permutation of {t.ndim} dims")
    axes = [a % t.ndim for a in axes]
    return _ctensor._view(t, [t.shape[a] for a in axes], [t.strides[a] for a in axes], 0)


def transpose(x, axis0: int = None, axis1: int = None):
    """x with axes axis0 and axis1 swapped (torch's transpose); with neither, every axis reversed (NumPy's)."""
    t = _ctensor.asarray(x)
    if axis0 is None and axis1 is None:
        return permute(t, *range(t.ndim - 1, -1, -1))
    a, b = _axis("transpose", axis0, t.ndim), _axis("transpose", axis1, t.ndim)
    axes = list(range(t.ndim))
    axes[a], axes[b] = axes[b], axes[a]
    return permute(t, *axes)


def matrix_transpose(x):
    """The last two axes swapped (the array API's matrix_transpose, .mT)."""
    t = _ctensor.asarray(x)
    if t.ndim < 2:
        raise ValueError(f"matrix_transpose: x has {t.ndim} dims; it needs at least 2")
    return transpose(t, -2, -1)


def broadcast_to(x, shape: Sequence[int]):
    """x broadcast to `shape` (stride 0 along the broadcast axes), NumPy's rule."""
    t = _ctensor.asarray(x)
    shape = _dims((shape,)) if not isinstance(shape, int) else (shape,)
    if len(shape) < t.ndim:
        raise ValueError(f"broadcast_to: cannot broadcast {t.shape} to {shape}")
    lead = len(shape) - t.ndim
    strides = [0] * lead
    for i in range(t.ndim):
        n = shape[lead + i]
        if t.shape[i] == n:
            strides.append(t.strides[i] if n != 1 else 0)
        elif t.shape[i] == 1 and n >= 0:
            strides.append(0)
        else:
            raise ValueError(f"broadcast_to: cannot broadcast {t.shape} to {shape}")
    return _ctensor._view(t, shape, strides, 0)


def expand_dims(x, axis: int):
    """x with a new axis of extent 1 at `axis` (NumPy's expand_dims, torch's unsqueeze)."""
    t = _ctensor.asarray(x)
    a = _axis("expand_dims", axis, t.ndim + 1)
    return _ctensor._view(t, t.shape[:a] + (1,) + t.shape[a:], t.strides[:a] + (0,) + t.strides[a:], 0)


def squeeze(x, axis=None):
    """x without its axes of extent 1 (or without the given ones, which must have extent 1)."""
    t = _ctensor.asarray(x)
    if axis is None:
        drop = {i for i, n in enumerate(t.shape) if n == 1}
    else:
        drop = {_axis("squeeze", a, t.ndim) for a in ((axis,) if isinstance(axis, int) else axis)}
        if t.ndim == 0:  # axis 0 or -1 of a 0-d x (as _axis allows): nothing to drop, as torch.squeeze
            drop = set()
        for a in drop:
            if t.shape[a] != 1:
                raise ValueError(f"squeeze: axis {a} has extent {t.shape[a]}, not 1")
    keep = [i for i in range(t.ndim) if i not in drop]
    return _ctensor._view(t, [t.shape[i] for i in keep], [t.strides[i] for i in keep], 0)


def diagonal(x, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The diagonal of axes axis1 and axis2 as the last axis (NumPy's diagonal; offset > 0 above it)."""
    t = _ctensor.asarray(x)
    a, b = _axis("diagonal", axis1, t.ndim), _axis("diagonal", axis2, t.ndim)
    if a == b:
        raise ValueError("diagonal: axis1 and axis2 are the same axis")
    offset = operator.index(offset)
    n = max(0, min(t.shape[a] - max(0, -offset), t.shape[b] - max(0, offset)))
    start = (max(0, -offset) * t.strides[a] + max(0, offset) * t.strides[b]) if n else 0
    rest = [i for i in range(t.ndim) if i not in (a, b)]
    return _ctensor._view(t, [t.shape[i] for i in rest] + [n], [t.strides[i] for i in rest] +
                          [t.strides[a] + t.strides[b]], start)


def getitem(x, key):
    """Basic indexing (NumPy's): integers, slices (any step), None and Ellipsis, always a view."""
    t = _ctensor.asarray(x)
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        try:  # an integer, or a 0-d integer array; a NumPy array or list of them is not
            operator.index(k)
        except TypeError:
            raise IndexError(f"ctensor.Tensor: index {k!r} is not an integer, slice, None or Ellipsis "
                             "(advanced indexing is not a view)") from None
    if sum(k is Ellipsis for k in key) > 1:
        raise IndexError("ctensor.Tensor: an index can have only one Ellipsis")
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > t.ndim:
        raise IndexError(f"ctensor.Tensor: too many indices ({used}) for {t.ndim} dims")
    if Ellipsis in key:
        i = key.index(Ellipsis)
        key = key[:i] + (slice(None),) * (t.ndim - used) + key[i + 1:]
    else:
        key = key + (slice(None),) * (t.ndim - used)
    shape, strides, offset, d = [], [], 0, 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = t.shape[d], t.strides[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            m = len(range(start, stop, step))
            shape.append(m)
            strides.append(s * step)
            if m:
                offset += start * s
        else:
            i = operator.index(k)
            if not -n <= i < n:
                raise IndexError(f"ctensor.Tensor: index {i} is out of range for axis {d} of extent {n}")
            offset += (i % n) * s
        d += 1
    return _ctensor._view(t, shape, strides, offset)
