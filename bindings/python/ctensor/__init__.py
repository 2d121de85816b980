"""ctensor: every operator of the ctensor C library on any DLPack array.

Functions take NumPy, PyTorch, JAX or CuPy arrays (anything with
``__dlpack__`` or the buffer protocol) and ctensor's own ``Tensor`` results,
without copying them. Each takes ``out=`` to write into a caller's array;
without it the result is a new :class:`Tensor` on the inputs' device, which
``numpy.from_dlpack``, ``torch.from_dlpack`` and ``numpy.asarray`` share
without a copy.

Names follow the Python array API standard (``add``, ``subtract``, ``sum``
with ``axis``/``keepdims``, ...) and ``torch.nn.functional`` for NN ops
(``conv2d``, ``max_pool2d``, ``batch_norm``, ``layer_norm``, ...). Errors
raise ValueError (shapes, arguments), TypeError (dtypes), NotImplementedError
(an op, dtype or device ctensor does not run) or RuntimeError (a backend
failure), with the library's message.

Plugins (shared libraries that add ops, kernels or devices, see
docs/writing-a-plugin.md) load with :func:`load_library`; their ops then
become functions like the built-ins (``ctensor.<name>`` and
``ctensor.ops.<name>``) until the library is unloaded.

>>> import numpy as np, ctensor
>>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> np.asarray(ctensor.add(a, a.T.T))
array([[ 0.,  2.,  4.],
       [ 6.,  8., 10.]], dtype=float32)
"""
from __future__ import annotations

import warnings

from . import _ctensor
from ._ctensor import *  # noqa: F401,F403  (the registry's ops, Tensor, DType, dtypes)
from ._ctensor import (  # noqa: F401
    DType,
    Tensor,
    __version__,
    asarray,
    copy,
    empty,
    get_num_threads,
    get_stream,
    set_num_threads,
    set_stream,
)
from ._composite import fill, float_power, frexp, isclose, nan_to_num, rrelu  # noqa: F401
from ._nn_compose import (  # noqa: F401
    adaptive_avg_pool1d,
    adaptive_avg_pool2d,
    adaptive_avg_pool3d,
    adaptive_max_pool1d,
    adaptive_max_pool2d,
    adaptive_max_pool3d,
    group_norm,
    group_norm_backward,
    instance_norm,
    rms_norm,
    rms_norm_backward,
    scaled_dot_product_attention,
    scaled_dot_product_attention_backward,
)
from ._contract import addbmm, addmm, addmv, addr, baddbmm, dot, einsum, inner, mv, outer, tensordot, vdot  # noqa: F401
from ._index import (  # noqa: F401
    embedding,
    gather,
    index_add,
    index_select,
    one_hot,
    scatter,
    scatter_add,
    take,
    take_along_axis,
    take_along_dim,
)
from ._nn3d import avg_pool3d, conv3d, conv_transpose3d, max_pool3d  # noqa: F401
from ._nn_lower import (  # noqa: F401
    avg_pool1d,
    conv1d,
    conv_transpose1d,
    conv_transpose2d,
    glu,
    max_pool1d,
    topk,
)
from ._movement import (  # noqa: F401
    cat,
    concat,
    concatenate,
    constant_pad_nd,
    flip,
    pad,
    repeat,
    roll,
    stack,
    tile,
    tril,
    triu,
)
from ._views import (  # noqa: F401
    as_strided,
    broadcast_to,
    diagonal,
    expand_dims,
    matrix_transpose,
    permute,
    reshape,
    squeeze,
)
from ._nn import (  # noqa: F401
    avg_pool2d,
    avg_pool2d_backward,
    batch_norm,
    batch_norm_backward,
    conv2d,
    conv2d_backward_data,
    conv2d_backward_weight,
    layer_norm,
    layer_norm_backward,
    linear,
    matmul,
    max_pool2d,
    max_pool2d_backward,
)

