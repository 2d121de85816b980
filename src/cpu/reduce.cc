// reduce.cc — reductions and along-axis ops (category 2) on the CPU.
//
// A reduction is described once per call as kept dims (outer: one output
// each) and reduced dims, both with size-1 dims dropped and contiguous
// neighbours merged. Then one of three shapes of loop runs, each a template
// over a "recipe" (one or two passes, then a finish):
//   inner:  the reduced dims end in a contiguous run: each output reduces
//           its runs with a vector kernel (sum, max, ...); threads split
//           the outputs, or, when there are few, each output's range in
//           fixed blocks whose partials are combined in order (so results
//           do not depend on the thread count);
//   column: a kept dim is the contiguous one: vectors run across it and
//           accumulate down the reduced dims (sum over axis 0);
//   gather: anything else: runs are gathered into a small buffer first.
// Along-axis ops (softmax, log_softmax, cumsum, cumprod) walk lines along
// the axis, or blocks of lines side by side when the axis is not contiguous.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/kernels.h"

namespace ct {
namespace cpu {
namespace {

const ReduceKernels& rk() {
  static const ReduceKernels k = [] {
    ReduceKernels r;
    std::memset(&r, 0, sizeof r);
    fill_reduce_kernels(&r);
    return r;
  }();
  return k;
}

// ---- element types ----------------------------------------------------------

template <class T> constexpr bool kHalf = std::is_same<T, f16>::value || std::is_same<T, bf16>::value;
template <class T> constexpr bool kFloat = kHalf<T> || std::is_floating_point<T>::value;

template <class A, class T> inline A ld(T v) {
  if constexpr (std::is_same<T, f16>::value) return (A)f16_to_float(v.bits);
  else if constexpr (std::is_same<T, bf16>::value) return (A)bf16_to_float(v.bits);
  else return (A)v;
}
// Nonzero (NaN is nonzero): any/all and logical tests.
template <class T> inline bool nonzero(T v) {
  if constexpr (kHalf<T>) return (v.bits & 0x7fff) != 0;
  else return v != 0;
}

// Writes a double (float results) or an int64 (integer results) to out's dtype.
inline void put_f(char* p, int32_t dt, double v) {
  switch (dt) {
    case CT_DT_FLOAT16: { const f16 h = Convert<f16>::from(v); std::memcpy(p, &h, 2); break; }
    case CT_DT_BFLOAT16: { const bf16 h = Convert<bf16>::from(v); std::memcpy(p, &h, 2); break; }
    case CT_DT_FLOAT32: { const float f = (float)v; std::memcpy(p, &f, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}
inline void put_i(char* p, int32_t dt, int64_t v) {
  switch (dt) {
    case CT_DT_BOOL: case CT_DT_INT8: case CT_DT_UINT8: { const uint8_t b = (uint8_t)v; std::memcpy(p, &b, 1); break; }
    case CT_DT_INT16: { const int16_t b = (int16_t)v; std::memcpy(p, &b, 2); break; }
    case CT_DT_INT32: { const int32_t b = (int32_t)v; std::memcpy(p, &b, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}
template <class A> inline void put(char* p, int32_t dt, A v) {
  if constexpr (std::is_floating_point<A>::value) put_f(p, dt, (double)v);
  else put_i(p, dt, (int64_t)v);
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

// ---- passes: what one sweep over the reduced elements computes ---------------
// init() is the state of nothing; contig(p, n, idx0) reduces n contiguous
// elements whose first has flat index idx0 in the reduced space;
// combine(a, b) joins an earlier state a with a later b; col(acc, row, w, r,
// c) folds row r (w elements side by side) into w states.

// Sum of map(x): 0 x, 1 x^2, 2 (x - c)^2, 3 e^(x - c). A: int64 (wrapping) or double.
template <class T, class A> struct SumPass {
  using S = A;
  // Rows fold into a block accumulator first only for float64 inputs: float32
  // and half inputs lose nothing summed straight into float64.
  static constexpr bool kAdditive = std::is_same<T, double>::value;
  int map = 0;
  A c = 0;
  S init() const { return 0; }
  S combine(S a, S b) const {
    if constexpr (std::is_integral<A>::value) return wadd(a, b); else return a + b;
  }
  static A f(int map, A v, A c) {
    if constexpr (std::is_integral<A>::value) return (void)map, (void)c, v;
    else return map == 0 ? v : map == 1 ? v * v : map == 2 ? (v - c) * (v - c) : std::exp(v - c);
  }
  S contig(const T* p, int64_t n, int64_t) const {
    if constexpr (std::is_integral<A>::value) {
      uint64_t acc[4] = {0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; ++k) acc[k] += (uint64_t)(int64_t)ld<int64_t>(p[i + k]);
      for (; i < n; ++i) acc[0] += (uint64_t)(int64_t)ld<int64_t>(p[i]);
      return (int64_t)(acc[0] + acc[1] + acc[2] + acc[3]);
    } else {
      if (map == 0) {
        if constexpr (std::is_same<T, float>::value) return rk().sum_f32(p, n);
        if constexpr (std::is_same<T, double>::value) return rk().sum_f64(p, n);
        if constexpr (std::is_same<T, f16>::value) return rk().sum_f16(reinterpret_cast<const uint16_t*>(p), n);
        if constexpr (std::is_same<T, bf16>::value) return rk().sum_bf16(reinterpret_cast<const uint16_t*>(p), n);
      }
      if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
        if (map == 3) {  // e^(x - c): the vector exp, through a small buffer
          T buf[1024];
          double s = 0;
          for (int64_t i = 0; i < n; i += 1024)
            s += kernel_table().exp_shift_sum[std::is_same<T, float>::value ? 0 : 1](
                p + i, buf, std::min<int64_t>(1024, n - i), (double)c);
          return s;
        }
      }
      if (n > 1024) {  // pairwise
        const int64_t h = n / 2;
        return contig(p, h, 0) + contig(p + h, n - h, 0);
      }
      A acc[4] = {0, 0, 0, 0};
      int64_t i = 0;
      for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; ++k) acc[k] += f(map, ld<A>(p[i + k]), c);
      for (; i < n; ++i) acc[0] += f(map, ld<A>(p[i]), c);
      return (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double* cv) const {
    if constexpr (std::is_same<A, double>::value) {
      if (map == 0) {
        if constexpr (std::is_same<T, float>::value) return rk().col_add_f32(acc, row, w);
        if constexpr (std::is_same<T, double>::value) return rk().col_add_f64(acc, row, w);
      }
    }
    if (cv)
      for (int64_t j = 0; j < w; ++j) acc[j] = combine(acc[j], f(map, ld<A>(row[j]), (A)cv[j]));
    else
      for (int64_t j = 0; j < w; ++j) acc[j] = combine(acc[j], f(map, ld<A>(row[j]), c));
  }
};

template <class T, class A> struct ProdPass {
  using S = A;
  static constexpr bool kAdditive = false;
  S init() const { return 1; }
  S combine(S a, S b) const {
    if constexpr (std::is_integral<A>::value) return wmul(a, b); else return a * b;
  }
  S contig(const T* p, int64_t n, int64_t) const {
    S acc[4] = {1, 1, 1, 1};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) acc[k] = combine(acc[k], ld<A>(p[i + k]));
    for (; i < n; ++i) acc[0] = combine(acc[0], ld<A>(p[i]));
    return combine(combine(acc[0], acc[1]), combine(acc[2], acc[3]));
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double*) const {
    for (int64_t j = 0; j < w; ++j) acc[j] = combine(acc[j], ld<A>(row[j]));
  }
};

// NaN-propagating max (kMax) or min. A: float (halves, float32), double, or the integer type.
template <class T, class A, bool kMax> struct ExtPass {
  using S = A;
  static constexpr bool kAdditive = false;
  S init() const {
    if constexpr (std::is_floating_point<A>::value)
      return kMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    else return kMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
  }
  static S pick(S a, S b) { return ((kMax ? a >= b : a <= b) || a != a) ? a : b; }
  S combine(S a, S b) const { return pick(a, b); }
  S contig(const T* p, int64_t n, int64_t) const {
    if (n <= 0) return init();
    if constexpr (std::is_same<T, float>::value) return kMax ? rk().max_f32(p, n) : rk().min_f32(p, n);
    if constexpr (std::is_same<T, double>::value) return kMax ? rk().max_f64(p, n) : rk().min_f64(p, n);
    if constexpr (kHalf<T>) {
      float buf[kGather];
      S r = init();
      for (int64_t i = 0; i < n; i += kGather) {
        const int64_t m = std::min(kGather, n - i);
        if (std::is_same<T, f16>::value) rk().decode_f16(reinterpret_cast<const uint16_t*>(p + i), buf, m);
        else rk().decode_bf16(reinterpret_cast<const uint16_t*>(p + i), buf, m);
        r = pick(r, kMax ? rk().max_f32(buf, m) : rk().min_f32(buf, m));
      }
      return r;
    }
    S r = init();
    for (int64_t i = 0; i < n; ++i) r = pick(r, ld<A>(p[i]));
    return r;
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double*) const {
    for (int64_t j = 0; j < w; ++j) acc[j] = pick(acc[j], ld<A>(row[j]));
  }
};

// Index of the first max (kMax) or min; the first NaN wins.
template <class A> struct ArgState {
  A v;
  int64_t i;  // -1: nothing yet
};
template <class T, class A, bool kMax> struct ArgPass {
  using S = ArgState<A>;
  static constexpr bool kAdditive = false;
  S init() const { return S{A(0), -1}; }
  static bool better(A v, A best) { return kMax ? v > best : v < best; }
  S combine(S a, S b) const {
    if (a.i < 0) return b;
    if (b.i < 0 || a.v != a.v) return a;
    if (b.v != b.v || better(b.v, a.v)) return b;
    return a;
  }
  S contig(const T* p, int64_t n, int64_t idx0) const {
    if (n <= 0) return init();
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      if (n >= 64) {  // the vector max (NaN-propagating), then the first element equal to it
        T m;
        if constexpr (std::is_same<T, float>::value) m = kMax ? rk().max_f32(p, n) : rk().min_f32(p, n);
        else m = kMax ? rk().max_f64(p, n) : rk().min_f64(p, n);
        int64_t i = 0;
        if (m != m)
          while (p[i] == p[i]) ++i;
        else
          while (p[i] != m) ++i;
        return S{(A)m, idx0 + i};
      }
    }
    A best = ld<A>(p[0]);
    int64_t bi = 0;
    if (best != best) return S{best, idx0};
    for (int64_t i = 1; i < n; ++i) {
      const A v = ld<A>(p[i]);
      if (v != v) return S{v, idx0 + i};
      if (better(v, best)) best = v, bi = i;
    }
    return S{best, idx0 + bi};
  }
  void col(S* acc, const T* row, int64_t w, int64_t r, const double*) const {
    for (int64_t j = 0; j < w; ++j) acc[j] = combine(acc[j], S{ld<A>(row[j]), r});
  }
};

template <class T, bool kAll> struct AnyPass {
  using S = uint8_t;
  static constexpr bool kAdditive = false;
  S init() const { return kAll ? 1 : 0; }
  S combine(S a, S b) const { return kAll ? (a & b) : (a | b); }
  S contig(const T* p, int64_t n, int64_t) const {
    for (int64_t i = 0; i < n; ++i)
      if (nonzero(p[i]) != kAll) return kAll ? 0 : 1;
    return init();
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double*) const {
    for (int64_t j = 0; j < w; ++j) acc[j] = combine(acc[j], (S)nonzero(row[j]));
  }
};

// ---- recipes: passes plus the finish -------------------------------------------
// P1 first; when kTwo, P2 built from P1's state (per column in the column loop).

struct NoPass {
  using S = int;
};

template <class P> struct OnePass {
  using P1 = P;
  using P2 = NoPass;
  static constexpr bool kTwo = false;
};

template <class T, class SA> struct RSum : OnePass<SumPass<T, SA>> {
  SumPass<T, SA> p1() const { return {}; }
  void finish(char* o, int32_t dt, SA s, int) const { put(o, dt, s); }
};
template <class T> struct RMean : OnePass<SumPass<T, double>> {
  int64_t count;
  SumPass<T, double> p1() const { return {}; }
  void finish(char* o, int32_t dt, double s, int) const { put_f(o, dt, s / (double)count); }
};
template <class T> struct RNorm2 : OnePass<SumPass<T, double>> {
  SumPass<T, double> p1() const { SumPass<T, double> p; p.map = 1; return p; }
  void finish(char* o, int32_t dt, double s, int) const { put_f(o, dt, std::sqrt(s)); }
};
template <class T, class PA> struct RProd : OnePass<ProdPass<T, PA>> {
  ProdPass<T, PA> p1() const { return {}; }
  void finish(char* o, int32_t dt, PA s, int) const { put(o, dt, s); }
};
template <class T, class EA, bool kMax> struct RExt : OnePass<ExtPass<T, EA, kMax>> {
  ExtPass<T, EA, kMax> p1() const { return {}; }
  void finish(char* o, int32_t dt, EA s, int) const { put(o, dt, s); }
};
template <class T, class EA, bool kMax> struct RArg : OnePass<ArgPass<T, EA, kMax>> {
  ArgPass<T, EA, kMax> p1() const { return {}; }
  void finish(char* o, int32_t, ArgState<EA> s, int) const { std::memcpy(o, &s.i, 8); }
};
template <class T, bool kAll> struct RAny : OnePass<AnyPass<T, kAll>> {
  AnyPass<T, kAll> p1() const { return {}; }
  void finish(char* o, int32_t, uint8_t s, int) const { *o = (char)s; }
};
// logsumexp: max, then sum of e^(x - max).
template <class T, class EA> struct RLogSumExp {
  using P1 = ExtPass<T, EA, true>;
  using P2 = SumPass<T, double>;
  static constexpr bool kTwo = true;
  P1 p1() const { return {}; }
  static double constant(EA m) { return std::isfinite((double)m) ? (double)m : 0.0; }
  P2 p2(EA m) const { P2 p; p.map = 3; p.c = constant(m); return p; }
  void finish(char* o, int32_t dt, EA m, double s) const {
    put_f(o, dt, std::isfinite((double)m) ? (double)m + std::log(s) : (double)m);
  }
};
// var / std: mean, then the sum of squared deviations (two passes: exact
// enough where the one-pass formula cancels).
template <class T, bool kStd> struct RVar {
  using P1 = SumPass<T, double>;
  using P2 = SumPass<T, double>;
  static constexpr bool kTwo = true;
  int64_t count;
  double correction;
  P1 p1() const { return {}; }
  static double constant_of(double s, int64_t count) { return s / (double)count; }
  double constant(double s) const { return constant_of(s, count); }
  P2 p2(double s) const { P2 p; p.map = 2; p.c = constant(s); return p; }
  void finish(char* o, int32_t dt, double, double ss) const {
    const double v = ss / std::max((double)count - correction, 0.0);
    put_f(o, dt, kStd ? std::sqrt(v) : v);
  }
};

// ---- the reduction geometry ---------------------------------------------------------

struct Dims {
  int n = 0;
  int64_t ext[CT_MAX_NDIM];
  int64_t xs[CT_MAX_NDIM];  // x strides, elements
  int64_t os[CT_MAX_NDIM];  // out strides, elements (kept dims)
};

struct Geometry {
  const char* x;  // x's first element (after flips)
  bool aligned;   // x's elements are at multiples of their size (else: packed before any kernel reads them)
  char* o;
  int64_t xsize, osize;
  Dims kept, red;
  int64_t outer, count;
  int32_t out_dt;
  const CTCpuStream* stream;
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

void build_geometry(const CTReduceCall* c, bool keep_order, Geometry* g) {
  const CTensor* x = c->x;
  const int64_t xsize = x->dtype.bits / 8;
  const char* base = static_cast<const char*>(x->data) + x->byte_offset;
  g->kept.n = g->red.n = 0;
  for (int32_t d = 0; d < x->ndim; ++d) {
    const int64_t e = x->shape[d];
    if (e == 1) continue;
    int64_t s = ct_stride_of(x, d);
    if (c->reduce_mask & (1u << d)) {
      if (s < 0 && !keep_order) {  // order within a sum does not matter: walk forwards
        base += s * (e - 1) * xsize;
        s = -s;
      }
      g->red.ext[g->red.n] = e;
      g->red.xs[g->red.n++] = s;
    } else {
      g->kept.ext[g->kept.n] = e;
      g->kept.xs[g->kept.n] = s;
      g->kept.os[g->kept.n++] = c->out_strides[d];
    }
  }
  // Reduced dims: outermost first by stride (unless the index order matters),
  // then merge neighbours that are contiguous.
  Dims& r = g->red;
  if (!keep_order)
    for (int i = 1; i < r.n; ++i)
      for (int j = i; j > 0 && std::llabs(r.xs[j]) > std::llabs(r.xs[j - 1]); --j) {
        std::swap(r.ext[j], r.ext[j - 1]);
        std::swap(r.xs[j], r.xs[j - 1]);
      }
  int n = 0;
  for (int i = 0; i < r.n; ++i) {
    if (n > 0 && r.xs[n - 1] == r.xs[i] * r.ext[i]) {
      r.ext[n - 1] *= r.ext[i];
      r.xs[n - 1] = r.xs[i];
      continue;
    }
    r.ext[n] = r.ext[i];
    r.xs[n++] = r.xs[i];
  }
  r.n = n;
  Dims& k = g->kept;
  n = 0;
  for (int i = 0; i < k.n; ++i) {
    if (n > 0 && k.xs[n - 1] == k.xs[i] * k.ext[i] && k.os[n - 1] == k.os[i] * k.ext[i]) {
      k.ext[n - 1] *= k.ext[i];
      k.xs[n - 1] = k.xs[i];
      k.os[n - 1] = k.os[i];
      continue;
    }
    k.ext[n] = k.ext[i];
    k.xs[n] = k.xs[i];
    k.os[n++] = k.os[i];
  }
  k.n = n;
  g->x = base;
  g->aligned = ((uintptr_t)base & (uintptr_t)(xsize - 1)) == 0;
  g->o = static_cast<char*>(c->out->data) + c->out->byte_offset;
  g->xsize = xsize;
  g->osize = c->out->dtype.bits / 8;
  g->outer = 1;
  for (int i = 0; i < k.n; ++i) g->outer *= k.ext[i];
  g->count = c->count;
  g->out_dt = c->out_dt;
}

// Reduces flat indices [begin, end) of the reduced dims of the output whose
// first x element is px, with pass P: runs along the innermost reduced dim.
template <class T, class P>
typename P::S reduce_range(const P& pass, const Geometry& g, const T* px, int64_t begin, int64_t end) {
  const Dims& r = g.red;
  typename P::S s = pass.init();
  if (r.n == 0) {  // one element
    if (begin >= end) return s;
    const T v = load_u(px);
    return pass.contig(&v, 1, 0);
  }
  const int last = r.n - 1;
  const int64_t inner = r.ext[last], st = r.xs[last];
  int64_t pos = begin;
  while (pos < end) {
    const int64_t j = pos % inner;
    const int64_t len = std::min(inner - j, end - pos);
    const T* p = px + offset_of(r, pos);
    for_pieces(p, st, len, g.aligned, [&](const T* q, int64_t off, int64_t m) {
      s = pass.combine(s, pass.contig(q, m, pos + off));
    });
    pos += len;
  }
  return s;
}

// Reduces all of one output's elements, split in fixed blocks over threads
// when `split` (few outputs, many elements each); block partials are then
// combined in order, pairwise, so the result does not depend on threads.
template <class T, class P> struct SplitCtx {
  const P* pass;
  const Geometry* g;
  const T* px;
  int64_t block;
  typename P::S* parts;
};
template <class T, class P> void split_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<SplitCtx<T, P>*>(ctx);
  for (int64_t i = b; i < e; ++i)
    c->parts[i] = reduce_range<T, P>(*c->pass, *c->g, c->px, i * c->block, std::min(c->g->count, (i + 1) * c->block));
}
template <class P> typename P::S combine_tree(const P& pass, const typename P::S* parts, int64_t n) {
  if (n == 1) return parts[0];
  const int64_t h = n / 2;
  return pass.combine(combine_tree(pass, parts, h), combine_tree(pass, parts + h, n - h));
}
constexpr int64_t kMaxBlocks = 1024;
template <class T, class P> typename P::S reduce_one(const P& pass, const Geometry& g, const T* px, bool split) {
  if (!split) return reduce_range<T, P>(pass, g, px, 0, g.count);
  const int64_t block = std::max<int64_t>(int64_t(1) << 15, (g.count + kMaxBlocks - 1) / kMaxBlocks);
  const int64_t nb = (g.count + block - 1) / block;
  typename P::S parts[kMaxBlocks];
  SplitCtx<T, P> ctx{&pass, &g, px, block, parts};
  parallel_for(g.stream, nb, 1, &split_body<T, P>, &ctx);
  return combine_tree(pass, parts, nb);
}

template <class T, class R> void finish_one(const R& rec, const Geometry& g, const T* px, char* po, bool split) {
  const auto s1 = reduce_one<T>(rec.p1(), g, px, split);
  if constexpr (R::kTwo) {
    const auto s2 = reduce_one<T>(rec.p2(s1), g, px, split);
    rec.finish(po, g.out_dt, s1, s2);
  } else {
    rec.finish(po, g.out_dt, s1, 0);
  }
}

// inner / gather: threads over outputs.
template <class T, class R> struct OutCtx {
  const R* rec;
  const Geometry* g;
};
template <class T, class R> void outputs_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<OutCtx<T, R>*>(ctx);
  const Geometry& g = *c->g;
  for (int64_t i = b; i < e; ++i) {
    const T* px = reinterpret_cast<const T*>(g.x) + offset_of(g.kept, i);
    finish_one<T, R>(*c->rec, g, px, g.o + out_offset_of(g.kept, i) * g.osize, false);
  }
}

// column: kept dim kc is contiguous in x; blocks of W outputs side by side.
// Whole rows up to this many columns: long contiguous pieces keep the
// hardware prefetcher streaming (pieces of 2 KiB ran at half NumPy's speed).
constexpr int64_t kColW = 8192;
template <class T, class R> struct ColCtx {
  const R* rec;
  const Geometry* g;
  int kc;             // the kept dim walked by vectors
  Dims others;        // the other kept dims
  int64_t nblk;       // column blocks per row of others
  int64_t width;      // columns per block (<= kColW)
};
template <class T, class P>
void col_sweep(const P& pass, const Geometry& g, const T* px, int64_t w, typename P::S* acc, const double* cv,
               int64_t r0, int64_t r1) {
  using S = typename P::S;
  for (int64_t j = 0; j < w; ++j) acc[j] = pass.init();
  // Additive passes fold rows into a block accumulator first (a two-level
  // sum: error grows with rows/64 + 64, not with rows).
  S* blk = acc + w;  // the caller's scratch holds 2 * w states
  S* dst = P::kAdditive ? blk : acc;
  int64_t in_blk = 0;
  if (P::kAdditive)
    for (int64_t j = 0; j < w; ++j) blk[j] = pass.init();
  const Dims& r = g.red;
  if constexpr (std::is_same<P, SumPass<float, double>>::value) {
    if (pass.map == 0 && r.n == 1) {  // one reduced dim of rows: the register-blocked kernel
      if (r0 < r1) rk().col_sum_rows_f32(acc, px + r0 * r.xs[0], r.xs[0], r1 - r0, w);
      return;
    }
  }
  if (r0 >= r1) {  // nothing to fold (an empty reduced dim: its extent is 0)
    if (P::kAdditive)
      for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], blk[j]);
    return;
  }
  int64_t idx[CT_MAX_NDIM] = {0};
  int64_t off = offset_of(r, r0);
  for (int64_t k = r.n - 1, rest = r0; k >= 0; --k) {
    idx[k] = rest % r.ext[k];
    rest /= r.ext[k];
  }
  for (int64_t row = r0; row < r1; ++row) {
    pass.col(dst, px + off, w, row, cv);
    if (P::kAdditive && ++in_blk == 64) {
      for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], blk[j]), blk[j] = pass.init();
      in_blk = 0;
    }
    for (int k = r.n - 1; k >= 0; --k) {  // odometer over the reduced dims
      off += r.xs[k];
      if (++idx[k] < r.ext[k]) break;
      off -= r.xs[k] * r.ext[k];
      idx[k] = 0;
    }
  }
  if (P::kAdditive)
    for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], blk[j]);
}
template <class T, class R> void columns_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<ColCtx<T, R>*>(ctx);
  const Geometry& g = *c->g;
  const int64_t cols = g.kept.ext[c->kc];
  const int64_t os = g.kept.os[c->kc];
  using S1 = typename R::P1::S;
  using S2 = typename R::P2::S;
  // Heap scratch, once per chunk of tasks: 2 x kColW states per pass is too
  // much for the stack of a framework's pool thread.
  std::unique_ptr<S1[]> s1(new S1[2 * kColW]);
  std::unique_ptr<S2[]> s2(new S2[R::kTwo ? 2 * kColW : 1]);
  std::unique_ptr<double[]> cvs(new double[R::kTwo ? kColW : 1]);
  S1* a1 = s1.get();
  S2* a2 = s2.get();
  for (int64_t t = b; t < e; ++t) {
    const int64_t o = t / c->nblk, j0 = (t % c->nblk) * c->width;
    const int64_t w = std::min(c->width, cols - j0);
    const T* px = reinterpret_cast<const T*>(g.x) + offset_of(c->others, o) + j0;
    char* po = g.o + (out_offset_of(c->others, o) + j0 * os) * g.osize;
    const auto p1 = c->rec->p1();
    col_sweep<T>(p1, g, px, w, a1, nullptr, 0, g.count);
    if constexpr (R::kTwo) {
      double* cv = cvs.get();
      for (int64_t j = 0; j < w; ++j) cv[j] = c->rec->constant(a1[j]);
      col_sweep<T>(c->rec->p2(a1[0]), g, px, w, a2, cv, 0, g.count);
      for (int64_t j = 0; j < w; ++j) c->rec->finish(po + j * os * g.osize, g.out_dt, a1[j], a2[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) c->rec->finish(po + j * os * g.osize, g.out_dt, a1[j], 0);
    }
  }
}

// column, few tasks: threads split the rows instead, in fixed row blocks
// (set by the row count, not the thread count) whose partial rows are then
// combined in order.
template <class T, class P> struct RowSplitCtx {
  const P* pass;
  const Geometry* g;
  const T* px;
  int64_t w, rows_per_block;
  typename P::S* parts;  // 2 * w states per block
  const double* cv;
};
template <class T, class P> void row_blocks_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<RowSplitCtx<T, P>*>(ctx);
  for (int64_t i = b; i < e; ++i)
    col_sweep<T>(*c->pass, *c->g, c->px, c->w, c->parts + i * 2 * c->w, c->cv, i * c->rows_per_block,
                 std::min(c->g->count, (i + 1) * c->rows_per_block));
}
template <class T, class P>
void col_sweep_split(const P& pass, const Geometry& g, const T* px, int64_t w, typename P::S* acc,
                     const double* cv) {
  const int64_t rb = std::max<int64_t>(64, ((g.count + 15) / 16 + 63) & ~int64_t(63));
  const int64_t nrb = (g.count + rb - 1) / rb;
  std::unique_ptr<typename P::S[]> parts(new typename P::S[nrb * 2 * w]);
  RowSplitCtx<T, P> ctx{&pass, &g, px, w, rb, parts.get(), cv};
  parallel_for(g.stream, nrb, 1, &row_blocks_body<T, P>, &ctx);
  for (int64_t j = 0; j < w; ++j) acc[j] = parts[j];
  for (int64_t b = 1; b < nrb; ++b)
    for (int64_t j = 0; j < w; ++j) acc[j] = pass.combine(acc[j], parts[b * 2 * w + j]);
}
template <class T, class R> void columns_split(const R& rec, const Geometry& g, const ColCtx<T, R>& c) {
  using S1 = typename R::P1::S;
  using S2 = typename R::P2::S;
  const int64_t cols = g.kept.ext[c.kc];
  const int64_t os = g.kept.os[c.kc];
  std::unique_ptr<S1[]> a1(new S1[c.width]);
  std::unique_ptr<S2[]> a2(new S2[R::kTwo ? c.width : 1]);
  std::unique_ptr<double[]> cv(new double[R::kTwo ? c.width : 1]);
  const int64_t tasks = c.nblk * (g.outer / cols);
  for (int64_t t = 0; t < tasks; ++t) {
    const int64_t o = t / c.nblk, j0 = (t % c.nblk) * c.width;
    const int64_t w = std::min(c.width, cols - j0);
    const T* px = reinterpret_cast<const T*>(g.x) + offset_of(c.others, o) + j0;
    char* po = g.o + (out_offset_of(c.others, o) + j0 * os) * g.osize;
    col_sweep_split<T>(rec.p1(), g, px, w, a1.get(), nullptr);
    if constexpr (R::kTwo) {
      for (int64_t j = 0; j < w; ++j) cv[j] = rec.constant(a1[j]);
      col_sweep_split<T>(rec.p2(a1[0]), g, px, w, a2.get(), cv.get());
      for (int64_t j = 0; j < w; ++j) rec.finish(po + j * os * g.osize, g.out_dt, a1[j], a2[j]);
    } else {
      for (int64_t j = 0; j < w; ++j) rec.finish(po + j * os * g.osize, g.out_dt, a1[j], 0);
    }
  }
}

