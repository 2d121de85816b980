// reduce_passes.h — the reductions' passes and recipes (reduce.cc runs them).
//
// A pass is what one sweep over the reduced elements computes (sum, product,
// max/min, arg max/min, any/all); a recipe is one or two passes plus the
// finish that writes one output (mean, var, logsumexp, ...). The loops in
// reduce.cc are templates over a recipe.
#ifndef CTENSOR_SRC_CPU_REDUCE_PASSES_H_
#define CTENSOR_SRC_CPU_REDUCE_PASSES_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/host.h"

#include "cpu/engine.h"
#include "cpu/half.h"
#include "cpu/kernels.h"
#include "cpu/reduce_internal.h"

namespace ct {
namespace cpu {

// Nonzero (NaN is nonzero): any/all and logical tests.
template <class T> inline bool nonzero(T v) {
  if constexpr (IsF8<T>::value) return to_double(v) != 0.0;  // NaN != 0; fnuz's 0x80 is NaN
  else if constexpr (kHalf<T>) return (v.bits & 0x7fff) != 0;
  else return v != 0;
}

// n elements of a narrow float type, decoded to float32.
template <class T> inline void decode_block(const T* p, float* buf, int64_t n) {
  if constexpr (std::is_same<T, f16>::value) rk().decode_f16(reinterpret_cast<const uint16_t*>(p), buf, n);
  else if constexpr (std::is_same<T, bf16>::value) rk().decode_bf16(reinterpret_cast<const uint16_t*>(p), buf, n);
  else for (int64_t i = 0; i < n; ++i) buf[i] = (float)to_double(p[i]);
}

// Writes a double (float results) or an int64 (integer results, taken modulo
// 2^bits: a uint64 result is its bits) to out's dtype.
inline void put_f(char* p, int32_t dt, double v) {
  switch (dt) {
    case CT_DT_FLOAT16: { const f16 h = Convert<f16>::from(v); std::memcpy(p, &h, 2); break; }
    case CT_DT_BFLOAT16: { const bf16 h = Convert<bf16>::from(v); std::memcpy(p, &h, 2); break; }
    case CT_DT_FLOAT32: { const float f = (float)v; std::memcpy(p, &f, 4); break; }
    case CT_DT_FLOAT8_E4M3FN: *p = (char)Convert<f8<0>>::from(v).bits; break;
    case CT_DT_FLOAT8_E5M2: *p = (char)Convert<f8<1>>::from(v).bits; break;
    case CT_DT_FLOAT8_E4M3FNUZ: *p = (char)Convert<f8<2>>::from(v).bits; break;
    case CT_DT_FLOAT8_E5M2FNUZ: *p = (char)Convert<f8<3>>::from(v).bits; break;
    default: std::memcpy(p, &v, 8); break;
  }
}
inline void put_i(char* p, int32_t dt, int64_t v) {
  switch (dt) {
    case CT_DT_BOOL: case CT_DT_INT8: case CT_DT_UINT8: { const uint8_t b = (uint8_t)v; std::memcpy(p, &b, 1); break; }
    case CT_DT_INT16: case CT_DT_UINT16: { const uint16_t b = (uint16_t)v; std::memcpy(p, &b, 2); break; }
    case CT_DT_INT32: case CT_DT_UINT32: { const uint32_t b = (uint32_t)v; std::memcpy(p, &b, 4); break; }
    default: std::memcpy(p, &v, 8); break;
  }
}
template <class A> inline void put(char* p, int32_t dt, A v) {
  if constexpr (std::is_floating_point<A>::value) put_f(p, dt, (double)v);
  else put_i(p, dt, (int64_t)v);
}

// ---- passes: what one sweep over the reduced elements computes ---------------
// init() is the state of nothing; contig(p, n, idx0) reduces n contiguous
// elements whose first has flat index idx0 in the reduced space;
// combine(a, b) joins an earlier state a with a later b; col(acc, row, w, r,
// c) folds row r (w elements side by side) into w states.

// Sum of map(x): 0 x, 1 x^2, 2 (x - c)^2, 3 e^(x - c), 4 x with NaN as 0 (nansum).
// A: int64 (wrapping) or double.
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
    else return map == 0 ? v : map == 1 ? v * v : map == 2 ? (v - c) * (v - c) : map == 3 ? std::exp(v - c)
                : (v != v ? A(0) : v);
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
      if constexpr (std::is_same<T, float>::value && std::is_same<A, double>::value)
        if (map == 1) return rk().sumsq_f32(p, n, 0.0);  // norm2
      if (map == 0) {
        if constexpr (std::is_same<T, float>::value) return rk().sum_f32(p, n);
        if constexpr (std::is_same<T, double>::value) return rk().sum_f64(p, n);
        if constexpr (std::is_same<T, f16>::value) return rk().sum_f16(reinterpret_cast<const uint16_t*>(p), n);
        if constexpr (std::is_same<T, bf16>::value) return rk().sum_bf16(reinterpret_cast<const uint16_t*>(p), n);
      }
      if constexpr (std::is_same<A, double>::value) {
        if (map == 4) {  // nansum
          if constexpr (std::is_same<T, float>::value) return rk().nansum_f32(p, n);
          if constexpr (std::is_same<T, double>::value) return rk().nansum_f64(p, n);
        }
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
    if constexpr (std::is_same<T, float>::value && std::is_same<A, double>::value) return rk().prod_f32(p, n);
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
        decode_block(p + i, buf, m);
        r = pick(r, kMax ? rk().max_f32(buf, m) : rk().min_f32(buf, m));
      }
      return r;
    }
    S r = init();
    for (int64_t i = 0; i < n; ++i) r = pick(r, ld<A>(p[i]));
    return r;
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double*) const {
    if constexpr (std::is_same<T, float>::value && std::is_same<A, float>::value)
      return kMax ? rk().col_max_f32(acc, row, w) : rk().col_min_f32(acc, row, w);
    if constexpr (std::is_same<T, double>::value && std::is_same<A, double>::value)
      return kMax ? rk().col_max_f64(acc, row, w) : rk().col_min_f64(acc, row, w);
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
        int64_t i;
        if constexpr (std::is_same<T, float>::value) i = rk().find_f32(p, n, m);
        else i = rk().find_f64(p, n, m);
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
  // The vector kernel of T's element kind (integers and bool by size; -1:
  // the narrow floats, whose zero has two codes, test element by element).
  static constexpr int kKind = std::is_same<T, float>::value ? 4 : std::is_same<T, double>::value ? 5
                               : std::is_integral<T>::value ? (sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3)
                               : -1;
  S contig(const T* p, int64_t n, int64_t) const {
    if constexpr (kKind >= 0) {  // stops at the first vector block holding a deciding element, as NumPy's
      const bool decided = kAll ? rk().has_zero[kKind](p, n) : rk().has_nonzero[kKind](p, n);
      return decided ? (kAll ? 0 : 1) : init();
    }
    for (int64_t i = 0; i < n; ++i)
      if (nonzero(p[i]) != kAll) return kAll ? 0 : 1;
    return init();
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double*) const {
    for (int64_t j = 0; j < w; ++j) acc[j] = combine(acc[j], (S)nonzero(row[j]));
  }
};

