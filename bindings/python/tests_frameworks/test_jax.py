"""ctensor.jax: ctensor's ops inside jax.jit through XLA FFI handlers (one per op kind).

- every elementwise, binary, reduce and along-axis op of the registry runs under jax.jit and gives exactly what
  ctensor's own function gives (the same kernel, through the handler of its kind);
- results match jax.numpy / jax.nn for a set of ops;
- vmap works (batch as leading dims for the elementwise kinds, per element for index and NN ops);
- gradients: the NN ops with ctensor's backward ops, the elementwise ops with their derivative rules, checked
  against jax.grad of the jax.numpy equivalents;
- the library's errors reach the caller as exceptions.
"""
import numpy as np
import pytest

import jax
import jax.numpy as jnp

import ctensor
import ctensor.jax as cj

jax.config.update("jax_enable_x64", True)

KINDS = ("unary", "unary_param", "binary", "reduce", "along_axis")
OPS = [o for o in ctensor.ops() if o.kind in KINDS and o.library is None]
DOMAIN = {"acosh": (1.2, 3.0), "mvlgamma": (2.0, 4.0), "polygamma": (0.5, 3.0), "zeta": (1.5, 3.0)}
PARAMS = {"clamp": (0.2, 0.7), "pow_scalar": (1.5,), "threshold": (0.5, 0.0), "polygamma": (1.0,),
          "mvlgamma": (1.0,), "quantile": (0.3,), "nanquantile": (0.3,), "kthvalue": (2.0,)}


def _x(shape, dt, lo=0.1, hi=0.9, seed=0):
    r = np.random.default_rng(seed)
    if np.dtype(dt).kind == "f":
        return (r.random(shape) * (hi - lo) + lo).astype(dt)
    if np.dtype(dt).kind == "b":
        return r.random(shape) > 0.5
    return r.integers(1, 7, shape).astype(dt)


def _dtype(info):
    for dt in ("float32", "int32", "bool"):
        if info.supported(dt):
            return dt
    pytest.skip(f"{info.name}: none of float32, int32, bool")


def _call(info, f, x, y):
    if info.kind == "unary":
        return f(x)
    if info.kind == "unary_param":
        return f(x, *PARAMS.get(info.name, tuple(1.0 if d is None else d for d in info.param_defaults)))
    if info.kind == "binary":
        return f(x, y)
    if info.kind == "reduce":
        if info.params and info.param_defaults[0] is None and info.params[0] != "correction":
            return f(x, PARAMS[info.name][0], 1)
        return f(x, axis=1, keepdims=True)
    return f(x, 1)


@pytest.mark.parametrize("name", [o.name for o in OPS])
def test_jit_runs_the_same_kernel(name):
    info = next(o for o in OPS if o.name == name)
    dt = _dtype(info)
    lo, hi = DOMAIN.get(name, (0.1, 0.9))
    x, y = _x((3, 4), dt, lo, hi, 1), _x((4,), dt, lo, hi, 2)
    got = np.asarray(jax.jit(lambda a, b: _call(info, getattr(cj, name), a, b))(x, y))
    ref = np.asarray(_call(info, getattr(ctensor.ops, name), x, y))
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_matches_jax_numpy():
    x = _x((5, 7), "float32", -2, 2)
    y = _x((7,), "float32", 0.5, 2, seed=3)
    f = jax.jit(lambda x, y: (cj.exp(x), cj.add(x, y), cj.sum(x, axis=0), cj.softmax(x, axis=-1),
                              cj.maximum(x, y), cj.where(x > 0, x, 0.0), cj.astype(x, jnp.float16),
                              cj.mean(x, axis=(0, 1)), cj.tanh(x), cj.logsumexp(x, axis=1, keepdims=True)))
    g = (jnp.exp(x), x + y, x.sum(0), jax.nn.softmax(x, -1), jnp.maximum(x, y), jnp.where(x > 0, x, 0.0),
         x.astype(jnp.float16), x.mean(), jnp.tanh(x), jax.nn.logsumexp(x, 1, keepdims=True))
    for a, b in zip(f(x, y), g):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=2e-6, atol=1e-6)


