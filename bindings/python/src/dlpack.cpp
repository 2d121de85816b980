// dlpack.cpp — DLPack in and out: importing any array argument without a copy, exporting Tensors as capsules.
//
// Every array argument is imported into a CTensor (which has DLTensor's
// layout): ctensor.Tensor directly, NumPy arrays by reading the array struct
// (as pybind11 does), producers with DLPack 1.3's C exchange API through it,
// then __dlpack__ (versioned capsules first, legacy after), then the buffer
// protocol. Python scalars are recorded and become 0-d tensors once the dtype
// they take is known.
#include "common.h"

#include <cstring>
#include <limits>
#include <unordered_map>

namespace ctpy {

ImportStats g_stats;
PyObject* g_max_version = nullptr;

namespace {

// NumPy's array and descriptor structs, as far as ctensor reads them. Their
// layout is NumPy's ABI (stable across 1.x and 2.x for these fields: 2.x
// kept `type_num` in place by renaming the old flags byte).
struct NpArray {
  PyObject_HEAD
  char* data;
  int nd;
  Py_ssize_t* dimensions;
  Py_ssize_t* strides;
  PyObject* base;
  PyObject* descr;
  int flags;
};
struct NpDescr {
  PyObject_HEAD
  PyTypeObject* typeobj;
  char kind;
  char type;
  char byteorder;
  char former_flags;
  int type_num;
};
constexpr int kNpyWriteable = 0x0400;
PyTypeObject* g_numpy_ndarray = nullptr;

bool numpy_dtype(int type_num, CTDataType* dt) {
  switch (type_num) {
    case 0: *dt = {CT_BOOL, 8, 1}; return true;
    case 1: *dt = {CT_INT, 8, 1}; return true;
    case 2: *dt = {CT_UINT, 8, 1}; return true;
    case 3: *dt = {CT_INT, 16, 1}; return true;
    case 4: *dt = {CT_UINT, 16, 1}; return true;
    case 5: *dt = {CT_INT, 32, 1}; return true;
    case 6: *dt = {CT_UINT, 32, 1}; return true;
    case 7: *dt = {CT_INT, uint8_t(8 * sizeof(long)), 1}; return true;
    case 8: *dt = {CT_UINT, uint8_t(8 * sizeof(long)), 1}; return true;
    case 9: *dt = {CT_INT, 64, 1}; return true;
    case 10: *dt = {CT_UINT, 64, 1}; return true;
    case 11: *dt = {CT_FLOAT, 32, 1}; return true;
    case 12: *dt = {CT_FLOAT, 64, 1}; return true;
    case 14: *dt = {CT_COMPLEX, 64, 1}; return true;
    case 15: *dt = {CT_COMPLEX, 128, 1}; return true;
    case 23: *dt = {CT_FLOAT, 16, 1}; return true;
    default: return false;
  }
}

// A NumPy user dtype (type number >= 256): ml_dtypes' bfloat16 and float8
// types, NumPy's usual ones for these, by their scalar type's name
// ("ml_dtypes.float8_e4m3fn" or "float8_e4m3fn"), which is ctensor's name.
bool user_dtype(const NpDescr* descr, CTDataType* dt) {
  const char* tn = descr->typeobj ? descr->typeobj->tp_name : "";
  const char* dot = std::strrchr(tn, '.');
  const char* name = dot ? dot + 1 : tn;
  for (const auto& e : kDTypes)
    if (std::strcmp(name, e.name) == 0 &&
        (e.dt.code == CT_BFLOAT || ((CT_DTS_FLOAT8 >> ct_dtype_index(e.dt)) & 1u))) {
      *dt = e.dt;
      return true;
    }
  return false;
}

bool buffer_dtype(const char* fmt, Py_ssize_t size, CTDataType* dt) {
  if (!fmt) fmt = "B";
  if (*fmt == '@' || *fmt == '=' || *fmt == '<') ++fmt;
  else if ((*fmt == '>' || *fmt == '!') && size != 1) return false;
  else if (*fmt == '>' || *fmt == '!') ++fmt;
  if (!fmt[0] || fmt[1]) return false;
  const uint8_t bits = uint8_t(size * 8);
  switch (fmt[0]) {
    case '?': *dt = {CT_BOOL, 8, 1}; return size == 1;
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': *dt = {CT_INT, bits, 1}; return true;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': *dt = {CT_UINT, bits, 1}; return true;
    case 'e': case 'f': case 'd': *dt = {CT_FLOAT, bits, 1}; return true;
    default: return false;
  }
}

// The exchange API of a producer type, or nullptr; cached per type.
std::unordered_map<PyTypeObject*, const DLPackExchangeAPI*> g_exchange;

const DLPackExchangeAPI* exchange_api(PyTypeObject* type) {
  auto it = g_exchange.find(type);
  if (it != g_exchange.end()) return it->second;
  const DLPackExchangeAPI* api = nullptr;
  PyObject* cap = PyObject_GetAttrString((PyObject*)type, "__dlpack_c_exchange_api__");
  if (cap) {
    if (PyCapsule_IsValid(cap, "dlpack_exchange_api")) {
      const auto* a = (const DLPackExchangeAPI*)PyCapsule_GetPointer(cap, "dlpack_exchange_api");
      // Walk to a version this consumer understands (major 1).
      while (a && a->header.version.major > kDLPackMajor) a = (const DLPackExchangeAPI*)a->header.prev_api;
      if (a && a->header.version.major == kDLPackMajor &&
          (a->dltensor_from_py_object_no_sync || a->managed_tensor_from_py_object_no_sync))
        api = a;
    }
    Py_DECREF(cap);
  } else {
    PyErr_Clear();
  }
  Py_INCREF(type);  // the cache keeps the type (and so the table) alive
  g_exchange.emplace(type, api);
  return api;
}

}  // namespace

void Arg::release() {
  if (has_view) PyBuffer_Release(&view);
  has_view = false;
  if (legacy && legacy->deleter) legacy->deleter(legacy);
  legacy = nullptr;
  if (versioned && versioned->deleter) versioned->deleter(versioned);
  versioned = nullptr;
}

void Arg::own_dims(int ndim, const int64_t* sh, const int64_t* st, const char* fn, const char* name) {
  if (ndim < 0 || ndim > CT_MAX_NDIM)
    raise(PyExc_ValueError, "%s: %s.ndim=%d is outside 0..%d", fn, name, ndim, CT_MAX_NDIM);
  int64_t c = 1;
  for (int i = ndim - 1; i >= 0; --i) {
    shape[i] = sh[i];
    strides[i] = st ? st[i] : c;
    c *= sh[i];
  }
  t.ndim = ndim;
  t.shape = shape;
  t.strides = strides;
}

namespace {

void import_capsule(Arg& a, PyObject* cap, bool is_out, const char* fn, const char* name) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {
    auto* m = (DLManagedTensorVersioned*)PyCapsule_GetPointer(cap, "dltensor_versioned");
    if (m->version.major != kDLPackMajor) {
      raise(PyExc_BufferError, "%s: %s gave a DLPack %u.%u tensor; ctensor reads major version %u", fn, name,
            m->version.major, m->version.minor, kDLPackMajor);
    }
    PyCapsule_SetName(cap, "used_dltensor_versioned");
    a.versioned = m;
    a.readonly = (m->flags & kDLFlagReadOnly) != 0;
    if (is_out && (m->flags & kDLFlagIsCopied))
      raise(PyExc_ValueError, "%s: %s was exported as a copy, so writes to it would be lost", fn, name);
    a.t = m->dl_tensor;
    g_stats.dlpack_versioned++;
  } else if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = (DLManagedTensor*)PyCapsule_GetPointer(cap, "dltensor");
    PyCapsule_SetName(cap, "used_dltensor");
    a.legacy = m;
    a.t = m->dl_tensor;
    g_stats.dlpack_legacy++;
  } else {
    raise(PyExc_TypeError, "%s: %s.__dlpack__() did not return a DLPack capsule", fn, name);
  }
  a.own_dims(a.t.ndim, a.t.shape, a.t.strides, fn, name);
}

}  // namespace

