"""ctensor's ops inside JAX programs: ``ctensor.jax.<name>`` under ``jax.jit``, ``jax.vmap`` and ``jax.grad``.

The functions have the names and keywords of the ``ctensor`` module (``add(x1, x2)``, ``sum(x, axis=None,
keepdims=False)``, ``softmax(x, axis=-1)``, ``conv2d(input, weight, bias, stride, padding, dilation, groups)``,
...) and are made from the registry when this module is imported. Each lowers to an XLA custom call
(``jax.ffi.ffi_call``) into one of six XLA FFI handlers written in C++ (``_ctensor_jax``, built against the
headers of ``jax.ffi.include_dir()``), one per op kind: map (unary, parametrised, ternary, cast), binary,
reduce, along-axis, index, NN. Each handler takes the op id as an attribute and calls the kind's C entry
point on XLA's buffers in place; the output shapes come from the library's shape query
(``ct_op_output_info``) at trace time. So a plugin's op gets a function here too (:func:`register`).

- ``vmap``: elementwise, binary, reduce and along-axis ops take the batch as leading dims (operands are
  brought to one rank and axes counted from the end, so that is exact); index and NN ops run per batch
  element (``vmap_method="sequential"``).
- ``grad``: the NN ops (matmul, linear, conv2d, max_pool2d, avg_pool2d, layer_norm, batch_norm in training)
  differentiate with ctensor's backward ops through the same NN handler (``jax.custom_vjp``); the elementwise,
  binary, reduce and along-axis ops with a rule in ``ctensor._derivatives`` with that rule, in these
  functions. Without a rule an op has no gradient and differentiating it raises.
- The CPU only: the handlers are registered for XLA's CPU platform.
"""
from __future__ import annotations

import builtins as _b  # this module's sum, max, all, round, ... are ops
import ctypes
import functools
import math
import os

import jax
import jax.numpy as jnp
import numpy as np

import ctensor as _ct
from . import _ctensor, _derivatives, _nn

_HERE = os.path.dirname(os.path.abspath(__file__))
_SO = os.path.join(_HERE, "_ctensor_jax.so")
if not os.path.exists(_SO):
    raise ImportError(f"ctensor.jax: {_SO} was not built: jax was not installed when ctensor was built "
                      "(its XLA FFI handlers compile against jax's headers): pip install jax, then rebuild "
                      "(pip install --no-build-isolation . or cmake)")
_lib = ctypes.cdll.LoadLibrary(_SO)
_TARGETS = {"map": "CtJaxMap", "binary": "CtJaxBinary", "reduce": "CtJaxReduce", "along_axis": "CtJaxAlongAxis",
            "index": "CtJaxIndex", "nn": "CtJaxNn"}
for _kind, _sym in _TARGETS.items():
    jax.ffi.register_ffi_target(f"ctensor_{_kind}", jax.ffi.pycapsule(getattr(_lib, _sym)), platform="cpu")

_lib.CtJaxSetCpuStream(ctypes.c_void_p(_ctensor._cpu_stream_address()))  # ctensor.set_num_threads applies
_OPS = {d["name"]: d["id"] for d in _ctensor._op_infos()}
_ctensor._set_leak_warnings(False)  # jax.jit's caches keep these functions until exit (see module.cpp)


def _spec(x):
    return (tuple(x.shape), str(x.dtype))


def _sds(shape, dt):
    return jax.ShapeDtypeStruct(tuple(shape), jnp.dtype(dt))


def _ffi(kind, outs, args, vmap="broadcast_all", alias=None, **attrs):
    aliases = None if alias is None else {alias: 0}
    return jax.ffi.ffi_call(f"ctensor_{kind}", outs, vmap_method=vmap, input_output_aliases=aliases)(*args, **attrs)


