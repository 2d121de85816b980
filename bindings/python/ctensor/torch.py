"""ctensor's ops as PyTorch operators: ``import ctensor.torch`` registers ``torch.ops.ctensor.<name>``.

Every op of the registry becomes a PyTorch custom operator (``torch.library.custom_op``), generated from its row
(kind, tensor names, parameters) when this module is imported; a plugin's ops are added by :func:`register`
after its library is loaded (``ctensor.load_library``). Each operator has

- a kernel that runs ctensor's op through its C entry point on the tensors in place (DLPack, no copy) into an
  output PyTorch allocates, on any device ctensor has a backend for; on CUDA tensors it runs on PyTorch's
  current stream;
- a fake (meta) function that asks the library's output-shape query (``ct_op_output_info``), so
  ``torch.compile(fullgraph=True)`` traces through it and no shape rule is written here;
- where the op has one, its derivative: the NN ops use ctensor's backward ops (registered as operators too),
  the elementwise, broadcast, reduction and along-axis ops the rules of ``ctensor._derivatives``, written in
  ctensor's operators, so their gradients are ctensor ops as well.

Schemas: the NN ops take the schema of the matching ``aten`` op, read from PyTorch itself (``conv2d(Tensor
input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], ...)``); the other kinds get one schema per
kind in aten's style: ``exp(Tensor self)``, ``add(Tensor self, Tensor other)``, ``sum(Tensor self, int[]?
dim=None, bool keepdim=False)``, ``softmax(Tensor self, int dim=-1)``, ``gather(Tensor self, int dim, Tensor
index)``, a parametrised op's parameters as floats with the row's defaults. Semantics are ctensor's (NumPy's
dtype rules; ``dim=[]`` reduces nothing), not aten's where they differ.

Why ``torch.library.custom_op`` rather than a C++ ``TORCH_LIBRARY`` extension: the kernels already run through
the C ABI with the GIL released; a C++ extension would have to be compiled against each PyTorch's C++ ABI
(nothing here may assume a matching toolchain at import time), while custom_op is PyTorch's stable public API
for opaque kernels, gives fake tensors, autograd, ``opcheck`` and ``torch.compile`` support, and a per-call cost
measured in ``bench/bench_frameworks.py``.
"""
from __future__ import annotations


import torch

import ctensor as _ct
from . import _ctensor, _derivatives, _nn, _nn_compose

__all__ = ["register", "registered", "batch_norm", "max_pool2d", "layer_norm", "ops"]

_NS = "ctensor"
_registered: dict[str, object] = {}  # op name -> CustomOpDef
_registered_ids: set[int] = set()


_DTNAMES: dict = {}


def _dtname(dt: torch.dtype) -> str:
    name = _DTNAMES.get(dt)
    if name is None:
        name = _DTNAMES[dt] = str(dt).replace("torch.", "")
    return name


def _torch_dtype(name: str) -> torch.dtype:
    return getattr(torch, name)


def _cuda(tensors):
    """The CUDA device of the call (None on any other): its ops then run on PyTorch's current stream."""
    for t in tensors:
        if t is not None and t.is_cuda:
            return t.device
    return None


def _on_stream(dev, fn, *args, **kwargs):
    with _ct.use_stream(f"cuda:{dev.index or 0}", torch.cuda.current_stream(dev).cuda_stream):
        return fn(*args, **kwargs)


def _spec(t):
    return None if t is None else (tuple(t.shape), _dtname(t.dtype))


def _normalizer(qualname: str):
    """A function mapping a call's (args, kwargs) to all its positional arguments (defaults filled in) and its
    keyword-only ones, by the operator's schema: PyTorch hands the kernel the arguments as the caller gave
    them."""
    schema = []
    plain = []  # the number of arguments when all are positional (the common call: nothing to fill in)

    def normalize(args, kwargs):
        if not schema:
            ns, name = qualname.split("::")
            schema.append(getattr(getattr(torch.ops, ns), name).default._schema)
            args_ = schema[0].arguments
            plain.append(len(args_) if not any(a.kwarg_only for a in args_) else -1)
        if not kwargs and len(args) == plain[0]:
            return args, kwargs
        pos, kw = [], {}
        for i, a in enumerate(schema[0].arguments):
            if a.kwarg_only:
                kw[a.name] = kwargs.get(a.name, a.default_value)
            elif i < len(args):
                pos.append(args[i])
            else:
                pos.append(kwargs[a.name] if a.name in kwargs else a.default_value)
        return pos, kw

    return normalize


