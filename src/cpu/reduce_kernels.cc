// reduce_kernels.cc — the hot inner loops of reductions, compiled once per
// SIMD target by Highway and chosen at run time; reduce.cc and
// along_axis.cc drive them.
//
// Float sums accumulate in float64 (float32 inputs are widened lane by lane)
// and are pairwise above a base block, so a float32 sum is as good as exact
// before its final rounding: more accurate than NumPy's float32 pairwise sum
// at the same memory traffic (the loop is bound by bandwidth, not by the
// wider adds).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/reduce_kernels.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cpu/kernels.h"
#include "cpu/simd-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Four quarters of a range read side by side: one thread following four
// streams keeps more cache-line misses in flight than following one (the
// hardware prefetchers track each stream). On the 2-core AVX2 host a float32
// sum went from 16-20 to 19-27 GB/s (two threads, 340 MB, same runs). Each
// stream is also prefetched kStreamsPrefetch bytes ahead, a line at a time:
// on the 2-core AVX-512 hosts the hardware prefetchers alone left a float32
// sum widened to float64 at 17.8-22.3 GB/s where the same loop over float32
// lanes read 22.4-26.7; with the prefetch 21.3-22.5 (a standalone copy of the
// loop, 394 MB, two threads, the variants alternated in one process).
// Runs step(acc[s][k], s * quarter + i) over i in [0, m) by 2 * N, k = 0, 1,
// where p (of type T) is the range's first element.
constexpr int64_t kStreamsPrefetch = 1024;
template <class T, class V, class Step>
HWY_INLINE void Streams4(V (&acc)[4][2], const T* p, int64_t quarter, int64_t m, int64_t N, const Step& step) {
  const int64_t bytes = 2 * N * (int64_t)sizeof(T);  // per stream and step pair
  for (int64_t i = 0; i < m; i += 2 * N)
    for (int s = 0; s < 4; ++s) {
      PrefetchLines(reinterpret_cast<const char*>(p + s * quarter + i) + kStreamsPrefetch, bytes);
      acc[s][0] = step(acc[s][0], s * quarter + i);
      acc[s][1] = step(acc[s][1], s * quarter + i + N);
    }
}
// Below this many elements a range is read as one stream; above 4 x this,
// halved pairwise first (so a quarter is at most kQuarter elements).
constexpr int64_t kQuarter = 65536;

// Pairwise sum of parts[0, n).
inline double PairwiseSum(const double* parts, int64_t n) {
  if (n <= 2) return n == 0 ? 0.0 : n == 1 ? parts[0] : parts[0] + parts[1];
  const int64_t h = n / 2;
  return PairwiseSum(parts, h) + PairwiseSum(parts + h, n - h);
}

