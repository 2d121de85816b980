// float8_formats.h — the four 8-bit float formats of DLPack 1.3 that
// ctensor runs (float8_e4m3fn, float8_e5m2, float8_e4m3fnuz,
// float8_e5m2fnuz): one description per format and the codes that follow
// from it. Every backend derives its conversions from these: the CPU's
// src/cpu/float8.h, and the GPU modules' generated decoders and encoders
// (src/gpu/source.cc). Data only: no dependency on a backend.
#ifndef CTENSOR_SRC_MATH_FLOAT8_FORMATS_H_
#define CTENSOR_SRC_MATH_FLOAT8_FORMATS_H_

#include <cstdint>

namespace ct {
namespace math {

// How a format spends its special codes.
enum F8Kind {
  kF8Ieee = 0,  // exponent all ones: +-inf (mantissa 0) and NaN (e5m2)
  kF8Fn = 1,    // no infinity; S.1111.111 is NaN, the rest of the top exponent is finite (e4m3fn)
  kF8Fnuz = 2   // no infinity, no -0; 0x80 is the only NaN (e4m3fnuz, e5m2fnuz)
};
struct F8Spec {
  int man;   // mantissa bits
  int bias;  // exponent bias
  int kind;  // F8Kind
};
// By format number: 0 e4m3fn, 1 e5m2, 2 e4m3fnuz, 3 e5m2fnuz (CT_DT_FLOAT8_* - 13).
inline constexpr F8Spec kF8Specs[4] = {{3, 7, kF8Fn}, {2, 15, kF8Ieee}, {3, 8, kF8Fnuz}, {2, 16, kF8Fnuz}};

// Largest finite magnitude's code, the NaN code (the sign bit is ORed in
// for the formats that have signed NaNs), and the infinity code (IEEE only).
constexpr uint32_t f8_max_code(int f) {
  return kF8Specs[f].kind == kF8Ieee ? ((((1u << (7 - kF8Specs[f].man)) - 2) << kF8Specs[f].man) | ((1u << kF8Specs[f].man) - 1))
         : kF8Specs[f].kind == kF8Fn ? 0x7eu : 0x7fu;
}
constexpr uint32_t f8_nan_code(int f) {
  return kF8Specs[f].kind == kF8Fnuz ? 0x80u : kF8Specs[f].kind == kF8Fn ? 0x7fu : f8_max_code(f) + 1 + (1u << (kF8Specs[f].man - 1));
}
constexpr uint32_t f8_inf_code(int f) { return f8_max_code(f) + 1; }  // meaningful for kF8Ieee only

}  // namespace math
}  // namespace ct

#endif  // CTENSOR_SRC_MATH_FLOAT8_FORMATS_H_
