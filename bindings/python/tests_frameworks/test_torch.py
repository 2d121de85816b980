"""ctensor.torch: every registry op as a PyTorch operator (torch.ops.ctensor.<name>).

- every op of the registry is registered, the NN ops under aten's schemas;
- torch.library.opcheck passes for every operator on representative inputs (schema, fake tensors, autograd
  registration, AOT dispatch with dynamic shapes), with inputs that require grad where the op has a gradient;
- the gradients are right: gradcheck in float64 for every op with a derivative and for the NN ops;
- torch.compile(fullgraph=True) traces through them;
- a small CNN and a small transformer block built from ctensor operators train for a few steps and match the
  same models on PyTorch's own operators (loss and gradients), eager and compiled;
- a plugin's op becomes an operator after ctensor.torch.register().
"""
import os

import numpy as np
import pytest
import torch

import ctensor
import ctensor.torch as ctt

C = torch.ops.ctensor
# compile afresh: PyTorch's on-disk caches key a graph by its trace, not by the Python of a custom op's autograd
# formula, and would serve a graph traced with an older derivative rule
torch._inductor.config.fx_graph_cache = False
torch._functorch.config.enable_autograd_cache = False
KINDS = ("unary", "unary_param", "binary", "ternary", "reduce", "along_axis", "index", "cast")
OPS = [o for o in ctensor.ops() if o.kind in KINDS and o.library is None]
NN = ["matmul", "linear", "conv2d", "max_pool2d_with_indices", "avg_pool2d", "native_layer_norm",
      "scaled_dot_product_attention", "batch_norm", "batch_norm_training", "conv2d_backward_data",
      "conv2d_backward_weight", "max_pool2d_backward", "avg_pool2d_backward", "layer_norm_backward",
      "batch_norm_backward", "scaled_dot_product_attention_backward"]

# inputs inside each op's domain (the default: uniform in (0.1, 0.9))
DOMAIN = {"acosh": (1.2, 3.0), "logit": (0.1, 0.9), "erfinv": (-0.9, 0.9), "atanh": (-0.9, 0.9),
          "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "mvlgamma": (2.0, 4.0), "polygamma": (0.5, 3.0),
          "lgamma": (0.5, 3.0), "digamma": (0.5, 3.0), "zeta": (1.5, 3.0), "ndtri": (0.1, 0.9)}
PARAMS = {"clamp": (0.2, 0.7), "pow_scalar": (1.5,), "add_scalar": (0.5,), "mul_scalar": (2.0,),
          "threshold": (0.5, 0.0), "polygamma": (1.0,), "mvlgamma": (1.0,), "quantile": (0.3,),
          "nanquantile": (0.3,), "kthvalue": (2.0,), "round_decimals": (1.0,)}


def _dtype(info):
    for dt in ("float32", "int32", "bool"):
        if info.supported(dt):
            return getattr(torch, dt)
    pytest.skip(f"{info.name} takes none of float32, int32, bool")


def _make(shape, dt, lo=0.1, hi=0.9, seed=0, requires_grad=False):
    g = torch.Generator().manual_seed(seed)
    if dt.is_floating_point:
        t = torch.rand(shape, generator=g, dtype=torch.float64) * (hi - lo) + lo
        return t.to(dt).requires_grad_(requires_grad)
    if dt == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    return torch.randint(1, 7, shape, generator=g, dtype=dt)


def _has_grad(info):
    from ctensor import _derivatives
    return _derivatives.rule(info.kind, info.name) is not None


