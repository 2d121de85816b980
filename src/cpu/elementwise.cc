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


template <class T> struct Limits;
template <> struct Limits<float> {
  static constexpr float kExpMax = 88.7228317f;   // largest x with finite e^x
  static constexpr float kExpMin = -104.0f;       // e^x rounds to 0 below
  static constexpr float kTanhClamp = 10.0f;      // tanh(x) rounds to 1 in float32 from x > 9.01
  static constexpr float kTrigMax = 39000.0f;     // Highway Sin/Cos valid range
};
template <> struct Limits<double> {
  static constexpr double kExpMax = 709.782712893384;
  static constexpr double kExpMin = -746.0;
  static constexpr double kTanhClamp = 19.5;
  static constexpr double kTrigMax = 39000.0;
};

template <class D> HWY_INLINE hn::Vec<D> PosInf(D d) {
  return hn::Set(d, std::numeric_limits<hn::TFromD<D>>::infinity());
}
template <class D> HWY_INLINE hn::Vec<D> QNaN(D d) {
  return hn::Set(d, std::numeric_limits<hn::TFromD<D>>::quiet_NaN());
}
// NaN inputs give NaN outputs, whatever the approximation did with them.
template <class V> HWY_INLINE V KeepNaN(V x, V r) { return hn::IfThenElse(hn::IsNaN(x), x, r); }

// e^r - 1 for float32 |r| <= ln2/2: Cephes' expf polynomial before its 1 is
// added (so relative accuracy holds near 0).
template <class D, class V> HWY_INLINE V ExpM1Poly(D d, V r) {
  static constexpr float kExpf[] = {1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f,
                                    4.1665795894e-2f, 1.6666665459e-1f, 5.0000001201e-1f};
  return hn::MulAdd(Horner(d, r, kExpf), r * r, r);
}
// r = x - n ln2 for an integral n (Cody-Waite: n C1 is exact).
template <class D, class V> HWY_INLINE V ExpReduceBy(D d, V x, V n) {
  const V r = hn::MulAdd(n, hn::Set(d, -0.693359375f), x);
  return hn::MulAdd(n, hn::Set(d, 2.12194440e-4f), r);
}
// x = n ln2 + r, |r| <= ln2/2: r, and n in *n.
template <class D, class V> HWY_INLINE V ExpReduce(D d, V x, V* n) {
  *n = hn::Round(x * hn::Set(d, 1.44269504088896341f));
  return ExpReduceBy(d, x, *n);
}
// e * 2^n for float32, n in [-252, 254] integral: 2^n in two halves, so
// subnormal results are right (and 0 below 2^-149).
template <class D, class V> HWY_INLINE V Scale2n(D d, V e, V n) {
  const hn::RebindToSigned<D> di;
  const auto ni = hn::ConvertTo(di, n);
  const auto bias = hn::Set(di, 127);
  const auto n1 = hn::ShiftRight<1>(ni);
  const V s1 = hn::BitCast(d, hn::ShiftLeft<23>(n1 + bias));
  const V s2 = hn::BitCast(d, hn::ShiftLeft<23>(ni - n1 + bias));
  return e * s1 * s2;
}

// e^x for float32 on [-104, 88.73] (callers clamp): x = n ln2 + r with
// |r| <= ln2/2 (ExpReduce), e^r by Cephes' expf polynomial, then 2^n
// applied in two halves so subnormal results are right (Scale2n).
// About half the instructions of Highway's Exp; measured <= 1.0 ulp.
template <class D, class V> HWY_INLINE V ExpCore(D d, V x) {
  V n;
  const V e = ExpM1Poly(d, ExpReduce(d, x, &n)) + hn::Set(d, 1.0f);
  return Scale2n(d, e, n);
}

