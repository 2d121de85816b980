// elementwise.cc — references of the elementwise maps (category 1): unary and
// unary_param ops as one scalar definition per dtype class, the ternary ops
// (broadcasting) and cast; their table entries sit at the end.
#include "ref_internal.h"

namespace ctref {
namespace {

// ---------------------------------------------------------------------------
// Unary and unary_param: F for float dtypes (double in, double out; a
// predicate returns 0 or 1), I for integer and bool dtypes (the element as
// Array::i holds it, exact(x, d) its value; the result is wrapped to the
// output dtype). p: the call's parameters.
// ---------------------------------------------------------------------------

typedef double (*F1)(double x, const double* p);
typedef int64_t (*I1)(int64_t x, const double* p, CTDataType d);

template <F1 F, I1 I = nullptr>
bool unary(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 1, why) || !need_output(c, o, why)) return false;
  const Array& x = *c.inputs[0];
  Array& out = *o[0];
  if (x.numel() != out.numel()) return fail(why, name_of(c) + ": x" + str(x.shape) + " and out" + str(out.shape));
  const double* p = c.params.data();
  if (x.is_float() ? !has_form(F) : !has_form(I))
    return fail(why, name_of(c) + ": not defined for " + dtype_name(x.dtype));
  for (int64_t k = 0; k < x.numel(); ++k)
    store(out, k, x.is_float() ? vf(F(x.f[(size_t)k], p)) : vi(I(x.i[(size_t)k], p, x.dtype)));
  return true;
}

// Round half to even, independent of the FP rounding mode.
double round_half_even(double x) {
  if (!std::isfinite(x)) return x;
  double r = std::floor(x);
  const double d = x - r;  // exact for |x| < 2^52; 0 above (x is then integral)
  if (d > 0.5 || (d == 0.5 && std::fmod(r, 2.0) != 0)) r += 1.0;
  return r == 0 ? std::copysign(0.0, x) : r;
}

double f_neg(double x, const double*) { return -x; }
int64_t i_neg(int64_t x, const double*, CTDataType) { return (int64_t)(0 - (uint64_t)x); }  // wraps
double f_abs(double x, const double*) { return std::fabs(x); }
int64_t i_abs(int64_t x, const double*, CTDataType d) {  // wraps; unsigned: x
  return exact(x, d) < 0 ? (int64_t)(0 - (uint64_t)x) : x;
}
double f_sign(double x, const double*) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }  // NaN, +-0 stay
int64_t i_sign(int64_t x, const double*, CTDataType d) { return exact(x, d) > 0 ? 1 : exact(x, d) < 0 ? -1 : 0; }
double f_exp(double x, const double*) { return std::exp(x); }
double f_expm1(double x, const double*) { return std::expm1(x); }
double f_exp2(double x, const double*) { return std::exp2(x); }
double f_log(double x, const double*) { return std::log(x); }
double f_log1p(double x, const double*) { return std::log1p(x); }
double f_log2(double x, const double*) { return std::log2(x); }
double f_sqrt(double x, const double*) { return std::sqrt(x); }
double f_rsqrt(double x, const double*) { return 1.0 / std::sqrt(x); }
double f_reciprocal(double x, const double*) { return 1.0 / x; }
int64_t i_reciprocal(int64_t x, const double*, CTDataType d) {  // 1/0 = 0
  return exact(x, d) == 1 ? 1 : exact(x, d) == -1 ? -1 : 0;
}
double f_square(double x, const double*) { return x * x; }
int64_t i_square(int64_t x, const double*, CTDataType) { return (int64_t)((uint64_t)x * (uint64_t)x); }
double f_sin(double x, const double*) { return std::sin(x); }
double f_cos(double x, const double*) { return std::cos(x); }
double f_tan(double x, const double*) { return std::tan(x); }
double f_tanh(double x, const double*) { return std::tanh(x); }
double f_sigmoid(double x, const double*) { return sigmoid_ref(x); }
double f_relu(double x, const double*) { return relu_ref(x); }
int64_t i_relu(int64_t x, const double*, CTDataType d) { return exact(x, d) < 0 ? 0 : x; }
double f_gelu(double x, const double*) { return gelu_ref(x); }
double f_gelu_tanh(double x, const double*) { return gelu_tanh_ref(x); }
double f_silu(double x, const double*) { return silu_ref(x); }
double f_softplus(double x, const double*) { return softplus_ref(x); }
double f_erf(double x, const double*) { return std::erf(x); }
double f_floor(double x, const double*) { return std::floor(x); }
double f_ceil(double x, const double*) { return std::ceil(x); }
double f_round(double x, const double*) { return round_half_even(x); }
double f_trunc(double x, const double*) { return std::trunc(x); }
double f_identity_f(double x, const double*) { return x; }
int64_t i_identity(int64_t x, const double*, CTDataType) { return x; }  // floor, ceil, round, trunc of ints
double f_logical_not(double x, const double*) { return x == 0; }
int64_t i_logical_not(int64_t x, const double*, CTDataType) { return x == 0; }
int64_t i_bitwise_not(int64_t x, const double*, CTDataType d) { return dt_bool(d) ? x == 0 : (int64_t)~(uint64_t)x; }
double f_isnan(double x, const double*) { return std::isnan(x); }
double f_isinf(double x, const double*) { return std::isinf(x); }
double f_isfinite(double x, const double*) { return std::isfinite(x); }
int64_t i_false(int64_t, const double*, CTDataType) { return 0; }  // isnan, isinf of ints and bool
int64_t i_true(int64_t, const double*, CTDataType) { return 1; }   // isfinite
// PyTorch's x * relu6(x + 3) / 6; NaN stays NaN, -inf gives NaN (-inf * 0) as in PyTorch.
double f_hardswish(double x, const double*) {
  const double r = x + 3 < 0 ? 0.0 : x + 3 > 6 ? 6.0 : x + 3;
  return x * r / 6;
}