def _out_index(name, out, xs):
    """Which operand out= names (its buffer becomes the result's), or None without out=. JAX arrays are
    immutable: out= does not change the value of anything, it tells XLA the result may take that operand's
    buffer, which costs no allocation when the operand is donated (jax.jit(..., donate_argnums)) or dead after
    the call, and a copy of it otherwise. An operand passed twice to a ternary op is not aliased: XLA would copy
    it (the binary ops pass such an operand once instead, see _binary_call)."""
    if out is None:
        return None
    hits = [i for i, x in enumerate(xs) if x is out]
    if len(hits) == 2 and len(xs) == 2:
        return -1  # x1 and x2 are this one array
    if hits:
        return hits[0] if len(hits) == 1 else None
    raise ValueError(f"ctensor.jax.{name}: out= must be one of the operands (the result takes that operand's "
                     f"buffer; JAX arrays are immutable, so there is no other array to write into)")


def _check_alias(name, alias, x, shape, dt):
    """out= must have the result's shape and dtype (ctensor's out= rule: broadcasting never resizes it)."""
    if alias is not None and (tuple(x.shape) != tuple(shape) or jnp.dtype(x.dtype) != jnp.dtype(dt)):
        raise ValueError(f"ctensor.jax.{name}: out= has shape {tuple(x.shape)} and dtype {x.dtype}, the result "
                         f"has shape {tuple(shape)} and dtype {jnp.dtype(dt)}")


def _params(ps):
    return np.asarray([float(p) for p in ps], dtype=np.float64)


def _arrays(*xs):
    """Operands as arrays; Python numbers take the dtype of the array operands (as in ctensor)."""
    arrays = [x for x in xs if hasattr(x, "dtype")]
    like = next((x for x in arrays if x.dtype != jnp.bool_), arrays[0] if arrays else None)
    return [jnp.asarray(x) if hasattr(x, "dtype") or like is None else jnp.asarray(x, dtype=like.dtype) for x in xs]


def _same_rank(xs):
    """Leading 1s up to the largest rank, so that vmap's leading batch dims line up (NumPy broadcasting is
    unchanged)."""
    nd = _b.max(x.ndim for x in xs)
    return [x.reshape((1,) * (nd - x.ndim) + x.shape) if x.ndim < nd else x for x in xs]


def _neg_axes(axis, ndim):
    """Axes counted from the end (None: all of them), so that leading batch dims do not move them."""
    if axis is None:
        return tuple(range(-ndim, 0))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(a - ndim if 0 <= a < ndim else a for a in axes)


# ---------------------------------------------------------------------------
# one primitive per kind: the call into its FFI handler
# ---------------------------------------------------------------------------

def _map_call(op, xs, params=(), alias=None):
    given = xs = _arrays(*xs)
    xs = _same_rank(xs) if len(xs) > 1 else xs
    (shape, dt), = _ctensor._output_info(op, [_spec(x) for x in xs])
    if alias is not None:
        _check_alias(_ctensor._op_info(op)["name"], alias, given[alias], shape, dt)
    return _ffi("map", _sds(shape, dt), xs, alias=alias, op=np.int64(op), params=_params(params))


def _cast_call(x, dtype):
    x = jnp.asarray(x)
    name = str(jnp.dtype(dtype))
    (shape, dt), = _ctensor._output_info(_OPS["cast"], [_spec(x)], dtype=name)
    return _ffi("map", _sds(shape, dt), [x], op=np.int64(_OPS["cast"]), params=_params(()))


def _binary_call(op, a, b, alias=None):
    """alias -1: a and b are one array (out=), passed to the handler once."""
    given = a, b = _arrays(a, b)
    a, b = _same_rank(given)
    (shape, dt), = _ctensor._output_info(op, [_spec(a), _spec(b)])
    if alias is None:
        return _ffi("binary", _sds(shape, dt), [a, b], op=np.int64(op))
    _check_alias(_ctensor._op_info(op)["name"], alias, given[_b.max(alias, 0)], shape, dt)
    return _ffi("binary", _sds(shape, dt), [a] if alias < 0 else [a, b], alias=_b.max(alias, 0), op=np.int64(op))


def _reduce_call(op, x, axis, keepdims, params=()):
    x = jnp.asarray(x)
    axes = _neg_axes(axis, x.ndim)
    (shape, dt), = _ctensor._output_info(op, [_spec(x)], axis=axes, keepdims=bool(keepdims))
    return _ffi("reduce", _sds(shape, dt), [x], op=np.int64(op), axes=np.asarray(axes, np.int64),
                keepdims=bool(keepdims), params=_params(params))


