// binary.cc — references of the broadcasting binary ops (category 2), each
// written from its definition in notes/SEMANTICS.md in double or exact
// integer arithmetic (floor division and Python's modulus from
// a == q*b + m, not from any kernel's formula); the table sits at the end.
#include "ref_internal.h"

namespace ctref {
namespace {

// F: float dtypes, on the exact double values (one rounding to the output
// dtype happens later, in the comparison). I: integer and bool dtypes, the
// elements as Array::i holds them (exact(a, d) their values: an unsigned
// dtype's are never negative), wrapped to the output dtype by store(). An op
// without I whose output is a float dtype (div) runs F on the integers as
// doubles.
typedef double (*F2)(double a, double b);
typedef int64_t (*I2)(int64_t a, int64_t b, CTDataType d);

// The broadcast walk of a binary op: each(a, b, out, k, x, y) stores
// out[k] from a's element x and b's element y.
template <class Each>
bool binary_walk(const Call& c, const Outs& o, std::string* why, Each each) {
  if (!need_inputs(c, 2, why) || !need_output(c, o, why)) return false;
  const Array &a = *c.inputs[0], &b = *c.inputs[1];
  Array& out = *o[0];
  std::vector<int64_t> ia, ib;
  if (!broadcast_index(a.shape, out.shape, &ia, why, "a") || !broadcast_index(b.shape, out.shape, &ib, why, "b"))
    return false;
  for (int64_t k = 0; k < out.numel(); ++k) each(a, b, out, k, (size_t)ia[(size_t)k], (size_t)ib[(size_t)k]);
  return true;
}

template <F2 F, I2 I = nullptr>
bool binary(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 2, why) || !need_output(c, o, why)) return false;
  const Array &a = *c.inputs[0];
  const Array& out = *o[0];
  const bool as_double = !a.is_float() && !has_form(I) && has_form(F) && out.is_float();
  if (a.is_float() ? !has_form(F) : (!has_form(I) && !as_double))
    return fail(why, name_of(c) + ": not defined for " + dtype_name(a.dtype));
  return binary_walk(c, o, why, [as_double](const Array& a, const Array& b, Array& out, int64_t k, size_t x, size_t y) {
    if (a.is_float()) store(out, k, vf(F(a.f[x], b.f[y])));
    else if (as_double) store(out, k, vf(F(to_double(a.i[x], a.dtype), to_double(b.i[y], b.dtype))));
    else store(out, k, vi(I(a.i[x], b.i[y], a.dtype)));
  });
}

// nextafter steps in the dtype's own values: float32's nextafterf, float64's nextafter.
bool ref_nextafter(const Call& c, const Outs& o, std::string* why) {
  if (!need_inputs(c, 2, why)) return false;
  const CTDataType dt = c.inputs[0]->dtype;
  const bool f32 = dt.code == CT_FLOAT && dt.bits == 32, f64 = dt.code == CT_FLOAT && dt.bits == 64;
  if (!f32 && !f64) return fail(why, name_of(c) + ": not defined for " + dtype_name(dt));
  return binary_walk(c, o, why, [f32](const Array& a, const Array& b, Array& out, int64_t k, size_t x, size_t y) {
    store(out, k, vf(f32 ? (double)std::nextafter((float)a.f[x], (float)b.f[y]) : std::nextafter(a.f[x], b.f[y])));
  });
}

// ---- arithmetic ---------------------------------------------------------------

double f_add(double a, double b) { return a + b; }
int64_t i_add(int64_t a, int64_t b, CTDataType) { return (int64_t)((uint64_t)a + (uint64_t)b); }  // bool: or
double f_sub(double a, double b) { return a - b; }
int64_t i_sub(int64_t a, int64_t b, CTDataType) { return (int64_t)((uint64_t)a - (uint64_t)b); }
double f_mul(double a, double b) { return a * b; }
int64_t i_mul(int64_t a, int64_t b, CTDataType) { return (int64_t)((uint64_t)a * (uint64_t)b); }  // bool: and
double f_div(double a, double b) { return a / b; }  // integers: (double)a / (double)b into float64

