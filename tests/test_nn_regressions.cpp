// test_nn_regressions.cpp — regression tests for defects of the category-3
// NN ops, one section per defect:
//   1. strided and negative-stride bias / dbias (read and written as compact);
// References are plain loops in double written here, or (for the layout
// tests) the same op on compact tensors, which the other suites check.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ctt;

namespace {

const unsigned char kSentinel = 0xC3;

// 64-byte aligned scratch of exactly n bytes followed by guard bytes.
struct Scratch {
  std::vector<unsigned char> v;
  size_t n = 0;
  unsigned char* p = nullptr;
  explicit Scratch(size_t bytes) : n(bytes) {
    v.assign(bytes + 64 + 64, 0x5A);
    uintptr_t a = (uintptr_t)v.data();
    p = v.data() + (64 - a % 64) % 64;
  }
  void* ptr() { return n ? p : nullptr; }
  bool guard_intact() const {
    for (size_t i = 0; i < 64; ++i)
      if (p[n + i] != 0x5A) return false;
    return true;
  }
};

HostTensor filled(std::vector<int64_t> shape, uint64_t seed, double lo = -1, double hi = 1, int d = DT_F32) {
  HostTensor t = HostTensor::compact(d, shape);
  Rng r(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, r.uniform(lo, hi));
  return t;
}

// Same logical values in another layout.
HostTensor relayout(const HostTensor& src, const std::vector<int64_t>& strides, int64_t pad) {
  HostTensor t = HostTensor::strided(src.d, src.shape, strides, pad);
  t.fill_bytes(kSentinel);
  for (int64_t i = 0; i < src.numel(); ++i) {
    if (src.d == DT_I64) t.set_i(i, src.get_i(i));
    else t.set(i, src.get(i));
  }
  return t;
}

// Bytes of t's buffer that are no element's must still hold the sentinel.
void expect_gaps(const HostTensor& t, const std::string& what) {
  std::vector<char> cov = covered(t);
  std::vector<unsigned char> b = t.bytes();
  int64_t changed = 0;
  for (size_t i = 0; i < b.size(); ++i)
    if (!cov[i] && b[i] != kSentinel) ++changed;
  INFO(what << ": " << changed << " bytes between elements were written");
  CHECK(changed == 0);
}

void expect_values(const HostTensor& t, const std::vector<double>& want, double rtol, double atol,
                   const std::string& what) {
  REQUIRE((size_t)t.numel() == want.size());
  int64_t bad = 0, first = -1;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double g = t.get(i), w = want[(size_t)i];
    const bool ok = std::isnan(w) ? std::isnan(g) : std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok && bad++ == 0) first = i;
  }
  INFO(what << ": " << bad << " of " << t.numel() << " elements wrong"
            << (first >= 0 ? "; first " + std::to_string(first) + ": got " + fmt(t.get(first)) + ", want " +
                                 fmt(want[(size_t)first])
                           : std::string()));
  CHECK(bad == 0);
}

// Runs op through a plan on the tensors (nullptr: absent), with a workspace
// of exactly the plan's size and guard bytes after it.
CTStatus run_plan(int32_t op, const void* desc, const std::vector<HostTensor*>& ts, size_t* bytes_out = nullptr) {
  std::vector<CTensor> views(ts.size());
  std::vector<const CTensor*> ptrs(ts.size());
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i]) views[i] = ts[i]->view();
    ptrs[i] = ts[i] ? &views[i] : nullptr;
  }
  CTPlan* plan = nullptr;
  CTStatus s = ct_plan_create(op, desc, ptrs.data(), (int32_t)ptrs.size(), nullptr, &plan);
  if (s != CT_OK) return s;
  size_t bytes = 0;
  REQUIRE(ct_plan_workspace_size(plan, &bytes) == CT_OK);
  if (bytes_out) *bytes_out = bytes;
  Scratch ws(bytes);
  s = ct_plan_execute(plan, ptrs.data(), (int32_t)ptrs.size(), ws.ptr(), bytes, nullptr);
  CHECK(ws.guard_intact());
  ct_plan_destroy(plan);
  return s;
}

CTConv2dDesc conv_desc() {
  CTConv2dDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  return d;
}

