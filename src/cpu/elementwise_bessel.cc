// elementwise_bessel.cc — the Bessel functions J0, J1, Y0, Y1, the modified
// I0, I1, K0, K1 (and their exponentially scaled forms) and Airy Ai:
// float32 in float64 lanes (unary-inl.h's UnaryMasked, half an ulp and a
// hair), float64 and the lanes next to a zero by the scalar code of
// src/math/special.inc, the text the GPU modules compile too. Registered
// into the same kernel table as elementwise.cc's, per SIMD target
// (Highway's foreach_target).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/elementwise_bessel.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
#include "cpu/simd-inl.h"
#include "cpu/exp_math-inl.h"  // PosInf
#include "cpu/unary-inl.h"

#include "cpu/kernels.h"
#include "math/coefficients.h"
#include "math/special.h"

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The power series of J0 and J1 and the sums Y0 and Y1 add to them (A&S
// 9.1.10, 9.1.11 with psi(k+1) = H_k - gamma), as polynomials in t = -x^2/4
// to t^24 (the first term left out is below 1e-17 for x < 8), highest
// degree first:
//   J0 = j0(t),  Y0 = (2/pi) ((log(x/2) + gamma) J0 - s0(t)),
//   J1 = (x/2) j1(t),  Y1 = -2/(pi x) + (2/pi) log(x/2) J1 - (x/(2pi)) s1(t);
// j0's coefficients 1/(k!)^2, s0's H_k/(k!)^2, j1's 1/(k!(k+1)!), s1's
// (H_k + H_k+1 - 2 gamma)/(k!(k+1)!).
struct BesselSeries {
  static constexpr int kTerms = 25;
  static constexpr double kEuler = 0.577215664901532860606512090082402431;
  double j0[kTerms], s0[kTerms], j1[kTerms], s1[kTerms];
  constexpr BesselSeries() : j0(), s0(), j1(), s1() {
    double f = 1, h = 0;  // k!, H_k
    for (int k = 0; k < kTerms; ++k) {
      if (k > 0) f *= k, h += 1.0 / k;
      const double f1 = f * (k + 1), h1 = h + 1.0 / (k + 1);
      j0[kTerms - 1 - k] = 1 / (f * f);
      s0[kTerms - 1 - k] = h / (f * f);
      j1[kTerms - 1 - k] = 1 / (f * f1);
      s1[kTerms - 1 - k] = (h + h1 - 2 * kEuler) / (f * f1);
    }
  }
};
inline constexpr BesselSeries kBesselSeries{};

// J0, J1 (kWhich 0, 1; of |x|, J1's sign put back by the caller) and Y0,
// Y1 (2, 3) of float32 in float64 lanes, 0 < x < 39000 (Highway's Sin and
// Cos range): below 8 the series above, from 8 on Hankel's form with the
// fitted P and Q (math::kBesselP, kBesselQ) and sin and cos of x itself
// (no x - pi/4 rounded). Both have a small absolute error (the series'
// ~1e-13 from its cancellation, Hankel's ~1e-15 of the amplitude), which is
// large relative to the value only next to a zero: lanes whose value (or
// bracket, for Hankel) is below 2^-12 (2^-20 for Hankel) are cleared from
// *ok and go to the scalar code (the float64 op's: 1e-16 of the amplitude
// there, where these formulas give 1e-13).
// Elsewhere the double result is within 1e-10 relative, so the float32
// result is within half an ulp and a hair.
template <int kWhich, class D, class V, class M>
HWY_INLINE V BesselSmallLanes(D d, V x, M* redo) {  // 0 <= x < 8
  constexpr double kTwoOverPi = 0.636619772367581343075535053490057448;
  const V t = hn::Mul(hn::Mul(x, x), hn::Set(d, -0.25));
  const V small = hn::Set(d, 0x1p-12);
  if constexpr (kWhich == 0 || kWhich == 2) {
    const V j0 = Horner2(d, t, kBesselSeries.j0);
    if constexpr (kWhich == 0) {
      *redo = hn::Abs(j0) < small;
      return j0;
    } else {
      const V l = hn::Add(hn::Log(d, hn::Mul(x, hn::Set(d, 0.5))), hn::Set(d, BesselSeries::kEuler));
      const V y0 = hn::Mul(hn::Set(d, kTwoOverPi), hn::MulSub(l, j0, Horner2(d, t, kBesselSeries.s0)));
      *redo = hn::Abs(y0) < small;
      return y0;
    }
  } else {
    const V s = Horner2(d, t, kBesselSeries.j1);
    const V half = hn::Mul(x, hn::Set(d, 0.5)), j1 = hn::Mul(half, s);
    if constexpr (kWhich == 1) {
      *redo = hn::Abs(s) < small;
      return j1;
    } else {
      const V l = hn::Log(d, half);
      const V sum = hn::Mul(hn::Mul(half, hn::Set(d, 1 / 3.14159265358979323846264338327950288)),
                            Horner2(d, t, kBesselSeries.s1));  // (x/(2pi)) s1
      const V y1 = hn::Sub(hn::MulSub(hn::Mul(hn::Set(d, kTwoOverPi), l), j1, sum),
                           hn::Div(hn::Set(d, kTwoOverPi), x));
      *redo = hn::Abs(y1) < small;
      return y1;
    }
  }
}
template <int kWhich, class D, class V, class M>
HWY_INLINE V BesselLargeLanes(D d, V x, M* redo) {  // 8 <= x < 39000
  constexpr int kNu = kWhich & 1;
  const V u = hn::Div(hn::Set(d, 64.0), hn::Mul(x, x));
  const V p = hn::Add(hn::Set(d, 1.0), Horner2(d, u, math::kBesselP[kNu]));
  const V q = hn::Div(Horner2(d, u, math::kBesselQ[kNu]), x);
  const V sn = hn::Sin(d, x), cs = hn::Cos(d, x);
  const V spc = hn::Add(sn, cs), smc = hn::Sub(sn, cs);
  // sqrt2 cos w and sqrt2 sin w: nu = 0: s + c, s - c; nu = 1: s - c, -(s + c)
  const V cw = kNu ? smc : spc, sw = kNu ? hn::Neg(spc) : smc;
  const V b = kWhich < 2 ? hn::MulSub(p, cw, hn::Mul(q, sw)) : hn::MulAdd(p, sw, hn::Mul(q, cw));
  *redo = hn::Abs(b) < hn::Set(d, 0x1p-20 * 1.4142135623730951);
  return hn::Div(b, hn::Sqrt(hn::Mul(x, hn::Set(d, 3.14159265358979323846264338327950288))));
}
// A vector takes one branch when all its lanes do.
template <int kWhich> struct SBesselF32 {
  static constexpr bool kRechecks = true;
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) {
    if constexpr (kWhich < 2) return hn::Abs(x) < hn::Set(d, 39000.0);
    else return hn::And(x > hn::Set(d, 1e-30), x < hn::Set(d, 39000.0));
  }
  template <class D, class W, class M> static HWY_INLINE W v(D d, W x, M* ok) {
    const W ax = hn::Abs(x);
    const auto small = ax < hn::Set(d, 8.0);
    M redo;
    W r;
    if (hn::AllTrue(d, small)) {
      r = BesselSmallLanes<kWhich>(d, ax, &redo);
    } else if (hn::AllFalse(d, small)) {
      r = BesselLargeLanes<kWhich>(d, ax, &redo);
    } else {
      M rs, rl;
      const W a = BesselSmallLanes<kWhich>(d, ax, &rs), b = BesselLargeLanes<kWhich>(d, ax, &rl);
      r = hn::IfThenElse(small, a, b);
      redo = hn::Or(hn::And(small, rs), hn::AndNot(small, rl));
    }
    *ok = hn::AndNot(redo, *ok);
    if constexpr (kWhich == 1) r = hn::Xor(r, hn::And(x, hn::SignBit(d)));  // odd, -0 kept
    return r;
  }
  static double s(double x) { return ct::math::sf::ct_sf_bessel(x, kWhich); }
};

