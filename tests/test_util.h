// test_util.h — helpers shared by the C-API tests: a host tensor that owns its
// bytes, the dtypes, value <-> double/int64 conversion for every dtype
// (with the reference library's float16/bfloat16 codec, independent of the
// library), a deterministic RNG and byte-sentinel helpers. Only
// <ctensor/ctensor.h> and tests/reference.
//
// Integer elements are int64 values here, as in the reference library
// (ctref::Array): exact, except that a uint64 element is held as the int64
// with the same bits (uint64 max is -1); load_f reads the uint64 value.
#ifndef CTENSOR_TESTS_TEST_UTIL_H_
#define CTENSOR_TESTS_TEST_UTIL_H_

#include <ctensor/ctensor.h>
#include <reference.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace ctt {

// ---------------------------------------------------------------------------
// dtypes
// ---------------------------------------------------------------------------

enum Cls { CLS_BOOL, CLS_INT, CLS_UINT, CLS_FLOAT };

struct DType {
  const char* name;
  CTDataType dt;
  int size;  // bytes
  Cls cls;
  bool is_float() const { return cls == CLS_FLOAT; }
  bool is_int() const { return cls == CLS_INT || cls == CLS_UINT; }
  bool is_uint() const { return cls == CLS_UINT; }
  bool is_bool() const { return cls == CLS_BOOL; }
  bool is_half() const { return cls == CLS_FLOAT && size == 2; }
  bool is_f8() const { return cls == CLS_FLOAT && size == 1; }
  bool is_narrow() const { return cls == CLS_FLOAT && size < 4; }  // computed in float32
};

// Index order is the library's dense dtype order (CT_DT_*: bool, ints,
// uint8, halves, f32, f64, uint16/32/64, then the float8 dtypes).
enum {
  DT_BOOL = 0, DT_I8, DT_I16, DT_I32, DT_I64, DT_U8, DT_F16, DT_BF16, DT_F32, DT_F64, DT_U16, DT_U32, DT_U64,
  DT_F8E4M3FN, DT_F8E5M2, DT_F8E4M3FNUZ, DT_F8E5M2FNUZ, DT_COUNT
};
static_assert((int)DT_COUNT == (int)CT_DT_COUNT && (int)DT_U64 == (int)CT_DT_UINT64 &&
                  (int)DT_F8E5M2FNUZ == (int)CT_DT_FLOAT8_E5M2FNUZ,
              "the tests' dtype order is the library's");

// The dtypes as the header's dtype table has them; the class from its masks.
// Resident bytes of this process now (not the high-water mark); -1 where
// /proc/self/statm is missing.
inline int64_t resident_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  const int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? (int64_t)resident * 4096 : -1;
}

inline const DType& dtype(int i) {
  static const struct Table {
    DType k[DT_COUNT];
    Table() {
      for (int d = 0; d < DT_COUNT; ++d) {
        const CTDataType t = ct_dtype_of_index(d);
        const Cls c = d == CT_DT_BOOL ? CLS_BOOL : ((CT_DTS_UINT >> d) & 1u) ? CLS_UINT
                    : ((CT_DTS_INT >> d) & 1u) ? CLS_INT : CLS_FLOAT;
        k[d] = DType{ct_dtype_name(d), t, t.bits / 8, c};
      }
    }
  } table;
  return table.k[i];
}

// [int_min, int_max]: the int64s that hold dtype d's elements. For uint64
// that is every int64 (its bits): -1 is uint64 max, INT64_MIN is 2^63.
inline int64_t int_min(int d) {
  switch (d) {
    case DT_I8: return INT8_MIN;
    case DT_I16: return INT16_MIN;
    case DT_I32: return INT32_MIN;
    case DT_I64: case DT_U64: return INT64_MIN;
    default: return 0;
  }
}
inline int64_t int_max(int d) {
  switch (d) {
    case DT_BOOL: return 1;
    case DT_I8: return INT8_MAX;
    case DT_I16: return INT16_MAX;
    case DT_I32: return INT32_MAX;
    case DT_I64: case DT_U64: return INT64_MAX;
    case DT_U8: return UINT8_MAX;
    case DT_U16: return UINT16_MAX;
    case DT_U32: return UINT32_MAX;
    default: return 0;
  }
}

