// elementwise.cc — every elementwise kernel, written once per kind of op as a
// template over a functor and a dtype, compiled once per SIMD target by
// Highway (foreach_target) and chosen at run time (HWY_DYNAMIC_DISPATCH), so
// one binary runs SSE4, AVX2 and AVX-512 paths.
//
// Kernels see contiguous runs only (the strided engine in cpu_backend.cc packs
// anything else). Float math is vectorised; float16/bfloat16 and the float8
// dtypes are widened to float32 in blocks, computed by the float32 kernel
// and rounded once.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/elementwise.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/cache_control.h>
#include <hwy/contrib/math/math-inl.h>
#include "cpu/simd-inl.h"
#include "cpu/exp_math-inl.h"
#include "cpu/unary-inl.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/half.h"
#include "cpu/kernels.h"

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;


// ---- float functors: V operator()(D, V x, V p0, V p1) (CT_FLOAT_OP: unary-inl.h)
CT_FLOAT_OP(FIdentity, return x;)
CT_FLOAT_OP(FNeg, return hn::Neg(x);)
CT_FLOAT_OP(FAbs, return hn::Abs(x);)
CT_FLOAT_OP(FSign, return hn::IfThenElse(x > hn::Zero(d), hn::Set(d, 1),
                                         hn::IfThenElse(x < hn::Zero(d), hn::Set(d, -1), x));)
CT_FLOAT_OP(FExp, return SafeExp(d, x);)
CT_FLOAT_OP(FExpm1, return SafeExpm1(d, x);)
CT_FLOAT_OP(FExp2, {
  // 2^x = 2^n * e^(f ln 2) with n = round(x), |f| <= 1/2 exact; 2^n built
  // from two halves so every factor is a normal number.
  using T = hn::TFromD<D>;
  const T lim = std::is_same<T, float>::value ? T(160) : T(1100);
  const V xc = hn::Min(hn::Max(x, hn::Set(d, -lim)), hn::Set(d, lim));
  const V n = hn::Round(xc);
  const V f = xc - n;
  V r;
  if constexpr (std::is_same<T, float>::value) {
    // 2^f on [-1/2, 1/2] directly (Cephes' exp2f polynomial): no second
    // range reduction, and no rounding of f ln 2 before the polynomial.
    static constexpr float kExp2f[] = {1.535336188319500e-4f, 1.339887440266574e-3f, 9.618437357674640e-3f,
                                       5.550332471162809e-2f, 2.402264791363012e-1f, 6.931472028550421e-1f, 1.0f};
    r = Horner(d, f, kExp2f);
  } else {
    r = ExpInRange(d, f * hn::Set(d, T(0.6931471805599453)));
  }
  const hn::RebindToSigned<D> di;
  const auto ni = hn::ConvertTo(di, n);
  const auto n1 = hn::ShiftRight<1>(ni);
  const auto n2 = ni - n1;
  constexpr int kMant = std::is_same<T, float>::value ? 23 : 52;
  constexpr int kBias = std::is_same<T, float>::value ? 127 : 1023;
  using TI = hn::TFromD<decltype(di)>;
  const V s1 = hn::BitCast(d, hn::ShiftLeft<kMant>(n1 + hn::Set(di, TI(kBias))));
  const V s2 = hn::BitCast(d, hn::ShiftLeft<kMant>(n2 + hn::Set(di, TI(kBias))));
  return KeepNaN(x, r * s1 * s2);
})
CT_FLOAT_OP(FLog, {
  if constexpr (std::is_same<hn::TFromD<D>, float>::value) {
    // Every lane normal and finite (NaN is not): no subnormal scaling, no specials.
    if (hn::AllTrue(d, hn::And(x >= hn::Set(d, 1.17549435e-38f), x < PosInf(d)))) return LogF32<false>(d, x);
    return LogSpecials(d, x, LogF32(d, hn::IfThenElse(x > hn::Zero(d), x, hn::Set(d, 1.0f))));
  } else {
    return LogSpecials(d, x, hn::Log(d, hn::IfThenElse(x > hn::Zero(d), x, hn::Set(d, 1))));
  }
})
CT_FLOAT_OP(FLog1p, {
  if constexpr (std::is_same<hn::TFromD<D>, float>::value) {
    const auto ok = hn::And(x > hn::Set(d, -1.0f), x < PosInf(d));  // NaN is not
    if (hn::AllTrue(d, ok)) return Log1pF32(d, x);
    return Log1pSpecials(d, x, Log1pF32(d, hn::IfThenElse(ok, x, hn::Zero(d))));
  } else {
    return Log1pAny(d, x);
  }
})
CT_FLOAT_OP(FLog2, return LogSpecials(d, x, hn::Log2(d, hn::IfThenElse(x > hn::Zero(d), x, hn::Set(d, 1))));)
CT_FLOAT_OP(FSqrt, return hn::Sqrt(x);)
CT_FLOAT_OP(FRsqrt, return hn::Set(d, 1) / hn::Sqrt(x);)
CT_FLOAT_OP(FReciprocal, return hn::Set(d, 1) / x;)
CT_FLOAT_OP(FSquare, return x * x;)
CT_FLOAT_OP(FTanh, return TanhAcc(d, x);)
CT_FLOAT_OP(FSigmoid, return SigmoidAcc(d, x);)
CT_FLOAT_OP(FRelu, return hn::IfThenZeroElse(x < hn::Zero(d), x);)
CT_FLOAT_OP(FGeluTanh, {
  // 0.5 x (1 + tanh(u)) == x * sigmoid(2u): no cancellation for x << 0.
  using T = hn::TFromD<D>;
  const V u = hn::Set(d, T(0.7978845608028654)) * hn::MulAdd(hn::Set(d, T(0.044715)) * x, x * x, x);
  return x * SigmoidAcc(d, u + u);
})
CT_FLOAT_OP(FSilu, return x * SigmoidAcc(d, x);)
CT_FLOAT_OP(FSoftplus, return SoftplusAcc(d, x);)
CT_FLOAT_OP(FHardswish, {
  // PyTorch's x * min(max(x + 3, 0), 6) / 6: NaN stays NaN, -inf gives NaN (-inf * 0) as there.
  using T = hn::TFromD<D>;
  const V r = hn::Min(hn::Max(x + hn::Set(d, T(3)), hn::Zero(d)), hn::Set(d, T(6)));
  return KeepNaN(x, x * r / hn::Set(d, T(6)));
})
CT_FLOAT_OP(FFloor, return hn::Floor(x);)
CT_FLOAT_OP(FCeil, return hn::Ceil(x);)
CT_FLOAT_OP(FRound, return hn::Round(x);)
CT_FLOAT_OP(FTrunc, return hn::Trunc(x);)
CT_FLOAT_OP(FLeakyRelu, return hn::IfThenElse(x >= hn::Zero(d), x, p0 * x);)
// x >= 0 keeps x itself, so -0 stays -0; only x < 0 (and NaN) lanes use the exponential.
CT_FLOAT_OP(FElu, return KeepNaN(x, hn::IfThenElse(x >= hn::Zero(d), x, p0 * Expm1NonPositive(d, hn::Min(x, hn::Zero(d)))));)
CT_FLOAT_OP(FClamp, {
  const V r = hn::IfThenElse(x < p0, p0, x);
  return hn::IfThenElse(r > p1, p1, r);
})
// min(max(x, 0), 6) as PyTorch's hardtanh(0, 6): -0 stays -0, NaN stays NaN.
CT_FLOAT_OP(FRelu6, {
  using T = hn::TFromD<D>;
  const V r = hn::IfThenElse(x < hn::Zero(d), hn::Zero(d), x);
  return hn::IfThenElse(r > hn::Set(d, T(6)), hn::Set(d, T(6)), r);
})
CT_FLOAT_OP(FAddScalar, return x + p0;)
CT_FLOAT_OP(FMulScalar, return x * p0;)

