"""PyTorch's CPU ops for `ctensor bench --compare` (imported by bench_compare.py).

make_call(case, values) builds the same call as ctensor's row with torch's
own op: out= where the op takes one (as ctensor writes into the caller's
output), the values bench_compare.values() makes for NumPy, under
torch.inference_mode (no autograd bookkeeping, as a framework's inference
would run). A few ops are torch's usual idiom where it has no single op
(fma, softsign, cast into an existing tensor); selu is the elu kernel torch's
selu calls (it takes no out=), prelu torch's own prelu kernel
(aten._prelu_kernel, which broadcasts the weight as ctensor does). NN cases
use the aten op that computes the same outputs (conv2d's backward through
aten.convolution_backward with one output mask, pooling backward through the
aten backward ops, norms returning their statistics through aten.native_*).
Importing this module raises ImportError when torch is not installed.
"""
import numpy as np
import torch
import torch.nn.functional as F

aten = torch.ops.aten

DTYPES = {"bool": torch.bool, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
          "int64": torch.int64, "uint8": torch.uint8, "uint16": torch.uint16, "uint32": torch.uint32,
          "uint64": torch.uint64, "float16": torch.float16, "bfloat16": torch.bfloat16,
          "float32": torch.float32, "float64": torch.float64}

# ctensor's name: torch's function taking out=
UNARY = {"neg": torch.neg, "abs": torch.abs, "sign": torch.sign, "exp": torch.exp, "expm1": torch.expm1,
         "exp2": torch.exp2, "log": torch.log, "log1p": torch.log1p, "log2": torch.log2, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "reciprocal": torch.reciprocal, "square": torch.square, "sin": torch.sin,
         "cos": torch.cos, "tan": torch.tan, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
         "erf": torch.erf, "floor": torch.floor, "ceil": torch.ceil, "round": torch.round,
         "trunc": torch.trunc, "logical_not": torch.logical_not, "bitwise_not": torch.bitwise_not,
         "silu": torch._C._nn.silu, "softplus": torch._C._nn.softplus, "hardswish": torch._C._nn.hardswish,
         "relu": lambda x, out: torch.clamp_min(x, 0, out=out),
         "gelu": lambda x, out: torch._C._nn.gelu(x, out=out),
         "gelu_tanh": lambda x, out: torch._C._nn.gelu(x, approximate="tanh", out=out),
         "log10": torch.log10, "sinh": torch.sinh, "cosh": torch.cosh, "asin": torch.asin, "acos": torch.acos,
         "atan": torch.atan, "asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh, "erfc": torch.erfc,
         "logit": torch.logit, "frac": torch.frac, "signbit": torch.signbit,
         "lgamma": torch.lgamma, "digamma": torch.digamma, "erfinv": torch.erfinv,
         "relu6": lambda x, out: torch._C._nn.hardtanh(x, 0.0, 6.0, out=out),
         "tanhshrink": lambda x, out: (torch.tanh(x, out=out), torch.sub(x, out, out=out)),
         "deg2rad": torch.deg2rad, "rad2deg": torch.rad2deg, "sinc": torch.sinc, "ndtr": torch.special.ndtr,
         "ndtri": torch.special.ndtri, "entr": torch.special.entr, "erfcx": torch.special.erfcx,
         "log_ndtr": torch.special.log_ndtr, "spherical_bessel_j0": torch.special.spherical_bessel_j0,
         **{n: getattr(torch.special, n) for n in (
             "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
             "modified_bessel_k0", "modified_bessel_k1", "i0e", "i1e", "scaled_modified_bessel_k0",
             "scaled_modified_bessel_k1", "airy_ai")},
         "positive": lambda x, out: out.copy_(torch.positive(x)),
         "hardsigmoid": torch._C._nn.hardsigmoid, "mish": torch._C._nn.mish, "logsigmoid": torch._C._nn.log_sigmoid,
         # torch's selu is elu with these constants, and takes no out=
         "selu": lambda x, out: torch._C._nn.elu(x, 1.6732632423543772848170429916717,
                                                 1.0507009873554804934193349852946, 1.0, out=out),
         # F.softsign's own formula, x / (|x| + 1), into out=
         "softsign": lambda x, out: (torch.abs(x, out=out), torch.add(out, 1, out=out), torch.div(x, out, out=out))}