// Wrap an integer modulo 2^bits of dtype d (two's complement), as C's
// conversion to unsigned / NumPy's int casts.
inline int64_t wrap_int(uint64_t v, int d) {
  switch (d) {
    case DT_I8: return (int8_t)(uint8_t)v;
    case DT_I16: return (int16_t)(uint16_t)v;
    case DT_I32: return (int32_t)(uint32_t)v;
    case DT_I64: return (int64_t)v;
    case DT_U8: return (uint8_t)v;
    case DT_U16: return (uint16_t)v;
    case DT_U32: return (uint32_t)v;
    case DT_U64: return (int64_t)v;
    case DT_BOOL: return v != 0;
    default: return 0;
  }
}

// ---------------------------------------------------------------------------
// The IEEE binary16 / bfloat16 codec is the reference library's
// (tests/reference: frexp/ldexp arithmetic, round to nearest even, overflow
// to +-inf, subnormals kept), so it shares nothing with the library.
// ---------------------------------------------------------------------------

using ctref::bf16_from_double;
using ctref::bf16_to_double;
using ctref::f16_from_double;
using ctref::f16_to_double;

#if defined(__FLT16_MANT_DIG__)
#define CTT_HAVE_FLOAT16 1
// The compiler's own correctly rounded conversion, to cross-check the codec.
inline uint16_t f16_from_double_hw(double v) {
  _Float16 h = (_Float16)v;
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
#endif

// Round a double to the precision of float dtype d (identity for f64).
inline double round_to(double v, int d) { return ctref::round_to(v, ct_dtype_of_index(d)); }

// ---------------------------------------------------------------------------
// Element access (p points at one element)
// ---------------------------------------------------------------------------

inline double load_f(const void* p, int d) {
  switch (d) {
    case DT_BOOL: return *(const uint8_t*)p ? 1.0 : 0.0;
    case DT_I8: return *(const int8_t*)p;
    case DT_I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DT_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DT_I64: { int64_t v; std::memcpy(&v, p, 8); return (double)v; }
    case DT_U8: return *(const uint8_t*)p;
    case DT_U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DT_U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DT_U64: { uint64_t v; std::memcpy(&v, p, 8); return (double)v; }
    case DT_F16: { uint16_t v; std::memcpy(&v, p, 2); return f16_to_double(v); }
    case DT_BF16: { uint16_t v; std::memcpy(&v, p, 2); return bf16_to_double(v); }
    case DT_F32: { float v; std::memcpy(&v, p, 4); return v; }
    case DT_F64: { double v; std::memcpy(&v, p, 8); return v; }
    case DT_F8E4M3FN: case DT_F8E5M2: case DT_F8E4M3FNUZ: case DT_F8E5M2FNUZ:
      return ctref::f8_to_double(*(const uint8_t*)p, ct_dtype_of_index(d));
  }
  return 0;
}

inline int64_t load_i(const void* p, int d) {
  switch (d) {
    case DT_BOOL: return *(const uint8_t*)p;  // raw byte (tests may use 2, 0xFF)
    case DT_I8: return *(const int8_t*)p;
    case DT_I16: { int16_t v; std::memcpy(&v, p, 2); return v; }
    case DT_I32: { int32_t v; std::memcpy(&v, p, 4); return v; }
    case DT_I64: { int64_t v; std::memcpy(&v, p, 8); return v; }
    case DT_U8: return *(const uint8_t*)p;
    case DT_U16: { uint16_t v; std::memcpy(&v, p, 2); return v; }
    case DT_U32: { uint32_t v; std::memcpy(&v, p, 4); return v; }
    case DT_U64: { int64_t v; std::memcpy(&v, p, 8); return v; }  // the bits
    default: return (int64_t)load_f(p, d);
  }
}

// Store an integer value (wrapped to the dtype).
inline void store_i(void* p, int d, int64_t v) {
  switch (d) {
    case DT_BOOL: *(uint8_t*)p = v != 0; break;
    case DT_I8: *(int8_t*)p = (int8_t)wrap_int((uint64_t)v, d); break;
    case DT_I16: { int16_t x = (int16_t)wrap_int((uint64_t)v, d); std::memcpy(p, &x, 2); break; }
    case DT_I32: { int32_t x = (int32_t)wrap_int((uint64_t)v, d); std::memcpy(p, &x, 4); break; }
    case DT_I64: std::memcpy(p, &v, 8); break;
    case DT_U8: *(uint8_t*)p = (uint8_t)v; break;
    case DT_U16: { uint16_t x = (uint16_t)v; std::memcpy(p, &x, 2); break; }
    case DT_U32: { uint32_t x = (uint32_t)v; std::memcpy(p, &x, 4); break; }
    case DT_U64: std::memcpy(p, &v, 8); break;
    default: break;
  }
}

// Store a double: floats round to nearest even; ints/bool take the (integral,
// in-range) value as is; callers only pass representable values for ints.
inline void store_f(void* p, int d, double v) {
  switch (d) {
    case DT_F16: { uint16_t h = f16_from_double(v); std::memcpy(p, &h, 2); break; }
    case DT_BF16: { uint16_t h = bf16_from_double(v); std::memcpy(p, &h, 2); break; }
    case DT_F32: { float f = (float)v; std::memcpy(p, &f, 4); break; }
    case DT_F64: std::memcpy(p, &v, 8); break;
    case DT_F8E4M3FN: case DT_F8E5M2: case DT_F8E4M3FNUZ: case DT_F8E5M2FNUZ:
      *(uint8_t*)p = ctref::f8_from_double(v, ct_dtype_of_index(d), false);
      break;
    case DT_BOOL: *(uint8_t*)p = v != 0; break;
    case DT_U64: { const uint64_t x = (uint64_t)v; std::memcpy(p, &x, 8); break; }  // 0 <= v < 2^64
    default: store_i(p, d, (int64_t)v); break;
  }
}

// ---------------------------------------------------------------------------
// Deterministic RNG (splitmix64)
// ---------------------------------------------------------------------------

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 12345) {}
  uint64_t next() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }  // [0,1)
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  int64_t int_in(int64_t lo, int64_t hi) {  // inclusive
    uint64_t span = (uint64_t)hi - (uint64_t)lo;
    if (span == UINT64_MAX) return (int64_t)next();
    return (int64_t)((uint64_t)lo + next() % (span + 1));
  }
};

