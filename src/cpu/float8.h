// float8.h — the four 8-bit float formats of DLPack 1.3 that ctensor runs
// (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz): their
// storage types, a decode table (every value is exact in float32) and one
// encoder from double that rounds once, to nearest even, with ONNX Cast's
// two overflow rules (saturate or not). One description per format
// (F8Spec, src/math/float8_formats.h); everything else is written once for
// all four.
#ifndef CTENSOR_SRC_CPU_FLOAT8_H_
#define CTENSOR_SRC_CPU_FLOAT8_H_

#include <cstdint>
#include <cstring>
#include <limits>

#include "math/float8_formats.h"

namespace ct {
namespace cpu {

// The formats' descriptions (kF8Specs) and codes, shared with the OpenCL module.
using math::F8Kind;
using math::F8Spec;
using math::f8_inf_code;
using math::f8_max_code;
using math::f8_nan_code;
using math::kF8Fn;
using math::kF8Fnuz;
using math::kF8Ieee;
using math::kF8Specs;

// Storage of one element of format F.
template <int F> struct f8 { uint8_t bits; };

// The float value of code b of format f (exact).
constexpr float f8_value(int f, uint32_t b) {
  const F8Spec s = kF8Specs[f];
  const bool neg = (b & 0x80u) != 0;
  const uint32_t mag = b & 0x7fu;
  if (s.kind == kF8Fnuz && b == 0x80u) return std::numeric_limits<float>::quiet_NaN();
  if (s.kind == kF8Fn && mag == 0x7fu) return neg ? -std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::quiet_NaN();
  if (s.kind == kF8Ieee && mag > f8_max_code(f)) {
    const float special = mag == f8_inf_code(f) ? std::numeric_limits<float>::infinity() : std::numeric_limits<float>::quiet_NaN();
    return neg ? -special : special;
  }
  const uint32_t e = mag >> s.man, m = mag & ((1u << s.man) - 1);
  // (e == 0: subnormal) m * 2^(1 - bias - man), else (2^man + m) * 2^(e - bias - man)
  float v = (float)(e == 0 ? m : (m | (1u << s.man)));
  int k = (e == 0 ? 1 : (int)e) - s.bias - s.man;
  for (; k > 0; --k) v *= 2.0f;
  for (; k < 0; ++k) v *= 0.5f;  // exact: every value is a normal float32
  return neg ? -v : v;
}
struct F8Table {
  float v[4][256];
  constexpr F8Table() : v() {
    for (int f = 0; f < 4; ++f)
      for (uint32_t b = 0; b < 256; ++b) v[f][b] = f8_value(f, b);
  }
};
inline constexpr F8Table kF8Table{};

template <int F> inline float f8_to_float(uint8_t b) { return kF8Table.v[F][b]; }

// Round a double to format F, to nearest even, once (exact bit arithmetic
// on the double: no double rounding through float32). Overflow (a finite
// value that rounds above the largest finite one, or an infinity): with
// `saturate` the largest finite value of that sign (ONNX Cast saturate=1);
// without, +-inf for e5m2 and NaN for the formats that have no infinity
// (ONNX saturate=0, ml_dtypes, PyTorch). NaN stays NaN; fnuz formats have
// no -0, so a -0 (or a negative value that rounds to 0) gives +0.
template <int F> inline uint8_t f8_from_double(double d, bool saturate) {
  constexpr F8Spec s = kF8Specs[F];
  constexpr int emin = 1 - s.bias;  // exponent of the smallest normal
  constexpr uint32_t maxc = f8_max_code(F), nanc = f8_nan_code(F);
  uint64_t u;
  std::memcpy(&u, &d, 8);
  const uint32_t sign = (uint32_t)(u >> 56) & 0x80u;
  u &= 0x7fffffffffffffffull;
  if (u > 0x7ff0000000000000ull) return (uint8_t)(s.kind == kF8Fnuz ? nanc : (sign | nanc));
  uint64_t mag;
  if (u == 0x7ff0000000000000ull) {
    mag = maxc + 1;  // infinity: overflow below
  } else {
    const int e = (int)(u >> 52) - 1023;
    // round right by `sh` bits, to nearest even
    auto rne = [](uint64_t x, int sh) { return (x + ((uint64_t)1 << (sh - 1)) - 1 + ((x >> sh) & 1)) >> sh; };
    if (e < emin) {  // a subnormal of the format (or 0): units of 2^(emin - man)
      const uint64_t m = (u & 0xfffffffffffffull) | (e > -1023 ? (uint64_t)1 << 52 : 0);
      const int sh = 52 - s.man + (emin - e);
      mag = sh > 54 ? 0 : rne(m, sh);  // m < 2^53: below half the smallest subnormal from sh = 54 on
    } else {  // re-bias the exponent; a mantissa carry moves into the exponent
      mag = rne(u - ((uint64_t)(1023 - s.bias) << 52), 52 - s.man);
    }
  }
  if (mag > maxc) {
    if (saturate) mag = maxc;
    else return (uint8_t)(s.kind == kF8Ieee ? (sign | f8_inf_code(F)) : s.kind == kF8Fnuz ? nanc : (sign | nanc));
  }
  if (s.kind == kF8Fnuz && mag == 0) return 0;
  return (uint8_t)(sign | (uint32_t)mag);
}

}  // namespace cpu
}  // namespace ct

#endif  // CTENSOR_SRC_CPU_FLOAT8_H_
