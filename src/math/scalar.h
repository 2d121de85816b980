// scalar.h — scalar formulas the CPU backend's kernels share (a binary op's
// element rule reused by a scan or a reduction; special functions computed
// per element), written once. Header-only,
// generic in the floating type; no dependency on a backend.
#ifndef CTENSOR_SRC_MATH_SCALAR_H_
#define CTENSOR_SRC_MATH_SCALAR_H_

#include <cmath>

namespace ct {
namespace math {

// NumPy's npy_logaddexp: log(e^a + e^b) without overflow; equal inputs
// (infinities included) give a + log 2; a NaN difference gives NaN.
template <class T> inline T logaddexp(T a, T b) {
  if (a == b) return a + T(0.693147180559945309417232121458176568);
  const T t = a - b;
  if (t > 0) return a + std::log1p(std::exp(-t));
  if (t <= 0) return b + std::log1p(std::exp(t));
  return t;
}

// npy_logaddexp2: log2(2^a + 2^b), the same way.
template <class T> inline T logaddexp2(T a, T b) {
  if (a == b) return a + T(1);
  const T t = a - b;
  if (t > 0) return a + T(1.442695040888963407359924681001892137) * std::log1p(std::exp2(-t));
  if (t <= 0) return b + T(1.442695040888963407359924681001892137) * std::log1p(std::exp2(t));
  return t;
}

// e^(x^2) with x^2 split exactly into h + l (fma): exp(h) (1 + l), so the
// rounding of x^2 (up to 700 ulp of the result near the overflow) is not lost.
template <class T> inline T exp_sq(T x) {
  const T h = x * x, l = std::isinf(h) ? T(0) : std::fma(x, x, -h);  // inf - inf would be NaN
  return std::exp(h) * (T(1) + l);
}

// erfcx(x) = e^(x^2) erfc(x) for x >= 0: the product below the overflow of
// e^(x^2) (erfc keeps its relative precision there), the asymptotic series
// 1/(x sqrt(pi)) sum (-1)^k (2k-1)!! / (2x^2)^k above it (8 terms: beyond
// double precision from x = 26, float's from 9).
template <class T> inline T erfcx_nonneg(T x) {
  if (x < (sizeof(T) == 8 ? T(26) : T(9))) return exp_sq(x) * std::erfc(x);
  if (std::isinf(x)) return T(0);
  const T w = T(1) / (T(2) * x * x);
  T s = T(1), t = T(1);
  for (int k = 1; k <= 8; ++k) {
    t *= -T(2 * k - 1) * w;
    s += t;
  }
  return s * T(0.56418958354775628694807945156077259) / x;
}

// The scaled complementary error function; below 0 by 2 e^(x^2) - erfcx(-x)
// (+inf from x = -26.6 on, where 2 e^(x^2) overflows).
template <class T> inline T erfcx(T x) {
  if (x != x) return x;
  if (x >= T(0)) return erfcx_nonneg(x);
  return T(2) * exp_sq(x) - erfcx_nonneg(-x);
}

// log(ndtr(x)), PyTorch's form: log(erfcx(-x/sqrt2) / 2) - x^2/2 below -1
// (the lower tail without underflow), log1p(-erfc(x/sqrt2) / 2) above.
template <class T> inline T log_ndtr(T x) {
  const T t = x * T(0.70710678118654752440084436210484904);
  if (x < T(-1)) return std::log(erfcx(-t) / T(2)) - t * t;
  return std::log1p(-std::erfc(t) / T(2));
}

// The spherical Bessel function j0(x) = sin(x) / x: PyTorch's series below
// 1/2 (its error is below double's there), 1 at 0, 0 at +-inf.
template <class T> inline T spherical_bessel_j0(T x) {
  if (std::isinf(x)) return T(0);
  if (std::fabs(x) < T(0.5)) {
    const T z = x * x;
    return T(1) + z * (T(-1.0 / 6) + z * (T(1.0 / 120) + z * (T(-1.0 / 5040) + z * (T(1.0 / 362880) +
           z * (T(-1.0 / 39916800) + z * T(1.0 / 6227020800.0))))));
  }
  return std::sin(x) / x;
}

}  // namespace math
}  // namespace ct

#endif  // CTENSOR_SRC_MATH_SCALAR_H_