template <class T, class R> void run_recipe(const R& rec, Geometry& g) {
  const Dims& r = g.red;
  const bool inner_contig = r.n == 0 || r.xs[r.n - 1] == 1;
  int kc = -1;
  for (int i = 0; i < g.kept.n; ++i)
    if (g.kept.xs[i] == 1) kc = i;
  const int threads = g.stream && g.stream->parallel_for ? 8 : default_threads();
  // The column loop reads rows in place: only for aligned x (else the
  // gather loop below packs every run first).
  if (!inner_contig && kc >= 0 && r.n > 0 && g.aligned) {
    ColCtx<T, R> ctx;
    ctx.rec = &rec;
    ctx.g = &g;
    ctx.kc = kc;
    ctx.others.n = 0;
    for (int i = 0; i < g.kept.n; ++i)
      if (i != kc) {
        const int k = ctx.others.n++;
        ctx.others.ext[k] = g.kept.ext[i];
        ctx.others.xs[k] = g.kept.xs[i];
        ctx.others.os[k] = g.kept.os[i];
      }
    const int64_t cols = g.kept.ext[kc];
    ctx.nblk = (cols + kColW - 1) / kColW;
    ctx.width = ((cols + ctx.nblk - 1) / ctx.nblk + 15) & ~int64_t(15);  // even blocks
    const int64_t tasks = ctx.nblk * (g.outer / cols);
    const int64_t per_task = ctx.width * g.count;
    if (tasks < 2 * threads && g.count >= 256 && per_task >= (int64_t(1) << 16)) {
      columns_split<T, R>(rec, g, ctx);
      return;
    }
    parallel_for(g.stream, tasks, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(per_task, 1)),
                 &columns_body<T, R>, &ctx);
    return;
  }
  // Few outputs with many elements each: split each output's range.
  if (g.outer < 2 * threads && g.count >= (int64_t(1) << 16)) {
    for (int64_t i = 0; i < g.outer; ++i) {
      const T* px = reinterpret_cast<const T*>(g.x) + offset_of(g.kept, i);
      finish_one<T, R>(rec, g, px, g.o + out_offset_of(g.kept, i) * g.osize, true);
    }
    return;
  }
  OutCtx<T, R> ctx{&rec, &g};
  parallel_for(g.stream, g.outer, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(g.count, 1)),
               &outputs_body<T, R>, &ctx);
}

