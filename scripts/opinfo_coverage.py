#!/usr/bin/env python3
"""PyTorch OpInfo coverage of ctensor, measured the way a framework author would.

PyTorch's operator test database (``torch.testing._internal.common_methods_invocations.op_db``) lists every
torch operator with sample inputs. This script takes the operators in ctensor's families (elementwise maps,
binary ops, reductions, casts, conv / pool / norm / matmul / attention, indexing and data movement), says which
have a ctensor counterpart (by name: ctensor's functions and their array-API aliases, plus the renames below),
and, with ``--compare``, runs every CPU sample of the elementwise and binary ones (the NN activations among
them) that ctensor's signature
takes (tensor inputs of one dtype, no extra keywords) through both libraries in every real dtype both have and
compares them (torch.testing.assert_close's tolerances, NaN equal to NaN, the result dtype included).

usage: python3 scripts/opinfo_coverage.py [--compare] [--missing] [--json FILE]
needs: torch (CPU build), expecttest (op_db imports it), ctensor on PYTHONPATH.
"""
import argparse
import json
import sys
import warnings

import numpy as np
import torch

import ctensor as ct

# torch name -> ctensor name, where they differ and ctensor's aliases do not already say it.
RENAMES = {
    "true_divide": "div", "remainder": "mod", "floor_divide": "floor_div", "eq": "equal", "ne": "not_equal",
    "lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "max": "max", "min": "min",
    "amax": "max", "amin": "min", "pow": "pow", "linalg.vector_norm": "norm2",  # ord=2 only
    "rsub": "sub", "__radd__": "add", "__rsub__": "sub", "__rmul__": "mul", "__rdiv__": "div", "__rmod__": "mod",
    "__rpow__": "pow", "__rand__": "bitwise_and", "__ror__": "bitwise_or", "__rxor__": "bitwise_xor",
    "nn.functional.linear": "linear", "nn.functional.softplus": "softplus", "nn.functional.relu": "relu",
    "bmm": "matmul", "mm": "matmul", "float": "cast", "double": "cast", "half": "cast", "bfloat16": "cast",
    "int": "cast", "long": "cast", "bool": "cast", "byte": "cast", "char": "cast", "short": "cast", "to": "cast",
    "max_pool2d_with_indices_backward": "max_pool2d_backward", "native_layer_norm": "layer_norm",
    "native_batch_norm": "batch_norm", "_softmax_backward_data": None, "clamp_min": "clamp", "clamp_max": "clamp",
}

# The families: OpInfo's own classes for elementwise and reductions, names for the rest.
NN_FAMILY = {
    "nn.functional." + n for n in (
        "conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d avg_pool1d avg_pool2d avg_pool3d "
        "max_pool1d max_pool2d max_pool3d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d "
        "adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d batch_norm layer_norm group_norm "
        "instance_norm rms_norm linear scaled_dot_product_attention softmin glu embedding pad one_hot "
        "celu elu selu gelu silu mish hardshrink softshrink hardsigmoid hardswish hardtanh leaky_relu logsigmoid "
        "prelu relu relu6 softplus softsign tanhshrink threshold").split()
} | {"softmax", "log_softmax", "native_layer_norm", "native_batch_norm", "max_pool2d_with_indices_backward",
     "matmul", "mm", "bmm", "addmm", "baddbmm", "addbmm", "addmv", "addr", "mv", "dot", "vdot", "inner", "outer",
     "einsum", "tensordot"}
INDEXING_FAMILY = set(
    "gather take_along_dim index_select scatter scatter_add index_add cat stack constant_pad_nd tril triu repeat "
    "tile flip roll take".split())
CAST_FAMILY = set("float double half bfloat16 int long bool byte char short to".split())
# Not counted: complex-only ops (ctensor has no complex dtypes), the jiterator ops (CUDA-only test ops of
# torch's JIT), the masked-tensor API (masked.*) and hash_tensor.
EXCLUDED = set("angle conj conj_physical real imag polar complex cdouble cfloat chalf isreal view_as_real "
               "view_as_complex hash_tensor".split())
# Elementwise ops torch describes with a plain OpInfo (not a ufunc class): the ternary maps.
ELEMENTWISE_EXTRA = set("addcmul addcdiv clamp lerp where".split())
REDUCTION_EXTRA = set("cumsum cumprod cummax cummin logcumsumexp argmax argmin argsort sort topk kthvalue median "
                      "nanmedian mode quantile nanquantile logsumexp count_nonzero".split())