def _empty(shape, dtname, like):
    return torch.empty(tuple(shape), dtype=_torch_dtype(dtname), device=like.device)


# ---------------------------------------------------------------------------
# the kinds of categories 1 and 2: schema, call and shape query per kind
# ---------------------------------------------------------------------------

def _tensor_names(info) -> list[str]:
    """The row's input names ("cond:c,a,b|out" -> cond, a, b)."""
    ins = info.tensor_names[:info.num_inputs] if info.tensor_names else ()
    return [n.split(":")[0].rstrip("?") for n in ins]


def _float_params(info, kw_only: bool = False) -> str:
    out = []
    for name, dflt in zip(info.params, info.param_defaults):
        out.append(f"float {name}" + ("" if dflt is None else f"={dflt!r}"))
    if not out:
        return ""
    return (", *, " if kw_only else ", ") + ", ".join(out)


class _Kind:
    """How a row of one kind becomes an operator: its schema, the query of its output, and the call."""

    def __init__(self, info):
        self.info = info
        self.id = info.id
        self.name = info.name

    def fn(self):
        return _ct.ops.__dict__.get(self.name) or getattr(_ct.ops, self.name)


class _Unary(_Kind):
    def schema(self):
        return f"(Tensor self{_float_params(self.info)}) -> Tensor"

    def query(self, args, kwargs):
        return _ctensor._output_info(self.id, [_spec(args[0])])

    def run(self, out, args, kwargs):
        self.fn()(*args, out=out)

    def tensors(self, args):
        return [args[0]]


class _Binary(_Kind):
    def schema(self):
        return "(Tensor self, Tensor other) -> Tensor"

    def query(self, args, kwargs):
        return _ctensor._output_info(self.id, [_spec(args[0]), _spec(args[1])])

    def run(self, out, args, kwargs):
        self.fn()(args[0], args[1], out=out)

    def tensors(self, args):
        return list(args[:2])


class _Ternary(_Kind):
    def schema(self):
        a, b, c = _tensor_names(self.info)
        return f"(Tensor {a}, Tensor {b}, Tensor {c}{_float_params(self.info, kw_only=True)}) -> Tensor"

    def query(self, args, kwargs):
        return _ctensor._output_info(self.id, [_spec(t) for t in args[:3]])

    def run(self, out, args, kwargs):
        self.fn()(*args[:3], out=out, **kwargs)

    def tensors(self, args):
        return list(args[:3])


class _Reduce(_Kind):
    def schema(self):
        p = self.info.params
        if not p:
            return "(Tensor self, int[]? dim=None, bool keepdim=False) -> Tensor"
        if self.info.param_defaults[0] is None and p[0] != "correction":  # quantile's q, kthvalue's k: needed
            return f"(Tensor self, float {p[0]}, int[]? dim=None, bool keepdim=False) -> Tensor"
        return f"(Tensor self, int[]? dim=None, bool keepdim=False, *, float {p[0]}=0.0) -> Tensor"

    def _args(self, args, kwargs):
        """(x, dims, keepdim, params) from a normalised call."""
        p = self.info.params
        if p and self.info.param_defaults[0] is None and p[0] != "correction":
            x, q, dims, keep = args
            return x, dims, keep, (q,)
        x, dims, keep = args
        return x, dims, keep, ((kwargs[p[0]],) if p else ())

    def query(self, args, kwargs):
        x, dims, keep, _ = self._args(args, kwargs)
        return _ctensor._output_info(self.id, [_spec(x)], axis=None if dims is None else tuple(dims), keepdims=keep)

    def run(self, out, args, kwargs):
        x, dims, keep, params = self._args(args, kwargs)
        axis = None if dims is None else tuple(dims)
        p = self.info.params
        if params and p[0] != "correction":
            self.fn()(x, params[0], axis, keepdims=keep, out=out)
        elif params:
            self.fn()(x, axis=axis, keepdims=keep, out=out, **{p[0]: params[0]})
        else:
            self.fn()(x, axis=axis, keepdims=keep, out=out)

    def tensors(self, args):
        return [args[0]]