// Types per dtype: storage T; sums of integers in int64, of floats in double;
// max/min in the type itself (float for half types).
template <class T> using SumA = typename std::conditional<kFloat<T>, double, int64_t>::type;
template <class T> using ExtA = typename std::conditional<kHalf<T>, float, T>::type;

// An empty reduced set (count 0): every output is the finish of nothing.
// x is not touched and no pointer into it is formed: an empty x may have
// NULL data and any extents and strides (core checks nothing of them).
template <class T, class R> void run_empty(const R& rec, const CTReduceCall* c) {
  const CTensor* out = c->out;
  char* base = static_cast<char*>(out->data) + out->byte_offset;
  const int64_t osize = out->dtype.bits / 8;
  int64_t n = 1;
  for (int32_t d = 0; d < out->ndim; ++d) n *= out->shape[d];  // out is not empty: its count was checked
  const auto s1 = rec.p1().init();
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, r = i;
    for (int32_t d = out->ndim - 1; d >= 0; --d) {
      const int64_t q = r / out->shape[d];
      off += (r - q * out->shape[d]) * ct_stride_of(out, d);
      r = q;
    }
    if constexpr (R::kTwo) rec.finish(base + off * osize, c->out_dt, s1, rec.p2(s1).init());
    else rec.finish(base + off * osize, c->out_dt, s1, 0);
  }
}

