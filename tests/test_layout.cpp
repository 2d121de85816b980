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

// ---------------------------------------------------------------------------
// Overlap: exact, as NumPy's solve_may_share_memory, within a bound
// ---------------------------------------------------------------------------

namespace {

// Element offsets (elements) of every index of a layout, row-major order.
std::vector<int64_t> offsets_of(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<int64_t> r((size_t)n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t off = 0, rest = i;
    for (size_t d = shape.size(); d-- > 0;) {
      off += (rest % shape[d]) * strides[d];
      rest /= shape[d];
    }
    r[(size_t)i] = off;
  }
  return r;
}

bool has_duplicates(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return std::adjacent_find(v.begin(), v.end()) != v.end();
}

// Whether any byte of layout A (base byte ba, item size sa) is one of layout B's.
bool bytes_meet(const std::vector<int64_t>& offa, int64_t ba, int sa, const std::vector<int64_t>& offb, int64_t bb,
                int sb) {
  std::vector<char> seen(4096, 0);
  for (int64_t o : offa)
    for (int k = 0; k < sa; ++k) seen[(size_t)(ba + o * sa + k)] = 1;
  for (int64_t o : offb)
    for (int k = 0; k < sb; ++k)
      if (seen[(size_t)(bb + o * sb + k)]) return true;
  return false;
}

// A random layout: ndim 1..3, extents 1..4, strides in [-6, 6].
void random_layout(Rng& r, std::vector<int64_t>& shape, std::vector<int64_t>& strides) {
  const int nd = (int)r.int_in(1, 3);
  shape.assign((size_t)nd, 1);
  strides.assign((size_t)nd, 0);
  for (int d = 0; d < nd; ++d) {
    shape[(size_t)d] = r.int_in(1, 4);
    strides[(size_t)d] = r.int_in(-6, 6);
  }
}

// The lowest element offset of a layout (<= 0).
int64_t lowest(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t lo = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    if (strides[d] < 0) lo += strides[d] * (shape[d] - 1);
  return lo;
}

}  // namespace

TEST_CASE("layout: an output's self-overlap test is exact (random layouts vs brute force)", "[errors]") {
  Rng rng(20260611);
  int accepted = 0, refused = 0, quick_failed_but_disjoint = 0;
  for (int it = 0; it < 3000; ++it) {
    std::vector<int64_t> shape, st;
    random_layout(rng, shape, st);
    const std::vector<int64_t> off = offsets_of(shape, st);
    const bool overlap = has_duplicates(off);
    HostTensor x = HostTensor::compact(DT_F32, shape);
    for (int64_t i = 0; i < x.numel(); ++i) x.set(i, (double)(i + 1));
    HostTensor buf = HostTensor::compact(DT_F32, {256});
    buf.fill_bytes(0x7F);
    const std::vector<unsigned char> before = buf.bytes();
    const int64_t base = 100;  // element [0,...] at 100: every offset stays inside the buffer
    CTensor xv = x.view();
    CTensor ov = raw(buf.buf(), (int)shape.size(), kF32, shape.data(), st.data(), (uint64_t)base * 4);
    const CTStatus s = ct_unary(CT_OP_NEG, &xv, &ov, nullptr);
    INFO("shape " << shape_str(shape) << " strides " << shape_str(st) << ": " << last_error());
    if (overlap) {
      ++refused;
      CHECK(s == CT_ERR_INVALID_ARGUMENT);
      CHECK((contains(last_error(), "overlap each other") || contains(last_error(), "cannot broadcast")));
      CHECK(buf.bytes() == before);
    } else {
      ++accepted;
      REQUIRE(s == CT_OK);
      for (size_t i = 0; i < off.size(); ++i) CHECK(load_f(buf.buf() + (base + off[i]) * 4, DT_F32) == -(double)(i + 1));
      // the old sufficient test (each |stride| beyond the span of the smaller ones) refused some of these
      std::vector<std::pair<int64_t, int64_t>> ds;
      for (size_t d = 0; d < shape.size(); ++d)
        if (shape[d] > 1) ds.push_back({std::llabs(st[d]), shape[d]});
      std::sort(ds.begin(), ds.end());
      int64_t span = 0;
      bool quick = true;
      for (auto& p : ds) {
        quick = quick && p.first > span;
        span += p.first * (p.second - 1);
      }
      if (!quick) ++quick_failed_but_disjoint;
    }
  }
  INFO(accepted << " accepted, " << refused << " refused, " << quick_failed_but_disjoint
                << " accepted that only the exact test accepts");
  CHECK(accepted > 300);
  CHECK(refused > 300);
  CHECK(quick_failed_but_disjoint > 50);
}