double f_log10(double x, const double*) { return std::log10(x); }
double f_sinh(double x, const double*) { return std::sinh(x); }
double f_cosh(double x, const double*) { return std::cosh(x); }
double f_asin(double x, const double*) { return std::asin(x); }
double f_acos(double x, const double*) { return std::acos(x); }
double f_atan(double x, const double*) { return std::atan(x); }
double f_asinh(double x, const double*) { return std::asinh(x); }
double f_acosh(double x, const double*) { return std::acosh(x); }
double f_atanh(double x, const double*) { return std::atanh(x); }
double f_erfc(double x, const double*) { return std::erfc(x); }
double f_lgamma(double x, const double*) {
  int sign;
  return (double)lgammal_r((long double)x, &sign);
}
// digamma in long double, independently of the kernels' recurrence: the
// recurrence up to 40, the asymptotic series to B_20; reflection below 0.
double f_digamma(double x, const double*) {
  if (x == 0) return std::copysign(HUGE_VAL, -x);
  if (std::isnan(x) || x == HUGE_VAL) return x;
  if (x == -HUGE_VAL || (x < 0 && x == std::trunc(x))) return std::nan("");
  long double v = x, r = 0;
  const long double pi = 3.141592653589793238462643383279502884L;
  if (v < 0) {
    r = -pi / tanl(pi * (v - rintl(v)));
    v = 1 - v;
  }
  for (; v < 40; v += 1) r -= 1 / v;
  const long double z = 1 / (v * v);
  static const long double kB[] = {1.0L / 12, -1.0L / 120, 1.0L / 252, -1.0L / 240, 1.0L / 132, -691.0L / 32760,
                                   1.0L / 12, -3617.0L / 8160, 43867.0L / 14364, -174611.0L / 6600};
  long double s = 0;
  for (int k = 9; k >= 0; --k) s = s * z + kB[k];
  return (double)(r + logl(v) - 0.5L / v - z * s);
}
// erfinv by bisection on erfl/erfcl in long double (no starting guess shared with the kernels).
double f_erfinv(double y, const double*) {
  const double a = std::fabs(y);
  if (!(a <= 1)) return std::nan("");
  if (a == 1) return std::copysign(HUGE_VAL, y);
  long double lo = 0, hi = 7;  // erf(7) rounds to 1 in double
  for (int i = 0; i < 200 && lo < hi; ++i) {
    const long double mid = (lo + hi) / 2;
    if (mid == lo || mid == hi) break;
    const bool below = a < 0.5 ? erfl(mid) < (long double)a : erfcl(mid) > 1 - (long double)a;
    (below ? lo : hi) = mid;
  }
  return std::copysign((double)((lo + hi) / 2), y);
}
// log(x / (1 - x)): from the definition with log1p for the denominator (no
// rounding of 1 - x): log(x) - log1p(-x).
double f_logit(double x, const double*) { return std::log(x) - std::log1p(-x); }
double f_frac(double x, const double*) { return x - std::trunc(x); }
// PyTorch's min(max(x + 3, 0), 6) / 6; NaN stays NaN.
double f_hardsigmoid(double x, const double*) {
  if (std::isnan(x)) return x;
  const double r = x + 3 < 0 ? 0.0 : x + 3 > 6 ? 6.0 : x + 3;
  return r / 6;
}
double f_mish(double x, const double*) { return x * std::tanh(softplus_ref(x)); }
double f_selu(double x, const double*) {
  const double scale = 1.0507009873554804934193349852946, alpha = 1.6732632423543772848170429916717;
  return x > 0 ? scale * x : scale * alpha * std::expm1(x);
}
double f_softsign(double x, const double*) { return x / (1 + std::fabs(x)); }
double f_logsigmoid(double x, const double*) { return -softplus_ref(-x); }
double f_signbit(double x, const double*) { return std::signbit(x) ? 1 : 0; }
int64_t i_signbit(int64_t x, const double*, CTDataType d) { return exact(x, d) < 0; }