// y = conv2d(x, w) + bias, stride 1, no padding, groups 1, in double.
std::vector<double> conv_ref(const HostTensor& x, const HostTensor& w, const HostTensor* bias) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], K = w.shape[0], R = w.shape[2],
                S = w.shape[3], P = H - R + 1, Q = W - S + 1;
  std::vector<double> y;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t p = 0; p < P; ++p)
        for (int64_t q = 0; q < Q; ++q) {
          double acc = bias ? bias->get(k) : 0.0;
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < R; ++r)
              for (int64_t s = 0; s < S; ++s)
                acc += x.get(((n * C + c) * H + p + r) * W + q + s) * w.get(((k * C + c) * R + r) * S + s);
          y.push_back(acc);
        }
  return y;
}

// dw = sum over (n, p, q) of dy * x (stride 1, no padding), in double.
std::vector<double> conv_dw_ref(const HostTensor& x, const HostTensor& dy, const std::vector<int64_t>& ws) {
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], K = ws[0], R = ws[2], S = ws[3],
                P = dy.shape[2], Q = dy.shape[3];
  std::vector<double> dw;
  for (int64_t k = 0; k < K; ++k)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t r = 0; r < R; ++r)
        for (int64_t s = 0; s < S; ++s) {
          double acc = 0;
          for (int64_t n = 0; n < N; ++n)
            for (int64_t p = 0; p < P; ++p)
              for (int64_t q = 0; q < Q; ++q)
                acc += dy.get(((n * K + k) * P + p) * Q + q) * x.get(((n * C + c) * H + p + r) * W + q + s);
          dw.push_back(acc);
        }
  return dw;
}

