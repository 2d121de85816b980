// ctensor._ctensor: the native half of the Python package.
//
// Every array argument is imported without a copy into a CTensor (which has
// DLTensor's layout): ctensor.Tensor directly, NumPy arrays by reading the
// array struct (as pybind11 does), producers with DLPack 1.3's C exchange API
// through it, then __dlpack__ (versioned capsules first, legacy after), then
// the buffer protocol. Results are ctensor.Tensor objects over memory from
// ct_malloc on the inputs' device; they export themselves through DLPack and,
// on the CPU, the buffer protocol.
//
// Category 1 and 2 functions are created here from the op registry, one
// native function per op (plus array-API aliases), so a call costs one
// nanobind dispatch, the imports and the C call. The NN ops' keyword parsing
// lives in Python (ctensor/_nn.py) over the _nn() entry point below.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include <ctensor/ctensor.h>

#include "dlpack_abi.h"
#include "nn_call.h"

namespace nb = nanobind;
using namespace ctpy;

namespace {

// ---------------------------------------------------------------------------
// Errors: the library's status and message become a Python exception.
// ---------------------------------------------------------------------------

PyObject* exception_for(CTStatus s) {
  switch (s) {
    case CT_ERR_DTYPE_MISMATCH: return PyExc_TypeError;
    case CT_ERR_UNSUPPORTED:
    case CT_ERR_NOT_FOUND: return PyExc_NotImplementedError;
    case CT_ERR_OUT_OF_MEMORY: return PyExc_MemoryError;
    case CT_ERR_INVALID_ARGUMENT:
    case CT_ERR_NEED_CONTIGUOUS:
    case CT_ERR_SHAPE_MISMATCH:
    case CT_ERR_DEVICE_MISMATCH:
    case CT_ERR_WORKSPACE_TOO_SMALL: return PyExc_ValueError;
    default: return PyExc_RuntimeError;
  }
}

[[noreturn]] void raise_status(CTStatus s) {
  const char* msg = ct_last_error();
  PyErr_SetString(exception_for(s), (msg && *msg) ? msg : ct_status_string(s));
  throw nb::python_error();
}

[[noreturn]] void raise(PyObject* type, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  PyErr_SetString(type, buf);
  throw nb::python_error();
}

inline void check(CTStatus s) {
  if (s != CT_OK) raise_status(s);
}

// ---------------------------------------------------------------------------
// dtypes
// ---------------------------------------------------------------------------

struct DTypeEntry {
  const char* name;
  CTDataType dt;
};
const DTypeEntry kDTypes[] = {
    {"bool", {CT_BOOL, 8, 1}},     {"int8", {CT_INT, 8, 1}},         {"int16", {CT_INT, 16, 1}},
    {"int32", {CT_INT, 32, 1}},    {"int64", {CT_INT, 64, 1}},       {"uint8", {CT_UINT, 8, 1}},
    {"float16", {CT_FLOAT, 16, 1}}, {"bfloat16", {CT_BFLOAT, 16, 1}}, {"float32", {CT_FLOAT, 32, 1}},
    {"float64", {CT_FLOAT, 64, 1}},
};

inline bool same_dtype(CTDataType a, CTDataType b) { return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes; }
inline bool is_floating(CTDataType d) { return d.code == CT_FLOAT || d.code == CT_BFLOAT; }
inline size_t itemsize(CTDataType d) { return (size_t(d.bits) * d.lanes + 7) / 8; }

std::string dtype_name(CTDataType d) {
  for (const auto& e : kDTypes)
    if (same_dtype(e.dt, d)) return e.name;
  static const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string s = d.code < 7 ? codes[d.code] : ("code" + std::to_string(d.code));
  s += std::to_string(d.bits);
  if (d.lanes != 1) s += "x" + std::to_string(d.lanes);
  return s;
}

// A dtype as Python sees it: ctensor.float32 and friends.
struct DType {
  CTDataType dt;
};

bool dtype_from_name(std::string name, CTDataType* out) {
  if (name.rfind("torch.", 0) == 0) name = name.substr(6);
  if (name == "bool_") name = "bool";
  if (name == "float") name = "float32";  // torch.float
  if (name == "half") name = "float16";
  if (name == "double") name = "float64";
  if (name == "long") name = "int64";
  if (name == "int") name = "int32";
  for (const auto& e : kDTypes)
    if (name == e.name) {
      *out = e.dt;
      return true;
    }
  return false;
}

// ctensor.DType, a str, a NumPy dtype or scalar type, a torch dtype, ...
bool try_parse_dtype(nb::handle h, CTDataType* out) {
  if (nb::isinstance<DType>(h)) {
    *out = nb::cast<const DType&>(h).dt;
    return true;
  }
  if (PyUnicode_Check(h.ptr())) return dtype_from_name(nb::cast<std::string>(h), out);
  if (PyType_Check(h.ptr())) {  // np.float32, float, bool, int
    PyTypeObject* t = (PyTypeObject*)h.ptr();
    if (t == &PyFloat_Type) return *out = CTDataType{CT_FLOAT, 64, 1}, true;
    if (t == &PyBool_Type) return *out = CTDataType{CT_BOOL, 8, 1}, true;
    if (t == &PyLong_Type) return *out = CTDataType{CT_INT, 64, 1}, true;
    if (nb::hasattr(h, "__name__")) return dtype_from_name(nb::cast<std::string>(h.attr("__name__")), out);
    return false;
  }
  if (nb::hasattr(h, "name") && nb::hasattr(h, "itemsize")) {  // numpy.dtype (incl. ml_dtypes)
    nb::object n = h.attr("name");
    if (PyUnicode_Check(n.ptr())) return dtype_from_name(nb::cast<std::string>(n), out);
  }
  nb::str s = nb::str(h);  // torch.float32 -> "torch.float32"
  return dtype_from_name(s.c_str(), out);
}

CTDataType parse_dtype(nb::handle h, const char* fn, const char* arg) {
  CTDataType d;
  if (!try_parse_dtype(h, &d)) {
    std::string r = nb::cast<std::string>(nb::repr(h));
    raise(PyExc_TypeError,
          "%s: %s=%s is not a ctensor dtype (bool, int8, int16, int32, int64, uint8, float16, bfloat16, float32, "
          "float64)",
          fn, arg, r.c_str());
  }
  return d;
}

// ---------------------------------------------------------------------------
// Memory and the result type
// ---------------------------------------------------------------------------

// Reference-counted device memory, shared by a Tensor and the DLPack
// capsules it exports; freed without the GIL (DLPack deleters may run anywhere).
// On the CPU the block and the data are one allocation (the data 64 bytes in).
struct Storage {
  std::atomic<int64_t> refs{1};
  void* ptr = nullptr;
  CTDevice device{CT_CPU, 0};
  bool inline_data = false;
};
constexpr size_t kInlineHeader = 64;
static_assert(sizeof(Storage) <= kInlineHeader, "Storage must fit in front of the data");

void storage_release(Storage* s) {
  if (s && s->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (s->inline_data) {
      const CTDevice dev = s->device;
      s->~Storage();
      ct_free(dev, s);
    } else {
      ct_free(s->device, s->ptr);
      delete s;
    }
  }
}

Storage* storage_alloc(CTDevice dev, size_t bytes) {
  if (dev.device_type == CT_CPU) {
    void* base = nullptr;
    check(ct_malloc(dev, kInlineHeader + bytes, &base));
    Storage* s = new (base) Storage();
    s->ptr = (char*)base + kInlineHeader;
    s->device = dev;
    s->inline_data = true;
    return s;
  }
  void* p = nullptr;
  check(ct_malloc(dev, bytes, &p));
  Storage* s = new Storage();
  s->ptr = p;
  s->device = dev;
  return s;
}

struct Tensor {
  Storage* storage = nullptr;
  CTensor t{};
  int64_t shape[CT_MAX_NDIM] = {};
  int64_t strides[CT_MAX_NDIM] = {};
  Tensor() = default;
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  ~Tensor() { storage_release(storage); }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t.ndim; ++i) n *= shape[i];
    return n;
  }
};

