// exp_math-inl.h — the float transcendental cores the elementwise kernels
// share: e^x (general, normal-range fast path, e^x - 1, e^-z^2 for erfc),
// sigmoid, tanh, erfc and erf, with their specials. elementwise.cc's
// functors are one-liners over these.
// Highway's "-inl.h" convention: included once per target by foreach_target.
#if defined(CTENSOR_SRC_CPU_EXP_MATH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef CTENSOR_SRC_CPU_EXP_MATH_INL_H_
#undef CTENSOR_SRC_CPU_EXP_MATH_INL_H_
#else
#define CTENSOR_SRC_CPU_EXP_MATH_INL_H_
#endif

#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>

#include <cmath>
#include <limits>
#include <type_traits>

#include "cpu/simd-inl.h"
#include "math/coefficients.h"


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
  return hn::MulAdd(Horner(d, r, math::kExpM1), r * r, r);
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
// n = round(t / ln2) for float32 |n| <= 126 by adding 1.5 * 2^23 + 127
// (one FMA): n + 127 lands in the low mantissa bits of the sum, so shifting
// those bits into the exponent field is 2^n, with no conversion.
template <class D> struct MagicRound {
  using V = hn::Vec<D>;
  static constexpr float kMagic = 12583039.0f;
  HWY_INLINE MagicRound(D d, V t) : nb(hn::MulAdd(t, hn::Set(d, 1.44269504088896341f), hn::Set(d, kMagic))) {}
  HWY_INLINE V n(D d) const { return nb - hn::Set(d, kMagic); }  // exact (Sterbenz)
  HWY_INLINE V pow2(D d) const { return hn::BitCast(d, hn::ShiftLeft<23>(hn::BitCast(hn::RebindToSigned<D>(), nb))); }
  V nb;
};
// e^x for float32 |x| <= kExpNormal: ExpCore's reduction and polynomial,
// n by MagicRound, and 2^n applied by the last FMA. The same results as
// ExpCore there, in about two thirds of the instructions.
template <class D, class V> HWY_INLINE V ExpNormal(D d, V x) {
  const MagicRound<D> m(d, x);
  const V s = m.pow2(d);
  return hn::MulAdd(ExpM1Poly(d, ExpReduceBy(d, x, m.n(d))), s, s);  // (1 + q) 2^n rounded once, as ExpCore's
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
      const MagicRound<D> m(d, t);
      const V s = m.pow2(d);
      return hn::MulAdd(s, ExpM1Poly(d, ExpReduceBy(d, t, m.n(d))), s - hn::Set(d, 1.0f));
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
    // Lanes whose e^x rounds to 0 (-inf, the masks of attention scores) get
    // no arithmetic: through ExpCore they would make subnormal products, each
    // a microcode assist (~100x). A vector whose other lanes are normal
    // still takes ExpNormal.
    const auto zero = x < hn::Set(d, Limits<T>::kExpMin);
    const V xz = hn::IfThenElse(zero, hn::Zero(d), x);
    r = AllExpNormal(d, xz) ? ExpNormal(d, xz) : ExpCore(d, hn::Max(hn::Min(xz, hi), hn::Set(d, Limits<T>::kExpMin)));
    r = hn::IfThenElse(zero, hn::Zero(d), r);
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
// log(x) of float32 for x > 0 finite (subnormals too), without Highway's
// divide: x = 2^e m, m in [sqrt(1/2), sqrt(2)) from the bits (subnormals
// scaled by 2^23 first), f = m - 1 exact, log(m) = f - f^2/2 + f^3 P(f)
// (math::kLogF32), e ln 2 in two parts (Cephes' logf order of sums).
// Worst 0.866 ulp over every positive float32 against log in double
// (Highway's Log: 0.904 over the normal ones), 0.27 against 0.36 ns per
// element on one AVX-512 core.
// kSubnormals = false: the caller knows every lane is normal.
template <bool kSubnormals = true, class D, class V> HWY_INLINE V LogF32(D d, V x) {
  const hn::RebindToSigned<D> di;
  V ebias = hn::Zero(d);
  const auto tiny = x < hn::Set(d, 1.17549435e-38f);
  if (kSubnormals && HWY_UNLIKELY(!hn::AllFalse(d, tiny))) {
    x = hn::IfThenElse(tiny, hn::Mul(x, hn::Set(d, 8388608.0f)), x);
    ebias = hn::IfThenElseZero(tiny, hn::Set(d, -23.0f));
  }
  const auto bits = hn::BitCast(di, x);
  const auto e = hn::ShiftRight<23>(hn::Sub(bits, hn::Set(di, 0x3f3504f3)));  // the bits of sqrt(1/2)
  const V m = hn::BitCast(d, hn::Sub(bits, hn::ShiftLeft<23>(e)));
  const V f = hn::Sub(m, hn::Set(d, 1.0f));
  const V ef = hn::Add(hn::ConvertTo(d, e), ebias);
  const V f2 = hn::Mul(f, f);
  V y = hn::Mul(hn::Mul(f2, f), Horner(d, f, math::kLogF32));
  y = hn::MulAdd(ef, hn::Set(d, -2.12194440e-4f), y);  // ln 2 - 0.693359375
  y = hn::NegMulAdd(f2, hn::Set(d, 0.5f), y);
  return hn::MulAdd(ef, hn::Set(d, 0.693359375f), hn::Add(f, y));
}
// tan(x) of float32 for |x| <= Limits<float>::kTrigMax: q = round(2x/pi),
// r = x - q pi/2 by five parts of pi/2 (the first four of 8 and 9 bits, so
// q times each is exact for q < 2^15; no FMA needed, SSE4 gets the same r):
// the first two subtractions are exact, the next two keep what they round
// off (Fast2Sum: they are exact too where r is small), so r = rh + lo to
// about 2^-40 of r; tan(r) = rh + (rh^3 P(rh^2) + lo (1 + tan^2)) on
// |r| <= pi/4 (math::kTanF32), -1 / tan(r) for odd q. The float32
// nearest a multiple of pi/2 below 39000 is 4.2e-9 from it (x = 252.898,
// q = 161). Without lo, r alone was 2.7 float32 ulp off at x = 21854.
template <class D, class V> HWY_INLINE V TanF32(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V q = hn::Round(hn::Mul(x, hn::Set(d, 0.636619772367581343f)));
  const V r2 = hn::NegMulAdd(q, hn::Set(d, 4.8351287841796875e-4f), hn::NegMulAdd(q, hn::Set(d, 1.5703125f), x));
  const V c3 = hn::Mul(q, hn::Set(d, 3.13855707645416259765625e-7f));
  const V r3 = hn::Sub(r2, c3);
  const V c4 = hn::Mul(q, hn::Set(d, 6.07087713433429598808288574219e-11f));
  const V rh = hn::Sub(r3, c4);
  V lo = hn::Add(hn::Sub(hn::Sub(r2, r3), c3), hn::Sub(hn::Sub(r3, rh), c4));
  lo = hn::NegMulAdd(q, hn::Set(d, 6.223372e-14f), lo);  // pi/2 less the five parts: 2e-21 (times q)
  const V z = hn::Mul(rh, rh);
  const V s = hn::Mul(hn::Mul(rh, z), Horner(d, z, math::kTanF32));    // tan(rh) - rh
  const V u = hn::Add(rh, s);                                            // tan(rh), for the slope
  const V t = hn::Add(rh, hn::MulAdd(lo, hn::MulAdd(u, u, hn::Set(d, 1.0f)), s));  // one rounding at the end
  const auto odd = hn::RebindMask(d, hn::TestBit(hn::ConvertTo(di, q), hn::Set(di, 1)));
  const V y = hn::IfThenElse(odd, hn::Div(hn::Set(d, -1.0f), t), t);
  return hn::IfThenElse(x == hn::Zero(d), x, y);  // -0 stays -0 (r lost its sign)
}
// log1p(x) of float32 for x > -1 finite, without a divide: for x in
// [sqrt(1/2) - 1, sqrt(2) - 1), LogF32's polynomial at f = x itself (no
// rounding of 1 + x; -0 stays -0); elsewhere log(u), u = 1 + x, plus c / u,
// c = x - (u - 1) what the rounding of u lost (exact), by the approximate
// reciprocal: there |log1p(x)| > 0.34 and c / u is under half its ulp, so
// 2^-12 of it is nothing. Worst 1.278 ulp over every float32 against
// log1p in double (Goldberg's log(u) x / (u - 1) on LogF32: 2.26 on [-0.5, 0.5),
// and a divide).
template <class D, class V> HWY_INLINE V Log1pF32(D d, V x) {
  const auto near = hn::And(x >= hn::Set(d, -0.29289321881f), x < hn::Set(d, 0.41421356237f));
  auto poly = [&]() {
    const V f2 = hn::Mul(x, x);
    return hn::Add(x, hn::NegMulAdd(f2, hn::Set(d, 0.5f), hn::Mul(hn::Mul(f2, x), Horner(d, x, math::kLogF32))));
  };
  if (hn::AllTrue(d, near)) return poly();
  const V one = hn::Set(d, 1.0f), u = hn::Add(x, one);
  const V c = hn::Sub(x, hn::Sub(u, one));
  const V far = hn::MulAdd(c, hn::ApproximateReciprocal(u), LogF32(d, u));
  if (hn::AllFalse(d, near)) return far;
  return hn::IfThenElse(near, poly(), far);
}
// IEEE specials for logarithms: log(0) = -inf, log(<0) = NaN, log(inf) = inf.
template <class D, class V> HWY_INLINE V LogSpecials(D d, V x, V r) {
  r = hn::IfThenElse(x == PosInf(d), x, r);
  r = hn::IfThenElse(x == hn::Zero(d), hn::Neg(PosInf(d)), r);
  r = hn::IfThenElse(x < hn::Zero(d), QNaN(d), r);
  return KeepNaN(x, r);
}
// IEEE specials for log1p: log1p(-1) = -inf, log1p(< -1) = NaN, log1p(inf) = inf.
template <class D, class V> HWY_INLINE V Log1pSpecials(D d, V x, V r) {
  r = hn::IfThenElse(x == PosInf(d), x, r);
  r = hn::IfThenElse(x == hn::Set(d, -1), hn::Neg(PosInf(d)), r);
  r = hn::IfThenElse(x < hn::Set(d, -1), QNaN(d), r);
  return KeepNaN(x, r);
}
// log1p by Goldberg's trick, valid for all x > -1 (Highway's Log1p needs x >= 0).
template <class D, class V> HWY_INLINE V Log1pAny(D d, V x) {
  const V one = hn::Set(d, 1);
  const V u = x + one;
  const V um1 = u - one;
  const V safe_u = hn::IfThenElse(u > hn::Zero(d), u, one);
  V r = hn::Log(d, safe_u) * (x / hn::IfThenElse(um1 == hn::Zero(d), one, um1));  // x / (u - 1) first: log(u) x overflows from x ~ 4e36
  r = hn::IfThenElse(um1 == hn::Zero(d), x, r);  // u rounded to 1: log1p(x) = x
  return Log1pSpecials(d, x, r);
}
// 1 / (1 + e^-x), accurate on both tails: e = e^-|x| never overflows.
template <class D, class V> HWY_INLINE V SigmoidAcc(D d, V x) {
  using T = hn::TFromD<D>;
  const V e = ExpInRange(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, Limits<T>::kExpMin)));  // in [0, 1]
  const V s = hn::Set(d, 1) / (hn::Set(d, 1) + e);
  return KeepNaN(x, hn::IfThenElse(x < hn::Zero(d), e * s, s));
}
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
// float32 tanh on 16 lanes of AVX-512 without an exponential or a divide:
// |x| (clamped at 15.5: tanh rounds to 1 from 9.011) picks one of 32
// intervals by its bits: (bits(|x|) - bits(1/16)) >> 21 is the binade from 1/16 up
// and the quarter within it, 0 below 1/16 * 1.25. Each coefficient of the
// interval's degree-5 polynomial comes from a two-register table by one
// VPERMT2PS (math::kTanhTable); u = |x| - mid is exact (Sterbenz). About 18 instructions
// against about 31 with the divide for the exponential form, 1.30 ulp (every
// third float32 checked against long double), NumPy's approach to its
// AVX-512 tanh. minps returns its second operand when either is NaN, so a
// NaN passes through the clamp and out.
template <class D, class V> HWY_INLINE V TanhTable(D d, V x) {
  const hn::RebindToSigned<D> di;
  const V a = hn::Min(hn::Set(d, 15.5f), hn::Abs(x));
  const auto i = hn::BitCast(di, a) - hn::Set(di, 0x3D800000);  // bits of 1/16
  const __m512i idx = hn::ShiftRight<21>(hn::Max(i, hn::Zero(di))).raw;
  const auto lut = [idx](const float* t) {
    return V{_mm512_permutex2var_ps(_mm512_load_ps(t), idx, _mm512_load_ps(t + 16))};
  };
  const V u = a - lut(math::kTanhTable[0]);
  V p = hn::MulAdd(lut(math::kTanhTable[6]), u, lut(math::kTanhTable[5]));
  p = hn::MulAdd(p, u, lut(math::kTanhTable[4]));
  p = hn::MulAdd(p, u, lut(math::kTanhTable[3]));
  p = hn::MulAdd(p, u, lut(math::kTanhTable[2]));
  p = hn::MulAdd(p, u, lut(math::kTanhTable[1]));
  return hn::CopySign(p, x);  // tanh(-0) = -0
}
#endif
// tanh within 2 ulp: on AVX-512, TanhTable; elsewhere an odd polynomial
// near 0, 1 - 2 / (e^2|x| + 1) beyond.
template <class D, class V> HWY_INLINE V TanhAcc(D d, V x) {
  using T = hn::TFromD<D>;
  const V a = hn::Abs(x);
  const V one = hn::Set(d, 1);
  if constexpr (std::is_same<T, float>::value) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
    if constexpr (hn::MaxLanes(D()) == 16) return TanhTable(d, x);
#endif
    // tanh(x) = x + x^3 P(x^2) below 0.625 (math::kTanhSmall)
    const V x2 = x * x;
    const V small = hn::MulAdd(x * x2, Horner(d, x2, math::kTanhSmall), x);
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
// u * 2^n for float32, n integral in [-252, 254]: one VSCALEFPS on AVX-512
// (exact for normal and subnormal results, 0 below 2^-149), else 2^n in two
// halves (Scale2n), so subnormal results are right there too.
template <class D, class V> HWY_INLINE V MulPow2(D d, V u, V n) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  if constexpr (hn::MaxLanes(D()) == 16) return V{_mm512_scalef_ps(u.raw, n.raw)};
#endif
  return Scale2n(d, u, n);
}

