// reduce_internal.h — what the reduction and along-axis files (reduce.cc,
// along_axis.cc) share: the SIMD reduction kernels, element loads from any
// dtype, wrapping integer arithmetic, element access that does not assume
// alignment, the dims walked by flat index, and the dispatch on x's dtype
// that both entry points run.
#ifndef CTENSOR_SRC_CPU_REDUCE_INTERNAL_H_
#define CTENSOR_SRC_CPU_REDUCE_INTERNAL_H_

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/kernels.h"

namespace ct {
namespace cpu {

// The reduction kernels for this CPU's SIMD target, filled on first use.
inline const ReduceKernels& rk() {
  static const ReduceKernels k = [] {
    ReduceKernels r;
    std::memset(&r, 0, sizeof r);
    fill_reduce_kernels(&r);
    return r;
  }();
  return k;
}

// ---- element types ----------------------------------------------------------

// float16, bfloat16 and the float8 dtypes: computed in float32.
template <class T> constexpr bool kHalf = is_narrow_float<T>();
template <class T> constexpr bool kFloat = kHalf<T> || std::is_floating_point<T>::value;

template <class A, class T> inline A ld(T v) {
  if constexpr (kHalf<T>) return (A)to_double(v);
  else return (A)v;
}

inline int64_t wadd(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
inline int64_t wmul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }

constexpr int64_t kGather = 256;  // elements gathered per strided run

// Element access that does not assume alignment: x may sit at any address
// (a NumPy array at an odd one); memcpy of one element is one plain load.
// The address goes through char* so that no compiler takes T's alignment
// for the copy.
template <class T> inline T load_u(const T* p) {
  T v;
  std::memcpy(&v, reinterpret_cast<const char*>(p), sizeof(T));
  return v;
}
template <class T> inline void store_u(T* p, T v) { std::memcpy(reinterpret_cast<char*>(p), &v, sizeof(T)); }
template <class T> inline bool is_aligned(const void* p) { return ((uintptr_t)p & (sizeof(T) - 1)) == 0; }

// Calls f(ptr, n) on contiguous pieces of a run of len elements at p with
// stride st (elements): the run itself, or gathered copies (always when x is
// not aligned to its elements, so that kernels only read aligned arrays).
template <class T, class F> inline void for_pieces(const T* p, int64_t st, int64_t len, bool aligned, F&& f) {
  if (st == 1 && aligned) {
    f(p, (int64_t)0, len);
    return;
  }
  T buf[kGather];
  for (int64_t i = 0; i < len; i += kGather) {
    const int64_t m = std::min(kGather, len - i);
    if (st == 1)
      std::memcpy(static_cast<void*>(buf), reinterpret_cast<const char*>(p + i), (size_t)m * sizeof(T));
    else
      for (int64_t k = 0; k < m; ++k) buf[k] = load_u(p + (i + k) * st);
    f(static_cast<const T*>(buf), i, m);
  }
}

// A task's scratch (sort.cc, select.cc), grown on demand; NULL when the
// allocation failed (the callers then take a path that needs none).
struct Scratch {
  void* p = nullptr;
  size_t bytes = 0;
  ~Scratch() { std::free(p); }
  void* get(size_t want) {
    if (want <= bytes) return p;
    std::free(p);
    p = std::malloc(want);
    bytes = p ? want : 0;
    return p;
  }
};

// ---- sort keys (sort.cc, select.cc) ---------------------------------------------

inline uint32_t key_of_float(float f) {
  if (f != f) return 0xffffffffu;  // above +inf's key 0xff800000
  if (f == 0.0f) f = 0.0f;         // -0 sorts as 0
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u ^ ((0u - (u >> 31)) | 0x80000000u);  // negative: ~u; positive: u | sign (no branch on the sign)
}
inline uint64_t key_of_double(double f) {
  if (f != f) return ~uint64_t(0);
  if (f == 0.0) f = 0.0;
  uint64_t u;
  std::memcpy(&u, &f, 8);
  return u ^ ((uint64_t(0) - (u >> 63)) | (uint64_t(1) << 63));
}

// The order of sort, argsort and the order statistics as one monotone
// unsigned key per element: integers with the sign bit flipped; floats (the
// narrow ones widened to float32 exactly) by their bits, NaN the largest key
// and -0 the key of 0. Key<T>: the key type K and key(v).
template <class T> struct Key {
  static constexpr bool kWide = sizeof(T) == 8;
  using K = typename std::conditional<kWide, uint64_t, uint32_t>::type;
  static K key(T v) {
    if constexpr (std::is_same<T, double>::value) return key_of_double(v);
    else if constexpr (kFloat<T>) return key_of_float(ld<float>(v));  // halves and float8 widen exactly
    else if constexpr (std::is_signed<T>::value)
      return (K)((typename std::make_unsigned<T>::type)v ^ ((typename std::make_unsigned<T>::type)1 << (sizeof(T) * 8 - 1)));
    else return (K)v;
  }
};

// ---- dims walked by flat index ---------------------------------------------------------

struct Dims {
  int n = 0;
  int64_t ext[CT_MAX_NDIM];
  int64_t xs[CT_MAX_NDIM];  // x strides, elements
  int64_t os[CT_MAX_NDIM];  // out strides, elements (kept dims)
};

// Offset (elements) of flat index r of dims d (row-major, last fastest).
inline int64_t offset_of(const Dims& d, int64_t r) {
  int64_t off = 0;
  for (int k = d.n - 1; k >= 0; --k) {
    const int64_t q = r / d.ext[k];
    off += (r - q * d.ext[k]) * d.xs[k];
    r = q;
  }
  return off;
}
inline int64_t out_offset_of(const Dims& d, int64_t r) {
  int64_t off = 0;
  for (int k = d.n - 1; k >= 0; --k) {
    const int64_t q = r / d.ext[k];
    off += (r - q * d.ext[k]) * d.os[k];
    r = q;
  }
  return off;
}

// The lines of an along-axis call: every dim of x but the axis (extents of 1
// left out), with x's and out's strides; *n, *xs, *os: the length of a line
// and x's and out's strides along it. Returns how many lines there are.
inline int64_t along_lines(const CTAlongAxisCall* c, Dims* lines, int64_t* n, int64_t* xs, int64_t* os) {
  const CTensor* x = c->x;
  *n = x->shape[c->axis];
  *xs = ct_stride_of(x, c->axis);
  *os = ct_stride_of(c->out, c->axis);
  lines->n = 0;
  int64_t count = 1;
  for (int32_t d = 0; d < x->ndim; ++d) {
    if (d == c->axis || x->shape[d] == 1) continue;
    const int k = lines->n++;
    lines->ext[k] = x->shape[d];
    lines->xs[k] = ct_stride_of(x, d);
    lines->os[k] = ct_stride_of(c->out, d);
    count *= x->shape[d];
  }
  return count;
}

// ---- dispatch on x's dtype ----------------------------------------------------------

template <template <class> class F, class... Args> CTStatus by_dtype(int32_t dt, Args... args) {
  switch (dt) {
    case CT_DT_BOOL: return F<uint8_t>::run(args...);
    case CT_DT_INT8: return F<int8_t>::run(args...);
    case CT_DT_INT16: return F<int16_t>::run(args...);
    case CT_DT_INT32: return F<int32_t>::run(args...);
    case CT_DT_INT64: return F<int64_t>::run(args...);
    case CT_DT_UINT8: return F<uint8_t>::run(args...);
    case CT_DT_FLOAT16: return F<f16>::run(args...);
    case CT_DT_BFLOAT16: return F<bf16>::run(args...);
    case CT_DT_FLOAT32: return F<float>::run(args...);
    case CT_DT_FLOAT64: return F<double>::run(args...);
    case CT_DT_UINT16: return F<uint16_t>::run(args...);
    case CT_DT_UINT32: return F<uint32_t>::run(args...);
    case CT_DT_UINT64: return F<uint64_t>::run(args...);
    case CT_DT_FLOAT8_E4M3FN: return F<f8<0>>::run(args...);
    case CT_DT_FLOAT8_E5M2: return F<f8<1>>::run(args...);
    case CT_DT_FLOAT8_E4M3FNUZ: return F<f8<2>>::run(args...);
    case CT_DT_FLOAT8_E5M2FNUZ: return F<f8<3>>::run(args...);
    default: return fail(CT_ERR_INTERNAL, "cpu backend: dtype index %d", dt);
  }
}
// The entry points' common part: resolves the call's stream, then runs
// F<T>::run(call, stream) for x's dtype.
template <template <class> class F, class Call> CTStatus run_by_dtype(const Call* call) {
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(call->fn, call->stream, &copy, &s)) return st;
  return by_dtype<F>(call->x_dt, call, s);
}

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_REDUCE_INTERNAL_H_
