"""The index ops (ct_index: take, gather, scatter, scatter_add, index_add) under NumPy's and PyTorch's names, against
NumPy and torch (bit for bit: they move or add the same values in the same order), and their errors."""
import numpy as np
import pytest

import ctensor as ct

DTYPES = ["float32", "float64", "int32", "int64", "uint8", "int8", "bool", "float16"]


def _arr(rng, shape, dtype):
    if dtype == "bool":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-5, 6, shape).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_take_matches_numpy(dtype):
    rng = np.random.default_rng(0)
    x = _arr(rng, (4, 5, 6), dtype)
    for axis in (0, 1, -1, 2):
        n = x.shape[axis]
        for ishape in [(), (3,), (2, 3), (0,)]:
            i = rng.integers(-n, n, ishape)
            got = np.asarray(ct.take(x, i, axis))
            np.testing.assert_array_equal(got, np.take(x, i, axis))
            got32 = np.asarray(ct.take(x, i.astype(np.int32), axis))
            np.testing.assert_array_equal(got32, np.take(x, i, axis))
    i = rng.integers(0, x.size, (7,))
    np.testing.assert_array_equal(np.asarray(ct.take(x, i)), np.take(x, i))  # flattened
    # strided and reversed views, out=
    xv, iv = x[:, ::-2, 1:], rng.integers(-3, 3, (2, 2))[:, ::-1]
    out = np.zeros((4, 2, 2, 5), dtype)
    ct.take(xv, iv, 1, out=out)
    np.testing.assert_array_equal(out, np.take(xv, iv, 1))


def test_gather_take_along_axis_and_index_select_match_torch():
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(1)
    x = torch.randn(4, 5, 6, generator=g)
    for dim in (0, 1, 2, -1):
        ishape = list(x.shape)
        ishape[dim] = 3
        ishape[(dim + 1) % 3] -= 1  # smaller off the axis too (torch's rule)
        i = torch.randint(-x.shape[dim], x.shape[dim], ishape, generator=g)
        want = torch.gather(x, dim, i % x.shape[dim])
        assert torch.equal(torch.from_dlpack(ct.gather(x, dim, i)), want)
        assert torch.equal(torch.from_dlpack(ct.index_select(x, dim, i.flatten()[:4])),
                           torch.index_select(x, dim, i.flatten()[:4] % x.shape[dim]))
    # NumPy's take_along_axis broadcasts x and the indices off the axis
    a = np.arange(12.0).reshape(3, 4)
    idx = np.array([[0, 3, 1]])
    np.testing.assert_array_equal(np.asarray(ct.take_along_axis(a, idx, 1)), np.take_along_axis(a, idx, 1))
    np.testing.assert_array_equal(np.asarray(ct.take_along_axis(a, np.array([[2], [0], [1]]), axis=1)),
                                  np.take_along_axis(a, np.array([[2], [0], [1]]), axis=1))
    np.testing.assert_array_equal(np.asarray(ct.take_along_dim(a, np.array([5, 0]))), a.flatten()[[5, 0]])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "bfloat16"])
def test_scatter_add_and_index_add_match_torch(dtype):
    torch = pytest.importorskip("torch")
    tdt = getattr(torch, dtype)
    g = torch.Generator().manual_seed(2)
    x = torch.randint(-5, 6, (4, 7), generator=g).to(tdt)
    src = torch.randint(-5, 6, (4, 9), generator=g).to(tdt)
    i = torch.randint(0, 7, (4, 9), generator=g)  # 9 into 7: repeats
    assert torch.equal(torch.from_dlpack(ct.scatter_add(x, 1, i, src)), torch.scatter_add(x, 1, i, src))
    i1 = torch.randint(0, 4, (6,), generator=g)
    s1 = torch.randint(-5, 6, (6, 7), generator=g).to(tdt)
    alpha = 2 if not tdt.is_floating_point else 0.5
    assert torch.equal(torch.from_dlpack(ct.index_add(x, 0, i1, s1, alpha=alpha)),
                       torch.index_add(x, 0, i1, s1, alpha=alpha))
    # in place: out is x
    y = x.clone()
    ct.scatter_add(y, 1, i, src, out=y)
    assert torch.equal(y, torch.scatter_add(x, 1, i, src))


def test_scatter_last_write_wins_and_value():
    torch = pytest.importorskip("torch")
    x = torch.zeros(2, 5)
    i = torch.tensor([[1, 3, 1, 1], [0, 0, 4, 0]])
    src = torch.arange(8.0).reshape(2, 4)
    got = torch.from_dlpack(ct.scatter(x, 1, i, src))
    want = x.clone()
    for r in range(2):
        for k in range(4):  # in order along the axis: the last write to a position stays
            want[r, i[r, k]] = src[r, k]
    assert torch.equal(got, want)
    # without repeats torch agrees; a number as src is torch's value=
    j = torch.tensor([[4, 0], [2, 1]])
    assert torch.equal(torch.from_dlpack(ct.scatter(x, 1, j, src[:, :2])), torch.scatter(x, 1, j, src[:, :2]))
    assert torch.equal(torch.from_dlpack(ct.scatter(x, 1, j, 7.5)), torch.scatter(x, 1, j, 7.5))