// a b - p exactly, where p = a b rounded (float32 or float64, |a b| well
// inside the normal range): one FMA where the target has it, else Dekker's
// product of Veltkamp halves (SSSE3/SSE4), so e^-z^2 never sees z^2's
// rounding (and logit the rounding of its quotient).
template <class D, class V> HWY_INLINE V MulRemainder(D d, V a, V b, V p) {
#if HWY_NATIVE_FMA
  (void)d;
  return hn::MulSub(a, b, p);
#else
  using T = hn::TFromD<D>;
  const V split = hn::Set(d, T(sizeof(T) == 4 ? 4097.0 : 134217729.0));  // 2^12 + 1, 2^27 + 1
  const V ca = split * a, cb = split * b;
  const V ah = ca - (ca - a), bh = cb - (cb - b);
  const V al = a - ah, bl = b - bh;
  return ((ah * bh - p) + ah * bl + al * bh) + al * bl;
#endif
}

// erfc(z) = e^-z^2 erfcx(z), and erfcx(z) = 2 t Q(t) with t = 1 / (1 + z/2)
// (Numerical Recipes' change of variable): Q is smooth on t in [0.16, 1]
// (z in [0, 10.47]) and a polynomial of degree 9 fits it to 3e-8 relative
// (weighted least squares at 2500 Chebyshev nodes with Lawson's iteration,
// against mpmath's erfc at 40 digits; each coefficient rounded to float32
// and the rest refitted). With Q a plain polynomial, e^-z^2's argument is
// -z^2 alone: no P(t) added into the exponent, and no divide or multiply
// left after the exponential, since v t Q rides in VSCALEFPS's mantissa.
constexpr float kErfcHalfP = 0.5f;  // t = 1 / (1 + kErfcHalfP z)

