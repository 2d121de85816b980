// test_index.cpp — ct_index (take, gather, scatter, scatter_add, index_add):
// every op x dtype x index dtype on compact, strided and reversed layouts
// against the reference (tests/reference/index.cc); repeated indices (the
// scatters' order: the last write wins, adds in order, the same bytes on 1
// and 4 threads); in place; 0-d, empty and negative indices; and every way a
// call can be refused, with out's bytes untouched.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

const CTDevice kCpu = {CT_CPU, 0};

bool has_src(int32_t op) { return op != CT_OP_TAKE && op != CT_OP_GATHER; }

// Small integers, exact in every dtype (float8 included) and in every sum the
// tests make; bool 0/1.
void fill_small(HostTensor& t, std::mt19937& rng) {
  std::uniform_int_distribution<int> u(-2, 2);
  for (int64_t k = 0; k < t.numel(); ++k) {
    if (t.d == DT_BOOL) t.set_i(k, u(rng) > 0);
    else if (dtype(t.d).is_float()) t.set(k, (double)u(rng));
    else t.set_i(k, u(rng));
  }
}

void fill_index(HostTensor& t, int64_t n, std::mt19937& rng) {
  std::uniform_int_distribution<int64_t> u(-n, n - 1);
  for (int64_t k = 0; k < t.numel(); ++k) t.set_i(k, u(rng));
}

// A tensor of `shape` in layout 0 (compact), 1 (padded strides) or 2 (every dim reversed and padded).
HostTensor make(int d, const std::vector<int64_t>& shape, int layout) {
  if (layout == 0 || shape.empty()) return HostTensor::compact(d, shape, false);
  std::vector<int64_t> st(shape.size());
  int64_t s = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    st[i] = layout == 2 ? -(s + 1) : s + 1;  // a gap after each row
    s = (s + 1) * std::max<int64_t>(shape[i], 1);
  }
  return HostTensor::strided(d, shape, st, 3);
}

CTStatus call(int32_t op, const CTensor& x, int32_t axis, const CTensor& idx, const CTensor* src, const double* alpha,
              CTensor* out, void* stream = nullptr) {
  return ct_index(op, &x, axis, &idx, src, alpha, alpha ? 1 : 0, out, stream);
}

// Shapes of (x, index, src) for op along axis 1 of a (4, 5) x, and the output's.
struct Case {
  std::vector<std::vector<int64_t>> in;
  std::vector<int64_t> out;
};
Case case_of(int32_t op) {
  switch (op) {
    case CT_OP_TAKE: return {{{4, 5}, {2, 3}}, {4, 2, 3}};
    case CT_OP_GATHER: return {{{4, 5}, {3, 7}}, {3, 7}};
    case CT_OP_INDEX_ADD: return {{{4, 5}, {6}, {4, 6}}, {4, 5}};
    default: return {{{4, 5}, {3, 9}, {4, 9}}, {4, 5}};  // 9 positions into 5: repeats
  }
}

void expect_values(const HostTensor& got, const ctref::Array& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.numel() == want.numel());
  const bool f8 = got.d == DT_F8E4M3FN || got.d == DT_F8E5M2 || got.d == DT_F8E4M3FNUZ || got.d == DT_F8E5M2FNUZ;
  for (int64_t k = 0; k < got.numel(); ++k) {
    if (want.is_float()) {
      const double g = got.get(k), w = want.f[(size_t)k];
      INFO("element " << k << ": " << g << " vs " << w);
      // float8 rounds the sums of the scatters once per add (2 or 3 mantissa bits)
      REQUIRE(std::fabs(g - w) <= (f8 ? 0.25 * std::fabs(w) : 0.0));
    } else {
      INFO("element " << k << ": " << got.get_i(k) << " vs " << want.i[(size_t)k]);
      REQUIRE(got.get_i(k) == (got.d == DT_BOOL ? (int64_t)(want.i[(size_t)k] != 0) : want.i[(size_t)k]));
    }
  }
}

const int32_t kOps[] = {CT_OP_TAKE, CT_OP_GATHER, CT_OP_SCATTER, CT_OP_SCATTER_ADD, CT_OP_INDEX_ADD};

}  // namespace

