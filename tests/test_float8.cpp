// test_float8.cpp — the float8 dtypes' conversions against the reference
// library's codec (tests/reference: frexp/ldexp arithmetic, nothing shared
// with the library): every code decoded, float32 patterns across the whole
// range, the midpoints and their neighbours (ties to even, and float64
// values one ulp off a tie, which a conversion through float32 would round
// twice), integers, ONNX's saturating mode (ct_cast_ex), and the per-pair
// support query (ct_cast_supported). The generic suite runs every op on them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ctt;

namespace {

const int kF8[] = {DT_F8E4M3FN, DT_F8E5M2, DT_F8E4M3FNUZ, DT_F8E5M2FNUZ};
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// Casts n values of dtype `from` (raw bytes) to `to`, with `mode`.
std::vector<unsigned char> cast_bytes(const void* src, int from, int to, int64_t n, int32_t mode = CT_CAST_DEFAULT) {
  HostTensor x = HostTensor::compact(from, {n}), y = HostTensor::compact(to, {n});
  std::memcpy(x.buf(), src, (size_t)n * (size_t)dtype(from).size);
  CTensor xv = x.view(), yv = y.view();
  const CTStatus s = ct_cast_ex(&xv, &yv, mode, nullptr);
  INFO(ct_last_error());
  REQUIRE(s == CT_OK);
  return std::vector<unsigned char>(y.buf(), y.buf() + (size_t)n * (size_t)dtype(to).size);
}

// The reference's code of v in float8 dtype d.
uint8_t ref_code(double v, int d, bool saturate = false) {
  return ctref::f8_from_double(v, dtype(d).dt, saturate);
}

// Equal codes, or both NaN.
bool same_code(uint8_t got, uint8_t want, int d) {
  if (std::isnan(ctref::f8_to_double(want, dtype(d).dt))) return std::isnan(ctref::f8_to_double(got, dtype(d).dt));
  return got == want;
}

// Values that probe a format: every finite value, the midpoints between
// neighbours and (in float32) the values just beside them, beyond the range.
std::vector<double> probes(int d) {
  std::vector<double> vals;
  for (int b = 0; b < 256; ++b) {
    const double v = ctref::f8_to_double((uint8_t)b, dtype(d).dt);
    if (std::isfinite(v)) vals.push_back(v);
  }
  std::sort(vals.begin(), vals.end());
  std::vector<double> p = vals;
  for (size_t i = 1; i < vals.size(); ++i) {
    const float mid = (float)((vals[i - 1] + vals[i]) / 2);  // exact: a float8 midpoint needs few bits
    p.push_back(mid);
    p.push_back(std::nextafter(mid, 1e30f));
    p.push_back(std::nextafter(mid, -1e30f));
  }
  const double mx = ctref::max_finite(dtype(d).dt);
  for (double v : {mx * 1.03, mx * 1.2, mx * 8, 1e30, 1e-30, 0.0, -0.0, kInf, -kInf, kNaN}) {
    p.push_back(v);
    p.push_back(-v);
  }
  return p;
}

}  // namespace

TEST_CASE("float8: every code decodes exactly (cast to float32 and float64)", "[elementwise]") {
  uint8_t codes[256];
  for (int b = 0; b < 256; ++b) codes[b] = (uint8_t)b;
  for (int d : kF8) {
    INFO(dtype(d).name);
    for (int to : {DT_F32, DT_F64}) {
      const std::vector<unsigned char> out = cast_bytes(codes, d, to, 256);
      for (int b = 0; b < 256; ++b) {
        const double want = ctref::f8_to_double((uint8_t)b, dtype(d).dt);
        const double got = to == DT_F32 ? (double)reinterpret_cast<const float*>(out.data())[b]
                                        : reinterpret_cast<const double*>(out.data())[b];
        INFO("code " << b << " got " << got << " want " << want);
        CHECK(same_double(got, want));
      }
    }
  }
}