_CATEGORIES = {1: "elementwise", 2: "broadcast_reduce", 3: "nn"}
_OUTPUT_RULES = {0: "same", 1: "bool", 2: "any", 3: "int64", 4: "accum", 5: "float", 6: "nn"}
_NN_NAMES = {
    # the index kind's rows (ctensor/_index.py) under NumPy's and PyTorch's names
    "take": ("take", "index_select", "embedding"),
    "gather": ("gather", "take_along_axis", "take_along_dim"),
    "scatter": ("scatter", "one_hot"),
    "scatter_add": ("scatter_add",),
    "index_add": ("index_add",),
    "matmul": ("matmul", "linear"),
    "conv2d": ("conv2d",),
    "conv2d_backward_data": ("conv2d_backward_data",),
    "conv2d_backward_weight": ("conv2d_backward_weight",),
    "max_pool2d": ("max_pool2d",),
    "max_pool2d_backward": ("max_pool2d_backward",),
    "avg_pool2d": ("avg_pool2d",),
    "avg_pool2d_backward": ("avg_pool2d_backward",),
    "batch_norm": ("batch_norm",),
    "batch_norm_training": ("batch_norm",),
    "batch_norm_backward": ("batch_norm_backward",),
    "layer_norm": ("layer_norm",),
    "layer_norm_backward": ("layer_norm_backward",),
    "scaled_dot_product_attention": ("scaled_dot_product_attention",),
}
_DTYPES = (bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,  # noqa: F405
           float16, bfloat16, float32, float64,  # noqa: F405
           float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz)  # noqa: F405
# The dtypes NumPy has only through ml_dtypes: their storage as NumPy sees it.
_ML_DTYPES = {"bfloat16": "int16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8", "float8_e4m3fnuz": "uint8",
              "float8_e5m2fnuz": "uint8"}


class DeviceInfo:
    """One device ctensor runs ops on (``ctensor.devices()``).

    ``str(info)`` is the device's name as ``Tensor.device`` reports it and
    ``Tensor.to`` / ``ctensor.empty`` / ``ctensor.copy`` take it ("cpu",
    "cuda:1"); the entry itself is accepted wherever a device is.
    """

    __slots__ = ("type", "id", "device_type", "name", "backend", "compute_units", "default_threads", "memory_bytes",
                 "_str")

    def __init__(self, d: dict):
        for k in self.__slots__[:-1]:
            setattr(self, k, d[k])
        self._str = d["str"]

    def __str__(self) -> str:
        return self._str

    @property
    def dlpack(self) -> tuple[int, int]:
        """(device_type, device_id) as ``__dlpack_device__`` reports it."""
        return (self.device_type, self.id)

    def __repr__(self) -> str:
        return (f"DeviceInfo(type={self.type!r}, id={self.id}, name={self.name!r}, backend={self.backend!r}, "
                f"compute_units={self.compute_units}, default_threads={self.default_threads}, "
                f"memory_bytes={self.memory_bytes})")


class OpInfo:
    """One op of the registry (``ctensor.ops()``); ``library`` is the name of the plugin that added it (None for
    the built-ins)."""

    __slots__ = ("id", "name", "summary", "category", "kind", "num_inputs", "params", "param_defaults", "tensor_names",
                 "output_dtype", "inplace", "python_names", "library")

    def __init__(self, d: dict, python_names: tuple[str, ...], library: str | None = None):
        self.id = d["id"]
        self.name = d["name"]
        self.summary = d["summary"]
        self.category = _CATEGORIES.get(d["category"], str(d["category"]))
        self.kind = d["kind"]
        self.num_inputs = d["num_inputs"]
        # param_names: "name" or "name=default" each (the default the Python function takes)
        items = [p.partition("=") for p in d["param_names"].split(",") if p]
        self.params = tuple(n for n, _, _ in items)
        self.param_defaults = tuple(float(v) if eq else None for _, eq, v in items)
        self.tensor_names = tuple(t for t in d["tensor_names"].split(",") if t)
        self.output_dtype = _OUTPUT_RULES.get(d["output_dtype"], str(d["output_dtype"]))
        self.inplace = d["inplace"]
        self.python_names = python_names
        self.library = library

    def supported(self, dtype, device: str | tuple[int, int] = "cpu") -> bool:
        """Whether this op runs on ``device`` for inputs of ``dtype``."""
        return supported(self.name, dtype, device)

    def dtypes(self, device: str | tuple[int, int] = "cpu") -> list[str]:
        """The dtypes this op takes on ``device``."""
        return [str(d) for d in _DTYPES if self.supported(d, device)]

    def __repr__(self) -> str:
        lib = f", library={self.library!r}" if self.library else ""
        return f"OpInfo(id={self.id}, name={self.name!r}, category={self.category!r}, kind={self.kind!r}, " \
               f"python_names={self.python_names!r}{lib})"


