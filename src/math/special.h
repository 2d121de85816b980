// special.h — the special functions of src/math/special.inc for the CPU
// backend: that file's C, compiled here with T = double (the GPU modules
// compile the same text in their kernels' dialect). Header-only.
#ifndef CTENSOR_SRC_MATH_SPECIAL_H_
#define CTENSOR_SRC_MATH_SPECIAL_H_

#include <cmath>

namespace ct {
namespace math {
namespace sf {

using std::acos;
using std::copysign;
using std::cos;
using std::exp;
using std::fabs;
using std::floor;
using std::fmod;
using std::isfinite;
using std::ldexp;
using std::isinf;
using std::isnan;
using std::log;
using std::pow;
using std::rint;
using std::sin;
using std::sqrt;
using std::tan;
using std::trunc;

typedef double T;
// lgamma_r: std::lgamma writes the global signgam, a race between threads.
inline double lgamma_nostate(double x) {
  int sign;
  return lgamma_r(x, &sign);
}
#define CT_SF inline
#define CT_SF_LGAMMA(x) lgamma_nostate(x)
#include "math/special.inc"
#undef CT_SF
#undef CT_SF_LGAMMA

}  // namespace sf
}  // namespace math
}  // namespace ct

#endif  // CTENSOR_SRC_MATH_SPECIAL_H_