PREDICATE = {"isnan": torch.isnan, "isinf": torch.isinf, "isfinite": torch.isfinite,  # no out=
             "isposinf": torch.isposinf, "isneginf": torch.isneginf}

BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "floor_div": torch.floor_divide, "mod": torch.remainder, "pow": torch.pow,
          "maximum": torch.maximum, "minimum": torch.minimum, "fmax": torch.fmax, "fmin": torch.fmin,
          "atan2": torch.atan2, "hypot": torch.hypot, "copysign": torch.copysign,
          "bitwise_and": torch.bitwise_and, "bitwise_or": torch.bitwise_or, "bitwise_xor": torch.bitwise_xor,
          "left_shift": torch.bitwise_left_shift, "right_shift": torch.bitwise_right_shift,
          "logical_and": torch.logical_and, "logical_or": torch.logical_or, "logical_xor": torch.logical_xor,
          "equal": torch.eq, "not_equal": torch.ne, "less": torch.lt, "less_equal": torch.le,
          "greater": torch.gt, "greater_equal": torch.ge, "fmod": torch.fmod, "logaddexp": torch.logaddexp,
          "logaddexp2": torch.logaddexp2, "xlogy": torch.xlogy, "nextafter": torch.nextafter, "gcd": torch.gcd,
          "lcm": torch.lcm, "heaviside": torch.heaviside, "ldexp": torch.ldexp, "xlog1py": torch.special.xlog1py,
          "igamma": torch.special.gammainc, "igammac": torch.special.gammaincc,
          # torch's prelu kernel (no out=): F.prelu wants one weight per channel, the bench's is a's shape
          "prelu": lambda a, b, out: aten._prelu_kernel(a, b),
          "relu_backward": lambda a, b, out: aten.threshold_backward(a, b, 0)}

REDUCE = {"sum": torch.sum, "mean": torch.mean, "prod": torch.prod, "max": torch.max, "min": torch.min,
          "argmax": torch.argmax, "argmin": torch.argmin, "any": torch.any, "all": torch.all,
          "norm2": torch.linalg.vector_norm, "logsumexp": lambda x: torch.logsumexp(x, dim=(0, 1)),
          "nansum": torch.nansum, "nanmean": torch.nanmean, "count_nonzero": torch.count_nonzero}


def setup(threads):
    if threads > 0:
        torch.set_num_threads(threads)
    torch.inference_mode().__enter__()  # for the life of the process


def version():
    return "%s (%d threads, %s)" % (torch.__version__, torch.get_num_threads(),
                                    torch.backends.cpu.get_cpu_capability())


_device = torch.device("cpu")  # the case's device (make_call): tensors are made there


def tensor(shape, dt, salt, values, domain="values"):
    """The values NumPy gets (bench_compare.values), as a torch tensor of dt on the case's device."""
    npdt = {torch.bfloat16: np.float32, torch.uint16: np.uint16, torch.uint32: np.uint32,
            torch.uint64: np.uint64}.get(dt)
    if npdt is None:
        npdt = torch.empty(0, dtype=dt).numpy().dtype.type
    return torch.from_numpy(np.ascontiguousarray(values(tuple(shape), npdt, salt, domain))).to(
        device=_device, dtype=dt)


