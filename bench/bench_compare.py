#!/usr/bin/env python3
"""NumPy and PyTorch baselines for `ctensor bench --compare`.

    python3 bench_compare.py < cases.json > times.json
    python3 bench_compare.py --serve      (one case per line: see serve())

stdin: {"threads": 2, "cases": [...]} (or the bare list of cases), as
`ctensor bench` writes them:
    {"key": "12", "op": "exp", "kind": "unary", "dtype": "float32",
     "out_dtype": "float32", "shape": [4194304], "n": 4194304,
     "params": [], "axis": null, "target_s": 0.25}
(reductions reduce every axis of `shape`; along-axis ops run along `axis`).
NN cases have kind "nn", the shapes of their inputs in "inputs" ([] for an
input left out) and their descriptor's fields in "desc" (kernel, stride,
pad); only PyTorch times them.

stdout: {"numpy_version": "2.x", "times": {key: median seconds per call},
         "min_times": {key: best batch}, "skipped": {key: why},
         "torch_version": "2.x", "torch_times": {...}, "torch_min_times": {...},
         "torch_skipped": {...}, "torch_note": why torch was not timed}
Ops NumPy has no function for (gelu, erf, erfc, leaky_relu, selu, xlogy,
prelu, bfloat16, ...) are left out of "times". Timing follows the tool: 2
warm-up calls, k calls per batch so that a batch takes about target_s / 5,
5 batches, the median (a call longer than target_s: 1 warm-up, 3 batches;
longer than 10 target_s: 1 batch).
NumPy runs as it does by default: ufuncs on one thread, out= where it takes
one; a few ops are the usual NumPy idiom of several calls (rsqrt, sigmoid,
silu, logit, frac, hardsigmoid, mish, softsign, logsigmoid, ldexp, fma, lerp,
logsumexp, softmax, log_softmax).

PyTorch (when it is installed; CT_BENCH_TORCH=0 leaves it out) runs its CPU
op on `threads` threads (torch.set_num_threads, as many as ctensor uses),
with out= where the op takes one, on the same values, under
torch.inference_mode.

Exit status 3 when NumPy is not installed.
"""
import json
import os
import sys
import time
import warnings

try:
    import numpy as np
except ImportError:
    sys.stderr.write("bench_compare.py: NumPy is not installed for %s\n" % sys.executable)
    sys.exit(3)

DTYPES = {"bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
          "uint8": np.uint8, "float16": np.float16, "float32": np.float32, "float64": np.float64}

UNARY = {"neg": np.negative, "abs": np.absolute, "sign": np.sign, "exp": np.exp, "expm1": np.expm1,
         "exp2": np.exp2, "log": np.log, "log1p": np.log1p, "log2": np.log2, "sqrt": np.sqrt,
         "reciprocal": np.reciprocal, "square": np.square, "sin": np.sin, "cos": np.cos, "tan": np.tan,
         "tanh": np.tanh, "floor": np.floor, "ceil": np.ceil, "round": np.rint, "trunc": np.trunc,
         "logical_not": np.logical_not, "bitwise_not": np.invert, "isnan": np.isnan, "isinf": np.isinf,
         "isfinite": np.isfinite, "log10": np.log10, "sinh": np.sinh, "cosh": np.cosh, "asin": np.arcsin,
         "acos": np.arccos, "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
         "signbit": np.signbit, "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "isposinf": np.isposinf,
         "isneginf": np.isneginf, "relu6": lambda x, out: np.clip(x, 0, 6, out=out), "positive": np.positive}

BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide,
          "floor_div": np.floor_divide, "mod": np.remainder, "pow": np.power, "maximum": np.maximum,
          "minimum": np.minimum, "fmax": np.fmax, "fmin": np.fmin, "atan2": np.arctan2, "hypot": np.hypot,
          "copysign": np.copysign, "bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
          "bitwise_xor": np.bitwise_xor, "left_shift": np.left_shift, "right_shift": np.right_shift,
          "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
          "equal": np.equal, "not_equal": np.not_equal, "less": np.less, "less_equal": np.less_equal,
          "greater": np.greater, "greater_equal": np.greater_equal, "fmod": np.fmod,
          "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2, "nextafter": np.nextafter, "gcd": np.gcd,
          "lcm": np.lcm, "heaviside": np.heaviside}

REDUCE = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
          "argmax": np.argmax, "argmin": np.argmin, "any": np.any, "all": np.all,
          "norm2": np.linalg.norm, "nansum": np.nansum, "nanmean": np.nanmean,
          "count_nonzero": np.count_nonzero}