std::vector<double> channel_sums(const HostTensor& dy) {
  std::vector<double> s((size_t)dy.shape[1], 0.0);
  const int64_t PQ = dy.shape[2] * dy.shape[3];
  for (int64_t i = 0; i < dy.numel(); ++i) s[(size_t)((i / PQ) % dy.shape[1])] += dy.get(i);
  return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// 1. bias and dbias strides
// ---------------------------------------------------------------------------

TEST_CASE("nn regression: matmul reads a strided or negative-stride bias by its strides", "[nn]") {
  CTMatmulDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  SECTION("eye(2) @ [[1,2],[3,4]] + bias (2,) of stride 2 over {10, -777, 20}") {
    HostTensor a = HostTensor::compact(DT_F32, {2, 2}), b = HostTensor::compact(DT_F32, {2, 2});
    const double av[] = {1, 0, 0, 1}, bv[] = {1, 2, 3, 4};
    for (int i = 0; i < 4; ++i) a.set(i, av[i]), b.set(i, bv[i]);
    HostTensor bias = HostTensor::strided(DT_F32, {2}, {2}, 0);
    REQUIRE(bias.buffer_bytes == 3 * sizeof(float));
    const float raw[3] = {10, -777, 20};
    std::memcpy(bias.buf(), raw, sizeof raw);
    HostTensor out = HostTensor::compact(DT_F32, {2, 2});
    CTensor va = a.view(), vb = b.view(), vc = bias.view(), vo = out.view();
    size_t bytes = 0;
    REQUIRE(ct_matmul_workspace_size(&d, &va, &vb, &vc, &vo, &bytes) == CT_OK);
    Scratch ws(bytes);
    REQUIRE(ct_matmul(&d, &va, &vb, &vc, &vo, ws.ptr(), bytes, nullptr) == CT_OK);
    CHECK(ws.guard_intact());
    expect_values(out, {11, 22, 13, 24}, 0, 0, "out");
  }
  SECTION("negative strides, a (M, N) bias, the batched one-GEMM path, a plan") {
    // bias (3,) stride -1: the elements run backwards from the end of the buffer.
    HostTensor a = filled({2, 4, 5}, 11), b = filled({5, 3}, 12);
    HostTensor cbias = filled({3}, 13);
    for (std::vector<int64_t> st : {std::vector<int64_t>{-1}, std::vector<int64_t>{3}, std::vector<int64_t>{-2}}) {
      HostTensor bias = relayout(cbias, st, 1);
      HostTensor out = HostTensor::compact(DT_F32, {2, 4, 3}), ref = HostTensor::compact(DT_F32, {2, 4, 3});
      CTensor va = a.view(), vb = b.view(), vc = bias.view(), vcc = cbias.view(), vo = out.view(), vr = ref.view();
      Scratch ws(1 << 20);
      REQUIRE(ct_matmul(&d, &va, &vb, &vcc, &vr, ws.ptr(), ws.n, nullptr) == CT_OK);
      REQUIRE(ct_matmul(&d, &va, &vb, &vc, &vo, ws.ptr(), ws.n, nullptr) == CT_OK);
      std::vector<double> want;
      for (int64_t i = 0; i < 24; ++i) {
        double acc = cbias.get(i % 3);
        for (int64_t k = 0; k < 5; ++k) acc += a.get((i / 3) * 5 + k) * b.get(k * 3 + i % 3);
        want.push_back(acc);
      }
      INFO("bias stride " << st[0]);
      expect_values(out, want, 1e-5, 1e-6, "out");
      std::vector<HostTensor*> ts = {&a, &b, &bias, &out};
      out.fill_bytes(kSentinel);
      REQUIRE(run_plan(CT_OP_MATMUL, &d, ts) == CT_OK);
      expect_values(out, want, 1e-5, 1e-6, "out (plan)");
      expect_gaps(bias, "bias");  // an input: nothing writes it
    }
    // A (M, N) bias of a padded, transposed layout.
    HostTensor b2 = filled({5, 4}, 14), cb2 = filled({3, 4}, 15), a2 = filled({3, 5}, 16);
    HostTensor bias2 = relayout(cb2, {1, 5}, 2), out = HostTensor::compact(DT_F32, {3, 4});
    CTensor va = a2.view(), vb = b2.view(), vc = bias2.view(), vo = out.view();
    Scratch ws(1 << 20);
    REQUIRE(ct_matmul(&d, &va, &vb, &vc, &vo, ws.ptr(), ws.n, nullptr) == CT_OK);
    std::vector<double> want;
    for (int64_t i = 0; i < 12; ++i) {
      double acc = cb2.get(i);
      for (int64_t k = 0; k < 5; ++k) acc += a2.get((i / 4) * 5 + k) * b2.get(k * 4 + i % 4);
      want.push_back(acc);
    }
    expect_values(out, want, 1e-5, 1e-6, "out with a (3, 4) column-major bias");
  }
}

TEST_CASE("nn regression: conv2d reads, conv2d_backward_weight writes, a strided dbias by its strides", "[nn]") {
  const CTConv2dDesc d = conv_desc();
  HostTensor x = filled({2, 3, 5, 4}, 21), w = filled({4, 3, 2, 2}, 22), cbias = filled({4}, 23);
  HostTensor dy = filled({2, 4, 4, 3}, 24);
  for (int64_t st : {3, -1, -2}) {
    INFO("bias / dbias stride " << st);
    HostTensor bias = relayout(cbias, {st}, 2), y = HostTensor::compact(DT_F32, {2, 4, 4, 3});
    CTensor vx = x.view(), vw = w.view(), vb = bias.view(), vy = y.view();
    size_t bytes = 0;
    REQUIRE(ct_conv2d_workspace_size(&d, &vx, &vw, &vb, &vy, &bytes) == CT_OK);
    Scratch ws(bytes);
    REQUIRE(ct_conv2d(&d, &vx, &vw, &vb, &vy, ws.ptr(), bytes, nullptr) == CT_OK);
    CHECK(ws.guard_intact());
    expect_values(y, conv_ref(x, w, &cbias), 1e-5, 1e-5, "y");

    HostTensor dw = HostTensor::compact(DT_F32, {4, 3, 2, 2});
    HostTensor dbias = HostTensor::strided(DT_F32, {4}, {st}, 2);
    dbias.fill_bytes(kSentinel);
    CTensor vdy = dy.view(), vdw = dw.view(), vdb = dbias.view();
    REQUIRE(ct_conv2d_backward_weight_workspace_size(&d, &vx, &vdy, &vdw, &vdb, &bytes) == CT_OK);
    Scratch ws2(bytes);
    REQUIRE(ct_conv2d_backward_weight(&d, &vx, &vdy, &vdw, &vdb, ws2.ptr(), bytes, nullptr) == CT_OK);
    CHECK(ws2.guard_intact());
    expect_values(dw, conv_dw_ref(x, dy, {4, 3, 2, 2}), 1e-5, 1e-5, "dw");
    expect_values(dbias, channel_sums(dy), 1e-5, 1e-5, "dbias");
    expect_gaps(dbias, "dbias");
    // The same through a plan.
    dbias.fill_bytes(kSentinel);
    std::vector<HostTensor*> ts = {&x, &dy, &dw, &dbias};
    REQUIRE(run_plan(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, ts) == CT_OK);
    expect_values(dbias, channel_sums(dy), 1e-5, 1e-5, "dbias (plan)");
    expect_gaps(dbias, "dbias (plan)");
  }
}

