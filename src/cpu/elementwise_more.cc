// elementwise_more.cc — the elementwise maps added for PyTorch's operator
// set (log10, the hyperbolic and inverse trigonometric functions, erfc,
// logit, frac, lgamma, digamma, erfinv, the activations hardsigmoid, mish,
// selu, softsign, logsigmoid, celu, hardshrink, softshrink, threshold, and
// signbit): functors registered into the same kernel table as
// elementwise.cc's, per SIMD target (Highway's foreach_target).
//
// The activations and log10 use the library's float32 math
// (exp_math-inl.h). The hyperbolic and inverse trigonometric functions and
// logit use Highway's functions on masked lanes (unary-inl.h's
// UnaryMasked): float32 in float32 lanes within Highway's 2-4 ulp (as
// NumPy's SIMD float32 functions; float64 lanes gave half an ulp at 2-3x
// the time, behind NumPy), float64 within 4 ulp; float32 erfc in float64
// lanes within one ulp. Libm per element only for the rare specials.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cpu/elementwise_more.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>
#include <hwy/contrib/math/math-inl.h>
#include "cpu/simd-inl.h"
#include "cpu/exp_math-inl.h"
#include "cpu/unary-inl.h"

#include <cmath>
#include <cstdint>

#include "cpu/kernels.h"
#include "math/coefficients.h"
#include "math/scalar.h"
#include "math/special.h"