PyTypeObject* g_tensor_type = nullptr;

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

// ---------------------------------------------------------------------------
// Importing an argument
// ---------------------------------------------------------------------------

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

// How many of each import path ran (tests check the fast paths are taken).
struct ImportStats {
  uint64_t tensor = 0, numpy = 0, exchange = 0, dlpack_versioned = 0, dlpack_legacy = 0, buffer = 0, scalar = 0;
} g_stats;

// One imported argument: a CTensor plus whatever keeps its memory alive.
struct Arg {
  CTensor t{};
  int64_t shape[CT_MAX_NDIM];
  int64_t strides[CT_MAX_NDIM];
  alignas(8) unsigned char scalar[8];
  PyObject* obj = nullptr;  // borrowed: the caller's argument
  bool present = false;
  bool is_scalar = false;
  bool readonly = false;
  bool has_view = false;
  Py_buffer view;
  DLManagedTensor* legacy = nullptr;
  DLManagedTensorVersioned* versioned = nullptr;

  Arg() = default;
  Arg(const Arg&) = delete;
  Arg& operator=(const Arg&) = delete;
  ~Arg() { release(); }
  void release() {
    if (has_view) PyBuffer_Release(&view);
    has_view = false;
    if (legacy && legacy->deleter) legacy->deleter(legacy);
    legacy = nullptr;
    if (versioned && versioned->deleter) versioned->deleter(versioned);
    versioned = nullptr;
  }
  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
    return n;
  }
  // Point the CTensor at our own shape/stride arrays (copying a producer's).
  void own_dims(int ndim, const int64_t* sh, const int64_t* st, const char* fn, const char* name) {
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
};

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

PyObject* g_max_version = nullptr;  // (1, 3), kept for the life of the process

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
    g_stats.tensor++;
    return;
  }
  // 2. NumPy arrays: read the struct
  if (!g_numpy_ndarray && std::strcmp(type->tp_name, "numpy.ndarray") == 0) g_numpy_ndarray = type;
  if (type == g_numpy_ndarray) {
    const NpArray* arr = (const NpArray*)o;
    const NpDescr* descr = (const NpDescr*)arr->descr;
    CTDataType dt;
    const char* tn = descr->typeobj ? descr->typeobj->tp_name : "";
    const size_t tl = std::strlen(tn);
    if (descr->type_num >= 256 && tl >= 8 && std::strcmp(tn + tl - 8, "bfloat16") == 0)
      dt = {CT_BFLOAT, 16, 1};  // ml_dtypes.bfloat16, NumPy's usual bfloat16
    else if (!numpy_dtype(descr->type_num, &dt))
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
      a.own_dims(t.ndim, t.shape, t.strides, fn, name);  // valid until we return: copy the dims now
    } else {
      DLManagedTensorVersioned* m = nullptr;
      if (api->managed_tensor_from_py_object_no_sync(o, &m) != 0) throw nb::python_error();
      a.versioned = m;
      a.readonly = (m->flags & kDLFlagReadOnly) != 0;
      a.t = m->dl_tensor;
      a.own_dims(a.t.ndim, a.t.shape, a.t.strides, fn, name);
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
  if (dev.device_type != CT_CPU)
    raise(PyExc_NotImplementedError, "%s: a Python scalar for %s needs a CPU operand", fn, name);
  CTensor src{};
  alignas(8) unsigned char sbuf[8];
  src.data = sbuf;
  src.device = dev;
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
      long long lo, hi;
      if (dt.code == CT_INT) {
        lo = dt.bits >= 64 ? std::numeric_limits<long long>::min() : -(1ll << (dt.bits - 1));
        hi = dt.bits >= 64 ? std::numeric_limits<long long>::max() : (1ll << (dt.bits - 1)) - 1;
      } else {
        lo = 0;
        hi = dt.bits >= 64 ? std::numeric_limits<long long>::max() : (1ll << dt.bits) - 1;
      }
      if (overflow || v < lo || v > hi) {
        std::string r = nb::cast<std::string>(nb::repr(nb::handle(o)));
        raise(PyExc_OverflowError, "%s: %s=%s does not fit the other operand's dtype %s", fn, name, r.c_str(),
              dn.c_str());
      }
      std::memcpy(sbuf, &v, 8);
      src.dtype = {CT_INT, 64, 1};
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
  a.t.device = dev;
  a.t.dtype = dt;
  a.t.ndim = 0;
  a.t.shape = a.shape;
  a.t.strides = a.strides;
  check(ct_cast(&src, &a.t, nullptr));
  a.readonly = true;
  g_stats.scalar++;
}

// ---------------------------------------------------------------------------
// Running: threads, the GIL, outputs
// ---------------------------------------------------------------------------

CTCpuStream g_cpu_stream{sizeof(CTCpuStream), 0, nullptr, nullptr};

inline void* stream_for(CTDevice dev) {
  return (dev.device_type == CT_CPU && g_cpu_stream.num_threads != 0) ? &g_cpu_stream : nullptr;
}

// Below this many elements, releasing and retaking the GIL costs more than
// the kernel (NumPy keeps it below 500 elements).
constexpr int64_t kReleaseGilAbove = 1 << 12;

template <class F>
CTStatus run_kernel(int64_t work, F&& f) {
  if (work > kReleaseGilAbove) {
    nb::gil_scoped_release nogil;
    return f();
  }
  return f();
}

CTDataType output_dtype(int32_t rule, CTDataType in) {
  switch (rule) {
    case CT_OUTPUT_BOOL: return {CT_BOOL, 8, 1};
    case CT_OUTPUT_INT64: return {CT_INT, 64, 1};
    case CT_OUTPUT_ACCUM: return is_floating(in) ? in : CTDataType{CT_INT, 64, 1};
    case CT_OUTPUT_FLOAT: return is_floating(in) ? in : CTDataType{CT_FLOAT, 64, 1};
    default: return in;
  }
}

// The out= argument or a new tensor of the given shape, dtype and device.
struct Out {
  Arg arg;
  nb::object result;  // what the call returns
  CTensor* t = nullptr;
  Tensor* fresh = nullptr;
};

void make_out(Out& o, nb::handle out, int ndim, const int64_t* shape, CTDataType dt, CTDevice dev, const char* fn) {
  if (!out.is_none()) {
    import_arg(o.arg, out.ptr(), true, false, fn, "out");
    require_writable(o.arg, fn, "out");
    o.t = &o.arg.t;
    o.result = nb::borrow(out);
  } else {
    o.result = new_tensor(ndim, shape, dt, dev, &o.fresh);
    o.t = &o.fresh->t;
  }
}

