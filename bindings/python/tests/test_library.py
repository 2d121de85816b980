"""Plugin libraries from Python: ctensor.load_library, ctensor.Library, ctensor.libraries().

Two plugins, both built by ctest: the loopback test backend ($CT_LOOPBACK: a device type, no ops), which
test_devices.py also uses and which stays loaded once loaded (a file loads once per process), and the
plugin of docs/writing-a-plugin.md ($CT_DOC_PLUGIN: the op isru with a CPU kernel and a reference),
which these tests load and unload.
"""
import gc
import os

import numpy as np
import pytest

import ctensor as ct
from ctensor import _ctensor

LOOPBACK = os.environ.get("CT_LOOPBACK", "")
DOC_PLUGIN = os.environ.get("CT_DOC_PLUGIN", "")
needs_loopback = pytest.mark.skipif(not os.path.exists(LOOPBACK), reason="CT_LOOPBACK names no built plugin")
needs_doc_plugin = pytest.mark.skipif(not os.path.exists(DOC_PLUGIN), reason="CT_DOC_PLUGIN names no built plugin")


def isru(x):
    return x / np.hypot(1, x)


@pytest.fixture
def isru_lib():
    """The documented plugin, loaded for one test and unloaded after it."""
    assert "isru" not in [lib.name for lib in ct.libraries()]
    with ct.load_library(DOC_PLUGIN) as lib:
        yield lib
    assert not lib.loaded and not hasattr(ct, "isru")


@pytest.fixture(scope="module")
def loopback():
    """The loopback plugin, loaded in this process (by test_devices.py through ctypes, or here): its Library."""
    for lib in ct.libraries():
        if lib.name == "loopback":
            return lib
    before = len(ct.devices())
    lib = ct.load_library(LOOPBACK)
    assert len(ct.devices()) == before + 2  # its two devices appear with the load
    return lib


# ---- the loopback: a device plugin -------------------------------------------

@needs_loopback
def test_a_device_plugin_is_listed_with_its_devices(loopback):
    libs = ct.libraries()
    assert loopback in libs and loopback.loaded
    assert loopback.name == "loopback" and loopback.version == "1.0.0"
    assert os.path.samefile(loopback.path, LOOPBACK)
    assert loopback.abi_version[0] == 1 and isinstance(loopback.abi_version, tuple)
    assert loopback.ops == () and loopback.op_ids == ()
    assert loopback.num_devices == 1 and loopback.num_kernel_tables == 1
    assert [str(d) for d in ct.devices() if d.backend == "loopback"] == ["loopback:0", "loopback:1"]
    assert "loopback" in repr(loopback) and "loaded=True" in repr(loopback)
    # it runs ops on its devices like any backend
    a = np.arange(6, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(ct.neg(ct.copy(a, "loopback:0")).to("cpu")), -a)


@needs_loopback
def test_loading_a_file_twice_is_refused(loopback):
    n = len(ct.libraries())
    with pytest.raises(ValueError) as e:
        ct.load_library(LOOPBACK)
    assert "is loaded already" in str(e.value) and "loopback" in str(e.value)
    assert os.path.realpath(LOOPBACK) in str(e.value)
    assert len(ct.libraries()) == n and loopback.loaded


# ---- files that do not load ----------------------------------------------------

def test_no_such_file(tmp_path):
    path = str(tmp_path / "libnothing.so")
    n = len(ct.libraries())
    with pytest.raises(FileNotFoundError) as e:
        ct.load_library(path)
    assert path in str(e.value) and "no such file" in str(e.value)
    assert isinstance(e.value, OSError)
    assert len(ct.libraries()) == n


def test_not_a_shared_library(tmp_path):
    path = tmp_path / "libjunk.so"
    path.write_text("not a shared library\n")
    with pytest.raises(OSError) as e:
        ct.load_library(path)  # a path-like object is taken too
    assert not isinstance(e.value, FileNotFoundError)
    assert "cannot load" in str(e.value) and str(path) in str(e.value)


def _libctensor_path():
    """The file of the libctensor this process runs (its mapping), or a skip."""
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1]
            if os.path.basename(path).startswith("libctensor.so") and os.path.exists(path):
                return path
    pytest.skip("libctensor is not a shared library of this process")


def test_a_library_already_in_the_process_is_refused():
    path = _libctensor_path()  # mapped already: its init (had it one) would run twice
    with pytest.raises(ValueError) as e:
        ct.load_library(path)
    assert "already in this process" in str(e.value) and os.path.realpath(path) in str(e.value)


# ---- the documented plugin: an op --------------------------------------------------