# Data movement: Python functions of views and copies (ctensor/_movement.py), compared bit for bit below.
MOVEMENT = ("cat", "stack", "flip", "roll", "tile", "repeat", "constant_pad_nd", "pad", "tril", "triu")
# NN functions that are views of the 2-d ops, and topk (argsort and gather): ctensor/_nn_lower.py.
LOWERED = ("conv1d", "conv_transpose1d", "conv_transpose2d", "max_pool1d", "avg_pool1d", "glu", "topk", "conv3d",
           "conv_transpose3d", "max_pool3d", "avg_pool3d")
# Compositions of registry ops (ctensor/_composite.py), and the unary ops with a count parameter, run with
# PyTorch's arguments as the lowered functions are.
COMPOSED_NN = ("rms_norm", "group_norm", "instance_norm", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
               "adaptive_avg_pool3d", "scaled_dot_product_attention", "conv3d", "conv_transpose3d", "avg_pool3d")
COMPOSITE = ("fill", "float_power", "frexp", "isclose", "nan_to_num", "rrelu", "polygamma", "mvlgamma", "rms_norm", "group_norm",
             "instance_norm", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
             "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d", "scaled_dot_product_attention")
# Contractions: Python functions lowered onto ctensor's matmul (ctensor/_contract.py), compared below.
CONTRACTIONS = ("einsum", "tensordot", "dot", "vdot", "inner", "outer", "mv", "addmm", "addmv", "addr", "baddbmm",
                "addbmm")


def family(op):
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, ReductionOpInfo, UnaryUfuncInfo
    if op.name in EXCLUDED or op.name.startswith(("jiterator_", "masked.")):
        return None
    if op.name in CAST_FAMILY:
        return "cast"
    if op.name in NN_FAMILY:
        return "nn"
    if op.name in INDEXING_FAMILY:
        return "indexing"
    if isinstance(op, UnaryUfuncInfo) or isinstance(op, BinaryUfuncInfo) or op.name in ELEMENTWISE_EXTRA:
        return "elementwise"
    if isinstance(op, ReductionOpInfo) or op.name in REDUCTION_EXTRA:
        return "reduction"
    return None


def ct_names():
    names = {}
    for o in ct.ops():
        for n in (o.name,) + tuple(o.python_names):
            names[n] = o.name
    for n in ("linear", "cast") + CONTRACTIONS + MOVEMENT + LOWERED + COMPOSITE:
        if hasattr(ct, n):
            names[n] = n
    return names


def counterpart(op, names):
    n = RENAMES.get(op.name, op.name)
    if n is None:
        return None
    for prefix in ("nn.functional.", "special.", "linalg."):
        if n.startswith(prefix):
            n = n[len(prefix):]
    return names.get(n)


DTYPES = (torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16, torch.bfloat16,
          torch.float32, torch.float64)


def _mp(f):
    import mpmath
    mpmath.mp.dps = 40
    return lambda v: f(mpmath.mpf(v)) if v == v else float("nan")


# Exact references where torch's own float64 is not: torch.special.ndtr(-8.5) in float64 is 0 (the true value
# is 9.5e-18: its float64 kernel loses the lower tail to cancellation).
MPMATH_EXACT = {"special.ndtr": _mp(lambda x: __import__("mpmath").ncdf(x))}
# torch.special's Bessel functions are Cephes' fits, some only to ~1e-6 in float64 (bessel_j0(5.0288) is off by
# 3.6e-7): mpmath's values are the reference (y, k: NaN below 0, -inf / +inf at 0, as torch).
def _bessel(kind, nu, scaled=False):
    def f(x):
        import mpmath
        if x != x:
            return float("nan")
        if kind in "yk" and x < 0:
            return float("nan")
        if x == 0 and kind in "yk":
            return float("-inf") if kind == "y" else float("inf")
        if abs(x) == float("inf"):
            return {"j": 0.0, "y": 0.0, "k": 0.0, "i": 0.0 if scaled else float("inf") * (1 if x > 0 or nu == 0 else -1)}[kind]
        fn = {"j": mpmath.besselj, "y": mpmath.bessely, "i": mpmath.besseli, "k": mpmath.besselk}[kind]
        v = fn(nu, x)
        if scaled:
            v *= mpmath.exp(-abs(x)) if kind == "i" else mpmath.exp(x)
        return v
    return _mp(f)


