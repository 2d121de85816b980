// math.cc — the GPU modules' own float32 transcendentals, in the OpenCL C
// both dialects compile (source.h).
//
// Why: a PoCL device turns the work-items of a group into a loop and
// vectorises it; a call it cannot inline (its sin, erf, pow, and any helper
// it judges too costly) keeps the whole loop scalar, at 7-12 ns per element
// where a vectorised loop spends 0.3-0.7. So every helper here is
// straight-line code of selects (no branches, no loops, no calls), marked
// always-inline (CT_INL), with the algorithms of the CPU backend's SIMD
// kernels:
//  - e^x: Cody-Waite reduction by n ln2 and Cephes' expf polynomial, 2^n
//    applied in two halves so subnormal results are right; e^x - 1 and 2^x
//    from the same polynomial; sigmoid, tanh (odd polynomial near 0),
//    softplus and silu on top of it;
//    (the polynomials' coefficients are the CPU's: src/math/coefficients.h,
//    printed into the source as macros)
//  - log: fdlibm's reduction and minimax polynomial (e_logf.c: "Developed
//    at SunPro, a Sun Microsystems, Inc. business. Permission to use, copy,
//    modify, and distribute this software is freely granted, provided that
//    this notice is preserved."), log1p by correcting the rounding of 1 + x;
//  - erf, erfc (gelu): Taylor series near 0, beyond it e^-z^2 (from an
//    exactly split z^2) times a polynomial fit of erfcx in Numerical
//    Recipes' t = 1 / (1 + z/2);
//  - sin, cos, tan (where the device has float64): Payne-Hanek reduction
//    without branches, from a table of (2^E 2/pi) mod 4 per exponent E in
//    two doubles (built below from the digits of 2/pi), then Taylor
//    polynomials in double on [-pi/4, pi/4]: right for every float input;
//    up to 2^30 in magnitude, a two-part Cody-Waite reduction in double
//    gives the same bits without the table (the contiguous kernels take
//    that fast form and the table only for the rare huge or non-finite
//    argument: ElemRow::rare);
//  - pow (float64 devices): log2 and exp2 in double, IEEE specials by
//    selects (for finite x and y, the fast form skips most of them);
//    atan2 and hypot in double likewise.
// float64 kernels keep the built-ins (their vector forms are not the
// bottleneck there: PoCL inlines exp and log for double too, and nothing
// else is claimed for float64).
#include "source.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "math/coefficients.h"

