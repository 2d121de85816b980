"""ctensor's ops inside jax.jit, vmap and grad, through XLA FFI handlers (one per op kind).

    PYTHONPATH=build/python python3 examples/frameworks/jax_example.py
"""
import jax
import jax.numpy as jnp
import numpy as np

import ctensor.jax as cj


@jax.jit
def loss(w, x):
    h = cj.tanh(cj.matmul(x, w))                      # ctensor's matmul and tanh as XLA custom calls
    return cj.sum(cj.log_softmax(h, axis=-1), axis=None)


x = jnp.asarray(np.random.default_rng(0).standard_normal((8, 5), np.float32))
w = jnp.asarray(np.random.default_rng(1).standard_normal((5, 3), np.float32))
print("loss", float(loss(w, x)))
g = jax.grad(loss)(w, x)                              # matmul's gradient by ctensor's matmul, tanh's by its rule
ref = jax.grad(lambda w, x: jnp.sum(jax.nn.log_softmax(jnp.tanh(x @ w), -1)))(w, x)
print("grad matches jax.numpy:", bool(jnp.allclose(g, ref, rtol=1e-5, atol=1e-5)))
print("vmap:", jax.vmap(lambda r: cj.softmax(r, axis=-1))(x).shape)
assert jnp.allclose(g, ref, rtol=1e-5, atol=1e-5)