HWY_BEFORE_NAMESPACE();
namespace ct {
namespace cpu {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// (CT_FLOAT_OP: unary-inl.h)
CT_FLOAT_OP(FLog10, return LogSpecials(d, x, hn::Log10(d, hn::IfThenElse(x > hn::Zero(d), x, hn::Set(d, 1))));)
// x - trunc(x): +-inf give NaN (inf - inf), as PyTorch; -0.5 stays negative.
CT_FLOAT_OP(FFrac, return x - hn::Trunc(x);)
// PyTorch's min(max(x + 3, 0), 6) / 6 with NaN kept (its std::max/min keep a NaN first operand).
CT_FLOAT_OP(FHardsigmoid, {
  using T = hn::TFromD<D>;
  const V r = hn::Min(hn::Max(x + hn::Set(d, T(3)), hn::Zero(d)), hn::Set(d, T(6)));
  return KeepNaN(x, r / hn::Set(d, T(6)));
})
// x tanh(softplus(x)); -inf gives NaN (-inf * 0), as PyTorch.
CT_FLOAT_OP(FMish, return x * TanhAcc(d, SoftplusAcc(d, x));)
// scale x for x >= 0 (so -0 stays -0), scale alpha (e^x - 1) below.
CT_FLOAT_OP(FSelu, {
  using T = hn::TFromD<D>;
  const V scale = hn::Set(d, T(1.0507009873554804934193349852946));
  const V alpha_scale = hn::Set(d, T(1.7580993408473768599402175208123));
  return KeepNaN(x, hn::IfThenElse(x >= hn::Zero(d), scale * x,
                                   alpha_scale * Expm1NonPositive(d, hn::Min(x, hn::Zero(d)))));
})
// x / (1 + |x|); +-inf give NaN (inf / inf), as PyTorch.
CT_FLOAT_OP(FSoftsign, return x / (hn::Set(d, 1) + hn::Abs(x));)
// log(sigmoid(x)) = -softplus(-x): no overflow, exact for large |x|.
CT_FLOAT_OP(FLogsigmoid, return hn::Neg(SoftplusAcc(d, hn::Neg(x)));)

// cosh(x) = (e^|x| + e^-|x|) / 2 where e^|x| is finite.
template <class D, class V> HWY_INLINE V CoshAny(D d, V x) {
  using T = hn::TFromD<D>;
  const V e = hn::Exp(d, hn::Abs(x));
  return hn::Mul(hn::Set(d, T(0.5)), hn::Add(e, hn::Div(hn::Set(d, T(1)), e)));
}
// logit for x in (0, 1): log(x / (1 - x)) as log y + log(q / y), q the
// exact quotient, y = x / d rounded, d = 1 - x rounded. q / y = (1 + r /
// (y d)) / (1 + e / d) with r = x - y d (exact: MulRemainder, one FMA where
// the target has it, a Dekker product on SSE4) and e = (1 - d) -
// x (exact: 1 >= x), so log(q / y) = r / x - e / d to far below an ulp of
// log y; the two reciprocals only scale terms of an ulp of y, so float32
// takes ApproximateReciprocal and one Newton step (24 bits and more). Near
// x = 1/2, where log y is small, the corrections restore what rounding y
// and d lost. One divide and one log: where 2 atanh(2x - 1) above 1/4 and
// log(x / (1 - x)) below, both computed in every lane, took three of each
// and 2.6 ulp; this is within 1.3 ulp, float32 and float64 (a standalone
// check of 7 M points against long double, dense near 0, 1/2 and 1).
template <class D, class V> HWY_INLINE V LogitAny(D d, V x) {
  using T = hn::TFromD<D>;
  const V one = hn::Set(d, T(1));
  const V dd = hn::Sub(one, x);
  const V e = hn::Sub(hn::Sub(one, dd), x);
  const V y = hn::Div(x, dd);
  const V p = hn::Mul(y, dd);
  const V r = hn::Sub(hn::Sub(x, p), MulRemainder(d, y, dd, p));  // x - p exact: p is within 2x of x
  const auto recip = [&](V a) {
    if constexpr (sizeof(T) == 8) {
      return hn::Div(one, a);
    } else {
      const V r0 = hn::ApproximateReciprocal(a);
      return hn::MulAdd(r0, hn::NegMulAdd(a, r0, one), r0);
    }
  };
  // x clamped for its reciprocal: below 1e-30, d = 1 and y = x, so r = 0
  const V corr = hn::NegMulAdd(e, recip(dd), hn::Mul(r, recip(hn::Max(x, hn::Set(d, T(1e-30))))));
  return hn::Add(hn::Log(d, y), corr);
}

// erfc of float32 in float64 lanes: erfc(|x|) = e^-x^2 2 t Q(t), t = 1 /
// (1 + |x|/2), the erfcx fit the float32 cores and the GPU share
// (math::kErfcQ, 3e-8 relative; x^2 exact in float64), e^-x^2 as 2^(-x^2
// log2 e) by Exp2Lanes (1.4e-13; Highway's float64 Exp is good to 1e-16 at
// twice the work, which float32 does not need), and 2 - erfc(|x|) below 0:
// within one float32 ulp (0.9985 at worst over every third float32 in
// [-10.5, 10.5], at x = 9.12 where erfc is 1.3e-38, as with Highway's Exp),
// where the float32 core (erf, gelu) reaches 5.5. float64 by libm per element
// (RegScalar; NumPy has no erfc).
template <class D, class V> HWY_INLINE V ErfcF64(D d, V x) {
  const V z = hn::Abs(x);
  const V t = hn::Div(hn::Set(d, 1.0), hn::MulAdd(z, hn::Set(d, 0.5), hn::Set(d, 1.0)));  // RecipNewton: 5% slower
  const V q = EstrinLowFirst(d, t, math::kErfcQ);
  const V e2 = Exp2Lanes(d, hn::Mul(hn::Mul(z, z), hn::Set(d, -1.4426950408889634074)));
  const V e = hn::Mul(hn::Mul(hn::Add(t, t), q), e2);
  return hn::IfThenElse(x < hn::Zero(d), hn::Sub(hn::Set(d, 2.0), e), e);
}

// Masked-lane ops (unary-inl.h's RegMasked, UnaryMasked): OK the mask of
// lanes the vector formula V takes (Highway's functions inside their valid
// ranges, out-of-domain inputs given NaN in the vector), S the libm call for
// the rest (NaN inputs, infinities, range ends), in double. V is generic in
// the lane type: registered with float64 lanes for float32 (half-ulp
// results) or float32 lanes (twice the lanes, Highway's float32 bounds),
// as measured per op below.
#define CT_MASKED_OP(NAME, OK, V, S)                                        \
  struct NAME {                                                              \
    template <class D, class W> static HWY_INLINE auto ok(D d, W x) {       \
      using T = hn::TFromD<D>; (void)d; (void)sizeof(T); return OK;          \
    }                                                                        \
    template <class D, class W> static HWY_INLINE W v(D d, W x) {           \
      using T = hn::TFromD<D>; (void)sizeof(T); return V;                    \
    }                                                                        \
    static double s(double x) { return S; }                                  \
  };
// e^|x| (so sinh and cosh) is finite and inside Highway's Exp range.
#define CT_EXP_OK hn::Abs(x) <= hn::Set(d, T(sizeof(T) == 4 ? 88.72 : 709.0))
#define CT_NAN_IF(C, R) hn::IfThenElse(C, QNaN(d), R)
CT_MASKED_OP(SSinh, CT_EXP_OK, hn::Sinh(d, x), std::sinh(x))
CT_MASKED_OP(SCosh, CT_EXP_OK, CoshAny(d, x), std::cosh(x))
CT_MASKED_OP(SAsin, hn::Not(hn::IsNaN(x)), CT_NAN_IF(hn::Abs(x) > hn::Set(d, T(1)), hn::Asin(d, x)), std::asin(x))
CT_MASKED_OP(SAcos, hn::Not(hn::IsNaN(x)), CT_NAN_IF(hn::Abs(x) > hn::Set(d, T(1)), hn::Acos(d, x)), std::acos(x))
CT_MASKED_OP(SAtan, hn::IsFinite(x), hn::Atan(d, x), std::atan(x))
CT_MASKED_OP(SAsinh, hn::IsFinite(x), hn::Asinh(d, x), std::asinh(x))
CT_MASKED_OP(SAcosh, hn::And(hn::Not(hn::IsNaN(x)), x != PosInf(d)), CT_NAN_IF(x < hn::Set(d, T(1)), hn::Acosh(d, x)),
             std::acosh(x))
CT_MASKED_OP(SAtanh, hn::And(hn::Not(hn::IsNaN(x)), hn::Abs(x) != hn::Set(d, T(1))),
             CT_NAN_IF(hn::Abs(x) > hn::Set(d, T(1)), hn::Atanh(d, x)), std::atanh(x))
// log(x / (1 - x)) (LogitAny); per element from 1/4 on 2 atanh(2x - 1)
// (2x - 1 exact there), so no cancellation near 1/2.
CT_MASKED_OP(SLogit, hn::And(hn::Not(hn::IsNaN(x)), hn::And(x != hn::Zero(d), x != hn::Set(d, T(1)))),
             CT_NAN_IF(hn::Or(x < hn::Zero(d), x > hn::Set(d, T(1))), LogitAny(d, x)),
             x >= 0.25 ? 2 * std::atanh(2 * x - 1) : std::log(x / (1 - x)))
CT_MASKED_OP(SErfcF32, hn::IsFinite(x), ErfcF64(d, x), std::erfc(x))
// sin(x) / x for float32 in float64 lanes (Highway's Sin: 3 float64 ulp inside +-39000), PyTorch's series
// below 1/2; the rest (infinities, NaN, far arguments) per element.
template <class D, class V> HWY_INLINE V SphJ0Lanes(D d, V x) {
  using T = hn::TFromD<D>;
  const V z = hn::Mul(x, x);
  V s = hn::Set(d, T(1.0 / 6227020800.0));
  for (double c : {-1.0 / 39916800, 1.0 / 362880, -1.0 / 5040, 1.0 / 120, -1.0 / 6, 1.0})
    s = hn::MulAdd(s, z, hn::Set(d, T(c)));
  return hn::IfThenElse(hn::Abs(x) < hn::Set(d, T(0.5)), s, hn::Div(hn::Sin(d, x), x));
}
CT_MASKED_OP(SSphJ0F32, hn::Abs(x) < hn::Set(d, T(39000)), SphJ0Lanes(d, x), ct::math::spherical_bessel_j0(x))
#undef CT_NAN_IF
#undef CT_EXP_OK
struct SErfc { static double scalar(double x, double, double) { return std::erfc(x); } };

// lgamma, digamma and erfinv per element in double (RegScalar), rounded once
// (float32 lgamma for x > 0 in vector lanes: SLgammaF32 below):
// NumPy has none of them (SciPy does), PyTorch's CPU kernels are scalar too.
// lgamma_r: std::lgamma writes the global signgam, a race between threads.
struct SLgamma {
  static double scalar(double x, double, double) {
    int sign;
    return lgamma_r(x, &sign);
  }
};
// digamma: src/math/special.inc (the GPUs compile the same text).
struct SDigamma {
  static double scalar(double x, double, double) { return ct::math::sf::ct_sf_digamma(x); }
};
// erfinv: Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems, 2011) as the start, then Newton steps on
// erf (|y| < 1/2) or on erfc(|x|) = 1 - |y| (1 - |y| exact there) until
// the step is below an ulp (two near 0, up to ~8 in the far tails). erfinv(+-1) =
// +-inf, NaN outside [-1, 1]. (float32 and the narrow types: fitted to double
// accuracy in Giles' variable, in vector lanes: SErfinvF32 below.)
// Giles' start: erfinv(y) ~ y p(w), w = -log((1 - y)(1 + y)); p = central(w - 2.5)
// below w = 5, tail(sqrt(w) - 3) from it (highest degree first).
constexpr double kGilesCentral[9] = {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                                     -0.00125372503, -0.00417768164, 0.246640727, 1.50140941};
constexpr double kGilesTail[9] = {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                                  -0.0076224613, 0.00943887047, 1.00167406, 2.83297682};
struct SErfinv {
  static constexpr int kMaxSteps = 12;
  static double scalar(double y, double, double) {
    const double a = std::fabs(y);
    if (!(a <= 1)) return std::nan("");
    if (a == 1) return std::copysign(HUGE_VAL, y);
    if (y == 0) return y;
    double w = -std::log((1 - a) * (1 + a)), p = 0;
    const bool central = w < 5;
    w = central ? w - 2.5 : std::sqrt(w) - 3;
    for (double c : central ? kGilesCentral : kGilesTail) p = p * w + c;
    double x = p * a;
    constexpr double k2SqrtPi = 1.1283791670955125739;  // 2 / sqrt(pi)
    for (int it = 0; it < kMaxSteps; ++it) {  // 2 near 0; up to ~8 in the far tails, where the start is further off
      const double d = k2SqrtPi * std::exp(-x * x);
      const double step = a < 0.5 ? (std::erf(x) - a) / d : ((1 - a) - std::erfc(x)) / d;
      x -= step;
      if (!(std::fabs(step) > 1e-17 * x)) break;
    }
    return std::copysign(x, y);
  }
};

// x - tanh(x) (PyTorch's tanhshrink: the same cancellation near 0).
CT_FLOAT_OP(FTanhshrink, return x - TanhAcc(d, x);)
// Degrees and radians: one multiplication by the constant rounded to T, as NumPy and PyTorch.
CT_FLOAT_OP(FDeg2Rad, using T = hn::TFromD<D>; return x * hn::Set(d, T(0.017453292519943295769236907684886127));)
CT_FLOAT_OP(FRad2Deg, using T = hn::TFromD<D>; return x * hn::Set(d, T(57.295779513082320876798154814105170));)

// sinc, ndtr, ndtri, entr in double per element (float inputs rounded once).
constexpr double kPiSinc = 3.14159265358979323846264338327950288;
struct SSinc {
  static double scalar(double x, double, double) {
    if (x == 0) return 1.0;
    const double px = kPiSinc * x;
    return std::sin(px) / px;
  }
};
struct SNdtr {
  static double scalar(double x, double, double) { return 0.5 * std::erfc(-x * 0.70710678118654752440084436210484904); }
};
// The inverse of ndtr: Acklam's rational start (1.2e-9 relative), then
// Newton steps on ndtr itself through erfc of the tail that keeps its
// digits (lower tail erfc(-x/sqrt2), upper tail by symmetry): full double
// precision from p = 1e-300 to 1 - 2^-53.
struct SNdtri {
  // Acklam's coefficients: a/b the central rational in r = (p - 1/2)^2, c/e
  // the tail's in sqrt(-2 log p) (b and e without their final 1); the
  // float32 vector form (NdtriStartLanes) reads them too.
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double e[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  static double start(double p) {
    if (p < 0.02425) {
      const double q = std::sqrt(-2 * std::log(p));
      return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
             ((((e[0] * q + e[1]) * q + e[2]) * q + e[3]) * q + 1);
    }
    const double q = p - 0.5, r = q * q;
    return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
           (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
  }
  static double scalar(double p, double, double) {
    if (!(p >= 0 && p <= 1)) return std::numeric_limits<double>::quiet_NaN();
    if (p == 0) return -std::numeric_limits<double>::infinity();
    if (p == 1) return std::numeric_limits<double>::infinity();
    // the lower half as is; the upper half as -ndtri(1 - p) where 1 - p is exact (p >= 1/2)
    const bool upper = p > 0.5;
    const double t = upper ? 1 - p : p;
    double x = start(t);
    for (int it = 0; it < 3; ++it) {  // x <= 0: ndtr(x) = erfc(-x / sqrt 2) / 2 keeps its digits
      const double f = 0.5 * std::erfc(-x * 0.70710678118654752440084436210484904) - t;
      const double dens = 0.39894228040143267793994605993438187 * std::exp(-0.5 * x * x);
      if (!(dens > 0)) break;
      const double step = f / dens;
      x -= step / (1 + 0.5 * x * step);  // Halley
    }
    return upper ? -x : x;
  }
};
// Shannon's entropy term: -x log x; 0 at 0 (the limit); -inf below 0 (PyTorch's entr).
struct SEntr {
  static double scalar(double x, double, double) {
    if (x != x) return x;
    if (x > 0) return -x * std::log(x);
    return x == 0 ? 0.0 : -std::numeric_limits<double>::infinity();
  }
};

// float32 (and the narrow types) of sinc, ndtri and entr in float64 lanes
// (UnaryMasked), the scalar forms above for the rest. sinc: Highway's Sin
// of pi x (3 float64 ulp while |pi x| < 39000), the same double formula
// rounded once; entr: -x log x for finite x > 0, the same. (ndtr through
// ErfcF64's float32 fit measured 1 ulp off the rounded double value in 8%
// of float32 results; it has its own lanes below, SNdtrF32.)
CT_MASKED_OP(SSincF32, hn::Abs(x) < hn::Set(d, T(12000)),
             hn::IfThenElse(x == hn::Zero(d), hn::Set(d, T(1)),
                            hn::Div(hn::Sin(d, hn::Mul(x, hn::Set(d, T(kPiSinc)))), hn::Mul(x, hn::Set(d, T(kPiSinc))))),
             SSinc::scalar(x, 0, 0))
CT_MASKED_OP(SEntrF32, hn::And(x > hn::Zero(d), x < PosInf(d)), hn::Neg(hn::Mul(x, hn::Log(d, x))),
             SEntr::scalar(x, 0, 0))
// ndtri of float32 in float64 lanes: Acklam's rational start alone (the
// same as SNdtri::start, 1.15e-9 relative over (0, 1), 2% of a float32
// ulp, so within 0.52 ulp after the one rounding); p outside (0, 1) and NaN
// per element. The upper half as -ndtri(1 - p), 1 - p exact.
template <class D, class V> HWY_INLINE V NdtriStartLanes(D d, V p) {
  const V half = hn::Set(d, 0.5), one = hn::Set(d, 1.0);
  const auto upper = p > half;
  const V t = hn::IfThenElse(upper, hn::Sub(one, p), p);
  auto poly = [&](V z, const auto& c) {  // Horner, c[0] the leading coefficient
    V r = hn::Zero(d);
    for (double k : c) r = hn::MulAdd(r, z, hn::Set(d, k));
    return r;
  };
  // central: q = t - 1/2, r = q^2
  const V q = hn::Sub(t, half), r = hn::Mul(q, q);
  const V mid = hn::Div(hn::Mul(poly(r, SNdtri::a), q), hn::MulAdd(poly(r, SNdtri::b), r, one));
  // tail: s = sqrt(-2 log t) (t < 0.02425)
  const V s = hn::Sqrt(hn::Mul(hn::Set(d, -2.0), hn::Log(d, t)));
  const V tail = hn::Div(poly(s, SNdtri::c), hn::MulAdd(poly(s, SNdtri::e), s, one));
  const V x = hn::IfThenElse(t < hn::Set(d, 0.02425), tail, mid);
  return hn::IfThenElse(upper, hn::Neg(x), x);
}
CT_MASKED_OP(SLgammaF32, hn::And(x > hn::Zero(d), x < PosInf(d)), LgammaPosLanes(d, x), SLgamma::scalar(x, 0, 0))
CT_MASKED_OP(SNdtriF32, hn::And(x > hn::Zero(d), x < hn::Set(d, T(1))), NdtriStartLanes(d, x), SNdtri::scalar(x, 0, 0))

// ndtr and log_ndtr of float32 in float64 lanes, finite x (NaN and the
// infinities per element): ndtr(-y) = phi(y) m(y) for y = |x| with the
// fitted Mills ratio (math::kNdtrMills, 1e-14 relative for every y >= 0)
// and y^2 exact in double (x^2 of a float32 neither overflows nor rounds);
// the upper half 1 - ndtr(-x) (at least 1/2: no cancellation). log_ndtr
// below 0 is -y^2/2 - log sqrt(2 pi) + log m(y) (no exp to underflow),
// log1p(-ndtr(-x)) above. Both within 1e-13 relative in double: half a
// float32 ulp and a hair of the scalar forms.
constexpr double kInvSqrt2Pi = 0.398942280401432677939946059934381868;
template <class D, class V> HWY_INLINE V NdtrMillsLanes(D d, V y) {  // m(y), 0 <= y < inf
  const V t = hn::Mul(hn::Set(d, 4.0), RecipNewton(d, hn::Add(y, hn::Set(d, 4.0))));
  return hn::Mul(t, Horner2(d, t, math::kNdtrMills));
}
// ndtr(-x), and m(|x|) in *m
// (e^-y^2/2 at y capped at 20: float32's ndtr(-y) is 0 from 14.1 on, and
// the factor stays a normal double, where subnormals would cost microcode
// assists and Highway's Exp would leave its range)
template <class D, class V> HWY_INLINE V NdtrUpperLanes(D d, V x, V* m) {
  const V y = hn::Abs(x), yc = hn::Min(y, hn::Set(d, 20.0));
  *m = NdtrMillsLanes(d, y);
  const V e = hn::Exp(d, hn::Mul(hn::Mul(yc, yc), hn::Set(d, -0.5)));
  const V q = hn::Mul(hn::Mul(e, hn::Set(d, kInvSqrt2Pi)), *m);  // ndtr(-|x|)
  return hn::IfThenElse(x > hn::Zero(d), q, hn::Sub(hn::Set(d, 1.0), q));
}
struct SNdtrF32 {
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) { (void)d; return hn::IsFinite(x); }
  template <class D, class W> static HWY_INLINE W v(D d, W x) {
    W m;
    return NdtrUpperLanes(d, hn::Neg(x), &m);
  }
  static double s(double x) { return SNdtr::scalar(x, 0, 0); }
};
struct SLogNdtrF32 {
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) { (void)d; return hn::IsFinite(x); }
  template <class D, class W> static HWY_INLINE W v(D d, W x) {
    const auto low = x < hn::Zero(d);
    auto lower = [&](W m) {  // -y^2/2 - log sqrt(2 pi) + log m(y)
      return hn::Sub(hn::MulAdd(hn::Mul(x, x), hn::Set(d, -0.5), hn::Log(d, m)),
                     hn::Set(d, 0.918938533204672741780329736405617640));
    };
    if (hn::AllTrue(d, low)) return lower(NdtrMillsLanes(d, hn::Neg(x)));
    W m;
    const W upper = hn::Log1p(d, hn::Neg(NdtrUpperLanes(d, x, &m)));
    if (hn::AllFalse(d, low)) return upper;
    return hn::IfThenElse(low, lower(m), upper);
  }
  static double s(double x) { return ct::math::log_ndtr(x); }
};
// erfcx of float32 in float64 lanes through the same Mills ratio: erfcx(x)
// = sqrt(2/pi) m(sqrt2 x) for x >= 0 (1e-14 relative), 2 e^(x^2) -
// erfcx(-x) below (x^2 exact; the difference at least e^(x^2), no
// cancellation); x below -26 (where e^(x^2) leaves Highway's Exp range;
// float32's erfcx is inf from -9.4 on), infinities and NaN per element.
struct SErfcxF32 {
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) {
    return hn::And(x > hn::Set(d, -26.0), x < PosInf(d));
  }
  template <class D, class W> static HWY_INLINE W v(D d, W x) {
    const W pos = hn::Mul(hn::Set(d, 0.797884560802865355879892119868763737),
                          NdtrMillsLanes(d, hn::Mul(hn::Abs(x), hn::Set(d, 1.41421356237309504880168872420969808))));
    const auto neg = x < hn::Zero(d);
    if (hn::AllFalse(d, neg)) return pos;
    return hn::IfThenElse(neg, hn::MulSub(hn::Set(d, 2.0), hn::Exp(d, hn::Mul(x, x)), pos), pos);
  }
  static double s(double x) { return ct::math::erfcx(x); }
};

// erfinv of float32 in float64 lanes, |y| < 1 (the rest per element): y
// F(w), w = -ln 2 log2((1 - |y|)(1 + |y|)) (both factors and their product
// exact for float32 y; Log2Lanes, no divide), F the fitted
// math::kErfinvCentral, kErfinvTail (1e-10 relative): no Newton step, unlike
// the scalar code. Within half a float32 ulp and a hair of the float64 op.
struct SErfinvF32 {
  template <class D, class W> static HWY_INLINE auto ok(D d, W y) { return hn::Abs(y) < hn::Set(d, 1.0); }
  template <class D, class W> static HWY_INLINE W v(D d, W y) {
    const W one = hn::Set(d, 1.0), a = hn::Abs(y);
    // w / 6.25 = -(0.16 ln 2) log2(...): one product
    const W w16 = hn::Mul(Log2Lanes(d, hn::Mul(hn::Sub(one, a), hn::Add(one, a))),
                          hn::Set(d, -0.16 * 0.693147180559945309417));
    const W f = RunBranch(
        d, w16 < one, [&] { return Estrin(d, w16, math::kErfinvCentral); },
        [&] {
          const W w = hn::Mul(w16, hn::Set(d, 6.25));
          const W v = hn::Mul(hn::Sub(hn::Sqrt(w), hn::Set(d, 2.5)), hn::Set(d, 1 / 1.7));
          return Estrin(d, v, math::kErfinvTail);
        });
    return hn::Mul(f, y);
  }
  static double s(double x) { return SErfinv::scalar(x, 0, 0); }
};
// digamma of float32 in float64 lanes, finite x off the poles (zero, the
// negative integers and the infinities per element): below 0 the scalar
// code's reflection, psi(1 - x) - pi / tan(pi f), f = x - rint(x) (exact),
// the tangent as cos / sin; then x shifted up to z >= 10 (the sum of the
// 1/(x + k) left behind kept as one fraction: one division), and the scalar
// code's asymptotic series, ln z - 1/2z - sum B_2k / (2k z^2k) to z^-14.
// Its error is absolute (~5e-16 of the terms): lanes whose value is below
// 2^-12, next to a zero (1.4616, and one between each two negative poles),
// are cleared from *ok and go to the scalar code, as the float64 op.
struct SDigammaF32 {
  static constexpr bool kRechecks = true;
  template <class D, class W> static HWY_INLINE auto ok(D d, W x) {
    return hn::And(hn::IsFinite(x), hn::Or(x > hn::Zero(d), hn::Ne(x, hn::Round(x))));
  }
  template <class D, class W, class M> static HWY_INLINE W v(D d, W x, M* ok) {
    constexpr double kPi = 3.14159265358979323846264338327950288;
    const W one = hn::Set(d, 1.0), ten = hn::Set(d, 10.0);
    const M neg = x < hn::Zero(d);
    const bool any_neg = !hn::AllFalse(d, neg);
    W z = any_neg ? hn::IfThenElse(neg, hn::Sub(one, x), x) : x;
    W num = hn::Zero(d), den = one;
    for (int k = 0; k < 10; ++k) {  // sum so far = num / den; + 1/z: (num z + den) / (den z)
      const auto m = z < ten;
      if (hn::AllFalse(d, m)) break;
      num = hn::IfThenElse(m, hn::MulAdd(num, z, den), num);
      den = hn::IfThenElse(m, hn::Mul(den, z), den);
      z = hn::IfThenElse(m, hn::Add(z, one), z);
    }
    const W rz = hn::Div(one, z), r2 = hn::Mul(rz, rz);
    const W s = Horner2(d, r2, kDigammaAsym);
    W r = hn::Sub(hn::Sub(hn::Log(d, z), hn::Div(num, den)), hn::MulAdd(hn::Set(d, 0.5), rz, hn::Mul(r2, s)));
    if (any_neg) {
      const W a = hn::Mul(hn::Sub(x, hn::Round(x)), hn::Set(d, kPi));
      const W c = hn::Div(hn::Mul(hn::Set(d, kPi), hn::Cos(d, a)), hn::Sin(d, a));  // pi / tan(pi f)
      r = hn::IfThenElse(neg, hn::Sub(r, c), r);
    }
    *ok = hn::AndNot(hn::Abs(r) < hn::Set(d, 0x1p-12), *ok);
    return r;
  }
  static double s(double x) { return SDigamma::scalar(x, 0, 0); }
  // the scalar code's B_2k / 2k from z^-14 down to z^-2
  static constexpr double kDigammaAsym[7] = {1.0 / 12, -691.0 / 32760, 1.0 / 132, -1.0 / 240, 1.0 / 252, -1.0 / 120,
                                             1.0 / 12};
};
#undef CT_MASKED_OP

// erfcx, log_ndtr, spherical_bessel_j0 in double per element (src/math/scalar.h;
// float32 in float64 lanes first: SErfcxF32, SLogNdtrF32, SSphJ0F32).
struct SErfcx {
  static double scalar(double x, double, double) { return ct::math::erfcx(x); }
};
struct SLogNdtr {
  static double scalar(double x, double, double) { return ct::math::log_ndtr(x); }
};
struct SSphJ0 {
  static double scalar(double x, double, double) { return ct::math::spherical_bessel_j0(x); }
};

// polygamma and mvlgamma of src/math/special.inc in double per element (float
// inputs rounded once); PyTorch's CPU kernels for them are scalar too.
struct SPolygamma {
  static double scalar(double x, double n, double) { return ct::math::sf::ct_sf_polygamma(n, x); }
};
struct SMvlgamma {
  static double scalar(double x, double p, double) { return ct::math::sf::ct_sf_mvlgamma(x, p); }
};

// round(x, decimals) as NumPy and PyTorch, in the dtype's arithmetic (float
// for the half types): rint(x * 10^d) / 10^d, or rint(x / 10^-d) * 10^-d for
// d < 0, 10^|d| the double power rounded to T (core checked d is an integer).
template <class T>
void RoundDecimalsK(char* const* p, int64_t n, const double* prm) {
  T* y = reinterpret_cast<T*>(p[0]);
  const T* x = reinterpret_cast<const T*>(p[1]);
  const double dec = prm[0];
  const T ten = (T)std::pow(10.0, std::fabs(dec));
  if (dec < 0)
    for (int64_t i = 0; i < n; ++i) y[i] = std::nearbyint(x[i] / ten) * ten;
  else
    for (int64_t i = 0; i < n; ++i) y[i] = std::nearbyint(x[i] * ten) / ten;
}

// The parametrised activations (p0, p1: the row's parameters).
// PyTorch's softplus(beta, threshold): x where beta x > threshold, else softplus(beta x) / beta.
CT_FLOAT_OP(FSoftplusBeta, {
  const V bx = x * p0;
  return hn::IfThenElse(bx > p1, x, SoftplusAcc(d, bx) / p0);
})
// celu: x >= 0 keeps x (so -0 stays -0, as elu); alpha (e^(x/alpha) - 1) below.
CT_FLOAT_OP(FCelu, return KeepNaN(x, hn::IfThenElse(x >= hn::Zero(d), x, p0 * SafeExpm1(d, x / p0)));)
// PyTorch's: 0 for -lambd <= x <= lambd, x elsewhere (NaN stays NaN).
CT_FLOAT_OP(FHardshrink, return hn::IfThenElse(hn::And(x >= hn::Neg(p0), x <= p0), hn::Zero(d), x);)
// PyTorch's: x -+ lambd outside [-lambd, lambd], x * 0 inside (NaN stays NaN, -0 stays -0).
CT_FLOAT_OP(FSoftshrink,
            return hn::IfThenElse(x > p0, x - p0, hn::IfThenElse(x < hn::Neg(p0), x + p0, x * hn::Zero(d)));)
// PyTorch's threshold: value where x <= threshold (NaN stays NaN).
CT_FLOAT_OP(FThreshold, return hn::IfThenElse(x <= p0, p1, x);)

// positive: +x, a copy (in place: exactly x, so memmove).
CT_FLOAT_OP(FPositive, return x;)
template <class T>
void CopyK(char* const* p, int64_t n, const double*) {
  std::memmove(p[0], p[1], (size_t)n * sizeof(T));
}

// signbit: the sign bit of floats (-0 and negative NaN included), x < 0 of integers.
template <class T>
void SignbitK(char* const* p, int64_t n, const double*) {
  uint8_t* y = reinterpret_cast<uint8_t*>(p[0]);
  const T* x = reinterpret_cast<const T*>(p[1]);
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_floating_point<T>::value) y[i] = std::signbit(x[i]) ? 1 : 0;
    else if constexpr (std::is_signed<T>::value) y[i] = x[i] < 0 ? 1 : 0;
    else y[i] = 0;
  }
}