def _along_call(op, x, axis):
    x = jnp.asarray(x)
    if axis is None:
        if x.ndim > 1:
            _ctensor._output_info(op, [_spec(x)], axis=None)  # the library's error for that
        axis = -1
    axis = _neg_axes(axis, x.ndim)[0]
    (shape, dt), = _ctensor._output_info(op, [_spec(x)], axis=axis)
    return _ffi("along_axis", _sds(shape, dt), [x], op=np.int64(op), axis=np.int64(axis))


def _index_call(op, x, axis, index, src=None, params=()):
    xs = [jnp.asarray(x), jnp.asarray(index)] + ([] if src is None else [jnp.asarray(src)])
    (shape, dt), = _ctensor._output_info(op, [_spec(t) for t in xs], axis=int(axis))
    return _ffi("index", _sds(shape, dt), xs, vmap="sequential", op=np.int64(op), axis=np.int64(axis),
                params=_params(params))


def _nn_call(fn, arrays, *args, **kw):
    """Run ctensor's NN function fn on arrays (its leading tensor arguments, None for absent ones) through the
    NN handler: fn runs on Specs of them, which gives the row, the descriptor and the output shapes (nothing is
    computed twice); returns what fn returns, as JAX arrays."""
    arrays = [None if a is None else jnp.asarray(a) for a in arrays]
    specs = [None if a is None else _nn.Spec(a.shape, str(a.dtype)) for a in arrays]
    outs = fn(*specs, *args, **kw)
    single = not isinstance(outs, tuple)
    outs_t = (outs,) if single else outs
    name, desc, _extent, present, row_inputs = next(o.call for o in outs_t if o is not None)
    op = _OPS[name]
    by_spec = {id(s): a for s, a in zip(specs, arrays) if s is not None}
    ins = [by_spec[id(s)] for s in row_inputs if s is not None]
    res = _ffi("nn", [_sds(o.shape, o.dtype) for o in outs_t if o is not None], ins, vmap="sequential",
               op=np.int64(op), present=np.asarray(present, np.int64),
               desc=np.frombuffer(_ctensor._pack_desc(op, desc), dtype=np.uint8))
    it = iter(res)
    got = tuple(None if o is None else next(it) for o in outs_t)
    return got[0] if single else got




# ---------------------------------------------------------------------------
# derivatives: ctensor._derivatives' rules in these functions
# ---------------------------------------------------------------------------

class _Ops:
    """ctensor._derivatives' namespace: this module's functions with the rows' positional arguments."""

    def __getattr__(self, name):
        op = _OPS[name]
        kind = _ctensor._op_info(op)["kind"]
        if kind == "reduce":
            return lambda x, dims=None, keep=False, *p: _reduce_fn(op)(x, dims, keep, p)
        if kind == "along_axis":
            return lambda x, d=-1: _along_fn(op)(x, d)
        if kind == "binary":
            return lambda a, b: _binary_fn(op)(a, b)
        if kind == "unary_param":
            return lambda x, *p: _map_fn(op, (x,), p)
        return lambda *xs: _map_fn(op, xs)

    @staticmethod
    def const(like, v):
        return jnp.asarray(v, dtype=like.dtype)

    @staticmethod
    def flip(t, d):
        return jnp.flip(t, d)

    count = staticmethod(_derivatives.count)

    @staticmethod
    def unreduce(g, shape, dims, keepdim):
        return jnp.broadcast_to(g if keepdim else g.reshape(_derivatives.kept_shape(shape, dims)), shape)

    @staticmethod
    def sum_to(g, shape):
        shape = tuple(shape)
        if tuple(g.shape) == shape:
            return g
        dims = tuple(_derivatives.summed_dims(tuple(g.shape), shape))
        return (_reduce_fn(_OPS["sum"])(g, dims, True, ()) if dims else g).reshape(shape)


ops = _Ops()