// ---------------------------------------------------------------------------
// Host tensor: owns bytes, shape, strides; yields a CTensor view.
// ---------------------------------------------------------------------------

struct HostTensor {
  int d = DT_F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;  // always explicit here (elements)
  bool null_strides = false;     // pass strides = NULL (only for compact layouts)
  int64_t offset_elems = 0;      // element offset of element [0,...,0] in the buffer
  uint64_t extra_byte_offset = 0;  // pass part of the offset as byte_offset
  std::vector<unsigned char> storage;  // 64-byte alignment via padding below
  size_t base_pad = 0;           // storage index of byte 0 (aligned to 64)
  size_t buffer_bytes = 0;

  HostTensor() = default;

  // Compact row-major tensor (strides NULL if null_strides_).
  static HostTensor compact(int d, std::vector<int64_t> shape, bool null_strides_ = true) {
    HostTensor t;
    t.d = d;
    t.shape = shape;
    t.strides.assign(shape.size(), 0);
    int64_t s = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      t.strides[i] = s;
      s *= shape[i];
    }
    t.null_strides = null_strides_;
    t.alloc(s);
    return t;
  }

  // General layout: given strides (any sign, 0 allowed); the buffer is sized to
  // hold the span plus pad_elems on either side; offset chosen so that the
  // lowest address is pad_elems into the buffer.
  static HostTensor strided(int d, std::vector<int64_t> shape, std::vector<int64_t> strides,
                            int64_t pad_elems = 0) {
    HostTensor t;
    t.d = d;
    t.shape = shape;
    t.strides = strides;
    int64_t lo = 0, hi = 0, n = 1;
    for (size_t i = 0; i < shape.size(); ++i) n *= shape[i];
    if (n > 0)
      for (size_t i = 0; i < shape.size(); ++i) {
        int64_t e = (shape[i] - 1) * strides[i];
        if (e < 0) lo += e; else hi += e;
      }
    t.offset_elems = pad_elems - lo;
    t.alloc(hi - lo + 1 + 2 * pad_elems);
    return t;
  }

  void alloc(int64_t elems) {
    buffer_bytes = (size_t)(elems > 0 ? elems : 0) * (size_t)dtype(d).size;
    storage.assign(buffer_bytes + 128, 0);
    uintptr_t a = (uintptr_t)storage.data();
    base_pad = (size_t)((64 - (a % 64)) % 64);
  }

  unsigned char* buf() { return storage.data() + base_pad; }
  const unsigned char* buf() const { return storage.data() + base_pad; }

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t s : shape) n *= s;
    return n;
  }

  // Byte offset of logical element with row-major linear index `lin`.
  int64_t elem_byte(int64_t lin) const {
    int64_t off = offset_elems;
    for (size_t i = shape.size(); i-- > 0;) {
      int64_t idx = lin % shape[i];
      lin /= shape[i];
      off += idx * strides[i];
    }
    return off * dtype(d).size;
  }
  void* at(int64_t lin) { return buf() + elem_byte(lin); }
  const void* at(int64_t lin) const { return buf() + elem_byte(lin); }

  double get(int64_t i) const { return load_f(at(i), d); }
  int64_t get_i(int64_t i) const { return load_i(at(i), d); }
  void set(int64_t i, double v) { store_f(at(i), d, v); }
  void set_i(int64_t i, int64_t v) { store_i(at(i), d, v); }

  void fill_bytes(unsigned char b) { std::memset(buf(), b, buffer_bytes); }
  std::vector<unsigned char> bytes() const {
    return std::vector<unsigned char>(buf(), buf() + buffer_bytes);
  }

  // The view. With offset_in_byte_offset, data points at the (64-byte
  // aligned) buffer and byte_offset holds the offset of element [0,..,0];
  // otherwise data points at that element and byte_offset is 0.
  CTensor view(bool offset_in_byte_offset = true) {
    CTensor t;
    std::memset(&t, 0, sizeof t);
    int64_t off_bytes = offset_elems * dtype(d).size;
    if (offset_in_byte_offset) {
      t.data = buf();
      t.byte_offset = (uint64_t)off_bytes;
    } else {
      t.data = buf() + off_bytes;
      t.byte_offset = 0;
    }
    t.device.device_type = CT_CPU;
    t.device.device_id = 0;
    t.ndim = (int32_t)shape.size();
    t.dtype = dtype(d).dt;
    t.shape = shape.empty() ? nullptr : shape.data();
    t.strides = null_strides || shape.empty() ? nullptr : strides.data();
    return t;
  }
};