def values(shape, dtype, salt, domain="values"):
    """Inputs in the tool's domain (the case's "domain", chosen by the tool:
    tools/bench_cases.h): floats in [0.5, 2), near 1 for products, inside
    (-1, 1), (0, 1) or above 1 for the ops defined there; integers 1..7,
    bools half true; zeros for any, nonzero for all (so that neither can
    stop early). Read-only, and shared: the last few arrays are kept
    (_VALUES), so NumPy and PyTorch, and the rows after, reuse them (making
    100 M values took 1.5 s, most of a fast row's time)."""
    key = (tuple(shape), np.dtype(dtype).str, salt, domain)
    a = _VALUES.pop(key, None)
    if a is None:
        a = _make_values(shape, dtype, salt, domain)
        a.setflags(write=False)  # a baseline that writes its input fails instead of changing the next row's
        while _VALUES and sum(v.nbytes for v in _VALUES.values()) + a.nbytes > _VALUES_BYTES:
            _VALUES.pop(next(iter(_VALUES)))  # the least recently used
    _VALUES[key] = a
    return a


_VALUES = {}  # key -> array, least recently used first
_VALUES_BYTES = 2 << 30


def _make_values(shape, dtype, salt, domain):
    if domain == "zeros":
        # written, not np.zeros: untouched calloc pages all map the kernel's one zero
        # page, which stays in cache and made NumPy's any read 340 MB at 28 GB/s
        return np.full(shape, 0, dtype)
    rng = np.random.default_rng(salt)
    # float32 draws unless the values are float64 (twice as fast; 24 random bits
    # are plenty for values 1..7 or in an interval)
    u = rng.random(shape, dtype=np.float64 if dtype == np.float64 else np.float32)
    if dtype == np.bool_:
        return u >= 0.5 if domain != "nonzero" else np.ones(shape, np.bool_)
    if not np.issubdtype(dtype, np.floating):
        u *= 7
        np.floor(u, out=u)
        u += 1
        return u.astype(dtype)
    lo, width = {"near_one": (0.995, 0.01), "unit": (-0.95, 1.9), "prob": (0.02, 0.96),
                 "above_one": (1.0, 1.5)}.get(domain, (0.5, 1.5))
    u *= u.dtype.type(width)
    u += u.dtype.type(lo)
    return u.astype(dtype, copy=False)