def _args(info, dt=None, requires_grad=False, shape=(3, 4)):
    """Representative arguments of the operator of row info, in its schema's order."""
    dt = dt or _dtype(info)
    lo, hi = DOMAIN.get(info.name, (0.1, 0.9))
    rg = requires_grad and dt.is_floating_point
    x = _make(shape, dt, lo, hi, 1, rg)
    if info.kind in ("unary", "unary_param"):
        params = PARAMS.get(info.name, tuple(1.0 if d is None else d for d in info.param_defaults))
        return (x,) + tuple(params), {}
    if info.kind == "binary":
        return (x, _make(shape[-1:], dt, lo, hi, 2, rg)), {}  # broadcast
    if info.kind == "ternary":
        if info.name == "where":
            return (_make(shape, torch.bool, seed=3), x, _make(shape, dt, seed=4, requires_grad=rg)), {}
        return (x, _make(shape, dt, lo, hi, 3, rg), _make(shape, dt, lo + 0.5, hi + 0.5, 4, rg)), {}
    if info.kind == "reduce":
        if info.params and info.param_defaults[0] is None and info.params[0] != "correction":
            return (x, PARAMS[info.name][0], [1], False), {}
        return (x, [1], True), {}
    if info.kind == "along_axis":
        return (x, 1), {}
    if info.kind == "index":
        idx = torch.tensor([[0, 2, 1, 0], [1, 1, 0, 2], [2, 0, 2, 1]], dtype=torch.int64)
        if info.name == "take":
            return (x, 1, torch.tensor([3, 0, 1], dtype=torch.int64)), {}
        if info.name == "index_add":
            return (x, 0, torch.tensor([2, 0], dtype=torch.int64), _make((2, 4), dt, seed=5)), {}
        if info.name == "gather":
            return (x, 0, idx), {}
        return (x, 0, torch.tensor([[0, 2, 1, 0], [1, 0, 2, 1]], dtype=torch.int64), _make((2, 4), dt, seed=5)), {}
    if info.kind == "cast":
        return (x, torch.float64), {}
    raise AssertionError(info.kind)


def test_every_op_of_the_registry_is_an_operator():
    have = set(ctt.registered())
    missing = [o.name for o in OPS if o.name not in have]
    assert not missing, missing
    for name in [o.name for o in OPS] + NN:
        assert hasattr(C, name), name


def test_nn_operators_take_aten_schemas():
    for name in ("conv2d", "linear", "matmul", "avg_pool2d", "max_pool2d_with_indices", "native_layer_norm",
                 "scaled_dot_product_attention"):
        ours = str(getattr(C, name).default._schema).split("(", 1)[1]
        aten = next(str(s) for s in torch._C._jit_get_schemas_for_operator(f"aten::{name}") if not s.overload_name)
        assert ours == aten.split("(", 1)[1], (ours, aten)
    # the elementwise kinds follow aten's argument names
    assert str(C.exp.default._schema) == "ctensor::exp(Tensor self) -> Tensor"
    assert str(C.add.default._schema) == "ctensor::add(Tensor self, Tensor other) -> Tensor"


# where ctensor's row names its tensors otherwise than aten (or the op is another contract: the backward rows take
# shapes where aten takes the forward's input; batch_norm is inference only)
ATEN_DIFFERS = {"addcdiv", "addcmul", "avg_pool2d_backward", "batch_norm", "batch_norm_backward", "heaviside",
                "index_add", "lerp", "max_pool2d_backward", "pow", "prelu", "where"}


def test_tensor_arguments_are_named_as_in_aten():
    same = []
    for name in ctt.registered():
        aten = torch._C._jit_get_schemas_for_operator(f"aten::{name}")
        if not aten:
            continue
        ours = [a.name for a in getattr(C, name).default._schema.arguments if str(a.type).startswith("Tensor")]
        if any([a.name for a in s.arguments if str(a.type).startswith("Tensor")] == ours for s in aten):
            same.append(name)
        else:
            assert name in ATEN_DIFFERS, (name, str(getattr(C, name).default._schema), str(aten[0]))
    assert len(same) > 140, len(same)


@pytest.mark.parametrize("name", [o.name for o in OPS])
def test_opcheck(name):
    info = next(o for o in OPS if o.name == name)
    args, kw = _args(info, requires_grad=_has_grad(info))
    torch.library.opcheck(getattr(C, name), args, kw)


@pytest.mark.parametrize("name", [o.name for o in OPS])
def test_operator_equals_the_ctensor_function(name):
    """The operator runs the op: same values as ctensor's own function, bit for bit."""
    info = next(o for o in OPS if o.name == name)
    args, _ = _args(info)
    got = getattr(C, name)(*args)
    ref = torch.from_dlpack(_reference(info, args))
    assert got.dtype == ref.dtype and got.shape == ref.shape
    assert torch.equal(got.nan_to_num(0.5), ref.nan_to_num(0.5)) and torch.equal(got.isnan(), ref.isnan())