// How many elements are nonzero (NaN counts, as NumPy's count_nonzero).
template <class T> struct CountPass {
  using S = int64_t;
  static constexpr bool kAdditive = false;
  S init() const { return 0; }
  S combine(S a, S b) const { return a + b; }
  S contig(const T* p, int64_t n, int64_t) const {
    int64_t c = 0;
    for (int64_t i = 0; i < n; ++i) c += nonzero(p[i]) ? 1 : 0;
    return c;
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double*) const {
    for (int64_t j = 0; j < w; ++j) acc[j] += nonzero(row[j]) ? 1 : 0;
  }
};

// The sum and the count of the elements that are not NaN (nanmean), the sum
// pairwise in double as SumPass's.
struct NanSumCount {
  double s;
  int64_t n;
};
template <class T> struct NanMeanPass {
  using S = NanSumCount;
  static constexpr bool kAdditive = false;
  S init() const { return {0.0, 0}; }
  S combine(S a, S b) const { return {a.s + b.s, a.n + b.n}; }
  S contig(const T* p, int64_t n, int64_t) const {
    if (n > 1024) {
      const int64_t h = n / 2;
      return combine(contig(p, h, 0), contig(p + h, n - h, 0));
    }
    double acc[4] = {0, 0, 0, 0};
    int64_t cnt = 0, i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) {
        const double v = ld<double>(p[i + k]);
        const bool ok = v == v;
        acc[k] += ok ? v : 0.0;
        cnt += ok;
      }
    for (; i < n; ++i) {
      const double v = ld<double>(p[i]);
      acc[0] += v == v ? v : 0.0;
      cnt += v == v;
    }
    return {(acc[0] + acc[1]) + (acc[2] + acc[3]), cnt};
  }
  void col(S* acc, const T* row, int64_t w, int64_t, const double*) const {
    for (int64_t j = 0; j < w; ++j) {
      const double v = ld<double>(row[j]);
      if (v == v) acc[j] = {acc[j].s + v, acc[j].n + 1};
    }
  }
};

