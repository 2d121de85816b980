"""Tensor views (asarray, reshape, permute, slicing, diagonal, broadcast, as_strided) and the contractions lowered
onto matmul (einsum, tensordot, dot, vdot, inner, outer, mv, addmm, addmv, addr, baddbmm, addbmm), against NumPy
(float64 references) and, where the function is PyTorch's, torch."""
import gc
import sys

import numpy as np
import pytest

import ctensor as ct


def _f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


# ---- views ------------------------------------------------------------------

def test_asarray_shares_memory_and_keeps_the_producer_alive():
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = ct.asarray(a)
    assert isinstance(t, ct.Tensor) and t.shape == (2, 3, 4) and t.strides == (12, 4, 1)
    assert t.data_ptr == a.ctypes.data
    a[0, 0, 0] = 42
    assert np.asarray(t)[0, 0, 0] == 42
    assert ct.asarray(t) is t
    before = sys.getrefcount(a)
    v = t[1]  # a view keeps the storage, which keeps a
    del t
    gc.collect()
    assert sys.getrefcount(a) == before
    del a
    gc.collect()
    np.testing.assert_array_equal(np.asarray(v), np.arange(12, 24, dtype=np.float32).reshape(3, 4))


def test_asarray_of_torch_and_read_only_producers():
    torch = pytest.importorskip("torch")
    x = torch.arange(6, dtype=torch.float32).reshape(2, 3)
    t = ct.asarray(x.T)  # strided: the producer's strides
    assert t.shape == (3, 2) and t.strides == (1, 3) and t.data_ptr == x.data_ptr()
    np.testing.assert_allclose(np.asarray(ct.exp(t)), np.exp(x.T.numpy()), rtol=1e-6)
    ro = np.arange(4, dtype=np.float32)
    ro.flags.writeable = False
    r = ct.asarray(ro)
    with pytest.raises(ValueError, match="read-only"):
        ct.exp(np.ones(4, np.float32), out=r)
    with pytest.raises(ValueError, match="read-only"):  # its views too
        ct.exp(np.ones(2, np.float32), out=r[::2])


@pytest.mark.parametrize("key", [
    (1,), (slice(None), 2), (Ellipsis, 1), (slice(1, None), slice(None, None, -2), None, 3), (None, Ellipsis, None),
    (-1, slice(None, 1)), (slice(5, 2), slice(None)), (slice(None, None, -1),), (0, 0, 0),
])
def test_basic_indexing_is_numpys(key):
    a = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    v = ct.asarray(a)[key]
    want = a[key]
    assert v.shape == want.shape
    np.testing.assert_array_equal(np.asarray(v), want)


def test_indexing_errors():
    t = ct.asarray(np.zeros((2, 3), np.float32))
    with pytest.raises(IndexError, match="out of range"):
        t[2]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="advanced indexing"):
        t[[0, 1]]
    # NumPy arrays have __index__ too: a mask or an index array is named, not
    # an "ambiguous truth value" from comparing it with Ellipsis
    with pytest.raises(IndexError, match="advanced indexing"):
        t[np.array([True, False])]
    with pytest.raises(IndexError, match="advanced indexing"):
        t[0, np.array([0, 2])]


@pytest.mark.parametrize("shape,new", [
    ((2, 3, 4), (6, 4)), ((2, 3, 4), (-1,)), ((2, 3, 4), (4, 3, 2)), ((2, 3, 4), (2, 1, 12, 1)), ((0, 3), (3, 0)),
    ((1,), ()), ((), (1, 1)),
])
def test_reshape_views_when_it_can_and_copies_when_it_must(shape, new):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = ct.asarray(a)
    r = t.reshape(*new)
    np.testing.assert_array_equal(np.asarray(r), a.reshape(new))
    if a.size:
        assert r.data_ptr == t.data_ptr  # compact: a view
    tt = t.T  # reversed axes: reshaping to 1-d needs a copy
    flat = tt.reshape(-1)
    np.testing.assert_array_equal(np.asarray(flat), a.T.reshape(-1))
    with pytest.raises(ValueError, match="cannot reshape"):
        t.reshape(a.size + 1)


