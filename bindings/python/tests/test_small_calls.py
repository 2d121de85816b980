"""test_small_calls.py — calls without out= on small arrays: results from the bindings' small-block cache never
share memory, and the cached output shapes and dtypes follow every change of the inputs."""
import threading

import numpy as np
import pytest

import ctensor


def test_results_of_cached_blocks_are_independent():
    a = np.arange(5, dtype=np.float32)
    results = []
    for k in range(200):  # more than the cache holds, with some dying on the way
        r = ctensor.add(a, np.float32(k))
        if k % 3:
            results.append((k, r))
    for k, r in results:
        np.testing.assert_array_equal(np.asarray(r), a + k)
    ptrs = {np.asarray(r).__array_interface__["data"][0] for _, r in results}
    assert len(ptrs) == len(results)


@pytest.mark.parametrize("size", [1, 16, 64, 65, 300, 1024, 1025, 5000])
def test_each_size_class_and_beyond(size):
    a = np.linspace(-2, 2, size, dtype=np.float64)
    for _ in range(3):
        r = ctensor.mul(a, 2.0)
        np.testing.assert_array_equal(np.asarray(r), a * 2.0)
        del r


def test_output_info_follows_shapes_and_dtypes():
    # The same op with new shapes or dtypes after a cached answer: each result
    # has what that call's inputs give.
    cases = [
        (np.ones(3, np.float32), np.ones(3, np.float32)),
        (np.ones((2, 3), np.float32), np.ones(3, np.float32)),
        (np.ones(3, np.float32), np.ones(3, np.float32)),
        (np.ones(3, np.float64), np.ones(3, np.float64)),
        (np.ones((4, 1), np.int32), np.ones((1, 5), np.int32)),
        (np.ones(3, np.float32), np.ones(3, np.float32)),
    ]
    for a, b in cases:
        r = np.asarray(ctensor.add(a, b))
        want = np.add(a, b)
        assert r.shape == want.shape and r.dtype == want.dtype
        np.testing.assert_array_equal(r, want)
    # a failing signature after a cached one still fails with the library's message
    ctensor.add(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="broadcast"):
        ctensor.add(np.ones(3, np.float32), np.ones(4, np.float32))


def test_results_freed_on_other_threads():
    # A block freed on another thread joins that thread's cache; both threads keep working.
    made = [ctensor.add(np.ones(8, np.float32), np.float32(1)) for _ in range(100)]
    errors = []

    def worker():
        try:
            while made:
                made.pop()
            for _ in range(200):
                r = ctensor.add(np.ones(8, np.float32), np.float32(2))
                assert np.asarray(r)[0] == 3
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    assert not errors
    r = ctensor.add(np.ones(8, np.float32), np.float32(1))
    assert np.asarray(r)[0] == 2


def test_reused_result_objects_carry_only_their_own_dims():
    # Dead Tensor objects are reused (nanobind's instance pool) and their dims
    # arrays are not cleared: a 1-d or 0-d result made after a 3-d one that
    # died shows its own shape, strides and values only.
    for _ in range(3):
        big = ctensor.add(np.ones((2, 3, 4), np.float32), np.float32(1))
        assert big.shape == (2, 3, 4) and big.strides == (12, 4, 1)
        del big
        one = ctensor.add(np.arange(5, dtype=np.int16), np.int16(1))
        assert one.shape == (5,) and one.strides == (1,) and one.dtype == "int16"
        np.testing.assert_array_equal(np.asarray(one), np.arange(1, 6, dtype=np.int16))
        del one
        zero = ctensor.sum(np.ones(4, np.float64))
        assert zero.shape == () and zero.strides == ()
        assert float(np.asarray(zero)) == 4.0
        del zero


def test_large_blocks_are_reused_warm_and_never_shared():
    """Results of 2 MiB and more come back from the CPU allocator's cache of freed blocks (no page faults on
    warm memory): a freed block of the same size is reused, live ones are never handed out twice, and the
    values are always the new call's."""
    n = 1 << 20  # 4 MiB of float32
    a = np.linspace(-1, 1, n, dtype=np.float32)
    r1 = ctensor.mul(a, 2.0)
    p1 = np.asarray(r1).__array_interface__["data"][0]
    del r1
    r2 = ctensor.mul(a, 3.0)  # the freed block, reused
    r3 = ctensor.mul(a, 4.0)  # a live block is not: a new one
    p2, p3 = (np.asarray(r).__array_interface__["data"][0] for r in (r2, r3))
    assert p2 == p1 and p3 != p2
    np.testing.assert_array_equal(np.asarray(r2), a * 3)
    np.testing.assert_array_equal(np.asarray(r3), a * 4)
