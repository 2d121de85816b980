// test_nn_regressions.cpp — regression tests for defects of the category-3
// NN ops, one section per defect:
//   1. strided and negative-stride bias / dbias (read and written as compact);
//   2. layouts oneDNN cannot describe (CT_ERR_BACKEND), for every tensor of
//      every op: repacked through the workspace;
//   3. pooling windows wholly in the padding (dilated windows that step over
//      a short input): refused by validation, for exactly those geometries;
//   4. descriptor arithmetic near INT64_MAX: checked, messages naming fields;
//   5. empty inputs with non-empty outputs (PyTorch's results);
//   6. a failing ct_plan_execute names ct_plan_execute.
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

// A failed call: the status, a message starting with fn and containing every substring.
void expect_fail(CTStatus got, CTStatus want, const std::string& fn, const std::vector<std::string>& subs) {
  const std::string msg = last_error();
  INFO("status " << ct_status_string(got) << ", want " << ct_status_string(want) << "; message: \"" << msg << "\"");
  CHECK(got == want);
  CHECK(msg.rfind(fn + ": ", 0) == 0);
  for (const std::string& s : subs) {
    INFO("substring " << s);
    CHECK(contains(msg, s));
  }
}

HostTensor filled(std::vector<int64_t> shape, uint64_t seed, double lo = -1, double hi = 1, int d = DT_F32) {
  HostTensor t = HostTensor::compact(d, shape);
  Rng r(seed);
  for (int64_t i = 0; i < t.numel(); ++i) t.set(i, r.uniform(lo, hi));
  return t;
}