// v t q 2^n e^r for -z^2 = nh + nl (HalfErfcTimes, ErfAcc), q = Q(t).
template <class D, class V> HWY_INLINE V ErfcTail(D d, V v, V t, V q, V nh, V nl) {
  const auto c = [&](float w) { return hn::Set(d, w); };
  const V n = hn::Round(nh * c(1.44269504088896341f));
  const V r = hn::MulAdd(n, c(2.12194440e-4f), hn::NegMulAdd(n, c(0.693359375f), nh)) + nl;
  const V s = MulPow2(d, v * t * q, n);
  return hn::MulAdd(ExpM1Poly(d, r), s, s);
}
// v erfc(z) / 2 for float32, 0 <= z <= 10.47 (erfc(10.47) < 2^-150),
// given den = 1 + kErfcHalfP z (its z may be larger, or inf: t -> 0 there)
// and -z^2 = nh + nl exactly (callers square their own input with an FMA,
// so z^2's rounding never reaches the exponent). Cody-Waite reduction of
// nh by n ln2 with nl added after (exact by Sterbenz when nh dominates).
// The result is rounded once from v t Q 2^n (e^r - 1) + v t Q 2^n, so it
// keeps its accuracy down into the subnormals. Measured: gelu <= 5.8 ulp
// (4.8 where it is subnormal; tests/test_elementwise.cpp).
template <class D, class V> HWY_INLINE V HalfErfcTimes(D d, V v, V den, V nh, V nl) {
  const auto c = [&](float w) { return hn::Set(d, w); };
  const V t = c(1.0f) / den;
  // Q by Estrin's scheme (depth 5 instead of Horner's 9, for the same FMAs
  // plus two squares): 5% faster than Horner on one Zen 4 core, measured.
  const V t2 = t * t, t4 = t2 * t2;
  constexpr const float* k = math::kErfcQ;
  const V q98 = hn::MulAdd(c(k[9]), t, c(k[8]));
  const V q76 = hn::MulAdd(c(k[7]), t, c(k[6]));
  const V q54 = hn::MulAdd(c(k[5]), t, c(k[4]));
  const V q32 = hn::MulAdd(c(k[3]), t, c(k[2]));
  const V q10 = hn::MulAdd(c(k[1]), t, c(k[0]));
  const V q = hn::MulAdd(hn::MulAdd(hn::MulAdd(q98, t2, q76), t4, hn::MulAdd(q54, t2, q32)), t2, q10);
  return ErfcTail(d, v, t, q, nh, nl);
}
// erf of float32: x + x q(x^2) below |x| = 1, 1 - erfc(|x|) from there
// (math::kErfSmall, kErfcQNear: fits on exactly those ranges, 7 terms
// each where the Taylor series and the erfc fit of all z took 10: 2 x 3
// FMAs less, every lane computes both). Measured over every float32 in
// [2^-20, 4.5] and their negatives against float64 erf: <= 0.99 ulp below
// 1 and <= 1.30 above (1.01 and 1.35 with the 10-term polynomials).
template <class D, class V> HWY_INLINE V ErfAcc(D d, V x) {
  const V a = hn::Abs(x);
  constexpr float kSmall = 1.0f;
  const V small = hn::MulAdd(x, Horner(d, x * x, math::kErfSmall), x);  // Horner2: 1.20 ulp at 0.998, Horner 0.99
  // erf(x) rounds to +-1 in float32 from |x| = 4 on; clamping there also keeps
  // e^-z^2 out of the subnormal range (subnormal arithmetic is ~100x slower),
  // and t = 1 / (1 + z/2) inside kErfcQNear's [1/3, 2/3] where it counts.
  const V ac = hn::Min(a, hn::Set(d, 4.0f));
  const V m = hn::Neg(ac);
  const V nh = m * ac;
  const V nl = MulRemainder(d, m, ac, nh);  // -ac^2 = nh + nl exactly
  const V t = hn::Set(d, 1.0f) / hn::MulAdd(ac, hn::Set(d, kErfcHalfP), hn::Set(d, 1));
  const V erfc = ErfcTail(d, hn::Set(d, 2.0f), t, Horner2(d, t, math::kErfcQNear), nh, nl);
  const V big = hn::CopySign(hn::Set(d, 1) - erfc, x);
  return KeepNaN(x, hn::IfThenElse(a < hn::Set(d, kSmall), small, big));
}

// softplus: max(x, 0) + log1p(e), e = e^-|x| in (0, 1]: never overflows,
// exact for large |x|. float32: log1p(e) = e + e^2 R(e) (math::kSoftplusR),
// so no log and no divide. (softplus, mish, logsigmoid)
template <class D, class V> HWY_INLINE V SoftplusAcc(D d, V x) {
  using T = hn::TFromD<D>;
  const V e = ExpInRange(d, hn::Max(hn::Neg(hn::Abs(x)), hn::Set(d, Limits<T>::kExpMin)));
  V l;
  if constexpr (std::is_same<T, float>::value) {
    l = hn::MulAdd(e * e, Horner(d, e, math::kSoftplusR), e);
  } else {
    l = Log1pAny(d, e);
  }
  return KeepNaN(x, hn::Max(x, hn::Zero(d)) + l);
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#endif  // CTENSOR_SRC_CPU_EXP_MATH_INL_H_
