// tensor.cpp — the Tensor type: ctensor's own result array (storage, attributes, buffer protocol, repr).
//
// Results are Tensors over memory from ct_malloc on the inputs' device; they
// export themselves through DLPack (dlpack.cpp) and, on the CPU, the buffer
// protocol. Moving one between devices is Tensor.to (devices.cpp).
#include "common.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace ctpy {

PyTypeObject* g_tensor_type = nullptr;

namespace {
constexpr size_t kInlineHeader = 64;
static_assert(sizeof(Storage) <= kInlineHeader, "Storage must fit in front of the data");

// Small CPU blocks (header and data) come back to a per-thread cache when
// their Tensor dies and serve the next result of their size class: a call
// without out= on a few elements then costs no ct_malloc / ct_free (an
// aligned allocation is most of a small call's time). Per thread, so no
// lock: a block freed on another thread (a DLPack consumer's) joins that
// thread's cache; each class holds at most kCacheDepth blocks, and a
// thread's cache is freed when the thread exits.
constexpr int kClasses = 4;                   // data of <= 64, 256, 1024, 4096 bytes
constexpr size_t kClassBytes[kClasses] = {64, 256, 1024, 4096};
constexpr int kCacheDepth = 32;
int class_of(size_t bytes) {
  for (int c = 0; c < kClasses; ++c)
    if (bytes <= kClassBytes[c]) return c;
  return -1;
}
thread_local bool t_blocks_gone = false;  // trivially destructible: readable after t_blocks is destroyed
struct BlockCache {
  void* blocks[kClasses][kCacheDepth];
  int count[kClasses] = {};
  ~BlockCache() {
    t_blocks_gone = true;  // a Tensor dying later on this thread frees its block directly
    for (int c = 0; c < kClasses; ++c)
      while (count[c] > 0) ct_free(CTDevice{CT_CPU, 0}, blocks[c][--count[c]]);
  }
};
thread_local BlockCache t_blocks;

Storage* storage_alloc(CTDevice dev, size_t bytes) {
  if (dev.device_type == CT_CPU) {
    const int c = class_of(bytes);
    void* base = nullptr;
    if (c >= 0 && !t_blocks_gone && t_blocks.count[c] > 0) base = t_blocks.blocks[c][--t_blocks.count[c]];
    else check(ct_malloc(dev, kInlineHeader + (c >= 0 ? kClassBytes[c] : bytes), &base));
    Storage* s = new (base) Storage();
    s->block_class = c;
    s->ptr = (char*)base + kInlineHeader;
    s->device = dev;
    s->inline_data = true;
    s->bytes = bytes;
    return s;
  }
  void* p = nullptr;
  check(ct_malloc(dev, bytes, &p));
  Storage* s = new Storage();
  s->ptr = p;
  s->device = dev;
  s->bytes = bytes;
  return s;
}
}  // namespace

// What keeps another library's memory alive behind an asarray() Tensor: the
// producer's DLPack tensor (its deleter runs once, from any thread, as DLPack
// allows), its buffer-protocol view, or the NumPy array itself.
struct Foreign {
  PyObject* owner = nullptr;  // a strong reference (NumPy's fast path and the buffer protocol)
  bool has_view = false;
  Py_buffer view;
  DLManagedTensor* legacy = nullptr;
  DLManagedTensorVersioned* versioned = nullptr;
};

void storage_release(Storage* s) {
  if (s && s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (Foreign* f = s->foreign) {
      if (f->legacy && f->legacy->deleter) f->legacy->deleter(f->legacy);
      if (f->versioned && f->versioned->deleter) f->versioned->deleter(f->versioned);
      if (f->owner || f->has_view) {  // Python objects: the last reference may go on a thread without the GIL
        const PyGILState_STATE g = PyGILState_Ensure();
        if (f->has_view) PyBuffer_Release(&f->view);
        Py_XDECREF(f->owner);
        PyGILState_Release(g);
      }
      delete f;
      delete s;
      return;
    }
    if (s->inline_data) {
      const CTDevice dev = s->device;
      const int c = s->block_class;
      s->~Storage();
      if (c >= 0 && !t_blocks_gone && t_blocks.count[c] < kCacheDepth) t_blocks.blocks[c][t_blocks.count[c]++] = s;
      else ct_free(dev, s);
    } else {
      ct_free(s->device, s->ptr);
      delete s;
    }
  }
}

