// test_elementwise.cpp — hand-written semantics the generic suite cannot
// cover: IEEE specials, cast corners, empty and 0-d tensors, layouts
// (strided, negative, zero strides, byte_offset, non-contiguous outputs),
// in-place, integer wrap, integer parameters, where/lerp/fma corners,
// ct_copy, and the CPU stream (user parallel_for, num_threads).
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <string>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
const int kFloatTypes[] = {DT_F16, DT_BF16, DT_F32, DT_F64};

HostTensor make(int d, std::vector<int64_t> shape, const std::vector<double>& vals) {
  HostTensor t = HostTensor::compact(d, shape);
  for (size_t i = 0; i < vals.size(); ++i) t.set((int64_t)i, vals[i]);
  return t;
}
HostTensor make_i(int d, std::vector<int64_t> shape, const std::vector<int64_t>& vals) {
  HostTensor t = HostTensor::compact(d, shape);
  for (size_t i = 0; i < vals.size(); ++i) t.set_i((int64_t)i, vals[i]);
  return t;
}

std::string op_name(int op) {
  CTOpInfo info;
  std::memset(&info, 0, sizeof info);
  info.struct_size = sizeof info;
  if (ct_op_info(op, &info) != CT_OK) return "op#" + std::to_string(op);
  return info.name;
}

HostTensor unary(int op, HostTensor& x, int dout) {
  HostTensor out = HostTensor::compact(dout, x.shape);
  out.fill_bytes(0xA5);
  CTensor xv = x.view(), ov = out.view();
  CTStatus s = ct_unary(op, &xv, &ov, nullptr);
  INFO("ct_unary(" << op_name(op) << ") dtype " << dtype(x.d).name << ": " << ct_last_error());
  REQUIRE(s == CT_OK);
  return out;
}

HostTensor cast_to(HostTensor& x, int dout) {
  HostTensor out = HostTensor::compact(dout, x.shape);
  out.fill_bytes(0xA5);
  CTensor xv = x.view(), ov = out.view();
  CTStatus s = ct_cast(&xv, &ov, nullptr);
  INFO("ct_cast " << dtype(x.d).name << " -> " << dtype(dout).name << ": " << ct_last_error());
  REQUIRE(s == CT_OK);
  return out;
}

// Run a unary op on float dtype d over `in` and compare with `want` exactly
// (NaN matches NaN, the sign of zero counts).
void expect_unary(int op, int d, const std::vector<double>& in, const std::vector<double>& want) {
  HostTensor x = make(d, {(int64_t)in.size()}, in);
  HostTensor y = unary(op, x, d);
  for (size_t i = 0; i < in.size(); ++i) {
    INFO(op_name(op) << " " << dtype(d).name << " input " << in[i] << " got " << y.get((int64_t)i)
               << " want " << round_to(want[i], d));
    CHECK(same_double(y.get((int64_t)i), round_to(want[i], d)));
  }
}

void expect_pred(int op, int d, const std::vector<double>& in, const std::vector<int>& want) {
  HostTensor x = make(d, {(int64_t)in.size()}, in);
  HostTensor y = unary(op, x, DT_BOOL);
  for (size_t i = 0; i < in.size(); ++i) {
    INFO(op_name(op) << " " << dtype(d).name << " input " << in[i]);
    CHECK(y.get_i((int64_t)i) == want[i]);
  }
}

uint32_t f32_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float f32_from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint16_t u16_at(const HostTensor& t, int64_t i) {
  uint16_t v;
  std::memcpy(&v, t.at(i), 2);
  return v;
}

}  // namespace

// ---------------------------------------------------------------------------
// IEEE specials
// ---------------------------------------------------------------------------

TEST_CASE("specials: exp, log, sqrt, tanh, sigmoid", "[elementwise]") {
  for (int d : kFloatTypes) {
    expect_unary(CT_OP_EXP, d, {kNaN, kInf, -kInf, 0.0, -0.0}, {kNaN, kInf, 0.0, 1.0, 1.0});
    expect_unary(CT_OP_LOG, d, {0.0, -0.0, -1.0, kInf, 1.0, kNaN, -kInf}, {-kInf, -kInf, kNaN, kInf, 0.0, kNaN, kNaN});
    expect_unary(CT_OP_SQRT, d, {-0.0, 0.0, -1.0, kInf, 4.0, kNaN, -kInf}, {-0.0, 0.0, kNaN, kInf, 2.0, kNaN, kNaN});
    expect_unary(CT_OP_TANH, d, {kInf, -kInf, -0.0, 0.0, kNaN}, {1.0, -1.0, -0.0, 0.0, kNaN});
    expect_unary(CT_OP_SIGMOID, d, {kInf, -kInf, 0.0, kNaN}, {1.0, 0.0, 0.5, kNaN});
  }
}

TEST_CASE("specials: relu, sign, round half to even", "[elementwise]") {
  for (int d : kFloatTypes) {
    expect_unary(CT_OP_RELU, d, {-0.0, 0.0, -kInf, kInf, kNaN, -3.0, 2.5}, {-0.0, 0.0, 0.0, kInf, kNaN, 0.0, 2.5});
    expect_unary(CT_OP_SIGN, d, {kNaN, -0.0, 0.0, -kInf, kInf, 5.0, -0.25},
                 {kNaN, -0.0, 0.0, -1.0, 1.0, 1.0, -1.0});
    expect_unary(CT_OP_ROUND, d, {0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.5, 0.25, -0.25, kInf, -kInf, kNaN, -0.0},
                 {0.0, 2.0, 2.0, -0.0, -2.0, -2.0, 4.0, 0.0, -0.0, kInf, -kInf, kNaN, -0.0});
  }
  // values beyond the fraction bits stay as they are
  expect_unary(CT_OP_ROUND, DT_F32, {8388609.0, 1e30, 0.49999997019767761}, {8388609.0, 1e30, 0.0});
  expect_unary(CT_OP_ROUND, DT_F64, {4503599627370497.0, 0.49999999999999994, 1e300},
               {4503599627370497.0, 0.0, 1e300});
  expect_unary(CT_OP_FLOOR, DT_F32, {-0.5, -0.0, 2.5}, {-1.0, -0.0, 2.0});
  expect_unary(CT_OP_CEIL, DT_F32, {-0.5, -0.0, 2.5}, {-0.0, -0.0, 3.0});
  expect_unary(CT_OP_TRUNC, DT_F32, {-0.5, -2.7, 2.7}, {-0.0, -2.0, 2.0});
  expect_unary(CT_OP_NEG, DT_F32, {0.0, -0.0, kNaN}, {-0.0, 0.0, kNaN});
  expect_unary(CT_OP_ABS, DT_F32, {-0.0, -kInf}, {0.0, kInf});
}

TEST_CASE("specials: isnan, isinf, isfinite, logical_not", "[elementwise]") {
  for (int d : kFloatTypes) {
    std::vector<double> in = {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -65504.0};
    expect_pred(CT_OP_ISNAN, d, in, {1, 0, 0, 0, 0, 0, 0});
    expect_pred(CT_OP_ISINF, d, in, {0, 1, 1, 0, 0, 0, 0});
    expect_pred(CT_OP_ISFINITE, d, in, {0, 0, 0, 1, 1, 1, 1});
    expect_pred(CT_OP_LOGICAL_NOT, d, in, {0, 0, 0, 1, 1, 0, 0});
  }
  // ints and bool: false, false, true
  HostTensor xi = make_i(DT_I32, {3}, {0, INT32_MIN, INT32_MAX});
  HostTensor a = unary(CT_OP_ISNAN, xi, DT_BOOL), b = unary(CT_OP_ISINF, xi, DT_BOOL),
             c = unary(CT_OP_ISFINITE, xi, DT_BOOL);
  for (int i = 0; i < 3; ++i) {
    CHECK(a.get_i(i) == 0);
    CHECK(b.get_i(i) == 0);
    CHECK(c.get_i(i) == 1);
  }
  // A signalling NaN bit pattern is still NaN.
  HostTensor sn = HostTensor::compact(DT_F32, {1});
  uint32_t snan = 0x7F800001u;
  std::memcpy(sn.at(0), &snan, 4);
  CHECK(unary(CT_OP_ISNAN, sn, DT_BOOL).get_i(0) == 1);
}

// ---------------------------------------------------------------------------
// cast corners
// ---------------------------------------------------------------------------

TEST_CASE("cast: float to int truncates, saturates, NaN gives 0", "[elementwise]") {
  for (int src : {DT_F32, DT_F64}) {
    INFO("source " << dtype(src).name);
    HostTensor x = make(src, {8}, {kNaN, 1e10, -1e10, -1.0, 300.0, 2.9, -2.9, kInf});
    HostTensor i32 = cast_to(x, DT_I32);
    CHECK(i32.get_i(0) == 0);
    CHECK(i32.get_i(1) == INT32_MAX);
    CHECK(i32.get_i(2) == INT32_MIN);
    CHECK(i32.get_i(3) == -1);
    CHECK(i32.get_i(4) == 300);
    CHECK(i32.get_i(5) == 2);
    CHECK(i32.get_i(6) == -2);
    CHECK(i32.get_i(7) == INT32_MAX);
    HostTensor u8 = cast_to(x, DT_U8);
    CHECK(u8.get_i(0) == 0);
    CHECK(u8.get_i(1) == 255);
    CHECK(u8.get_i(2) == 0);
    CHECK(u8.get_i(3) == 0);
    CHECK(u8.get_i(4) == 255);
    CHECK(u8.get_i(5) == 2);
    CHECK(u8.get_i(6) == 0);
    HostTensor i8 = cast_to(x, DT_I8);
    CHECK(i8.get_i(0) == 0);
    CHECK(i8.get_i(4) == 127);
    CHECK(i8.get_i(2) == -128);
    HostTensor i64 = cast_to(x, DT_I64);
    CHECK(i64.get_i(0) == 0);
    CHECK(i64.get_i(1) == 10000000000LL);
    CHECK(i64.get_i(7) == INT64_MAX);
  }
  HostTensor big = make(DT_F64, {4}, {9.3e18, -9.3e18, 9223372036854775808.0, -9223372036854775808.0});
  HostTensor i64 = cast_to(big, DT_I64);
  CHECK(i64.get_i(0) == INT64_MAX);
  CHECK(i64.get_i(1) == INT64_MIN);
  CHECK(i64.get_i(2) == INT64_MAX);
  CHECK(i64.get_i(3) == INT64_MIN);
  HostTensor h = make(DT_F16, {2}, {kInf, -kInf});
  HostTensor i16 = cast_to(h, DT_I16);
  CHECK(i16.get_i(0) == INT16_MAX);
  CHECK(i16.get_i(1) == INT16_MIN);
}

TEST_CASE("cast: int to int wraps; to bool is != 0", "[elementwise]") {
  HostTensor x = make_i(DT_I32, {5}, {300, -1, 256, -129, 0});
  HostTensor u8 = cast_to(x, DT_U8);
  CHECK(u8.get_i(0) == 44);
  CHECK(u8.get_i(1) == 255);
  CHECK(u8.get_i(2) == 0);
  HostTensor i8 = cast_to(x, DT_I8);
  CHECK(i8.get_i(3) == 127);
  CHECK(i8.get_i(0) == 44);
  HostTensor b = cast_to(x, DT_BOOL);
  CHECK(b.get_i(0) == 1);
  CHECK(b.get_i(2) == 1);
  CHECK(b.get_i(4) == 0);
  HostTensor w = make_i(DT_I64, {2}, {(1LL << 40) + 5, -(1LL << 33) - 1});
  HostTensor i32 = cast_to(w, DT_I32);
  CHECK(i32.get_i(0) == 5);
  CHECK(i32.get_i(1) == -1);
  HostTensor u = make_i(DT_U8, {1}, {200});
  CHECK(cast_to(u, DT_I8).get_i(0) == -56);
}

TEST_CASE("cast: the wide unsigned dtypes (wrap from ints, saturate from floats, round once to floats)",
          "[elementwise]") {
  // int -> uint wraps modulo 2^bits; uint -> int too (uint64 max is -1 in int64)
  HostTensor x = make_i(DT_I64, {4}, {-1, 70000, INT64_MIN, (1LL << 32) + 7});
  HostTensor u16 = cast_to(x, DT_U16), u32 = cast_to(x, DT_U32), u64 = cast_to(x, DT_U64);
  CHECK(u16.get_i(0) == 65535);
  CHECK(u16.get_i(1) == 70000 - 65536);
  CHECK(u32.get_i(0) == 4294967295LL);
  CHECK(u32.get_i(3) == 7);
  CHECK((uint64_t)u64.get_i(0) == UINT64_MAX);
  CHECK((uint64_t)u64.get_i(2) == uint64_t(1) << 63);
  CHECK(cast_to(u64, DT_I64).get_i(0) == -1);
  CHECK(cast_to(u64, DT_I32).get_i(2) == 0);
  // float -> uint: truncate, saturate at both ends (negative -> 0, NaN -> 0)
  HostTensor f = make(DT_F64, {7}, {-1.0, kNaN, 65535.9, 4294967296.0, 18446744073709551616.0, -kInf, kInf});
  HostTensor g16 = cast_to(f, DT_U16), g32 = cast_to(f, DT_U32), g64 = cast_to(f, DT_U64);
  CHECK(g16.get_i(0) == 0);
  CHECK(g16.get_i(1) == 0);
  CHECK(g16.get_i(2) == 65535);
  CHECK(g32.get_i(2) == 65535);
  CHECK(g32.get_i(3) == 4294967295LL);
  CHECK(g64.get_i(3) == 4294967296LL);
  CHECK((uint64_t)g64.get_i(4) == UINT64_MAX);
  CHECK(g64.get_i(5) == 0);
  CHECK((uint64_t)g64.get_i(6) == UINT64_MAX);
  // uint64 -> float rounds the unsigned value once, to nearest even
  HostTensor big = make_i(DT_U64, {3}, {-1, (int64_t)((1ull << 63) + (1ull << 39) + 1), (int64_t)((1ull << 63) + (1ull << 39))});
  HostTensor f32 = cast_to(big, DT_F32);
  CHECK(f32.get(0) == 18446744073709551616.0);
  CHECK(f32.get(1) == 9223372036854775808.0 + 1099511627776.0);  // above the tie: up
  CHECK(f32.get(2) == 9223372036854775808.0);                     // the tie: to even
  CHECK(cast_to(big, DT_F64).get(0) == 18446744073709551616.0);
  CHECK(cast_to(big, DT_F16).get(0) == kInf);
  CHECK(cast_to(big, DT_BF16).get(0) == 18446744073709551616.0);
}

