// unary-inl.h — the float unary kernels every elementwise file of the CPU
// backend registers its functors with (elementwise.cc, elementwise_more.cc,
// elementwise_bessel.cc):
// UnaryF (vectorised; streaming stores for large outputs), UnaryScalarF
// (a scalar function per element, computed in double) and RegFloat.
// Highway's "-inl.h" convention: included once per target by foreach_target.
#if defined(CTENSOR_SRC_CPU_UNARY_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CTENSOR_SRC_CPU_UNARY_INL_H_
#undef CTENSOR_SRC_CPU_UNARY_INL_H_
#else
#define CTENSOR_SRC_CPU_UNARY_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <cstring>
#include <type_traits>

#include "cpu/kernels.h"
#include "cpu/simd-inl.h"

// A float functor UnaryF runs: NAME{}(d, x, p0, p1) -> V, the body given.
#ifndef CT_FLOAT_OP
#define CT_FLOAT_OP(NAME, ...)                            \
  struct NAME {                                           \
    template <class D, class V>                           \
    HWY_INLINE V operator()(D d, V x, V p0, V p1) const { \
      (void)d; (void)p0; (void)p1;                        \
      __VA_ARGS__                                         \
    }                                                     \
  };
#endif

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Runs op on `count` (< one vector) elements at i: the same vector code.
template <class Op, class D, class T, class V>
HWY_INLINE void PartialVector(D d, const Op& op, const T* x, T* y, int64_t i, int64_t count, V p0, V p1) {
#if CT_MASKED_TAIL
  const auto m = hn::FirstN(d, (size_t)count);
  hn::BlendedStore(op(d, hn::MaskedLoad(m, d, x + i), p0, p1), m, d, y + i);
#else
  HWY_ALIGN T buf[hn::MaxLanes(d)] = {};
  std::memcpy(buf, x + i, (size_t)count * sizeof(T));
  hn::Store(op(d, hn::Load(d, buf), p0, p1), d, buf);
  std::memcpy(y + i, buf, (size_t)count * sizeof(T));
#endif
}

template <class Op, class T>
void UnaryF(char* const* p, int64_t n, const double* prm) {
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  T* HWY_RESTRICT y = reinterpret_cast<T*>(p[0]);
  const T* HWY_RESTRICT x = reinterpret_cast<const T*>(p[1]);
  const auto p0 = hn::Set(d, (T)prm[0]), p1 = hn::Set(d, (T)prm[1]);
  const Op op;
  int64_t i = 0;
  if (n * (int64_t)sizeof(T) >= kStreamBytes) {
    const int64_t head = StreamHead(y, sizeof(T) * (uintptr_t)N, sizeof(T));
    if (head) PartialVector(d, op, x, y, 0, head, p0, p1);
    const int64_t end = head + (n - head) / N * N;
    // y up to 512 bytes past x modulo 4 KiB: going forward, each load of x
    // (in cache: prefetched) has the low 12 address bits of a streaming
    // store a few vectors back, still pending, and falsely waits for it (4K
    // aliasing). exp of (4096, 4096) float32 took 4.6-4.9 ms at gaps of 48
    // and 112 bytes, 2.5-2.6 at 0 and 496 up. Backward, the aliased store
    // is a later one. (Outputs never partly overlap their input: core
    // refuses that.)
    const uintptr_t gap = (reinterpret_cast<uintptr_t>(y) - reinterpret_cast<uintptr_t>(x)) & 4095;
    if (gap != 0 && gap < 512) {
      for (int64_t j = end; j > head; j -= N) {
        hwy::Prefetch(reinterpret_cast<const char*>(x + j - N) - kPrefetchBytes);
        hn::Stream(op(d, hn::LoadU(d, x + j - N), p0, p1), d, y + j - N);
      }
    } else {
      for (i = head; i < end; i += N) {
        PrefetchAhead(x + i);
        hn::Stream(op(d, hn::LoadU(d, x + i), p0, p1), d, y + i);
      }
    }
    i = end;
    if (i < n) PartialVector(d, op, x, y, i, n - i, p0, p1);
    hwy::FlushStream();  // order the streaming stores before the caller (or the join) reads them
    return;
  }
  for (; i + 2 * N <= n; i += 2 * N) {
    const auto a = op(d, hn::LoadU(d, x + i), p0, p1);
    const auto b = op(d, hn::LoadU(d, x + i + N), p0, p1);
    hn::StoreU(a, d, y + i);
    hn::StoreU(b, d, y + i + N);
  }
  for (; i + N <= n; i += N) hn::StoreU(op(d, hn::LoadU(d, x + i), p0, p1), d, y + i);
  if (i < n) PartialVector(d, op, x, y, i, n - i, p0, p1);  // the tail runs the same vector code
}

template <class Op, class T>
void UnaryScalarF(char* const* p, int64_t n, const double* prm) {
  T* y = reinterpret_cast<T*>(p[0]);
  const T* x = reinterpret_cast<const T*>(p[1]);
  for (int64_t i = 0; i < n; ++i) y[i] = (T)Op::scalar((double)x[i], prm[0], prm[1]);
}