def _floating(x):
    return jnp.issubdtype(x.dtype, jnp.inexact)


def _map_fn(op, xs, params=(), out=None):
    name = _ctensor._op_info(op)["name"]
    info_kind = _ctensor._op_info(op)["kind"]
    rule = _derivatives.rule(info_kind, name)
    alias = _out_index(name, out, xs)
    xs = _arrays(*xs)
    if rule is None or not _b.all(_floating(x) for x in xs) or len(xs) != 1:
        return _map_call(op, xs, params, alias)
    return _vjp_unary(op, tuple(float(p) for p in params), alias)(xs[0])


@functools.lru_cache(maxsize=None)
def _vjp_unary(op, params, alias=None):
    info = _ctensor._op_info(op)
    rule = _derivatives.rule(info["kind"], info["name"])

    @jax.custom_vjp
    def f(x):
        return _map_call(op, [x], params, alias)

    def fwd(x):
        y = f(x)
        return y, (x, y)

    def bwd(res, g):
        x, y = res
        return (rule(ops, x, y, g, *params)[0],)

    f.defvjp(fwd, bwd)
    return f


def _binary_fn(op):
    name = _ctensor._op_info(op)["name"]
    rule = _derivatives.rule("binary", name)

    def call(a, b, out=None):
        alias = _out_index(name, out, (a, b))
        a, b = _arrays(a, b)
        if rule is None or not (_floating(a) and _floating(b)):
            return _binary_call(op, a, b, alias)
        return _vjp_binary(op, alias)(a, b)

    return call


@functools.lru_cache(maxsize=None)
def _vjp_binary(op, alias=None):
    rule = _derivatives.rule("binary", _ctensor._op_info(op)["name"])

    @jax.custom_vjp
    def f(a, b):
        return _binary_call(op, a, b, alias)

    def fwd(a, b):
        y = f(a, b)
        return y, (a, b, y)

    def bwd(res, g):
        a, b, y = res
        ga, gb = rule(ops, a, b, y, g)
        return ops.sum_to(ga, a.shape), ops.sum_to(gb, b.shape)

    f.defvjp(fwd, bwd)
    return f


def _reduce_fn(op):
    name = _ctensor._op_info(op)["name"]
    rule = _derivatives.rule("reduce", name)

    def call(x, axis, keepdims, params):
        x = jnp.asarray(x)
        if rule is None or not _floating(x):
            return _reduce_call(op, x, axis, keepdims, params)
        dims = None if axis is None else tuple(_neg_axes(axis, x.ndim))
        return _vjp_reduce(op, dims, bool(keepdims), tuple(float(p) for p in params))(x)

    return call


@functools.lru_cache(maxsize=None)
def _vjp_reduce(op, dims, keep, params):
    rule = _derivatives.rule("reduce", _ctensor._op_info(op)["name"])

    @jax.custom_vjp
    def f(x):
        return _reduce_call(op, x, dims, keep, params)

    def fwd(x):
        y = f(x)
        return y, (x, y)

    def bwd(res, g):
        x, y = res
        pos = None if dims is None else tuple(d % x.ndim for d in dims)
        gu, yu = ops.unreduce(g, x.shape, pos, keep), ops.unreduce(y, x.shape, pos, keep)
        return (rule(ops, x, yu, gu, pos, keep, *params)[0],)

    f.defvjp(fwd, bwd)
    return f


def _along_fn(op):
    rule = _derivatives.rule("along_axis", _ctensor._op_info(op)["name"])

    def call(x, axis):
        x = jnp.asarray(x)
        if rule is None or not _floating(x) or axis is None:
            return _along_call(op, x, axis)
        return _vjp_along(op, int(axis) % _b.max(1, x.ndim) - x.ndim)(x)

    return call


@functools.lru_cache(maxsize=None)
def _vjp_along(op, axis):
    rule = _derivatives.rule("along_axis", _ctensor._op_info(op)["name"])

    @jax.custom_vjp
    def f(x):
        return _along_call(op, x, axis)

    def fwd(x):
        y = f(x)
        return y, (x, y)

    def bwd(res, g):
        x, y = res
        return (rule(ops, x, y, g, axis % x.ndim)[0],)

    f.defvjp(fwd, bwd)
    return f