def _reference(info, args):
    f = getattr(ctensor.ops, info.name)
    if info.kind in ("unary", "unary_param", "binary", "ternary"):
        return f(*args)
    if info.kind == "reduce":
        if len(args) == 4:
            return f(args[0], args[1], tuple(args[2]), keepdims=args[3])
        return f(args[0], axis=tuple(args[1]), keepdims=args[2])
    if info.kind == "along_axis":
        return f(args[0], args[1])
    if info.kind == "index":
        x, dim, index, *src = args
        return ctensor._ctensor._index(info.id, x, dim, index, src[0] if src else None,
                                       tuple(d for d in info.param_defaults if d is not None), None)
    return ctensor.cast(args[0], "float64")


GRAD_OPS = [o.name for o in OPS if _has_grad(o)]


@pytest.mark.parametrize("name", GRAD_OPS)
def test_gradcheck(name):
    """Each derivative rule against finite differences, in float64."""
    info = next(o for o in OPS if o.name == name)
    args, _ = _args(info, dt=torch.float64, requires_grad=True)
    if name in ("floor", "ceil", "round", "trunc", "sign", "round_decimals"):  # zero almost everywhere
        args = (args[0].detach().add(0.013).requires_grad_(True),) + args[1:]
    assert torch.autograd.gradcheck(lambda *a: getattr(C, name)(*a), args, eps=1e-6, atol=1e-5)


def test_gradient_graph_is_ctensor_operators():
    x = _make((5,), torch.float64, requires_grad=True)
    y = C.sum(C.tanh(x), None, False)
    (g,) = torch.autograd.grad(y, x, create_graph=True)
    assert torch.allclose(g, 1 - torch.tanh(x) ** 2)
    (gg,) = torch.autograd.grad(C.sum(g, None, False), x)  # second derivative through ctensor's ops
    assert torch.allclose(gg, -2 * torch.tanh(x) * (1 - torch.tanh(x) ** 2))


def _f(shape, seed):
    return _make(shape, torch.float32, -1.0, 1.0, seed, True)


def _same_grads(ours, theirs, args, rtol=1e-4, atol=1e-5):
    """ours(*args) and theirs(*args) (PyTorch's own ops) agree in value and in every gradient (a random
    cotangent). The NN ops run in float32 (oneDNN's), so this stands in for float64 gradcheck."""
    y1, y2 = ours(*args), theirs(*args)
    torch.testing.assert_close(y1, y2, rtol=rtol, atol=atol)
    ct = torch.randn(y1.shape, generator=torch.Generator().manual_seed(9))
    g1 = torch.autograd.grad(y1, args, ct)
    g2 = torch.autograd.grad(y2, args, ct)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b, rtol=rtol, atol=atol)


def test_nn_gradients_match_pytorch():
    F = torch.nn.functional
    x, w, b = _f((2, 3, 7, 6), 1), _f((4, 3, 3, 3), 2), _f((4,), 3)
    _same_grads(lambda x, w, b: C.conv2d(x, w, b, [2, 1], [1, 0], [1, 1], 1),
                lambda x, w, b: F.conv2d(x, w, b, (2, 1), (1, 0)), (x, w, b))
    xg, wg = _f((2, 4, 5, 5), 4), _f((4, 2, 3, 3), 5)
    _same_grads(lambda x, w: C.conv2d(x, w, None, [1, 1], [1, 1], [2, 2], 2),
                lambda x, w: F.conv2d(x, w, None, 1, 1, 2, 2), (xg, wg))
    a, m = _f((2, 3, 4), 6), _f((4, 5), 7)
    _same_grads(C.matmul, torch.matmul, (a, m))
    li, lw, lb = _f((3, 2, 4), 8), _f((5, 4), 9), _f((5,), 10)
    _same_grads(C.linear, F.linear, (li, lw, lb))
    _same_grads(lambda x: ctt.max_pool2d(x, [2, 2], [2, 2], [0, 0], [1, 1], False), lambda x: F.max_pool2d(x, 2), (x,))
    _same_grads(lambda x: ctt.max_pool2d(x, [3, 3], [2, 2], [1, 1], [1, 1], True),
                lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (x,))
    _same_grads(lambda x: C.avg_pool2d(x, [3, 3], [2, 2], [1, 1], False, True, None),
                lambda x: F.avg_pool2d(x, 3, 2, 1), (x,))
    lx, lnw, lnb = _f((3, 4, 6), 11), _f((6,), 12), _f((6,), 13)
    _same_grads(lambda x, w, b: ctt.layer_norm(x, [6], w, b), lambda x, w, b: F.layer_norm(x, [6], w, b),
                (lx, lnw, lnb))
    bx, bw, bb = _f((4, 3, 2, 2), 14), _f((3,), 15), _f((3,), 16)
    _same_grads(lambda x, w, b: ctt.batch_norm(x, None, None, w, b, training=True),
                lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), (bx, bw, bb))
    q, k, v = _f((2, 3, 4, 8), 17), _f((2, 3, 5, 8), 18), _f((2, 3, 5, 6), 19)
    _same_grads(C.scaled_dot_product_attention, F.scaled_dot_product_attention, (q, k, v))
    _same_grads(lambda q, k, v: C.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3),
                lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=0.3), (q, k, v))


