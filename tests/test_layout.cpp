// test_layout.cpp — layouts at the edges of what validation accepts: empty
// tensors with extents and strides whose products overflow and NULL data,
// exact overlap tests (interleaved, transposed, reversed, partial, in place),
// and element data at addresses not aligned to the element size. Run these
// under the address,undefined build too: most of the bugs they pin down
// were undefined behaviour that gave the right answer by luck.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "test_util.h"

using namespace ctt;

namespace {

constexpr int64_t k62 = int64_t(1) << 62;

CTensor raw(void* data, int nd, CTDataType dt, int64_t* shape, int64_t* strides, uint64_t off = 0) {
  CTensor t;
  std::memset(&t, 0, sizeof t);
  t.data = data;
  t.device = {CT_CPU, 0};
  t.ndim = nd;
  t.dtype = dt;
  t.shape = shape;
  t.strides = strides;
  t.byte_offset = off;
  return t;
}

const CTDataType kF32 = {CT_FLOAT, 32, 1};
const CTDataType kF64 = {CT_FLOAT, 64, 1};
const CTDataType kI32 = {CT_INT, 32, 1};
const CTDataType kI64 = {CT_INT, 64, 1};
const CTDataType kBool = {CT_BOOL, 8, 1};

// What a reduction of nothing gives, per op (NumPy's values).
double empty_value(int32_t op) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  switch (op) {
    case CT_OP_SUM: case CT_OP_NORM2: case CT_OP_ANY: return 0.0;
    case CT_OP_PROD: case CT_OP_ALL: return 1.0;
    case CT_OP_LOGSUMEXP: return -std::numeric_limits<double>::infinity();
    default: return nan;  // mean, var, std
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// Empty tensors: no arithmetic on their extents, strides or data pointer
// ---------------------------------------------------------------------------

// Regression: an empty x with huge strides or extents made the CPU reduce
// driver form pointers i * 2^62 elements away from NULL (and core multiply
// extents whose product overflows): undefined behaviour that UBSan reports.
TEST_CASE("layout: reductions of empty x with huge extents, huge strides and NULL data", "[errors]") {
  const int32_t ops[] = {CT_OP_SUM, CT_OP_MEAN, CT_OP_PROD, CT_OP_ANY, CT_OP_ALL,
                         CT_OP_NORM2, CT_OP_LOGSUMEXP, CT_OP_VAR, CT_OP_STD};
  int64_t xs[3] = {3, 0, 5};
  const int64_t stride_sets[][3] = {{k62, k62, k62}, {-k62, k62 + 1, -k62}, {7, -k62, 1}, {0, 0, 0}};
  for (const auto& st : stride_sets) {
    int64_t strides[3] = {st[0], st[1], st[2]};
    for (int32_t op : ops) {
      CTOpInfo info;
      std::memset(&info, 0, sizeof info);
      info.struct_size = sizeof info;
      REQUIRE(ct_op_info(op, &info) == CT_OK);
      for (int keep = 0; keep < 2; ++keep) {
        CTensor x = raw(nullptr, 3, kF32, xs, strides);
        const int od = info.output_dtype == CT_OUTPUT_BOOL ? DT_BOOL : DT_F32;
        HostTensor o = keep ? HostTensor::compact(od, {3, 1, 5}) : HostTensor::compact(od, {3, 5});
        o.fill_bytes(0xA5);
        CTensor ov = o.view();
        int32_t ax = 1;
        double corr = 0.0;
        const int np = info.num_params;
        INFO(info.name << " keepdims " << keep << " strides " << st[0] << "," << st[1] << "," << st[2]);
        REQUIRE(ct_reduce(op, &x, &ax, 1, keep, np ? &corr : nullptr, np, &ov, nullptr) == CT_OK);
        for (int64_t i = 0; i < 15; ++i) CHECK(same_double(o.get(i), empty_value(op)));
        // every axis: a 0-d out
        HostTensor o0 = HostTensor::compact(od, {});
        o0.fill_bytes(0xA5);
        CTensor o0v = o0.view();
        REQUIRE(ct_reduce(op, &x, nullptr, 0, 0, np ? &corr : nullptr, np, &o0v, nullptr) == CT_OK);
        CHECK(same_double(o0.get(0), empty_value(op)));
      }
    }
    // integer x: sum and prod accumulate in int64
    CTensor xi = raw(nullptr, 3, kI32, xs, strides);
    HostTensor oi = HostTensor::compact(DT_I64, {3, 5});
    CTensor oiv = oi.view();
    int32_t ax = 1;
    REQUIRE(ct_reduce(CT_OP_PROD, &xi, &ax, 1, 0, nullptr, 0, &oiv, nullptr) == CT_OK);
    for (int64_t i = 0; i < 15; ++i) CHECK(oi.get_i(i) == 1);
    // max/argmax of nothing with outputs: still an error, out untouched
    HostTensor om = HostTensor::compact(DT_F32, {3, 5});
    om.fill_bytes(0x5A);
    const std::vector<unsigned char> before = om.bytes();
    CTensor omv = om.view();
    CTensor x = raw(nullptr, 3, kF32, xs, strides);
    CHECK(ct_reduce(CT_OP_MAX, &x, &ax, 1, 0, nullptr, 0, &omv, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "empty"));
    CHECK(om.bytes() == before);
  }
}

TEST_CASE("layout: empty x whose other extents overflow when multiplied", "[errors]") {
  // x (0, 2^62) strides (2^62, 7), NULL data: every axis, axis 1, axis 0 with keepdims
  {
    int64_t sh[2] = {0, k62}, st[2] = {k62, 7};
    CTensor x = raw(nullptr, 2, kF32, sh, st);
    float r = -1.0f;
    CTensor o0 = raw(&r, 0, kF32, nullptr, nullptr);
    REQUIRE(ct_reduce(CT_OP_SUM, &x, nullptr, 0, 0, nullptr, 0, &o0, nullptr) == CT_OK);
    CHECK(r == 0.0f);
    int64_t z[1] = {0};
    CTensor oe = raw(nullptr, 1, kF32, z, nullptr);
    int32_t ax1 = 1;
    CHECK(ct_reduce(CT_OP_SUM, &x, &ax1, 1, 0, nullptr, 0, &oe, nullptr) == CT_OK);
    CHECK(ct_reduce(CT_OP_MAX, &x, &ax1, 1, 0, nullptr, 0, &oe, nullptr) == CT_OK);  // no output: nothing to refuse
    int32_t axm1 = -1;
    CTensor oei = raw(nullptr, 1, kI64, z, nullptr);
    CHECK(ct_reduce(CT_OP_ARGMIN, &x, &axm1, 1, 0, nullptr, 0, &oei, nullptr) == CT_OK);
  }
  // x (0, 2^62, 4) over axes (1, 2): the count 2^64 overflows, the output is empty
  {
    int64_t sh[3] = {0, k62, 4}, st[3] = {1, 1, k62};
    CTensor x = raw(nullptr, 3, kF32, sh, st);
    int64_t z[1] = {0};
    CTensor oe = raw(nullptr, 1, kF32, z, nullptr);
    int32_t axes[2] = {1, 2};
    CHECK(ct_reduce(CT_OP_SUM, &x, axes, 2, 0, nullptr, 0, &oe, nullptr) == CT_OK);
    int64_t z3[3] = {0, 1, 1};
    CTensor ok = raw(nullptr, 3, kF32, z3, nullptr);
    CHECK(ct_reduce(CT_OP_MEAN, &x, axes, 2, 1, nullptr, 0, &ok, nullptr) == CT_OK);
    double corr = 1.0;
    CHECK(ct_reduce(CT_OP_VAR, &x, axes, 2, 1, &corr, 1, &ok, nullptr) == CT_OK);
  }
  // x (2^62, 4, 0) over axes (0, 1): the count overflows, the outputs (0,) are empty
  {
    int64_t sh[3] = {k62, 4, 0};
    CTensor x = raw(nullptr, 3, kF32, sh, nullptr);
    int64_t z[1] = {0};
    CTensor oe = raw(nullptr, 1, kF32, z, nullptr);
    int32_t axes[2] = {0, 1};
    CHECK(ct_reduce(CT_OP_SUM, &x, axes, 2, 0, nullptr, 0, &oe, nullptr) == CT_OK);
  }
  // an out that is empty may have a zero stride before its zero extent
  {
    int64_t sh[2] = {4, 0}, st[2] = {0, 1};
    CTensor x = raw(nullptr, 2, kF32, sh, nullptr);
    CTensor o = raw(nullptr, 2, kF32, sh, st);
    CHECK(ct_unary(CT_OP_EXP, &x, &o, nullptr) == CT_OK);
    CHECK(ct_along_axis(CT_OP_CUMSUM, &x, 1, &o, nullptr) == CT_OK);
  }
}

TEST_CASE("layout: empty operands with huge extents and strides through every entry point", "[errors]") {
  int64_t sh[2] = {0, k62}, st[2] = {k62, 7}, stn[2] = {-k62, -7};
  CTensor x = raw(nullptr, 2, kF32, sh, st);
  CTensor o = raw(nullptr, 2, kF32, sh, stn);
  CHECK(ct_unary(CT_OP_EXP, &x, &o, nullptr) == CT_OK);
  double p[2] = {0.0, 1.0};
  CHECK(ct_unary_param(CT_OP_CLAMP, &x, p, 2, &o, nullptr) == CT_OK);
  CHECK(ct_ternary(CT_OP_FMA, &x, &x, &x, &o, nullptr) == CT_OK);
  CTensor c = raw(nullptr, 2, kBool, sh, st);
  CHECK(ct_ternary(CT_OP_WHERE, &c, &x, &x, &o, nullptr) == CT_OK);
  CTensor oi = raw(nullptr, 2, kI64, sh, st);
  CHECK(ct_cast(&x, &oi, nullptr) == CT_OK);
  CHECK(ct_copy(&x, &o, nullptr) == CT_OK);
  // binary: an empty a broadcast against a one-element b
  float one = 1.0f;
  int64_t sh1[1] = {1}, st1[1] = {k62};
  CTensor b = raw(&one, 1, kF32, sh1, st1);
  CHECK(ct_binary(CT_OP_ADD, &x, &b, &o, nullptr) == CT_OK);
  CHECK(ct_binary(CT_OP_SUB, &b, &x, &o, nullptr) == CT_OK);
  CTensor ob = raw(nullptr, 2, kBool, sh, st);
  CHECK(ct_binary(CT_OP_LESS, &x, &x, &ob, nullptr) == CT_OK);
  // along-axis: each axis, and a middle zero extent with huge strides
  CHECK(ct_along_axis(CT_OP_SOFTMAX, &x, 0, &o, nullptr) == CT_OK);
  CHECK(ct_along_axis(CT_OP_CUMSUM, &x, -1, &o, nullptr) == CT_OK);
  int64_t sh3[3] = {3, 0, 5}, st3[3] = {k62, -k62, k62};
  CTensor x3 = raw(nullptr, 3, kF32, sh3, st3);
  CTensor o3 = raw(nullptr, 3, kF32, sh3, st3);
  for (int ax = -3; ax < 3; ++ax) {
    INFO("axis " << ax);
    CHECK(ct_along_axis(CT_OP_LOG_SOFTMAX, &x3, ax, &o3, nullptr) == CT_OK);
    CHECK(ct_along_axis(CT_OP_CUMPROD, &x3, ax, &o3, nullptr) == CT_OK);
  }
  CHECK(ct_unary(CT_OP_NEG, &x3, &o3, nullptr) == CT_OK);
  CHECK(ct_binary(CT_OP_MUL, &x3, &x3, &o3, nullptr) == CT_OK);
}
