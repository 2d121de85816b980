"""The Python API itself: zero copy, the Tensor result object, DLPack in and
out (with a ctypes-made producer), read-only handling, errors and their
messages, outputs untouched after failures, the GIL, and module metadata."""
import gc
import os
import re
import sys
import threading

import numpy as np
import pytest

import ctensor as ct
from conftest import (ALL_DTYPES, DLPackProducer, capsule_name, np_dtype, to_numpy)

HEADER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "include", "ctensor",
                      "ctensor.h")


# ---------------------------------------------------------------------------
# zero copy
# ---------------------------------------------------------------------------

def test_out_write_is_visible_in_the_callers_array(rng):
    a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    b = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    out = np.zeros((3, 4), np.float32)
    r = ct.add(a, b, out=out)
    np.testing.assert_array_equal(out, a + b)
    assert r is out  # the caller's object comes back
    # in place: x is written through
    x = a.copy()
    ct.exp(x, out=x)
    np.testing.assert_allclose(x, np.exp(a), rtol=1e-6)
    # the same buffer seen through a second view
    base = np.zeros(8, np.float32)
    view = base[2:6]
    ct.add_scalar(np.ones(4, np.float32), 2.0, out=view)
    np.testing.assert_array_equal(base, [0, 0, 3, 3, 3, 3, 0, 0])


def test_strided_views_and_negative_steps(rng):
    a = rng.uniform(-1, 1, (4, 6)).astype(np.float64)
    for v in (a[:, ::2], a.T, a[::-1], a[::-2, ::-3], a[1:3, 1:5]):
        np.testing.assert_array_equal(np.asarray(ct.neg(v)), -v)
        np.testing.assert_array_equal(np.asarray(ct.mul(v, v)), v * v)
    # out= a negative-step view: written where the view points, gaps untouched
    buf = np.full((4, 6), 7.0)
    ct.neg(a[:, :3], out=buf[::-1, ::-2])
    np.testing.assert_array_equal(buf[::-1, ::-2], -a[:, :3])
    np.testing.assert_array_equal(buf[::-1, -2::-2], 7.0)
    # a broadcast (stride 0) input
    row = np.broadcast_to(np.arange(6.0), (4, 6))
    np.testing.assert_array_equal(np.asarray(ct.add(row, a)), row + a)
    # an out with a zero stride on an extent > 1 is rejected
    with pytest.raises(ValueError):
        ct.neg(a, out=np.broadcast_to(np.zeros(6), (4, 6)))


@pytest.mark.parametrize("versioned", [False, True])
@pytest.mark.parametrize("with_deleter", [False, True])
def test_dlpack_input_with_byte_offset(versioned, with_deleter):
    base = np.arange(10, dtype=np.float32)
    p = DLPackProducer(base, shape=(8,), strides=(1,), byte_offset=8, versioned=versioned,
                       with_deleter=with_deleter)
    r = ct.neg(p)
    np.testing.assert_array_equal(np.asarray(r), -base[2:])
    assert p.produced == ["dltensor_versioned" if versioned else "dltensor"], (p.produced, p.calls)
    if versioned:
        assert p.calls[-1]["max_version"] is not None and tuple(p.calls[-1]["max_version"])[0] >= 1
    gc.collect()
    if with_deleter:
        assert p.deleter_calls == 1  # consumed once, released once
    # 2-d, strided, offset: rows 1..3 of a (4, 6) buffer, every other column
    base2 = np.arange(24, dtype=np.float64).reshape(4, 6)
    p2 = DLPackProducer(base2, shape=(3, 3), strides=(6, 2), byte_offset=6 * 8, versioned=versioned)
    np.testing.assert_array_equal(np.asarray(ct.mul_scalar(p2, 2.0)), base2[1:, ::2] * 2)