// NumPy broadcasting of several shapes; false if they do not broadcast.
bool broadcast_shapes(const Arg* const* args, int n, int* ndim, int64_t* shape) {
  int nd = 0;
  for (int i = 0; i < n; ++i) nd = std::max(nd, int(args[i]->t.ndim));
  for (int d = 0; d < nd; ++d) shape[d] = 1;
  for (int i = 0; i < n; ++i) {
    const CTensor& t = args[i]->t;
    for (int d = 0; d < t.ndim; ++d) {
      int64_t& s = shape[nd - t.ndim + d];
      const int64_t e = t.shape[d];
      if (e == s || e == 1) continue;
      if (s != 1) return false;
      s = e;
    }
  }
  *ndim = nd;
  return true;
}

std::string shape_str(const CTensor& t) {
  std::string s = "[";
  for (int i = 0; i < t.ndim; ++i) s += (i ? "," : "") + std::to_string(t.shape[i]);
  return s + "]";
}

// View `a` with the broadcast shape: new leading dims and size-1 dims get stride 0.
void broadcast_view(Arg& a, int ndim, const int64_t* shape) {
  int64_t sh[CT_MAX_NDIM], st[CT_MAX_NDIM];
  const int off = ndim - a.t.ndim;
  for (int d = 0; d < ndim; ++d) {
    sh[d] = shape[d];
    if (d < off) st[d] = 0;
    else {
      const int s = d - off;
      const int64_t stride = a.t.strides ? a.t.strides[s] : 0;
      st[d] = (a.t.shape[s] == 1 && shape[d] != 1) ? 0 : stride;
    }
  }
  if (!a.t.strides && a.t.ndim) {  // compact row-major source: materialise its strides first
    int64_t c = 1;
    int64_t own[CT_MAX_NDIM];
    for (int s = a.t.ndim - 1; s >= 0; --s) own[s] = c, c *= a.t.shape[s];
    for (int d = off; d < ndim; ++d) st[d] = (a.t.shape[d - off] == 1 && shape[d] != 1) ? 0 : own[d - off];
  }
  std::memcpy(a.shape, sh, sizeof(int64_t) * ndim);
  std::memcpy(a.strides, st, sizeof(int64_t) * ndim);
  a.t.ndim = ndim;
  a.t.shape = a.shape;
  a.t.strides = a.strides;
}

CTOpInfo op_info(int32_t op) {
  CTOpInfo info{};
  info.struct_size = sizeof info;
  check(ct_op_info(op, &info));
  return info;
}

// ---------------------------------------------------------------------------
// Category 1 and 2 calls
// ---------------------------------------------------------------------------

struct OpCtx {
  int32_t op;
  int32_t output_rule;
  const char* name;  // the Python name, for messages
};

nb::object call_unary(const OpCtx& c, nb::handle x, nb::handle out) {
  Arg xa;
  import_arg(xa, x.ptr(), false, false, c.name, "x");
  Out o;
  make_out(o, out, xa.t.ndim, xa.t.shape, output_dtype(c.output_rule, xa.t.dtype), xa.t.device, c.name);
  check(run_kernel(xa.numel(), [&] { return ct_unary(c.op, &xa.t, o.t, stream_for(xa.t.device)); }));
  return o.result;
}

nb::object call_unary_param(const OpCtx& c, nb::handle x, const double* params, int n, nb::handle out) {
  Arg xa;
  import_arg(xa, x.ptr(), false, false, c.name, "x");
  Out o;
  make_out(o, out, xa.t.ndim, xa.t.shape, output_dtype(c.output_rule, xa.t.dtype), xa.t.device, c.name);
  check(run_kernel(xa.numel(), [&] { return ct_unary_param(c.op, &xa.t, params, n, o.t, stream_for(xa.t.device)); }));
  return o.result;
}

// The dtype and device Python scalars among `args` take: those of the first array.
const Arg* first_array(Arg* const* args, int n) {
  for (int i = 0; i < n; ++i)
    if (!args[i]->is_scalar) return args[i];
  return nullptr;
}

void fill_scalars(Arg* const* args, const char* const* names, int n, const Arg* like, const char* fn) {
  for (int i = 0; i < n; ++i)
    if (args[i]->is_scalar) fill_scalar(*args[i], like->t.dtype, like->t.device, fn, names[i]);
}

// Two Python scalars: take them as NumPy would (bool, int64 or float64).
void scalars_only(Arg* const* args, const char* const* names, int n, const char* fn) {
  CTDataType dt{CT_BOOL, 8, 1};
  for (int i = 0; i < n; ++i) {
    if (PyFloat_Check(args[i]->obj)) dt = {CT_FLOAT, 64, 1};
    else if (!PyBool_Check(args[i]->obj) && dt.code == CT_BOOL) dt = {CT_INT, 64, 1};
  }
  for (int i = 0; i < n; ++i) fill_scalar(*args[i], dt, {CT_CPU, 0}, fn, names[i]);
}

nb::object call_binary(const OpCtx& c, nb::handle a, nb::handle b, nb::handle out) {
  Arg aa, ba;
  import_arg(aa, a.ptr(), false, true, c.name, "x1");
  import_arg(ba, b.ptr(), false, true, c.name, "x2");
  Arg* args[2] = {&aa, &ba};
  const char* names[2] = {"x1", "x2"};
  if (const Arg* like = first_array(args, 2)) fill_scalars(args, names, 2, like, c.name);
  else scalars_only(args, names, 2, c.name);
  int nd = 0;
  int64_t shape[CT_MAX_NDIM];
  const Arg* both[2] = {&aa, &ba};
  Out o;
  if (!broadcast_shapes(both, 2, &nd, shape)) {
    if (out.is_none()) {
      // Let the library name the mismatch: a 0-element stand-in out is never written.
      int64_t zero = 0;
      CTensor probe{nullptr, aa.t.device, 1, output_dtype(c.output_rule, aa.t.dtype), &zero, nullptr, 0};
      CTStatus s = ct_binary(c.op, &aa.t, &ba.t, &probe, nullptr);
      if (s != CT_OK) raise_status(s);
      raise(PyExc_ValueError, "%s: x1.shape=%s and x2.shape=%s do not broadcast", c.name, shape_str(aa.t).c_str(),
            shape_str(ba.t).c_str());
    }
  }
  make_out(o, out, nd, shape, output_dtype(c.output_rule, aa.t.dtype), aa.t.device, c.name);
  int64_t work = 1;
  for (int i = 0; i < o.t->ndim; ++i) work *= o.t->shape[i];
  check(run_kernel(work, [&] { return ct_binary(c.op, &aa.t, &ba.t, o.t, stream_for(aa.t.device)); }));
  return o.result;
}

nb::object call_ternary(const OpCtx& c, nb::handle a, nb::handle b, nb::handle cc, nb::handle out) {
  const bool is_where = c.op == CT_OP_WHERE;
  const char* names[3] = {is_where ? "condition" : "a", is_where ? "x1" : "b", is_where ? "x2" : "c"};
  if (c.op == CT_OP_LERP) names[2] = "weight";
  Arg aa, ba, ca;
  import_arg(aa, a.ptr(), false, !is_where, c.name, names[0]);
  import_arg(ba, b.ptr(), false, true, c.name, names[1]);
  import_arg(ca, cc.ptr(), false, true, c.name, names[2]);
  Arg* args[3] = {&aa, &ba, &ca};
  Arg* data_args[2] = {&ba, &ca};
  const Arg* like = is_where ? first_array(data_args, 2) : first_array(args, 3);
  if (!like) {
    if (is_where) scalars_only(data_args, names + 1, 2, c.name);
    else scalars_only(args, names, 3, c.name);
  } else {
    fill_scalars(args, names, 3, like, c.name);
  }
  int nd;
  int64_t shape[CT_MAX_NDIM];
  const Arg* all[3] = {&aa, &ba, &ca};
  if (!broadcast_shapes(all, 3, &nd, shape))
    raise(PyExc_ValueError, "%s: %s.shape=%s, %s.shape=%s and %s.shape=%s do not broadcast", c.name, names[0],
          shape_str(aa.t).c_str(), names[1], shape_str(ba.t).c_str(), names[2], shape_str(ca.t).c_str());
  for (Arg* x : args) broadcast_view(*x, nd, shape);
  Out o;
  make_out(o, out, nd, shape, (is_where ? ba : aa).t.dtype, ba.t.device, c.name);
  int64_t work = 1;
  for (int i = 0; i < nd; ++i) work *= shape[i];
  check(run_kernel(work, [&] { return ct_ternary(c.op, &aa.t, &ba.t, &ca.t, o.t, stream_for(ba.t.device)); }));
  return o.result;
}