TEST_CASE("unsigned: neg wraps, abs is the identity, sign is 0 or 1, NumPy's integer rules", "[elementwise]") {
  for (int d : {DT_U8, DT_U16, DT_U32, DT_U64}) {
    INFO(dtype(d).name);
    const int64_t top = int_max(d) == INT64_MAX ? -1 : int_max(d);  // the dtype's max as the int64 holding it
    HostTensor x = make_i(d, {4}, {0, 1, 5, top});
    HostTensor n = unary(CT_OP_NEG, x, d);
    CHECK(n.get_i(0) == 0);
    CHECK(n.get_i(1) == top);                                      // -1 wraps to the max
    CHECK(n.get_i(3) == 1);                                        // -max is 1 modulo 2^bits
    HostTensor a = unary(CT_OP_ABS, x, d);
    for (int i = 0; i < 4; ++i) CHECK(a.get_i(i) == x.get_i(i));
    HostTensor s = unary(CT_OP_SIGN, x, d);
    CHECK(s.get_i(0) == 0);
    CHECK(s.get_i(2) == 1);
    CHECK(s.get_i(3) == 1);
    HostTensor r = unary(CT_OP_RELU, x, d);
    CHECK(r.get_i(3) == top);
    HostTensor rc = unary(CT_OP_RECIPROCAL, x, d);
    CHECK(rc.get_i(0) == 0);  // 1 / 0 = 0, as for the signed ints
    CHECK(rc.get_i(1) == 1);
    CHECK(rc.get_i(3) == 0);
    HostTensor bn = unary(CT_OP_BITWISE_NOT, x, d);
    CHECK(bn.get_i(0) == top);
    CHECK(bn.get_i(3) == 0);
    HostTensor sq = unary(CT_OP_SQUARE, x, d);
    CHECK(sq.get_i(3) == 1);  // (2^bits - 1)^2 = 1 modulo 2^bits
    // clamp with the dtype's whole range as bounds; add_scalar wraps
    const double hi = d == DT_U64 ? 18446744073709549568.0 : (double)int_max(d);
    HostTensor c = HostTensor::compact(d, {4});
    CTensor xv = x.view(), cv = c.view();
    const double lohi[2] = {2.0, hi};
    REQUIRE(ct_unary_param(CT_OP_CLAMP, &xv, lohi, 2, &cv, nullptr) == CT_OK);
    CHECK(c.get_i(0) == 2);
    CHECK(c.get_i(2) == 5);
    CHECK((uint64_t)c.get_i(3) == (uint64_t)hi);
    const double one[1] = {hi};
    REQUIRE(ct_unary_param(CT_OP_ADD_SCALAR, &xv, one, 1, &cv, nullptr) == CT_OK);
    const uint64_t mask = d == DT_U64 ? ~0ull : (uint64_t)int_max(d);
    CHECK((uint64_t)c.get_i(1) == (((uint64_t)hi + 1) & mask));  // 1 + max wraps to 0
    // a parameter outside [0, max] is refused, naming it
    const double neg[1] = {-1.0};
    CHECK(ct_unary_param(CT_OP_ADD_SCALAR, &xv, neg, 1, &cv, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "params[0]=-1"));
    CHECK(contains(last_error(), dtype(d).name));
    const double over[1] = {d == DT_U64 ? 18446744073709551616.0 : (double)int_max(d) + 1};
    CHECK(ct_unary_param(CT_OP_ADD_SCALAR, &xv, over, 1, &cv, nullptr) == CT_ERR_INVALID_ARGUMENT);
  }
}

TEST_CASE("cast: to bool, NaN and 0.5 are true, -0 false", "[elementwise]") {
  for (int d : kFloatTypes) {
    HostTensor x = make(d, {5}, {kNaN, 0.5, -0.0, 0.0, -kInf});
    HostTensor b = cast_to(x, DT_BOOL);
    INFO(dtype(d).name);
    CHECK(b.get_i(0) == 1);
    CHECK(b.get_i(1) == 1);
    CHECK(b.get_i(2) == 0);
    CHECK(b.get_i(3) == 0);
    CHECK(b.get_i(4) == 1);
  }
  HostTensor bb = make_i(DT_BOOL, {2}, {0, 1});
  HostTensor f = cast_to(bb, DT_F32);
  CHECK(f.get(0) == 0.0);
  CHECK(f.get(1) == 1.0);
}

TEST_CASE("cast: to float16 rounds to nearest even, overflows to inf", "[elementwise]") {
  HostTensor x = make(DT_F32, {8}, {65520.0, -65520.0, 65519.0, 1.0 + std::ldexp(1.0, -11),
                                    1.0 + 3 * std::ldexp(1.0, -11), kNaN, std::ldexp(1.0, -25),
                                    std::ldexp(3.0, -25)});
  HostTensor h = cast_to(x, DT_F16);
  CHECK(u16_at(h, 0) == 0x7C00);
  CHECK(u16_at(h, 1) == 0xFC00);
  CHECK(u16_at(h, 2) == 0x7BFF);
  CHECK(u16_at(h, 3) == 0x3C00);  // tie -> even (1.0)
  CHECK(u16_at(h, 4) == 0x3C02);  // tie -> even (up)
  CHECK(std::isnan(h.get(5)));
  CHECK(u16_at(h, 6) == 0x0000);  // half of the smallest subnormal: tie -> 0
  CHECK(u16_at(h, 7) == 0x0002);  // 1.5 subnormal ulps -> 2
  // float64 source: one rounding, straight from the double
  HostTensor y = make(DT_F64, {2}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40), 1e300});
  HostTensor hy = cast_to(y, DT_F16);
  CHECK(u16_at(hy, 0) == 0x3C01);
  CHECK(u16_at(hy, 1) == 0x7C00);
  // integers
  HostTensor xi = make_i(DT_I32, {5}, {2049, 2051, 70000, -128, 65519});
  HostTensor hi = cast_to(xi, DT_F16);
  CHECK(hi.get(0) == 2048.0);
  CHECK(hi.get(1) == 2052.0);
  CHECK(hi.get(2) == kInf);
  CHECK(hi.get(3) == -128.0);
  CHECK(hi.get(4) == 65504.0);
}

TEST_CASE("cast: to bfloat16 rounds to nearest even", "[elementwise]") {
  HostTensor x = HostTensor::compact(DT_F32, {6});
  const uint32_t bits[] = {0x3F808000u /* tie, even down */, 0x3F818000u /* tie, up */, 0x3F808001u,
                           0x7F7FFFFFu /* max float -> inf */, 0x7FC00000u, 0x00010000u /* subnormal */};
  for (int i = 0; i < 6; ++i) std::memcpy(x.at(i), &bits[i], 4);
  HostTensor b = cast_to(x, DT_BF16);
  CHECK(u16_at(b, 0) == 0x3F80);
  CHECK(u16_at(b, 1) == 0x3F82);
  CHECK(u16_at(b, 2) == 0x3F81);
  CHECK(u16_at(b, 3) == 0x7F80);
  CHECK(std::isnan(b.get(4)));
  CHECK(u16_at(b, 5) == 0x0001);
  // int32 source: one rounding (not via float32)
  HostTensor xi = make_i(DT_I32, {1}, {(1 << 30) + (1 << 22) + 1});
  HostTensor bi = cast_to(xi, DT_BF16);
  CHECK(bi.get(0) == (double)((1 << 30) + (1 << 23)));
  // int64 source: one rounding (not via double)
  HostTensor xl = make_i(DT_I64, {2}, {(1LL << 62) + (1LL << 54) + 1, -((1LL << 62) + (1LL << 54) + 1)});
  HostTensor bl = cast_to(xl, DT_BF16);
  CHECK(bl.get(0) == std::ldexp(1.0, 62) + std::ldexp(1.0, 55));
  CHECK(bl.get(1) == -(std::ldexp(1.0, 62) + std::ldexp(1.0, 55)));
  // float32 from int32 beyond 2^24: nearest even
  HostTensor xf = make_i(DT_I32, {2}, {16777217, 16777219});
  HostTensor f = cast_to(xf, DT_F32);
  CHECK(f.get(0) == 16777216.0);
  CHECK(f.get(1) == 16777220.0);
  // float16 -> bfloat16 and back
  HostTensor h = make(DT_F16, {2}, {65504.0, std::ldexp(1.0, -24)});
  HostTensor hb = cast_to(h, DT_BF16);
  CHECK(hb.get(0) == 65536.0);
  CHECK(hb.get(1) == std::ldexp(1.0, -24));
  HostTensor hh = cast_to(hb, DT_F16);
  CHECK(hh.get(0) == kInf);
}

TEST_CASE("cast: f64 -> f32 rounds and overflows, NaN stays NaN", "[elementwise]") {
  HostTensor x = make(DT_F64, {4}, {1e300, -1e-50, kNaN, 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -50)});
  HostTensor f = cast_to(x, DT_F32);
  CHECK(f.get(0) == kInf);
  CHECK(same_double(f.get(1), -0.0));
  CHECK(std::isnan(f.get(2)));
  CHECK(f.get(3) == 1.0 + std::ldexp(1.0, -23));
}

// ---------------------------------------------------------------------------
// empty and 0-d tensors
// ---------------------------------------------------------------------------

TEST_CASE("empty tensors: CT_OK and nothing written", "[elementwise]") {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{0}, std::vector<int64_t>{3, 0, 2}}) {
    HostTensor x = HostTensor::compact(DT_F32, shape), y = HostTensor::compact(DT_F32, shape);
    // Give the tensors some bytes to watch.
    x.alloc(4);
    y.alloc(4);
    y.fill_bytes(0x77);
    std::vector<unsigned char> before = y.bytes();
    CTensor xv = x.view(), yv = y.view();
    CHECK(ct_unary(CT_OP_EXP, &xv, &yv, nullptr) == CT_OK);
    double p[2] = {0, 1};
    CHECK(ct_unary_param(CT_OP_CLAMP, &xv, p, 2, &yv, nullptr) == CT_OK);
    CHECK(ct_ternary(CT_OP_FMA, &xv, &xv, &xv, &yv, nullptr) == CT_OK);
    CHECK(ct_copy(&xv, &yv, nullptr) == CT_OK);
    HostTensor z = HostTensor::compact(DT_I8, shape);
    z.alloc(4);
    z.fill_bytes(0x77);
    CTensor zv = z.view();
    CHECK(ct_cast(&xv, &zv, nullptr) == CT_OK);
    CHECK(y.bytes() == before);
    CHECK(z.bytes() == std::vector<unsigned char>(4, 0x77));
    // data may be NULL when there are no elements
    xv.data = nullptr;
    yv.data = nullptr;
    xv.byte_offset = yv.byte_offset = 0;
    CHECK(ct_unary(CT_OP_NEG, &xv, &yv, nullptr) == CT_OK);
    CHECK(std::string(ct_last_error()).empty());
  }
}

TEST_CASE("0-d tensors: ndim 0, shape NULL", "[elementwise]") {
  float xs = 1.0f, ys = -7.0f, zs = 2.0f, ws = 0.0f;
  CTensor x = {&xs, {CT_CPU, 0}, 0, {CT_FLOAT, 32, 1}, nullptr, nullptr, 0};
  CTensor y = {&ys, {CT_CPU, 0}, 0, {CT_FLOAT, 32, 1}, nullptr, nullptr, 0};
  CTensor z = {&zs, {CT_CPU, 0}, 0, {CT_FLOAT, 32, 1}, nullptr, nullptr, 0};
  CTensor w = {&ws, {CT_CPU, 0}, 0, {CT_FLOAT, 32, 1}, nullptr, nullptr, 0};
  REQUIRE(ct_unary(CT_OP_EXP, &x, &y, nullptr) == CT_OK);
  CHECK(ys == Approx(std::exp(1.0f)));
  double s = 4.0;
  REQUIRE(ct_unary_param(CT_OP_ADD_SCALAR, &x, &s, 1, &y, nullptr) == CT_OK);
  CHECK(ys == 5.0f);
  REQUIRE(ct_ternary(CT_OP_FMA, &x, &z, &z, &w, nullptr) == CT_OK);
  CHECK(ws == 4.0f);
  int32_t i = 0;
  CTensor iv = {&i, {CT_CPU, 0}, 0, {CT_INT, 32, 1}, nullptr, nullptr, 0};
  zs = -3.7f;
  REQUIRE(ct_cast(&z, &iv, nullptr) == CT_OK);
  CHECK(i == -3);
  REQUIRE(ct_copy(&z, &w, nullptr) == CT_OK);
  CHECK(ws == -3.7f);
  // a 0-d tensor may also carry a (non-NULL) shape pointer that is never read
  int64_t junk = -5;
  x.shape = &junk;
  REQUIRE(ct_unary(CT_OP_NEG, &x, &y, nullptr) == CT_OK);
  CHECK(ys == -1.0f);
}

// ---------------------------------------------------------------------------
// layouts
// ---------------------------------------------------------------------------