class use_stream:
    """``with ctensor.use_stream("cuda:0", torch.cuda.current_stream().cuda_stream):`` runs this thread's ops
    on that device on that stream (an int handle: a cudaStream_t, a cl_command_queue), and restores the stream
    that was set before (set_stream / get_stream) when the block ends."""

    def __init__(self, device, stream) -> None:
        self._device, self._stream, self._before = device, stream, None

    def __enter__(self):
        self._before = get_stream(self._device)
        set_stream(self._device, self._stream)
        return self

    def __exit__(self, *exc) -> None:
        set_stream(self._device, self._before)


def devices() -> list[DeviceInfo]:
    """The devices ctensor can run ops on: every device of every registered backend (ct_device_info)."""
    return [DeviceInfo(_ctensor._device_info(i)) for i in range(_ctensor._device_count())]


def _registry(category: str | None = None) -> list[OpInfo]:
    """The op registry: every op the library knows now (built-ins, then the ops of loaded plugins), in id order.

    category: None, or "elementwise", "broadcast_reduce" or "nn".
    """
    if category is not None and category not in _CATEGORIES.values():
        raise ValueError(f"ops: category={category!r} (expected one of {sorted(_CATEGORIES.values())})")
    _sync_plugin_ops()
    owners = {op: lib["name"] for lib in _library_infos() for op in lib["op_ids"]}
    out = []
    bound = _ctensor._bound_names
    for d in _ctensor._op_infos():
        i = d["id"]
        names = tuple(bound.get(i, ())) or _plugin_names.get(i, ()) or _NN_NAMES.get(d["name"], ())
        info = OpInfo(d, names, owners.get(i))
        if category is None or info.category == category:
            out.append(info)
    return out


class _Ops:
    """``ctensor.ops``: call it for the registry, or take an op's function from it by name.

    ``ctensor.ops()`` / ``ctensor.ops(category)`` lists every op (:class:`OpInfo`, in id order);
    ``ctensor.ops.add``, ``ctensor.ops.conv2d``, ``ctensor.ops.<a plugin's op>`` are the same functions as
    ``ctensor.add``, ... (a plugin's are made when its library loads and removed when it unloads).
    """

    def __call__(self, category: str | None = None) -> list[OpInfo]:
        return _registry(category)

    def __getattr__(self, name: str):
        if not name.startswith("_"):
            _sync_plugin_ops()  # a library loaded behind our back (ctypes, C code) gets its functions now
            if name in self.__dict__:
                return self.__dict__[name]
        raise AttributeError(f"ctensor.ops has no op function {name!r} (ctensor.ops() lists the registry)")

    def __dir__(self):
        _sync_plugin_ops()
        return sorted(set(self.__dict__) | {"__call__"})

    def __repr__(self) -> str:
        return f"<ctensor.ops: {len([k for k in self.__dict__ if not k.startswith('_')])} op functions; call it " \
               "for the registry>"


ops = _Ops()


