"""NN functions composed of registry ops and the NN kinds' ops: rms_norm, group_norm, instance_norm, the adaptive
poolings (1-d to 3-d, average and max), scaled_dot_product_attention and its backward, with torch.nn.functional's
signatures.

Each is a handful of calls (views, reductions, elementwise maps, layer_norm / batch_norm, matmul, softmax), so it
runs wherever and in whatever dtypes those run, with their checks. They are compositions, not fused kernels: an
attention here writes the (L, S) scores of a few heads at a time, and an adaptive pooling is one reduction per
output index of each pooled dim (the window averages and maxima are separable over the dims).
"""

from __future__ import annotations

import math
import operator

from . import _ctensor
from . import _nn, _views
from ._movement import _fill, triu
from ._nn import batch_norm, layer_norm, layer_norm_backward, matmul

_NARROW = ("float16", "bfloat16")


def _in_float32(f):
    """f run on float16 / bfloat16 inputs in float32 and rounded once at the end (PyTorch's opmath), so the
    composition's intermediate results are not rounded to the narrow type."""
    def g(input, *args, **kw):
        t = _ctensor.asarray(input)
        dt = str(t.dtype)
        if dt not in _NARROW:
            return f(t, *args, **kw)
        return _ctensor.astype(f(_ctensor.astype(t, "float32"), *args, **kw), dt)
    g.__name__, g.__doc__ = f.__name__, f.__doc__
    return g


def _dims_of(shape, normalized_shape):
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(ns)
    if k > len(shape) or tuple(shape[len(shape) - k:]) != tuple(ns):
        raise ValueError(f"normalized_shape={list(ns)} is not the trailing shape of input.shape={list(shape)}")
    return tuple(range(len(shape) - k, len(shape)))


def rms_norm(input, normalized_shape, weight=None, eps: float | None = None):
    """x / sqrt(mean(x^2 over the trailing normalized_shape) + eps) * weight, as torch.nn.functional.rms_norm
    (eps None: the machine epsilon of the type computed in). float16 and bfloat16 are computed in float32 and
    rounded once, as PyTorch does."""
    t = _ctensor.asarray(input)
    axes = _dims_of(t.shape, normalized_shape)
    dt = str(t.dtype)
    eps = _rms_eps(dt, eps)  # None: the machine epsilon of the type computed in (float32's for the half types)
    x = _ctensor.astype(t, "float32") if dt in _NARROW else t
    ms = _ctensor.mean(_ctensor.square(x), axis=axes, keepdims=True)
    y = _ctensor.mul(x, _ctensor.rsqrt(_ctensor.add(ms, float(eps))))
    if weight is not None:
        w = _ctensor.asarray(weight)
        y = _ctensor.mul(y, _ctensor.astype(w, str(y.dtype)) if str(w.dtype) != str(y.dtype) else w)
    return _ctensor.astype(y, dt) if dt in _NARROW else y



def _rms_eps(dt: str, eps):
    if eps is not None:
        return float(eps)
    import numpy as np

    try:
        return float(np.finfo("float32" if dt in _NARROW else dt).eps)
    except (TypeError, ValueError):  # bfloat16, float8: ml_dtypes' finfo
        if dt in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"):
            raise TypeError(f"rms_norm: input.dtype={dt} has no machine epsilon for eps=None: give eps, or a "
                            "float input") from None
        import ml_dtypes

        return float(ml_dtypes.finfo(getattr(ml_dtypes, dt)).eps)