template <class T> CTStatus reduce_typed(const CTReduceCall* c, const CTCpuStream* s) {
  Geometry g;
  const bool arg = c->op == CT_OP_ARGMAX || c->op == CT_OP_ARGMIN;
  const bool empty = c->count == 0;
  if (!empty) build_geometry(c, arg, &g);
  g.stream = s;
  auto run = [&](const auto& rec) {
    if (empty) run_empty<T>(rec, c);
    else run_recipe<T>(rec, g);
  };
  switch (c->op) {
    case CT_OP_SUM: run(RSum<T, SumA<T>>{}); break;
    case CT_OP_MEAN: { RMean<T> r; r.count = c->count; run(r); break; }
    case CT_OP_PROD: run(RProd<T, SumA<T>>{}); break;
    case CT_OP_MAX: run(RExt<T, ExtA<T>, true>{}); break;
    case CT_OP_MIN: run(RExt<T, ExtA<T>, false>{}); break;
    case CT_OP_ARGMAX: run(RArg<T, ExtA<T>, true>{}); break;
    case CT_OP_ARGMIN: run(RArg<T, ExtA<T>, false>{}); break;
    case CT_OP_ANY: run(RAny<T, false>{}); break;
    case CT_OP_ALL: run(RAny<T, true>{}); break;
    case CT_OP_NORM2: run(RNorm2<T>{}); break;
    case CT_OP_LOGSUMEXP:
      if constexpr (kFloat<T>) run(RLogSumExp<T, ExtA<T>>{});
      break;
    case CT_OP_VAR: case CT_OP_STD: {
      if (c->op == CT_OP_VAR) { RVar<T, false> r; r.count = c->count; r.correction = c->params[0]; run(r); }
      else { RVar<T, true> r; r.count = c->count; r.correction = c->params[0]; run(r); }
      break;
    }
    default:
      return fail(CT_ERR_INTERNAL, "cpu backend: op %d is not a reduction", c->op);
  }
  return CT_OK;
}