// Where e^x is a normal float32 for sure: |x| <= kExpNormal (|n| <= 126).
constexpr float kExpNormal = 87.3f;
// e^x for float32 |x| <= kExpNormal: ExpCore's reduction and polynomial,
// with n rounded by adding 1.5 * 2^23 + 127 (one FMA: n + 127 lands in the
// low mantissa bits, so shifting those bits into the exponent field is
// 2^n, no conversion), and 2^n applied by the last FMA. The same results as ExpCore there, in
// about two thirds of the instructions.
template <class D, class V> HWY_INLINE V ExpNormal(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V magic = hn::Set(d, 12583039.0f);
  const V nb = hn::MulAdd(x, hn::Set(d, 1.44269504088896341f), magic);
  const V n = nb - magic;  // exact (Sterbenz)
  const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, nb)));
  return hn::MulAdd(ExpM1Poly(d, ExpReduceBy(d, x, n)), s, s);  // (1 + q) 2^n rounded once, as ExpCore's
}
// True when every lane of x is within [-kExpNormal, kExpNormal] (NaN is not):
// the vectors that can take ExpNormal.
template <class D, class V> HWY_INLINE bool AllExpNormal(D d, V x) {
  return hn::AllTrue(d, hn::Abs(x) <= hn::Set(d, kExpNormal));
}

// e^x - 1 for float32 on [-87, 88.72] (callers clamp; it is -1 in float32
// below -17.4): ExpCore's reduction x = n ln2 + r, and e^r - 1 is its
// polynomial before the 1 is added (Cephes' expf, relative accuracy kept
// near 0), then 2^n (e^r - 1) + (2^n - 1) with one rounding, as
// 2 (2^(n-1) (e^r - 1) + 2^(n-1) - 1/2) for n > 0 so that 2^n = 2^128
// never has to exist. About two thirds of Highway's Expm1.
template <class D, class V> HWY_INLINE V Expm1Core(D d, V x) {
  V n;
  const V em1 = ExpM1Poly(d, ExpReduce(d, x, &n));  // e^r - 1
  const auto pos = n > hn::Zero(d);
  const hn::RebindToSigned<D> di;
  const auto m = hn::ConvertTo(di, hn::IfThenElse(pos, n - hn::Set(d, 1.0f), n));
  const V s = hn::BitCast(d, hn::ShiftLeft<23>(m + hn::Set(di, 127)));
  const V r1 = hn::MulAdd(s, em1, s - hn::IfThenElse(pos, hn::Set(d, 0.5f), hn::Set(d, 1.0f)));
  return hn::IfThenElse(pos, r1 + r1, r1);
}
// e^x - 1 on all of R: float32 through Expm1Core, IEEE specials included.
template <class D, class V> HWY_INLINE V SafeExpm1(D d, V x) {
  using T = hn::TFromD<D>;
  const V lim = hn::Set(d, Limits<T>::kExpMax);
  V r;
  if constexpr (std::is_same<T, float>::value)  // expm1 has x's sign: -0 stays -0
    r = hn::CopySign(Expm1Core(d, hn::Max(hn::Min(x, lim), hn::Set(d, -87.0f))), x);
  else r = hn::Expm1(d, hn::Min(x, lim));
  return KeepNaN(x, hn::IfThenElse(x > lim, PosInf(d), r));
}

// e^t - 1 for t <= 0 (elu's negative side): for vectors within
// [-kExpNormal, 0] (nearly all), Expm1Core's n <= 0 formula 2^n (e^r - 1) +
// (2^n - 1) with n rounded by ExpNormal's magic-number FMA; SafeExpm1
// otherwise. The sign of a zero t is not kept (callers pass t < 0).
template <class D, class V> HWY_INLINE V Expm1NonPositive(D d, V t) {
  if constexpr (std::is_same<hn::TFromD<D>, float>::value) {
    if (hn::AllTrue(d, t >= hn::Set(d, -kExpNormal))) {
      const hn::RebindToSigned<D> di;
      const V magic = hn::Set(d, 12583039.0f);
      const V nb = hn::MulAdd(t, hn::Set(d, 1.44269504088896341f), magic);
      const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, nb)));
      return hn::MulAdd(s, ExpM1Poly(d, ExpReduceBy(d, t, nb - magic)), s - hn::Set(d, 1.0f));
    }
  }
  return SafeExpm1(d, t);
}