// Float32-only vector ops (the half types use them too); double uses libm.
struct FErf {
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V, V) const { return ErfAcc(d, x); }
  static double scalar(double x, double, double) { return std::erf(x); }
};
struct FGelu {
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V, V) const {
    // x Phi(x) = x erfc(-x/sqrt2) / 2 for x < 0, x - x erfc(x/sqrt2) / 2
    // otherwise: erfc of z = |x| / sqrt2 >= 0 on both sides, so no
    // cancellation for x << 0. z^2 = x^2 / 2 exactly from x's own square.
    // |x| is clamped at 14.8 (z = 10.47, Phi(-14.8) < 2^-150) for z^2, but
    // not in erfc's t: t = 0 makes x = -inf NaN (-inf * 0, as the reference
    // and PyTorch), while x = +inf, clamped in v, gives inf. x < 0 lanes
    // subtract x erfc/2 (>= 0, |x| in v) from -0, so an underflow keeps the
    // sign; NaN stays NaN in x - v erfc/2.
    const auto c = [&](float v) { return hn::Set(d, v); };
    const V ax = hn::Abs(x);
    const V a = hn::Min(ax, c(14.8f));
    const V m = a * c(-0.5f);
    const V nh = m * a;
    const V nl = MulRemainder(d, m, a, nh);
    const auto neg = x < hn::Zero(d);
    const V den = hn::MulAdd(ax, c(kErfcHalfP * 0.7071067811865476f), c(1));
    return hn::IfThenElse(neg, c(-0.0f), x) - HalfErfcTimes(d, hn::IfThenElse(neg, ax, a), den, nh, nl);
  }
  static double scalar(double x, double, double) { return 0.5 * x * std::erfc(-x * 0.7071067811865476); }
};

// Trig: Highway's Sin/Cos are valid for |x| <= 39000; a vector with any lane
// outside (or inf/NaN) is computed by libm instead.
template <int kWhich> struct FTrig {
  template <class T> static T libm(T v) { return kWhich == 0 ? std::sin(v) : kWhich == 1 ? std::cos(v) : std::tan(v); }
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V, V) const {
    using T = hn::TFromD<D>;
    if (HWY_UNLIKELY(!hn::AllTrue(d, hn::Abs(x) <= hn::Set(d, Limits<T>::kTrigMax)))) {
      HWY_ALIGN T buf[hn::MaxLanes(d)];
      hn::Store(x, d, buf);
      for (size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = libm(buf[i]);
      return hn::Load(d, buf);
    }
    if (kWhich == 0) return hn::Sin(d, x);
    if (kWhich == 1) return hn::Cos(d, x);
    if constexpr (std::is_same<T, float>::value) return TanF32(d, x);
    return hn::Sin(d, x) / hn::Cos(d, x);
  }
};

// pow(x, p): exact shortcuts vectorised, the general case through libm.
struct FPow {
  static double scalar(double x, double p, double) { return std::pow(x, p); }
};

// ---- float kernels --------------------------------------------------------

// (PartialVector, UnaryF, UnaryScalarF and RegFloat: cpu/unary-inl.h)

template <class T>
void PowF(char* const* p, int64_t n, const double* prm) {
  const double e = prm[0];
  if (e == 2) return UnaryF<FSquare, T>(p, n, prm);
  if (e == 1) return UnaryF<FIdentity, T>(p, n, prm);
  if (e == -1) return UnaryF<FReciprocal, T>(p, n, prm);
  if (std::is_same<T, float>::value) {  // in float64 lanes, the exponent as the double it is (simd-inl.h)
    const float* x = reinterpret_cast<const float*>(p[1]);
    F32ViaF64<PowViaF64, 2>(reinterpret_cast<float*>(p[0]), x, x, e, n);
    return;
  }
  UnaryScalarF<FPow, T>(p, n, prm);
}

// A ternary functor, given the call's parameters when it takes them.
template <class Op> Op MakeTernary(const double* prm) {
  if constexpr (std::is_constructible<Op, const double*>::value) return Op(prm);
  else return (void)prm, Op();
}