# ---------------------------------------------------------------------------
# the functions, by kind, with the ctensor module's names and keywords
# ---------------------------------------------------------------------------

_functions: dict[str, object] = {}  # public name -> function
_rows: dict[str, object] = {}  # row name -> the row's own function (the specialised signatures below call them)


def _row_params(info):
    items = [p.partition("=") for p in info["param_names"].split(",") if p]
    return [(n, float(v) if eq else None) for n, eq, v in items]


def _make(info):
    op, kind, name = info["id"], info["kind"], info["name"]
    rps = _row_params(info)
    if kind == "unary":
        def f(x, *, out=None):
            return _map_fn(op, (x,), out=out)
    elif kind == "unary_param":
        def f(x, *args, out=None, **kw):
            ps = []
            for i, (pn, dflt) in enumerate(rps):
                v = args[i] if i < len(args) else kw.pop(pn, dflt)
                if v is None:
                    raise TypeError(f"{name}() missing required argument: '{pn}'")
                ps.append(v)
            if kw:
                raise TypeError(f"{name}() got unexpected keyword argument(s) {sorted(kw)}")
            return _map_fn(op, (x,), ps, out=out)
    elif kind == "ternary":
        def f(a, b, c, *, out=None, **kw):
            ps = [kw.pop(pn, dflt) for pn, dflt in rps]
            if kw:
                raise TypeError(f"{name}() got unexpected keyword argument(s) {sorted(kw)}")
            return _map_call(op, [a, b, c], ps, _out_index(name, out, (a, b, c)))
    elif kind == "binary":
        def f(x1, x2, *, out=None):
            return _binary_fn(op)(x1, x2, out)
    elif kind == "reduce":
        if rps and rps[0][1] is None and rps[0][0] != "correction":  # quantile's q, kthvalue's k
            def f(x, param, axis=None, *, keepdims=False):
                return _reduce_fn(op)(x, axis, keepdims, (param,))
        elif rps:
            pn = rps[0][0]

            def f(x, *, axis=None, keepdims=False, **kw):
                return _reduce_fn(op)(x, axis, keepdims, (kw.pop(pn, 0.0),))
        else:
            def f(x, *, axis=None, keepdims=False):
                return _reduce_fn(op)(x, axis, keepdims, ())
    elif kind == "along_axis":
        cum = "cum" in name

        def f(x, axis=None if cum else -1):
            return _along_fn(op)(x, axis)
    else:
        return None
    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{info['summary']} (ctensor op '{name}', kind {kind}, through XLA's FFI)."
    return f


_ALIASES = {}


def register() -> list[str]:
    """Make a function for every op of the registry that has none yet (the built-ins at import, a plugin's ops
    after ``ctensor.load_library``); returns the names made now."""
    g = globals()
    new = []
    for op in _ct.ops():
        d = _ctensor._op_info(op.id)
        if d["name"] in _functions:
            continue
        f = _make(d)
        if f is None:
            continue
        for n in (d["name"],) + tuple(op.python_names):
            if n not in g or n in _functions:
                g[n] = f
                _functions[n] = f
        _functions[d["name"]] = _rows[d["name"]] = f
        new.append(d["name"])
    return new


register()


# the specialised signatures of the ctensor module, over the rows above
def gelu(x, *, approximate="none", out=None):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate={approximate!r} (expected 'none' or 'tanh')")
    return _rows["gelu" if approximate == "none" else "gelu_tanh"](x, out=out)


def clamp(x, min=None, max=None, *, out=None):  # noqa: A002 (ctensor's keywords)
    if min is None and max is None:
        return x
    return _map_fn(_OPS["clamp"], (x,), (-math.inf if min is None else min, math.inf if max is None else max), out)


def round(x, decimals=0, *, out=None):  # noqa: A001
    return _rows["round"](x, out=out) if decimals == 0 else _map_fn(_OPS["round_decimals"], (x,), (decimals,), out)


def softplus(x, beta=None, threshold=None, *, out=None):
    if beta is None and threshold is None:
        return _rows["softplus"](x, out=out)
    return _map_fn(_OPS["softplus_beta"], (x,), (1.0 if beta is None else beta, 20.0 if threshold is None else threshold),
                   out)


def astype(x, dtype):
    return _cast_call(x, dtype)


def cast(x, dtype):
    return _cast_call(x, dtype)


def take(x, indices, axis=None):
    if axis is None:
        x, axis = jnp.ravel(x), 0
    return _index_call(_OPS["take"], x, axis, indices)


def index_select(x, dim, index):
    return _index_call(_OPS["take"], x, dim, index)


def gather(x, dim, index):
    return _index_call(_OPS["gather"], x, dim, index)


def scatter(x, dim, index, src):
    return _index_call(_OPS["scatter"], x, dim, index, src)


def scatter_add(x, dim, index, src):
    return _index_call(_OPS["scatter_add"], x, dim, index, src)


def index_add(x, dim, index, source, *, alpha=1):
    return _index_call(_OPS["index_add"], x, dim, index, source, (alpha,))


def embedding(input, weight):  # noqa: A002
    return _index_call(_OPS["take"], weight, 0, input)


for _n in ("gelu", "clamp", "round", "softplus"):
    _functions[_n] = globals()[_n]


# ---------------------------------------------------------------------------
# NN ops: ctensor's functions (torch.nn.functional's keywords), gradients by ctensor's backward ops
# ---------------------------------------------------------------------------

@functools.partial(jax.custom_vjp, nondiff_argnums=())
def _matmul(a, b):
    return _nn_call(_nn.matmul, [a, b])


def _matmul_fwd(a, b):
    return _matmul(a, b), (a, b)


def _matmul_bwd(res, g):
    a, b = res
    ga = _nn_call(_nn.matmul, [g, jnp.swapaxes(b, -1, -2)])
    gb = _nn_call(_nn.matmul, [jnp.swapaxes(a, -1, -2), g])
    return ops.sum_to(ga, a.shape), ops.sum_to(gb, b.shape)


_matmul.defvjp(_matmul_fwd, _matmul_bwd)


def matmul(x1, x2):
    """x1 @ x2 (ctensor's matmul row; batch dims broadcast)."""
    return _matmul(jnp.asarray(x1), jnp.asarray(x2))


def linear(input, weight, bias=None):  # noqa: A002
    """input @ weight.T + bias, as torch.nn.functional.linear."""
    y = matmul(input, jnp.swapaxes(jnp.asarray(weight), -1, -2))
    return y if bias is None else _rows["add"](y, bias)


def _conv_key(stride, padding, dilation, groups):
    def t(v):
        return tuple(v) if isinstance(v, (list, tuple)) else v
    return (t(stride), t(padding), t(dilation), int(groups))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002
    """2-d convolution as torch.nn.functional.conv2d (ctensor's conv2d row; gradients by its backward rows)."""
    return _conv2d(_conv_key(stride, padding, dilation, groups), bias is not None, jnp.asarray(input),
                   jnp.asarray(weight), None if bias is None else jnp.asarray(bias))


@functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1))
def _conv2d(key, has_bias, x, w, b):
    return _nn_call(_nn.conv2d, [x, w, b], *key)