// Op on lanes of TC (float or double): Op::v(d, x) where Op::ok(d, x),
// Op::s(x) (libm, in double) per element in the other lanes (NaN inputs,
// infinities: the rare specials), rounded once to T. With TC = double,
// float32 inputs are exact in the lanes, so a float64 formula within a few
// float64 ulp gives float32 results within half a float32 ulp and a hair
// (pow and atan2 take the same path: simd-inl.h's F32ViaF64).
// An Op with kRechecks may clear lanes of ok after computing them
// (simd-inl.h's Rechecks).
template <class Op, class D, class M>
HWY_INLINE hn::Vec<D> MaskedValue(D d, hn::Vec<D> x, M* ok) {
  *ok = Op::ok(d, x);
  if constexpr (Rechecks<Op>::value) return Op::v(d, x, ok);
  else return Op::v(d, x);
}
template <class D, class T> HWY_INLINE void StoreLanes(D d, hn::Vec<D> r, T* y) {
  if constexpr (!std::is_same<T, hn::TFromD<D>>::value) {
    const hn::Rebind<T, D> dt;
    hn::StoreU(hn::DemoteTo(dt, r), dt, y);
  } else {
    hn::StoreU(r, d, y);
  }
}
// y = r where ok, Op::s(x) per element elsewhere.
template <class Op, class D, class M, class T>
HWY_INLINE void FinishLanes(D d, hn::Vec<D> x, hn::Vec<D> r, M ok, T* y) {
  using TC = hn::TFromD<D>;
  if (HWY_LIKELY(hn::AllTrue(d, ok))) return StoreLanes(d, r, y);
  constexpr size_t kN = hn::MaxLanes(D());
  HWY_ALIGN TC xs[kN], rs[kN];
  uint8_t bits[(kN + 7) / 8 + 8] = {};
  hn::Store(x, d, xs);
  hn::Store(r, d, rs);
  hn::StoreMaskBits(d, ok, bits);
  for (size_t j = 0; j < hn::Lanes(d); ++j)
    y[j] = (T)(((bits[j / 8] >> (j % 8)) & 1) ? (double)rs[j] : Op::s((double)xs[j]));
}
template <class Op, class TC, class T>
void UnaryMasked(char* const* p, int64_t n, const double*) {
  const hn::ScalableTag<TC> d;
  const hn::Rebind<T, decltype(d)> dt;
  const int64_t N = (int64_t)hn::Lanes(d);
  T* y = reinterpret_cast<T*>(p[0]);
  const T* x = reinterpret_cast<const T*>(p[1]);
  const auto load = [&](const T* s) {
    if constexpr (!std::is_same<T, TC>::value) return hn::PromoteTo(d, hn::LoadU(dt, s));
    else return hn::LoadU(d, s);
  };
  int64_t i = 0;
  // Two vectors a step: the formulas are long dependency chains (erfinv's
  // log and degree-13 polynomial: ~25 FMA latencies), one vector a step
  // left the FMA units waiting (perf: the samples on the chain's FMAs).
  for (; i + 2 * N <= n; i += 2 * N) {
    PrefetchAhead(x + i);
    if (N * sizeof(T) >= 64) PrefetchAhead(x + i + N);
    const auto x0 = load(x + i), x1 = load(x + i + N);
    decltype(Op::ok(d, x0)) ok0, ok1;
    const auto r0 = MaskedValue<Op>(d, x0, &ok0), r1 = MaskedValue<Op>(d, x1, &ok1);
    FinishLanes<Op>(d, x0, r0, ok0, y + i);
    FinishLanes<Op>(d, x1, r1, ok1, y + i + N);
  }
  const auto one = [&](const T* s, T* o) {
    const auto xv = load(s);
    decltype(Op::ok(d, xv)) ok;
    const auto r = MaskedValue<Op>(d, xv, &ok);
    FinishLanes<Op>(d, xv, r, ok, o);
  };
  for (; i + N <= n; i += N) one(x + i, y + i);
  if (i < n) {  // the tail runs the same code on a padded copy
    HWY_ALIGN T buf[hn::MaxLanes(d)] = {};
    std::memcpy(buf, x + i, (size_t)(n - i) * sizeof(T));
    one(buf, buf);
    std::memcpy(y + i, buf, (size_t)(n - i) * sizeof(T));
  }
}

template <class Op> void RegFloat(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &UnaryF<Op, float>;
  t->op[op][CT_DT_FLOAT64] = &UnaryF<Op, double>;
  SetNarrow<&UnaryF<Op, float>, 1>(t->op[op]);
}
// A float op computed by Op::scalar in double per element (libm-accurate
// ops without a vector form yet), rounded once to float32 and the narrow types.
template <class Op> void RegScalar(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &UnaryScalarF<Op, float>;
  t->op[op][CT_DT_FLOAT64] = &UnaryScalarF<Op, double>;
  SetNarrow<&UnaryScalarF<Op, float>, 1>(t->op[op]);
}

// A float op on masked lanes (UnaryMasked): float32 and the narrow types
// (RegMaskedF32 alone: those only, float64 left to another kernel) in lanes of TC32 (double: half-ulp float32 results; float: twice the
// lanes, the formula's float32 accuracy), float64 in float64 lanes.
template <class Op, class TC32 = double> void RegMaskedF32(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &UnaryMasked<Op, TC32, float>;
  SetNarrow<&UnaryMasked<Op, TC32, float>, 1>(t->op[op]);
}
template <class Op, class TC32 = double> void RegMasked(KernelTable* t, int op) {
  RegMaskedF32<Op, TC32>(t, op);
  t->op[op][CT_DT_FLOAT64] = &UnaryMasked<Op, double, double>;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#endif  // CTENSOR_SRC_CPU_UNARY_INL_H_
