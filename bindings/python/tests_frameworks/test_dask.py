"""ctensor.dask: ctensor kernels on the chunks of Dask arrays, on a distributed.LocalCluster with two worker
processes; every result equals NumPy's computation on the whole array."""
import numpy as np
import pytest

import dask.array as da
from distributed import Client, LocalCluster

import ctensor
import ctensor.dask as cd


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=2, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as c:
        yield c


def _x(shape, chunks, lo=-2.0, hi=2.0, seed=0, dtype=np.float32):
    a = (np.random.default_rng(seed).random(shape) * (hi - lo) + lo).astype(dtype)
    return a, da.from_array(a, chunks=chunks)


def test_the_work_runs_on_the_workers(client):
    info = client.scheduler_info()
    assert len(info["workers"]) == 2
    pids = set(client.run(lambda: __import__("os").getpid()).values())
    assert len(pids) == 2 and __import__("os").getpid() not in pids


def test_threads_per_task_on_every_worker(client):
    before = ctensor.get_num_threads()
    try:
        cd.set_num_threads(1, client)
        assert set(client.run(cd._set_threads, 1).values()) == {1}  # each worker reports its count
    finally:
        cd.set_num_threads(before, client)


def test_map_blocks_elementwise_and_broadcast(client):
    a, x = _x((300, 200), (64, 50))
    b, y = _x((200,), (50,), seed=1)
    np.testing.assert_allclose(cd.map_blocks("exp", x).compute(), np.exp(a), rtol=1e-6)
    np.testing.assert_allclose(cd.map_blocks("add", x, y).compute(), a + b, rtol=1e-6)
    np.testing.assert_allclose(cd.map_blocks("leaky_relu", x, negative_slope=0.2).compute(),
                               np.where(a > 0, a, 0.2 * a), rtol=1e-6)
    got = cd.map_blocks("where", cd.map_blocks("greater", x, y), x, y)
    np.testing.assert_allclose(got.compute(), np.maximum(a, b))
    assert cd.map_blocks("isnan", x).dtype == np.bool_  # from the shape query, before anything runs


@pytest.mark.parametrize("op,ref", [("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod),
                                    ("mean", np.mean), ("nansum", np.nansum), ("norm2", None),
                                    ("logsumexp", None), ("count_nonzero", np.count_nonzero), ("any", np.any),
                                    ("all", np.all)])
@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1)])
def test_reductions(client, op, ref, axis):
    lo, hi = (0.995, 1.005) if op == "prod" else (0.5, 1.5)  # a product of 33410 values that stays normal
    a, x = _x((257, 130), (40, 33), lo=lo, hi=hi, dtype=np.float64)
    if ref is None:
        ref = {"norm2": lambda v, axis: np.sqrt((v * v).sum(axis)),
               "logsumexp": lambda v, axis: np.log(np.exp(v).sum(axis))}[op]
    got = cd.reduction(op, x, axis=axis).compute()
    want = ref(a, axis=axis)
    np.testing.assert_allclose(got, want, rtol=1e-9 if op != "prod" else 1e-6)
    kept = cd.reduction(op, x, axis=axis, keepdims=True).compute()
    axes = (0, 1) if axis is None else (axis,) if isinstance(axis, int) else axis
    assert kept.shape == tuple(1 if d in axes else n for d, n in enumerate(a.shape))
    np.testing.assert_allclose(kept.reshape(np.shape(want)), want, rtol=1e-9 if op != "prod" else 1e-6)


def test_pipeline_elementwise_then_reduction(client):
    a, x = _x((1000, 400), (250, 400))
    y = cd.reduction("sum", cd.map_blocks("mul", cd.map_blocks("tanh", x), x), axis=1)
    np.testing.assert_allclose(y.compute(), (np.tanh(a.astype(np.float64)) * a).sum(1), rtol=2e-5, atol=1e-4)


def test_conv2d_with_halos_equals_the_whole_array(client):
    a, x = _x((2, 3, 40, 36), (1, 3, 13, 10))
    w = np.random.default_rng(5).standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = np.arange(4, dtype=np.float32)
    got = cd.conv2d(x, w, b).compute()
    want = np.asarray(ctensor.conv2d(a, w, b, padding=1))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    w5 = np.random.default_rng(6).standard_normal((2, 3, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(cd.conv2d(x, w5).compute(), np.asarray(ctensor.conv2d(a, w5, padding=(2, 1))),
                               rtol=1e-5, atol=1e-5)


def test_max_pool2d_on_chunks(client):
    a, x = _x((2, 3, 41, 37), (2, 3, 11, 9))
    np.testing.assert_array_equal(cd.max_pool2d(x, 2).compute(), np.asarray(ctensor.max_pool2d(a, 2)))
    np.testing.assert_array_equal(cd.max_pool2d(x, 3, 1).compute(), np.asarray(ctensor.max_pool2d(a, 3, 1, 1)))


def test_errors():
    _, x = _x((4, 4), (2, 2))
    with pytest.raises(NotImplementedError, match="median"):
        cd.reduction("median", x)
    with pytest.raises(ValueError, match="no ctensor op"):
        cd.map_blocks("no_such_op", x)