TEST_CASE("negative strides: reversed view via byte_offset", "[elementwise]") {
  HostTensor buf = HostTensor::compact(DT_F32, {10});
  for (int i = 0; i < 10; ++i) buf.set(i, i);
  int64_t shape[1] = {10}, st[1] = {-1};
  CTensor rev = {buf.buf(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, st, 9 * 4};
  HostTensor out = HostTensor::compact(DT_F32, {10});
  CTensor ov = out.view();
  REQUIRE(ct_unary(CT_OP_NEG, &rev, &ov, nullptr) == CT_OK);
  for (int i = 0; i < 10; ++i) CHECK(out.get(i) == -(9 - i));
  // 2-D, both dims reversed, into a reversed output
  HostTensor m = HostTensor::compact(DT_I16, {3, 4});
  for (int i = 0; i < 12; ++i) m.set_i(i, i);
  int64_t sh2[2] = {3, 4}, st2[2] = {-4, -1};
  CTensor mr = {m.buf(), {CT_CPU, 0}, 2, {CT_INT, 16, 1}, sh2, st2, 11 * 2};
  HostTensor o2 = HostTensor::compact(DT_I16, {3, 4});
  CTensor o2r = {o2.buf(), {CT_CPU, 0}, 2, {CT_INT, 16, 1}, sh2, st2, 11 * 2};
  REQUIRE(ct_unary(CT_OP_SQUARE, &mr, &o2r, nullptr) == CT_OK);
  for (int i = 0; i < 12; ++i) CHECK(o2.get_i(i) == i * i);  // reversed twice: same positions
}

TEST_CASE("zero strides: broadcast inputs", "[elementwise]") {
  // a: a row broadcast over 3 rows, b: a scalar broadcast everywhere
  HostTensor row = make(DT_F32, {4}, {1, 2, 3, 4});
  float bval = 10.0f, cval = 0.5f;
  int64_t shape[2] = {3, 4}, st_row[2] = {0, 1}, st_zero[2] = {0, 0};
  CTensor a = {row.buf(), {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, st_row, 0};
  CTensor b = {&bval, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, st_zero, 0};
  CTensor c = {&cval, {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, shape, st_zero, 0};
  HostTensor out = HostTensor::compact(DT_F32, {3, 4});
  CTensor ov = out.view();
  REQUIRE(ct_ternary(CT_OP_FMA, &a, &b, &c, &ov, nullptr) == CT_OK);
  for (int i = 0; i < 12; ++i) CHECK(out.get(i) == (i % 4 + 1) * 10.0 + 0.5);
  REQUIRE(ct_unary(CT_OP_EXP, &b, &ov, nullptr) == CT_OK);
  for (int i = 0; i < 12; ++i) CHECK(out.get(i) == Approx(std::exp(10.0)).epsilon(1e-6));
  // zero stride on an extent-1 output dim is fine
  int64_t s1[2] = {1, 4}, st1[2] = {0, 1};
  HostTensor o1 = HostTensor::compact(DT_F32, {4});
  CTensor o1v = {o1.buf(), {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, s1, st1, 0};
  CTensor r1 = {row.buf(), {CT_CPU, 0}, 2, {CT_FLOAT, 32, 1}, s1, nullptr, 0};
  REQUIRE(ct_unary(CT_OP_NEG, &r1, &o1v, nullptr) == CT_OK);
  CHECK(o1.get(3) == -4.0);
}

TEST_CASE("byte_offset on inputs and outputs; non-contiguous outputs", "[elementwise]") {
  std::vector<double> buf(16, 0.0);
  for (int i = 0; i < 16; ++i) buf[(size_t)i] = i + 0.25;
  std::vector<double> obuf(20, 99.0);
  int64_t shape[2] = {2, 3}, xst[2] = {5, 2}, ost[2] = {8, 3};
  CTensor x = {buf.data(), {CT_CPU, 0}, 2, {CT_FLOAT, 64, 1}, shape, xst, 3 * 8};
  CTensor o = {obuf.data(), {CT_CPU, 0}, 2, {CT_FLOAT, 64, 1}, shape, ost, 2 * 8};
  REQUIRE(ct_unary(CT_OP_FLOOR, &x, &o, nullptr) == CT_OK);
  std::vector<double> want(20, 99.0);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) want[(size_t)(2 + r * 8 + c * 3)] = std::floor(buf[(size_t)(3 + r * 5 + c * 2)]);
  CHECK(obuf == want);
  // same through cast and copy
  std::vector<int32_t> ibuf(20, -1);
  CTensor oi = {ibuf.data(), {CT_CPU, 0}, 2, {CT_INT, 32, 1}, shape, ost, 2 * 4};
  REQUIRE(ct_cast(&x, &oi, nullptr) == CT_OK);
  for (size_t k = 0; k < 20; ++k) CHECK(ibuf[k] == (want[k] == 99.0 ? -1 : (int32_t)want[k]));
  std::fill(obuf.begin(), obuf.end(), 99.0);
  REQUIRE(ct_copy(&x, &o, nullptr) == CT_OK);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) CHECK(obuf[(size_t)(2 + r * 8 + c * 3)] == buf[(size_t)(3 + r * 5 + c * 2)]);
  CHECK(obuf[0] == 99.0);
  CHECK(obuf[3] == 99.0);
}

TEST_CASE("in place: out exactly == x, and ternary out == a", "[elementwise]") {
  HostTensor x = make(DT_F32, {5}, {-2, -1, 0, 1, 2});
  CTensor v = x.view();
  REQUIRE(ct_unary(CT_OP_EXP, &v, &v, nullptr) == CT_OK);
  for (int i = 0; i < 5; ++i) CHECK(x.get(i) == Approx(std::exp(i - 2.0)).epsilon(1e-6));
  double lohi[2] = {1.0, 2.0};
  REQUIRE(ct_unary_param(CT_OP_CLAMP, &v, lohi, 2, &v, nullptr) == CT_OK);
  CHECK(x.get(0) == 1.0);
  CHECK(x.get(4) == 2.0);
  // in place on a strided view
  HostTensor s = HostTensor::strided(DT_I32, {4}, {2}, 0);
  for (int i = 0; i < 4; ++i) s.set_i(i, i - 2);
  std::memset(s.buf() + 4, 0x7F, 4);  // a gap element
  CTensor sv = s.view();
  REQUIRE(ct_unary(CT_OP_NEG, &sv, &sv, nullptr) == CT_OK);
  for (int i = 0; i < 4; ++i) CHECK(s.get_i(i) == 2 - i);
  uint32_t gap;
  std::memcpy(&gap, s.buf() + 4, 4);
  CHECK(gap == 0x7F7F7F7Fu);
  // ternary: out == a
  HostTensor a = make(DT_F64, {3}, {1, 2, 3}), b = make(DT_F64, {3}, {10, 20, 30}), c = make(DT_F64, {3}, {1, 1, 1});
  CTensor av = a.view(), bv = b.view(), cv = c.view();
  REQUIRE(ct_ternary(CT_OP_FMA, &av, &bv, &cv, &av, nullptr) == CT_OK);
  CHECK(a.get(0) == 11.0);
  CHECK(a.get(2) == 91.0);
  HostTensor cond = make_i(DT_BOOL, {3}, {1, 0, 1});
  CTensor condv = cond.view();
  REQUIRE(ct_ternary(CT_OP_WHERE, &condv, &av, &bv, &av, nullptr) == CT_OK);
  CHECK(a.get(0) == 11.0);
  CHECK(a.get(1) == 20.0);
  REQUIRE(ct_ternary(CT_OP_LERP, &av, &bv, &cv, &av, nullptr) == CT_OK);  // w = 1 -> b
  CHECK(a.get(0) == 10.0);
  // out == b, out == c also allowed
  REQUIRE(ct_ternary(CT_OP_FMA, &av, &bv, &cv, &cv, nullptr) == CT_OK);
  CHECK(c.get(0) == 101.0);
  // cast in place between same-size dtypes (f32 <-> int32) is refused:
  // CTOpInfo.inplace is 0 for cast (see test_errors.cpp)
  HostTensor f = make(DT_F32, {3}, {1.9f, -2.5f, 7.0f});
  CTensor fv = f.view();
  CTensor fi = fv;
  fi.dtype = dtype(DT_I32).dt;
  CHECK(ct_cast(&fv, &fi, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(f.get(0) == Approx(1.9));
  // a cast to the same dtype, and a copy, in place are no-ops
  REQUIRE(ct_cast(&fv, &fv, nullptr) == CT_OK);
  REQUIRE(ct_copy(&fi, &fi, nullptr) == CT_OK);
  CHECK(f.get(1) == -2.5);
}

TEST_CASE("extent-1 dims ignore their strides; ndim 16", "[elementwise]") {
  HostTensor x = make(DT_F32, {12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  int64_t sh[3] = {3, 1, 4}, xst[3] = {4, 999999, 1}, ost[3] = {1, 0, 3};
  HostTensor o = HostTensor::compact(DT_F32, {12});
  CTensor xv = {x.buf(), {CT_CPU, 0}, 3, {CT_FLOAT, 32, 1}, sh, xst, 0};
  CTensor ov = {o.buf(), {CT_CPU, 0}, 3, {CT_FLOAT, 32, 1}, sh, ost, 0};
  REQUIRE(ct_unary(CT_OP_NEG, &xv, &ov, nullptr) == CT_OK);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) CHECK(o.get(i + 3 * j) == -(i * 4 + j));
  // ndim = CT_MAX_NDIM, extents 1 and 2 mixed, non-contiguous output
  std::vector<int64_t> shape(CT_MAX_NDIM, 1);
  shape[0] = 2;
  shape[5] = 2;
  shape[9] = 3;
  shape[15] = 2;
  HostTensor a = HostTensor::strided(DT_I16, shape, std::vector<int64_t>(CT_MAX_NDIM, 0), 0);
  {
    // column-major strides over the non-1 dims
    std::vector<int64_t> st(CT_MAX_NDIM, 7);
    int64_t s = 1;
    for (int i = 0; i < CT_MAX_NDIM; ++i) if (shape[(size_t)i] > 1) { st[(size_t)i] = s; s *= shape[(size_t)i]; }
    a = HostTensor::strided(DT_I16, shape, st, 0);
  }
  for (int64_t i = 0; i < a.numel(); ++i) a.set_i(i, i * 3 - 20);
  HostTensor b = HostTensor::compact(DT_I16, shape, false);
  CTensor av = a.view(), bv = b.view();
  REQUIRE(ct_unary(CT_OP_ABS, &av, &bv, nullptr) == CT_OK);
  for (int64_t i = 0; i < a.numel(); ++i) CHECK(b.get_i(i) == std::abs(i * 3 - 20));
}

// ---------------------------------------------------------------------------
// integers
// ---------------------------------------------------------------------------

TEST_CASE("integer arithmetic wraps", "[elementwise]") {
  HostTensor x = make_i(DT_I8, {4}, {INT8_MIN, 16, 127, -127});
  HostTensor n = unary(CT_OP_NEG, x, DT_I8);
  CHECK(n.get_i(0) == INT8_MIN);
  CHECK(n.get_i(3) == 127);
  HostTensor a = unary(CT_OP_ABS, x, DT_I8);
  CHECK(a.get_i(0) == INT8_MIN);
  CHECK(a.get_i(3) == 127);
  HostTensor sq = unary(CT_OP_SQUARE, x, DT_I8);
  CHECK(sq.get_i(1) == 0);   // 256 wraps
  CHECK(sq.get_i(2) == 1);   // 16129 = 63*256 + 1
  HostTensor x32 = make_i(DT_I32, {2}, {65536, INT32_MIN});
  HostTensor sq32 = unary(CT_OP_SQUARE, x32, DT_I32);
  CHECK(sq32.get_i(0) == 0);
  CHECK(sq32.get_i(1) == 0);
  HostTensor n64 = make_i(DT_I64, {1}, {INT64_MIN});
  CHECK(unary(CT_OP_NEG, n64, DT_I64).get_i(0) == INT64_MIN);
  // reciprocal: truncation, 1/0 = 0
  HostTensor r = make_i(DT_I32, {5}, {0, 1, -1, 2, -3});
  HostTensor rr = unary(CT_OP_RECIPROCAL, r, DT_I32);
  CHECK(rr.get_i(0) == 0);
  CHECK(rr.get_i(1) == 1);
  CHECK(rr.get_i(2) == -1);
  CHECK(rr.get_i(3) == 0);
  CHECK(rr.get_i(4) == 0);
  // bitwise_not
  HostTensor u = make_i(DT_U8, {2}, {0, 0x0F});
  HostTensor un = unary(CT_OP_BITWISE_NOT, u, DT_U8);
  CHECK(un.get_i(0) == 255);
  CHECK(un.get_i(1) == 0xF0);
  HostTensor bl = make_i(DT_BOOL, {2}, {0, 1});
  HostTensor bn = unary(CT_OP_BITWISE_NOT, bl, DT_BOOL);
  CHECK(bn.get_i(0) == 1);
  CHECK(bn.get_i(1) == 0);
  HostTensor bs = unary(CT_OP_ABS, bl, DT_BOOL);
  CHECK(bs.get_i(1) == 1);
}

TEST_CASE("integer parameters: integral and representable only", "[elementwise]") {
  HostTensor x = make_i(DT_I8, {3}, {127, -128, 5});
  HostTensor out = HostTensor::compact(DT_I8, {3});
  CTensor xv = x.view(), ov = out.view();
  double s = 3.0;
  REQUIRE(ct_unary_param(CT_OP_ADD_SCALAR, &xv, &s, 1, &ov, nullptr) == CT_OK);
  CHECK(out.get_i(0) == -126);
  CHECK(out.get_i(1) == -125);
  CHECK(out.get_i(2) == 8);
  s = -1.0;
  REQUIRE(ct_unary_param(CT_OP_MUL_SCALAR, &xv, &s, 1, &ov, nullptr) == CT_OK);
  CHECK(out.get_i(1) == -128);
  out.fill_bytes(0x11);
  for (double bad : {0.5, 128.0, -129.0, kNaN, kInf, 1e300}) {
    INFO("param " << bad);
    s = bad;
    CHECK(ct_unary_param(CT_OP_ADD_SCALAR, &xv, &s, 1, &ov, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(out.bytes() == std::vector<unsigned char>(3, 0x11));
  }
  HostTensor u = make_i(DT_U8, {2}, {200, 3});
  HostTensor uo = HostTensor::compact(DT_U8, {2});
  CTensor uv = u.view(), uov = uo.view();
  s = 3.0;
  REQUIRE(ct_unary_param(CT_OP_MUL_SCALAR, &uv, &s, 1, &uov, nullptr) == CT_OK);
  CHECK(uo.get_i(0) == 88);  // 600 mod 256
  double lohi[2] = {-1, 2};
  CHECK(ct_unary_param(CT_OP_CLAMP, &uv, lohi, 2, &uov, nullptr) == CT_ERR_INVALID_ARGUMENT);
  double lohi2[2] = {0, 255};
  CHECK(ct_unary_param(CT_OP_CLAMP, &uv, lohi2, 2, &uov, nullptr) == CT_OK);
  // int64: 2^53 + 1 is not representable as a double, 2^62 is
  HostTensor l = make_i(DT_I64, {1}, {1});
  HostTensor lo = HostTensor::compact(DT_I64, {1});
  CTensor lv = l.view(), lov = lo.view();
  s = std::ldexp(1.0, 62);
  REQUIRE(ct_unary_param(CT_OP_ADD_SCALAR, &lv, &s, 1, &lov, nullptr) == CT_OK);
  CHECK(lo.get_i(0) == (1LL << 62) + 1);
  s = std::ldexp(1.0, 63);  // out of int64 range
  CHECK(ct_unary_param(CT_OP_ADD_SCALAR, &lv, &s, 1, &lov, nullptr) == CT_ERR_INVALID_ARGUMENT);
}

TEST_CASE("clamp with lo > hi gives hi; NaN stays NaN", "[elementwise]") {
  HostTensor x = make(DT_F32, {4}, {-5, 1.5, 5, kNaN});
  HostTensor out = HostTensor::compact(DT_F32, {4});
  CTensor xv = x.view(), ov = out.view();
  double p[2] = {2.0, 1.0};
  REQUIRE(ct_unary_param(CT_OP_CLAMP, &xv, p, 2, &ov, nullptr) == CT_OK);
  CHECK(out.get(0) == 1.0);
  CHECK(out.get(1) == 1.0);
  CHECK(out.get(2) == 1.0);
  CHECK(std::isnan(out.get(3)));
  HostTensor xi = make_i(DT_I32, {3}, {-5, 0, 5});
  HostTensor oi = HostTensor::compact(DT_I32, {3});
  CTensor xiv = xi.view(), oiv = oi.view();
  REQUIRE(ct_unary_param(CT_OP_CLAMP, &xiv, p, 2, &oiv, nullptr) == CT_OK);
  for (int i = 0; i < 3; ++i) CHECK(oi.get_i(i) == 1);
}

TEST_CASE("parametrised ops at their corners", "[elementwise]") {
  HostTensor x = make(DT_F32, {4}, {-2.0, -0.0, 0.0, 3.0});
  HostTensor out = HostTensor::compact(DT_F32, {4});
  CTensor xv = x.view(), ov = out.view();
  double a = 0.25;
  REQUIRE(ct_unary_param(CT_OP_LEAKY_RELU, &xv, &a, 1, &ov, nullptr) == CT_OK);
  CHECK(out.get(0) == -0.5);
  CHECK(same_double(out.get(1), -0.0));  // -0 >= 0: x
  CHECK(out.get(3) == 3.0);
  a = 2.0;
  REQUIRE(ct_unary_param(CT_OP_ELU, &xv, &a, 1, &ov, nullptr) == CT_OK);
  CHECK(out.get(0) == Approx(2.0 * std::expm1(-2.0)).epsilon(1e-6));
  CHECK(out.get(3) == 3.0);
  a = 0.5;
  REQUIRE(ct_unary_param(CT_OP_POW_SCALAR, &xv, &a, 1, &ov, nullptr) == CT_OK);
  CHECK(std::isnan(out.get(0)));
  CHECK(out.get(3) == Approx(std::sqrt(3.0)).epsilon(1e-6));
  a = 0.0;
  REQUIRE(ct_unary_param(CT_OP_POW_SCALAR, &xv, &a, 1, &ov, nullptr) == CT_OK);
  for (int i = 0; i < 4; ++i) CHECK(out.get(i) == 1.0);  // pow(x, 0) = 1, even for -0
  // elu and leaky_relu keep NaN; pow(NaN, 0) = 1 as in libm
  HostTensor n = make(DT_F32, {1}, {kNaN});
  HostTensor no = HostTensor::compact(DT_F32, {1});
  CTensor nv = n.view(), nov = no.view();
  a = 1.0;
  REQUIRE(ct_unary_param(CT_OP_ELU, &nv, &a, 1, &nov, nullptr) == CT_OK);
  CHECK(std::isnan(no.get(0)));
  REQUIRE(ct_unary_param(CT_OP_LEAKY_RELU, &nv, &a, 1, &nov, nullptr) == CT_OK);
  CHECK(std::isnan(no.get(0)));
  a = 0.0;
  REQUIRE(ct_unary_param(CT_OP_POW_SCALAR, &nv, &a, 1, &nov, nullptr) == CT_OK);
  CHECK(no.get(0) == 1.0);
  // clamp follows its formula for infinite and NaN bounds
  HostTensor c = make(DT_F32, {3}, {-3.0, 1.0, 3.0});
  HostTensor co = HostTensor::compact(DT_F32, {3});
  CTensor cv = c.view(), cov = co.view();
  double inf2[2] = {-kInf, kInf};
  REQUIRE(ct_unary_param(CT_OP_CLAMP, &cv, inf2, 2, &cov, nullptr) == CT_OK);
  CHECK(co.get(0) == -3.0);
  CHECK(co.get(2) == 3.0);
  double nanlo[2] = {kNaN, 2.0};  // x < NaN is false: only hi applies
  REQUIRE(ct_unary_param(CT_OP_CLAMP, &cv, nanlo, 2, &cov, nullptr) == CT_OK);
  CHECK(co.get(0) == -3.0);
  CHECK(co.get(1) == 1.0);
  CHECK(co.get(2) == 2.0);
}

TEST_CASE("large arguments stay accurate (no overflow in intermediates)", "[elementwise]") {
  struct C { int op; double x; };
  const C cases[] = {
      {CT_OP_SOFTPLUS, 100.0},  {CT_OP_SOFTPLUS, 30.0},  {CT_OP_SOFTPLUS, -100.0}, {CT_OP_SOFTPLUS, kInf},
      {CT_OP_SOFTPLUS, -kInf},  {CT_OP_SIGMOID, -100.0}, {CT_OP_SIGMOID, 100.0},   {CT_OP_SIGMOID, -1000.0},
      {CT_OP_SILU, -100.0},     {CT_OP_SILU, 100.0},     {CT_OP_GELU, -10.0},      {CT_OP_GELU, 10.0},
      {CT_OP_GELU_TANH, -10.0}, {CT_OP_GELU_TANH, 10.0}, {CT_OP_TANH, 20.0},       {CT_OP_TANH, -1000.0},
      {CT_OP_EXP, 100.0},       {CT_OP_EXP, -100.0},     {CT_OP_EXP, 50.0},        {CT_OP_EXPM1, -100.0},
      {CT_OP_EXPM1, 1e-10},     {CT_OP_LOG1P, 1e-10},    {CT_OP_LOG1P, -1.0},      {CT_OP_LOG1P, 1e30},      {CT_OP_LOG1P, 3e38},      {CT_OP_LOG1P, 1e37},
      {CT_OP_ERF, kInf},        {CT_OP_ERF, -kInf},      {CT_OP_ERF, 10.0},        {CT_OP_SIN, 1000.0},
      {CT_OP_COS, 1000.0},      {CT_OP_SIN, -12345.0},   {CT_OP_EXP2, 127.0},      {CT_OP_EXP2, -149.0},
      {CT_OP_LOG, 1e-30},       {CT_OP_LOG2, 1e30},      {CT_OP_RSQRT, 1e-30},     {CT_OP_RSQRT, kInf},
      {CT_OP_TAN, 1.5},         {CT_OP_TAN, -kInf}};
  for (int d : {DT_F32, DT_F64}) {
    for (const C& c : cases) {
      HostTensor x = make(d, {1}, {c.x});
      HostTensor y = unary(c.op, x, d);
      double want = round_to(reference(ref_call(c.op), {&x}, {{d, {1}}})[0].f[0], d), got = y.get(0);
      INFO(op_name(c.op) << " " << dtype(d).name << " x=" << c.x << " got " << got << " want " << want);
      if (std::isnan(want) || std::isinf(want)) {
        CHECK(same_double(got, want));
      } else {
        double rtol = d == DT_F32 ? 1e-5 : 1e-12;
        double atol = d == DT_F32 ? 1e-37 : 1e-300;
        CHECK(std::fabs(got - want) <= rtol * std::fabs(want) + atol);
      }
    }
  }
}

// The float32 gelu, erf, expm1, exp2, exp, tanh and sigmoid keep their relative accuracy everywhere, the far
// negative tail of gelu included (x * Phi(x) down to the subnormals), which
// a 1 - erf formula (PyTorch's: thousands of ulp at x = -3, nothing right
// below -4) loses. Dense sweep against libm in double; bounds in ulp of the
// float32 result (subnormal results: ulp = 2^-149).
TEST_CASE("float32 gelu erf expm1 exp2 exp log log1p tanh sigmoid softplus and tan: within a few ulp everywhere (gelu down to its subnormal tail)", "[elementwise]") {
  struct C { int op; double lo, hi, max_ulp; };
  const C cases[] = {{CT_OP_GELU, -14.9, -10, 6}, {CT_OP_GELU, -10, -4, 6}, {CT_OP_GELU, -4, 0, 7},
                     {CT_OP_GELU, 0, 8, 6},        {CT_OP_GELU, -1e-3, 1e-3, 7}, {CT_OP_ERF, -5, 5, 1.5},
                     {CT_OP_ERF, -1, 1, 1.5},   {CT_OP_EXPM1, -90, -1, 2},
                     {CT_OP_EXPM1, -1, 1, 2},      {CT_OP_EXPM1, -1e-3, 1e-3, 1}, {CT_OP_EXPM1, 1, 88.7, 2},
                     {CT_OP_EXP2, -160, -126, 1},  {CT_OP_EXP2, -126, 127.99, 1},
                     {CT_OP_EXP, -104, -87, 1},    {CT_OP_EXP, -87.5, 88.7, 1}, {CT_OP_EXP, -1, 1, 1},
                     {CT_OP_LOG, 1e-45, 1.2e-38, 1}, {CT_OP_LOG, 1e-3, 100, 1}, {CT_OP_LOG, 0.5, 2, 1},
                     {CT_OP_LOG, 0.999, 1.001, 1}, {CT_OP_LOG, 100, 3.4e38, 1},  // measured 0.866 over every positive float32
                     // log1p: 1.278 at worst over every float32 (at -0.3006, where log(1 + x) takes over)
                     {CT_OP_LOG1P, -0.9999, -0.5, 1}, {CT_OP_LOG1P, -0.5, 0.5, 1.5}, {CT_OP_LOG1P, -1e-3, 1e-3, 1},
                     {CT_OP_LOG1P, 0.5, 1e6, 1},   {CT_OP_LOG1P, 1e6, 3.4e38, 1},
                     {CT_OP_TANH, -10, 10, 2},     {CT_OP_TANH, -1, 1, 2},  {CT_OP_TANH, -1e-3, 1e-3, 2},
                     {CT_OP_TANH, 5, 40, 2},       {CT_OP_SIGMOID, -104, 20, 3},
                     {CT_OP_SIGMOID, -1, 1, 3},    {CT_OP_SOFTPLUS, -104, -10, 2},
                     {CT_OP_SOFTPLUS, -10, 10, 2}, {CT_OP_SOFTPLUS, -1e-3, 1e-3, 2}, {CT_OP_SOFTPLUS, 10, 90, 1},  // sigmoid: e^-|x| / (1 + e^-|x|), measured 2.3
                     // tan: measured 1.71 at worst over every float32 in (-39000, 39000) (Highway's
                     // sin / cos: 4.25 over every 7th below 1000); around the pole at pi/2, at the
                     // float32 nearest a multiple of pi/2 (252.898, 4.2e-9 from 161 pi/2), and out to
                     // Highway's trig range
                     {CT_OP_TAN, -1.6, 1.6, 2}, {CT_OP_TAN, 1.5, 1.65, 2}, {CT_OP_TAN, -1e-3, 1e-3, 1},
                     {CT_OP_TAN, 252.8978, 252.8986, 2}, {CT_OP_TAN, -39000, 39000, 2}};
  // SSE4 and older x86 targets (CT_CPU_SIMD) have no FMA: each MulAdd rounds
  // twice, and exp2 measured 1.13 ulp there.
  const char* simd = std::getenv("CT_CPU_SIMD");
  const bool no_fma = simd != nullptr && std::string(simd).find("SS") == 0;
  const int64_t n = 200003;
  for (const C& c : cases) {
    std::vector<float> x((size_t)n), y((size_t)n);
    for (int64_t i = 0; i < n; ++i) x[(size_t)i] = (float)(c.lo + (c.hi - c.lo) * (double(i) + 0.5) / double(n));
    int64_t shape[1] = {n};
    CTensor xv{x.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, yv = xv;
    yv.data = y.data();
    REQUIRE(ct_unary(c.op, &xv, &yv, nullptr) == CT_OK);
    double worst = 0, at = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double v = x[(size_t)i];
      const double want = c.op == CT_OP_GELU ? 0.5 * v * std::erfc(-v / std::sqrt(2.0))
                          : c.op == CT_OP_ERF  ? std::erf(v)
                          : c.op == CT_OP_EXP2 ? std::exp2(v)
                          : c.op == CT_OP_EXP  ? std::exp(v)
                          : c.op == CT_OP_LOG  ? std::log(v)
                          : c.op == CT_OP_LOG1P ? std::log1p(v)
                          : c.op == CT_OP_TANH ? std::tanh(v)
                          : c.op == CT_OP_SIGMOID ? 1.0 / (1.0 + std::exp(-v))
                          : c.op == CT_OP_SOFTPLUS ? std::max(v, 0.0) + std::log1p(std::exp(-std::fabs(v)))
                          : c.op == CT_OP_TAN ? std::tan(v)
                                               : std::expm1(v);
      const float wf = (float)want;
      const double ulp = std::fabs(wf) < std::numeric_limits<float>::min()
                             ? std::ldexp(1.0, -149)
                             : std::ldexp(1.0, std::ilogb(wf) - 23);
      const double e = std::fabs(double(y[(size_t)i]) - want) / ulp;
      if (e > worst) worst = e, at = v;
    }
    INFO(op_name(c.op) << " on [" << c.lo << ", " << c.hi << "): worst " << worst << " ulp at x = " << at);
    CHECK(worst <= c.max_ulp + (no_fma ? 0.25 : 0.0));
  }
}

// The masked-lane ops (UnaryMasked, F32ViaF64): float32 results within
// Highway's float32 bounds (2-4 ulp, about NumPy's SIMD float32 functions)
// of libm's double result; erfc (float64 lanes, its erfcx fit 3e-8
// relative) within one ulp and the binary ops within half an ulp and a
// hair; float64 within Highway's 4 ulp of long double libm; every special
// value (NaN, infinities, zeros, out-of-domain inputs) bit for bit libm's,
// NaN's sign and payload aside. Log-uniform magnitudes of both signs, a
// dense sweep of each domain, and the specials, in vectors and tails.
namespace {
template <class T> double ulp_of(double want) {
  const T w = (T)want;
  const int digits = std::numeric_limits<T>::digits;
  return std::fabs(w) < std::numeric_limits<T>::min() ? std::ldexp(1.0, std::numeric_limits<T>::min_exponent - digits)
                                                      : std::ldexp(1.0, std::ilogb(w) - (digits - 1));
}
bool same_bits_or_nan(double a, double b) { return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b)); }
std::vector<double> via_f64_inputs(double lo, double hi, uint64_t seed) {
  std::vector<double> x;
  const int n = 60001;
  for (int i = 0; i < n; ++i) x.push_back(lo + (hi - lo) * (i + 0.5) / n);
  uint64_t st = seed;
  for (int i = 0; i < n; ++i) {
    st = st * 6364136223846793005ull + 1442695040888963407ull;
    const double u = double(st >> 11) * 0x1p-53;
    const double m = std::exp(-60 + 120 * u);  // 1e-26 .. 1e26
    x.push_back((st >> 7) & 1 ? -m : m);
  }
  for (double v : {0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 2.0, -2.0, 1e-40, -1e-40, 700.0, -700.0, 710.0, 1e300, -1e300, kInf, -kInf, kNaN})
    for (int r = 0; r < 3; ++r) x.push_back(v);
  x.push_back(0.3);  // an odd count: a tail
  return x;
}
}  // namespace

TEST_CASE("masked-lane ops: float32 within Highway's bounds (erfc 1 ulp, logit 1.5), float64 within 4, specials as libm", "[elementwise]") {
  struct U { int op; double lo, hi, f32_ulp; double (*d)(double); long double (*l)(long double); };
  const U ops[] = {
      {CT_OP_SINH, -90, 90, 4.0, [](double v) { return std::sinh(v); }, [](long double v) { return sinhl(v); }},
      {CT_OP_COSH, -90, 90, 4.0, [](double v) { return std::cosh(v); }, [](long double v) { return coshl(v); }},
      {CT_OP_ASIN, -1, 1, 4.0, [](double v) { return std::asin(v); }, [](long double v) { return asinl(v); }},
      {CT_OP_ACOS, -1, 1, 4.0, [](double v) { return std::acos(v); }, [](long double v) { return acosl(v); }},
      {CT_OP_ATAN, -50, 50, 4.0, [](double v) { return std::atan(v); }, [](long double v) { return atanl(v); }},
      {CT_OP_ASINH, -50, 50, 4.0, [](double v) { return std::asinh(v); }, [](long double v) { return asinhl(v); }},
      {CT_OP_ACOSH, 1, 50, 4.0, [](double v) { return std::acosh(v); }, [](long double v) { return acoshl(v); }},
      {CT_OP_ATANH, -1, 1, 4.0, [](double v) { return std::atanh(v); }, [](long double v) { return atanhl(v); }},
      // logit: one log and corrections for the roundings of x / (1 - x) (elementwise_more.cc's
      // LogitAny), measured within 1.3 ulp
      {CT_OP_LOGIT, 0, 1, 1.5,
       [](double v) { return v >= 0.25 ? 2 * std::atanh(2 * v - 1) : std::log(v / (1 - v)); },
       [](long double v) { return v >= 0.25L ? 2 * atanhl(2 * v - 1) : logl(v / (1 - v)); }},
      {CT_OP_ERFC, -12, 12, 1.05, [](double v) { return std::erfc(v); }, nullptr},
      // float32 in float64 lanes, float64 per element (so no float64 row): sinc and entr the
      // double formula rounded once; ndtri Acklam's start alone (1.15e-9 relative: 0.52 ulp),
      // against a bisection on libm's erfc of the lower tail
      {CT_OP_SINC, -50, 50, 0.501,
       [](double v) { return v == 0 ? 1.0 : std::sin(3.14159265358979323846 * v) / (3.14159265358979323846 * v); },
       nullptr},
      {CT_OP_LGAMMA, -6, 40, 0.51,
       [](double v) {
         int sign;
         return lgamma_r(v, &sign);
       },
       nullptr},
      {CT_OP_ENTR, 0, 50, 0.501,
       [](double v) { return v != v ? v : v > 0 ? -v * std::log(v) : v == 0 ? 0.0 : -kInf; }, nullptr},
      // ndtr and log_ndtr: a series below |x| = 1, a fitted Mills ratio above (9e-15)
      {CT_OP_NDTR, -16, 16, 0.501, [](double v) { return 0.5 * std::erfc(-v * 0.70710678118654752440); }, nullptr},
      {CT_OP_LOG_NDTR, -16, 16, 0.501,
       [](double v) {
         if (v < -30) {  // the asymptotic series, where erfc underflows
           const double y = -v, w = 1 / (y * y);
           return -0.5 * y * y - std::log(y) - 0.91893853320467274178 + std::log1p(w * (-1 + w * (3 - 15 * w)));
         }
         return v < -1 ? std::log(0.5 * std::erfc(-v * 0.70710678118654752440))
                       : std::log1p(-0.5 * std::erfc(v * 0.70710678118654752440));
       },
       nullptr},
      // erfcx through the same Mills ratio (x >= 0), 2 e^(x^2) - erfcx(-x) below: against the
      // double formula (e^(x^2) of a float32 x exact in its argument; the asymptotic series where
      // erfc underflows)
      {CT_OP_ERFCX, -12, 40, 0.501,
       [](double v) {
         const double a = std::fabs(v);
         double r;
         if (a < 26) {
           r = std::exp(a * a) * std::erfc(a);
         } else {
           const double w = 1 / (2 * a * a);
           double s = 1, t = 1;
           for (int k = 1; k <= 10; ++k) s += (t *= -(2 * k - 1) * w);
           r = s * 0.56418958354775628694807945156077259 / a;
         }
         return v >= 0 || v != v ? (v != v ? v : r) : 2 * std::exp(v * v) - r;
       },
       nullptr},
      {CT_OP_NDTRI, 0, 1, 0.53,
       [](double p) {
         if (!(p >= 0 && p <= 1)) return kNaN;
         if (p == 0 || p == 1) return p == 0 ? -kInf : kInf;
         if (p == 0.5) return 0.0;
         const double t = p > 0.5 ? 1 - p : p;  // exact
         double lo = -40, hi = 0;
         while (hi - lo > 1e-18 * std::fabs(hi)) {
           const double m = 0.5 * (lo + hi);
           if (m == lo || m == hi) break;
           (0.5 * std::erfc(-m * 0.70710678118654752440) < t ? lo : hi) = m;
         }
         return p > 0.5 ? -0.5 * (lo + hi) : 0.5 * (lo + hi);
       },
       nullptr}};
  for (const U& u : ops) {
    const std::vector<double> xd = via_f64_inputs(u.lo, u.hi, (uint64_t)u.op);
    const int64_t n = (int64_t)xd.size();
    std::vector<float> xf(xd.begin(), xd.end()), yf((size_t)n);
    std::vector<double> yd((size_t)n);
    int64_t shape[1] = {n};
    CTensor xv{xf.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, yv = xv;
    yv.data = yf.data();
    REQUIRE(ct_unary(u.op, &xv, &yv, nullptr) == CT_OK);
    xv.data = const_cast<double*>(xd.data()), xv.dtype.bits = 64, yv = xv, yv.data = yd.data();
    REQUIRE(ct_unary(u.op, &xv, &yv, nullptr) == CT_OK);
    double w32 = 0, w64 = 0, at32 = 0, at64 = 0;
    int64_t special_bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = u.d((double)xf[(size_t)i]);
      if (!std::isfinite((float)want) || (float)want == 0) {
        special_bad += !same_bits_or_nan(yf[(size_t)i], (float)want);
      } else {
        const double e = std::fabs(yf[(size_t)i] - want) / ulp_of<float>(want);
        if (e > w32) w32 = e, at32 = xf[(size_t)i];
      }
      const double x = xd[(size_t)i];
      if (!u.l) continue;  // erfc float64 is libm itself
      const double want64 = u.d(x);
      if (!std::isfinite(want64) || want64 == 0) {
        special_bad += !same_bits_or_nan(yd[(size_t)i], want64);
      } else {
        const double e = (double)(std::fabs((long double)yd[(size_t)i] - u.l(x)) / ulp_of<double>(want64));
        if (e > w64) w64 = e, at64 = x;
      }
    }
    INFO(op_name(u.op) << ": float32 worst " << w32 << " ulp at " << at32 << ", float64 worst " << w64
                       << " ulp at " << at64 << ", " << special_bad << " specials unlike libm");
    CHECK(w32 <= u.f32_ulp);
    CHECK(w64 <= 4.0);
    CHECK(special_bad == 0);
  }
  // Binary float32: against the double formula the scalar code uses.
  struct B { int op; double f32_ulp; double (*d)(double, double); };
  const B bops[] = {{CT_OP_FMOD, 0, [](double a, double b) { return std::fmod(a, b); }},
                    {CT_OP_LOGADDEXP, 0.501,
                     [](double a, double b) {
                       return a == b ? a + std::log(2.0) : std::max(a, b) + std::log1p(std::exp(-std::fabs(a - b)));
                     }},
                    {CT_OP_LOGADDEXP2, 0.501,
                     [](double a, double b) {
                       return a == b ? a + 1 : std::max(a, b) + std::log1p(std::exp2(-std::fabs(a - b))) / std::log(2.0);
                     }},
                    {CT_OP_XLOGY, 0.501, [](double a, double b) { return b != b ? b : a == 0 ? 0.0 : a * std::log(b); }},
                    {CT_OP_LDEXP, 0.501, [](double a, double b) { return a * std::exp2(b); }}};
  for (const B& bo : bops) {
    std::vector<double> ad = via_f64_inputs(-60, 60, 7 + (uint64_t)bo.op), bd = via_f64_inputs(-30, 30, 11);
    std::reverse(bd.begin(), bd.end());  // specials meet ordinary values, and each other in the middle
    const int64_t n = (int64_t)ad.size();
    std::vector<float> af(ad.begin(), ad.end()), bf(bd.begin(), bd.end()), yf((size_t)n);
    int64_t shape[1] = {n};
    CTensor av{af.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, bv = av, yv = av;
    bv.data = bf.data(), yv.data = yf.data();
    REQUIRE(ct_binary(bo.op, &av, &bv, &yv, nullptr) == CT_OK);
    double worst = 0;
    int64_t special_bad = 0, checked = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = bo.d(af[(size_t)i], bf[(size_t)i]);
      if (!std::isfinite((float)want) || (float)want == 0) {
        special_bad += !same_bits_or_nan(yf[(size_t)i], (float)want);
      } else {
        worst = std::max(worst, std::fabs(yf[(size_t)i] - want) / ulp_of<float>(want));
        ++checked;
      }
    }
    INFO(op_name(bo.op) << ": float32 worst " << worst << " ulp over " << checked << " finite results, " << special_bad
                        << " specials unlike the double formula");
    CHECK(worst <= bo.f32_ulp);
    CHECK(checked > n / 3);  // xlogy: b < 0 (half the values) gives NaN
    CHECK(special_bad == 0);
  }
  // logaddexp(2) where max(a, b) < 0 nearly cancels log1p(e^-|a - b|): the result is 1e-3 to 1e-5
  // of either term, which multiplies the relative error of the terms as much; the lanes' short
  // exp2 and atanh fits (1e-13) would then be 0.2 ulp off, so such vectors take the full float64
  // functions (the double formula's own error there, 1e-16 times as much).
  for (int k = 1; k <= 2; ++k) {
    const B& bo = bops[k];
    const bool base2 = bo.op == CT_OP_LOGADDEXP2;
    const int64_t n = 4096;
    std::vector<float> af((size_t)n), bf((size_t)n), yf((size_t)n);
    for (int64_t i = 0; i < n; ++i) {
      const double t = -0.01 - 8.0 * (double)((i * 2654435761u) % 10007) / 10007;  // |a - b| in (0.01, 8]
      const double l = base2 ? std::log1p(std::exp2(t)) / std::log(2.0) : std::log1p(std::exp(t));
      const double delta = std::pow(10.0, -3.0 - 2.0 * (double)((i * 40503u) % 997) / 997) * (i % 2 ? 1 : -1);
      af[(size_t)i] = (float)(-l * (1 + delta));
      bf[(size_t)i] = (float)(af[(size_t)i] + t);
      if (i % 3 == 0) std::swap(af[(size_t)i], bf[(size_t)i]);
    }
    int64_t shape[1] = {n};
    CTensor av{af.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, bv = av, yv = av;
    bv.data = bf.data(), yv.data = yf.data();
    REQUIRE(ct_binary(bo.op, &av, &bv, &yv, nullptr) == CT_OK);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = bo.d(af[(size_t)i], bf[(size_t)i]);
      worst = std::max(worst, std::fabs(yf[(size_t)i] - want) / ulp_of<float>(want));
    }
    INFO(op_name(bo.op) << " where the terms nearly cancel: float32 worst " << worst << " ulp");
    CHECK(worst <= bo.f32_ulp);
  }
}

// lgamma, digamma and erfinv at known values, their poles and edges, and
// erfinv against erf / erfc both ways down to the far tail (float64).
// float32 J0, J1, Y0, Y1 run in float64 lanes (a series below 8, Hankel's
// form with fitted P and Q above), and the lanes next to a zero, where
// those formulas' absolute error is not small relative to the value, go to
// the scalar code the float64 op runs; I0, I1, K0, K1 and their scaled
// forms (series, then fitted smooth parts) have no zeros. So every float32
// result is the float64 result rounded, within half an ulp and a hair;
// checked on a dense sweep, log-uniform magnitudes of both signs, the
// specials, the method boundaries, and the 41 floats around each of J's and
// Y's first zeros.
TEST_CASE("special functions' float32 lanes (Bessel J Y I K, Airy Ai, digamma, erfinv) within half an ulp of the float64 op next to the zeros too",
          "[elementwise]") {
  const double zeros[] = {2.404825557695773, 5.520078110286311, 8.653727912911013, 11.79153443901428,
                          14.93091770848779, 30.63460646843198, 3.831705970207512, 7.015586669815619,
                          10.17346813506272, 13.32369193631422, 0.8935769662791675, 3.957678419314858,
                          7.086051060301773, 10.22234504349642, 2.197141326031017, 5.429681040794135,
                          8.596005868331169, 11.74915483748850,
                          // Ai's (DLMF table 9.9.1)
                          -2.338107410459767, -4.087949444130971, -5.520559828095551, -6.786708090071759,
                          -7.944133587120853, -9.022650853340981, -29.48101712267596,
                          // digamma's, and where erfinv's two starts meet (w = 5)
                          1.461632144968362, 0.9966239, -0.9966239};
  struct R { int op; double lo, hi; };
  const R rs[] = {{CT_OP_BESSEL_J0, -120, 120}, {CT_OP_BESSEL_J1, -120, 120}, {CT_OP_BESSEL_Y0, -120, 120},
                  {CT_OP_BESSEL_Y1, -120, 120}, {CT_OP_MODIFIED_BESSEL_I0, -120, 120},
                  {CT_OP_MODIFIED_BESSEL_I1, -120, 120}, {CT_OP_I0E, -120, 120}, {CT_OP_I1E, -120, 120},
                  {CT_OP_MODIFIED_BESSEL_K0, -120, 120}, {CT_OP_MODIFIED_BESSEL_K1, -120, 120},
                  {CT_OP_SCALED_MODIFIED_BESSEL_K0, -120, 120}, {CT_OP_SCALED_MODIFIED_BESSEL_K1, -120, 120},
                  {CT_OP_AIRY_AI, -120, 120}, {CT_OP_DIGAMMA, -12, 40}, {CT_OP_ERFINV, -1, 1}};
  for (const R& rr : rs) {
    const int op = rr.op;
    std::vector<double> xd = via_f64_inputs(rr.lo, rr.hi, (uint64_t)op);
    for (int e = 1; e <= 149; ++e) {  // 1 - 2^-e (erfinv's tails), 2^-e (digamma's poles' side)
      const double t = std::ldexp(1.0, -e);
      if (e <= 24) xd.push_back(1 - t), xd.push_back(t - 1);
      xd.push_back(t), xd.push_back(-t);
    }
    for (double z : zeros) {
      float f = (float)z;
      for (int k = 0; k < 20; ++k) f = std::nextafter(f, -HUGE_VALF);
      for (int k = 0; k < 41; ++k, f = std::nextafter(f, HUGE_VALF)) xd.push_back(f);
    }
    for (double v : {1.9999999, 2.0, 2.0000002, 2.0800838, 2.0801, 4.3267486, 4.3268, 7.9999995, 8.0, 29.0, 30.0,
                     88.0, 89.0, 100.0, 101.0, 699.0, 700.0, 701.0, 1499.9999, 1500.0, 1500.0001, 38999.0, 39000.0,
                     39001.0, 1e-30, 1e-31, 1e-38, 1e-45})
      xd.push_back(v), xd.push_back(-v);
    const int64_t n = (int64_t)xd.size();
    std::vector<float> xf(xd.begin(), xd.end()), yf((size_t)n);
    std::vector<double> x64(xf.begin(), xf.end()), y64((size_t)n);
    int64_t shape[1] = {n};
    CTensor xv{xf.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, yv = xv;
    yv.data = yf.data();
    REQUIRE(ct_unary(op, &xv, &yv, nullptr) == CT_OK);
    xv.data = x64.data(), xv.dtype.bits = 64, yv = xv, yv.data = y64.data();
    REQUIRE(ct_unary(op, &xv, &yv, nullptr) == CT_OK);
    double worst = 0, at = 0;
    int64_t special_bad = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double want = y64[(size_t)i];
      if (!std::isfinite((float)want) || (float)want == 0) {
        special_bad += !same_bits_or_nan(yf[(size_t)i], (float)want);
        continue;
      }
      const double e = std::fabs(yf[(size_t)i] - want) / ulp_of<float>(want);
      if (e > worst) worst = e, at = xf[(size_t)i];
    }
    INFO(op_name(op) << ": worst " << worst << " ulp at " << at << ", " << special_bad << " specials unlike float64's");
    CHECK(worst <= 0.51);
    CHECK(special_bad == 0);
  }
}

TEST_CASE("lgamma digamma erfinv: known values, poles, edges, erfinv's tails", "[elementwise]") {
  const double g = 0.57721566490153286061, ln2 = 0.69314718055994530942, sqrtpi = 1.7724538509055160273;
  struct K { int op; double x, want; };
  const K ks[] = {{CT_OP_LGAMMA, 0.5, std::log(sqrtpi)}, {CT_OP_LGAMMA, -0.5, std::log(2 * sqrtpi)},
                  {CT_OP_LGAMMA, 1, 0}, {CT_OP_LGAMMA, 3, std::log(2.0)}, {CT_OP_LGAMMA, 0, kInf},
                  {CT_OP_LGAMMA, -1, kInf}, {CT_OP_LGAMMA, -kInf, kInf}, {CT_OP_LGAMMA, kNaN, kNaN},
                  {CT_OP_DIGAMMA, 1, -g}, {CT_OP_DIGAMMA, 0.5, -g - 2 * ln2}, {CT_OP_DIGAMMA, -0.5, -g - 2 * ln2 + 2},
                  {CT_OP_DIGAMMA, 11, -g + 7381.0 / 2520}, {CT_OP_DIGAMMA, 0.0, -kInf}, {CT_OP_DIGAMMA, -0.0, kInf},
                  {CT_OP_DIGAMMA, -2, kNaN}, {CT_OP_DIGAMMA, kInf, kInf}, {CT_OP_DIGAMMA, -kInf, kNaN},
                  {CT_OP_ERFINV, 0.5, 0.47693627620446987338}, {CT_OP_ERFINV, -0.5, -0.47693627620446987338},
                  {CT_OP_ERFINV, 0.0, 0.0}, {CT_OP_ERFINV, -0.0, -0.0}, {CT_OP_ERFINV, 1, kInf},
                  {CT_OP_ERFINV, -1, -kInf}, {CT_OP_ERFINV, 1.5, kNaN}, {CT_OP_ERFINV, kNaN, kNaN}};
  for (const K& k : ks) {
    double x = k.x, y = -7;
    int64_t shape[1] = {1};
    CTensor xv{&x, {CT_CPU, 0}, 1, {CT_FLOAT, 64, 1}, shape, nullptr, 0}, yv = xv;
    yv.data = &y;
    REQUIRE(ct_unary(k.op, &xv, &yv, nullptr) == CT_OK);
    INFO(op_name(k.op) << "(" << k.x << ") = " << y << ", want " << k.want);
    if (std::isnan(k.want)) CHECK(std::isnan(y));
    else if (std::isinf(k.want) || k.want == 0) CHECK((y == k.want && std::signbit(y) == std::signbit(k.want)));
    else CHECK(std::fabs(y - k.want) <= 4e-15 * std::max(1.0, std::fabs(k.want)));
  }
  // erfinv(erf(x)) = x near 0, erfc(erfinv(1 - t)) = t out to t = 2^-52.
  std::vector<double> ys, want;
  for (double x = -3; x <= 3; x += 0.0625) ys.push_back(std::erf(x)), want.push_back(x);
  for (int e = 2; e <= 52; ++e) ys.push_back(1 - std::ldexp(1.0, -e)), want.push_back(std::ldexp(1.0, -e));
  std::vector<double> r(ys.size());
  int64_t shape[1] = {(int64_t)ys.size()};
  CTensor xv{ys.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 64, 1}, shape, nullptr, 0}, yv = xv;
  yv.data = r.data();
  REQUIRE(ct_unary(CT_OP_ERFINV, &xv, &yv, nullptr) == CT_OK);
  for (size_t i = 0; i < ys.size(); ++i) {
    const bool tail = ys[i] > 0.5 && want[i] < 0.5;  // the second list: want is 1 - y
    const double back = tail ? std::erfc(r[i]) : std::erf(r[i]);
    INFO("erfinv(" << ys[i] << ") = " << r[i] << ", back " << back << ", want " << want[i]);
    if (tail) CHECK(std::fabs(back - want[i]) <= 1e-14 * want[i]);
    else CHECK(std::fabs(r[i] - want[i]) <= 1e-14 * std::max(1.0, std::fabs(want[i])) + (std::fabs(want[i]) > 2.5 ? 1e-11 : 0));
  }
}

// The special functions of src/math/special.inc (Bessel, Airy, polynomials,
// zeta, polygamma, the incomplete gamma functions) at values mpmath gives (40
// digits, rounded), in every branch of their algorithms, and at their poles
// and edges (PyTorch's conventions).
TEST_CASE("special functions: known values, poles, edges", "[elementwise]") {
  struct K { int op; double x, n, want, tol; };  // tol: relative to max(1, |want|); 0 means 2e-14
  const K ks[] = {
      {CT_OP_BESSEL_J0, 1, 0, 0.76519768655796661},
      {CT_OP_BESSEL_J0, 30, 0, -0.086367983581040211},
      {CT_OP_BESSEL_J1, -2.5, 0, -0.49709410246427405},
      {CT_OP_BESSEL_J1, 7.25, 0, 0.068581700653131739},
      {CT_OP_BESSEL_Y0, 0.5, 0, -0.44451873350670656},
      {CT_OP_BESSEL_Y0, 10, 0, 0.055671167283599395},
      {CT_OP_BESSEL_Y1, 3, 0, 0.32467442479179998},
      {CT_OP_BESSEL_Y1, 10000, 0, 0.0070963427525364952},
      {CT_OP_MODIFIED_BESSEL_I0, 1, 0, 1.2660658777520084},
      {CT_OP_MODIFIED_BESSEL_I1, -3, 0, -3.9533702174026093},
      {CT_OP_MODIFIED_BESSEL_I0, 700, 0, 1.5295933476718737e+302},
      {CT_OP_I0E, 100, 0, 0.03994437929909668},
      {CT_OP_I1E, -40, 0, -0.062482229074442064},
      {CT_OP_MODIFIED_BESSEL_K0, 0.5, 0, 0.92441907122766587},
      {CT_OP_MODIFIED_BESSEL_K1, 5, 0, 0.0040446134454521646},
      {CT_OP_MODIFIED_BESSEL_K1, 1.5, 0, 0.2773878004568438},
      {CT_OP_SCALED_MODIFIED_BESSEL_K0, 100, 0, 0.12517562165912657},
      {CT_OP_SCALED_MODIFIED_BESSEL_K1, 0.10000000000000001, 0, 10.890182683049696},
      {CT_OP_POLYGAMMA, 0.5, 1, 4.934802200544679},
      {CT_OP_POLYGAMMA, 2.5, 3, 0.22390584881725206},
      {CT_OP_POLYGAMMA, -1.5, 2, -0.23620405164172739},
      {CT_OP_MVLGAMMA, 2.5, 3, 1.8809954616117741},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 0.29999999999999999, 5, 0.99887999999999999},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 0.29999999999999999, 20, 0.98213013105489211},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_U, 0.29999999999999999, 10, 1.0252491776000001},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_U, 1.5, 4, 55},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 0.29999999999999999, 2.7000000000000002, -0.82000000000000006},
      {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_T, 0.80000000000000004, 3, -0.93600000000000005},
      {CT_OP_SHIFTED_CHEBYSHEV_POLYNOMIAL_U, 0.10000000000000001, 9, -0.25207193599999883},
      {CT_OP_HERMITE_POLYNOMIAL_H, 1.5, 6, -201},
      {CT_OP_HERMITE_POLYNOMIAL_HE, -2, 7, -86},
      {CT_OP_LAGUERRE_POLYNOMIAL_L, 2.5, 5, 1.0325520833333333},
      {CT_OP_LEGENDRE_POLYNOMIAL_P, 0.40000000000000002, 8, -0.26699929999999999},
      {CT_OP_ZETA, 3, 0.5, 8.4143983221171599},
      {CT_OP_ZETA, 2, -1.5, 9.3792466449891236},
      {CT_OP_ZETA, 4.5, 30, 2.0475177219352409e-06},
      {CT_OP_IGAMMA, 2.5, 1.5, 0.3000141641213725},
      {CT_OP_IGAMMAC, 10, 15, 0.069853660699409764},
      {CT_OP_IGAMMA, 0.5, 20, 0.99999999974603715},
      {CT_OP_IGAMMAC, 3, 0.25, 0.99783850331023749},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_V, -0.7, 9, -2.4684221440000003},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_W, 0.2, 9, 0.6781783039999999},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_W, 0.2, 3, -1.5760000000000001},
      // Past the recurrences' reach (degree 64 for Chebyshev outside [-1, 1], 65536 for the others): closed
      // forms, Stieltjes' and Heine's expansions, the hypergeometric and Laguerre series, known infinities and
      // NaN where only the recurrence knows the sign; the tolerance is the condition number's (n eps)
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 1.5, 100, 3.1368810766905288e+41, 1e-13},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_U, -1.001, 1001, -3.2196541494122062e+20, 1e-13},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_V, 1.2, 200, 7.432555890948718e+53, 1e-13},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_W, -1.2, 201, -1.3849266893862978e+54, 1e-13},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_V, -1.2, 201, -4.5932821908434282e+54, 1e-13},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 1.0000000000000002, 1e12, kInf},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_U, -2, 1e15 + 1, -kInf}, {CT_OP_CHEBYSHEV_POLYNOMIAL_W, kInf, 1e6, kNaN},
      {CT_OP_LEGENDRE_POLYNOMIAL_P, 0.3, 70000, -0.0028835895535925278, 1e-13},
      {CT_OP_LEGENDRE_POLYNOMIAL_P, 1.00000001, 100000, 148429.17779962478, 1e-13},
      {CT_OP_LEGENDRE_POLYNOMIAL_P, 0.9999999999, 70000, 0.76960083455667377, 1e-13},
      {CT_OP_LEGENDRE_POLYNOMIAL_P, -0.5, 65537, -0.00086681068476968947, 1e-13},
      {CT_OP_LEGENDRE_POLYNOMIAL_P, -1.000000001, 65539, -4.6163772791859394, 1e-13},
      {CT_OP_LAGUERRE_POLYNOMIAL_L, -0.01, 100000, 1.4667356288224594e+26, 1e-13},
      {CT_OP_LAGUERRE_POLYNOMIAL_L, 1e-05, 100000, 0.22388901496721937, 1e-13},
      {CT_OP_LAGUERRE_POLYNOMIAL_L, -2e-09, 1e12, 2.9527542163839554e+37, 1e-13},
      {CT_OP_LAGUERRE_POLYNOMIAL_L, 4e12 + 8, 1e12 + 1, -kInf}, {CT_OP_LAGUERRE_POLYNOMIAL_L, 0.5, 1e12, kNaN},
      {CT_OP_HERMITE_POLYNOMIAL_H, 0, 70002, -kInf}, {CT_OP_HERMITE_POLYNOMIAL_H, 0.0, 70001, 0},
      {CT_OP_HERMITE_POLYNOMIAL_H, 1e-3, 70001, kInf}, {CT_OP_HERMITE_POLYNOMIAL_H, -400, 70001, -kInf},
      {CT_OP_HERMITE_POLYNOMIAL_HE, -1e-3, 70003, kInf}, {CT_OP_HERMITE_POLYNOMIAL_HE, 1e-300, 1e15 + 2, -kInf},
      {CT_OP_HERMITE_POLYNOMIAL_H, 0.5, 70000, kNaN},
      // zeta below q = -16 by the shift to (0, 1) (the series would take -q steps)
      {CT_OP_ZETA, 2, -12345.25, 19.739127802644509}, {CT_OP_ZETA, 2, -16.25, 19.679525020259702},
      {CT_OP_ZETA, 2, -1e15 - 0.5, 9.869604401089358},
      // Airy Ai: the Taylor steps on both sides of 0, next to and at the switches to the asymptotic expansions
      {CT_OP_AIRY_AI, 0.5, 0, 0.23169360648083349},
      {CT_OP_AIRY_AI, -2.3, 0, 0.02670633305735697},  // PyTorch's float64 (Cephes): 0.0267071..., 3e-5 off
      {CT_OP_AIRY_AI, 2.0, 0, 0.034924130423274379},
      {CT_OP_AIRY_AI, -3.0, 0, -0.37881429367765807},
      {CT_OP_AIRY_AI, -7.9, 0, 0.041701883617386709},
      {CT_OP_AIRY_AI, -8.5, 0, -0.33029023763020888},
      {CT_OP_AIRY_AI, -50.0, 0, -0.16188142361232092},
      {CT_OP_AIRY_AI, 1e-300, 0, 0.35502805388781724},
      // edges
      {CT_OP_BESSEL_Y0, 0.0, 0, -kInf}, {CT_OP_BESSEL_Y1, -1, 0, kNaN}, {CT_OP_BESSEL_J0, -kInf, 0, 0},
      {CT_OP_BESSEL_J1, -0.0, 0, -0.0}, {CT_OP_MODIFIED_BESSEL_I1, -0.0, 0, -0.0}, {CT_OP_I1E, -0.0, 0, -0.0},
      {CT_OP_MODIFIED_BESSEL_K0, 0.0, 0, kInf}, {CT_OP_MODIFIED_BESSEL_K1, -1, 0, kNaN},
      {CT_OP_MODIFIED_BESSEL_I0, -kInf, 0, kInf}, {CT_OP_I0E, -kInf, 0, 0}, {CT_OP_SCALED_MODIFIED_BESSEL_K1, kInf, 0, 0},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 0.3, -1, 0}, {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 0.3, -0.5, 1},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_T, 0.3, kNaN, 0}, {CT_OP_LEGENDRE_POLYNOMIAL_P, kNaN, 0, 1},
      {CT_OP_LEGENDRE_POLYNOMIAL_P, kNaN, 2, kNaN}, {CT_OP_LEGENDRE_POLYNOMIAL_P, -1, 3, -1},
      {CT_OP_CHEBYSHEV_POLYNOMIAL_V, -1, 4, 9}, {CT_OP_CHEBYSHEV_POLYNOMIAL_W, 1, 4, 9}, {CT_OP_LAGUERRE_POLYNOMIAL_L, 0, 7, 1},
      {CT_OP_ZETA, 1, 2, kInf}, {CT_OP_ZETA, 0.5, 1, kNaN}, {CT_OP_ZETA, 2, -3, kInf}, {CT_OP_ZETA, 2.5, -1.5, kNaN},
      {CT_OP_IGAMMA, 0, 1, 1}, {CT_OP_IGAMMAC, 0, 0, kNaN}, {CT_OP_IGAMMA, 2, 0, 0}, {CT_OP_IGAMMAC, 2, kInf, 0},
      {CT_OP_IGAMMA, -1, 2, kNaN}, {CT_OP_POLYGAMMA, -2, 1, kInf}, {CT_OP_AIRY_AI, kInf, 0, 0},
      {CT_OP_AIRY_AI, -kInf, 0, 0}, {CT_OP_AIRY_AI, kNaN, 0, kNaN}};
  for (const K& k : ks) {
    double x = k.x, n = k.n, y = -7;
    int64_t shape[1] = {1};
    CTensor xv{&x, {CT_CPU, 0}, 1, {CT_FLOAT, 64, 1}, shape, nullptr, 0}, nv = xv, yv = xv;
    nv.data = &n;
    yv.data = &y;
    CTOpInfo info{};
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(k.op, &info) == CT_OK);
    const CTStatus s = info.kind == CT_KIND_BINARY ? ct_binary(k.op, &xv, &nv, &yv, nullptr)
                       : info.kind == CT_KIND_UNARY_PARAM ? ct_unary_param(k.op, &xv, &n, 1, &yv, nullptr)
                                                          : ct_unary(k.op, &xv, &yv, nullptr);
    REQUIRE(s == CT_OK);
    INFO(op_name(k.op) << "(" << k.x << ", " << k.n << ") = " << y << ", want " << k.want);
    if (std::isnan(k.want)) CHECK(std::isnan(y));
    else if (std::isinf(k.want) || k.want == 0) CHECK((y == k.want && std::signbit(y) == std::signbit(k.want)));
    else CHECK(std::fabs(y - k.want) <= (k.tol ? k.tol : 2e-14) * std::max(1.0, std::fabs(k.want)));
  }
  // Ai's decaying tail, relative: 7.9 (Taylor steps down from 8), 8 and beyond (the asymptotic expansion)
  {
    const double xs[] = {7.9, 8.0, 12.0, 30.0, 100.0};
    const double want[] = {6.2396400972839342e-8, 4.6922076160992316e-8, 1.3931846888753608e-13,
                           3.2082175915504956e-49, 2.6344821520881845e-291};
    double ys[5];
    int64_t shape[1] = {5};
    CTensor xv{const_cast<double*>(xs), {CT_CPU, 0}, 1, {CT_FLOAT, 64, 1}, shape, nullptr, 0}, yv = xv;
    yv.data = ys;
    REQUIRE(ct_unary(CT_OP_AIRY_AI, &xv, &yv, nullptr) == CT_OK);
    for (int i = 0; i < 5; ++i) {
      INFO("airy_ai(" << xs[i] << ") = " << ys[i] << ", want " << want[i]);
      CHECK(std::fabs(ys[i] - want[i]) <= 1e-12 * want[i]);
    }
  }
  // polygamma's order and mvlgamma's dimension are counts: anything else is refused, the output untouched
  double x = 1.5, y = -7;
  int64_t shape[1] = {1};
  CTensor xv{&x, {CT_CPU, 0}, 1, {CT_FLOAT, 64, 1}, shape, nullptr, 0}, yv = xv;
  yv.data = &y;
  for (double bad : {-1.0, 2.5, kNaN}) {
    CHECK(ct_unary_param(CT_OP_POLYGAMMA, &xv, &bad, 1, &yv, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(std::string(ct_last_error()).find("polygamma: n=") != std::string::npos);
  }
  const double zero = 0;
  CHECK(ct_unary_param(CT_OP_MVLGAMMA, &xv, &zero, 1, &yv, nullptr) == CT_ERR_INVALID_ARGUMENT);
  CHECK(y == -7);
}

// Large outputs stream their stores; one whose address is up to 512 bytes
// past its input's modulo 4 KiB is written back to front (4K aliasing).
// Every placement gives the bits of a compact, separately placed output.
TEST_CASE("unary: large outputs at every offset from the input modulo 4 KiB give the same bits", "[elementwise]") {
  const int64_t n = (int64_t(1) << 20) + 37;  // 4 MiB and a tail
  std::vector<float> x((size_t)n), want((size_t)n);
  for (int64_t i = 0; i < n; ++i) x[(size_t)i] = -20.0f + 40.0f * (float)((i * 7919) % 100003) / 100003.0f;
  std::vector<char> arena((size_t)n * 4 + 3 * 4096);
  int64_t shape[1] = {n};
  for (int op : {CT_OP_EXP, CT_OP_TANH, CT_OP_NEG}) {
    CTensor xv{x.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 0}, wv = xv;
    wv.data = want.data();
    REQUIRE(ct_unary(op, &xv, &wv, nullptr) == CT_OK);
    for (uintptr_t gap : {uintptr_t(0), uintptr_t(4), uintptr_t(64), uintptr_t(448), uintptr_t(508), uintptr_t(512),
                          uintptr_t(2052), uintptr_t(4092)}) {
      const uintptr_t base = (reinterpret_cast<uintptr_t>(x.data()) + gap) & 4095;
      uintptr_t at = reinterpret_cast<uintptr_t>(arena.data());
      at += (base - at) & 4095;  // at = x + gap modulo 4 KiB
      float* y = reinterpret_cast<float*>(at);
      CTensor yv = xv;
      yv.data = y;
      REQUIRE(ct_unary(op, &xv, &yv, nullptr) == CT_OK);
      INFO(op_name(op) << ", output " << gap << " bytes past the input modulo 4096");
      CHECK(std::memcmp(y, want.data(), (size_t)n * 4) == 0);
    }
  }
}

TEST_CASE("CT_CPU_SIMD: the CPU kernels run on the SIMD target asked for", "[simd]") {
  CTDeviceInfo info{};
  info.struct_size = sizeof info;
  REQUIRE(ct_device_info(0, &info) == CT_OK);  // the CPU is device 0
  const std::string name = info.name;
  INFO("device 0: " << name);
  REQUIRE(name.find("SIMD target ") != std::string::npos);
  const char* want = std::getenv("CT_CPU_SIMD");
  if (want != nullptr && *want != 0) CHECK(name.find(std::string("SIMD target ") + want + ")") != std::string::npos);
}

// ---------------------------------------------------------------------------
// ternary corners
// ---------------------------------------------------------------------------

TEST_CASE("where: any nonzero cond byte is true", "[elementwise]") {
  HostTensor cond = HostTensor::compact(DT_BOOL, {6});
  const unsigned char cb[6] = {0, 1, 2, 0xFF, 0x80, 0};
  std::memcpy(cond.buf(), cb, 6);
  HostTensor a = make(DT_F16, {6}, {1, 2, 3, 4, 5, 6}), b = make(DT_F16, {6}, {-1, -2, -3, -4, -5, -6});
  HostTensor out = HostTensor::compact(DT_F16, {6});
  CTensor cv = cond.view(), av = a.view(), bv = b.view(), ov = out.view();
  REQUIRE(ct_ternary(CT_OP_WHERE, &cv, &av, &bv, &ov, nullptr) == CT_OK);
  const double want[6] = {-1, 2, 3, 4, 5, -6};
  for (int i = 0; i < 6; ++i) CHECK(out.get(i) == want[i]);
  // where copies bits: NaN payloads and -0 survive, for bool data too
  HostTensor fa = HostTensor::compact(DT_F32, {2}), fb = make(DT_F32, {2}, {0, 0});
  uint32_t nanbits = 0x7FC01234u, negz = 0x80000000u;
  std::memcpy(fa.at(0), &nanbits, 4);
  std::memcpy(fa.at(1), &negz, 4);
  HostTensor c2 = make_i(DT_BOOL, {2}, {1, 1});
  HostTensor fo = HostTensor::compact(DT_F32, {2});
  CTensor c2v = c2.view(), fav = fa.view(), fbv = fb.view(), fov = fo.view();
  REQUIRE(ct_ternary(CT_OP_WHERE, &c2v, &fav, &fbv, &fov, nullptr) == CT_OK);
  uint32_t g0, g1;
  std::memcpy(&g0, fo.at(0), 4);
  std::memcpy(&g1, fo.at(1), 4);
  CHECK(g0 == nanbits);
  CHECK(g1 == negz);
}

TEST_CASE("lerp is exact at w = 0 and w = 1", "[elementwise]") {
  for (int d : kFloatTypes) {
    INFO(dtype(d).name);
    // a large, b small: the naive a + w*(b-a) loses b at w = 1
    double big = d == DT_F16 ? 60000.0 : d == DT_BF16 ? 1e30 : d == DT_F32 ? 1e8 : 1e17;
    HostTensor a = make(d, {4}, {big, 1.0, -big, 0.1}), b = make(d, {4}, {1.0, big, 3.0, -0.3});
    HostTensor w0 = make(d, {4}, {0, 0, 0, 0}), w1 = make(d, {4}, {1, 1, 1, 1});
    HostTensor out = HostTensor::compact(d, {4});
    CTensor av = a.view(), bv = b.view(), w0v = w0.view(), w1v = w1.view(), ov = out.view();
    REQUIRE(ct_ternary(CT_OP_LERP, &av, &bv, &w0v, &ov, nullptr) == CT_OK);
    for (int i = 0; i < 4; ++i) CHECK(out.get(i) == a.get(i));
    REQUIRE(ct_ternary(CT_OP_LERP, &av, &bv, &w1v, &ov, nullptr) == CT_OK);
    for (int i = 0; i < 4; ++i) CHECK(out.get(i) == b.get(i));
  }
  // and the two branches around 0.5
  HostTensor a = make(DT_F64, {3}, {0, 0, 0}), b = make(DT_F64, {3}, {8, 8, 8}), w = make(DT_F64, {3}, {0.25, 0.5, 0.75});
  HostTensor out = HostTensor::compact(DT_F64, {3});
  CTensor av = a.view(), bv = b.view(), wv = w.view(), ov = out.view();
  REQUIRE(ct_ternary(CT_OP_LERP, &av, &bv, &wv, &ov, nullptr) == CT_OK);
  CHECK(out.get(0) == 2.0);
  CHECK(out.get(1) == 4.0);
  CHECK(out.get(2) == 6.0);
}

TEST_CASE("fma rounds once", "[elementwise]") {
  {
    float a = 1.0f + std::ldexp(1.0f, -20), c = -(1.0f + std::ldexp(1.0f, -19));
    HostTensor ta = make(DT_F32, {1}, {a}), tc = make(DT_F32, {1}, {c});
    HostTensor out = HostTensor::compact(DT_F32, {1});
    CTensor av = ta.view(), cv = tc.view(), ov = out.view();
    REQUIRE(ct_ternary(CT_OP_FMA, &av, &av, &cv, &ov, nullptr) == CT_OK);
    // a*b rounded first would give 0
    CHECK(out.get(0) == std::ldexp(1.0, -40));
    CHECK((double)std::fma(a, a, c) == std::ldexp(1.0, -40));
  }
  {
    double a = 1.0 + std::ldexp(1.0, -30), c = -(1.0 + std::ldexp(1.0, -29));
    HostTensor ta = make(DT_F64, {1}, {a}), tc = make(DT_F64, {1}, {c});
    HostTensor out = HostTensor::compact(DT_F64, {1});
    CTensor av = ta.view(), cv = tc.view(), ov = out.view();
    REQUIRE(ct_ternary(CT_OP_FMA, &av, &av, &cv, &ov, nullptr) == CT_OK);
    CHECK(out.get(0) == std::ldexp(1.0, -60));
  }
  {
    // half types: fma in float32, rounded once to the half type
    HostTensor ta = make(DT_F16, {1}, {1.0 + std::ldexp(1.0, -10)}), tc = make(DT_F16, {1}, {-(1.0 + std::ldexp(1.0, -9))});
    HostTensor out = HostTensor::compact(DT_F16, {1});
    CTensor av = ta.view(), cv = tc.view(), ov = out.view();
    REQUIRE(ct_ternary(CT_OP_FMA, &av, &av, &cv, &ov, nullptr) == CT_OK);
    CHECK(out.get(0) == std::ldexp(1.0, -20));
  }
  {
    HostTensor a = make_i(DT_I8, {2}, {100, -128}), b = make_i(DT_I8, {2}, {2, -1}), c = make_i(DT_I8, {2}, {100, 0});
    HostTensor out = HostTensor::compact(DT_I8, {2});
    CTensor av = a.view(), bv = b.view(), cv = c.view(), ov = out.view();
    REQUIRE(ct_ternary(CT_OP_FMA, &av, &bv, &cv, &ov, nullptr) == CT_OK);
    CHECK(out.get_i(0) == 44);
    CHECK(out.get_i(1) == -128);
  }
}

// ---------------------------------------------------------------------------
// ct_copy
// ---------------------------------------------------------------------------

TEST_CASE("ct_copy: strides on both sides, bits preserved", "[elementwise]") {
  // src transposed with byte_offset, dst padded and reversed
  HostTensor src = HostTensor::strided(DT_F32, {3, 4}, {1, 3}, 2);
  for (int i = 0; i < 12; ++i) src.set(i, i * 1.5);
  uint32_t snan = 0x7F800001u, qnan = 0x7FC0ABCDu;
  std::memcpy(src.at(5), &snan, 4);
  std::memcpy(src.at(6), &qnan, 4);
  HostTensor dst = HostTensor::strided(DT_F32, {3, 4}, {-6, 1}, 1);
  dst.fill_bytes(0xEE);
  CTensor sv = src.view(false), dv = dst.view(true);
  REQUIRE(ct_copy(&sv, &dv, nullptr) == CT_OK);
  for (int i = 0; i < 12; ++i) {
    uint32_t s, d;
    std::memcpy(&s, src.at(i), 4);
    std::memcpy(&d, dst.at(i), 4);
    INFO("index " << i);
    CHECK(s == d);
  }
  // gaps untouched: dst rows are 6 wide with 4 used
  std::vector<char> cov = covered(dst);
  std::vector<unsigned char> b = dst.bytes();
  bool gaps_ok = true;
  for (size_t k = 0; k < b.size(); ++k) gaps_ok = gaps_ok && (cov[k] || b[k] == 0xEE);
  CHECK(gaps_ok);
  // every dtype: bitwise copy, including bool and halves
  for (int d = 0; d < DT_COUNT; ++d) {
    INFO(dtype(d).name);
    HostTensor s2 = HostTensor::strided(d, {5, 7}, {1, 5}, 0);
    Rng rng(d);
    for (int64_t i = 0; i < (int64_t)s2.buffer_bytes; ++i) s2.buf()[i] = (unsigned char)(rng.next() & (d == DT_BOOL ? 1 : 0xFF));
    HostTensor d2 = HostTensor::compact(d, {5, 7});
    CTensor s2v = s2.view(), d2v = d2.view();
    REQUIRE(ct_copy(&s2v, &d2v, nullptr) == CT_OK);
    bool same = true;
    for (int64_t i = 0; i < 35; ++i) same = same && std::memcmp(s2.at(i), d2.at(i), (size_t)dtype(d).size) == 0;
    CHECK(same);
  }
}

// ---------------------------------------------------------------------------
// CPU stream: user parallel_for, num_threads
// ---------------------------------------------------------------------------

namespace {

struct Pool {
  std::mutex mu;
  std::atomic<int> calls{0};
  std::vector<std::vector<std::pair<int64_t, int64_t>>> ranges;  // per call
  std::vector<int64_t> ns;
  bool bad_order = false;
};

void user_parallel_for(void* user, int64_t n, int64_t grain, CTParallelBody body, void* ctx) {
  Pool* p = static_cast<Pool*>(user);
  p->calls++;
  if (n < 1 || grain < 1) p->bad_order = true;  // ctensor should not ask for empty or grain-0 work
  if (grain < 1) grain = 1;
  int64_t chunk = std::max<int64_t>(grain, (n + 3) / 4);
  std::vector<std::pair<int64_t, int64_t>> rs;
  for (int64_t b = 0; b < n; b += chunk) rs.push_back({b, std::min(n, b + chunk)});
  {
    std::lock_guard<std::mutex> lk(p->mu);
    p->ranges.push_back(rs);
    p->ns.push_back(n);
  }
  // run in reverse order, the odd chunks on other threads
  std::vector<std::thread> ts;
  for (size_t i = rs.size(); i-- > 0;) {
    if (i % 2) ts.emplace_back([=] { body(ctx, rs[i].first, rs[i].second); });
    else body(ctx, rs[i].first, rs[i].second);
  }
  for (auto& t : ts) t.join();
}

}  // namespace

TEST_CASE("CPU stream: user parallel_for covers [0,n) once and matches the default path", "[elementwise]") {
  const int64_t n = 300007;
  HostTensor x = HostTensor::compact(DT_F32, {n});
  Rng rng(3);
  for (int64_t i = 0; i < n; ++i) x.set(i, rng.uniform(-5, 5));
  HostTensor ref = HostTensor::compact(DT_F32, {n});
  CTensor xv = x.view(), rv = ref.view();
  REQUIRE(ct_unary(CT_OP_TANH, &xv, &rv, nullptr) == CT_OK);

  Pool pool;
  CTCpuStream st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  st.num_threads = 0;
  st.parallel_for = user_parallel_for;
  st.user = &pool;
  HostTensor out = HostTensor::compact(DT_F32, {n});
  CTensor ov = out.view();
  REQUIRE(ct_unary(CT_OP_TANH, &xv, &ov, &st) == CT_OK);
  CHECK(pool.calls.load() >= 1);
  CHECK_FALSE(pool.bad_order);
  CHECK(out.bytes() == ref.bytes());
  for (size_t c = 0; c < pool.ranges.size(); ++c) {
    auto rs = pool.ranges[c];
    std::sort(rs.begin(), rs.end());
    int64_t at = 0;
    for (auto& r : rs) {
      CHECK(r.first == at);
      at = r.second;
    }
    CHECK(at == pool.ns[c]);
  }
  // a strided (transposed) large input, ternary and cast through the pool too
  HostTensor t = HostTensor::strided(DT_F32, {600, 500}, {1, 600}, 0);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, (double)(i % 1000) - 500.0);
  HostTensor o1 = HostTensor::compact(DT_F32, {600, 500}), o2 = HostTensor::compact(DT_F32, {600, 500});
  CTensor tv = t.view(), o1v = o1.view(), o2v = o2.view();
  REQUIRE(ct_ternary(CT_OP_FMA, &tv, &tv, &tv, &o1v, nullptr) == CT_OK);
  int before = pool.calls.load();
  REQUIRE(ct_ternary(CT_OP_FMA, &tv, &tv, &tv, &o2v, &st) == CT_OK);
  CHECK(pool.calls.load() > before);
  CHECK(o1.bytes() == o2.bytes());
  HostTensor c1 = HostTensor::compact(DT_F16, {600, 500}), c2 = HostTensor::compact(DT_F16, {600, 500});
  CTensor c1v = c1.view(), c2v = c2.view();
  REQUIRE(ct_cast(&tv, &c1v, nullptr) == CT_OK);
  REQUIRE(ct_cast(&tv, &c2v, &st) == CT_OK);
  CHECK(c1.bytes() == c2.bytes());
  HostTensor k1 = HostTensor::compact(DT_F32, {600, 500});
  CTensor k1v = k1.view();
  REQUIRE(ct_copy(&tv, &k1v, &st) == CT_OK);
  bool same = true;
  for (int64_t i = 0; i < t.numel(); ++i) same = same && k1.get(i) == t.get(i);
  CHECK(same);
}