def test_nn_opcheck():
    f = torch.float32
    x, w, b = _make((2, 3, 8, 8), f, requires_grad=True), _make((4, 3, 3, 3), f, seed=2, requires_grad=True), \
        _make((4,), f, seed=3, requires_grad=True)
    cases = [
        (C.conv2d, (x, w, b, [1, 1], [1, 1], [1, 1], 1)),
        (C.matmul, (_make((2, 3, 4), f, requires_grad=True), _make((4, 5), f, seed=2, requires_grad=True))),
        (C.linear, (_make((3, 4), f, requires_grad=True), _make((5, 4), f, seed=2, requires_grad=True),
                    _make((5,), f, seed=3, requires_grad=True))),
        (C.max_pool2d_with_indices, (x, [2, 2], [2, 2], [0, 0], [1, 1], False)),
        (C.avg_pool2d, (x, [2, 2], [2, 2], [0, 0], False, True, None)),
        (C.native_layer_norm, (_make((3, 4, 6), f, requires_grad=True), [6], _make((6,), f, requires_grad=True),
                               _make((6,), f, requires_grad=True), 1e-5)),
        (C.batch_norm_training, (_make((4, 3, 2, 2), f, requires_grad=True), _make((3,), f, requires_grad=True),
                                 _make((3,), f, requires_grad=True), 1e-5)),
        (C.batch_norm, (_make((4, 3, 2, 2), f), _make((3,), f), _make((3,), f, 0.5, 1.0), None, None, 1e-5)),
        (C.scaled_dot_product_attention, (_make((2, 2, 4, 8), f, requires_grad=True),
                                          _make((2, 2, 5, 8), f, seed=2, requires_grad=True),
                                          _make((2, 2, 5, 8), f, seed=3, requires_grad=True))),
    ]
    for op, args in cases:
        torch.library.opcheck(op, args)


def test_compile_fullgraph_traces_through_the_operators():
    def f(x, w):
        h = C.relu(C.conv2d(x, w, None, [1, 1], [1, 1], [1, 1], 1))
        return C.sum(C.softmax(C.mul(h, h), -1), [1, 2, 3], False)

    x, w = _make((2, 3, 6, 6), torch.float32), _make((4, 3, 3, 3), torch.float32, seed=2)
    ref = f(x, w)
    got = torch.compile(f, fullgraph=True, dynamic=False, backend="aot_eager")(x, w)
    torch.testing.assert_close(got, ref)


# ---- training: a small CNN and a transformer block, ctensor's operators vs PyTorch's ------------------------

def _cnn_params(seed=0):
    g = torch.Generator().manual_seed(seed)
    p = {"w1": torch.randn(8, 3, 3, 3, generator=g) * 0.3, "b1": torch.randn(8, generator=g) * 0.1,
         "w2": torch.randn(16, 8, 3, 3, generator=g) * 0.2, "b2": torch.randn(16, generator=g) * 0.1,
         "wf": torch.randn(10, 16 * 4 * 4, generator=g) * 0.05, "bf": torch.randn(10, generator=g) * 0.1,
         "g1": torch.ones(8), "h1": torch.zeros(8)}
    return {k: v.requires_grad_(True) for k, v in p.items()}