def make_nn(c, dt, values):
    op, ins, d = c["op"], c["inputs"], c.get("desc") or {}
    if dt != torch.float32:
        return None
    t = [tensor(s, dt, 10 + i, values) if s else None for i, s in enumerate(ins)]
    k, st, pad = d.get("kernel", 1), d.get("stride", 1), d.get("pad", 0)
    if op == "matmul":
        a, b = t[0], t[1]
        o = torch.empty(a.shape[0], b.shape[1], dtype=dt)
        return lambda: torch.matmul(a, b, out=o)
    if op == "conv2d":
        x, w = t[0], t[1]
        return lambda: F.conv2d(x, w, None, st, pad)
    if op in ("conv2d_backward_data", "conv2d_backward_weight"):
        data = op == "conv2d_backward_data"
        dy, w = (t[0], t[1]) if data else (t[1], None)
        x = None if data else t[0]
        if data:  # the forward's input only gives the shape
            n, kk, p, q = dy.shape
            x = torch.empty(n, w.shape[1], p + w.shape[2] - 1 - 2 * pad, q + w.shape[3] - 1 - 2 * pad, dtype=dt)
        else:
            r = x.shape[2] + 2 * pad - dy.shape[2] + 1
            w = torch.empty(dy.shape[1], x.shape[1], r, x.shape[3] + 2 * pad - dy.shape[3] + 1, dtype=dt)
        mask = [data, not data, False]
        return lambda: aten.convolution_backward(dy, x, w, None, [st, st], [pad, pad], [1, 1], False, [0, 0], 1,
                                                 mask)
    if op == "max_pool2d":
        x = t[0]
        return lambda: F.max_pool2d(x, k, st, pad)
    if op == "avg_pool2d":
        x = t[0]
        return lambda: F.avg_pool2d(x, k, st, pad)
    if op in ("max_pool2d_backward", "avg_pool2d_backward"):
        dy = t[0]
        n, ch, p, q = dy.shape
        h, w = (p - 1) * st + k - 2 * pad, (q - 1) * st + k - 2 * pad
        x = tensor((n, ch, h, w), dt, 20, values)
        if op == "avg_pool2d_backward":
            return lambda: aten.avg_pool2d_backward(dy, x, [k, k], [st, st], [pad, pad], False, True, None)
        _, idx = F.max_pool2d(x, k, st, pad, return_indices=True)
        return lambda: aten.max_pool2d_with_indices_backward(dy, x, [k, k], [st, st], [pad, pad], [1, 1], False,
                                                            idx)
    if op in ("batch_norm", "batch_norm_training", "batch_norm_backward"):
        x = t[0]
        ch = x.shape[1]
        scale, shift = torch.ones(ch), torch.zeros(ch)
        mean, var = torch.zeros(ch), torch.ones(ch)
        if op == "batch_norm":
            return lambda: F.batch_norm(x, mean, var, scale, shift, False, 0.0, 1e-5)
        if op == "batch_norm_training":
            return lambda: aten.native_batch_norm(x, scale, shift, None, None, True, 0.0, 1e-5)
        dy = tensor(x.shape, dt, 21, values)
        _, smean, sinv = aten.native_batch_norm(x, scale, shift, None, None, True, 0.0, 1e-5)
        return lambda: aten.native_batch_norm_backward(dy, x, scale, None, None, smean, sinv, True, 1e-5,
                                                       [True, True, True])
    if op in ("layer_norm", "layer_norm_backward"):
        x = t[0]
        n = x.shape[-1:]
        scale, shift = torch.ones(n), torch.zeros(n)
        if op == "layer_norm":
            return lambda: aten.native_layer_norm(x, list(n), scale, shift, 1e-5)
        dy = tensor(x.shape, dt, 21, values)
        _, mean, rstd = aten.native_layer_norm(x, list(n), scale, shift, 1e-5)
        return lambda: aten.native_layer_norm_backward(dy, x, list(n), mean, rstd, scale, shift,
                                                       [True, True, True])
    return None


def make_call(c, values):
    """A no-argument function running the case once in PyTorch on the case's device ("device": "cpu:0",
    "cuda:0"; made the default device while the call is built, so torch.empty lands there too), or None. On
    CUDA the function waits for the device, as ctensor's timing does."""
    global _device
    _device = torch.device(c.get("device", "cpu"))
    with _device:
        f = _make_call(c, values)
    if f is None or _device.type != "cuda":
        return f
    sync = torch.cuda.synchronize

    def run():
        f()
        sync()

    return run


