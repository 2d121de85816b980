"""ctensor kernels on the chunks of Dask arrays: scale-out on an existing engine.

Each helper builds an ordinary Dask graph whose tasks call ctensor's functions on NumPy chunks (no copy in,
one result buffer out); ctensor releases the GIL while its kernels run, so the threads of one worker overlap
too. Any scheduler runs them: the threaded default, or a ``distributed`` cluster (``LocalCluster`` with worker
processes), whose workers import ctensor themselves.

- :func:`map_blocks`: an elementwise or broadcast op of the registry on matching chunks.
- :func:`reduction`: a reduction of the registry as Dask's chunk / combine / aggregate steps (sum, prod, max,
  min, any, all, nansum, logsumexp, norm2, count_nonzero; mean as a sum and a count).
- :func:`conv2d`, :func:`max_pool2d`: NN ops over arrays chunked along H and W, with the halo each window needs
  (``map_overlap``), so the result equals the op on the whole array.
- :func:`set_num_threads`: ctensor's threads per task on every worker (1 lets Dask's threads do the
  parallelism).

The output dtype of each task comes from the library's shape query (``ct_op_output_info``), so the graph's
metadata is right before anything runs.
"""
from __future__ import annotations

import functools

import numpy as np

import dask
import dask.array as da

import ctensor as _ct
from . import _ctensor

__all__ = ["map_blocks", "reduction", "conv2d", "max_pool2d", "set_num_threads"]

_OPS = {d["name"]: d for d in _ctensor._op_infos()}


class _Op:
    """A ctensor function by name, with keyword arguments: what a task carries to a worker (the functions
    themselves are native and do not pickle; the worker looks the name up in its own ctensor)."""

    __slots__ = ("name", "kwargs")

    def __init__(self, name: str, kwargs=None):
        self.name, self.kwargs = name, dict(kwargs or {})

    def __call__(self, *blocks, **kw):
        return _np(_lookup(self.name)(*blocks, **self.kwargs, **kw))

    def __reduce__(self):
        return (_Op, (self.name, self.kwargs))


def _lookup(name: str):
    f = getattr(_ct.ops, name, None) or getattr(_ct, name, None)
    if f is None or not callable(f):
        raise ValueError(f"ctensor.dask: no ctensor op {name!r} (ctensor.ops() lists them)")
    return f


def _fn(op, kwargs=None) -> _Op:
    name = op if isinstance(op, str) else getattr(op, "__name__", None)
    if not name:
        raise TypeError(f"ctensor.dask: op must be an op's name or a ctensor function, not {op!r}")
    _lookup(name)  # the error now, not on a worker
    return _Op(name, kwargs)


def _row(op):
    name = op if isinstance(op, str) else getattr(op, "__name__", "")
    return _OPS.get(name)


def _np(t):
    """A ctensor result as the NumPy array Dask keeps (shares its memory)."""
    return np.asarray(t)


def _out_dtype(op, arrays, **q):
    row = _row(op)
    if row is None:
        return None
    specs = [((1,) * a.ndim, str(a.dtype)) for a in arrays]
    (_, dt), = _ctensor._output_info(row["id"], specs, **q)
    return np.dtype(dt)


def map_blocks(op, *arrays, **kwargs):
    """``op`` (a registry name such as "exp", "add", "where", or a ctensor function) on the chunks of Dask
    arrays: they broadcast and their chunks are aligned as ``dask.array.map_blocks`` does; keyword arguments go
    to the op (``negative_slope=0.2``). Python numbers stay scalars."""
    f = _fn(op, kwargs)
    arrs = [a for a in arrays if isinstance(a, da.Array)]
    if not arrs:
        raise TypeError("ctensor.dask.map_blocks: give at least one dask array")
    dt = _out_dtype(op, arrs) if len(arrs) == len(arrays) else None
    if dt is None:  # a callable or scalar operands: one call on empty chunks says
        dt = f(*[np.zeros((1,) * a.ndim, a.dtype) if isinstance(a, da.Array) else a for a in arrays]).dtype
    return da.map_blocks(f, *arrays, dtype=dt,
                         meta=np.empty((0,) * max(a.ndim for a in arrs), dt))


# reductions: chunk step, the op that combines partial results, and the final step
_ASSOCIATIVE = {"sum": "sum", "prod": "prod", "max": "max", "min": "min", "any": "any", "all": "all",
                "nansum": "sum", "logsumexp": "logsumexp", "norm2": "norm2", "count_nonzero": "sum"}


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % ndim for a in axes))