@pytest.mark.parametrize("versioned", [False, True])
def test_dlpack_out_with_byte_offset(versioned):
    base = np.zeros(10, np.float32)
    p = DLPackProducer(base, shape=(8,), strides=(1,), byte_offset=8, versioned=versioned, with_deleter=True)
    ct.add_scalar(np.arange(8, dtype=np.float32), 1.0, out=p)
    np.testing.assert_array_equal(base, [0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    gc.collect()
    assert p.deleter_calls == 1


def test_dlpack_negative_strides_and_bfloat16():
    bits = np.array([0x3F80, 0x4000, 0x4040, 0x4080, 0xBF80, 0x0000], np.uint16)  # 1 2 3 4 -1 0 in bfloat16
    p = DLPackProducer(bits[::-1], dtype="bfloat16")  # a negative stride through DLPack
    r = ct.cast(p, "float32")
    np.testing.assert_array_equal(np.asarray(r), [0, -1, 4, 3, 2, 1])
    assert r.dtype == "float32"


def test_dlpack_read_only_flag():
    base = np.arange(6, dtype=np.float32)
    ro = DLPackProducer(base, versioned=True, readonly=True)
    np.testing.assert_array_equal(np.asarray(ct.neg(ro)), -base)  # read-only input: fine
    assert ro.produced == ["dltensor_versioned"]
    out = np.arange(6, dtype=np.float32)
    ro_out = DLPackProducer(out, versioned=True, readonly=True)
    with pytest.raises(ValueError):
        ct.neg(base, out=ro_out)
    np.testing.assert_array_equal(out, np.arange(6))


def test_read_only_inputs_and_out():
    a = np.arange(6, dtype=np.float32)
    a.flags.writeable = False
    np.testing.assert_array_equal(np.asarray(ct.square(a)), a * a)
    out = np.full(6, 3, np.float32)
    out.flags.writeable = False
    with pytest.raises(ValueError) as e:
        ct.square(a, out=out)
    assert "read-only" in str(e.value)
    np.testing.assert_array_equal(out, 3)
    with pytest.raises(ValueError):
        ct.sum(a, out=_ro(np.zeros((), np.float32)))
    with pytest.raises(ValueError):
        ct.matmul(a.reshape(2, 3), a.reshape(3, 2), out=_ro(np.zeros((2, 2), np.float32)))
    # read-only memoryview / bytes input
    mv = memoryview(bytes(np.arange(4, dtype=np.int32).tobytes())).cast("i")
    np.testing.assert_array_equal(np.asarray(ct.neg(mv)), [0, -1, -2, -3])


def _ro(a):
    a.flags.writeable = False
    return a


# ---------------------------------------------------------------------------
# the Tensor result object
# ---------------------------------------------------------------------------

def test_tensor_attributes(rng):
    a = rng.uniform(-1, 1, (2, 3, 4)).astype(np.float32)
    r = ct.neg(a.transpose(2, 0, 1))  # a strided input gives a dense result
    assert isinstance(r, ct.Tensor)
    assert r.shape == (4, 2, 3)
    assert r.ndim == 3 and r.size == 24 and len(r) == 4
    assert r.dtype == ct.float32 and str(r.dtype) == "float32"
    assert r.strides == (6, 3, 1)
    assert r.nbytes == 96
    assert r.device == "cpu"
    assert "float32" in repr(r)
    s = ct.sum(a)
    assert s.shape == () and s.ndim == 0 and s.size == 1 and s.strides == ()
    with pytest.raises(TypeError):
        len(s)  # a 0-d tensor has no length
    e = ct.empty((0, 3), "int16")
    assert e.shape == (0, 3) and e.size == 0 and e.nbytes == 0 and e.dtype == "int16"
    assert ct.empty((2,)).dtype == "float32"
    for name in ALL_DTYPES:
        t = ct.empty((2, 2), name)
        assert t.dtype == name
        assert t.nbytes == 4 * np.dtype(np_dtype(name)).itemsize


def test_tensor_shares_memory_with_numpy(rng):
    a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    r = ct.add(a, a)
    v = np.from_dlpack(r)
    assert v.shape == (3, 4) and v.dtype == np.float32
    v[1, 2] = 123.0  # write through the NumPy view ...
    assert np.asarray(r)[1, 2] == 123.0  # ... read through the tensor
    assert memoryview(r)[1, 2] == 123.0
    assert r.numpy()[1, 2] == 123.0
    w = np.asarray(r)
    w[0, 0] = -5.0
    assert v[0, 0] == -5.0
    assert np.shares_memory(v, w)
    assert np.shares_memory(r.numpy(), v)
    # memoryview
    m = memoryview(r)
    assert m.format == "f" and m.shape == (3, 4) and m.strides == (16, 4) and not m.readonly
    # np.asarray with a dtype converts (a copy)
    c = np.asarray(r, dtype=np.float64)
    assert c.dtype == np.float64
    c[0, 1] = 1e9
    assert v[0, 1] != 1e9
    # a tensor is an input like any array, and stays valid while views exist
    r2 = ct.mul(r, r)
    np.testing.assert_array_equal(np.asarray(r2), np.asarray(r) ** 2)
    view = np.from_dlpack(r2)
    expect = view.copy()
    del r2
    gc.collect()
    np.testing.assert_array_equal(view, expect)


def test_tensor_dlpack_protocol():
    r = ct.neg(np.arange(6, dtype=np.int16).reshape(2, 3))
    assert r.__dlpack_device__() == (1, 0)
    assert capsule_name(r.__dlpack__()) == "dltensor"
    assert capsule_name(r.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    assert capsule_name(r.__dlpack__(max_version=(1, 3))) == "dltensor_versioned"
    assert capsule_name(r.__dlpack__(max_version=(0, 8))) == "dltensor"
    assert capsule_name(r.__dlpack__(stream=None, dl_device=(1, 0), copy=False)) == "dltensor"
    np.testing.assert_array_equal(np.from_dlpack(r), -np.arange(6).reshape(2, 3))


def test_tensor_bfloat16_buffer_error():
    b = ct.cast(np.ones((2, 2), np.float32), "bfloat16")
    with pytest.raises(BufferError):
        memoryview(b)
    assert b.dtype == ct.bfloat16 and b.nbytes == 8
    assert capsule_name(b.__dlpack__(max_version=(1, 0))) == "dltensor_versioned"
    np.testing.assert_array_equal(to_numpy(b), 1.0)


def test_every_dtype_round_trips_through_numpy(rng):
    for name in ALL_DTYPES:
        if name == "bfloat16":
            continue
        a = (rng.uniform(-50, 50, (3, 2)) if name != "bool" else rng.integers(0, 2, (3, 2))).astype(name)
        r = ct.where(np.ones((3, 2), bool), a, a)
        assert r.dtype == name
        back = np.from_dlpack(r)
        assert back.dtype == np.dtype(name)
        np.testing.assert_array_equal(back, a)
        np.testing.assert_array_equal(np.asarray(memoryview(r)), a)


# ---------------------------------------------------------------------------
# errors
# ---------------------------------------------------------------------------

def test_error_types_and_messages():
    with pytest.raises(ValueError) as e:
        ct.add(np.zeros((2, 4), np.float32), np.zeros(3, np.float32))
    assert str(e.value).startswith("ct_binary: b.shape=[3] does not broadcast with a.shape=[2,4]")
    with pytest.raises(TypeError) as e:
        ct.add(np.zeros(3, np.int32), np.zeros(3, np.float32))
    assert "ct_binary" in str(e.value) and "float32" in str(e.value) and "int32" in str(e.value)
    with pytest.raises(TypeError) as e:
        ct.neg([1.0, 2.0])
    assert "list" in str(e.value)
    with pytest.raises(TypeError):
        ct.neg(None)
    with pytest.raises(TypeError):
        ct.neg("abc")
    with pytest.raises(NotImplementedError) as e:
        ct.sqrt(np.zeros(3, np.int8))
    assert "sqrt is not defined for int8" in str(e.value)
    with pytest.raises(NotImplementedError) as e:
        ct.conv2d(np.zeros((1, 2, 4, 4), np.float16), np.zeros((3, 2, 3, 3), np.float16))
    with pytest.raises(ValueError) as e:
        ct.neg(np.zeros((2, 3), np.float32), out=np.zeros((3, 2), np.float32))
    assert "ct_unary" in str(e.value) and "[2,3]" in str(e.value) and "[3,2]" in str(e.value)
    with pytest.raises(TypeError) as e:
        ct.neg(np.zeros(3, np.float32), out=np.zeros(3, np.float64))
    assert "out" in str(e.value)
    with pytest.raises(ValueError):
        ct.sum(np.zeros((2, 3)), axis=5)
    with pytest.raises(ValueError):
        ct.ops(category="bogus")
    with pytest.raises(ValueError):
        ct.empty((-1, 2))
    with pytest.raises((TypeError, ValueError)):
        ct.empty((2,), "complex64")


def test_numpy_layouts_the_library_cannot_take():
    with pytest.raises(TypeError) as e:
        ct.neg(np.arange(4, dtype=">f4"))  # big-endian
    assert "big-endian" in str(e.value)
    raw = np.zeros(32, np.uint8)
    odd_stride = np.ndarray((3,), dtype=np.float32, buffer=raw, offset=0, strides=(6,))
    with pytest.raises(ValueError) as e:
        ct.neg(odd_stride)  # a byte stride that is not whole elements
    assert "itemsize" in str(e.value)
    # a read-only out is refused before anything is written
    ro = np.zeros(3, np.float32)
    ro.flags.writeable = False
    with pytest.raises(ValueError):
        ct.neg(np.ones(3, np.float32), out=ro)
    np.testing.assert_array_equal(ro, 0)


def _unaligned(a, shift=1):
    """A copy of a whose data sits `shift` bytes past an aligned address (flags.aligned False)."""
    a = np.ascontiguousarray(a)
    raw = bytearray(a.nbytes + 64 + shift)
    base = np.frombuffer(raw, np.uint8)
    start = (-base.ctypes.data) % 64 + shift
    u = np.frombuffer(raw, dtype=a.dtype, offset=start, count=a.size).reshape(a.shape)
    u[...] = a
    return u


def test_unaligned_numpy_arrays():
    # What a Dask worker hands over after unpickling a chunk from a network
    # frame: legal in NumPy (flags.aligned is False). ctensor used to refuse
    # it ("x.data + byte_offset ... is not aligned to its 4-byte elements").
    x = np.frombuffer(bytearray(401), dtype=np.float32, offset=1, count=100)
    assert not x.flags.aligned
    np.testing.assert_array_equal(to_numpy(ct.exp(x)), np.exp(x))
    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 33)).astype(np.float32)
    b = rng.standard_normal((33,)).astype(np.float32)
    for shift in (1, 2, 3):
        au, bu = _unaligned(a, shift), _unaligned(b, 4 - shift)
        assert not au.flags.aligned and not bu.flags.aligned
        # elementwise, binary (broadcast b), a strided unaligned view
        np.testing.assert_array_equal(to_numpy(ct.neg(au)), -a)
        np.testing.assert_allclose(to_numpy(ct.tanh(au[:, ::2])), np.tanh(a[:, ::2]), rtol=1e-6)
        np.testing.assert_array_equal(to_numpy(ct.add(au, bu)), a + b)
        np.testing.assert_array_equal(to_numpy(ct.multiply(au.T, 2.0)), a.T * 2)
        # reductions along each axis, and all of them
        np.testing.assert_allclose(to_numpy(ct.sum(au, axis=0)), a.sum(axis=0, dtype=np.float64), rtol=1e-6)
        np.testing.assert_allclose(to_numpy(ct.sum(au, axis=1)), a.sum(axis=1, dtype=np.float64), rtol=1e-6)
        assert int(to_numpy(ct.argmax(au))) == int(np.argmax(a))
        np.testing.assert_allclose(to_numpy(ct.var(au, axis=1)), a.var(axis=1), rtol=1e-5)
        # softmax along either axis
        for axis in (0, 1):
            e = np.exp(a - a.max(axis=axis, keepdims=True))
            np.testing.assert_allclose(to_numpy(ct.softmax(au, axis=axis)), e / e.sum(axis=axis, keepdims=True),
                                       rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(to_numpy(ct.cumsum(au, axis=1)), np.cumsum(a, axis=1), rtol=1e-5, atol=1e-5)
        # matmul (oneDNN gets the unaligned pointers)
        w = _unaligned(rng.standard_normal((33, 5)).astype(np.float32), shift)
        np.testing.assert_allclose(to_numpy(ct.matmul(au, w)), a @ np.asarray(w), rtol=1e-4, atol=1e-5)
        # an unaligned out=, float64 and int16 too
        out = _unaligned(np.zeros((7, 33), np.float32), 4 - shift)
        assert ct.subtract(au, bu, out=out) is out
        np.testing.assert_array_equal(out, a - b)
        d = _unaligned(a.astype(np.float64), 2 * shift + 1)
        np.testing.assert_array_equal(to_numpy(ct.abs(d)), np.abs(a.astype(np.float64)))
        i16 = _unaligned(np.arange(-50, 50, dtype=np.int16), 1)
        assert int(to_numpy(ct.sum(i16))) == int(np.arange(-50, 50).sum())
        # in place on an unaligned array
        inplace = _unaligned(a, shift)
        ct.multiply(inplace, inplace, out=inplace)
        np.testing.assert_array_equal(inplace, a * a)


def test_unsupported_numpy_dtypes():
    for dt in (np.complex64, np.complex128, np.longdouble):
        with pytest.raises((TypeError, NotImplementedError)):
            ct.neg(np.zeros(3, dt))


@pytest.mark.parametrize("dt", [np.uint16, np.uint32, np.uint64])
def test_wide_unsigned_numpy_arrays_in_and_out(dt):
    info = np.iinfo(dt)
    a = np.array([0, 1, 7, info.max // 2 + 1, info.max], dt)
    # DLPack both ways, dtype names, the buffer protocol
    t = ct.copy(a)
    assert str(t.dtype) == np.dtype(dt).name and getattr(ct, np.dtype(dt).name) == t.dtype
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    assert np.asarray(memoryview(t)).dtype == dt
    # NumPy's results, bit for bit: wrapping arithmetic, unsigned comparisons and shifts
    for name, want in [("negative", np.negative(a)), ("abs", np.abs(a)), ("sign", np.sign(a)),
                       ("bitwise_not", np.invert(a)), ("square", np.square(a))]:
        got = to_numpy(getattr(ct, name)(a))
        assert got.dtype == dt, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    b = np.array([3, 0, info.max, 2, 1], dt)
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, want in [("add", a + b), ("subtract", a - b), ("multiply", a * b), ("maximum", np.maximum(a, b)),
                           ("less", a < b), ("greater_equal", a >= b), ("bitwise_xor", a ^ b),
                           ("floor_divide", np.floor_divide(a, b)), ("remainder", np.remainder(a, b)),
                           ("divide", a / b)]:
            got = to_numpy(getattr(ct, name)(a, b))
            assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
            np.testing.assert_array_equal(got, want, err_msg=name)
    s = np.array([1, 0, 3, 1, np.dtype(dt).itemsize * 8 - 1], dt)
    np.testing.assert_array_equal(to_numpy(ct.right_shift(a, s)), a >> s)  # logical
    np.testing.assert_array_equal(to_numpy(ct.left_shift(a, s)), a << s)
    # reductions: sum/prod/cumsum of unsigned are uint64, as NumPy's
    for name, want in [("sum", np.sum(a)), ("prod", np.prod(a)), ("max", np.max(a)), ("argmin", np.argmin(a)),
                       ("mean", np.mean(a))]:
        got = to_numpy(getattr(ct, name)(a))
        assert got.dtype == want.dtype, (name, got.dtype, want.dtype)
        np.testing.assert_array_equal(got, want, err_msg=name)
    got = to_numpy(ct.cumsum(a, axis=0))
    assert got.dtype == np.uint64
    np.testing.assert_array_equal(got, np.cumsum(a))
    # Python ints as weak scalars: the whole range, and nothing outside it
    np.testing.assert_array_equal(to_numpy(ct.add(a, int(info.max))), a + dt(info.max))
    with pytest.raises(OverflowError):
        ct.add(a, int(info.max) + 1)
    with pytest.raises(OverflowError):
        ct.add(a, -1)


def test_outputs_untouched_after_failed_calls():
    out = np.full((2, 3), 42, np.float32)
    cases = [
        lambda: ct.add(np.zeros((2, 3), np.float32), np.zeros((2, 3), np.int32), out=out),   # dtype
        lambda: ct.add(np.zeros((2, 4), np.float32), np.zeros(4, np.float32), out=out),      # shape
        lambda: ct.sqrt(np.zeros((2, 3), np.int8), out=out),                                 # unsupported
        lambda: ct.exp(out[:, :2], out=out[:, 1:]),                                           # overlap
        lambda: ct.sum(np.zeros((2, 3, 4), np.float32), axis=(2, 2), out=out),                # repeated axis
        lambda: ct.max(np.zeros((2, 3, 0), np.float32), axis=2, out=out),                     # empty max
        lambda: ct.cumsum(np.zeros((2, 3), np.float32), axis=3, out=out),                     # bad axis
        lambda: ct.matmul(np.zeros((2, 5), np.float32), np.zeros((4, 3), np.float32), out=out),  # K
        lambda: ct.conv2d(np.zeros((1, 1, 2, 3), np.float32), np.zeros((1, 2, 1, 1), np.float32),
                          out=out.reshape(1, 1, 2, 3)),                                       # C mismatch
        lambda: ct.clamp(np.zeros((2, 3), np.int8), 0, 300, out=out),                         # dtype first
        lambda: ct.add_scalar(np.zeros((2, 3), np.float32), 1.0, out=_ro(np.full((2, 3), 42, np.float32))),
    ]
    for i, call in enumerate(cases):
        with pytest.raises((ValueError, TypeError, NotImplementedError)):
            call()
        np.testing.assert_array_equal(out, 42, err_msg=f"case {i}")


# ---------------------------------------------------------------------------
# the GIL
# ---------------------------------------------------------------------------

def test_concurrent_calls_from_threads():
    n = 1 << 22
    results = {}
    errors = []

    def work(k):
        try:
            a = np.full(n, k, np.float32)
            b = np.arange(n, dtype=np.float32)
            r = ct.add(a, b)
            m = ct.matmul(np.full((128, 64), k, np.float32), np.ones((64, 32), np.float32))
            results[k] = (np.asarray(r), np.asarray(m))
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    b = np.arange(n, dtype=np.float32)
    for k in range(4):
        r, m = results[k]
        np.testing.assert_array_equal(r, np.float32(k) + b)
        np.testing.assert_array_equal(m, np.full((128, 32), 64.0 * k, np.float32))


@pytest.mark.parametrize("op", ["add", "matmul", "exp"])
def test_gil_released_during_a_long_call(op):
    """A second thread makes progress while one long call runs.

    The switch interval is made huge, so a thread holding the GIL is never
    made to drop it: if the call kept the GIL, the counter could not move
    between the two reads around the call. No timing threshold: the counter
    need only move at all, and a few attempts are allowed on a busy machine.
    """
    if op == "matmul":
        a = np.ones((1024, 1024), np.float32)
        call = lambda: ct.matmul(a, a)  # noqa: E731
    else:
        a = np.ones(1 << 24, np.float32)
        call = (lambda: ct.add(a, a)) if op == "add" else (lambda: ct.exp(a))
    call()  # warm up (plan cache, pages)
    count = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1
            stop.wait(1e-4)  # waits without the GIL

    deltas = []
    old = sys.getswitchinterval()
    t = threading.Thread(target=counter)
    t.start()
    try:
        sys.setswitchinterval(100.0)
        for _ in range(6):
            res = {}

            def worker():
                c0 = count[0]
                res["r"] = call()
                res["delta"] = count[0] - c0

            w = threading.Thread(target=worker)
            w.start()
            w.join()
            deltas.append(res["delta"])
            if res["delta"] > 0:
                break
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
    assert max(deltas) > 0, f"no progress in another thread during {op}: {deltas}"
    if op == "add":
        np.testing.assert_array_equal(np.asarray(res["r"])[:4], 2.0)


# ---------------------------------------------------------------------------
# module metadata
# ---------------------------------------------------------------------------

def test_version():
    assert ct.__version__ == "0.1.0"


def test_devices():
    devs = ct.devices()
    assert isinstance(devs, list) and len(devs) >= 1
    cpu = devs[0]
    assert cpu.type == "cpu" and cpu.id == 0
    assert isinstance(cpu.name, str) and cpu.name
    assert isinstance(cpu.backend, str) and cpu.backend
    assert cpu.compute_units >= 1 and cpu.default_threads >= 1
    assert isinstance(cpu.memory_bytes, int) and cpu.memory_bytes >= 0


def _registry_count_from_header():
    with open(HEADER) as f:
        return len(re.findall(r"^\s*R\(X, [A-Z0-9_]+, \d+, ", f.read(), flags=re.M))


_CATEGORY_ROWS = {"elementwise": "CT_ELEMENTWISE_OP_ROWS", "broadcast_reduce": "CT_BROADCAST_REDUCE_OP_ROWS",
                  "nn": "CT_NN_OP_ROWS"}


def _header_rows():
    """{category: {name: id}} from the rows of ctensor.h's CT_*_OP_ROWS lists (each ends at a blank line)."""
    with open(HEADER) as f:
        text = f.read()
    rows = {}
    for cat, macro in _CATEGORY_ROWS.items():
        m = re.search(r"^#define " + macro + r"\(R, X\)(.*?)^\s*$", text, flags=re.M | re.S)
        assert m, f"{macro} not found in {HEADER}"
        rows[cat] = {n: int(i) for i, n in re.findall(r"^\s*R\(X, [A-Z0-9_]+, (\d+), (\w+), ", m.group(1), re.M)}
    return rows


def test_ops_registry():
    ops = ct.ops()
    assert os.path.exists(HEADER), HEADER
    rows = _header_rows()
    assert len(ops) == _registry_count_from_header() == sum(len(r) for r in rows.values())
    assert [o.id for o in ops] == list(range(len(ops)))
    assert len({o.name for o in ops}) == len(ops)
    by_cat = {c: ct.ops(category=c) for c in ("elementwise", "broadcast_reduce", "nn")}
    assert sum(len(v) for v in by_cat.values()) == len(ops)
    # each category is exactly its list of rows, with the rows' ids
    for c, v in by_cat.items():
        assert {o.name: o.id for o in v} == rows[c], c
    kinds = {"unary", "unary_param", "ternary", "cast", "binary", "reduce", "along_axis", "nn", "index"}
    for o in ops:
        assert o.python_names, f"{o.name} is bound under no Python name"
        for pn in o.python_names:
            assert callable(getattr(ct, pn)), (o.name, pn)
        assert o.kind in kinds, (o.name, o.kind)
        assert o.category in by_cat
        assert isinstance(o.summary, str) and o.summary
        assert isinstance(o.num_inputs, int) and o.num_inputs >= 1
        assert isinstance(o.params, tuple) and isinstance(o.tensor_names, tuple)
        assert isinstance(o.inplace, bool)
    info = {o.name: o for o in ops}
    assert info["clamp"].params == ("lo", "hi") or len(info["clamp"].params) == 2
    assert info["var"].output_dtype == "float" and info["argmax"].output_dtype == "int64"
    assert info["sum"].output_dtype == "accum" and info["less"].output_dtype == "bool"
    assert info["where"].num_inputs == 3 and info["add"].num_inputs == 2 and info["exp"].num_inputs == 1
    assert info["neg"].python_names == ("neg", "negative")


def test_dtype_objects():
    names = ALL_DTYPES
    objs = [getattr(ct, n) for n in names]
    for n, d in zip(names, objs):
        assert isinstance(d, ct.DType)
        assert str(d) == n
        assert d == n and d == getattr(ct, n)
        if n != "bfloat16":
            assert d == np.dtype(n)
            assert d == np.dtype(n).type
    assert ct.float32 == np.float32 and ct.int64 == np.int64 and ct.bool == np.bool_
    assert ct.float32 != ct.float64 and ct.float32 != "float64" and ct.int8 != np.uint8
    assert len(set(objs)) == len(ALL_DTYPES) == 13
    assert ct.uint64 == np.uint64 and ct.uint16 != np.int16 and ct.uint32 != ct.uint64
    assert hash(ct.float32) == hash(ct.float32)
    assert ct.bfloat16 != np.float16


def test_set_num_threads(rng):
    old = ct.get_num_threads()
    x = rng.uniform(-1, 1, (300, 200)).astype(np.float32)
    try:
        ct.set_num_threads(1)
        assert ct.get_num_threads() == 1
        one = np.asarray(ct.exp(x)).copy()
        s1 = np.asarray(ct.sum(x, axis=0)).copy()
        m1 = np.asarray(ct.matmul(x[:64], x[:64].T)).copy()
        ct.set_num_threads(2)
        assert ct.get_num_threads() == 2
        np.testing.assert_array_equal(np.asarray(ct.exp(x)), one)
        np.testing.assert_array_equal(np.asarray(ct.sum(x, axis=0)), s1)
        np.testing.assert_allclose(np.asarray(ct.matmul(x[:64], x[:64].T)), m1, rtol=1e-5, atol=1e-5)
        ct.set_num_threads(0)
        assert ct.get_num_threads() == 0
        with pytest.raises(ValueError):
            ct.set_num_threads(-1)
    finally:
        ct.set_num_threads(old)


def test_scalar_and_tensor_arguments():
    # NumPy scalars go through the buffer protocol as 0-d arrays
    r = ct.neg(np.float64(2.5))
    assert r.shape == () and r.dtype == "float64" and float(np.asarray(r)) == -2.5
    r = ct.add(np.int8(5), 3)
    assert r.dtype == "int8" and int(np.asarray(r)) == 8
    # a ctensor.Tensor as out=
    out = ct.empty((2, 3), "float32")
    r = ct.add(np.ones((2, 3), np.float32), 1.0, out=out)
    assert r is out
    np.testing.assert_array_equal(np.asarray(out), 2.0)
    # cast needs a dtype or an out
    with pytest.raises(TypeError):
        ct.cast(np.ones(3, np.float32))
    # astype(copy=False) with the same dtype hands back the very object
    x = np.arange(4, dtype=np.float32)
    assert ct.astype(x, "float32", copy=False) is x
    c = ct.astype(x, "float32")
    assert not np.shares_memory(np.asarray(c), x)
    # clamp without bounds is a copy
    c = ct.clamp(x)
    np.testing.assert_array_equal(np.asarray(c), x)
    assert not np.shares_memory(np.asarray(c), x)