nb::object call_cast(nb::handle x, nb::handle dtype, nb::handle out) {
  const char* fn = "cast";
  Arg xa;
  import_arg(xa, x.ptr(), false, false, fn, "x");
  Out o;
  if (dtype.is_none() && out.is_none()) raise(PyExc_TypeError, "cast: give dtype, out, or both");
  CTDataType dt = dtype.is_none() ? CTDataType{} : parse_dtype(dtype, fn, "dtype");
  if (!out.is_none()) {
    make_out(o, out, 0, nullptr, dt, xa.t.device, fn);
    if (!dtype.is_none() && !same_dtype(o.t->dtype, dt))
      raise(PyExc_TypeError, "cast: dtype=%s but out.dtype=%s", dtype_name(dt).c_str(),
            dtype_name(o.t->dtype).c_str());
  } else {
    make_out(o, out, xa.t.ndim, xa.t.shape, dt, xa.t.device, fn);
  }
  check(run_kernel(xa.numel(), [&] { return ct_cast(&xa.t, o.t, stream_for(xa.t.device)); }));
  return o.result;
}

// axis: None (every axis), an int, or a sequence of ints.
struct Axes {
  int32_t v[CT_MAX_NDIM];
  int32_t n = 0;
  bool all = true;
};

Axes parse_axes(nb::handle axis, const char* fn) {
  Axes a;
  if (axis.is_none()) return a;
  a.all = false;
  auto one = [&](nb::handle h) {
    if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()))
      raise(PyExc_TypeError, "%s: axis must be None, an int or a tuple of ints, not %s", fn, Py_TYPE(h.ptr())->tp_name);
    if (a.n >= CT_MAX_NDIM) raise(PyExc_ValueError, "%s: more than %d axes", fn, CT_MAX_NDIM);
    a.v[a.n++] = nb::cast<int32_t>(h);
  };
  if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr())) {
    for (nb::handle h : axis) one(h);
  } else {
    one(axis);
  }
  return a;
}

nb::object call_reduce(const OpCtx& c, nb::handle x, nb::handle axis, bool keepdims, const double* params, int np,
                       nb::handle out) {
  Arg xa;
  import_arg(xa, x.ptr(), false, false, c.name, "x");
  Axes ax = parse_axes(axis, c.name);
  const CTDataType odt = output_dtype(c.output_rule, xa.t.dtype);
  // The shape the library will want; on a bad axis it names the problem.
  uint32_t mask = 0, seen = 0;
  bool bad = false;
  if (ax.all) mask = xa.t.ndim ? (uint32_t)((1ull << xa.t.ndim) - 1) : 0u;
  const int32_t nax = xa.t.ndim > 0 ? xa.t.ndim : 1;  // a 0-d x takes axis 0 or -1, as the library does
  for (int i = 0; i < ax.n; ++i) {
    const int32_t a = ax.v[i] < 0 ? ax.v[i] + nax : ax.v[i];
    if (a < 0 || a >= nax || (seen & (1u << a))) bad = true;
    else seen |= 1u << a;
  }
  if (!ax.all && xa.t.ndim > 0) mask = seen;
  const int32_t* axes = ax.all ? nullptr : ax.v;
  if (bad) {
    int64_t zero = 0;
    CTensor probe{nullptr, xa.t.device, 1, odt, &zero, nullptr, 0};
    check(ct_reduce(c.op, &xa.t, axes, ax.n, keepdims, params, np, &probe, nullptr));
    raise(PyExc_ValueError, "%s: bad axis", c.name);
  }
  int64_t shape[CT_MAX_NDIM];
  int nd = 0;
  for (int i = 0; i < xa.t.ndim; ++i) {
    if (mask & (1u << i)) {
      if (keepdims) shape[nd++] = 1;
    } else {
      shape[nd++] = xa.t.shape[i];
    }
  }
  Out o;
  make_out(o, out, nd, shape, odt, xa.t.device, c.name);
  check(run_kernel(xa.numel(),
                   [&] { return ct_reduce(c.op, &xa.t, axes, ax.n, keepdims, params, np, o.t, stream_for(xa.t.device)); }));
  return o.result;
}

nb::object call_along_axis(const OpCtx& c, nb::handle x, nb::handle axis, nb::handle out) {
  Arg xa;
  import_arg(xa, x.ptr(), false, false, c.name, "x");
  int32_t ax;
  if (axis.is_none()) {
    if (xa.t.ndim > 1)
      raise(PyExc_ValueError, "%s: axis=None needs x.ndim <= 1 (x.shape=%s): name the axis", c.name,
            shape_str(xa.t).c_str());
    ax = 0;
  } else {
    if (!PyLong_Check(axis.ptr()) || PyBool_Check(axis.ptr()))
      raise(PyExc_TypeError, "%s: axis must be an int, not %s", c.name, Py_TYPE(axis.ptr())->tp_name);
    ax = nb::cast<int32_t>(axis);
  }
  Out o;
  make_out(o, out, xa.t.ndim, xa.t.shape, output_dtype(c.output_rule, xa.t.dtype), xa.t.device, c.name);
  check(run_kernel(xa.numel(), [&] { return ct_along_axis(c.op, &xa.t, ax, o.t, stream_for(xa.t.device)); }));
  return o.result;
}

// clamp(x, min=None, max=None): a missing bound is no bound.
nb::object call_clamp(const OpCtx& c, nb::handle x, nb::handle lo, nb::handle hi, nb::handle out) {
  if (!lo.is_none() && !hi.is_none()) {
    double p[2] = {nb::cast<double>(lo), nb::cast<double>(hi)};
    return call_unary_param(c, x, p, 2, out);
  }
  if (lo.is_none() && hi.is_none()) {  // nothing to clamp: a copy (the array API allows both None)
    Arg xa;
    import_arg(xa, x.ptr(), false, false, c.name, "x");
    Out o;
    make_out(o, out, xa.t.ndim, xa.t.shape, xa.t.dtype, xa.t.device, c.name);
    check(run_kernel(xa.numel(), [&] { return ct_copy(&xa.t, o.t, stream_for(xa.t.device)); }));
    return o.result;
  }
  // One bound: maximum(x, lo) or minimum(x, hi), both NaN-propagating as clamp.
  OpCtx b{lo.is_none() ? (int32_t)CT_OP_MINIMUM : (int32_t)CT_OP_MAXIMUM, CT_OUTPUT_SAME, c.name};
  return call_binary(b, x, lo.is_none() ? hi : lo, out);
}

// ---------------------------------------------------------------------------
// NN ops: one entry point; the keywords are parsed in ctensor/_nn.py.
// ---------------------------------------------------------------------------