// ---- along-axis ops -------------------------------------------------------------------

// Softmax / log_softmax of one line of n float values (A = float or double)
// already in a contiguous buffer or in place: y may equal x.
template <class A> void softmax_line(const A* x, A* y, int64_t n, bool log) {
  const KernelTable& kt = kernel_table();
  const int dt = std::is_same<A, float>::value ? CT_DT_FLOAT32 : CT_DT_FLOAT64;
  A m;
  if constexpr (std::is_same<A, float>::value) m = rk().max_f32(x, n); else m = rk().max_f64(x, n);
  if (m != m) {  // NaN in the line: NaN everywhere
    for (int64_t i = 0; i < n; ++i) y[i] = m;
    return;
  }
  const A shift = std::isinf(m) ? (m > 0 ? m : A(0)) : m;  // all -inf: e^(x-0) = 0, 0/0 = NaN as NumPy
  const int which = std::is_same<A, float>::value ? 0 : 1;
  if (log) {
    // the sum of e^(x - m) without keeping it (y may be x), then y = x - m - log(sum)
    A buf[1024];
    double s = 0;
    for (int64_t i = 0; i < n; i += 1024)
      s += kt.exp_shift_sum[which](x + i, buf, std::min<int64_t>(1024, n - i), (double)shift);
    // (x - m) - log(sum), in that order: x - (m + log(sum)) would round
    // m + log(sum) at m's magnitude (x = 1e4 keeps only ~3 digits in float32).
    double prm[2] = {-(double)shift, 0.0};
    char* q[2] = {reinterpret_cast<char*>(y), reinterpret_cast<char*>(const_cast<A*>(x))};
    kt.op[CT_OP_ADD_SCALAR][dt](q, n, prm);
    prm[0] = -std::log(s);
    q[1] = q[0];
    kt.op[CT_OP_ADD_SCALAR][dt](q, n, prm);
    return;
  }
  const double s = kt.exp_shift_sum[which](x, y, n, (double)shift);
  double prm[2] = {1.0 / s, 0.0};
  char* q[2] = {reinterpret_cast<char*>(y), reinterpret_cast<char*>(y)};
  kt.op[CT_OP_MUL_SCALAR][dt](q, n, prm);
}

