// common.cpp — errors, dtypes, and outputs shaped by the library's shape query (ct_op_output_info).
#include "common.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace ctpy {

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

// ---------------------------------------------------------------------------
// Python numbers as C numbers
// ---------------------------------------------------------------------------

namespace {
std::string short_repr(nb::handle h) {
  PyObject* r = PyObject_Repr(h.ptr());
  std::string s = "?";
  if (r) {
    const char* u = PyUnicode_AsUTF8(r);
    if (u) s = u;
    Py_DECREF(r);
  }
  PyErr_Clear();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}
}  // namespace

double to_double(nb::handle h, const char* fn, const char* arg) {
  // a float, an int, a bool, a NumPy scalar or 0-d array (PyFloat_AsDouble parses no text)
  const double v = PyFloat_AsDouble(h.ptr());
  if (v == -1.0 && PyErr_Occurred()) {
    const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError);
    PyErr_Clear();
    if (overflow)
      raise(PyExc_ValueError, "%s: %s=%s is too large for a float64", fn, arg, short_repr(h).c_str());
    raise(PyExc_TypeError, "%s: %s must be a real number, not %s (%s)", fn, arg, Py_TYPE(h.ptr())->tp_name,
          short_repr(h).c_str());
  }
  return v;
}

int64_t to_int64(nb::handle h, const char* fn, const char* arg) {
  if (PyFloat_Check(h.ptr()) || !PyIndex_Check(h.ptr()))
    raise(PyExc_TypeError, "%s: %s must be an integer, not %s (%s)", fn, arg, Py_TYPE(h.ptr())->tp_name,
          short_repr(h).c_str());
  PyObject* i = PyNumber_Index(h.ptr());
  if (!i) {
    PyErr_Clear();
    raise(PyExc_TypeError, "%s: %s must be an integer, not %s (%s)", fn, arg, Py_TYPE(h.ptr())->tp_name,
          short_repr(h).c_str());
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
  Py_DECREF(i);
  if (overflow || (v == -1 && PyErr_Occurred())) {
    PyErr_Clear();
    raise(PyExc_ValueError, "%s: %s=%s is outside the int64 range", fn, arg, short_repr(h).c_str());
  }
  return (int64_t)v;
}

int32_t to_int32(nb::handle h, const char* fn, const char* arg) {
  const int64_t v = to_int64(h, fn, arg);
  if (v < INT32_MIN || v > INT32_MAX)
    raise(PyExc_ValueError, "%s: %s=%lld is outside the int32 range", fn, arg, (long long)v);
  return (int32_t)v;
}

// ---------------------------------------------------------------------------
// dtypes
// ---------------------------------------------------------------------------

const DTypeEntry kDTypes[CT_DT_COUNT] = {
#define CT_PY_DTYPE_(N, i, code, bits, name) {name, {code, bits, 1}},
    CT_DTYPE_TABLE(CT_PY_DTYPE_)
#undef CT_PY_DTYPE_
};

std::string dtype_list() {
  std::string s;
  for (const auto& e : kDTypes) s += (s.empty() ? "" : ", ") + std::string(e.name);
  return s;
}

std::string dtype_name(CTDataType d) {
  for (const auto& e : kDTypes)
    if (same_dtype(e.dt, d)) return e.name;
  static const char* codes[] = {"int", "uint", "float", "opaque", "bfloat", "complex", "bool"};
  std::string s = d.code < 7 ? codes[d.code] : ("code" + std::to_string(d.code));
  s += std::to_string(d.bits);
  if (d.lanes != 1) s += "x" + std::to_string(d.lanes);
  return s;
}

namespace {
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
}  // namespace

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
          "%s: %s=%s is not a ctensor dtype (%s)", fn, arg, r.c_str(), dtype_list().c_str());
  }
  return d;
}