TEST_CASE("index ops: every dtype, index dtype and layout against the reference", "[index]") {
  std::mt19937 rng(7);
  int runs = 0;
  for (int32_t op : kOps) {
    const Case c = case_of(op);
    for (int d = 0; d < DT_COUNT; ++d) {
      if (ct_op_supported(op, kCpu, dtype(d).dt) != CT_OK) continue;
      for (int idt : {DT_I64, DT_I32})
        for (int layout = 0; layout < 3; ++layout)
          for (int32_t axis : {1, -1}) {
            const std::string what = std::string(ctref::op_name(op)) + " " + dtype(d).name + " index " +
                                     dtype(idt).name + " layout " + std::to_string(layout) + " axis " +
                                     std::to_string(axis);
            HostTensor x = make(d, c.in[0], layout), idx = make(idt, c.in[1], layout);
            fill_small(x, rng);
            fill_index(idx, 5, rng);
            HostTensor src = has_src(op) ? make(d, c.in[2], 2 - layout) : HostTensor();
            if (has_src(op)) fill_small(src, rng);
            HostTensor out = make(d, c.out, layout == 1 ? 2 : 0);
            const double alpha = 2.0;
            CTensor xv = x.view(), iv = idx.view(), sv = has_src(op) ? src.view() : CTensor{}, ov = out.view();
            const CTStatus s = call(op, xv, axis, iv, has_src(op) ? &sv : nullptr,
                                    op == CT_OP_INDEX_ADD && d != DT_BOOL ? &alpha : nullptr, &ov);
            INFO(what << ": " << last_error());
            REQUIRE(s == CT_OK);
            ctref::Call rc = ref_call(op);
            rc.axis = axis;
            if (op == CT_OP_INDEX_ADD) rc.params = {2.0};
            HostTensor idx64 = HostTensor::compact(DT_I64, c.in[1]);
            for (int64_t k = 0; k < idx.numel(); ++k) idx64.set_i(k, idx.get_i(k));
            std::vector<const HostTensor*> ins = {&x, &idx64};
            if (has_src(op)) ins.push_back(&src);
            expect_values(out, reference(rc, ins, {{d, c.out}})[0], what);
            ++runs;
          }
    }
  }
  CHECK(runs >= 5 * 12 * 12);  // every op x (at least) 12 dtypes x 2 index dtypes x 3 layouts x 2 axes
}

TEST_CASE("index ops: take's shapes, 0-d index and x, negative indices, empty index", "[index]") {
  // take of a (3,) vector at a 0-d index is 0-d; at a (2, 2) index (2, 2)
  HostTensor v = HostTensor::compact(DT_F32, {3});
  for (int k = 0; k < 3; ++k) v.set(k, 10.0 + k);
  HostTensor i0 = HostTensor::compact(DT_I64, {}), o0 = HostTensor::compact(DT_F32, {});
  i0.set_i(0, -1);
  CTensor vv = v.view(), iv = i0.view(), ov = o0.view();
  REQUIRE(call(CT_OP_TAKE, vv, 0, iv, nullptr, nullptr, &ov) == CT_OK);
  CHECK(o0.get(0) == 12.0);
  // gather and scatter of 0-d tensors: one element
  HostTensor x0 = HostTensor::compact(DT_F32, {}), g0 = HostTensor::compact(DT_F32, {});
  x0.set(0, 5.0);
  i0.set_i(0, 0);
  CTensor xv = x0.view(), gv = g0.view();
  REQUIRE(call(CT_OP_GATHER, xv, 0, iv, nullptr, nullptr, &gv) == CT_OK);
  CHECK(g0.get(0) == 5.0);
  REQUIRE(call(CT_OP_SCATTER_ADD, xv, -1, iv, &xv, nullptr, &gv) == CT_OK);
  CHECK(g0.get(0) == 10.0);
  // an empty index: take gives an empty result, a scatter gives x
  HostTensor ie = HostTensor::compact(DT_I64, {0}), x = HostTensor::compact(DT_I32, {2, 3});
  for (int k = 0; k < 6; ++k) x.set_i(k, k);
  HostTensor te = HostTensor::compact(DT_I32, {2, 0}), se = HostTensor::compact(DT_I32, {2, 3});
  CTensor iev = ie.view(), xv2 = x.view(), tev = te.view(), sev = se.view();
  REQUIRE(call(CT_OP_TAKE, xv2, 1, iev, nullptr, nullptr, &tev) == CT_OK);
  HostTensor src = HostTensor::compact(DT_I32, {2, 0});
  CTensor srcv = src.view();
  REQUIRE(call(CT_OP_INDEX_ADD, xv2, 1, iev, &srcv, nullptr, &sev) == CT_OK);
  for (int k = 0; k < 6; ++k) CHECK(se.get_i(k) == k);
  // the shape query gives take's rule
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.axis = 1;
  HostTensor i23 = HostTensor::compact(DT_I32, {2, 3});
  CTensor q[2] = {x.view(), i23.view()};
  const CTensor* qp[2] = {&q[0], &q[1]};
  CTOutputInfo oi;
  REQUIRE(ct_op_output_info(CT_OP_TAKE, &a, qp, 2, &oi, 1) == CT_OK);
  CHECK(std::vector<int64_t>(oi.shape, oi.shape + oi.ndim) == std::vector<int64_t>{2, 2, 3});
}