// Sum of n float32 or float64 values x (kMap 1: of (x - c)^2: norm2 with
// c = 0, var's deviations from a block's mean; kMap 2: of x - c, var's
// block sums about a shift near the data; kMap 3: of x with NaN as 0,
// nansum) in
// float64: base blocks of kBase with four vector accumulators (float32 in
// blocks of 2048: widened, they lose nothing; float64 in blocks of 512),
// pairwise above. From 4 x kBase on, four quarters are read side by side
// (Streams4) a base block at a time, the blocks' sums added pairwise.
template <class T, int kMap> double SumMap(const T* p, int64_t n, double c = 0) {
  constexpr int64_t kBase = sizeof(T) == 4 ? 2048 : 512;
  if (n > 4 * kQuarter) {
    const int64_t half = ((n / 2) + 63) & ~int64_t(63);
    return SumMap<T, kMap>(p, half, c) + SumMap<T, kMap>(p + half, n - half, c);
  }
  const hn::ScalableTag<double> dd;
  const hn::Rebind<T, decltype(dd)> dt;  // float32: half a vector
  using V = decltype(hn::Zero(dd));
  const int64_t N = (int64_t)hn::Lanes(dd);
  const V cv = hn::Set(dd, c);
  auto step = [&](V a, const T* q) {
    V v;
    if constexpr (sizeof(T) == 4) v = hn::PromoteTo(dd, hn::LoadU(dt, q)); else v = hn::LoadU(dd, q);
    if (kMap == 0) return hn::Add(a, v);
    if (kMap == 3) return hn::Add(a, hn::IfThenZeroElse(hn::IsNaN(v), v));
    v = hn::Sub(v, cv);
    return kMap == 1 ? hn::MulAdd(v, v, a) : hn::Add(a, v);
  };
  if (n >= 4 * kBase) {
    const int64_t quarter = (n / 4) & ~int64_t(63);
    double parts[kQuarter / kBase + 1];
    int64_t np = 0;
    for (int64_t b = 0; b < quarter; b += kBase) {
      V acc[4][2];
      for (auto& a : acc) a[0] = a[1] = hn::Zero(dd);
      const T* q = p + b;
      Streams4(acc, q, quarter, std::min(kBase, quarter - b), N, [&](V a, int64_t i) { return step(a, q + i); });
      const V v = hn::Add(hn::Add(hn::Add(acc[0][0], acc[0][1]), hn::Add(acc[1][0], acc[1][1])),
                          hn::Add(hn::Add(acc[2][0], acc[2][1]), hn::Add(acc[3][0], acc[3][1])));
      parts[np++] = hn::GetLane(hn::SumOfLanes(dd, v));
    }
    return PairwiseSum(parts, np) + SumMap<T, kMap>(p + 4 * quarter, n - 4 * quarter, c);
  }
  V a0 = hn::Zero(dd), a1 = hn::Zero(dd), a2 = hn::Zero(dd), a3 = hn::Zero(dd);
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = step(a0, p + i);
    a1 = step(a1, p + i + N);
    a2 = step(a2, p + i + 2 * N);
    a3 = step(a3, p + i + 3 * N);
  }
  for (; i + N <= n; i += N) a0 = step(a0, p + i);
  double s = hn::GetLane(hn::SumOfLanes(dd, hn::Add(hn::Add(a0, a1), hn::Add(a2, a3))));
  for (; i < n; ++i)
    s += kMap == 0 ? (double)p[i] : kMap == 1 ? ((double)p[i] - c) * ((double)p[i] - c)
         : kMap == 2 ? (double)p[i] - c : p[i] != p[i] ? 0.0 : (double)p[i];
  return s;
}
double SumF32(const float* p, int64_t n) { return SumMap<float, 0>(p, n); }
double SumSqF32(const float* p, int64_t n, double c) { return SumMap<float, 1>(p, n, c); }
double SumSqF64(const double* p, int64_t n, double c) { return SumMap<double, 1>(p, n, c); }
double SumDevF32(const float* p, int64_t n, double c) { return SumMap<float, 2>(p, n, c); }
double SumDevF64(const double* p, int64_t n, double c) { return SumMap<double, 2>(p, n, c); }
double SumF64(const double* p, int64_t n) { return SumMap<double, 0>(p, n); }
double NanSumF32(const float* p, int64_t n) { return SumMap<float, 3>(p, n); }
double NanSumF64(const double* p, int64_t n) { return SumMap<double, 3>(p, n); }

// The product of v's lanes, in lane order.
template <class D, class V> double LanesProduct(D d, V v) {
  HWY_ALIGN double lanes[hn::MaxLanes(d)];
  hn::Store(v, d, lanes);
  double s = 1;
  for (size_t k = 0; k < hn::Lanes(d); ++k) s *= lanes[k];
  return s;
}

// The product of float32 values in float64 lanes: four vector accumulators
// (the multiplies' latency), their lanes multiplied last; from 4 x 2048
// elements on, four quarters read side by side (Streams4) into eight. The
// order changes only float64 roundings (2^-53 each), far below float32's;
// it is fixed for a given n, so results do not depend on the thread count.
double ProdF32(const float* p, int64_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const int64_t N = (int64_t)hn::Lanes(dd);
  const auto one = hn::Set(dd, 1.0);
  if (n >= 4 * 2048) {
    const int64_t quarter = (n / 4) & ~int64_t(63);
    decltype(hn::Zero(dd)) acc[4][2];
    for (auto& a : acc) a[0] = a[1] = one;
    Streams4(acc, p, quarter, quarter, N,
             [&](decltype(one) a, int64_t i) { return hn::Mul(a, hn::PromoteTo(dd, hn::LoadU(df, p + i))); });
    const auto v = hn::Mul(hn::Mul(hn::Mul(acc[0][0], acc[0][1]), hn::Mul(acc[1][0], acc[1][1])),
                           hn::Mul(hn::Mul(acc[2][0], acc[2][1]), hn::Mul(acc[3][0], acc[3][1])));
    return LanesProduct(dd, v) * ProdF32(p + 4 * quarter, n - 4 * quarter);
  }
  auto a0 = one, a1 = one, a2 = one, a3 = one;
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N) {
    a0 = hn::Mul(a0, hn::PromoteTo(dd, hn::LoadU(df, p + i)));
    a1 = hn::Mul(a1, hn::PromoteTo(dd, hn::LoadU(df, p + i + N)));
    a2 = hn::Mul(a2, hn::PromoteTo(dd, hn::LoadU(df, p + i + 2 * N)));
    a3 = hn::Mul(a3, hn::PromoteTo(dd, hn::LoadU(df, p + i + 3 * N)));
  }
  for (; i + N <= n; i += N) a0 = hn::Mul(a0, hn::PromoteTo(dd, hn::LoadU(df, p + i)));
  double s = LanesProduct(dd, hn::Mul(hn::Mul(a0, a1), hn::Mul(a2, a3)));
  for (; i < n; ++i) s *= (double)p[i];
  return s;
}