for _n, _a in {"special.bessel_j0": ("j", 0), "special.bessel_j1": ("j", 1), "special.bessel_y0": ("y", 0),
               "special.bessel_y1": ("y", 1), "i0": ("i", 0), "special.i1": ("i", 1),
               "special.modified_bessel_i0": ("i", 0), "special.modified_bessel_i1": ("i", 1),
               "special.i0e": ("i", 0, True), "special.i1e": ("i", 1, True),
               "special.modified_bessel_k0": ("k", 0), "special.modified_bessel_k1": ("k", 1),
               "special.scaled_modified_bessel_k0": ("k", 0, True),
               "special.scaled_modified_bessel_k1": ("k", 1, True)}.items():
    MPMATH_EXACT[_n] = _bessel(*_a)
# torch.special.airy_ai (Cephes) is off by up to 7e-5 relative in float64 near x = -2.3 (where its fits meet):
# mpmath's Ai is the reference; 0 at +-inf (its limits, as mpmath; torch gives NaN).
MPMATH_EXACT["special.airy_ai"] = _mp(lambda x: 0.0 if abs(x) == float("inf") else __import__("mpmath").airyai(x))


def deliberate(op, args, got, want, name=""):
    """Why a differing result is by design (notes/SEMANTICS.md), or None: the result dtype follows NumPy where
    torch's differs (integer true division gives float64, reciprocal of an integer stays one) with the values
    equal; or ctensor's values are at least as close as torch's to the float64 result (narrow floats are
    computed in float32 and rounded once)."""
    if got.dtype != want.dtype:
        try:
            torch.testing.assert_close(got.to(torch.float64), want.to(torch.float64), equal_nan=True, check_dtype=False,
                                       rtol=1e-6, atol=0 if not got.is_floating_point() else 1e-6)
            return "dtype_rule"
        except (AssertionError, RuntimeError):
            if not got.is_floating_point() and want.is_floating_point():
                # reciprocal of ints: 1/x truncated, 1/0 = 0 (SEMANTICS.md), against torch's float 1 / x
                w = want.to(torch.float64)
                if torch.equal(got.to(torch.float64), torch.where(w.isinf(), torch.zeros_like(w), torch.trunc(w))):
                    return "dtype_rule"
            return None
    if got.is_floating_point():
        exact = op(*[a.to(torch.float64) for a in args])
        mp = MPMATH_EXACT.get(getattr(op, "name", ""))
        if mp is not None and len(args) == 1:  # torch's float64 is not the exact value there
            exact = torch.tensor([float(mp(float(v))) for v in args[0].double().flatten()],
                                 dtype=torch.float64).reshape(exact.shape)
        eg, ew = (got.double() - exact).abs(), (want.double() - exact).abs()
        both_nan = got.isnan() & want.isnan()
        # faithful: within one ulp of the float64 result in got's dtype (a value computed in float64 and rounded
        # once, or twice for the narrow types through float32), where torch's may be further off
        fi = torch.finfo(got.dtype)
        faithful = eg <= fi.eps * torch.maximum(exact.abs(), torch.full_like(exact, fi.tiny))
        if bool(((eg <= ew) | faithful | both_nan | (got.double() == want.double())).all()):
            return "more_accurate"
        # a composition through matmul and reductions (attention, the norms, adaptive pooling) sums in another
        # order than torch: element by element either may be the closer; as a whole, ctensor's largest error
        # from the float64 result is at most twice torch's own
        nm = (name or getattr(op, "name", "")).split(".")[-1]
        fin = ~(exact.isnan() | exact.isinf())
        if nm in COMPOSED_NN and bool(fin.any()) and bool((got.isnan() == want.isnan()).all()):
            if float(eg[fin].max()) <= 2 * float(ew[fin].max()):
                return "as_accurate"
    return None