def test_permute_transpose_diagonal_broadcast_squeeze():
    rng = np.random.default_rng(1)
    a = _f32(rng, 3, 4, 5)
    t = ct.asarray(a)
    np.testing.assert_array_equal(np.asarray(t.permute(2, 0, 1)), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(np.asarray(t.transpose(0, 2)), a.swapaxes(0, 2))
    np.testing.assert_array_equal(np.asarray(t.T), a.T)
    np.testing.assert_array_equal(np.asarray(t.mT), np.swapaxes(a, -1, -2))
    for off in (-2, 0, 1, 4, 7):
        np.testing.assert_array_equal(np.asarray(t.diagonal(off, 1, 2)), a.diagonal(off, 1, 2))
    b = ct.broadcast_to(a[:, :1], (2, 3, 4, 5))
    assert b.strides[0] == 0 and b.strides[2] == 0
    np.testing.assert_array_equal(np.asarray(b), np.broadcast_to(a[:, :1], (2, 3, 4, 5)))
    np.testing.assert_array_equal(np.asarray(ct.squeeze(a[:, :1])), a[:, 0])
    np.testing.assert_array_equal(np.asarray(t.unsqueeze(1)), a[:, None])
    with pytest.raises(ValueError, match="permutation"):
        t.permute(0, 0, 1)
    with pytest.raises(ValueError, match="cannot broadcast"):
        ct.broadcast_to(a, (3, 5, 5))


def test_as_strided_cannot_leave_the_storage():
    a = np.arange(10, dtype=np.float32)
    t = ct.asarray(a)
    w = t.as_strided((4, 3), (2, 1))  # overlapping windows, as NumPy's sliding views
    np.testing.assert_array_equal(np.asarray(w), np.lib.stride_tricks.as_strided(a, (4, 3), (8, 4)))
    r = t.as_strided((10,), (-1,), 9)  # reversed
    np.testing.assert_array_equal(np.asarray(r), a[::-1])
    for shape, strides, off in [((11,), (1,), 0), ((4, 3), (3, 1), 0), ((2,), (-1,), 0), ((1,), (1,), 10),
                                ((3,), (1,), -1)]:
        with pytest.raises(ValueError, match="storage of 40 bytes"):
            t.as_strided(shape, strides, off)
    assert t.as_strided((0, 5), (100, 100), 0).shape == (0, 5)  # empty: reaches nothing
    # a view of a view is checked against the same storage
    with pytest.raises(ValueError, match="storage"):
        t[5:].as_strided((6,), (1,))


def test_views_are_op_arguments_and_outputs():
    rng = np.random.default_rng(2)
    a = _f32(rng, 6, 8)
    out = ct.empty((8, 6))
    ct.exp(ct.asarray(a)[::2].T, out=out[:, ::2])
    np.testing.assert_allclose(np.asarray(out)[:, ::2], np.exp(a[::2].T), rtol=1e-6)


# ---- contractions -------------------------------------------------------------

EINSUM_CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]), ("ij,jk", [(3, 4), (4, 5)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ijk,kl->ijl", [(2, 3, 4), (4, 5)]), ("ijk->kj", [(2, 3, 4)]), ("ii->i", [(4, 4)]), ("ii", [(4, 4)]),
    ("ijk,ijk->", [(2, 3, 4), (2, 3, 4)]), ("i,j->ij", [(3,), (4,)]), ("i,i", [(5,), (5,)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("...k,kl", [(2, 3, 4), (4, 5)]),
    ("ijk,il->jkl", [(3, 4, 5), (3, 2)]), ("bij,bjk->ik", [(3, 4, 5), (3, 5, 2)]),
    ("ab,bc,cd->ad", [(2, 3), (3, 4), (4, 5)]), ("iij,jk->ik", [(3, 3, 4), (4, 2)]), ("ij->", [(3, 4)]),
    ("ab,cd->abcd", [(2, 3), (4, 1)]), ("i,i->i", [(4,), (4,)]), ("ij,ij->ij", [(2, 3), (2, 3)]),
    ("ik,jk->ij", [(0, 3), (2, 3)]), ("ij,jk->ik", [(3, 0), (0, 2)]),
]


@pytest.mark.parametrize("eq,shapes", EINSUM_CASES)
def test_einsum_matches_numpy(eq, shapes):
    rng = np.random.default_rng(3)
    ops = [_f32(rng, *s) for s in shapes]
    got = np.asarray(ct.einsum(eq, *ops))
    want = np.einsum(eq, *[o.astype(np.float64) for o in ops])
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ct.einsum(eq, ops)), want, rtol=1e-5, atol=1e-5)  # operands as a list


def test_einsum_errors():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="names 2 operands"):
        ct.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="2 labels for an operand of 3 dims|3 labels"):
        ct.einsum("ijk->i", a)
    with pytest.raises(ValueError, match="in no operand"):
        ct.einsum("ij->k", a)
    with pytest.raises(ValueError, match="extents 3 and 4"):
        ct.einsum("ij,jk->ik", a, np.ones((4, 2), np.float32))
    with pytest.raises(ValueError, match="not a letter"):
        ct.einsum("i1->i", a)