// Half types: widen blocks to float32 (exact), then as float32.
template <class Codec> double SumHalf(const uint16_t* p, int64_t n) {
  HWY_ALIGN float buf[kBlock];
  double parts[64];
  int np = 0;
  double total = 0;
  for (int64_t i = 0; i < n; i += kBlock) {
    const int64_t m = n - i < kBlock ? n - i : kBlock;
    Codec::decode(p + i, buf, m);
    parts[np++] = SumF32(buf, m);
    if (np == 64) {  // blocks of 64 partials, then their sum: a two-level tree
      double s = 0;
      for (int k = 0; k < np; ++k) s += parts[k];
      total += s;
      np = 0;
    }
  }
  double s = 0;
  for (int k = 0; k < np; ++k) s += parts[k];
  return total + s;
}
double SumF16(const uint16_t* p, int64_t n) { return SumHalf<F16Codec>(p, n); }
double SumBF16(const uint16_t* p, int64_t n) { return SumHalf<BF16Codec>(p, n); }

// The index of the first of n values equal to v, or the first NaN when v
// is NaN (argmax/argmin after the vector max/min found v); n when none.
template <class T> int64_t FindFirst(const T* p, int64_t n, T v) {
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  const bool nan = v != v;
  const auto vv = hn::Set(d, v);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, p + i);
    const intptr_t k = hn::FindFirstTrue(d, nan ? hn::IsNaN(x) : (x == vv));
    if (k >= 0) return i + k;
  }
  for (; i < n; ++i)
    if (nan ? p[i] != p[i] : p[i] == v) return i;
  return n;
}

// Whether some element of p[0, n) is nonzero (kNonzero; NaN is nonzero) or
// zero: any/all, which stop at the first vector block holding one.
template <class T, bool kNonzero> bool HasDeciding(const void* pv, int64_t n) {
  const T* p = static_cast<const T*>(pv);
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  const auto z = hn::Zero(d);
  // not (x == 0) rather than x != 0: the vector != is ordered, false for NaN
  auto hit = [&](const T* q) { const auto x = hn::LoadU(d, q); return kNonzero ? hn::Not(x == z) : (x == z); };
  int64_t i = 0;
  for (; i + 4 * N <= n; i += 4 * N)
    if (!hn::AllFalse(d, hn::Or(hn::Or(hit(p + i), hit(p + i + N)), hn::Or(hit(p + i + 2 * N), hit(p + i + 3 * N)))))
      return true;
  for (; i + N <= n; i += N)
    if (!hn::AllFalse(d, hit(p + i))) return true;
  for (; i < n; ++i)
    if ((p[i] != T(0)) == kNonzero) return true;
  return false;
}