void FillMoreKernels(KernelTable* t) {
  RegFloat<FLog10>(t, CT_OP_LOG10);
  RegMasked<SSinh, float>(t, CT_OP_SINH);
  RegMasked<SCosh, float>(t, CT_OP_COSH);
  RegMasked<SAsin, float>(t, CT_OP_ASIN);
  RegMasked<SAcos, float>(t, CT_OP_ACOS);
  RegMasked<SAtan, float>(t, CT_OP_ATAN);
  RegMasked<SAsinh, float>(t, CT_OP_ASINH);
  RegMasked<SAcosh, float>(t, CT_OP_ACOSH);
  RegMasked<SAtanh, float>(t, CT_OP_ATANH);
  RegScalar<SErfc>(t, CT_OP_ERFC);
  RegMaskedF32<SErfcF32>(t, CT_OP_ERFC);
  RegMasked<SLogit, float>(t, CT_OP_LOGIT);
  RegFloat<FFrac>(t, CT_OP_FRAC);
  RegFloat<FHardsigmoid>(t, CT_OP_HARDSIGMOID);
  RegFloat<FMish>(t, CT_OP_MISH);
  RegFloat<FSelu>(t, CT_OP_SELU);
  RegFloat<FSoftsign>(t, CT_OP_SOFTSIGN);
  RegFloat<FLogsigmoid>(t, CT_OP_LOGSIGMOID);
  RegScalar<SLgamma>(t, CT_OP_LGAMMA);
  RegMaskedF32<SLgammaF32>(t, CT_OP_LGAMMA);
  RegScalar<SDigamma>(t, CT_OP_DIGAMMA);
  RegScalar<SErfinv>(t, CT_OP_ERFINV);
  RegMaskedF32<SErfinvF32>(t, CT_OP_ERFINV);
  RegMaskedF32<SDigammaF32>(t, CT_OP_DIGAMMA);
  RegFloat<FCelu>(t, CT_OP_CELU);
  RegFloat<FHardshrink>(t, CT_OP_HARDSHRINK);
  RegFloat<FSoftshrink>(t, CT_OP_SOFTSHRINK);
  RegFloat<FThreshold>(t, CT_OP_THRESHOLD);
  RegFloat<FTanhshrink>(t, CT_OP_TANHSHRINK);
  RegFloat<FDeg2Rad>(t, CT_OP_DEG2RAD);
  RegFloat<FRad2Deg>(t, CT_OP_RAD2DEG);
  RegScalar<SSinc>(t, CT_OP_SINC);
  RegScalar<SNdtr>(t, CT_OP_NDTR);
  RegScalar<SNdtri>(t, CT_OP_NDTRI);
  RegScalar<SEntr>(t, CT_OP_ENTR);
  RegMaskedF32<SSincF32>(t, CT_OP_SINC);
  RegMaskedF32<SNdtriF32>(t, CT_OP_NDTRI);
  RegMaskedF32<SNdtrF32>(t, CT_OP_NDTR);
  RegMaskedF32<SEntrF32>(t, CT_OP_ENTR);
  RegScalar<SErfcx>(t, CT_OP_ERFCX);
  RegScalar<SLogNdtr>(t, CT_OP_LOG_NDTR);
  RegMaskedF32<SLogNdtrF32>(t, CT_OP_LOG_NDTR);
  RegMaskedF32<SErfcxF32>(t, CT_OP_ERFCX);
  RegScalar<SSphJ0>(t, CT_OP_SPHERICAL_BESSEL_J0);
  RegMaskedF32<SSphJ0F32>(t, CT_OP_SPHERICAL_BESSEL_J0);
  RegScalar<SPolygamma>(t, CT_OP_POLYGAMMA);
  RegScalar<SMvlgamma>(t, CT_OP_MVLGAMMA);
  RegFloat<FSoftplusBeta>(t, CT_OP_SOFTPLUS_BETA);
  t->op[CT_OP_ROUND_DECIMALS][CT_DT_FLOAT32] = &RoundDecimalsK<float>;
  t->op[CT_OP_ROUND_DECIMALS][CT_DT_FLOAT64] = &RoundDecimalsK<double>;
  SetNarrow<&RoundDecimalsK<float>, 1>(t->op[CT_OP_ROUND_DECIMALS]);
  RegFloat<FPositive>(t, CT_OP_POSITIVE);
  ForEachInt([&](auto lane, int dt) {
    using T = decltype(lane);
    t->op[CT_OP_POSITIVE][dt] = &Staged<&CopyK<T>, sizeof(T), sizeof(T)>;
  });

  ContigKernel* sb = t->op[CT_OP_SIGNBIT];
  sb[CT_DT_FLOAT32] = &Staged<&SignbitK<float>, 1, 4>;
  sb[CT_DT_FLOAT64] = &Staged<&SignbitK<double>, 1, 8>;
  SetNarrow<&SignbitK<float>, 1, true>(sb);
  ForEachInt([&](auto lane, int dt) {
    using T = decltype(lane);
    sb[dt] = &Staged<&SignbitK<T>, 1, sizeof(T)>;
  });
  sb[CT_DT_BOOL] = &Staged<&SignbitK<uint8_t>, 1, 1>;
}

}  // namespace HWY_NAMESPACE
}  // namespace cpu
}  // namespace ct
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ct {
namespace cpu {
HWY_EXPORT(FillMoreKernels);
void fill_more_kernels(KernelTable* table) { HWY_DYNAMIC_DISPATCH(FillMoreKernels)(table); }
}  // namespace cpu
}  // namespace ct
#endif