std::string shape_str(int ndim, const int64_t* shape) {
  std::string s = "[";
  for (int i = 0; i < ndim; ++i) s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

// ---------------------------------------------------------------------------
// The registry and the shape query
// ---------------------------------------------------------------------------

CTOpInfo op_info(int32_t op) {
  CTOpInfo info{};
  info.struct_size = sizeof info;
  check(ct_op_info(op, &info));
  return info;
}

std::string entry_name(const CTOpInfo& info) {
  switch (info.kind) {
    case CT_KIND_UNARY: return "ct_unary";
    case CT_KIND_UNARY_PARAM: return "ct_unary_param";
    case CT_KIND_TERNARY: return info.num_params ? "ct_ternary_param" : "ct_ternary";
    case CT_KIND_CAST: return "ct_cast";
    case CT_KIND_BINARY: return "ct_binary";
    case CT_KIND_REDUCE: return "ct_reduce";
    case CT_KIND_ALONG_AXIS: return "ct_along_axis";
    case CT_KIND_NN: return std::string("ct_nn(") + info.name + ")";
    case CT_KIND_INDEX: return "ct_index";
    default: return "ct_op_output_info";
  }
}

void query_outputs(int32_t op, const CTOpArgs& args, const CTensor* const* in, int32_t nin, CTOutputInfo* outs,
                   int32_t nout, const char* entry) {
  // The query reads only ndim, shape and dtype, so it gets the inputs as
  // compact descriptions: it checks the strides it is given against a
  // stand-in base address, which a negative-stride view does not pass.
  CTensor dense[16];
  const CTensor* ptrs[16];
  if (nin > 16) raise(PyExc_ValueError, "%s: %d inputs are more than the bindings pass", entry, nin);
  for (int32_t i = 0; i < nin; ++i) {
    ptrs[i] = in[i];
    if (!in[i]) continue;
    dense[i] = *in[i];
    dense[i].strides = nullptr;
    dense[i].byte_offset = 0;
    ptrs[i] = &dense[i];
  }
  const CTStatus s = ct_op_output_info(op, &args, ptrs, nin, outs, nout);
  if (s == CT_OK) return;
  static const char kQuery[] = "ct_op_output_info";
  std::string msg = ct_last_error();
  if (msg.empty()) msg = ct_status_string(s);
  if (msg.compare(0, sizeof kQuery - 1, kQuery) == 0) msg = entry + msg.substr(sizeof kQuery - 1);
  PyErr_SetString(exception_for(s), msg.c_str());
  throw nb::python_error();
}

CTCpuStream g_cpu_stream{sizeof(CTCpuStream), 0, nullptr, nullptr};

int64_t numel_of(const CTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndim; ++i) n *= t.shape[i];
  return n;
}

namespace {

// The last output info per op (slot op % 64, per thread), for calls whose
// args hold no pointers (elementwise, binary, ternary, cast): the same op,
// args and input dtypes and shapes give the same answer, so the library's
// query is asked once per new signature, not per call. Only answers the
// query gave are kept; the op call itself still validates everything.
struct InfoKey {
  int32_t op = -1, nin = 0;
  CTOpArgs args{};
  int32_t ndim[4] = {};
  CTDataType dt[4] = {};
  int64_t shape[4][CT_MAX_NDIM] = {};
};
struct InfoSlot {
  InfoKey key;
  CTOutputInfo info{};
};
thread_local InfoSlot t_info[64];

// Whether the call's signature can be cached (no pointers in args, at most 4 inputs).
bool cacheable(const CTOpArgs& args, const CTensor* const* in, int32_t nin) {
  if (nin > 4 || args.axes || args.desc) return false;
  for (int32_t i = 0; i < nin; ++i)
    if (!in[i]) return false;
  return true;
}
// Compared in place, field by field: no key is built per call (a zeroed
// InfoKey is over 600 bytes, and clearing and copying it cost more than the
// comparison).
bool key_matches(const InfoKey& k, int32_t op, const CTOpArgs& args, const CTensor* const* in, int32_t nin) {
  if (k.op != op || k.nin != nin || std::memcmp(&k.args, &args, sizeof args) != 0) return false;
  for (int32_t i = 0; i < nin; ++i)
    if (k.ndim[i] != in[i]->ndim || std::memcmp(&k.dt[i], &in[i]->dtype, sizeof k.dt[i]) != 0 ||
        std::memcmp(k.shape[i], in[i]->shape, sizeof(int64_t) * (size_t)in[i]->ndim) != 0)
      return false;
  return true;
}
void set_key(InfoKey* k, int32_t op, const CTOpArgs& args, const CTensor* const* in, int32_t nin) {
  k->op = op;
  k->nin = nin;
  k->args = args;
  for (int32_t i = 0; i < nin; ++i) {
    k->ndim[i] = in[i]->ndim;
    k->dt[i] = in[i]->dtype;
    std::memcpy(k->shape[i], in[i]->shape, sizeof(int64_t) * (size_t)in[i]->ndim);
  }
}

}  // namespace

void make_out(Out& o, nb::handle out, int32_t op, const CTOpArgs& args, const CTensor* const* in, int32_t nin,
              CTDevice dev, const char* fn, const char* entry) {
  if (!out.is_none()) {
    import_arg(o.arg, out.ptr(), true, false, fn, "out");
    require_writable(o.arg, fn, "out");
    o.t = &o.arg.t;
    o.result = nb::borrow(out);
    return;
  }
  InfoSlot& slot = t_info[(uint32_t)op % 64];
  const bool can_cache = cacheable(args, in, nin);
  const CTOutputInfo* info = &slot.info;
  CTOutputInfo asked;
  if (!can_cache || !key_matches(slot.key, op, args, in, nin)) {
    query_outputs(op, args, in, nin, &asked, 1, entry);
    info = &asked;
    if (can_cache) {
      set_key(&slot.key, op, args, in, nin);
      slot.info = asked;
    }
  }
  o.result = new_tensor(info->ndim, info->shape, info->dtype, dev, &o.fresh);
  o.t = &o.fresh->t;
}

}  // namespace ctpy