def test_index_and_nn_ops_match_jax():
    x = _x((4, 6), "float32", -1, 1)
    idx = np.array([[0, 3], [1, 1], [5, 2], [2, 0]], dtype=np.int64)
    np.testing.assert_array_equal(jax.jit(lambda x, i: cj.gather(x, 1, i))(x, idx), np.take_along_axis(x, idx, 1))
    np.testing.assert_array_equal(jax.jit(lambda x: cj.take(x, np.array([2, 0]), 0))(x), x[[2, 0]])
    a, b = _x((2, 3, 5), "float32", -1, 1, 1), _x((5, 4), "float32", -1, 1, 2)
    np.testing.assert_allclose(jax.jit(cj.matmul)(a, b), a @ b, rtol=1e-5, atol=1e-6)
    img, w = _x((2, 3, 9, 8), "float32", -1, 1, 3), _x((4, 3, 3, 3), "float32", -1, 1, 4)
    ref = jax.lax.conv_general_dilated(img, w, (2, 1), ((1, 1), (0, 0)))
    np.testing.assert_allclose(jax.jit(lambda x, w: cj.conv2d(x, w, None, (2, 1), (1, 0)))(img, w), ref, rtol=1e-5,
                               atol=1e-5)
    pooled = jax.lax.reduce_window(img, -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
    np.testing.assert_array_equal(jax.jit(lambda x: cj.max_pool2d(x, 2))(img), pooled)
    ln = jax.jit(lambda x: cj.layer_norm(x, (8,)))(img)
    m, v = img.mean(-1, keepdims=True), img.var(-1, keepdims=True)
    np.testing.assert_allclose(ln, (img - m) / np.sqrt(v + 1e-5), rtol=1e-4, atol=1e-5)
    q, k, vv = (_x((2, 2, 5, 8), "float32", -1, 1, s) for s in (5, 6, 7))
    ref = jax.nn.dot_product_attention(q.transpose(0, 2, 1, 3), k.transpose(0, 2, 1, 3), vv.transpose(0, 2, 1, 3),
                                       is_causal=True).transpose(0, 2, 1, 3)
    np.testing.assert_allclose(jax.jit(lambda q, k, v: cj.scaled_dot_product_attention(q, k, v, is_causal=True))(
        q, k, vv), ref, rtol=1e-5, atol=1e-5)


def test_vmap():
    x = _x((6, 3, 4), "float32", -1, 1)
    y = _x((4,), "float32", -1, 1, 2)
    for f in (cj.exp, lambda a: cj.add(a, y), lambda a: cj.sum(a, axis=0), lambda a: cj.softmax(a, axis=0),
              lambda a: cj.max(a, axis=None), lambda a: cj.cumsum(a, 1), lambda a: cj.matmul(a, a.T),
              lambda a: cj.gather(a, 1, np.zeros((3, 2), np.int64))):
        got = jax.vmap(f)(x)
        ref = np.stack([np.asarray(f(x[i])) for i in range(x.shape[0])])
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6, atol=1e-6)
    got = jax.vmap(cj.add, in_axes=(0, None))(x, y)  # one operand batched, of lower rank
    np.testing.assert_allclose(got, x + y, rtol=1e-6)


@pytest.mark.parametrize("pair", [("exp", jnp.exp), ("tanh", jnp.tanh), ("sin", jnp.sin), ("log", jnp.log),
                                  ("sigmoid", jax.nn.sigmoid), ("sqrt", jnp.sqrt), ("erf", jax.scipy.special.erf),
                                  ("silu", jax.nn.silu), ("gelu", lambda x: jax.nn.gelu(x, approximate=False))],
                         ids=lambda p: p[0] if isinstance(p, tuple) else "")