def _axis_args(op, info, s):
    """The keywords of ctensor's reduce / along-axis call for sample s, or None when the sample asks for something
    ctensor's signature lacks (a dtype=, descending order, torch's dims of a 0-d tensor as a list, ...)."""
    kw = dict(s.kwargs)
    pos = list(s.args)
    lead = {}  # the parameter before dim: quantile's q (one number; linear interpolation), kthvalue's k
    pname = {"quantile": "q", "nanquantile": "q", "kthvalue": "k"}.get(op.name)
    if pname:
        v = kw.pop(pname) if pname in kw else pos.pop(0) if pos else None
        if isinstance(v, torch.Tensor):
            if v.dim():
                return None
            v = v.item()
        if v is None or kw.pop("interpolation", "linear") != "linear":
            return None
        lead[pname] = float(v)
        if op.name == "kthvalue" and "dim" not in kw and len(pos) == 0:
            kw["dim"] = -1  # torch's default dim; ctensor's is every axis
    if op.name == "mode" and "dim" not in kw and len(pos) == 0:
        kw["dim"] = -1
    names = ("dim", "keepdim") if info.kind == "reduce" else ("dim",)
    for n in names:
        if pos:
            if n in kw:
                return None
            kw[n] = pos.pop(0)
    if pos:
        return None
    if kw.pop("descending", False):
        return None
    kw.pop("stable", None)  # argsort: checked as an order, below
    out = {}
    if op.name in ("var", "std"):  # torch's default is the unbiased estimate; ctensor's (NumPy's) correction=0
        unbiased = kw.pop("unbiased", None)
        corr = kw.pop("correction", None)
        out["correction"] = float(corr if corr is not None else 1 if unbiased is None else int(bool(unbiased)))
    if "dim" in kw:
        dim = kw.pop("dim")
        if isinstance(dim, (list, tuple)):
            if info.kind != "reduce":
                return None
            dim = tuple(dim) if len(dim) else None  # torch: an empty dim list reduces every dim
        if dim is not None:
            out["axis"] = dim
    elif info.kind == "along_axis":
        return None
    if "keepdim" in kw:
        out["keepdims"] = bool(kw.pop("keepdim"))
    out.update(lead)
    return None if kw else out


def _samples(op):
    """(dtype, sample) for each of op's CPU samples in every real dtype (an OpInfo that cannot build its samples
    here gives none for that dtype)."""
    for dtype in DTYPES:
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
        except Exception:
            continue
        for s in samples:
            yield dtype, s


def _torch_result(op, s, stats):
    """torch's result for sample s, or None (counted as not taken) when torch refuses it."""
    try:
        return op(s.input, *s.args, **s.kwargs)
    except Exception:
        stats["not_taken"] += 1
        return None


def _ct_result(op, fn, args, kw, dtype, shapes, stats, bad, type_error_is="refused"):
    """ctensor's result as a torch tensor, or None: a ValueError or NotImplementedError counts as refused (with
    the message), a TypeError as `type_error_is` (an argument ctensor's function does not take: "not_taken")."""
    try:
        return torch.from_dlpack(fn(*args, **kw))
    except TypeError as e:
        stats[type_error_is] += 1
        if type_error_is == "refused":
            bad.append((op.name, str(dtype), shapes, "refused: " + str(e)[:160]))
    except (ValueError, NotImplementedError) as e:
        stats["refused"] += 1
        bad.append((op.name, str(dtype), shapes, "refused: " + str(e)[:160]))
    return None


def compare_axis_op(op, name, info, stats, bad):
    """Runs op's CPU samples of a reduction or an along-axis op that ctensor's signature takes: one tensor, a dim
    (or dims) and keepdim. A sort compares its values; an argsort without stable=True compares the order it gives
    (the values it picks), since any order of ties is torch's answer then."""
    fn = getattr(ct, name)
    for dtype, s in _samples(op):
        kw = _axis_args(op, info, s) if isinstance(s.input, torch.Tensor) and s.input.dtype == dtype else None
        if kw is None:
            stats["not_taken"] += 1
            continue
        want = _torch_result(op, s, stats)
        if want is None:
            continue
        if isinstance(want, tuple):  # (values, indices): sort, max/min along a dim
            want = want[0]
        try:
            got = torch.from_dlpack(fn(s.input, **kw))
        except (TypeError, ValueError, NotImplementedError) as e:
            stats["refused"] += 1
            bad.append((op.name, str(dtype), [tuple(s.input.shape)], "refused: " + str(e)[:160]))
            continue
        stats["compared"] += 1
        try:
            if name == "argsort" and not s.kwargs.get("stable", False) and got.dtype == want.dtype:
                ax = kw["axis"]
                x = s.input if s.input.dim() else s.input.reshape(1)
                g, w = (got, want) if s.input.dim() else (got.reshape(1), want.reshape(1))
                torch.testing.assert_close(x.gather(ax, g), x.gather(ax, w), equal_nan=True)
            else:
                torch.testing.assert_close(got, want, equal_nan=True, check_dtype=True, check_stride=False)
        except AssertionError as e:
            def ref(*a, s=s):
                r = op(*a, *s.args, **s.kwargs)
                return r[0] if isinstance(r, tuple) else r
            why = deliberate(ref, [s.input], got, want) if name != "argsort" else None
            if why:
                stats[why] += 1
                continue
            stats["wrong"] += 1
            bad.append((op.name, str(dtype), [tuple(s.input.shape)], str(kw) + " " + str(e).splitlines()[0][:200]))