// Integer floor division from the definition: q = floor(a / b), the integer
// with a == q*b + m and m of b's sign, |m| < |b|. On magnitudes: floor of a
// non-negative quotient is the quotient of magnitudes, of a negative one
// minus the rounded-up quotient of magnitudes. Exact values (|a|, |b| < 2^64);
// the result wraps as the dtype does when stored (INT_MIN // -1 = INT_MIN);
// x // 0 = 0 (SEMANTICS).
Int128 floor_div_exact(Int128 a, Int128 b) {
  if (b == 0) return 0;
  const Int128 ma = a < 0 ? -a : a, mb = b < 0 ? -b : b;
  const Int128 q = ma / mb, up = q + (ma % mb != 0);
  return (a < 0) == (b < 0) ? q : -up;
}
int64_t i_floor_div(int64_t a, int64_t b, CTDataType d) {
  return (int64_t)(uint64_t)floor_div_exact(exact(a, d), exact(b, d));
}
// m = a - floor(a / b) * b (exact: |m| < |b|); x % 0 = 0.
int64_t i_mod(int64_t a, int64_t b, CTDataType d) {
  const Int128 x = exact(a, d), y = exact(b, d);
  if (y == 0) return 0;
  return (int64_t)(uint64_t)(x - floor_div_exact(x, y) * y);
}

// Float floor division and modulus from the same definition. q is found
// exactly: floor(a / b) rounded, then corrected until a - q*b (its sign known
// exactly through fma) has b's sign or is 0, and a - (q+1)*b has not.
// Zero results take the sign of a / b (q) and of b (m), as NumPy; b = 0 gives
// a / b (q) and NaN (m); else an infinite a gives NaN; a finite a over an infinite b
// gives q = 0 or -1 (m = a or b). Quotients beyond 2^52 are the rounded
// quotient (every double there is an integer).
bool same_sign_as(double r, double b) { return r == 0 || (r < 0) == (b < 0); }

double floor_quotient(double a, double b) {
  if (b == 0) return a / b;
  if (std::isnan(a) || std::isnan(b) || std::isinf(a)) return kNaN;
  if (std::isinf(b)) return (a == 0 || (a < 0) == (b < 0)) ? std::copysign(0.0, a / b) : -1.0;
  const double t = a / b;
  if (!(std::fabs(t) < 4503599627370496.0)) return t;  // 2^52
  double q = std::floor(t);
  while (!same_sign_as(std::fma(-q, b, a), b)) q -= 1;
  while (same_sign_as(std::fma(-(q + 1), b, a), b)) q += 1;
  return q == 0 ? std::copysign(0.0, t) : q;
}

double f_floor_div(double a, double b) { return floor_quotient(a, b); }

double f_mod(double a, double b) {
  if (std::isnan(a) || std::isnan(b) || std::isinf(a) || b == 0) return kNaN;
  if (std::isinf(b)) return (a == 0) ? std::copysign(0.0, b) : (a < 0) == (b < 0) ? a : b;
  const double q = floor_quotient(a, b);
  double m;
  if (std::fabs(q) < 4503599627370496.0) {
    m = std::fma(-q, b, a);  // a - q*b, exact before its one rounding
  } else {  // q is only the rounded quotient: the truncated remainder (exact), moved to b's side
    m = std::fmod(a, b);
    if (m != 0 && (m < 0) != (b < 0)) m += b;
  }
  return m == 0 ? std::copysign(0.0, b) : m;
}