// Lines longer than this are done online in two passes over memory
// (running max and rescaled sum, then the output) instead of in cache.
constexpr int64_t kCachedLine = int64_t(1) << 15;

// Reads/writes chunk [i, i+m) of a line of T with stride st into an A buffer.
template <class T, class A> void load_chunk(const T* x, int64_t st, int64_t i, int64_t m, A* buf) {
  for (int64_t k = 0; k < m; ++k) buf[k] = ld<A>(load_u(x + (i + k) * st));  // x may be unaligned
}
template <class T, class A> void store_chunk(T* y, int64_t st, int64_t i, int64_t m, const A* buf) {
  for (int64_t k = 0; k < m; ++k) store_u(y + (i + k) * st, Convert<T>::from(buf[k]));
}

template <class T> void softmax_strided(const T* x, int64_t xs, T* y, int64_t ys, int64_t n, bool log) {
  using A = typename std::conditional<std::is_same<T, double>::value, double, float>::type;
  const KernelTable& kt = kernel_table();
  const int dt = std::is_same<A, float>::value ? CT_DT_FLOAT32 : CT_DT_FLOAT64;
  if constexpr (std::is_same<T, A>::value) {
    if (xs == 1 && ys == 1 && n <= kCachedLine && is_aligned<T>(x) && is_aligned<T>(y))
      return softmax_line<A>(x, y, n, log);
  }
  constexpr int64_t kChunk = 2048;
  A buf[kChunk];
  if (n <= kChunk) {
    load_chunk(x, xs, 0, n, buf);
    softmax_line<A>(buf, buf, n, log);
    store_chunk(y, ys, 0, n, buf);
    return;
  }
  // Online: pass 1 keeps the running max m and sum s of e^(x - m).
  A m = -std::numeric_limits<A>::infinity();
  double s = 0;
  bool nan = false;
  for (int64_t i = 0; i < n && !nan; i += kChunk) {
    const int64_t k = std::min(kChunk, n - i);
    load_chunk(x, xs, i, k, buf);
    const A cm = std::is_same<A, float>::value ? (A)rk().max_f32((const float*)(const void*)buf, k)
                                               : (A)rk().max_f64((const double*)(const void*)buf, k);
    if (cm != cm) { nan = true; break; }
    if (cm > m) {
      if (std::isfinite((double)m)) s *= std::exp((double)m - (double)cm);
      m = cm;
    }
    if (!std::isfinite((double)m)) continue;  // -inf so far (nothing to add) or +inf (handled below)
    s += kt.exp_shift_sum[std::is_same<A, float>::value ? 0 : 1](buf, buf, k, (double)m);
  }
  const double qnan = std::numeric_limits<double>::quiet_NaN();
  // Pass 2: y = e^(x - m) / s, or x - m - log(s).
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t k = std::min(kChunk, n - i);
    if (nan || std::isinf((double)m)) {
      // A NaN in the line; a +inf max (inf - inf); all -inf (0 / 0): NaN,
      // as NumPy's expression and the in-cache path give.
      for (int64_t t = 0; t < k; ++t) buf[t] = (A)qnan;
      store_chunk(y, ys, i, k, buf);
      continue;
    }
    load_chunk(x, xs, i, k, buf);
    char* q[2] = {reinterpret_cast<char*>(buf), reinterpret_cast<char*>(buf)};
    if (log) {
      double prm[2] = {-(double)m, 0.0};  // (x - m) - log(sum), as in softmax_line
      kt.op[CT_OP_ADD_SCALAR][dt](q, k, prm);
      prm[0] = -std::log(s);
      kt.op[CT_OP_ADD_SCALAR][dt](q, k, prm);
    } else {
      kt.exp_shift_sum[std::is_same<A, float>::value ? 0 : 1](buf, buf, k, (double)m);
      double prm[2] = {1.0 / s, 0.0};
      kt.op[CT_OP_MUL_SCALAR][dt](q, k, prm);
    }
    store_chunk(y, ys, i, k, buf);
  }
}