// I0, I1 (kScaled: e^-|x| times them) of float32 in float64 lanes: below 8
// the power series (kBesselSeries' j0, j1 at t = +x^2/4: every term
// positive, so relative accuracy throughout), from 8 on the fitted smooth
// part (math::kBesselIe, 1.5e-14) over sqrt(2 pi x) times e^x. I is even
// (I1 odd, sign put back); e^x applied while |x| < 700 (above, and NaN and
// infinities, the scalar code: I overflows float32 from 89 on anyway).
template <int kNu, int kScaled> struct SBesselIF32 {
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) {
    if constexpr (kScaled) return hn::IsFinite(x);
    else return hn::Abs(x) < hn::Set(d, 700.0);
  }
  template <class D, class W> static HWY_INLINE W v(D d, W x) {
    const W ax = hn::Abs(x);
    const auto small = ax < hn::Set(d, 8.0);
    auto series = [&] {
      const W t = hn::Mul(hn::Mul(ax, ax), hn::Set(d, 0.25));
      const W r = kNu ? hn::Mul(hn::Mul(ax, hn::Set(d, 0.5)), Horner2(d, t, kBesselSeries.j1))
                      : Horner2(d, t, kBesselSeries.j0);
      return kScaled ? hn::Mul(r, hn::Exp(d, hn::Neg(ax))) : r;
    };
    auto large = [&] {
      const W g = Horner2(d, hn::Div(hn::Set(d, 8.0), ax), math::kBesselIe[kNu]);
      const W r = hn::Div(g, hn::Sqrt(hn::Mul(ax, hn::Set(d, 2 * 3.14159265358979323846264338327950288))));
      return kScaled ? r : hn::Mul(r, hn::Exp(d, ax));
    };
    W r = RunBranch(d, small, series, large);
    if constexpr (kNu == 1) r = hn::Xor(r, hn::And(x, hn::SignBit(d)));  // odd, -0 kept
    return r;
  }
  static double s(double x) { return ct::math::sf::ct_sf_bessel_i(x, kNu, kScaled); }
};
// K0, K1 (kScaled: e^x times them) of float32 in float64 lanes for 1e-30 <
// x (< 700 unscaled, where e^-x is applied): up to 2 the scalar code's
// series (A&S 9.6.13, 9.6.11; I's sums and kBesselSeries' s0, s1 at t =
// +x^2/4), above it the fitted smooth part (math::kBesselKe, 3e-14) times
// sqrt(pi / 2x). Zero, negative, NaN and the rest: the scalar code.
template <int kNu, int kScaled> struct SBesselKF32 {
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) {
    return hn::And(x > hn::Set(d, 1e-30), x < (kScaled ? PosInf(d) : hn::Set(d, 700.0)));
  }
  template <class D, class W> static HWY_INLINE W v(D d, W x) {
    const auto small = x <= hn::Set(d, 2.0);
    auto series = [&] {
      const W t = hn::Mul(hn::Mul(x, x), hn::Set(d, 0.25));
      const W half = hn::Mul(x, hn::Set(d, 0.5)), l = hn::Log(d, half);
      W r;
      if constexpr (kNu == 0) {
        r = hn::NegMulAdd(hn::Add(l, hn::Set(d, BesselSeries::kEuler)), Horner2(d, t, kBesselSeries.j0),
                          Horner2(d, t, kBesselSeries.s0));
      } else {
        r = hn::MulAdd(hn::Mul(l, half), Horner2(d, t, kBesselSeries.j1), hn::Div(hn::Set(d, 1.0), x));
        r = hn::NegMulAdd(hn::Mul(half, hn::Set(d, 0.5)), Horner2(d, t, kBesselSeries.s1), r);
      }
      return kScaled ? hn::Mul(r, hn::Exp(d, x)) : r;
    };
    auto large = [&] {
      const W h = Horner2(d, hn::Div(hn::Set(d, 2.0), x), math::kBesselKe[kNu]);
      const W r = hn::Mul(h, hn::Sqrt(hn::Div(hn::Set(d, 3.14159265358979323846264338327950288 / 2), x)));
      return kScaled ? r : hn::Mul(r, hn::Exp(d, hn::Neg(x)));
    };
    return RunBranch(d, small, series, large);
  }
  static double s(double x) { return ct::math::sf::ct_sf_bessel_k(x, kNu, kScaled); }
};