def supported(op: str, dtype, device: str | tuple[int, int] = "cpu") -> bool:
    """Whether ``op`` (a registry name such as "sqrt") runs on ``device`` for inputs of ``dtype``."""
    ids = {d["name"]: d["id"] for d in _ctensor._op_infos()}
    if op not in ids:
        raise ValueError(f"supported: no op named {op!r}")
    dt, di = _ctensor._parse_device(device)
    return _ctensor._op_supported(ids[op], dt, di, dtype)[0]


# ---------------------------------------------------------------------------
# plugin libraries
# ---------------------------------------------------------------------------

class Library:
    """A plugin library loaded into ctensor (:func:`load_library`, :func:`libraries`).

    name, version: what the plugin says it is; path: the file it was loaded from; abi_version: the plugin ABI it
    was built against, (major, minor); ops: the names of the ops it added (``op_ids``: their ids);
    num_devices, num_kernel_tables: the device types and kernel tables it registered; loaded: whether it is
    loaded now. ``unload()`` unloads it (its ops' functions go; calls in flight finish first); as a context
    manager it unloads on exit. A Library that goes out of scope stays loaded.
    """

    __slots__ = ("_handle", "name", "version", "path", "abi_version", "ops", "op_ids", "num_devices",
                 "num_kernel_tables")

    def __init__(self, handle: int):
        d = _ctensor._library_info(handle)
        self._handle = handle
        self.name = d["name"]
        self.version = d["version"]
        self.path = d["path"]
        self.abi_version = tuple(d["abi_version"])
        self.op_ids = tuple(d["op_ids"])
        self.ops = tuple(_ctensor._op_info(i)["name"] for i in self.op_ids)
        self.num_devices = d["num_devices"]
        self.num_kernel_tables = d["num_kernel_tables"]

    @property
    def loaded(self) -> bool:
        """Whether the library is loaded now."""
        return _ctensor._library_loaded(self._handle)

    def unload(self) -> None:
        """Unload the library: its ops (and their ctensor.<name> functions), devices and kernel tables go.

        Raises ValueError when it is not loaded (any more)."""
        if not self.loaded:
            raise ValueError(f"Library.unload: plugin {self.name!r} ({self.path}) is not loaded")
        try:
            _ctensor._library_unload(self._handle)
        finally:
            _sync_plugin_ops()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc) -> None:
        if self.loaded:
            self.unload()

    def __eq__(self, other) -> bool:
        return isinstance(other, Library) and other._handle == self._handle

    def __hash__(self) -> int:
        return hash(self._handle)

    def __repr__(self) -> str:
        return (f"Library(name={self.name!r}, version={self.version!r}, path={self.path!r}, "
                f"abi_version={self.abi_version}, ops={self.ops!r}, num_devices={self.num_devices}, "
                f"num_kernel_tables={self.num_kernel_tables}, loaded={self.loaded})")


def load_library(path) -> Library:
    """Load the plugin library at ``path`` (a shared library exporting ``ct_plugin_init``, see
    docs/writing-a-plugin.md) and register what it brings: its ops become functions (``ctensor.<name>``,
    ``ctensor.ops.<name>``), its devices appear in :func:`devices`.

    Loading is all or nothing. Raises OSError when the file does not load (FileNotFoundError when there is no
    such file), ValueError when it is loaded already or registers an op name or device type that is taken,
    RuntimeError for another major version of the plugin ABI; the message is the library's.
    """
    import os

    handle = _ctensor._library_load(os.fspath(path))
    _sync_plugin_ops()
    return Library(handle)


def libraries() -> list[Library]:
    """The plugin libraries loaded now, in order of loading: by :func:`load_library`, by C code in the
    process, and those of CT_PLUGIN_PATH."""
    _sync_plugin_ops()
    return [Library(h) for h in _ctensor._library_handles()]


def library_failures() -> list[dict]:
    """The plugins of CT_PLUGIN_PATH that did not load: {"path", "status", "message"} each."""
    return list(_ctensor._library_failures())


def _library_infos() -> list[dict]:
    return [_ctensor._library_info(h) for h in _ctensor._library_handles()]