def _check_sample(name, op, args, got, want, stats, bad, dtype, what):
    """Compares one sample's result; op (the OpInfo, or a function calling it) recomputes in float64 for
    deliberate(); name is the OpInfo's, for the report."""
    stats["compared"] += 1
    try:
        torch.testing.assert_close(got.to(want.dtype) if got.dtype != want.dtype and want.dtype == torch.bool
                                   else got, want, equal_nan=True, check_dtype=True, check_stride=False)
    except AssertionError as e:
        try:
            why = deliberate(op, args, got, want, name)
        except Exception:  # where's condition has no float64 form: no deliberate difference to find
            why = None
        if why:
            stats[why] += 1
            return
        stats["wrong"] += 1
        bad.append((name, str(dtype), what, str(e).splitlines()[0][:200]))


def compare_ternary(op, name, stats, bad):
    """Runs op's CPU samples of a ternary map (addcmul, addcdiv, clamp with tensor bounds, lerp, where): three
    operands, tensors of the sample's dtype (where's condition bool) or Python numbers after the first, and
    PyTorch's value= keyword."""
    fn = getattr(ct, name)
    for dtype, s in _samples(op):
        args = [s.input] + list(s.args)
        if op.name == "where" and len(args) == 3:  # OpInfo's where is (self, condition, other)
            args = [args[1], args[0], args[2]]
        kw = dict(s.kwargs)
        data = args[1:] if op.name == "where" else args
        ok = len(args) == 3 and not set(kw) - {"value"} and isinstance(data[0], torch.Tensor) and all(
            (isinstance(a, torch.Tensor) and a.dtype == dtype) or (isinstance(a, (int, float)) and k > 0)
            for k, a in enumerate(data))
        if op.name == "where":
            ok = ok and isinstance(args[0], torch.Tensor) and args[0].dtype == torch.bool
        if not ok:
            stats["not_taken"] += 1
            continue
        want = _torch_result(op, s, stats)
        if want is None:
            continue
        got = _ct_result(op, fn, args, kw, dtype, [tuple(getattr(a, "shape", ())) for a in args], stats, bad)
        if got is None:
            continue
        orig = [s.input] + list(s.args)
        tpos = [k for k, a in enumerate(orig) if isinstance(a, torch.Tensor)]
        nums = [k for k, a in enumerate(orig) if isinstance(a, (int, float)) and not isinstance(a, bool)]
        if nums and not torch.allclose(got.double(), want.double(), equal_nan=True, rtol=1e-3, atol=1e-5):
            # ctensor rounds a Python number to the tensors' dtype (NumPy's weak scalars); torch's lerp keeps its
            # scalar weight in float32: compare with torch given the rounded number
            rounded = list(orig)
            for k in nums:
                rounded[k] = torch.tensor(orig[k], dtype=dtype).item()
            try:
                torch.testing.assert_close(got, op(rounded[0], *rounded[1:], **s.kwargs), equal_nan=True)
                stats["compared"] += 1
                stats["scalar_rule"] += 1
                continue
            except AssertionError:
                pass

        def ref(*ts, orig=orig, tpos=tpos, s=s):  # op with its tensor operands replaced (deliberate's float64)
            full = list(orig)
            for k, t in zip(tpos, ts):
                full[k] = t
            return op(*full, **s.kwargs)
        _check_sample(op.name, ref, [orig[k] for k in tpos], got, want, stats, bad, dtype,
                      [tuple(getattr(a, "shape", ())) for a in args])