// Airy Ai of float32 in float64 lanes, x > -1500 (zeta < 39000: Highway's
// Sin and Cos range). Between -4.327 and 2.08 the Maclaurin series (DLMF
// 9.4.1: Ai = Ai(0) f - |Ai'(0)| g, f and g polynomials in x^3 to x^57,
// the first term left out below 1e-19 of the sum), whose cancellation costs
// ~3e-15 absolute; below it the oscillating form with the fitted P and Q
// (math::kAiryP, kAiryQ) and sin and cos of zeta itself, computed as the
// scalar code computes it; above it e^-zeta times the fitted smooth part
// (math::kAiryDec; x capped at 100, where Ai is 1e-290: 0 in float32 from
// 30 on). As for J and Y, lanes next to a zero (the series' value below
// 2^-12, the oscillating bracket below 2^-20) are cleared from *ok and go
// to the scalar code; elsewhere the double result is within 1e-11 relative.
struct AirySeries {
  static constexpr int kTerms = 20;
  double f[kTerms], g[kTerms];  // 1/((2*3)(5*6)...), 1/((3*4)(6*7)...), highest first
  constexpr AirySeries() : f(), g() {
    double a = 1, b = 1;
    for (int k = 0; k < kTerms; ++k) {
      if (k > 0) a /= (3.0 * k - 1) * (3.0 * k), b /= (3.0 * k) * (3.0 * k + 1);
      f[kTerms - 1 - k] = a, g[kTerms - 1 - k] = b;
    }
  }
};
inline constexpr AirySeries kAirySeries{};
template <class D, class V, class M> HWY_INLINE V AiryMidLanes(D d, V x, M* redo) {  // -4.327 <= x <= 2.08
  const V w = hn::Mul(hn::Mul(x, x), x);
  const V f = Horner2(d, w, kAirySeries.f), g = Horner2(d, w, kAirySeries.g);
  const V r = hn::NegMulAdd(hn::Mul(x, hn::Set(d, 0.258819403792806798405)), g,
                            hn::Mul(f, hn::Set(d, 0.355028053887817239260)));
  *redo = hn::Abs(r) < hn::Set(d, 0x1p-12);
  return r;
}
template <class D, class V, class M> HWY_INLINE V AiryOscLanes(D d, V x, M* redo) {  // -1500 < x < -4.327
  const V z = hn::Neg(x), sz = hn::Sqrt(z);
  const V zeta = hn::Mul(hn::Mul(hn::Set(d, 2.0 / 3.0), z), sz);
  const V u = hn::Div(hn::Set(d, 36.0), hn::Mul(zeta, zeta));
  const V p = hn::Add(hn::Set(d, 1.0), Horner2(d, u, math::kAiryP));
  const V q = hn::Div(Horner2(d, u, math::kAiryQ), zeta);
  const V c = hn::Cos(d, zeta), s = hn::Sin(d, zeta);
  const V b = hn::MulAdd(hn::Add(c, s), p, hn::Mul(hn::Sub(s, c), q));  // sqrt2 (cos(zeta - pi/4) P + sin(..) Q)
  *redo = hn::Abs(b) < hn::Set(d, 0x1p-20 * 1.4142135623730951);
  return hn::Div(b, hn::Sqrt(hn::Mul(sz, hn::Set(d, 2 * 3.14159265358979323846264338327950288))));
}
template <class D, class V> HWY_INLINE V AiryDecLanes(D d, V x) {  // x > 2.08
  const V xc = hn::Min(x, hn::Set(d, 100.0)), sx = hn::Sqrt(xc);
  const V zeta = hn::Mul(hn::Mul(hn::Set(d, 2.0 / 3.0), xc), sx);
  const V f = hn::Add(hn::Set(d, 1.0), Horner2(d, hn::Div(hn::Set(d, 2.0), zeta), math::kAiryDec));
  const V den = hn::Mul(hn::Sqrt(sx), hn::Set(d, 3.54490770181103205459633496668229036));  // 2 sqrt(pi) x^1/4
  return hn::Div(hn::Mul(hn::Exp(d, hn::Neg(zeta)), f), den);
}
struct SAiryAiF32 {
  static constexpr bool kRechecks = true;
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) { return x > hn::Set(d, -1500.0); }
  template <class D, class W, class M> static HWY_INLINE W v(D d, W x, M* ok) {
    const M neg = x < hn::Set(d, -4.3268), pos = x > hn::Set(d, 2.0801);
    const M mid = hn::Not(hn::Or(neg, pos));
    W r = hn::Zero(d);
    M redo = hn::FirstN(d, 0), m;
    if (!hn::AllFalse(d, mid)) r = AiryMidLanes(d, x, &m), redo = hn::And(mid, m);
    if (!hn::AllFalse(d, neg)) r = hn::IfThenElse(neg, AiryOscLanes(d, x, &m), r), redo = hn::Or(redo, hn::And(neg, m));
    if (!hn::AllFalse(d, pos)) r = hn::IfThenElse(pos, AiryDecLanes(d, x), r);
    *ok = hn::AndNot(redo, *ok);
    return r;
  }
  static double s(double x) { return ct::math::sf::ct_sf_airy_ai(x); }
};