TEST_CASE("layout: out vs input overlap is exact (random layouts and dtypes vs brute force)", "[errors]") {
  Rng rng(7031);
  const int dts[] = {DT_U8, DT_I16, DT_F32, DT_F64};
  int ok_shared_buffer = 0, refused = 0, in_place = 0;
  for (int it = 0; it < 4000; ++it) {
    std::vector<int64_t> shape, sx, so;
    random_layout(rng, shape, sx);
    so.resize(shape.size());
    for (size_t d = 0; d < shape.size(); ++d) so[d] = rng.int_in(-6, 6);
    const bool same_layout = rng.int_in(0, 4) == 0;
    if (same_layout) so = sx;
    const std::vector<int64_t> ox = offsets_of(shape, sx), oo = offsets_of(shape, so);
    if (has_duplicates(oo)) continue;  // the output's own overlap is the test above
    const int dx = dts[rng.int_in(0, 3)];
    const int dout = rng.int_in(0, 2) == 0 ? dx : dts[rng.int_in(0, 3)];
    const int szx = dtype(dx).size, szo = dtype(dout).size;
    // element [0,...] of each at a byte that keeps the lowest element >= 0
    const int64_t bx = (-lowest(shape, sx) + rng.int_in(0, 8)) * szx;
    const int64_t bo = same_layout && dx == dout && rng.int_in(0, 1) ? bx : (-lowest(shape, so) + rng.int_in(0, 8)) * szo;
    HostTensor buf = HostTensor::compact(DT_U8, {2048});
    for (int i = 0; i < 2048; ++i) buf.buf()[i] = (unsigned char)(i * 7 + 3);
    CTensor xv = raw(buf.buf(), (int)shape.size(), dtype(dx).dt, shape.data(), sx.data(), (uint64_t)bx);
    CTensor ov = raw(buf.buf(), (int)shape.size(), dtype(dout).dt, shape.data(), so.data(), (uint64_t)bo);
    bool exact = bx == bo && szx == szo;  // in place: strides of extents 1 do not matter
    for (size_t d = 0; d < shape.size(); ++d) exact = exact && (shape[d] == 1 || sx[d] == so[d]);
    const bool meet = bytes_meet(ox, bx, szx, oo, bo, szo);
    const std::vector<unsigned char> before = buf.bytes();
    CTStatus s;
    const char* fn;
    if (dx == dout) {
      s = ct_copy(&xv, &ov, nullptr);
      fn = "ct_copy";
    } else {
      s = ct_cast(&xv, &ov, nullptr);
      fn = "ct_cast";
    }
    INFO(fn << " " << dtype(dx).name << " -> " << dtype(dout).name << " shape " << shape_str(shape) << " x strides "
            << shape_str(sx) << " at byte " << bx << ", out strides " << shape_str(so) << " at byte " << bo << ": "
            << last_error());
    if (meet && !exact) {
      ++refused;
      CHECK(s == CT_ERR_INVALID_ARGUMENT);
      CHECK(contains(last_error(), "overlaps"));
      CHECK(buf.bytes() == before);
      continue;
    }
    REQUIRE(s == CT_OK);
    if (exact) ++in_place;
    else if (ox.size() > 1 && std::abs(bx - bo) < 64) ++ok_shared_buffer;
    // What x held before the call, converted: copies keep the bytes; casts
    // from uint8/int16 and float32 -> float64 are exact (the other casts of
    // arbitrary bytes are the cast tests' business).
    for (size_t i = 0; i < oo.size(); ++i) {
      const unsigned char* src = before.data() + bx + ox[i] * szx;
      const unsigned char* dst = buf.buf() + bo + oo[i] * szo;
      if (dx == dout) {
        CHECK(std::memcmp(src, dst, (size_t)szx) == 0);
      } else if (dtype(dx).is_int()) {
        const int64_t v = load_i(src, dx);
        if (dtype(dout).is_int()) CHECK(load_i(dst, dout) == wrap_int((uint64_t)v, dout));
        else CHECK(load_f(dst, dout) == (double)v);
      } else if (dx == DT_F32 && dout == DT_F64) {
        CHECK(same_double(load_f(dst, dout), load_f(src, dx)));
      }
    }
  }
  INFO(refused << " refused, " << in_place << " in place, " << ok_shared_buffer << " disjoint views near each other");
  CHECK(refused > 300);
  CHECK(in_place > 50);
  CHECK(ok_shared_buffer > 300);
}

