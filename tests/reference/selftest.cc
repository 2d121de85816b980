// selftest.cc — ct_reference_selftest: linked against ct_reference alone (no
// libctensor, so a reference that called the library would not link); checks
// that every op of the header's CT_OP_TABLE has exactly one reference, that a
// missing one is a clear failure, and a few corners of notes/SEMANTICS.md
// that the definitions must reproduce.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "reference.h"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures;
  }
}

const CTDataType kF64 = {CT_FLOAT, 64, 1}, kI8 = {CT_INT, 8, 1}, kI64 = {CT_INT, 64, 1}, kF16 = {CT_FLOAT, 16, 1};
const CTDataType kU16 = {CT_UINT, 16, 1}, kU64 = {CT_UINT, 64, 1}, kBool = {CT_BOOL, 8, 1}, kF32 = {CT_FLOAT, 32, 1};

// op(a, b) of two scalars (0-d arrays) of dtype dt into a 0-d out of dtype odt.
ctref::Array binary(int32_t op, CTDataType dt, double a, double b, CTDataType odt) {
  ctref::Array x(dt, {}), y(dt, {}), out(odt, {});
  if (x.is_float()) {
    x.f[0] = a;
    y.f[0] = b;
  } else {
    x.i[0] = (int64_t)a;
    y.i[0] = (int64_t)b;
  }
  ctref::Call c;
  c.op = op;
  c.inputs = {&x, &y};
  std::string why;
  expect(ctref::run(c, {&out}, &why), std::string("run ") + ctref::op_name(op) + ": " + why);
  return out;
}

bool same(double a, double b) { return std::isnan(a) ? std::isnan(b) : a == b && std::signbit(a) == std::signbit(b); }

}  // namespace