// A new, uninitialised, row-major tensor. Returns the Python object; *out
// points at its C++ half.
nb::object new_tensor(int ndim, const int64_t* shape, CTDataType dt, CTDevice dev, Tensor** out) {
  if (ndim < 0 || ndim > CT_MAX_NDIM) raise(PyExc_ValueError, "ctensor: ndim=%d is outside 0..%d", ndim, CT_MAX_NDIM);
  // The Tensor lives inside the Python object: one allocation, no pointer registration.
  nb::object obj = nb::inst_alloc(nb::handle((PyObject*)g_tensor_type));
  auto* t = new (nb::inst_ptr<Tensor>(obj)) Tensor();
  nb::inst_mark_ready(obj);
  t->t.ndim = ndim;
  t->t.dtype = dt;
  t->t.device = dev;
  t->t.shape = t->shape;
  t->t.strides = t->strides;
  int64_t n = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    if (shape[i] < 0) raise(PyExc_ValueError, "ctensor: shape[%d]=%lld is negative", i, (long long)shape[i]);
    t->shape[i] = shape[i];
    t->strides[i] = n;
    n *= std::max<int64_t>(shape[i], 1);
  }
  int64_t numel = 1;
  for (int i = 0; i < ndim; ++i) numel *= shape[i];
  t->storage = storage_alloc(dev, std::max<size_t>(size_t(numel) * itemsize(dt), 1));
  t->t.data = t->storage->ptr;
  *out = t;
  return obj;
}