class _AlongAxis(_Kind):
    def schema(self):
        return "(Tensor self, int dim=-1) -> Tensor"

    def _dim(self, args, kwargs):
        return args[1]

    def query(self, args, kwargs):
        return _ctensor._output_info(self.id, [_spec(args[0])], axis=self._dim(args, kwargs))

    def run(self, out, args, kwargs):
        self.fn()(args[0], self._dim(args, kwargs), out=out)

    def tensors(self, args):
        return [args[0]]


class _Index(_Kind):
    def schema(self):
        names = _tensor_names(self.info)  # x, index[, src]
        src = ", Tensor src" if len(names) > 2 else ""
        return f"(Tensor self, int dim, Tensor index{src}{_float_params(self.info, kw_only=True)}) -> Tensor"

    def _parts(self, args, kwargs):
        x, dim, index = args[:3]
        src = args[3] if len(args) > 3 else None
        return x, dim, index, src, tuple(kwargs[n] for n in self.info.params)

    def query(self, args, kwargs):
        x, dim, index, src, _ = self._parts(args, kwargs)
        return _ctensor._output_info(self.id, [_spec(x), _spec(index)] + ([_spec(src)] if src is not None else []),
                                     axis=dim)

    def run(self, out, args, kwargs):
        x, dim, index, src, params = self._parts(args, kwargs)
        _ctensor._index(self.id, x, dim, index, src, params, out)

    def tensors(self, args):
        return [a for a in args if isinstance(a, torch.Tensor)]


class _Cast(_Kind):
    def schema(self):
        return "(Tensor self, ScalarType dtype) -> Tensor"

    def query(self, args, kwargs):
        return _ctensor._output_info(self.id, [_spec(args[0])], dtype=_dtname(args[1]))

    def run(self, out, args, kwargs):
        _ctensor.cast(args[0], _dtname(args[1]), out=out)

    def tensors(self, args):
        return [args[0]]


_KINDS = {"unary": _Unary, "unary_param": _Unary, "binary": _Binary, "ternary": _Ternary, "reduce": _Reduce,
          "along_axis": _AlongAxis, "index": _Index, "cast": _Cast}


_QUERIES: dict = {}  # (op, the query's arguments) -> the output's (shape, torch dtype): the shape query, cached


def _define_kind(info):
    k = _KINDS[info.kind](info)
    normalize = _normalizer(f"{_NS}::{info.name}")
    unary = info.kind in ("unary", "unary_param")
    binary = info.kind == "binary"

    def output(args, kwargs, like):
        if unary or binary:  # the hot paths: the operands' shapes and dtypes are the key
            key = (info.id, like.shape, like.dtype) if unary else (info.id, like.shape, like.dtype, args[1].shape,
                                                                   args[1].dtype)
            hit = _QUERIES.get(key)
            if hit is None:
                (shape, dt), = k.query(args, kwargs)
                if len(_QUERIES) > 4096:
                    _QUERIES.clear()
                hit = _QUERIES[key] = (tuple(shape), _torch_dtype(dt))
            return torch.empty(hit[0], dtype=hit[1], device=like.device)
        (shape, dt), = k.query(args, kwargs)
        return _empty(shape, dt, like)

    def impl(*args, **kwargs):
        args, kwargs = normalize(args, kwargs)
        ts = k.tensors(args)
        out = output(args, kwargs, ts[0])
        dev = _cuda(ts)
        if dev is None:
            k.run(out, args, kwargs)
        else:
            _on_stream(dev, k.run, out, args, kwargs)
        return out

    def fake(*args, **kwargs):
        args, kwargs = normalize(args, kwargs)
        (shape, dt), = k.query(args, kwargs)
        return _empty(shape, dt, k.tensors(args)[0])

    op = torch.library.custom_op(f"{_NS}::{info.name}", impl, mutates_args=(), schema=k.schema())
    op.register_fake(fake)
    _autograd_elementwise(op, k, info)
    return op


