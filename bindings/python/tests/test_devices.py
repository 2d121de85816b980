"""Devices from Python: ctensor.devices(), Tensor.to, Tensor.copy_, ctensor.copy, device names and errors.

Without a GPU the only built-in device is the CPU. To see devices() list
another backend's devices, data cross between devices and ops run there,
the tests register a second device type (DLPack's kExtDev, two devices)
through the plugin host table, as an out-of-tree backend would: the
loopback test backend (tests/backends/loopback, memory stored encoded and
reachable only through its own copy slot, a few kernels) when $CT_LOOPBACK
names its shared library (ctest sets it), else a stand-in written here with
ctypes (plain host memory, no copy slot, no kernels).
"""
import ctypes
import os

import numpy as np
import pytest

import ctensor as ct
from ctensor import _ctensor


def test_devices_match_the_library():
    devs = ct.devices()
    assert len(devs) == _ctensor._device_count() >= 1
    assert str(devs[0]) == "cpu" and devs[0].dlpack == (1, 0)
    pairs = [d.dlpack for d in devs]
    assert len(set(pairs)) == len(pairs)
    for d in devs:
        # every entry's name, pair and the entry itself name the same device
        assert _ctensor._parse_device(str(d), True) == d.dlpack
        assert _ctensor._parse_device(d, True) == d.dlpack
        assert _ctensor._parse_device(d.dlpack, True) == d.dlpack
        assert d.backend and d.name


def test_to_cpu_round_trip(rng):
    a = rng.uniform(-1, 1, (3, 4)).astype(np.float32)
    x = ct.neg(a)
    assert x.device == "cpu"
    assert x.to("cpu") is x and x.to() is x and x.to((1, 0)) is x and x.to(ct.devices()[0]) is x
    assert x.to("cpu:0") is x and x.to("cpu", "float32") is x
    y = x.to("cpu", copy=True)
    assert y is not x and y.device == "cpu" and y.data_ptr != x.data_ptr
    np.testing.assert_array_equal(np.asarray(y), -a)
    z = x.to(dtype="float64")
    assert z.dtype == "float64" and z.device == "cpu"
    np.testing.assert_array_equal(np.asarray(z), -a.astype(np.float64))
    i = x.to("cpu", ct.int32)
    np.testing.assert_array_equal(np.asarray(i), (-a).astype(np.int32))
    # a strided tensor copies to a compact one
    t = ct.copy(a[:, ::-2])
    assert t.shape == (3, 2) and t.strides == (2, 1)
    np.testing.assert_array_equal(np.asarray(t.to(copy=True)), a[:, ::-2])


def test_missing_device_errors():
    x = ct.neg(np.ones(3, np.float32))
    with pytest.raises(ValueError) as e:
        x.to("cuda:0") if "cuda:0" not in {str(d) for d in ct.devices()} else x.to("cuda:99")
    assert "does not exist" in str(e.value) and "cpu" in str(e.value) and "devices()" in str(e.value)
    with pytest.raises(ValueError, match="does not exist"):
        x.to("cpu:1")
    with pytest.raises(ValueError, match="does not exist"):
        x.to((2, 57))
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        x.to("gpu")
    with pytest.raises(ValueError):
        x.to("cuda:x")
    with pytest.raises(TypeError):
        x.to(3.5)
    with pytest.raises(ValueError, match="does not exist"):
        ct.empty(3, device="cpu:3")
    with pytest.raises(ValueError, match="does not exist"):
        ct.copy(np.ones(3), (2, 57))
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(2, 57))
    assert not ct.supported("exp", "float32", (2, 57))


def test_copy_and_copy_(rng):
    a = rng.uniform(-2, 2, (4, 5))
    c = ct.copy(a)
    assert isinstance(c, ct.Tensor) and c.dtype == "float64" and c.device == "cpu"
    assert not np.shares_memory(np.asarray(c), a)
    np.testing.assert_array_equal(np.asarray(c), a)
    out = np.zeros((4, 5), np.float32)
    assert ct.copy(a, out=out) is out  # a different dtype converts, as cast
    np.testing.assert_array_equal(out, a.astype(np.float32))
    with pytest.raises(ValueError):
        ct.copy(a, out=np.zeros((5, 4)))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.zeros((4, 5))
        ro.flags.writeable = False
        ct.copy(a, out=ro)
    t = ct.empty((4, 5), "float64")
    assert t.copy_(a) is t
    np.testing.assert_array_equal(np.asarray(t), a)
    t.copy_(a.astype(np.int32))
    np.testing.assert_array_equal(np.asarray(t), a.astype(np.int32))
    # __dlpack__ to its own device with copy=True exports a copy
    assert not np.shares_memory(np.from_dlpack(t, device="cpu", copy=True), np.asarray(t))
    assert np.shares_memory(np.from_dlpack(t, device="cpu"), np.asarray(t))