def _conv2d_fwd(key, has_bias, x, w, b):
    return _conv2d(key, has_bias, x, w, b), (x, w)


def _conv2d_bwd(key, has_bias, res, g):
    x, w = res
    dx = _nn_call(lambda dy, ww: _nn.conv2d_backward_data(dy, ww, x.shape, *key), [g, w])
    gw = _nn_call(lambda xx, dy: _nn.conv2d_backward_weight(xx, dy, w.shape, *key, bias=has_bias), [x, g])
    dw, db = gw if has_bias else (gw, None)
    return dx, dw, db


_conv2d.defvjp(_conv2d_fwd, _conv2d_bwd)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):  # noqa: A002
    """Max pooling as torch.nn.functional.max_pool2d (gradient: max_pool2d_backward with the indices)."""
    key = (_conv_key(kernel_size, stride if stride is not None else (), padding, 1)[:3], dilation
           if isinstance(dilation, int) else tuple(dilation), bool(ceil_mode))
    return _max_pool(key, jnp.asarray(input))


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _max_pool(key, x):
    (k, s, p), d, c = key
    return _nn_call(_nn.max_pool2d, [x], k, s, p, d, c)


def _max_pool_fwd(key, x):
    (k, s, p), d, c = key
    y, idx = _nn_call(_nn.max_pool2d, [x], k, s, p, d, c, True)
    return y, (x.shape, idx)