# ---------------------------------------------------------------------------
# derivatives of the elementwise kinds (ctensor._derivatives), in ctensor's operators
# ---------------------------------------------------------------------------

class _Ops:
    """ctensor._derivatives' namespace: torch.ops.ctensor's operators and four helpers."""

    def __getattr__(self, name):
        return getattr(torch.ops.ctensor, name)

    @staticmethod
    def const(like, v):
        return torch.full((), v, dtype=like.dtype, device=like.device)

    @staticmethod
    def flip(t, d):
        return torch.flip(t, (d,))

    count = staticmethod(_derivatives.count)

    @staticmethod
    def unreduce(g, shape, dims, keepdim):
        return (g if keepdim else g.reshape(_derivatives.kept_shape(shape, dims))).expand(shape)

    @staticmethod
    def sum_to(g, shape):
        shape = tuple(shape)
        if tuple(g.shape) == shape:
            return g
        dims = _derivatives.summed_dims(tuple(g.shape), shape)
        return torch.ops.ctensor.sum(g, dims, True).reshape(shape) if dims else g.reshape(shape)


ops = _Ops()


def _autograd_elementwise(op, k, info):
    rule = _derivatives.rule(info.kind, info.name)
    if rule is None:
        return
    kind = info.kind

    def setup(ctx, inputs, output, keyword_only_inputs=None):  # PyTorch passes the last only where there are some
        ctx.inputs, ctx.kwargs = inputs, keyword_only_inputs or {}
        ctx.save_for_backward(*[t for t in inputs if isinstance(t, torch.Tensor)], output)

    def backward(ctx, g):
        *ts, y = ctx.saved_tensors
        inputs = ctx.inputs
        if kind in ("unary", "unary_param"):
            grads = rule(ops, ts[0], y, g, *inputs[1:])
            return tuple(grads) + (None,) * (len(inputs) - 1)
        if kind == "binary":
            a, b = ts
            ga, gb = rule(ops, a, b, y, g)
            return ops.sum_to(ga, a.shape), ops.sum_to(gb, b.shape)
        if kind == "reduce":
            x, dims, keep, params = k._args(inputs, ctx.kwargs)
            gu = ops.unreduce(g, tuple(x.shape), dims, keep)
            yu = ops.unreduce(y, tuple(x.shape), dims, keep)
            (gx,) = rule(ops, x, yu, gu, dims, keep, *params)
            return (gx,) + (None,) * (len(inputs) - 1)
        if kind == "along_axis":
            dim = k._dim(inputs, ctx.kwargs)
            (gx,) = rule(ops, ts[0], y, g, dim)
            return gx, None
        raise AssertionError(kind)

    op.register_autograd(backward, setup_context=setup)


# ---------------------------------------------------------------------------
# NN ops: aten's schemas, ctensor's Python functions (which take torch.nn.functional's arguments)
# ---------------------------------------------------------------------------