int main() {
  int n = 0;
#define CTREF_EVERY_(ID, id, name, kind, np, pn, tn, dts, out, inpl, shp, dsc, summary) \
  expect(ctref::find(CT_OP_##ID) != nullptr, "no reference for op " #name);           \
  expect(ctref::op_id(#name) == id && std::string(ctref::op_name(id)) == #name, "op facts of " #name);  \
  ++n;
  CT_OP_TABLE(CTREF_EVERY_)
#undef CTREF_EVERY_

  // an unknown op id: a clear failure
  {
    ctref::Call c;
    c.op = CT_OP_END_ + 7;
    ctref::Array out(kF64, {});
    std::string why;
    expect(!ctref::run(c, {&out}, &why) && why.find("no reference") != std::string::npos,
           "an op without a reference must fail, naming it: '" + why + "'");
  }

  // integer floor_div / mod: x // 0 = 0, INT_MIN // -1 wraps, Python signs
  expect(binary(CT_OP_FLOOR_DIV, kI8, 7, 0, kI8).i[0] == 0, "int 7 // 0 = 0");
  expect(binary(CT_OP_MOD, kI8, 7, 0, kI8).i[0] == 0, "int 7 % 0 = 0");
  expect(binary(CT_OP_FLOOR_DIV, kI8, -128, -1, kI8).i[0] == -128, "int8 -128 // -1 = -128");
  expect(binary(CT_OP_FLOOR_DIV, kI64, (double)INT64_MIN, -1, kI64).i[0] == INT64_MIN, "INT64_MIN // -1");
  expect(binary(CT_OP_MOD, kI64, (double)INT64_MIN, -1, kI64).i[0] == 0, "INT64_MIN % -1 = 0");
  expect(binary(CT_OP_FLOOR_DIV, kI8, -7, 2, kI8).i[0] == -4, "-7 // 2 = -4");
  expect(binary(CT_OP_MOD, kI8, -7, 2, kI8).i[0] == 1, "-7 % 2 = 1");
  expect(binary(CT_OP_MOD, kI8, 7, -2, kI8).i[0] == -1, "7 % -2 = -1");
  expect(binary(CT_OP_RIGHT_SHIFT, kI8, -7, 1, kI8).i[0] == -4, "-7 >> 1 = -4");
  expect(binary(CT_OP_RIGHT_SHIFT, kI8, -7, 9, kI8).i[0] == -1, "-7 >> 9 = -1");
  expect(binary(CT_OP_LEFT_SHIFT, kI8, 100, 1, kI8).i[0] == -56, "int8 100 << 1 wraps");
  expect(binary(CT_OP_POW, kI8, -1, -3, kI8).i[0] == -1 && binary(CT_OP_POW, kI8, 2, -1, kI8).i[0] == 0,
         "int pow with a negative exponent");
  // float floor_div / mod (NumPy / Python)
  const double inf = INFINITY;
  expect(same(binary(CT_OP_FLOOR_DIV, kF64, -3, inf, kF64).f[0], -1.0), "-3.0 // inf = -1");
  expect(same(binary(CT_OP_FLOOR_DIV, kF64, 3, inf, kF64).f[0], 0.0), "3.0 // inf = 0");
  expect(same(binary(CT_OP_FLOOR_DIV, kF64, -0.0, 5, kF64).f[0], -0.0), "-0.0 // 5 = -0");
  expect(same(binary(CT_OP_FLOOR_DIV, kF64, 1, 0.1, kF64).f[0], 9.0), "1 // 0.1 = 9");
  expect(same(binary(CT_OP_FLOOR_DIV, kF64, 7, 0, kF64).f[0], inf), "7.0 // 0 = inf");
  expect(std::isnan(binary(CT_OP_FLOOR_DIV, kF64, inf, 3, kF64).f[0]), "inf // 3 = nan");
  expect(same(binary(CT_OP_MOD, kF64, -3, inf, kF64).f[0], inf), "-3.0 % inf = inf");
  expect(same(binary(CT_OP_MOD, kF64, 3, -2, kF64).f[0], -1.0), "3.0 % -2 = -1");
  expect(same(binary(CT_OP_MOD, kF64, -4, 2, kF64).f[0], 0.0), "-4.0 % 2 = +0");
  expect(same(binary(CT_OP_MOD, kF64, 4, -2, kF64).f[0], -0.0), "4.0 % -2 = -0");
  expect(same(binary(CT_OP_MOD, kF64, 1, 0.1, kF64).f[0], std::fmod(1, 0.1)), "1 % 0.1");
  expect(std::isnan(binary(CT_OP_MOD, kF64, 1, 0, kF64).f[0]), "1.0 % 0 = nan");
  expect(same(binary(CT_OP_DIV, kI8, 1, 0, kF64).f[0], inf), "int 1 / 0 = inf (float64)");
  // unsigned values as ctref::Array holds them (uint64 max is -1): no sign anywhere
  expect(binary(CT_OP_FLOOR_DIV, kU64, -1, 2, kU64).i[0] == INT64_MAX, "uint64 max // 2");
  expect(binary(CT_OP_MOD, kU64, -1, 10, kU64).i[0] == 5, "uint64 max % 10 = 5");
  expect(binary(CT_OP_LESS, kU64, 1, -1, kBool).i[0] == 1, "uint64 1 < max");
  expect(binary(CT_OP_MAXIMUM, kU64, 1, -1, kU64).i[0] == -1, "uint64 maximum(1, max) = max");
  expect(binary(CT_OP_RIGHT_SHIFT, kU64, -1, 63, kU64).i[0] == 1, "uint64 max >> 63 = 1 (logical)");
  expect(binary(CT_OP_RIGHT_SHIFT, kU16, 65535, 20, kU16).i[0] == 0, "uint16 >> 20 = 0");
  expect(binary(CT_OP_SUB, kU16, 0, 1, kU16).i[0] == 65535, "uint16 0 - 1 wraps");
  expect(same(binary(CT_OP_DIV, kU64, -1, 1, kF64).f[0], 18446744073709551615.0), "uint64 max / 1 in float64");
  {
    ctref::Array x(kU64, {1}), f(kF64, {3}), o32(kF32, {1}), o64(kU64, {3});
    x.i = {-1};
    f.f = {1e20, -5.0, 9223372036854775808.0};
    ctref::Call c;
    c.op = CT_OP_CAST;
    c.inputs = {&x};
    std::string why;
    expect(ctref::run(c, {&o32}, &why) && o32.f[0] == 18446744073709551616.0, "uint64 max -> float32 = 2^64");
    c.inputs = {&f};
    expect(ctref::run(c, {&o64}, &why) && o64.i[0] == -1 && o64.i[1] == 0 && o64.i[2] == INT64_MIN,
           "float64 -> uint64 saturates at both ends");
  }
  // cast rounds once to the target
  {
    ctref::Array x(kI64, {2}), out(kF16, {2});
    x.i = {65519, 65520};
    ctref::Call c;
    c.op = CT_OP_CAST;
    c.inputs = {&x};
    std::string why;
    expect(ctref::run(c, {&out}, &why) && out.f[0] == 65504.0 && out.f[1] == inf, "int64 -> float16 rounding");
  }
  expect(ctref::f16_from_double(65520.0) == 0x7C00 && ctref::bf16_from_double(1.0) == 0x3F80, "codec");

  std::printf("%d ops, %d failures\n", n, failures);
  return failures ? 1 : 0;
}