// cumsum / cumprod of one line, accumulating in A.
template <class T, class O, class A> void scan_line(const T* x, int64_t xs, O* y, int64_t ys, int64_t n, bool prod) {
  A acc = prod ? A(1) : A(0);
  for (int64_t i = 0; i < n; ++i) {
    const A v = ld<A>(load_u(x + i * xs));  // x and y may be unaligned
    if constexpr (std::is_integral<A>::value) acc = prod ? wmul(acc, v) : wadd(acc, v);
    else acc = prod ? acc * v : acc + v;
    store_u(y + i * ys, Convert<O>::from(acc));
  }
}

struct LineCtx {
  const CTAlongAxisCall* call;
  Dims lines;      // the other dims (xs = x strides, os = out strides)
  int64_t n, xs, ys;
};

template <class T, class O> void lines_body(void* ctx, int64_t b, int64_t e) {
  auto* c = static_cast<LineCtx*>(ctx);
  const CTensor* x = c->call->x;
  const CTensor* out = c->call->out;
  const T* xb = reinterpret_cast<const T*>(static_cast<const char*>(x->data) + x->byte_offset);
  O* yb = reinterpret_cast<O*>(static_cast<char*>(out->data) + out->byte_offset);
  const int32_t op = c->call->op;
  for (int64_t i = b; i < e; ++i) {
    const T* xl = xb + offset_of(c->lines, i);
    O* yl = yb + out_offset_of(c->lines, i);
    if (op == CT_OP_SOFTMAX || op == CT_OP_LOG_SOFTMAX) {
      if constexpr (kFloat<T> && std::is_same<T, O>::value) softmax_strided<T>(xl, c->xs, yl, c->ys, c->n, op == CT_OP_LOG_SOFTMAX);
    } else {
      using A = typename std::conditional<kFloat<T>, double, int64_t>::type;
      scan_line<T, O, A>(xl, c->xs, yl, c->ys, c->n, op == CT_OP_CUMPROD);
    }
  }
}