def reduction(op: str, x, axis=None, keepdims: bool = False, split_every=None):
    """Reduction ``op`` of the registry over ``axis`` of Dask array ``x``: ctensor's op on each chunk (keeping
    dims), then the op that combines partial results (the same op, or sum for count_nonzero) up the tree. mean
    is sum over count. The result equals the op on the whole array (up to summation order for floats)."""
    if op == "mean":
        axes = _axes(axis, x.ndim)
        n = 1
        for a in axes:
            n *= x.shape[a]
        s = reduction("sum", x, axis, keepdims, split_every)
        return map_blocks("mul_scalar", s, s=1.0 / n) if n else map_blocks("mul_scalar", s, s=float("nan"))
    if op not in _ASSOCIATIVE:
        raise NotImplementedError(f"ctensor.dask.reduction: {op!r} does not split into chunk and aggregate steps "
                                  f"(supported: mean, {', '.join(sorted(_ASSOCIATIVE))})")
    chunk_f, comb_f = _fn(op), _fn(_ASSOCIATIVE[op])
    dt = _out_dtype(op, [x], axis=_axes(axis, x.ndim), keepdims=keepdims)
    chunk = functools.partial(_reduce_step, chunk_f, True)
    combine = functools.partial(_reduce_step, comb_f, True)
    aggregate = functools.partial(_reduce_step, comb_f, None)
    return da.reduction(x, chunk, aggregate, combine=combine, axis=axis, keepdims=keepdims, dtype=dt,
                        split_every=split_every, concatenate=True, meta=np.empty((0,) * (x.ndim if keepdims else 0),
                                                                                  dt))


def _reduce_step(f, keep, block, axis, keepdims):
    """One step of a tree reduction: f over axis, keeping the dims (chunk, combine) or as asked (aggregate)."""
    return f(block, axis=axis, keepdims=keepdims if keep is None else keep)


def conv2d(x, weight, bias=None):
    """torch.nn.functional.conv2d(x, weight, bias, padding="same") with stride 1 and an odd kernel, for x
    (N, C, H, W) chunked along any dims but C: each chunk with a halo of kernel // 2 cells (zeros at the
    array's border) runs ctensor's conv2d without padding (``map_overlap``)."""
    w = np.asarray(weight)
    b = None if bias is None else np.asarray(bias)
    kh, kw = w.shape[2], w.shape[3]
    if kh % 2 == 0 or kw % 2 == 0:
        raise ValueError(f"ctensor.dask.conv2d: kernel {kh}x{kw} must be odd in both dims (a centred halo)")
    if len(x.chunks[1]) != 1:
        x = x.rechunk({1: -1})
    depth = {0: 0, 1: 0, 2: kh // 2, 3: kw // 2}

    run = _Op("conv2d", {"weight": w, "bias": b})
    out_chunks = (x.chunks[0], (w.shape[0],), x.chunks[2], x.chunks[3])
    dt = np.result_type(x.dtype)
    return da.map_overlap(run, x, depth=depth, boundary=0, trim=False, dtype=dt, chunks=out_chunks,
                          meta=np.empty((0, 0, 0, 0), dt))


def max_pool2d(x, kernel_size: int, stride: int | None = None):
    """torch.nn.functional.max_pool2d(x, kernel_size, stride) for x (N, C, H, W) chunked along any dims:
    non-overlapping windows (stride == kernel_size) run per chunk after rechunking H and W to multiples of the
    kernel; stride 1 with an odd kernel and padding kernel // 2 ("same") takes a halo of -inf
    (``map_overlap``)."""
    k = int(kernel_size)
    s = k if stride is None else int(stride)
    if s == k:
        def snap(cs):
            # chunks of a multiple of k cells; a tail shorter than one window joins the chunk before it
            size, total = max(k, (cs[0] // k) * k), sum(cs)
            out = [size] * (total // size)
            rest = total - size * len(out)
            if rest and (rest >= k or not out):
                out.append(rest)
            elif rest:
                out[-1] += rest
            return tuple(out)

        x = x.rechunk({2: snap(x.chunks[2]), 3: snap(x.chunks[3])})
        chunks = (x.chunks[0], x.chunks[1], tuple(c // k for c in x.chunks[2]), tuple(c // k for c in x.chunks[3]))
        return da.map_blocks(_Op("max_pool2d", {"kernel_size": k, "stride": k}), x, dtype=x.dtype, chunks=chunks)
    if s == 1 and k % 2 == 1:
        depth = {0: 0, 1: 0, 2: k // 2, 3: k // 2}
        return da.map_overlap(_Op("max_pool2d", {"kernel_size": k, "stride": 1}), x, depth=depth, boundary=-np.inf,
                              trim=False,
                              dtype=x.dtype, chunks=x.chunks)
    raise NotImplementedError(f"ctensor.dask.max_pool2d: kernel_size={k}, stride={s}: non-overlapping windows "
                              "(stride == kernel_size) or stride 1 with an odd kernel")


def set_num_threads(n: int, client=None) -> None:
    """ctensor's threads per call: here, and on every worker of ``client`` (a distributed.Client) if given."""
    _set_threads(n)
    if client is not None:
        client.run(_set_threads, n)


def _set_threads(n: int) -> int:
    # a Python function, which pickles by reference (ctensor's native functions do not pickle)
    _ct.set_num_threads(n)
    return _ct.get_num_threads()


_ = dask