def make_call(c):
    """A no-argument function running the case once, or None."""
    op, kind, shape = c["op"], c["kind"], tuple(c["shape"])
    dt, odt = DTYPES.get(c["dtype"]), DTYPES.get(c["out_dtype"])
    if dt is None or odt is None:
        return None
    p = c.get("params") or []
    x = values(shape, dt, 1, c.get("domain", "values"))
    if kind == "unary":
        o = np.empty(shape, odt)
        if op in UNARY:
            f = UNARY[op]
            return lambda: f(x, out=o)
        if op == "rsqrt":
            return lambda: (np.sqrt(x, out=o), np.reciprocal(o, out=o))
        if op == "relu":
            return lambda: np.maximum(x, 0, out=o)
        if op == "sigmoid":
            return lambda: (np.negative(x, out=o), np.exp(o, out=o), np.add(o, 1, out=o), np.reciprocal(o, out=o))
        if op == "silu":
            return lambda: (np.negative(x, out=o), np.exp(o, out=o), np.add(o, 1, out=o), np.divide(x, o, out=o))
        if op == "softplus":
            return lambda: np.logaddexp(0, x, out=o)
        if op == "logit":
            return lambda: (np.subtract(1, x, out=o), np.divide(x, o, out=o), np.log(o, out=o))
        if op == "frac":
            return lambda: (np.trunc(x, out=o), np.subtract(x, o, out=o))
        if op == "hardsigmoid":
            return lambda: (np.add(x, 3, out=o), np.clip(o, 0, 6, out=o), np.divide(o, 6, out=o))
        if op == "mish":
            return lambda: (np.logaddexp(0, x, out=o), np.tanh(o, out=o), np.multiply(x, o, out=o))
        if op == "softsign":
            return lambda: (np.absolute(x, out=o), np.add(o, 1, out=o), np.divide(x, o, out=o))
        if op == "logsigmoid":
            return lambda: (np.negative(x, out=o), np.logaddexp(0, o, out=o), np.negative(o, out=o))
        return None  # gelu, gelu_tanh, erf, erfc: not in NumPy; selu: a select (np.where), as elu
    if kind == "unary_param":
        o = np.empty(shape, odt)
        if op == "clamp":
            lo, hi = (dt(v) for v in p)
            return lambda: np.clip(x, lo, hi, out=o)
        if op == "round_decimals":
            return lambda: np.round(x, int(p[0]), out=o)
        ufunc = {"pow_scalar": np.power, "add_scalar": np.add, "mul_scalar": np.multiply}.get(op)
        if ufunc is None:
            return None  # leaky_relu, elu
        s = dt(p[0]) if not np.issubdtype(dt, np.floating) else p[0]
        return lambda: ufunc(x, s, out=o)
    if kind == "ternary":
        b, w = values(shape, dt, 2), values(shape, dt, 3)
        o = np.empty(shape, odt)
        if op == "where":
            cond = values(shape, np.bool_, 4)
            return lambda: np.where(cond, b, w)  # NumPy's where takes no out=
        if op == "fma":
            return lambda: (np.multiply(x, b, out=o), np.add(o, w, out=o))
        if op == "lerp":
            return lambda: (np.subtract(b, x, out=o), np.multiply(o, w, out=o), np.add(o, x, out=o))
        if op == "addcmul":
            return lambda: (np.multiply(b, dt(p[0]), out=o), np.multiply(o, w, out=o), np.add(x, o, out=o))
        if op == "addcdiv":
            return lambda: (np.multiply(b, dt(p[0]), out=o), np.divide(o, w, out=o), np.add(x, o, out=o))
        if op == "clamp_tensor":
            return lambda: np.clip(x, b, w, out=o)
        return None
    if kind == "cast":
        o = np.empty(shape, odt)
        return lambda: np.copyto(o, x, casting="unsafe")
    if kind == "binary":
        f = BINARY.get(op)
        if f is None and op != "ldexp":
            return None  # xlogy, prelu, relu_backward: a select (np.where), as leaky_relu
        b = values(shape, dt, 2)
        o = np.empty(shape, odt)
        if op == "ldexp":  # a * 2^b with a float b (PyTorch's); np.ldexp takes only integer exponents
            return lambda: (np.exp2(b, out=o), np.multiply(x, o, out=o))
        return lambda: f(x, b, out=o)
    if kind == "reduce":
        if op in REDUCE:
            f = REDUCE[op]
            return lambda: f(x)
        ddof = p[0] if p else 0
        if op == "var":
            return lambda: np.var(x, ddof=ddof)
        if op == "std":
            return lambda: np.std(x, ddof=ddof)
        q = p[0] if p else 0.5
        sel = {"median": lambda: np.quantile(x, 0.5, method="lower"),  # torch's lower median
               "nanmedian": lambda: np.nanquantile(x, 0.5, method="lower"),
               "quantile": lambda: np.quantile(x, q), "nanquantile": lambda: np.nanquantile(x, q),
               "kthvalue": lambda: np.partition(x, int(q) - 1, axis=None)[int(q) - 1]}.get(op)
        if sel is not None:
            return sel
        if op == "logsumexp":
            def lse():
                m = np.max(x)
                return m + np.log(np.sum(np.exp(x - m)))
            return lse
        return None
    if kind == "along_axis":
        axis = c.get("axis")
        axis = -1 if axis is None else axis
        o = np.empty(shape, odt)
        if op == "cumsum":
            return lambda: np.cumsum(x, axis=axis, out=o)
        if op == "cumprod":
            return lambda: np.cumprod(x, axis=axis, out=o)
        if op == "logcumsumexp":
            return lambda: np.logaddexp.accumulate(x, axis=axis, out=o)
        if op in ("cummax", "cummin"):
            f = np.maximum if op == "cummax" else np.minimum
            return lambda: f.accumulate(x, axis=axis, out=o)
        if op == "sort":  # into o as ctensor (np.sort would allocate)
            return lambda: (np.copyto(o, x), o.sort(axis=axis))
        if op == "argsort":  # the stable order, as ctensor's (NumPy's argsort takes no out=)
            return lambda: np.argsort(x, axis=axis, kind="stable")
        if op in ("softmax", "softmin"):
            sign = -1 if op == "softmin" else 1

            def softmax():
                src = np.negative(x, out=o) if sign < 0 else x  # softmin: softmax of -x
                np.subtract(src, np.max(src, axis=axis, keepdims=True), out=o)
                np.exp(o, out=o)
                np.divide(o, np.sum(o, axis=axis, keepdims=True), out=o)
            return softmax
        if op == "log_softmax":
            def log_softmax():
                np.subtract(x, np.max(x, axis=axis, keepdims=True), out=o)
                np.subtract(o, np.log(np.sum(np.exp(o), axis=axis, keepdims=True)), out=o)
            return log_softmax
        return None
    return None


