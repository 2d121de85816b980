// ctensor/cpp/scalar.hpp: ct::scalar, a 0-d tensor from a C++ number (how x + 2.0 converts its scalar).
#ifndef CTENSOR_CPP_SCALAR_HPP_
#define CTENSOR_CPP_SCALAR_HPP_

#include "dtype.hpp"
#include "error.hpp"
#include "tensor.hpp"
#include "tensor_view.hpp"

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

inline std::string num_str(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// [lo, hi] of an integer or bool dtype; false for the float (and unknown) dtypes.
inline bool int_range(CTDataType dt, int64_t* lo, int64_t* hi) {
  if (dt.lanes != 1) return false;
  if (dt.code == CT_BOOL && dt.bits == 8) {
    *lo = 0;
    *hi = 1;
    return true;
  }
  if (dt.code == CT_UINT && dt.bits == 8) {
    *lo = 0;
    *hi = 255;
    return true;
  }
  if (dt.code != CT_INT) return false;
  switch (dt.bits) {
    case 8: *lo = INT8_MIN; *hi = INT8_MAX; return true;
    case 16: *lo = INT16_MIN; *hi = INT16_MAX; return true;
    case 32: *lo = INT32_MIN; *hi = INT32_MAX; return true;
    case 64: *lo = INT64_MIN; *hi = INT64_MAX; return true;
    default: return false;
  }
}

// A 0-d tensor of dtype @p dt on @p device from a host 0-d source, after the
// representability check (integer/bool targets only).
inline Tensor scalar_from(const TensorView& src, bool integral, int64_t i, double f, CTDataType dt,
                          CTDevice device, void* stream) {
  int64_t lo = 0, hi = 0;
  if (int_range(dt, &lo, &hi)) {
    bool ok;
    if (integral) {
      ok = i >= lo && i <= hi;
    } else {
      // Integral and within [lo, hi] (NaN fails every comparison; 2^63, which
      // is int64's hi as a double, is out of range).
      ok = f >= static_cast<double>(lo) && f <= static_cast<double>(hi) &&
           f < 9223372036854775808.0 && static_cast<double>(static_cast<int64_t>(f)) == f;
    }
    if (!ok)
      fail(CT_ERR_INVALID_ARGUMENT,
           "ct::scalar: " +
               (integral ? std::to_string(static_cast<long long>(i)) : num_str(f)) +
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
    return detail::scalar_from(src, false, 0, f, dt, device, stream);
  }
  if (std::is_unsigned<S>::value && static_cast<uint64_t>(value) > static_cast<uint64_t>(INT64_MAX))
    detail::fail(CT_ERR_INVALID_ARGUMENT,
                 "ct::scalar: " + std::to_string(static_cast<unsigned long long>(value)) +
                     " is not representable in " + dtype::name(dt));
  int64_t i = static_cast<int64_t>(value);
  TensorView src(&i, std::vector<int64_t>());
  return detail::scalar_from(src, true, i, 0.0, dt, device, stream);
}

}  // namespace ct

#endif  // CTENSOR_CPP_SCALAR_HPP_