def compare_contraction(op, name, stats, bad):
    """Runs the CPU samples of a contraction (einsum, tensordot, dot, ..., the add*mm family) with PyTorch's
    arguments: tensors of the sample's dtype, torch's keywords (alpha, beta, dims)."""
    fn = getattr(ct, name)
    for dtype, s in _samples(op):
        if op.name == "einsum":
            args, kw = [s.args[0]] + list(s.input), {}
            tensors = list(s.input)
        else:
            args, kw = [s.input] + list(s.args), dict(s.kwargs)
            tensors = args
        if not all(isinstance(t, torch.Tensor) and t.dtype == dtype for t in tensors):
            stats["not_taken"] += 1
            continue
        want = _torch_result(op, s, stats)
        if want is None:
            continue
        got = _ct_result(op, fn, args, kw, dtype, [tuple(t.shape) for t in tensors], stats, bad)
        if got is None:
            continue

        def ref(*ts, s=s):  # op on other tensors (deliberate()'s float64 recomputation)
            return op(list(ts), *s.args, **s.kwargs) if op.name == "einsum" else op(*ts, **s.kwargs)
        _check_sample(op.name, ref, tensors, got, want, stats, bad, dtype,
                      [tuple(t.shape) for t in tensors] + ([kw] if kw else []))


def compare_movement(op, name, stats, bad):
    """Runs the CPU samples of a data-movement op with PyTorch's arguments; the result must be torch's bit for
    bit (a copy computes nothing)."""
    fn = getattr(ct, name)
    for dtype, s in _samples(op):
        tensors = list(s.input) if isinstance(s.input, (list, tuple)) else [s.input]
        if not all(isinstance(t, torch.Tensor) and t.dtype == dtype for t in tensors):
            stats["not_taken"] += 1
            continue
        want = _torch_result(op, s, stats)
        if want is None:
            continue
        got = _ct_result(op, fn, [s.input, *s.args], s.kwargs, dtype, [tuple(t.shape) for t in tensors], stats, bad)
        if got is None:
            continue
        stats["compared"] += 1
        try:
            torch.testing.assert_close(got, want, rtol=0, atol=0, equal_nan=True, check_dtype=True,
                                       check_stride=False)
        except AssertionError as e:
            stats["wrong"] += 1
            bad.append((op.name, str(dtype), [tuple(t.shape) for t in tensors],
                        str(s.args) + str(s.kwargs) + " " + str(e).splitlines()[0][:200]))


def compare_index(op, stats, bad):
    """Runs the CPU samples of an index op (take, gather, index_select, scatter, scatter_add, index_add,
    take_along_dim, embedding, one_hot) through ctensor's function of torch's name and arguments; a keyword ctensor
    does not take (scatter's reduce=) is not taken."""
    fn = getattr(ct, op.name.replace("nn.functional.", ""))
    for dtype, s in _samples(op):
        tensors = [t for t in [s.input, *s.args] if isinstance(t, torch.Tensor)]
        want = _torch_result(op, s, stats)
        if want is None:
            continue
        # OpInfo's embedding is op(weight, indices); F.embedding and ctensor's take the indices first
        args = [s.args[0], s.input, *s.args[1:]] if op.name == "nn.functional.embedding" else [s.input, *s.args]
        got = _ct_result(op, fn, args, s.kwargs, dtype, [tuple(t.shape) for t in tensors], stats, bad, "not_taken")
        if got is None:
            continue
        stats["compared"] += 1
        try:
            torch.testing.assert_close(got, want, equal_nan=True, check_dtype=True, check_stride=False)
        except AssertionError as e:
            stats["wrong"] += 1
            bad.append((op.name, str(dtype), [tuple(t.shape) for t in tensors],
                        str(s.args)[:80] + str(s.kwargs) + " " + str(e).splitlines()[0][:200]))