def time_call(f, target):
    """2 warm-ups, k calls per batch (~target / 5 each), 5 batches: (median, min);
    a call longer than target alone: 1 warm-up, 3 one-call batches, longer
    than 10 target: 1 (the tool's time_calls, tools/bench.cpp, has the same
    rule)."""
    one = 0.0
    for _ in range(2):
        t0 = time.perf_counter()
        f()
        one = time.perf_counter() - t0
        if one > target:
            break
    slow = one > target
    k = 1 if slow else max(1, min(1000000, round(target / 5 / max(one, 1e-9))))
    per = []
    for _ in range(1 if one > 10 * target else 3 if slow else 5):
        t0 = time.perf_counter()
        for _ in range(k):
            f()
        per.append((time.perf_counter() - t0) / k)
    per.sort()
    return per[len(per) // 2], per[0]


def make_or_why(make, c, what):
    """make(c)'s call, or the reason there is none (a string)."""
    try:
        return make(c) or "no %s equivalent for %s %s" % (what, c["op"], c["dtype"])
    except Exception as e:  # a dtype the function does not take, ...
        return "%s: %s" % (type(e).__name__, e)


def time_or_why(f, c):
    """(median, best) of f, or the reason it could not be timed."""
    try:
        with np.errstate(all="ignore"):
            return time_call(f, float(c.get("target_s", 0.25)))
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)


def time_all(cases, make, what):
    """(median times, best batches, skipped) by key, for the cases make() builds."""
    times, mins, skipped = {}, {}, {}
    for c in cases:
        key = str(c.get("key", c["op"]))
        f = make_or_why(make, c, what)
        r = time_or_why(f, c) if callable(f) else f
        if isinstance(r, str):
            skipped[key] = r
        else:
            times[key], mins[key] = r
    return times, mins, skipped


def load_torch(threads, answer):
    """bench_compare_torch set up on `threads` threads, or None; says which in answer."""
    if os.environ.get("CT_BENCH_TORCH", "1") == "0":
        answer["torch_note"] = "left out: CT_BENCH_TORCH=0"
        return None
    try:
        import bench_compare_torch as bt
    except ImportError as e:  # torch is not installed
        answer["torch_note"] = "not installed for %s (%s)" % (sys.executable, e)
        return None
    bt.setup(threads)
    answer["torch_version"] = bt.version()
    return bt


def serve():
    """One case at a time, so that `ctensor bench --compare` times each row's
    baselines right beside the row (a load that comes and goes during the
    run then moves both sides alike). stdin: {"threads": N} on the first
    line, then one case per line; stdout: a line of versions, then one line
    per case: {"key": k, "numpy_s": median, "numpy_min_s": best,
    "numpy_skip": why, "torch_s": ..., "torch_min_s": ..., "torch_skip": why}
    (a time or its skip). The calls of the last case are kept, so a second
    round of the same key times the same arrays; a new key frees them first."""
    warnings.simplefilter("ignore")
    first = sys.stdin.readline()
    req = json.loads(first) if first.strip() else {}
    hello = {"numpy_version": np.__version__}
    bt = load_torch(int(req.get("threads", 0)), hello)
    print(json.dumps(hello), flush=True)
    sides = [("numpy", "NumPy",
              lambda c: make_call(c) if c["kind"] != "nn" and c.get("device", "cpu").startswith("cpu") else None)]
    if bt is not None:
        sides.append(("torch", "PyTorch", lambda c: bt.make_call(c, values)))
    key, calls = None, {}
    for line in sys.stdin:
        if not line.strip():
            break
        c = json.loads(line)
        if c.get("key") != key:
            key, calls = None, {}  # the last case's arrays go before the next one's are made
            for name, what, make in sides:
                calls[name] = make_or_why(make, c, what)
            key = c.get("key")
        answer = {"key": key}
        for name, _, _ in sides:
            f = calls[name]
            r = time_or_why(f, c) if callable(f) else f
            if isinstance(r, str):
                answer[name + "_skip"] = r
            else:
                answer[name + "_s"], answer[name + "_min_s"] = r
        print(json.dumps(answer), flush=True)
    return 0


def main():
    if "--serve" in sys.argv[1:]:
        return serve()
    req = json.load(sys.stdin)
    cases = req.get("cases", []) if isinstance(req, dict) else req
    threads = int(req.get("threads", 0)) if isinstance(req, dict) else 0
    warnings.simplefilter("ignore")
    with np.errstate(all="ignore"):
        times, mins, skipped = time_all([c for c in cases if c["kind"] != "nn"], make_call, "NumPy")
    answer = {"numpy_version": np.__version__, "times": times, "min_times": mins, "skipped": skipped}
    bt = load_torch(threads, answer)
    if bt is not None:
        t, m, sk = time_all(cases, lambda c: bt.make_call(c, values), "PyTorch")
        answer.update(torch_times=t, torch_min_times=m, torch_skipped=sk)
    json.dump(answer, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