// Import `o` into `a`. Scalars (bool, int, float) are recorded and filled in
// later by fill_scalar, once the dtype they take is known.
void import_arg(Arg& a, PyObject* o, bool is_out, bool allow_scalar, const char* fn, const char* name) {
  a.obj = o;
  a.present = true;
  PyTypeObject* type = Py_TYPE(o);
  // 1. our own result type
  if (type == g_tensor_type) {
    Tensor* t = nb::inst_ptr<Tensor>(o);
    a.t = t->t;
    a.t.shape = a.shape;
    a.t.strides = a.strides;
    std::memcpy(a.shape, t->shape, sizeof(int64_t) * t->t.ndim);
    std::memcpy(a.strides, t->strides, sizeof(int64_t) * t->t.ndim);
    a.readonly = t->storage->readonly;
    g_stats.tensor++;
    return;
  }
  // 2. NumPy arrays: read the struct
  if (!g_numpy_ndarray && std::strcmp(type->tp_name, "numpy.ndarray") == 0) g_numpy_ndarray = type;
  if (type == g_numpy_ndarray) {
    const NpArray* arr = (const NpArray*)o;
    const NpDescr* descr = (const NpDescr*)arr->descr;
    CTDataType dt;
    if (descr->type_num >= 256 ? !user_dtype(descr, &dt) : !numpy_dtype(descr->type_num, &dt))
      raise(PyExc_TypeError, "%s: %s has NumPy dtype kind '%c' (type number %d), which ctensor does not support", fn,
            name, descr->kind, descr->type_num);
    if (descr->byteorder == '>')
      raise(PyExc_TypeError, "%s: %s is a byte-swapped (big-endian) NumPy array", fn, name);
    if (arr->nd > CT_MAX_NDIM)
      raise(PyExc_ValueError, "%s: %s.ndim=%d is more than ctensor's %d", fn, name, arr->nd, CT_MAX_NDIM);
    const Py_ssize_t isz = Py_ssize_t(itemsize(dt));
    for (int i = 0; i < arr->nd; ++i) {
      if (arr->strides[i] % isz)
        raise(PyExc_ValueError, "%s: %s.strides[%d]=%zd bytes is not a multiple of its itemsize %zd", fn, name, i,
              arr->strides[i], isz);
      a.shape[i] = arr->dimensions[i];
      a.strides[i] = arr->strides[i] / isz;
    }
    a.t.data = arr->data;
    a.t.device = {CT_CPU, 0};
    a.t.ndim = arr->nd;
    a.t.dtype = dt;
    a.t.shape = a.shape;
    a.t.strides = a.strides;
    a.t.byte_offset = 0;
    a.readonly = !(arr->flags & kNpyWriteable);
    g_stats.numpy++;
    return;
  }
  // 3. Python scalars
  if (allow_scalar && (PyBool_Check(o) || PyLong_CheckExact(o) || PyFloat_CheckExact(o))) {
    a.is_scalar = true;
    return;
  }
  // 4. DLPack 1.3 C exchange API
  if (const DLPackExchangeAPI* api = exchange_api(type)) {
    if (api->dltensor_from_py_object_no_sync) {
      CTensor t{};
      if (api->dltensor_from_py_object_no_sync(o, &t) != 0) throw nb::python_error();
      a.t = t;
      if (t.device.device_type != CT_CPU && api->current_work_stream)  // the producer's stream, for stream_for
        api->current_work_stream(t.device.device_type, t.device.device_id, &a.stream);
      a.own_dims(t.ndim, t.shape, t.strides, fn, name);  // valid until we return: copy the dims now
    } else {
      DLManagedTensorVersioned* m = nullptr;
      if (api->managed_tensor_from_py_object_no_sync(o, &m) != 0) throw nb::python_error();
      a.versioned = m;
      a.readonly = (m->flags & kDLFlagReadOnly) != 0;
      a.t = m->dl_tensor;
      a.own_dims(a.t.ndim, a.t.shape, a.t.strides, fn, name);
      if (a.t.device.device_type != CT_CPU && api->current_work_stream)
        api->current_work_stream(a.t.device.device_type, a.t.device.device_id, &a.stream);
    }
    g_stats.exchange++;
    return;
  }
  // 5. __dlpack__
  PyObject* method = PyObject_GetAttrString(o, "__dlpack__");
  if (method) {
    nb::object m = nb::steal(method);
    nb::object cap;
    try {
      nb::dict kw;
      kw["max_version"] = nb::handle(g_max_version);
      if (is_out) kw["copy"] = nb::bool_(false);
      if (any_user_stream()) {
        // DLPack's stream argument: the producer makes its pending work on the
        // array visible to the stream this thread's ops will run on (for
        // CUDA, None would mean the legacy default stream, on which they
        // otherwise run)
        nb::object dev = nb::getattr(nb::handle(o), "__dlpack_device__", nb::none());
        if (!dev.is_none()) {
          nb::tuple dt = nb::cast<nb::tuple>(dev());
          const CTDevice d{to_int32(dt[0], "__dlpack_device__", "device_type"),
                           to_int32(dt[1], "__dlpack_device__", "device_id")};
          if (void* s = d.device_type != CT_CPU ? user_stream(d) : nullptr) kw["stream"] = nb::steal(PyLong_FromVoidPtr(s));
        }
      }
      cap = m(**kw);
    } catch (nb::python_error& e) {
      if (!e.matches(PyExc_TypeError)) throw;
      cap = m();  // a producer from before DLPack 1.0
    }
    import_capsule(a, cap.ptr(), is_out, fn, name);
    if (is_out && a.legacy && PyObject_CheckBuffer(o)) {
      // A legacy capsule carries no read-only flag; a producer that also has
      // the buffer protocol (JAX) says there whether its memory is writable.
      Py_buffer v;
      if (PyObject_GetBuffer(o, &v, PyBUF_WRITABLE) != 0) {
        PyErr_Clear();
        a.readonly = true;
      } else {
        PyBuffer_Release(&v);
      }
    }
    return;
  }
  PyErr_Clear();
  // 6. the buffer protocol
  if (PyObject_CheckBuffer(o)) {
    const int flags = PyBUF_RECORDS_RO | PyBUF_FORMAT;
    if (PyObject_GetBuffer(o, &a.view, flags) != 0) throw nb::python_error();
    a.has_view = true;
    CTDataType dt;
    if (!buffer_dtype(a.view.format, a.view.itemsize, &dt))
      raise(PyExc_TypeError, "%s: %s has buffer format '%s', which ctensor does not support", fn, name,
            a.view.format ? a.view.format : "B");
    if (a.view.ndim > CT_MAX_NDIM)
      raise(PyExc_ValueError, "%s: %s.ndim=%d is more than ctensor's %d", fn, name, a.view.ndim, CT_MAX_NDIM);
    for (int i = 0; i < a.view.ndim; ++i) {
      const Py_ssize_t st = a.view.strides ? a.view.strides[i] : 0;
      if (st % a.view.itemsize)
        raise(PyExc_ValueError, "%s: %s.strides[%d]=%zd bytes is not a multiple of its itemsize %zd", fn, name, i, st,
              a.view.itemsize);
      a.shape[i] = a.view.shape ? a.view.shape[i] : 1;
      a.strides[i] = st / a.view.itemsize;
    }
    if (!a.view.strides && a.view.ndim) a.own_dims(a.view.ndim, a.shape, nullptr, fn, name);
    a.t.data = a.view.buf;
    a.t.device = {CT_CPU, 0};
    a.t.ndim = a.view.ndim;
    a.t.dtype = dt;
    a.t.shape = a.shape;
    a.t.strides = a.strides;
    a.readonly = a.view.readonly != 0;
    g_stats.buffer++;
    return;
  }
  std::string tn = type->tp_name;
  if (!allow_scalar && (PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o)))
    raise(PyExc_TypeError, "%s: %s must be an array, not a Python %s", fn, name, tn.c_str());
  raise(PyExc_TypeError,
        "%s: %s of type %s is not an array: ctensor takes objects with __dlpack__ or the buffer protocol "
        "(NumPy, PyTorch, JAX, CuPy arrays, ctensor.Tensor)%s",
        fn, name, tn.c_str(), allow_scalar ? " or a Python scalar" : "");
}