# ---------------------------------------------------------------------------
# a stand-in device type registered through plugin.h
# ---------------------------------------------------------------------------

CT_EXT_DEV = 12
_ABI = (1 << 16) | 0  # CT_PLUGIN_ABI_VERSION 1.0


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DeviceInfo(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("device", _Device), ("name", ctypes.c_char * 128),
                ("backend", ctypes.c_char * 32), ("compute_units", ctypes.c_int32),
                ("default_threads", ctypes.c_int32), ("memory_bytes", ctypes.c_uint64)]


_COUNT = ctypes.CFUNCTYPE(ctypes.c_int32)
_INFO = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(_DeviceInfo))
_MALLOC = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_int32, ctypes.c_size_t, ctypes.POINTER(ctypes.c_void_p))
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_int32, ctypes.c_void_p)


class _Allocator(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("reserved", ctypes.c_int32), ("alloc", ctypes.c_void_p),
                ("free", ctypes.c_void_p), ("user", ctypes.c_void_p)]


class _DeviceInterface(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("abi_version", ctypes.c_uint32), ("device_type", ctypes.c_int32),
                ("name", ctypes.c_char_p), ("data_is_address", ctypes.c_int32), ("host_accessible", ctypes.c_int32),
                ("device_count", _COUNT), ("device_info", _INFO), ("malloc", _MALLOC), ("free", _FREE),
                ("copy", ctypes.c_void_p), ("synchronize", ctypes.c_void_p), ("check_stream", ctypes.c_void_p),
                ("default_allocator", _Allocator)]


_REGISTER = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(_DeviceInterface), ctypes.c_void_p)


class _Host(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_uint32), ("abi_version", ctypes.c_uint32), ("set_error", ctypes.c_void_p),
                ("op_info", ctypes.c_void_p), ("dtype_name", ctypes.c_void_p), ("temp_alloc", ctypes.c_void_p),
                ("temp_free", ctypes.c_void_p), ("register_backend", _REGISTER)]


_KEEP = {}  # the registered backend lives as long as the process (the library keeps pointers into it)