// acc[j] += row[j], widened to float64 (the across-rows reduction).
void ColAddF32(double* acc, const float* row, int64_t w) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const int64_t N = (int64_t)hn::Lanes(dd);
  int64_t j = 0;
  for (; j + 4 * N <= w; j += 4 * N) {  // four independent loads in flight
    const auto r0 = hn::PromoteTo(dd, hn::LoadU(df, row + j));
    const auto r1 = hn::PromoteTo(dd, hn::LoadU(df, row + j + N));
    const auto r2 = hn::PromoteTo(dd, hn::LoadU(df, row + j + 2 * N));
    const auto r3 = hn::PromoteTo(dd, hn::LoadU(df, row + j + 3 * N));
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j), r0), dd, acc + j);
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j + N), r1), dd, acc + j + N);
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j + 2 * N), r2), dd, acc + j + 2 * N);
    hn::StoreU(hn::Add(hn::LoadU(dd, acc + j + 3 * N), r3), dd, acc + j + 3 * N);
  }
  for (; j < w; ++j) acc[j] += (double)row[j];
}
// acc[j] += sum of nrows rows (row k at x + k * stride) widened to float64,
// register-blocked: a tile of columns stays in registers for kRows rows, so
// the accumulator is read and written once per kRows rows instead of every
// row. Each of the kRows rows is a stream the prefetchers must follow: 8
// ran (4096, 4096) in 5.1-5.9 ms where 16 took 7.5-8.4 ms and 4 5.5-5.9 ms
// (2-core AVX2 host, 2 threads).
void ColSumRowsF32(double* acc, const float* x, int64_t stride, int64_t nrows, int64_t w) {
  constexpr int64_t kRows = 8;
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const int64_t N = (int64_t)hn::Lanes(dd);
  for (int64_t r = 0; r < nrows; r += kRows) {
    const int64_t nr = nrows - r < kRows ? nrows - r : kRows;
    const float* xr = x + r * stride;
    int64_t j = 0;
    for (; j + 4 * N <= w; j += 4 * N) {
      auto a0 = hn::LoadU(dd, acc + j), a1 = hn::LoadU(dd, acc + j + N);
      auto a2 = hn::LoadU(dd, acc + j + 2 * N), a3 = hn::LoadU(dd, acc + j + 3 * N);
      for (int64_t k = 0; k < nr; ++k) {
        const float* p = xr + k * stride + j;
        a0 = hn::Add(a0, hn::PromoteTo(dd, hn::LoadU(df, p)));
        a1 = hn::Add(a1, hn::PromoteTo(dd, hn::LoadU(df, p + N)));
        a2 = hn::Add(a2, hn::PromoteTo(dd, hn::LoadU(df, p + 2 * N)));
        a3 = hn::Add(a3, hn::PromoteTo(dd, hn::LoadU(df, p + 3 * N)));
      }
      hn::StoreU(a0, dd, acc + j);
      hn::StoreU(a1, dd, acc + j + N);
      hn::StoreU(a2, dd, acc + j + 2 * N);
      hn::StoreU(a3, dd, acc + j + 3 * N);
    }
    for (; j < w; ++j)
      for (int64_t k = 0; k < nr; ++k) acc[j] += (double)xr[k * stride + j];
  }
}
void ColAddF64(double* acc, const double* row, int64_t w) {
  const hn::ScalableTag<double> dd;
  const int64_t N = (int64_t)hn::Lanes(dd);
  int64_t j = 0;
  for (; j + N <= w; j += N) hn::StoreU(hn::Add(hn::LoadU(dd, acc + j), hn::LoadU(dd, row + j)), dd, acc + j);
  for (; j < w; ++j) acc[j] += row[j];
}

// NaN-propagating max / min of n >= 1 values (NaN if any is NaN).
template <class T, bool kMax> T Extreme(const T* p, int64_t n) {
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  auto pick = [](auto a, auto b) {  // a unless b is more extreme or a is not NaN and b is
    return hn::IfThenElse(hn::Or(kMax ? (a >= b) : (a <= b), hn::IsNaN(a)), a, b);
  };
  auto pick1 = [](T a, T b) { return (kMax ? a >= b : a <= b) || a != a ? a : b; };
  if (n >= 4 * 2048) {  // four quarters side by side (Streams4)
    const int64_t quarter = (n / 4) & ~int64_t(63);
    decltype(hn::Zero(d)) acc[4][2];
    for (int s = 0; s < 4; ++s) acc[s][0] = acc[s][1] = hn::LoadU(d, p + s * quarter);
    Streams4(acc, p, quarter, quarter, N, [&](decltype(hn::Zero(d)) a, int64_t i) { return pick(a, hn::LoadU(d, p + i)); });
    const auto m = pick(pick(pick(acc[0][0], acc[0][1]), pick(acc[1][0], acc[1][1])),
                        pick(pick(acc[2][0], acc[2][1]), pick(acc[3][0], acc[3][1])));
    HWY_ALIGN T lanes[hn::MaxLanes(d)];
    hn::Store(m, d, lanes);
    T r = lanes[0];
    for (int64_t k = 1; k < N; ++k) r = pick1(r, lanes[k]);
    return 4 * quarter < n ? pick1(r, Extreme<T, kMax>(p + 4 * quarter, n - 4 * quarter)) : r;
  }
  T r = p[0];
  int64_t i = 0;
  if (n >= 4 * N) {  // four chains: a pick's latency (compare, or, blend) does not bound the loop
    auto m0 = hn::LoadU(d, p), m1 = hn::LoadU(d, p + N), m2 = hn::LoadU(d, p + 2 * N), m3 = hn::LoadU(d, p + 3 * N);
    for (i = 4 * N; i + 4 * N <= n; i += 4 * N) {
      m0 = pick(m0, hn::LoadU(d, p + i));
      m1 = pick(m1, hn::LoadU(d, p + i + N));
      m2 = pick(m2, hn::LoadU(d, p + i + 2 * N));
      m3 = pick(m3, hn::LoadU(d, p + i + 3 * N));
    }
    for (; i + N <= n; i += N) m0 = pick(m0, hn::LoadU(d, p + i));
    m0 = pick(pick(m0, m1), pick(m2, m3));
    HWY_ALIGN T lanes[hn::MaxLanes(d)];
    hn::Store(m0, d, lanes);
    r = lanes[0];
    for (int64_t k = 1; k < N; ++k) r = pick1(r, lanes[k]);
  }
  for (; i < n; ++i) r = pick1(r, p[i]);
  return r;
}
// acc[j] = the NaN-propagating max (kMax) or min of acc[j] and row[j]: the
// across-rows max/min (max over axis 0), in this target's vectors.
template <class T, bool kMax> void ColExtreme(T* acc, const T* row, int64_t w) {
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  int64_t j = 0;
  for (; j + N <= w; j += N) {
    const auto a = hn::LoadU(d, acc + j), b = hn::LoadU(d, row + j);
    hn::StoreU(hn::IfThenElse(hn::Or(kMax ? (a >= b) : (a <= b), hn::IsNaN(a)), a, b), d, acc + j);
  }
  for (; j < w; ++j) acc[j] = (kMax ? acc[j] >= row[j] : acc[j] <= row[j]) || acc[j] != acc[j] ? acc[j] : row[j];
}
float MaxF32(const float* p, int64_t n) { return Extreme<float, true>(p, n); }
float MinF32(const float* p, int64_t n) { return Extreme<float, false>(p, n); }
double MaxF64(const double* p, int64_t n) { return Extreme<double, true>(p, n); }
double MinF64(const double* p, int64_t n) { return Extreme<double, false>(p, n); }

