#!/usr/bin/env python3
"""The framework adapters against the frameworks' own operators, in the same run, on the CPU (2 threads):

- PyTorch: one training step (forward, backward, SGD update) of the small CNN of
  tests_frameworks/test_torch.py, batch 32 of 3x32x32, built from torch.ops.ctensor.* and from torch's own ops,
  eager and under torch.compile (inductor); median of 40 steps each, the two models' steps alternating.
- JAX: a jitted 1-element op (per-call cost) and a jitted 1e7-element exp and add, ctensor.jax against
  jax.numpy, and against ctensor's own C speed (ctensor.exp into a preallocated out=, the same kernel without
  XLA); the 1e7 rows again in a process where glibc keeps freed blocks (MALLOC_MMAP_THRESHOLD_): XLA takes each
  output from malloc, and by default a 40 MB block is a fresh mmap per call, written through page faults.

usage: PYTHONPATH=build/python python3 bench/bench_frameworks.py [--torch] [--jax]   (both by default)
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import numpy as np

from common import l3_mib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "bindings", "python",
                                "tests_frameworks"))


def median_time(f, n=20, warm=3):
    for _ in range(warm):
        f()
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


def thp_mode():
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[")[1].split("]")[0]
    except (OSError, IndexError):
        return "unknown"


def interleaved_medians(fns: dict, n=40, warm=3) -> dict:
    """The median time of each function, timed in turns (one call of each per round)."""
    for f in fns.values():
        for _ in range(warm):
            f()
    ts = {k: [] for k in fns}
    for _ in range(n):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in ts.items()}


def no_compile_caches(torch):
    """Compile afresh: PyTorch's on-disk caches key a graph by its trace, not by the Python of a custom op's
    autograd formula, and would serve a graph traced from an older ctensor."""
    torch._inductor.config.fx_graph_cache = False
    torch._functorch.config.enable_autograd_cache = False


def bench_torch():
    import torch

    import ctensor as ct
    from test_torch import _cnn_params, cnn_ctensor, cnn_torch

    torch.set_num_threads(2)
    ct.set_num_threads(2)
    no_compile_caches(torch)
    C = torch.ops.ctensor
    one, oneg = torch.ones(1), torch.ones(1, requires_grad=True)
    print("PyTorch: per-call cost of a 1-element op, median of 2000: torch.ops.ctensor (a Python custom op) against "
          "aten")
    for label, a, b in (("relu", lambda: C.relu(one), lambda: torch.relu(one)),
                        ("relu, input requires grad", lambda: C.relu(oneg), lambda: torch.relu(oneg)),
                        ("mul", lambda: C.mul(one, one), lambda: torch.mul(one, one))):
        ta, tb = median_time(a, 2000, 50), median_time(b, 2000, 50)
        print(f"  {label:26s} ctensor {ta * 1e6:6.1f} us   aten {tb * 1e6:6.1f} us")
    for batch in (32, 128):
        _bench_cnn(torch, batch, _cnn_params, cnn_ctensor, cnn_torch)


def _bench_cnn(torch, batch, _cnn_params, cnn_ctensor, cnn_torch):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(batch, 3, 32, 32, generator=g)
    y = torch.nn.functional.one_hot(torch.randint(0, 10, (batch,), generator=g), 10).float()

    def wide(p):  # the test's CNN at 32x32: the classifier sees 16 x 8 x 8
        p["wf"] = (torch.randn(10, 16 * 8 * 8, generator=torch.Generator().manual_seed(1)) * 0.05).requires_grad_()
        return p

    def step(model, p):
        def run():
            loss = model(p, x, y)
            gs = torch.autograd.grad(loss, list(p.values()))
            with torch.no_grad():
                for t, gr in zip(p.values(), gs):
                    t -= 1e-3 * gr
        return run

    # the two models' steps alternate (ABAB...), so the host's drift (it is shared) falls on both alike
    rows = {}
    for mode in ("eager", "compiled"):
        runs = {}
        for name, model in (("ctensor ops", cnn_ctensor), ("torch ops", cnn_torch)):
            runs[name] = step(model if mode == "eager" else torch.compile(model, fullgraph=True), wide(_cnn_params()))
        got = interleaved_medians(runs, n=40)
        for name, t in got.items():
            rows[name, mode] = t
    print(f"PyTorch: CNN training step (batch {batch}, 3x32x32; conv3x3(8)+bn+relu+maxpool, conv3x3(16)+relu+avgpool, "
          "linear), median of 40 with the two models' steps alternating")
    for mode in ("eager", "compiled"):
        c, t = rows["ctensor ops", mode], rows["torch ops", mode]
        print(f"  {mode:9s} ctensor {c * 1e3:7.2f} ms   torch {t * 1e3:7.2f} ms   ctensor/torch {c / t:5.2f}x "
              f"(target <= {1.2 if mode == 'eager' else 1.1})")


def bench_jax():
    import jax
    import jax.numpy as jnp

    import ctensor as ct
    import ctensor.jax as cj

    ct.set_num_threads(2)
    print(f"JAX {jax.__version__}: jitted calls, median of 200 (1 element) / 20 (1e7 elements); transparent huge "
          f"pages: {thp_mode()}")
    one = jnp.ones((1,), jnp.float32)
    for name, f, g in (("exp", cj.exp, jnp.exp), ("add", lambda a: cj.add(a, a), lambda a: a + a)):
        fc, fj = jax.jit(f), jax.jit(g)
        tc = median_time(lambda: fc(one).block_until_ready(), 200, 20)
        tj = median_time(lambda: fj(one).block_until_ready(), 200, 20)
        print(f"  1 element  {name:4s} ctensor.jax {tc * 1e6:7.2f} us   jnp {tj * 1e6:7.2f} us   ratio "
              f"{tc / tj:5.2f}x (target <= 2)")
    bench_jax_large(jax, jnp, ct, cj)
    if os.environ.get("MALLOC_MMAP_THRESHOLD_") is None:
        # the same in a process where glibc keeps freed blocks (XLA's buffers come from malloc, and a 40 MB one
        # is otherwise a fresh mmap per call, written through page faults)
        env = dict(os.environ, **KEEP_FREED)
        print("  the same with " + " ".join(f"{k}={v}" for k, v in KEEP_FREED.items()) + ":", flush=True)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--jax-large"], env=env, check=True)


# glibc's malloc keeps blocks up to 1 GiB in its heap and reuses them, instead of an mmap and munmap per block;
# and advises its large blocks as transparent huge pages, as NumPy does its arrays (where the kernel's THP mode
# is "madvise", XLA's 4 KiB-paged buffers otherwise stream about 5% slower than the C call's NumPy arrays)
KEEP_FREED = {"MALLOC_MMAP_THRESHOLD_": str(1 << 30), "MALLOC_TRIM_THRESHOLD_": str(1 << 32),
              "GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def bench_jax_large(jax, jnp, ct, cj):
    n = 10_000_000
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.random(n, dtype=np.float32))
    y = jnp.asarray(rng.random(n, dtype=np.float32))
    xn, yn = np.array(x), np.array(y)  # writable copies
    out = np.empty_like(xn)
    print("  each output a new buffer (XLA takes it from malloc; the C call writes into out=, memory already "
          "mapped):")
    for name, f, g, c in (("exp", cj.exp, jnp.exp, lambda: ct.exp(xn, out=out)),
                          ("add", lambda a: cj.add(a, y), lambda a: a + y, lambda: ct.add(xn, yn, out=out))):
        fc, fj = jax.jit(f), jax.jit(g)
        got = interleaved_medians({"cj": lambda: fc(x).block_until_ready(), "jnp": lambda: fj(x).block_until_ready(),
                                   "C": c}, n=20)
        report(name, got)
    # out= names the operand whose buffer the result takes; donated, no buffer is allocated (nor by jnp's
    # fused op, which XLA aliases to a donated argument itself). Each call consumes the last result, so exp
    # reaches inf after three calls, alike for all three.
    print("  in place: the result takes the donated operand's buffer (ctensor.jax out=, jax.jit donate_argnums; "
          "the C call out= its input):")
    for name, f, g, c in (("exp", lambda a: cj.exp(a, out=a), jnp.exp, lambda: ct.exp(xn, out=xn)),
                          ("add", lambda a: cj.add(a, y, out=a), lambda a: a + y, lambda: ct.add(xn, yn, out=xn))):
        fc, fj = jax.jit(f, donate_argnums=0), jax.jit(g, donate_argnums=0)
        state = {"cj": jnp.array(x), "jnp": jnp.array(x)}

        def step(k, fn):
            state[k] = fn(state[k])
            state[k].block_until_ready()

        got = interleaved_medians({"cj": lambda: step("cj", fc), "jnp": lambda: step("jnp", fj), "C": c}, n=20)
        report(name, got)


def report(name, got):
    tc, tj, tcc = got["cj"], got["jnp"], got["C"]
    print(f"  1e7 {name:4s} ctensor.jax {tc * 1e3:7.2f} ms   jnp {tj * 1e3:7.2f} ms   ctensor's C call "
          f"{tcc * 1e3:7.2f} ms   ctensor.jax/C {tc / tcc:5.2f}x (target <= 1.05)   ctensor.jax/jnp {tc / tj:5.2f}x",
          flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--torch", action="store_true")
    ap.add_argument("--jax", action="store_true")
    ap.add_argument("--jax-large", action="store_true", help=argparse.SUPPRESS)  # the 1e7 rows alone
    a = ap.parse_args()
    if a.jax_large:
        import jax
        import jax.numpy as jnp

        import ctensor as ct
        import ctensor.jax as cj
        ct.set_num_threads(2)
        bench_jax_large(jax, jnp, ct, cj)
        return
    both = not (a.torch or a.jax)
    print(f"host: {os.cpu_count()} CPUs, L3 {l3_mib()} MiB")
    if a.torch or both:
        bench_torch()
    if a.jax or both:
        bench_jax()


if __name__ == "__main__":
    main()