TEST_CASE("index ops: scatters are deterministic (order along the axis, any thread count) and run in place",
          "[index]") {
  // 200 x 4096 float32: every row scatters 4096 values into 64 positions
  // (64 adds per position), on 1 and 4 threads: the same bytes, and the
  // sequential sum in index order.
  const int64_t R = 200, K = 4096, N = 64;
  HostTensor x = HostTensor::compact(DT_F32, {R, N}), idx = HostTensor::compact(DT_I64, {R, K}),
             src = HostTensor::compact(DT_F32, {R, K});
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int64_t k = 0; k < x.numel(); ++k) x.set(k, u(rng));
  for (int64_t k = 0; k < src.numel(); ++k) src.set(k, u(rng) * 1e3f);
  fill_index(idx, N, rng);
  for (int32_t op : {CT_OP_SCATTER, CT_OP_SCATTER_ADD}) {
    HostTensor o1 = HostTensor::compact(DT_F32, {R, N}), o4 = HostTensor::compact(DT_F32, {R, N});
    CTensor xv = x.view(), iv = idx.view(), sv = src.view(), v1 = o1.view(), v4 = o4.view();
    CTCpuStream s1 = cpu_stream(1), s4 = cpu_stream(4);
    REQUIRE(call(op, xv, 1, iv, &sv, nullptr, &v1, &s1) == CT_OK);
    REQUIRE(call(op, xv, 1, iv, &sv, nullptr, &v4, &s4) == CT_OK);
    CHECK(o1.bytes() == o4.bytes());
    // row 7 by hand, in order of k
    std::vector<float> row(N);
    for (int64_t j = 0; j < N; ++j) row[(size_t)j] = (float)x.get(7 * N + j);
    for (int64_t k = 0; k < K; ++k) {
      int64_t t = idx.get_i(7 * K + k);
      if (t < 0) t += N;
      const float v = (float)src.get(7 * K + k);
      row[(size_t)t] = op == CT_OP_SCATTER ? v : row[(size_t)t] + v;
    }
    for (int64_t j = 0; j < N; ++j) CHECK(o1.get(7 * N + j) == row[(size_t)j]);
    // in place: out is exactly x
    HostTensor y = HostTensor::compact(DT_F32, {R, N});
    std::memcpy(y.buf(), x.buf(), x.buffer_bytes);
    CTensor yv = y.view();
    REQUIRE(call(op, yv, 1, iv, &sv, nullptr, &yv) == CT_OK);
    CHECK(y.bytes() == o1.bytes());
  }
}