def rms_norm_backward(grad_output, input, normalized_shape, weight=None, eps: float | None = None):
    """(grad_input, grad_weight) of rms_norm(input, normalized_shape, weight, eps) for grad_output (grad_weight
    None without a weight): with r = 1 / sqrt(mean(x^2) + eps) over the normalized dims and g = dy * weight,
    dx = r g - x r^3 mean(g x), dweight = the sum of dy x r over the other dims. float16 and bfloat16 in float32,
    rounded once."""
    t, dy = _ctensor.asarray(input), _ctensor.asarray(grad_output)
    dt = str(t.dtype)
    if tuple(dy.shape) != tuple(t.shape):
        raise ValueError(f"rms_norm_backward: grad_output.shape={list(dy.shape)} differs from input.shape="
                         f"{list(t.shape)}")
    axes = _dims_of(t.shape, normalized_shape)
    eps = _rms_eps(dt, eps)
    x = _ctensor.astype(t, "float32") if dt in _NARROW else t
    g = _ctensor.astype(dy, str(x.dtype)) if str(dy.dtype) != str(x.dtype) else dy
    r = _ctensor.rsqrt(_ctensor.add(_ctensor.mean(_ctensor.square(x), axis=axes, keepdims=True), eps))
    dw = None
    if weight is not None:
        w = _ctensor.asarray(weight)
        wdt = str(w.dtype)
        lead = tuple(range(t.ndim - len(axes)))
        prod = _ctensor.multiply(_ctensor.multiply(g, x), r)
        dw = _ctensor.sum(prod, axis=lead) if lead else prod
        dw = _ctensor.astype(dw, wdt) if str(dw.dtype) != wdt else dw
        g = _ctensor.multiply(g, _ctensor.astype(w, str(x.dtype)) if wdt != str(x.dtype) else w)
    m = _ctensor.mean(_ctensor.multiply(g, x), axis=axes, keepdims=True)
    dx = _ctensor.subtract(_ctensor.multiply(g, r),
                           _ctensor.multiply(x, _ctensor.multiply(_ctensor.multiply(_ctensor.square(r), r), m)))
    return (_ctensor.astype(dx, dt) if dt in _NARROW else dx), dw

def _per_channel(v, ndim: int, dtype: str):
    """A (C,) tensor as (C, 1, ..., 1) of dtype against an (N, C, ...) input of ndim dims."""
    w = _ctensor.asarray(v)
    if str(w.dtype) != dtype:
        w = _ctensor.astype(w, dtype)
    return _views.reshape(w, (w.shape[0],) + (1,) * (ndim - 2))


@_in_float32
def group_norm(input, num_groups: int, weight=None, bias=None, eps: float = 1e-5):
    """Normalisation over groups of channels of (N, C, ...), as torch.nn.functional.group_norm: each (n, group)'s
    elements to mean 0 and variance 1 (biased), then weight and bias per channel. The statistics are layer_norm's
    over the (N, num_groups, C / num_groups * spatial) view."""
    t = _ctensor.asarray(input)
    num_groups = operator.index(num_groups)
    if t.ndim < 2:
        raise ValueError(f"group_norm: input.shape={list(t.shape)} needs (N, C, ...)")
    n, c = t.shape[0], t.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise ValueError(f"group_norm: num_groups={num_groups} must divide the {c} channels")
    m = t.size // max(n * num_groups, 1)
    y = layer_norm(_views.reshape(t, (n, num_groups, m)), [m], eps=eps)
    y = _views.reshape(y, t.shape)
    if weight is not None:
        y = _ctensor.mul(y, _per_channel(weight, t.ndim, str(y.dtype)))
    if bias is not None:
        y = _ctensor.add(y, _per_channel(bias, t.ndim, str(y.dtype)))
    return y