// Bytes of t's buffer that belong to some element (1) or not (0).
inline std::vector<char> covered(const HostTensor& t) {
  std::vector<char> c(t.buffer_bytes, 0);
  int64_t n = t.numel();
  int sz = dtype(t.d).size;
  for (int64_t i = 0; i < n; ++i) {
    int64_t b = t.elem_byte(i);
    for (int k = 0; k < sz; ++k) c[(size_t)(b + k)] = 1;
  }
  return c;
}

inline std::string last_error() { return std::string(ct_last_error()); }

// A CPU stream argument that runs an op on at most `threads` threads.
inline CTCpuStream cpu_stream(int32_t threads) {
  CTCpuStream s;
  std::memset(&s, 0, sizeof s);
  s.struct_size = sizeof s;
  s.num_threads = threads;
  return s;
}

// An op id of a plugin whose library was unloaded (test_library.cpp loads
// and unloads plugins in this process): ids are not reused, and such an id
// answers CT_ERR_NOT_FOUND. Loops over 0 .. ct_op_count() skip it.
inline bool unloaded_plugin_op(int32_t op) {
  if (op < (int32_t)CT_OP_END_) return false;
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  return ct_op_info(op, &info) == CT_ERR_NOT_FOUND;
}

inline bool contains(const std::string& s, const std::string& sub) {
  return s.find(sub) != std::string::npos;
}