def cnn_ctensor(p, x, onehot):
    h = C.conv2d(x, p["w1"], p["b1"], [1, 1], [1, 1], [1, 1], 1)
    h = ctt.batch_norm(h, None, None, p["g1"], p["h1"], training=True)
    h = ctt.max_pool2d(C.relu(h), [2, 2], [2, 2], [0, 0], [1, 1], False)
    h = C.relu(C.conv2d(h, p["w2"], p["b2"], [1, 1], [1, 1], [1, 1], 1))
    h = C.avg_pool2d(h, [2, 2], [2, 2], [0, 0], False, True, None)
    logits = C.linear(h.reshape(h.shape[0], -1), p["wf"], p["bf"])
    return C.neg(C.mean(C.sum(C.mul(C.log_softmax(logits, 1), onehot), [1], False), None, False))


def cnn_torch(p, x, onehot):
    F = torch.nn.functional
    h = F.conv2d(x, p["w1"], p["b1"], 1, 1)
    h = F.batch_norm(h, None, None, p["g1"], p["h1"], training=True)
    h = F.max_pool2d(F.relu(h), 2, 2)
    h = F.relu(F.conv2d(h, p["w2"], p["b2"], 1, 1))
    h = F.avg_pool2d(h, 2, 2)
    logits = F.linear(h.reshape(h.shape[0], -1), p["wf"], p["bf"])
    return -(F.log_softmax(logits, 1) * onehot).sum(1).mean()


def _train(model, params, batches, steps=3, lr=0.02):
    losses, grads = [], None
    for i in range(steps):
        x, y = batches[i % len(batches)]
        loss = model(params, x, y)
        gs = torch.autograd.grad(loss, list(params.values()))
        grads = grads or gs
        with torch.no_grad():
            for t, g in zip(params.values(), gs):
                t -= lr * g
        losses.append(loss.item())
    return losses, grads


def _batches(seed=0, n=8):
    g = torch.Generator().manual_seed(seed)
    out = []
    for _ in range(2):
        x = torch.randn(n, 3, 16, 16, generator=g)
        y = torch.nn.functional.one_hot(torch.randint(0, 10, (n,), generator=g), 10).float()
        out.append((x, y))
    return out


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_cnn_trains_like_pytorch(compiled):
    model = torch.compile(cnn_ctensor, fullgraph=True, backend="aot_eager") if compiled else cnn_ctensor
    lc, gc = _train(model, _cnn_params(), _batches()[:1])
    lt, gt = _train(cnn_torch, _cnn_params(), _batches()[:1])
    np.testing.assert_allclose(lc, lt, rtol=2e-4, atol=2e-5)
    for a, b in zip(gc, gt):
        torch.testing.assert_close(a, b, rtol=2e-3, atol=2e-5)
    assert lc[-1] < lc[0]


def _block_params(d=32, heads=4, seed=1):
    g = torch.Generator().manual_seed(seed)
    p = {"ln1w": torch.ones(d), "ln1b": torch.zeros(d), "wqkv": torch.randn(3 * d, d, generator=g) * d ** -0.5,
         "bqkv": torch.zeros(3 * d), "wo": torch.randn(d, d, generator=g) * d ** -0.5, "bo": torch.zeros(d),
         "ln2w": torch.ones(d), "ln2b": torch.zeros(d), "w1": torch.randn(4 * d, d, generator=g) * d ** -0.5,
         "b1": torch.zeros(4 * d), "w2": torch.randn(d, 4 * d, generator=g) * (4 * d) ** -0.5, "b2": torch.zeros(d)}
    return {k: v.requires_grad_(True) for k, v in p.items()}