def _max_pool_bwd(key, res, g):
    (k, s, p), d, c = key
    shape, idx = res
    return (_nn_call(lambda dy, i: _nn.max_pool2d_backward(dy, i, shape, k, s, p, d, c), [g, idx]),)


_max_pool.defvjp(_max_pool_fwd, _max_pool_bwd)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):  # noqa: A002
    """Average pooling as torch.nn.functional.avg_pool2d (gradient: avg_pool2d_backward)."""
    key = (_conv_key(kernel_size, stride if stride is not None else (), padding, 1)[:3], bool(ceil_mode),
           bool(count_include_pad))
    return _avg_pool(key, jnp.asarray(input))


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _avg_pool(key, x):
    (k, s, p), c, cip = key
    return _nn_call(_nn.avg_pool2d, [x], k, s, p, c, cip)


def _avg_pool_fwd(key, x):
    return _avg_pool(key, x), x.shape


def _avg_pool_bwd(key, shape, g):
    (k, s, p), c, cip = key
    return (_nn_call(lambda dy: _nn.avg_pool2d_backward(dy, shape, k, s, p, c, cip), [g]),)


_avg_pool.defvjp(_avg_pool_fwd, _avg_pool_bwd)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """Layer normalisation as torch.nn.functional.layer_norm (gradient: layer_norm_backward)."""
    ns = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    w = None if weight is None else jnp.asarray(weight)
    b = None if bias is None else jnp.asarray(bias)
    return _layer_norm((ns, float(eps), w is not None, b is not None), jnp.asarray(input), w, b)


@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
def _layer_norm(key, x, w, b):
    ns, eps, _, _ = key
    return _nn_call(lambda xx, ww, bb: _nn.layer_norm(xx, ns, ww, bb, eps), [x, w, b])


def _layer_norm_fwd(key, x, w, b):
    ns, eps, _, _ = key
    y, mean, rstd = _nn_call(lambda xx, ww, bb: _nn.layer_norm(xx, ns, ww, bb, eps, return_stats=True), [x, w, b])
    return y, (x, w, mean, rstd)


def _layer_norm_bwd(key, res, g):
    ns, _, has_w, has_b = key
    x, w, mean, rstd = res
    dx, dw, db = _nn_call(lambda xx, dy, m, r, ww: _nn.layer_norm_backward(xx, dy, m, r, ns, ww), [x, g, mean, rstd, w])
    return dx, (dw if has_w else None), (db if has_b else None)


_layer_norm.defvjp(_layer_norm_fwd, _layer_norm_bwd)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """softmax(query @ key^T * scale + mask) @ value: ctensor's fused attention row (no gradient here: its
    backward is a composition ctensor runs outside XLA)."""
    if dropout_p != 0.0:
        raise NotImplementedError("scaled_dot_product_attention: dropout_p must be 0 (ctensor draws no random numbers)")
    arrays = [jnp.asarray(query), jnp.asarray(key), jnp.asarray(value), None if attn_mask is None else jnp.asarray(attn_mask)]
    desc = {"causal": 1 if is_causal else 0, "scale": 0.0 if scale is None else float(scale)}
    return _nn_call(lambda q, k, v, m: _nn._run("scaled_dot_product_attention", [q, k, v, m], [True], desc)[0], arrays)


__all__ = sorted(n for n in globals() if not n.startswith("_") and callable(globals()[n]) and n not in
                 ("annotations", "jax", "jnp", "np", "ctypes", "functools", "math", "os"))