template <class Op, class T>
void TernaryF(char* const* p, int64_t n, const double* prm) {
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  T* HWY_RESTRICT y = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  const T* c = reinterpret_cast<const T*>(p[3]);
  const Op op = MakeTernary<Op>(prm);
  int64_t i = 0;
  if (n * (int64_t)sizeof(T) >= kStreamBytes) {  // as UnaryF: streaming stores from an aligned address
    const int64_t head = StreamHead(y, sizeof(T) * (uintptr_t)N, sizeof(T));
    for (; i < head; ++i) {  // one lane at a time: the same vector code, so the same results
      HWY_ALIGN T ba[hn::MaxLanes(d)] = {}, bb[hn::MaxLanes(d)] = {}, bc[hn::MaxLanes(d)] = {};
      ba[0] = a[i], bb[0] = b[i], bc[0] = c[i];
      hn::Store(op(d, hn::Load(d, ba), hn::Load(d, bb), hn::Load(d, bc)), d, ba);
      y[i] = ba[0];
    }
    for (; i + N <= n; i += N) {
      PrefetchAhead(a + i);
      PrefetchAhead(b + i);
      PrefetchAhead(c + i);
      hn::Stream(op(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i)), d, y + i);
    }
    hwy::FlushStream();
  }
  for (; i + N <= n; i += N)
    hn::StoreU(op(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i)), d, y + i);
  if (i < n) {
    HWY_ALIGN T ba[hn::MaxLanes(d)] = {}, bb[hn::MaxLanes(d)] = {}, bc[hn::MaxLanes(d)] = {};
    const size_t bytes = (size_t)(n - i) * sizeof(T);
    std::memcpy(ba, a + i, bytes);
    std::memcpy(bb, b + i, bytes);
    std::memcpy(bc, c + i, bytes);
    hn::Store(op(d, hn::Load(d, ba), hn::Load(d, bb), hn::Load(d, bc)), d, ba);
    std::memcpy(y + i, ba, bytes);
  }
}

struct FFma {
  template <class D, class V> HWY_INLINE V operator()(D d, V a, V b, V c) const {
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3
    (void)d;
    return hn::MulAdd(a, b, c);  // a fused multiply-add instruction: one rounding
#else
    // Targets without FMA hardware would round twice in MulAdd: use libm.
    using T = hn::TFromD<D>;
    HWY_ALIGN T A[hn::MaxLanes(d)], B[hn::MaxLanes(d)], C[hn::MaxLanes(d)];
    hn::Store(a, d, A);
    hn::Store(b, d, B);
    hn::Store(c, d, C);
    for (size_t i = 0; i < hn::Lanes(d); ++i) A[i] = std::fma(A[i], B[i], C[i]);
    return hn::Load(d, A);
#endif
  }
};
struct FLerp {
  template <class D, class V> HWY_INLINE V operator()(D d, V a, V b, V w) const {
    const V diff = b - a;
    return hn::IfThenElse(w < hn::Set(d, 0.5f), hn::MulAdd(w, diff, a),
                          hn::NegMulAdd(diff, hn::Set(d, 1) - w, b));
  }
};

// v as a value the compiler must materialise: a product passed through here
// is rounded before the next addition (GCC contracts a * b + c written with
// operators into one fused multiply-add by default).
template <class V> HWY_INLINE V Rounded(V v) {
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__)) && HWY_TARGET != HWY_SCALAR && \
    HWY_TARGET != HWY_EMU128
  asm("" : "+x"(v.raw));
#endif
  return v;
}

// input + value * t1 * t2 and input + value * t1 / t2, rounded after each
// operation in PyTorch's order (no fused multiply-add), so the results are
// PyTorch's bit for bit.
struct FAddcmul {
  double v;
  explicit FAddcmul(const double* p) : v(p[0]) {}
  template <class D, class V> HWY_INLINE V operator()(D d, V a, V b, V c) const {
    return a + Rounded(hn::Set(d, hn::TFromD<D>(v)) * b * c);
  }
};
struct FAddcdiv {
  double v;
  explicit FAddcdiv(const double* p) : v(p[0]) {}
  template <class D, class V> HWY_INLINE V operator()(D d, V a, V b, V c) const {
    return a + hn::Set(d, hn::TFromD<D>(v)) * b / c;
  }
};
// min(max(x, lo), hi) with tensor bounds: NaN in any operand gives NaN (as
// PyTorch's clamp and NumPy's clip); lo > hi gives hi; -0 stays -0.
struct FClampTensor {
  template <class D, class V> HWY_INLINE V operator()(D, V x, V lo, V hi) const {
    V r = hn::IfThenElse(x < lo, lo, x);
    r = hn::IfThenElse(r > hi, hi, r);
    r = hn::IfThenElse(hn::IsNaN(lo), lo, r);
    return hn::IfThenElse(hn::IsNaN(hi), hi, r);
  }
};

// ---- predicates (bool output) and integer/bool ops: plain loops the -------
// ---- compiler vectorises for this target ----------------------------------
template <class Pred, class T>
void PredicateK(char* const* p, int64_t n, const double*) {
  uint8_t* y = reinterpret_cast<uint8_t*>(p[0]);
  const T* x = reinterpret_cast<const T*>(p[1]);
  for (int64_t i = 0; i < n; ++i) y[i] = Pred::template test<T>(x[i]) ? 1 : 0;
}
struct PIsNan { template <class T> static bool test(T v) { return std::is_floating_point<T>::value && v != v; } };
struct PIsInf {
  template <class T> static bool test(T v) {
    if constexpr (std::is_floating_point<T>::value) return std::fabs(v) == std::numeric_limits<T>::infinity();
    else return (void)v, false;
  }
};
struct PIsPosInf {
  template <class T> static bool test(T v) {
    if constexpr (std::is_floating_point<T>::value) return v == std::numeric_limits<T>::infinity();
    else return (void)v, false;
  }
};
struct PIsNegInf {
  template <class T> static bool test(T v) {
    if constexpr (std::is_floating_point<T>::value) return v == -std::numeric_limits<T>::infinity();
    else return (void)v, false;
  }
};
struct PIsFinite {
  template <class T> static bool test(T v) {
    if constexpr (std::is_floating_point<T>::value) return std::fabs(v) < std::numeric_limits<T>::infinity();
    else return (void)v, true;
  }
};
struct PIsZero { template <class T> static bool test(T v) { return v == 0; } };

