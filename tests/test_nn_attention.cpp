// test_nn_attention.cpp — ct_scaled_dot_product_attention against the
// reference: shapes and batch broadcasting, every mask form, both causal
// rules, strided operands, query blocks with a tail, rows with no key left,
// NaN, thread counts (bit-identical), and the refusals of bad input (status,
// message naming the argument, output untouched).
#include <catch2/catch.hpp>

#include <ctensor/ctensor.h>
#include <ctensor/ctensor_nn.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test_ref.h"
#include "test_util.h"

using namespace ctt;

namespace {

struct Ws {
  std::vector<unsigned char> store;
  unsigned char* p = nullptr;
  size_t n = 0;
  explicit Ws(size_t bytes) : store(bytes + 128, 0x5A), n(bytes) {
    p = store.data() + (64 - (uintptr_t)store.data() % 64) % 64;
  }
  bool guard_intact() const {
    for (size_t i = n; i < n + 32 && p + i < store.data() + store.size(); ++i)
      if (p[i] != 0x5A) return false;
    return true;
  }
};

struct Problem {
  std::string label;
  std::vector<int64_t> q, k, v, mask, out;  // mask empty: none (mask_ndim0: a 0-d mask)
  int mask_d = -1;                          // DT_BOOL, DT_F32 or the data dtype; -1: none
  int32_t causal = 0;
  double scale = 0;
  bool q_transposed = false;                // q stored as (..., E, L)
};

HostTensor make(int d, const std::vector<int64_t>& shape, bool transposed_last2 = false) {
  if (!transposed_last2 || shape.size() < 2) return HostTensor::compact(d, shape, false);
  std::vector<int64_t> st(shape.size());
  const size_t n = shape.size();
  // (..., L, E) stored as (..., E, L)
  int64_t s = 1;
  st[n - 2] = 1;
  s = shape[n - 2];
  st[n - 1] = s;
  s *= shape[n - 1];
  for (size_t i = n - 2; i-- > 0;) {
    st[i] = s;
    s *= shape[i];
  }
  return HostTensor::strided(d, shape, st);
}

void fill(HostTensor& t, std::mt19937& rng, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.d == DT_BOOL) t.set_i(i, rng() % 4 != 0);
    else t.set(i, u(rng));
  }
}

std::vector<double> values(const HostTensor& t) {
  std::vector<double> v((size_t)t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) v[(size_t)i] = t.get(i);
  return v;
}

CTStatus run(const CTAttentionDesc& d, HostTensor& q, HostTensor& k, HostTensor& v, HostTensor* m, HostTensor& o,
             void* stream = nullptr, bool* guard_ok = nullptr) {
  CTensor qv = q.view(), kv = k.view(), vv = v.view(), ov = o.view(), mv;
  if (m) mv = m->view();
  size_t bytes = 0;
  CTStatus s = ct_scaled_dot_product_attention_workspace_size(&d, &qv, &kv, &vv, m ? &mv : nullptr, &ov, &bytes);
  if (s != CT_OK) return s;
  Ws ws(bytes);
  s = ct_scaled_dot_product_attention(&d, &qv, &kv, &vv, m ? &mv : nullptr, &ov, bytes ? ws.p : nullptr, bytes,
                                      stream);
  if (guard_ok) *guard_ok = ws.guard_intact();
  return s;
}

bool supported(int d) {
  CTDevice cpu = {CT_CPU, 0};
  return ct_op_supported(CT_OP_SCALED_DOT_PRODUCT_ATTENTION, cpu, dtype(d).dt) == CT_OK;
}

