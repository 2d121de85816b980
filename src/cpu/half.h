// half.h — scalar float16/bfloat16 conversions (float8: float8.h), and the
// conversions every cast takes, saturating to integers.
// These are the well-defined paths every cast takes: no C/C++ UB for NaN or
// out-of-range values. Vector paths in elementwise.cc must agree bit for bit.
#ifndef CTENSOR_SRC_CPU_HALF_H_
#define CTENSOR_SRC_CPU_HALF_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "cpu/float8.h"

namespace ct {
namespace cpu {

// Storage types for the dtypes that have no C++ arithmetic type.
struct f16 { uint16_t bits; };
struct bf16 { uint16_t bits; };
struct boolean { uint8_t v; };

inline float bits_to_float(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint32_t float_to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }

inline float f16_to_float(uint16_t h) {
  const uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  if (exp == 0x1f) return bits_to_float(sign | 0x7f800000u | (man << 13));  // inf / NaN
  if (exp != 0) return bits_to_float(sign | ((exp + 112) << 23) | (man << 13));
  // zero or subnormal: man * 2^-24, exact in float
  const float v = (float)man * 5.9604644775390625e-08f;
  return sign ? -v : v;
}

inline float bf16_to_float(uint16_t b) { return bits_to_float((uint32_t)b << 16); }

// Round a double to a binary float with `man` fraction bits, exponent bias
// `bias` and all-ones exponent `emax_biased` (inf/NaN), to nearest even,
// once: no double rounding through float32.
inline uint16_t round_double_to_small(double d, int man, int bias, int emax_biased) {
  const uint16_t sign = std::signbit(d) ? 0x8000 : 0;  // bit 15 in both formats
  const uint16_t inf = (uint16_t)(emax_biased << man);
  if (std::isnan(d)) {  // quiet, with the top bits of the payload: what the vector conversions give
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return (uint16_t)(sign | inf | (1u << (man - 1)) | (uint16_t)((u >> (52 - man)) & ((1u << man) - 1)));
  }
  const double a = std::fabs(d);
  if (a == 0) return sign;
  if (std::isinf(a)) return (uint16_t)(sign | inf);
  const int emin = 1 - bias;
  int k;
  std::frexp(a, &k);
  int e = k - 1;  // a in [2^e, 2^(e+1))
  if (e < emin) {  // subnormal range: fraction in units of 2^(emin - man)
    const double r = std::nearbyint(std::ldexp(a, man - emin));
    return (uint16_t)(sign | (uint16_t)r);  // r == 2^man encodes the smallest normal
  }
  double r = std::nearbyint(std::ldexp(a, man - e));  // in [2^man, 2^(man+1)]
  if (r >= std::ldexp(1.0, man + 1)) { r *= 0.5; ++e; }
  if (e + bias >= emax_biased) return (uint16_t)(sign | inf);
  return (uint16_t)(sign | ((e + bias) << man) | ((uint16_t)r - (1u << man)));
}
inline uint16_t double_to_f16(double d) { return round_double_to_small(d, 10, 15, 31); }
inline uint16_t double_to_bf16(double d) { return round_double_to_small(d, 7, 127, 255); }

// float32 -> bfloat16, round to nearest even on the bits (what the vector path does).
inline uint16_t float_to_bf16(float f) {
  const uint32_t u = float_to_bits(f);
  if (std::isnan(f)) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

// --- value <-> the wide type every cast goes through -----------------------
// Integers and bool go through int64 (exact); floats through double (exact).
template <class T> struct Wide { using type = T; };

template <class T> inline double to_double(T v) { return (double)v; }
template <> inline double to_double<f16>(f16 v) { return f16_to_float(v.bits); }
template <> inline double to_double<bf16>(bf16 v) { return bf16_to_float(v.bits); }
template <> inline double to_double<f8<0>>(f8<0> v) { return f8_to_float<0>(v.bits); }
template <> inline double to_double<f8<1>>(f8<1> v) { return f8_to_float<1>(v.bits); }
template <> inline double to_double<f8<2>>(f8<2> v) { return f8_to_float<2>(v.bits); }
template <> inline double to_double<f8<3>>(f8<3> v) { return f8_to_float<3>(v.bits); }

template <class T> struct IsF8 : std::false_type {};
template <int F> struct IsF8<f8<F>> : std::true_type {};
// The float types stored in fewer bits than float32 (computed in float32).
template <class T> constexpr bool is_narrow_float() {
  return std::is_same<T, f16>::value || std::is_same<T, bf16>::value || IsF8<T>::value;
}
template <class T> constexpr bool is_floating() {
  return std::is_floating_point<T>::value || is_narrow_float<T>();
}

// Saturating float -> integer: truncate toward zero, NaN -> 0; below the
// dtype's range its minimum (0 for the unsigned types), above it its maximum.
template <class I> inline I saturate_from_double(double d) {
  if (std::isnan(d)) return 0;
  // 2^(bits-1) for signed, 2^bits for unsigned: exact in double for all our types.
  const double top = std::is_signed<I>::value ? std::ldexp(1.0, 8 * (int)sizeof(I) - 1) : std::ldexp(1.0, 8 * (int)sizeof(I));
  const double bottom = std::is_signed<I>::value ? -top : 0.0;
  if (d >= top) return std::numeric_limits<I>::max();
  if (d <= bottom) return std::numeric_limits<I>::min();
  return (I)d;  // in range: truncation is well-defined
}

template <class To> struct Convert;  // Convert<To>::from(value)

template <> struct Convert<boolean> {
  template <class From> static boolean from(From v) {
    if constexpr (is_floating<From>()) return boolean{(uint8_t)(to_double(v) != 0.0)};
    else if constexpr (std::is_same<From, boolean>::value) return boolean{(uint8_t)(v.v != 0)};
    else return boolean{(uint8_t)(v != 0)};
  }
};
// A 64-bit magnitude -> double rounding to odd: exact below 2^53, and above
// it the lost bits survive as a sticky LSB, so rounding the double again to
// float16 or bfloat16 rounds correctly (no double rounding).
inline double magnitude_to_double_odd(uint64_t mag) {
  if (mag < (uint64_t(1) << 53)) return (double)mag;
  const int shift = 64 - __builtin_clzll(mag) - 53;
  uint64_t m = mag >> shift;
  if (mag & ((uint64_t(1) << shift) - 1)) m |= 1;
  return std::ldexp((double)m, shift);
}
template <class I> inline double int_to_double_odd(I v) {
  if constexpr (std::is_same<I, int64_t>::value) {
    const double d = magnitude_to_double_odd(v < 0 ? 0 - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -d : d;
  } else if constexpr (std::is_same<I, uint64_t>::value) {
    return magnitude_to_double_odd(v);
  } else {
    return (double)v;  // exact
  }
}

template <> struct Convert<f16> {
  template <class From> static f16 from(From v) {
    if constexpr (std::is_same<From, boolean>::value) return f16{(uint16_t)(v.v ? 0x3c00 : 0)};
    else if constexpr (std::is_same<From, f16>::value) return v;
    else if constexpr (is_floating<From>()) return f16{double_to_f16(to_double(v))};
    else return f16{double_to_f16(int_to_double_odd(v))};
  }
};
template <> struct Convert<bf16> {
  template <class From> static bf16 from(From v) {
    if constexpr (std::is_same<From, boolean>::value) return bf16{(uint16_t)(v.v ? 0x3f80 : 0)};
    else if constexpr (std::is_same<From, bf16>::value) return v;
    else if constexpr (is_floating<From>()) return bf16{double_to_bf16(to_double(v))};
    else return bf16{double_to_bf16(int_to_double_odd(v))};
  }
};
template <int F> struct Convert<f8<F>> {
  // saturate: ONNX Cast's saturate=1 (float8.h); ct_cast's rule is without.
  template <class From> static f8<F> from(From v, bool saturate = false) {
    if constexpr (std::is_same<From, boolean>::value) return f8<F>{f8_from_double<F>(v.v ? 1.0 : 0.0, false)};
    else if constexpr (std::is_same<From, f8<F>>::value) return v;
    else if constexpr (is_floating<From>()) return f8<F>{f8_from_double<F>(to_double(v), saturate)};
    else return f8<F>{f8_from_double<F>(int_to_double_odd(v), saturate)};  // odd-rounded: rounds once
  }
};
template <class To> struct Convert {
  template <class From> static To from(From v) {
    if constexpr (std::is_same<From, boolean>::value) return (To)(v.v != 0);
    else if constexpr (std::is_floating_point<To>::value) {
      if constexpr (is_floating<From>()) return (To)to_double(v);
      else return (To)v;  // int -> float: rounds to nearest, always defined
    } else if constexpr (is_floating<From>()) {
      return saturate_from_double<To>(to_double(v));
    } else {
      // int -> int wraps modulo 2^bits (NumPy's rule; defined via unsigned:
      // a signed v converts to uint64_t modulo 2^64, an unsigned one exactly).
      using U = typename std::make_unsigned<To>::type;
      return (To)(U)(uint64_t)v;
    }
  }
};

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_HALF_H_