double f_pow(double a, double b) { return std::pow(a, b); }
// a^b modulo 2^64 by squaring (wraps as the dtype after store); b < 0:
// 1 / a^-b truncated: 1 for a = 1, +-1 for a = -1 by parity, else 0.
int64_t i_pow(int64_t a, int64_t b, CTDataType d) {
  if (exact(b, d) < 0) return a == 1 ? 1 : exact(a, d) == -1 ? ((b & 1) ? -1 : 1) : 0;
  uint64_t r = 1, base = (uint64_t)a;
  for (uint64_t e = (uint64_t)b; e; e >>= 1) {
    if (e & 1) r *= base;
    base *= base;
  }
  return (int64_t)r;
}

// ---- maxima, signs, bits ----------------------------------------------------------

double f_maximum(double a, double b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a > b ? a : b); }
double f_minimum(double a, double b) { return std::isnan(a) ? a : std::isnan(b) ? b : (a < b ? a : b); }
int64_t i_max(int64_t a, int64_t b, CTDataType d) { return exact(a, d) > exact(b, d) ? a : b; }  // maximum, fmax
int64_t i_min(int64_t a, int64_t b, CTDataType d) { return exact(a, d) < exact(b, d) ? a : b; }  // minimum, fmin
double f_fmax(double a, double b) { return std::fmax(a, b); }
double f_fmin(double a, double b) { return std::fmin(a, b); }
double f_atan2(double a, double b) { return std::atan2(a, b); }
double f_fmod(double a, double b) { return std::fmod(a, b); }
// C's truncated remainder; x fmod 0 = 0 (as mod).
int64_t i_fmod(int64_t a, int64_t b, CTDataType d) {
  const Int128 x = exact(a, d), y = exact(b, d);
  if (y == 0) return 0;
  return (int64_t)(uint64_t)(x % y);
}
// log(e^a + e^b) and log2(2^a + 2^b) from the larger: NaN gives NaN,
// equal infinities that infinity, a lone +inf inf, -inf the other.
double f_logaddexp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return a + std::log(2.0);
  const double m = std::fmax(a, b), n = std::fmin(a, b);
  return m + std::log1p(std::exp(n - m));
}
double f_logaddexp2(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return a + 1;
  const double m = std::fmax(a, b), n = std::fmin(a, b);
  return m + std::log1p(std::exp2(n - m)) / std::log(2.0);
}
double f_xlogy(double a, double b) {
  if (std::isnan(b)) return b;
  return a == 0 ? 0.0 : a * std::log(b);
}
double f_xlog1py(double a, double b) {
  if (std::isnan(b)) return b;
  return a == 0 ? 0.0 : (double)((long double)a * log1pl(b));
}
// The orthogonal polynomials by their recurrences in long double, without
// the kernels' trigonometric forms; the degree as the kernels take it
// (truncated; 0 for n < 0 and for NaN, infinite or out-of-int64 n).
bool degree_ref(double nf, long* n) {
  if (!(std::fabs(nf) < 9.2e18) || std::trunc(nf) < 0) return false;
  *n = (long)std::trunc(nf);
  return true;
}
// kind 0..3: Chebyshev T, U, V, W; 4: Hermite H, 5: He; 6: Laguerre; 7: Legendre.
double poly_ref(double xd, double nf, int kind) {
  long n;
  if (!degree_ref(nf, &n)) return 0.0;
  const long double x = xd;
  if (kind == 6 && x == 0) return 1.0;
  if (n == 0) return 1.0;
  long double p = 1, q;
  switch (kind) {
    case 0: case 7: q = x; break;
    case 1: case 4: q = 2 * x; break;
    case 2: q = 2 * x - 1; break;
    case 3: q = 2 * x + 1; break;
    case 5: q = x; break;
    default: q = 1 - x; break;
  }
  for (long k = 1; k < n && std::isfinite((double)q); ++k) {
    long double r;
    if (kind <= 3) r = 2 * x * q - p;
    else if (kind == 4) r = 2 * x * q - 2 * k * p;
    else if (kind == 5) r = x * q - k * p;
    else if (kind == 6) r = ((2 * k + 1 - x) * q - k * p) / (k + 1);
    else r = ((2 * k + 1) * x * q - k * p) / (k + 1);
    p = q;
    q = r;
  }
  return (double)q;
}
template <int kKind, bool kShifted> double f_poly(double x, double n) {
  return poly_ref(kShifted ? 2 * x - 1 : x, n, kKind);
}
double f_zeta(double s, double q) {
  if (s == 1) return HUGE_VAL;
  if (s < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return HUGE_VAL;
    if (s != std::floor(s)) return kNaN;
  }
  if (std::isnan(s) || std::isnan(q)) return s + q;
  if (std::isinf(s)) return q > 1 ? 0.0 : q == 1 ? 1.0 : HUGE_VAL;
  if (std::isinf(q)) return 0.0;
  long double sum = 0, a = q;
  for (; a < 60; a += 1) sum += powl(a, -(long double)s);
  const long double f = powl(a, -(long double)s), ls = s;
  return (double)(sum + a * f / (ls - 1) + f / 2 + ls * f / a / 12 - ls * (ls + 1) * (ls + 2) * f / (a * a * a) / 720 +
                  ls * (ls + 1) * (ls + 2) * (ls + 3) * (ls + 4) * f / powl(a, 5) / 30240);
}
// P(a, x) and Q(a, x) in long double: P by its series (positive terms) where
// x < a + 5, else Q by its continued fraction; the other as 1 minus.
double igamma_ref(double ad, double xd, bool upper) {
  if (ad < 0 || xd < 0) return kNaN;
  if (ad == 0) return xd > 0 ? (upper ? 0.0 : 1.0) : kNaN;
  if (xd == 0) return upper ? 1.0 : 0.0;
  if (std::isinf(ad)) return std::isinf(xd) ? kNaN : upper ? 1.0 : 0.0;
  if (std::isinf(xd)) return upper ? 0.0 : 1.0;
  if (std::isnan(ad) || std::isnan(xd)) return ad + xd;
  const long double a = ad, x = xd;
  int sign;
  const long double pre = expl(a * logl(x) - x - lgammal_r(a, &sign));
  if (x < a + 5) {
    long double term = 1 / a, sum = term;
    for (int k = 1; k < 200000 && term > sum * 1e-21L; ++k) {
      term *= x / (a + k);
      sum += term;
    }
    const long double pv = sum * pre;
    return (double)(upper ? 1 - pv : pv);
  }
  // Q = pre / (x + 1 - a - 1 (1 - a) / (x + 3 - a - 2 (2 - a) / (x + 5 - a - ...))), evaluated bottom up
  long double t = 0;
  for (int k = 400; k >= 1; --k) t = k * (k - a) / (x + 2 * k + 1 - a - t);
  const long double qv = pre / (x + 1 - a - t);
  return (double)(upper ? qv : 1 - qv);
}
double f_igamma(double a, double x) { return igamma_ref(a, x, false); }
double f_igammac(double a, double x) { return igamma_ref(a, x, true); }
double f_prelu(double a, double b) { return a >= 0 || std::isnan(a) ? a : b * a; }
double f_relu_backward(double g, double x) { return x <= 0 ? 0.0 : g; }  // a NaN x passes g
double f_ldexp(double a, double b) { return a * std::exp2(b); }
double f_heaviside(double a, double b) { return std::isnan(a) ? a : a < 0 ? 0.0 : a > 0 ? 1.0 : b; }
// gcd and lcm of the exact magnitudes (>= 0), wrapped as the dtype does when stored.
uint64_t gcd_exact(Int128 a, Int128 b) {
  uint64_t x = (uint64_t)(a < 0 ? -a : a), y = (uint64_t)(b < 0 ? -b : b);
  while (y != 0) {
    const uint64_t r = x % y;
    x = y;
    y = r;
  }
  return x;
}
int64_t i_gcd(int64_t a, int64_t b, CTDataType d) { return (int64_t)gcd_exact(exact(a, d), exact(b, d)); }
int64_t i_lcm(int64_t a, int64_t b, CTDataType d) {
  const Int128 x = exact(a, d), y = exact(b, d);
  if (x == 0 || y == 0) return 0;
  const uint64_t g = gcd_exact(x, y), mx = (uint64_t)(x < 0 ? -x : x), my = (uint64_t)(y < 0 ? -y : y);
  return (int64_t)(mx / g * my);  // mod 2^64
}
double f_hypot(double a, double b) { return std::hypot(a, b); }
double f_copysign(double a, double b) { return std::copysign(a, b); }
int64_t i_and(int64_t a, int64_t b, CTDataType) { return a & b; }
int64_t i_or(int64_t a, int64_t b, CTDataType) { return a | b; }
int64_t i_xor(int64_t a, int64_t b, CTDataType) { return a ^ b; }
// a * 2^b modulo 2^64 (wrapped to the dtype); a count outside [0, bits) gives 0.
int64_t i_left_shift(int64_t a, int64_t b, CTDataType d) {
  if (exact(b, d) < 0 || exact(b, d) >= d.bits) return 0;
  return (int64_t)((uint64_t)a * ((uint64_t)1 << b));
}
// floor(a / 2^b) (arithmetic shift; unsigned values are never negative, so
// logical there); a count outside [0, bits) fills with the sign.
int64_t i_right_shift(int64_t a, int64_t b, CTDataType d) {
  if (exact(b, d) < 0 || exact(b, d) >= d.bits) return exact(a, d) < 0 ? -1 : 0;
  return (int64_t)(uint64_t)floor_div_exact(exact(a, d), (Int128)1 << b);
}