def _aten_schema(name: str) -> str:
    """aten::<name>'s default overload's schema, without its name: "(Tensor input, ...) -> Tensor"."""
    s = str(next(s for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}") if not s.overload_name))
    return s[s.index("("):]


def _from(x):
    return None if x is None else torch.from_dlpack(x)


def _sp(t):
    return None if t is None else _nn.Spec(tuple(t.shape), _dtname(t.dtype))


def _fake_out(spec, like):
    return None if spec is None else _empty(spec.shape, spec.dtype, like)


def _nn_op(name, schema, call):
    """An NN operator: call(f, *args) runs the ctensor function on f's arguments (tensors, or their Specs).

    Both the kernel and the fake run it on Specs first: that translates the keywords and gives the row, its
    descriptor and the output shapes from the library's shape query. The fake allocates those outputs; the
    kernel allocates them with PyTorch and runs the row through ct_nn on the tensors, in place. (A function that
    is a composition of several ops, scaled_dot_product_attention's fallbacks, runs as itself, its results
    shared through DLPack.)"""
    normalize = _normalizer(f"{_NS}::{name}")

    def specs(args, kwargs):
        made = {}

        def f(t):
            s = _sp(t)
            made[id(s)] = (s, t)  # the Spec kept alive: its id stays its own through the dry run
            return s

        outs = call(f, *args, **kwargs)
        return outs, made

    plans: dict = {}  # the dry run's answer per call signature (see _plan_key): a row to run, or None

    def plan(args, kwargs):
        """(row id, the row's tensors as recipes over args, output Specs, descriptor, extent, tuple result), or
        None where the function is a composition of several ops on these arguments."""
        outs, made = specs(args, kwargs)
        outs_t = outs if isinstance(outs, tuple) else (outs,)
        row = next((o.call for o in outs_t if o is not None and o.call is not None), None)
        if row is None:
            return None
        where = {id(t): i for i, t in enumerate(args) if isinstance(t, torch.Tensor)}
        pos = {sid: where[id(t)] for sid, (_s, t) in made.items() if id(t) in where}
        recipes = [None if s is None else _recipe_of(s, pos) for s in row[4]]
        if any(s is not None and r is None for s, r in zip(row[4], recipes)):
            return None
        rname, desc, extent = row[0], row[1], row[2]
        return (_nn._OPS[rname], recipes, [None if o is None else (o.shape, o.dtype) for o in outs_t], desc,
                extent, isinstance(outs, tuple))

    def impl(*args, **kwargs):
        args, kwargs = normalize(args, kwargs)
        ts = [a for a in args if isinstance(a, torch.Tensor)]
        key = _plan_key(args, kwargs)
        try:
            p = plans[key]
        except KeyError:
            p = plan(args, kwargs)
            if len(plans) > 1024:
                plans.clear()
            plans[key] = p
        except TypeError:  # an argument that cannot be a key: plan this call alone
            p = plan(args, kwargs)
        dev = _cuda(ts)
        if p is None:  # not one row on these tensors: the composition itself
            got = call(lambda t: t, *args, **kwargs) if dev is None else _on_stream(dev, call, lambda t: t, *args,
                                                                                   **kwargs)
            return tuple(_from(o) for o in got) if isinstance(got, tuple) else _from(got)
        rid, recipes, out_specs, desc, extent, tup = p
        tensors = [None if r is None else _from_recipe(r, args) for r in recipes]
        results = [None if o is None else _empty(o[0], o[1], ts[0]) for o in out_specs]
        if dev is None:
            _ctensor._nn(rid, tensors, results, desc, extent)
        else:
            _on_stream(dev, _ctensor._nn, rid, tensors, results, desc, extent)
        return tuple(results) if tup else results[0]

    def fake(*args, **kwargs):
        args, kwargs = normalize(args, kwargs)
        ts = [a for a in args if isinstance(a, torch.Tensor)]
        outs = call(_sp, *args, **kwargs)
        if isinstance(outs, tuple):
            return tuple(_fake_out(o, ts[0]) for o in outs)
        return _fake_out(outs, ts[0])

    op = torch.library.custom_op(f"{_NS}::{name}", impl, mutates_args=(), schema=schema)
    op.register_fake(fake)
    return op


def _recipe_of(spec, pos):
    """How to get a row input from the call's arguments: an argument's position, ("mT", recipe) for a view the
    function made, or None when it is neither."""
    i = pos.get(id(spec))
    if i is not None:
        return i
    if spec.base is not None:
        r = _recipe_of(spec.base[0], pos)
        return None if r is None else ("mT", r)
    return None


def _from_recipe(r, args):
    return args[r] if isinstance(r, int) else _from_recipe(r[1], args).mT


def _plan_key(args, kwargs):
    """What the dry run depends on: each tensor's shape, dtype and device kind, and the other arguments."""
    key = []
    for a in args:
        if isinstance(a, torch.Tensor):
            key.append((a.shape, a.dtype, a.is_cuda))
        elif isinstance(a, list):
            key.append(tuple(a))
        else:
            key.append(a)
    if kwargs:
        key.append(tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in kwargs.items())))
    return tuple(key)


def _t(f, t):
    return None if t is None else f(t)