// An empty tensor of any extents (a leading 0 keeps every product in range).
HostTensor empty_tensor(const std::vector<int64_t>& shape) {
  return HostTensor::strided(DT_F32, shape, std::vector<int64_t>(shape.size(), 1), 0);
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

CTPool2dDesc pool_desc(int64_t kh, int64_t kw) {
  CTPool2dDesc d;
  std::memset(&d, 0, sizeof d);
  d.struct_size = sizeof d;
  d.kernel[0] = kh;
  d.kernel[1] = kw;
  return d;
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

// ---------------------------------------------------------------------------
// 2. layouts oneDNN cannot describe
// ---------------------------------------------------------------------------

namespace {

// Strides for shape with no overlap that oneDNN's memory descriptors refuse:
// the two innermost extents > 1, (a, b), get strides (2b - 1, 2) (no two
// elements meet, but 2b - 1 < 2 * b); outer dims follow densely. Empty when
// the shape has fewer than two extents > 1.
std::vector<int64_t> odd_strides(const std::vector<int64_t>& shape) {
  int ib = -1, ia = -1;
  for (int i = (int)shape.size() - 1; i >= 0; --i)
    if (shape[(size_t)i] > 1) {
      if (ib < 0) ib = i;
      else if (ia < 0) ia = i;
    }
  if (ia < 0) return {};
  std::vector<int64_t> st(shape.size(), 1);
  const int64_t a = shape[(size_t)ia], b = shape[(size_t)ib];
  st[(size_t)ib] = 2;
  st[(size_t)ia] = 2 * b - 1;
  int64_t reach = (a - 1) * (2 * b - 1) + 2 * (b - 1) + 1;
  for (int i = ia - 1; i >= 0; --i) {
    st[(size_t)i] = reach;
    reach *= std::max<int64_t>(shape[(size_t)i], 1);
  }
  return st;
}

struct OpCase {
  const char* name;
  int32_t op;
  const void* desc;
  std::vector<std::vector<int64_t>> shapes;  // empty: absent
  std::vector<int> dts;
  int inputs;
  std::vector<int> positive;  // inputs that must be > 0 (variances, inverse stds)
};

}  // namespace

TEST_CASE("nn regression: every tensor of every op in a layout oneDNN cannot describe (repacked in the workspace)",
          "[nn]") {
  CTMatmulDesc md;
  std::memset(&md, 0, sizeof md);
  md.struct_size = sizeof md;
  CTConv2dDesc cd = conv_desc();
  cd.pad_begin[0] = cd.pad_end[1] = 1;
  CTPool2dDesc pd = pool_desc(2, 2);
  CTPool2dDesc pd_ex = pool_desc(2, 2);
  pd_ex.stride[0] = pd_ex.stride[1] = 1;
  pd_ex.pad_begin[1] = 1;
  CTBatchNormDesc bd = {sizeof(CTBatchNormDesc), 0, 1e-5};
  CTLayerNormDesc ld = {sizeof(CTLayerNormDesc), 1, 1e-5};
  const int F = DT_F32, I = DT_I64;
  const std::vector<OpCase> cases = {
      {"matmul", CT_OP_MATMUL, &md, {{2, 3, 4}, {2, 4, 5}, {3, 5}, {2, 3, 5}}, {F, F, F, F}, 3, {}},
      {"conv2d", CT_OP_CONV2D, &cd, {{2, 3, 5, 5}, {4, 3, 3, 3}, {4}, {2, 4, 4, 4}}, {F, F, F, F}, 3, {}},
      {"conv2d_backward_data", CT_OP_CONV2D_BACKWARD_DATA, &cd, {{2, 4, 4, 4}, {4, 3, 3, 3}, {2, 3, 5, 5}},
       {F, F, F}, 2, {}},
      {"conv2d_backward_weight", CT_OP_CONV2D_BACKWARD_WEIGHT, &cd,
       {{2, 3, 5, 5}, {2, 4, 4, 4}, {4, 3, 3, 3}, {4}}, {F, F, F, F}, 2, {}},
      {"max_pool2d", CT_OP_MAX_POOL2D, &pd, {{2, 3, 4, 6}, {2, 3, 2, 3}, {2, 3, 2, 3}}, {F, F, I}, 1, {}},
      {"max_pool2d_backward", CT_OP_MAX_POOL2D_BACKWARD, &pd, {{2, 3, 2, 3}, {2, 3, 2, 3}, {2, 3, 4, 6}}, {F, I, F},
       2, {}},
      {"avg_pool2d", CT_OP_AVG_POOL2D, &pd_ex, {{2, 3, 4, 6}, {2, 3, 3, 6}}, {F, F}, 1, {}},
      {"avg_pool2d_backward", CT_OP_AVG_POOL2D_BACKWARD, &pd_ex, {{2, 3, 3, 6}, {2, 3, 4, 6}}, {F, F}, 1, {}},
      {"batch_norm", CT_OP_BATCH_NORM, &bd, {{2, 3, 4, 5}, {3}, {3}, {3}, {3}, {2, 3, 4, 5}}, {F, F, F, F, F, F}, 5,
       {2}},
      {"batch_norm_training", CT_OP_BATCH_NORM_TRAINING, &bd, {{2, 3, 4, 5}, {3}, {3}, {2, 3, 4, 5}, {3}, {3}},
       {F, F, F, F, F, F}, 3, {}},
      {"batch_norm_backward", CT_OP_BATCH_NORM_BACKWARD, &bd,
       {{2, 3, 4, 5}, {2, 3, 4, 5}, {3}, {3}, {3}, {2, 3, 4, 5}, {3}, {3}}, {F, F, F, F, F, F, F, F}, 5, {3}},
      {"batch_norm 2-d", CT_OP_BATCH_NORM_TRAINING, &bd, {{4, 3}, {3}, {3}, {4, 3}, {3}, {3}}, {F, F, F, F, F, F}, 3,
       {}},
      {"layer_norm", CT_OP_LAYER_NORM, &ld, {{2, 3, 6}, {6}, {6}, {2, 3, 6}, {2, 3}, {2, 3}}, {F, F, F, F, F, F}, 3,
       {}},
      {"layer_norm_backward", CT_OP_LAYER_NORM_BACKWARD, &ld,
       {{2, 3, 6}, {2, 3, 6}, {2, 3}, {2, 3}, {6}, {2, 3, 6}, {6}, {6}}, {F, F, F, F, F, F, F, F}, 5, {3}},
  };
  int odd_runs = 0;
  for (const OpCase& oc : cases) {
    const size_t n = oc.shapes.size();
    // Compact inputs (indices from a max_pool2d of dx-shaped data), and the compact run's outputs.
    std::vector<HostTensor> base(n);
    for (size_t i = 0; i < n; ++i) {
      bool pos = false;
      for (int p : oc.positive) pos = pos || p == (int)i;
      base[i] = oc.dts[i] == I ? HostTensor::compact(I, oc.shapes[i])
                               : filled(oc.shapes[i], 1000 + 10 * oc.op + i, pos ? 0.5 : -1, pos ? 2 : 1, oc.dts[i]);
    }
    if (oc.op == CT_OP_MAX_POOL2D_BACKWARD) {
      HostTensor src = filled(oc.shapes[2], 77), y = HostTensor::compact(F, oc.shapes[0]);
      std::vector<HostTensor*> ts = {&src, &y, &base[1]};
      REQUIRE(run_plan(CT_OP_MAX_POOL2D, oc.desc, ts) == CT_OK);
    }
    std::vector<HostTensor*> ts(n);
    for (size_t i = 0; i < n; ++i) ts[i] = &base[i];
    size_t compact_bytes = 0;
    {
      INFO(oc.name << ", compact");
      REQUIRE(run_plan(oc.op, oc.desc, ts, &compact_bytes) == CT_OK);
    }
    for (size_t j = 0; j < n; ++j) {
      const std::vector<int64_t> st = odd_strides(oc.shapes[j]);
      if (st.empty()) continue;
      ++odd_runs;
      std::vector<HostTensor> t = base;
      t[j] = relayout(base[j], st, 3);
      for (size_t i = (size_t)oc.inputs; i < n; ++i) t[i].fill_bytes(kSentinel);
      std::vector<HostTensor*> tp(n);
      for (size_t i = 0; i < n; ++i) tp[i] = &t[i];
      size_t bytes = 0;
      const CTStatus s = run_plan(oc.op, oc.desc, tp, &bytes);
      INFO(oc.name << ": tensor " << j << " of shape " << shape_str(oc.shapes[j]) << " with strides " << shape_str(st)
                   << ": " << ct_status_string(s) << " '" << last_error() << "'");
      REQUIRE(s == CT_OK);
      // At least the dense copy of the output, where oneDNN runs the op (the
      // CPU's float32 pooling, forward and max backward, writes any layout itself).
      const bool direct = oc.op == CT_OP_MAX_POOL2D_BACKWARD || oc.op == CT_OP_MAX_POOL2D || oc.op == CT_OP_AVG_POOL2D;
      if (j >= (size_t)oc.inputs && !direct) CHECK(bytes > 0);
      for (size_t i = (size_t)oc.inputs; i < n; ++i) {
        std::vector<double> want;
        for (int64_t e = 0; e < base[i].numel(); ++e) want.push_back(base[i].get(e));
        expect_values(t[i], want, 1e-5, 1e-6, std::string(oc.name) + " output " + std::to_string(i));
      }
      if (j >= (size_t)oc.inputs) expect_gaps(t[j], std::string(oc.name) + " output " + std::to_string(j));
    }
  }
  CHECK(odd_runs >= 30);
}

TEST_CASE("nn regression: the two layouts that failed in oneDNN, by direct calls", "[nn]") {
  SECTION("matmul out (2, 2) with strides (3, 2)") {
    CTMatmulDesc d;
    std::memset(&d, 0, sizeof d);
    d.struct_size = sizeof d;
    HostTensor a = HostTensor::compact(DT_F32, {2, 2}), b = HostTensor::compact(DT_F32, {2, 2});
    const double av[] = {1, 0, 0, 1}, bv[] = {1, 2, 3, 4};
    for (int i = 0; i < 4; ++i) a.set(i, av[i]), b.set(i, bv[i]);
    HostTensor out = HostTensor::strided(DT_F32, {2, 2}, {3, 2}, 0);
    out.fill_bytes(kSentinel);
    CTensor va = a.view(), vb = b.view(), vo = out.view();
    size_t bytes = 0;
    REQUIRE(ct_matmul_workspace_size(&d, &va, &vb, nullptr, &vo, &bytes) == CT_OK);
    CHECK(bytes >= 4 * sizeof(float));  // the dense buffer out is computed in
    Scratch ws(bytes);
    const CTStatus s = ct_matmul(&d, &va, &vb, nullptr, &vo, ws.ptr(), bytes, nullptr);
    INFO(last_error());
    REQUIRE(s == CT_OK);
    CHECK(ws.guard_intact());
    expect_values(out, {1, 2, 3, 4}, 0, 0, "out");
    expect_gaps(out, "out");
    // One byte less is refused, naming the size.
    if (bytes > 0) {
      Scratch small(bytes - 1);
      expect_fail(ct_matmul(&d, &va, &vb, nullptr, &vo, small.ptr(), bytes - 1, nullptr), CT_ERR_WORKSPACE_TOO_SMALL,
                  "ct_matmul", {std::to_string(bytes)});
    }
  }
  SECTION("avg_pool2d y (2, 2, 1, 1) with strides (4, 3, 1, 1)") {
    CTPool2dDesc d = pool_desc(2, 2);
    HostTensor x = HostTensor::compact(DT_F32, {2, 2, 2, 2});
    for (int i = 0; i < 16; ++i) x.set(i, i);
    HostTensor y = HostTensor::strided(DT_F32, {2, 2, 1, 1}, {4, 3, 1, 1}, 0);
    y.fill_bytes(kSentinel);
    CTensor vx = x.view(), vy = y.view();
    size_t bytes = 0;
    REQUIRE(ct_avg_pool2d_workspace_size(&d, &vx, &vy, &bytes) == CT_OK);
    Scratch ws(bytes);
    const CTStatus s = ct_avg_pool2d(&d, &vx, &vy, ws.ptr(), bytes, nullptr);
    INFO(last_error());
    REQUIRE(s == CT_OK);
    CHECK(ws.guard_intact());
    expect_values(y, {1.5, 5.5, 9.5, 13.5}, 0, 0, "y");
    expect_gaps(y, "y");
  }
}

// ---------------------------------------------------------------------------
// 3. pooling windows wholly in the padding
// ---------------------------------------------------------------------------

namespace {

// Brute force: the first output along one axis whose window has no tap in [0, H), or -1.
int64_t brute_padding_window(int64_t H, int64_t k, int64_t s, int64_t dil, int64_t pb, int64_t P) {
  for (int64_t p = 0; p < P; ++p) {
    bool inside = false;
    for (int64_t j = 0; j < k && !inside; ++j) {
      const __int128 tap = (__int128)p * s - pb + (__int128)j * dil;
      inside = tap >= 0 && tap < H;
    }
    if (!inside) return p;
  }
  return -1;
}

// P for one axis in __int128, or -1 when the window is longer than the padded input.
int64_t ref_extent(int64_t H, int64_t k, int64_t s, int64_t dil, int64_t pb, int64_t pe) {
  const __int128 span = (__int128)H + pb + pe - ((__int128)dil * (k - 1) + 1);
  return span < 0 ? -1 : (int64_t)(span / s + 1);
}

}  // namespace

TEST_CASE("nn regression: a dilated pooling window wholly in the padding is refused by validation", "[nn]") {
  SECTION("the reported case: H=2, kernel 2, dilation 3, pads 1: taps -1 and 2") {
    CTPool2dDesc d = pool_desc(2, 1);
    d.dilation[0] = 3;
    d.pad_begin[0] = d.pad_end[0] = 1;
    d.stride[0] = 1;
    HostTensor x = filled({1, 1, 2, 1}, 31), y = HostTensor::compact(DT_F32, {1, 1, 1, 1});
    HostTensor ind = HostTensor::compact(DT_I64, {1, 1, 1, 1}), dx = HostTensor::compact(DT_F32, {1, 1, 2, 1});
    y.fill_bytes(kSentinel), ind.fill_bytes(kSentinel), dx.fill_bytes(kSentinel);
    const std::vector<unsigned char> y0 = y.bytes(), i0 = ind.bytes(), dx0 = dx.bytes();
    CTensor vx = x.view(), vy = y.view(), vi = ind.view(), vdx = dx.view();
    const std::vector<std::string> subs = {"desc->kernel[0]=2", "dilation[0]=3", "pad_begin[0]=1", "pad_end[0]=1",
                                           "x.shape[2]=2", "padding"};
    Scratch ws(1 << 16);
    size_t bytes = 7;
    expect_fail(ct_max_pool2d_workspace_size(&d, &vx, &vy, &vi, &bytes), CT_ERR_INVALID_ARGUMENT,
                "ct_max_pool2d_workspace_size", subs);
    CHECK(bytes == 7);
    expect_fail(ct_max_pool2d(&d, &vx, &vy, &vi, ws.ptr(), ws.n, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_max_pool2d",
                subs);
    expect_fail(ct_avg_pool2d(&d, &vx, &vy, ws.ptr(), ws.n, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_avg_pool2d", subs);
    d.count_include_pad = 1;
    expect_fail(ct_avg_pool2d(&d, &vx, &vy, ws.ptr(), ws.n, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_avg_pool2d", subs);
    const std::vector<std::string> bsubs = {"desc->kernel[0]=2", "dilation[0]=3", "dx.shape[2]=2"};
    expect_fail(ct_avg_pool2d_backward(&d, &vy, &vdx, ws.ptr(), ws.n, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_avg_pool2d_backward", bsubs);
    expect_fail(ct_max_pool2d_backward(&d, &vy, &vi, &vdx, ws.ptr(), ws.n, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_max_pool2d_backward", bsubs);
    CHECK(y.bytes() == y0);
    CHECK(ind.bytes() == i0);
    CHECK(dx.bytes() == dx0);
    // The same along W, and for an empty batch (the geometry is refused whatever N is).
    CTPool2dDesc dw = pool_desc(1, 2);
    dw.dilation[1] = 3;
    dw.pad_begin[1] = dw.pad_end[1] = 1;
    dw.stride[1] = 1;
    HostTensor xw = HostTensor::compact(DT_F32, {0, 2, 3, 2}), yw = HostTensor::compact(DT_F32, {0, 2, 3, 1});
    CTensor vxw = xw.view(), vyw = yw.view();
    expect_fail(ct_max_pool2d_workspace_size(&dw, &vxw, &vyw, nullptr, &bytes), CT_ERR_INVALID_ARGUMENT,
                "ct_max_pool2d_workspace_size", {"column 0", "kernel[1]=2", "x.shape[3]=2"});
  }
  SECTION("an empty H (every window in the padding)") {
    CTPool2dDesc d = pool_desc(2, 1);
    d.pad_begin[0] = d.pad_end[0] = 1;
    HostTensor x = HostTensor::compact(DT_F32, {1, 1, 0, 3}), y = HostTensor::compact(DT_F32, {1, 1, 1, 3});
    y.fill_bytes(kSentinel);
    CTensor vx = x.view(), vy = y.view();
    Scratch ws(1 << 16);
    expect_fail(ct_avg_pool2d(&d, &vx, &vy, ws.ptr(), ws.n, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_avg_pool2d",
                {"row 0", "x.shape[2]=0"});
    expect_gaps(y, "y");
  }
  SECTION("exactly the geometries with such a window are refused; the others compute the reference") {
    Rng rng(3301);
    int refused = 0, accepted = 0;
    for (int it = 0; it < 1500; ++it) {
      const int64_t H = rng.int_in(1, 7), k = rng.int_in(1, 4), dil = rng.int_in(1, 6), s = rng.int_in(1, 4);
      const int64_t ext = dil * (k - 1) + 1, pb = rng.int_in(0, ext - 1), pe = rng.int_in(0, ext - 1);
      const int64_t P = ref_extent(H, k, s, dil, pb, pe);
      if (P < 1) continue;
      CTPool2dDesc d = pool_desc(k, 1);
      d.stride[0] = s, d.dilation[0] = dil, d.pad_begin[0] = pb, d.pad_end[0] = pe;
      HostTensor x = filled({1, 2, H, 2}, 4000 + it), y = HostTensor::compact(DT_F32, {1, 2, P, 2});
      HostTensor yi = HostTensor::compact(DT_F32, {1, 2, P, 2});
      y.fill_bytes(kSentinel);
      yi.fill_bytes(kSentinel);
      CTensor vx = x.view(), vy = y.view(), vyi = yi.view();
      Scratch ws(1 << 16);
      const int64_t bad = brute_padding_window(H, k, s, dil, pb, P);
      INFO("H=" << H << " kernel=" << k << " dilation=" << dil << " stride=" << s << " pads=" << pb << "," << pe
                << " P=" << P << ": brute force says " << bad);
      const CTStatus sm = ct_max_pool2d(&d, &vx, &vy, nullptr, ws.ptr(), ws.n, nullptr);
      d.count_include_pad = 1;
      const CTStatus sa = ct_avg_pool2d(&d, &vx, &vyi, ws.ptr(), ws.n, nullptr);
      if (bad >= 0) {
        ++refused;
        INFO(last_error());
        CHECK(sm == CT_ERR_INVALID_ARGUMENT);
        CHECK(sa == CT_ERR_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "row " + std::to_string(bad) + " "));
        expect_gaps(y, "y");
        continue;
      }
      ++accepted;
      REQUIRE(sm == CT_OK);
      REQUIRE(sa == CT_OK);
      std::vector<double> wmax, wavg;
      for (int64_t nc = 0; nc < 2; ++nc)
        for (int64_t p = 0; p < P; ++p)
          for (int64_t q = 0; q < 2; ++q) {
            double best = -INFINITY, sum = 0;
            for (int64_t j = 0; j < k; ++j) {
              const int64_t h = p * s - pb + j * dil;
              if (h < 0 || h >= H) continue;
              best = std::max(best, x.get((nc * H + h) * 2 + q));
              sum += x.get((nc * H + h) * 2 + q);
            }
            wmax.push_back(best);
            wavg.push_back(sum / (double)k);
          }
      expect_values(y, wmax, 0, 0, "max_pool2d y");
      expect_values(yi, wavg, 1e-6, 1e-7, "avg_pool2d y (count_include_pad)");
    }
    CHECK(refused > 20);
    CHECK(accepted > 200);
  }
  SECTION("large dilations and strides (validation only, on an empty batch): as brute force says") {
    Rng rng(3302);
    int refused = 0;
    for (int it = 0; it < 3000; ++it) {
      const int64_t H = rng.int_in(1, 6), k = rng.int_in(2, 3);
      const int64_t dil = rng.int_in(H + 1, it % 2 ? ((int64_t)1 << 40) : 40);
      const int64_t ext = dil * (k - 1) + 1, pb = rng.int_in(0, ext - 1), pe = rng.int_in(0, ext - 1);
      const int64_t span = H + pb + pe - ext;
      if (span < 0) continue;
      const int64_t s = rng.int_in(std::max<int64_t>(1, span / 500), std::max<int64_t>(1, span / 2 + 1));
      const int64_t P = span / s + 1;
      CTPool2dDesc d = pool_desc(k, 1);
      d.stride[0] = s, d.dilation[0] = dil, d.pad_begin[0] = pb, d.pad_end[0] = pe;
      HostTensor x = HostTensor::compact(DT_F32, {0, 1, H, 1}), y = HostTensor::compact(DT_F32, {0, 1, P, 1});
      CTensor vx = x.view(), vy = y.view();
      size_t bytes = 0;
      const CTStatus st = ct_max_pool2d_workspace_size(&d, &vx, &vy, nullptr, &bytes);
      const int64_t bad = brute_padding_window(H, k, s, dil, pb, P);
      INFO("H=" << H << " kernel=" << k << " dilation=" << dil << " stride=" << s << " pads=" << pb << "," << pe
                << " P=" << P << ": brute force says " << bad << "; got " << ct_status_string(st) << " '"
                << last_error() << "'");
      if (bad < 0) {
        CHECK(st == CT_OK);
      } else {
        ++refused;
        CHECK(st == CT_ERR_INVALID_ARGUMENT);
        CHECK(contains(last_error(), "row " + std::to_string(bad) + " "));
      }
    }
    CHECK(refused > 100);
  }
}

// ---------------------------------------------------------------------------
// 4. descriptor arithmetic near INT64_MAX
// ---------------------------------------------------------------------------

TEST_CASE("nn regression: pooling descriptor fields near INT64_MAX: checked arithmetic, the field named", "[nn]") {
  const int64_t M = std::numeric_limits<int64_t>::max();
  const int64_t values[] = {M, M - 1, M / 2, M / 2 + 1, ((int64_t)1 << 32) + 1, (int64_t)1 << 31, 3};
  const char* const fields[] = {"kernel", "stride", "dilation", "pad_begin", "pad_end"};
  int ok_runs = 0;
  for (int axis = 0; axis < 2; ++axis)
    for (int f = 0; f < 5; ++f)
      for (int64_t v : values)
        for (int64_t H : {(int64_t)5, M, M / 2}) {
          // A 2x2 window over x (N, 1, 5, 5) with one field set to v (and H along axis, N = 0 when H is huge).
          CTPool2dDesc d = pool_desc(2, 2);
          int64_t* field[] = {d.kernel, d.stride, d.dilation, d.pad_begin, d.pad_end};
          field[f][axis] = v;
          const int64_t k = d.kernel[axis], s = d.stride[axis] ? d.stride[axis] : k,
                        dil = d.dilation[axis] ? d.dilation[axis] : 1, pb = d.pad_begin[axis], pe = d.pad_end[axis];
          // The reference in __int128.
          const __int128 ext = (__int128)dil * (k - 1) + 1;
          const __int128 sum = (__int128)H + pb + pe;
          std::string want_sub;
          CTStatus want = CT_OK;
          int64_t P = -1;
          if (ext > M) {
            want = CT_ERR_INVALID_ARGUMENT, want_sub = "overflows int64";
          } else if (pb >= ext || pe >= ext) {
            want = CT_ERR_INVALID_ARGUMENT, want_sub = "smaller than the window";
          } else if (sum > M) {
            want = CT_ERR_INVALID_ARGUMENT, want_sub = "overflows int64";
          } else if (sum < ext) {
            want = CT_ERR_SHAPE_MISMATCH, want_sub = "smaller than the window";
          } else {
            P = (int64_t)((sum - ext) / s + 1);
            if (brute_padding_window(H, k, s, dil, pb, std::min<int64_t>(P, 1000)) >= 0)
              want = CT_ERR_INVALID_ARGUMENT, want_sub = "whole window in the padding";
          }
          const bool huge = H > 5 || P > 1000;
          std::vector<int64_t> xs = {huge ? 0 : 1, 1, 5, 5}, ys = {huge ? 0 : 1, 1, 1, 1};
          xs[2 + axis] = H;
          ys[2 + (1 - axis)] = (5 - 2) / 2 + 1;  // the other axis: kernel 2, stride 2 over 5
          ys[2 + axis] = P > 0 ? P : 1;
          HostTensor x = huge ? empty_tensor(xs) : filled(xs, 5000 + f, -1, 1);
          HostTensor y = huge ? empty_tensor(ys) : HostTensor::compact(DT_F32, ys);
          y.fill_bytes(kSentinel);
          const std::vector<unsigned char> y0 = y.bytes();
          CTensor vx = x.view(), vy = y.view();
          Scratch ws(1 << 16);
          const CTStatus got = ct_max_pool2d(&d, &vx, &vy, nullptr, ws.ptr(), ws.n, nullptr);
          const std::string msg = last_error();
          INFO("desc->" << fields[f] << "[" << axis << "]=" << v << ", x.shape[" << 2 + axis << "]=" << H << ": got "
                        << ct_status_string(got) << " '" << msg << "', want " << ct_status_string(want) << " ("
                        << want_sub << ")");
          if (want != CT_OK) {
            CHECK(got == want);
            CHECK(msg.rfind("ct_max_pool2d: ", 0) == 0);
            CHECK(contains(msg, want_sub));
            CHECK(!contains(msg, "-9223372036854775"));  // no wrapped value in the message
            CHECK(y.bytes() == y0);
            continue;
          }
          // Valid: computed, or beyond oneDNN's 2^31-1 and refused as unsupported naming a field.
          if (got == CT_ERR_UNSUPPORTED) {
            CHECK(contains(msg, "2^31-1"));
            CHECK(y.bytes() == y0);
            continue;
          }
          REQUIRE(got == CT_OK);
          if (huge) continue;
          ++ok_runs;
          std::vector<double> want_y;
          const int64_t Pq[2] = {ys[2], ys[3]};
          const int64_t st[2] = {axis == 0 ? s : 2, axis == 1 ? s : 2}, dl[2] = {axis == 0 ? dil : 1, axis == 1 ? dil : 1},
                        kk[2] = {axis == 0 ? k : 2, axis == 1 ? k : 2}, pp[2] = {axis == 0 ? pb : 0, axis == 1 ? pb : 0};
          for (int64_t p = 0; p < Pq[0]; ++p)
            for (int64_t q = 0; q < Pq[1]; ++q) {
              double best = -INFINITY;
              for (int64_t r = 0; r < kk[0]; ++r)
                for (int64_t c = 0; c < kk[1]; ++c) {
                  const __int128 h = (__int128)p * st[0] - pp[0] + (__int128)r * dl[0],
                                 w = (__int128)q * st[1] - pp[1] + (__int128)c * dl[1];
                  if (h < 0 || h >= xs[2] || w < 0 || w >= xs[3]) continue;
                  best = std::max(best, x.get((int64_t)(h * xs[3] + w)));
                }
              want_y.push_back(best);
            }
          expect_values(y, want_y, 0, 0, "y");
        }
  CHECK(ok_runs > 10);
}

TEST_CASE("nn regression: conv2d descriptor fields and extents near INT64_MAX: checked arithmetic, the field named",
          "[nn]") {
  const int64_t M = std::numeric_limits<int64_t>::max();
  const int64_t values[] = {M, M - 1, M / 2, M / 2 + 1, ((int64_t)1 << 32) + 1, (int64_t)1 << 31};
  Scratch ws(1 << 16);
  for (int axis = 0; axis < 2; ++axis) {
    for (int64_t v : values) {
      INFO("axis " << axis << ", value " << v);
      // Paddings: H + pad_begin + pad_end overflows, or an output far too large for y.
      for (int f = 0; f < 2; ++f) {
        CTConv2dDesc d = conv_desc();
        (f == 0 ? d.pad_begin : d.pad_end)[axis] = v;
        (f == 0 ? d.pad_end : d.pad_begin)[axis] = v;
        HostTensor x = filled({1, 1, 3, 3}, 61), w = filled({1, 1, 2, 2}, 62), y = HostTensor::compact(DT_F32, {1, 1, 2, 2});
        CTensor vx = x.view(), vw = w.view(), vy = y.view();
        const CTStatus s = ct_conv2d(&d, &vx, &vw, nullptr, &vy, ws.ptr(), ws.n, nullptr);
        const std::string msg = last_error();
        INFO(msg);
        CHECK((s == CT_ERR_INVALID_ARGUMENT || s == CT_ERR_SHAPE_MISMATCH));
        CHECK(!contains(msg, "-9223372036854775"));
        if (v > M / 2) {
          CHECK(s == CT_ERR_INVALID_ARGUMENT);
          CHECK(contains(msg, "pad_begin[" + std::to_string(axis) + "]"));
          CHECK(contains(msg, "overflows int64"));
        }
      }
      // Dilation with a kernel of extent 3 (overflows when v > M / 2) and of extent 1 (ignored).
      {
        CTConv2dDesc d = conv_desc();
        d.dilation[axis] = v;
        HostTensor x = filled({1, 1, 3, 3}, 63), w = filled({1, 1, 3, 3}, 64), y = HostTensor::compact(DT_F32, {1, 1, 1, 1});
        CTensor vx = x.view(), vw = w.view(), vy = y.view();
        const CTStatus s = ct_conv2d(&d, &vx, &vw, nullptr, &vy, ws.ptr(), ws.n, nullptr);
        const std::string msg = last_error();
        INFO(msg);
        CHECK((s == CT_ERR_INVALID_ARGUMENT || s == CT_ERR_SHAPE_MISMATCH));
        if (v > M / 2) CHECK(contains(msg, "desc->dilation[" + std::to_string(axis) + "]=" + std::to_string(v)));
        CHECK(!contains(msg, "-9223372036854775"));
        std::vector<int64_t> ws1 = {1, 1, 3, 3};
        ws1[2 + axis] = 1;
        std::vector<int64_t> ys = {1, 1, 1, 1};
        ys[2 + axis] = 3;
        HostTensor w1 = filled(ws1, 65), y1 = HostTensor::compact(DT_F32, ys);
        CTensor vw1 = w1.view(), vy1 = y1.view();
        const CTStatus s1 = ct_conv2d(&d, &vx, &vw1, nullptr, &vy1, ws.ptr(), ws.n, nullptr);
        INFO(last_error());
        CHECK(s1 == CT_OK);
      }
      // Stride: one output window, any stride.
      {
        CTConv2dDesc d = conv_desc();
        d.stride[axis] = v;
        std::vector<int64_t> ys = {1, 1, 2, 2};
        ys[2 + axis] = 1;
        HostTensor x = filled({1, 1, 3, 3}, 66), w = filled({1, 1, 2, 2}, 67), y = HostTensor::compact(DT_F32, ys);
        CTensor vx = x.view(), vw = w.view(), vy = y.view();
        const CTStatus s = ct_conv2d(&d, &vx, &vw, nullptr, &vy, ws.ptr(), ws.n, nullptr);
        INFO(last_error());
        REQUIRE(s == CT_OK);
        std::vector<double> want;
        for (int64_t p = 0; p < ys[2]; ++p)
          for (int64_t q = 0; q < ys[3]; ++q) {
            double acc = 0;
            for (int64_t r = 0; r < 2; ++r)
              for (int64_t c = 0; c < 2; ++c) acc += x.get((p + r) * 3 + q + c) * w.get(r * 2 + c);
            want.push_back(acc);
          }
        expect_values(y, want, 1e-5, 1e-6, "y");
      }
      // Extents: x.shape[2 + axis] = v on an empty batch; w.shape[2 + axis] = v with K = 0.
      {
        CTConv2dDesc d = conv_desc();
        d.pad_begin[axis] = d.pad_end[axis] = 5;
        std::vector<int64_t> xs = {0, 1, 3, 3};
        xs[2 + axis] = v;
        HostTensor x = empty_tensor(xs), w = filled({1, 1, 2, 2}, 68);
        HostTensor y = HostTensor::compact(DT_F32, {0, 1, 1, 1});
        CTensor vx = x.view(), vw = w.view(), vy = y.view();
        size_t bytes = 0;
        const CTStatus s = ct_conv2d_workspace_size(&d, &vx, &vw, nullptr, &vy, &bytes);
        const std::string msg = last_error();
        INFO(msg);
        CHECK((s == CT_ERR_INVALID_ARGUMENT || s == CT_ERR_SHAPE_MISMATCH));
        if (v > M - 10) {
          CHECK(s == CT_ERR_INVALID_ARGUMENT);
          CHECK(contains(msg, "x.shape[" + std::to_string(2 + axis) + "]=" + std::to_string(v)));
        }
        CHECK(!contains(msg, "-9223372036854775"));
        std::vector<int64_t> wsh = {0, 1, 2, 2};
        wsh[2 + axis] = v;
        HostTensor w0 = empty_tensor(wsh), x1 = filled({1, 1, 3, 3}, 69);
        HostTensor y0 = HostTensor::compact(DT_F32, {1, 0, 2, 2});
        d = conv_desc();
        d.dilation[axis] = 2;
        CTensor vw0 = w0.view(), vx1 = x1.view(), vy0 = y0.view();
        const CTStatus s2 = ct_conv2d_workspace_size(&d, &vx1, &vw0, nullptr, &vy0, &bytes);
        const std::string msg2 = last_error();
        INFO(msg2);
        CHECK((s2 == CT_ERR_INVALID_ARGUMENT || s2 == CT_ERR_SHAPE_MISMATCH));
        if ((__int128)2 * (v - 1) + 1 > M)  // dilation 2 * (extent - 1) + 1
          CHECK(contains(msg2, "w.shape[" + std::to_string(2 + axis) + "]=" + std::to_string(v)));
        CHECK(!contains(msg2, "-9223372036854775"));
      }
    }
  }
}

// The shape query (ct_op_output_info) infers the extents the inputs leave
// open with the same checked arithmetic: a backward op's input extent
// ((P - 1) * stride + the dilated window - the padding) and
// conv2d_backward_weight's kernel extent, on empty tensors of any extents.
namespace {

const int64_t kM = std::numeric_limits<int64_t>::max();

int64_t pick_extreme(Rng& r) {
  static const int64_t v[] = {0, 1, 2, 3, 7, (int64_t)1 << 31, ((int64_t)1 << 32) + 1, kM / 4, kM / 2 - 1, kM / 2,
                              kM / 2 + 1, kM - 10, kM - 1, kM};
  return v[r.next() % (sizeof v / sizeof v[0])];
}

// ct_op_output_info on empty float32 inputs of these shapes: the status, and out[0] on success.
CTStatus query_shapes(int32_t op, const void* desc, const std::vector<std::vector<int64_t>>& ins, CTOutputInfo* out,
                      int32_t nout, const int64_t* extent = nullptr) {
  std::vector<HostTensor> ts;
  for (const auto& sh : ins) ts.push_back(empty_tensor(sh));
  std::vector<CTensor> views;
  for (HostTensor& t : ts) views.push_back(t.view());
  std::vector<const CTensor*> ptrs;
  for (CTensor& v : views) ptrs.push_back(&v);
  CTOpArgs a;
  std::memset(&a, 0, sizeof a);
  a.struct_size = sizeof a;
  a.desc = desc;
  if (extent) a.extent[0] = extent[0], a.extent[1] = extent[1];
  return ct_op_output_info(op, &a, ptrs.data(), (int32_t)ptrs.size(), out, nout);
}

}  // namespace

// oneDNN 2.6 keeps some extents in 32-bit ints: creating its matmul with
// M = 2^32 (or K = 2^32), or its convolution with C = 2^32, divided by zero
// and killed the process (found by fuzz_nn). Plans take shapes only, so no
// memory is needed to ask.
TEST_CASE("nn regression: extents beyond 2^31-1 are refused before oneDNN sees them, the tensor named", "[nn]") {
  const int64_t G = (int64_t)1 << 32, H = (int64_t)1 << 16;
  struct Shape {
    std::vector<int64_t> s;
  };
  auto plan = [](int32_t op, const void* desc, std::vector<Shape> shapes, std::string* msg) {
    std::vector<CTensor> ts(shapes.size());
    std::vector<const CTensor*> ptrs;
    for (size_t i = 0; i < shapes.size(); ++i) {
      std::memset(&ts[i], 0, sizeof ts[i]);
      ts[i].device.device_type = CT_CPU;
      ts[i].ndim = (int32_t)shapes[i].s.size();
      ts[i].shape = shapes[i].s.data();
      ts[i].dtype = ct_dtype_of_index(CT_DT_FLOAT32);
      ptrs.push_back(shapes[i].s.empty() ? nullptr : &ts[i]);
    }
    CTPlan* const untouched = reinterpret_cast<CTPlan*>(&ts);  // what *plan must still be on failure
    CTPlan* p = untouched;
    const CTStatus st = ct_plan_create(op, desc, ptrs.data(), (int32_t)ptrs.size(), nullptr, &p);
    *msg = st == CT_OK ? "" : last_error();
    if (st == CT_OK) ct_plan_destroy(p);
    else CHECK(p == untouched);
    return st;
  };
  CTMatmulDesc mm;
  std::memset(&mm, 0, sizeof mm);
  mm.struct_size = sizeof mm;
  CTConv2dDesc cd = conv_desc();
  CTAttentionDesc ad;
  std::memset(&ad, 0, sizeof ad);
  ad.struct_size = sizeof ad;
  struct Case {
    int32_t op;
    const void* desc;
    std::vector<Shape> shapes;
    const char* want;  // the message's words, or nullptr for CT_OK
  } const cases[] = {
      {CT_OP_MATMUL, &mm, {{{G, 1}}, {{1, 3}}, {{}}, {{G, 3}}}, "a.shape[0]=4294967296 is beyond oneDNN"},
      {CT_OP_MATMUL, &mm, {{{G + 5, 1}}, {{1, 3}}, {{}}, {{G + 5, 3}}}, "a.shape[0]=4294967301"},
      {CT_OP_MATMUL, &mm, {{{2, (int64_t)1 << 31}}, {{(int64_t)1 << 31, 3}}, {{}}, {{2, 3}}}, "a.shape[1]=2147483648"},
      {CT_OP_MATMUL, &mm, {{{3, 1}}, {{1, G}}, {{G}}, {{3, G}}}, "b.shape[1]=4294967296"},
      // Each extent fits, their product (rows of one flattened GEMM) does not: a batched product.
      {CT_OP_MATMUL, &mm, {{{H, H, 2}}, {{2, 3}}, {{}}, {{H, H, 3}}}, nullptr},
      {CT_OP_CONV2D, &cd, {{{1, G, 1, 1}}, {{1, G, 1, 1}}, {{}}, {{1, 1, 1, 1}}}, "x.shape[1]=4294967296"},
      {CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &ad, {{{2, G}}, {{2, G}}, {{2, 3}}, {{}}, {{2, 3}}}, "q.shape[1]=4294967296"},
  };
  for (const Case& c : cases) {
    std::string msg;
    const CTStatus st = plan(c.op, c.desc, c.shapes, &msg);
    INFO("op " << c.op << ": " << ct_status_string(st) << " '" << msg << "'");
    if (!c.want) {
      CHECK(st == CT_OK);
      continue;
    }
    CHECK(st == CT_ERR_UNSUPPORTED);
    CHECK(msg.rfind("ct_plan_create: ", 0) == 0);
    CHECK(contains(msg, c.want));
    CHECK(contains(msg, "2^31-1"));
  }
}

TEST_CASE("nn regression: ct_op_output_info's inferred extents near INT64_MAX: checked arithmetic, the field named",
          "[nn]") {
  SECTION("conv2d_backward_data and avg_pool2d_backward: dx's extent from dy, against __int128") {
    Rng rng(3401);
    int overflowed = 0, computed = 0;
    for (int it = 0; it < 3000; ++it) {
      const bool conv = it % 2 == 0;
      const int64_t out = pick_extreme(rng), s = std::max<int64_t>(1, pick_extreme(rng)),
                    dil = std::max<int64_t>(1, pick_extreme(rng)),
                    k = conv ? std::max<int64_t>(1, pick_extreme(rng)) : rng.int_in(1, 4),  // brute force over pool taps
                    pb = rng.next() % 3 ? rng.int_in(0, 3) : pick_extreme(rng),
                    pe = rng.next() % 3 ? rng.int_in(0, 3) : pick_extreme(rng);
      const __int128 ext = (__int128)dil * (k - 1) + 1, need = (__int128)(out - 1) * s + ext,
                     in = need - pb - pe;
      CTOutputInfo o[1];
      std::memset(o, 0x7F, sizeof o);
      CTStatus st;
      if (conv) {
        CTConv2dDesc d = conv_desc();
        d.stride[0] = s, d.dilation[0] = dil, d.pad_begin[0] = pb, d.pad_end[0] = pe;
        st = query_shapes(CT_OP_CONV2D_BACKWARD_DATA, &d, {{0, 0, out, 1}, {0, 1, k, 1}}, o, 1);
      } else {
        CTPool2dDesc d = pool_desc(k, 1);
        d.stride[0] = s, d.dilation[0] = dil, d.pad_begin[0] = pb, d.pad_end[0] = pe;
        st = query_shapes(CT_OP_AVG_POOL2D_BACKWARD, &d, {{0, 1, out, 1}}, o, 1);
      }
      const std::string msg = last_error();
      INFO((conv ? "conv2d_backward_data" : "avg_pool2d_backward")
           << ": dy.shape[2]=" << out << " kernel " << k << " stride " << s << " dilation " << dil << " pads " << pb
           << "," << pe << ": " << ct_status_string(st) << " '" << msg << "'");
      CHECK(!contains(msg, "-9223372036854775"));
      if (st != CT_OK) CHECK(msg.rfind("ct_op_output_info: ", 0) == 0);
      if (ext > kM) {  // the dilated window itself (the pool's desc or the conv's w with its dilation)
        CHECK(st == CT_ERR_INVALID_ARGUMENT);
        CHECK(contains(msg, "overflows int64"));
        continue;
      }
      if (!conv && (pb >= ext || pe >= ext)) {
        CHECK(st == CT_ERR_INVALID_ARGUMENT);
        continue;
      }
      if (need > kM) {
        ++overflowed;
        CHECK(st == CT_ERR_INVALID_ARGUMENT);
        CHECK(contains(msg, "overflows int64"));
        CHECK(contains(msg, "dy.shape[2]=" + std::to_string(out)));
        CHECK(contains(msg, "desc->stride[0]=" + std::to_string(s)));
        continue;
      }
      if (in < 1 || out < 1) {  // no input gives dy: refused, never a wrapped extent
        CHECK(st != CT_OK);
        continue;
      }
      if (!conv && brute_padding_window((int64_t)in, k, s, dil, pb, std::min<int64_t>(out, 1000)) >= 0) {
        CHECK(st == CT_ERR_INVALID_ARGUMENT);
        continue;
      }
      if (!conv && st == CT_ERR_INVALID_ARGUMENT && out > 1000) continue;  // a padding window past the brute force's reach
      REQUIRE(st == CT_OK);
      ++computed;
      CHECK(o[0].ndim == 4);
      CHECK(o[0].shape[2] == (int64_t)in);
    }
    CHECK(overflowed > 100);
    CHECK(computed > 100);
  }
  SECTION("conv2d_backward_weight: the kernel extent from x and dy") {
    CTConv2dDesc d = conv_desc();
    CTOutputInfo o[2];
    // x + pads overflows
    d.pad_begin[0] = d.pad_end[0] = 5;
    CTStatus st = query_shapes(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, {{0, 1, kM - 3, 1}, {0, 1, 1, 1}}, o, 2);
    std::string msg = last_error();
    INFO(msg);
    CHECK(st == CT_ERR_INVALID_ARGUMENT);
    CHECK(msg.rfind("ct_op_output_info: ", 0) == 0);
    CHECK(contains(msg, "x.shape[2]=" + std::to_string(kM - 3)));
    CHECK(contains(msg, "overflows int64"));
    // (P - 1) * stride overflows
    d = conv_desc();
    d.stride[0] = kM / 2;
    st = query_shapes(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, {{0, 1, 5, 1}, {0, 1, 4, 1}}, o, 2);
    msg = last_error();
    INFO(msg);
    CHECK(st == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(msg, "dy.shape[2]=4"));
    CHECK(contains(msg, "desc->stride[0]=" + std::to_string(kM / 2)));
    CHECK(contains(msg, "overflows int64"));
    // an empty dy along H with a large stride: x + pads - 1 + stride overflows
    d.stride[0] = kM - 1;
    st = query_shapes(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, {{0, 1, 5, 1}, {0, 1, 0, 1}}, o, 2);
    msg = last_error();
    INFO(msg);
    CHECK(st == CT_ERR_INVALID_ARGUMENT);
    CHECK(!contains(msg, "-9223372036854775"));
    // a huge but exact kernel: x (H = M - 10), dy (P = 1), stride 1 -> R = M - 10
    d = conv_desc();
    st = query_shapes(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, {{0, 1, kM - 10, 1}, {0, 1, 1, 1}}, o, 2);
    INFO(last_error());
    REQUIRE(st == CT_OK);
    CHECK(o[0].shape[2] == kM - 10);
    // the same with padding M - 10 on both sides overflows H + pads, named
    d.pad_begin[0] = d.pad_end[0] = kM - 10;
    st = query_shapes(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, {{0, 1, 3, 1}, {0, 1, 1, 1}}, o, 2);
    msg = last_error();
    INFO(msg);
    CHECK(st == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(msg, "desc->pad_begin[0]=" + std::to_string(kM - 10)));
    // dilation 2 over x (H = M - 11), dy P = 1, stride 1: 2 * (R - 1) = M - 12, odd: none fits, said so
    d = conv_desc();
    d.dilation[0] = 2;
    st = query_shapes(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, {{0, 1, kM - 11, 1}, {0, 1, 1, 1}}, o, 2);
    msg = last_error();
    INFO(msg);
    CHECK(st == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(msg, "none fits"));
    // given, the hint is checked like a tensor's extent: dilation 2 * (R - 1) + 1 overflows
    const int64_t hint[2] = {kM / 2 + 2, 1};
    st = query_shapes(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, {{0, 1, kM - 10, 1}, {0, 1, 1, 1}}, o, 2, hint);
    msg = last_error();
    INFO(msg);
    CHECK(st == CT_ERR_INVALID_ARGUMENT);
    CHECK(contains(msg, "dw.shape[2]=" + std::to_string(kM / 2 + 2)));
    CHECK(contains(msg, "overflows int64"));
  }
}

// ---------------------------------------------------------------------------
// 5. empty inputs with non-empty outputs
// ---------------------------------------------------------------------------

TEST_CASE("nn regression: empty inputs with non-empty outputs give PyTorch's results", "[nn]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Scratch ws(1 << 16);
  for (int32_t op : {CT_OP_CONV2D, CT_OP_CONV2D_BACKWARD_WEIGHT, CT_OP_BATCH_NORM_TRAINING, CT_OP_BATCH_NORM_BACKWARD,
                     CT_OP_LAYER_NORM, CT_OP_LAYER_NORM_BACKWARD}) {
    const CTDevice cpu = {CT_CPU, 0};
    CHECK(ct_op_supported(op, cpu, dtype(DT_F32).dt) == CT_OK);
  }
  SECTION("conv2d_backward_weight with N = 0: dw = 0, dbias = 0 (strided, gaps untouched)") {
    const CTConv2dDesc d = conv_desc();
    HostTensor x = HostTensor::compact(DT_F32, {0, 3, 5, 5}), dy = HostTensor::compact(DT_F32, {0, 4, 4, 4});
    HostTensor dw = HostTensor::compact(DT_F32, {4, 3, 2, 2}), db = HostTensor::strided(DT_F32, {4}, {-2}, 1);
    dw.fill_bytes(kSentinel), db.fill_bytes(kSentinel);
    CTensor vx = x.view(), vdy = dy.view(), vdw = dw.view(), vdb = db.view();
    size_t bytes = 1;
    REQUIRE(ct_conv2d_backward_weight_workspace_size(&d, &vx, &vdy, &vdw, &vdb, &bytes) == CT_OK);
    CHECK(bytes == 0);
    const CTStatus s = ct_conv2d_backward_weight(&d, &vx, &vdy, &vdw, &vdb, nullptr, 0, nullptr);
    INFO(last_error());
    REQUIRE(s == CT_OK);
    expect_values(dw, std::vector<double>(48, 0.0), 0, 0, "dw");
    expect_values(db, std::vector<double>(4, 0.0), 0, 0, "dbias");
    expect_gaps(db, "dbias");
    // Through a plan, and without dbias.
    dw.fill_bytes(kSentinel);
    std::vector<HostTensor*> ts = {&x, &dy, &dw, nullptr};
    REQUIRE(run_plan(CT_OP_CONV2D_BACKWARD_WEIGHT, &d, ts) == CT_OK);
    expect_values(dw, std::vector<double>(48, 0.0), 0, 0, "dw (plan)");
  }
  // The gradient of that y = act(bias): dbias is dy's sum whatever x holds.
  SECTION("conv2d_backward_weight with C = 0: dw is empty, dbias = dy summed over (N, P, Q)") {
    const CTConv2dDesc d = conv_desc();
    HostTensor x = HostTensor::compact(DT_F32, {2, 0, 5, 5}), dy = filled({2, 4, 4, 4}, 71);
    HostTensor dw = HostTensor::compact(DT_F32, {4, 0, 2, 2}), db = HostTensor::strided(DT_F32, {4}, {3}, 1);
    db.fill_bytes(kSentinel);
    CTensor vx = x.view(), vdy = dy.view(), vdw = dw.view(), vdb = db.view();
    const CTStatus s = ct_conv2d_backward_weight(&d, &vx, &vdy, &vdw, &vdb, ws.ptr(), ws.n, nullptr);
    INFO(last_error());
    REQUIRE(s == CT_OK);
    expect_values(db, channel_sums(dy), 1e-6, 1e-6, "dbias");
    expect_gaps(db, "dbias");
  }
  // conv2d with C = 0 sums nothing, as torch's linear with K = 0 (torch's own
  // conv2d answers an empty (N, 0, P, Q) there, not the (N, K, P, Q) asked for).
  SECTION("conv2d with C = 0: y = act(bias), or 0; conv2d_backward_data with K = 0: dx = 0") {
    HostTensor x = HostTensor::compact(DT_F32, {2, 0, 4, 4}), w = HostTensor::compact(DT_F32, {3, 0, 3, 3});
    HostTensor bias = HostTensor::compact(DT_F32, {3});
    bias.set(0, -1.5), bias.set(1, 0.25), bias.set(2, 2.0);
    for (int act : {(int)CT_ACTIVATION_NONE, (int)CT_ACTIVATION_RELU}) {
      for (bool with_bias : {true, false}) {
        CTConv2dDesc d = conv_desc();
        d.activation = act;
        HostTensor y = HostTensor::strided(DT_F32, {2, 3, 2, 2}, {1, 2, 12, 6}, 0);
        y.fill_bytes(kSentinel);
        CTensor vx = x.view(), vw = w.view(), vb = bias.view(), vy = y.view();
        const CTStatus s = ct_conv2d(&d, &vx, &vw, with_bias ? &vb : nullptr, &vy, ws.ptr(), ws.n, nullptr);
        INFO("activation " << act << (with_bias ? ", bias" : ", no bias") << ": " << last_error());
        REQUIRE(s == CT_OK);
        std::vector<double> want;
        for (int64_t i = 0; i < 24; ++i) {
          double v = with_bias ? bias.get((i / 4) % 3) : 0.0;
          want.push_back(act == CT_ACTIVATION_RELU && v < 0 ? 0.0 : v);
        }
        expect_values(y, want, 0, 0, "y");
      }
    }
    const CTConv2dDesc d = conv_desc();
    HostTensor dy = HostTensor::compact(DT_F32, {2, 0, 2, 2}), w0 = HostTensor::compact(DT_F32, {0, 3, 3, 3});
    HostTensor dx = HostTensor::compact(DT_F32, {2, 3, 4, 4});
    dx.fill_bytes(kSentinel);
    CTensor vdy = dy.view(), vw0 = w0.view(), vdx = dx.view();
    const CTStatus s = ct_conv2d_backward_data(&d, &vdy, &vw0, &vdx, ws.ptr(), ws.n, nullptr);
    INFO(last_error());
    REQUIRE(s == CT_OK);
    expect_values(dx, std::vector<double>(96, 0.0), 0, 0, "dx");
  }
  SECTION("batch_norm_training with N * H * W = 0: mean = 0, invstd = NaN; batch_norm_backward: dscale = dshift = 0") {
    CTBatchNormDesc d = {sizeof(CTBatchNormDesc), 0, 1e-5};
    for (std::vector<int64_t> xs : {std::vector<int64_t>{0, 3, 4, 4}, std::vector<int64_t>{2, 3, 0}}) {
      INFO("x.shape " << shape_str(xs));
      HostTensor x = HostTensor::compact(DT_F32, xs), y = HostTensor::compact(DT_F32, xs);
      HostTensor scale = filled({3}, 72), shift = filled({3}, 73);
      HostTensor mean = HostTensor::strided(DT_F32, {3}, {2}, 1), invstd = HostTensor::compact(DT_F32, {3});
      mean.fill_bytes(kSentinel), invstd.fill_bytes(kSentinel);
      CTensor vx = x.view(), vy = y.view(), vs = scale.view(), vh = shift.view(), vm = mean.view(), vi = invstd.view();
      const CTStatus s = ct_batch_norm_training(&d, &vx, &vs, &vh, &vy, &vm, &vi, ws.ptr(), ws.n, nullptr);
      INFO(last_error());
      REQUIRE(s == CT_OK);
      expect_values(mean, {0, 0, 0}, 0, 0, "mean");
      expect_values(invstd, {nan, nan, nan}, 0, 0, "invstd");
      expect_gaps(mean, "mean");
      HostTensor dy = HostTensor::compact(DT_F32, xs), dx = HostTensor::compact(DT_F32, xs);
      HostTensor dscale = HostTensor::compact(DT_F32, {3}), dshift = HostTensor::compact(DT_F32, {3});
      dscale.fill_bytes(kSentinel), dshift.fill_bytes(kSentinel);
      CTensor vdy = dy.view(), vdx = dx.view(), vds = dscale.view(), vdh = dshift.view();
      const CTStatus sb = ct_batch_norm_backward(&d, &vx, &vdy, &vm, &vi, &vs, &vdx, &vds, &vdh, ws.ptr(), ws.n, nullptr);
      INFO(last_error());
      REQUIRE(sb == CT_OK);
      expect_values(dscale, {0, 0, 0}, 0, 0, "dscale");
      expect_values(dshift, {0, 0, 0}, 0, 0, "dshift");
    }
  }
  SECTION("layer_norm over 0 elements: mean = 0, rstd = NaN (torch's native_layer_norm); 0 rows") {
    CTLayerNormDesc d = {sizeof(CTLayerNormDesc), 1, 1e-5};
    HostTensor x = HostTensor::compact(DT_F32, {2, 3, 0}), y = HostTensor::compact(DT_F32, {2, 3, 0});
    for (bool keep : {false, true}) {
      HostTensor mean = HostTensor::compact(DT_F32, keep ? std::vector<int64_t>{2, 3, 1} : std::vector<int64_t>{2, 3});
      HostTensor rstd = HostTensor::compact(DT_F32, keep ? std::vector<int64_t>{2, 3, 1} : std::vector<int64_t>{2, 3});
      mean.fill_bytes(kSentinel), rstd.fill_bytes(kSentinel);
      CTensor vx = x.view(), vy = y.view(), vm = mean.view(), vr = rstd.view();
      const CTStatus s = ct_layer_norm(&d, &vx, nullptr, nullptr, &vy, &vm, &vr, ws.ptr(), ws.n, nullptr);
      INFO(last_error());
      REQUIRE(s == CT_OK);
      expect_values(mean, std::vector<double>(6, 0.0), 0, 0, "mean");
      expect_values(rstd, std::vector<double>(6, nan), 0, 0, "rstd");
    }
    // No rows: y, mean and rstd are empty (nothing to do), the backward's dscale and dshift are 0.
    HostTensor x0 = HostTensor::compact(DT_F32, {0, 5}), y0 = HostTensor::compact(DT_F32, {0, 5});
    HostTensor m0 = HostTensor::compact(DT_F32, {0}), r0 = HostTensor::compact(DT_F32, {0});
    HostTensor scale = filled({5}, 74), dscale = HostTensor::compact(DT_F32, {5}), dshift = HostTensor::compact(DT_F32, {5});
    dscale.fill_bytes(kSentinel), dshift.fill_bytes(kSentinel);
    CTensor vx = x0.view(), vy = y0.view(), vm = m0.view(), vr = r0.view(), vs = scale.view(), vds = dscale.view(),
            vdh = dshift.view();
    REQUIRE(ct_layer_norm(&d, &vx, &vs, nullptr, &vy, &vm, &vr, ws.ptr(), ws.n, nullptr) == CT_OK);
    const CTStatus s = ct_layer_norm_backward(&d, &vx, &vx, &vm, &vr, &vs, &vy, &vds, &vdh, ws.ptr(), ws.n, nullptr);
    INFO(last_error());
    REQUIRE(s == CT_OK);
    expect_values(dscale, std::vector<double>(5, 0.0), 0, 0, "dscale");
    expect_values(dshift, std::vector<double>(5, 0.0), 0, 0, "dshift");
  }
}

// ---------------------------------------------------------------------------
// 6. messages name the entry point called
// ---------------------------------------------------------------------------

// Every index value against a brute-force window test: each output's index
// in turn set to every position of the plane, a step outside it and the
// int64 extremes, with the rest valid; accepted exactly when the position is
// one of that output's window taps inside x, and dx untouched otherwise.
// Dense indices (the whole-plane check), rows of indices with a gap (the
// row-wise check), and a 5-row window (the generic pass of the plane check).
TEST_CASE("max_pool2d_backward accepts exactly the indices inside their windows", "[nn]") {
  struct G { int64_t k, s, pad, H, W; bool gap; };
  for (const G& g : {G{3, 2, 1, 7, 9, false}, G{3, 2, 1, 7, 9, true}, G{5, 1, 2, 6, 5, false}, G{2, 2, 0, 4, 6, false}}) {
    CTPool2dDesc d = pool_desc(g.k, g.k);
    d.stride[0] = d.stride[1] = g.s;
    for (int i = 0; i < 2; ++i) d.pad_begin[i] = d.pad_end[i] = g.pad;
    const int64_t P = (g.H + 2 * g.pad - g.k) / g.s + 1, Q = (g.W + 2 * g.pad - g.k) / g.s + 1, C = 2;
    INFO("k " << g.k << " s " << g.s << " pad " << g.pad << " x " << g.H << "x" << g.W << (g.gap ? ", rows with a gap" : ""));
    auto inside = [&](int64_t pp, int64_t q, int64_t v) {
      if (v < 0 || v >= g.H * g.W) return false;
      const int64_t h = v / g.W, w = v % g.W, dh = h - (pp * g.s - g.pad), dw = w - (q * g.s - g.pad);
      return dh >= 0 && dh < g.k && dw >= 0 && dw < g.k;
    };
    // A valid index per output: its first tap inside x.
    std::vector<int64_t> good((size_t)(P * Q));
    for (int64_t pp = 0; pp < P; ++pp)
      for (int64_t q = 0; q < Q; ++q)
        for (int64_t v = g.H * g.W - 1; v >= 0; --v)
          if (inside(pp, q, v)) good[(size_t)(pp * Q + q)] = v;
    const int64_t rs = g.gap ? Q + 3 : Q;  // the row stride of the indices, in elements
    HostTensor ind = HostTensor::strided(DT_I64, {1, C, P, Q}, {C * P * rs, P * rs, rs, 1}, 0);
    HostTensor dy = filled({1, C, P, Q}, 7), dx = HostTensor::compact(DT_F32, {1, C, g.H, g.W});
    CTensor vdy = dy.view(), vi = ind.view(), vdx = dx.view();
    auto set_all = [&]() {
      for (int64_t c = 0; c < C; ++c)
        for (int64_t l = 0; l < P * Q; ++l) ind.set_i(c * P * Q + l, good[(size_t)l]);
    };
    set_all();
    REQUIRE(ct_max_pool2d_backward(&d, &vdy, &vi, &vdx, nullptr, 0, nullptr) == CT_OK);
    int wrong = 0;
    for (int64_t l = 0; l < P * Q; ++l) {
      std::vector<int64_t> vs{std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), -g.W - 1};
      for (int64_t v = -1; v <= g.H * g.W; ++v) vs.push_back(v);
      for (int64_t v : vs) {
        ind.set_i(P * Q + l, v);  // the second plane
        dx.fill_bytes(0xA5);
        const std::vector<unsigned char> dx0 = dx.bytes();
        const CTStatus st = ct_max_pool2d_backward(&d, &vdy, &vi, &vdx, nullptr, 0, nullptr);
        const bool want = inside(l / Q, l % Q, v);
        if ((st == CT_OK) != want || (st != CT_OK && dx.bytes() != dx0)) {
          if (++wrong <= 5) FAIL_CHECK("output " << l << " index " << v << ": " << (st == CT_OK ? "accepted" : last_error()));
        }
      }
      ind.set_i(P * Q + l, good[(size_t)l]);
    }
    CHECK(wrong == 0);
  }
}

TEST_CASE("nn regression: a bad index found while executing names the entry point called", "[nn]") {
  CTPool2dDesc d = pool_desc(2, 2);
  HostTensor dy = filled({1, 1, 2, 2}, 81), ind = HostTensor::compact(DT_I64, {1, 1, 2, 2});
  HostTensor dx = HostTensor::compact(DT_F32, {1, 1, 4, 4});
  const int64_t pos[4] = {0, 2, 8, 99};  // 99 is in no window
  for (int i = 0; i < 4; ++i) ind.set_i(i, pos[i]);
  dx.fill_bytes(kSentinel);
  const std::vector<unsigned char> dx0 = dx.bytes();
  CTensor vdy = dy.view(), vi = ind.view(), vdx = dx.view();
  const CTensor* ts[3] = {&vdy, &vi, &vdx};
  CTPlan* plan = nullptr;
  REQUIRE(ct_plan_create(CT_OP_MAX_POOL2D_BACKWARD, &d, ts, 3, nullptr, &plan) == CT_OK);
  size_t bytes = 0;
  REQUIRE(ct_plan_workspace_size(plan, &bytes) == CT_OK);
  Scratch ws(bytes);
  expect_fail(ct_plan_execute(plan, ts, 3, ws.ptr(), bytes, nullptr), CT_ERR_INVALID_ARGUMENT, "ct_plan_execute",
              {"indices", "99"});
  CHECK(!contains(last_error(), "ct_max_pool2d_backward"));
  ct_plan_destroy(plan);
  CHECK(dx.bytes() == dx0);
  // The direct call (which may find the same plan in the cache) names itself.
  expect_fail(ct_max_pool2d_backward(&d, &vdy, &vi, &vdx, ws.ptr(), bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
              "ct_max_pool2d_backward", {"indices", "99"});
  CHECK(dx.bytes() == dx0);
  // Any int64 is looked at without overflow (window offsets are formed only for positions inside x).
  for (int64_t v : {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), (int64_t)-1}) {
    ind.set_i(3, v);
    expect_fail(ct_max_pool2d_backward(&d, &vdy, &vi, &vdx, ws.ptr(), bytes, nullptr), CT_ERR_INVALID_ARGUMENT,
                "ct_max_pool2d_backward", {"indices", std::to_string(v)});
    CHECK(dx.bytes() == dx0);
  }
}