// A per-thread workspace, grown as needed and kept: NN calls allocate nothing
// once warm.
struct Workspace {
  void* ptr = nullptr;
  size_t bytes = 0;
  CTDevice dev{CT_CPU, 0};
  ~Workspace() { ct_free(dev, ptr); }
  void* get(CTDevice d, size_t n) {
    if (n == 0) return nullptr;
    if (ptr && (d.device_type != dev.device_type || d.device_id != dev.device_id || n > bytes)) {
      ct_free(dev, ptr);
      ptr = nullptr;
      bytes = 0;
    }
    if (!ptr) {
      check(ct_malloc(d, n, &ptr));
      bytes = n;
      dev = d;
    }
    return ptr;
  }
};
thread_local Workspace t_workspace;

void nn_call(int32_t op, nb::list tensors, std::vector<int64_t> ints, std::vector<double> floats) {
  const CTOpInfo info = op_info(op);
  if (info.kind != CT_KIND_NN) raise(PyExc_ValueError, "_nn: op %d (%s) is not an NN op", op, info.name);
  const size_t n = nb::len(tensors);
  if ((int32_t)n != info.num_tensors)
    raise(PyExc_ValueError, "_nn: %s takes %d tensors (%s), got %zu", info.name, info.num_tensors, info.tensor_names, n);
  // tensor names, for messages
  std::vector<std::string> names;
  {
    std::string s = info.tensor_names;
    size_t p = 0;
    while (p <= s.size()) {
      size_t q = s.find(',', p);
      if (q == std::string::npos) q = s.size();
      std::string nm = s.substr(p, q - p);
      if (!nm.empty() && nm.back() == '?') nm.pop_back();
      names.push_back(nm);
      p = q + 1;
    }
  }
  std::deque<Arg> args(n);
  CTensor* T[8] = {};
  CTDevice dev{CT_CPU, 0};
  bool have_dev = false;
  int64_t work = 0;
  for (size_t i = 0; i < n && i < 8; ++i) {
    nb::handle h = tensors[i];
    if (h.is_none()) continue;
    const bool is_out = (int32_t)i >= info.num_inputs;
    import_arg(args[i], h.ptr(), is_out, false, info.name, names[i].c_str());
    if (is_out) require_writable(args[i], info.name, names[i].c_str());
    T[i] = &args[i].t;
    if (!have_dev) dev = args[i].t.device, have_dev = true;
    work += args[i].numel();
  }
  auto iv = [&](size_t k) -> int64_t { return k < ints.size() ? ints[k] : 0; };
  auto fv = [&](size_t k) -> double { return k < floats.size() ? floats[k] : 0.0; };
  CTMatmulDesc md{sizeof md, (int32_t)iv(0)};
  CTConv2dDesc cd{};
  cd.struct_size = sizeof cd;
  cd.groups = (int32_t)iv(0);
  cd.stride[0] = iv(1), cd.stride[1] = iv(2);
  cd.pad_begin[0] = iv(3), cd.pad_begin[1] = iv(4), cd.pad_end[0] = iv(5), cd.pad_end[1] = iv(6);
  cd.dilation[0] = iv(7), cd.dilation[1] = iv(8);
  cd.activation = (int32_t)iv(9);
  CTPool2dDesc pd{};
  pd.struct_size = sizeof pd;
  pd.count_include_pad = (int32_t)iv(0);
  pd.kernel[0] = iv(1), pd.kernel[1] = iv(2);
  pd.stride[0] = iv(3), pd.stride[1] = iv(4);
  pd.pad_begin[0] = iv(5), pd.pad_begin[1] = iv(6), pd.pad_end[0] = iv(7), pd.pad_end[1] = iv(8);
  pd.dilation[0] = iv(9), pd.dilation[1] = iv(10);
  CTBatchNormDesc bd{sizeof bd, 0, fv(0)};
  CTLayerNormDesc ld{sizeof ld, (int32_t)iv(0), fv(0)};
  void* stream = stream_for(dev);
  size_t bytes = 0;
  CTStatus s;
  const void* desc = op == CT_OP_MATMUL ? (const void*)&md
                   : (op == CT_OP_CONV2D || op == CT_OP_CONV2D_BACKWARD_DATA || op == CT_OP_CONV2D_BACKWARD_WEIGHT)
                       ? (const void*)&cd
                   : (op == CT_OP_BATCH_NORM || op == CT_OP_BATCH_NORM_TRAINING || op == CT_OP_BATCH_NORM_BACKWARD)
                       ? (const void*)&bd
                   : (op == CT_OP_LAYER_NORM || op == CT_OP_LAYER_NORM_BACKWARD) ? (const void*)&ld
                                                                                  : (const void*)&pd;
  auto dispatch = [&](bool query, void* ws) { return ctnn::call(op, desc, T, query, &bytes, ws, stream); };
  s = dispatch(true, nullptr);
  if (s == CT_ERR_NOT_FOUND && ct_last_error()[0] == 0)
    raise(PyExc_NotImplementedError, "_nn: the bindings do not know NN op %s yet", info.name);
  check(s);
  void* ws = t_workspace.get(dev, bytes);
  check(run_kernel(work, [&] { return dispatch(false, ws); }));
}

// shape, dtype name and device of any array argument (for the Python layer)
nb::tuple arg_info(nb::handle x) {
  Arg a;
  import_arg(a, x.ptr(), false, false, "ctensor", "x");
  nb::list shape;
  for (int i = 0; i < a.t.ndim; ++i) shape.append(a.t.shape[i]);
  return nb::make_tuple(nb::tuple(shape), dtype_name(a.t.dtype),
                        nb::make_tuple(a.t.device.device_type, a.t.device.device_id));
}

nb::object empty(nb::handle shape, nb::handle dtype, nb::handle device) {
  std::vector<int64_t> sh;
  if (PyLong_Check(shape.ptr())) sh.push_back(nb::cast<int64_t>(shape));
  else
    for (nb::handle h : shape) sh.push_back(nb::cast<int64_t>(h));
  CTDataType dt = parse_dtype(dtype, "empty", "dtype");
  CTDevice dev{CT_CPU, 0};
  if (!device.is_none()) {
    if (PyTuple_Check(device.ptr())) {
      dev.device_type = nb::cast<int32_t>(device[0]);
      dev.device_id = nb::cast<int32_t>(device[1]);
    } else {
      std::string d = nb::cast<std::string>(device);
      if (d != "cpu") raise(PyExc_NotImplementedError, "empty: device '%s': only 'cpu' or a DLPack (type, id) pair", d.c_str());
    }
  }
  Tensor* t;
  return new_tensor((int)sh.size(), sh.data(), dt, dev, &t);
}

// ---------------------------------------------------------------------------
// The Tensor type: DLPack export, buffer protocol, attributes
// ---------------------------------------------------------------------------

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