void check_problem(const Problem& p, int d, uint32_t seed) {
  INFO(p.label << " (" << dtype(d).name << ")");
  std::mt19937 rng(seed);
  HostTensor q = make(d, p.q, p.q_transposed), k = make(d, p.k), v = make(d, p.v), o = make(d, p.out);
  fill(q, rng, -2, 2);
  fill(k, rng, -2, 2);
  fill(v, rng, -2, 2);
  HostTensor m;
  if (p.mask_d >= 0) {
    m = make(p.mask_d, p.mask);
    fill(m, rng, -2, 2);
  }
  CTAttentionDesc desc = {sizeof(CTAttentionDesc), p.causal, p.scale};
  bool guard = true;
  const CTStatus s = run(desc, q, k, v, p.mask_d >= 0 ? &m : nullptr, o, nullptr, &guard);
  INFO(last_error());
  REQUIRE(s == CT_OK);
  CHECK(guard);
  std::vector<ctref::Array> r = reference(ref_call(CT_OP_SCALED_DOT_PRODUCT_ATTENTION, &desc),
                                          {&q, &k, &v, p.mask_d >= 0 ? &m : nullptr}, {{DT_F64, p.out}});
  const std::vector<double> got = values(o);
  // float32: rounding of E-term dot products and S-term sums; bfloat16 /
  // float16: the weights rounded to the data dtype (2^-9 relative each, so
  // 2^-9 of max |v|) and the output rounded once.
  const double rtol = d == DT_F32 ? 1e-5 : d == DT_BF16 ? 8e-3 : 1e-3, atol = d == DT_F32 ? 2e-5 : 1.2e-2;
  int64_t bad = 0;
  std::string first;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(got[i] - r[0].f[i]);
    if (!(e <= atol + rtol * std::fabs(r[0].f[i])) && !(std::isnan(got[i]) && std::isnan(r[0].f[i]))) {
      if (++bad <= 5) first += " [" + std::to_string(i) + "] " + std::to_string(got[i]) + " vs " + std::to_string(r[0].f[i]);
    }
  }
  INFO(bad << " of " << got.size() << " outside rtol " << rtol << " atol " << atol << ":" << first);
  CHECK(bad == 0);
}

std::vector<Problem> problems() {
  return {
      {"(2,3,5,8) S=7 Ev=6", {2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 6}, {}, {2, 3, 5, 6}},
      {"causal top-left (1,2,9,16)", {1, 2, 9, 16}, {1, 2, 9, 16}, {1, 2, 9, 16}, {}, {1, 2, 9, 16}, -1, 1},
      {"causal bottom-right L=5 S=7", {2, 5, 8}, {2, 7, 8}, {2, 7, 8}, {}, {2, 5, 8}, -1, 2},
      {"causal bottom-right L=7 > S=4 (rows with no key)", {1, 7, 8}, {1, 4, 8}, {1, 4, 3}, {}, {1, 7, 3}, -1, 2},
      {"bool mask (5,7), batch (2,1) x (1,3)", {2, 1, 5, 4}, {1, 3, 7, 4}, {1, 3, 7, 4}, {5, 7}, {2, 3, 5, 4},
       DT_BOOL},
      {"float32 mask (2,1,5,7) + top-left causal", {2, 3, 5, 8}, {2, 3, 7, 8}, {2, 3, 7, 8}, {2, 1, 5, 7},
       {2, 3, 5, 8}, DT_F32, 1},
      {"mask (7,) scale 0.3, q transposed", {3, 6, 5}, {3, 7, 5}, {3, 7, 2}, {7}, {3, 6, 2}, DT_F32, 0, 0.3, true},
      {"2-d, mask (4,1)", {4, 16}, {6, 16}, {6, 8}, {4, 1}, {4, 8}, DT_F32},
      {"query blocks with a tail: L=300 S=700 E=40", {1, 300, 40}, {1, 700, 40}, {1, 700, 24}, {}, {1, 300, 24}},
      {"L=130 S=140 causal", {1, 2, 130, 16}, {1, 2, 140, 16}, {1, 2, 140, 16}, {}, {1, 2, 130, 16}, -1, 1},
      {"S=0: no keys", {2, 3, 4}, {2, 0, 4}, {2, 0, 5}, {}, {2, 3, 5}},
      {"E=0: uniform weights", {2, 3, 0}, {2, 4, 0}, {2, 4, 5}, {3, 4}, {2, 3, 5}, DT_F32},
  };
}

}  // namespace