// unary_param: p[0] (and p[1]) as CTOpInfo.param_names says.
double f_leaky_relu(double x, const double* p) { return x >= 0 ? x : p[0] * x; }
double f_elu(double x, const double* p) { return x > 0 ? x : p[0] * std::expm1(x); }
double f_celu(double x, const double* p) { return x >= 0 ? x : p[0] * std::expm1(x / p[0]); }
double f_hardshrink(double x, const double* p) { return x >= -p[0] && x <= p[0] ? 0.0 : x; }
double f_softshrink(double x, const double* p) { return x > p[0] ? x - p[0] : x < -p[0] ? x + p[0] : x * 0.0; }
double f_threshold(double x, const double* p) { return x <= p[0] ? p[1] : x; }
double f_clamp(double x, const double* p) {  // NaN x stays NaN; lo > hi gives hi
  const double r = x < p[0] ? p[0] : x;
  return r > p[1] ? p[1] : r;
}
int64_t i_clamp(int64_t x, const double* p, CTDataType d) {  // p: integers of d's range
  const Int128 lo = (Int128)p[0], hi = (Int128)p[1];
  const Int128 v = exact(x, d), r = v < lo ? lo : v;
  return (int64_t)(uint64_t)(r > hi ? hi : r);
}
double f_relu6(double x, const double*) { return std::isnan(x) ? x : x < 0 ? 0.0 : x > 6 ? 6.0 : x; }
int64_t i_relu6(int64_t x, const double*, CTDataType d) { return exact(x, d) < 0 ? 0 : exact(x, d) > 6 ? 6 : x; }
double f_tanhshrink(double x, const double*) { return (double)((long double)x - tanhl(x)); }
double f_isposinf(double x, const double*) { return x == HUGE_VAL; }
double f_isneginf(double x, const double*) { return x == -HUGE_VAL; }
double f_deg2rad(double x, const double*) { return (double)((long double)x * (3.141592653589793238462643383279502884L / 180)); }
double f_rad2deg(double x, const double*) { return (double)((long double)x * (180 / 3.141592653589793238462643383279502884L)); }
double f_sinc(double x, const double*) {
  if (x == 0) return 1.0;
  const long double px = 3.141592653589793238462643383279502884L * x;
  return (double)(sinl(px) / px);
}
double f_ndtr(double x, const double*) { return (double)(0.5L * erfcl(-(long double)x / sqrtl(2.0L))); }
// ndtri by bisection on erfcl of the lower tail (no starting guess shared with the kernels).
double f_ndtri(double p, const double*) {
  if (!(p >= 0 && p <= 1)) return std::nan("");
  if (p == 0) return -HUGE_VAL;
  if (p == 1) return HUGE_VAL;
  const bool upper = p > 0.5;
  const long double t = upper ? 1.0L - p : (long double)p;
  long double lo = -40, hi = 0;  // ndtr(-40) < 1e-300
  for (int i = 0; i < 200; ++i) {
    const long double mid = (lo + hi) / 2;
    if (mid == lo || mid == hi) break;
    (0.5L * erfcl(-mid / sqrtl(2.0L)) < t ? lo : hi) = mid;
  }
  const double x = (double)((lo + hi) / 2);
  return upper ? -x : x;
}
// round(x, decimals) as NumPy, PyTorch and the kernels define it: x * 10^d
// (or x / 10^-d) rounded to the compute type T (float below float64) before
// rint, so a product that rounds onto a tie (x = -1.155f: -115.5f) rounds as
// theirs does: exact arithmetic would give -1.15, all of them -1.16.
template <class T>
double f_round_decimals(double x, const double* p) {
  const T ten = (T)std::pow(10.0, std::fabs(p[0]));
  const T v = (T)x;
  return (double)(p[0] < 0 ? std::nearbyint((T)(v / ten)) * ten : std::nearbyint((T)(v * ten)) / ten);
}
bool round_decimals(const Call& c, const Outs& o, std::string* why) {
  const bool f64 = !c.inputs.empty() && c.inputs[0] && c.inputs[0]->dtype.bits == 64;
  return f64 ? unary<f_round_decimals<double>>(c, o, why) : unary<f_round_decimals<float>>(c, o, why);
}
double f_softplus_beta(double x, const double* p) {
  const long double bx = (long double)x * p[0];
  return bx > p[1] ? x : (double)(log1pl(expl(bx)) / p[0]);
}
double f_spherical_bessel_j0(double x, const double*) {
  if (std::isinf(x)) return 0.0;
  return x == 0 ? 1.0 : (double)(sinl((long double)x) / x);
}
long double erfcx_l(long double x) {
  if (x < 0) return 2 * expl(x * x) - erfcx_l(-x);
  if (x < 100) return expl(x * x) * erfcl(x);
  const long double w = 1 / (2 * x * x);  // the asymptotic series: 1 - w + 3 w^2 - 15 w^3 ... (w < 5e-5)
  return (1 - w * (1 - 3 * w * (1 - 5 * w * (1 - 7 * w)))) / (x * 1.77245385090551602729816748334114518L);
}
double f_erfcx(double x, const double*) { return std::isnan(x) ? x : (double)erfcx_l(x); }
double f_log_ndtr(double x, const double*) {
  if (std::isnan(x)) return x;
  const long double t = (long double)x / sqrtl(2.0L);
  if (x < -5) return (double)(logl(erfcx_l(-t) / 2) - t * t);
  return (double)log1pl(-erfcl(t) / 2);
}
// The Bessel functions through libstdc++'s C++17 special functions in long
// double (an implementation independent of src/math/special.inc's): order
// 0 even, order 1 odd; Y and K NaN below 0, -inf / +inf at 0; all 0 at inf
// but I (inf) and the scaled I (0).
double bessel_ref(double x, int kind, int nu, bool scaled) {
  if (std::isnan(x)) return x;
  const long double ax = fabsl((long double)x), n = nu;
  if (kind == 1 || kind == 3) {  // Y, K
    if (x < 0) return std::nan("");
    if (x == 0) return kind == 1 ? -HUGE_VAL : HUGE_VAL;
    if (std::isinf(x)) return 0.0;
    if (kind == 1) return (double)std::cyl_neumann(n, ax);
    const long double k = std::cyl_bessel_k(n, ax);
    return (double)(scaled ? k * expl(ax) : k);
  }
  long double r;
  if (kind == 0) r = std::isinf(x) ? 0.0L : std::cyl_bessel_j(n, ax);
  else if (std::isinf(x)) r = scaled ? 0.0L : (long double)HUGE_VAL;
  else r = scaled ? std::cyl_bessel_i(n, ax) * expl(-ax) : std::cyl_bessel_i(n, ax);
  return (double)(nu == 1 && std::signbit(x) ? -r : r);
}
// Airy Ai through the Bessel functions of order 1/3 (libstdc++'s, in long
// double; DLMF 9.6.1, 9.6.6): (1/pi) sqrt(x/3) K_1/3(zeta) above 0,
// sqrt(z)/2 (J_1/3(zeta) - Y_1/3(zeta)/sqrt 3) at x = -z, zeta = 2/3 |x|^3/2.
// 0 at +-inf (the limits).
double f_airy_ai(double x, const double*) {
  if (std::isnan(x)) return x;
  if (std::isinf(x)) return 0;
  if (x == 0) return 0.355028053887817239260;
  const long double z = fabsl((long double)x), zeta = 2.0L / 3.0L * z * sqrtl(z), third = 1.0L / 3.0L;
  if (x > 0) return (double)(sqrtl(z / 3) * std::cyl_bessel_k(third, zeta) / 3.14159265358979323846264338327950288L);
  return (double)(sqrtl(z) / 2 * (std::cyl_bessel_j(third, zeta) - std::cyl_neumann(third, zeta) / sqrtl(3.0L)));
}
template <int kKind, int kNu, bool kScaled> double f_bessel(double x, const double*) {
  return bessel_ref(x, kKind, kNu, kScaled);
}
// Hurwitz zeta in long double: the terms up to q + k >= 60, then the
// integral, half the last term and three Euler-Maclaurin corrections.
long double zeta_ref(long double s, long double q) {
  if (std::isnan((double)s) || std::isnan((double)q)) return s + q;
  if (s == 1) return HUGE_VALL;
  if (s < 1) return NAN;
  if (q <= 0) {
    if (q == floorl(q)) return HUGE_VALL;
    if (s != floorl(s)) return NAN;
  }
  if (std::isinf((double)q)) return 0;  // every term is 0
  long double sum = 0, a = q;
  for (; a < 60; a += 1) sum += powl(a, -s);
  const long double f = powl(a, -s);
  return sum + a * f / (s - 1) + f / 2 + s * f / a / 12 - s * (s + 1) * (s + 2) * f / (a * a * a) / 720 +
         s * (s + 1) * (s + 2) * (s + 3) * (s + 4) * f / powl(a, 5) / 30240;
}
double f_polygamma(double x, const double* p) {
  const double n = p[0];
  if (n == 0) return f_digamma(x, nullptr);
  long double fac = 1;
  for (int k = 2; k <= (int)n; ++k) fac *= k;
  const long double z = zeta_ref(n + 1, x);
  return (double)(((int)n % 2 ? 1 : -1) * fac * z);
}
double f_mvlgamma(double x, const double* p) {
  if (std::isnan(x)) return x;
  long double r = p[0] * (p[0] - 1) / 4 * logl(3.14159265358979323846264338327950288L);
  for (int j = 0; j < (int)p[0]; ++j) {
    // x - j/2 rounded to double first, as every implementation (PyTorch's
    // too) computes it: near a pole lgamma is so ill-conditioned that the
    // one rounding of the argument moves it by 1e-9 (x = -3.5000004)
    int sign;
    r += lgammal_r((long double)(x - j / 2.0), &sign);
  }
  return (double)r;
}
double f_entr(double x, const double*) {
  if (std::isnan(x)) return x;
  return x > 0 ? (double)(-(long double)x * logl(x)) : x == 0 ? 0.0 : -HUGE_VAL;
}
double f_pow_scalar(double x, const double* p) { return std::pow(x, p[0]); }
double f_add_scalar(double x, const double* p) { return x + p[0]; }
int64_t i_add_scalar(int64_t x, const double* p, CTDataType) {  // wraps; p[0] up to 2^64 - 1 (uint64)
  return (int64_t)((uint64_t)x + (uint64_t)(Int128)p[0]);
}
double f_mul_scalar(double x, const double* p) { return x * p[0]; }
int64_t i_mul_scalar(int64_t x, const double* p, CTDataType) {  // wraps
  return (int64_t)((uint64_t)x * (uint64_t)(Int128)p[0]);
}