nb::object tensor_dlpack(nb::handle self, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  Tensor* t = nb::inst_ptr<Tensor>(self);
  (void)stream;  // CPU memory needs no stream; CUDA results will synchronise here
  if (!dl_device.is_none()) {
    int32_t dt = nb::cast<int32_t>(dl_device[0]), di = nb::cast<int32_t>(dl_device[1]);
    if (dt != t->t.device.device_type || di != t->t.device.device_id)
      raise(PyExc_BufferError, "Tensor.__dlpack__: dl_device=(%d, %d) but the tensor lives on (%d, %d); copies across "
            "devices are not supported", dt, di, t->t.device.device_type, t->t.device.device_id);
  }
  Tensor* src = t;
  nb::object keep;
  if (!copy.is_none() && nb::cast<bool>(copy)) {  // copy=True: export a fresh copy
    Tensor* c;
    keep = new_tensor(t->t.ndim, t->shape, t->t.dtype, t->t.device, &c);
    check(ct_copy(&t->t, &c->t, nullptr));
    src = c;
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
    e->v.flags = src != t ? kDLFlagIsCopied : 0;
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

std::string device_str(CTDevice d) {
  switch (d.device_type) {
    case CT_CPU: return "cpu";
    case CT_CUDA: return "cuda:" + std::to_string(d.device_id);
    case CT_OPENCL: return "opencl:" + std::to_string(d.device_id);
    default: return "dev" + std::to_string(d.device_type) + ":" + std::to_string(d.device_id);
  }
}

// ---------------------------------------------------------------------------
// Registering the ops
// ---------------------------------------------------------------------------

std::deque<std::string> g_strings;  // names, signatures and docs outlive the module's functions
const char* keep(std::string s) {
  g_strings.push_back(std::move(s));
  return g_strings.back().c_str();
}

// Array-API (and torch) names for ops whose C name differs.
const std::unordered_map<std::string, std::vector<std::string>> kAliases = {
    {"neg", {"negative"}},
    {"bitwise_not", {"bitwise_invert"}},
    {"clamp", {"clip"}},
    {"sub", {"subtract"}},
    {"mul", {"multiply"}},
    {"div", {"divide"}},
    {"floor_div", {"floor_divide"}},
    {"mod", {"remainder"}},
    {"left_shift", {"bitwise_left_shift"}},
    {"right_shift", {"bitwise_right_shift"}},
    {"cumsum", {"cumulative_sum"}},
    {"cumprod", {"cumulative_prod"}},
};

const char* kind_name(int32_t k) {
  switch (k) {
    case CT_KIND_UNARY: return "unary";
    case CT_KIND_UNARY_PARAM: return "unary_param";
    case CT_KIND_TERNARY: return "ternary";
    case CT_KIND_CAST: return "cast";
    case CT_KIND_BINARY: return "binary";
    case CT_KIND_REDUCE: return "reduce";
    case CT_KIND_ALONG_AXIS: return "along_axis";
    case CT_KIND_NN: return "nn";
    default: return "unknown";
  }
}

std::string output_doc(int32_t rule) {
  switch (rule) {
    case CT_OUTPUT_BOOL: return "The result is bool.";
    case CT_OUTPUT_INT64: return "The result is int64.";
    case CT_OUTPUT_ACCUM: return "The result has x's dtype for floats, int64 for integers and bool.";
    case CT_OUTPUT_FLOAT: return "The result has x's dtype for floats, float64 for integers and bool.";
    default: return "The result has the input's dtype.";
  }
}

const char* kOutDoc =
    "out: an array to write into (same device, the result's shape and dtype; any strides). Without it a new "
    "ctensor.Tensor on the inputs' device is returned.";

void register_ops(nb::module_& m, nb::dict bound) {
  const int32_t count = ct_op_count();
  for (int32_t op = 0; op < count; ++op) {
    CTOpInfo info{};
    info.struct_size = sizeof info;
    if (ct_op_info(op, &info) != CT_OK) continue;
    if (info.kind == CT_KIND_NN || info.kind == CT_KIND_CAST) continue;  // _nn.py; cast/astype below
    std::vector<std::string> names = {info.name};
    auto al = kAliases.find(info.name);
    if (al != kAliases.end()) names.insert(names.end(), al->second.begin(), al->second.end());
    if (std::string(info.name) == "gelu") names = {"gelu"};
    nb::list pynames;
    for (const std::string& pyname : names) {
      pynames.append(pyname);
      const OpCtx c{op, info.output_dtype, keep(pyname)};
      const std::string head = std::string(info.summary) + ".\n\n";
      const std::string tail = "\n\n" + output_doc(info.output_dtype) + "\n" + kOutDoc + "\n\nctensor op '" +
                               info.name + "' (category " + std::to_string(info.category) + ", " +
                               kind_name(info.kind) + ").";
      const char* nm = c.name;
      switch (info.kind) {
        case CT_KIND_UNARY: {
          if (std::string(info.name) == "gelu") {
            const char* doc = keep(head + "approximate: 'none' (erf form) or 'tanh' (as torch.nn.functional.gelu)." + tail);
            const OpCtx tanh_c{CT_OP_GELU_TANH, info.output_dtype, nm};
            m.def(nm, [c, tanh_c](nb::handle x, const std::string& approximate, nb::handle out) {
                if (approximate == "none") return call_unary(c, x, out);
                if (approximate == "tanh") return call_unary(tanh_c, x, out);
                raise(PyExc_ValueError, "gelu: approximate='%s' (expected 'none' or 'tanh')", approximate.c_str());
              }, nb::arg("x"), nb::kw_only(), nb::arg("approximate") = "none", nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, *, approximate: str = 'none', out: object | None = None) -> object")),
              doc);
          } else {
            m.def(nm, [c](nb::handle x, nb::handle out) { return call_unary(c, x, out); }, nb::arg("x"),
                  nb::kw_only(), nb::arg("out") = nb::none(),
                  nb::sig(keep(std::string("def ") + nm + "(x: object, *, out: object | None = None) -> object")),
                  keep(head + "x: the input array." + tail));
          }
          break;
        }
        case CT_KIND_UNARY_PARAM: {
          const std::string n = info.name;
          if (n == "clamp") {
            m.def(nm, [c](nb::handle x, nb::handle lo, nb::handle hi, nb::handle out) {
                return call_clamp(c, x, lo, hi, out);
              }, nb::arg("x"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none(), nb::kw_only(),
              nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, min: float | None = None, max: float | None = None, *, out: object | None = "
                           "None) -> object")),
              keep(head + "min, max: the bounds (numbers); None is no bound. NaN stays NaN." + tail));
          } else {
            // leaky_relu(x, negative_slope=0.01), elu(x, alpha=1.0), pow_scalar(x, p), ...
            std::string pname = info.param_names;
            bool has_default = false;
            double dflt = 0;
            if (n == "leaky_relu") pname = "negative_slope", has_default = true, dflt = 0.01;
            if (n == "elu") has_default = true, dflt = 1.0;
            if (info.num_params != 1) continue;  // a future multi-parameter op: not bound generically
            auto fn = [c](nb::handle x, double p, nb::handle out) { return call_unary_param(c, x, &p, 1, out); };
            const char* sig = keep(std::string("def ") + nm + "(x: object, " + pname + ": float" +
                                   (has_default ? " = " + nb::cast<std::string>(nb::repr(nb::float_(dflt))) : "") +
                                   ", *, out: object | None = None) -> object");
            const char* doc = keep(head + pname + ": the op's parameter (" + info.param_names + ")." + tail);
            if (has_default)
              m.def(nm, fn, nb::arg("x"), nb::arg(keep(pname)) = dflt, nb::kw_only(), nb::arg("out") = nb::none(),
                    nb::sig(sig), doc);
            else
              m.def(nm, fn, nb::arg("x"), nb::arg(keep(pname)), nb::kw_only(), nb::arg("out") = nb::none(),
                    nb::sig(sig), doc);
          }
          break;
        }
        case CT_KIND_TERNARY: {
          const bool w = op == CT_OP_WHERE;
          const char* a0 = w ? "condition" : "a";
          const char* a1 = w ? "x1" : "b";
          const char* a2 = w ? "x2" : (op == CT_OP_LERP ? "weight" : "c");
          m.def(nm, [c](nb::handle a, nb::handle b, nb::handle cc, nb::handle out) {
              return call_ternary(c, a, b, cc, out);
            }, nb::arg(a0), nb::arg(a1), nb::arg(a2), nb::kw_only(), nb::arg("out") = nb::none(),
            nb::sig(keep(std::string("def ") + nm + "(" + a0 + ": object, " + a1 + ": object, " + a2 +
                         ": object, *, out: object | None = None) -> object")),
            keep(head + "Operands broadcast as in NumPy (no copies: stride-0 views); Python scalars take the "
                        "array operands' dtype." + tail));
          break;
        }
        case CT_KIND_BINARY: {
          m.def(nm, [c](nb::handle a, nb::handle b, nb::handle out) { return call_binary(c, a, b, out); },
                nb::arg("x1"), nb::arg("x2"), nb::kw_only(), nb::arg("out") = nb::none(),
                nb::sig(keep(std::string("def ") + nm +
                             "(x1: object, x2: object, *, out: object | None = None) -> object")),
                keep(head + "x1, x2: arrays of one dtype that broadcast as in NumPy; either may be a Python "
                            "scalar, which takes the other's dtype." + tail));
          break;
        }
        case CT_KIND_REDUCE: {
          const char* doc = keep(head +
                                 "axis: None (every axis), an int, or a tuple of ints (() reduces nothing); negative "
                                 "counts from the end.\nkeepdims: keep the reduced axes as size 1." +
                                 (info.num_params ? "\ncorrection: subtracted from the count (NumPy's ddof)." : "") +
                                 tail);
          if (info.num_params == 1) {
            m.def(nm, [c](nb::handle x, nb::handle axis, double correction, bool keepdims, nb::handle out) {
                return call_reduce(c, x, axis, keepdims, &correction, 1, out);
              }, nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("correction") = 0.0,
              nb::arg("keepdims") = false, nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, *, axis: int | tuple[int, ...] | None = None, correction: float = 0.0, "
                           "keepdims: bool = False, out: object | None = None) -> object")),
              doc);
          } else {
            m.def(nm, [c](nb::handle x, nb::handle axis, bool keepdims, nb::handle out) {
                return call_reduce(c, x, axis, keepdims, nullptr, 0, out);
              }, nb::arg("x"), nb::kw_only(), nb::arg("axis") = nb::none(), nb::arg("keepdims") = false,
              nb::arg("out") = nb::none(),
              nb::sig(keep(std::string("def ") + nm +
                           "(x: object, *, axis: int | tuple[int, ...] | None = None, keepdims: bool = False, "
                           "out: object | None = None) -> object")),
              doc);
          }
          break;
        }
        case CT_KIND_ALONG_AXIS: {
          const bool cum = op == CT_OP_CUMSUM || op == CT_OP_CUMPROD;
          auto fn = [c](nb::handle x, nb::handle axis, nb::handle out) { return call_along_axis(c, x, axis, out); };
          const char* doc = keep(head + (cum ? "axis: the axis to run along; None only for x.ndim <= 1."
                                             : "axis: the axis to normalise along (default: the last).") + tail);
          if (cum)
            m.def(nm, fn, nb::arg("x"), nb::arg("axis") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
                  nb::sig(keep(std::string("def ") + nm +
                               "(x: object, axis: int | None = None, *, out: object | None = None) -> object")),
                  doc);
          else
            m.def(nm, fn, nb::arg("x"), nb::arg("axis") = -1, nb::kw_only(), nb::arg("out") = nb::none(),
                  nb::sig(keep(std::string("def ") + nm +
                               "(x: object, axis: int = -1, *, out: object | None = None) -> object")),
                  doc);
          break;
        }
        default:
          break;
      }
    }
    bound[nb::int_(op)] = nb::tuple(pynames);
  }
}

}  // namespace