TEST_CASE("float8: float32 and float64 round once to nearest even, with ct_cast's overflow", "[elementwise]") {
  for (int d : kF8) {
    INFO(dtype(d).name);
    std::vector<double> p = probes(d);
    // float32 bit patterns across the whole range, both signs, NaN payloads included
    for (uint64_t u = 0; u < (uint64_t(1) << 32); u += 40961) {
      float f;
      const uint32_t b = (uint32_t)u;
      std::memcpy(&f, &b, 4);
      p.push_back(f);
    }
    std::vector<float> f32(p.begin(), p.end());
    const std::vector<unsigned char> g32 = cast_bytes(f32.data(), DT_F32, d, (int64_t)f32.size());
    int64_t bad = 0;
    for (size_t i = 0; i < f32.size(); ++i)
      if (!same_code(g32[i], ref_code(f32[i], d), d) && bad++ < 5)
        FAIL_CHECK("float32 " << f32[i] << " -> code " << (int)g32[i] << ", reference " << (int)ref_code(f32[i], d));
    CHECK(bad == 0);
    // float64 one ulp beside each midpoint: rounded once it goes to the nearer
    // neighbour, through float32 it would land on the tie
    std::vector<double> f64;
    for (double v : probes(d)) {
      f64.push_back(v);
      f64.push_back(std::nextafter(v, kInf));
      f64.push_back(std::nextafter(v, -kInf));
    }
    const std::vector<unsigned char> g64 = cast_bytes(f64.data(), DT_F64, d, (int64_t)f64.size());
    bad = 0;
    for (size_t i = 0; i < f64.size(); ++i)
      if (!same_code(g64[i], ref_code(f64[i], d), d) && bad++ < 5)
        FAIL_CHECK("float64 " << f64[i] << " -> code " << (int)g64[i] << ", reference " << (int)ref_code(f64[i], d));
    CHECK(bad == 0);
  }
}

TEST_CASE("float8: the overflow rule of each format, -0, and the saturating mode of ct_cast_ex", "[elementwise]") {
  // e4m3fn: 448 is the largest; 464 is the tie below 480 (odd mantissa): 448; above it NaN (no infinity)
  const float v[] = {448.0f, 464.0f, 464.5f, 1e6f, -1e6f, INFINITY, -INFINITY, -0.0f, NAN};
  const std::vector<unsigned char> fn = cast_bytes(v, DT_F32, DT_F8E4M3FN, 9);
  CHECK(fn[0] == 0x7e);
  CHECK(fn[1] == 0x7e);
  CHECK((fn[2] & 0x7f) == 0x7f);  // NaN
  CHECK((fn[3] & 0x7f) == 0x7f);
  CHECK((fn[5] & 0x7f) == 0x7f);
  CHECK(fn[7] == 0x80);  // -0 kept
  const std::vector<unsigned char> e5 = cast_bytes(v, DT_F32, DT_F8E5M2, 9);
  CHECK(e5[3] == 0x7c);  // +inf
  CHECK(e5[4] == 0xfc);  // -inf
  CHECK(e5[5] == 0x7c);
  const std::vector<unsigned char> uz = cast_bytes(v, DT_F32, DT_F8E4M3FNUZ, 9);
  CHECK(uz[0] == 0x80);  // 448 > 240 + 8: NaN, the one NaN code
  CHECK(uz[7] == 0x00);  // no -0 in fnuz
  CHECK(uz[8] == 0x80);
  // saturating: the largest finite value of that sign; NaN stays NaN
  for (int d : kF8) {
    INFO(dtype(d).name);
    const std::vector<unsigned char> s = cast_bytes(v, DT_F32, d, 9, CT_CAST_SATURATE);
    for (int i = 0; i < 9; ++i) {
      INFO(v[i]);
      CHECK(same_code(s[(size_t)i], ref_code(v[i], d, true), d));
    }
    const double mx = ctref::max_finite(dtype(d).dt);
    CHECK(ctref::f8_to_double(s[3], dtype(d).dt) == mx);
    CHECK(ctref::f8_to_double(s[6], dtype(d).dt) == -mx);
    CHECK(std::isnan(ctref::f8_to_double(s[8], dtype(d).dt)));
  }
  // the mode only changes float8 targets
  const std::vector<unsigned char> h = cast_bytes(v, DT_F32, DT_F16, 9, CT_CAST_SATURATE);
  uint16_t h3;
  std::memcpy(&h3, h.data() + 6, 2);
  CHECK(h3 == 0x7c00);
}