def test_elementwise_gradients(pair):
    name, ref = pair
    x = _x((3, 5), "float64", 0.2, 0.9)
    got = jax.grad(lambda x: jnp.sum(getattr(cj, name)(x) ** 2))(x)
    want = jax.grad(lambda x: jnp.sum(ref(x) ** 2))(x)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_binary_reduce_and_along_axis_gradients():
    a, b = _x((3, 4), "float64", 0.2, 0.9), _x((4,), "float64", 0.2, 0.9, 2)
    for f, g in ((cj.mul, jnp.multiply), (cj.div, jnp.divide), (cj.pow, jnp.power), (cj.atan2, jnp.arctan2)):
        got = jax.grad(lambda a, b: jnp.sum(f(a, b)), argnums=(0, 1))(a, b)
        want = jax.grad(lambda a, b: jnp.sum(g(a, b)), argnums=(0, 1))(a, b)
        for u, v in zip(got, want):
            np.testing.assert_allclose(u, v, rtol=1e-10)
    for f, g in ((lambda x: cj.sum(x, axis=1), lambda x: x.sum(1)),
                 (lambda x: cj.logsumexp(x, axis=0), lambda x: jax.nn.logsumexp(x, 0)),
                 (lambda x: cj.softmax(x, axis=1), lambda x: jax.nn.softmax(x, 1)),
                 (lambda x: cj.log_softmax(x, axis=0), lambda x: jax.nn.log_softmax(x, 0)),
                 (lambda x: cj.var(x, axis=1, correction=1.0), lambda x: x.var(1, ddof=1))):
        w = _x((3, 4), "float64", -1, 1, 7)[: f(a).shape[0]] if f(a).ndim == 2 else 1.0
        got = jax.grad(lambda x: jnp.sum(f(x) * w))(a)
        want = jax.grad(lambda x: jnp.sum(g(x) * w))(a)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_nn_gradients_use_ctensors_backward_ops():
    # the NN ops run in float32 (oneDNN's); the reference is jax's float32 gradient
    x, w, b = _x((2, 3, 7, 6), "float32", -1, 1, 1), _x((4, 3, 3, 3), "float32", -1, 1, 2), _x((4,), "float32", -1, 1, 3)

    def ours(x, w, b):
        h = cj.conv2d(x, w, b, (1, 1), (1, 1))
        h = cj.max_pool2d(cj.relu(h), 2)
        h = cj.avg_pool2d(h, (1, 3), (1, 1))
        return jnp.sum(cj.layer_norm(h, (h.shape[-1],)) ** 2)

    def theirs(x, w, b):
        h = jax.lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1))) + b[None, :, None, None]
        h = jax.lax.reduce_window(jax.nn.relu(h), -jnp.inf, jax.lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")
        h = jax.lax.reduce_window(h, 0.0, jax.lax.add, (1, 1, 1, 3), (1, 1, 1, 1), "VALID") / 3
        m, v = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
        return jnp.sum(((h - m) / jnp.sqrt(v + 1e-5)) ** 2)

    got = jax.jit(jax.grad(ours, argnums=(0, 1, 2)))(x, w, b)
    want = jax.grad(theirs, argnums=(0, 1, 2))(x, w, b)
    for u, v in zip(got, want):
        np.testing.assert_allclose(u, v, rtol=2e-4, atol=2e-4)
    a, m = _x((2, 3, 4), "float32", -1, 1, 4), _x((4, 5), "float32", -1, 1, 5)
    for u, v in zip(jax.grad(lambda a, m: jnp.sum(cj.matmul(a, m) ** 2), (0, 1))(a, m),
                    jax.grad(lambda a, m: jnp.sum((a @ m) ** 2), (0, 1))(a, m)):
        np.testing.assert_allclose(u, v, rtol=1e-5, atol=1e-5)


def test_errors_reach_the_caller():
    with pytest.raises(Exception, match="broadcast|shape"):
        jax.jit(cj.add)(np.ones(3, np.float32), np.ones(4, np.float32))
    with pytest.raises(Exception, match="int32|float"):
        jax.jit(cj.sqrt)(np.ones(3, np.int32))


def test_same_names_and_keywords_as_the_ctensor_module():
    import inspect
    for name in ("exp", "add", "sum", "softmax", "cumsum", "leaky_relu", "quantile", "var", "where", "conv2d",
                 "max_pool2d", "layer_norm", "gather", "take", "clamp", "gelu"):
        assert callable(getattr(cj, name)), name
    assert list(inspect.signature(cj.conv2d).parameters)[:7] == ["input", "weight", "bias", "stride", "padding",
                                                                 "dilation", "groups"]


def _hlo(f, *args):
    return f.lower(*args).compile().as_text()


def test_out_takes_a_donated_operands_buffer():
    x, y = _x((64, 33), "float32", -2, 2, 6), _x((64, 33), "float32", -2, 2, 7)
    cases = [("exp", lambda a, b: cj.exp(a, out=a), lambda a, b: jnp.exp(a)),
             ("leaky_relu", lambda a, b: cj.leaky_relu(a, 0.1, out=a), lambda a, b: jax.nn.leaky_relu(a, 0.1)),
             ("gelu", lambda a, b: cj.gelu(a, approximate="tanh", out=a),
              lambda a, b: jax.nn.gelu(a, approximate=True)),
             ("add", lambda a, b: cj.add(a, b, out=a), lambda a, b: a + b),
             ("mul x2", lambda a, b: cj.mul(b, a, out=a), lambda a, b: b * a),
             ("square", lambda a, b: cj.mul(a, a, out=a), lambda a, b: a * a),
             ("where", lambda a, b: cj.where(a > 0, a, b, out=a), lambda a, b: jnp.where(a > 0, a, b))]
    for name, f, ref in cases:
        jf = jax.jit(f, donate_argnums=0)
        hlo = _hlo(jf, x, y)
        # the result is the donated argument's buffer: XLA aliases it and inserts no copy
        assert "output_to_operand_aliasing" in hlo and "copy(" not in hlo, (name, hlo)
        a = jnp.array(x)
        got = jf(a, y)
        assert a.is_deleted(), name
        np.testing.assert_allclose(got, ref(x, y), rtol=2e-6, atol=1e-6, err_msg=name)
    # without donation the value semantics hold (XLA copies the operand first): x is unchanged
    before = np.array(x)
    np.testing.assert_allclose(jax.jit(lambda a: cj.exp(a, out=a))(x), np.exp(before), rtol=2e-6)
    np.testing.assert_allclose(cj.exp(x, out=x), np.exp(before), rtol=2e-6)
    np.testing.assert_array_equal(x, before)
    # a gradient through it, and vmap
    np.testing.assert_allclose(jax.grad(lambda a: jnp.sum(cj.tanh(a, out=a)))(x), 1 - np.tanh(before) ** 2,
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jax.vmap(lambda a: cj.exp(a, out=a))(x), np.exp(before), rtol=2e-6)


def test_out_must_be_an_operand_of_the_results_shape_and_dtype():
    x = jnp.ones((2, 3), jnp.float32)
    with pytest.raises(ValueError, match=r"exp: out= must be one of the operands"):
        cj.exp(x, out=jnp.ones((2, 3), jnp.float32))
    with pytest.raises(ValueError, match=r"add: out= has shape \(2, 3\) .*result has shape \(4, 2, 3\)"):
        cj.add(x, jnp.ones((4, 2, 3), jnp.float32), out=x)
    with pytest.raises(ValueError, match=r"less: out= has shape \(2, 3\) and dtype float32, the result .* bool"):
        cj.less(x, x, out=x)