def _define_nn():
    C = torch.ops.ctensor
    defs = {}
    # forward ops under aten's schemas
    defs["matmul"] = _nn_op("matmul", _aten_schema("matmul"), lambda f, a, b: _nn.matmul(f(a), f(b)))
    defs["linear"] = _nn_op("linear", _aten_schema("linear"),
                            lambda f, x, w, b=None: _nn.linear(f(x), f(w), _t(f, b)))
    defs["conv2d"] = _nn_op("conv2d", _aten_schema("conv2d"),
                            lambda f, x, w, b=None, s=1, p=0, d=1, g=1: _nn.conv2d(f(x), f(w), _t(f, b), s, p, d, g))
    defs["max_pool2d_with_indices"] = _nn_op(
        "max_pool2d_with_indices", _aten_schema("max_pool2d_with_indices"),
        lambda f, x, k, s=(), p=0, d=1, c=False: _nn.max_pool2d(f(x), k, s, p, d, c, True))
    defs["avg_pool2d"] = _nn_op(
        "avg_pool2d", _aten_schema("avg_pool2d"),
        lambda f, x, k, s=(), p=0, c=False, cip=True, dv=None: _nn.avg_pool2d(f(x), k, s, p, c, cip, dv))
    defs["native_layer_norm"] = _nn_op(
        "native_layer_norm", _aten_schema("native_layer_norm"),
        lambda f, x, ns, w, b, eps: _nn.layer_norm(f(x), ns, _t(f, w), _t(f, b), eps, return_stats=True))
    defs["scaled_dot_product_attention"] = _nn_op(
        "scaled_dot_product_attention", _aten_schema("scaled_dot_product_attention"), _sdpa)
    defs["batch_norm_training"] = _nn_op(
        "batch_norm_training", "(Tensor input, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
        lambda f, x, w, b, eps: _nn.batch_norm(f(x), None, None, _t(f, w), _t(f, b), True, 0.0, eps,
                                               return_stats=True))
    defs["batch_norm"] = _nn_op(
        "batch_norm", "(Tensor input, Tensor running_mean, Tensor running_var, Tensor? weight, Tensor? bias, "
                      "float eps) -> Tensor",
        lambda f, x, m, v, w, b, eps: _nn.batch_norm(f(x), f(m), f(v), _t(f, w), _t(f, b), False, 0.0, eps))
    # their backward ops (the rows' own arguments, torch.nn.functional's names)
    conv = "SymInt[2] stride, SymInt[2] padding, SymInt[2] dilation, SymInt groups"
    defs["conv2d_backward_data"] = _nn_op(
        "conv2d_backward_data", f"(Tensor grad_output, Tensor weight, SymInt[] input_shape, {conv}) -> Tensor",
        lambda f, dy, w, xs, s, p, d, g: _nn.conv2d_backward_data(f(dy), f(w), xs, s, p, d, g))
    defs["conv2d_backward_weight"] = _nn_op(
        "conv2d_backward_weight",
        f"(Tensor input, Tensor grad_output, SymInt[] weight_shape, {conv}) -> (Tensor, Tensor)",
        lambda f, x, dy, ws, s, p, d, g: _nn.conv2d_backward_weight(f(x), f(dy), ws, s, p, d, g, bias=True))
    defs["max_pool2d_backward"] = _nn_op(
        "max_pool2d_backward", "(Tensor grad_output, Tensor indices, SymInt[] input_shape, int[2] kernel_size, "
                               "int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode) -> Tensor",
        lambda f, dy, i, xs, k, s, p, d, c: _nn.max_pool2d_backward(f(dy), f(i), xs, k, s, p, d, c))
    defs["avg_pool2d_backward"] = _nn_op(
        "avg_pool2d_backward", "(Tensor grad_output, SymInt[] input_shape, int[2] kernel_size, int[2] stride, "
                               "int[2] padding, bool ceil_mode, bool count_include_pad) -> Tensor",
        lambda f, dy, xs, k, s, p, c, cip: _nn.avg_pool2d_backward(f(dy), xs, k, s, p, c, cip))
    defs["layer_norm_backward"] = _nn_op(
        "layer_norm_backward", "(Tensor input, Tensor grad_output, Tensor mean, Tensor rstd, SymInt[] "
                               "normalized_shape, Tensor? weight) -> (Tensor, Tensor, Tensor)",
        lambda f, x, dy, m, r, ns, w: _nn.layer_norm_backward(f(x), f(dy), f(m), f(r), ns, _t(f, w)))
    defs["batch_norm_backward"] = _nn_op(
        "batch_norm_backward", "(Tensor input, Tensor grad_output, Tensor mean, Tensor invstd, Tensor? weight, "
                               "float eps) -> (Tensor, Tensor, Tensor)",
        lambda f, x, dy, m, i, w, eps: _nn.batch_norm_backward(f(x), f(dy), f(m), f(i), _t(f, w), eps))
    defs["scaled_dot_product_attention_backward"] = _nn_op(
        "scaled_dot_product_attention_backward",
        "(Tensor grad_output, Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, bool is_causal=False, "
        "float? scale=None, bool enable_gqa=False) -> (Tensor, Tensor, Tensor)", _sdpa_backward)

    # autograd: the backward ops above
    def save_all(ctx, inputs, output):
        ctx.args = inputs  # the inputs (no cycle: they do not refer to this node)
        # the outputs only through save_for_backward: an output kept as an attribute refers back to this node
        # through its grad_fn, a reference cycle that leaves every tensor of the step to the garbage collector
        ctx.save_for_backward(*(output if isinstance(output, tuple) else (output,)))

    def mm_bw(ctx, g):
        a, b = ctx.args
        ga = C.matmul(g, b.mT) if a.requires_grad else None
        gb = C.matmul(a.mT, g) if b.requires_grad else None
        return (None if ga is None else ops.sum_to(ga, a.shape)), (None if gb is None else ops.sum_to(gb, b.shape))

    def linear_bw(ctx, g):
        x, w, b = (list(ctx.args) + [None])[:3]
        gx = C.matmul(g, w) if x.requires_grad else None
        g2, x2 = g.reshape(-1, g.shape[-1]), x.reshape(-1, x.shape[-1])
        gw = C.matmul(g2.mT, x2) if w.requires_grad else None
        gb = C.sum(g2, [0], False) if b is not None and b.requires_grad else None
        return gx, gw, gb

    def conv_bw(ctx, g):
        x, w, b, s, p, d, grp = ctx.args  # PyTorch fills in the defaults before setup_context
        gx = C.conv2d_backward_data(g, w, list(x.shape), s, p, d, grp) if x.requires_grad else None
        gw, gb = C.conv2d_backward_weight(x, g, list(w.shape), s, p, d, grp)
        return gx, gw, (gb if b is not None else None), None, None, None, None

    def maxpool_bw(ctx, g, _gi):
        x, k, s, p, d, c = ctx.args
        _, idx = ctx.saved_tensors
        return C.max_pool2d_backward(g, idx, list(x.shape), k, s, p, d, c), None, None, None, None, None

    def avgpool_bw(ctx, g):
        x, k, s, p, c, cip, _dv = ctx.args
        return C.avg_pool2d_backward(g, list(x.shape), k, s, p, c, cip), None, None, None, None, None, None

    def ln_bw(ctx, g, _gm, _gr):
        x, ns, w, b, _eps = ctx.args
        _, mean, rstd = ctx.saved_tensors
        gx, gw, gb = C.layer_norm_backward(x, g, mean, rstd, ns, w)
        return gx, None, gw, (gb if b is not None else None), None

    def bn_bw(ctx, g, _gm, _gi):
        x, w, b, eps = ctx.args
        _, mean, invstd = ctx.saved_tensors
        gx, gw, gb = C.batch_norm_backward(x, g, mean, invstd, w, eps)
        return gx, gw, (gb if b is not None else None), None

    def sdpa_bw(ctx, g):
        q, k, v, mask, _p, causal = ctx.args
        kw = ctx.kwargs
        dq, dk, dv = C.scaled_dot_product_attention_backward(g, q, k, v, mask, bool(causal), kw.get("scale"),
                                                             kw.get("enable_gqa", False))
        return dq, dk, dv, None, None, None

    def save_kw(ctx, inputs, keyword_only_inputs, output):
        ctx.args, ctx.kwargs = inputs, keyword_only_inputs

    for name, bw in (("matmul", mm_bw), ("linear", linear_bw), ("conv2d", conv_bw),
                     ("max_pool2d_with_indices", maxpool_bw), ("avg_pool2d", avgpool_bw),
                     ("native_layer_norm", ln_bw), ("batch_norm_training", bn_bw)):
        defs[name].register_autograd(bw, setup_context=save_all)
    defs["scaled_dot_product_attention"].register_autograd(sdpa_bw, setup_context=save_kw)
    return defs