namespace ctgpu {
namespace {

// 2/pi in hexadecimal (0.a2f9836e...): 384 bits, more than the table needs
// (bits up to 104 - 2 + 2 * 53 = 208).
const char k2OverPiHex[] =
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006492eea09d1921c";

int bit_of_2_over_pi(int i) {  // bit i has weight 2^-(i + 1); 0 before the point
  if (i < 0) return 0;
  const char c = k2OverPiHex[i / 4];
  const int v = c <= '9' ? c - '0' : c - 'a' + 10;
  return (v >> (3 - i % 4)) & 1;
}

// The 53 bits from bit `start` on, as the double they weigh.
double bits53(int start) {
  uint64_t h = 0;
  for (int i = 0; i < 53; ++i) h = (h << 1) | (uint64_t)bit_of_2_over_pi(start + i);
  return std::ldexp((double)h, -(start + 53));
}

// T[E] = (2^E * 2/pi) mod 4 for E = 2..104, as hi + lo (106 bits, so m T[E]
// is within 2^-80 of the exact product: float arguments come no closer than
// 2^-40 to a multiple of pi/2): for x = m 2^E with an integral m,
// x 2/pi = m T[E] mod 4.
std::string trig_table() {
  std::string s = "CT_TABLE double ct_pio2_tab[" + std::to_string(2 * 103) + "] = {\n";
  char buf[64];
  for (int e = 2; e <= 104; ++e) {
    for (int j = 0; j < 2; ++j) {  // bits from weight 2^1 on: bit index e - 2
      std::snprintf(buf, sizeof buf, "%a,", std::ldexp(bits53(e - 2 + 53 * j), e));
      s += buf;
    }
    s += e % 2 ? "\n" : "";
  }
  return s + "};\n";
}

// The fits both backends share (src/math/coefficients.h), as the macros
// kMath uses, in hexadecimal so every bit is the CPU's: CT_<NAME>(x), the
// polynomial of a table in Horner order (highest first) as nested fmas,
// the FMAs the CPU's Horner() does; CT_<NAME>_<i>, coefficient i, for
// erfcx's Q, which is evaluated by Estrin's scheme.
std::string coefficient_macros() {
  std::string s;
  char buf[64];
  const auto hex = [&](float c) {
    std::snprintf(buf, sizeof buf, "%af", (double)c);
    return std::string(buf);
  };
  const auto horner = [&](const char* name, const float* c, int n) {
    std::string p = hex(c[0]);
    for (int i = 1; i < n; ++i) p = "fma(" + p + ", (x), " + hex(c[i]) + ")";
    s += std::string("#define CT_") + name + "(x) " + p + "\n";
  };
  horner("EXPM1", ct::math::kExpM1, 6);       // e^r - 1 = r + r^2 P(r)
  horner("TANHS", ct::math::kTanhSmall, 6);   // (tanh x - x) / x^3 in x^2
  horner("SPLUSR", ct::math::kSoftplusR, 10); // softplus's R(e)
  horner("ERFT", ct::math::kErfTaylor, 10);   // erf's q(x^2)
  for (int i = 0; i < 10; ++i) s += "#define CT_ERFCQ_" + std::to_string(i) + " " + hex(ct::math::kErfcQ[i]) + "\n";
  return s;
}

const char kMath[] = R"CL(
/* Round to nearest even for |x| <= 2^22 (float) or 2^51 (double), by adding
   and subtracting 1.5 * 2^23 (2^52): PoCL's rint is a 20-instruction
   sequence where this is two. */
CT_INL float ct_rnd(float x) { return (x + 12582912.0f) - 12582912.0f; }
/* e^r - 1 for |r| <= ln2/2 (Cephes' expf polynomial before its 1). */
CT_INL float ct_em1p(float r) {
  return fma(CT_EXPM1(r), r * r, r);
}
/* x - n ln2, n integral (Cody-Waite: n C1 exact). */
CT_INL float ct_exp_red(float x, float n) { return fma(n, 2.12194440e-4f, fma(n, -0.693359375f, x)); }
/* e * 2^n, n integral in [-252, 254]: in two halves, so subnormals are right. */
CT_INL float ct_scale2n(float e, float n) {
  const int ni = (int)n, n1 = ni >> 1;
  return e * as_float((n1 + 127) << 23) * as_float((ni - n1 + 127) << 23);
}
/* e^x for x in [-104, 88.73] (callers clamp). */
CT_INL float ct_exp_core(float x) {
  const float n = ct_rnd(x * 1.44269504088896341f);
  return ct_scale2n(ct_em1p(ct_exp_red(x, n)) + 1.0f, n);
}
CT_INL float ct_expf(float x) {
  const float r = ct_exp_core(fmin(fmax(x, -104.0f), 88.7228317f));
  return isnan(x) ? x : x > 88.7228317f ? INFINITY : r;
}
/* 2^x: x = n + f, 2^f = e^(f ln2) with f ln2 in two parts. */
CT_INL float ct_exp2f(float x) {
  const float xc = fmin(fmax(x, -152.0f), 128.0f), n = ct_rnd(xc), f = xc - n;
  const float r = fma(f, 0.693147182f, f * -1.90465429995776e-09f);
  const float v = ct_scale2n(ct_em1p(r) + 1.0f, n);
  return isnan(x) ? x : x >= 128.0f ? INFINITY : v;
}
/* e^x - 1: 2^n (e^r - 1) + (2^n - 1) rounded once, as 2 (2^(n-1) (e^r - 1) +
   2^(n-1) - 1/2) for n > 0 so that 2^128 never has to exist. */
CT_INL float ct_expm1f(float x) {
  const float xc = fmin(fmax(x, -87.0f), 88.7228317f), n = ct_rnd(xc * 1.44269504088896341f);
  const float em1 = ct_em1p(ct_exp_red(xc, n));
  const int pos = n > 0.0f;
  const float s = as_float(((int)n - pos + 127) << 23);
  const float r1 = fma(s, em1, s - (pos ? 0.5f : 1.0f));
  const float r = copysign(pos ? r1 + r1 : r1, x); /* -0 stays -0 */
  return isnan(x) ? x : x > 88.7228317f ? INFINITY : r;
}
/* 1 / (1 + e^-x) on both tails: e^-|x| never overflows. */
CT_INL float ct_sigmoidf(float x) {
  const float e = ct_exp_core(fmax(-fabs(x), -104.0f)), s = 1.0f / (1.0f + e);
  return isnan(x) ? x : x < 0.0f ? e * s : s;
}
/* tanh: odd polynomial below 0.625 (least-squares fit of (tanh x - x) / x^3),
   1 - 2 / (e^2|x| + 1) beyond, with |x| clamped at 10 (tanh = 1 in float). */
CT_INL float ct_tanhf(float x) {
  const float a = fabs(x), x2 = x * x;
  const float small = fma(x * x2, CT_TANHS(x2), x);
  const float big = 1.0f - 2.0f / (ct_exp_core(2.0f * fmin(a, 10.0f)) + 1.0f);
  return isnan(x) ? x : copysign(a < 0.625f ? fabs(small) : big, x);
}
CT_INL float ct_logf(float x) {
  const int sub = x < 1.17549435e-38f;
  const float xs = sub ? x * 8388608.0f : x;
  const uint u = as_uint(xs);
  float m = as_float((u & 0x007fffffu) | 0x3f800000u);
  const int up = m > 1.41421356f;
  m = up ? m * 0.5f : m;
  const float fe = (float)((int)(u >> 23) - 127 + up - (sub ? 23 : 0));
  const float f = m - 1.0f, hfsq = 0.5f * f * f, s = f / (2.0f + f), z = s * s, w = z * z;
  const float R = z * (0.66666662693f + w * 0.28498786688f) + w * (0.40000972152f + w * 0.24279078841f);
  const float r = fe * 6.9313812256e-01f - ((hfsq - (s * (hfsq + R) + fe * 9.0580006145e-06f)) - f);
  return (x > 0.0f && x < INFINITY) ? r : x == 0.0f ? -INFINITY : x < 0.0f ? NAN : x;
}
CT_INL float ct_log1pf(float x) {
  const float u = 1.0f + x, l = ct_logf(u);
  const float r = l - ((u - 1.0f) - x) / u; /* the rounding of 1 + x, corrected */
  return u == 1.0f ? x : (u > 0.0f && u < INFINITY) ? r : l;
}
/* log(1 + e^x) = max(x, 0) + log1p(e), e = e^-|x| in (0, 1]: log1p(e) = e +
   e^2 R(e), R the degree-9 fit CT_SPLUSR, so no log and no divide: one
   dependency chain half as long. */
CT_INL float ct_softplusf(float x) {
  const float e = ct_exp_core(fmax(-fabs(x), -104.0f)), e2 = e * e;
  const float l = fma(e2, CT_SPLUSR(e), e);
  return isnan(x) ? x : fmax(x, 0.0f) + l;
}
/* v erfc(z) / 2 for 0 <= z <= 10.47, given den = 1 + z/2 (its z may be
   larger, or inf: t -> 0) and -z^2 = nh + nl exactly: e^-z^2 t Q(t), t =
   1 / den, Q the degree-9 fit of erfcx(z) / (2t) (3e-8 relative). nh is
   reduced by n ln2 first, so z^2's rounding never reaches 2^n, and v t Q
   rides in the scaling: one rounding at the end. */
CT_INL float ct_half_erfc_times(float v, float den, float nh, float nl) {
  const float t = 1.0f / den, t2 = t * t, t4 = t2 * t2;
  const float q98 = fma(CT_ERFCQ_9, t, CT_ERFCQ_8), q76 = fma(CT_ERFCQ_7, t, CT_ERFCQ_6);
  const float q54 = fma(CT_ERFCQ_5, t, CT_ERFCQ_4), q32 = fma(CT_ERFCQ_3, t, CT_ERFCQ_2);
  const float q10 = fma(CT_ERFCQ_1, t, CT_ERFCQ_0);
  const float q = fma(fma(fma(q98, t2, q76), t4, fma(q54, t2, q32)), t2, q10);
  const float n = ct_rnd(nh * 1.44269504088896341f);
  const float r = fma(n, 2.12194440e-4f, fma(-n, 0.693359375f, nh)) + nl;
  const float s = ct_scale2n(v * t * q, n);
  return fma(ct_em1p(r), s, s);
}
/* erf: x + x q(x^2) (Taylor, 2/sqrt(pi) folded in, one rounding at the end)
   below 1, 1 - erfc beyond, |x| clamped at 4 (erf = +-1 in float there). */
CT_INL float ct_erff(float x) {
  const float x2 = x * x;
  const float small = fma(x, CT_ERFT(x2), x);
  const float a = fabs(x), ac = fmin(a, 4.0f), nh = -ac * ac;
  const float big = copysign(1.0f - ct_half_erfc_times(2.0f, fma(ac, 0.5f, 1.0f), nh, fma(-ac, ac, -nh)), x);
  return isnan(x) ? x : a < 1.0f ? small : big;
}
/* x Phi(x): -(|x| erfc(|x|/sqrt2) / 2) for x < 0 (an underflow keeps its
   sign; x = -inf gives -inf * 0 = NaN through t = 0, as the reference),
   x - x erfc(x/sqrt2) / 2 otherwise; z^2 = x^2 / 2 from x's own square, |x|
   clamped at 14.8 there (Phi(-14.8) < 2^-150). */
CT_INL float ct_geluf(float x) {
  const float ax = fabs(x), a = fmin(ax, 14.8f), m = a * -0.5f, nh = m * a;
  const int neg = x < 0.0f;
  const float xh = ct_half_erfc_times(neg ? ax : a, fma(ax, 0.35355339059327373f, 1.0f), nh, fma(m, a, -nh));
  return isnan(x) ? x : neg ? -xh : x - xh;
}
#ifdef CT_FP64
CT_INL double ct_rndd(double x) { return (x + 6755399441055744.0) - 6755399441055744.0; }
/* |x| 2/pi = q + f (mod 4), q integral, |f| <= 1/2 (a little more by
   rounding): x = m 2^E, m 24 bits; m T[max(E, 2)] (2^(E - 2) scaling m
   below, where T[2] = 4 * 2/pi wraps nothing) in double-double. */
CT_INL double ct_pio2_frac(float ax, int* q) {
  const uint u = as_uint(ax);
  const int be = (int)(u >> 23);
  const double m = (double)((u & 0x7fffffu) | (be != 0 ? 0x800000u : 0u));
  const int E = (be != 0 ? be : 1) - 150, ei = min(max(E, 2), 104);
  CT_TABLE_PTR const double* t = ct_pio2_tab + 2 * (ei - 2);
  const double dm = m * as_double((ulong)(E - ei + 1023) << 52); /* exact */
  const double ph = dm * t[0], pl = fma(dm, t[0], -ph), k = ct_rndd(ph); /* ph < 2^26 */
  *q = (int)k; /* callers use q mod 4 */
  return (ph - k) + fma(dm, t[1], pl);
}
/* Taylor polynomials on [-pi/4, pi/4] in double (the next terms are below
   2^-30 of the result). */
CT_INL double ct_sin_poly(double r) {
  const double z = r * r;
  const double p = fma(fma(fma(fma(-1.0 / 39916800, z, 1.0 / 362880), z, -1.0 / 5040), z, 1.0 / 120), z, -1.0 / 6);
  return fma(r * z, p, r);
}
CT_INL double ct_cos_poly(double r) {
  const double z = r * r;
  const double p = fma(fma(fma(fma(fma(1.0 / 479001600, z, -1.0 / 3628800), z, 1.0 / 40320), z, -1.0 / 720), z,
                           1.0 / 24), z, -0.5);
  return fma(z, p, 1.0);
}
/* which = 0: sin, 1: cos, 2: tan, of x = q pi/2 + r. */
CT_INL double ct_trig_quadrant(double r, int q, int which) {
  const double s = ct_sin_poly(r), c = ct_cos_poly(r);
  double v;
  if (which == 0) v = (q & 1) ? c : s, v = (q & 2) ? -v : v;
  else if (which == 1) v = (q & 1) ? s : c, v = ((q + 1) & 2) ? -v : v;
  else v = (q & 1) ? -c / s : s / c;
  return v;
}
CT_INL float ct_trigf(float x, int which) {
  int q;
  const double r = ct_pio2_frac(fabs(x), &q) * 1.5707963267948966;
  const double v = ct_trig_quadrant(r, q, which);
  return isfinite(x) ? (float)(which != 1 && signbit(x) ? -v : v) : NAN;
}
/* For 0 < |x| <= 2^30 (CT_TRIG_RARE false; zeros kept by a select): x -
   k pi/2 by Cody-Waite in double, pi/2 in two parts (106 bits), no table.
   Checked exhaustively on every float up to 2^31 in magnitude: the same
   bits as ct_trigf, 3.5x faster on PoCL (the table's gathers and the
   double-double products cost that). */
CT_INL float ct_trig_fast(float x, int which) {
  const double dx = x, k = ct_rndd(dx * 0.63661977236758134);
  const double r = fma(-k, 6.123233995736766e-17, fma(-k, 1.5707963267948966, dx));
  const float v = (float)ct_trig_quadrant(r, (int)k, which);
  return x == 0.0f && which != 1 ? x : v;
}
#define CT_TRIG_RARE(x) (!(fabs(x) <= 1073741824.0f))
#define CT_SIN_FAST(x) ct_trig_fast(x, 0)
#define CT_COS_FAST(x) ct_trig_fast(x, 1)
#define CT_TAN_FAST(x) ct_trig_fast(x, 2)
/* log2 |a| in double for |a| a positive normal or subnormal float: a = 2^k m,
   m in [sqrt(1/2), sqrt(2)) (k from a's bits less sqrt(1/2)'s, in integer
   arithmetic), log2 m = s q(s^2), s = (m - 1) / (m + 1), q the degree-4
   fit of (2 / ln 2) atanh(sqrt z) / sqrt z (2^-37.8 relative;
   tools/fits/opencl_pow.py). */
CT_INL double ct_log2d(double a) {
  const long b = as_long(a), k = (b - 0x3fe6a09e667f3bcdL) >> 52;
  const double m = as_double(b - (k << 52));
  const double s = (m - 1.0) / (m + 1.0), z = s * s;
  const double q = fma(fma(fma(fma(0x1.5ce7cbab89d22p-2, z, 0x1.a58d8fdd3c8c5p-2), z, 0x1.27777fda2395ep-1), z,
                           0x1.ec709d12e1ba4p-1), z, 0x1.71547652bede5p+1);
  return fma(s, q, (double)k);
}
/* 2^t in double for |t| <= 200: t = n + f, 2^f = 1 + f g(f), g the degree-7
   fit of (2^f - 1) / f on [-1/2, 1/2] (2^-39 relative; 2^0 = 1 exactly);
   2^n added to the exponent field (n is t + 1.5 2^52's low bits, and 2^n a
   normal double). */
CT_INL double ct_exp2d(double t) {
  const double kn = t + 0x1.8p52, n = kn - 0x1.8p52, f = t - n;
  const double g = fma(fma(fma(fma(fma(fma(fma(0x1.62c0000f5422dp-20, f, 0x1.00c080f1550b0p-16), f, 0x1.43099b5ce60e0p-13), f,
                                       0x1.5d87762e04212p-10), f, 0x1.3b2ab6a0d9eb5p-7), f, 0x1.c6b08da69c920p-5), f,
                           0x1.ebfbdff85f4c9p-3), f, 0x1.62e42fef9cdf7p-1);
  return as_double(as_ulong(fma(f, g, 1.0)) + (as_ulong(kn) << 52));
}
/* pow with C99's specials: y = 0 or x = 1 give 1; x = -1, y = +-inf give 1;
   x < 0 with y not an integer gives NaN; the sign of x^y for x < 0 (and -0)
   is x's when y is an odd integer. */
CT_INL float ct_powf(float x, float y) {
  const float ax = fabs(x), ay = fabs(y);
  const double l = ax == 0.0f ? -INFINITY : ax == INFINITY ? INFINITY : ct_log2d((double)ax);
  const double t = (double)y * l;
  const double v = t != t ? 1.0 : ct_exp2d(fmin(fmax(t, -200.0), 200.0)); /* NaN: 0 * inf (|x| 1 and y inf, or y 0) */
  float r = (float)v;
  const int yi = (int)fmin(ay, 16777216.0f); /* |y| below 2^24 converts exactly; from 2^24 on y is even */
  const int yint = ay >= 16777216.0f || (float)yi == ay, yodd = ay < 16777216.0f && (float)yi == ay && (yi & 1);
  r = (x < 0.0f || (x == 0.0f && signbit(x))) && yodd ? -r : r;
  r = x < 0.0f && x > -INFINITY && !yint && isfinite(y) ? NAN : r;
  r = (ax == 1.0f && isinf(y)) || y == 0.0f || x == 1.0f ? 1.0f : r;
  return ((isnan(x) || isnan(y)) && !(y == 0.0f || x == 1.0f)) ? NAN : r;
}
/* pow for finite x and y (CT_POW_RARE false): the same arithmetic without
   the selects for infinities and NaN, which cost PoCL twice the rest. x = 0
   takes log2 = -1e300 (finite, so y = 0 still gives 2^0 = 1); t clamped at
   +-200, beyond which float is 0 or inf anyway. */
CT_INL float ct_pow_fast(float x, float y) {
  const float ax = fabs(x), ay = fabs(y);
  double t = (double)y * (ax == 0.0f ? -1e300 : ct_log2d((double)ax));
  t = t < -200.0 ? -200.0 : t > 200.0 ? 200.0 : t;
  const float r = (float)ct_exp2d(t);
  const int yi = (int)fmin(ay, 16777216.0f);
  const int yint = ay >= 16777216.0f || (float)yi == ay, yodd = ay < 16777216.0f && (float)yi == ay && (yi & 1);
  return x < 0.0f && !yint ? NAN : signbit(x) && yodd ? -r : r;
}
#define CT_POW_RARE(x, y) (!(fabs(x) < INFINITY && fabs(y) < INFINITY))
#define CT_POW_FAST(x, y) ct_pow_fast(x, y)
/* pow_scalar with p an integer or a half-integer, |p| <= 8 (x^2, x^0.5,
   x^-1, x^1.5, ...: the common exponents): x^|n| by squaring in double,
   times sqrt(x) for the half, inverted for p < 0; a few roundings at 2^-53
   and one to float, so correctly rounded but for ties within 2^-50. p is
   the same for every element: the chunked kernel chooses the form once
   (ElemRow::uniform). A half-integer power of -0 or -inf is +0 or +inf
   (C99; sqrt would give -0 and NaN); of other negatives NaN.
   ct_pow_small_kind: -1 for any other p; else 1 for a half-integer, plus 2
   for p < 0. */
CT_INL int ct_pow_small_kind(float p) {
  const float p2 = p * 2.0f;
  return fabs(p) <= 8.0f && ct_rnd(p2) == p2 ? ((int)p2 & 1) + (p < 0.0f ? 2 : 0) : -1;
}
/* half_p, inv: p is a half-integer, p < 0 (literals in the chunked
   kernels' loops, so that only the work they need is compiled in) */
CT_INL float ct_pow_small(float x, float p, int half_p, int inv) {
  const int n = abs((int)(p * 2.0f)) >> 1;
  const double dx = x;
  double r = 1.0, b = dx;
  r = (n & 1) ? r * b : r;
  b = b * b;
  r = (n & 2) ? r * b : r;
  b = b * b;
  r = (n & 4) ? r * b : r;
  b = b * b;
  r = (n & 8) ? r * b : r;
  r = half_p ? r * sqrt(dx) : r;
  r = inv ? 1.0 / r : r;
  const float edge = (p > 0.0f) == (x == 0.0f) ? 0.0f : INFINITY;
  return half_p && (x == -INFINITY || (x == 0.0f && signbit(x))) ? edge : (float)r;
}
#define CT_POWS(x, p) \
  (ct_pow_small_kind(p) >= 0 ? ct_pow_small(x, p, ct_pow_small_kind(p) & 1, ct_pow_small_kind(p) >> 1) : ct_powf(x, p))
/* hypot: the squares of floats are exact in double, so one rounding of the
   sum and one of the square root; inf wins over NaN. */
CT_INL float ct_hypotf(float a, float b) {
  const double da = a, db = b;
  const float r = (float)sqrt(fma(da, da, db * db));
  return isinf(a) || isinf(b) ? INFINITY : r;
}
/* atan2: atan of min/max of the magnitudes in [0, 1] (1 when both are
   infinite, 0 when both are 0), by atan(r) = pi/4 + atan((r - 1) / (r + 1))
   above tan(pi/8) and Taylor to u^23 (|u| <= 0.4143: within 2^-40), then
   pi/2 - t where |y| > |x|, pi - t where x is negative (or -0), y's sign. */
CT_INL float ct_atan2f(float y, float x) {
  /* min and max by the bits of the magnitudes (their order is the floats'):
     PoCL turns a float select into an SSE max intrinsic that keeps the
     whole loop scalar */
  const uint uy = as_uint(y) & 0x7fffffffu, ux = as_uint(x) & 0x7fffffffu;
  const double mx = as_float(max(ux, uy)), mn = as_float(min(ux, uy));
  const double r = mx == 0.0 ? 0.0 : isinf(mn) ? 1.0 : mn / mx;
  const int big = r > 0.41421356237309503;
  const double u = big ? (r - 1.0) / (r + 1.0) : r, z = u * u;
  double p = -1.0 / 23;
  p = fma(p, z, 1.0 / 21); p = fma(p, z, -1.0 / 19); p = fma(p, z, 1.0 / 17); p = fma(p, z, -1.0 / 15);
  p = fma(p, z, 1.0 / 13); p = fma(p, z, -1.0 / 11); p = fma(p, z, 1.0 / 9); p = fma(p, z, -1.0 / 7);
  p = fma(p, z, 1.0 / 5); p = fma(p, z, -1.0 / 3);
  double t = fma(u * z, p, u) + (big ? 0.78539816339744831 : 0.0);
  t = uy > ux ? 1.5707963267948966 - t : t;
  t = signbit(x) ? 3.1415926535897931 - t : t;
  const float v = (float)t;
  return isnan(x) || isnan(y) ? NAN : signbit(y) ? -v : v;
}
#define CT_ATAN2(y, x) ct_atan2f(y, x)
#define CT_HYPOT(a, b) ct_hypotf(a, b)
#define CT_SIN(x) ct_trigf(x, 0)
#define CT_COS(x) ct_trigf(x, 1)
#define CT_TAN(x) ct_trigf(x, 2)
#define CT_POW(x, y) ct_powf(x, y)
#endif
#define CT_EXP(x) ct_expf(x)
#define CT_EXP2(x) ct_exp2f(x)
#define CT_EXPM1(x) ct_expm1f(x)
#define CT_LOG(x) ct_logf(x)
#define CT_LOG1P(x) ct_log1pf(x)
#define CT_LOG2(x) (ct_logf(x) * 1.44269504088896341f)
#define CT_TANH(x) ct_tanhf(x)
#define CT_SIGMOID(x) ct_sigmoidf(x)
#define CT_SOFTPLUS(x) ct_softplusf(x)
#define CT_ERF(x) ct_erff(x)
#define CT_GELU(x) ct_geluf(x)
)CL";

// The built-ins for what kMath computes in double: float64 kernels, and
// float32 ones on a device without cl_khr_fp64 (no rare path: the fast
// forms are the built-ins too).
const char kBuiltinsViaDouble[] = R"CL(
#define CT_SIN(x) sin(x)
#define CT_COS(x) cos(x)
#define CT_TAN(x) tan(x)
#define CT_POW(x, y) pow(x, y)
#define CT_TRIG_RARE(x) 0
#define CT_SIN_FAST(x) sin(x)
#define CT_COS_FAST(x) cos(x)
#define CT_TAN_FAST(x) tan(x)
#define CT_POW_RARE(x, y) 0
#define CT_POW_FAST(x, y) pow(x, y)
#define CT_POWS(x, y) pow(x, y)
CT_INL int ct_pow_small_kind(T p) { return -1; }
#define ct_pow_small(x, p, h, i) pow(x, p)
#define CT_ATAN2(y, x) atan2(y, x)
#define CT_HYPOT(a, b) hypot(a, b)
)CL";

