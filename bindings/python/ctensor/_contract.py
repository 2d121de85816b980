"""Contractions through matmul: einsum, tensordot, dot, vdot, inner, outer, mv and the add*mm family.

Every contraction is lowered, as NumPy's and PyTorch's einsum are, onto the
one batched matmul op of the library (``ct_matmul``): the operands are viewed
(permuted, merged, diagonals taken: views, no copy where the strides allow)
as (batch..., M, K) @ (batch..., K, N), labels that only one operand has are
summed first (``ct_reduce``), and the result is viewed back into the
requested order. So each runs on every device and dtype that matmul runs on
(float32, bfloat16 and float16 on the CPU), with matmul's speed; a C or C++
caller does the same with strided views and ``ct_matmul`` directly.
"""

from __future__ import annotations

import operator
from typing import Sequence

from . import _ctensor
from . import _views
from ._nn import matmul


def _prod(xs) -> int:
    n = 1
    for x in xs:
        n *= x
    return n


def _parse(fn: str, subscripts: str, ndims: Sequence[int]):
    """Labels per operand (ints: letters by code point, ellipsis dims by -1, -2, ... from the right) and the
    output's labels; NumPy's implicit output when there is no '->'."""
    eq = subscripts.replace(" ", "")
    if "->" in eq:
        lhs, rhs = eq.split("->")
    else:
        lhs, rhs = eq, None
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"{fn}: {subscripts!r} names {len(terms)} operands but {len(ndims)} were given")
    ell = 0  # ellipsis dims: the most any operand's ... covers

    def labels(term: str, ndim=None):
        nonlocal ell
        if term.count("...") > 1 or "." in term.replace("...", ""):
            raise ValueError(f"{fn}: {term!r} in {subscripts!r} is not a valid term")
        head, _, tail = term.partition("...")
        for c in head + tail:
            if not c.isalpha():
                raise ValueError(f"{fn}: {c!r} in {subscripts!r} is not a letter")
        if "..." not in term:
            if ndim is not None and len(term) != ndim:
                raise ValueError(f"{fn}: {term!r} has {len(term)} labels for an operand of {ndim} dims")
            return [ord(c) for c in term]
        if ndim is None:  # the output's ...
            k = ell
        else:
            k = ndim - len(head) - len(tail)
            if k < 0:
                raise ValueError(f"{fn}: {term!r} has more labels than the operand's {ndim} dims")
            ell = max(ell, k)
        return [ord(c) for c in head] + [-(k - i) for i in range(k)] + [ord(c) for c in tail]

    ins = [labels(t, n) for t, n in zip(terms, ndims)]
    if rhs is None:
        counts = {}
        for ls in ins:
            for lab in ls:
                counts[lab] = counts.get(lab, 0) + 1
        out = [-(ell - i) for i in range(ell)] + sorted(lab for lab, c in counts.items() if c == 1 and lab > 0)
    else:
        out = labels(rhs)
        if len(set(out)) != len(out):
            raise ValueError(f"{fn}: the output {rhs!r} repeats a label")
        every = {lab for ls in ins for lab in ls}
        for lab in out:
            if lab not in every:
                raise ValueError(f"{fn}: the output label {chr(lab) if lab > 0 else '...'!s} of {subscripts!r} is "
                                 "in no operand")
    return ins, out


def _dedupe(t, labs):
    """Repeated labels of one operand (a trace, "ii->i"): the diagonal, once."""
    labs = list(labs)
    while True:
        seen = {}
        for i, lab in enumerate(labs):
            if lab in seen:
                j = seen[lab]
                t = _views.diagonal(t, 0, j, i)  # the diagonal goes last
                labs = [lb for k, lb in enumerate(labs) if k not in (i, j)] + [lab]
                break
            seen[lab] = i
        else:
            return t, labs