def compare_lowered(op, name, stats, bad):
    """Runs the CPU samples of a lowered NN function or topk with PyTorch's arguments (tensors of the sample's
    dtype); topk's values are compared, and its indices by the values they pick (ties may pick either)."""
    fn = getattr(ct, name)
    for dtype, s in _samples(op):
        tensors = [t for t in [s.input, *s.args] if isinstance(t, torch.Tensor)]
        if any(t.dtype != dtype for t in tensors):
            stats["not_taken"] += 1
            continue
        want = _torch_result(op, s, stats)
        if want is None:
            continue
        shapes = [tuple(t.shape) for t in tensors]
        try:
            res = fn(s.input, *s.args, **s.kwargs)
        except TypeError:
            stats["not_taken"] += 1
            continue
        except (ValueError, NotImplementedError) as e:
            stats["refused"] += 1
            bad.append((op.name, str(dtype), shapes, "refused: " + str(e)[:160]))
            continue
        if isinstance(res, tuple) and name != "topk":  # a max pooling's (values, indices): torch's indices exactly
            got, idx = torch.from_dlpack(res[0]), torch.from_dlpack(res[1])
            want_idx, want = want[1], want[0]
            if not torch.equal(idx, want_idx):
                stats["compared"] += 1
                stats["wrong"] += 1
                bad.append((op.name, str(dtype), shapes, "indices differ from torch's"))
                continue
        elif isinstance(res, tuple):  # topk: (values, indices)
            got, idx = torch.from_dlpack(res[0]), torch.from_dlpack(res[1])
            want = want[0]
            x = s.input if s.input.dim() else s.input.reshape(1)
            picked = x.gather(s.args[1] if len(s.args) > 1 else s.kwargs.get("dim", -1),
                              idx if s.input.dim() else idx.reshape(1))
            if not torch.equal(picked.reshape(got.shape), got) and not torch.allclose(picked.reshape(got.shape), got,
                                                                                       equal_nan=True):
                stats["compared"] += 1
                stats["wrong"] += 1
                bad.append((op.name, str(dtype), shapes, "indices do not pick the values"))
                continue
        else:
            got = torch.from_dlpack(res)
        def ref(*ts, s=s):  # op on other tensors (deliberate()'s float64 recomputation), float keywords alike
            it = iter(ts)
            kw = {k: v.to(ts[0].dtype) if isinstance(v, torch.Tensor) and v.is_floating_point() else v
                  for k, v in s.kwargs.items()}
            r = op(*[next(it) if isinstance(a, torch.Tensor) else a for a in [s.input, *s.args]], **kw)
            return r[0] if isinstance(r, tuple) else r
        _check_sample(op.name, ref, tensors, got, want, stats, bad, dtype, shapes)