inline bool same_double(double a, double b) {  // equal or both NaN; ±0 distinguished
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}


// ---------------------------------------------------------------------------
// Category 2 helpers (broadcast / reduce tests)
// ---------------------------------------------------------------------------

// One unit in the last place of v in float dtype d (subnormal spacing below
// the smallest normal; 0 gives the smallest subnormal).
inline double ulp_of(double v, int d) {
  int mbits = 52, emin = -1022;
  switch (d) {
    case DT_F16: mbits = 10; emin = -14; break;
    case DT_BF16: mbits = 7; emin = -126; break;
    case DT_F32: mbits = 23; emin = -126; break;
    case DT_F8E4M3FN: mbits = 3; emin = -6; break;
    case DT_F8E5M2: mbits = 2; emin = -14; break;
    case DT_F8E4M3FNUZ: mbits = 3; emin = -7; break;
    case DT_F8E5M2FNUZ: mbits = 2; emin = -15; break;
    default: break;
  }
  double a = std::fabs(v);
  int e = emin;
  if (a != 0 && std::isfinite(a)) {
    std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
    e -= 1;
    if (e < emin) e = emin;
  }
  return std::ldexp(1.0, e - mbits);
}

// Shapes formatted as the library's messages write them: [2,4], [] for 0-d.
inline std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

// The output dtype index of an op with CT_OUTPUT_* rule `rule` for input dtype d.
inline int output_dtype_for(int rule, int d) {
  switch (rule) {
    case CT_OUTPUT_BOOL: return DT_BOOL;
    case CT_OUTPUT_INT64: return DT_I64;
    case CT_OUTPUT_ACCUM: return dtype(d).is_float() ? d : dtype(d).is_uint() ? DT_U64 : DT_I64;
    case CT_OUTPUT_FLOAT: return dtype(d).is_float() ? d : DT_F64;
    default: return d;
  }
}

// ---------------------------------------------------------------------------
// shared by the category-2 suites
// ---------------------------------------------------------------------------

// Layout variants of one logical tensor: 0 compact, 1 column-major, 2 padded
// with a negative outer stride and a byte_offset, 3 padded rows with an
// offset, 4 a stride-0 outer dim (a broadcast input).
inline HostTensor make_layout(int d, const std::vector<int64_t>& shape, int variant) {
  size_t nd = shape.size();
  std::vector<int64_t> st(nd, 0);
  switch (variant) {
    case 1: {
      int64_t s = 1;
      for (size_t i = 0; i < nd; ++i) { st[i] = s; s *= std::max<int64_t>(shape[i], 1); }
      return HostTensor::strided(d, shape, st, 0);
    }
    case 2: {
      int64_t s = 2;
      for (size_t i = nd; i-- > 0;) { st[i] = s; s *= std::max<int64_t>(shape[i], 1) + (i + 1 == nd ? 1 : 0); }
      if (nd >= 1) st[0] = -st[0];
      return HostTensor::strided(d, shape, st, 2);
    }
    case 3: {
      int64_t s = 1;
      for (size_t i = nd; i-- > 0;) { st[i] = s; s *= std::max<int64_t>(shape[i], 1) + (i + 1 == nd ? 3 : 0); }
      return HostTensor::strided(d, shape, st, 5);
    }
    case 4: {
      int64_t s = 1;
      for (size_t i = nd; i-- > 0;) { st[i] = s; s *= std::max<int64_t>(shape[i], 1); }
      if (nd >= 1) st[0] = 0;
      return HostTensor::strided(d, shape, st, 1);
    }
  }
  return HostTensor::compact(d, shape, true);
}