// e^x valid on all of R, IEEE specials included (Highway's Exp is valid up to ~104 only).
template <class D, class V> HWY_INLINE V SafeExp(D d, V x) {
  using T = hn::TFromD<D>;
  const V hi = hn::Set(d, Limits<T>::kExpMax);
  V r;
  if constexpr (std::is_same<T, float>::value) {
    if (AllExpNormal(d, x)) return ExpNormal(d, x);  // nearly every vector: no specials to mend
    r = ExpCore(d, hn::Max(hn::Min(x, hi), hn::Set(d, Limits<T>::kExpMin)));
  } else {
    r = hn::Exp(d, hn::Min(x, hi));
  }
  return KeepNaN(x, hn::IfThenElse(x > hi, PosInf(d), r));
}
// e^x for inputs the caller knows are in [-104, kExpMax] (no specials).
template <class D, class V> HWY_INLINE V ExpInRange(D d, V x) {
  if constexpr (std::is_same<hn::TFromD<D>, float>::value) return AllExpNormal(d, x) ? ExpNormal(d, x) : ExpCore(d, x);
  else return hn::Exp(d, x);
}
// IEEE specials for logarithms: log(0) = -inf, log(<0) = NaN, log(inf) = inf.
template <class D, class V> HWY_INLINE V LogSpecials(D d, V x, V r) {
  r = hn::IfThenElse(x == PosInf(d), x, r);
  r = hn::IfThenElse(x == hn::Zero(d), hn::Neg(PosInf(d)), r);
  r = hn::IfThenElse(x < hn::Zero(d), QNaN(d), r);
  return KeepNaN(x, r);
}
// log1p by Goldberg's trick, valid for all x > -1 (Highway's Log1p needs x >= 0).
template <class D, class V> HWY_INLINE V Log1pAny(D d, V x) {
  const V one = hn::Set(d, 1);
  const V u = x + one;
  const V um1 = u - one;
  const V safe_u = hn::IfThenElse(u > hn::Zero(d), u, one);
  V r = hn::Log(d, safe_u) * x / hn::IfThenElse(um1 == hn::Zero(d), one, um1);
  r = hn::IfThenElse(um1 == hn::Zero(d), x, r);  // u rounded to 1: log1p(x) = x
  r = hn::IfThenElse(x == PosInf(d), x, r);
  r = hn::IfThenElse(x == hn::Set(d, -1), hn::Neg(PosInf(d)), r);
  r = hn::IfThenElse(x < hn::Set(d, -1), QNaN(d), r);
  return KeepNaN(x, r);
}
// 1 / (1 + e^-x), accurate on both tails: e = e^-|x| never overflows.
template <class D, class V> HWY_INLINE V SigmoidAcc(D d, V x) {
  using T = hn::TFromD<D>;
  const V e = ExpInRange(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, Limits<T>::kExpMin)));  // in [0, 1]
  const V s = hn::Set(d, 1) / (hn::Set(d, 1) + e);
  return KeepNaN(x, hn::IfThenElse(x < hn::Zero(d), e * s, s));
}
// tanh within 2 ulp: odd polynomial near 0, 1 - 2 / (e^2|x| + 1) beyond.
template <class D, class V> HWY_INLINE V TanhAcc(D d, V x) {
  using T = hn::TFromD<D>;
  const V a = hn::Abs(x);
  const V one = hn::Set(d, 1);
  if constexpr (std::is_same<T, float>::value) {
    // Least-squares fit of (tanh(x) - x) / x^3 in x^2 on [0, 0.625] (relative
    // weights, Chebyshev nodes); measured <= 0.77 ulp in float32 there.
    const V x2 = x * x;
    V p = hn::Set(d, 0.0021489840000867844f);
    p = hn::MulAdd(p, x2, hn::Set(d, -0.008184662088751793f));
    p = hn::MulAdd(p, x2, hn::Set(d, 0.021703999489545822f));
    p = hn::MulAdd(p, x2, hn::Set(d, -0.05394745245575905f));
    p = hn::MulAdd(p, x2, hn::Set(d, 0.13333211839199066f));
    p = hn::MulAdd(p, x2, hn::Set(d, -0.3333333134651184f));
    const V small = hn::MulAdd(x * x2, p, x);
    // e^2|x| for |x| in [0, 10]: always a normal number.
    const V e = ExpNormal(d, hn::Set(d, 2) * hn::Min(a, hn::Set(d, Limits<T>::kTanhClamp)));
    // 2 / (e + 1) by a divide: one instruction on the divider, which runs
    // beside the FMA pipes (Zen 3: 3.5 cycles per 8 lanes), where the
    // hardware estimate needed two Newton steps (4 FMAs) for the same
    // accuracy. y <= 0.23, so its rounding is a quarter ulp of the result.
    const V big = one - hn::Set(d, 2) / (e + one);  // tanh(|x|); the sign comes last
    return KeepNaN(x, hn::CopySign(hn::IfThenElse(a < hn::Set(d, 0.625f), small, big), x));  // tanh(-0) = -0
  } else {
    // double: expm1 keeps relative accuracy near 0 (a few ulp).
    const V t = hn::Expm1(d, hn::Set(d, 2) * hn::Min(a, hn::Set(d, Limits<T>::kTanhClamp)));
    const V r = t / (t + hn::Set(d, 2));
    return KeepNaN(x, hn::CopySign(r, x));
  }
}
// e^(p - hi - lo) for float32 where hi + lo is a square split exactly
// (hi = z*z rounded, lo its FMA remainder), 0 <= hi <= 111 and |p| <= 2:
// Cody-Waite reduction by n ln2 with hi folded in first, so neither z^2's
// rounding nor that of p - hi reaches the exponent (-hi - n C1 is exact by
// Sterbenz when hi dominates, small otherwise), and no TwoSum is needed.
// Results below 2^-149 come out 0 through ExpCore's two-halves scaling.
template <class D, class V> HWY_INLINE V ExpOfNegSquare(D d, V p, V hi, V lo) {
  if constexpr (std::is_same<hn::TFromD<D>, float>::value) {
    const V t = p - hi;
    // Normal results (nearly every vector): n by the magic-number FMA and
    // one scale, as ExpNormal; else two halves, so subnormals are right.
    const bool normal = AllExpNormal(d, t);
    const hn::RebindToSigned<D> di;
    const V magic = hn::Set(d, 12583039.0f);  // ExpNormal's
    const V nb = hn::MulAdd(t, hn::Set(d, 1.44269504088896341f), magic);
    const V n = normal ? nb - magic : hn::Round(t * hn::Set(d, 1.44269504088896341f));
    V r = hn::NegMulAdd(n, hn::Set(d, 0.693359375f), hn::Neg(hi));
    r = r + p;
    r = hn::MulAdd(n, hn::Set(d, 2.12194440e-4f), r) - lo;
    if (normal) {
      const V s = hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(di, nb)));
      return hn::MulAdd(ExpM1Poly(d, r), s, s);
    }
    return Scale2n(d, ExpM1Poly(d, r) + hn::Set(d, 1.0f), n);
  } else {
    return hn::Exp(d, (p - hi) - lo);
  }
}
// erfc(z) for 0 <= z <= 10.5 (callers clamp: erfc(10.5) < 2^-149, 0 in
// float32) with relative error ~1e-7 everywhere (Numerical Recipes'
// Chebyshev fit, "erfcc"): t e^(P(t) - z^2), t = 1 / (1 + z/2). z2hi + z2lo
// must equal z^2 exactly (callers square their own input with an FMA), so
// no rounding of z^2 reaches the exponent (ExpOfNegSquare).
template <class D, class V> HWY_INLINE V ErfcPos(D d, V z, V z2hi, V z2lo) {
  const V one = hn::Set(d, 1);
  const V t = one / hn::MulAdd(hn::Set(d, 0.5f), z, one);
  // P(t) of degree 9 by Estrin's scheme (depth 5 instead of Horner's 9: the
  // chain through the divide and the exponential is what bounds the loop).
  const auto c = [&](float v) { return hn::Set(d, v); };
  const V t2 = t * t, t4 = t2 * t2;
  const V p98 = hn::MulAdd(c(0.17087277f), t, c(-0.82215223f)), p76 = hn::MulAdd(c(1.48851587f), t, c(-1.13520398f));
  const V p54 = hn::MulAdd(c(0.27886807f), t, c(-0.18628806f)), p32 = hn::MulAdd(c(0.09678418f), t, c(0.37409196f));
  const V p10 = hn::MulAdd(c(1.00002368f), t, c(-1.26551223f));
  const V p9_6 = hn::MulAdd(p98, t2, p76), p5_2 = hn::MulAdd(p54, t2, p32);
  const V p = hn::MulAdd(hn::MulAdd(p9_6, t4, p5_2), t2, p10);
  return t * ExpOfNegSquare(d, p, z2hi, z2lo);
}
template <class D, class V> HWY_INLINE V ErfAcc(D d, V x) {
  const V a = hn::Abs(x);
  // Taylor series of erf near 0 (|x| < 0.5): 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1)).
  const V x2 = x * x;
  V p = hn::Set(d, -1.0f / 75600);
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0f / 9360));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0f / 1320));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0f / 216));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0f / 42));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0f / 10));
  p = hn::MulAdd(p, x2, hn::Set(d, -1.0f / 3));
  p = hn::MulAdd(p, x2, hn::Set(d, 1.0f));
  const V small = x * p * hn::Set(d, 1.1283791670955126f);
  // erf(x) rounds to +-1 in float32 from |x| = 4 on; clamping there also keeps
  // e^-z^2 out of the subnormal range (subnormal arithmetic is ~100x slower).
  const V ac = hn::Min(a, hn::Set(d, 4.0f));
  const V ac2 = ac * ac;
  const V ac2lo = hn::MulSub(ac, ac, ac2);  // ac^2 = ac2 + ac2lo exactly (FMA targets)
  const V big = hn::CopySign(hn::Set(d, 1) - ErfcPos(d, ac, ac2, ac2lo), x);
  return KeepNaN(x, hn::IfThenElse(a < hn::Set(d, 0.5f), small, big));
}