def compare(op, name, stats, bad):
    """Runs op's CPU samples that ctensor's signature takes: 1 or 2 tensor inputs, and keywords ctensor's function
    has by torch's names."""
    fn = getattr(ct, name, None)
    info = next((o for o in ct.ops() if o.name == name), None)
    if fn is not None and info is not None and info.kind in ("reduce", "along_axis"):
        return compare_axis_op(op, name, info, stats, bad)
    if fn is not None and op.name in ELEMENTWISE_EXTRA:
        return compare_ternary(op, name, stats, bad)
    if fn is not None and name in CONTRACTIONS:
        return compare_contraction(op, name, stats, bad)
    if fn is not None and name in MOVEMENT:
        return compare_movement(op, name, stats, bad)
    if info is not None and info.kind == "index":
        return compare_index(op, stats, bad)
    if fn is not None and name in LOWERED + COMPOSITE:
        return compare_lowered(op, name, stats, bad)
    if fn is None or info is None or info.kind not in ("unary", "binary"):
        return
    for dtype, s in _samples(op):
        args = [s.input] + list(s.args)
        if len(args) != info.num_inputs or not all(isinstance(a, torch.Tensor) for a in args):
            stats["not_taken"] += 1
            continue
        # keywords: taken when ctensor's function has them by torch's names (round's decimals, softplus's
        # beta and threshold); an unknown keyword is a TypeError below, "not taken"
        kwargs = dict(s.kwargs)
        if any(a.dtype != dtype for a in args) or any(a.is_complex() for a in args):
            stats["not_taken"] += 1
            continue
        try:
            want = op(*args, **kwargs)
        except Exception:
            stats["not_taken"] += 1
            continue
        cargs = args[::-1] if op.name.startswith("__r") or op.name == "rsub" else args  # reflected: b op a
        try:
            got = torch.from_dlpack(fn(*cargs, **kwargs))
        except TypeError as e:
            if kwargs:
                stats["not_taken"] += 1
                continue
            stats["refused"] += 1
            bad.append((op.name, str(dtype), [tuple(a.shape) for a in args], "refused: " + str(e)[:160]))
            continue
        except (ValueError, NotImplementedError) as e:
            stats["refused"] += 1
            bad.append((op.name, str(dtype), [tuple(a.shape) for a in args], "refused: " + str(e)[:160]))
            continue
        _check_sample(op.name, op if not kwargs else (lambda *a, kw=kwargs: op(*a, **kw)), args, got, want, stats,
                      bad, dtype, [tuple(a.shape) for a in args] + ([kwargs] if kwargs else []))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--compare", action="store_true", help="also run the elementwise and binary ops' samples")
    ap.add_argument("--missing", action="store_true", help="list the torch ops without a ctensor counterpart")
    ap.add_argument("--refusals", action="store_true", help="list the refused samples too")
    ap.add_argument("--json", help="write the figures as JSON")
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    from torch.testing._internal.common_methods_invocations import op_db
    names = ct_names()
    fams = {}
    seen = set()
    stats = {"compared": 0, "wrong": 0, "dtype_rule": 0, "more_accurate": 0, "as_accurate": 0, "scalar_rule": 0,
             "refused": 0,
             "not_taken": 0}
    bad = []
    for op in op_db:
        f = family(op)
        if f is None or op.name in seen:
            continue
        seen.add(op.name)
        c = counterpart(op, names)
        fams.setdefault(f, {"ops": 0, "covered": 0, "missing": []})
        fams[f]["ops"] += 1
        if c:
            fams[f]["covered"] += 1
            if a.compare and (f in ("elementwise", "reduction") or
                              type(op).__name__ in ("UnaryUfuncInfo", "BinaryUfuncInfo") or
                              op.name in ("softmax", "log_softmax", "nn.functional.softmin") or c in CONTRACTIONS + MOVEMENT + LOWERED + COMPOSITE or f == "indexing" or
                              op.name in ("nn.functional.embedding", "nn.functional.one_hot")):
                compare(op, c, stats, bad)
        else:
            fams[f]["missing"].append(op.name)
    total = sum(v["ops"] for v in fams.values())
    covered = sum(v["covered"] for v in fams.values())
    print(f"torch {torch.__version__}, ctensor {ct.__version__}: PyTorch OpInfo operators in ctensor's families")
    for f, v in sorted(fams.items()):
        print(f"  {f:12s} {v['covered']:4d} of {v['ops']:4d} ({100.0 * v['covered'] / v['ops']:.0f}%)")
        if a.missing and v["missing"]:
            print("     missing: " + " ".join(sorted(v["missing"])))
    print(f"  {'all':12s} {covered:4d} of {total:4d} ({100.0 * covered / total:.0f}%)")
    if a.compare:
        print(f"samples compared (every family: maps, reductions, indexing, movement, contractions, NN lowerings; CPU, every real dtype): "
              f"{stats['compared']}: "
              f"{stats['compared'] - stats['wrong'] - stats['dtype_rule'] - stats['more_accurate'] - stats['as_accurate'] - stats['scalar_rule']}"
              f" agree, "
              f"{stats['dtype_rule']} agree in value with NumPy's result dtype where torch's differs, "
              f"{stats['scalar_rule']} agree once torch's Python-number operand is rounded to the tensors' dtype "
              f"(NumPy's weak-scalar rule; torch keeps lerp's scalar weight in float32), "
              f"{stats['more_accurate']} differ where ctensor is the closer to float64 (or within an ulp of it), "
              f"{stats['as_accurate']} differ where a composition through matmul sums in another order (its largest "
              f"error from float64 at most twice torch's own), "
              f"{stats['wrong']} wrong; "
              f"refused (a dtype or feature ctensor does not run, each with its message: integer input to a float-only op, float64 matmul, ...) {stats['refused']}; "
              f"not ctensor's signature (scalars, keywords, mixed dtypes) {stats['not_taken']}")
        groups = {}
        for b in bad:
            kind = "refused" if b[3].startswith("refused") else "wrong"
            groups.setdefault((kind, b[0], b[1]), []).append(b)
        for (kind, name, dt), bs in sorted(groups.items()):
            if kind == "wrong" or a.refusals:
                print(f"   {kind:7s} {name} {dt}: {len(bs)} samples, e.g. {bs[0][2]}: {bs[0][3]}")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"families": fams, "covered": covered, "total": total, "compare": stats, "bad": bad}, fh,
                      indent=1)
    return 1 if stats["wrong"] else 0


if __name__ == "__main__":
    sys.exit(main())