def group_norm_backward(grad_output, input, num_groups: int, weight=None, eps: float = 1e-5):
    """(grad_input, grad_weight, grad_bias) of group_norm(input, num_groups, weight, bias, eps) for grad_output
    (grad_weight None without a weight; grad_bias, the per-channel sum of grad_output, is given either way):
    layer_norm_backward over the (N, num_groups, C / num_groups * spatial) view with dy * weight, and the
    per-channel sums of dy * x_hat and dy. float16 and bfloat16 in float32, rounded once. instance_norm's gradient
    with the input's statistics is this with one channel per group."""
    t, dy = _ctensor.asarray(input), _ctensor.asarray(grad_output)
    dt = str(t.dtype)
    num_groups = operator.index(num_groups)
    if t.ndim < 2 or tuple(dy.shape) != tuple(t.shape):
        raise ValueError(f"group_norm_backward: input.shape={list(t.shape)} needs (N, C, ...) and grad_output "
                         f"its shape (got {list(dy.shape)})")
    n, c = t.shape[0], t.shape[1]
    if num_groups <= 0 or c % num_groups:
        raise ValueError(f"group_norm_backward: num_groups={num_groups} must divide the {c} channels")
    x = _ctensor.astype(t, "float32") if dt in _NARROW else t
    g = _ctensor.astype(dy, str(x.dtype)) if str(dy.dtype) != str(x.dtype) else dy
    m = x.size // max(n * num_groups, 1)
    xv = _views.reshape(x, (n, num_groups, m))
    xhat, mean, rstd = layer_norm(xv, [m], eps=eps, return_stats=True)
    xhat = _views.reshape(xhat, t.shape)
    others = (0,) + tuple(range(2, t.ndim))
    db = _ctensor.sum(g, axis=others)
    dw = None
    if weight is not None:
        w = _ctensor.asarray(weight)
        dw = _ctensor.sum(_ctensor.multiply(g, xhat), axis=others)
        dw = _ctensor.astype(dw, str(w.dtype)) if str(dw.dtype) != str(w.dtype) else dw
        g = _ctensor.multiply(g, _per_channel(w, t.ndim, str(x.dtype)))
    dx, _, _ = layer_norm_backward(xv, _views.reshape(g, (n, num_groups, m)), mean, rstd, [m])
    dx = _views.reshape(dx, t.shape)
    if dt in _NARROW:
        dx, db = _ctensor.astype(dx, dt), _ctensor.astype(db, dt)
    return dx, dw, db

def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5):
    """Normalisation of each (n, c) plane, as torch.nn.functional.instance_norm: with use_input_stats the planes'
    own statistics (group_norm with one channel per group), updating running_mean / running_var in place when
    given (their average over the batch, the variance unbiased, as PyTorch); otherwise batch_norm's inference
    with the running statistics."""
    t = _ctensor.asarray(input)
    if t.ndim < 2:
        raise ValueError(f"instance_norm: input.shape={list(t.shape)} needs at least 2 dims (N, C, ...)")
    if not use_input_stats:
        return batch_norm(t, running_mean, running_var, weight, bias, training=False, eps=eps)
    y = group_norm(t, t.shape[1], weight, bias, eps)
    spatial = tuple(range(2, t.ndim))
    count = t.size // max(t.shape[0] * t.shape[1], 1)
    if running_mean is not None:
        mean = _ctensor.mean(_ctensor.mean(t, axis=spatial), axis=0)
        _ctensor.lerp(running_mean, _ctensor.astype(mean, str(_ctensor.asarray(running_mean).dtype)),
                      float(momentum), out=running_mean)
    if running_var is not None:
        var = _ctensor.mean(_ctensor.var(t, axis=spatial, correction=1 if count > 1 else 0), axis=0)
        _ctensor.lerp(running_var, _ctensor.astype(var, str(_ctensor.asarray(running_var).dtype)),
                      float(momentum), out=running_var)
    return y


def _adaptive(fn: str, reduce, input, output_size, k: int):
    """One reduction per output index along each of the last k dims, window [floor(i n / o), ceil((i + 1) n / o))."""
    t = _ctensor.asarray(input)
    if str(t.dtype) in _NARROW and reduce is _ctensor.mean:  # the partial means in float32, rounded once
        return _ctensor.astype(_adaptive(fn, reduce, _ctensor.astype(t, "float32"), output_size, k), str(t.dtype))
    if t.ndim < k + 1:
        raise ValueError(f"{fn}: input.shape={list(t.shape)} needs at least {k + 1} dims")
    sizes = [output_size] * k if isinstance(output_size, int) or output_size is None else list(output_size)
    if len(sizes) != k:
        raise ValueError(f"{fn}: output_size={output_size!r} must have {k} entries")
    cur = t
    for j, o in enumerate(sizes):
        d = t.ndim - k + j
        n = cur.shape[d]
        o = n if o is None else operator.index(o)
        if o < 0 or (o > 0 and n == 0):
            raise ValueError(f"{fn}: output size {o} along dim {d} of an input of extent {n}")
        shape = list(cur.shape)
        shape[d] = o
        nxt = _ctensor.empty(tuple(shape), cur.dtype, cur.device)
        lead = (slice(None),) * d
        for i in range(o):
            s, e = (i * n) // o, -((-(i + 1) * n) // o)
            reduce(_views.getitem(cur, lead + (slice(s, e),)), axis=d, keepdims=True,
                   out=_views.getitem(nxt, lead + (slice(i, i + 1),)))
        cur = nxt
    return cur