// ---------------------------------------------------------------------------
// Ternary ops, broadcasting their three inputs to out's shape
// ---------------------------------------------------------------------------

bool ternary_index(const Call& c, const Array& out, std::vector<int64_t> (&idx)[3], std::string* why) {
  static const char* const names[3] = {"a", "b", "c"};
  for (int k = 0; k < 3; ++k)
    if (!broadcast_index(c.inputs[(size_t)k]->shape, out.shape, &idx[k], why, names[k])) return false;
  return true;
}

typedef double (*F3)(double a, double b, double c, const double* p);
typedef int64_t (*I3)(int64_t a, int64_t b, int64_t c, const double* p, CTDataType d);

template <F3 F, I3 I = nullptr>
bool ternary(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 3, why) || !need_output(c, o, why)) return false;
  const Array &a = *c.inputs[0], &b = *c.inputs[1], &w = *c.inputs[2];
  Array& out = *o[0];
  std::vector<int64_t> idx[3];
  if (!ternary_index(c, out, idx, why)) return false;
  if (a.is_float() ? !has_form(F) : !has_form(I))
    return fail(why, name_of(c) + ": not defined for " + dtype_name(a.dtype));
  double p[2] = {0, 0};
  for (size_t k = 0; k < c.params.size() && k < 2; ++k) p[k] = c.params[k];
  for (int64_t k = 0; k < out.numel(); ++k) {
    const size_t ia = (size_t)idx[0][(size_t)k], ib = (size_t)idx[1][(size_t)k], iw = (size_t)idx[2][(size_t)k];
    store(out, k, a.is_float() ? vf(F(a.f[ia], b.f[ib], w.f[iw], p)) : vi(I(a.i[ia], b.i[ib], w.i[iw], p, a.dtype)));
  }
  return true;
}