TEST_CASE("scaled_dot_product_attention float32 against the reference: shapes, masks, causal rules, layouts",
          "[nn][attention]") {
  uint32_t seed = 1;
  for (const Problem& p : problems()) check_problem(p, DT_F32, seed++);
}

TEST_CASE("scaled_dot_product_attention bfloat16 and float16: correct where supported, else refused with a reason",
          "[nn][attention]") {
  for (int d : {DT_BF16, DT_F16}) {
    if (!supported(d)) {
      INFO(dtype(d).name << ": " << last_error());
      CHECK(!last_error().empty());
      HostTensor q = make(d, {2, 4}), o = make(d, {2, 4});
      o.fill_bytes(0xEE);
      const std::vector<unsigned char> before = o.bytes();
      CTAttentionDesc desc = {sizeof(CTAttentionDesc), 0, 0};
      CHECK(run(desc, q, q, q, nullptr, o) == CT_ERR_UNSUPPORTED);
      CHECK(o.bytes() == before);
      continue;
    }
    uint32_t seed = 100;
    for (Problem p : problems()) {
      if (p.mask_d == DT_F32 && seed % 2) p.mask_d = d;  // masks of the data dtype too
      check_problem(p, d, seed++);
    }
  }
}

TEST_CASE("scaled_dot_product_attention: masked rows give 0, NaN stays in its row, threads give the same bits",
          "[nn][attention]") {
  std::mt19937 rng(7);
  HostTensor q = make(DT_F32, {2, 6, 8}), k = make(DT_F32, {2, 9, 8}), v = make(DT_F32, {2, 9, 4}),
             m = make(DT_BOOL, {6, 9}), o = make(DT_F32, {2, 6, 4});
  fill(q, rng, -2, 2);
  fill(k, rng, -2, 2);
  fill(v, rng, -2, 2);
  for (int64_t i = 0; i < m.numel(); ++i) m.set_i(i, i / 9 != 2);  // row 2: every key masked
  q.set(1 * 8 + 3, std::nan(""));                                   // batch 0, query 1
  CTAttentionDesc desc = {sizeof(CTAttentionDesc), 0, 0};
  REQUIRE(run(desc, q, k, v, &m, o) == CT_OK);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 6; ++i)
      for (int64_t c = 0; c < 4; ++c) {
        const double y = o.get((b * 6 + i) * 4 + c);
        INFO("batch " << b << " query " << i << " column " << c << ": " << y);
        if (i == 2) CHECK(y == 0.0);
        else if (b == 0 && i == 1) CHECK(std::isnan(y));
        else CHECK(std::isfinite(y));
      }
  // threads: each query block is one thread's, so the bits cannot depend on the count
  HostTensor big_q = make(DT_F32, {3, 4, 200, 32}), big_k = make(DT_F32, {3, 4, 300, 32}),
             big_v = make(DT_F32, {3, 4, 300, 32}), o1 = make(DT_F32, {3, 4, 200, 32}),
             o2 = make(DT_F32, {3, 4, 200, 32});
  fill(big_q, rng, -2, 2);
  fill(big_k, rng, -2, 2);
  fill(big_v, rng, -2, 2);
  CTCpuStream one = cpu_stream(1);
  REQUIRE(run(desc, big_q, big_k, big_v, nullptr, o1, &one) == CT_OK);
  REQUIRE(run(desc, big_q, big_k, big_v, nullptr, o2) == CT_OK);
  CHECK(o1.bytes() == o2.bytes());
}