// ---- logic and comparisons (bool out; NaN is true, and compares false) -------------

double f_logical_and(double a, double b) { return a != 0 && b != 0; }
int64_t i_logical_and(int64_t a, int64_t b, CTDataType) { return a != 0 && b != 0; }
double f_logical_or(double a, double b) { return a != 0 || b != 0; }
int64_t i_logical_or(int64_t a, int64_t b, CTDataType) { return a != 0 || b != 0; }
double f_logical_xor(double a, double b) { return (a != 0) != (b != 0); }
int64_t i_logical_xor(int64_t a, int64_t b, CTDataType) { return (a != 0) != (b != 0); }
double f_equal(double a, double b) { return a == b; }
int64_t i_equal(int64_t a, int64_t b, CTDataType) { return a == b; }
double f_not_equal(double a, double b) { return a != b; }
int64_t i_not_equal(int64_t a, int64_t b, CTDataType) { return a != b; }
double f_less(double a, double b) { return a < b; }
int64_t i_less(int64_t a, int64_t b, CTDataType d) { return exact(a, d) < exact(b, d); }
double f_less_equal(double a, double b) { return a <= b; }
int64_t i_less_equal(int64_t a, int64_t b, CTDataType d) { return exact(a, d) <= exact(b, d); }
double f_greater(double a, double b) { return a > b; }
int64_t i_greater(int64_t a, int64_t b, CTDataType d) { return exact(a, d) > exact(b, d); }
double f_greater_equal(double a, double b) { return a >= b; }
int64_t i_greater_equal(int64_t a, int64_t b, CTDataType d) { return exact(a, d) >= exact(b, d); }