// ---- fused passes: a two-pass recipe in one sweep over memory -------------------
// A long contiguous run is taken in blocks that stay in L1: both of the
// recipe's passes run on a block (its second read hits the cache), and the
// blocks' states combine exactly (var) or by rescaling (logsumexp). The
// column loop keeps the two passes (its rows are side by side already).
// 1024 elements: logsumexp's second pass (ExpShiftSum) prefetches 4 KiB
// ahead, so a float32 block of 4 KiB brings in all of the next block while
// the exponentials run, and the next max pass reads the cache: logsumexp
// of 98.6 M float32 32.7-35.9 -> 27.3-28.8 ms against 2048 (var unchanged).
constexpr int64_t kFusedBlock = 1024;

// var: count, mean and the sum of squared deviations from it (Chan et al.'s
// pairwise update joins two blocks: no cancellation, unlike the one-pass
// sum-of-squares formula). Means are kept about a shift, the line's first
// element: far from 0 (1e4 + a spread of 1), a mean's own rounding would
// otherwise enter every block's join (1e-13 relative in float64, against
// 1e-16 for two passes); about the shift they are of the spread's size.
struct VarState {
  double n, mean, m2;  // mean: less the shift
};
template <class T> struct VarPass {
  using S = VarState;
  double shift;
  S init() const { return {0, 0, 0}; }
  S combine(S a, S b) const {
    if (a.n == 0) return b;
    if (b.n == 0) return a;
    const double n = a.n + b.n, d = b.mean - a.mean;
    return {n, a.mean + d * (b.n / n), a.m2 + b.m2 + d * d * (a.n * (b.n / n))};
  }
  S contig(const T* p, int64_t n, int64_t) const {
    S s = init();
    for (int64_t i = 0; i < n; i += kFusedBlock) {
      const int64_t m = std::min(kFusedBlock, n - i);
      double mean, m2;
      if constexpr (std::is_same<T, float>::value) {
        mean = rk().sumdev_f32(p + i, m, shift) / (double)m;
        m2 = rk().sumsq_f32(p + i, m, shift + mean);
      } else {
        mean = rk().sumdev_f64(p + i, m, shift) / (double)m;
        m2 = rk().sumsq_f64(p + i, m, shift + mean);
      }
      s = combine(s, S{(double)m, mean, m2});
    }
    return s;
  }
};
// The shift for a line whose first element is at `first` (null: an empty
// line). 0 where that element is not finite or so large that x - shift
// could overflow: the result is then inf or NaN, as two passes give.
template <class T> double var_shift(const T* first) {
  if (!first) return 0.0;
  T v;
  std::memcpy(&v, first, sizeof v);
  return std::fabs((double)v) < 1e150 ? (double)v : 0.0;
}