def _avg(k):
    def f(input, output_size):
        return _adaptive(f"adaptive_avg_pool{k}d", _ctensor.mean, input, output_size, k)
    f.__name__ = f"adaptive_avg_pool{k}d"
    f.__doc__ = (f"Average pooling of the last {k} dims to output_size, as torch.nn.functional.adaptive_avg_pool{k}d "
                 "(window i of n inputs for o outputs: [floor(i n / o), ceil((i + 1) n / o))).")
    return f


def _max(k):
    def f(input, output_size, return_indices: bool = False):
        if return_indices:
            raise NotImplementedError(f"adaptive_max_pool{k}d: return_indices=True is not supported (the maxima are "
                                      "reduced one dim at a time)")
        return _adaptive(f"adaptive_max_pool{k}d", _ctensor.max, input, output_size, k)
    f.__name__ = f"adaptive_max_pool{k}d"
    f.__doc__ = (f"Max pooling of the last {k} dims to output_size, as torch.nn.functional.adaptive_max_pool{k}d "
                 "(the windows of adaptive_avg_pool; NaN propagates).")
    return f


adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d = _avg(1), _avg(2), _avg(3)
adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d = _max(1), _max(2), _max(3)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False):
    """softmax(query @ key^T * scale + mask) @ value, as torch.nn.functional.scaled_dot_product_attention:
    query (..., L, E), key (..., S, E), value (..., S, Ev); scale defaults to 1 / sqrt(E); attn_mask a bool mask
    (True: attend) or an additive float mask broadcasting to (..., L, S); is_causal masks key j > query i. With
    enable_gqa, key and value may have fewer heads (dim -3) than query, each shared by H_q / H_kv query heads.
    Dropout needs random numbers, which ctensor does not draw: dropout_p must be 0. Where the device runs the fused
    op (ct_scaled_dot_product_attention: the CPU, float32 and bfloat16 where oneDNN has it; OpenCL and CUDA,
    float16 too) the call is that op; elsewhere (float16 on the CPU, grouped-query heads) a composition by
    blocks of heads (two matmuls and an in-place softmax over each block's scores, a few MiB that stay in cache).
    Its gradients: scaled_dot_product_attention_backward."""
    if dropout_p != 0.0:
        raise NotImplementedError("scaled_dot_product_attention: dropout_p must be 0 (ctensor draws no random numbers)")
    q, k, v = _ctensor.asarray(query), _ctensor.asarray(key), _ctensor.asarray(value)
    y = _attention_native(q, k, v, attn_mask, is_causal, scale, enable_gqa)
    if y is not None:
        return y
    dt = str(q.dtype)
    if dt in _NARROW and str(k.dtype) == dt and str(v.dtype) == dt and str(q.device) == "cpu":
        y = _attention_narrow(q, k, v, attn_mask, is_causal, scale, enable_gqa)
        if y is not None:
            return y
    if dt in _NARROW:  # the scores, softmax and products in float32, rounded once (PyTorch's CPU kernels)
        f32 = [None if a is None else _ctensor.astype(_ctensor.asarray(a), "float32") for a in (q, k, v)]
        m = attn_mask
        if m is not None and str(_ctensor.asarray(m).dtype) in _NARROW:
            m = _ctensor.astype(_ctensor.asarray(m), "float32")
        return _ctensor.astype(scaled_dot_product_attention(*f32, attn_mask=m, dropout_p=dropout_p, is_causal=is_causal,
                                                            scale=scale, enable_gqa=enable_gqa), dt)
    q, k, v, mask, s, _ = _attention_inputs("scaled_dot_product_attention", q, k, v, attn_mask, is_causal, scale,
                                            enable_gqa)
    L, S = q.shape[-2], k.shape[-2]
    # the scale applied to the query (L x E products, not L x S: exact for the power-of-two default of E = 4^k)
    q = _ctensor.mul(q, s)
    batch = tuple(q.shape[:-2])
    if (len(batch) and tuple(k.shape[:-2]) == batch and tuple(v.shape[:-2]) == batch and
            (mask is None or mask.ndim <= 2) and L * S):
        return _attention_blocks(q, k, v, mask, batch)
    scores = matmul(q, k.mT)
    if mask is not None:
        scores = _ctensor.add(scores, mask)
    return matmul(_ctensor.softmax(scores, axis=-1, out=scores), v)