TEST_CASE("float8: integers round once (int64 near 2^k, uint64 at the top)", "[elementwise]") {
  std::vector<int64_t> iv;
  for (int k = 0; k < 63; ++k)
    for (int64_t dlt : {-1, 0, 1}) {
      iv.push_back((int64_t(1) << k) + dlt);
      iv.push_back(-(int64_t(1) << k) - dlt);
    }
  for (int64_t x : {17, 19, 21, 23, 239, 247, 248, 249, 464, 465, 61439, 61440, 1000000007})
    iv.push_back(x);
  for (int d : kF8) {
    INFO(dtype(d).name);
    const std::vector<unsigned char> g = cast_bytes(iv.data(), DT_I64, d, (int64_t)iv.size());
    for (size_t i = 0; i < iv.size(); ++i) {
      INFO(iv[i]);
      CHECK(same_code(g[i], ref_code((double)iv[i], d), d));  // |v| < 2^63: the double is exact near a float8 tie
    }
    const uint64_t uv[] = {0, 1, 255, uint64_t(1) << 63, ~uint64_t(0)};
    const std::vector<unsigned char> gu = cast_bytes(uv, DT_U64, d, 5);
    for (int i = 0; i < 5; ++i) CHECK(same_code(gu[(size_t)i], ref_code((double)uv[i], d), d));
  }
}

TEST_CASE("float8: float8 to float8 and to the other dtypes goes through the exact value", "[elementwise]") {
  uint8_t codes[256];
  for (int b = 0; b < 256; ++b) codes[b] = (uint8_t)b;
  for (int d : kF8) {
    for (int to : {DT_F8E4M3FN, DT_F8E5M2, DT_F8E4M3FNUZ, DT_F8E5M2FNUZ, DT_F16, DT_BF16, DT_I32, DT_U8, DT_BOOL}) {
      INFO(dtype(d).name << " -> " << dtype(to).name);
      const std::vector<unsigned char> g = cast_bytes(codes, d, to, 256);
      for (int b = 0; b < 256; ++b) {
        const double v = ctref::f8_to_double((uint8_t)b, dtype(d).dt);
        const double got = load_f(g.data() + (size_t)b * (size_t)dtype(to).size, to);
        double want;
        if (dtype(to).is_float()) want = round_to(v, to);
        else if (to == DT_BOOL) want = v != 0;  // NaN is true
        else want = std::isnan(v) ? 0 : std::max(std::min(std::trunc(v), (double)int_max(to)), (double)int_min(to)) + 0.0;
        INFO("code " << b << " value " << v << " got " << got << " want " << want);
        CHECK(same_double(got, want));
      }
    }
  }
}

TEST_CASE("float8: ct_cast_ex refuses a mode that is not a CTCastMode; ct_cast_supported asks one pair", "[elementwise]") {
  HostTensor x = HostTensor::compact(DT_F32, {3}), y = HostTensor::compact(DT_F8E4M3FN, {3});
  y.fill_bytes(0x5a);
  CTensor xv = x.view(), yv = y.view();
  CHECK(ct_cast_ex(&xv, &yv, 7, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(std::string(ct_last_error()).find("ct_cast_ex: mode=7") != std::string::npos);
  for (size_t i = 0; i < 3; ++i) CHECK(y.buf()[i] == 0x5a);  // untouched
  const CTDevice cpu = {CT_CPU, 0};
  for (int a = 0; a < DT_COUNT; ++a)
    for (int b = 0; b < DT_COUNT; ++b) CHECK(ct_cast_supported(cpu, dtype(a).dt, dtype(b).dt) == CT_OK);
  const CTDataType e8m0 = {CT_FLOAT8_E8M0FNU, 8, 1};
  CHECK(ct_cast_supported(cpu, dtype(DT_F32).dt, e8m0) == CT_ERR_UNSUPPORTED);
  CHECK(std::string(ct_last_error()).find("float8_e8m0fnu") != std::string::npos);
  // every float op is defined for float8; NN ops are not (no float8 kernels in oneDNN 2.6)
  CHECK(ct_op_supported(CT_OP_EXP, cpu, dtype(DT_F8E5M2).dt) == CT_OK);
  CHECK(ct_op_supported(CT_OP_MATMUL, cpu, dtype(DT_F8E4M3FN).dt) == CT_ERR_UNSUPPORTED);
  CHECK(std::string(ct_last_error()).find("float8_e4m3fn") != std::string::npos);
}
