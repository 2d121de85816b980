// scalar.h — scalar formulas the CPU backend's kernels share (a binary op's
// element rule reused by a scan or a reduction), written once. Header-only,
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

}  // namespace math
}  // namespace ct

#endif  // CTENSOR_SRC_MATH_SCALAR_H_