double f_fma(double a, double b, double c, const double*) { return std::fma(a, b, c); }  // one rounding
int64_t i_fma(int64_t a, int64_t b, int64_t c, const double*, CTDataType) {
  return (int64_t)((uint64_t)a * (uint64_t)b + (uint64_t)c);
}
// PyTorch's form, exact at w = 0 and w = 1.
double f_lerp(double a, double b, double w, const double*) {
  return w < 0.5 ? a + w * (b - a) : b - (b - a) * (1 - w);
}
// input + value * t1 * t2 (and / t2), exactly (long double) and rounded once.
double f_addcmul(double a, double b, double c, const double* p) {
  return (double)((long double)a + (long double)p[0] * b * c);
}
int64_t i_addcmul(int64_t a, int64_t b, int64_t c, const double* p, CTDataType) {  // wraps
  return (int64_t)((uint64_t)a + (uint64_t)(Int128)p[0] * (uint64_t)b * (uint64_t)c);
}
double f_addcdiv(double a, double b, double c, const double* p) {
  return (double)((long double)a + (long double)p[0] * b / c);
}
// clamp with tensor bounds: NaN anywhere gives NaN; lo > hi gives hi.
double f_clamp_tensor(double x, double lo, double hi, const double*) {
  if (std::isnan(lo)) return lo;
  if (std::isnan(hi)) return hi;
  const double r = x < lo ? lo : x;
  return r > hi ? hi : r;
}
int64_t i_clamp_tensor(int64_t x, int64_t lo, int64_t hi, const double*, CTDataType d) {
  const Int128 v = exact(x, d), l = exact(lo, d), h = exact(hi, d), r = v < l ? l : v;
  return (int64_t)(uint64_t)(r > h ? h : r);
}