def block(ops, p, x, target, heads=4):
    ln, lin, attn, gelu, add, loss = ops
    b, t, d = x.shape
    h = ln(x, [d], p["ln1w"], p["ln1b"])
    qkv = lin(h, p["wqkv"], p["bqkv"]).reshape(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
    a = attn(qkv[0], qkv[1], qkv[2]).permute(0, 2, 1, 3).reshape(b, t, d)
    x = add(x, lin(a, p["wo"], p["bo"]))
    h = ln(x, [d], p["ln2w"], p["ln2b"])
    x = add(x, lin(gelu(lin(h, p["w1"], p["b1"])), p["w2"], p["b2"]))
    return loss(x, target)


def block_ctensor(p, x, target):
    ops = (lambda x, ns, w, b: ctt.layer_norm(x, ns, w, b), C.linear,
           lambda q, k, v: C.scaled_dot_product_attention(q, k, v, is_causal=True), C.gelu, C.add,
           lambda x, t: C.mean(C.square(C.sub(x, t)), None, False))
    return block(ops, p, x, target)


def block_torch(p, x, target):
    F = torch.nn.functional
    ops = (F.layer_norm, F.linear, lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), F.gelu,
           torch.add, lambda x, t: ((x - t) ** 2).mean())
    return block(ops, p, x, target)


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_transformer_block_trains_like_pytorch(compiled):
    g = torch.Generator().manual_seed(3)
    data = [(torch.randn(2, 16, 32, generator=g), torch.randn(2, 16, 32, generator=g)) for _ in range(2)]
    model = torch.compile(block_ctensor, fullgraph=True, backend="aot_eager") if compiled else block_ctensor
    lc, gc = _train(model, _block_params(), data, lr=0.05)
    lt, gt = _train(block_torch, _block_params(), data, lr=0.05)
    np.testing.assert_allclose(lc, lt, rtol=2e-4, atol=1e-5)
    for a, b in zip(gc, gt):
        torch.testing.assert_close(a, b, rtol=2e-3, atol=2e-5)
    assert lc[-1] < lc[0]


def test_training_steps_leave_no_reference_cycles():
    """Every tensor of a step is freed when the step's graph goes, by reference counting: an output kept on the
    autograd context as an attribute (not through save_for_backward) would refer back to its own node, and each
    step's activations would wait for the garbage collector."""
    import gc as collector
    g = torch.Generator().manual_seed(3)
    cnn = _cnn_params(), _batches()[:1]
    blk = _block_params(), [(torch.randn(2, 16, 32, generator=g), torch.randn(2, 16, 32, generator=g))]
    for model, (params, data) in ((cnn_ctensor, cnn), (block_ctensor, blk)):
        _train(model, params, data, steps=1)  # first calls: caches that live on
        collector.collect()
        collector.disable()
        collector.set_debug(collector.DEBUG_SAVEALL)
        try:
            _train(model, params, data, steps=2)
            collector.collect()
            cyclic = [o for o in collector.garbage if isinstance(o, torch.Tensor)]
        finally:
            collector.set_debug(0)
            collector.garbage.clear()
            collector.enable()
        assert not cyclic, f"{model.__name__}: {len(cyclic)} tensors freed only by the garbage collector"


def test_inductor_compiles_the_cnn_step():
    """The default backend (inductor) too: the ctensor operators stay opaque calls in its generated code."""
    p = _cnn_params()
    x, y = _batches()[0]
    ref = torch.autograd.grad(cnn_ctensor(p, x, y), list(p.values()))
    got = torch.autograd.grad(torch.compile(cnn_ctensor, fullgraph=True)(p, x, y), list(p.values()))
    for a, b in zip(got, ref):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-6)


def test_errors_are_the_librarys():
    with pytest.raises(ValueError, match="broadcast|shape"):
        C.add(torch.ones(3), torch.ones(4))
    with pytest.raises(NotImplementedError, match="sqrt is not defined for int32"):
        C.sqrt(torch.ones(3, dtype=torch.int32))
    with pytest.raises(RuntimeError, match="Autograd|autograd|differentiable|derivative"):
        x = torch.rand(3, requires_grad=True)
        C.sum(C.bessel_j0(x), None, False).backward()


DOC_PLUGIN = os.environ.get("CT_DOC_PLUGIN", "")


@pytest.mark.skipif(not os.path.exists(DOC_PLUGIN), reason="CT_DOC_PLUGIN names no built plugin (ctest sets it)")
def test_a_plugins_op_becomes_an_operator():
    with ctensor.load_library(DOC_PLUGIN):
        assert "isru" in ctt.register()
        x = torch.linspace(-2, 2, 9)
        torch.testing.assert_close(C.isru(x), x / torch.sqrt(1 + x * x))
        torch.library.opcheck(C.isru, (x,))
    assert "isru" not in ctensor.ops.__dict__  # unloaded with its library