// logsumexp: the max m and the sum of e^(x - m). A block with a NaN, or
// whose max is +-inf, decides m alone (m + log s is then m itself). Blocks
// after the first sum e^(x - m) with the max so far in one pass, finding
// their own max alongside (read once, not a max pass then an exp pass); a
// block whose max is above m is summed again with its own max, as a first
// block is (e^(x - m) for x > m is no term to keep: x - m rounds at x's
// magnitude where the block's own max leaves the largest terms exact), and
// the blocks after it take the max first until one's max is not above m
// (rising values cost no more than two passes did).
template <class T> struct LseState {
  double m, s;
};
template <class T> struct LsePass {
  using S = LseState<T>;
  S init() const { return {-std::numeric_limits<double>::infinity(), 0}; }
  S combine(S a, S b) const {
    if (a.m != a.m || b.m != b.m) return a.m != a.m ? a : b;
    const double m = std::max(a.m, b.m);
    if (!std::isfinite(m)) return {m, 0};
    // one side's max is m: its factor is e^0 = 1 (one exp per block of a line, not two)
    return {m, (a.m == m ? a.s : a.s * std::exp(a.m - m)) + (b.m == m ? b.s : b.s * std::exp(b.m - m))};
  }
  S contig(const T* p, int64_t n, int64_t) const {
    constexpr int kF = std::is_same<T, float>::value ? 0 : 1;
    T buf[kFusedBlock];
    S s = init();
    bool one_pass = false;
    for (int64_t i = 0; i < n; i += kFusedBlock) {
      const int64_t m = std::min(kFusedBlock, n - i);
      double mx;
      bool have_max = false;
      if (one_pass) {
        const double e = kernel_table().exp_sum_max[kF](p + i, m, s.m, &mx);
        if (e == e) {  // no NaN in the block: mx is its max
          if (mx <= s.m) {
            s.s += e;
            continue;
          }
          have_max = true;
        }
        one_pass = false;  // rising values: max first until a block's max is not above m again
      }
      if (!have_max) {
        if constexpr (kF == 0) mx = rk().max_f32(p + i, m); else mx = rk().max_f64(p + i, m);
        one_pass = mx <= s.m && std::isfinite(s.m);
      }
      const double e = std::isfinite(mx) ? kernel_table().exp_shift_sum[kF](p + i, buf, m, mx) : 0.0;
      s = combine(s, S{mx, e});
    }
    return s;
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
template <class T, class SA> struct RNanSum : OnePass<SumPass<T, SA>> {
  SumPass<T, SA> p1() const { SumPass<T, SA> p; p.map = 4; return p; }
  void finish(char* o, int32_t dt, SA s, int) const { put(o, dt, s); }
};
template <class T> struct RNanMean : OnePass<NanMeanPass<T>> {
  NanMeanPass<T> p1() const { return {}; }
  void finish(char* o, int32_t dt, NanSumCount s, int) const {
    put_f(o, dt, s.n ? s.s / (double)s.n : std::numeric_limits<double>::quiet_NaN());
  }
};
template <class T> struct RCount : OnePass<CountPass<T>> {
  CountPass<T> p1() const { return {}; }
  void finish(char* o, int32_t, int64_t s, int) const { std::memcpy(o, &s, 8); }
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
  static constexpr bool kFused = std::is_same<T, float>::value || std::is_same<T, double>::value;
  LsePass<T> pf(const T*) const { return {}; }
  void finish_fused(char* o, int32_t dt, LseState<T> st) const { finish(o, dt, (EA)st.m, st.s); }
};
// var / std: mean, then the sum of squared deviations (two passes: exact
// enough where the one-pass formula cancels); float32/float64 in one sweep
// of blocks (VarPass), which keeps that accuracy.
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
  static constexpr bool kFused = std::is_same<T, float>::value || std::is_same<T, double>::value;
  VarPass<T> pf(const T* first) const { return {var_shift(first)}; }
  void finish_fused(char* o, int32_t dt, VarState st) const { finish(o, dt, st.mean, st.m2); }
};

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_REDUCE_PASSES_H_