// A value for messages: %.17g, or nan / inf.
inline std::string fmt(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

// ---------------------------------------------------------------------------
// Devices: every registered one (the CPU, and any backend or plugin such as
// the loopback test device), and host tensors mirrored onto them
// ---------------------------------------------------------------------------

struct TestDevice {
  CTDevice dev;
  std::string label;  // "cpu:0", "loopback:1": the backend's name and the id
  bool cpu;
};

// Every device ct_device_info describes, in its order (the CPU first).
inline std::vector<TestDevice> all_devices() {
  std::vector<TestDevice> v;
  for (int32_t i = 0; i < ct_device_count(); ++i) {
    CTDeviceInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    if (ct_device_info(i, &info) != CT_OK) continue;
    v.push_back({info.device, std::string(info.backend) + ":" + std::to_string(info.device.device_id),
                 info.device.device_type == CT_CPU});
  }
  return v;
}

// A byte-for-byte copy of a HostTensor's whole buffer (padding included) on
// a device, moved only through ct_copy: view() is the host tensor's layout
// over the device buffer; fetch() brings the buffer back into the host
// tensor. On the CPU it is the host tensor itself.
class DeviceMirror {
 public:
  DeviceMirror(CTDevice dev, HostTensor& h) : dev_(dev), h_(h) {
    if (dev.device_type == CT_CPU) return;
    status_ = ct_malloc(dev, h.buffer_bytes ? h.buffer_bytes : 1, &p_);
    if (status_ == CT_OK) status_ = move(true);
  }
  ~DeviceMirror() {
    if (p_) ct_free(dev_, p_);
  }
  DeviceMirror(const DeviceMirror&) = delete;
  DeviceMirror& operator=(const DeviceMirror&) = delete;

  // CT_OK when the buffer was allocated and uploaded.
  CTStatus status() const { return status_; }
  CTensor view(bool offset_in_byte_offset = true) const {
    CTensor t = h_.view(offset_in_byte_offset);
    if (dev_.device_type == CT_CPU) return t;
    const ptrdiff_t delta = static_cast<unsigned char*>(t.data) - h_.buf();
    if (dev_.device_type == CT_OPENCL) {  // data is a cl_mem handle (DLPack): offsets go in byte_offset
      t.data = p_;
      t.byte_offset += (uint64_t)delta;
    } else {
      t.data = static_cast<unsigned char*>(p_) + delta;
    }
    t.device = dev_;
    return t;
  }
  // Device -> host tensor (all of the buffer). CT_OK on the CPU.
  CTStatus fetch() { return dev_.device_type == CT_CPU ? CT_OK : move(false); }
  // Host tensor -> device (after changing the host copy).
  CTStatus upload() { return dev_.device_type == CT_CPU ? CT_OK : move(true); }

 private:
  CTStatus move(bool up) {
    int64_t n = (int64_t)h_.buffer_bytes;
    CTensor host, dev;
    std::memset(&host, 0, sizeof host);
    host.data = h_.buf();
    host.device = {CT_CPU, 0};
    host.ndim = 1;
    host.dtype = {CT_UINT, 8, 1};
    host.shape = &n;
    dev = host;
    dev.data = p_;
    dev.device = dev_;
    // Copies between devices are asynchronous on the device's stream: wait
    // before the host buffer is read or changed.
    CTStatus s = up ? ct_copy(&host, &dev, nullptr) : ct_copy(&dev, &host, nullptr);
    return s == CT_OK ? ct_synchronize(dev_, nullptr) : s;
  }
  CTDevice dev_;
  HostTensor& h_;
  void* p_ = nullptr;
  CTStatus status_ = CT_OK;
};

}  // namespace ctt

#endif  // CTENSOR_TESTS_TEST_UTIL_H_