// Integer arithmetic wraps: it is done in an unsigned type at least as wide
// as int, so no signed overflow (UB) can happen.
template <class T> using Wrap = typename std::conditional<sizeof(T) <= 4, uint32_t, uint64_t>::type;
// x < 0, false for the unsigned types (no always-false comparison written).
template <class T> inline bool IsNeg(T x) {
  if constexpr (std::is_signed<T>::value) return x < 0; else return (void)x, false;
}

#define CT_INT_OP(NAME, EXPR)                                        \
  struct NAME {                                                      \
    template <class T> static T apply(T x, T p0, T p1) {             \
      using W = Wrap<T>;                                             \
      (void)p0; (void)p1; (void)sizeof(W);                           \
      return EXPR;                                                   \
    }                                                                \
  };
CT_INT_OP(INeg, (T)(W)(0u - (W)x))
CT_INT_OP(IAbs, IsNeg(x) ? (T)(W)(0u - (W)x) : x)  // unsigned: the identity
CT_INT_OP(ISign, (T)((x > 0) - IsNeg(x)))           // unsigned: 0 or 1
CT_INT_OP(IReciprocal, (T)(x == 1 ? 1 : (std::is_signed<T>::value && x == (T)-1) ? (T)-1 : 0))
CT_INT_OP(ISquare, (T)(W)((W)x * (W)x))
CT_INT_OP(IRelu, IsNeg(x) ? (T)0 : x)
CT_INT_OP(IIdentity, x)
CT_INT_OP(IBitwiseNot, (T)~x)
CT_INT_OP(IClamp, (x < p0 ? p0 : x) > p1 ? p1 : (x < p0 ? p0 : x))
CT_INT_OP(IRelu6, IsNeg(x) ? (T)0 : x > (T)6 ? (T)6 : x)
CT_INT_OP(IAddScalar, (T)(W)((W)x + (W)p0))
CT_INT_OP(IMulScalar, (T)(W)((W)x * (W)p0))
#undef CT_INT_OP

template <class Op, class T>
void UnaryI(char* const* p, int64_t n, const double* prm) {
  T* HWY_RESTRICT y = reinterpret_cast<T*>(p[0]);
  const T* HWY_RESTRICT x = reinterpret_cast<const T*>(p[1]);
  const T p0 = (T)prm[0], p1 = (T)prm[1];  // validated: exactly representable
  for (int64_t i = 0; i < n; ++i) y[i] = Op::apply(x[i], p0, p1);
}
template <class T>
void FmaI(char* const* p, int64_t n, const double*) {
  using W = Wrap<T>;
  T* y = reinterpret_cast<T*>(p[0]);
  const T *a = reinterpret_cast<const T*>(p[1]), *b = reinterpret_cast<const T*>(p[2]),
          *c = reinterpret_cast<const T*>(p[3]);
  for (int64_t i = 0; i < n; ++i) y[i] = (T)(W)((W)a[i] * (W)b[i] + (W)c[i]);
}
template <class T>
void AddcmulI(char* const* p, int64_t n, const double* prm) {
  using W = Wrap<T>;
  const W v = (W)(T)prm[0];  // validated: an integer representable in T
  T* y = reinterpret_cast<T*>(p[0]);
  const T *a = reinterpret_cast<const T*>(p[1]), *b = reinterpret_cast<const T*>(p[2]),
          *c = reinterpret_cast<const T*>(p[3]);
  for (int64_t i = 0; i < n; ++i) y[i] = (T)(W)((W)a[i] + v * (W)b[i] * (W)c[i]);
}
template <class T>
void ClampTensorI(char* const* p, int64_t n, const double*) {
  T* y = reinterpret_cast<T*>(p[0]);
  const T *x = reinterpret_cast<const T*>(p[1]), *lo = reinterpret_cast<const T*>(p[2]),
          *hi = reinterpret_cast<const T*>(p[3]);
  for (int64_t i = 0; i < n; ++i) {
    const T r = x[i] < lo[i] ? lo[i] : x[i];
    y[i] = r > hi[i] ? hi[i] : r;
  }
}
// bool ops: any nonzero byte is true; outputs are 0 or 1.
void BoolNot(char* const* p, int64_t n, const double*) {
  for (int64_t i = 0; i < n; ++i) p[0][i] = p[1][i] == 0;
}
void BoolIdentity(char* const* p, int64_t n, const double*) {
  for (int64_t i = 0; i < n; ++i) p[0][i] = p[1][i] != 0;
}
template <int kValue>
void BoolConst(char* const* p, int64_t n, const double*) {
  std::memset(p[0], kValue, (size_t)n);
}

// where(cond, a, b) selects bits: one kernel per element size.
template <class U>
void WhereK(char* const* p, int64_t n, const double*) {
  U* HWY_RESTRICT y = reinterpret_cast<U*>(p[0]);
  const uint8_t* HWY_RESTRICT c = reinterpret_cast<const uint8_t*>(p[1]);
  const U* HWY_RESTRICT a = reinterpret_cast<const U*>(p[2]);
  const U* HWY_RESTRICT b = reinterpret_cast<const U*>(p[3]);
  int64_t i = 0;
  if constexpr (sizeof(U) == 4 || sizeof(U) == 2) {
    const hn::ScalableTag<U> du;
    const hn::Rebind<uint8_t, decltype(du)> d8;
    const int64_t N = (int64_t)hn::Lanes(du);
    const auto pick = [&](int64_t j) {
      return hn::IfThenElse(hn::PromoteTo(du, hn::LoadU(d8, c + j)) != hn::Zero(du), hn::LoadU(du, a + j),
                            hn::LoadU(du, b + j));
    };
    if (n * (int64_t)sizeof(U) >= kStreamBytes) {  // as UnaryF: streaming stores from an aligned address
      for (const int64_t head = StreamHead(y, sizeof(U) * (uintptr_t)N, sizeof(U)); i < head; ++i) y[i] = c[i] ? a[i] : b[i];
      for (; i + N <= n; i += N) hn::Stream(pick(i), du, y + i);
      hwy::FlushStream();
    }
    for (; i + N <= n; i += N) hn::StoreU(pick(i), du, y + i);
  }
  // Inlined where n is a constant block (Staged), GCC can warn of overflow
  // on a path where this tail runs 2^62 times, which no call takes.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Waggressive-loop-optimizations"
  for (; i < n; ++i) y[i] = c[i] ? a[i] : b[i];
#pragma GCC diagnostic pop
}