// ---- float functors: V operator()(D, V x, V p0, V p1) ---------------------
#define CT_FLOAT_OP(NAME, ...)                                            \
  struct NAME {                                                           \
    template <class D, class V>                                           \
    HWY_INLINE V operator()(D d, V x, V p0, V p1) const {                 \
      (void)d; (void)p0; (void)p1;                                        \
      __VA_ARGS__                                                         \
    }                                                                     \
  };
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
CT_FLOAT_OP(FLog, return LogSpecials(d, x, hn::Log(d, hn::IfThenElse(x > hn::Zero(d), x, hn::Set(d, 1))));)
CT_FLOAT_OP(FLog1p, return Log1pAny(d, x);)
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
CT_FLOAT_OP(FSoftplus, {
  // max(x, 0) + log1p(e^-|x|): never overflows, exact for large |x|.
  using T = hn::TFromD<D>;
  const V e = ExpInRange(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, Limits<T>::kExpMin)));
  const V r = hn::Max(x, hn::Zero(d)) + Log1pAny(d, e);
  return KeepNaN(x, r);
})
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
CT_FLOAT_OP(FAddScalar, return x + p0;)
CT_FLOAT_OP(FMulScalar, return x * p0;)
#undef CT_FLOAT_OP

// Float32-only vector ops (the half types use them too); double uses libm.
struct FErf {
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V, V) const { return ErfAcc(d, x); }
  static double scalar(double x, double, double) { return std::erf(x); }
};
struct FGelu {
  template <class D, class V> HWY_INLINE V operator()(D d, V x, V, V) const {
    // x * Phi(x) with Phi from erfc on both sides: accurate far into x << 0.
    // z = |x| / sqrt(2); z^2 = x^2 / 2 exactly from x's own square.
    // |x| is clamped at 14.8 (z = 10.47): Phi(-14.8) < 2^-149 already.
    const V half = hn::Set(d, 0.5f);
    const V a = hn::Min(hn::Abs(x), hn::Set(d, 14.8f));
    const V a2 = a * a;
    const V h = half * ErfcPos(d, a * hn::Set(d, 0.7071067811865476f), half * a2, half * hn::MulSub(a, a, a2));
    return KeepNaN(x, x * hn::IfThenElse(x < hn::Zero(d), h, hn::Set(d, 1) - h));
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
    return hn::Sin(d, x) / hn::Cos(d, x);
  }
};