def _make_call(c, values):
    op, kind, shape = c["op"], c["kind"], tuple(c["shape"])
    dt, odt = DTYPES.get(c["dtype"]), DTYPES.get(c["out_dtype"])
    if kind == "nn":
        return make_nn(c, dt, values) if dt is not None else None
    if dt is None or odt is None:
        return None
    p = c.get("params") or []
    x = tensor(shape, dt, 1, values, c.get("domain", "values"))
    if kind == "unary":
        o = torch.empty(shape, dtype=odt)
        if op in UNARY:
            f = UNARY[op]
            return lambda: f(x, out=o)
        if op in PREDICATE:
            f = PREDICATE[op]
            return lambda: f(x)
        return None
    if kind == "unary_param":
        o = torch.empty(shape, dtype=odt)
        if op == "clamp":
            return lambda: torch.clamp(x, p[0], p[1], out=o)
        if op == "leaky_relu":
            return lambda: torch._C._nn.leaky_relu(x, p[0], out=o)
        if op == "elu":
            return lambda: torch._C._nn.elu(x, p[0], 1.0, 1.0, out=o)
        if op == "celu":  # torch's celu is elu with input scale 1 / alpha, and takes no out=
            return lambda: torch._C._nn.elu(x, p[0], 1.0, 1.0 / p[0], out=o)
        if op == "hardshrink":
            return lambda: torch.hardshrink(x, p[0], out=o)
        if op == "softshrink":
            return lambda: torch._C._nn.softshrink(x, p[0], out=o)
        if op == "threshold":
            return lambda: torch.threshold(x, p[0], p[1], out=o)
        if op == "hardtanh":
            return lambda: torch._C._nn.hardtanh(x, p[0], p[1], out=o)
        if op == "round_decimals":
            return lambda: torch.round(x, decimals=int(p[0]), out=o)
        if op == "softplus_beta":
            return lambda: torch._C._nn.softplus(x, p[0], p[1], out=o)
        f = {"pow_scalar": torch.pow, "add_scalar": torch.add, "mul_scalar": torch.mul}.get(op)
        if f is None:
            return None
        s = p[0] if dt.is_floating_point else int(p[0])
        return lambda: f(x, s, out=o)
    if kind == "ternary":
        b, w = tensor(shape, dt, 2, values), tensor(shape, dt, 3, values)
        o = torch.empty(shape, dtype=odt)
        if op == "where":
            cond = tensor(shape, torch.bool, 4, values)
            return lambda: torch.where(cond, b, w, out=o)
        if op == "fma":
            return lambda: torch.addcmul(w, x, b, out=o)
        if op == "lerp":
            return lambda: torch.lerp(x, b, w, out=o)
        if op == "addcmul":
            return lambda: torch.addcmul(x, b, w, value=p[0], out=o)
        if op == "addcdiv":
            return lambda: torch.addcdiv(x, b, w, value=p[0], out=o)
        if op == "clamp_tensor":
            return lambda: torch.clamp(x, b, w, out=o)
        return None
    if kind == "cast":
        o = torch.empty(shape, dtype=odt)
        return lambda: o.copy_(x)
    if kind == "binary":
        f = BINARY.get(op)
        if f is None:
            return None
        b = tensor(shape, dt, 2, values)
        o = torch.empty(shape, dtype=odt)
        return lambda: f(x, b, out=o)
    if kind == "reduce":
        if op in REDUCE:
            f = REDUCE[op]
            return lambda: f(x)
        if op in ("var", "std"):
            f, corr = (torch.var if op == "var" else torch.std), (p[0] if p else 0)
            return lambda: f(x, correction=corr)
        q = p[0] if p else 0.5
        sel = {"median": lambda: torch.median(x), "nanmedian": lambda: torch.nanmedian(x),
               "quantile": lambda: torch.quantile(x, q), "nanquantile": lambda: torch.nanquantile(x, q),
               "kthvalue": lambda: torch.kthvalue(x.reshape(-1), int(q)),
               "mode": lambda: torch.mode(x.reshape(-1))}.get(op)
        if sel is not None:
            return sel
        return None
    if kind == "along_axis":
        axis = c.get("axis")
        axis = -1 if axis is None else axis
        o = torch.empty(shape, dtype=odt)
        f = {"softmax": aten._softmax.out, "log_softmax": aten._log_softmax.out}.get(op)
        if f is not None:
            return lambda: f(x, axis, False, out=o)
        if op in ("cumsum", "cumprod", "logcumsumexp"):
            g = {"cumsum": torch.cumsum, "cumprod": torch.cumprod, "logcumsumexp": torch.logcumsumexp}[op]
            return lambda: g(x, axis, out=o)
        if op == "softmin":
            return lambda: torch.nn.functional.softmin(x, axis)
        if op in ("cummax", "cummin"):
            g = torch.cummax if op == "cummax" else torch.cummin
            return lambda: g(x, axis)
        if op == "sort":
            idx = torch.empty(shape, dtype=torch.int64)
            return lambda: torch.sort(x, dim=axis, stable=True, out=(o, idx))
        if op == "argsort":
            return lambda: torch.argsort(x, dim=axis, stable=True)
        return None
    return None