def _sum_out(t, labs, drop):
    """t with the labels in `drop` summed over."""
    axes = tuple(i for i, lab in enumerate(labs) if lab in drop)
    if not axes:
        return t, labs
    t = _ctensor.asarray(_ctensor.sum(t, axis=axes))
    return t, [lab for lab in labs if lab not in drop]


def _pair(a, la, b, lb, keep):
    """a (labels la) contracted with b (labels lb), keeping the labels in `keep`: one batched matmul."""
    sa = dict(zip(la, a.shape))
    sb = dict(zip(lb, b.shape))
    # A label of extent 1 on one side and n on the other broadcasts; contracted, it is summed on the n side.
    for lab in set(la) & set(lb):
        if sa[lab] != sb[lab] and 1 not in (sa[lab], sb[lab]):
            raise ValueError(f"einsum: label {chr(lab) if lab > 0 else '...'} has extents {sa[lab]} and {sb[lab]}")
    both = [lab for lab in la if lab in sb]
    contract = [lab for lab in both if lab not in keep]
    a, la = _sum_out(a, la, {lab for lab in contract if sa[lab] != 1 and sb[lab] == 1})
    b, lb = _sum_out(b, lb, {lab for lab in contract if sb[lab] != 1 and sa[lab] == 1})
    sa, sb = dict(zip(la, a.shape)), dict(zip(lb, b.shape))
    contract = [lab for lab in contract if lab in sa and lab in sb]
    batch = [lab for lab in both if lab in keep]
    free_a = [lab for lab in la if lab not in sb]
    free_b = [lab for lab in lb if lab not in sa]
    # (batch..., M, K) @ (batch..., K, N); the batch extents broadcast in matmul
    ap = _views.permute(a, *[la.index(lab) for lab in batch + free_a + contract])
    bp = _views.permute(b, *[lb.index(lab) for lab in batch + contract + free_b])
    m, k, n = _prod(sa[lab] for lab in free_a), _prod(sa[lab] for lab in contract), _prod(sb[lab] for lab in free_b)
    bat_a, bat_b = [sa[lab] for lab in batch], [sb[lab] for lab in batch]
    am = _views.reshape(ap, *bat_a, m, k)
    bm = _views.reshape(bp, *bat_b, k, n)
    y = _ctensor.asarray(matmul(am, bm))
    bat = [max(p, q) for p, q in zip(bat_a, bat_b)]
    y = _views.reshape(y, *bat, *[sa[lab] for lab in free_a], *[sb[lab] for lab in free_b])
    return y, batch + free_a + free_b


def einsum(subscripts: str, *operands):
    """Einstein summation, NumPy's and torch.einsum's notation ("ij,jk->ik", "...ij,...jk", implicit output,
    traces "ii->i"), evaluated left to right as batched matmuls (see the module's note); operands may also be
    given as one list. The result may be a strided view of matmul's output."""
    if not isinstance(subscripts, str):
        raise TypeError(f"einsum: subscripts must be a str such as 'ij,jk->ik', not {type(subscripts).__name__}")
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum: no operands")
    ts = [_ctensor.asarray(x) for x in operands]
    ins, out = _parse("einsum", subscripts, [t.ndim for t in ts])
    work = []
    for t, labs in zip(ts, ins):
        work.append(_dedupe(t, labs))
    # labels in only one operand and not in the output: summed first
    for i, (t, labs) in enumerate(work):
        others = {lab for j, (_, ls) in enumerate(work) if j != i for lab in ls} | set(out)
        work[i] = _sum_out(t, labs, {lab for lab in labs if lab not in others})
    t, labs = work[0]
    for i in range(1, len(work)):
        keep = set(out) | {lab for _, ls in work[i + 1:] for lab in ls}
        t, labs = _pair(t, labs, work[i][0], work[i][1], keep)
    t, labs = _sum_out(t, labs, {lab for lab in labs if lab not in out})
    # a view of the last result (of the operand itself for "ij->ji", as NumPy's einsum)
    return _views.permute(t, *[labs.index(lab) for lab in out])


