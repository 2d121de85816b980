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
REDUCTION_EXTRA = set("cumsum cumprod cummax cummin logcumsumexp argmax argmin argsort sort topk kthvalue median "
                      "nanmedian mode quantile nanquantile logsumexp count_nonzero".split())


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
    if isinstance(op, UnaryUfuncInfo) or isinstance(op, BinaryUfuncInfo):
        return "elementwise"
    if isinstance(op, ReductionOpInfo) or op.name in REDUCTION_EXTRA:
        return "reduction"
    return None


def ct_names():
    names = {}
    for o in ct.ops():
        for n in (o.name,) + tuple(o.python_names):
            names[n] = o.name
    for n in ("linear", "cast"):
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


def deliberate(op, args, got, want):
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
        eg, ew = (got.double() - exact).abs(), (want.double() - exact).abs()
        both_nan = got.isnan() & want.isnan()
        if bool(((eg <= ew) | both_nan | (got.double() == want.double())).all()):
            return "more_accurate"
    return None


def compare(op, name, stats, bad):
    """Runs op's CPU samples that ctensor's signature takes: 1 or 2 tensor inputs, nothing else."""
    fn = getattr(ct, name, None)
    info = next((o for o in ct.ops() if o.name == name), None)
    if fn is None or info is None or info.kind not in ("unary", "binary"):
        return
    for dtype in DTYPES:
        try:
            samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
        except Exception:  # an OpInfo that cannot build its samples here
            continue
        for s in samples:
            args = [s.input] + list(s.args)
            if s.kwargs or len(args) != info.num_inputs or not all(isinstance(a, torch.Tensor) for a in args):
                stats["not_taken"] += 1
                continue
            if any(a.dtype != dtype for a in args) or any(a.is_complex() for a in args):
                stats["not_taken"] += 1
                continue
            try:
                want = op(*args)
            except Exception:
                stats["not_taken"] += 1
                continue
            cargs = args[::-1] if op.name.startswith("__r") or op.name == "rsub" else args  # reflected: b op a
            try:
                got = torch.from_dlpack(fn(*cargs))
            except (TypeError, ValueError, NotImplementedError) as e:
                stats["refused"] += 1
                bad.append((op.name, str(dtype), [tuple(a.shape) for a in args], "refused: " + str(e)[:160]))
                continue
            stats["compared"] += 1
            try:
                torch.testing.assert_close(got.to(want.dtype) if got.dtype != want.dtype and want.dtype == torch.bool
                                           else got, want, equal_nan=True, check_dtype=True, check_stride=False)
            except AssertionError as e:
                why = deliberate(op, args, got, want)
                if why:
                    stats[why] += 1
                    continue
                stats["wrong"] += 1
                bad.append((op.name, str(dtype), [tuple(a.shape) for a in args], str(e).splitlines()[0][:200]))


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
    stats = {"compared": 0, "wrong": 0, "dtype_rule": 0, "more_accurate": 0, "refused": 0, "not_taken": 0}
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
            if a.compare and (f == "elementwise" or type(op).__name__ in ("UnaryUfuncInfo", "BinaryUfuncInfo")):
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
        print(f"samples compared (elementwise and binary, CPU, every real dtype): {stats['compared']}: "
              f"{stats['compared'] - stats['wrong'] - stats['dtype_rule'] - stats['more_accurate']} agree, "
              f"{stats['dtype_rule']} agree in value with NumPy's result dtype where torch's differs, "
              f"{stats['more_accurate']} differ where ctensor is the closer to float64, {stats['wrong']} wrong; "
              f"refused (an integer input to a float-only op: promotion is the caller's) {stats['refused']}; "
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