void FillReduceKernels(ReduceKernels* k) {
  k->sum_f32 = &SumF32;
  k->sum_f64 = &SumF64;
  k->sum_f16 = &SumF16;
  k->sum_bf16 = &SumBF16;
  k->col_add_f32 = &ColAddF32;
  k->col_add_f64 = &ColAddF64;
  k->col_sum_rows_f32 = &ColSumRowsF32;
  k->max_f32 = &MaxF32;
  k->min_f32 = &MinF32;
  k->max_f64 = &MaxF64;
  k->min_f64 = &MinF64;
  k->has_nonzero[0] = &HasDeciding<uint8_t, true>;
  k->has_nonzero[1] = &HasDeciding<uint16_t, true>;
  k->has_nonzero[2] = &HasDeciding<uint32_t, true>;
  k->has_nonzero[3] = &HasDeciding<uint64_t, true>;
  k->has_nonzero[4] = &HasDeciding<float, true>;
  k->has_nonzero[5] = &HasDeciding<double, true>;
  k->has_zero[0] = &HasDeciding<uint8_t, false>;
  k->has_zero[1] = &HasDeciding<uint16_t, false>;
  k->has_zero[2] = &HasDeciding<uint32_t, false>;
  k->has_zero[3] = &HasDeciding<uint64_t, false>;
  k->has_zero[4] = &HasDeciding<float, false>;
  k->has_zero[5] = &HasDeciding<double, false>;
  k->sumsq_f32 = &SumSqF32;
  k->sumsq_f64 = &SumSqF64;
  k->sumdev_f32 = &SumDevF32;
  k->sumdev_f64 = &SumDevF64;
  k->nansum_f32 = &NanSumF32;
  k->nansum_f64 = &NanSumF64;
  k->prod_f32 = &ProdF32;
  k->find_f32 = &FindFirst<float>;
  k->find_f64 = &FindFirst<double>;
  k->col_max_f32 = &ColExtreme<float, true>;
  k->col_min_f32 = &ColExtreme<float, false>;
  k->col_max_f64 = &ColExtreme<double, true>;
  k->col_min_f64 = &ColExtreme<double, false>;
  k->decode_f16 = &F16Codec::decode;
  k->decode_bf16 = &BF16Codec::decode;
  k->encode_f16 = &F16Codec::encode;
  k->encode_bf16 = &BF16Codec::encode;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ct {
namespace cpu {
HWY_EXPORT(FillReduceKernels);
void fill_reduce_kernels(ReduceKernels* k) { HWY_DYNAMIC_DISPATCH(FillReduceKernels)(k); }
}  // namespace cpu
}  // namespace ct
#endif