// ---- casts ----------------------------------------------------------------
// params[0] is the call's CTCastMode (read for float8 targets only).
template <class From, class To>
void CastK(char* const* p, int64_t n, const double* prm) {
  To* y = reinterpret_cast<To*>(p[0]);
  const From* x = reinterpret_cast<const From*>(p[1]);
  if constexpr (IsF8<To>::value) {
    const bool saturate = prm && prm[0] == (double)CT_CAST_SATURATE;
    for (int64_t i = 0; i < n; ++i) y[i] = Convert<To>::template from<From>(x[i], saturate);
  } else {
    (void)prm;
    for (int64_t i = 0; i < n; ++i) y[i] = Convert<To>::template from<From>(x[i]);
  }
}
void CopyK1(char* const* p, int64_t n, const double*) { std::memcpy(p[0], p[1], (size_t)n); }
void CopyK2(char* const* p, int64_t n, const double*) { std::memcpy(p[0], p[1], (size_t)n * 2); }
void CopyK4(char* const* p, int64_t n, const double*) { std::memcpy(p[0], p[1], (size_t)n * 4); }
void CopyK8(char* const* p, int64_t n, const double*) { std::memcpy(p[0], p[1], (size_t)n * 8); }
template <class Codec>
void DecodeK(char* const* p, int64_t n, const double*) {
  Codec::decode(reinterpret_cast<const uint16_t*>(p[1]), reinterpret_cast<float*>(p[0]), n);
}
template <class Codec>
void EncodeK(char* const* p, int64_t n, const double*) {
  Codec::encode(reinterpret_cast<const float*>(p[1]), reinterpret_cast<uint16_t*>(p[0]), n);
}

// ---- the table --------------------------------------------------------------
using i8 = int8_t;
using i16 = int16_t;
using i32 = int32_t;
using i64 = int64_t;
using u8 = uint8_t;
using u16 = uint16_t;
using u32 = uint32_t;
using u64 = uint64_t;

// Integer maps: plain loops the compiler vectorises, written out through
// Staged (streaming stores) when the output is large.
template <class Op> void RegInt(KernelTable* t, int op) {
  ForEachInt([&](auto lane, int dt) {
    using T = decltype(lane);
    t->op[op][dt] = &Staged<&UnaryI<Op, T>, sizeof(T), sizeof(T)>;
  });
}
// Predicates: plain loops the compiler vectorises (a packed byte store per
// four vectors: faster than any mask-to-bytes written with Highway 1.0),
// written out through Staged when the output is large.
template <class Pred> void RegPredicate(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &Staged<&PredicateK<Pred, float>, 1, 4>;
  t->op[op][CT_DT_FLOAT64] = &Staged<&PredicateK<Pred, double>, 1, 8>;
  SetNarrow<&PredicateK<Pred, float>, 1, true>(t->op[op]);
  ForEachInt([&](auto lane, int dt) {
    using T = decltype(lane);
    t->op[op][dt] = &Staged<&PredicateK<Pred, T>, 1, sizeof(T)>;
  });
  t->op[op][CT_DT_BOOL] = &Staged<&PredicateK<Pred, u8>, 1, 1>;
}
template <class Op> void RegTernaryFloat(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &TernaryF<Op, float>;
  t->op[op][CT_DT_FLOAT64] = &TernaryF<Op, double>;
  SetNarrow<&TernaryF<Op, float>, 3>(t->op[op]);
}

// Casts: the generic converting loop for every pair, then faster paths.
template <class From> void RegCastFrom(KernelTable* t, int from) {
  ContigKernel* row = t->cast[from];
  const auto one = [row](auto to, int dt) {
    using To = decltype(to);
    row[dt] = &Staged<&CastK<From, To>, sizeof(To), sizeof(From)>;
  };
  one(boolean(), CT_DT_BOOL);
  ForEachInt(one);
  one(f16(), CT_DT_FLOAT16);
  one(bf16(), CT_DT_BFLOAT16);
  one(float(), CT_DT_FLOAT32);
  one(double(), CT_DT_FLOAT64);
  one(f8<0>(), CT_DT_FLOAT8_E4M3FN);
  one(f8<1>(), CT_DT_FLOAT8_E5M2);
  one(f8<2>(), CT_DT_FLOAT8_E4M3FNUZ);
  one(f8<3>(), CT_DT_FLOAT8_E5M2FNUZ);
}

// e^t for t = x - shift with shift at least every x (softmax, logsumexp:
// the max): nothing overflows, so only the floor is clamped (t below -104,
// -inf included, gives 0); NaN lines never get here (their callers decide
// them first). float64 keeps the general form.
template <class D, class V> HWY_INLINE V ExpNonPositive(D d, V t) {
  using T = hn::TFromD<D>;
  if constexpr (std::is_same<T, float>::value) {
    if (hn::AllTrue(d, t >= hn::Set(d, -kExpNormal))) return ExpNormal(d, t);  // t <= 0: the floor is all to test
    // lanes below the floor (masked scores: -inf) are 0 without arithmetic
    // (ExpCore would make subnormal products there, each a microcode assist)
    const auto zero = t < hn::Set(d, Limits<T>::kExpMin);
    const V tz = hn::IfThenElse(zero, hn::Zero(d), t);
    const V r = hn::AllTrue(d, tz >= hn::Set(d, -kExpNormal)) ? ExpNormal(d, tz) : ExpCore(d, tz);
    return hn::IfThenElse(zero, hn::Zero(d), r);
  } else {
    return SafeExp(d, t);
  }
}

// softmax's middle pass: y = e^(x - shift) and the sum of y, in one pass
// (the sum in float32 lanes, flushed into a double every 64 vectors).
// A sum of vectors of float values in float32 (or float64) lanes, flushed
// into a double every 64 vectors: the exp-sum kernels' running total.
template <class D> struct LaneSum {
  explicit LaneSum(D d) : acc(hn::Zero(d)) {}
  HWY_INLINE void add(D d, hn::Vec<D> e) {
    acc = hn::Add(acc, e);
    if (++cnt == 64) {
      total += (double)hn::GetLane(hn::SumOfLanes(d, acc));
      acc = hn::Zero(d);
      cnt = 0;
    }
  }
  HWY_INLINE double sum(D d) const { return total + (double)hn::GetLane(hn::SumOfLanes(d, acc)); }
  hn::Vec<D> acc;
  double total = 0;
  int cnt = 0;
};