TEST_CASE("scaled_dot_product_attention refuses bad input with the argument named, output untouched",
          "[nn][attention]") {
  HostTensor q = make(DT_F32, {2, 3, 8}), k = make(DT_F32, {2, 5, 8}), v = make(DT_F32, {2, 5, 4}),
             o = make(DT_F32, {2, 3, 4});
  o.fill_bytes(0xEE);
  const std::vector<unsigned char> before = o.bytes();
  CTAttentionDesc good = {sizeof(CTAttentionDesc), 0, 0};
  auto expect = [&](CTStatus got, CTStatus want, const std::vector<std::string>& words) {
    const std::string msg = last_error();
    INFO(ct_status_string(got) << ": " << msg);
    CHECK(got == want);
    CHECK(msg.find("ct_scaled_dot_product_attention") != std::string::npos);
    for (const std::string& w : words) CHECK(msg.find(w) != std::string::npos);
    CHECK(o.bytes() == before);
  };
  {
    HostTensor k2 = make(DT_F32, {2, 5, 7});
    expect(run(good, q, k2, v, nullptr, o), CT_ERR_SHAPE_MISMATCH, {"q.shape=[2,3,8]", "k.shape=[2,5,7]"});
  }
  {
    HostTensor v2 = make(DT_F32, {2, 6, 4});
    expect(run(good, q, k, v2, nullptr, o), CT_ERR_SHAPE_MISMATCH, {"v.shape=[2,6,4]"});
  }
  {
    HostTensor o2 = make(DT_F32, {2, 3, 5});
    o2.fill_bytes(0xEE);
    const std::vector<unsigned char> b2 = o2.bytes();
    CHECK(run(good, q, k, v, nullptr, o2) == CT_ERR_SHAPE_MISMATCH);
    CHECK(last_error().find("out.shape=[2,3,5]") != std::string::npos);
    CHECK(o2.bytes() == b2);
  }
  {
    HostTensor m = make(DT_I32, {3, 5});
    expect(run(good, q, k, v, &m, o), CT_ERR_DTYPE_MISMATCH, {"mask.dtype=int32"});
  }
  {
    HostTensor m = make(DT_F32, {4, 5});
    expect(run(good, q, k, v, &m, o), CT_ERR_SHAPE_MISMATCH, {"mask.shape=[4,5]"});
  }
  {
    HostTensor kb = make(DT_F32, {3, 5, 8});
    expect(run(good, q, kb, v, nullptr, o), CT_ERR_SHAPE_MISMATCH, {"do not broadcast"});
  }
  {
    CTAttentionDesc bad = good;
    bad.causal = 3;
    expect(run(bad, q, k, v, nullptr, o), CT_ERR_INVALID_ARGUMENT, {"desc->causal=3"});
    bad = good;
    bad.scale = std::numeric_limits<double>::infinity();
    expect(run(bad, q, k, v, nullptr, o), CT_ERR_INVALID_ARGUMENT, {"desc->scale=inf"});
    bad = good;
    bad.struct_size = 4;
    expect(run(bad, q, k, v, nullptr, o), CT_ERR_INVALID_ARGUMENT, {"struct_size=4"});
  }
  {
    HostTensor v64 = make(DT_F64, {2, 5, 4});
    expect(run(good, q, k, v64, nullptr, o), CT_ERR_DTYPE_MISMATCH, {"v.dtype=float64"});
  }
  {  // the workspace the query asks for, and not a byte less
    CTensor qv = q.view(), kv = k.view(), vv = v.view(), ov = o.view();
    size_t bytes = 0;
    REQUIRE(ct_scaled_dot_product_attention_workspace_size(&good, &qv, &kv, &vv, nullptr, &ov, &bytes) == CT_OK);
    REQUIRE(bytes > 0);
    Ws ws(bytes);
    expect(ct_scaled_dot_product_attention(&good, &qv, &kv, &vv, nullptr, &ov, ws.p, bytes - 1, nullptr),
           CT_ERR_WORKSPACE_TOO_SMALL, {});
  }
}