TEST_CASE("CPU stream: num_threads = 1 and = 2 give the default result", "[elementwise]") {
  const int64_t n = 250001;
  HostTensor x = HostTensor::compact(DT_BF16, {n});
  Rng rng(4);
  for (int64_t i = 0; i < n; ++i) x.set(i, rng.uniform(-8, 8));
  HostTensor ref = HostTensor::compact(DT_BF16, {n});
  CTensor xv = x.view(), rv = ref.view();
  REQUIRE(ct_unary(CT_OP_GELU, &xv, &rv, nullptr) == CT_OK);
  for (int nt : {1, 2, 64}) {
    INFO("num_threads " << nt);
    CTCpuStream st;
    std::memset(&st, 0, sizeof st);
    st.struct_size = sizeof st;
    st.num_threads = nt;
    HostTensor out = HostTensor::compact(DT_BF16, {n});
    CTensor ov = out.view();
    REQUIRE(ct_unary(CT_OP_GELU, &xv, &ov, &st) == CT_OK);
    CHECK(out.bytes() == ref.bytes());
  }
  CHECK(ct_synchronize({CT_CPU, 0}, nullptr) == CT_OK);
}

// Outputs of >= 4 MiB per call take the streaming-store path (with a partial
// vector before the first aligned address and after the last full vector).
TEST_CASE("large outputs: streaming stores, misaligned start, one and two threads", "[elementwise]") {
  const int64_t n = 3000001;  // 12 MB of float32: >= 4 MiB per thread on two threads
  std::vector<float> x((size_t)n + 1), y((size_t)n + 1, -7.f);
  for (int64_t i = 0; i < n + 1; ++i) x[(size_t)i] = (float)((i % 2001) - 1000) * 0.01f;
  int64_t shape[1] = {n};
  // byte_offset 4: the output starts one float past a 64-byte-aligned vector boundary at best.
  CTensor xv = {x.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 4};
  CTensor yv = {y.data(), {CT_CPU, 0}, 1, {CT_FLOAT, 32, 1}, shape, nullptr, 4};
  for (int threads : {1, 2}) {
    CTCpuStream s = {sizeof(CTCpuStream), threads, nullptr, nullptr};
    for (int op : {(int)CT_OP_RELU, (int)CT_OP_EXP}) {
      std::fill(y.begin(), y.end(), -7.f);
      REQUIRE(ct_unary(op, &xv, &yv, &s) == CT_OK);
      ctref::Array xa(dtype(DT_F32).dt, {n});
      for (int64_t i = 0; i < n; ++i) xa.f[(size_t)i] = x[(size_t)i + 1];
      const std::vector<double> want = reference_of(ref_call(op), {&xa}, {{DT_F64, {n}}})[0].f;
      int64_t bad = 0;
      for (int64_t i = 0; i < n; ++i)
        if (std::fabs(y[(size_t)i + 1] - want[(size_t)i]) > 2e-7 * std::fabs(want[(size_t)i])) ++bad;
      CAPTURE(threads, op);
      CHECK(bad == 0);
      CHECK(y[0] == -7.f);  // the element before the output is untouched
    }
  }
}

