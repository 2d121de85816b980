"""Indexing by integer arrays: the five rows of kind "index" (ct_index: take, gather, scatter, scatter_add,
index_add) under NumPy's and PyTorch's names and signatures.

NumPy's broadcasting forms (take_along_axis, torch's take_along_dim) and the
flattened forms (take without an axis, torch.take) are views of the
arguments (ctensor._views) before the one call; embedding is take along axis
0 and one_hot a scatter into zeros. Indices are int64 or int32, negative ones
count from the end; on the CPU an index out of range raises ValueError before
anything is written.
"""

from __future__ import annotations

from . import _ctensor
from . import _views


def _op(name: str) -> int:
    return _OPS[name]


_OPS: dict[str, int] = {}


def _ids() -> None:
    for i in range(_ctensor._op_count()):
        try:
            d = _ctensor._op_info(i)
        except Exception:
            continue
        if d["kind"] == "index":
            _OPS[d["name"]] = i


_ids()


def _array(x):
    return _ctensor.asarray(x)


def _scalar_src(src, like, shape):
    """A Python number as src: a 0-d tensor of like's dtype on its device, broadcast to shape (PyTorch's value=)."""
    if isinstance(src, (bool, int, float)):
        import numpy as np

        s = _ctensor.empty((), like.dtype, like.device)
        s.copy_(np.asarray(src))
        return _views.broadcast_to(s, shape)
    return src


def take(x, indices, axis: int | None = None, *, out=None):
    """x's elements at `indices` along `axis` (NumPy's take: result shape x.shape[:axis] + indices.shape +
    x.shape[axis+1:]); axis=None takes from x flattened (torch.take)."""
    if axis is None:
        x = _views.reshape(_array(x), -1)
        axis = 0
    return _ctensor._index(_op("take"), x, axis, indices, None, (), out)


def index_select(x, dim: int, index, *, out=None):
    """torch.index_select: the slices of x at a 1-d index along dim."""
    xa = _array(x)
    if _array(index).ndim > 1:
        raise ValueError(f"index_select: index has {_array(index).ndim} dims; it must be 1-d")
    if xa.ndim == 0 and out is None:  # PyTorch's rule: a 0-d x gives a 0-d result
        return _views.reshape(_ctensor._index(_op("take"), xa, dim, index, None, (), None), ())
    return _ctensor._index(_op("take"), xa, dim, index, None, (), out)


def gather(x, dim: int, index, *, out=None):
    """torch.gather: out[p] = x[p with its dim coordinate replaced by index[p]]; out has index's shape, which may
    not exceed x's off dim."""
    return _ctensor._index(_op("gather"), x, dim, index, None, (), out)


def take_along_axis(arr, indices, axis: int | None = -1, *, out=None):
    """NumPy's take_along_axis (torch's take_along_dim): gather with arr and indices broadcast against each
    other off the axis; axis=None works on arr flattened."""
    a, i = _array(arr), _array(indices)
    if axis is None:
        return gather(_views.reshape(a, -1), 0, _views.reshape(i, -1), out=out)
    if a.ndim != i.ndim:
        raise ValueError(f"take_along_axis: arr has {a.ndim} dims and indices {i.ndim}; they must match")
    ax = _views._axis("take_along_axis", axis, a.ndim)
    shape_a, shape_i = list(a.shape), list(i.shape)
    for d in range(a.ndim):
        if d == ax:
            continue
        if a.shape[d] != i.shape[d] and 1 not in (a.shape[d], i.shape[d]):
            raise ValueError(f"take_along_axis: arr.shape={list(a.shape)} and indices.shape={list(i.shape)} do "
                             f"not broadcast off axis {ax}")
        shape_a[d] = shape_i[d] = max(a.shape[d], i.shape[d])
    return gather(_views.broadcast_to(a, shape_a), ax, _views.broadcast_to(i, shape_i), out=out)


def take_along_dim(input, indices, dim: int | None = None, *, out=None):
    """torch.take_along_dim: take_along_axis with torch's names (dim=None: both flattened)."""
    return take_along_axis(input, indices, dim, out=out)


def scatter(x, dim: int, index, src, *, out=None):
    """torch.scatter: x with src[p] written at p's dim coordinate replaced by index[p], for every p of index
    (src may be a number: PyTorch's value=); where indices repeat, the last along dim wins (deterministic)."""
    xa = _array(x)
    return _ctensor._index(_op("scatter"), xa, dim, index, _scalar_src(src, xa, _array(index).shape), (), out)


def scatter_add(x, dim: int, index, src, *, out=None):
    """torch.scatter_add: x with src[p] added at p's dim coordinate replaced by index[p], summed in order along
    dim (deterministic)."""
    return _ctensor._index(_op("scatter_add"), x, dim, index, src, (), out)


def index_add(x, dim: int, index, source, *, alpha=1, out=None):
    """torch.index_add: x with alpha * source's slice i added to x's slice index[i] along dim, in order of i."""
    return _ctensor._index(_op("index_add"), x, dim, index, source, (alpha,), out)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type: float = 2.0, scale_grad_by_freq=False,
              sparse=False, *, out=None):
    """torch.nn.functional.embedding: weight's rows at input (take along axis 0). padding_idx only affects the
    gradient (index_add is the backward); max_norm, which renormalises weight in place, is not supported."""
    if max_norm is not None:
        raise NotImplementedError("embedding: max_norm (renormalising weight in place) is not supported")
    w = _array(weight)
    if w.ndim != 2:
        raise ValueError(f"embedding: weight.shape={list(w.shape)} must be 2-d (num_embeddings, embedding_dim)")
    return take(w, input, 0, out=out)


def one_hot(tensor, num_classes: int = -1, *, out=None):
    """torch.nn.functional.one_hot: int64 of shape tensor.shape + (num_classes,), 1 at each index (a scatter into
    zeros); num_classes=-1 takes max(tensor) + 1."""
    import numpy as np

    t = _array(tensor)
    if str(t.dtype) != "int64":
        raise TypeError(f"one_hot: tensor.dtype={t.dtype}; it must be int64")
    if t.size and int(np.asarray(_array(_ctensor.min(t)).to("cpu"))) < 0:
        raise ValueError("one_hot: class values must be non-negative")
    if num_classes < 0:
        if t.size == 0:
            raise ValueError("one_hot: num_classes=-1 needs a nonempty tensor")
        num_classes = int(np.asarray(_array(_ctensor.max(t)).to("cpu"))) + 1
    shape = tuple(t.shape) + (num_classes,)
    from ._movement import _fill

    z = _ctensor.empty(shape, "int64", t.device) if out is None else _array(out)
    _fill(z, 0)
    idx = _views.expand_dims(t, t.ndim)
    return _ctensor._index(_op("scatter"), z, t.ndim, idx, _scalar_src(1, z, idx.shape), (), z)