// float64: the built-ins for the rest.
const char kBuiltins[] = R"CL(
CT_INL T ct_sigmoid_b(T x) { return x >= 0 ? (T)1 / ((T)1 + exp(-x)) : exp(x) / ((T)1 + exp(x)); }
CT_INL T ct_softplus_b(T x) { return isnan(x) ? x : x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }
#define CT_EXP(x) exp(x)
#define CT_EXP2(x) exp2(x)
#define CT_EXPM1(x) expm1(x)
#define CT_LOG(x) log(x)
#define CT_LOG1P(x) log1p(x)
#define CT_LOG2(x) log2(x)
#define CT_TANH(x) tanh(x)
#define CT_SIGMOID(x) ct_sigmoid_b(x)
#define CT_SOFTPLUS(x) ct_softplus_b(x)
#define CT_ERF(x) erf(x)
#define CT_GELU(x) ((T)0.5 * x * erfc(-x * (T)0.70710678118654752440))
)CL";

}  // namespace

std::string float_math(const Target* d, bool float32) {
  if (!float32) return std::string(kBuiltinsViaDouble) + kBuiltins;
  static const std::string table = trig_table(), coefficients = coefficient_macros();
  return d->fp64 ? "#define CT_FP64 1\n" + table + coefficients + kMath : coefficients + kMath + kBuiltinsViaDouble;
}

}  // namespace ctgpu