TEST_CASE("index ops: refusals name the problem and leave out untouched", "[index][errors]") {
  HostTensor x = HostTensor::compact(DT_F32, {3, 4}), out = HostTensor::compact(DT_F32, {3, 4});
  HostTensor idx = HostTensor::compact(DT_I64, {3, 4}), src = HostTensor::compact(DT_F32, {3, 4});
  for (int64_t k = 0; k < 12; ++k) idx.set_i(k, k % 4);
  out.fill_bytes(0x5A);
  const std::vector<unsigned char> before = out.bytes();
  CTensor xv = x.view(), iv = idx.view(), sv = src.view(), ov = out.view();
  auto expect = [&](CTStatus s, CTStatus want, const std::string& text) {
    INFO(last_error());
    CHECK(s == want);
    CHECK(last_error().find(text) != std::string::npos);
    CHECK(out.bytes() == before);
  };
  // an index out of range, found before anything is written (the scatters copy x first otherwise)
  idx.set_i(5, 4);
  expect(call(CT_OP_SCATTER, xv, 1, iv, &sv, nullptr, &ov), CT_ERR_INVALID_ARGUMENT, "index[1,1]=4 is outside [-4, 4)");
  idx.set_i(5, -5);
  expect(call(CT_OP_GATHER, xv, 1, iv, nullptr, nullptr, &ov), CT_ERR_INVALID_ARGUMENT, "=-5 is outside");
  idx.set_i(5, 1);
  expect(call(CT_OP_GATHER, xv, 2, iv, nullptr, nullptr, &ov), CT_ERR_INVALID_ARGUMENT, "axis=2 is outside [-2, 2)");
  expect(call(CT_OP_SCATTER, xv, 1, iv, nullptr, nullptr, &ov), CT_ERR_INVALID_ARGUMENT, "src is NULL");
  expect(call(CT_OP_GATHER, xv, 1, iv, &sv, nullptr, &ov), CT_ERR_INVALID_ARGUMENT, "takes no src");
  // index dtype, src dtype
  CTensor fidx = x.view();
  expect(call(CT_OP_GATHER, xv, 1, fidx, nullptr, nullptr, &ov), CT_ERR_DTYPE_MISMATCH, "must be int64 or int32");
  HostTensor s64 = HostTensor::compact(DT_F64, {3, 4});
  CTensor s64v = s64.view();
  expect(call(CT_OP_SCATTER, xv, 1, iv, &s64v, nullptr, &ov), CT_ERR_DTYPE_MISMATCH, "src.dtype=float64");
  // shapes
  HostTensor i5 = HostTensor::compact(DT_I64, {3, 5});
  CTensor i5v = i5.view();
  expect(call(CT_OP_GATHER, xv, 0, i5v, nullptr, nullptr, &ov), CT_ERR_SHAPE_MISMATCH, "may not exceed x's off the axis");
  expect(call(CT_OP_SCATTER_ADD, xv, 1, i5v, &sv, nullptr, &ov), CT_ERR_SHAPE_MISMATCH, "may not exceed src's");
  HostTensor i1 = HostTensor::compact(DT_I64, {3});
  CTensor i1v = i1.view();
  expect(call(CT_OP_GATHER, xv, 1, i1v, nullptr, nullptr, &ov), CT_ERR_SHAPE_MISMATCH, "same number of dims");
  expect(call(CT_OP_INDEX_ADD, xv, 1, iv, &sv, nullptr, &ov), CT_ERR_SHAPE_MISMATCH, "must be 1-d");
  expect(call(CT_OP_INDEX_ADD, xv, 1, i1v, &sv, nullptr, &ov), CT_ERR_SHAPE_MISMATCH, "index's length");
  expect(call(CT_OP_TAKE, xv, 1, iv, nullptr, nullptr, &ov), CT_ERR_SHAPE_MISMATCH, "the result has shape [3,3,4]");
  // alpha: an integer for integer dtypes
  HostTensor xi = HostTensor::compact(DT_I32, {3, 4}), si = HostTensor::compact(DT_I32, {3, 4}),
             oi = HostTensor::compact(DT_I32, {3, 4});
  oi.fill_bytes(0x5A);
  const std::vector<unsigned char> obefore = oi.bytes();
  CTensor xiv = xi.view(), siv = si.view(), oiv = oi.view();
  HostTensor i3 = HostTensor::compact(DT_I64, {4});
  CTensor i3v = i3.view();
  const double half = 0.5;
  CHECK(call(CT_OP_INDEX_ADD, xiv, 1, i3v, &siv, &half, &oiv) == CT_ERR_INVALID_ARGUMENT);
  CHECK(last_error().find("alpha=0.5 must be an integer (|alpha| < 9.2e18) for int32") != std::string::npos);
  CHECK(oi.bytes() == obefore);
  const double huge = 1e30;  // refused before any conversion to an integer (UBSan)
  CHECK(call(CT_OP_INDEX_ADD, xiv, 1, i3v, &siv, &huge, &oiv) == CT_ERR_INVALID_ARGUMENT);
  CHECK(oi.bytes() == obefore);
  // overlaps: a gather may not write into x; a scatter's out is x exactly or disjoint from it
  expect(call(CT_OP_GATHER, xv, 1, iv, nullptr, nullptr, &xv), CT_ERR_INVALID_ARGUMENT, "must not share memory");
  HostTensor big = HostTensor::compact(DT_F32, {4, 4});
  big.fill_bytes(0x11);
  const std::vector<unsigned char> big_before = big.bytes();
  CTensor rows0 = big.view(), rows1 = big.view();
  int64_t s34[2] = {3, 4};
  rows0.shape = rows1.shape = s34;
  rows1.byte_offset = 16;  // rows 1..3 against rows 0..2: shared bytes, not the same view
  CHECK(call(CT_OP_SCATTER, rows0, 1, iv, &sv, nullptr, &rows1) == CT_ERR_INVALID_ARGUMENT);
  CHECK(big.bytes() == big_before);
  expect(call(CT_OP_SCATTER, xv, 1, iv, &sv, nullptr, &iv), CT_ERR_DTYPE_MISMATCH, "out.dtype=int64");
}