def _sdpa(f, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, *, scale=None, enable_gqa=False):
    qs = f(q)
    if isinstance(qs, _nn.Spec):  # the dry run: the fused row's shape query, grouped key/value heads as the query's
        ks, vs = _sp(k), _sp(v)
        if enable_gqa and qs.ndim >= 3 and ks.ndim >= 3:
            ks = _nn.Spec(ks.shape[:-3] + qs.shape[-3:-2] + ks.shape[-2:], ks.dtype)
            vs = _nn.Spec(vs.shape[:-3] + qs.shape[-3:-2] + vs.shape[-2:], vs.dtype)
        mask = None if attn_mask is None else _sp(attn_mask)
        (y,) = _nn._run("scaled_dot_product_attention", [qs, ks, vs, mask], None,
                        {"causal": 1 if is_causal else 0, "scale": 0.0 if scale is None else scale})
        return _nn.Spec(y.shape, qs.dtype)  # no row to run: ctensor's function picks the fused op or composes
    return _nn_compose.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _sdpa_backward(f, g, q, k, v, attn_mask=None, is_causal=False, scale=None, enable_gqa=False):
    if isinstance(f(q), _nn.Spec):
        return tuple(_sp(t) for t in (q, k, v))
    return _nn_compose.scaled_dot_product_attention_backward(g, q, k, v, attn_mask, is_causal, scale, enable_gqa)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-5):
    """torch.nn.functional.batch_norm on ctensor's operators: training mode runs ctensor::batch_norm_training
    (differentiable) and updates running_mean / running_var in place as PyTorch does (running_var with the
    unbiased variance); inference runs ctensor::batch_norm."""
    C = torch.ops.ctensor
    if not training:
        return C.batch_norm(input, running_mean, running_var, weight, bias, eps)
    y, mean, invstd = C.batch_norm_training(input, weight, bias, eps)
    n = input.numel() // max(1, input.shape[1])
    if n > 0:
        with torch.no_grad():
            if running_mean is not None:
                running_mean.lerp_(mean, momentum)
            if running_var is not None:
                var = (1.0 / (invstd * invstd) - eps) * (n / max(1, n - 1))
                running_var.lerp_(var, momentum)
    return y


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """torch.nn.functional.max_pool2d on ctensor::max_pool2d_with_indices (its gradient takes the indices)."""
    return torch.ops.ctensor.max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)[0]


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """torch.nn.functional.layer_norm on ctensor::native_layer_norm."""
    return torch.ops.ctensor.native_layer_norm(input, list(normalized_shape), weight, bias, eps)[0]


# ---------------------------------------------------------------------------
# registration
# ---------------------------------------------------------------------------

def register() -> list[str]:
    """Register an operator for every op of the registry that has none yet (the built-ins at import, then the
    ops of plugin libraries loaded since); returns the names registered now. An op of a kind that has no
    generic operator (a plugin's NN op) is skipped: ``registered()`` lists what exists."""
    new = []
    for info in _ct.ops():
        if info.id in _registered_ids or info.kind not in _KINDS:
            continue
        if info.name in _registered:  # a plugin op that came back under an id of its own: the kernel looks it up
            _registered_ids.add(info.id)
            continue
        _registered[info.name] = _define_kind(info)
        _registered_ids.add(info.id)
        new.append(info.name)
    return new


def registered() -> list[str]:
    """The names of the operators in torch.ops.ctensor."""
    return sorted(_registered)


_ctensor._set_leak_warnings(False)  # torch.library keeps our kernels until exit (see module.cpp)
_registered.update(_define_nn())
register()