template <class T, class O> CTStatus along_typed(const CTAlongAxisCall* c, const CTCpuStream* s) {
  const CTensor* x = c->x;
  LineCtx ctx;
  ctx.call = c;
  ctx.n = x->shape[c->axis];
  ctx.xs = ct_stride_of(x, c->axis);
  ctx.ys = ct_stride_of(c->out, c->axis);
  ctx.lines.n = 0;
  int64_t lines = 1;
  for (int32_t d = 0; d < x->ndim; ++d) {
    if (d == c->axis || x->shape[d] == 1) continue;
    const int k = ctx.lines.n++;
    ctx.lines.ext[k] = x->shape[d];
    ctx.lines.xs[k] = ct_stride_of(x, d);
    ctx.lines.os[k] = ct_stride_of(c->out, d);
    lines *= x->shape[d];
  }
  const int64_t cost = c->op == CT_OP_SOFTMAX || c->op == CT_OP_LOG_SOFTMAX ? 8 : 1;
  parallel_for(s, lines, std::max<int64_t>(1, (int64_t(1) << 15) / std::max<int64_t>(ctx.n * cost, 1)),
               &lines_body<T, O>, &ctx);
  return CT_OK;
}

template <class T> CTStatus along_in(const CTAlongAxisCall* c, const CTCpuStream* s) {
  if (c->out_dt == CT_DT_INT64 && !std::is_same<T, int64_t>::value) {
    if constexpr (!kFloat<T>) return along_typed<T, int64_t>(c, s);
  }
  return along_typed<T, T>(c, s);
}

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
    default: return fail(CT_ERR_INTERNAL, "cpu backend: dtype index %d", dt);
  }
}
template <class T> struct ReduceF {
  static CTStatus run(const CTReduceCall* c, const CTCpuStream* s) { return reduce_typed<T>(c, s); }
};
template <class T> struct AlongF {
  static CTStatus run(const CTAlongAxisCall* c, const CTCpuStream* s) { return along_in<T>(c, s); }
};

}  // namespace

CTStatus cpu_reduce(const CTReduceCall* call) {
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(call->fn, call->stream, &copy, &s)) return st;
  // bool is stored as uint8 0/1: the same kernels, except that max/min of
  // bool is or/and, which uint8 max/min already are.
  return by_dtype<ReduceF>(call->x_dt, call, s);
}

CTStatus cpu_along_axis(const CTAlongAxisCall* call) {
  CTCpuStream copy;
  const CTCpuStream* s = nullptr;
  if (CTStatus st = resolve_stream(call->fn, call->stream, &copy, &s)) return st;
  return by_dtype<AlongF>(call->x_dt, call, s);
}

bool has_reduce_kernel(int32_t op, int32_t dt) {
  // The ops this file implements, by name: a new op is not one of them until
  // it has a kernel here. Every dtype the op is defined for has one.
  switch (op) {
    case CT_OP_SUM: case CT_OP_MEAN: case CT_OP_PROD: case CT_OP_MAX: case CT_OP_MIN: case CT_OP_ARGMAX:
    case CT_OP_ARGMIN: case CT_OP_ANY: case CT_OP_ALL: case CT_OP_CUMSUM: case CT_OP_CUMPROD:
      return dt >= 0 && dt < CT_DT_COUNT;
    case CT_OP_NORM2: case CT_OP_VAR: case CT_OP_STD:
      return (CT_DTS_NUMERIC >> dt) & 1u;
    case CT_OP_LOGSUMEXP: case CT_OP_SOFTMAX: case CT_OP_LOG_SOFTMAX:
      return (CT_DTS_FLOAT >> dt) & 1u;
    default:
      return false;
  }
}

}  // namespace cpu
}  // namespace ct