NB_MODULE(_ctensor, m) {
  m.doc() = "ctensor's native module: the C library's ops on any DLPack or buffer-protocol array.";
  g_max_version = nb::make_tuple(kDLPackMajor, kDLPackMinor).release().ptr();

  nb::class_<DType>(m, "DType", "An element type: ctensor.float32, ctensor.int64, ...")
      .def_prop_ro("name", [](const DType& d) { return dtype_name(d.dt); })
      .def_prop_ro("itemsize", [](const DType& d) { return itemsize(d.dt); })
      .def_prop_ro("dlpack", [](const DType& d) { return nb::make_tuple(d.dt.code, d.dt.bits, d.dt.lanes); },
                   "(code, bits, lanes) as in DLPack's DLDataType")
      .def("__str__", [](const DType& d) { return dtype_name(d.dt); })
      .def("__repr__", [](const DType& d) { return "ctensor." + dtype_name(d.dt); })
      .def("__hash__", [](const DType& d) { return nb::hash(nb::str(dtype_name(d.dt).c_str())); })
      .def("__eq__", [](const DType& d, nb::handle other) {
        CTDataType o;
        try {
          return try_parse_dtype(other, &o) && same_dtype(o, d.dt);
        } catch (nb::python_error&) {
          return false;
        }
      })
      .def("__ne__", [](const DType& d, nb::handle other) {
        CTDataType o;
        try {
          return !(try_parse_dtype(other, &o) && same_dtype(o, d.dt));
        } catch (nb::python_error&) {
          return true;
        }
      });
  for (const auto& e : kDTypes) m.attr(e.name) = DType{e.dt};

  nb::class_<Tensor>(m, "Tensor", nb::type_slots(tensor_slots),
                     "An array that ctensor allocated: the result of an op without out=.\n\n"
                     "It exports itself through DLPack (numpy.from_dlpack, torch.from_dlpack, jax.dlpack) and, on "
                     "the CPU, through the buffer protocol and __array__, always without a copy.")
      .def_prop_ro("shape", [](const Tensor& t) {
        nb::list l;
        for (int i = 0; i < t.t.ndim; ++i) l.append(t.shape[i]);
        return nb::tuple(l);
      })
      .def_prop_ro("strides", [](const Tensor& t) {
        nb::list l;
        for (int i = 0; i < t.t.ndim; ++i) l.append(t.strides[i]);
        return nb::tuple(l);
      }, "strides in elements")
      .def_prop_ro("ndim", [](const Tensor& t) { return t.t.ndim; })
      .def_prop_ro("size", [](const Tensor& t) { return t.numel(); })
      .def_prop_ro("nbytes", [](const Tensor& t) { return t.numel() * (int64_t)itemsize(t.t.dtype); })
      .def_prop_ro("dtype", [](const Tensor& t) { return DType{t.t.dtype}; })
      .def_prop_ro("device", [](const Tensor& t) { return device_str(t.t.device); })
      .def_prop_ro("data_ptr", [](const Tensor& t) { return (uintptr_t)t.t.data + t.t.byte_offset; },
                   "address of the first element")
      .def("__len__", [](const Tensor& t) {
        if (t.t.ndim == 0) raise(PyExc_TypeError, "len() of a 0-d ctensor.Tensor");
        return t.shape[0];
      })
      .def("__dlpack__", &tensor_dlpack, nb::kw_only(), nb::arg("stream") = nb::none(),
           nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(), nb::arg("copy") = nb::none(),
           "Export as a DLPack capsule (versioned when max_version >= (1, 0)), sharing memory.")
      .def("numpy", [](nb::handle self) { return nb::module_::import_("ctensor").attr("_numpy_view")(self); },
           nb::sig("def numpy(self) -> numpy.ndarray"),
           "A NumPy array over this tensor's memory, no copy (bfloat16 as ml_dtypes.bfloat16).")
      .def("__array__", [](nb::handle self, nb::handle dtype, nb::handle copy) {
        return nb::module_::import_("ctensor").attr("_tensor_array")(self, dtype, copy);
      }, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none(),
         nb::sig("def __array__(self, dtype: object | None = None, copy: bool | None = None) -> numpy.ndarray"),
         "NumPy's conversion protocol: a view, or a copy when dtype differs or copy=True.")
      .def("__repr__", [](nb::handle self) { return nb::module_::import_("ctensor").attr("_tensor_repr")(self); })
      .def("__dlpack_device__", [](const Tensor& t) {
        return nb::make_tuple(t.t.device.device_type, t.t.device.device_id);
      });

  g_tensor_type = (PyTypeObject*)nb::type<Tensor>().ptr();

  nb::dict bound;
  register_ops(m, bound);
  m.attr("_bound_names") = bound;

  m.def("cast", &call_cast, nb::arg("x"), nb::arg("dtype") = nb::none(), nb::kw_only(), nb::arg("out") = nb::none(),
        nb::sig("def cast(x: object, dtype: object | None = None, *, out: object | None = None) -> object"),
        "Convert x to dtype (or to out's dtype). Float to integer truncates toward zero and saturates (NaN gives "
        "0); integer to narrower integer wraps; to bool is x != 0.\n\nctensor op 'cast' (category 1).");
  m.def("astype", [](nb::handle x, nb::handle dtype, bool copy) -> nb::object {
      if (!copy) {
        CTDataType want = parse_dtype(dtype, "astype", "dtype");
        Arg a;
        import_arg(a, x.ptr(), false, false, "astype", "x");
        if (same_dtype(a.t.dtype, want)) return nb::borrow(x);
      }
      return call_cast(x, dtype, nb::none());
    }, nb::arg("x"), nb::arg("dtype"), nb::kw_only(), nb::arg("copy") = true,
    nb::sig("def astype(x: object, dtype: object, *, copy: bool = True) -> object"),
    "x converted to dtype (the array API's astype); copy=False returns x itself when it already has dtype.");
  bound[nb::int_((int)CT_OP_CAST)] = nb::make_tuple("cast", "astype");

  m.def("_nn", &nn_call, nb::arg("op"), nb::arg("tensors"), nb::arg("ints"), nb::arg("floats"),
        "Run NN op `op` on tensors (None for an absent optional one; outputs preallocated) with the descriptor "
        "fields in ints and floats (see ctensor/_nn.py).");
  m.def("_reinterpret", [](nb::handle x, nb::handle dtype) {
    Tensor* t = nb::inst_ptr<Tensor>(x);
    CTDataType dt = parse_dtype(dtype, "_reinterpret", "dtype");
    if (itemsize(dt) != itemsize(t->t.dtype))
      raise(PyExc_ValueError, "_reinterpret: %s and %s differ in size", dtype_name(dt).c_str(),
            dtype_name(t->t.dtype).c_str());
    nb::object obj = nb::inst_alloc(nb::handle((PyObject*)g_tensor_type));
    auto* r = new (nb::inst_ptr<Tensor>(obj)) Tensor();
    nb::inst_mark_ready(obj);
    r->storage = t->storage;
    r->storage->refs.fetch_add(1, std::memory_order_relaxed);
    r->t = t->t;
    r->t.dtype = dt;
    std::memcpy(r->shape, t->shape, sizeof r->shape);
    std::memcpy(r->strides, t->strides, sizeof r->strides);
    r->t.shape = r->shape;
    r->t.strides = r->strides;
    return obj;
  }, nb::arg("x"), nb::arg("dtype"), "The same memory as a Tensor of another dtype of the same size.");
  m.def("_arg_info", &arg_info, nb::arg("x"), "(shape, dtype name, (device_type, device_id)) of an array argument");
  m.def("empty", &empty, nb::arg("shape"), nb::arg("dtype") = "float32", nb::arg("device") = nb::none(),
        nb::sig("def empty(shape: int | tuple[int, ...], dtype: object = 'float32', device: object | None = None) -> "
                "Tensor"),
        "A new uninitialised row-major ctensor.Tensor. device: 'cpu' (default) or a DLPack (device_type, "
        "device_id) pair.");
  m.def("_op_info", [](int32_t op) {
    CTOpInfo i = op_info(op);
    nb::dict d;
    d["id"] = i.op;
    d["name"] = i.name;
    d["summary"] = i.summary;
    d["category"] = i.category;
    d["kind"] = kind_name(i.kind);
    d["num_inputs"] = i.num_inputs;
    d["num_params"] = i.num_params;
    d["param_names"] = i.param_names;
    d["output_dtype"] = i.output_dtype;
    d["inplace"] = i.inplace != 0;
    d["num_tensors"] = i.num_tensors;
    d["tensor_names"] = i.tensor_names ? i.tensor_names : "";
    return d;
  });
  m.def("_op_count", &ct_op_count);
  m.def("_op_supported", [](int32_t op, int32_t device_type, int32_t device_id, nb::handle dtype) {
    CTDataType dt = parse_dtype(dtype, "op_supported", "dtype");
    CTStatus s = ct_op_supported(op, CTDevice{device_type, device_id}, dt);
    return nb::make_tuple(s == CT_OK, s == CT_OK ? "" : ct_last_error());
  });
  m.def("_device_count", &ct_device_count);
  m.def("_device_info", [](int32_t i) {
    CTDeviceInfo info{};
    info.struct_size = sizeof info;
    check(ct_device_info(i, &info));
    nb::dict d;
    d["device_type"] = info.device.device_type;
    d["id"] = info.device.device_id;
    d["type"] = device_str(CTDevice{info.device.device_type, 0}).substr(0, device_str(info.device).find(':'));
    d["name"] = info.name;
    d["backend"] = info.backend;
    d["compute_units"] = info.compute_units;
    d["default_threads"] = info.default_threads;
    d["memory_bytes"] = info.memory_bytes;
    return d;
  });
  m.def("set_num_threads", [](int n) {
    if (n < 0) raise(PyExc_ValueError, "set_num_threads: n=%d is negative (0 = the library default)", n);
    g_cpu_stream.num_threads = n;
  }, nb::arg("n"), "Threads for CPU ops (0 = the library default, 1 = the calling thread only).");
  m.def("get_num_threads", [] { return g_cpu_stream.num_threads; }, "The value set_num_threads set (0 = default).");
  m.def("_import_stats", [] {
    nb::dict d;
    d["tensor"] = g_stats.tensor;
    d["numpy"] = g_stats.numpy;
    d["exchange"] = g_stats.exchange;
    d["dlpack_versioned"] = g_stats.dlpack_versioned;
    d["dlpack_legacy"] = g_stats.dlpack_legacy;
    d["buffer"] = g_stats.buffer;
    d["scalar"] = g_stats.scalar;
    return d;
  }, "How many arguments each import path has taken (for tests of the fast paths).");
  m.attr("__version__") = ct_version_string();
  m.attr("_header_version") = nb::make_tuple(CT_VERSION_MAJOR, CT_VERSION_MINOR, CT_VERSION_PATCH);
  m.attr("_max_ndim") = CT_MAX_NDIM;
}