// pow(x, p): exact shortcuts vectorised, the general case through libm.
struct FPow {
  static double scalar(double x, double p, double) { return std::pow(x, p); }
};

// ---- float kernels --------------------------------------------------------

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
    for (i = head; i + N <= n; i += N) hn::Stream(op(d, hn::LoadU(d, x + i), p0, p1), d, y + i);
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

template <class Op, class T>
void TernaryF(char* const* p, int64_t n, const double*) {
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  T* HWY_RESTRICT y = reinterpret_cast<T*>(p[0]);
  const T* a = reinterpret_cast<const T*>(p[1]);
  const T* b = reinterpret_cast<const T*>(p[2]);
  const T* c = reinterpret_cast<const T*>(p[3]);
  const Op op;
  int64_t i = 0;
  if (n * (int64_t)sizeof(T) >= kStreamBytes) {  // as UnaryF: streaming stores from an aligned address
    const int64_t head = StreamHead(y, sizeof(T) * (uintptr_t)N, sizeof(T));
    for (; i < head; ++i) {  // one lane at a time: the same vector code, so the same results
      HWY_ALIGN T ba[hn::MaxLanes(d)] = {}, bb[hn::MaxLanes(d)] = {}, bc[hn::MaxLanes(d)] = {};
      ba[0] = a[i], bb[0] = b[i], bc[0] = c[i];
      hn::Store(op(d, hn::Load(d, ba), hn::Load(d, bb), hn::Load(d, bc)), d, ba);
      y[i] = ba[0];
    }
    for (; i + N <= n; i += N)
      hn::Stream(op(d, hn::LoadU(d, a + i), hn::LoadU(d, b + i), hn::LoadU(d, c + i)), d, y + i);
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
    for (; i + N <= n; i += N) {
      const auto m = hn::PromoteTo(du, hn::LoadU(d8, c + i)) != hn::Zero(du);
      hn::StoreU(hn::IfThenElse(m, hn::LoadU(du, a + i), hn::LoadU(du, b + i)), du, y + i);
    }
  }
  for (; i < n; ++i) y[i] = c[i] ? a[i] : b[i];
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

template <class Op> void RegFloat(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &UnaryF<Op, float>;
  t->op[op][CT_DT_FLOAT64] = &UnaryF<Op, double>;
  SetNarrow<&UnaryF<Op, float>, 1>(t->op[op]);
}
template <class Op> void RegInt(KernelTable* t, int op) {
  t->op[op][CT_DT_INT8] = &UnaryI<Op, i8>;
  t->op[op][CT_DT_INT16] = &UnaryI<Op, i16>;
  t->op[op][CT_DT_INT32] = &UnaryI<Op, i32>;
  t->op[op][CT_DT_INT64] = &UnaryI<Op, i64>;
  t->op[op][CT_DT_UINT8] = &UnaryI<Op, u8>;
  t->op[op][CT_DT_UINT16] = &UnaryI<Op, u16>;
  t->op[op][CT_DT_UINT32] = &UnaryI<Op, u32>;
  t->op[op][CT_DT_UINT64] = &UnaryI<Op, u64>;
}
template <class Pred> void RegPredicate(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &PredicateK<Pred, float>;
  t->op[op][CT_DT_FLOAT64] = &PredicateK<Pred, double>;
  SetNarrow<&PredicateK<Pred, float>, 1, true>(t->op[op]);
  t->op[op][CT_DT_INT8] = &PredicateK<Pred, i8>;
  t->op[op][CT_DT_INT16] = &PredicateK<Pred, i16>;
  t->op[op][CT_DT_INT32] = &PredicateK<Pred, i32>;
  t->op[op][CT_DT_INT64] = &PredicateK<Pred, i64>;
  t->op[op][CT_DT_UINT8] = &PredicateK<Pred, u8>;
  t->op[op][CT_DT_UINT16] = &PredicateK<Pred, u16>;
  t->op[op][CT_DT_UINT32] = &PredicateK<Pred, u32>;
  t->op[op][CT_DT_UINT64] = &PredicateK<Pred, u64>;
  t->op[op][CT_DT_BOOL] = &PredicateK<Pred, u8>;
}
template <class Op> void RegTernaryFloat(KernelTable* t, int op) {
  t->op[op][CT_DT_FLOAT32] = &TernaryF<Op, float>;
  t->op[op][CT_DT_FLOAT64] = &TernaryF<Op, double>;
  SetNarrow<&TernaryF<Op, float>, 3>(t->op[op]);
}

// Casts: the generic converting loop for every pair, then faster paths.
template <class From> void RegCastFrom(KernelTable* t, int from) {
  ContigKernel* row = t->cast[from];
  row[CT_DT_BOOL] = &CastK<From, boolean>;
  row[CT_DT_INT8] = &CastK<From, i8>;
  row[CT_DT_INT16] = &CastK<From, i16>;
  row[CT_DT_INT32] = &CastK<From, i32>;
  row[CT_DT_INT64] = &CastK<From, i64>;
  row[CT_DT_UINT8] = &CastK<From, u8>;
  row[CT_DT_UINT16] = &CastK<From, u16>;
  row[CT_DT_UINT32] = &CastK<From, u32>;
  row[CT_DT_UINT64] = &CastK<From, u64>;
  row[CT_DT_FLOAT16] = &CastK<From, f16>;
  row[CT_DT_BFLOAT16] = &CastK<From, bf16>;
  row[CT_DT_FLOAT32] = &CastK<From, float>;
  row[CT_DT_FLOAT64] = &CastK<From, double>;
  row[CT_DT_FLOAT8_E4M3FN] = &CastK<From, f8<0>>;
  row[CT_DT_FLOAT8_E5M2] = &CastK<From, f8<1>>;
  row[CT_DT_FLOAT8_E4M3FNUZ] = &CastK<From, f8<2>>;
  row[CT_DT_FLOAT8_E5M2FNUZ] = &CastK<From, f8<3>>;
}

// e^t for t = x - shift with shift at least every x (softmax, logsumexp:
// the max): nothing overflows, so only the floor is clamped (t below -104,
// -inf included, gives 0); NaN lines never get here (their callers decide
// them first). float64 keeps the general form.
template <class D, class V> HWY_INLINE V ExpNonPositive(D d, V t) {
  using T = hn::TFromD<D>;
  if constexpr (std::is_same<T, float>::value) {
    if (hn::AllTrue(d, t >= hn::Set(d, -kExpNormal))) return ExpNormal(d, t);  // t <= 0: the floor is all to test
    return ExpCore(d, hn::Max(t, hn::Set(d, Limits<T>::kExpMin)));
  } else {
    return SafeExp(d, t);
  }
}

// softmax's middle pass: y = e^(x - shift) and the sum of y, in one pass
// (the sum in float32 lanes, flushed into a double every 64 vectors).
template <class T> double ExpShiftSum(const void* xv, void* yv, int64_t n, double shift) {
  const T* x = static_cast<const T*>(xv);
  T* y = static_cast<T*>(yv);
  const hn::ScalableTag<T> d;
  const int64_t N = (int64_t)hn::Lanes(d);
  const auto sh = hn::Set(d, (T)shift);
  auto acc = hn::Zero(d);
  double total = 0;
  int64_t i = 0;
  int cnt = 0;
  for (; i + N <= n; i += N) {
    const auto e = ExpNonPositive(d, hn::Sub(hn::LoadU(d, x + i), sh));
    hn::StoreU(e, d, y + i);
    acc = hn::Add(acc, e);
    if (++cnt == 64) {
      total += (double)hn::GetLane(hn::SumOfLanes(d, acc));
      acc = hn::Zero(d);
      cnt = 0;
    }
  }
  if (i < n) {  // the tail through a bounce buffer: the same vector code
    HWY_ALIGN T buf[hn::MaxLanes(d)];
    for (int64_t k = 0; k < N; ++k) buf[k] = i + k < n ? x[i + k] : (T)shift - T(1000);
    const auto e = ExpNonPositive(d, hn::Sub(hn::Load(d, buf), sh));  // padding gives e^-1000 = 0
    hn::Store(e, d, buf);
    for (int64_t k = 0; i + k < n; ++k) y[i + k] = buf[k];
    acc = hn::Add(acc, e);
  }
  return total + (double)hn::GetLane(hn::SumOfLanes(d, acc));
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
    hwy::FlushStream();
  }
  for (; i + N <= n; i += N) hn::StoreU(f(hn::LoadU(d, x + i)), d, y + i);
  for (; i < n; ++i) y[i] = f1(x[i]);
}