void require_writable(const Arg& a, const char* fn, const char* name) {
  if (a.readonly) raise(PyExc_ValueError, "%s: %s is read-only, so it cannot receive the result", fn, name);
}

// Turn a recorded Python scalar into a 0-d tensor of dtype `dt` (NEP 50's
// "weak" scalars: the scalar takes the array's dtype, when it fits).
void fill_scalar(Arg& a, CTDataType dt, CTDevice dev, const char* fn, const char* name) {
  PyObject* o = a.obj;
  const std::string dn = dtype_name(dt);
  CTensor src{};
  alignas(8) unsigned char sbuf[8];
  src.data = sbuf;
  src.device = {CT_CPU, 0};
  if (PyBool_Check(o)) {
    sbuf[0] = o == Py_True;
    src.dtype = {CT_BOOL, 8, 1};
  } else if (PyLong_Check(o)) {
    if (dt.code == CT_BOOL)
      raise(PyExc_TypeError, "%s: %s is a Python int but the other operand is bool: pass True/False or a bool array",
            fn, name);
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    if (dt.code == CT_INT || dt.code == CT_UINT) {
      // The value as int64 (v) or, above int64 (overflow > 0: uint64 only), as uint64 (u).
      unsigned long long u = 0;
      bool fits;
      if (overflow > 0 && dt.code == CT_UINT && dt.bits >= 64) {
        u = PyLong_AsUnsignedLongLong(o);
        fits = !(u == (unsigned long long)-1 && PyErr_Occurred());
        if (!fits) PyErr_Clear();
      } else if (overflow) {
        fits = false;
      } else if (dt.code == CT_INT) {
        fits = dt.bits >= 64 || (v >= -(1ll << (dt.bits - 1)) && v <= (1ll << (dt.bits - 1)) - 1);
      } else {
        fits = v >= 0 && (dt.bits >= 64 || v <= (1ll << dt.bits) - 1);
      }
      if (!fits) {
        std::string r = nb::cast<std::string>(nb::repr(nb::handle(o)));
        raise(PyExc_OverflowError, "%s: %s=%s does not fit the other operand's dtype %s", fn, name, r.c_str(),
              dn.c_str());
      }
      if (overflow) {
        std::memcpy(sbuf, &u, 8);
        src.dtype = {CT_UINT, 64, 1};
      } else {
        std::memcpy(sbuf, &v, 8);
        src.dtype = {CT_INT, 64, 1};
      }
    } else {
      double d = PyLong_AsDouble(o);
      if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
      std::memcpy(sbuf, &d, 8);
      src.dtype = {CT_FLOAT, 64, 1};
    }
  } else {
    if (!is_floating(dt))
      raise(PyExc_TypeError, "%s: %s is a Python float but the other operand is %s: pass an array of the dtype you want",
            fn, name, dn.c_str());
    double d = PyFloat_AsDouble(o);
    std::memcpy(sbuf, &d, 8);
    src.dtype = {CT_FLOAT, 64, 1};
  }
  a.t = CTensor{};
  a.t.data = a.scalar;
  a.t.device = {CT_CPU, 0};
  a.t.dtype = dt;
  a.t.ndim = 0;
  a.t.shape = a.shape;
  a.t.strides = a.strides;
  check(ct_cast(&src, &a.t, nullptr));
  if (dev.device_type != CT_CPU) {  // the operand's device: a 0-d tensor there, kept for the call
    a.keep = copy_to(a.t, dev, dt, fn);
    a.t = nb::inst_ptr<Tensor>(a.keep)->t;
  }
  a.readonly = true;
  g_stats.scalar++;
}