// The same functions in double per element (src/math/special.inc; float
// inputs rounded once; float32 first in the float64 lanes above);
// PyTorch's CPU kernels for them are scalar too.
template <int kWhich> struct SBessel {
  static double scalar(double x, double, double) { return ct::math::sf::ct_sf_bessel(x, kWhich); }
};
template <int kNu, int kScaled> struct SBesselI {
  static double scalar(double x, double, double) { return ct::math::sf::ct_sf_bessel_i(x, kNu, kScaled); }
};
template <int kNu, int kScaled> struct SBesselK {
  static double scalar(double x, double, double) { return ct::math::sf::ct_sf_bessel_k(x, kNu, kScaled); }
};
struct SAiryAi {
  static double scalar(double x, double, double) { return ct::math::sf::ct_sf_airy_ai(x); }
};
void FillBesselKernels(KernelTable* t) {
  RegScalar<SBessel<0>>(t, CT_OP_BESSEL_J0);
  RegScalar<SAiryAi>(t, CT_OP_AIRY_AI);
  RegMaskedF32<SAiryAiF32>(t, CT_OP_AIRY_AI);
  RegScalar<SBessel<1>>(t, CT_OP_BESSEL_J1);
  RegScalar<SBessel<2>>(t, CT_OP_BESSEL_Y0);
  RegScalar<SBessel<3>>(t, CT_OP_BESSEL_Y1);
  RegMaskedF32<SBesselF32<0>>(t, CT_OP_BESSEL_J0);
  RegMaskedF32<SBesselF32<1>>(t, CT_OP_BESSEL_J1);
  RegMaskedF32<SBesselF32<2>>(t, CT_OP_BESSEL_Y0);
  RegMaskedF32<SBesselF32<3>>(t, CT_OP_BESSEL_Y1);
  RegScalar<SBesselI<0, 0>>(t, CT_OP_MODIFIED_BESSEL_I0);
  RegScalar<SBesselI<1, 0>>(t, CT_OP_MODIFIED_BESSEL_I1);
  RegScalar<SBesselI<0, 1>>(t, CT_OP_I0E);
  RegScalar<SBesselI<1, 1>>(t, CT_OP_I1E);
  RegScalar<SBesselK<0, 0>>(t, CT_OP_MODIFIED_BESSEL_K0);
  RegScalar<SBesselK<1, 0>>(t, CT_OP_MODIFIED_BESSEL_K1);
  RegScalar<SBesselK<0, 1>>(t, CT_OP_SCALED_MODIFIED_BESSEL_K0);
  RegScalar<SBesselK<1, 1>>(t, CT_OP_SCALED_MODIFIED_BESSEL_K1);
  RegMaskedF32<SBesselIF32<0, 0>>(t, CT_OP_MODIFIED_BESSEL_I0);
  RegMaskedF32<SBesselIF32<1, 0>>(t, CT_OP_MODIFIED_BESSEL_I1);
  RegMaskedF32<SBesselIF32<0, 1>>(t, CT_OP_I0E);
  RegMaskedF32<SBesselIF32<1, 1>>(t, CT_OP_I1E);
  RegMaskedF32<SBesselKF32<0, 0>>(t, CT_OP_MODIFIED_BESSEL_K0);
  RegMaskedF32<SBesselKF32<1, 0>>(t, CT_OP_MODIFIED_BESSEL_K1);
  RegMaskedF32<SBesselKF32<0, 1>>(t, CT_OP_SCALED_MODIFIED_BESSEL_K0);
  RegMaskedF32<SBesselKF32<1, 1>>(t, CT_OP_SCALED_MODIFIED_BESSEL_K1);
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ct {
namespace cpu {
HWY_EXPORT(FillBesselKernels);
void fill_bessel_kernels(KernelTable* table) { HWY_DYNAMIC_DISPATCH(FillBesselKernels)(table); }
}  // namespace cpu
}  // namespace ct
#endif