TEST_CASE("index ops: scatters into the leading axis (lines side by side) match the reference on 1 and 4 threads",
          "[index]") {
  // index_add and scatter(_add) along axis 0 of a (7, 300) x: the lines are the 300 columns, adjacent in
  // memory, which the CPU runs k outer and the lines inner; repeated targets keep their order along the axis.
  std::mt19937 rng(11);
  for (int32_t op : {CT_OP_INDEX_ADD, CT_OP_SCATTER_ADD, CT_OP_SCATTER})
    for (int d : {DT_F32, DT_I32, DT_BF16}) {
      HostTensor x = HostTensor::compact(d, {7, 300});
      const std::vector<int64_t> ishape = op == CT_OP_INDEX_ADD ? std::vector<int64_t>{20}
                                                                : std::vector<int64_t>{20, 300};
      HostTensor idx = HostTensor::compact(DT_I64, ishape), src = HostTensor::compact(d, {20, 300});
      fill_small(x, rng);
      fill_small(src, rng);
      fill_index(idx, 7, rng);
      HostTensor o1 = HostTensor::compact(d, {7, 300}), o4 = HostTensor::compact(d, {7, 300});
      CTensor xv = x.view(), iv = idx.view(), sv = src.view(), v1 = o1.view(), v4 = o4.view();
      CTCpuStream s1 = cpu_stream(1), s4 = cpu_stream(4);
      const double alpha = 3.0;
      const double* a = op == CT_OP_INDEX_ADD ? &alpha : nullptr;
      INFO(ctref::op_name(op) << " " << dtype(d).name);
      REQUIRE(call(op, xv, 0, iv, &sv, a, &v1, &s1) == CT_OK);
      REQUIRE(call(op, xv, 0, iv, &sv, a, &v4, &s4) == CT_OK);
      CHECK(o1.bytes() == o4.bytes());
      ctref::Call rc = ref_call(op);
      rc.axis = 0;
      if (op == CT_OP_INDEX_ADD) rc.params = {3.0};
      expect_values(o1, reference(rc, {&x, &idx, &src}, {{d, {7, 300}}})[0], "axis 0");
    }
}