// where(cond, a, b): cond (bool) nonzero picks a; a, b, out of any one dtype.
bool ref_where(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 3, why) || !need_output(c, o, why)) return false;
  const Array &cond = *c.inputs[0], &a = *c.inputs[1], &b = *c.inputs[2];
  Array& out = *o[0];
  std::vector<int64_t> idx[3];
  if (!ternary_index(c, out, idx, why)) return false;
  for (int64_t k = 0; k < out.numel(); ++k)
    store(out, k,
          cond.get(idx[0][(size_t)k]) != 0 ? load(a, idx[1][(size_t)k]) : load(b, idx[2][(size_t)k]));
  return true;
}

// ---------------------------------------------------------------------------
// cast: float -> int truncates and saturates (NaN -> 0); int -> int wraps;
// -> bool is x != 0 (NaN true); -> float rounds once to nearest even (the
// value stored is the rounded one: a rounding is what cast computes).
// ---------------------------------------------------------------------------

// The integer v (|v| < 2^64) rounded once (nearest even) to a float of mbits
// mantissa bits, as a double (exact: every such value is a double).
double round_int(Int128 v, int mbits) {
  const uint64_t m = (uint64_t)(v < 0 ? -v : v);
  int top = 63;
  while (top > 0 && !((m >> top) & 1)) --top;
  if (m == 0 || top <= mbits) return (double)v;  // exact
  const int shift = top - mbits;
  uint64_t keep = m >> shift;
  const uint64_t rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
  if (rem > half || (rem == half && (keep & 1))) ++keep;
  const double val = std::ldexp((double)keep, shift);
  return v < 0 ? -val : val;
}

int mantissa_bits(CTDataType d) {
  if (d.code == CT_BFLOAT) return 7;
  if (d.code == CT_FLOAT8_E4M3FN || d.code == CT_FLOAT8_E4M3FNUZ) return 3;
  if (d.code == CT_FLOAT8_E5M2 || d.code == CT_FLOAT8_E5M2FNUZ) return 2;
  return d.bits == 16 ? 10 : d.bits == 32 ? 23 : 52;
}

// v rounded to float dtype d as a cast with mode params[0] (CTCastMode)
// does: saturating to a float8 dtype when the mode says so.
double cast_round(double v, CTDataType d, bool saturate) {
  if (is_float8(d)) return f8_to_double(f8_from_double(v, d, saturate), d);
  return round_to(v, d);
}