def test_embedding_and_one_hot_match_torch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    w = torch.randn(10, 4)
    idx = torch.tensor([[1, 9, 0], [3, 3, 2]])
    assert torch.equal(torch.from_dlpack(ct.embedding(idx, w)), F.embedding(idx, w))
    assert torch.equal(torch.from_dlpack(ct.one_hot(idx)), F.one_hot(idx))
    assert torch.equal(torch.from_dlpack(ct.one_hot(idx, 12)), F.one_hot(idx, 12))
    with pytest.raises(ValueError, match="non-negative"):
        ct.one_hot(torch.tensor([-1, 2]))
    with pytest.raises(NotImplementedError, match="max_norm"):
        ct.embedding(idx, w, max_norm=1.0)


def test_index_errors_name_the_problem_and_leave_out_untouched():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = np.full((3, 2), 7, np.float32)
    with pytest.raises(ValueError, match=r"index\[1,0\]=4 is outside \[-4, 4\) for axis 1"):
        ct.gather(x, 1, np.array([[0, 1], [4, 0], [1, 1]]), out=out)
    assert (out == 7).all()
    with pytest.raises(ValueError, match=r"=-4 is outside \[-3, 3\)"):
        ct.take(x, np.array([-4]), 0)
    with pytest.raises(TypeError, match="index.dtype=float64"):
        ct.take(x, np.array([0.0]), 0)
    with pytest.raises(ValueError, match="may not exceed x's off the axis"):
        ct.gather(x, 1, np.zeros((4, 2), np.int64))
    with pytest.raises(ValueError, match="index's length"):
        ct.index_add(x, 0, np.array([0, 1]), np.ones((3, 4), np.float32))
    with pytest.raises(ValueError, match=r"must be an integer \(\|alpha\| < 9.2e18\) for int32"):
        ct.index_add(x.astype(np.int32), 0, np.array([0]), np.ones((1, 4), np.int32), alpha=0.5)
    with pytest.raises((ValueError, IndexError), match="axis"):
        ct.take(x, np.array([0]), 2)


def test_index_ops_in_the_registry():
    names = {o.name: o for o in ct.ops() if o.kind == "index"}
    assert set(names) == {"take", "gather", "scatter", "scatter_add", "index_add"}
    assert "index_select" in names["take"].python_names and "take_along_axis" in names["gather"].python_names
    assert len(names["index_add"].params) == 1


@pytest.mark.skipif("opencl:0" not in {str(d) for d in ct.devices()}, reason="no OpenCL device")
def test_index_ops_on_opencl_match_the_cpu():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((6, 7)).astype(np.float32)
    i = rng.integers(-7, 7, (6, 9))
    src = rng.standard_normal((6, 9)).astype(np.float32)
    on = lambda a: ct.copy(a, "opencl:0")  # noqa: E731
    back = lambda t: np.asarray(t.to("cpu"))  # noqa: E731
    np.testing.assert_array_equal(back(ct.take(on(x), on(i[:2]), 1)), np.asarray(ct.take(x, i[:2], 1)))
    np.testing.assert_array_equal(back(ct.gather(on(x), 1, on(i[:, :5]))), np.asarray(ct.gather(x, 1, i[:, :5])))
    np.testing.assert_array_equal(back(ct.scatter(on(x), 1, on(i), on(src))), np.asarray(ct.scatter(x, 1, i, src)))
    # the adds in order along the axis: the CPU's float32 sums exactly (PoCL may contract a * b + c only with alpha)
    np.testing.assert_array_equal(back(ct.scatter_add(on(x), 1, on(i), on(src))),
                                  np.asarray(ct.scatter_add(x, 1, i, src)))
    i1 = rng.integers(0, 6, (9,)).astype(np.int32)
    s1 = rng.standard_normal((9, 7)).astype(np.float32)
    np.testing.assert_allclose(back(ct.index_add(on(x), 0, on(i1), on(s1), alpha=0.5)),
                               np.asarray(ct.index_add(x, 0, i1, s1, alpha=0.5)), rtol=1e-6, atol=1e-6)
    # a device cannot report a bad index without synchronising: it reads 0 and touches nothing outside x
    bad = np.array([[0, 99, -100]])
    np.testing.assert_array_equal(back(ct.gather(on(x[:1]), 1, on(bad))), [[x[0, 0], 0, 0]])