// ---------------------------------------------------------------------------
// Export: Tensor.__dlpack__
// ---------------------------------------------------------------------------

namespace {

struct Export {
  DLManagedTensorVersioned v;
  DLManagedTensor l;
  int64_t shape[CT_MAX_NDIM];
  int64_t strides[CT_MAX_NDIM];
  Storage* storage;
};

void export_free(Export* e) {
  storage_release(e->storage);
  delete e;
}

void versioned_deleter(DLManagedTensorVersioned* m) { export_free((Export*)m->manager_ctx); }
void legacy_deleter(DLManagedTensor* m) { export_free((Export*)m->manager_ctx); }

void capsule_destructor_versioned(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor_versioned")) {  // never consumed
    auto* m = (DLManagedTensorVersioned*)PyCapsule_GetPointer(cap, "dltensor_versioned");
    m->deleter(m);
  }
}
void capsule_destructor_legacy(PyObject* cap) {
  if (PyCapsule_IsValid(cap, "dltensor")) {
    auto* m = (DLManagedTensor*)PyCapsule_GetPointer(cap, "dltensor");
    m->deleter(m);
  }
}

}  // namespace

// dl_device other than the tensor's own: a copy there (ct_copy between the
// devices), unless copy=False forbids one, as the array API specifies.
nb::object tensor_dlpack(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  Tensor* t = nb::inst_ptr<Tensor>(self);
  // The consumer's stream (DLPack: it will use the tensor there). A tensor on
  // a device with streams may still be written by an op on the stream this
  // thread's ops run on: that stream is synchronised first, so the memory is
  // ready on any stream the consumer names (conservative, and correct
  // without events). Copies below are synchronised by transfer().
  (void)stream;
  if (t->t.device.device_type != CT_CPU) {
    const CTDevice dev = t->t.device;
    void* s = stream_for(dev);
    check(run_kernel(1 << 20, [&] { return ct_synchronize(dev, s); }));
  }
  Tensor* src = t;
  nb::object keep;
  const bool copy_false = !copy.is_none() && !nb::cast<bool>(copy);
  CTDevice want = t->t.device;
  if (!dl_device.is_none()) {
    if (!PyTuple_Check(dl_device.ptr()) || nb::len(dl_device) != 2)
      raise(PyExc_TypeError, "Tensor.__dlpack__: dl_device must be a (device_type, device_id) pair");
    want = parse_device(dl_device, "Tensor.__dlpack__", false);
    if (!device_exists(want))
      raise(PyExc_BufferError, "Tensor.__dlpack__: dl_device=(%d, %d) is no device of this process (see "
            "ctensor.devices())", want.device_type, want.device_id);
    if (!same_device(want, t->t.device) && copy_false)
      raise(PyExc_BufferError, "Tensor.__dlpack__: dl_device=(%d, %d) but the tensor lives on %s, and copy=False",
            want.device_type, want.device_id, device_str(t->t.device).c_str());
  }
  if (!same_device(want, t->t.device) || (!copy.is_none() && nb::cast<bool>(copy))) {  // export a fresh copy
    keep = copy_to(t->t, want, t->t.dtype, "Tensor.__dlpack__");
    src = nb::inst_ptr<Tensor>(keep);
  }
  bool versioned = false;
  if (!max_version.is_none()) versioned = nb::cast<uint32_t>(max_version[0]) >= 1;
  auto* e = new Export();
  e->storage = src->storage;
  e->storage->refs.fetch_add(1, std::memory_order_relaxed);
  std::memcpy(e->shape, src->shape, sizeof e->shape);
  std::memcpy(e->strides, src->strides, sizeof e->strides);
  CTensor dl = src->t;
  dl.shape = e->shape;
  dl.strides = e->strides;
  PyObject* cap;
  if (versioned) {
    e->v.version = {kDLPackMajor, kDLPackMinor};
    e->v.manager_ctx = e;
    e->v.deleter = versioned_deleter;
    e->v.flags = src != t ? kDLFlagIsCopied : (src->storage->readonly ? kDLFlagReadOnly : 0);
    e->v.dl_tensor = dl;
    cap = PyCapsule_New(&e->v, "dltensor_versioned", capsule_destructor_versioned);
  } else {
    e->l.dl_tensor = dl;
    e->l.manager_ctx = e;
    e->l.deleter = legacy_deleter;
    cap = PyCapsule_New(&e->l, "dltensor", capsule_destructor_legacy);
  }
  if (!cap) {
    export_free(e);
    throw nb::python_error();
  }
  return nb::steal(cap);
}

}  // namespace ctpy