@needs_doc_plugin
def test_a_plugin_op_becomes_a_function(isru_lib, rng):
    lib = isru_lib
    assert lib.name == "isru" and lib.version == "1.0.0" and lib.ops == ("isru",)
    assert lib.abi_version == ct.PLUGIN_ABI_VERSION and lib.num_devices == 0 and lib.num_kernel_tables == 1
    assert lib in ct.libraries()
    (op,) = lib.op_ids
    assert op >= len([o for o in ct.ops() if o.library is None])  # ids after the built-ins
    # ctensor.isru and ctensor.ops.isru: one function, made by the built-ins' generator
    assert ct.isru is ct.ops.isru
    assert "x / sqrt(1 + x^2)" in ct.isru.__doc__ and "out" in ct.isru.__doc__
    assert "isru" in dir(ct.ops)
    info = [o for o in ct.ops() if o.name == "isru"]
    assert len(info) == 1 and info[0].library == "isru" and info[0].id == op
    assert info[0].kind == "unary" and info[0].category == "elementwise" and info[0].python_names == ("isru",)
    assert [o.name for o in ct.ops("elementwise")].count("isru") == 1
    assert ct.supported("isru", "float32") and ct.supported("isru", "float64")
    assert not ct.supported("isru", "int32") and not ct.supported("isru", "float16")
    assert info[0].dtypes() == ["float32", "float64"]
    # values, strided views, out=, float64
    a = rng.uniform(-5, 5, (4, 7)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(ct.isru(a)), isru(a), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ct.isru(a[::-1, ::2])), isru(a[::-1, ::2]), rtol=1e-6)
    out = np.empty((7, 4), np.float32)
    assert ct.isru(a.T, out=out) is out
    np.testing.assert_allclose(out, isru(a.T), rtol=1e-6)
    d = rng.uniform(-5, 5, 9)
    np.testing.assert_allclose(np.asarray(ct.ops.isru(d)), isru(d), rtol=1e-15)
    np.testing.assert_allclose(np.asarray(ct.isru(np.float64(3.0))), 3 / np.sqrt(10))
    # its rule, in the library's words
    with pytest.raises(NotImplementedError, match="isru"):
        ct.isru(np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match="ct_unary"):
        ct.isru(a, out=np.empty((3, 3), np.float32))


@needs_doc_plugin
def test_unload_takes_the_functions_away_and_a_reload_gives_the_same_id(rng):
    lib = ct.load_library(DOC_PLUGIN)
    (op,) = lib.op_ids
    fn = ct.isru
    a = rng.uniform(-1, 1, 5).astype(np.float32)
    np.testing.assert_allclose(np.asarray(fn(a)), isru(a), rtol=1e-6)
    lib.unload()
    assert not lib.loaded and lib not in ct.libraries()
    assert not hasattr(ct, "isru") and not hasattr(ct.ops, "isru")
    with pytest.raises(AttributeError):
        ct.isru
    assert "isru" not in [o.name for o in ct.ops()]
    with pytest.raises(ValueError, match="no op named"):
        ct.supported("isru", "float32")
    # a function kept from before: the library's error, not a crash
    with pytest.raises(NotImplementedError, match="unloaded"):
        fn(a)
    with pytest.raises(ValueError, match="not loaded"):
        lib.unload()
    # loaded again: the same id, a new function
    with ct.load_library(DOC_PLUGIN) as again:
        assert again.op_ids == (op,) and again != lib
        np.testing.assert_allclose(np.asarray(ct.isru(a)), isru(a), rtol=1e-6)
        assert ct.isru is not fn
    assert not again.loaded and not hasattr(ct, "isru")
    gc.collect()


@needs_doc_plugin
def test_a_library_loaded_from_c_gets_its_functions_on_first_use(rng):
    # C code in the process (here: ctypes) loads the plugin behind the module's back
    import ctypes

    lib = ctypes.CDLL(_libctensor_path())  # the same loaded file
    lib.ct_library_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.ct_library_load.restype = ctypes.c_int32
    lib.ct_library_unload.argtypes = [ctypes.c_void_p]
    handle = ctypes.c_void_p()
    assert lib.ct_library_load(DOC_PLUGIN.encode(), ctypes.byref(handle)) == 0
    try:
        a = rng.uniform(-1, 1, 4)
        np.testing.assert_allclose(np.asarray(ct.isru(a)), isru(a))  # module __getattr__
        assert [x.name for x in ct.libraries()].count("isru") == 1
    finally:
        assert lib.ct_library_unload(handle) == 0
    # unloaded behind the module's back too: the function says so, and goes at the module's next look
    with pytest.raises(NotImplementedError, match="unloaded"):
        ct.isru(np.ones(2))
    assert "isru" not in [x.name for x in ct.libraries()]
    assert not hasattr(ct, "isru")


def test_plugin_op_names_never_shadow_the_module(monkeypatch):
    # a plugin op whose name is taken (here: ctensor.linear, a Python-level NN function) gets no function under
    # it, with a warning; the rest of its names are bound. Simulated: a live op id no plugin has.
    fake = 1 << 30
    monkeypatch.setattr(ct, "_library_infos", lambda: [{"name": "fake", "op_ids": (fake,)}])
    monkeypatch.setattr(_ctensor, "_bind_ops", lambda ids: ({"linear": len, "brand_new_op": len},
                                                            {fake: ("linear", "brand_new_op")}))
    taken = ct.linear
    with pytest.warns(RuntimeWarning, match="'linear' gets no function"):
        ct._sync_plugin_ops()
    assert ct.linear is taken and ct.ops.linear is taken
    assert ct.brand_new_op is len and ct.ops.brand_new_op is len
    monkeypatch.undo()
    ct._sync_plugin_ops()  # the fake op is gone: so is its function
    assert not hasattr(ct, "brand_new_op") and not hasattr(ct.ops, "brand_new_op") and ct.linear is taken


def test_library_failures_is_a_list():
    # nothing in CT_PLUGIN_PATH under ctest; the tool's tests cover failed CT_PLUGIN_PATH entries
    assert isinstance(ct.library_failures(), list)
