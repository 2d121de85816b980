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

>>> import numpy as np, ctensor
>>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
>>> np.asarray(ctensor.add(a, a.T.T))
array([[ 0.,  2.,  4.],
       [ 6.,  8., 10.]], dtype=float32)
"""
from __future__ import annotations

from . import _ctensor
from ._ctensor import *  # noqa: F401,F403  (the registry's ops, Tensor, DType, dtypes)
from ._ctensor import DType, Tensor, __version__, copy, empty, get_num_threads, set_num_threads  # noqa: F401
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
}
_DTYPES = (bool, int8, int16, int32, int64, uint8, float16, bfloat16, float32, float64)  # noqa: F405


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
    """One op of the registry (``ctensor.ops()``)."""

    __slots__ = ("id", "name", "summary", "category", "kind", "num_inputs", "params", "tensor_names",
                 "output_dtype", "inplace", "python_names")

    def __init__(self, d: dict, python_names: tuple[str, ...]):
        self.id = d["id"]
        self.name = d["name"]
        self.summary = d["summary"]
        self.category = _CATEGORIES.get(d["category"], str(d["category"]))
        self.kind = d["kind"]
        self.num_inputs = d["num_inputs"]
        self.params = tuple(p for p in d["param_names"].split(",") if p)
        self.tensor_names = tuple(t for t in d["tensor_names"].split(",") if t)
        self.output_dtype = _OUTPUT_RULES.get(d["output_dtype"], str(d["output_dtype"]))
        self.inplace = d["inplace"]
        self.python_names = python_names

    def supported(self, dtype, device: str | tuple[int, int] = "cpu") -> bool:
        """Whether this op runs on ``device`` for inputs of ``dtype``."""
        return supported(self.name, dtype, device)

    def dtypes(self, device: str | tuple[int, int] = "cpu") -> list[str]:
        """The dtypes this op takes on ``device``."""
        return [str(d) for d in _DTYPES if self.supported(d, device)]

    def __repr__(self) -> str:
        return f"OpInfo(id={self.id}, name={self.name!r}, category={self.category!r}, kind={self.kind!r}, " \
               f"python_names={self.python_names!r})"


def devices() -> list[DeviceInfo]:
    """The devices ctensor can run ops on: every device of every registered backend (ct_device_info)."""
    return [DeviceInfo(_ctensor._device_info(i)) for i in range(_ctensor._device_count())]


def ops(category: str | None = None) -> list[OpInfo]:
    """The op registry: every op the library knows, in id order.

    category: None, or "elementwise", "broadcast_reduce" or "nn".
    """
    out = []
    bound = _ctensor._bound_names
    for i in range(_ctensor._op_count()):
        d = _ctensor._op_info(i)
        names = tuple(bound.get(i, ())) or _NN_NAMES.get(d["name"], ())
        info = OpInfo(d, names)
        if category is None or info.category == category:
            out.append(info)
    if category is not None and category not in _CATEGORIES.values():
        raise ValueError(f"ops: category={category!r} (expected one of {sorted(_CATEGORIES.values())})")
    return out


def supported(op: str, dtype, device: str | tuple[int, int] = "cpu") -> bool:
    """Whether ``op`` (a registry name such as "sqrt") runs on ``device`` for inputs of ``dtype``."""
    ids = {d["name"]: i for i, d in ((i, _ctensor._op_info(i)) for i in range(_ctensor._op_count()))}
    if op not in ids:
        raise ValueError(f"supported: no op named {op!r}")
    dt, di = _ctensor._parse_device(device)
    return _ctensor._op_supported(ids[op], dt, di, dtype)[0]


def _numpy_view(t):
    """A NumPy array over t's memory; bfloat16 as ml_dtypes.bfloat16 (NumPy has no bfloat16 of its own)."""
    import numpy as np

    if t.dtype == "bfloat16":
        try:
            import ml_dtypes
        except ImportError:
            raise TypeError("ctensor.Tensor: NumPy has no bfloat16; install ml_dtypes for a bfloat16 view, or use "
                            "torch.from_dlpack") from None
        return np.from_dlpack(_ctensor._reinterpret(t, "int16")).view(ml_dtypes.bfloat16)
    return np.from_dlpack(t)


def _tensor_array(self, dtype=None, copy=None):
    import numpy as np

    a = _numpy_view(self)
    if dtype is not None and np.dtype(dtype) != a.dtype:
        return a.astype(dtype)
    return a.copy() if copy else a


def _tensor_repr(self) -> str:
    try:
        import numpy as np

        body = np.array2string(_numpy_view(self), separator=", ", prefix="ctensor.Tensor(")
        return f"ctensor.Tensor({body}, dtype={self.dtype})"
    except Exception:  # bfloat16, a device NumPy cannot read, or no NumPy
        return f"ctensor.Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device!r})"