def _libctensor():
    """The libctensor the module is linked against (already loaded: RTLD_NOLOAD), or None."""
    for name in ("libctensor.so.0", "libctensor.so"):
        try:
            return ctypes.CDLL(name, mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
        except OSError:
            continue
    return None


def _register_loopback(host, path, loaded):
    if not loaded:  # test_library.py may have loaded it first (ctensor.load_library): a file loads once
        lib = _libctensor()
        lib.ct_library_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.ct_library_load.restype = ctypes.c_int32
        lib.ct_last_error.restype = ctypes.c_char_p
        handle = ctypes.c_void_p()
        status = lib.ct_library_load(path.encode(), ctypes.byref(handle))
        assert status == 0, (status, lib.ct_last_error())
    plugin = ctypes.CDLL(path)  # the same loaded file: its stats
    stats = (ctypes.c_int64 * 16)()  # CTLoopbackStats: live is its first counter

    def live():
        plugin.ct_loopback_stats(stats)
        return stats[0]
    return {"name": "loopback", "kernels": True, "live": live, "keep": plugin}


def _register_stand_in(host):
    libc = ctypes.CDLL(None)
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    blocks = set()

    def count():
        return 2

    def info(i, p):
        if not 0 <= i < 2:
            return -11  # CT_ERR_NOT_FOUND
        p.contents.device = _Device(CT_EXT_DEV, i)
        p.contents.name = b"stand-in device %d (host memory)" % i
        p.contents.backend = b"ext_test"
        p.contents.compute_units = 1
        p.contents.default_threads = 1
        p.contents.memory_bytes = 1 << 20
        return 0

    def malloc(i, n, out):
        ptr = libc.malloc(max(n, 1))
        if not ptr:
            return -8  # CT_ERR_OUT_OF_MEMORY
        blocks.add(ptr)
        out[0] = ptr
        return 0

    def free(i, ptr):
        if ptr:
            blocks.discard(ptr)
            libc.free(ptr)

    table = _DeviceInterface()
    table.struct_size = ctypes.sizeof(_DeviceInterface)
    table.abi_version = _ABI
    table.device_type = CT_EXT_DEV
    table.name = b"ext_test"
    table.data_is_address = 1
    table.host_accessible = 1  # no copy slot: the library moves data with the CPU's copy
    table.device_count = _COUNT(count)
    table.device_info = _INFO(info)
    table.malloc = _MALLOC(malloc)
    table.free = _FREE(free)
    status = host.register_backend(ctypes.byref(table), None)
    assert status == 0, status
    return {"name": "ext_test", "kernels": False, "live": lambda: len(blocks),
            "keep": (table, count, info, malloc, free)}


@pytest.fixture(scope="module")
def ext():
    """The second device type: {"name", "kernels", "live" (its allocations not yet freed), "before"}."""
    if "ext" in _KEEP:
        return _KEEP["ext"]
    lib = _libctensor() if hasattr(os, "RTLD_NOLOAD") else None
    if lib is None or not hasattr(lib, "ct_plugin_host"):
        pytest.skip("libctensor is not a shared library this process can reach: no second device type")
    lib.ct_plugin_host.restype = ctypes.POINTER(_Host)
    host = lib.ct_plugin_host()
    before = len(ct.devices())
    path = os.environ.get("CT_LOOPBACK")
    if path and os.path.exists(path):
        loaded = "loopback" in [lib.name for lib in ct.libraries()]
        before -= 2 if loaded else 0
        reg = _register_loopback(host, path, loaded)
    else:
        reg = _register_stand_in(host.contents)
    reg["before"] = before
    _KEEP["ext"] = reg
    return reg


def test_devices_lists_every_backend(ext):
    devs = ct.devices()
    name = ext["name"]
    assert len(devs) == _ctensor._device_count() == ext["before"] + 2
    mine = [d for d in devs if d.device_type == CT_EXT_DEV]
    # an extension device type is named by its backend
    assert [str(d) for d in mine] == [f"{name}:0", f"{name}:1"]
    assert [d.id for d in mine] == [0, 1] and {d.type for d in mine} == {name}
    assert {d.backend for d in mine} == {name} and mine[1].name
    assert str(devs[0]) == "cpu"
    # DLPack's name for the type still works
    assert _ctensor._parse_device("ext_dev:1", True) == (CT_EXT_DEV, 1)
    assert _ctensor._parse_device(name, True) == (CT_EXT_DEV, 0)
    with pytest.raises(ValueError, match=f"does not exist.*{name}:0, {name}:1"):
        ct.empty(2, device=f"{name}:2")


def test_to_and_from_another_device(ext, rng):
    name = ext["name"]
    d0, d1 = f"{name}:0", f"{name}:1"
    a = rng.uniform(-1, 1, (5, 7)).astype(np.float32)
    x = ct.copy(a)
    live = ext["live"]()
    e0 = x.to(d0)
    assert e0.device == d0 and e0.__dlpack_device__() == (CT_EXT_DEV, 0)
    assert e0.shape == (5, 7) and e0.dtype == "float32"
    assert ext["live"]() == live + 1  # the device's own allocator
    assert e0.to(d0) is e0 and e0.to((CT_EXT_DEV, 0)) is e0
    back = e0.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(np.asarray(back), a)
    # device to device (staged through host memory), the devices() entry itself as the device
    e1 = e0.to(ct.devices()[-1])
    assert e1.device == d1
    np.testing.assert_array_equal(np.asarray(e1.to("cpu")), a)
    # a strided NumPy view straight to the device; a conversion on the way back
    e2 = ct.copy(a[::-1, ::2], d1)
    assert e2.device == d1 and e2.shape == (5, 4)
    np.testing.assert_array_equal(np.asarray(e2.to("cpu", "float64")), a[::-1, ::2].astype(np.float64))
    # into an existing tensor on the device, and back into NumPy
    dst = ct.empty((5, 7), "float32", device=d0)
    assert dst.copy_(a * 2) is dst
    out = np.zeros((5, 7), np.float32)
    ct.copy(dst, out=out)
    np.testing.assert_array_equal(out, a * 2)
    with pytest.raises(ValueError, match="out lives on"):
        ct.copy(a, d1, out=dst)
    # DLPack export to the CPU is a copy there (the consumer asked for host memory)
    np.testing.assert_array_equal(np.from_dlpack(e0, device="cpu"), a)
    with pytest.raises(BufferError):
        np.from_dlpack(e0, device="cpu", copy=False)
    if not ext["kernels"]:  # no kernels there: ops say so
        with pytest.raises(NotImplementedError):
            ct.exp(e0)
        assert not ct.supported("exp", "float32", d0)
    del e0, e1, e2, dst
    assert ext["live"]() == live


def test_ops_run_on_the_operands_device(ext, rng):
    if not ext["kernels"]:
        pytest.skip("the stand-in device has no kernels (set CT_LOOPBACK to the loopback plugin)")
    d0, d1 = f"{ext['name']}:0", f"{ext['name']}:1"
    a = rng.uniform(-1, 1, (4, 6)).astype(np.float32)
    b = rng.uniform(-1, 1, (6,)).astype(np.float32)
    ea, eb = ct.copy(a, d0), ct.copy(b, d0)
    assert ct.supported("exp", "float32", d0) and not ct.supported("sqrt", "float32", d0)
    r = ct.exp(ea)  # the result is allocated on the operand's device, shaped by the query
    assert r.device == d0
    np.testing.assert_allclose(np.asarray(r.to("cpu")), np.exp(a), rtol=1e-6)
    r = ct.add(ea, eb)  # broadcasting on the device
    assert r.device == d0 and r.shape == (4, 6)
    np.testing.assert_allclose(np.asarray(r.to("cpu")), a + b, rtol=1e-6)
    r = ct.add(ea, 1.5)  # a Python scalar becomes a 0-d tensor on the operand's device
    assert r.device == d0
    np.testing.assert_allclose(np.asarray(r.to("cpu")), a + np.float32(1.5), rtol=1e-6)
    r = ct.sum(ea, axis=1, keepdims=True)
    assert r.device == d0 and r.shape == (4, 1)
    np.testing.assert_allclose(np.asarray(r.to("cpu")), a.sum(axis=1, keepdims=True), rtol=1e-5)
    r = ct.softmax(ea, axis=0)
    np.testing.assert_allclose(np.asarray(r.to("cpu")), np.exp(a) / np.exp(a).sum(axis=0), rtol=1e-5)
    # out= on the device
    out = ct.empty((4, 6), "float32", device=d0)
    assert ct.neg(ea, out=out) is out
    np.testing.assert_array_equal(np.asarray(out.to("cpu")), -a)
    # conversions: on the device, and across devices (converted on the destination)
    r = ea.to(dtype="float64")
    assert r.device == d0 and r.dtype == "float64"
    np.testing.assert_array_equal(np.asarray(r.to("cpu")), a.astype(np.float64))
    r = ct.copy(a, d1).to(d1, "int32")
    np.testing.assert_array_equal(np.asarray(r.to("cpu")), a.astype(np.int32))
    r = ct.empty((4, 6), "float64", device=d1).copy_(a)
    np.testing.assert_array_equal(np.asarray(r.to("cpu")), a.astype(np.float64))
    # operands on two devices, and ops the device does not run, are the library's errors
    with pytest.raises(ValueError):
        ct.add(ea, ct.copy(b, d1))
    with pytest.raises(ValueError):
        ct.add(ea, b)
    with pytest.raises(NotImplementedError, match=ext["name"]):
        ct.sqrt(ea)
    with pytest.raises(NotImplementedError):
        ct.matmul(ea, ct.copy(a.T, d0))
    # memory of that device is not host memory: NumPy cannot view it in place
    with pytest.raises((BufferError, RuntimeError, ValueError, TypeError)):
        np.from_dlpack(ea)


def test_streams_are_per_device_and_thread():
    import threading

    # the CPU has threads, not streams
    with pytest.raises(ValueError, match="the CPU has no streams"):
        ct.set_stream("cpu", 1)
    with pytest.raises(TypeError, match="stream must be an int"):
        ct.set_stream(_any_device(), "default")
    dev = _any_device()
    assert ct.get_stream(dev) is None
    with ct.use_stream(dev, 0x1234):
        assert ct.get_stream(dev) == 0x1234
        seen = []
        t = threading.Thread(target=lambda: seen.append(ct.get_stream(dev)))
        t.start()
        t.join()
        assert seen == [None]  # another thread keeps its own
        with ct.use_stream(dev, None):
            assert ct.get_stream(dev) is None
        assert ct.get_stream(dev) == 0x1234
    assert ct.get_stream(dev) is None


def _any_device():
    """A device name set_stream accepts: a device that is not the CPU if there is one, else a name that parses."""
    others = [str(d) for d in ct.devices() if not str(d).startswith("cpu")]
    return others[0] if others else "cuda:0"