// kNeg: y = e^(shift - x) (softmin: softmax of -x, shift the min of x),
// the same values as e^(-x - (-shift)) bit for bit (negation is exact).
template <class T, bool kNeg = false> double ExpShiftSum(const void* xv, void* yv, int64_t n, double shift) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  const auto sh = hn::Set(d, (T)shift);
  LaneSum<decltype(d)> acc(d);
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    PrefetchAhead(x + i);  // a line or block ahead: the next one's first pass reads memory
    const auto v = hn::LoadU(d, x + i);
    const auto e = ExpNonPositive(d, kNeg ? hn::Sub(sh, v) : hn::Sub(v, sh));
    hn::StoreU(e, d, y + i);
    acc.add(d, e);
  }
  if (i < n) {  // the tail through a bounce buffer: the same vector code
    HWY_ALIGN T buf[hn::MaxLanes(d)];
    const T pad = kNeg ? (T)shift + T(1000) : (T)shift - T(1000);  // e^-1000 = 0
    for (int64_t k = 0; k < N; ++k) buf[k] = i + k < n ? x[i + k] : pad;
    const auto v = hn::Load(d, buf);
    const auto e = ExpNonPositive(d, kNeg ? hn::Sub(sh, v) : hn::Sub(v, sh));
    hn::Store(e, d, buf);
    for (int64_t k = 0; i + k < n; ++k) y[i + k] = buf[k];
    acc.add(d, e);
  }
  return acc.sum(d);
}

// sum(e^(x - shift)) stored nowhere, and the max of x in *max, in one pass:
// logsumexp's blocks after the first, shifted by the max so far: right
// where x <= shift; past that the sum may be anything (*max says so); a NaN
// in x makes the sum NaN and leaves *max as Max's operand order has it.
// float32 terms below e^-87.3 count as e^-87.3 (no slow path for them):
// they join a sum of at least 1 (the max's own term), where 1024 of them
// are 1e-35, nothing in a double.
template <class D, class V> HWY_INLINE V ExpAboveFloor(D d, V t) {
  if constexpr (std::is_same<hn::TFromD<D>, float>::value) {
    const auto lo = hn::Set(d, -kExpNormal);
    return ExpNormal(d, hn::IfThenElse(t < lo, lo, t));  // NaN stays NaN
  } else {
    return ExpNonPositive(d, t);
  }
}
template <class T> double ExpSumMax(const void* xv, int64_t n, double shift, double* max) {
  const T* x = static_cast<const T*>(xv);
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  const auto sh = hn::Set(d, (T)shift);
  LaneSum<decltype(d)> acc(d);
  auto mx = hn::Set(d, -std::numeric_limits<T>::infinity());
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    PrefetchAhead(x + i);
    const auto v = hn::LoadU(d, x + i);
    mx = hn::Max(mx, v);
    acc.add(d, ExpAboveFloor(d, hn::Sub(v, sh)));
  }
  if (i < n) {  // the tail through a bounce buffer: the same vector code
    HWY_ALIGN T buf[hn::MaxLanes(d)];
    for (int64_t k = 0; k < N; ++k) buf[k] = i + k < n ? x[i + k] : (T)shift - T(1000);  // a floor term each
    const auto v = hn::Load(d, buf);
    mx = hn::Max(mx, v);
    acc.add(d, ExpAboveFloor(d, hn::Sub(v, sh)));
  }
  *max = (double)hn::GetLane(hn::MaxOfLanes(d, mx));
  return acc.sum(d);
}

// ExpShiftSum for float32 x with y rounded to bfloat16 (F16 = false) or
// float16: the encoders' rounding (simd-inl.h's codecs) on the vector in
// registers. No prefetch: the callers' rows are in cache.
template <bool F16> double ExpShiftSumHalf(const float* x, uint16_t* y, int64_t n, double shift) {
  const hn::ScalableTag<float> d;
  const hn::RebindToUnsigned<decltype(d)> du;
  const hn::RebindToSigned<decltype(d)> di;
  const hn::Rebind<uint16_t, decltype(d)> d16;
  const hn::Rebind<hwy::float16_t, decltype(d)> dh;
  const int64_t N = (int64_t)hn::Lanes(d);
  const auto sh = hn::Set(d, (float)shift);
  LaneSum<decltype(d)> acc(d);
  const auto store = [&](hn::Vec<decltype(d)> e, uint16_t* to) {  // N values at `to`
    if constexpr (F16) {
      if constexpr (CT_VECTOR_F16) {
        hn::StoreU(hn::DemoteTo(dh, e), dh, reinterpret_cast<hwy::float16_t*>(to));
      } else {
        HWY_ALIGN float buf[hn::MaxLanes(d)];
        hn::Store(e, d, buf);
        for (int64_t k = 0; k < N; ++k) to[k] = double_to_f16(buf[k]);
      }
    } else {
      const auto u = hn::BitCast(du, e);
      const auto rounded = hn::ShiftRight<16>(u + hn::Set(du, 0x7fffu) + (hn::ShiftRight<16>(u) & hn::Set(du, 1u)));
      const auto quiet = hn::ShiftRight<16>(u) | hn::Set(du, 0x40u);
      const auto bits = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(e)), quiet, rounded);
      hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16, to);
    }
  };
  int64_t i = 0;
  for (; i + N <= n; i += N) {
    const auto e = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i), sh));
    store(e, y + i);
    acc.add(d, e);
  }
  if (i < n) {  // the tail: the same vector code on a padded copy, then its lanes stored one by one
    HWY_ALIGN float buf[hn::MaxLanes(d)];
    HWY_ALIGN uint16_t out[hn::MaxLanes(d)];
    for (int64_t k = 0; k < N; ++k) buf[k] = i + k < n ? x[i + k] : (float)shift - 1000.0f;
    const auto e = ExpNonPositive(d, hn::Sub(hn::Load(d, buf), sh));  // padding gives e^-1000 = 0
    store(e, out);
    for (int64_t k = 0; i + k < n; ++k) y[i + k] = out[k];
    acc.add(d, e);
  }
  return acc.sum(d);
}