def _letters(n: int, start: int = 0) -> str:
    return "".join(chr(ord("a") + start + i) for i in range(n))


def tensordot(a, b, axes=2, *, dims=None):
    """Sum over the last `axes` axes of a and the first of b, or over the axes given as a pair of sequences
    (NumPy's tensordot; torch's name for axes, dims=, is taken too)."""
    if dims is not None:
        axes = dims
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    if isinstance(axes, int) or hasattr(axes, "__index__"):
        n = operator.index(axes)
        if n < 0 or n > min(ta.ndim, tb.ndim):
            raise ValueError(f"tensordot: axes={n} is outside 0..{min(ta.ndim, tb.ndim)}")
        xa, xb = list(range(ta.ndim - n, ta.ndim)), list(range(n))
    else:
        xa, xb = axes
        xa = [xa] if isinstance(xa, int) else list(xa)
        xb = [xb] if isinstance(xb, int) else list(xb)
        if len(xa) != len(xb):
            raise ValueError(f"tensordot: axes {xa} and {xb} differ in length")
        for x, t, name in ((xa, ta, "a"), (xb, tb, "b")):  # (_axis lets a 0-d array take axis 0, as reductions do)
            if x and t.ndim == 0:
                raise ValueError(f"tensordot: {name} is 0-d: it has no axis {x[0]} to sum over")
        xa = [_views._axis("tensordot", x, ta.ndim) for x in xa]
        xb = [_views._axis("tensordot", x, tb.ndim) for x in xb]
    la = _letters(ta.ndim)
    lb = list(_letters(tb.ndim, ta.ndim))
    for i, j in zip(xa, xb):
        if ta.shape[i] != tb.shape[j] and 1 not in (ta.shape[i], tb.shape[j]):  # extent 1 broadcasts (torch's)
            raise ValueError(f"tensordot: axis {i} of a ({ta.shape[i]}) and axis {j} of b ({tb.shape[j]}) differ")
        lb[j] = la[i]
    lb = "".join(lb)
    out = "".join(c for i, c in enumerate(la) if i not in xa) + "".join(c for j, c in enumerate(lb) if j not in xb)
    return einsum(f"{la},{lb}->{out}", ta, tb)


def dot(a, b):
    """NumPy's dot: 1-d with 1-d the inner product, 2-d with 2-d matmul, n-d with 1-d a sum over the last
    axis, n-d with m-d a sum over a's last axis and b's second to last; a 0-d operand multiplies."""
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return _ctensor.multiply(ta, tb)
    la = _letters(ta.ndim - 1) + "z"
    if tb.ndim == 1:
        return einsum(f"{la},z->{la[:-1]}", ta, tb)
    lb = _letters(tb.ndim - 2, ta.ndim - 1) + "z" + "y"
    return einsum(f"{la},{lb}->{la[:-1]}{lb[:-2]}y", ta, tb)


def vdot(a, b):
    """The dot product of a and b flattened (NumPy's and torch's vdot; real dtypes only, so no conjugate)."""
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    if ta.size != tb.size:
        raise ValueError(f"vdot: a has {ta.size} elements and b {tb.size}")
    return einsum("i,i->", _views.reshape(ta, -1), _views.reshape(tb, -1))


def inner(a, b):
    """Sum over the last axes of a and b (NumPy's and torch's inner): shape a.shape[:-1] + b.shape[:-1]."""
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return _ctensor.multiply(ta, tb)
    la, lb = _letters(ta.ndim - 1) + "z", _letters(tb.ndim - 1, ta.ndim - 1) + "z"
    return einsum(f"{la},{lb}->{la[:-1]}{lb[:-1]}", ta, tb)


def outer(a, b):
    """The outer product of a and b flattened: shape (a.size, b.size)."""
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    return einsum("i,j->ij", _views.reshape(ta, -1), _views.reshape(tb, -1))