namespace {


nb::object empty(nb::handle shape, nb::handle dtype, nb::handle device) {
  std::vector<int64_t> sh;
  if (PyLong_Check(shape.ptr())) sh.push_back(to_int64(shape, "empty", "shape"));
  else
    for (nb::handle h : shape) sh.push_back(to_int64(h, "empty", "shape"));
  CTDataType dt = parse_dtype(dtype, "empty", "dtype");
  const CTDevice dev = device.is_none() ? CTDevice{CT_CPU, 0} : parse_device(device, "empty", true);
  Tensor* t;
  return new_tensor((int)sh.size(), sh.data(), dt, dev, &t);
}

nb::tuple dims_tuple(int n, const int64_t* v) {
  nb::list l;
  for (int i = 0; i < n; ++i) l.append(v[i]);
  return nb::tuple(l);
}

// A new Tensor over `s` (whose reference it takes) describing `base` with
// the given dims: views, reinterpretations and asarray all end here.
nb::object tensor_over(Storage* s, const CTensor& base, int nd, const int64_t* shape, const int64_t* strides) {
  nb::object obj = nb::inst_alloc(nb::handle((PyObject*)g_tensor_type));
  auto* r = new (nb::inst_ptr<Tensor>(obj)) Tensor();
  nb::inst_mark_ready(obj);
  r->storage = s;
  r->t = base;
  r->t.ndim = nd;
  std::memcpy(r->shape, shape, sizeof(int64_t) * nd);
  std::memcpy(r->strides, strides, sizeof(int64_t) * nd);
  r->t.shape = r->shape;
  r->t.strides = r->strides;
  return obj;
}

Storage* share(Storage* s) {
  s->refs.fetch_add(1, std::memory_order_relaxed);
  return s;
}

// The same memory as a Tensor of another dtype of the same size.
nb::object reinterpret(nb::handle x, nb::handle dtype) {
  Tensor* t = nb::inst_ptr<Tensor>(x);
  CTDataType dt = parse_dtype(dtype, "_reinterpret", "dtype");
  if (itemsize(dt) != itemsize(t->t.dtype))
    raise(PyExc_ValueError, "_reinterpret: %s and %s differ in size", dtype_name(dt).c_str(),
          dtype_name(t->t.dtype).c_str());
  CTensor base = t->t;
  base.dtype = dt;
  return tensor_over(share(t->storage), base, t->t.ndim, t->shape, t->strides);
}

// The byte span [lo, hi) that a view of `ndim` dims reaches from its first
// element (negative strides reach below it); hi == lo when it is empty.
void view_span(int ndim, const int64_t* shape, const int64_t* strides, int64_t isz, int64_t* lo, int64_t* hi) {
  int64_t l = 0, h = 0;
  for (int i = 0; i < ndim; ++i) {
    if (shape[i] == 0) {
      *lo = *hi = 0;
      return;
    }
    const int64_t reach = strides[i] * (shape[i] - 1);
    (reach < 0 ? l : h) += reach;
  }
  *lo = l * isz;
  *hi = (h + 1) * isz;
}

// A view of x's memory (NumPy's as_strided, checked): `shape` and `strides`
// (in elements) from `offset` elements past x's first element. Every element
// the view reaches must lie in x's storage, so no view reads or writes memory
// that is not the tensor's.
nb::object view(nb::handle x, nb::handle shape, nb::handle strides, int64_t offset) {
  Tensor* t = nb::inst_ptr<Tensor>(x);
  std::vector<int64_t> sh, st;
  for (nb::handle h : shape) sh.push_back(to_int64(h, "as_strided", "shape"));
  for (nb::handle h : strides) st.push_back(to_int64(h, "as_strided", "strides"));
  if (sh.size() != st.size())
    raise(PyExc_ValueError, "as_strided: shape has %zu dims but strides %zu", sh.size(), st.size());
  if (sh.size() > (size_t)CT_MAX_NDIM)
    raise(PyExc_ValueError, "as_strided: %zu dims, more than CT_MAX_NDIM=%d", sh.size(), CT_MAX_NDIM);
  const int nd = (int)sh.size();
  for (int i = 0; i < nd; ++i) {
    if (sh[i] < 0) raise(PyExc_ValueError, "as_strided: shape[%d]=%lld is negative", i, (long long)sh[i]);
    if (sh[i] > (int64_t(1) << 48) || st[i] > (int64_t(1) << 48) || st[i] < -(int64_t(1) << 48))
      raise(PyExc_ValueError, "as_strided: shape[%d]=%lld, strides[%d]=%lld are out of range", i,
            (long long)sh[i], i, (long long)st[i]);
  }
  const int64_t isz = (int64_t)itemsize(t->t.dtype);
  int64_t lo, hi;
  view_span(nd, sh.data(), st.data(), isz, &lo, &hi);
  const int64_t first = (int64_t)((char*)t->t.data + t->t.byte_offset - (char*)t->storage->ptr) + offset * isz;
  if (hi > lo && (first + lo < 0 || first + hi > (int64_t)t->storage->bytes))
    raise(PyExc_ValueError,
          "as_strided: shape %s, strides %s and offset %lld reach bytes [%lld, %lld) of a storage of %zu bytes",
          shape_str(nd, sh.data()).c_str(), shape_str(nd, st.data()).c_str(), (long long)offset,
          (long long)(first + lo), (long long)(first + hi), t->storage->bytes);
  CTensor base = t->t;
  const int64_t boff = (int64_t)t->t.byte_offset + offset * isz;
  base.byte_offset = (uint64_t)boff;
  if (boff < 0) {  // below the producer's data pointer (an asarray of a reversed view): a plain address there
    base.data = (char*)t->t.data + boff;
    base.byte_offset = 0;
  }
  return tensor_over(share(t->storage), base, nd, sh.data(), st.data());
}

// Any array as a ctensor.Tensor over the same memory (no copy): the
// producer's memory stays alive as long as the Tensor or a view of it does.
nb::object asarray(nb::handle x) {
  if (Py_TYPE(x.ptr()) == g_tensor_type) return nb::borrow(x);
  Arg a;
  import_arg(a, x.ptr(), false, false, "asarray", "x");
  const int64_t isz = (int64_t)itemsize(a.t.dtype);
  int64_t lo, hi;
  view_span(a.t.ndim, a.t.shape, a.t.strides, isz, &lo, &hi);
  auto* f = new Foreign();
  auto* s = new Storage();
  s->foreign = f;
  s->device = a.t.device;
  s->readonly = a.readonly;
  s->ptr = (char*)a.t.data + a.t.byte_offset + lo;
  s->bytes = (size_t)(hi - lo);
  // Take over what keeps the memory alive from the Arg (its release() then frees nothing).
  f->legacy = a.legacy;
  f->versioned = a.versioned;
  a.legacy = nullptr;
  a.versioned = nullptr;
  if (a.has_view) {
    f->view = a.view;
    f->has_view = true;
    a.has_view = false;
  }
  if (!f->legacy && !f->versioned && !f->has_view) f->owner = Py_NewRef(x.ptr());
  return tensor_over(s, a.t, a.t.ndim, a.t.shape, a.t.strides);
}

const char* buffer_format(CTDataType d) {
  switch (d.code) {
    case CT_BOOL: return "?";
    case CT_INT: return d.bits == 8 ? "b" : d.bits == 16 ? "h" : d.bits == 32 ? "i" : "q";
    case CT_UINT: return d.bits == 8 ? "B" : d.bits == 16 ? "H" : d.bits == 32 ? "I" : "Q";
    case CT_FLOAT: return d.bits == 16 ? "e" : d.bits == 32 ? "f" : "d";
    default: return nullptr;
  }
}

int tensor_getbuffer(PyObject* self, Py_buffer* view, int flags) {
  Tensor* t = nb::inst_ptr<Tensor>(self);
  const char* fmt = buffer_format(t->t.dtype);
  if (t->t.device.device_type != CT_CPU) {
    PyErr_SetString(PyExc_BufferError, "ctensor.Tensor: the buffer protocol needs CPU memory; use DLPack");
    return -1;
  }
  if (!fmt) {
    PyErr_Format(PyExc_BufferError, "ctensor.Tensor: %s has no buffer-protocol format; use DLPack",
                 dtype_name(t->t.dtype).c_str());
    return -1;
  }
  const int nd = t->t.ndim;
  auto* dims = (Py_ssize_t*)PyMem_Malloc(sizeof(Py_ssize_t) * (2 * nd + 1));
  if (!dims) {
    PyErr_NoMemory();
    return -1;
  }
  const Py_ssize_t isz = (Py_ssize_t)itemsize(t->t.dtype);
  for (int i = 0; i < nd; ++i) {
    dims[i] = t->shape[i];
    dims[nd + i] = t->strides[i] * isz;
  }
  view->buf = (char*)t->t.data + t->t.byte_offset;
  view->obj = Py_NewRef(self);
  view->len = t->numel() * isz;
  view->itemsize = isz;
  view->readonly = 0;
  view->ndim = nd;
  view->format = (flags & PyBUF_FORMAT) ? (char*)fmt : nullptr;
  view->shape = dims;
  view->strides = dims + nd;
  view->suboffsets = nullptr;
  view->internal = dims;
  return 0;
}

void tensor_releasebuffer(PyObject*, Py_buffer* view) { PyMem_Free(view->internal); }

PyType_Slot tensor_slots[] = {
    {Py_bf_getbuffer, (void*)tensor_getbuffer},
    {Py_bf_releasebuffer, (void*)tensor_releasebuffer},
    {0, nullptr},
};

}  // namespace