_plugin_names: dict[int, tuple[str, ...]] = {}  # plugin op id -> the names its function is bound under


def _sync_plugin_ops() -> None:
    """Make the functions of the live plugin ops that have none, and take away those of ops that went with their
    library; the functions come from the generator of the built-ins' (_ctensor._bind_ops)."""
    live = {op for lib in _library_infos() for op in lib["op_ids"]}
    g = globals()
    for op in [op for op in _plugin_names if op not in live]:
        for name in _plugin_names.pop(op):
            g.pop(name, None)
            ops.__dict__.pop(name, None)
    new = sorted(op for op in live if op not in _plugin_names)
    if not new:
        return
    fns, bound = _ctensor._bind_ops(new)
    for op in new:
        names = []
        for name in bound.get(op, ()):
            taken = name.startswith("_") or (name in g and not _is_plugin_fn(name)) or name in ops.__dict__
            if taken:
                warnings.warn(f"ctensor: the plugin op {name!r} gets no function ctensor.{name} / ctensor.ops.{name}: "
                              f"the name is taken; call it by id (ctensor.ops() lists it)", RuntimeWarning,
                              stacklevel=3)
                continue
            g[name] = fns[name]
            setattr(ops, name, fns[name])
            names.append(name)
        _plugin_names[op] = tuple(names)


def _is_plugin_fn(name: str) -> bool:
    # (no any(): the module's any is ctensor.any)
    for names in _plugin_names.values():
        if name in names:
            return True
    return False


def __getattr__(name: str):
    # ctensor.<op> of a plugin that C code in the process loaded after the last look
    if not name.startswith("_"):
        _sync_plugin_ops()
        if name in globals():
            return globals()[name]
    raise AttributeError(f"module 'ctensor' has no attribute {name!r}")


def _numpy_view(t):
    """A NumPy array over t's memory; bfloat16 and the float8 dtypes as ml_dtypes' types (NumPy has none of its
    own)."""
    import numpy as np

    name = str(t.dtype)
    if name in _ML_DTYPES:
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError(f"ctensor.Tensor: NumPy has no {name}; install ml_dtypes for a {name} view, or use "
                            "torch.from_dlpack") from None
        return np.from_dlpack(_ctensor._reinterpret(t, _ML_DTYPES[name])).view(getattr(ml_dtypes, name))
    return np.from_dlpack(t)


def _tensor_array(self, dtype=None, copy=None):
    import numpy as np

    a = _numpy_view(self)
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


def _tensor_item(self, what="item"):
    """The one element of self as a Python scalar (bool, int or float), copied to the host first when self is
    on a device; a tensor of another size raises ValueError, as NumPy's item() and bool() do."""
    import numpy as np

    if self.size != 1:
        hint = " (use ctensor.any or ctensor.all)" if what == "__bool__" else ""
        raise ValueError(f"ctensor.Tensor.{what}: only a one-element tensor converts to a Python scalar; this one "
                         f"has shape {tuple(self.shape)}{hint}")
    t = self if self.device == "cpu" else self.to("cpu")
    a = _numpy_view(t).reshape(())
    if str(self.dtype) in _ML_DTYPES:
        return float(a.astype(np.float32))
    return a.item()


def _tensor_repr(self) -> str:
    try:
        import numpy as np

        body = np.array2string(_numpy_view(self), separator=", ", prefix="ctensor.Tensor(")
        return f"ctensor.Tensor({body}, dtype={self.dtype})"
    except Exception:  # bfloat16, a device NumPy cannot read, or no NumPy
        return f"ctensor.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device!r})"




# ctensor.ops.<name>: the built-ins' functions as bound at import, then those of the plugins loaded now
# (CT_PLUGIN_PATH's included).
for _names in list(_ctensor._bound_names.values()) + list(_NN_NAMES.values()):
    for _name in _names:
        setattr(ops, _name, globals()[_name])
del _names, _name
_sync_plugin_ops()