bool ref_cast(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 1, why) || !need_output(c, o, why)) return false;
  const Array& x = *c.inputs[0];
  Array& out = *o[0];
  if (x.numel() != out.numel()) return fail(why, "cast: x" + str(x.shape) + " and out" + str(out.shape));
  const CTDataType od = out.dtype;
  const bool sat = !c.params.empty() && c.params[0] == (double)CT_CAST_SATURATE;
  for (int64_t k = 0; k < x.numel(); ++k) {
    if (x.is_float()) {
      const double v = x.f[(size_t)k];
      if (out.is_float()) {
        out.f[(size_t)k] = cast_round(v, od, sat);
      } else if (dt_bool(od)) {
        out.i[(size_t)k] = v != 0;  // NaN is true
      } else if (std::isnan(v)) {
        out.i[(size_t)k] = 0;
      } else {
        // In Int128 every bound is exact: [min, max + 1) of the dtype, and
        // trunc(v) converts exactly inside it (|t| < 2^64 there).
        const double t = std::trunc(v);
        const Int128 lo = dt_min(od), hi = dt_max(od);
        const Int128 r = t <= (double)lo ? lo : t >= (double)(hi + 1) ? hi : (Int128)t;
        out.i[(size_t)k] = (int64_t)(uint64_t)r;  // a uint64 above INT64_MAX: its bits
      }
    } else {
      const int64_t v = x.i[(size_t)k];
      if (out.is_float()) {
        const double r = round_int(exact(v, x.dtype), mantissa_bits(od));
        out.f[(size_t)k] = od.bits == 64 ? r : cast_round(r, od, sat);  // this only overflows here
      } else {
        out.i[(size_t)k] = wrap((uint64_t)v, od);
      }
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// The table: one entry per op
// ---------------------------------------------------------------------------

const Entry kElementwise[] = {
    {CT_OP_NEG, unary<f_neg, i_neg>},
    {CT_OP_ABS, unary<f_abs, i_abs>},
    {CT_OP_SIGN, unary<f_sign, i_sign>},
    {CT_OP_EXP, unary<f_exp>},
    {CT_OP_EXPM1, unary<f_expm1>},
    {CT_OP_EXP2, unary<f_exp2>},
    {CT_OP_LOG, unary<f_log>},
    {CT_OP_LOG1P, unary<f_log1p>},
    {CT_OP_LOG2, unary<f_log2>},
    {CT_OP_SQRT, unary<f_sqrt>},
    {CT_OP_RSQRT, unary<f_rsqrt>},
    {CT_OP_RECIPROCAL, unary<f_reciprocal, i_reciprocal>},
    {CT_OP_SQUARE, unary<f_square, i_square>},
    {CT_OP_SIN, unary<f_sin>},
    {CT_OP_COS, unary<f_cos>},
    {CT_OP_TAN, unary<f_tan>},
    {CT_OP_TANH, unary<f_tanh>},
    {CT_OP_SIGMOID, unary<f_sigmoid>},
    {CT_OP_RELU, unary<f_relu, i_relu>},
    {CT_OP_GELU, unary<f_gelu>},
    {CT_OP_GELU_TANH, unary<f_gelu_tanh>},
    {CT_OP_SILU, unary<f_silu>},
    {CT_OP_SOFTPLUS, unary<f_softplus>},
    {CT_OP_ERF, unary<f_erf>},
    {CT_OP_FLOOR, unary<f_floor, i_identity>},
    {CT_OP_CEIL, unary<f_ceil, i_identity>},
    {CT_OP_ROUND, unary<f_round, i_identity>},
    {CT_OP_TRUNC, unary<f_trunc, i_identity>},
    {CT_OP_LOGICAL_NOT, unary<f_logical_not, i_logical_not>},
    {CT_OP_BITWISE_NOT, unary<nullptr, i_bitwise_not>},
    {CT_OP_ISNAN, unary<f_isnan, i_false>},
    {CT_OP_ISINF, unary<f_isinf, i_false>},
    {CT_OP_ISFINITE, unary<f_isfinite, i_true>},
    {CT_OP_LEAKY_RELU, unary<f_leaky_relu>},
    {CT_OP_ELU, unary<f_elu>},
    {CT_OP_CELU, unary<f_celu>},
    {CT_OP_HARDSHRINK, unary<f_hardshrink>},
    {CT_OP_SOFTSHRINK, unary<f_softshrink>},
    {CT_OP_THRESHOLD, unary<f_threshold>},
    {CT_OP_CLAMP, unary<f_clamp, i_clamp>},
    {CT_OP_POW_SCALAR, unary<f_pow_scalar>},
    {CT_OP_ADD_SCALAR, unary<f_add_scalar, i_add_scalar>},
    {CT_OP_MUL_SCALAR, unary<f_mul_scalar, i_mul_scalar>},
    {CT_OP_WHERE, ref_where},
    {CT_OP_FMA, ternary<f_fma, i_fma>},
    {CT_OP_LERP, ternary<f_lerp>},
    {CT_OP_ADDCMUL, ternary<f_addcmul, i_addcmul>},
    {CT_OP_ADDCDIV, ternary<f_addcdiv>},
    {CT_OP_CLAMP_TENSOR, ternary<f_clamp_tensor, i_clamp_tensor>},
    {CT_OP_CAST, ref_cast},
    {CT_OP_HARDSWISH, unary<f_hardswish>},
    {CT_OP_LOG10, unary<f_log10>},
    {CT_OP_SINH, unary<f_sinh>},
    {CT_OP_COSH, unary<f_cosh>},
    {CT_OP_ASIN, unary<f_asin>},
    {CT_OP_ACOS, unary<f_acos>},
    {CT_OP_ATAN, unary<f_atan>},
    {CT_OP_ASINH, unary<f_asinh>},
    {CT_OP_ACOSH, unary<f_acosh>},
    {CT_OP_ATANH, unary<f_atanh>},
    {CT_OP_ERFC, unary<f_erfc>},
    {CT_OP_LGAMMA, unary<f_lgamma>},
    {CT_OP_DIGAMMA, unary<f_digamma>},
    {CT_OP_ERFINV, unary<f_erfinv>},
    {CT_OP_LOGIT, unary<f_logit>},
    {CT_OP_FRAC, unary<f_frac>},
    {CT_OP_HARDSIGMOID, unary<f_hardsigmoid>},
    {CT_OP_MISH, unary<f_mish>},
    {CT_OP_SELU, unary<f_selu>},
    {CT_OP_SOFTSIGN, unary<f_softsign>},
    {CT_OP_LOGSIGMOID, unary<f_logsigmoid>},
    {CT_OP_SIGNBIT, unary<f_signbit, i_signbit>},
    {CT_OP_HARDTANH, unary<f_clamp>},
    {CT_OP_RELU6, unary<f_relu6, i_relu6>},
    {CT_OP_TANHSHRINK, unary<f_tanhshrink>},
    {CT_OP_ISPOSINF, unary<f_isposinf, i_false>},
    {CT_OP_ISNEGINF, unary<f_isneginf, i_false>},
    {CT_OP_DEG2RAD, unary<f_deg2rad>},
    {CT_OP_RAD2DEG, unary<f_rad2deg>},
    {CT_OP_SINC, unary<f_sinc>},
    {CT_OP_NDTR, unary<f_ndtr>},
    {CT_OP_NDTRI, unary<f_ndtri>},
    {CT_OP_ENTR, unary<f_entr>},
    {CT_OP_ROUND_DECIMALS, round_decimals},
    {CT_OP_POSITIVE, unary<f_identity_f, i_identity>},
    {CT_OP_SOFTPLUS_BETA, unary<f_softplus_beta>},
    {CT_OP_SPHERICAL_BESSEL_J0, unary<f_spherical_bessel_j0>},
    {CT_OP_ERFCX, unary<f_erfcx>},
    {CT_OP_LOG_NDTR, unary<f_log_ndtr>},
    {CT_OP_BESSEL_J0, unary<f_bessel<0, 0, false>>},
    {CT_OP_AIRY_AI, unary<f_airy_ai>},
    {CT_OP_BESSEL_J1, unary<f_bessel<0, 1, false>>},
    {CT_OP_BESSEL_Y0, unary<f_bessel<1, 0, false>>},
    {CT_OP_BESSEL_Y1, unary<f_bessel<1, 1, false>>},
    {CT_OP_MODIFIED_BESSEL_I0, unary<f_bessel<2, 0, false>>},
    {CT_OP_MODIFIED_BESSEL_I1, unary<f_bessel<2, 1, false>>},
    {CT_OP_I0E, unary<f_bessel<2, 0, true>>},
    {CT_OP_I1E, unary<f_bessel<2, 1, true>>},
    {CT_OP_MODIFIED_BESSEL_K0, unary<f_bessel<3, 0, false>>},
    {CT_OP_MODIFIED_BESSEL_K1, unary<f_bessel<3, 1, false>>},
    {CT_OP_SCALED_MODIFIED_BESSEL_K0, unary<f_bessel<3, 0, true>>},
    {CT_OP_SCALED_MODIFIED_BESSEL_K1, unary<f_bessel<3, 1, true>>},
    {CT_OP_POLYGAMMA, unary<f_polygamma>},
    {CT_OP_MVLGAMMA, unary<f_mvlgamma>},
};

}  // namespace

CTREF_TABLE(elementwise_table, kElementwise)

}  // namespace ctref