void FillKernels(KernelTable* t) {
  std::memset(t, 0, sizeof *t);
  t->target = hwy::TargetName(HWY_TARGET);
  t->exp_shift_sum[0] = &ExpShiftSum<float>;
  t->exp_shift_sum[1] = &ExpShiftSum<double>;
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

  RegFloat<FLeakyRelu>(t, CT_OP_LEAKY_RELU);
  RegFloat<FElu>(t, CT_OP_ELU);
  RegFloat<FClamp>(t, CT_OP_CLAMP);            RegInt<IClamp>(t, CT_OP_CLAMP);
  t->op[CT_OP_POW_SCALAR][CT_DT_FLOAT32] = &PowF<float>;
  t->op[CT_OP_POW_SCALAR][CT_DT_FLOAT64] = &PowF<double>;
  SetNarrow<&PowF<float>, 1>(t->op[CT_OP_POW_SCALAR]);
  RegFloat<FAddScalar>(t, CT_OP_ADD_SCALAR);   RegInt<IAddScalar>(t, CT_OP_ADD_SCALAR);
  RegFloat<FMulScalar>(t, CT_OP_MUL_SCALAR);   RegInt<IMulScalar>(t, CT_OP_MUL_SCALAR);

  for (int dt : {CT_DT_BOOL, CT_DT_INT8, CT_DT_UINT8, CT_DT_FLOAT8_E4M3FN, CT_DT_FLOAT8_E5M2, CT_DT_FLOAT8_E4M3FNUZ,
                 CT_DT_FLOAT8_E5M2FNUZ})
    t->op[CT_OP_WHERE][dt] = &WhereK<uint8_t>;
  for (int dt : {CT_DT_INT16, CT_DT_UINT16, CT_DT_FLOAT16, CT_DT_BFLOAT16}) t->op[CT_OP_WHERE][dt] = &WhereK<uint16_t>;
  for (int dt : {CT_DT_INT32, CT_DT_UINT32, CT_DT_FLOAT32}) t->op[CT_OP_WHERE][dt] = &WhereK<uint32_t>;
  for (int dt : {CT_DT_INT64, CT_DT_UINT64, CT_DT_FLOAT64}) t->op[CT_OP_WHERE][dt] = &WhereK<uint64_t>;
  RegTernaryFloat<FFma>(t, CT_OP_FMA);
  t->op[CT_OP_FMA][CT_DT_INT8] = &FmaI<i8>;
  t->op[CT_OP_FMA][CT_DT_INT16] = &FmaI<i16>;
  t->op[CT_OP_FMA][CT_DT_INT32] = &FmaI<i32>;
  t->op[CT_OP_FMA][CT_DT_INT64] = &FmaI<i64>;
  t->op[CT_OP_FMA][CT_DT_UINT8] = &FmaI<u8>;
  t->op[CT_OP_FMA][CT_DT_UINT16] = &FmaI<u16>;
  t->op[CT_OP_FMA][CT_DT_UINT32] = &FmaI<u32>;
  t->op[CT_OP_FMA][CT_DT_UINT64] = &FmaI<u64>;
  RegTernaryFloat<FLerp>(t, CT_OP_LERP);

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