TEST_CASE("layout: interleaved, transposed, reversed, partial and in-place views of one buffer", "[errors]") {
  HostTensor buf = HostTensor::compact(DT_F32, {64});
  auto reset = [&] {
    for (int i = 0; i < 64; ++i) buf.set(i, (double)i);
  };
  reset();
  SECTION("x = even elements, out = odd elements: disjoint") {
    int64_t sh[1] = {32}, st[1] = {2};
    CTensor x = raw(buf.buf(), 1, kF32, sh, st, 0), o = raw(buf.buf(), 1, kF32, sh, st, 4);
    REQUIRE(ct_unary(CT_OP_NEG, &x, &o, nullptr) == CT_OK);
    for (int i = 0; i < 32; ++i) {
      CHECK(buf.get(2 * i) == 2.0 * i);
      CHECK(buf.get(2 * i + 1) == -2.0 * i);
    }
    // binary and along-axis too; a reduction of the even elements into an odd one
    reset();
    REQUIRE(ct_binary(CT_OP_ADD, &x, &x, &o, nullptr) == CT_OK);
    CHECK(buf.get(7) == 12.0);
    REQUIRE(ct_along_axis(CT_OP_CUMSUM, &x, 0, &o, nullptr) == CT_OK);
    CHECK(buf.get(5) == 6.0);  // 0 + 2 + 4
    CTensor o1 = raw(buf.buf(), 0, kF32, nullptr, nullptr, 4 * 63);
    int32_t ax = 0;
    REQUIRE(ct_reduce(CT_OP_SUM, &x, &ax, 1, 0, nullptr, 0, &o1, nullptr) == CT_OK);
    CHECK(buf.get(63) == 992.0);  // 2 * (0 + ... + 31)
    // the same even elements as out: overlap
    CTensor o2 = raw(buf.buf(), 0, kF32, nullptr, nullptr, 4 * 62);
    CHECK(ct_reduce(CT_OP_SUM, &x, &ax, 1, 0, nullptr, 0, &o2, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "overlaps x"));
  }
  SECTION("2-d interleaving: columns 0,2,4 vs columns 1,3,5 of a (4,6) matrix") {
    int64_t sh[2] = {4, 3}, st[2] = {6, 2};
    CTensor x = raw(buf.buf(), 2, kF32, sh, st, 0), o = raw(buf.buf(), 2, kF32, sh, st, 4);
    REQUIRE(ct_unary(CT_OP_SQUARE, &x, &o, nullptr) == CT_OK);
    CHECK(buf.get(6 * 2 + 5) == 16.0 * 16.0);
    // rows 0,2 vs rows 1,3 (byte ranges interleave at row granularity)
    reset();
    int64_t shr[2] = {2, 6}, str[2] = {12, 1};
    CTensor xr = raw(buf.buf(), 2, kF32, shr, str, 0), orr = raw(buf.buf(), 2, kF32, shr, str, 24);
    REQUIRE(ct_unary(CT_OP_NEG, &xr, &orr, nullptr) == CT_OK);
    CHECK(buf.get(18 + 5) == -17.0);
    CHECK(buf.get(12 + 5) == 17.0);
  }
  SECTION("an out (2,3) with strides (4,3) does not overlap itself") {
    int64_t sh[2] = {2, 3}, st[2] = {4, 3};
    HostTensor x = HostTensor::compact(DT_F32, {2, 3});
    for (int i = 0; i < 6; ++i) x.set(i, i + 1);
    CTensor xv = x.view(), o = raw(buf.buf(), 2, kF32, sh, st, 0);
    REQUIRE(ct_unary(CT_OP_NEG, &xv, &o, nullptr) == CT_OK);
    const int at[6] = {0, 3, 6, 4, 7, 10};
    for (int i = 0; i < 6; ++i) CHECK(buf.get(at[i]) == -(i + 1.0));
    // (2,3) with strides (4,2) does: [0,2] and [1,0] are both at 4; the message names them
    int64_t st2[2] = {4, 2};
    CTensor o2 = raw(buf.buf(), 2, kF32, sh, st2, 0);
    CHECK(ct_unary(CT_OP_NEG, &xv, &o2, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK((contains(last_error(), "out[0,2] and out[1,0]") || contains(last_error(), "out[1,0] and out[0,2]")));
    int64_t st3[2] = {-4, 2};  // with a negative stride: [0,0] and [1,2] are both at element 10
    CTensor o3 = raw(buf.buf(), 2, kF32, sh, st3, 40);
    CHECK(ct_unary(CT_OP_NEG, &xv, &o3, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK((contains(last_error(), "out[0,0] and out[1,2]") || contains(last_error(), "out[1,2] and out[0,0]")));
    // three dims, no two of which meet alone: (2,2,2) with strides (3,5,8), [1,1,0] and [0,0,1] at 8
    int64_t sh3[3] = {2, 2, 2}, st5[3] = {3, 5, 8};
    HostTensor x3 = HostTensor::compact(DT_F32, {2, 2, 2});
    CTensor x3v = x3.view(), o5 = raw(buf.buf(), 3, kF32, sh3, st5, 0);
    CHECK(ct_unary(CT_OP_NEG, &x3v, &o5, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK((contains(last_error(), "out[1,1,0] and out[0,0,1]") || contains(last_error(), "out[0,0,1] and out[1,1,0]")));
    int64_t st6[3] = {3, -5, 8};  // [1,0,0] and [0,1,1]... 3 vs -5+8 = 3
    CTensor o6 = raw(buf.buf(), 3, kF32, sh3, st6, 40);
    CHECK(ct_unary(CT_OP_NEG, &x3v, &o6, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK((contains(last_error(), "out[1,0,0] and out[0,1,1]") || contains(last_error(), "out[0,1,1] and out[1,0,0]")));
    // more elements than addresses: (2,3) with strides (2,1) spans 5 addresses
    int64_t st4[2] = {2, 1};
    CTensor o4 = raw(buf.buf(), 2, kF32, sh, st4, 0);
    CHECK(ct_unary(CT_OP_NEG, &xv, &o4, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "6 elements within a span of 5"));
  }
  SECTION("transposed in place: same bytes, other strides") {
    int64_t sh[2] = {8, 8}, stt[2] = {1, 8};
    CTensor x = raw(buf.buf(), 2, kF32, sh, nullptr, 0), o = raw(buf.buf(), 2, kF32, sh, stt, 0);
    const std::vector<unsigned char> before = buf.bytes();
    CHECK(ct_unary(CT_OP_NEG, &x, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(ct_binary(CT_OP_ADD, &o, &x, &x, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "in-place needs"));
    CHECK(buf.bytes() == before);
    // the transpose of the lower half into the upper half: disjoint
    int64_t sh2[2] = {4, 4};
    int64_t st2[2] = {1, 8};
    CTensor lo = raw(buf.buf(), 2, kF32, sh2, st2, 0);
    int64_t st3[2] = {8, 1};
    CTensor hi = raw(buf.buf(), 2, kF32, sh2, st3, 4 * 4);
    REQUIRE(ct_unary(CT_OP_NEG, &lo, &hi, nullptr) == CT_OK);
    CHECK(buf.get(8 * 1 + 4 + 2) == -(2.0 * 8 + 1));
  }
  SECTION("negative strides: x reversed onto itself overlaps; reversed halves do not") {
    int64_t sh[1] = {32}, sr[1] = {-1};
    CTensor x = raw(buf.buf(), 1, kF32, sh, nullptr, 0), r = raw(buf.buf(), 1, kF32, sh, sr, 4 * 31);
    CHECK(ct_unary(CT_OP_NEG, &x, &r, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CTensor r2 = raw(buf.buf(), 1, kF32, sh, sr, 4 * 63);  // elements 63..32
    REQUIRE(ct_unary(CT_OP_NEG, &x, &r2, nullptr) == CT_OK);
    CHECK(buf.get(63) == 0.0);
    CHECK(buf.get(32) == -31.0);
    // reversed and interleaved: x = even elements forward, out = odd elements backward
    reset();
    int64_t sh16[1] = {16}, s2[1] = {2}, sm2[1] = {-2};
    CTensor xe = raw(buf.buf(), 1, kF32, sh16, s2, 0), oo = raw(buf.buf(), 1, kF32, sh16, sm2, 4 * 31);
    REQUIRE(ct_unary(CT_OP_NEG, &xe, &oo, nullptr) == CT_OK);
    CHECK(buf.get(31) == 0.0);
    CHECK(buf.get(1) == -30.0);
  }
  SECTION("partial overlap: shifted by one element, or by one byte of a wider element") {
    int64_t sh[1] = {16};
    CTensor x = raw(buf.buf(), 1, kF32, sh, nullptr, 0), o = raw(buf.buf(), 1, kF32, sh, nullptr, 4);
    CHECK(ct_unary(CT_OP_NEG, &x, &o, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(last_error(), "overlaps"));
    // float64 out over float32 x: every other 8-byte element falls on x's bytes
    int64_t s2[1] = {2};
    CTensor xs = raw(buf.buf(), 1, kF32, sh, s2, 0);
    CTensor od = raw(buf.buf(), 1, kF64, sh, s2, 8);  // bytes 8..15, 24..31, ...: x's elements at 0, 8, 16 bytes
    CHECK(ct_cast(&xs, &od, nullptr) == CT_ERR_INVALID_ARGUMENT);
    int64_t sh8[1] = {8}, s4[1] = {4};
    CTensor xs4 = raw(buf.buf(), 1, kF32, sh8, s4, 8);  // bytes 8..11, 24..27, 40..43, ...
    CTensor od4 = raw(buf.buf(), 1, kF64, sh8, s2, 0);  // bytes 0..7, 16..23, ...: disjoint, interleaved
    REQUIRE(ct_cast(&xs4, &od4, nullptr) == CT_OK);
  }
  SECTION("exactly the same view: in place is allowed") {
    int64_t sh[2] = {4, 4}, st[2] = {-8, 2};
    CTensor x = raw(buf.buf(), 2, kF32, sh, st, 4 * 24);
    REQUIRE(ct_unary(CT_OP_NEG, &x, &x, nullptr) == CT_OK);
    CHECK(buf.get(24) == -24.0);
    CHECK(buf.get(0 + 6) == -6.0);
    CHECK(buf.get(1) == 1.0);
    REQUIRE(ct_binary(CT_OP_MUL, &x, &x, &x, nullptr) == CT_OK);
    CHECK(buf.get(24) == 576.0);
    REQUIRE(ct_along_axis(CT_OP_CUMSUM, &x, 1, &x, nullptr) == CT_OK);
  }
}

// Past the search's bound the answer is a refusal that says so. Both layouts
// here are in fact free of overlap (checked by brute force below): the
// refusal is the bound's, as ctensor.h documents.
TEST_CASE("layout: overlap that cannot be ruled out within the bound is refused, saying so", "[errors]") {
  SECTION("an output's elements") {
    std::vector<int64_t> shape = {5, 3, 2, 6, 6, 5, 3};
    std::vector<int64_t> st = {18956, 17418, 19966, 586, 19403, 14512, 15088};
    CHECK(!has_duplicates(offsets_of(shape, st)));
    int64_t span = 0;
    for (size_t d = 0; d < shape.size(); ++d) span += st[d] * (shape[d] - 1);
    HostTensor buf = HostTensor::compact(DT_F32, {span + 1});
    buf.fill_bytes(0x11);
    const std::vector<unsigned char> before = buf.bytes();
    HostTensor x = HostTensor::compact(DT_F32, shape);
    CTensor xv = x.view(), ov = raw(buf.buf(), (int)shape.size(), kF32, shape.data(), st.data());
    CHECK(ct_unary(CT_OP_EXP, &xv, &ov, nullptr) == CT_ERR_INVALID_ARGUMENT);
    const std::string msg = last_error();
    INFO(msg);
    CHECK(msg.rfind("ct_unary: could not rule out that elements of out", 0) == 0);
    CHECK(contains(msg, "within the exact overlap test's bound of 20000 steps"));
    CHECK(buf.bytes() == before);
  }
  SECTION("an output and an input") {
    std::vector<int64_t> shape = {7, 21, 29}, sx = {1056, 119, 255}, so = {576, 697, 204};
    const std::vector<int64_t> ox = offsets_of(shape, sx), oo = offsets_of(shape, so);
    const int64_t out_byte = 1760;
    HostTensor buf = HostTensor::compact(DT_F32, {(out_byte / 4) + 576 * 6 + 697 * 20 + 204 * 28 + 1});
    std::vector<char> mark(buf.buffer_bytes, 0);
    for (int64_t o : ox)
      for (int k = 0; k < 4; ++k) mark[(size_t)(o * 4 + k)] = 1;
    bool meet = false;
    for (int64_t o : oo)
      for (int k = 0; k < 4; ++k) meet = meet || mark[(size_t)(out_byte + o * 4 + k)];
    CHECK(!meet);
    buf.fill_bytes(0x22);
    const std::vector<unsigned char> before = buf.bytes();
    CTensor xv = raw(buf.buf(), 3, kF32, shape.data(), sx.data()),
            ov = raw(buf.buf(), 3, kF32, shape.data(), so.data(), (uint64_t)out_byte);
    CHECK(ct_unary(CT_OP_NEG, &xv, &ov, nullptr) == CT_ERR_INVALID_ARGUMENT);
    const std::string msg = last_error();
    INFO(msg);
    CHECK(msg.rfind("ct_unary: could not rule out that out (bytes [", 0) == 0);
    CHECK(contains(msg, "overlaps x (bytes ["));
    CHECK(contains(msg, "within the exact overlap test's bound of 20000 steps"));
    // a reduction says the same about its x
    CTensor o0 = raw(buf.buf(), 0, kF32, nullptr, nullptr, (uint64_t)out_byte);
    CHECK(ct_reduce(CT_OP_SUM, &ov, nullptr, 0, 0, nullptr, 0, &o0, nullptr) == CT_ERR_INVALID_ARGUMENT);
    CHECK(buf.bytes() == before);
  }
}

// The exact self-overlap test accepts outputs that oneDNN's strided memory
// descriptors refuse (it wants each sorted stride to cover the smaller
// ones): such NN operands go through a dense copy instead of failing with
// CT_ERR_BACKEND.
TEST_CASE("layout: NN operands whose strides interleave without overlapping", "[nn]") {
  float a[6] = {1, 2, 3, 4, 5, 6}, b[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  float o[16], a2[16];
  for (float& v : o) v = -7.0f;
  int64_t sa[2] = {2, 3}, sb[2] = {3, 3}, sto[2] = {4, 3};
  CTensor A = raw(a, 2, kF32, sa, nullptr), B = raw(b, 2, kF32, sb, nullptr);
  CTensor O = raw(o, 2, kF32, sa, sto);
  CTMatmulDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  size_t ws = 0;
  REQUIRE(ct_matmul_workspace_size(&d, &A, &B, nullptr, &O, &ws) == CT_OK);
  std::vector<unsigned char> w(ws + 64);
  REQUIRE(ct_matmul(&d, &A, &B, nullptr, &O, w.data(), w.size(), nullptr) == CT_OK);
  const int at[6] = {0, 3, 6, 4, 7, 10};
  for (int i = 0; i < 6; ++i) CHECK(o[at[i]] == a[i]);
  CHECK(o[1] == -7.0f);
  CHECK(o[5] == -7.0f);
  // the same layout as an input
  for (int i = 0; i < 6; ++i) a2[at[i]] = a[i];
  CTensor A2 = raw(a2, 2, kF32, sa, sto);
  float o2[6] = {0};
  CTensor O2 = raw(o2, 2, kF32, sa, nullptr);
  REQUIRE(ct_matmul_workspace_size(&d, &A2, &B, nullptr, &O2, &ws) == CT_OK);
  w.assign(ws + 64, 0);
  REQUIRE(ct_matmul(&d, &A2, &B, nullptr, &O2, w.data(), w.size(), nullptr) == CT_OK);
  for (int i = 0; i < 6; ++i) CHECK(o2[i] == a[i]);
}

// ---------------------------------------------------------------------------
// Unaligned element data: accepted on the CPU, through every path
// ---------------------------------------------------------------------------

namespace {

// t's bytes moved `mis` bytes up inside its own buffer (HostTensor keeps 64
// spare bytes past its data), and a view of them: every element then sits at
// an address that is not a multiple of its size (for mis < size). Half the
// views carry the shift in data, half in byte_offset.
CTensor shifted(HostTensor& t, int mis) {
  std::memmove(t.buf() + mis, t.buf(), t.buffer_bytes);
  CTensor v = t.view();
  if (mis % 2) v.byte_offset += (uint64_t)mis;
  else v.data = static_cast<char*>(v.data) + mis;
  return v;
}
void unshift(HostTensor& t, int mis) { std::memmove(t.buf(), t.buf() + mis, t.buffer_bytes); }

// Values every op is defined on: positive, exact in every dtype.
void fill_values(HostTensor& t, int salt) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (dtype(t.d).is_bool()) t.set_i(i, (i + salt) % 3 != 0);
    else if (dtype(t.d).is_float()) t.set(i, 0.25 + ((i * 5 + salt) % 11) * 0.125);
    else t.set_i(i, 1 + (i * 3 + salt) % 5);
  }
}

// out (misaligned run) against ref (aligned run), element by element.
void expect_same_values(const HostTensor& ref, const HostTensor& got, const std::string& what) {
  REQUIRE(ref.numel() == got.numel());
  const int d = ref.d;
  const double tol = d == DT_F64 ? 1e-12 : d == DT_F32 ? 2e-6 : 1e-2;
  int bad = 0;
  for (int64_t i = 0; i < ref.numel() && bad < 5; ++i) {
    if (dtype(d).is_float()) {
      const double a = ref.get(i), b = got.get(i);
      const bool ok = same_double(a, b) || (std::isfinite(a) && std::fabs(a - b) <= tol * (1 + std::fabs(a)));
      if (!ok) {
        ++bad;
        FAIL_CHECK(what << ": element " << i << " is " << fmt(b) << ", aligned gives " << fmt(a));
      }
    } else if (ref.get_i(i) != got.get_i(i)) {
      ++bad;
      FAIL_CHECK(what << ": element " << i << " is " << got.get_i(i) << ", aligned gives " << ref.get_i(i));
    }
  }
}

int mis_for(int d, int salt) {  // an offset that misaligns an element of dtype d (1 for bytes)
  const int size = dtype(d).size;
  return size == 1 ? 1 : 1 + salt % (size - 1);
}

}  // namespace

// Regression: data + byte_offset not a multiple of the element size was
// refused ("is not aligned to its 4-byte elements"), though NumPy makes such
// arrays (np.frombuffer(buf, np.float32, offset=1)); now every CPU path packs
// unaligned operands (memcpy) before a kernel reads them. Run under
// -fsanitize=undefined (alignment) to see that no typed access is unaligned.
TEST_CASE("layout: unaligned data through every elementwise, binary, reduce and along-axis op and dtype", "[errors]") {
  const CTDevice cpu = {CT_CPU, 0};
  int runs = 0;
  for (int32_t op = 0; op < ct_op_count(); ++op) {
    if (unloaded_plugin_op(op)) continue;
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(op, &info) == CT_OK);
    if (info.kind == CT_KIND_NN || info.kind == CT_KIND_INDEX) continue;  // index ops: test_index.cpp
    for (int d = 0; d < DT_COUNT; ++d) {
      if (ct_op_supported(op, cpu, dtype(d).dt) != CT_OK) continue;
      // layouts: compact (3,5); (3,5) with a negative outer stride and padding; 1300 contiguous
      // elements (several 512-element packs, pairwise sums); 0-d
      const std::vector<std::vector<int64_t>> shapes = {{3, 5}, {3, 5}, {1300}, {}};
      for (size_t li = 0; li < shapes.size(); ++li) {
        const std::vector<int64_t>& shape = shapes[li];
        const int variant = li == 1 ? 2 : 0;
        const int salt = (int)(op * 7 + d * 3 + li);
        // inputs, aligned and unaligned
        const int nin = info.num_inputs;
        std::vector<HostTensor> in_a, in_m;
        std::vector<CTensor> va, vm;
        for (int k = 0; k < nin; ++k) {
          const int dk = op == CT_OP_WHERE && k == 0 ? DT_BOOL : d;
          // binary: b broadcasts along dim 0 ((5,) against (3,5))
          std::vector<int64_t> sk = info.kind == CT_KIND_BINARY && k == 1 && shape.size() == 2
                                        ? std::vector<int64_t>{shape[1]} : shape;
          in_a.push_back(make_layout(dk, sk, variant));
          fill_values(in_a.back(), salt + k);
        }
        for (int k = 0; k < nin; ++k) {  // fresh tensors (a HostTensor copy's padding is stale), same bytes
          in_m.push_back(make_layout(in_a[(size_t)k].d, in_a[(size_t)k].shape, variant));
          std::memcpy(in_m.back().buf(), in_a[(size_t)k].buf(), in_a[(size_t)k].buffer_bytes);
          va.push_back(in_a[(size_t)k].view());
        }
        for (int k = 0; k < nin; ++k) vm.push_back(shifted(in_m[(size_t)k], mis_for(in_m[(size_t)k].d, salt + k)));
        // the calls: one per axis choice for reductions and along-axis ops, one per target for cast
        std::vector<int> targets = {output_dtype_for(info.output_dtype, d)};
        if (op == CT_OP_CAST) {
          targets.clear();
          for (int t = 0; t < DT_COUNT; ++t) targets.push_back(t);
        }
        std::vector<int> axis_choices = {0};
        if (info.kind == CT_KIND_REDUCE) axis_choices = shape.size() == 2 ? std::vector<int>{-100, 0, 1} : std::vector<int>{-100, 0};
        if (info.kind == CT_KIND_ALONG_AXIS && shape.size() == 2) axis_choices = {0, 1};
        for (int od : targets)
          for (int axis : axis_choices) {
            std::vector<int64_t> oshape = shape;
            if (info.kind == CT_KIND_REDUCE) {
              if (axis == -100) oshape.clear();
              else if (!shape.empty()) oshape.erase(oshape.begin() + axis);
            }
            HostTensor oa = make_layout(od, oshape, variant == 2 ? 3 : 0), om = make_layout(od, oshape, variant == 2 ? 3 : 0);
            const int mo = mis_for(od, salt + 5);
            CTensor ova = oa.view(), ovm = shifted(om, mo);
            const double p2[2] = {1.0, 2.0};
            auto call = [&](const std::vector<CTensor>& v, CTensor* o) -> CTStatus {
              const int32_t ax = axis;
              const double corr = 1.0;
              switch (info.kind) {
                case CT_KIND_UNARY: return ct_unary(op, &v[0], o, nullptr);
                case CT_KIND_UNARY_PARAM: return ct_unary_param(op, &v[0], p2, info.num_params, o, nullptr);
                case CT_KIND_TERNARY: return ct_ternary(op, &v[0], &v[1], &v[2], o, nullptr);
                case CT_KIND_CAST: return ct_cast(&v[0], o, nullptr);
                case CT_KIND_BINARY: return ct_binary(op, &v[0], &v[1], o, nullptr);
                case CT_KIND_REDUCE:
                  return ct_reduce(op, &v[0], axis == -100 ? nullptr : &ax, axis == -100 ? 0 : 1, 0,
                                   info.num_params ? &corr : nullptr, info.num_params, o, nullptr);
                case CT_KIND_ALONG_AXIS: return ct_along_axis(op, &v[0], axis, o, nullptr);
              }
              return CT_ERR_INTERNAL;
            };
            const std::string what = std::string(info.name) + " " + dtype(d).name + " -> " + dtype(od).name +
                                     " shape " + shape_str(shape) + " layout " + std::to_string(variant) +
                                     " axis " + std::to_string(axis);
            INFO(what);
            REQUIRE(call(va, &ova) == CT_OK);
            const CTStatus s = call(vm, &ovm);
            INFO(last_error());
            REQUIRE(s == CT_OK);
            unshift(om, mo);
            expect_same_values(oa, om, what);
            ++runs;
            // in place on the unaligned input (same dtype, same shape): elementwise and along-axis
            const bool same = od == d && oshape == shape && info.inplace && op != CT_OP_CAST &&
                              info.kind != CT_KIND_BINARY && !(op == CT_OP_WHERE);
            if (same) {
              HostTensor xm = make_layout(d, shape, variant);
              std::memcpy(xm.buf(), in_a[0].buf(), in_a[0].buffer_bytes);
              const int mx = mis_for(d, salt + 9);
              std::vector<CTensor> vi = vm;
              vi[0] = shifted(xm, mx);
              REQUIRE(call(vi, &vi[0]) == CT_OK);
              unshift(xm, mx);
              expect_same_values(oa, xm, what + " in place");
            }
          }
      }
    }
  }
  CHECK(runs > 1000);
}

// What a Dask worker hands over: np.frombuffer(bytearray(401), np.float32, offset=1, count=100).
TEST_CASE("layout: a float32 array at an odd address, as NumPy makes one", "[errors]") {
  std::vector<unsigned char> raw_bytes(401 + 64);
  unsigned char* base = raw_bytes.data() + (64 - (uintptr_t)raw_bytes.data() % 64) % 64;
  for (int i = 0; i < 100; ++i) {
    const float v = (float)i - 50.0f;
    std::memcpy(base + 1 + 4 * i, &v, 4);
  }
  int64_t sh[1] = {100};
  CTensor x = raw(base + 1, 1, kF32, sh, nullptr);
  float out[100];
  CTensor o = raw(out, 1, kF32, sh, nullptr);
  REQUIRE(ct_unary(CT_OP_ABS, &x, &o, nullptr) == CT_OK);
  for (int i = 0; i < 100; ++i) CHECK(out[i] == std::fabs((float)i - 50.0f));
  float s = 0;
  CTensor s0 = raw(&s, 0, kF32, nullptr, nullptr);
  REQUIRE(ct_reduce(CT_OP_SUM, &x, nullptr, 0, 0, nullptr, 0, &s0, nullptr) == CT_OK);
  CHECK(s == -50.0f);
  // in place, unaligned: x = x * x
  REQUIRE(ct_binary(CT_OP_MUL, &x, &x, &x, nullptr) == CT_OK);
  float v;
  std::memcpy(&v, base + 1 + 4 * 3, 4);
  CHECK(v == 47.0f * 47.0f);
  // softmax along a long unaligned line (the online two-pass path) and a short one
  std::vector<unsigned char> big(4 * 5000 + 64 + 3);
  unsigned char* bb = big.data() + (64 - (uintptr_t)big.data() % 64) % 64 + 3;
  std::vector<float> ref_in(5000);
  for (int i = 0; i < 5000; ++i) {
    ref_in[(size_t)i] = (float)((i * 37) % 101) / 25.0f;
    std::memcpy(bb + 4 * i, &ref_in[(size_t)i], 4);
  }
  for (int64_t n : {5000, 700}) {
    int64_t shn[1] = {n};
    CTensor xu = raw(bb, 1, kF32, shn, nullptr), xa = raw(ref_in.data(), 1, kF32, shn, nullptr);
    std::vector<float> ya((size_t)n), yu((size_t)n);
    CTensor oa = raw(ya.data(), 1, kF32, shn, nullptr), ou = raw(yu.data(), 1, kF32, shn, nullptr);
    REQUIRE(ct_along_axis(CT_OP_SOFTMAX, &xa, 0, &oa, nullptr) == CT_OK);
    REQUIRE(ct_along_axis(CT_OP_SOFTMAX, &xu, 0, &ou, nullptr) == CT_OK);
    for (int64_t i = 0; i < n; ++i) CHECK(yu[(size_t)i] == Approx(ya[(size_t)i]).epsilon(1e-5));
  }
}

namespace {

// Runs an NN op through a plan (ct_plan_create does not read data), with
// the workspace pointer `ws_shift` bytes past a 64-byte boundary.
CTStatus run_plan(int32_t op, const void* desc, const std::vector<const CTensor*>& t, size_t ws_shift) {
  CTPlan* plan = nullptr;
  if (CTStatus s = ct_plan_create(op, desc, t.data(), (int32_t)t.size(), nullptr, &plan)) return s;
  size_t bytes = 0;
  CTStatus s = ct_plan_workspace_size(plan, &bytes);
  if (s == CT_OK) {
    std::vector<unsigned char> w(bytes + 128);
    unsigned char* p = w.data() + (64 - (uintptr_t)w.data() % 64) % 64 + ws_shift;
    s = ct_plan_execute(plan, t.data(), (int32_t)t.size(), bytes ? p : nullptr, bytes, nullptr);
  }
  ct_plan_destroy(plan);
  return s;
}

}  // namespace

// NN ops hand the caller's pointers to oneDNN (or copy through ct_copy):
// every op with every tensor unaligned (float32 data and statistics at
// odd addresses, int64 indices too) gives the aligned run's results.
TEST_CASE("layout: unaligned data through every NN op", "[nn]") {
  CTMatmulDesc mm;
  std::memset(&mm, 0, sizeof mm);
  mm.struct_size = sizeof mm;
  CTConv2dDesc cv;
  std::memset(&cv, 0, sizeof cv);
  cv.struct_size = sizeof cv;
  CTPool2dDesc pl;
  std::memset(&pl, 0, sizeof pl);
  pl.struct_size = sizeof pl;
  pl.kernel[0] = pl.kernel[1] = 2;
  CTBatchNormDesc bn;
  std::memset(&bn, 0, sizeof bn);
  bn.struct_size = sizeof bn;
  bn.epsilon = 1e-5;
  CTLayerNormDesc ln;
  std::memset(&ln, 0, sizeof ln);
  ln.struct_size = sizeof ln;
  ln.normalized_ndim = 1;
  ln.epsilon = 1e-5;
  using S = std::vector<int64_t>;
  struct Case {
    int32_t op;
    const void* desc;
    std::vector<S> shapes;  // in the order of ct_<op>'s tensor arguments
  };
  const S x4 = {2, 3, 6, 6}, y4 = {2, 4, 4, 4}, w4 = {4, 3, 3, 3}, p4 = {2, 3, 3, 3}, c3 = {3}, b4 = {2, 3, 4, 4};
  const S l3 = {2, 3, 8}, l8 = {8}, l23 = {2, 3};
  const Case cases[] = {
      {CT_OP_MATMUL, &mm, {{4, 6}, {6, 5}, {5}, {4, 5}}},
      {CT_OP_CONV2D, &cv, {x4, w4, {4}, y4}},
      {CT_OP_CONV2D_BACKWARD_DATA, &cv, {y4, w4, x4}},
      {CT_OP_CONV2D_BACKWARD_WEIGHT, &cv, {x4, y4, w4, {4}}},
      {CT_OP_MAX_POOL2D, &pl, {x4, p4, p4}},
      {CT_OP_MAX_POOL2D_BACKWARD, &pl, {p4, p4, x4}},
      {CT_OP_AVG_POOL2D, &pl, {x4, p4}},
      {CT_OP_AVG_POOL2D_BACKWARD, &pl, {p4, x4}},
      {CT_OP_BATCH_NORM, &bn, {b4, c3, c3, c3, c3, b4}},
      {CT_OP_BATCH_NORM_TRAINING, &bn, {b4, c3, c3, b4, c3, c3}},
      {CT_OP_BATCH_NORM_BACKWARD, &bn, {b4, b4, c3, c3, c3, b4, c3, c3}},
      {CT_OP_LAYER_NORM, &ln, {l3, l8, l8, l3, l23, l23}},
      {CT_OP_LAYER_NORM_BACKWARD, &ln, {l3, l3, l23, l23, l8, l3, l8, l8}},
  };
  int seen = 0;
  for (const Case& c : cases) {
    CTOpInfo info;
    std::memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    REQUIRE(ct_op_info(c.op, &info) == CT_OK);
    REQUIRE((size_t)info.num_tensors == c.shapes.size());
    ++seen;
    const int n = info.num_tensors, nin = info.num_inputs;
    // tensors: float32, except max-pool indices (int64); inputs filled, positive where a
    // variance or an inverse standard deviation is expected
    std::vector<HostTensor> ta, tm;
    for (int i = 0; i < n; ++i) {
      const bool idx = (c.op == CT_OP_MAX_POOL2D && i == 2) || (c.op == CT_OP_MAX_POOL2D_BACKWARD && i == 1);
      ta.push_back(HostTensor::compact(idx ? DT_I64 : DT_F32, c.shapes[(size_t)i]));
      HostTensor& t = ta.back();
      for (int64_t e = 0; e < t.numel(); ++e) t.set(e, idx ? 0.0 : 0.5 + 0.25 * (double)((e * 7 + i) % 9));
    }
    if (c.op == CT_OP_MAX_POOL2D_BACKWARD) {  // valid indices: the forward's
      HostTensor xf = HostTensor::compact(DT_F32, x4), yf = HostTensor::compact(DT_F32, p4);
      for (int64_t e = 0; e < xf.numel(); ++e) xf.set(e, (double)((e * 13) % 29));
      CTensor fw[3] = {xf.view(), yf.view(), ta[1].view()};
      REQUIRE(run_plan(CT_OP_MAX_POOL2D, &pl, {&fw[0], &fw[1], &fw[2]}, 0) == CT_OK);
    }
    std::vector<CTensor> va, vm;
    std::vector<int> mis;
    for (int i = 0; i < n; ++i) {
      tm.push_back(HostTensor::compact(ta[(size_t)i].d, ta[(size_t)i].shape));
      std::memcpy(tm.back().buf(), ta[(size_t)i].buf(), ta[(size_t)i].buffer_bytes);
    }
    for (int i = 0; i < n; ++i) {
      va.push_back(ta[(size_t)i].view());
      mis.push_back(1 + (i + c.op) % (dtype(tm[(size_t)i].d).size - 1));
      vm.push_back(shifted(tm[(size_t)i], mis.back()));
    }
    std::vector<const CTensor*> pa, pm;
    for (int i = 0; i < n; ++i) {
      pa.push_back(&va[(size_t)i]);
      pm.push_back(&vm[(size_t)i]);
    }
    INFO(info.name);
    REQUIRE(run_plan(c.op, c.desc, pa, 0) == CT_OK);
    // an unaligned workspace pointer too (the size includes slack for aligning it)
    const CTStatus s = run_plan(c.op, c.desc, pm, 3);
    INFO(last_error());
    REQUIRE(s == CT_OK);
    for (int i = 0; i < n; ++i) {
      unshift(tm[(size_t)i], mis[(size_t)i]);
      expect_same_values(ta[(size_t)i], tm[(size_t)i],
                         std::string(info.name) + " tensor " + std::to_string(i) + (i < nin ? " (input)" : ""));
    }
  }
  CHECK(seen == 13);
}