// ---------------------------------------------------------------------------
// The table: one entry per op
// ---------------------------------------------------------------------------

const Entry kBinary[] = {
    {CT_OP_ADD, binary<f_add, i_add>},
    {CT_OP_SUB, binary<f_sub, i_sub>},
    {CT_OP_MUL, binary<f_mul, i_mul>},
    {CT_OP_DIV, binary<f_div>},
    {CT_OP_FLOOR_DIV, binary<f_floor_div, i_floor_div>},
    {CT_OP_MOD, binary<f_mod, i_mod>},
    {CT_OP_POW, binary<f_pow, i_pow>},
    {CT_OP_MAXIMUM, binary<f_maximum, i_max>},
    {CT_OP_MINIMUM, binary<f_minimum, i_min>},
    {CT_OP_FMAX, binary<f_fmax, i_max>},
    {CT_OP_FMIN, binary<f_fmin, i_min>},
    {CT_OP_ATAN2, binary<f_atan2>},
    {CT_OP_FMOD, binary<f_fmod, i_fmod>},
    {CT_OP_LOGADDEXP, binary<f_logaddexp>},
    {CT_OP_LOGADDEXP2, binary<f_logaddexp2>},
    {CT_OP_XLOGY, binary<f_xlogy>},
    {CT_OP_XLOG1PY, binary<f_xlog1py>},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_T, binary<f_poly<0, false>>},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_U, binary<f_poly<1, false>>},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_V, binary<f_poly<2, false>>},
    {CT_OP_CHEBYSHEV_POLYNOMIAL_W, binary<f_poly<3, false>>},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_T, binary<f_poly<0, true>>},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_U, binary<f_poly<1, true>>},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_V, binary<f_poly<2, true>>},
    {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_W, binary<f_poly<3, true>>},
    {CT_OP_HERMITE_POLYNOMIAL_H, binary<f_poly<4, false>>},
    {CT_OP_HERMITE_POLYNOMIAL_HE, binary<f_poly<5, false>>},
    {CT_OP_LAGUERRE_POLYNOMIAL_L, binary<f_poly<6, false>>},
    {CT_OP_LEGENDRE_POLYNOMIAL_P, binary<f_poly<7, false>>},
    {CT_OP_ZETA, binary<f_zeta>},
    {CT_OP_IGAMMA, binary<f_igamma>},
    {CT_OP_IGAMMAC, binary<f_igammac>},
    {CT_OP_NEXTAFTER, ref_nextafter},
    {CT_OP_HEAVISIDE, binary<f_heaviside>},
    {CT_OP_PRELU, binary<f_prelu>},
    {CT_OP_RELU_BACKWARD, binary<f_relu_backward>},
    {CT_OP_LDEXP, binary<f_ldexp>},
    {CT_OP_GCD, binary<nullptr, i_gcd>},
    {CT_OP_LCM, binary<nullptr, i_lcm>},
    {CT_OP_HYPOT, binary<f_hypot>},
    {CT_OP_COPYSIGN, binary<f_copysign>},
    {CT_OP_BITWISE_AND, binary<nullptr, i_and>},
    {CT_OP_BITWISE_OR, binary<nullptr, i_or>},
    {CT_OP_BITWISE_XOR, binary<nullptr, i_xor>},
    {CT_OP_LEFT_SHIFT, binary<nullptr, i_left_shift>},
    {CT_OP_RIGHT_SHIFT, binary<nullptr, i_right_shift>},
    {CT_OP_LOGICAL_AND, binary<f_logical_and, i_logical_and>},
    {CT_OP_LOGICAL_OR, binary<f_logical_or, i_logical_or>},
    {CT_OP_LOGICAL_XOR, binary<f_logical_xor, i_logical_xor>},
    {CT_OP_EQUAL, binary<f_equal, i_equal>},
    {CT_OP_NOT_EQUAL, binary<f_not_equal, i_not_equal>},
    {CT_OP_LESS, binary<f_less, i_less>},
    {CT_OP_LESS_EQUAL, binary<f_less_equal, i_less_equal>},
    {CT_OP_GREATER, binary<f_greater, i_greater>},
    {CT_OP_GREATER_EQUAL, binary<f_greater_equal, i_greater_equal>},
};

}  // namespace

CTREF_TABLE(binary_table, kBinary)

}  // namespace ctref