def _attention_native(q, k, v, attn_mask, is_causal, scale, enable_gqa):
    """The fused op (ct_scaled_dot_product_attention) where the device runs it and the call is one it takes (equal
    dtypes, a bool mask or one of q's dtype or float32, not both a mask and is_causal, no grouped-query heads); None
    otherwise, and the composition below answers (its errors included)."""
    dt = str(q.dtype)
    if str(k.dtype) != dt or str(v.dtype) != dt or (attn_mask is not None and is_causal) or scale == 0.0:
        return None
    if enable_gqa and q.ndim >= 3 and k.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        return None
    m = None
    if attn_mask is not None:
        m = _ctensor.asarray(attn_mask)
        if str(m.dtype) not in ("bool", dt, "float32"):
            return None
    try:
        (y,) = _nn._run("scaled_dot_product_attention", [q, k, v, m], [True],
                        {"causal": 1 if is_causal else 0, "scale": 0.0 if scale is None else float(scale)})
    except (NotImplementedError, ValueError, TypeError):
        return None
    return y


def _attention_inputs(fn, q, k, v, attn_mask, is_causal, scale, enable_gqa):
    """The checked operands of an attention call: key and value with the query's heads (grouped-query heads
    repeated; the group size, or 0, returned last), the additive mask (is_causal's triangle, a bool mask as 0 /
    -inf) or None, and the scale."""
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(f"{fn}: query, key and value need at least 2 dims")
    if is_causal and attn_mask is not None:
        raise ValueError(f"{fn}: attn_mask and is_causal=True are exclusive (as PyTorch)")
    group = 0
    if q.ndim >= 3 and k.ndim >= 3 and q.shape[-3] != k.shape[-3]:
        hq, hk = q.shape[-3], k.shape[-3]
        if not enable_gqa or hk == 0 or hq % hk or v.shape[-3] != hk:
            raise ValueError(f"{fn}: query has {hq} heads and key {hk}: they must match, or divide with "
                             "enable_gqa=True")
        group = hq // hk
        idx = _ctensor.asarray(__import__("numpy").arange(hq, dtype="int64") // group)
        if str(k.device) != "cpu":
            idx = idx.to(device=k.device)
        from ._index import take

        k, v = take(k, idx, axis=-3), take(v, idx, axis=-3)
    e = q.shape[-1]
    s = (1.0 / math.sqrt(e) if e else 1.0) if scale is None else float(scale)
    L, S = q.shape[-2], k.shape[-2]
    mask = None
    if is_causal:
        mask = _causal_mask(L, S, str(q.dtype), q.device)
    elif attn_mask is not None:
        mask = _ctensor.asarray(attn_mask)
        if str(mask.dtype) == "bool":
            zero = _ctensor.empty((), q.dtype, q.device)
            _fill(zero, 0.0)
            ninf = _ctensor.empty((), q.dtype, q.device)
            _fill(ninf, -math.inf)
            mask = _ctensor.where(mask, zero, ninf)
    return q, k, v, mask, s, group


def scaled_dot_product_attention_backward(grad_output, query, key, value, attn_mask=None, is_causal: bool = False,
                                          scale: float | None = None, enable_gqa: bool = False):
    """(grad_query, grad_key, grad_value) of scaled_dot_product_attention(query, key, value, attn_mask, 0.0,
    is_causal, scale, enable_gqa) for grad_output: the attention weights P recomputed by blocks of heads, as a
    flash attention's backward does, then dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(P dP)), dQ = scale dS K,
    dK = scale dS^T Q; with enable_gqa each shared head's dK and dV summed over its query heads, and over any
    batch dims key and value broadcast along. No gradient for the mask. float16 and bfloat16 in float32, each
    gradient rounded once to its input's dtype."""
    fn = "scaled_dot_product_attention_backward"
    do, q, k, v = (_ctensor.asarray(a) for a in (grad_output, query, key, value))
    dts = [str(a.dtype) for a in (q, k, v)]
    if any(d in _NARROW for d in dts + [str(do.dtype)]):
        f32 = [_ctensor.astype(a, "float32") for a in (do, q, k, v)]
        m = attn_mask
        if m is not None and str(_ctensor.asarray(m).dtype) in _NARROW:
            m = _ctensor.astype(_ctensor.asarray(m), "float32")
        grads = scaled_dot_product_attention_backward(*f32, attn_mask=m, is_causal=is_causal, scale=scale,
                                                      enable_gqa=enable_gqa)
        return tuple(_ctensor.astype(g, d) for g, d in zip(grads, dts))
    qshape, kshape, vshape = tuple(q.shape), tuple(k.shape), tuple(v.shape)
    q, k, v, mask, s, group = _attention_inputs(fn, q, k, v, attn_mask, is_causal, scale, enable_gqa)
    L, S, E, Ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    batch = tuple(_broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]))
    if tuple(do.shape) != batch + (L, Ev):
        raise ValueError(f"{fn}: grad_output.shape={list(do.shape)} is not the attention's output shape "
                         f"{list(batch + (L, Ev))}")
    nb = 1
    for d in batch:
        nb *= d
    qs = _ctensor.mul(q, s)
    flat = [_views.reshape(_views.broadcast_to(t, batch + tuple(t.shape[-2:])), nb, *t.shape[-2:])
            for t in (qs, k, v, do)]
    qf, kf, vf, dof = flat
    if mask is not None and mask.ndim > 2:  # per head: the mask broadcast over the batch, one copy
        mask = _views.reshape(_views.broadcast_to(mask, batch + (L, S)), nb, L, S)
    dq, dk = _ctensor.empty((nb, L, E), q.dtype, q.device), _ctensor.empty((nb, S, E), q.dtype, q.device)
    dv = _ctensor.empty((nb, S, Ev), q.dtype, q.device)
    per = max(1, min(max(nb, 1), _BLOCK_BYTES // max(1, L * S * max(1, q.nbytes // max(1, q.size)))))
    bp, bd = (_ctensor.empty((per, L, S), q.dtype, q.device) for _ in range(2))
    for i in range(0, nb if L * S else 0, per):
        n = min(per, nb - i)
        blk = slice(i, i + n)
        p, dp = bp[:n], bd[:n]
        matmul(qf[blk], kf[blk].mT, out=p)
        if mask is not None:
            _ctensor.add(p, mask if mask.ndim <= 2 else mask[blk], out=p)
        _ctensor.softmax(p, axis=-1, out=p)
        matmul(p.mT, dof[blk], out=dv[blk])
        matmul(dof[blk], vf[blk].mT, out=dp)
        rows = _ctensor.sum(_ctensor.multiply(p, dp), axis=-1, keepdims=True)
        _ctensor.subtract(dp, rows, out=dp)
        _ctensor.multiply(dp, p, out=dp)  # dS
        matmul(dp, kf[blk], out=dq[blk])
        _ctensor.mul(dq[blk], s, out=dq[blk])
        matmul(dp.mT, qf[blk], out=dk[blk])  # the scale is in qf
    if L * S == 0:
        for t in (dq, dk, dv):
            _fill(t, 0)
    dq = _views.reshape(dq, *batch, L, E)
    dk, dv = _views.reshape(dk, *batch, S, E), _views.reshape(dv, *batch, S, Ev)
    if group:  # the query heads that shared a key/value head: their gradients summed into it
        dk = _ctensor.sum(_views.reshape(dk, *batch[:-1], batch[-1] // group, group, S, E), axis=-3)
        dv = _ctensor.sum(_views.reshape(dv, *batch[:-1], batch[-1] // group, group, S, Ev), axis=-3)
    return _sum_to(dq, qshape), _sum_to(dk, kshape), _sum_to(dv, vshape)


def _broadcast_shapes(*shapes):
    nd = max(len(x) for x in shapes)
    out = []
    for i in range(nd):
        ext = {x[len(x) - nd + i] for x in shapes if len(x) - nd + i >= 0} - {1}
        if len(ext) > 1:
            raise ValueError(f"scaled_dot_product_attention_backward: batch dims {[list(x) for x in shapes]} do not "
                             "broadcast")
        out.append(ext.pop() if ext else 1)
    return out


def _sum_to(g, shape):
    """g summed over the dims along which an operand of `shape` was broadcast to g's shape."""
    shape = tuple(shape)
    lead = g.ndim - len(shape)
    if lead:
        g = _ctensor.sum(g, axis=tuple(range(lead)))
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    if axes:
        g = _ctensor.sum(g, axis=axes, keepdims=True)
    return g


_BLOCK_BYTES = 4 << 20  # the scores of one block of heads: a few MiB, which stay in the caches between the passes


def _attention_blocks(q, k, v, mask, batch, scale=None):
    """softmax(q @ k^T + mask) @ v over blocks of the flattened batch: each block's scores are written by the first
    matmul, masked and normalised in place and read by the second while still in cache, and one buffer serves
    every block (no allocation of the whole (..., L, S) scores).

    float16 / bfloat16 q, k, v (the CPU, where matmul writes their products to float32): the scores in float32
    (times scale, when given, in float32), the softmax in float32, the weights rounded to q's dtype for the second
    matmul, which accumulates in float32 and rounds each output once: PyTorch's CPU flash attention's precision,
    at the half matmul's speed."""
    nb = 1
    for d in batch:
        nb *= d
    L, S, E, Ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    qf, kf, vf = _views.reshape(q, nb, L, E), _views.reshape(k, nb, S, E), _views.reshape(v, nb, S, Ev)
    out = _ctensor.empty((nb, L, Ev), q.dtype, q.device)
    narrow = str(q.dtype) in _NARROW
    per = max(1, min(nb, _BLOCK_BYTES // (L * S * 4)))
    buf = _ctensor.empty((per, L, S), "float32" if narrow else q.dtype, q.device)
    pbuf = _ctensor.empty((per, L, S), q.dtype, q.device) if narrow else None
    for i in range(0, nb, per):
        n = min(per, nb - i)
        sc = buf[:n]
        matmul(qf[i:i + n], kf[i:i + n].mT, out=sc)
        if scale is not None:
            _ctensor.mul(sc, scale, out=sc)
        if mask is not None:
            _ctensor.add(sc, mask, out=sc)
        _ctensor.softmax(sc, axis=-1, out=sc)
        if narrow:
            _ctensor.cast(sc, out=pbuf[:n])
            sc = pbuf[:n]
        matmul(sc, vf[i:i + n], out=out[i:i + n])
    return _views.reshape(out, *batch, L, Ev)


def _attention_narrow(q, k, v, attn_mask, is_causal, scale, enable_gqa):
    """float16 / bfloat16 attention through the half matmul with float32 scores (_attention_blocks), or None where
    that does not apply (batch dims that broadcast, a mask with batch dims, no half matmul with a float32 out on
    this CPU): the caller then computes in float32."""
    q, k, v, mask, s, _ = _attention_inputs("scaled_dot_product_attention", q, k, v, attn_mask, is_causal, scale,
                                            enable_gqa)
    L, S = q.shape[-2], k.shape[-2]
    batch = tuple(q.shape[:-2])
    if not (len(batch) and tuple(k.shape[:-2]) == batch and tuple(v.shape[:-2]) == batch and
            (mask is None or mask.ndim <= 2) and L * S):
        return None
    if mask is not None and str(mask.dtype) != "float32":
        mask = _ctensor.astype(mask, "float32")
    try:
        return _attention_blocks(q, k, v, mask, batch, scale=s)
    except NotImplementedError:  # no half matmul (or none into float32) on this CPU
        return None


def _causal_mask(L: int, S: int, dtype: str, device):
    """(L, S): 0 where key j <= query i, -inf above (PyTorch's is_causal: the top-left aligned triangle)."""
    m = _ctensor.empty((L, S), dtype, device)
    _fill(m, -math.inf)
    return triu(m, 1)