def mv(mat, vec):
    """mat (n, m) @ vec (m,) -> (n,) (torch.mv)."""
    tm, tv = _ctensor.asarray(mat), _ctensor.asarray(vec)
    if tm.ndim != 2 or tv.ndim != 1:
        raise ValueError(f"mv: mat.shape={list(tm.shape)} must be 2-d and vec.shape={list(tv.shape)} 1-d")
    return einsum("ij,j->i", tm, tv)


def _scaled_add(fn: str, input, prod, beta, alpha):
    """beta * input + alpha * prod, PyTorch's add*mm rule: beta = 0 ignores input (NaN and inf in it too)."""
    y = prod
    if alpha != 1:
        y = _ctensor.multiply(y, alpha)
    if beta == 0:
        return y
    inp = _ctensor.asarray(input)
    if beta != 1:
        inp = _ctensor.multiply(inp, beta)
    return _ctensor.add(inp, y)


_NARROW = ("float16", "bfloat16")


def _addmm_like(fn: str, input, a, b, prod_fn, beta, alpha):
    """beta * input + alpha * prod_fn(a, b, bias). With alpha = beta = 1 the input is matmul's bias (one pass);
    otherwise the scaling is separate passes, in float32 for the 16-bit floats so that the result is rounded
    once, as PyTorch's (which scales in its float32 accumulator)."""
    if beta == 1 and alpha == 1 and fn in ("addmm", "baddbmm"):
        return prod_fn(a, b, input)
    dt = str(_ctensor.asarray(a).dtype)
    if dt in _NARROW:
        wide = [_ctensor.astype(t, "float32") for t in (input, a, b)]
        y = _scaled_add(fn, wide[0], prod_fn(wide[1], wide[2], None), beta, alpha)
        return _ctensor.astype(y, dt)
    return _scaled_add(fn, input, prod_fn(a, b, None), beta, alpha)


def _matmul_checked(fn: str, a, b, nd: int, bias=None):
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    if ta.ndim != nd or tb.ndim != nd:
        raise ValueError(f"{fn}: the operands have shapes {list(ta.shape)} and {list(tb.shape)}; both must be {nd}-d")
    return matmul(ta, tb, bias=bias)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2), input broadcasting to the result (torch.addmm)."""
    return _addmm_like("addmm", input, mat1, mat2, lambda a, b, bias: _matmul_checked("addmm", a, b, 2, bias), beta,
                       alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2) for (b, n, m) @ (b, m, p) (torch.baddbmm)."""
    return _addmm_like("baddbmm", input, batch1, batch2,
                       lambda a, b, bias: _matmul_checked("baddbmm", a, b, 3, bias), beta, alpha)


def _addbmm_prod(a, b, bias=None):
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    if ta.ndim != 3 or tb.ndim != 3:
        raise ValueError(f"addbmm: batch1.shape={list(ta.shape)} and batch2.shape={list(tb.shape)} must be 3-d")
    return einsum("bij,bjk->ik", ta, tb)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum over b of batch1[b] @ batch2[b] (torch.addbmm): one matmul with K = b * m."""
    return _addmm_like("addbmm", input, batch1, batch2, _addbmm_prod, beta, alpha)


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec) (torch.addmv)."""
    return _addmm_like("addmv", input, mat, vec, lambda a, b, bias: mv(a, b), beta, alpha)


def _addr_prod(a, b, bias=None):
    ta, tb = _ctensor.asarray(a), _ctensor.asarray(b)
    if ta.ndim != 1 or tb.ndim != 1:
        raise ValueError(f"addr: vec1.shape={list(ta.shape)} and vec2.shape={list(tb.shape)} must be 1-d")
    return outer(ta, tb)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2) (torch.addr)."""
    return _addmm_like("addr", input, vec1, vec2, _addr_prod, beta, alpha)
