// ctensor/cpp/scalar.hpp: ct::scalar, a 0-d tensor from a C++ number (how x + 2.0 converts its scalar).
#ifndef CTENSOR_CPP_SCALAR_HPP_
#define CTENSOR_CPP_SCALAR_HPP_

#include "dtype.hpp"
#include "error.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace ct {

/* ------------------------------------------------------------------------ */
/* Scalars                                                                   */
/* ------------------------------------------------------------------------ */

namespace detail {
// An arithmetic scalar argument (x + 2.0, ct::maximum(x, 0)).
template <class S>
struct EnableArith : std::enable_if<std::is_arithmetic<S>::value, int> {};

// v < 0, with no always-false comparison written for an unsigned S.
template <class S>
inline bool is_negative(S v, std::true_type) {
  return v < static_cast<S>(0);
}
template <class S>
inline bool is_negative(S, std::false_type) {
  return false;
}

inline std::string num_str(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// [lo, hi] of an integer or bool dtype, and top = hi + 1 as a double (a power
// of two for the integer dtypes: exact); false for the float (and unknown)
// dtypes.
inline bool int_range(CTDataType dt, int64_t* lo, uint64_t* hi, double* top) {
  if (dt.lanes != 1) return false;
  if (dt.code == CT_BOOL && dt.bits == 8) {
    *lo = 0;
    *hi = 1;
    *top = 2.0;
    return true;
  }
  if ((dt.code != CT_INT && dt.code != CT_UINT) || (dt.bits != 8 && dt.bits != 16 && dt.bits != 32 && dt.bits != 64))
    return false;
  const int value_bits = dt.code == CT_INT ? dt.bits - 1 : dt.bits;
  *top = static_cast<double>(uint64_t(1) << (value_bits - 1)) * 2.0;  // 2^value_bits
  *hi = value_bits == 64 ? UINT64_MAX : (uint64_t(1) << value_bits) - 1;
  *lo = dt.code == CT_UINT ? 0 : value_bits == 63 ? INT64_MIN : -(int64_t(1) << value_bits);
  return true;
}

// A 0-d tensor of dtype @p dt on @p device from a host 0-d source, after the
// representability check (integer/bool targets only). An integral value is
// @p neg (then @p i, negative) or @p u.
inline Tensor scalar_from(const TensorView& src, bool integral, bool neg, int64_t i, uint64_t u, double f,
                          CTDataType dt, CTDevice device, void* stream) {
  int64_t lo = 0;
  uint64_t hi = 0;
  double top = 0;
  if (int_range(dt, &lo, &hi, &top)) {
    bool ok;
    if (integral) {
      ok = neg ? i >= lo : u <= hi;
    } else {
      // Integral and within [lo, hi] (NaN fails every comparison; top = hi + 1,
      // a power of two, is out of range).
      ok = f >= static_cast<double>(lo) && f < top && std::trunc(f) == f;
    }
    if (!ok)
      fail(CT_ERR_INVALID_ARGUMENT,
           "ct::scalar: " +
               (!integral ? num_str(f) : neg ? std::to_string(static_cast<long long>(i))
                                             : std::to_string(static_cast<unsigned long long>(u))) +
               " is not representable in " + dtype::name(dt));
  }
  Tensor out = Tensor::empty(std::vector<int64_t>(), dt, cpu());
  CTensor o = out.c();
  check(ct_cast(&src.c(), &o, stream));
  return out.to(device, stream);
}
}  // namespace detail

/** A 0-d tensor of dtype @p dt on @p device holding @p value (any arithmetic
 *  C++ type), converted with ct_cast. For integer and bool dtypes the value
 *  must be integral and in the dtype's range (bool: 0 or 1), else
 *  CT_ERR_INVALID_ARGUMENT; for float dtypes it is rounded to nearest.
 *  This is how `x + 2.0` and `x += 1` treat their scalar: it takes x's dtype
 *  (NumPy's "weak" Python scalars), so int32 x + 2.5 throws rather than
 *  promoting. */
template <class S>
inline Tensor scalar(S value, CTDataType dt, CTDevice device = cpu(), void* stream = nullptr) {
  static_assert(std::is_arithmetic<S>::value, "ct::scalar: the value must be arithmetic");
  if (std::is_floating_point<S>::value) {
    double f = static_cast<double>(value);
    TensorView src(&f, std::vector<int64_t>());
    return detail::scalar_from(src, false, false, 0, 0, f, dt, device, stream);
  }
  // Integers: a negative one through an int64, the others through a uint64
  // (up to 2^64 - 1, uint64's top), converted exactly by ct_cast.
  if (detail::is_negative(value, std::integral_constant<bool, std::is_signed<S>::value>())) {
    int64_t i = static_cast<int64_t>(value);
    TensorView src(&i, std::vector<int64_t>());
    return detail::scalar_from(src, true, true, i, 0, 0.0, dt, device, stream);
  }
  uint64_t u = static_cast<uint64_t>(value);
  TensorView src(&u, std::vector<int64_t>());
  return detail::scalar_from(src, true, false, 0, u, 0.0, dt, device, stream);
}

}  // namespace ct

#endif  // CTENSOR_CPP_SCALAR_HPP_