// nanobind 3.1's instance pool keeps dead Tensor objects for reuse: a result
// then costs no Python object allocation and no registration in nanobind's
// instance map (with the block cache above, a call without out= allocates
// nothing). Older nanobind builds the type without it.
#if NB_VERSION_MAJOR > 3 || (NB_VERSION_MAJOR == 3 && NB_VERSION_MINOR >= 1)
#define CT_NB_POOLED , nb::pooled(64)
#else
#define CT_NB_POOLED
#endif

// A Tensor method implemented in ctensor/_views.py.
auto view_method(const char* fn) {
  return [fn](nb::handle self, nb::args args, nb::kwargs kwargs) {
    return nb::module_::import_("ctensor._views").attr(fn)(self, *args, **kwargs);
  };
}

void init_tensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor", nb::type_slots(tensor_slots) CT_NB_POOLED,
                     "An array that ctensor allocated: the result of an op without out=.\n\n"
                     "It exports itself through DLPack (numpy.from_dlpack, torch.from_dlpack, jax.dlpack) and, on "
                     "the CPU, through the buffer protocol and __array__, always without a copy.")
      .def_prop_ro("shape", [](const Tensor& t) { return dims_tuple(t.t.ndim, t.shape); })
      .def_prop_ro("strides", [](const Tensor& t) { return dims_tuple(t.t.ndim, t.strides); }, "strides in elements")
      .def_prop_ro("ndim", [](const Tensor& t) { return t.t.ndim; })
      .def_prop_ro("size", [](const Tensor& t) { return t.numel(); })
      .def_prop_ro("nbytes", [](const Tensor& t) { return t.numel() * (int64_t)itemsize(t.t.dtype); })
      .def_prop_ro("dtype", [](const Tensor& t) { return DType{t.t.dtype}; })
      .def_prop_ro("device", [](const Tensor& t) { return device_str(t.t.device); },
                   "where the data lives: 'cpu', 'cuda:0', ... (as ctensor.devices() names it)")
      .def_prop_ro("data_ptr", [](const Tensor& t) { return (uintptr_t)t.t.data + t.t.byte_offset; },
                   "address of the first element")
      .def("__len__", [](const Tensor& t) {
        if (t.t.ndim == 0) raise(PyExc_TypeError, "len() of a 0-d ctensor.Tensor");
        return t.shape[0];
      })
      .def("__dlpack__", &tensor_dlpack, nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
           "Export as a DLPack capsule (versioned when max_version >= (1, 0)), sharing memory; a dl_device other "
           "than the tensor's exports a copy there (unless copy=False).")
      .def("__dlpack_device__", [](const Tensor& t) {
        return nb::make_tuple(t.t.device.device_type, t.t.device.device_id);
      })
      .def("to", &tensor_to, nb::arg("device") = nb::none(), nb::arg("dtype") = nb::none(), nb::kw_only(),
           nb::arg("copy") = false,
           nb::sig("def to(self, device: object | None = None, dtype: object | None = None, *, copy: bool = False) "
                   "-> Tensor"),
           "This tensor on `device` ('cpu', 'cuda:1', a (device_type, device_id) pair or a ctensor.devices() entry) "
           "with `dtype`: itself when both already match and copy=False, else a new Tensor written by ct_copy "
           "(ct_cast when the dtype changes), between any two devices.")
      .def("copy_", [](nb::handle self, nb::handle src) {
        copy_array(src, nb::none(), self);
        return nb::borrow(self);
      }, nb::arg("src"), nb::sig("def copy_(self, src: object) -> Tensor"),
           "Write src (any array, any device, the same shape) into this tensor, converting its dtype; returns self.")
      .def("numpy", [](nb::handle self) { return nb::module_::import_("ctensor").attr("_numpy_view")(self); },
           nb::sig("def numpy(self) -> numpy.ndarray"),
           "A NumPy array over this tensor's memory, no copy (bfloat16 as ml_dtypes.bfloat16).")
      .def("__array__", [](nb::handle self, nb::handle dtype, nb::handle copy) {
        return nb::module_::import_("ctensor").attr("_tensor_array")(self, dtype, copy);
      }, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
         nb::sig("def __array__(self, dtype: object | None = None, copy: bool | None = None) -> numpy.ndarray"),
         "NumPy's conversion protocol: a view, or a copy when dtype differs or copy=True.")
      .def("__repr__", [](nb::handle self) { return nb::module_::import_("ctensor").attr("_tensor_repr")(self); })
      // Python scalars of a one-element tensor (ctensor/__init__.py's _tensor_item): without __bool__,
      // `if ctensor.any(x):` was true for every tensor.
      .def("item", [](nb::handle self) { return nb::module_::import_("ctensor").attr("_tensor_item")(self); },
           nb::sig("def item(self) -> bool | int | float"),
           "The one element as a Python bool, int or float (copied to the host from a device); ValueError for "
           "another size.")
      .def("tolist", [](nb::handle self) { return nb::module_::import_("ctensor")
                                                .attr("_tensor_array")(self.attr("to")("cpu"), nb::none(), nb::none())
                                                .attr("tolist")(); },
           nb::sig("def tolist(self) -> object"), "The elements as nested Python lists (NumPy's tolist).")
      .def("__bool__", [](nb::handle self) {
        return nb::bool_(nb::module_::import_("ctensor").attr("_tensor_item")(self, "__bool__"));
      })
      .def("__float__", [](nb::handle self) {
        return nb::float_(nb::module_::import_("ctensor").attr("_tensor_item")(self, "__float__"));
      })
      .def("__int__", [](nb::handle self) {
        return nb::int_(nb::module_::import_("ctensor").attr("_tensor_item")(self, "__int__"));
      })
      // Views (ctensor/_views.py: every one through the checked _view)
      .def("reshape", view_method("reshape"), nb::sig("def reshape(self, *shape: int) -> Tensor"),
           "A view with a new shape (one extent may be -1), or a row-major copy when the strides allow no view.")
      .def("permute", view_method("permute"), nb::sig("def permute(self, *axes: int) -> Tensor"),
           "A view with the axes in the given order.")
      .def("transpose", view_method("transpose"), nb::sig("def transpose(self, *axes: int) -> Tensor"),
           "transpose(a, b): a view with axes a and b swapped; transpose(): every axis reversed.")
      .def("diagonal", view_method("diagonal"),
           nb::sig("def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Tensor"),
           "A view of the diagonal of axis1 and axis2, as the last axis.")
      .def("squeeze", view_method("squeeze"), nb::sig("def squeeze(self, axis: int | None = None) -> Tensor"),
           "A view without the axes of extent 1.")
      .def("unsqueeze", view_method("expand_dims"), nb::sig("def unsqueeze(self, axis: int) -> Tensor"),
           "A view with a new axis of extent 1 at axis.")
      .def("expand", view_method("broadcast_to"), nb::sig("def expand(self, *shape: int) -> Tensor"),
           "A view broadcast to shape (stride 0 along the broadcast axes).")
      .def("as_strided", view_method("as_strided"),
           nb::sig("def as_strided(self, shape: tuple[int, ...], strides: tuple[int, ...], offset: int = 0) -> Tensor"),
           "A view with the given shape and strides (elements) from offset elements past the first element; every "
           "element must lie in the tensor's memory.")
      .def("__getitem__", view_method("getitem"), nb::sig("def __getitem__(self, key: object) -> Tensor"),
           "Basic indexing (integers, slices, None, Ellipsis): a view.")
      .def_prop_ro("T", [](nb::handle self) { return nb::module_::import_("ctensor._views").attr("transpose")(self); },
                   "A view with every axis reversed.")
      .def_prop_ro("mT", [](nb::handle self) {
        return nb::module_::import_("ctensor._views").attr("matrix_transpose")(self);
      }, "A view with the last two axes swapped.");
  g_tensor_type = (PyTypeObject*)nb::type<Tensor>().ptr();

  m.def("empty", &empty, nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("device") = nb::none(),
        nb::sig("def empty(shape: int | tuple[int, ...], dtype: object = 'float32', device: object | None = None) -> "
                "Tensor"),
        "A new uninitialised row-major ctensor.Tensor. device: 'cpu' (default), 'cuda:1', ..., a DLPack "
        "(device_type, device_id) pair or a ctensor.devices() entry.");
  m.def("_view", &view, nb::arg("x"), nb::arg("shape"), nb::arg("strides"), nb::arg("offset") = 0,
        "A view of x's memory: shape, strides in elements, offset in elements from x's first element; every "
        "element must lie in x's storage.");
  m.def("asarray", &asarray, nb::arg("x"), nb::sig("def asarray(x: object) -> Tensor"),
        "Any array (DLPack, NumPy, the buffer protocol) as a ctensor.Tensor over the same memory, without a "
        "copy; a ctensor.Tensor is returned as is. The producer's memory stays alive while the Tensor or a "
        "view of it does; a read-only producer gives a Tensor that cannot be an out=.");
  m.def("_reinterpret", &reinterpret, nb::arg("x"), nb::arg("dtype"),
        "The same memory as a Tensor of another dtype of the same size.");
}

}  // namespace ctpy