def test_numpy_named_contractions():
    rng = np.random.default_rng(4)
    a, b = _f32(rng, 2, 3, 4), _f32(rng, 5, 4, 6)
    v, w = _f32(rng, 4), _f32(rng, 4)
    d = lambda x: x.astype(np.float64)  # noqa: E731
    close = lambda got, want: np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)  # noqa: E731
    close(ct.dot(v, w), np.dot(d(v), d(w)))
    close(ct.dot(a, v), np.dot(d(a), d(v)))
    close(ct.dot(a, b), np.dot(d(a), d(b)))
    close(ct.dot(a[0], b[0]), np.dot(d(a[0]), d(b[0])))
    close(ct.vdot(a, a), np.vdot(d(a), d(a)))
    close(ct.inner(a, b[:, :, 0]), np.inner(d(a), d(b[:, :, 0])))
    close(ct.outer(a, v), np.outer(d(a), d(v)))
    close(ct.tensordot(a, b, axes=([2], [1])), np.tensordot(d(a), d(b), axes=([2], [1])))
    c = _f32(rng, 3, 4, 2)
    close(ct.tensordot(a, c, 2), np.tensordot(d(a), d(c), 2))
    close(ct.tensordot(a, c, dims=2), np.tensordot(d(a), d(c), 2))


def test_torch_named_contractions_match_torch():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(5)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    m, v, i2 = r(4, 5), r(5), r(4)
    def close(got, want, rtol=1e-5, atol=1e-5):
        torch.testing.assert_close(torch.from_dlpack(got), want, rtol=rtol, atol=atol)
    close(ct.mv(m, v), torch.mv(m, v))
    close(ct.addmv(i2, m, v, beta=0.5, alpha=2), torch.addmv(i2, m, v, beta=0.5, alpha=2))
    inp, m1, m2 = r(4, 6), r(4, 5), r(5, 6)
    close(ct.addmm(inp, m1, m2), torch.addmm(inp, m1, m2))
    bias = r(6)
    close(ct.addmm(bias, m1, m2), torch.addmm(bias, m1, m2))  # input broadcasts
    close(ct.addmm(inp, m1, m2, beta=0.25, alpha=-1.5), torch.addmm(inp, m1, m2, beta=0.25, alpha=-1.5))
    nan_in = torch.full((4, 6), float("nan"))
    close(ct.addmm(nan_in, m1, m2, beta=0), torch.addmm(nan_in, m1, m2, beta=0))  # beta = 0 ignores input
    b1, b2, bi = r(3, 4, 5), r(3, 5, 2), r(3, 4, 2)
    close(ct.baddbmm(bi, b1, b2), torch.baddbmm(bi, b1, b2))
    close(ct.baddbmm(bi, b1, b2, beta=0.5, alpha=0.3), torch.baddbmm(bi, b1, b2, beta=0.5, alpha=0.3))
    close(ct.addbmm(bi[0], b1, b2, beta=2, alpha=0.5), torch.addbmm(bi[0], b1, b2, beta=2, alpha=0.5))
    close(ct.addr(m, i2, v, beta=0.5, alpha=3), torch.addr(m, i2, v, beta=0.5, alpha=3))
    # bfloat16: scaled in float32 and rounded once, as torch
    bb1, bb2, bbi = b1.bfloat16(), b2.bfloat16(), bi.bfloat16()
    close(ct.baddbmm(bbi, bb1, bb2, beta=0.2, alpha=0.6), torch.baddbmm(bbi, bb1, bb2, beta=0.2, alpha=0.6),
          rtol=1.6e-2, atol=1e-5)
    with pytest.raises(ValueError, match="must be 2-d"):
        ct.addmm(inp, b1, m2)
    with pytest.raises(ValueError, match="must be 3-d"):
        ct.addbmm(inp, m1, m2)


def test_python_scalars_of_one_element():
    # item / bool / float / int as NumPy's: one element only; a reduction's
    # 0-d result in an `if` is its value, not "a Tensor, so true"
    zeros = np.zeros((2, 3), np.float32)
    assert bool(ct.any(zeros)) is False
    assert bool(ct.all(np.ones(4, np.float32))) is True
    s = ct.sum(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert s.item() == 15.0 and isinstance(s.item(), float)
    assert float(s) == 15.0 and int(s) == 15
    i = ct.asarray(np.array([7], np.int32))
    assert i.item() == 7 and isinstance(i.item(), int) and int(i) == 7
    assert ct.asarray(np.array([1.5], np.float32)).to(dtype="bfloat16").item() == 1.5
    t = ct.asarray(zeros)
    assert float(t[np.int64(1), np.array(2)]) == 0.0  # NumPy integer scalars and 0-d arrays index
    assert t.tolist() == [[0.0] * 3] * 2
    for conv in (bool, float, int):
        with pytest.raises(ValueError, match="only a one-element tensor"):
            conv(t)
    with pytest.raises(ValueError, match="shape \\(2, 3\\)"):
        t.item()
    with pytest.raises(ValueError, match="only a one-element tensor"):
        bool(ct.asarray(np.zeros(0, np.float32)))