template <class T> void SoftmaxFinish(const void* xv, void* yv, int64_t n, double a, double b, int log, int stream) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  const T as = (T)a, bs = (T)b;
  const auto av = hn::Set(d, as), bv = hn::Set(d, bs);
  int64_t i = 0;
  // Lanes and the scalar head and tail round alike: one operation at a time.
  const auto f = [&](auto v) { return log ? hn::Add(hn::Add(v, av), bv) : hn::Mul(v, av); };
  const auto f1 = [&](T v) { return log ? (T)((T)(v + as) + bs) : (T)(v * as); };
  if (stream && n >= 4 * N) {
    for (const int64_t head = StreamHead(y, sizeof(T) * (uintptr_t)N, sizeof(T)); i < head; ++i) y[i] = f1(x[i]);
    for (; i + N <= n; i += N) hn::Stream(f(hn::LoadU(d, x + i)), d, y + i);
    if (stream == 1) hwy::FlushStream();  // 2: the caller's, after its last line
  }
  for (; i + N <= n; i += N) hn::StoreU(f(hn::LoadU(d, x + i)), d, y + i);
  for (; i < n; ++i) y[i] = f1(x[i]);
}

void FillKernels(KernelTable* t) {
  std::memset(t, 0, sizeof *t);
  t->target = hwy::TargetName(HWY_TARGET);
  t->exp_shift_sum[0] = &ExpShiftSum<float>;
  t->exp_shift_sum[1] = &ExpShiftSum<double>;
  t->exp_neg_shift_sum[0] = &ExpShiftSum<float, true>;
  t->exp_neg_shift_sum[1] = &ExpShiftSum<double, true>;
  t->exp_sum_max[0] = &ExpSumMax<float>;
  t->exp_sum_max[1] = &ExpSumMax<double>;
  t->exp_shift_sum_half[0] = &ExpShiftSumHalf<false>;
  t->exp_shift_sum_half[1] = &ExpShiftSumHalf<true>;
  t->softmax_finish[0] = &SoftmaxFinish<float>;
  t->softmax_finish[1] = &SoftmaxFinish<double>;

  RegFloat<FNeg>(t, CT_OP_NEG);       RegInt<INeg>(t, CT_OP_NEG);
  RegFloat<FAbs>(t, CT_OP_ABS);       RegInt<IAbs>(t, CT_OP_ABS);
  t->op[CT_OP_ABS][CT_DT_BOOL] = &BoolIdentity;
  RegFloat<FSign>(t, CT_OP_SIGN);     RegInt<ISign>(t, CT_OP_SIGN);
  RegFloat<FExp>(t, CT_OP_EXP);
  RegFloat<FExpm1>(t, CT_OP_EXPM1);
  RegFloat<FExp2>(t, CT_OP_EXP2);
  RegFloat<FLog>(t, CT_OP_LOG);
  RegFloat<FLog1p>(t, CT_OP_LOG1P);
  RegFloat<FLog2>(t, CT_OP_LOG2);
  RegFloat<FSqrt>(t, CT_OP_SQRT);
  RegFloat<FRsqrt>(t, CT_OP_RSQRT);
  RegFloat<FReciprocal>(t, CT_OP_RECIPROCAL);  RegInt<IReciprocal>(t, CT_OP_RECIPROCAL);
  RegFloat<FSquare>(t, CT_OP_SQUARE);          RegInt<ISquare>(t, CT_OP_SQUARE);
  RegFloat<FTrig<0>>(t, CT_OP_SIN);
  RegFloat<FTrig<1>>(t, CT_OP_COS);
  RegFloat<FTrig<2>>(t, CT_OP_TAN);
  RegFloat<FTanh>(t, CT_OP_TANH);
  RegFloat<FSigmoid>(t, CT_OP_SIGMOID);
  RegFloat<FRelu>(t, CT_OP_RELU);              RegInt<IRelu>(t, CT_OP_RELU);
  RegFloat<FGelu>(t, CT_OP_GELU);
  t->op[CT_OP_GELU][CT_DT_FLOAT64] = &UnaryScalarF<FGelu, double>;
  RegFloat<FGeluTanh>(t, CT_OP_GELU_TANH);
  RegFloat<FSilu>(t, CT_OP_SILU);
  RegFloat<FSoftplus>(t, CT_OP_SOFTPLUS);
  RegFloat<FErf>(t, CT_OP_ERF);
  t->op[CT_OP_ERF][CT_DT_FLOAT64] = &UnaryScalarF<FErf, double>;
  RegFloat<FFloor>(t, CT_OP_FLOOR);            RegInt<IIdentity>(t, CT_OP_FLOOR);
  RegFloat<FCeil>(t, CT_OP_CEIL);              RegInt<IIdentity>(t, CT_OP_CEIL);
  RegFloat<FRound>(t, CT_OP_ROUND);            RegInt<IIdentity>(t, CT_OP_ROUND);
  RegFloat<FTrunc>(t, CT_OP_TRUNC);            RegInt<IIdentity>(t, CT_OP_TRUNC);
  RegPredicate<PIsZero>(t, CT_OP_LOGICAL_NOT);
  RegInt<IBitwiseNot>(t, CT_OP_BITWISE_NOT);
  t->op[CT_OP_BITWISE_NOT][CT_DT_BOOL] = &BoolNot;
  RegPredicate<PIsNan>(t, CT_OP_ISNAN);
  RegPredicate<PIsInf>(t, CT_OP_ISINF);
  RegPredicate<PIsFinite>(t, CT_OP_ISFINITE);
  t->op[CT_OP_ISNAN][CT_DT_BOOL] = &BoolConst<0>;
  t->op[CT_OP_ISINF][CT_DT_BOOL] = &BoolConst<0>;
  t->op[CT_OP_ISFINITE][CT_DT_BOOL] = &BoolConst<1>;
  RegPredicate<PIsPosInf>(t, CT_OP_ISPOSINF);
  RegPredicate<PIsNegInf>(t, CT_OP_ISNEGINF);
  t->op[CT_OP_ISPOSINF][CT_DT_BOOL] = &BoolConst<0>;
  t->op[CT_OP_ISNEGINF][CT_DT_BOOL] = &BoolConst<0>;

  RegFloat<FLeakyRelu>(t, CT_OP_LEAKY_RELU);
  RegFloat<FElu>(t, CT_OP_ELU);
  RegFloat<FClamp>(t, CT_OP_CLAMP);            RegInt<IClamp>(t, CT_OP_CLAMP);
  RegFloat<FClamp>(t, CT_OP_HARDTANH);  // clamp with PyTorch's defaults -1, 1
  RegFloat<FRelu6>(t, CT_OP_RELU6);            RegInt<IRelu6>(t, CT_OP_RELU6);
  t->op[CT_OP_POW_SCALAR][CT_DT_FLOAT32] = &PowF<float>;
  t->op[CT_OP_POW_SCALAR][CT_DT_FLOAT64] = &PowF<double>;
  SetNarrow<&PowF<float>, 1>(t->op[CT_OP_POW_SCALAR]);
  RegFloat<FAddScalar>(t, CT_OP_ADD_SCALAR);   RegInt<IAddScalar>(t, CT_OP_ADD_SCALAR);
  RegFloat<FMulScalar>(t, CT_OP_MUL_SCALAR);   RegInt<IMulScalar>(t, CT_OP_MUL_SCALAR);

  for (int dt : {CT_DT_BOOL, CT_DT_INT8, CT_DT_UINT8, CT_DT_FLOAT8_E4M3FN, CT_DT_FLOAT8_E5M2, CT_DT_FLOAT8_E4M3FNUZ,
                 CT_DT_FLOAT8_E5M2FNUZ})
    t->op[CT_OP_WHERE][dt] = &Staged<&WhereK<uint8_t>, 1, 1, 1, 1>;
  for (int dt : {CT_DT_INT16, CT_DT_UINT16, CT_DT_FLOAT16, CT_DT_BFLOAT16})
    t->op[CT_OP_WHERE][dt] = &WhereK<uint16_t>;  // vector loops that stream by themselves
  for (int dt : {CT_DT_INT32, CT_DT_UINT32, CT_DT_FLOAT32}) t->op[CT_OP_WHERE][dt] = &WhereK<uint32_t>;
  for (int dt : {CT_DT_INT64, CT_DT_UINT64, CT_DT_FLOAT64}) t->op[CT_OP_WHERE][dt] = &Staged<&WhereK<uint64_t>, 8, 1, 8, 8>;
  RegTernaryFloat<FFma>(t, CT_OP_FMA);
  ForEachInt([t](auto lane, int dt) {
    using T = decltype(lane);
    t->op[CT_OP_FMA][dt] = &Staged<&FmaI<T>, sizeof(T), sizeof(T), sizeof(T), sizeof(T)>;
  });
  RegTernaryFloat<FLerp>(t, CT_OP_LERP);
  RegTernaryFloat<FAddcmul>(t, CT_OP_ADDCMUL);
  RegTernaryFloat<FAddcdiv>(t, CT_OP_ADDCDIV);
  RegTernaryFloat<FClampTensor>(t, CT_OP_CLAMP_TENSOR);
  ForEachInt([t](auto lane, int dt) {
    using T = decltype(lane);
    t->op[CT_OP_ADDCMUL][dt] = &Staged<&AddcmulI<T>, sizeof(T), sizeof(T), sizeof(T), sizeof(T)>;
    t->op[CT_OP_CLAMP_TENSOR][dt] = &Staged<&ClampTensorI<T>, sizeof(T), sizeof(T), sizeof(T), sizeof(T)>;
  });

  RegFloat<FHardswish>(t, CT_OP_HARDSWISH);

  RegCastFrom<boolean>(t, CT_DT_BOOL);
  RegCastFrom<i8>(t, CT_DT_INT8);
  RegCastFrom<i16>(t, CT_DT_INT16);
  RegCastFrom<i32>(t, CT_DT_INT32);
  RegCastFrom<i64>(t, CT_DT_INT64);
  RegCastFrom<u8>(t, CT_DT_UINT8);
  RegCastFrom<u16>(t, CT_DT_UINT16);
  RegCastFrom<u32>(t, CT_DT_UINT32);
  RegCastFrom<u64>(t, CT_DT_UINT64);
  RegCastFrom<f16>(t, CT_DT_FLOAT16);
  RegCastFrom<bf16>(t, CT_DT_BFLOAT16);
  RegCastFrom<float>(t, CT_DT_FLOAT32);
  RegCastFrom<double>(t, CT_DT_FLOAT64);
  RegCastFrom<f8<0>>(t, CT_DT_FLOAT8_E4M3FN);
  RegCastFrom<f8<1>>(t, CT_DT_FLOAT8_E5M2);
  RegCastFrom<f8<2>>(t, CT_DT_FLOAT8_E4M3FNUZ);
  RegCastFrom<f8<3>>(t, CT_DT_FLOAT8_E5M2FNUZ);
  for (int dt = 0; dt < CT_DT_COUNT; ++dt) {
    static const ContigKernel copy_by_size[9] = {nullptr, &CopyK1, &CopyK2, nullptr, &CopyK4,
                                                 nullptr, nullptr,  nullptr, &CopyK8};
    t->cast[dt][dt] = copy_by_size[ct_dtype_of_index(dt).bits / 8];
  }
  t->cast[CT_DT_FLOAT16][CT_DT_FLOAT32] = &DecodeK<F16Codec>;
  t->cast[CT_DT_BFLOAT16][CT_DT_FLOAT32] = &DecodeK<BF16Codec>;
  t->cast[CT_DT_FLOAT32][CT_DT_FLOAT16] = &EncodeK<F16Codec>;
  t->cast[CT_DT_FLOAT32][CT_DT_BFLOAT16] = &EncodeK<BF16Codec>;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ct {
namespace cpu {
HWY_EXPORT(FillKernels);
void fill_kernels(KernelTable* table) { HWY_DYNAMIC_DISPATCH(FillKernels)(table); }
}  // namespace cpu
}  // namespace ct
#endif