TEST_CASE("CPU stream: work below two grains runs inline, without the caller's pool", "[elementwise]") {
  Pool pool;
  CTCpuStream st;
  std::memset(&st, 0, sizeof st);
  st.struct_size = sizeof st;
  st.parallel_for = user_parallel_for;
  st.user = &pool;
  HostTensor x = HostTensor::compact(DT_F32, {1000}), y = HostTensor::compact(DT_F32, {1000});
  for (int64_t i = 0; i < 1000; ++i) x.set(i, (double)i - 500.0);
  CTensor xv = x.view(), yv = y.view();
  REQUIRE(ct_unary(CT_OP_RELU, &xv, &yv, &st) == CT_OK);
  CHECK(pool.calls.load() == 0);
  CHECK(y.get(0) == 0.0);
  CHECK(y.get(999) == 499.0);
}

// Kernels with plain-store loops (integer and bool ops, predicates, casts,
// where, integer fma and binary loops) write a large output through an L1
// block and streaming stores (Staged). Whatever the path, each output must
// equal, bit for bit, the same op run on pieces too small to stream; the
// output starts one element past an aligned address (a scalar head), and
// the element before it stays untouched.
TEST_CASE("large outputs of plain-store kernels (staged streaming) equal the op run in small pieces", "[elementwise]") {
  struct Case {
    const char* name;
    int op;  // -1: ct_cast
    CTDataType in[3];
    int nin;
    bool bcast_b;  // binary: b is one element, broadcast
    CTDataType out;
    int64_t n;
  };
  const CTDataType i8{CT_INT, 8, 1}, i16{CT_INT, 16, 1}, i32{CT_INT, 32, 1}, i64{CT_INT, 64, 1},
      u16{CT_UINT, 16, 1}, f32{CT_FLOAT, 32, 1}, f64{CT_FLOAT, 64, 1}, b8{CT_BOOL, 8, 1},
      f16{CT_FLOAT, 16, 1}, bf{CT_BFLOAT, 16, 1};
  const int64_t kBig = 3000001, kBool = 9000001;  // binary bool outputs: past the engine's 8 MiB
  const Case cases[] = {
      {"bitwise_not int32", CT_OP_BITWISE_NOT, {i32}, 1, false, i32, kBig},
      {"neg uint16", CT_OP_NEG, {u16}, 1, false, u16, kBig},
      {"isnan float32", CT_OP_ISNAN, {f32}, 1, false, b8, kBig},
      {"logical_not float64", CT_OP_LOGICAL_NOT, {f64}, 1, false, b8, kBig},
      {"cast int32 -> float64", -1, {i32}, 1, false, f64, kBig},
      {"cast float32 -> int8", -1, {f32}, 1, false, i8, kBig},
      {"where float32", CT_OP_WHERE, {b8, f32, f32}, 3, false, f32, kBig},
      {"where int64", CT_OP_WHERE, {b8, i64, i64}, 3, false, i64, kBig},
      {"fma int32", CT_OP_FMA, {i32, i32, i32}, 3, false, i32, kBig},
      {"mul int64", CT_OP_MUL, {i64, i64}, 2, false, i64, kBig},
      {"mul int16, b broadcast", CT_OP_MUL, {i16, i16}, 2, true, i16, int64_t(5000001)},
      {"less int16", CT_OP_LESS, {i16, i16}, 2, false, b8, kBool},
      {"equal float32", CT_OP_EQUAL, {f32, f32}, 2, false, b8, kBool},
      {"exp bfloat16", CT_OP_EXP, {bf}, 1, false, bf, kBig},
      {"add float16", CT_OP_ADD, {f16, f16}, 2, false, f16, kBool},
      {"isinf float16", CT_OP_ISINF, {f16}, 1, false, b8, kBig},
  };
  uint64_t state = 88172645463325252ull;
  const auto next = [&state] {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
  };
  for (const Case& c : cases) {
    const int64_t n = c.n, osz = c.out.bits / 8;
    std::vector<std::vector<uint8_t>> in((size_t)c.nin);
    std::vector<int64_t> ishape((size_t)c.nin, n);
    for (int k = 0; k < c.nin; ++k) {
      const int64_t sz = c.in[k].bits / 8;
      if (k == 1 && c.bcast_b) ishape[1] = 1;
      in[(size_t)k].resize((size_t)((ishape[(size_t)k] + 1) * sz));
      for (size_t j = 0; j < in[(size_t)k].size(); ++j) in[(size_t)k][j] = (uint8_t)(next() >> 56);
      if (c.in[k].code == CT_FLOAT && sz >= 4)  // finite values, some equal across inputs (== holds somewhere)
        for (int64_t j = 0; j <= ishape[(size_t)k]; ++j) {
          const uint64_t r = next();
          if (sz == 4) { const float v = (float)((int)(r % 7) - 3) * 0.5f; std::memcpy(&in[(size_t)k][(size_t)(j * 4)], &v, 4); }
          else { const double v = (double)((int)(r % 7) - 3) * 0.25; std::memcpy(&in[(size_t)k][(size_t)(j * 8)], &v, 8); }
        }
      if (sz == 2 && (c.in[k].code == CT_FLOAT || c.in[k].code == CT_BFLOAT))  // finite: bit 14 clear
        for (size_t j = 1; j < in[(size_t)k].size(); j += 2) in[(size_t)k][j] &= 0xBF;
      if (c.in[k].code == CT_BOOL)
        for (auto& v : in[(size_t)k]) v = (uint8_t)(v & 1);
    }
    // A view of elements [off, off + len) of each operand, one element in.
    const auto run = [&](std::vector<uint8_t>& out, int64_t off, int64_t len, void* stream) {
      int64_t shp[4] = {len, len, len, len}, one = 1;
      CTensor t[3];
      for (int k = 0; k < c.nin; ++k) {
        const bool b = k == 1 && c.bcast_b;
        t[k] = CTensor{in[(size_t)k].data(), {CT_CPU, 0}, 1, c.in[k], b ? &one : &shp[k], nullptr,
                       (uint64_t)((b ? 1 : 1 + off) * (c.in[k].bits / 8))};
      }
      CTensor y{out.data(), {CT_CPU, 0}, 1, c.out, &shp[3], nullptr, (uint64_t)((1 + off) * osz)};
      if (c.op < 0) return ct_cast(&t[0], &y, stream);
      if (c.nin == 1) return ct_unary(c.op, &t[0], &y, stream);
      if (c.nin == 2) return ct_binary(c.op, &t[0], &t[1], &y, stream);
      return ct_ternary(c.op, &t[0], &t[1], &t[2], &y, stream);
    };
    std::vector<uint8_t> want((size_t)((n + 1) * osz), 0xA5);
    for (int64_t off = 0; off < n; off += 1000) REQUIRE(run(want, off, std::min<int64_t>(1000, n - off), nullptr) == CT_OK);
    for (int threads : {1, 2}) {
      CTCpuStream s = {sizeof(CTCpuStream), threads, nullptr, nullptr};
      std::vector<uint8_t> got((size_t)((n + 1) * osz), 0xA5);
      INFO(c.name << ", " << threads << " thread(s)");
      REQUIRE(run(got, 0, n, &s) == CT_OK);
      const auto bad = std::mismatch(got.begin(), got.end(), want.begin());
      const int64_t first_bad = bad.first == got.end() ? -1 : (int64_t)(bad.first - got.begin()) / osz - 1;
      CHECK(first_bad == -1);  // element index (-1: none; the untouched one before the output is -1 too)
      CHECK(got[0] == 0xA5);
    }
  }
}
